"""read_triplets: text parsed by pandas and checked column by column; NumPy files in arrays.py."""

from __future__ import annotations

import codecs
import csv
import io
import itertools
import os
import re
import warnings

import numpy as np

from . import arrays
from .layouts import (ANSWER_MODES, ANSWER_NOTE, FALSE, INT_RE, ITEM_WORD, LAYOUT_ROLES, LIMIT, MAX_NOTES, TRUE,
                      Judge, RowError, TripletData, check_read_args, err, finish_int, finish_str, is_number,
                      layout_from_roles, roles_from_header)

_CHUNK = 1 << 15  # rows per pandas chunk of integers (its parser buffers take ~3 MB); 8 times more for text labels
# (their distinct labels are judged once per chunk) and for large files
_SAMPLE = 1 << 18  # bytes sniffed for the delimiter, the header and the layout
_ASCII_COMPATIBLE = {"utf-8", "ascii", "latin-1", "iso8859-1", "cp1252", "iso8859-15"}


class _Source:
    """A seekable binary stream over the input, its name and extension."""

    def __init__(self, obj):
        self.owned, self.user, self.user_pos = False, None, None
        if isinstance(obj, (str, os.PathLike)):
            self.name = os.fsdecode(os.fspath(obj))
            self.stream, self.owned = open(self.name, "rb"), True  # OSError propagates
        elif hasattr(obj, "read"):
            self.name = obj.name if isinstance(getattr(obj, "name", None), str) else "<buffer>"
            seekable = getattr(obj, "seekable", lambda: False)()
            self.user, self.user_pos = obj, obj.tell() if seekable else None
            first = obj.read(0)
            self.stream = io.BytesIO(obj.read().encode("utf-8")) if isinstance(first, str) else (
                obj if seekable else io.BytesIO(obj.read()))
        else:
            raise ValueError(f"path_or_buffer must be a path or a file object, got {type(obj).__name__}")
        self.ext = os.path.splitext(self.name)[1].lower() if self.name != "<buffer>" else ""
        self.base, self.end = self.stream.tell(), self.stream.seek(0, io.SEEK_END)

    def rewind(self, offset: int = 0):
        self.stream.seek(self.base + offset)
        return self.stream


