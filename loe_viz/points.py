"""Ground-truth point configurations.

Every generator is seeded through ``random_state`` and returns a C-contiguous
float64 array of shape ``(n, d)``.
"""

from __future__ import annotations

import array
import io
import itertools
import math
import os
import warnings

import numpy as np

from ._validation import check_float, check_int, check_points, check_random_state

__all__ = ["POINT_KINDS", "make_points", "load_points"]

#: Names accepted by :func:`make_points`.
#: Largest grid (bytes of its coordinates) that ``make_points("grid", ...)`` builds whole before picking its nodes.
_GRID_BYTES = 64 << 20
POINT_KINDS = ("gaussian", "uniform", "circle", "blobs", "moons", "spiral", "grid", "swiss_roll")

# Kinds whose intrinsic construction fixes the ambient dimension.
_FIXED_DIM = {"moons": 2, "spiral": 2, "swiss_roll": 3}


def _pad(X: np.ndarray, d: int, rng: np.random.Generator, jitter: float = 0.0) -> np.ndarray:
    """Embed 2-D/3-D constructions in d >= their dimension (extra axes get small jitter)."""
    if X.shape[1] == d:
        return X
    extra = jitter * rng.standard_normal((X.shape[0], d - X.shape[1]))
    return np.hstack([X, extra])


def min_dimensions(kind: str) -> int:
    """The smallest ``d`` that :func:`make_points` draws points of ``kind`` in."""
    return _FIXED_DIM.get(kind, 2 if kind == "circle" else 1)


def make_points(kind: str, n: int, d: int = 2, random_state=None, *, noise: float = 0.05) -> np.ndarray:
    """Draw a ground-truth point configuration.

    Parameters
    ----------
    kind : str
        One of :data:`POINT_KINDS`:

        - ``"gaussian"``: the paper's ``x ~ N(0, I_d / (2d))`` (so ``E ||x_i - x_j||^2 = 1``);
        - ``"uniform"``: uniform in the cube ``[-1/2, 1/2]^d``;
        - ``"circle"``: points on the unit circle (first two axes) with radial ``noise``;
        - ``"blobs"``: four Gaussian clusters with means on a simplex-like frame;
        - ``"moons"``: two interleaved half circles (2-D);
        - ``"spiral"``: an Archimedean spiral (2-D);
        - ``"grid"``: the regular grid with ``ceil(n ** (1/d))`` points a side, first ``n`` points
          in a random order;
        - ``"swiss_roll"``: the 3-D Swiss roll.
    n : int
        Number of points, at least 2.
    d : int, default 2
        Ambient dimension. ``moons`` and ``spiral`` need ``d >= 2`` and ``swiss_roll`` needs
        ``d >= 3``; their extra axes carry ``noise``-sized jitter.
    random_state : None, int, SeedSequence, numpy.random.Generator or RandomState
        Seed of the draw.
    noise : float, default 0.05
        Noise level of the curve-like kinds (circle, moons, spiral, swiss_roll).

    Returns
    -------
    X : ndarray of shape (n, d)

    Examples
    --------
    >>> X = make_points("gaussian", 1000, d=2, random_state=0)
    >>> X.shape
    (1000, 2)
    """
    if not isinstance(kind, str) or kind not in POINT_KINDS:
        raise ValueError(f"kind must be one of {', '.join(POINT_KINDS)}; got {kind!r}")
    kind = str(kind)  # numpy's str_ too, named as a plain string in messages
    n = check_int(n, "n", minimum=2)
    d = check_int(d, "d", minimum=1)
    need = min_dimensions(kind)
    if d < need:
        raise ValueError(f"d must be >= {need} for kind={kind!r}, got {d}")
    noise = check_float(noise, "noise", minimum=0.0)
    rng = check_random_state(random_state)

    if kind == "gaussian":
        X = rng.standard_normal((n, d)) / np.sqrt(2.0 * d)
    elif kind == "uniform":
        X = rng.uniform(-0.5, 0.5, size=(n, d))
    elif kind == "circle":
        t = rng.uniform(0.0, 2.0 * np.pi, n)
        r = 1.0 + noise * rng.standard_normal(n)
        X = _pad(np.column_stack([r * np.cos(t), r * np.sin(t)]), d, rng, noise)
    elif kind == "blobs":
        k = 4
        centres = 1.5 * rng.standard_normal((k, d)) / np.sqrt(d)
        labels = rng.integers(0, k, n)
        X = centres[labels] + 0.25 * rng.standard_normal((n, d)) / np.sqrt(d)
    elif kind == "moons":
        n1 = n // 2
        t1 = rng.uniform(0.0, np.pi, n1)
        t2 = rng.uniform(0.0, np.pi, n - n1)
        a = np.column_stack([np.cos(t1), np.sin(t1)])
        b = np.column_stack([1.0 - np.cos(t2), 0.5 - np.sin(t2)])
        X = np.vstack([a, b]) + noise * rng.standard_normal((n, 2))
        X = _pad(X[rng.permutation(n)], d, rng, noise)
    elif kind == "spiral":
        t = np.sqrt(rng.uniform(0.0, 1.0, n)) * 3.0 * np.pi
        X = np.column_stack([t * np.cos(t), t * np.sin(t)]) / (3.0 * np.pi)
        X = _pad(X + noise * rng.standard_normal((n, 2)) / 3.0, d, rng, noise)
    elif kind == "grid":
        side = int(np.ceil(n ** (1.0 / d) - 1e-9))
        axis = np.linspace(-0.5, 0.5, side)
        nodes = side ** d  # an int: 2**21 nodes for n = 100 at d = 21, beyond any memory at d = 40
        if nodes * d * 8 <= _GRID_BYTES or nodes < 2 * n:  # the whole grid (at most twice X), n of its nodes
            G = np.stack(np.meshgrid(*[axis] * d, indexing="ij"), axis=-1).reshape(-1, d)
            X = G[rng.permutation(G.shape[0])[:n]]
        else:  # n distinct nodes drawn by their coordinates, without building the grid (over half are new)
            picked = np.empty((0, d), dtype=np.int64)
            while picked.shape[0] < n:
                more = rng.integers(side, size=(2 * (n - picked.shape[0]), d))
                both = np.concatenate([picked, more])
                _, first = np.unique(both, axis=0, return_index=True)
                picked = both[np.sort(first)][:n]
            X = axis[picked]
    else:  # swiss_roll
        t = 1.5 * np.pi * (1.0 + 2.0 * rng.uniform(0.0, 1.0, n))
        h = 21.0 * rng.uniform(0.0, 1.0, n)
        X = np.column_stack([t * np.cos(t), h, t * np.sin(t)]) / 10.0
        X = _pad(X + noise * rng.standard_normal((n, 3)), d, rng, noise)
    return np.ascontiguousarray(X, dtype=np.float64)


