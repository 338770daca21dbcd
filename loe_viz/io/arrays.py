"""NumPy files: array headers and archive member sizes are checked against the limits before any data is read."""

from __future__ import annotations

import re
import tokenize
import zipfile
import zlib
from collections import Counter

import numpy as np

from .layouts import LIMIT, as_labels, bad_rows, err, finish_int, over_limit, swap_sides

_LISTED = 10  # member names a message lists (an archive may hold thousands)
_FLOOR = 1 << 24  # archive members below 16 MiB are never refused for their compression ratio
# tokenize.TokenError: NumPy tokenizes the header dict, and an unbalanced bracket there is no SyntaxError;
# zlib.error: a damaged deflate stream in an archive member (no BadZipFile: zipfile checks the CRC only at the end)
_BROKEN = (ValueError, OSError, EOFError, SyntaxError, TypeError, tokenize.TokenError, zipfile.BadZipFile,
           NotImplementedError, RuntimeError, zlib.error)


def _limit(name, what, size, lim, key, unit="bytes"):
    if size > lim[key]:
        raise over_limit(name, f"{what} is {size:,.0f} {unit}, above", lim, key, f" {unit}")


def read_header(fh, name, what):
    """(shape, dtype, bytes declared) of the .npy array at the stream's position, the stream left after the
    header; a header NumPy cannot read is a ValueError naming the file and ``what``."""
    fmt = np.lib.format
    try:
        version = fmt.read_magic(fh)
        if version[0] not in (1, 2):
            raise ValueError(f"unsupported .npy version {version}")
        shape, fortran, dtype = (fmt.read_array_header_1_0 if version[0] == 1 else fmt.read_array_header_2_0)(fh)
    except _BROKEN as exc:
        why = f"its header is not a Python dict: {exc.args[0]}" if isinstance(exc, tokenize.TokenError) else exc
        if node := re.search(r"<ast\.(\w+) object at 0x[0-9a-fA-F]+>", str(exc)):  # literal_eval: no address
            why = f"its header is not a Python dict of plain values: it holds a {node[1]} expression"
        raise err(name, f"{what} is not a valid NumPy array ({why})") from None
    return shape, dtype, int(np.prod(shape, dtype=object)) * dtype.itemsize


def read_array(fh, name, what, lim, end):
    """One array from an open .npy stream ending at byte ``end``: the header is read and checked (no object
    dtype, at most ``lim["array_bytes"]``, no more than the bytes that follow) before the data."""
    start = fh.tell()
    shape, dtype, nbytes = read_header(fh, name, what)
    if dtype.hasobject:
        raise err(name, f"{what} is an object array; it cannot be read without unpickling, which loe_viz never "
                        "does (save numbers as a numeric array, labels as a str array)")
    left = end - fh.tell()
    _limit(name, f"{what}, declared with shape {shape} and dtype {dtype},", nbytes, lim, "array_bytes")
    if nbytes > left:
        raise err(name, f"{what} is not a valid NumPy array (its header declares shape {shape}, {nbytes:,} "
                        f"bytes, but only {left:,} follow)")
    try:
        fh.seek(start)  # the header is read again, by NumPy
        return np.lib.format.read_array(fh, allow_pickle=False)
    except _BROKEN as exc:
        raise err(name, f"{what} is not a valid NumPy array ({type(exc).__name__}: {exc})") from None


def _table(name, arr, what, n, bound) -> np.ndarray:
    """An (m, 3) array of item ids below ``n`` (``bound`` says why) as a writable int32 array (int64 for larger
    ids)."""
    if arr.ndim != 2 or arr.shape[1] != 3:
        raise err(name, f"{what} must have shape (m, 3), got {arr.shape}")
    if arr.shape[0] == 0 or arr.dtype.kind not in "iuf":
        raise err(name, f"{what} is empty: at least one triplet is needed" if arr.shape[0] == 0 else
                  f"{what} must hold integer item indices, got dtype {arr.dtype}")
    whole = (np.isfinite(arr) & (arr == np.round(arr))).all(axis=1) if arr.dtype.kind == "f" else np.True_
    bad = bad_rows(*arr.T, n) | ~whole
    if bad.any():
        r = int(np.argmax(bad))
        row = arr[r]
        problem = ("holds a non-integer value" if arr.dtype.kind == "f" and not whole[r] else
                   "holds a negative index" if row.min() < 0 else
                   f"holds index {row.max()}, too large for {bound}" if row.max() >= n else
                   "repeats an item; a triplet needs three distinct items")
        raise err(name, f"{what} row {r} (counting from 0) {problem}: {row.tolist()}")
    small = arr.dtype.itemsize <= 2 or arr.max() < LIMIT
    return np.array(arr, dtype=np.int32 if small else np.int64, order="C")


