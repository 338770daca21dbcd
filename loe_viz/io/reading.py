"""read_triplets: text tables parsed by pandas and checked column by column; NumPy files."""

from __future__ import annotations

import codecs
import csv
import io
import os
import re
import warnings

import numpy as np

from . import arrays
from .layouts import (ANSWER_MODES, ANSWER_NOTE, FALSE, INT_RE, LAYOUT_ROLES, LIMIT, MAX_NOTES, TRUE, Judge,
                      RowError, TripletData, check_read_args, err, finish_int, finish_str, is_number,
                      layout_from_roles, roles_from_header)

_CHUNK = 1 << 20  # rows per pandas chunk
_SAMPLE = 1 << 18  # bytes sniffed for the delimiter, the header and the layout
_ASCII_COMPATIBLE = {"utf-8", "utf-8-sig", "ascii", "latin-1", "iso8859-1", "cp1252", "iso8859-15"}
_ITEMS = ("head", "near", "far", "left", "right")


class _Source:
    """A seekable binary stream over the input, its display name and extension."""

    def __init__(self, obj):
        self.owned, self.user, self.user_pos = False, None, None
        if isinstance(obj, (str, os.PathLike)):
            path = os.fspath(obj)
            self.name = os.fsdecode(path) if isinstance(path, bytes) else path
            self.ext = os.path.splitext(self.name)[1].lower()
            self.stream, self.owned = open(self.name, "rb"), True  # OSError propagates
        elif hasattr(obj, "read"):
            name = getattr(obj, "name", None)
            self.name = name if isinstance(name, str) else "<buffer>"
            self.ext = os.path.splitext(name)[1].lower() if isinstance(name, str) else ""
            self.user = obj
            self.user_pos = obj.tell() if _seekable(obj) else None
            first = obj.read(0)
            if isinstance(first, str):
                self.stream = io.BytesIO(obj.read().encode("utf-8"))
            else:
                self.stream = obj if _seekable(obj) else io.BytesIO(obj.read())
        else:
            raise ValueError(f"path_or_buffer must be a path or a file object, got {type(obj).__name__}")
        self.base = self.stream.tell()
        self.end = self.stream.seek(0, io.SEEK_END)
        self.stream.seek(self.base)

    def rewind(self, offset: int = 0):
        self.stream.seek(self.base + offset)
        return self.stream

    def restore(self):
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


