"""Reading and writing triplet files.

:func:`read_triplets` turns the triplet files people actually have into a
validated list-order array plus the item labels; :func:`write_triplets` writes
every layout it reads. Both are pure functions: a file that cannot be read
raises ``ValueError`` (naming the file, the line and the problem) and leaves no
state behind; NumPy files are always loaded with ``allow_pickle=False``.

Layouts
-------
``"list-order"``
    One triplet per row, ``(head, closer, farther)``: "head is closer to closer
    than to farther" (cblearn's ``list-order``, salmon's head/winner/loser).
``"crowd"``
    The raw answers of a crowd-sourcing tool: ``head, left, right`` and an answer
    column naming the item the person chose as closer to ``head``.
``"list-boolean"`` / ``"list-count"``
    cblearn's question/answer pair ``X, y``: row ``X[r] = (head, j, k)`` with
    ``y[r]`` True (or +1) when ``j`` is the closer item and False (or -1, or 0)
    when ``k`` is.

Text files (CSV, TSV, ``;``-separated or whitespace-separated) may carry a
header naming the columns; :data:`COLUMN_NAMES` lists the names understood for
every role. Integer item ids are read as indices; ids that are strings, or
integers that do not fill ``0..n-1``, are mapped to contiguous indices and
:attr:`TripletData.labels` maps every index back to the original id.
"""

from __future__ import annotations

import codecs
import csv
import io
import itertools
import math
import os
import re
import tempfile
import zipfile
from dataclasses import dataclass, field

import numpy as np

from ._validation import check_random_state, check_triplets, index_dtype
from .kernels import textio as _k

__all__ = [
    "TripletData",
    "read_triplets",
    "write_triplets",
    "TRIPLET_LAYOUTS",
    "TRIPLET_FORMATS",
    "COLUMN_NAMES",
]

#: Layouts understood by :func:`read_triplets` and :func:`write_triplets`.
TRIPLET_LAYOUTS = ("list-order", "crowd", "list-boolean", "list-count")

#: File formats (``format=`` values besides ``"auto"``).
TRIPLET_FORMATS = ("csv", "tsv", "text", "npy", "npz")

#: Header names recognised for every column role. Names are compared after
#: lower-casing and dropping everything but letters and digits (so ``Head_ID``
#: matches ``head``), and a trailing ``id``/``index``/``idx``/``item``/``label``/
#: ``name`` is ignored. ``winner`` is the answer column when ``left`` and
#: ``right`` columns are present, otherwise the closer item of a list-order row.
COLUMN_NAMES = {
    "head": ("head", "anchor", "center", "centre", "query", "reference", "ref", "i"),
    "near": ("winner", "near", "nearer", "closer", "close", "positive", "pos", "similar", "j"),
    "far": ("loser", "far", "farther", "further", "negative", "neg", "dissimilar", "k"),
    "left": ("left",),
    "right": ("right",),
    "answer": ("winner", "answer", "choice", "chosen", "response", "selected", "selection", "pick"),
    "response": ("y", "response"),
}

_SUFFIXES = ("index", "label", "name", "item", "idx", "id")
_LIMIT = 2**31 - 2  # item values must be below this (indices fit int32 with n_items < 2**31 - 1)
_CHUNK = 1 << 24  # bytes per read of the fast path
_SAMPLE = 1 << 18  # bytes sniffed for layout detection
_MAX_NOTES = 5
_INT_RE = re.compile(r"[+-]?[0-9]+\Z")
_ASCII_COMPATIBLE = {"utf-8", "utf-8-sig", "ascii", "latin-1", "iso8859-1", "cp1252", "iso8859-15"}

_ROLE_CODE = {
    None: _k.ROLE_SKIP, "head": _k.ROLE_HEAD, "near": _k.ROLE_NEAR, "far": _k.ROLE_FAR,
    "left": _k.ROLE_LEFT, "right": _k.ROLE_RIGHT, "answer": _k.ROLE_ANSWER, "response": _k.ROLE_RESPONSE,
}
_ROLE_WORD = {
    "head": "head", "near": "closer (winner)", "far": "farther (loser)", "left": "left",
    "right": "right", "answer": "answer (winner)", "response": "response (y)",
}
_LAYOUT_ROLES = {
    "list-order": ("head", "near", "far"),
    "crowd": ("head", "left", "right", "answer"),
    "list-boolean": ("head", "near", "far", "response"),
    "list-count": ("head", "near", "far", "response"),
}
_ANSWER_MODES = ("label", "side", "index")
_TRUE = {"1", "+1", "true", "t", "yes"}
_FALSE = {"0", "-1", "false", "f", "no"}


# --------------------------------------------------------------------------------------
# Result type


@dataclass(frozen=True)
class TripletData:
    """Triplets read from a file, with the labels of their items.

    Attributes
    ----------
    triplets : ndarray of shape (m, 3), int32 (int64 beyond 2**31 - 1 items)
        List-order rows ``(head, closer, farther)`` of contiguous item indices.
    labels : ndarray of shape (n_items,)
        ``labels[i]`` is the item the file calls ``i``: its text label (``str``
        array) or its original integer id (``int64`` array; ``arange(n_items)``
        when the ids were already indices).
    n_items : int
        Number of items (indices run over ``0..n_items-1``).
    source : str
        The path as given, the buffer's ``name``, or ``"<buffer>"``.
    layout : str
        The layout found: one of :data:`TRIPLET_LAYOUTS`.
    format : str
        ``"csv"``, ``"tsv"``, ``"text"`` (semicolon- or whitespace-separated),
        ``"npy"`` or ``"npz"``.
    n_skipped : int
        Rows dropped with ``errors="skip"``.
    notes : tuple of str
        Everything worth telling a person about how the file was read (relabelled
        ids, detected answer encoding, ignored columns, skipped lines...).
    """

    triplets: np.ndarray
    labels: np.ndarray
    n_items: int
    source: str
    layout: str
    format: str
    n_skipped: int = 0
    notes: tuple = field(default=())

    @property
    def n_triplets(self) -> int:
        """Number of triplets ``m``."""
        return int(self.triplets.shape[0])

    def __len__(self) -> int:
        return self.n_triplets

    def labelled(self) -> np.ndarray:
        """The triplets with every index replaced by its label, shape (m, 3)."""
        return self.labels[self.triplets]

    def __repr__(self) -> str:
        return (
            f"TripletData(source={self.source!r}, n_triplets={self.n_triplets}, n_items={self.n_items}, "
            f"layout={self.layout!r}, format={self.format!r}, n_skipped={self.n_skipped}, "
            f"notes={len(self.notes)})"
        )


class _RowError(Exception):
    """A problem with one row; becomes ``ValueError("<file>: line N: <message>")``."""


# --------------------------------------------------------------------------------------
# Sources


class _Source:
    """A seekable binary stream over the input, its display name and extension."""

    def __init__(self, path_or_buffer):
        self.owned = False
        if isinstance(path_or_buffer, (str, os.PathLike)):
            path = os.fspath(path_or_buffer)
            if isinstance(path, bytes):
                path = os.fsdecode(path)
            self.name = path
            self.ext = os.path.splitext(path)[1].lower()
            self.stream = open(path, "rb")  # OSError (missing file, directory...) propagates
            self.owned = True
            self.path = path
            self.user = None
        elif hasattr(path_or_buffer, "read"):
            buf = path_or_buffer
            name = getattr(buf, "name", None)
            self.name = name if isinstance(name, str) else "<buffer>"
            self.ext = os.path.splitext(self.name)[1].lower() if isinstance(name, str) else ""
            self.path = None
            self.user = buf
            self.user_pos = buf.tell() if _seekable(buf) else None
            first = buf.read(0)
            if isinstance(first, str):
                text = buf.read()
                self.stream = io.BytesIO(text.encode("utf-8"))
            elif _seekable(buf):
                self.stream = buf
            else:
                self.stream = io.BytesIO(buf.read())
        else:
            raise ValueError(
                "path_or_buffer must be a path or a file object, "
                f"got {type(path_or_buffer).__name__}"
            )
        self.base = self.stream.tell()

    def rewind(self, offset: int = 0):
        self.stream.seek(self.base + offset)
        return self.stream

    def close(self):
        if self.owned:
            self.stream.close()

    def restore(self):
        """Put a caller's file object back where it was (after a failed read)."""
        if self.user is not None and self.user_pos is not None:
            try:
                self.user.seek(self.user_pos)
            except (OSError, ValueError):
                pass


def _seekable(buf) -> bool:
    try:
        return bool(buf.seekable())
    except Exception:
        return False


def _err(source, msg, line=None) -> ValueError:
    where = f"line {line}: " if line is not None else ""
    return ValueError(f"{source}: {where}{msg}")


# --------------------------------------------------------------------------------------
# Public reader


