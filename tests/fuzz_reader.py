"""Coverage-guided fuzzing of :func:`loe_viz.io.read_triplets` (not part of the test run).

Every input is read with one of several option sets (its first byte picks which); the reader must
either return triplets that hold together (three distinct indices below ``n_items`` per row, one
label per item) or raise ``ValueError``. Anything else, or a run that needs more than the memory
limit, is a defect, saved by libFuzzer as ``crash-*`` or ``oom-*``::

    pip install atheris
    python tests/fuzz_reader.py fuzz-corpus -max_total_time=600 -max_len=2048 -rss_limit_mb=2048

An empty corpus folder is seeded with the starts of the bundled samples and a few small files of
every format. The compiled integer reader is left uninstrumented (numba compiles the functions'
bytecode), so the coverage is the Python readers'; ``tests/test_io.py`` checks that the two
agree. Found this way: a .npy header that raised ``tokenize.TokenError``, quoted fields over line
breaks (``IndexError``, wrong line numbers), a number among text categories (``AttributeError``)
and a three-number file that declared 15 GB of labels with ``relabel=False``.
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


def check(data: bytes) -> None:
    """Read ``data[1:]`` with the option set ``data[0]`` picks; fail on anything but a sound result or ValueError."""
    from loe_viz.io import read_triplets

    if not data:
        return
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = read_triplets(io.BytesIO(data[1:]), **OPTIONS[data[0] % len(OPTIONS)])
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
    folders = [a for a in argv[1:] if not a.startswith("-")]
    if folders and not (os.path.isdir(folders[0]) and os.listdir(folders[0])):
        seed(folders[0])
    atheris.Setup(argv, check)
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)