def read_triplets(path_or_buffer, format: str = "auto", *, layout: str = "auto", n_items: int | None = None,
                  labels=None, header="auto", delimiter: str | None = None, columns=None, answer: str = "auto",
                  item_type: str = "auto", relabel="auto", encoding: str = "utf-8", errors: str = "raise",
                  limits: dict | None = None) -> TripletData:
    """Read a triplet file into list-order triplets and item labels.

    Parameters
    ----------
    path_or_buffer : str, os.PathLike or file object
        A path, or an open binary or text file object (read from its current
        position; after a failed read a seekable one is put back there).
    format : {"auto", "csv", "tsv", "text", "npy", "npz"}, default "auto"
        ``"auto"`` recognises NumPy files by their magic bytes and reads anything
        else as delimited text; ``"csv"``/``"tsv"`` fix the delimiter to ``,``/tab;
        ``"text"`` sniffs it among ``,``, tab, ``;`` and whitespace.
    layout : {"auto", "list-order", "crowd", "list-boolean", "list-count"}, default "auto"
        Needed only for a header-less text file with four columns (``crowd``:
        head, left, right, answer; ``list-boolean``/``list-count``: head, j, k, y).
    n_items : int, optional
        Number of items: integer ids are then indices ``0..n_items-1`` as they are.
        For text labels it must equal the number of distinct labels.
    labels : sequence, optional
        The known items in index order: every id in the file must be one of them
        and is mapped to its position (``n_items`` defaults to ``len(labels)``).
    header : {"auto", True, False}, default "auto"
        Whether the first data line names the columns. ``"auto"``: it does when it
        names a complete set of roles (see :data:`COLUMN_NAMES`) with none of its
        cells an item of the next rows, or when it is text above integer rows.
    delimiter : str, optional
        Field separator (one character, or ``" "`` for runs of whitespace). Default: sniffed.
    columns : sequence of str or None, optional
        The role of every column, overriding the header: ``"head"``, ``"near"``,
        ``"far"``, ``"left"``, ``"right"``, ``"answer"``, ``"response"`` or ``None``.
    answer : {"auto", "label", "side", "index"}, default "auto"
        How a crowd file's answer names the chosen item: its label (equal to the
        left or right cell), ``left``/``right``, or ``0``/``1``. ``"auto"`` picks,
        for the whole file, the first encoding under which every answer fits.
    item_type : {"auto", "int", "str"}, default "auto"
        ``"auto"``: ids are integers when the first id is a number (then every id
        must be one); ``"str"`` reads every id as a text label.
    relabel : {"auto", True, False}, default "auto"
        Integer ids: ``"auto"`` keeps them as indices when they fill ``0..max``,
        otherwise maps the distinct ids to ``0..k-1`` in increasing order (ids up
        to 2**63 - 1); ``True`` always maps; ``False`` never does.
    encoding : str, default "utf-8"
        Text encoding; a UTF-8 byte-order mark and Windows line endings are handled.
    errors : {"raise", "skip"}, default "raise"
        ``"skip"`` drops rows with a problem and counts them in ``n_skipped``.
    limits : dict, optional
        Memory bounds checked before allocating, overriding the module constants:
        ``"array_bytes"`` (:data:`MAX_ARRAY_BYTES`, declared size of one array of a
        ``.npy``/``.npz``), ``"compression_ratio"`` (:data:`MAX_COMPRESSION_RATIO`,
        of an ``.npz`` member above 16 MiB) and ``"label_bytes"``
        (:data:`MAX_LABEL_BYTES`, total characters of the distinct text labels).

    Returns
    -------
    TripletData

    Raises
    ------
    ValueError
        For an invalid argument (the message starts with its name) or a file that
        cannot be read as triplets (the message starts with the file name and
        gives the 1-based line, counting header, blank and comment lines, or the
        0-based row of an array), or a limit that the file would exceed.

    Notes
    -----
    Text is parsed by ``pandas.read_csv`` in chunks of 2**20 rows into a
    pre-sized array; blank lines and lines starting with ``#`` are skipped, fields
    may be quoted, extra named columns are ignored (noted). NumPy files are read
    with ``allow_pickle=False`` semantics: object arrays are refused unread.

    Examples
    --------
    >>> import io
    >>> data = read_triplets(io.StringIO("head,left,right,winner\\nParis,Rome,Oslo,Rome\\n"))
    >>> data.labelled().tolist()
    [['Paris', 'Rome', 'Oslo']]
    >>> data.triplets.tolist(), data.layout
    ([[1, 2, 0]], 'crowd')
    """
    opts = check_read_args(format, layout, n_items, labels, header, delimiter, columns, answer,
                           item_type, relabel, encoding, errors)
    lim = _limits(limits)
    src = _Source(path_or_buffer)
    try:
        head = src.rewind().read(8)
        fmt = opts["format"]
        if fmt == "auto":
            if head.startswith(b"\x93NUMPY"):
                fmt = "npy"
            elif head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
                fmt = "npz"
            elif src.ext in (".npy", ".npz"):
                raise err(src.name, f"has the extension {src.ext} but is not a NumPy {src.ext} file")
        if fmt in ("npy", "npz"):
            lay, tri, lab, notes = (arrays.read_npy if fmt == "npy" else arrays.read_npz)(src, opts, lim)
            return arrays.finish_array(src.name, tri, opts, lay, fmt, lab, notes)
        return _read_text(src, opts, fmt, lim)
    except BaseException:
        src.restore()
        raise
    finally:
        if src.owned:
            src.stream.close()