def read_triplets(path_or_buffer, format: str = "auto", *, layout: str = "auto", n_items: int | None = None,
                  labels=None, header="auto", delimiter: str | None = None, columns=None, answer: str = "auto",
                  item_type: str = "auto", relabel="auto", encoding: str = "utf-8", errors: str = "raise",
                  limits: dict | None = None) -> TripletData:
    """Read a triplet file into list-order triplets and item labels.

    Parameters
    ----------
    path_or_buffer : str, os.PathLike or file object
        Read from the current position; a seekable buffer is put back there after a failed read.
    format : {"auto", "csv", "tsv", "text", "npy", "npz"}, default "auto"
        ``"auto"``: NumPy files by their magic bytes, else text with a sniffed delimiter.
    layout : {"auto", "list-order", "crowd", "list-boolean", "list-count"}, default "auto"
        Needed only for a header-less text file with four columns.
    n_items : int, optional
        Integer ids are then indices ``0..n_items-1``; text labels must be as many.
    labels : sequence, optional
        The known items in index order; every id must be one of them.
    header : {"auto", True, False}, default "auto"
        ``"auto"``: the first line names the columns when it names a complete set of
        roles (:data:`COLUMN_NAMES`) none of which is an item below, or is text above numbers.
    delimiter : str, optional
        One character, or ``" "`` for runs of whitespace. Default: sniffed.
    columns : sequence of str or None, optional
        The role of every column (head, near, far, left, right, answer, response or None).
    answer : {"auto", "label", "side", "index"}, default "auto"
        How a crowd answer names the chosen item: its label, ``left``/``right`` or
        ``0``/``1``; ``"auto"``: the first encoding every answer of the file fits.
    item_type : {"auto", "int", "str"}, default "auto"
        ``"auto"``: integers when the first id is a number; ``"str"``: all text labels.
    relabel : {"auto", True, False}, default "auto"
        ``"auto"`` keeps integer ids that fill ``0..max``, else maps the distinct ids
        (up to 2**63 - 1) to ``0..k-1`` in increasing order.
    encoding : str, default "utf-8"
    errors : {"raise", "skip"}, default "raise"
        ``"skip"`` drops rows with a problem and counts them in ``n_skipped``.
    limits : dict, optional
        Bounds checked before allocating, overriding :data:`MAX_ARRAY_BYTES`
        (``"array_bytes"``: one array of a NumPy file), :data:`MAX_COMPRESSION_RATIO`
        (``"compression_ratio"``: an .npz member above 16 MiB) and
        :data:`MAX_LABEL_BYTES` (``"label_bytes"``: all distinct text labels).

    Returns
    -------
    TripletData

    Raises
    ------
    ValueError
        A bad argument (the message starts with its name), or a file that cannot be
        read or exceeds a limit: file name, 1-based line or 0-based array row, problem.

    Examples
    --------
    >>> import io
    >>> data = read_triplets(io.StringIO("head,left,right,winner\\nParis,Rome,Oslo,Rome\\n"))
    >>> data.labelled().tolist(), data.triplets.tolist(), data.layout
    ([['Paris', 'Rome', 'Oslo']], [[1, 2, 0]], 'crowd')
    """
    opts = check_read_args(format, layout, n_items, labels, header, delimiter, columns, answer,
                           item_type, relabel, encoding, errors)
    from . import MAX_ARRAY_BYTES, MAX_COMPRESSION_RATIO, MAX_LABEL_BYTES

    lim = {"array_bytes": MAX_ARRAY_BYTES, "compression_ratio": MAX_COMPRESSION_RATIO, "label_bytes": MAX_LABEL_BYTES}
    for key, value in (limits or {}).items():
        if key not in lim or isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise ValueError(f"limits must map {', '.join(lim)} to positive numbers; got {key!r}: {value!r}")
        lim[key] = value
    src = _Source(path_or_buffer)
    try:
        head, fmt = src.rewind().read(8), opts["format"]
        if fmt == "auto":
            fmt = "npy" if head.startswith(b"\x93NUMPY") else "npz" if head.startswith(b"PK\x03\x04") else fmt
            if fmt == "auto" and src.ext in (".npy", ".npz"):
                raise err(src.name, f"has the extension {src.ext} but is not a NumPy {src.ext} file")
        return arrays.read(src, opts, lim, fmt) if fmt in ("npy", "npz") else _read_text(src, opts, fmt, lim)
    except BaseException:
        if src.user_pos is not None:
            src.user.seek(src.user_pos)
        raise
    finally:
        if src.owned:
            src.stream.close()


def _split(line: str, delim):
    try:
        return line.split() if delim is None else next(csv.reader([line], delimiter=delim, skipinitialspace=True))
    except (csv.Error, StopIteration):
        return line.split(delim)


class _Typed(Exception):
    """pandas could not read a column as int64."""


class _Spec:
    """What sniffing the start of a text file found."""

    delimiter, header_line, roles, layout, kind, ignored, first_extra = None, 0, (), "list-order", "int", (), False
    data_start, first_line = 0, 1  # byte offset and line number of the first line after the header


