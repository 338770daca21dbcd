"""read_triplets: clean integer text parsed by NumPy, the rest by pandas, checked column by column; NumPy files in
arrays.py."""

from __future__ import annotations

import codecs
import csv
import decimal
import io
import itertools
import math
import os
import re
import stat
import warnings

import numpy as np

from . import arrays, fastpath
from .layouts import (ANSWER_MODES, ANSWER_NOTE, INT_RE, ITEM_WORD, LAYOUT_HEADERS, LAYOUT_ROLES, LIMIT, MAX_NOTES,
                      NUM_RE, RESPONSE, RESPONSE_WANT, TripletData, bad_rows, check_read_args, err, finish_int,
                      finish_str, is_number, layout_from_roles, name_role, over_limit, roles_from_header, swap_sides,
                      utf16_without_bom)

_CHUNK = 1 << 18  # rows per pandas chunk of the careful reader (its parser buffers stay a few MB)
_SAMPLE = 1 << 16  # bytes sniffed for the delimiter, the header and the layout
_SCAN_BLOCK = 1 << 20  # bytes read at a time by the count of rows lost to comments
_COMMENT_LINE = re.compile(rb"\n(#[^\r\n]*)")  # a line that starts with '#', after the break before it
_SNIFF_MAX = 1 << 26  # at most this much is read to find the end of a long first line
MAX_COLUMNS = 1000  # fields of one line (a crowd export's extra columns are ignored, but not thousands)
_UNTERMINATED = ('an unterminated quote: a field opened with " on this line is never closed (it runs to the end of '
                 "the file)")
_ONE_LINE = "quote each field on its line (an item label cannot contain a line break)"
_ASCII_COMPATIBLE = {"utf-8", "ascii", "latin-1", "iso8859-1", "cp1252", "iso8859-15"}


class _Source:
    """A seekable binary stream over the input, its name and extension."""

    def __init__(self, obj):
        self.owned, self.user, self.user_pos = False, None, None
        if isinstance(obj, (str, os.PathLike)):
            self.name = os.fsdecode(os.fspath(obj))
            pipe = err(self.name, "is a pipe or terminal, not a file: the reader goes back to its start after "
                                  "sniffing it; save the triplets to a file and read that")
            try:
                if stat.S_ISFIFO(os.stat(self.name).st_mode):  # /dev/stdin, <(zcat ...), a named pipe: open would
                    raise pipe                                  # wait for a writer
            except OSError:
                pass  # open says why
            self.stream, self.owned = open(self.name, "rb"), True  # OSError propagates
            if not self.stream.seekable():  # a terminal
                self.stream.close()
                raise pipe
        elif hasattr(obj, "read"):
            self.name = obj.name if isinstance(getattr(obj, "name", None), str) else "<buffer>"
            seekable = getattr(obj, "seekable", lambda: False)()
            self.user, self.user_pos, first = obj, obj.tell() if seekable else None, obj.read(0)
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
        Needed only for a header-less text file with four columns. ``"list-boolean"`` and
        ``"list-count"`` also fix how responses read: True/False or 1/0, and +1/-1.
    n_items : int, optional
        Integer ids are then indices ``0..n_items-1``; text labels must be as many.
    labels : sequence, optional
        The known items in index order; every id must be one of them.
    header : {"auto", True, False}, default "auto"
        ``"auto"``: the first line names the columns when it names a complete set of roles
        (:data:`COLUMN_NAMES`) none of which is an item below, or is text above numbers; a layout's own
        header (``head,winner,loser``, ``head,left,right,winner``, ``head,j,k,y``, any case) always does.
    delimiter : str, optional
        One character, or ``" "`` for runs of whitespace. Default: sniffed.
    columns : sequence of str or None, optional
        The role of every column (head, near, far, left, right, answer, response or None).
    answer : {"auto", "label", "side", "index"}, default "auto"
        How a crowd answer names the chosen item: its label, ``left``/``right`` or ``0``/``1``;
        ``"auto"``: the first encoding every answer of the file fits.
    item_type : {"auto", "int", "str"}, default "auto"
        ``"auto"``: integers when the first id is a number; ``"str"``: all text labels.
    relabel : {"auto", True, False}, default "auto"
        ``"auto"`` keeps integer ids that fill ``0..max``, else maps the distinct ids
        (up to 2**63 - 1) to ``0..k-1`` in increasing order.
    encoding : str, default "utf-8"
    errors : {"raise", "skip"}, default "raise"
        ``"skip"`` drops rows with a problem and counts them in ``n_skipped``.
    limits : dict, optional
        Overrides of the bounds checked before allocating: ``"array_bytes"`` (one array of a
        NumPy file, or the labels of the items ``n_items`` or ``relabel=False`` declare,
        :data:`MAX_ARRAY_BYTES`), ``"compression_ratio"`` (an .npz member above 16 MiB,
        :data:`MAX_COMPRESSION_RATIO`), ``"label_bytes"`` (the total length of the distinct text
        labels in characters, :data:`MAX_LABEL_BYTES`).

    Returns
    -------
    TripletData

    Raises
    ------
    ValueError
        A bad argument (the message starts with its name), or a file that cannot be read or
        exceeds a limit: file name, 1-based line or 0-based array row, problem.

    Notes
    -----
    A text cell may be quoted (``"Paris, France"``, with ``""`` for a quote inside it) but
    cannot run over a line break; ``#`` outside quotes starts a comment (quote a label such
    as ``"#ff0000"``: lines that start with ``#`` yet hold a row's fields are counted in a
    note). Spaces around a cell are dropped, quoted or not: ``" Paris "`` is the label ``Paris``.

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
    opts["limits"], src = lim, _Source(path_or_buffer)
    try:
        head, fmt = src.rewind().read(8), opts["format"]
        if fmt == "auto":
            zipped = head.startswith((b"PK\x03\x04", b"PK\x05\x06"))  # an empty archive has only its end record
            fmt = "npy" if head.startswith(b"\x93NUMPY") else "npz" if zipped else fmt
            if fmt == "auto" and src.ext in (".npy", ".npz"):
                raise err(src.name, f"has the extension {src.ext} but is not a NumPy {src.ext} file")
        if fmt not in ("npy", "npz"):
            return _read_text(src, opts, fmt, lim)
        if text_only := [k for k in ("columns", "header", "delimiter", "answer") if opts[k] not in (None, "auto")]:
            raise err(src.name, f"{text_only[0]}= applies to text files; a .{fmt} file names its arrays (triplets, "
                                "or X and y)")
        return arrays.read(src, opts, lim, fmt)
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