def _limits(limits) -> dict:
    from . import MAX_ARRAY_BYTES, MAX_COMPRESSION_RATIO, MAX_LABEL_BYTES

    out = {"array_bytes": MAX_ARRAY_BYTES, "compression_ratio": MAX_COMPRESSION_RATIO,
           "label_bytes": MAX_LABEL_BYTES}
    for key, value in (limits or {}).items():
        if key not in out:
            raise ValueError(f"limits keys must be among {', '.join(out)}; got {key!r}")
        if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) or not value > 0:
            raise ValueError(f"limits[{key!r}] must be a positive number, got {value!r}")
        out[key] = value
    return out


# ------------------------------------------------------------------------------------ sniffing

def _split(line: str, delim):
    if delim is None:
        return line.split()
    try:
        return next(csv.reader([line], delimiter=delim, skipinitialspace=True))
    except (csv.Error, StopIteration):
        return line.split(delim)


class _Spec:
    delimiter = None  # None: runs of whitespace
    header_line = 0  # 1-based line of the header (0: none)
    roles, layout, kind, ignored = (), "list-order", "int", ()
    data_start = 0  # byte offset of the first line after the header
    first_line = 1  # its line number


def _sniff(src, opts, fmt, notes) -> _Spec:
    name, spec, enc = src.name, _Spec(), opts["encoding"]
    raw = src.rewind().read(_SAMPLE)
    eof = len(raw) < _SAMPLE
    if not raw:
        raise err(name, "the file is empty")
    if raw.startswith(b"\x1f\x8b"):
        raise err(name, "is gzip-compressed; decompress it first (supported: CSV/TSV/whitespace text, .npy, .npz)")
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) and enc in _ASCII_COMPATIBLE:
        raise err(name, "is UTF-16 text; pass encoding='utf-16' or save it as UTF-8")
    nul = raw.find(b"\x00")
    if nul >= 0 and enc in _ASCII_COMPATIBLE:
        raise err(name, "is not a recognised triplet file: binary content (a NUL byte); supported: "
                        "CSV/TSV/whitespace text, .npy, .npz", raw[:nul].count(b"\n") + 1)
    bom = 3 if raw.startswith(codecs.BOM_UTF8) else 0
    body = raw[bom:] if eof else raw[bom:raw.rfind(b"\n") + 1 or len(raw)]
    try:
        text = body.decode("utf-8" if enc == "utf-8-sig" else enc)
    except UnicodeDecodeError as exc:
        raise err(name, f"is not valid {enc} text (byte 0x{body[exc.start]:02x}); pass encoding= with the "
                        "file's encoding", body[:exc.start].count(b"\n") + 1) from None
    lines = re.split(r"\r\n|\n|\r", text)
    data = [(i + 1, ln) for i, ln in enumerate(lines) if ln.strip() and not ln.lstrip().startswith("#")]
    if not data:
        if not eof:
            raise err(name, f"no data row in the first {_SAMPLE} bytes")
        raise err(name, "the file is empty" if not text.strip() else
                  "the file holds no data rows (only blank or comment lines)")
    forced = opts["delimiter"] or {"csv": ",", "tsv": "\t"}.get(fmt)
    spec.delimiter = delim = _sniff_delimiter([ln for _, ln in data[:50]], forced)
    first_no = data[0][0]
    rows = [[f.strip() for f in _split(ln, delim)] for _, ln in data[:50]]
    f0 = rows[0]
    roles, hlayout, n_known, problem = roles_from_header(f0)
    numeric0 = [is_number(f) for f in f0]
    seen = {f for r in rows[1:] for f in r}
    hdr = opts["header"]
    if hdr == "auto":
        items_below = bool(seen & set(f0))  # 'j,i,k' above 'k,j,l': the first line is data, not a header
        names = not all(numeric0) and (hlayout is not None or (n_known >= 2 and not any(numeric0)))
        hdr = (names and not items_below) or (not all(numeric0) and len(rows) > 1 and opts["item_type"] != "str"
                                              and all(map(is_number, rows[1])))
        if not hdr and hlayout is not None and items_below:
            notes.append(f"the first line {','.join(f0)!r} was read as data (its cells are items of the file); "
                         "pass header=True if it names the columns")
    columns, lay = opts["columns"], opts["layout"]
    if hdr:
        spec.header_line = first_no
        if columns is None:
            if hlayout is None:
                if n_known == 0:
                    raise err(name, f"the header {f0} names no known column; name the columns e.g. "
                                    "head,winner,loser or head,left,right,winner, or pass columns=", first_no)
                raise err(name, f"the {problem} (header {f0})", first_no)
            spec.roles, spec.layout = roles, hlayout
            spec.ignored = tuple(f for f, r in zip(f0, roles) if r is None)
            named = [r for r in roles if r is not None]
            if named != list(LAYOUT_ROLES[hlayout]):
                notes.append(f"columns taken by their header names ({', '.join(f0)})")
        elif len(columns) != len(f0):
            raise err(name, f"columns= gives {len(columns)} roles but the header has {len(f0)} columns", first_no)
        rows = rows[1:]
    if columns is not None:
        spec.roles, spec.layout = columns, layout_from_roles(columns, "columns")
    elif not hdr:
        k = len(f0)
        if k == 3 and lay in ("auto", "list-order"):
            spec.roles, spec.layout = LAYOUT_ROLES["list-order"], "list-order"
        elif k == 4 and lay in ("crowd", "list-boolean", "list-count"):
            spec.roles, spec.layout = LAYOUT_ROLES[lay], ("crowd" if lay == "crowd" else "list-boolean")
        elif k == 4 and lay == "auto":
            raise err(name, "4 columns without a header: name them (head,left,right,winner for crowd "
                            "answers, or head,j,k,y) or pass layout=", first_no)
        else:
            want = LAYOUT_ROLES["list-order" if lay == "auto" else lay]
            raise err(name, f"expected {len(want)} fields ({', '.join(want)}), got {k}", first_no)
    if lay != "auto" and not (spec.layout == lay or (spec.layout, lay) == ("list-boolean", "list-count")):
        raise err(name, f"layout={lay!r} was asked for but the columns describe a {spec.layout} layout")
    kind = opts["item_type"]
    if kind == "auto":
        j = next(i for i, r in enumerate(spec.roles) if r in _ITEMS)
        kind = "int" if rows and len(rows[0]) > j and is_number(rows[0][j]) else "str"
    spec.kind = kind
    spec.first_extra = bool(rows) and len(rows[0]) > len(spec.roles)  # pandas would drop the extra fields
    off = bom
    for _ in range(spec.header_line):
        nl = raw.find(b"\n", off)
        off = len(raw) if nl < 0 else nl + 1
    spec.data_start, spec.first_line = off, spec.header_line + 1 if spec.header_line else 1
    return spec