def _sniff(src, opts, fmt, notes) -> _Spec:
    name, spec, enc = src.name, _Spec(), opts["encoding"]
    raw = src.rewind().read(_SAMPLE)
    eof = len(raw) < _SAMPLE
    if not raw:
        raise err(name, "the file is empty")
    if raw.startswith(b"\x1f\x8b"):
        raise err(name, "is gzip-compressed; decompress it first (supported: CSV/TSV/whitespace text, .npy, .npz)")
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise err(name, "is UTF-16 text; pass encoding='utf-16' or save it as UTF-8")
    if b"\x00" in raw:
        raise err(name, "is not a recognised triplet file: binary content (a NUL byte); supported: "
                        "CSV/TSV/whitespace text, .npy, .npz", raw[:raw.find(b"\x00")].count(b"\n") + 1)
    bom = 3 if raw.startswith(codecs.BOM_UTF8) else 0
    body = raw[bom:] if eof else raw[bom:raw.rfind(b"\n") + 1 or len(raw)]
    try:
        text = body.decode(enc)
    except UnicodeDecodeError as exc:
        raise err(name, f"is not valid {enc} text (byte 0x{body[exc.start]:02x}); pass encoding= with the "
                        "file's encoding", body[:exc.start].count(b"\n") + 1) from None
    data = list(itertools.islice(((i + 1, ln.rstrip("\n")) for i, ln in enumerate(io.StringIO(text, newline=None))
                                  if ln.strip() and not ln.lstrip().startswith("#")), 50))
    if not data:
        raise err(name, f"no data row in the first {_SAMPLE} bytes" if not eof else "the file is empty"
                  if not text.strip() else "the file holds no data rows (only blank or comment lines)")
    forced = opts["delimiter"] or {"csv": ",", "tsv": "\t"}.get(fmt)
    spec.delimiter = delim = _sniff_delimiter([ln for _, ln in data], forced)
    rows = [[f.strip() for f in _split(ln, delim)] for _, ln in data]
    f0, first_no, hdr, columns, lay = rows[0], data[0][0], opts["header"], opts["columns"], opts["layout"]
    roles, hlayout, n_known, problem = roles_from_header(f0)
    numeric0 = [is_number(f) for f in f0]
    if hdr == "auto":
        items_below = bool({f for r in rows[1:] for f in r} & set(f0))  # 'j,i,k' above 'k,j,l' is data
        names = not all(numeric0) and (hlayout is not None or (n_known >= 2 and not any(numeric0)))
        hdr = (names and not items_below) or (not all(numeric0) and len(rows) > 1 and opts["item_type"] != "str"
                                              and all(map(is_number, rows[1])))
        if not hdr and hlayout is not None:
            notes.append(f"the first line {','.join(f0)!r} was read as data (its cells are items of the file); "
                         "pass header=True if it names the columns")
    if hdr:
        spec.header_line, rows = first_no, rows[1:]
        if columns is None and hlayout is None:
            raise err(name, f"the {problem} (header {f0})" if n_known else f"the header {f0} names no known column; "
                      "name the columns e.g. head,winner,loser or head,left,right,winner, or pass columns=", first_no)
        if columns is None:
            spec.roles, spec.layout, spec.ignored = roles, hlayout, tuple(f for f, r in zip(f0, roles) if r is None)
            if [r for r in roles if r is not None] != list(LAYOUT_ROLES[hlayout]):
                notes.append(f"columns taken by their header names ({', '.join(f0)})")
        elif len(columns) != len(f0):
            raise err(name, f"columns= gives {len(columns)} roles but the header has {len(f0)} columns", first_no)
    if columns is not None:
        spec.roles, spec.layout = columns, layout_from_roles(columns, "columns")
    elif not hdr and len(f0) == 3 and lay in ("auto", "list-order"):
        spec.roles = LAYOUT_ROLES["list-order"]
    elif not hdr and len(f0) == 4 and lay not in ("auto", "list-order"):
        spec.roles, spec.layout = LAYOUT_ROLES[lay], "crowd" if lay == "crowd" else "list-boolean"
    elif not hdr:
        want = LAYOUT_ROLES["list-order" if lay == "auto" else lay]
        raise err(name, "4 columns without a header: name them (head,left,right,winner for crowd answers, or "
                        "head,j,k,y) or pass layout=" if len(f0) == 4 and lay == "auto" else
                  f"expected {len(want)} fields ({', '.join(want)}), got {len(f0)}", first_no)
    if lay != "auto" and not (spec.layout == lay or (spec.layout, lay) == ("list-boolean", "list-count")):
        raise err(name, f"layout={lay!r} was asked for but the columns describe a {spec.layout} layout")
    j = next(i for i, r in enumerate(spec.roles) if r in ITEM_WORD)
    spec.kind = opts["item_type"] if opts["item_type"] != "auto" else (
        "int" if rows and len(rows[0]) > j and is_number(rows[0][j]) else "str")
    spec.skipinit = spec.kind == "str"
    spec.first_extra = bool(rows) and len(rows[0]) > len(spec.roles)  # pandas would drop the extra fields
    ends = [m.end() for m in itertools.islice(re.finditer(rb"\r\n?|\n", raw[bom:]), spec.header_line)]
    off = bom if not spec.header_line else bom + ends[-1] if len(ends) == spec.header_line else len(raw)
    spec.data_start, spec.first_line = off, spec.header_line + 1  # lines may end in CR LF, LF or a lone CR
    return spec