def read_triplets(
    path_or_buffer,
    format: str = "auto",
    *,
    layout: str = "auto",
    n_items: int | None = None,
    labels=None,
    header="auto",
    delimiter: str | None = None,
    columns=None,
    answer: str = "auto",
    item_type: str = "auto",
    relabel="auto",
    encoding: str = "utf-8",
    errors: str = "raise",
) -> TripletData:
    """Read a triplet file into list-order triplets and item labels.

    Parameters
    ----------
    path_or_buffer : str, os.PathLike or file object
        A path, or an open binary or text file object (read from its current
        position; after a failed read a seekable one is put back there).
        Missing or unreadable paths raise the usual ``OSError``.
    format : {"auto", "csv", "tsv", "text", "npy", "npz"}, default "auto"
        ``"auto"`` recognises NumPy files by their magic bytes and reads anything
        else as delimited text. ``"csv"``/``"tsv"`` fix the delimiter to ``,``/tab;
        ``"text"`` sniffs it among ``,``, tab, ``;`` and whitespace.
    layout : {"auto", "list-order", "crowd", "list-boolean", "list-count"}, default "auto"
        Needed only for a header-less text file with four columns (``crowd``:
        head, left, right, answer; ``list-boolean``/``list-count``: head, j, k, y).
        Otherwise detected from the header or the arrays, and checked if given.
    n_items : int, optional
        Number of items. Integer ids are then taken as indices ``0..n_items-1``
        as they are (an id ``>= n_items`` is an error). For text labels it must
        equal the number of distinct labels.
    labels : sequence, optional
        The known items, in index order: every id in the file must be one of them
        and is mapped to its position (text ids are compared as text, integer ids
        by value when ``labels`` holds integers). ``n_items`` defaults to
        ``len(labels)``. Use it to align the triplets with a ground-truth table.
    header : {"auto", True, False}, default "auto"
        Whether the first non-blank, non-comment line of a text file names the
        columns. ``"auto"``: it does when it names a complete set of roles (see
        :data:`COLUMN_NAMES`), or when it is text above integer rows.
    delimiter : str, optional
        Field separator of a text file (one character, or ``" "`` for runs of
        whitespace). Default: sniffed.
    columns : sequence of str or None, optional
        The role of every column, overriding the header: ``"head"``, ``"near"``,
        ``"far"``, ``"left"``, ``"right"``, ``"answer"``, ``"response"`` or
        ``None`` (ignored).
    answer : {"auto", "label", "side", "index"}, default "auto"
        How the answer column of a crowd file names the chosen item: ``"label"``,
        the chosen item itself (its label or id, equal to the row's left or right
        cell); ``"side"``, the words ``left``/``right`` (or ``l``/``r``, any case);
        ``"index"``, ``0`` for left and ``1`` for right. ``"auto"`` picks, for the
        whole file, the first of label, side, index under which every answer names
        one of its row's items (label wins when both fit).
    item_type : {"auto", "int", "str"}, default "auto"
        ``"auto"``: ids are integers when the first id of the file is a number,
        and then every id must be one (a mix is an error). ``"str"`` reads every
        id as a text label, including numbers.
    relabel : {"auto", True, False}, default "auto"
        For integer ids: ``"auto"`` keeps them as indices when they fill
        ``0..max`` (or ``n_items`` is given), and otherwise maps the distinct ids
        to ``0..k-1`` in increasing order; ``True`` always maps; ``False`` never
        does (``n_items = max + 1``).
    encoding : str, default "utf-8"
        Text encoding. A UTF-8 byte-order mark and Windows line endings are
        handled transparently.
    errors : {"raise", "skip"}, default "raise"
        ``"skip"`` drops rows with a problem (repeated item, answer naming no
        item, wrong number of fields, bad id...) and counts them in
        ``n_skipped``; problems with the file as a whole still raise.

    Returns
    -------
    TripletData

    Raises
    ------
    ValueError
        For an invalid argument (the message starts with its name) or a file that
        cannot be read as triplets (the message starts with the file name and
        gives the 1-based line number, counting the header, blank and comment
        lines, or the 0-based row of an array).

    Notes
    -----
    Text files: blank lines and lines starting with ``#`` are skipped; fields may
    be quoted (CSV rules); extra named columns in a header are ignored (noted).
    Plain integer tables are parsed by a numba kernel in two streaming passes
    (count the lines, then parse into a pre-sized ``int32`` array), so memory is
    the output array plus one 16 MiB chunk. Text labels, quoted fields and
    ``labels=`` go through Python's ``csv`` module (about a second per 10^6 ids).
    NumPy files are loaded with ``allow_pickle=False``: object arrays are refused
    without being unpickled; save labels as a ``str`` array.

    Examples
    --------
    >>> import io
    >>> data = read_triplets(io.StringIO("head,left,right,winner\\nParis,Rome,Oslo,Rome\\n"))
    >>> data.labelled().tolist()
    [['Paris', 'Rome', 'Oslo']]
    >>> data.triplets.tolist(), data.layout
    ([[1, 2, 0]], 'crowd')
    """
    opts = _check_read_args(format, layout, n_items, labels, header, delimiter, columns, answer,
                            item_type, relabel, encoding, errors)
    src = _Source(path_or_buffer)
    try:
        head = src.rewind().read(8)
        fmt = opts["format"]
        if fmt == "auto":
            if head.startswith(b"\x93NUMPY"):
                fmt = "npy"
            elif head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
                fmt = "npz"
            elif src.ext in (".npy", ".npz"):
                raise _err(src.name, f"has the extension {src.ext} but is not a NumPy {src.ext} file")
        if fmt == "npy":
            return _read_npy(src, opts)
        if fmt == "npz":
            return _read_npz(src, opts)
        return _read_text(src, opts, fmt)
    except BaseException:
        src.restore()
        raise
    finally:
        src.close()


def _check_read_args(format, layout, n_items, labels, header, delimiter, columns, answer,
                     item_type, relabel, encoding, errors) -> dict:
    if format not in ("auto",) + TRIPLET_FORMATS:
        raise ValueError(f"format must be one of auto, {', '.join(TRIPLET_FORMATS)}; got {format!r}")
    if layout not in ("auto",) + TRIPLET_LAYOUTS:
        raise ValueError(f"layout must be one of auto, {', '.join(TRIPLET_LAYOUTS)}; got {layout!r}")
    if n_items is not None:
        if isinstance(n_items, bool) or not isinstance(n_items, (int, np.integer)) or n_items < 3:
            raise ValueError(f"n_items must be an integer >= 3, got {n_items!r}")
        if n_items > _LIMIT:
            raise ValueError(f"n_items must be <= {_LIMIT}, got {n_items}")
        n_items = int(n_items)
    lab = None
    if labels is not None:
        if isinstance(labels, (str, bytes)):
            raise ValueError("labels must be a sequence of item labels, got a single string")
        lab = np.asarray(labels)
        if lab.ndim != 1 or lab.size < 3:
            raise ValueError(f"labels must be a 1-D sequence of at least 3 labels, got shape {lab.shape}")
        if lab.dtype.kind in "iu":
            lab = lab.astype(np.int64)
        elif lab.dtype.kind in "USO":
            try:
                lab = np.array([str(v).strip() for v in lab.tolist()], dtype=str)
            except Exception:
                raise ValueError("labels must hold strings or integers") from None
        else:
            raise ValueError(f"labels must hold strings or integers, got dtype {lab.dtype}")
        if np.unique(lab).size != lab.size:
            raise ValueError("labels must be distinct")
        if n_items is not None and n_items != lab.size:
            raise ValueError(f"n_items={n_items} does not match len(labels)={lab.size}")
        n_items = int(lab.size)
    if header not in ("auto", True, False):
        raise ValueError(f"header must be 'auto', True or False, got {header!r}")
    if delimiter is not None and (not isinstance(delimiter, str) or len(delimiter) != 1
                                  or delimiter in "\r\n\"#" or delimiter.isalnum()):
        raise ValueError(f"delimiter must be one character such as ',', '\\t', ';' or ' ', got {delimiter!r}")
    if columns is not None:
        if isinstance(columns, str):
            columns = [c.strip() or None for c in columns.split(",")]
        cols = []
        for c in columns:
            if c is not None and c not in _ROLE_CODE:
                raise ValueError(
                    f"columns entries must be one of head, near, far, left, right, answer, response or None; got {c!r}"
                )
            cols.append(c)
        columns = tuple(cols)
        _layout_from_roles(columns, "columns")
    if answer not in ("auto",) + _ANSWER_MODES:
        raise ValueError(f"answer must be one of auto, label, side, index; got {answer!r}")
    if item_type not in ("auto", "int", "str"):
        raise ValueError(f"item_type must be 'auto', 'int' or 'str', got {item_type!r}")
    if relabel not in ("auto", True, False):
        raise ValueError(f"relabel must be 'auto', True or False, got {relabel!r}")
    if relabel is True and n_items is not None and lab is None:
        raise ValueError("relabel=True cannot be combined with n_items (n_items fixes the ids as indices)")
    try:
        enc = codecs.lookup(encoding).name
    except (LookupError, TypeError):
        raise ValueError(f"encoding must name a text encoding, got {encoding!r}") from None
    if errors not in ("raise", "skip"):
        raise ValueError(f"errors must be 'raise' or 'skip', got {errors!r}")
    if lab is not None:
        item_type = "str" if lab.dtype.kind == "U" else "int"
    return dict(format=format, layout=layout, n_items=n_items, labels=lab, header=header,
                delimiter=delimiter, columns=columns, answer=answer, item_type=item_type,
                relabel=relabel, encoding=enc, errors=errors)


def _layout_from_roles(roles, what) -> str:
    present = [r for r in roles if r is not None]
    dup = {r for r in present if present.count(r) > 1}
    if dup:
        raise ValueError(f"{what} names the role {sorted(dup)[0]!r} more than once")
    s = set(present)
    if {"left", "right", "answer"} & s:
        need, layout = _LAYOUT_ROLES["crowd"], "crowd"
    elif "response" in s:
        need, layout = _LAYOUT_ROLES["list-boolean"], "list-boolean"
    else:
        need, layout = _LAYOUT_ROLES["list-order"], "list-order"
    missing = [r for r in need if r not in s]
    if missing:
        raise ValueError(f"{what} has no {', '.join(_ROLE_WORD[r] for r in missing)} column")
    extra = s - set(need)
    if extra:
        raise ValueError(f"{what} mixes the roles {sorted(extra)} into a {layout} layout")
    return layout


# --------------------------------------------------------------------------------------
# Text: sniffing


def _norm(name: str) -> str:
    s = "".join(ch for ch in name.lower() if ch.isalnum())
    return s


def _name_role(name: str, crowd: bool):
    """Role named by a header cell (None if unknown)."""
    s = _norm(name)
    cands = [s] + [s[: -len(x)] for x in _SUFFIXES if s.endswith(x) and len(s) > len(x)]
    order = ("head", "left", "right", "answer", "response", "near", "far") if crowd else (
        "head", "near", "far", "response", "left", "right", "answer")
    for c in cands:
        for role in order:
            if c in COLUMN_NAMES[role]:
                return role
    return None


def _roles_from_header(fields):
    """Map header cells to roles; returns (roles, layout or None, n_known, problem)."""
    crowd = any(_name_role(f, True) in ("left", "right") for f in fields)
    roles = []
    taken = set()
    for f in fields:
        r = _name_role(f, crowd)
        if r is not None and r in taken:
            r = None
        if r == "answer" and not crowd:
            r = "response" if _norm(f) in COLUMN_NAMES["response"] else None
        if crowd and r in ("near", "far", "response"):
            r = None
        if r is not None:
            taken.add(r)
        roles.append(r)
    n_known = sum(r is not None for r in roles)
    try:
        layout = _layout_from_roles(roles, "header")
        return tuple(roles), layout, n_known, None
    except ValueError as exc:
        return tuple(roles), None, n_known, str(exc)


def _split_line(line: str, delim):
    if delim is None:
        return line.split()
    try:
        row = next(csv.reader([line], delimiter=delim, skipinitialspace=True))
    except (csv.Error, StopIteration):
        return [f for f in line.split(delim)]
    return row


def _is_number(tok: str) -> bool:
    tok = tok.strip()
    if _INT_RE.match(tok):
        return True
    try:
        float(tok)
    except ValueError:
        return False
    return True


def _sniff_delimiter(lines, forced):
    if forced is not None:
        return None if forced == " " else forced
    first = re.sub(r'"[^"]*"', "", lines[0])
    cands = [d for d in (",", "\t", ";") if d in first]
    if not cands:
        return None
    if len(cands) == 1 or len(lines) == 1:
        return cands[0]
    for d in cands:
        n0 = len(_split_line(lines[0], d))
        if all(len(_split_line(ln, d)) == n0 for ln in lines[1:20]):
            return d
    return cands[0]


