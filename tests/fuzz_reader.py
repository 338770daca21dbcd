"""Coverage-guided fuzzing of :func:`loe_viz.io.read_triplets` (not part of the test run).

Every input is read with one of several option sets; the reader must either return triplets that
hold together (three distinct indices below ``n_items`` per row, one label per item) or raise
``ValueError``. Anything else, or a run that needs more than the memory limit, is a defect, saved
by libFuzzer as ``crash-*`` or ``oom-*``::

    pip install atheris
    python tests/fuzz_reader.py fuzz-corpus -max_total_time=600 -max_len=2048 -rss_limit_mb=2048
    python tests/fuzz_reader.py --numpy fuzz-corpus-numpy -max_total_time=600 -rss_limit_mb=2048

The first reads the input's bytes as a file (its first byte picks the options); an empty corpus
folder is seeded with the starts of the bundled samples and a few small files of every format.
``--numpy`` builds .npy files and .npz archives from the input instead (versions, dtypes,
declared shapes, member names, damaged headers and compressed data), which byte mutations of a
zip archive rarely reach. The compiled integer reader is left uninstrumented (numba compiles the
functions' bytecode), so the coverage is the Python readers'; ``tests/test_io.py`` checks that
the two agree. Found this way: a .npy header that raised ``tokenize.TokenError``, quoted fields
over line breaks (``IndexError``, wrong line numbers), a number among text categories
(``AttributeError``), a three-number file that declared 15 GB of labels with ``relabel=False``,
damaged compressed data (``zlib.error``), scalar ``X`` and ``y`` (``IndexError``) and labels that
are no Unicode characters (``SystemError``).
"""

from __future__ import annotations

import io
import os
import sys
import types
import warnings
import zipfile

import numpy as np

OPTIONS = [dict(), dict(errors="skip"), dict(item_type="str"), dict(layout="crowd"), dict(header=False),
           dict(n_items=7), dict(relabel=False), dict(delimiter=" "), dict(errors="skip", item_type="str"),
           dict(format="npz"), dict(answer="side", errors="skip"), dict(columns="head,near,far"),
           dict(labels=["a", "b", "c", "d", "e"]), dict(labels=[0, 1, 2, 3, 4, 5]), dict(encoding="utf-16"),
           dict(layout="list-count", errors="skip")]


NUMPY_OPTIONS = [dict(), dict(layout="list-boolean"), dict(n_items=7), dict(relabel=False),
                 dict(labels=["a", "b", "c", "d", "e", "f", "g"])]
DTYPES = ["<i4", "<i8", ">i8", "<u2", "|u1", "<f8", "|b1", "<U3", ">U2", "|S2", "<c16", "|O", "<M8[s]", "<i16"]
MEMBERS = ["triplets", "X", "y", "labels", "extra", "triplets.npy", "X.npy", "", "../x"]


def check(data: bytes) -> None:
    """Read ``data[1:]`` with the option set ``data[0]`` picks; fail on anything but a sound result or ValueError."""
    if data:
        _read_soundly(data[1:], OPTIONS[data[0] % len(OPTIONS)])


def check_numpy(data: bytes) -> None:
    """Read the .npy or .npz file that ``data`` describes (:func:`_npy`, :func:`_npz`) with options it picks."""
    import atheris

    fdp = atheris.FuzzedDataProvider(data)
    raw = _npy(fdp) if fdp.ConsumeBool() else _npz(fdp)
    _read_soundly(raw, fdp.PickValueInList(NUMPY_OPTIONS))


def _npy(fdp) -> bytes:
    """A .npy file: any version, dtype and declared shape, a header that may be garbage, a body that may fit."""
    version, dtype = fdp.PickValueInList([(1, 0), (2, 0), (3, 0), (9, 9)]), fdp.PickValueInList(DTYPES)
    shape = tuple(fdp.PickValueInList([0, 1, 2, 3, 5, 2**31, 2**62]) for _ in range(fdp.ConsumeIntInRange(0, 3)))
    fortran = fdp.ConsumeBool()
    header = fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 80)) if fdp.ConsumeIntInRange(0, 5) == 0 else repr(
        {"descr": dtype, "fortran_order": fortran, "shape": shape}).encode()
    header += b" " * fdp.ConsumeIntInRange(0, 4) + b"\n"
    body = fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 200))
    count = int(np.prod(shape, dtype=object))
    if fdp.ConsumeBool() and count <= 64 and dtype not in ("|O", "<i16"):
        try:
            body = (np.arange(count) % 7).astype(dtype).reshape(shape).tobytes(order="F" if fortran else "C")
        except ValueError:  # (0, 2**62): no array, even an empty one
            pass
    size = len(header).to_bytes(2 if version[0] == 1 else 4, "little")
    return b"\x93NUMPY" + bytes(version) + size + header + body