def _sniff_delimiter(lines, forced):
    if forced is not None:
        return None if forced == " " else forced
    cands = [d for d in (",", "\t", ";") if d in re.sub(r'"[^"]*"', "", lines[0])]
    for d in cands if len(cands) > 1 else ():
        if all(len(_split(ln, d)) == len(_split(lines[0], d)) for ln in lines[1:20]):
            return d
    return cands[0] if cands else None


def _records(src, spec, opts):
    """Yield (line, fields) of every data record after the header, as pandas counts the records."""
    text = io.TextIOWrapper(src.rewind(spec.data_start), encoding=opts["encoding"], errors="replace",
                            newline="" if spec.delimiter is not None else None)
    try:
        if spec.delimiter is None:
            yield from ((spec.first_line + i, ln.split()) for i, ln in enumerate(text)
                        if ln.split() and not ln.lstrip().startswith("#"))
            return
        csv.field_size_limit(max(csv.field_size_limit(), 2**31 - 1))  # labels of any length, as pandas reads them
        reader, prev = csv.reader(text, delimiter=spec.delimiter, skipinitialspace=spec.skipinit), 0
        while True:
            try:
                rec = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:  # e.g. a field above csv.field_size_limit()
                raise err(src.name, f"malformed CSV ({exc})", spec.first_line + prev) from None
            line, prev = spec.first_line + prev, reader.line_num
            if any(f.strip() for f in rec) and not rec[0].lstrip().startswith("#"):
                yield line, rec
    finally:
        text.detach()


def _locate(src, spec, opts, wanted):
    """[(line, fields)] of the wanted record indices (counted from 0), in file order."""
    wanted, found = set(wanted), []
    for r, rec in enumerate(_records(src, spec, opts)):
        if r in wanted:
            found.append(rec)
            if len(found) == len(wanted):
                break
    return found


class _Columns:
    """Turns the parsed columns of one chunk into item ids, a bad-row mask and answer codes."""

    def __init__(self, spec, opts, lim, name):
        import pandas as pd

        self.kind, self.layout, self.roles, self.lim, self.name = spec.kind, spec.layout, spec.roles, lim, name
        self.judge, lab = Judge(spec.roles, spec.kind, opts), opts["labels"]
        self.names, self.gid, self.label_bytes, self.notes, self.saw_minus, self.memo = [], {}, 0, set(), False, {}
        self.hi = opts["n_items"] if lab is None and opts["n_items"] else LIMIT if opts["relabel"] is False else None
        self.index = None if lab is None else pd.Index(lab)

    def _map_ints(self, v):
        return v if self.index is None else self.index.get_indexer(v)

    def item_id(self, u, role) -> int:
        got = self.memo.get((u, role))
        if got is None:
            got = self.memo[(u, role)] = self._item_id(u, role)
        return got

    def _item_id(self, u, role) -> int:
        try:
            v = self.judge.item(str(u), role)
        except RowError:
            return -1
        if self.index is not None or self.kind == "int":
            if not INT_RE.match(str(u).strip()) and self.kind == "int":
                self.notes.add("some integer ids are written as floats (e.g. '3.0'); they were read as integers")
            return v if self.index is None else self.judge.lookup[v]
        g = self.gid.setdefault(v, len(self.names))
        if g == len(self.names):
            self.names.append(v)
            self.label_bytes += len(v)
            if self.label_bytes > self.lim["label_bytes"]:
                raise err(self.name, f"the text labels exceed the limit of {self.lim['label_bytes']:,} characters in "
                                     "all (raise it with read_triplets(..., limits={'label_bytes': ...}) or "
                                     "loe_viz.io.MAX_LABEL_BYTES)")
        return g

    def ids(self, s, role):
        v = s.to_numpy()
        if self.kind == "int" and v.dtype.kind in "iu":
            bad = ((v > 2**63 - 1) if v.dtype.kind == "u" else (v < 0)) | (False if self.hi is None else v >= self.hi)
            v = self._map_ints(v.astype(np.int64, copy=False))
            return v, bad if self.index is None else bad | (v < 0)
        codes, uniq = _factorize(s)
        v = np.array([self.item_id(u, role) for u in uniq] + [-1], dtype=np.int64)[codes]
        return v, v < 0

    def answers(self, s, a, b):
        """(k, 3) int8 codes of the label, side and index readings (-1: no fit), and the empty answers."""
        codes, v = np.full((len(s), 3), -1, dtype=np.int8), s.to_numpy()
        if self.kind == "int" and v.dtype.kind in "iu":
            ans, empty = self._map_ints(v.astype(np.int64)), np.zeros(len(s), dtype=bool)
            codes[:, 2] = np.where(v == 0, 0, np.where(v == 1, 1, -1))
        else:
            c, uniq = _factorize(s)
            toks = [str(u).strip() for u in uniq] + [""]
            ids = ([int(t) if INT_RE.match(t) else -2 for t in toks] if self.kind == "int" else
                   [(self.judge.lookup or self.gid).get(t, -2) for t in toks])
            ans = (self._map_ints(np.array(ids)) if self.kind == "int" else np.array(ids))[c]
            codes[:, 1] = np.array([{"left": 0, "l": 0, "right": 1, "r": 1}.get(t.lower(), -1) for t in toks])[c]
            codes[:, 2] = np.array([{"0": 0, "1": 1}.get(t, -1) for t in toks])[c]
            empty = np.array([t == "" for t in toks])[c]
        codes[:, 0] = np.where((ans == a) & (ans >= 0), 0, np.where((ans == b) & (ans >= 0), 1, -1))
        return codes, empty

    def chunk(self, df):
        """(head, a, b, bad, codes) of one chunk; ``codes`` is None for the list layouts."""
        col = {r: df[j] for j, r in enumerate(self.roles) if r is not None}
        crowd = self.layout == "crowd"
        (h, bh), (a, ba), (b, bb) = (self.ids(col[r], r) for r in
                                     (("head", "left", "right") if crowd else ("head", "near", "far")))
        bad, codes = bh | ba | bb | (h == a) | (h == b) | (a == b), None
        if crowd:
            codes, empty = self.answers(col["answer"], a, b)
            bad |= empty
        elif "response" in col:
            c, uniq = _factorize(col["response"])
            toks = [str(u).strip().lower() for u in uniq] + [""]
            self.saw_minus |= "-1" in toks
            y = np.array([1 if t in TRUE else 0 if t in FALSE else -1 for t in toks])[c]
            bad |= y < 0
            a, b = np.where(y == 0, b, a), np.where(y == 0, a, b)
        return h, a, b, bad, codes