#: Points whose largest coordinate is between ``2**-DISTANCE_EXPONENT_BAND`` and ``2**DISTANCE_EXPONENT_BAND`` in absolute
#: value (about 1e-77 to 1e77) have squared distances that neither overflow nor underflow in float64, in any
#: dimension; :func:`distance_exponent` leaves them as they are.
DISTANCE_EXPONENT_BAND = 256


def scale_exponent(X) -> int:
    """The power of two ``e`` with the largest absolute coordinate of ``X`` in ``[2**(e - 1), 2**e)``; 0 when every
    coordinate is 0."""
    top = float(np.max(np.abs(X))) if np.size(X) else 0.0
    return math.frexp(top)[1] if top > 0.0 else 0


def distance_exponent(X) -> int:
    """The power of two ``e`` to divide ``X`` by (``np.ldexp(X, -e)``) before comparing squared distances; 0 when
    there is no need.

    A squared distance is a sum of squared coordinate differences: with coordinates beyond about 1e154 it
    overflows to ``inf``, below about 1e-154 it falls to 0, and every comparison of two distances is then a tie.
    Dividing by a power of two changes no digit of a coordinate (only its exponent; coordinates below
    ``2**-1022`` times the largest, negligible beside it, lose digits), so every comparison of distances comes
    out as it would with unbounded exponents. Points whose largest coordinate lies within
    ``2**-DISTANCE_EXPONENT_BAND .. 2**DISTANCE_EXPONENT_BAND`` are compared as given (``e = 0``), bit for bit
    as before; others are brought to a largest coordinate in ``[0.5, 1)``.

    Examples
    --------
    >>> X = np.array([[0.0, 1e200], [3e200, 0.0]])
    >>> e = distance_exponent(X)
    >>> e, float(np.abs(np.ldexp(X, -e)).max())
    (666, 0.9798151324726952)
    >>> distance_exponent(np.array([[0.5, 2.0]]))
    0
    """
    e = scale_exponent(X)
    return e if abs(e) > DISTANCE_EXPONENT_BAND else 0


def _load_npy(path, label: str) -> np.ndarray:
    """The array of a .npy file, its header checked first: a file of 192 bytes declaring 745 GiB asked
    NumPy for that memory (a MemoryError) before it found the data missing."""
    from .io.arrays import read_header

    with open(path, "rb") as fh:
        shape, dtype, nbytes = read_header(fh, label, "the array")
        left = os.fstat(fh.fileno()).st_size - fh.tell()
        if nbytes > left:  # (an object array NumPy refuses below: allow_pickle=False)
            raise ValueError(f"{label}: not a valid .npy file: its header declares shape {shape} of {dtype}, "
                             f"{nbytes:,} bytes, but only {left:,} follow")
        fh.seek(0)
        try:
            return np.load(fh, allow_pickle=False)
        except ValueError as exc:
            raise ValueError(f"{label}: not a numeric .npy array ({exc})") from None