_SEP_NAMES = {",": "commas", "\t": "tabs", ";": "semicolons"}


def _mixed(fields, delim) -> str:
    """A hint when a field split on ``delim`` holds numbers separated by blanks: the file mixes separators."""
    if delim in (None, " ") or not any(len(f.split()) > 1 and all(map(is_number, f.split())) for f in fields if f):
        return ""
    sep = _SEP_NAMES.get(delim, repr(delim))
    return (f"; a field holds numbers separated by spaces, so the file mixes spaces and {sep} as separators: use "
            "one throughout (delimiter=' ' splits on any run of spaces and tabs)")


class _Spec:
    """What sniffing the start of a text file found; pandas reads from byte data_start, line first_line."""

    delimiter, header_line, roles, layout, kind, drop_first = None, 0, (), "list-order", "int", False
    response = "auto"  # the response encoding: a layout= of list-boolean or list-count binds it
    data_start, first_line = 0, 1


def _sniff(src, opts, fmt, notes) -> _Spec:
    name, spec, enc = src.name, _Spec(), opts["encoding"]
    chunks = [src.rewind().read(_SAMPLE)]  # a first line longer than the sample (a long label) is sniffed whole:
    while (len(chunks) < _SNIFF_MAX // _SAMPLE  # each new block is searched once (a linear scan, not a rescan)
           and not re.search(rb"[\r\n][^\r\n]", chunks[-2][-1:] + chunks[-1] if len(chunks) > 1 else chunks[0])
           and (more := src.stream.read(_SAMPLE))):
        chunks.append(more)
    raw = b"".join(chunks)
    eof = src.stream.tell() >= src.end
    if not raw:
        raise err(name, "the file is empty")
    if raw.startswith(b"\x1f\x8b"):
        raise err(name, "is gzip-compressed; decompress it first (supported: CSV/TSV/whitespace text, .npy, .npz)")
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise err(name, "is UTF-16 text; pass encoding='utf-16' or save it as UTF-8")
    if (codec := utf16_without_bom(raw)) is not None:
        raise err(name, f"is UTF-16 text without a byte-order mark; pass encoding='{codec}' or save it as UTF-8")
    if b"\x00" in raw:
        line = raw[:raw.find(b"\x00")].count(b"\n") + 1
        raise err(name, f"is not a recognised triplet file: binary content (a NUL byte on line {line}); supported: "
                        "CSV/TSV/whitespace text, .npy, .npz")
    bom = 3 if raw.startswith(codecs.BOM_UTF8) else 0
    body = raw[bom:] if eof else raw[bom:raw.rfind(b"\n") + 1 or len(raw)]
    try:
        text = body.decode(enc)
    except UnicodeDecodeError as exc:
        raise err(name, f"is not valid {enc} text (byte 0x{body[exc.start]:02x}); pass encoding= with the "
                        "file's encoding", body[:exc.start].count(b"\n") + 1) from None
    data = list(itertools.islice(((no, ln.rstrip("\n")) for no, ln in _records(io.StringIO(text, newline=None), 1)
                                  if ln.strip() and not ln.lstrip().startswith("#")), 50))
    if over := next((r for r in data if "\n" in r[1]), None):  # a record over several lines: a quote left open
        no, ln = over
        last, still_open = no + ln.count("\n"), ln.count('"') % 2
        if still_open and eof:
            raise err(name, _UNTERMINATED, no)
        end = f"is still open after line {last}" if still_open else f"closes on line {last}"
        raise err(name, f'a quoted field runs over a line break: the " that opens it on this line {end}; '
                        f"{_ONE_LINE}", no)
    if not data:
        raise err(name, f"no data row in the first {_SAMPLE} bytes" if not eof else "the file is empty"
                  if not text.strip() else "the file holds no data rows (only blank or comment lines)")
    forced = opts["delimiter"] or {"csv": ",", "tsv": "\t"}.get(fmt)
    for no, ln in data:  # before any split: a line of millions of fields took a minute to sniff
        for d in (forced,) if forced else [d for d in (",", "\t", ";") if d in ln] or [" "]:
            if ln.count(d) >= MAX_COLUMNS:  # exact unless quoted, or runs of whitespace
                k = len(ln.split()) if d == " " else len(_split(ln, d)) if '"' in ln else ln.count(d) + 1
                if k > MAX_COLUMNS:
                    raise err(name, f"{k:,} fields on one line; a triplet file has 3 or 4 columns (at most "
                                    f"{MAX_COLUMNS:,} with the ones to ignore): is this a triplet file?", no)
    spec.delimiter = delim = _sniff_delimiter([ln for _, ln in data], forced)
    rows = [[f.strip() for f in _split(ln, delim)] for _, ln in data]
    # every line ends in the separator (a spreadsheet's export): an empty last column, read and ignored
    if trailing := delim is not None and all(len(r) > 3 and r[-1] == "" for r in rows):
        rows = [r[:-1] for r in rows]
        notes.append(f"every line ends in a {_SEP_NAMES.get(delim, repr(delim))[:-1]}: the empty last column is ignored")
    f0, first_no, hdr, columns, lay = rows[0], data[0][0], opts["header"], opts["columns"], opts["layout"]
    if trailing and columns is not None and len(columns) == len(f0) + 1 and columns[-1] is None:
        columns = columns[:-1]  # the role of the empty last column, ignored already
    roles, hlayout, n_known, problem = roles_from_header(f0)
    numeric0 = [is_number(f) for f in f0]
    text_above_numbers = not all(numeric0) and len(rows) > 1 and all(map(is_number, rows[1]))
    own = tuple(map(str.lower, f0)) in LAYOUT_HEADERS  # a layout's own header ('head,winner,loser': body parts too)
    if hdr == "auto":
        shared = bool({f for r in rows[1:] for f in r} & set(f0))  # 'j,i,k' above 'k,j,l' is data
        items_below = shared and not own
        names = not all(numeric0) and (hlayout is not None or (n_known >= 2 and not any(numeric0)))
        if columns is not None and len(columns) == len(f0):  # a cell naming its column's role ('anchor': head)
            crowd = layout_from_roles(columns, "columns") == "crowd"
            names |= any(r is not None and name_role(f, crowd) == r for f, r in zip(f0, columns))
            items = [j for j, r in enumerate(columns) if r in ITEM_WORD]  # text above numbers in the item columns
            text_above_numbers = len(rows) > 1 and len(rows[1]) == len(f0) and all(
                not is_number(f0[j]) and is_number(rows[1][j]) for j in items)
        hdr = (names and not items_below) or (text_above_numbers and opts["item_type"] != "str")
        if not hdr and hlayout is not None:
            notes.append(f"the first line {','.join(f0)!r} was read as data (its cells are items of the file); "
                         "pass header=True if it names the columns")
        elif hdr and own and shared:
            notes.append(f"the first line {','.join(f0)!r} was read as the header, though some of its cells are "
                         "items of the file; pass header=False if it is a triplet")
    elif hdr is False and text_above_numbers and not any(numeric0) and opts["item_type"] == "auto":
        raise err(name, f"header=False, but this line {f0} is text above a line of numbers, as a header is: drop "
                        "header=False to read it as the header, or pass item_type='str' if its cells are items too",
                  first_no)
    if hdr:
        spec.header_line, rows = first_no, rows[1:]
        if columns is None and hlayout is None and len(f0) < 3 and not set(roles) & set(ITEM_WORD) and (
                text_above_numbers):
            raise err(name, _not_triplets(f0), first_no)  # points, coordinates: one wording for all of them
        if columns is None and hlayout is None:
            raise err(name, f"the {problem} (header {f0})" if n_known else f"the header {f0} names no known column; "
                      "name the columns e.g. head,winner,loser or head,left,right,winner, or pass columns=", first_no)
        if columns is None:
            spec.roles, spec.layout = roles, hlayout
            if [r for r in roles if r is not None] != list(LAYOUT_ROLES[hlayout]):
                notes.append(f"columns taken by their header names ({', '.join(f0)})")
            if None in roles:
                notes.append("ignored column(s): " + ", ".join(f or f"column {j + 1} (unnamed)"
                                                             for j, (f, r) in enumerate(zip(f0, roles)) if r is None))
        elif len(columns) != len(f0):
            raise err(name, f"columns= gives {len(columns)} roles but the header has {len(f0)} columns", first_no)
    if columns is not None:
        spec.roles, spec.layout = columns, layout_from_roles(columns, "columns")
    elif not hdr and len(f0) == 3 and lay in ("auto", "list-order"):
        spec.roles = LAYOUT_ROLES["list-order"]
    elif not hdr and len(f0) == 4 and lay not in ("auto", "list-order"):
        spec.roles, spec.layout = LAYOUT_ROLES[lay], "crowd" if lay == "crowd" else "list-boolean"
    elif not hdr and not any(numeric0) and n_known == 0 and len(rows) > 1 and any(map(is_number, rows[1])):
        raise err(name, _not_triplets(f0), first_no)
    elif not hdr and len(f0) == 4 and lay == "auto" and opts["header"] is False:
        raise err(name, "4 columns and header=False: pass layout= (crowd, list-boolean or list-count)" + (
            f"; this line names the columns of a {hlayout} file: drop header=False to read it as the header"
            if own else ""), first_no)
    elif not hdr:
        raise err(name, "4 columns without a header: name them (head,left,right,winner for crowd answers, or "
                        "head,j,k,y) or pass layout=" if len(f0) == 4 and lay == "auto" else
                  f"expected {_width(LAYOUT_ROLES['list-order' if lay == 'auto' else lay])}, got {len(f0)}"
                  + ("; if this line names the columns, name the roles (head,winner,loser or head,left,right,winner; "
                     "other columns are ignored) or pass columns= with header=True" if not any(numeric0) else "")
                  + _mixed(f0, delim), first_no)
    if lay != "auto" and not (spec.layout == lay or (spec.layout, lay) == ("list-boolean", "list-count")):
        raise err(name, f"layout={lay!r} was asked for but the columns describe a {spec.layout} layout")
    if lay in ("list-boolean", "list-count"):
        spec.layout = spec.response = lay
    if trailing:
        spec.roles = (*spec.roles, None)
    j = next(i for i, r in enumerate(spec.roles) if r in ITEM_WORD)
    spec.kind = opts["item_type"] if opts["item_type"] != "auto" else (
        "int" if rows and len(rows[0]) > j and is_number(rows[0][j]) else "str")
    spec.drop_first = bool(rows) and len(rows[0]) > len(spec.roles)  # pandas would drop that row's extra fields
    if spec.drop_first and not hdr:
        raise err(name, f"expected {_width(spec.roles)}, got {len(rows[0])}", first_no)
    # ... so with a header, it starts at the header (a row as wide as the roles); lines end in CR LF, LF or CR
    starts = [bom] + [bom + m.end() for m in itertools.islice(re.finditer(rb"\r\n?|\n", raw[bom:]), spec.header_line)]
    spec.first_line = spec.header_line + (not spec.drop_first)
    spec.data_start = starts[spec.first_line - 1] if spec.first_line <= len(starts) else len(raw)
    return spec