def _factorize(s):
    """Codes and distinct values of a column (text columns arrive as pandas categoricals)."""
    import pandas as pd

    if isinstance(s.dtype, pd.CategoricalDtype):
        return s.cat.codes.to_numpy(), s.cat.categories.tolist()
    codes, uniq = pd.factorize(s)
    return codes, np.asarray(uniq, dtype=object).tolist()


def _empty(s):
    """Mask of the blank fields of a text column (None when there are none)."""
    if s.dtype.kind in "iufb":
        return None
    codes, uniq = _factorize(s)
    e = np.array([not str(u).strip() for u in uniq] + [False])[codes]
    return e if e.any() else None


def _scan(src, spec):
    """An upper bound on the data rows (one per line: the output is allocated once) and whether a cell could be a
    float such as '3.0' (int64 columns would take it silently)."""
    stream, n_nl, n_cr, floats = src.rewind(spec.data_start), 0, 0, False
    while block := stream.read(1 << 20):
        n_nl += block.count(b"\n")
        n_cr += 0 if n_nl else block.count(b"\r")  # lines end in a lone CR only in a file without LF
        floats = floats or b"." in block or b"e" in block or b"E" in block
    return max(n_nl, n_cr) + 1, floats


def _read_text(src, opts, fmt, lim) -> TripletData:
    import pandas as pd

    name, notes = src.name, []
    if opts["encoding"] not in _ASCII_COMPATIBLE:  # e.g. UTF-16: decode once, go on as UTF-8
        try:
            text = src.rewind().read().decode(opts["encoding"]).lstrip("\ufeff")
        except UnicodeDecodeError as exc:
            raise err(name, f"is not valid {opts['encoding']} text ({exc.reason})") from None
        src, opts = _Source(io.BytesIO(text.encode("utf-8"))), dict(opts, encoding="utf-8")
        src.name = name
    spec = _sniff(src, opts, fmt, notes)
    if spec.ignored:
        notes.append(f"ignored column(s): {', '.join(spec.ignored)}")
    skip, crowd, ncols = opts["errors"] == "skip", spec.layout == "crowd", len(spec.roles)
    cols = _Columns(spec, opts, lim, name)
    # pandas' integer parser skips the spaces around a number itself; skipinitialspace doubles its time
    cap, floats = _scan(src, spec)
    # chunks of 2**15 rows up to 2**18 for large files (pandas builds a DataFrame per chunk); text labels: 2**18
    rows = max(_CHUNK, min(cap // 16, _CHUNK * 8)) if spec.kind == "int" else _CHUNK * 8
    kw = dict(sep=r"\s+" if spec.delimiter is None else spec.delimiter, header=None, names=list(range(ncols)),
              index_col=False, na_filter=False, comment="#", skipinitialspace=spec.skipinit, low_memory=False,
              encoding=opts["encoding"], engine="c", chunksize=rows)
    kw_dtype = None if spec.kind == "int" else {j: object if opts["item_type"] == "str" else "category" for j, r
                                                in enumerate(spec.roles) if r in ITEM_WORD or r == "answer"}
    st = dict(out=np.empty((cap, 3), dtype=np.int32), m=0, rec=0, skipped=[], n_skipped=0,
              codes=np.empty((cap, 3), np.int8) if crowd else None,
              recs=np.empty(cap if crowd and skip else 0, np.int64))

    def take(df, rec_of=None):
        blank = _empty(df[0])  # rows whose fields are all blank (an indented comment line) are no records
        for j in df.columns[1:] if blank is not None else ():
            e = _empty(df[j])
            blank &= e if e is not None else False
        df = df if blank is None or not blank.any() else df[~blank]
        k, r0, m = len(df), st["rec"], st["m"]
        st["rec"] += k
        if not k:
            return
        h, a, b, bad, codes = cols.chunk(df)
        recs = (np.arange(r0, r0 + k) if rec_of is None else rec_of[r0:r0 + k]) if skip or bad.any() else None
        if bad.any():
            if not skip:
                _raise_row(src, spec, opts, cols.judge, int(recs[np.argmax(bad)]))
            st["n_skipped"] += int(bad.sum())
            st["skipped"] += recs[bad][:MAX_NOTES].tolist()
            h, a, b, recs, codes = h[~bad], a[~bad], b[~bad], recs[~bad], None if codes is None else codes[~bad]
        if max(h.max(initial=0), a.max(initial=0), b.max(initial=0)) >= 2**31 - 1 and st["out"].dtype != np.int64:
            st["out"] = st["out"].astype(np.int64)
        st["out"][m:m + len(h), 0], st["out"][m:m + len(h), 1], st["out"][m:m + len(h), 2] = h, a, b
        if crowd:
            st["codes"][m:m + len(h)] = codes
        if crowd and skip:
            st["recs"][m:m + len(h)] = recs
        st["m"] = m + len(h)

    def frames(dtype):
        with warnings.catch_warnings(), pd.read_csv(src.rewind(spec.data_start), dtype=dtype, **kw) as reader:
            warnings.simplefilter("ignore", pd.errors.ParserWarning)
            while True:
                try:
                    df = next(reader)
                except StopIteration:
                    return
                except (ValueError, OverflowError) as exc:  # a cell the int64 columns refuse: read again, typed
                    if dtype is kw_dtype or isinstance(exc, (pd.errors.ParserError, UnicodeDecodeError)):
                        raise
                    raise _Typed from None
                yield df

    try:
        if spec.first_extra:
            raise pd.errors.ParserError("the first row has too many fields")
        try:  # integer ids: int64 columns first (pandas then skips inferring each column's type)
            for df in frames({j: np.int64 for j, r in enumerate(spec.roles) if r in ITEM_WORD}
                             if spec.kind == "int" and not floats else kw_dtype):
                take(df)
        except _Typed:
            st.update(m=0, rec=0, skipped=[], n_skipped=0)
            for df in frames(kw_dtype):
                take(df)
    except pd.errors.ParserError as exc:  # a line pandas cannot split: word it, or read the records in Python
        records = _bad_records(src, spec, opts, cols.judge, str(exc), skip)
        good = [r for r, (_, f) in enumerate(records) if len(f) == ncols]
        wrong = [r for r, (_, f) in enumerate(records) if len(f) != ncols]
        st.update(m=0, rec=0, n_skipped=len(wrong), skipped=wrong[:MAX_NOTES])
        take(pd.DataFrame([records[r][1] for r in good], columns=range(ncols), dtype=object),
             np.asarray(good, dtype=np.int64))
    except UnicodeDecodeError:
        raw = src.rewind(spec.data_start).read()
        start = len(raw.decode(opts["encoding"], "replace").split("\ufffd", 1)[0].encode(opts["encoding"]))
        raise err(name, f"is not valid {opts['encoding']} text (byte 0x{raw[start]:02x}); pass encoding= with the "
                        "file's encoding", spec.first_line + raw[:start].count(b"\n")) from None
    tri = st["out"][:st["m"]]
    if crowd and len(tri):
        tri = _resolve_answers(src, spec, opts, cols.judge, st, tri, notes)
    notes.extend(sorted(cols.notes))
    if st["n_skipped"]:
        shown = "; ".join(f"line {ln}: {cols.judge.problem(f, st.get('mode')) or 'cannot be read'}"
                          for ln, f in _locate(src, spec, opts, sorted(st["skipped"])[:MAX_NOTES]))
        notes.append(f"skipped {st['n_skipped']} row(s) with problems (first: {shown})")
    if tri.shape[0] == 0:
        raise err(name, f"no valid rows: all {st['n_skipped']} data row(s) have problems" if st["n_skipped"] else
                  "the file has a header but no data rows" if spec.header_line else "the file holds no data rows",
                  spec.header_line if spec.header_line and not st["n_skipped"] else None)
    args = (opts, name, "list-count" if cols.saw_minus else spec.layout,
            {",": "csv", "\t": "tsv"}.get(spec.delimiter, "text"), st["n_skipped"], notes)
    return finish_str(tri, cols.names, *args) if spec.kind == "str" and cols.index is None else finish_int(tri, *args)


def _raise_row(src, spec, opts, judge, rec, mode=None):
    line, fields = (_locate(src, spec, opts, [rec]) or [(None, [])])[0]
    msg = judge.problem(fields, mode) or f"the row {fields} cannot be read as {len(spec.roles)} fields" + (
        " ('#' starts a comment: quote labels that contain it)" if any("#" in f for f in fields) else "")
    raise err(src.name, msg, line)


def _bad_records(src, spec, opts, judge, message, skip):
    """pandas refused a line: word the file's first problem (raise), or return every record (skip)."""
    records = list(_records(src, spec, opts))
    if "EOF inside string" in message and records:
        if not skip:
            raise err(src.name, 'an unterminated quote: a field opened with " on this line is never closed '
                                "(it runs to the end of the file)", records[-1][0])
        records[-1] = (records[-1][0], [])
    for line, fields in records if not skip else ():
        if judge.problem(fields) is not None:
            raise err(src.name, judge.problem(fields), line)
    if not skip:
        raise err(src.name, f"malformed text ({message.strip()})")
    return records


def _resolve_answers(src, spec, opts, judge, st, tri, notes):
    """Pick the file's answer encoding, drop (skip) or report the rows it does not fit, put the chosen item second."""
    C = st["codes"][:st["m"]]
    fails = {md: int((C[:, j] < 0).sum()) for j, md in enumerate(ANSWER_MODES)}
    mode = shown = opts["answer"]
    if mode == "auto":
        fit = [md for md in ANSWER_MODES if fails[md] == 0]
        mode = fit[0] if fit else min(ANSWER_MODES, key=lambda md: (fails[md], ANSWER_MODES.index(md)))
        shown = mode if fit else "auto"
    st["mode"] = mode
    notes.append(ANSWER_NOTE[mode])
    code = C[:, ANSWER_MODES.index(mode)]
    if fails[mode]:
        bad = code < 0
        if opts["errors"] != "skip":  # no row was dropped: rows are records
            _raise_row(src, spec, opts, judge, int(np.argmax(bad)), shown)
        st["n_skipped"] += int(bad.sum())
        st["skipped"] += st["recs"][:st["m"]][bad][:MAX_NOTES].tolist()
        tri, code = tri[~bad], code[~bad]
    swap = code == 1  # np.where on the columns: a boolean-indexed swap of rows took 10x longer
    near = np.where(swap, tri[:, 2], tri[:, 1])
    tri[:, 2] = np.where(swap, tri[:, 1], tri[:, 2])
    tri[:, 1] = near
    return tri