class _TextSpec:
    """What the sniffer found out about a text file."""

    delimiter = None  # str or None (whitespace)
    header_line = 0  # 1-based line of the header (0: none)
    roles = ()
    layout = "list-order"
    kind = "int"
    fast = True  # numba integer parser
    hashed = True  # numba field splitter + hashing, for text labels
    columnar = True  # str.split per chunk
    ignored = ()
    data_start = 0  # byte offset (from the start of the source) of the line after the header
    first_data_line = 0  # 1-based line number of the first line after the header
    bom = 0


def _sniff_text(src: _Source, opts, fmt) -> _TextSpec:
    name = src.name
    spec = _TextSpec()
    raw = src.rewind().read(_SAMPLE)
    enc = opts["encoding"]
    ascii_ok = enc in _ASCII_COMPATIBLE
    eof = len(raw) < _SAMPLE
    if not raw:
        raise _err(name, "the file is empty")
    if ascii_ok:
        if raw.startswith(b"\x1f\x8b"):
            raise _err(name, "is gzip-compressed; decompress it first (supported: CSV/TSV/whitespace text, .npy, .npz)")
        if raw.startswith(codecs.BOM_UTF16_LE) or raw.startswith(codecs.BOM_UTF16_BE):
            raise _err(name, "is UTF-16 text; pass encoding='utf-16' or save it as UTF-8")
        if raw.startswith(codecs.BOM_UTF8):
            spec.bom = 3
        nul = raw.find(b"\x00")
        if nul >= 0:
            line = raw[:nul].count(b"\n") + 1
            raise _err(name, "is not a recognised triplet file: binary content (a NUL byte); "
                             "supported: CSV/TSV/whitespace text, .npy, .npz", line)
    body = raw[spec.bom:]
    if not eof:
        cut = body.rfind(b"\n")
        if cut >= 0:
            body = body[: cut + 1]
    try:
        text = body.decode("utf-8" if enc == "utf-8-sig" else enc)
    except UnicodeDecodeError as exc:
        line = body[: exc.start].count(b"\n") + 1
        raise _err(name, f"is not valid {enc} text (byte 0x{body[exc.start]:02x}); "
                         "pass encoding= with the file's encoding", line) from None
    if not ascii_ok and text.startswith("\ufeff"):
        text = text[1:]
    lone_cr = re.search(r"\r(?!\n)", text) is not None
    phys = re.split(r"\r\n|\n|\r", text)
    if not eof and phys and phys[-1] == "":
        phys.pop()
    data = [(i + 1, ln) for i, ln in enumerate(phys) if ln.strip() and not ln.lstrip().startswith("#")]
    if not data:
        if eof:
            raise _err(name, "the file is empty" if not text.strip() else
                       "the file holds no data rows (only blank or comment lines)")
        raise _err(name, f"no data row in the first {_SAMPLE} bytes")
    # Delimiter.
    forced = opts["delimiter"] or {"csv": ",", "tsv": "\t"}.get(fmt)
    delim = _sniff_delimiter([ln for _, ln in data[:50]], forced)
    spec.delimiter = delim
    first_no, first = data[0]
    f0 = [f.strip() for f in _split_line(first, delim)]
    f1 = [f.strip() for f in _split_line(data[1][1], delim)] if len(data) > 1 else None
    roles, hlayout, n_known, problem = _roles_from_header(f0)
    numeric0 = [_is_number(f) for f in f0]
    columns = opts["columns"]
    hdr = opts["header"]
    if hdr == "auto":
        if hlayout is not None and not all(numeric0):
            hdr = True
        elif n_known >= 2 and not any(numeric0):
            hdr = True
        elif (not all(numeric0)) and f1 is not None and all(_is_number(f) for f in f1) and opts["item_type"] != "str":
            hdr = True
        else:
            hdr = False
    if hdr:
        spec.header_line = first_no
        if columns is None:
            if hlayout is None:
                if n_known == 0:
                    raise _err(name, f"the header {f0} names no known column; name the columns e.g. "
                                     "head,winner,loser or head,left,right,winner, or pass columns=", first_no)
                raise _err(name, f"the {problem} (header {f0})", first_no)
            spec.roles = roles
            spec.layout = hlayout
            spec.ignored = tuple(f for f, r in zip(f0, roles) if r is None)
        else:
            if len(columns) != len(f0):
                raise _err(name, f"columns= gives {len(columns)} roles but the header has {len(f0)} columns", first_no)
            spec.roles = columns
            spec.layout = _layout_from_roles(columns, "columns")
        rows = data[1:]
    else:
        if columns is not None:
            spec.roles = columns
            spec.layout = _layout_from_roles(columns, "columns")
        else:
            k = len(f0)
            lay = opts["layout"]
            if k == 3 and lay in ("auto", "list-order"):
                spec.roles, spec.layout = _LAYOUT_ROLES["list-order"], "list-order"
            elif k == 4 and lay in ("crowd", "list-boolean", "list-count"):
                spec.roles, spec.layout = _LAYOUT_ROLES[lay], ("crowd" if lay == "crowd" else "list-boolean")
            elif k == 4 and lay == "auto":
                raise _err(name, "4 columns without a header: name them (head,left,right,winner for crowd "
                                 "answers, or head,j,k,y) or pass layout=", first_no)
            else:
                want = len(_LAYOUT_ROLES["list-order" if lay == "auto" else lay])
                names = ", ".join(_LAYOUT_ROLES["list-order" if lay == "auto" else lay])
                raise _err(name, f"expected {want} fields ({names}), got {k}", first_no)
        rows = data
    lay = opts["layout"]
    if lay != "auto":
        found = spec.layout
        if not (found == lay or (found == "list-boolean" and lay == "list-count")):
            raise _err(name, f"layout={lay!r} was asked for but the columns describe a {found} layout")
    # Item type from the first id.
    item_cols = [i for i, r in enumerate(spec.roles) if r in ("head", "near", "far", "left", "right")]
    kind = opts["item_type"]
    if kind == "auto":
        kind = "str"
        for _, ln in rows[:1]:
            fs = _split_line(ln, delim)
            if len(fs) > item_cols[0]:
                kind = "int" if _is_number(fs[item_cols[0]]) else "str"
    spec.kind = kind
    # Fast path eligibility.
    fast = kind == "int" and ascii_ok and not lone_cr and '"' not in text and opts["labels"] is None
    ans_col = spec.roles.index("answer") if "answer" in spec.roles else None
    resp_col = spec.roles.index("response") if "response" in spec.roles else None
    if fast and ans_col is not None:
        if opts["answer"] == "side":
            fast = False
        for _, ln in rows[:200]:
            fs = _split_line(ln, delim)
            if len(fs) > ans_col and not _INT_RE.match(fs[ans_col].strip()):
                fast = False
                break
    if fast and resp_col is not None:
        for _, ln in rows[:200]:
            fs = _split_line(ln, delim)
            if len(fs) > resp_col and fs[resp_col].strip().lower() not in ("1", "+1", "0", "-1"):
                fast = False
                break
    spec.fast = fast
    spec.columnar = ascii_ok and not lone_cr and '"' not in text
    spec.hashed = spec.columnar and kind == "str"
    # Byte offset of the first line after the header.
    if spec.header_line:
        off = spec.bom
        mv = raw
        for _ in range(spec.header_line):
            nl = mv.find(b"\n", off)
            off = len(mv) if nl < 0 else nl + 1
        spec.data_start = off
        spec.first_data_line = spec.header_line + 1
    else:
        spec.data_start = spec.bom
        spec.first_data_line = 1
    return spec


# --------------------------------------------------------------------------------------
# Text: rows


class _RowParser:
    """Validates one row of fields and turns it into item ids (shared by both paths)."""

    def __init__(self, spec: _TextSpec, opts, source):
        self.roles = spec.roles
        self.ncols = len(spec.roles)
        self.kind = spec.kind
        self.explicit_str = opts["item_type"] == "str"
        self.layout = spec.layout
        self.source = source
        self.limit = opts["n_items"] if (opts["n_items"] is not None and opts["labels"] is None) else _LIMIT
        lab = opts["labels"]
        self.lookup = None
        if lab is not None:
            self.lookup = {(v if self.kind == "str" else int(v)): i for i, v in enumerate(lab.tolist())}
        self.ids = {}  # text label -> provisional id (str kind without labels=)
        self.names = []
        self.cache = {}
        self.notes = set()
        self.saw_minus = False
        idx = {r: i for i, r in enumerate(self.roles) if r is not None}
        self.i_head = idx["head"]
        if self.layout == "crowd":
            self.i_a, self.i_b, self.i_ans = idx["left"], idx["right"], idx["answer"]
        else:
            self.i_a, self.i_b = idx["near"], idx["far"]
            self.i_ans = idx.get("response")
        self.role_names = ", ".join(r or "(ignored)" for r in self.roles)

    # -- ids
    def _int_value(self, tok: str, what: str) -> int:
        if _INT_RE.match(tok):
            v = int(tok)
            if v < 0:
                raise _RowError(f"negative item index {tok} in the {what} column")
        else:
            try:
                f = float(tok)
            except ValueError:
                raise _RowError(
                    f"mixed types: {what} item {tok!r} is not an integer, but the file's ids are integers; "
                    "pass item_type='str' to read every id as a text label") from None
            if not math.isfinite(f) or f != int(f):
                raise _RowError(f"non-integer item index {tok!r} in the {what} column")
            v = int(f)
            if v < 0:
                raise _RowError(f"negative item index {tok} in the {what} column")
            self.notes.add("some integer ids are written as floats (e.g. '3.0'); they were read as integers")
        if v >= _LIMIT:
            raise _RowError(
                f"item index {tok} in the {what} column is too large: indices must be below {_LIMIT} "
                "(2**31 - 2); pass item_type='str' to read large ids as text labels")
        if v >= self.limit:
            raise _RowError(f"item index {v} in the {what} column is out of range for n_items={self.limit}")
        return v

    def item(self, tok: str, what: str) -> int:
        got = self.cache.get(tok)
        if got is not None:
            return got
        t = tok.strip()
        if not t:
            raise _RowError(f"empty {what} field")
        if self.kind == "int":
            v = self._int_value(t, what)
            if self.lookup is not None:
                if v not in self.lookup:
                    raise _RowError(f"{what} item {v} is not one of the given labels")
                v = self.lookup[v]
        else:
            if not self.explicit_str and _is_number(t):
                raise _RowError(
                    f"mixed types: {what} item {t!r} is a number, but the file's ids are text labels; "
                    "pass item_type='str' to read numbers as labels too")
            if self.lookup is not None:
                if t not in self.lookup:
                    raise _RowError(f"{what} item {t!r} is not one of the given labels")
                v = self.lookup[t]
            else:
                v = self.ids.get(t)
                if v is None:
                    v = len(self.names)
                    self.ids[t] = v
                    self.names.append(t)
        self.cache[tok] = v
        return v

    def _same_item(self, ans: str, tok: str) -> bool:
        a = ans.strip()
        t = tok.strip()
        if a == t:
            return True
        if self.kind == "int" and _INT_RE.match(a) and _INT_RE.match(t):
            return int(a) == int(t)
        return False

    # -- rows
    def parse(self, fields):
        """Return (h, a, b) for list layouts or (h, left, right, codes) for crowd rows."""
        if len(fields) != self.ncols:
            raise _RowError(f"expected {self.ncols} fields ({self.role_names}), got {len(fields)}")
        h = self.item(fields[self.i_head], "head")
        if self.layout == "crowd":
            a = self.item(fields[self.i_a], "left")
            b = self.item(fields[self.i_b], "right")
        else:
            a = self.item(fields[self.i_a], "closer")
            b = self.item(fields[self.i_b], "farther")
        if h == a or h == b or a == b:
            shown = tuple(fields[i].strip() for i in (self.i_head, self.i_a, self.i_b))
            raise _RowError(f"the row repeats an item {shown}; a triplet needs three distinct items")
        if self.layout == "crowd":
            ans = fields[self.i_ans]
            sa = ans.strip()
            if not sa:
                raise _RowError("the answer field is empty")
            lab = 0 if self._same_item(sa, fields[self.i_a]) else (1 if self._same_item(sa, fields[self.i_b]) else -1)
            low = sa.lower()
            side = 0 if low in ("left", "l") else (1 if low in ("right", "r") else -1)
            ind = 0 if sa == "0" else (1 if sa == "1" else -1)
            return h, a, b, (lab, side, ind)
        if self.i_ans is not None:
            y = fields[self.i_ans].strip().lower()
            if y in _TRUE:
                return h, a, b
            if y in _FALSE:
                if y == "-1":
                    self.saw_minus = True
                return h, b, a
            raise _RowError(f"the response {fields[self.i_ans].strip()!r} is not one of True/False/1/0/-1")
        return h, a, b

    def answer_error(self, fields, mode) -> _RowError:
        ans = fields[self.i_ans].strip()
        h, a, b = (fields[i].strip() for i in (self.i_head, self.i_a, self.i_b))
        how = {"label": "the label of the left or right item", "side": "'left' or 'right'",
               "index": "0 (left) or 1 (right)"}
        if mode == "auto":
            want = "the left or right item's label, 'left'/'right', or 0/1"
        else:
            want = how[mode]
        if not ans:
            return _RowError("the answer field is empty")
        return _RowError(
            f"the answer {ans!r} names none of the row's items (head {h!r}, left {a!r}, right {b!r}); "
            f"it must be {want}")