def _records(lines, first_no, delim=None):
    """(number of its first line, text) of each record: a line that opens a quoted field (a '"' at the start of
    a field) and leaves it open goes on over the next lines until it is closed, as pandas reads it."""
    opens = re.compile(r'(?:^|[ \t,;])[ \t]*"' if delim is None else rf'(?:^|{re.escape(delim)})[ \t]*"')
    it = enumerate(lines, first_no)
    for no, ln in it:
        while ln.count('"') % 2 and opens.search(ln) and (nxt := next(it, None)) is not None:
            ln += nxt[1]
        yield no, ln


def _sniff_delimiter(lines, forced):
    if forced is not None:
        return None if forced == " " else forced
    cands = [d for d in (",", "\t", ";") if d in re.sub(r'"[^"]*"', "", lines[0])]
    for d in cands if len(cands) > 1 else ():
        if all(len(_split(ln, d)) == len(_split(lines[0], d)) for ln in lines[1:20]):
            return d
    return cands[0] if cands else None


def _not_triplets(f0) -> str:
    """The refusal of a table (points, coordinates, item attributes) read as triplets: names above numbers."""
    return (f"is not a triplet file: its first line {f0} names columns, none of them a triplet's (head, winner, "
            "loser; or head, left, right, winner), above rows that hold numbers; a triplet file names items, three "
            "to a row")