def _content_lines(text: str):
    """``(line number from 1, stripped line)`` of each line of ``text`` that is neither blank nor a comment
    ('#' first), one at a time: lines end at ``\\n``, ``\\r\\n`` or ``\\r``."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")  # the same str when there is no '\r'
    no, pos, size = 0, 0, len(text)
    while pos <= size:
        end = text.find("\n", pos)
        end = size if end < 0 else end
        no += 1
        line = text[pos:end].strip()
        if line and not line.startswith("#"):
            yield no, line
        pos = end + 1


def _split(line: str, delim: str | None) -> list[str]:
    return [f.strip() for f in (line.split(delim) if delim else line.split())]


def _numeric(fields) -> bool:
    try:
        [float(f) for f in fields]
        return True
    except ValueError:
        return False


def _read_bulk(raw: bytes, delim: str | None, skip: int) -> np.ndarray | None:
    """The rows after the first ``skip`` lines of ``raw`` as NumPy's reader reads them, or None when it refuses
    them.

    NumPy's reader parses each number as ``float`` does and keeps only the array. It takes the common table
    (one delimiter, no blank or comment line among the rows, no quotes); any other text, at fault or not
    (``float`` alone takes ``1_000`` and non-ASCII digits), is left to :func:`_read_lines`.
    """
    stream = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8-sig", newline=None)  # decoded block by block
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "input contained no data": a header alone, said by _read_lines
        try:
            X = np.loadtxt(stream, dtype=np.float64, delimiter=delim, comments=None, skiprows=skip,
                           quotechar=None, ndmin=2)
        except ValueError:
            return None
    return X if X.shape[0] else None


def _read_lines(lines, delim: str | None, label: str) -> np.ndarray:
    """The table of ``lines`` (``(line number, line)`` pairs after the header) read one line at a time into
    one buffer of numbers; the first line at fault is named."""
    values = array.array("d")
    width = None
    for lineno, ln in lines:
        fields = _split(ln, delim)
        if width is None:
            width = len(fields)
        if len(fields) != width:
            raise ValueError(f"{label}: line {lineno} has {len(fields)} columns, expected {width}")
        try:
            values.extend([float(f) for f in fields])
        except ValueError:
            # the cell itself, not the line (a tab-separated line was quoted as '3\tfour')
            col = next(j for j, f in enumerate(fields) if not _numeric([f]))
            cell = "".join(c if c.isprintable() else "?" for c in fields[col].strip()[:40])
            what = "is empty" if not cell else f"holds '{cell}'{'…' if len(fields[col].strip()) > 40 else ''}"
            raise ValueError(f"{label}: line {lineno}, column {col + 1} {what}, not a number") from None
    if width is None:
        raise ValueError(f"{label}: the file has a header but no rows")
    return np.frombuffer(values, dtype=np.float64).reshape(-1, width)


def load_points(source, *, name: str | None = None) -> np.ndarray:
    """Read a point table from CSV (an optional header row, numeric columns).

    Parameters
    ----------
    source : path, str of CSV text, bytes or file-like
        A path to a ``.csv``/``.tsv``/``.txt`` or ``.npy`` file, or the file's content.
    name : str, optional
        Name used in error messages (defaults to the path or ``"points"``).

    Returns
    -------
    X : ndarray of shape (n, d)

    Raises
    ------
    ValueError
        When the content is not a finite numeric table with at least three rows.

    Notes
    -----
    The numbers are read in bulk (a few times the file's size in memory at most); a table NumPy's reader
    refuses is read again line by line, to take what ``float`` takes or to name the line at fault.
    """
    label = name
    if isinstance(source, (str, os.PathLike)) and os.path.exists(source):
        label = label or os.path.basename(os.fspath(source))
        if os.fspath(source).endswith(".npy"):
            return check_points(_load_npy(source, label), name=label, min_points=3)
        with open(source, "rb") as fh:
            raw = fh.read()
    elif isinstance(source, bytes):
        raw = source
    elif isinstance(source, str):
        raw = source.encode()
    elif hasattr(source, "read"):
        raw = source.read()
        raw = raw.encode() if isinstance(raw, str) else raw
    else:
        raise ValueError(f"points source must be a path, text, bytes or a file object, got {type(source).__name__}")
    label = label or "points"
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValueError(f"{label}: not a text file (it is not UTF-8)") from None
    lines = _content_lines(text)  # physical line numbers (1-based) for error messages
    first = next(lines, None)
    if first is None:
        raise ValueError(f"{label}: the file is empty")
    lineno, ln = first
    delim = "\t" if "\t" in ln else ("," if "," in ln else (";" if ";" in ln else None))
    header = not _numeric(_split(ln, delim))
    X = _read_bulk(raw, delim, lineno - 1 + header)
    if X is None:
        X = _read_lines(lines if header else itertools.chain([first], lines), delim, label)
    return check_points(X, name=label, min_points=3)