# --------------------------------------------------------------------------------------
# Text: the fast path (numba)


class _FastResult:
    """What one run of the numba reader found."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def _read_text_fast(src: _Source, spec: _TextSpec, opts, parser: _RowParser, mode: int) -> _FastResult:
    """Parse an integer table in two streaming passes with the numba kernel.

    Pass 1 counts the lines (the output needs at most one row each); pass 2 parses
    16 MiB chunks straight into the pre-sized ``int32`` output. Lines the kernel
    does not understand are handed to :class:`_RowParser` (which either accepts
    them or words the error). Crowd rows whose answer names neither item are
    dropped and counted: the caller decides the file's answer encoding.
    """
    name = src.name
    skip = opts["errors"] == "skip"
    stream = src.rewind(spec.data_start)
    n_lines = 0
    last = b""
    while True:
        chunk = stream.read(_CHUNK)
        if not chunk:
            break
        n_lines += chunk.count(b"\n")
        last = chunk[-1:]
    cap = n_lines + (1 if last not in (b"\n", b"") else 0)
    out = np.empty((max(cap, 1), 3), dtype=np.int32)
    roles = np.array([_ROLE_CODE[r] for r in spec.roles], dtype=np.int8)
    info = np.zeros(_k.N_INFO, dtype=np.int64)
    info[_k.I_MAX] = -1
    skipped_lines = np.full(_MAX_NOTES, -1, dtype=np.int64)
    answer_lines = np.full(_MAX_NOTES, -1, dtype=np.int64)
    delim = 32 if spec.delimiter is None else ord(spec.delimiter)
    extra_skips = []  # (line, message) of rows skipped in Python
    stream = src.rewind(spec.data_start)
    carry = b""
    eof = False
    while not eof:
        chunk = stream.read(_CHUNK)
        eof = len(chunk) == 0
        buf = carry + chunk if carry else chunk
        if not buf:
            break
        arr = np.frombuffer(buf, dtype=np.uint8)
        offset = 0
        while True:
            view = arr[offset:]
            _k.parse_int_table(view, view.shape[0], eof, delim, roles, mode, parser.limit, skip,
                               out, info, skipped_lines, answer_lines)
            status = int(info[_k.I_STATUS])
            if status == _k.OK:
                offset += int(info[_k.I_CONSUMED])
                break
            start = offset + int(info[_k.I_BAD_START])
            nl = buf.find(b"\n", start)
            if nl < 0 and not eof:
                offset = start  # the line continues in the next chunk
                break
            stop = len(buf) if nl < 0 else nl
            rel = int(info[_k.I_BAD_LINE])
            lineno = spec.first_data_line + rel
            try:
                try:
                    line = buf[start:stop].decode(opts["encoding"]).rstrip("\r")
                except UnicodeDecodeError:
                    raise _err(name, f"is not valid {opts['encoding']} text", lineno) from None
                got = parser.parse(_split_line(line, spec.delimiter))
                if spec.layout == "crowd":
                    h, a, b, codes = got
                    c = codes[0] if mode == _k.MODE_LABEL else codes[2]
                    if c == 1:
                        a, b = b, a
                else:
                    h, a, b = got
                    c = 0
            except _RowError as exc:
                if not skip:
                    raise _err(name, str(exc), lineno) from None
                if len(extra_skips) < _MAX_NOTES:
                    extra_skips.append((lineno, str(exc)))
                info[_k.I_SKIPPED] += 1
            else:
                if c < 0:
                    nf = int(info[_k.I_AFAILS])
                    if nf < _MAX_NOTES:
                        answer_lines[nf] = rel
                    info[_k.I_AFAILS] = nf + 1
                else:
                    r = int(info[_k.I_ROW])
                    if r >= out.shape[0]:
                        raise _Fallback()
                    out[r] = (h, a, b)
                    info[_k.I_ROW] = r + 1
                    info[_k.I_MAX] = max(int(info[_k.I_MAX]), h, a, b)
            info[_k.I_LINES] += 1
            offset = stop + 1
            if offset >= len(buf):
                break
        carry = buf[offset:] if offset < len(buf) else b""
        if eof:
            break
    m = int(info[_k.I_ROW])
    skips = [(spec.first_data_line + int(v), None) for v in skipped_lines if v >= 0] + extra_skips
    skips.sort(key=lambda t: t[0])
    return _FastResult(
        tri=out[:m] if m < out.shape[0] else out, m=m, maxv=int(info[_k.I_MAX]),
        skipped=int(info[_k.I_SKIPPED]), skip_lines=skips[:_MAX_NOTES], saw_minus=bool(info[_k.I_MINUS]),
        afails=int(info[_k.I_AFAILS]),
        answer_lines=[spec.first_data_line + int(v) for v in answer_lines if v >= 0])


class _Fallback(Exception):
    """The fast path met something only the general reader handles."""


def _line_fields(src: _Source, spec: _TextSpec, opts, lineno: int):
    """The fields of physical line ``lineno`` (1-based), for wording an error."""
    stream = src.rewind()
    for i, raw in enumerate(stream, 1):
        if i == lineno:
            if i == 1 and raw.startswith(codecs.BOM_UTF8):
                raw = raw[3:]
            line = raw.decode(opts["encoding"], "replace").rstrip("\r\n")
            return [f.strip() for f in _split_line(line, spec.delimiter)]
    return []


# --------------------------------------------------------------------------------------
# Text: the general path (csv module)


def _iter_records(src: _Source, spec: _TextSpec, opts):
    """Yield (lineno, fields) for every data record after the header."""
    name = src.name
    enc = opts["encoding"]
    if enc == "utf-8":
        enc = "utf-8-sig"
    stream = src.rewind()
    text = io.TextIOWrapper(stream, encoding=enc, newline="" if spec.delimiter is not None else None)
    try:
        if spec.delimiter is None:
            lineno = 0
            while True:
                try:
                    line = text.readline()
                except UnicodeDecodeError:
                    raise _err(name, f"is not valid {opts['encoding']} text", lineno + 1) from None
                if not line:
                    break
                lineno += 1
                if lineno <= spec.header_line:
                    continue
                s = line.strip()
                if not s or s.startswith("#"):
                    continue
                yield lineno, line.split()
        else:
            reader = csv.reader(text, delimiter=spec.delimiter, skipinitialspace=True)
            prev = 0
            while True:
                try:
                    rec = next(reader)
                except StopIteration:
                    break
                except csv.Error as exc:
                    raise _err(name, f"malformed CSV ({exc})", prev + 1) from None
                except UnicodeDecodeError:
                    raise _err(name, f"is not valid {opts['encoding']} text", prev + 1) from None
                lineno = prev + 1
                prev = reader.line_num
                if lineno <= spec.header_line:
                    continue
                if not rec or (len(rec) == 1 and not rec[0].strip()):
                    continue
                if rec[0].lstrip().startswith("#"):
                    continue
                yield lineno, rec
    finally:
        text.detach()


class _Collector:
    """Accumulates parsed rows (in numpy chunks) and resolves crowd answers at the end."""

    def __init__(self, name, crowd, opts, parser):
        self.name = name
        self.crowd = crowd
        self.opts = opts
        self.parser = parser
        self.skip = opts["errors"] == "skip"
        self.chunks = []  # (H, A, B, codes (k, 3) int8 or None)
        self.skipped = 0
        self.skip_notes = []
        self.first_fail = {md: [] for md in _ANSWER_MODES}
        self.fails = dict.fromkeys(_ANSWER_MODES, 0)

    def row_error(self, lineno, exc):
        if not self.skip:
            raise _err(self.name, str(exc), lineno) from None
        self.skipped += 1
        if len(self.skip_notes) < _MAX_NOTES:
            self.skip_notes.append((lineno, str(exc)))

    def add(self, H, A, B, codes=None, lines=None, fields_of=None):
        """Add a chunk; ``codes`` (k, 3) for crowd rows, with ``lines``/``fields_of(r)`` to
        word answer failures."""
        if self.crowd:
            for j, md in enumerate(_ANSWER_MODES):
                bad = np.flatnonzero(codes[:, j] < 0)
                if bad.size:
                    self.fails[md] += int(bad.size)
                    lst = self.first_fail[md]
                    for r in bad[: max(0, _MAX_NOTES - len(lst))]:
                        lst.append((int(lines[r]), fields_of(int(r))))
        if len(H):
            self.chunks.append((H, A, B, codes))

    def finish(self):
        notes = []
        if not self.chunks:
            return np.zeros((0, 3), np.int64), notes
        H = np.concatenate([c[0] for c in self.chunks])
        A = np.concatenate([c[1] for c in self.chunks])
        B = np.concatenate([c[2] for c in self.chunks])
        if self.crowd:
            C = np.concatenate([c[3] for c in self.chunks])
            mode = self.opts["answer"]
            if mode == "auto":
                ok = [md for md in _ANSWER_MODES if self.fails[md] == 0]
                if ok:
                    mode = ok[0]
                else:
                    mode = min(_ANSWER_MODES, key=lambda md: (self.fails[md], _ANSWER_MODES.index(md)))
                    if not self.skip:
                        lineno, fields = self.first_fail[mode][0]
                        raise _err(self.name, str(self.parser.answer_error(fields, "auto")), lineno)
            elif self.fails[mode] and not self.skip:
                lineno, fields = self.first_fail[mode][0]
                raise _err(self.name, str(self.parser.answer_error(fields, mode)), lineno)
            notes.append(_ANSWER_NOTE[mode])
            code = C[:, _ANSWER_MODES.index(mode)]
            good = code >= 0
            if not good.all():
                self.skipped += int((~good).sum())
                for lineno, fields in self.first_fail[mode]:
                    self.skip_notes.append((lineno, str(self.parser.answer_error(fields, mode))))
                H, A, B, code = H[good], A[good], B[good], code[good]
            swap = code == 1
            A, B = np.where(swap, B, A), np.where(swap, A, B)
        tri = np.empty((H.shape[0], 3), dtype=np.int64)
        tri[:, 0], tri[:, 1], tri[:, 2] = H, A, B
        self.skip_notes.sort(key=lambda t: t[0])
        del self.skip_notes[_MAX_NOTES:]
        return tri, notes


def _read_text_slow(src: _Source, spec: _TextSpec, opts, parser: _RowParser, col: _Collector):
    """The general reader: Python's csv module (quotes, any encoding), one row at a time."""
    crowd = spec.layout == "crowd"
    step = 1 << 16

    def flush(buf):
        if not buf[0]:
            return
        H, A, B = (np.array(x, dtype=np.int64) for x in buf[:3])
        codes = np.array(buf[3], dtype=np.int8).reshape(-1, 3) if crowd else None
        lines = np.array(buf[4], dtype=np.int64)
        fields = buf[5]
        col.add(H, A, B, codes, lines, fields.__getitem__)
        for x in buf:
            x.clear()

    buf = ([], [], [], [], [], [])
    for lineno, fields in _iter_records(src, spec, opts):
        try:
            got = parser.parse(fields)
        except _RowError as exc:
            col.row_error(lineno, exc)
            continue
        buf[0].append(got[0])
        buf[1].append(got[1])
        buf[2].append(got[2])
        if crowd:
            buf[3].extend(got[3])
            buf[4].append(lineno)
            buf[5].append(fields if min(got[3]) < 0 else None)
        if len(buf[0]) >= step:
            flush(buf)
    flush(buf)