def _sniff_delimiter(lines, forced):
    if forced is not None:
        return None if forced == " " else forced
    cands = [d for d in (",", "\t", ";") if d in re.sub(r'"[^"]*"', "", lines[0])]
    if len(cands) <= 1 or len(lines) == 1:
        return cands[0] if cands else None
    for d in cands:
        n0 = len(_split(lines[0], d))
        if all(len(_split(ln, d)) == n0 for ln in lines[1:20]):
            return d
    return cands[0]


# ------------------------------------------------------------------------------------ records

def _records(src, spec, opts):
    """Yield (line, fields) of every data record after the header, as pandas counts the records."""
    text = io.TextIOWrapper(src.rewind(spec.data_start), encoding=opts["encoding"], errors="replace",
                            newline="" if spec.delimiter is not None else None)
    try:
        if spec.delimiter is None:
            for i, ln in enumerate(text):
                rec = ln.split()
                if rec and not rec[0].startswith("#"):
                    yield spec.first_line + i, rec
            return
        reader = csv.reader(text, delimiter=spec.delimiter, skipinitialspace=True)
        prev = 0
        while True:
            try:
                rec = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                raise err(src.name, f"malformed CSV ({exc})", spec.first_line + prev) from None
            line, prev = spec.first_line + prev, reader.line_num
            if any(f.strip() for f in rec) and not rec[0].lstrip().startswith("#"):
                yield line, rec
    finally:
        text.detach()


