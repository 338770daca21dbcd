"""write_triplets, write_file (which never leaves a file half written), and the embedding table and spreadsheet-safe
cell of CSV exports."""

from __future__ import annotations

import csv
import io
import os
import secrets
import stat
import unicodedata
import zipfile

import numpy as np

from .._validation import check_random_state, check_triplets
from .layouts import (ID_SUFFIXES, TRIPLET_FORMATS, TRIPLET_LAYOUTS, TripletData, as_labels, is_number,
                      refuse_unordered)

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
#: Other spellings of a header name that a label takes, in order of preference: endings the reader drops.
_RESPELLINGS = tuple(s for s in ("id", "item", "label", "name") if s in ID_SUFFIXES)


def spreadsheet_safe(cell) -> str:
    """A text cell for a CSV export that a spreadsheet will not run as a formula.

    Cells starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return
    get a leading single quote (the OWASP rule against CSV injection).

    >>> spreadsheet_safe("=1+1"), spreadsheet_safe("Paris")
    ("'=1+1", 'Paris')
    """
    s = str(cell)
    return "'" + s if s.startswith(_FORMULA_START) else s


def write_embedding_table(fh, Z, labels, cov=None, delimiter: str = ",") -> None:
    """Write an embedding as text: a header ``item,label,x1..xd``, then one row per item.

    ``cov`` (n, d, d), per-item covariances, adds the columns ``cov_xa_xb`` (a <= b).
    Coordinates are written exactly (``repr``). A text label is guarded by
    :func:`spreadsheet_safe` and quoted when it holds a ``#``, which
    ``pandas.read_csv(..., comment="#")`` and this package's readers would
    otherwise take for the start of a comment, or a line break (a carriage
    return went out bare); integer labels stay numbers.
    """
    n, d = Z.shape
    upper = np.triu_indices(d)
    header = ["item", "label", *(f"x{k + 1}" for k in range(d))]
    header += [f"cov_x{a + 1}_x{b + 1}" for a, b in zip(*upper)] if cov is not None else []
    extra = cov[:, upper[0], upper[1]].tolist() if cov is not None else [[]] * n
    plain = csv.writer(fh, delimiter=delimiter, lineterminator="\n")
    quoted = csv.writer(fh, delimiter=delimiter, lineterminator="\n", quoting=csv.QUOTE_NONNUMERIC)
    plain.writerow(header)
    for i, (lab, z, c) in enumerate(zip(np.asarray(labels).tolist(), np.asarray(Z, dtype=float).tolist(), extra)):
        lab = lab if isinstance(lab, int) else spreadsheet_safe(lab)
        # a carriage return is no line end to the writer (its lines end in \n), but it is to pandas and csv.reader
        (quoted if any(ch in str(lab) for ch in "#\r\n") else plain).writerow([i, lab, *z, *c])