def _read_text_columnar(src: _Source, spec: _TextSpec, opts, parser: _RowParser, col: _Collector):
    """Column-at-a-time reader for unquoted tables of text labels.

    Splits whole chunks of lines with ``str.split`` and maps every column through a
    dict; only flagged rows (wrong field count, repeated item, unknown answer...) go
    through :class:`_RowParser`, which stays the one judge of a row. Raises
    ``_Fallback`` on a quote character (the csv reader must take over).
    """
    name = src.name
    enc = opts["encoding"]
    if enc == "utf-8-sig":
        enc = "utf-8"
    delim = spec.delimiter
    ncols = len(spec.roles)
    crowd = spec.layout == "crowd"
    roles = spec.roles
    item_cols = [(i, r) for i, r in enumerate(roles) if r in ("head", "near", "far", "left", "right")]
    what = {"head": "head", "near": "closer", "far": "farther", "left": "left", "right": "right"}
    ids_of = {}  # stripped token -> id, or -1 for a bad token
    side_map = {"left": 0, "l": 0, "right": 1, "r": 1}
    index_map = {"0": 0, "1": 1}
    resp_map = {**{t: 1 for t in _TRUE}, **{t: 0 for t in _FALSE}}
    stream = src.rewind(spec.data_start)
    line0 = spec.first_data_line
    carry = b""
    eof = False
    while not eof:
        chunk = stream.read(_CHUNK // 4)
        eof = not chunk
        buf = carry + chunk if carry else chunk
        if not eof:
            cut = buf.rfind(b"\n")
            if cut < 0:
                carry = buf
                continue
            carry, buf = buf[cut + 1:], buf[: cut + 1]
        else:
            carry = b""
        if not buf:
            continue
        if b'"' in buf:
            raise _Fallback()
        try:
            text = buf.decode(enc)
        except UnicodeDecodeError as exc:
            raise _err(name, f"is not valid {opts['encoding']} text", line0 + buf[: exc.start].count(b"\n")) from None
        if "\r" in text:
            text = text.replace("\r\n", "\n")
        if not text.endswith("\n"):
            text += "\n"
        n_lines = text.count("\n")
        keep = None
        cols = None
        errs = []  # (line, problem): reported in line order once the chunk is checked
        if delim is not None and "#" not in text:
            # Every line must hold exactly ncols - 1 delimiters: then one flat split is exact.
            raw = buf if enc == "utf-8" else text.encode(enc)
            raw = np.frombuffer(raw if raw.endswith(b"\n") else raw + b"\n", dtype=np.uint8)
            nl = np.flatnonzero(raw == 10)
            dpos = np.flatnonzero(raw == ord(delim))
            per_line = np.diff(np.searchsorted(dpos, nl), prepend=0)
            del raw, dpos
            if nl.size == n_lines and (per_line == ncols - 1).all():
                flat = text.replace("\n", delim).split(delim)
                flat.pop()
                cols = [flat[j::ncols] for j in range(ncols)]
                del flat
                rows = None
                k = n_lines
        if cols is None:
            lines = text.split("\n")
            lines.pop()
            rows = [ln.split(delim) for ln in lines] if delim is not None else [ln.split() for ln in lines]
            if "#" in text or any(len(r) != ncols for r in rows):
                keep = []
                for i, (ln, r) in enumerate(zip(lines, rows)):
                    st = ln.lstrip(" " if delim == "\t" else " \t")
                    if st.startswith("#") or (not st.strip() and (delim is None or delim not in st)):
                        continue  # comment or blank line (a tab-only line of a TSV has empty fields)
                    if len(r) != ncols:
                        try:
                            parser.parse(list(r))
                        except _RowError as exc:
                            errs.append((line0 + i, exc))
                            continue
                    keep.append(i)
                rows = [rows[i] for i in keep]
            k = len(rows)
            cols = list(zip(*rows)) if k else None
        if k:
            if delim is not None and (" " in text or "\t" in text):
                cols = [list(map(str.strip, c)) for c in cols]

            def fields_of(r, cols=cols):
                return [c[r] for c in cols]

            flagged = np.zeros(k, dtype=bool)
            ids = {}
            for j, role in item_cols:
                c = cols[j]
                new = set(c).difference(ids_of)
                for tok in new:
                    try:
                        ids_of[tok] = parser.item(tok, what[role])
                    except _RowError:
                        ids_of[tok] = -1
                v = np.fromiter(map(ids_of.__getitem__, c), dtype=np.int64, count=k)
                flagged |= v < 0
                ids[role] = v
            H = ids["head"]
            if crowd:
                A, B = ids["left"], ids["right"]
                ac = cols[roles.index("answer")]
                ans = np.fromiter(map(ids_of.get, ac, itertools.repeat(-2)), dtype=np.int64, count=k)
                codes = np.empty((k, 3), dtype=np.int8)
                codes[:, 0] = np.where(ans == A, 0, np.where(ans == B, 1, -1))
                low = map(str.lower, ac)
                codes[:, 1] = np.fromiter(map(side_map.get, low, itertools.repeat(-1)), dtype=np.int8, count=k)
                codes[:, 2] = np.fromiter(map(index_map.get, ac, itertools.repeat(-1)), dtype=np.int8, count=k)
                flagged |= (codes < 0).all(axis=1)
            else:
                A, B = ids["near"], ids["far"]
                codes = None
                if "response" in roles:
                    rc = map(str.lower, cols[roles.index("response")])
                    y = np.fromiter(map(resp_map.get, rc, itertools.repeat(-1)), dtype=np.int8, count=k)
                    flagged |= y < 0
                    if "-1" in cols[roles.index("response")]:
                        parser.saw_minus = True
                    swap = y == 0
                    A, B = np.where(swap, B, A), np.where(swap, A, B)
            flagged |= (H == A) | (H == B) | (A == B)
            lines_of = (np.asarray(keep, dtype=np.int64) if keep is not None else np.arange(k)) + line0
            drop = []
            for r in np.flatnonzero(flagged).tolist():
                fields = fields_of(r)
                try:
                    got = parser.parse(fields)
                except _RowError as exc:
                    errs.append((int(lines_of[r]), exc))
                    drop.append(r)
                    continue
                H[r], A[r], B[r] = got[0], got[1], got[2]
                if crowd:
                    codes[r] = got[3]
            errs.sort(key=lambda t: t[0])
            for lineno, exc in errs:
                col.row_error(lineno, exc)
            errs = []
            if drop:
                sel = np.ones(k, dtype=bool)
                sel[drop] = False
                H, A, B, lines_of = H[sel], A[sel], B[sel], lines_of[sel]
                kept = np.flatnonzero(sel)
                if crowd:
                    codes = codes[sel]
                col.add(H, A, B, codes, lines_of, lambda r: fields_of(int(kept[r])))
            else:
                col.add(H, A, B, codes, lines_of, fields_of)
        for lineno, exc in errs:  # a chunk whose rows all had problems
            col.row_error(lineno, exc)
        line0 += n_lines


def _read_text_hashed(src: _Source, spec: _TextSpec, opts, parser: _RowParser, col: _Collector):
    """Reader for unquoted tables of text labels: numba splits fields and hashes them.

    Every chunk is split into field byte ranges by :func:`~loe_viz.kernels.textio.split_fields`;
    the fields are hashed (64-bit FNV-1a), ``np.unique`` groups them, a byte-for-byte
    check rules out hash collisions, and only the distinct labels are decoded and
    validated in Python. Flagged rows go through :class:`_RowParser`, as in
    :func:`_read_text_columnar`. Raises ``_Fallback`` for anything unusual (quotes,
    non-ASCII whitespace around a label, a collision).
    """
    name = src.name
    enc = "utf-8" if opts["encoding"] == "utf-8-sig" else opts["encoding"]
    roles = spec.roles
    ncols = len(roles)
    crowd = spec.layout == "crowd"
    item_pos = [i for i, r in enumerate(roles) if r in ("head", "near", "far", "left", "right")]
    extra_pos = [i for i, r in enumerate(roles) if r in ("answer", "response")]
    used = np.array(item_pos + extra_pos, dtype=np.int64)
    slot = {int(c): j for j, c in enumerate(used)}
    delim = 32 if spec.delimiter is None else ord(spec.delimiter)
    side_map = {"left": 0, "l": 0, "right": 1, "r": 1}
    index_map = {"0": 0, "1": 1}
    resp_map = {**{t: 1 for t in _TRUE}, **{t: 0 for t in _FALSE}}
    gid = {}  # label -> global id (or -1 when the parser refuses it)
    info = np.zeros(_k.N_INFO, dtype=np.int64)
    stream = src.rewind(spec.data_start)
    carry = b""
    eof = False
    chunk_size = _CHUNK // 4
    while not eof:
        chunk = stream.read(chunk_size)
        eof = not chunk
        buf = carry + chunk if carry else chunk
        if not buf:
            break
        arr = np.frombuffer(buf, dtype=np.uint8)
        cap = buf.count(b"\n") + 1
        starts = np.empty((cap, ncols), dtype=np.int64)
        ends = np.empty((cap, ncols), dtype=np.int64)
        line_of = np.empty(cap, dtype=np.int64)
        offset = 0
        info[_k.I_ROW] = 0
        while True:
            seg0 = int(info[_k.I_ROW])
            view = arr[offset:]
            _k.split_fields(view, view.shape[0], eof, delim, ncols, starts, ends, line_of, info)
            seg1 = int(info[_k.I_ROW])
            # Offsets are relative to the view: shift this segment's to the buffer.
            starts[seg0:seg1] += offset
            ends[seg0:seg1] += offset
            if seg1 > seg0:
                _hashed_segment(buf, arr, starts[seg0:seg1], ends[seg0:seg1],
                                line_of[seg0:seg1] + spec.first_data_line, used, slot, item_pos, crowd, roles,
                                enc, gid, parser, col, side_map, index_map, resp_map, name)
            status = int(info[_k.I_STATUS])
            if status == _k.OK:
                offset += int(info[_k.I_CONSUMED])
                break
            start = offset + int(info[_k.I_BAD_START])
            nl = buf.find(b"\n", start)
            if nl < 0 and not eof:
                offset = start
                break
            stop = len(buf) if nl < 0 else nl
            lineno = spec.first_data_line + int(info[_k.I_BAD_LINE])
            try:
                line = buf[start:stop].decode(enc).rstrip("\r")
            except UnicodeDecodeError:
                raise _err(name, f"is not valid {opts['encoding']} text", lineno) from None
            try:
                parser.parse([f.strip() for f in _split_line(line, spec.delimiter)])
            except _RowError as exc:
                col.row_error(lineno, exc)
            else:
                raise _Fallback()  # e.g. quoted fields: the csv reader takes over
            info[_k.I_LINES] += 1
            offset = stop + 1
            if offset >= len(buf):
                break
        carry = buf[offset:] if offset < len(buf) else b""


def _hashed_segment(buf, arr, S, E, lines, used, slot, item_pos, crowd, roles, enc, gid, parser, col,
                    side_map, index_map, resp_map, name):
    """Turn one segment of field ranges into rows for the collector (see _read_text_hashed)."""
    k = S.shape[0]
    nu = used.shape[0]
    hashes = np.empty((k, nu), dtype=np.uint64)
    _k.hash_fields(arr, S, E, used, hashes)
    flat = hashes.ravel()
    inv = np.empty(flat.size, dtype=np.int64)
    first = np.empty(flat.size, dtype=np.int64)
    n_unique = _k.unique_hashes(flat, inv, first)
    first = first[:n_unique]
    inv = inv.reshape(k, nu)
    r0 = first // nu
    c0 = used[first % nu]
    rep_s = S[r0, c0]
    rep_e = E[r0, c0]
    if not _k.same_as_representative(arr, S, E, used, inv, rep_s, rep_e):
        raise _Fallback()
    toks = []
    for u, (a, b) in enumerate(zip(rep_s.tolist(), rep_e.tolist())):
        try:
            t = buf[a:b].decode(enc)
        except UnicodeDecodeError:
            raise _err(name, f"is not valid {enc} text", int(lines[r0[u]])) from None
        if t != t.strip():
            raise _Fallback()  # non-ASCII whitespace: let Python's strip() decide
        toks.append(t)
    is_item = np.zeros(n_unique, dtype=bool)
    is_item[inv[:, : len(item_pos)].ravel()] = True
    ids = np.full(n_unique, -1, dtype=np.int64)
    for u in np.flatnonzero(is_item).tolist():
        t = toks[u]
        g = gid.get(t)
        if g is None:
            try:
                g = parser.item(t, "item")
            except _RowError:
                g = -1
            gid[t] = g
        ids[u] = g
    item_ids = ids[inv[:, : len(item_pos)]]
    flagged = (item_ids < 0).any(axis=1)
    by_role = {roles[c]: item_ids[:, j] for j, c in enumerate(item_pos)}
    H = by_role["head"].copy()
    codes = None
    if crowd:
        A, B = by_role["left"].copy(), by_role["right"].copy()
        ia = inv[:, slot[roles.index("answer")]]
        il, ir = inv[:, slot[roles.index("left")]], inv[:, slot[roles.index("right")]]
        codes = np.empty((k, 3), dtype=np.int8)
        codes[:, 0] = np.where(ia == il, 0, np.where(ia == ir, 1, -1))
        side = np.array([side_map.get(t.lower(), -1) for t in toks], dtype=np.int8)
        index = np.array([index_map.get(t, -1) for t in toks], dtype=np.int8)
        codes[:, 1] = side[ia]
        codes[:, 2] = index[ia]
        flagged |= (codes < 0).all(axis=1)
    else:
        A, B = by_role["near"].copy(), by_role["far"].copy()
        if "response" in roles:
            iy = inv[:, slot[roles.index("response")]]
            ymap = np.array([resp_map.get(t.lower(), -1) for t in toks], dtype=np.int8)
            y = ymap[iy]
            flagged |= y < 0
            if np.any(np.array([t == "-1" for t in toks])[iy]):
                parser.saw_minus = True
            swap = y == 0
            A, B = np.where(swap, B, A), np.where(swap, A, B)
    flagged |= (H == A) | (H == B) | (A == B)

    def fields_of(r):
        return [buf[a:b].decode(enc, "replace") for a, b in zip(S[r].tolist(), E[r].tolist())]

    drop = []
    errs = []
    for r in np.flatnonzero(flagged).tolist():
        try:
            got = parser.parse(fields_of(r))
        except _RowError as exc:
            errs.append((int(lines[r]), exc))
            drop.append(r)
            continue
        H[r], A[r], B[r] = got[0], got[1], got[2]
        if crowd:
            codes[r] = got[3]
    for lineno, exc in errs:  # already in line order
        col.row_error(lineno, exc)
    if drop:
        sel = np.ones(k, dtype=bool)
        sel[drop] = False
        kept = np.flatnonzero(sel)
        col.add(H[sel], A[sel], B[sel], None if codes is None else codes[sel], lines[sel],
                lambda r: fields_of(int(kept[r])))
    else:
        col.add(H, A, B, codes, lines, fields_of)


_ANSWER_NOTE = {
    "label": "answers name the chosen item by its label",
    "side": "answers are 'left'/'right'",
    "index": "answers are 0/1 (0 = left item chosen, 1 = right item chosen)",
}


def _read_text(src: _Source, opts, fmt) -> TripletData:
    name = src.name
    spec = _sniff_text(src, opts, fmt)
    out_fmt = {",": "csv", "\t": "tsv"}.get(spec.delimiter, "text")
    notes = []
    if spec.ignored:
        notes.append(f"ignored column(s): {', '.join(spec.ignored)}")
    parser = _RowParser(spec, opts, name)
    skip = opts["errors"] == "skip"
    tri = None
    layout = spec.layout
    if spec.fast:
        try:
            if spec.layout == "crowd":
                order = {"auto": ["label", "index"], "label": ["label"], "index": ["index"]}[opts["answer"]]
                runs = []
                for md in order:
                    res = _read_text_fast(src, spec, opts, parser,
                                          _k.MODE_LABEL if md == "label" else _k.MODE_INDEX)
                    runs.append((md, res))
                    if res.afails == 0:
                        break
                md, res = min(runs, key=lambda t: (t[1].afails, order.index(t[0])))
                notes.append(_ANSWER_NOTE[md])
                if res.afails:
                    shown = "auto" if opts["answer"] == "auto" else md
                    if not skip:
                        ln = res.answer_lines[0]
                        raise _err(name, str(parser.answer_error(_line_fields(src, spec, opts, ln), shown)), ln)
                    res.skipped += res.afails
                    res.skip_lines = sorted(
                        res.skip_lines + [(ln, str(parser.answer_error(_line_fields(src, spec, opts, ln), md)))
                                          for ln in res.answer_lines], key=lambda t: t[0])[:_MAX_NOTES]
            else:
                mode = _k.MODE_RESPONSE if spec.layout == "list-boolean" else _k.MODE_LIST
                res = _read_text_fast(src, spec, opts, parser, mode)
            tri, m, maxv, skipped, skip_lines = res.tri, res.m, res.maxv, res.skipped, res.skip_lines
            if res.saw_minus:
                layout = "list-count"
        except _Fallback:
            tri = None
    if tri is None:
        readers = []
        if spec.hashed:
            readers.append(_read_text_hashed)
        if spec.columnar:
            readers.append(_read_text_columnar)
        readers.append(_read_text_slow)
        for reader in readers:
            parser = _RowParser(spec, opts, name)
            col = _Collector(name, spec.layout == "crowd", opts, parser)
            try:
                reader(src, spec, opts, parser, col)
                break
            except _Fallback:
                continue
        tri, more = col.finish()
        notes.extend(more)
        skipped, skip_lines = col.skipped, col.skip_notes
        m = tri.shape[0]
        maxv = int(tri.max()) if m else -1
        if parser.saw_minus:
            layout = "list-count"
    notes.extend(sorted(parser.notes))
    if skipped:
        shown = "; ".join(f"line {ln}" + (f": {msg}" if msg else "") for ln, msg in skip_lines)
        notes.append(f"skipped {skipped} row(s) with problems (first: {shown})")
    if m == 0:
        if skipped:
            raise _err(name, f"no valid rows: all {skipped} data row(s) have problems (first: line {skip_lines[0][0]})")
        if spec.header_line:
            raise _err(name, "the file has a header but no data rows", spec.header_line)
        raise _err(name, "the file holds no data rows")
    if spec.kind == "str" and parser.lookup is None:
        return _finish_str(tri, parser.names, opts, name, layout, out_fmt, skipped, notes)
    return _finish_int(tri, maxv, opts, name, layout, out_fmt, skipped, notes,
                       given_labels=parser.lookup is not None)


# --------------------------------------------------------------------------------------
# Finishing: labels and relabelling


def _finish_str(tri, names, opts, name, layout, fmt, skipped, notes) -> TripletData:
    present = np.zeros(len(names), dtype=np.bool_)
    _k.mark_present(tri, present)
    if not present.all():  # labels met only in skipped rows
        keep = np.flatnonzero(present)
        table = np.full(len(names), -1, dtype=np.int64)
        table[keep] = np.arange(keep.size)
        tri = table[tri]
        names = [names[i] for i in keep]
    k = len(names)
    order = sorted(range(k), key=names.__getitem__)
    rank = np.empty(k, dtype=np.int64)
    rank[np.asarray(order, dtype=np.int64)] = np.arange(k)
    labels = np.array([names[i] for i in order], dtype=str)
    n_items = opts["n_items"]
    if n_items is not None and n_items != k:
        raise _err(name, f"n_items={n_items} does not match the {k} distinct labels in the file; "
                         "pass labels= to fix the item set")
    out = rank[tri].astype(index_dtype(k))
    return TripletData(out, labels, k, name, layout, fmt, skipped, tuple(notes))


def _finish_int(tri, maxv, opts, name, layout, fmt, skipped, notes, given_labels=False) -> TripletData:
    """Decide between ids-as-indices and relabelling; works in place on ``tri``."""
    m = tri.shape[0]
    n_given = opts["n_items"]
    if given_labels:
        n = n_given
        labels = opts["labels"]
        out = tri if tri.dtype == index_dtype(n) else tri.astype(index_dtype(n))
        return TripletData(out, labels, n, name, layout, fmt, skipped, tuple(notes))
    relabel = opts["relabel"]
    if n_given is not None or relabel is False:
        n = n_given if n_given is not None else maxv + 1
        if maxv >= n:
            raise _err(name, f"item index {maxv} is out of range for n_items={n}")
        present = np.zeros(n, dtype=np.bool_)
        _k.mark_present(tri, present)
        absent = int(n - present.sum())
        if absent:
            notes.append(f"{absent} of the {n} items never appear in a triplet")
        labels = np.arange(n, dtype=np.int64)
        out = tri if tri.dtype == index_dtype(n) else tri.astype(index_dtype(n))
        return TripletData(out, labels, n, name, layout, fmt, skipped, tuple(notes))
    if tri.dtype != np.int32 and tri.dtype != np.int64:
        tri = tri.astype(np.int64)
    if maxv + 1 <= max(tri.size, 1 << 16):
        present = np.zeros(maxv + 1, dtype=np.bool_)
        _k.mark_present(tri, present)
        k = int(present.sum())
        if k == maxv + 1 and relabel == "auto":
            labels = np.arange(k, dtype=np.int64)
            out = tri if tri.dtype == index_dtype(k) else tri.astype(index_dtype(k))
            return TripletData(out, labels, k, name, layout, fmt, skipped, tuple(notes))
        labels = np.flatnonzero(present).astype(np.int64)
        table = (np.cumsum(present, dtype=np.int64) - 1).astype(tri.dtype)
        _k.remap_inplace(tri, table)
        del table, present
    else:
        labels = np.unique(tri).astype(np.int64)
        k = labels.size
        step = 1 << 20
        for s in range(0, m, step):
            blk = tri[s:s + step]
            blk[...] = np.searchsorted(labels, blk)
    k = labels.size
    if k != maxv + 1 or labels[0] != 0:
        notes.append(
            f"item ids were not the contiguous range 0..{k - 1}: the {k} distinct ids "
            f"({int(labels[0])}..{int(labels[-1])}) were mapped to 0..{k - 1} in increasing order; "
            "labels maps each index back to its id")
    out = tri if tri.dtype == index_dtype(k) else tri.astype(index_dtype(k))
    return TripletData(out, labels, k, name, layout, fmt, skipped, tuple(notes))


# --------------------------------------------------------------------------------------
# NumPy files


def _load_array(name, loader, what):
    try:
        arr = loader()
    except ValueError as exc:
        if "pickle" in str(exc).lower() or "object" in str(exc).lower():
            raise _err(name, f"{what} is an object array; it cannot be read without unpickling, which "
                             "read_triplets never does (save labels as a str array, triplets as integers)") from None
        raise _err(name, f"{what} is not a valid NumPy array ({exc})") from None
    except (OSError, EOFError, zipfile.BadZipFile, KeyError, TypeError) as exc:
        raise _err(name, f"{what} is not a valid NumPy array ({type(exc).__name__}: {exc})") from None
    return arr


def _int_table(name, arr, what, ncols=3):
    """Validate a NumPy array of ids into an int64/int32 (m, ncols) array."""
    if arr.ndim != 2 or arr.shape[1] != ncols:
        raise _err(name, f"{what} must have shape (m, {ncols}), got {arr.shape}")
    if arr.shape[0] == 0:
        raise _err(name, f"{what} is empty: at least one triplet is needed")
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        raise _err(name, f"{what} must hold integer item indices, got dtype {arr.dtype}")
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if bad.any():
            r = int(np.argwhere(bad)[0, 0])
            raise _err(name, f"{what} row {r} (counting from 0) holds a non-integer value {arr[bad][0].item()!r}")
    lo = arr.min()
    if lo < 0:
        r = int(np.argwhere(arr < 0)[0, 0])
        raise _err(name, f"{what} row {r} (counting from 0) holds a negative index ({lo})")
    hi = arr.max()
    if hi >= _LIMIT:
        r = int(np.argwhere(arr >= _LIMIT)[0, 0])
        raise _err(name, f"{what} row {r} (counting from 0) holds the index {int(hi)}, which is too large "
                         f"(indices must be below {_LIMIT})")
    return np.ascontiguousarray(arr, dtype=np.int32)


def _check_rows(name, tri, what):
    rep = (tri[:, 0] == tri[:, 1]) | (tri[:, 0] == tri[:, 2]) | (tri[:, 1] == tri[:, 2])
    if rep.any():
        r = int(np.argmax(rep))
        raise _err(name, f"{what} row {r} (counting from 0) repeats an item {tuple(int(v) for v in tri[r])}; "
                         "a triplet needs three distinct items")


def _finish_array(name, tri, opts, layout, fmt, lab, notes):
    n_given = opts["n_items"]
    if opts["labels"] is not None:
        if lab is not None:
            notes.append("the file's labels were replaced by labels=")
        lab = opts["labels"]
    if lab is not None:
        n = lab.size
        maxv = int(tri.max())
        if maxv >= n:
            r = int(np.argwhere(tri >= n)[0, 0])
            raise _err(name, f"row {r} (counting from 0) holds the index {maxv}, out of range for the "
                             f"{n} labels")
        return TripletData(tri.astype(index_dtype(n)), lab, n, name, layout, fmt, 0, tuple(notes))
    maxv = int(tri.max())
    if n_given is not None and maxv >= n_given:
        r = int(np.argwhere(tri >= n_given)[0, 0])
        raise _err(name, f"row {r} (counting from 0) holds the index {maxv}, out of range for n_items={n_given}")
    return _finish_int(tri, maxv, opts, name, layout, fmt, 0, notes)


def _labels_array(name, lab):
    if lab.ndim != 1:
        raise _err(name, f"labels must be 1-D, got shape {lab.shape}")
    if lab.dtype.kind in "iu":
        lab = lab.astype(np.int64)
    elif lab.dtype.kind == "U":
        pass
    elif lab.dtype.kind == "S":
        try:
            lab = np.char.decode(lab, "utf-8")
        except UnicodeDecodeError:
            raise _err(name, "labels are bytes that are not UTF-8") from None
    else:
        raise _err(name, f"labels must be a str or integer array, got dtype {lab.dtype}")
    if np.unique(lab).size != lab.size:
        raise _err(name, "labels are not distinct")
    return lab


def _read_npy(src: _Source, opts) -> TripletData:
    name = src.name
    stream = src.rewind()
    arr = _load_array(name, lambda: np.load(stream, allow_pickle=False), "the array")
    if not isinstance(arr, np.ndarray):
        raise _err(name, "is not a NumPy .npy array")
    if opts["layout"] not in ("auto", "list-order"):
        raise _err(name, f"a .npy file holds list-order triplets; layout={opts['layout']!r} needs X and y (.npz)")
    tri = _int_table(name, arr, "the array")
    del arr
    _check_rows(name, tri, "the array")
    return _finish_array(name, tri, opts, "list-order", "npy", None, [])


def _read_npz(src: _Source, opts) -> TripletData:
    name = src.name
    stream = src.rewind()
    try:
        npz = np.load(stream, allow_pickle=False)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
        raise _err(name, f"is not a valid .npz archive ({exc})") from None
    if not isinstance(npz, np.lib.npyio.NpzFile):
        raise _err(name, "is not a .npz archive")
    try:
        keys = list(npz.files)
        notes = []
        if "triplets" in keys:
            tri = _int_table(name, _load_array(name, lambda: npz["triplets"], "triplets"), "triplets")
            layout = "list-order"
            used = {"triplets"}
        elif "X" in keys and "y" in keys:
            X = _int_table(name, _load_array(name, lambda: npz["X"], "X"), "X")
            y = _load_array(name, lambda: npz["y"], "y")
            if y.shape != (X.shape[0],):
                raise _err(name, f"y must have shape ({X.shape[0]},) to match X, got {y.shape}")
            if y.dtype.kind == "b":
                keep = y
                layout = "list-boolean"
            elif y.dtype.kind in "iuf":
                vals = np.unique(y)
                if np.isin(vals, (-1, 1)).all():
                    keep = y == 1
                    layout = "list-count"
                elif np.isin(vals, (0, 1)).all():
                    keep = y == 1
                    layout = "list-boolean"
                    notes.append("y holds 0/1 integers; read as booleans (1 = X row is in list-order)")
                else:
                    bad = ~np.isin(y, (-1, 0, 1))
                    r = int(np.argmax(bad)) if bad.any() else 0
                    raise _err(name, f"y row {r} (counting from 0) holds {y[r].item()!r}; y must be True/False or +1/-1")
            else:
                raise _err(name, f"y must be boolean or +1/-1, got dtype {y.dtype}")
            swap = ~np.asarray(keep, dtype=bool)
            tri = X
            tmp = tri[swap, 1].copy()
            tri[swap, 1] = tri[swap, 2]
            tri[swap, 2] = tmp
            used = {"X", "y"}
        else:
            raise _err(name, f"has the arrays {sorted(keys)}; expected 'triplets', or 'X' and 'y' "
                             "(optionally 'labels')")
        lay = opts["layout"]
        if lay != "auto" and lay != layout and not (lay in ("list-boolean", "list-count") and layout in ("list-boolean", "list-count")):
            raise _err(name, f"layout={lay!r} was asked for but the archive holds {layout} data")
        lab = None
        if "labels" in keys:
            lab = _labels_array(name, _load_array(name, lambda: npz["labels"], "labels"))
            used.add("labels")
        other = sorted(set(keys) - used)
        if other:
            notes.append(f"ignored array(s): {', '.join(other)}")
    finally:
        npz.close()
    _check_rows(name, tri, "triplets" if layout == "list-order" else "X")
    if lab is not None and opts["labels"] is None:
        if int(tri.max()) >= lab.size:
            r = int(np.argwhere(tri >= lab.size)[0, 0])
            raise _err(name, f"row {r} (counting from 0) holds the index {int(tri.max())}, out of range for "
                             f"the {lab.size} labels stored in the file")
        if opts["n_items"] is not None and opts["n_items"] != lab.size:
            raise _err(name, f"n_items={opts['n_items']} does not match the {lab.size} labels stored in the file")
        n = lab.size
        return TripletData(tri.astype(index_dtype(n)), lab, n, name, layout, "npz", 0, tuple(notes))
    return _finish_array(name, tri, opts, layout, "npz", None, notes)


# --------------------------------------------------------------------------------------
# Writer


def write_triplets(path, triplets, labels=None, layout: str = "list-order", *, format: str = "auto",
                   header: bool = True, random_state=0) -> None:
    """Write triplets in any layout :func:`read_triplets` reads.

    Parameters
    ----------
    path : str, os.PathLike or file object
        Destination. A path is written atomically (a temporary file in the same
        directory, then renamed), so a failed write leaves no partial file.
    triplets : array-like of shape (m, 3) or TripletData
        List-order triplets ``(head, closer, farther)`` of indices ``0..n_items-1``.
        A :class:`TripletData` brings its own labels.
    labels : sequence of str or int, optional
        ``labels[i]`` is written in place of index ``i`` (text files) or stored as
        the ``labels`` array (``.npz``). Must be distinct, non-empty, without line
        breaks or surrounding whitespace, and either all integers or all text that
        does not look like a number.
    layout : {"list-order", "crowd", "list-boolean", "list-count"}, default "list-order"
        ``"crowd"`` writes ``head,left,right,winner`` with the chosen item placed
        on a random side; ``"list-boolean"``/``"list-count"`` write ``X`` rows with
        a random half swapped and ``y`` (``True``/``False`` resp. ``+1``/``-1``; in
        text files ``1``/``0`` resp. ``1``/``-1``).
    format : {"auto", "csv", "tsv", "text", "npy", "npz"}, default "auto"
        ``"auto"`` goes by the extension: ``.npy``, ``.npz``, ``.tsv``/``.tab``
        (tab-separated), anything else comma-separated. ``"text"`` is
        whitespace-separated.
    header : bool, default True
        Write a header line naming the columns (text formats).
    random_state : None, int or numpy.random.Generator, default 0
        Seed of the sides (``crowd``) and of the swapped rows (``list-boolean``,
        ``list-count``); the default makes files reproducible.

    Notes
    -----
    ``read_triplets(path, labels=labels)`` gives back exactly ``triplets``; without
    ``labels=`` text labels are indexed in sorted order (integer labels in
    increasing order), so the triplets come back relabelled consistently.
    """
    from_data = isinstance(triplets, TripletData)
    n_items = None
    if from_data:
        if labels is None:
            labels = triplets.labels
        n_items = triplets.n_items
        triplets = triplets.triplets
    if layout not in TRIPLET_LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(TRIPLET_LAYOUTS)}; got {layout!r}")
    if format not in ("auto",) + TRIPLET_FORMATS:
        raise ValueError(f"format must be one of auto, {', '.join(TRIPLET_FORMATS)}; got {format!r}")
    lab = None
    if labels is not None:
        lab = _check_write_labels(labels)
        tri, n_items = check_triplets(triplets, n_items=lab.size)
    else:
        tri, n_items = check_triplets(triplets, n_items=n_items)
    is_path = isinstance(path, (str, os.PathLike))
    if not is_path and not hasattr(path, "write"):
        raise ValueError(f"path must be a path or a writable file object, got {type(path).__name__}")
    fname = os.fspath(path) if is_path else getattr(path, "name", "")
    ext = os.path.splitext(fname)[1].lower() if isinstance(fname, str) else ""
    fmt = format
    if fmt == "auto":
        fmt = {".npy": "npy", ".npz": "npz", ".tsv": "tsv", ".tab": "tsv"}.get(ext, "csv")
    rng = check_random_state(random_state)
    m = tri.shape[0]
    if layout == "crowd":
        swap = rng.random(m) < 0.5
    elif layout in ("list-boolean", "list-count"):
        swap = rng.random(m) < 0.5
    else:
        swap = None
    if fmt == "npy":
        if layout != "list-order":
            raise ValueError(f"layout={layout!r} cannot be stored in .npy (one array); use .npz or a text format")
        if lab is not None:
            raise ValueError("labels cannot be stored in a .npy file; use .npz or a text format")
        _write_atomic(path, is_path, lambda fh: np.save(fh, tri, allow_pickle=False))
        return
    if fmt == "npz":
        if layout == "crowd":
            raise ValueError("layout='crowd' is a text layout; use a .csv/.tsv file")
        arrays = {}
        if layout == "list-order":
            arrays["triplets"] = tri
        else:
            X = tri.copy()
            X[swap, 1], X[swap, 2] = tri[swap, 2], tri[swap, 1]
            arrays["X"] = X
            arrays["y"] = ~swap if layout == "list-boolean" else np.where(swap, -1, 1).astype(np.int8)
        if lab is not None:
            arrays["labels"] = lab
        _write_atomic(path, is_path, lambda fh: _savez(fh, arrays))
        return
    delim = {"csv": ",", "tsv": "\t", "text": " "}[fmt]
    if fmt == "text" and lab is not None and lab.dtype.kind == "U":
        bad = [v for v in lab.tolist() if any(ch.isspace() for ch in v)]
        if bad:
            raise ValueError(f"labels such as {bad[0]!r} contain whitespace and cannot be written "
                             "whitespace-separated; use format='csv'")
    h, a, b = tri[:, 0], tri[:, 1], tri[:, 2]
    if layout == "list-order":
        names = ("head", "winner", "loser")
        cols = [h, a, b]
    elif layout == "crowd":
        names = ("head", "left", "right", "winner")
        cols = [h, np.where(swap, b, a), np.where(swap, a, b), a]
    else:
        names = ("head", "j", "k", "y")
        y = np.where(swap, 0 if layout == "list-boolean" else -1, 1)
        cols = [h, np.where(swap, b, a), np.where(swap, a, b), y]
    n_item_cols = 3 if layout != "crowd" else 4
    if lab is not None and lab.dtype.kind == "U":
        q = [_quote(s, delim) for s in lab.tolist()]

        def write(fh):
            if header:
                fh.write(delim.join(names).encode() + b"\n")
            step = 1 << 16
            for s in range(0, m, step):
                parts = [np.asarray(c[s:s + step]).tolist() for c in cols]
                lines = []
                for row in zip(*parts):
                    cells = [q[v] for v in row[:n_item_cols]] + [str(v) for v in row[n_item_cols:]]
                    lines.append(delim.join(cells))
                fh.write(("\n".join(lines) + "\n").encode("utf-8"))
    else:
        vals_map = lab.astype(np.int64) if lab is not None else None

        def write(fh):
            if header:
                fh.write(delim.join(names).encode() + b"\n")
            step = 1 << 20
            for s in range(0, m, step):
                block = np.empty((min(step, m - s), len(cols)), dtype=np.int64)
                for j, c in enumerate(cols):
                    v = np.asarray(c[s:s + step], dtype=np.int64)
                    block[:, j] = vals_map[v] if (vals_map is not None and j < n_item_cols) else v
                buf = np.empty(block.size * 21, dtype=np.uint8)
                nbytes = _k.format_int_rows(block, ord(delim), buf)
                fh.write(buf[:nbytes].tobytes())
    _write_atomic(path, is_path, write)