def _locate(src, spec, opts, wanted):
    """{record index: (line, fields)} for the wanted record indices (counted from 0)."""
    wanted, found = set(wanted), {}
    for r, (line, rec) in enumerate(_records(src, spec, opts)):
        if r in wanted:
            found[r] = (line, rec)
            if len(found) == len(wanted):
                break
    return found


# ------------------------------------------------------------------------------------ text

class _Columns:
    """Turns the parsed columns of one chunk into item ids, a bad-row mask and answer codes."""

    def __init__(self, spec, opts, lim, name):
        self.spec, self.opts, self.lim, self.name = spec, opts, lim, name
        self.judge = Judge(spec.roles, spec.layout, spec.kind, opts)
        self.names, self.gid, self.label_bytes, self.notes, self.saw_minus = [], {}, 0, set(), False
        lab = opts["labels"]
        self.lookup = None if lab is None else {v: i for i, v in enumerate(lab.tolist())}
        n = opts["n_items"] if lab is None else None
        self.hi = n if n is not None else LIMIT if opts["relabel"] is False else 2**63 - 1
        if lab is not None and lab.dtype.kind == "i":
            self.order = np.argsort(lab, kind="stable")
            self.sorted = lab[self.order]

    def _map_ints(self, v):
        """Raw integer ids -> ids (positions in labels= when given; -1 when unknown)."""
        if self.lookup is None:
            return v
        i = np.clip(np.searchsorted(self.sorted, v), 0, self.sorted.size - 1)
        return np.where(self.sorted[i] == v, self.order[i], -1)

    def item_id(self, u, role) -> int:
        try:
            v = self.judge.item(str(u), role)
        except RowError:
            return -1
        if self.spec.kind == "int":
            if not INT_RE.match(str(u).strip()):
                self.notes.add("some integer ids are written as floats (e.g. '3.0'); they were read as integers")
            return v if self.lookup is None else self.lookup[v]
        if self.lookup is not None:
            return self.lookup[v]
        g = self.gid.get(v)
        if g is None:
            g = self.gid[v] = len(self.names)
            self.names.append(v)
            self.label_bytes += len(v)
            if self.label_bytes > self.lim["label_bytes"]:
                raise err(self.name, f"the text labels exceed the limit of {self.lim['label_bytes']:,} characters "
                                     "in all (raise it with read_triplets(..., limits={'label_bytes': ...}) or "
                                     "loe_viz.io.MAX_LABEL_BYTES)")
        return g

    def ids(self, s, role):
        v = s.to_numpy()
        if self.spec.kind == "int" and v.dtype.kind in "iu":
            bad = (v > self.hi) if v.dtype.kind == "u" else (v < 0) | (v >= self.hi)
            v = self._map_ints(v.astype(np.int64))
            return v, bad | (v < 0)
        codes, uniq = _factorize(s)
        table = np.array([self.item_id(u, role) for u in uniq] + [-1], dtype=np.int64)
        v = table[codes]
        return v, v < 0

    def answers(self, s, a, b):
        """(k, 3) int8 codes of the label, side and index readings (-1: no fit), and the empty answers."""
        k = len(s)
        codes = np.full((k, 3), -1, dtype=np.int8)
        v = s.to_numpy()
        if self.spec.kind == "int" and v.dtype.kind in "iu":
            ans, empty = self._map_ints(v.astype(np.int64)), np.zeros(k, dtype=bool)
            codes[:, 2] = np.where(v == 0, 0, np.where(v == 1, 1, -1))
        else:
            c, uniq = _factorize(s)
            toks = [str(u).strip() for u in uniq] + [""]
            if self.spec.kind == "int":
                ids = [int(t) if INT_RE.match(t) else -2 for t in toks]
                ids = self._map_ints(np.array(ids, dtype=np.int64)) if self.lookup is not None else ids
            else:
                ids = [(self.lookup or self.gid).get(t, -2) for t in toks]
            ans = np.asarray(ids, dtype=np.int64)[c]
            side = {"left": 0, "l": 0, "right": 1, "r": 1}
            codes[:, 1] = np.array([side.get(t.lower(), -1) for t in toks], dtype=np.int8)[c]
            codes[:, 2] = np.array([{"0": 0, "1": 1}.get(t, -1) for t in toks], dtype=np.int8)[c]
            empty = np.array([t == "" for t in toks])[c]
        codes[:, 0] = np.where((ans == a) & (ans >= 0), 0, np.where((ans == b) & (ans >= 0), 1, -1))
        return codes, empty

    def responses(self, s):
        c, uniq = _factorize(s)
        toks = [str(u).strip().lower() for u in uniq] + [""]
        self.saw_minus |= "-1" in toks
        return np.array([1 if t in TRUE else 0 if t in FALSE else -1 for t in toks], dtype=np.int8)[c]

    def chunk(self, df):
        """(head, a, b, bad, codes) of one chunk; crowd codes are None for the list layouts."""
        roles = self.spec.roles
        col = {r: df[j] for j, r in enumerate(roles) if r is not None}
        got = {r: self.ids(col[r], r) for r in _ITEMS if r in col}
        crowd = self.spec.layout == "crowd"
        (h, bh), (a, ba), (b, bb) = (got[r] for r in (("head", "left", "right") if crowd else ("head", "near", "far")))
        bad = bh | ba | bb | (h == a) | (h == b) | (a == b)
        codes = None
        if crowd:
            codes, empty = self.answers(col["answer"], a, b)
            bad |= empty
        elif "response" in col:
            y = self.responses(col["response"])
            bad |= y < 0
            swap = y == 0
            a, b = np.where(swap, b, a), np.where(swap, a, b)
        return h, a, b, bad, codes