def _commented_rows(src, spec, enc) -> str | None:
    """A note on the lines that start with '#' (comments, as pandas reads them) yet hold a data row's fields, such
    as a label '#ff0000' at the start of a row: read silently, they were rows lost."""
    # blocks cut after their last line break: each line is looked at whole, once; ``carry`` holds the unfinished
    # line after the break that ended the one before (a '#' is looked for first: most files have none)
    k, found, first, start, carry = len(spec.roles), 0, None, 0, b"\n"
    stream = src.rewind(spec.data_start)
    while True:
        block = stream.read(_SCAN_BLOCK)
        text = carry + block
        cut = text.rfind(b"\n") if block else len(text)
        for m in _COMMENT_LINE.finditer(text, 0, cut) if text.find(b"#", 0, cut) >= 0 else ():
            try:
                ln = m[1].decode(enc)
            except UnicodeDecodeError:
                continue
            fields = [f.strip() for f in _split(ln[1:], spec.delimiter)]
            if len(fields) == k and all(fields) and (spec.kind == "str" or all(map(NUM_RE.match, fields))):
                found += 1
                if first is None:  # the offset of its '#' in the data: text[i] is the data's byte start + i - 1
                    first = (start + m.start(), ln)
        if not block:
            break
        start, carry = start + cut, text[cut:]
    if not found:
        return None
    at, ln = first  # its line: the line breaks before it, counted once one is found
    breaks, stream = 0, src.rewind(spec.data_start)
    while at > 0 and (block := stream.read(min(_SCAN_BLOCK, at))):
        breaks, at = breaks + block.count(b"\n"), at - len(block)
    no = spec.first_line + breaks
    return (f"{found} line(s) that start with '#' were skipped as comments, though they hold {_width(spec.roles)} "
            f"like a data row (the first, line {no}: {ln[:60]!r}); "
            + ("quote a label that starts with '#' to read it" if spec.kind == "str" else
               "delete the '#' of those that are data"))