def _savez(fh, arrays):
    """``np.savez_compressed`` with fixed timestamps, so equal data gives equal bytes."""
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_DEFLATED, allowZip64=True) as zf:
        for key, arr in arrays.items():
            info = zipfile.ZipInfo(key + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            with zf.open(info, "w", force_zip64=True) as f:
                np.lib.format.write_array(f, np.asanyarray(arr), allow_pickle=False)


def _quote(s: str, delim: str) -> str:
    if any(ch in s for ch in (delim, '"', "#")) or s != s.strip():
        return '"' + s.replace('"', '""') + '"'
    return s


def _check_write_labels(labels) -> np.ndarray:
    if isinstance(labels, (str, bytes)):
        raise ValueError("labels must be a sequence of item labels, got a single string")
    lab = np.asarray(labels)
    if lab.ndim != 1:
        raise ValueError(f"labels must be 1-D, got shape {lab.shape}")
    if lab.dtype.kind in "iu":
        if lab.size and lab.min() < 0:
            raise ValueError("labels must be non-negative when they are integers")
        lab = lab.astype(np.int64)
    elif lab.dtype.kind in "USO":
        vals = [v if isinstance(v, str) else None for v in lab.tolist()]
        if any(v is None for v in vals):
            raise ValueError("labels must hold only strings or only integers")
        for i, v in enumerate(vals):
            if not v or v != v.strip() or "\n" in v or "\r" in v or v.startswith("#"):
                raise ValueError(f"labels[{i}] = {v!r} is empty, has surrounding whitespace or a line break, "
                                 "or starts with '#' (a comment line)")
        numeric = [_is_number(v) for v in vals]
        if any(numeric) and not all(numeric):
            i = numeric.index(True)
            raise ValueError(f"labels[{i}] = {vals[i]!r} looks like a number while other labels are text; "
                             "the file could not be read back without item_type='str'")
        if all(numeric):
            raise ValueError("labels are numbers written as strings; pass them as integers")
        lab = np.array(vals, dtype=str)
    else:
        raise ValueError(f"labels must hold strings or integers, got dtype {lab.dtype}")
    if np.unique(lab).size != lab.size:
        raise ValueError("labels must be distinct")
    return lab


def _write_atomic(path, is_path, write):
    if not is_path:
        fh = path
        if isinstance(fh, io.TextIOBase):
            bio = io.BytesIO()
            write(bio)
            fh.write(bio.getvalue().decode("utf-8"))
        else:
            write(fh)
        return
    path = os.fspath(path)
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=os.path.basename(path), dir=d)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        try:
            mode = os.stat(path).st_mode & 0o777
        except OSError:
            mask = os.umask(0)
            os.umask(mask)
            mode = 0o666 & ~mask
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
