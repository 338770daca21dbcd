"""NumPy files: headers and member sizes are checked against the limits before anything is read."""

from __future__ import annotations

import zipfile

import numpy as np

from .layouts import LIMIT, TripletData, err, finish_int, text_labels

_FLOOR = 1 << 24  # members below 16 MiB are never refused for their compression ratio


def _mb(n) -> str:
    return f"{n / 2**20:,.1f} MiB"


def _too_big(name, what, nbytes, limits, key):
    return err(name, f"{what} declares {_mb(nbytes)}, above the limit of {_mb(limits[key])} "
                     f"(raise it with read_triplets(..., limits={{'{key}': ...}}) or "
                     f"loe_viz.io.MAX_{key.upper()})")


def _read_npy(fh, name, what, limits, end=None):
    """One array from an open .npy stream; shape and size are checked before the data is read."""
    fmt = np.lib.format
    try:
        version = fmt.read_magic(fh)
        reader = {1: fmt.read_array_header_1_0, 2: fmt.read_array_header_2_0}.get(version[0])
        if reader is None:
            raise ValueError(f"unsupported .npy version {version}")
        shape, fortran, dtype = reader(fh)
    except (ValueError, OSError, EOFError, SyntaxError, TypeError) as exc:
        raise err(name, f"{what} is not a valid NumPy array ({exc})") from None
    if dtype.hasobject:
        raise err(name, f"{what} is an object array; it cannot be read without unpickling, which read_triplets "
                        "never does (save labels as a str array, triplets as integers)")
    nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
    if nbytes > limits["array_bytes"]:
        raise _too_big(name, f"{what} of shape {shape} ({dtype})", nbytes, limits, "array_bytes")
    available = None if end is None else end - fh.tell()
    if available is not None and nbytes > available:
        raise err(name, f"{what} declares shape {shape} ({_mb(nbytes)}) but the file holds only {_mb(available)}")
    buf = bytearray(nbytes)
    try:
        got = fh.readinto(buf) if hasattr(fh, "readinto") else None
        if got is None:
            data = fh.read(nbytes)
            got = len(data)
            buf[:got] = data
    except (OSError, EOFError, zipfile.BadZipFile) as exc:
        raise err(name, f"{what} is not a valid NumPy array ({type(exc).__name__}: {exc})") from None
    if got != nbytes:
        raise err(name, f"{what} is not a valid NumPy array (truncated: {got} of {nbytes} bytes)")
    arr = np.frombuffer(buf, dtype=dtype)
    return arr.reshape(shape[::-1]).T if fortran else arr.reshape(shape)


def int_table(name, arr, what, ncols=3):
    """Validate an array of ids into a writable int32 (m, ncols) array."""
    if arr.ndim != 2 or arr.shape[1] != ncols:
        raise err(name, f"{what} must have shape (m, {ncols}), got {arr.shape}")
    if arr.shape[0] == 0:
        raise err(name, f"{what} is empty: at least one triplet is needed")
    if arr.dtype.kind not in "iuf":
        raise err(name, f"{what} must hold integer item indices, got dtype {arr.dtype}")
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if bad.any():
            r = int(np.argwhere(bad)[0, 0])
            raise err(name, f"{what} row {r} (counting from 0) holds a non-integer value {arr[bad][0].item()!r}")
    if arr.dtype.kind != "u" and arr.min() < 0:
        r = int(np.argwhere(arr < 0)[0, 0])
        raise err(name, f"{what} row {r} (counting from 0) holds a negative index ({arr.min()})")
    if arr.max() >= LIMIT:
        r = int(np.argwhere(arr >= LIMIT)[0, 0])
        raise err(name, f"{what} row {r} (counting from 0) holds the index {int(arr.max())}, which is too large "
                        f"(indices must be below {LIMIT})")
    tri = np.array(arr, dtype=np.int32, order="C")
    rep = (tri[:, 0] == tri[:, 1]) | (tri[:, 0] == tri[:, 2]) | (tri[:, 1] == tri[:, 2])
    if rep.any():
        r = int(np.argmax(rep))
        raise err(name, f"{what} row {r} (counting from 0) repeats an item {tuple(int(v) for v in tri[r])}; "
                        "a triplet needs three distinct items")
    return tri


def _labels(name, lab, limits):
    if lab.ndim != 1:
        raise err(name, f"labels must be 1-D, got shape {lab.shape}")
    if lab.dtype.kind in "iu":
        if np.unique(lab).size != lab.size:
            raise err(name, "labels are not distinct")
        return lab.astype(np.int64)
    if lab.dtype.kind not in "US":
        raise err(name, f"labels must be a str or integer array, got dtype {lab.dtype}")
    try:
        vals = [v.decode("utf-8") if isinstance(v, bytes) else v for v in lab.tolist()]
    except UnicodeDecodeError:
        raise err(name, "labels are bytes that are not UTF-8") from None
    total = sum(len(v) for v in vals)
    if total > limits["label_bytes"]:
        raise _too_big(name, f"the labels ({len(vals)} of them)", total, limits, "label_bytes")
    try:
        return text_labels(vals)
    except ValueError:
        raise err(name, "labels are not distinct") from None