def _width(roles) -> str:
    return f"{len(roles)} fields ({', '.join(r or '(ignored)' for r in roles)})"


def _fast(src, spec, opts):
    """(triplets, layout, notes) of an integer file without a single problem, parsed in one pass into int32; None
    sends the file to the careful reader (anything odd: floats, quotes, text, a bad row)."""
    arr = fastpath.int_table(src.rewind(spec.data_start), src.end - src.base - spec.data_start, spec.delimiter,
                             len(spec.roles))
    if arr is None:
        return None
    roles, crowd, notes, layout = spec.roles, spec.layout == "crowd", [], spec.layout
    col = {r: arr[:, j] for j, r in enumerate(roles) if r is not None}
    h, a, b = (col[r] for r in (("head", "left", "right") if crowd else ("head", "near", "far")))
    hi = opts["n_items"] or (LIMIT if opts["relabel"] is False else None)
    if not len(arr) or bad_rows(h, a, b, hi).any():
        return None
    if crowd:  # a negative answer fits no encoding
        ans, mode = col["answer"], opts["answer"]
        if mode in ("auto", "label") and ((ans == a) | (ans == b)).all():
            mode, swap = "label", ans == b
        elif mode in ("auto", "index") and ((ans == 0) | (ans == 1)).all():
            mode, swap = "index", ans == 1
        else:
            return None
        notes.append(ANSWER_NOTE[mode])
    elif "response" in col:
        y = col["response"]
        if y.min() < {"list-count": -1, "list-boolean": 0}.get(spec.response, -1) or y.max() > 1 or (
                (y == -1).any() and (y == 0).any()) or (spec.response == "list-count" and (y == 0).any()):
            return None  # the careful reader words it
        layout, swap = "list-count" if (y == -1).any() else layout, y != 1
    elif roles == ("head", "near", "far"):
        return arr, layout, notes  # the parsed array is the result
    else:
        swap = None
    if swap is not None:
        swap_sides(a, b, swap)  # in the parsed table, before the result is allocated
    return np.column_stack([h, a, b]), layout, notes


class _Typed(Exception):
    """pandas typed a column of categories (numbers, booleans): the file is read again as exact text."""


def _factorize(s):
    """Codes and distinct values (text) of a column."""
    import pandas as pd

    if not isinstance(s.dtype, pd.CategoricalDtype):
        codes, uniq = pd.factorize(s)
        return codes, [str(u) for u in uniq]
    uniq = s.cat.categories.tolist()
    if s.cat.categories.dtype.kind in "biuf" or not all(isinstance(u, str) for u in uniq):
        raise _Typed  # pandas parsed numbers among the categories ('007' as 7): read the cells as text instead
    return s.cat.codes.to_numpy(), uniq