def _factorize(s):
    import pandas as pd

    codes, uniq = pd.factorize(s)
    return codes, list(uniq)


def _blank_rows(df):
    """Rows whose every field is empty (e.g. an indented comment line): not records."""
    blank = None
    for j in df.columns:
        if df[j].dtype.kind in "iufb":
            return None
        e = (df[j] == "").to_numpy(dtype=bool)
        blank = e if blank is None else blank & e
    return blank if blank is not None and blank.any() else None


def _read_text(src, opts, fmt, lim) -> TripletData:
    import pandas as pd

    name, notes = src.name, []
    if opts["encoding"] not in _ASCII_COMPATIBLE:  # e.g. UTF-16: decode once, go on as UTF-8
        try:
            text = src.rewind().read().decode(opts["encoding"]).lstrip("\ufeff")
        except UnicodeDecodeError as exc:
            raise err(name, f"is not valid {opts['encoding']} text ({exc.reason})") from None
        buf = io.BytesIO(text.encode("utf-8"))
        buf.name = name
        src, opts = _Source(buf), dict(opts, encoding="utf-8")
        src.name = name
    spec = _sniff(src, opts, fmt, notes)
    if spec.ignored:
        notes.append(f"ignored column(s): {', '.join(spec.ignored)}")
    skip, crowd, ncols = opts["errors"] == "skip", spec.layout == "crowd", len(spec.roles)
    stream, n_nl, n_cr = src.rewind(spec.data_start), 0, 0
    while chunk := stream.read(1 << 24):
        n_nl, n_cr = n_nl + chunk.count(b"\n"), n_cr + chunk.count(b"\r")
    cap = max(n_nl, n_cr) + 1
    cols = _Columns(spec, opts, lim, name)
    kw = dict(sep=r"\s+" if spec.delimiter is None else spec.delimiter, header=None, names=list(range(ncols)),
              index_col=False, na_filter=False, comment="#", skipinitialspace=True, skip_blank_lines=True,
              encoding=opts["encoding"], engine="c", chunksize=_CHUNK if spec.kind == "int" else _CHUNK >> 4)
    if spec.kind == "str":
        kw["dtype"] = {j: object for j, r in enumerate(spec.roles) if r in _ITEMS}
    state = dict(out=np.empty((cap, 3), dtype=np.int32), m=0, rec=0, skipped=[], n_skipped=0,
                 codes=np.empty((cap, 3), dtype=np.int8) if crowd else None,
                 recs=np.empty(cap, dtype=np.int64) if crowd and skip else None)

    def take(df, rec_of=None):
        blank = _blank_rows(df)
        if blank is not None:
            df = df[~blank]
        k, r0 = len(df), state["rec"]
        state["rec"] += k
        if not k:
            return
        h, a, b, bad, codes = cols.chunk(df)
        recs = np.arange(r0, r0 + k) if rec_of is None else rec_of[r0:r0 + k]
        if bad.any():
            if not skip:
                _raise_row(src, spec, opts, cols.judge, int(recs[np.argmax(bad)]))
            state["n_skipped"] += int(bad.sum())
            state["skipped"].extend(recs[bad][:MAX_NOTES].tolist())
            keep = ~bad
            h, a, b, recs = h[keep], a[keep], b[keep], recs[keep]
            codes = None if codes is None else codes[keep]
        m, out = state["m"], state["out"]
        top = max(int(h.max(initial=0)), int(a.max(initial=0)), int(b.max(initial=0)))
        if top >= 2**31 - 1 and out.dtype != np.int64:
            out = state["out"] = out.astype(np.int64)
        out[m:m + len(h), 0], out[m:m + len(h), 1], out[m:m + len(h), 2] = h, a, b
        if crowd:
            state["codes"][m:m + len(h)] = codes
            if state["recs"] is not None:
                state["recs"][m:m + len(h)] = recs
        state["m"] = m + len(h)

    try:
        if spec.first_extra:
            raise pd.errors.ParserError("the first row has too many fields")
        with warnings.catch_warnings(), pd.read_csv(src.rewind(spec.data_start), **kw) as reader:
            warnings.simplefilter("ignore", pd.errors.ParserWarning)
            for df in reader:
                take(df)
    except pd.errors.ParserError as exc:
        records = _bad_records(src, spec, opts, cols.judge, str(exc), skip)
        state.update(m=0, rec=0, skipped=[], n_skipped=0)  # read again from the records, wrong ones skipped
        good = [r for r, (_, f) in enumerate(records) if len(f) == ncols]
        wrong = [r for r, (_, f) in enumerate(records) if len(f) != ncols]
        state["n_skipped"], state["skipped"] = len(wrong), wrong[:MAX_NOTES]
        if good:
            frame = pd.DataFrame([records[r][1] for r in good], columns=range(ncols), dtype=object)
            take(frame, np.asarray(good, dtype=np.int64))
    except UnicodeDecodeError:
        raw = src.rewind(spec.data_start).read()
        try:
            raw.decode(opts["encoding"])
            raise
        except UnicodeDecodeError as exc:
            raise err(name, f"is not valid {opts['encoding']} text (byte 0x{raw[exc.start]:02x}); pass encoding= "
                            "with the file's encoding", spec.first_line + raw[:exc.start].count(b"\n")) from None
    m, out = state["m"], state["out"]
    layout = "list-count" if cols.saw_minus else spec.layout
    if crowd and m:
        out = _resolve_answers(src, spec, opts, cols.judge, state, notes)
        m = out.shape[0]
    notes.extend(sorted(cols.notes))
    n_skipped = state["n_skipped"]
    if n_skipped:
        found = _locate(src, spec, opts, sorted(state["skipped"])[:MAX_NOTES])
        shown = "; ".join(f"line {ln}: {cols.judge.problem(f, state.get('mode')) or 'cannot be read'}"
                          for ln, f in sorted(found.values())[:MAX_NOTES])
        notes.append(f"skipped {n_skipped} row(s) with problems (first: {shown})")
    if m == 0:
        if n_skipped:
            raise err(name, f"no valid rows: all {n_skipped} data row(s) have problems")
        if spec.header_line:
            raise err(name, "the file has a header but no data rows", spec.header_line)
        raise err(name, "the file holds no data rows")
    tri = out[:m]
    out_fmt = {",": "csv", "\t": "tsv"}.get(spec.delimiter, "text")
    if spec.kind == "str" and cols.lookup is None:
        return finish_str(tri, cols.names, opts, name, layout, out_fmt, n_skipped, notes)
    if cols.lookup is not None:
        n = opts["n_items"]
        return TripletData(tri.astype(np.int32 if n < 2**31 - 1 else np.int64, copy=False), opts["labels"], n,
                           name, layout, out_fmt, n_skipped, tuple(notes))
    return finish_int(tri, int(tri.max()), opts, name, layout, out_fmt, n_skipped, notes)