def read_npy(src, opts, limits):
    name = src.name
    if opts["layout"] not in ("auto", "list-order"):
        raise err(name, f"a .npy file holds list-order triplets; layout={opts['layout']!r} needs X and y (.npz)")
    arr = _read_npy(src.rewind(), name, "the array", limits, src.end)
    return "list-order", int_table(name, arr, "the array"), None, []


def read_npz(src, opts, limits):
    name = src.name
    try:
        zf = zipfile.ZipFile(src.rewind())
        members = {i.filename[:-4] if i.filename.endswith(".npy") else i.filename: i for i in zf.infolist()}
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise err(name, f"is not a valid .npz archive ({exc})") from None

    def load(key):
        info = members[key]
        if info.file_size > limits["array_bytes"]:
            raise _too_big(name, f"the member {key!r}", info.file_size, limits, "array_bytes")
        ratio = limits["compression_ratio"]
        if info.file_size > max(_FLOOR, ratio * info.compress_size):
            raise err(name, f"the member {key!r} would expand {info.file_size / max(info.compress_size, 1):,.0f} "
                            f"times ({_mb(info.compress_size)} to {_mb(info.file_size)}), above the limit of {ratio} "
                            "(raise it with read_triplets(..., limits={'compression_ratio': ...}) or "
                            "loe_viz.io.MAX_COMPRESSION_RATIO)")
        try:
            fh = zf.open(info)
        except (zipfile.BadZipFile, NotImplementedError, OSError, RuntimeError) as exc:
            raise err(name, f"the member {key!r} cannot be read ({exc})") from None
        with fh:
            if fh.peek(6)[:6] != b"\x93NUMPY":
                raise err(name, f"the member {key!r} is not a NumPy array (.npy data); "
                                "an .npz must hold arrays saved with numpy.savez")
            return _read_npy(fh, name, key, limits, info.file_size)

    with zf:
        keys = sorted(members)
        notes = []
        if "triplets" in members:
            tri, layout, used = int_table(name, load("triplets"), "triplets"), "list-order", {"triplets"}
        elif "X" in members and "y" in members:
            tri = int_table(name, load("X"), "X")
            y = load("y")
            if y.shape != (tri.shape[0],):
                raise err(name, f"y must have shape ({tri.shape[0]},) to match X, got {y.shape}")
            if y.dtype.kind == "b":
                keep, layout = y, "list-boolean"
            elif y.dtype.kind in "iuf":
                bad = ~np.isin(y, (-1, 0, 1))
                if bad.any():
                    r = int(np.argmax(bad))
                    raise err(name, f"y row {r} (counting from 0) holds {y[r].item()!r}; y must be True/False or +1/-1")
                if (y == 0).any() and (y == -1).any():
                    raise err(name, "y mixes 0 and -1; y must be True/False (1/0) or +1/-1")
                keep, layout = y == 1, "list-count" if (y == -1).any() or (y == 1).all() else "list-boolean"
                if layout == "list-boolean":
                    notes.append("y holds 0/1 integers; read as booleans (1 = X row is in list-order)")
            else:
                raise err(name, f"y must be boolean or +1/-1, got dtype {y.dtype}")
            swap = ~np.asarray(keep, dtype=bool)
            tri[swap, 1], tri[swap, 2] = tri[swap, 2], tri[swap, 1].copy()
            used = {"X", "y"}
        else:
            raise err(name, f"has the arrays {keys}; expected 'triplets', or 'X' and 'y' (optionally 'labels')")
        lay = opts["layout"]
        if lay not in ("auto", layout) and not {lay, layout} <= {"list-boolean", "list-count"}:
            raise err(name, f"layout={lay!r} was asked for but the archive holds {layout} data")
        lab = _labels(name, load("labels"), limits) if "labels" in members else None
        if lab is not None:
            used.add("labels")
        if set(keys) - used:
            notes.append(f"ignored array(s): {', '.join(sorted(set(keys) - used))}")
    return layout, tri, lab, notes


def finish_array(name, tri, opts, layout, fmt, lab, notes):
    """TripletData of an array read from a NumPy file."""
    if opts["labels"] is not None:
        if lab is not None:
            notes.append("the file's labels were replaced by labels=")
        lab = opts["labels"]
    maxv = int(tri.max())
    if lab is not None:
        if maxv >= lab.size:
            r = int(np.argwhere(tri >= lab.size)[0, 0])
            raise err(name, f"row {r} (counting from 0) holds the index {maxv}, out of range for the {lab.size} labels")
        if opts["labels"] is None and opts["n_items"] is not None and opts["n_items"] != lab.size:
            raise err(name, f"n_items={opts['n_items']} does not match the {lab.size} labels stored in the file")
        return TripletData(tri, lab, int(lab.size), name, layout, fmt, 0, tuple(notes))
    if opts["n_items"] is not None and maxv >= opts["n_items"]:
        r = int(np.argwhere(tri >= opts["n_items"])[0, 0])
        raise err(name, f"row {r} (counting from 0) holds the index {maxv}, out of range for n_items={opts['n_items']}")
    return finish_int(tri, maxv, opts, name, layout, fmt, 0, notes)