def _npz(fdp) -> bytes:
    """An archive of up to four members (.npy or not, any name), stored or deflated, perhaps one byte damaged."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", fdp.PickValueInList([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])) as zf:
        for _ in range(fdp.ConsumeIntInRange(0, 4)):
            name = fdp.PickValueInList(MEMBERS) or "a"
            zf.writestr(name, _npy(fdp) if fdp.ConsumeIntInRange(0, 4) else fdp.ConsumeBytes(20))
    raw = buf.getvalue()
    if fdp.ConsumeIntInRange(0, 6) == 0:
        i = fdp.ConsumeIntInRange(0, len(raw) - 1)
        raw = raw[:i] + bytes([raw[i] ^ 0x55]) + raw[i + 1:]
    return raw


def _read_soundly(raw: bytes, options: dict) -> None:
    from loe_viz.io import read_triplets

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = read_triplets(io.BytesIO(raw), **options)
    except ValueError:
        return
    T = got.triplets
    assert T.ndim == 2 and T.shape[1] == 3 and T.shape[0] >= 1 and T.dtype.kind == "i", T.shape
    assert T.min() >= 0 and T.max() < got.n_items and len(got.labels) == got.n_items
    assert ((T[:, 0] != T[:, 1]) & (T[:, 0] != T[:, 2]) & (T[:, 1] != T[:, 2])).all()


def seed(folder: str) -> None:
    """Starts of the bundled samples and small files of every format, each behind an option byte."""
    from loe_viz.data import SAMPLE_FILES, sample_path

    os.makedirs(folder, exist_ok=True)
    files = {name: b"\0" + sample_path(name).read_bytes()[:600] for name in SAMPLE_FILES if name.endswith(".csv")}
    files["crowd.csv"] = b"\0head,left,right,winner\nParis,Rome,Oslo,Rome\nRome,Oslo,Paris,left\n"
    files["space.txt"] = b"\x010 1 2\n3 4 5\n# c\n\n1 2 3\n"
    files["quoted.csv"] = b'\x02"a,b",c,d\ne,"f""g",h\n'
    files["count.csv"] = b"\x04i,j,k,y\n0,1,2,1\n2,3,4,-1\n"
    npy, npz = io.BytesIO(), io.BytesIO()
    np.save(npy, np.array([[0, 1, 2], [2, 3, 4]]))
    with zipfile.ZipFile(npz, "w") as zf:
        for key, arr in {"X": np.array([[0, 1, 2], [2, 3, 4]]), "y": np.array([True, False]),
                         "labels": np.array(["a", "b", "c", "d", "e"])}.items():
            with zf.open(key + ".npy", "w") as fh:
                np.lib.format.write_array(fh, arr, allow_pickle=False)
    files["t.npy"], files["t.npz"] = b"\0" + npy.getvalue(), b"\0" + npz.getvalue()
    for name, content in files.items():
        with open(os.path.join(folder, name), "wb") as fh:
            fh.write(content)


def main(argv) -> None:
    import atheris

    from loe_viz.io import arrays, layouts, read_triplets, reading

    read_triplets(io.BytesIO(b"0,1,2\n1,2,3\n"))  # compiles the integer reader before anything is instrumented
    for mod in (reading, layouts, arrays):
        for name, obj in list(vars(mod).items()):
            if isinstance(obj, types.FunctionType) and obj.__module__ == mod.__name__:
                setattr(mod, name, atheris.instrument_func(obj))
            elif isinstance(obj, type) and obj.__module__ == mod.__name__:
                for key, fn in list(vars(obj).items()):
                    if isinstance(fn, types.FunctionType):
                        setattr(obj, key, atheris.instrument_func(fn))
    numpy_files = "--numpy" in argv
    argv = [a for a in argv if a != "--numpy"]
    folders = [a for a in argv[1:] if not a.startswith("-")]
    if folders:  # libFuzzer needs the corpus folder to exist
        os.makedirs(folders[0], exist_ok=True)
    if not numpy_files and folders and not os.listdir(folders[0]):
        seed(folders[0])
    atheris.Setup(argv, check_numpy if numpy_files else check)
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)