class _Reader:
    """The careful reader: cells read as text by pandas in chunks, each distinct value judged once; the lines are
    walked only to word a problem (its line number and fields)."""

    def __init__(self, src, spec, opts, lim):
        self.src, self.spec, self.opts, self.lim, self.kind = src, spec, opts, lim, spec.kind
        self.names, self.gid, self.memo, self.label_bytes, self.notes, self.saw_minus = [], {}, {}, 0, set(), False
        self.first_of = {}  # response "0" and "-1" -> the first frame row holding it (the two together are refused)
        self.lookup = None if opts["labels"] is None else {v: i for i, v in enumerate(opts["labels"].tolist())}
        self.bad, self.skipped, self.unfit, self.n_bad = {}, [], {md: [] for md in ANSWER_MODES}, 0

    def item(self, tok: str):
        """(id, None) of one item cell (the integer, or the index of the label), or (None, problem(column word))."""
        if tok not in self.memo:
            self.memo[tok] = self._item(tok.strip())
        return self.memo[tok]

    def _item(self, t):
        lim, opts = self.opts["n_items"] if self.lookup is None else None, self.opts
        if not t:
            return None, lambda what: f"empty {what} field"
        if "\n" in t or "\r" in t:
            return None, lambda what: f"the quoted {what} item {t!r} runs over a line break; {_ONE_LINE}"
        if self.kind == "str" and opts["item_type"] != "str" and is_number(t):
            return None, lambda what: (f"mixed types: {what} item {t!r} is a number, but the file's ids are text "
                                       "labels; pass item_type='str' to read numbers as labels too")
        if self.kind == "int" and not NUM_RE.match(t) and opts["item_type"] == "int":
            return None, lambda what: (f"{what} item {t!r} is not an integer, but item_type='int' was given; pass "
                                       "item_type='str' to read every id as a text label")
        if self.kind == "int" and not NUM_RE.match(t):
            return None, lambda what: (f"mixed types: {what} item {t!r} is not an integer, but the file's ids are "
                                       "integers; pass item_type='str' to read every id as a text label")
        v, f = t, None if self.kind == "str" or INT_RE.match(t) else float(t)
        if f is not None and abs(f) < 2**63 and math.isfinite(f):  # exactly: 9007199254740993.0 is no float
            exact = decimal.Decimal(t)
            f = int(exact) if exact == exact.to_integral_value() else math.nan
        if f is not None and (not math.isfinite(f) or f != int(f)):  # 'Nan' or 'Inf' may well be a name
            hint = "; pass item_type='str' if it is a label" if opts["item_type"] == "auto" and t[-1].isalpha() else ""
            return None, lambda what: f"non-integer item index {t!r} in the {what} column{hint}"
        if f is not None and not any(n.startswith("some integer ids are written as floats") for n in self.notes):
            self.notes.add(f"some integer ids are written as floats (e.g. {t!r}); they were read as integers")
        if self.kind == "int" and f is None and len(digits := t.lstrip("+-")) > 1 and digits[0] == "0" and not any(
                n.startswith("some integer ids are written with") for n in self.notes):
            self.notes.add(f"some integer ids are written with leading zeros (e.g. {t!r}); they were read as "
                           f"numbers, so {t!r} and {str(int(t))!r} are one item (pass item_type='str' if they are codes)")
        if self.kind == "int":
            v = int(f) if f is not None else int(t) if len(t) < 40 else -1 if t[0] == "-" else 2**63  # not int(t)
            # of 4,300 digits or more, which Python refuses
            if v < 0:
                return None, lambda what: f"negative item index {t} in the {what} column"
            if v >= 2**63 or (v >= LIMIT and lim is None and opts["relabel"] is False):
                return None, lambda what: (f"item index {t} in the {what} column is too large: indices must be "
                                           f"below {LIMIT} (2**31 - 2) and ids below 2**63; pass item_type='str' to "
                                           "read them as labels")
            if lim is not None and v >= lim:
                return None, lambda what: f"item index {v} in the {what} column is out of range for n_items={lim}"
        if self.lookup is not None:
            return (self.lookup[v], None) if v in self.lookup else (
                None, lambda what: f"{what} item {v!r} is not one of the given labels")
        if self.kind == "str" and self.gid.setdefault(v, len(self.names)) == len(self.names):
            self.names.append(v)
            self.label_bytes += len(v)
            if self.label_bytes > self.lim["label_bytes"]:
                raise over_limit(self.src.name, "the text labels exceed", self.lim, "label_bytes", " characters in all")
        return self.gid[v] if self.kind == "str" else v, None

    def word(self, fields, mode=None) -> str:
        """The first problem of a row, from its fields as split from its line (None: a '#' cut the line)."""
        hint = " ('#' starts a comment: quote labels that contain it)" if fields and fields[-1] is None else ""
        fields = fields[:-1] if hint else fields
        if len(fields) != len(self.spec.roles):
            return f"expected {_width(self.spec.roles)}, got {len(fields)}{hint}{_mixed(fields, self.spec.delimiter)}"
        cell = {r: f.strip() for f, r in zip(fields, self.spec.roles) if r is not None}
        items = [r for r in ITEM_WORD if r in cell]
        for r in items:
            if (problem := self.item(cell[r])[1]) is not None:
                return problem(ITEM_WORD[r]) + hint
        if len({self.item(cell[r])[0] for r in items}) < 3:
            return f"the row repeats an item {tuple(cell[r] for r in items)}; a triplet needs three distinct items"
        if "response" in cell and cell["response"].lower() not in RESPONSE[self.spec.response]:
            return f"the response {cell['response']!r} is not {RESPONSE_WANT[self.spec.response]}"
        if "answer" not in cell:  # not met: a bad row has one of the problems above
            return f"the row {fields} cannot be read as {_width(self.spec.roles)}"
        ans, h, a, b = (cell[r] for r in ("answer", "head", "left", "right"))
        want = {"label": "the label of the left or right item", "side": "'left' or 'right'",
                "index": "0 (left) or 1 (right)"}.get(mode, "the left or right item's label, 'left'/'right', or 0/1")
        return "the answer field is empty" if not ans else (f"the answer {ans!r} names none of the row's items (head "
                                                            f"{h!r}, left {a!r}, right {b!r}); it must be {want}")

    def where(self, rows) -> dict:
        """{row: (line, fields)} of frame rows: the lines after the header walked as pandas turned them into rows
        (a line starting with '#' or skipped for too many fields is no row)."""
        want, found, pos = set(rows), {}, self.src.stream.tell()  # pandas may be reading on
        text = io.TextIOWrapper(self.src.rewind(self.spec.data_start), encoding=self.opts["encoding"],
                                errors="replace")
        try:
            lines = ((no, ln) for no, ln in _records(text, self.spec.first_line, self.spec.delimiter)
                     if not ln.startswith("#") and no not in self.bad)
            for r, (no, ln) in zip(range(max(want, default=-1) + 1), lines):
                if r in want:  # cut at a '#' outside quotes (a comment, as pandas reads it); None marks the cut
                    cut = re.match(r'(?:[^"#\r\n]|"[^"]*")*', ln)[0]
                    found[r] = (no, _split(cut, self.spec.delimiter) + ([None] if ln[len(cut):][:1] == "#" else []))
        finally:
            text.detach()
            self.src.stream.seek(pos)
        return found

    def problems(self, rows, mode=None) -> list:
        """Sorted (line, problem) of these frame rows and of the lines pandas skipped for too many fields."""
        return sorted([(ln, self.word(f, mode)) for ln, f in self.where(rows).values()] + list(self.bad.items()))

    def report(self, rows, mode=None):
        """errors="raise": raise the first problem among these rows and the lines with too many fields."""
        if self.opts["errors"] == "raise" and (first := self.problems(rows[:1], mode)):
            raise err(self.src.name, f"{first[0][1]}; errors='skip' drops the rows with problems", first[0][0])

    def chunk(self, df, r0):
        """(ids (k, 3), codes or None) of the good rows of a chunk; codes: per answer encoding, 0 = the left item
        chosen, 1 = the right one, -1 = the answer does not read so (None: no answer of the chunk does)."""
        roles, crowd = self.spec.roles, self.spec.layout == "crowd"
        fac = [_factorize(df[j]) for j in range(len(roles))]
        on = lambda j, values, dtype=None: np.array(values, dtype=dtype)[fac[j][0]]  # noqa: E731  (per row)
        empty = [[not u.strip() for u in uniq] for _, uniq in fac]
        blank = (np.logical_and.reduce([on(j, e) for j, e in enumerate(empty)]) if all(map(any, empty))
                 else np.zeros(len(df), bool))
        blank[:1] |= r0 == 0 and self.spec.drop_first  # the header, read to keep pandas from dropping fields
        wide = np.int64 if self.kind == "int" and self.lookup is None else np.int32  # raw ids reach 2**63
        ids = {r: on(j, [-1 if v is None else v for v, _ in map(self.item, fac[j][1])], wide)
               for j, r in enumerate(roles) if r in ITEM_WORD or r == "answer"}
        h, a, b = (ids[r] for r in (("head", "left", "right") if crowd else ("head", "near", "far")))
        bad, codes = bad_rows(h, a, b), None
        if "response" in roles:
            toks = [u.strip().lower() for u in fac[roles.index("response")][1]]
            self.saw_minus |= "-1" in toks
            y = on(roles.index("response"), [RESPONSE[self.spec.response].get(t, -1) for t in toks])
            for t in ({"0", "-1"} if self.spec.response == "auto" else set()) & set(toks) - set(self.first_of):
                codes_t = fac[roles.index("response")][0]
                self.first_of[t] = r0 + int(np.argmax(codes_t == toks.index(t)))
            bad |= y < 0
            a, b = np.where(y == 0, b, a), np.where(y == 0, a, b)
        if crowd:
            j, ans, toks = roles.index("answer"), ids["answer"], [u.strip() for u in fac[roles.index("answer")][1]]
            codes = [(ans == b).view(np.int8) - ((ans != a) & (ans != b)).view(np.int8)] + [
                on(j, table, np.int8) if max(table, default=-1) >= 0 else None for table in (
                    [{"left": 0, "l": 0, "right": 1, "r": 1}.get(t.lower(), -1) for t in toks],
                    [{0: 0, 1: 1}.get(int(t), -1) if INT_RE.match(t) and len(t) < 40 else -1 for t in toks])]  # '00'
            bad |= on(j, [not t for t in toks], bool)
        bad &= ~blank
        keep, self.n_bad = ~(bad | blank), self.n_bad + int(bad.sum())
        new = (r0 + np.flatnonzero(bad)[:MAX_NOTES]).tolist()
        self.skipped = (self.skipped + new)[:MAX_NOTES]
        self.report(new)  # or a line with too many fields
        for md, c in zip(ANSWER_MODES, codes or ()):
            if len(self.unfit[md]) < MAX_NOTES:
                self.unfit[md] += (r0 + np.flatnonzero(keep if c is None else keep & (c < 0))[:MAX_NOTES]).tolist()
        full, out = keep.all(), np.column_stack([h, a, b])
        return out if full else out[keep], codes and [c if c is None or full else c[keep] for c in codes]

    def resolve(self, tri, codes, notes):
        """Pick the answer encoding, drop (skip) or report the rows it does not fit, put the chosen item second."""
        parts = [[np.full(len(c[0]), -1, np.int8) if c[j] is None else c[j] for c in codes] for j in range(3)]
        fails = {md: sum(int((c < 0).sum()) for c in parts[j]) for j, md in enumerate(ANSWER_MODES)}
        fit, mode = [md for md in ANSWER_MODES if fails[md] == 0], self.opts["answer"]
        mode = mode if mode != "auto" else fit[0] if fit else min(ANSWER_MODES, key=fails.get)
        notes.append(ANSWER_NOTE[mode])
        code = np.concatenate(parts[ANSWER_MODES.index(mode)])
        if fails[mode]:
            self.report(self.unfit[mode][:1], mode if fit or self.opts["answer"] != "auto" else "auto")
            self.n_bad, self.skipped = self.n_bad + fails[mode], self.skipped + self.unfit[mode]
            tri, code = tri[code >= 0], code[code >= 0]
        swap_sides(tri[:, 1], tri[:, 2], code == 1)
        return tri, mode

    def read(self, dtype):
        """(triplets, layout, n_skipped, notes) of the file."""
        import pandas as pd

        spec, enc, parts, r0 = self.spec, self.opts["encoding"], [], 0
        kw = dict(sep=r"\s+" if spec.delimiter is None else spec.delimiter, header=None, names=range(len(spec.roles)),
                  index_col=False, na_filter=False, comment="#", skip_blank_lines=False, on_bad_lines="warn",
                  low_memory=False, skipinitialspace=self.kind == "str", dtype=dtype, encoding=enc, chunksize=_CHUNK)
        try:
            with warnings.catch_warnings(record=True) as caught, pd.read_csv(self.src.rewind(spec.data_start),
                                                                             **kw) as reader:
                warnings.simplefilter("always")
                for df in reader:
                    for n, k in re.findall(r"line (\d+): expected \d+ fields, saw (\d+)", " ".join(map(str, caught))):
                        self.bad[spec.first_line + int(n) - 1] = f"expected {_width(spec.roles)}, got {k}"
                    caught.clear()
                    parts.append(self.chunk(df, r0))
                    r0 += len(df)
        except pd.errors.EmptyDataError:
            pass
        except pd.errors.ParserError as exc:
            row = re.search(r"EOF inside string starting at row (\d+)", str(exc))
            raise err(self.src.name, _UNTERMINATED if row else f"malformed text ({str(exc).strip()})",
                      spec.first_line + int(row[1]) if row else None) from None
        except UnicodeDecodeError:
            raw = self.src.rewind(spec.data_start).read()
            start = len(raw.decode(enc, "replace").split("\ufffd", 1)[0].encode(enc))
            raise err(self.src.name, f"is not valid {enc} text (byte 0x{raw[start]:02x}); pass encoding= with the "
                                     "file's encoding", spec.first_line + raw[:start].count(b"\n")) from None
        if len(self.first_of) == 2:  # 0 beside -1: 'false' (booleans) or a tie (counts)? read neither way
            (row, tok), (row0, tok0) = sorted(((r, t) for t, r in self.first_of.items()), reverse=True)
            (line, _), (line0, _) = (self.where([r])[r] for r in (row, row0))
            raise err(self.src.name, f"the response {tok!r} mixes two encodings with the {tok0!r} of line {line0}: y "
                                     "must be True/False (1/0) or +1/-1 throughout", line)
        tri, notes, mode = np.concatenate([p[0] for p in parts] or [np.empty((0, 3), np.int64)]), [], None
        if spec.layout == "crowd" and len(tri):
            tri, mode = self.resolve(tri, [p[1] for p in parts], notes)
        n_skipped, notes = self.n_bad + len(self.bad), notes + sorted(self.notes)
        if n_skipped:
            shown = self.problems(sorted(self.skipped)[:MAX_NOTES], mode)[:MAX_NOTES]
            notes.append(f"skipped {n_skipped} row(s) with problems (first: "
                         + "; ".join(f"line {ln}: {msg}" for ln, msg in shown) + ")")
        return tri, "list-count" if self.saw_minus and spec.response == "auto" else spec.layout, n_skipped, notes