def _raise_row(src, spec, opts, judge, rec, mode=None):
    found = _locate(src, spec, opts, [rec])
    line, fields = found.get(rec, (None, []))
    msg = judge.problem([f for f in fields], mode)
    if msg is None:
        msg = f"the row {fields} cannot be read as {len(spec.roles)} fields" + (
            " ('#' starts a comment: quote labels that contain it)" if any("#" in f for f in fields) else "")
    raise err(src.name, msg, line)


def _bad_records(src, spec, opts, judge, message, skip):
    """pandas refused a line: word it (raise) or return every record for a second reading (skip)."""
    records = list(_records(src, spec, opts))
    if "EOF inside string" in message and records:
        line, fields = records[-1]
        if not skip:
            raise err(src.name, 'an unterminated quote: a field opened with " on this line is never closed '
                                "(it runs to the end of the file)", line)
        records[-1] = (line, [])
    for line, fields in records if not skip else ():
        problem = judge.problem(fields)  # the first problem in the file, as a reading in chunks finds it
        if problem is not None:
            raise err(src.name, problem, line)
    if not skip:
        raise err(src.name, f"malformed text ({message.strip()})")
    return records


def _resolve_answers(src, spec, opts, judge, state, notes):
    """Pick the file's answer encoding, drop (skip) or report the rows it does not fit, put the chosen item second."""
    m, out, C = state["m"], state["out"], state["codes"]
    fails = {md: int((C[:m, j] < 0).sum()) for j, md in enumerate(ANSWER_MODES)}
    mode = shown = opts["answer"]
    if mode == "auto":
        fit = [md for md in ANSWER_MODES if fails[md] == 0]
        mode = fit[0] if fit else min(ANSWER_MODES, key=lambda md: (fails[md], ANSWER_MODES.index(md)))
        shown = mode if fit else "auto"
    state["mode"] = mode
    notes.append(ANSWER_NOTE[mode])
    code = C[:m, ANSWER_MODES.index(mode)]
    tri = out[:m]
    if fails[mode]:
        bad = code < 0
        recs = np.flatnonzero(bad) if state["recs"] is None else state["recs"][:m][bad]
        if opts["errors"] != "skip":
            _raise_row(src, spec, opts, judge, int(recs[0]), shown)
        state["n_skipped"] += int(bad.sum())
        state["skipped"].extend(recs[:MAX_NOTES].tolist())
        tri, code = tri[~bad], code[~bad]
    swap = code == 1
    tri[swap, 1], tri[swap, 2] = tri[swap, 2], tri[swap, 1].copy()
    return tri