def _labels(name, lab, lim):
    if lab.ndim != 1 or lab.dtype.kind not in "iuUS":
        raise err(name, f"labels must be a 1-D str or integer array, got shape {lab.shape} and dtype {lab.dtype}")
    if lab.dtype.kind == "U":  # UCS-4 cells hold any 32-bit number; Python makes str only of Unicode code points
        order = lab.dtype.byteorder if lab.dtype.byteorder in "<>" else "="
        codes = np.ascontiguousarray(lab).view(np.dtype("u4").newbyteorder(order))
        if ((codes > 0x10FFFF) | ((codes >= 0xD800) & (codes <= 0xDFFF))).any():
            raise err(name, "labels hold numbers that are no Unicode characters (above U+10FFFF, or surrogates)")
    try:
        vals = [v.decode("utf-8") if isinstance(v, bytes) else v for v in lab.tolist()]
    except UnicodeDecodeError:
        raise err(name, "labels are bytes that are not UTF-8") from None
    if lab.dtype.kind in "US":
        _limit(name, "the total length of the labels", sum(map(len, vals)), lim, "label_bytes", "characters")
    try:
        return as_labels(vals)
    except ValueError as exc:
        raise err(name, str(exc)) from None


def _npz(src, lim):
    """(layout, triplet array and its name, y or None, labels or None, notes) of an .npz archive."""
    name = src.name
    try:
        zf = zipfile.ZipFile(src.rewind())
        keys = Counter(i.filename.removesuffix(".npy") for i in zf.infolist())
        members = {i.filename.removesuffix(".npy"): i for i in zf.infolist()}
    except _BROKEN as exc:
        raise err(name, f"is not a valid .npz archive ({exc})") from None

    def load(key):
        info = members[key]
        _limit(name, f"the member {key!r} (uncompressed)", info.file_size, lim, "array_bytes")
        if info.file_size > _FLOOR:
            _limit(name, f"the expansion of the member {key!r} ({info.compress_size:,} to {info.file_size:,} bytes)",
                   info.file_size / max(info.compress_size, 1), lim, "compression_ratio", "times")
        try:
            with zf.open(info) as fh:
                if fh.peek(6)[:6] != b"\x93NUMPY":
                    raise err(name, f"the member {key!r} is not a NumPy array (.npy data); an .npz must hold "
                                    "arrays saved with numpy.savez")
                return read_array(fh, name, key, lim, info.file_size)
        except (zipfile.BadZipFile, NotImplementedError, OSError, RuntimeError, EOFError, zlib.error) as exc:
            why = f"its compressed data is damaged: {exc}" if isinstance(exc, zlib.error) else exc
            raise err(name, f"the member {key!r} cannot be read ({why})") from None

    with zf:
        if twice := sorted(k for k, c in keys.items() if c > 1):  # which one is the data would be a guess
            raise err(name, f"holds more than one array named {twice[0]!r}; an .npz holds each array once")
        key = "triplets" if "triplets" in members else "X" if {"X", "y"} <= set(members) else None
        if key is None and ({"[Content_Types].xml", "mimetype"} & set(members)):
            raise err(name, "is an office document (a zip of XML, such as an Excel .xlsx or OpenDocument .ods file), "
                            "not a NumPy .npz archive; save the sheet as CSV")
        if key is None:
            names = sorted(members)
            more = f" and {len(names) - _LISTED:,} more" if len(names) > _LISTED else ""
            raise err(name, f"has the arrays {names[:_LISTED]}{more}; expected 'triplets', or 'X' and 'y' "
                            "(optionally 'labels')")
        extra = sorted(set(members) - {key, "labels"} - ({"y"} if key == "X" else set()))
        X, y = load(key), load("y") if key == "X" else None
        lab = _labels(name, load("labels"), lim) if "labels" in members else None
    notes = [f"ignored array(s): {', '.join(extra)}"] if extra else []
    if y is None:
        return "list-order", X, key, None, lab, notes
    if X.ndim != 2 or X.shape[1] != 3:  # before y is compared with its rows (a 0-d X and y had none)
        raise err(name, f"X must have shape (m, 3), got {X.shape}")
    if y.shape != X.shape[:1] or y.dtype.kind not in "biuf":
        raise err(name, f"y must have shape ({X.shape[0]},) to match X, got {y.shape}" if y.shape != X.shape[:1]
                  else f"y must be boolean or +1/-1, got dtype {y.dtype}")
    bad = ~np.isin(y, (-1, 0, 1)) | ((y == -1).any() & (y == 0))
    if bad.any():
        r = int(np.argmax(bad))
        raise err(name, f"y row {r} (counting from 0) holds {y[r].item()!r}; y must be True/False or +1/-1")
    layout = "list-boolean" if y.dtype.kind == "b" or (y == 0).any() else "list-count"
    if layout == "list-boolean" and y.dtype.kind != "b":
        notes.append("y holds 0/1 integers; read as booleans (1 = X row is in list-order)")
    return layout, X, key, y, lab, notes