def write_triplets(path, triplets, labels=None, layout: str = "list-order", *, format: str = "auto",
                   header: bool = True, random_state=0) -> None:
    """Write triplets in any layout :func:`read_triplets` reads.

    Parameters
    ----------
    path : str, os.PathLike or file object
        A path is written atomically (a temporary file beside it, then a rename; a device or
        pipe such as ``/dev/stdout`` in place).
    triplets : array-like of shape (m, 3) or TripletData
        List-order triplets of indices ``0..n_items-1``; a TripletData brings its labels.
    labels : sequence of str or int, optional
        Written for the indices (text) or stored (``.npz``): distinct integers below
        2**63, or text that is not a number, without control characters or surrounding spaces.
    layout : {"list-order", "crowd", "list-boolean", "list-count"}, default "list-order"
    format : {"auto", "csv", "tsv", "text", "npy", "npz"}, default "auto"
        ``"auto"`` goes by the extension (comma-separated for unknown ones).
    header : bool, default True
    random_state : None, int, SeedSequence, numpy.random.Generator or RandomState, default 0
        Seed of the crowd layout's sides and of the rows swapped in ``X, y`` layouts.
    """
    n_items = None
    if isinstance(triplets, TripletData):
        labels = triplets.labels if labels is None else labels
        n_items, triplets = triplets.n_items, triplets.triplets
    if layout not in TRIPLET_LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(TRIPLET_LAYOUTS)}; got {layout!r}")
    if format not in ("auto",) + TRIPLET_FORMATS:
        raise ValueError(f"format must be one of auto, {', '.join(TRIPLET_FORMATS)}; got {format!r}")
    if header is not True and header is not False:  # "no" is truthy: a header was written
        raise ValueError(f"header must be True or False; got {header!r}")
    lab = None if labels is None else _check_write_labels(labels)
    tri, n_items = check_triplets(triplets, n_items=n_items if lab is None else lab.size)
    is_path = isinstance(path, (str, os.PathLike))
    if not is_path and not hasattr(path, "write"):
        raise ValueError(f"path must be a path or a writable file object, got {type(path).__name__}")
    name = os.fspath(path) if is_path else getattr(path, "name", "")
    ext = os.path.splitext(name)[1].lower() if isinstance(name, str) else ""
    fmt = {".npy": "npy", ".npz": "npz", ".tsv": "tsv", ".tab": "tsv"}.get(ext, "csv") if format == "auto" else format
    swap = check_random_state(random_state).random(tri.shape[0]) < 0.5 if layout != "list-order" else None
    h, a, b = tri[:, 0], tri[:, 1], tri[:, 2]
    x, z, y = a, b, None  # the two sides as written, and the response (True/1: the first side is the closer)
    if swap is not None:
        x, z = np.where(swap, b, a), np.where(swap, a, b)
        y = ~swap if layout == "list-boolean" else np.where(swap, -1, 1).astype(np.int8)
    if fmt in ("npy", "npz"):
        if fmt == "npy" and lab is not None:
            raise ValueError("labels cannot be stored in a .npy file; use .npz or a text format")
        if layout == "crowd" or (fmt == "npy" and layout != "list-order"):
            raise ValueError(f"layout={layout!r} cannot be stored in .{fmt}; use "
                             + ("" if layout == "crowd" else ".npz or ") + "a text format (.csv/.tsv)")
        arrays = {"triplets": tri} if layout == "list-order" else {"X": np.column_stack([h, x, z]), "y": y}
        if lab is not None:
            arrays["labels"] = lab if lab.dtype.kind == "i" else lab.astype(str)
        return _write_to(path, is_path, (lambda fh: np.save(fh, tri, allow_pickle=False)) if fmt == "npy"
                             else (lambda fh: _savez(fh, arrays)))
    delim = {"csv": ",", "tsv": "\t", "text": " "}[fmt]
    text = lab is not None and lab.dtype.kind == "O"
    if fmt == "text" and text and any(any(ch.isspace() for ch in v) for v in lab.tolist()):
        raise ValueError("labels that contain whitespace cannot be written whitespace-separated; use format='csv'")
    names, cols = {"list-order": (("head", "winner", "loser"), [h, a, b]),
                   "crowd": (("head", "left", "right", "winner"), [h, x, z, a])}.get(layout, (("head", "j", "k", "y"),
                                                                                       [h, x, z, y]))
    n_item, step = 4 if layout == "crowd" else 3, 1 << 16 if text else 1 << 18
    cells = np.array([_quote(v, delim) for v in lab.tolist()] + [None], dtype=object)[:-1] if text else lab

    def write(fh):
        fh.write((delim.join(_header(names, lab)) + "\n").encode() if header else b"")
        for s in range(0, tri.shape[0], step):
            block = np.column_stack([np.asarray(c[s:s + step], dtype=np.int64) for c in cols])
            out = block.astype(object) if text else block
            if cells is not None:
                out[:, :n_item] = cells[block[:, :n_item]]
            fh.write(("\n".join(delim.join(map(str, row)) for row in out.tolist()) + "\n").encode() if text
                     else _format_ints(out, delim))
    _write_to(path, is_path, write)


def _header(cells, lab) -> list:
    """Column names that no text label repeats: the reader takes a first line whose cells are items of the
    file for data, so a label such as 'y' gets the header 'y_id' instead (the same role to the reader)."""
    taken = set(lab.tolist()) if lab is not None and lab.dtype.kind == "O" else set()
    out = [next((c for c in [cell] + [f"{cell}_{s}" for s in _RESPELLINGS] if c not in taken), None)
           for cell in cells]
    if None in out:
        raise ValueError(f"the labels take every spelling of the header column {cells[out.index(None)]!r}; write "
                         "with header=False and read the file back with layout=")
    return out