def _read_text(src, opts, fmt, lim) -> TripletData:
    name, notes = src.name, []
    if opts["encoding"] not in _ASCII_COMPATIBLE:  # e.g. UTF-16: decode once, go on as UTF-8
        try:
            text = src.rewind().read().decode(opts["encoding"]).lstrip("\ufeff")
        except UnicodeDecodeError as exc:
            raise err(name, f"is not valid {opts['encoding']} text ({exc.reason})") from None
        src, opts = _Source(io.BytesIO(text.encode("utf-8"))), dict(opts, encoding="utf-8")
        src.name = name
    spec = _sniff(src, opts, fmt, notes)
    fmt = {",": "csv", "\t": "tsv"}.get(spec.delimiter, "text")
    if spec.kind == "int" and opts["labels"] is None and not spec.drop_first and (fast := _fast(src, spec, opts)):
        return finish_int(fast[0], opts, name, fast[1], fmt, 0, notes + fast[2])
    for dtype in ("category", object) if spec.kind == "str" and opts["item_type"] == "auto" else (object,):
        try:  # categories: each distinct label is parsed once
            reader = _Reader(src, spec, opts, lim)
            tri, layout, n_skipped, more = reader.read(dtype)
            break
        except _Typed:
            continue
    if tri.shape[0] == 0:
        raise err(name, f"no valid rows: all {n_skipped} data row(s) have problems" if n_skipped else
                  "the file has a header but no data rows" if spec.header_line else "the file holds no data rows",
                  spec.header_line if spec.header_line and not n_skipped else None)
    if (commented := _commented_rows(src, spec, opts["encoding"])) is not None:
        more = more + [commented]
    args = (opts, name, layout, fmt, n_skipped, notes + more)
    return finish_str(tri, reader.names, *args) if spec.kind == "str" and reader.lookup is None else finish_int(
        tri, *args)