def read(src, opts, lim, fmt):
    """TripletData of a .npy or .npz file."""
    name, lay = src.name, opts["layout"]
    if fmt == "npy" and lay not in ("auto", "list-order"):
        raise err(name, f"a .npy file holds list-order triplets; layout={lay!r} needs X and y (.npz)")
    layout, arr, what, y, lab, notes = _npz(src, lim) if fmt == "npz" else (
        "list-order", read_array(src.rewind(), name, "the array", lim, src.end), "the array", None, None, [])
    if lay not in ("auto", layout) and not {lay, layout} <= {"list-boolean", "list-count"}:
        raise err(name, f"layout={lay!r} was asked for but the archive holds {layout} data")
    bad = None if y is None or lay not in ("list-boolean", "list-count") else y == (-1 if lay == "list-boolean" else 0)
    if y is not None and y.dtype.kind == "b" and lay == "list-count":  # the asked-for layout binds y's encoding
        raise err(name, "layout='list-count' was asked for but y is boolean; list-count responses are +1/-1")
    if bad is not None and bad.any():
        r = int(np.argmax(bad))
        raise err(name, f"layout={lay!r} was asked for but y row {r} (counting from 0) holds {y[r].item()!r}; "
                  + ("list-boolean responses are True/False or 1/0" if lay == "list-boolean" else
                     "list-count responses are +1/-1"))
    layout = lay if lay in ("list-boolean", "list-count") else layout
    if lab is not None and opts["labels"] is None and opts["n_items"] not in (None, lab.size):
        raise err(name, f"n_items={opts['n_items']} does not match the {lab.size} labels stored in the file")
    if opts["labels"] is not None:
        notes += ["the file's labels were replaced by labels="] if lab is not None else []
        lab = opts["labels"]
    n = opts["n_items"] if lab is None else lab.size
    wide = n is None and opts["relabel"] is not False  # ids up to 2**63 - 1, numbered 0..k-1 as in a text file
    bound = (f"n_items={n}" if lab is None else f"the {n} labels (indices 0..{n - 1})") if n is not None else (
        "the reader (ids below 2**63)" if wide else f"relabel=False (ids below 2**31 - 2 = {LIMIT:,})")
    tri = _table(name, arr, what, 2**63 if wide else n or LIMIT, bound)
    if y is not None:
        swap_sides(tri[:, 1], tri[:, 2], y != 1)
    return finish_int(tri, dict(opts, labels=lab), name, layout, fmt, 0, notes)