def _format_ints(block, delim: str) -> bytes:
    """Rows of integers as delimited text lines, formatted by NumPy (7x faster than joining str() of each value)."""
    v = np.abs(block)
    x = v.copy()  # consumed digit by digit below
    width = len(str(int(v.max()))) if v.size else 1
    cell = np.empty(block.shape + (width + 2,), dtype=np.uint8)  # a sign, the digits right-aligned, a delimiter
    cell[..., 0], cell[..., width + 1], cell[:, -1, width + 1] = ord("-"), ord(delim), ord("\n")
    for p in range(width, 0, -1):
        cell[..., p] = x % 10 + 48
        x //= 10
    digits = sum((v >= 10**p for p in range(1, width)), start=np.ones(block.shape, np.int64))
    pos = np.arange(width + 2)
    keep = (pos > width - digits[..., None]) | (pos == width + 1)
    keep[..., 0] = block < 0
    return cell[keep].tobytes()


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
    """Labels that read back as written: integer ids, or text that is not a number, has no control character nor
    surrounding whitespace and does not start a comment."""
    refuse_unordered(labels)
    raw = labels if isinstance(labels, (str, bytes)) else labels.tolist() if isinstance(labels, np.ndarray) else (
        list(labels))
    lab = as_labels(raw)  # distinct, int64 ids or stripped text
    if lab.dtype.kind == "O":
        numeric = [is_number(v) for v in lab.tolist()]
        if all(numeric):
            raise ValueError("labels are numbers written as strings; pass them as integers")
        if any(numeric):
            raise ValueError(f"labels[{numeric.index(True)}] = {lab[numeric.index(True)]!r} looks like a number "
                             "while other labels are text; the file could not be read back without item_type='str'")
        for i, (v, w) in enumerate(zip(raw, lab.tolist())):
            if not w or v != w or w.startswith("#") or any(unicodedata.category(c) == "Cc" for c in w):
                raise ValueError(f"labels[{i}] = {v!r} is empty, has surrounding whitespace, a line break or another "
                                 "control character, or starts with '#' (a comment line)")
    return lab


def written_in_place(path) -> bool:
    """Whether :func:`write_file` writes ``path`` in place: a device, pipe or socket, or any path under /dev or
    /proc (``/dev/stdout`` may point at a regular file, a shell's redirection)."""
    if os.path.abspath(path).startswith(("/dev/", "/proc/")):
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:  # a new file (or a dangling link, created where it points)
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def write_file(path, write) -> None:
    """Write the path ``path`` through ``write(binary_file)``, never leaving it half written.

    A regular or new file: a temporary file beside it (mode 0o666 less the umask, applied by the
    kernel, or the replaced file's mode), then a rename; through a symbolic link, its target is
    replaced. A device or pipe (``/dev/null``, a FIFO) or any path under /dev or /proc
    (``/dev/stdout`` redirected to a file) is written in place. Errors name ``path``.
    """
    try:
        if written_in_place(path):  # appended: a redirection's file holds what was written before
            with open(path, "ab") as fh:
                write(fh)
            return
        d, base = os.path.split(os.path.realpath(path))
        tmp = os.path.join(d, f".tmp-{secrets.token_hex(8)}-{base}")  # O_EXCL: never an existing file
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, os.fspath(path)) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        if os.path.exists(path):
            os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        os.replace(tmp, os.path.join(d, base))
    except BaseException as exc:
        os.unlink(tmp)
        if isinstance(exc, OSError):
            raise OSError(exc.errno, exc.strerror, os.fspath(path)) from None
        raise


def _write_to(path, is_path, write):
    """``write(binary_file)`` into a path (:func:`write_file`) or a file object (text or binary)."""
    if is_path:
        return write_file(path, write)
    bio = io.BytesIO() if isinstance(path, io.TextIOBase) else path
    write(bio)
    return None if bio is path else path.write(bio.getvalue().decode("utf-8"))
