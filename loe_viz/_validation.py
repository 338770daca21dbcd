"""Argument checks shared by every layer.

Each check raises ``ValueError`` whose message starts with the name of the
offending argument, so that the explorer can show it verbatim and tests can
match it exactly.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Mapping, Set as AbstractSet

import numpy as np

from ._threads import kind, side_by_side

__all__ = [
    "check_points",
    "check_triplets",
    "check_random_state",
    "check_int",
    "check_float",
    "check_n_jobs",
    "check_regularization",
    "check_landmarks",
    "index_dtype",
    "comparison_dtype",
    "MAX_JOBS",
]

#: The largest ``n_jobs`` accepted: each thread of the loss kernels keeps an (n, d) buffer.
MAX_JOBS = 1024
#: The largest ``n_jobs`` of LOE (landmark tasks at once, threads or an executor's workers).
MAX_LANDMARK_JOBS = 4096

#: From this many triplets on, ``check_triplets(..., threads=2)`` scans them as two halves side by side.
PARALLEL_SCAN_MIN = 1 << 18


def index_dtype(n_items: int) -> np.dtype:
    """The smallest of int32/int64 that holds indices below ``n_items``."""
    return np.dtype(np.int32) if n_items < 2**31 - 1 else np.dtype(np.int64)


def comparison_dtype(n_items: int) -> np.dtype:
    """The dtype of a landmark's ``(near, far)`` arrays inside a fit: uint16 up to 2**16 items, else
    :func:`index_dtype`.

    Every pass of a ranking streams these two arrays, and at half the bytes the passes that also
    compute a logistic per comparison (the gradient) run about 30 % faster (n = 1000, 2.8 * 10^5
    comparisons: 1.46 -> 1.03 ms). Whole fits on 2 threads, alternating, the same embeddings to the
    bit: stored triplets at n = 1000, C = 200 best 23.7 -> 19.8 ms; ``fit_oracle`` with the defaults
    at n = 1000, C = 200 50 -> 42 ms, n = 2 * 10^4, c = 50 310 -> 256 ms, n = 6 * 10^4 954 -> 829 ms.
    Only the fit's own buffers use it: arrays handed to the caller keep :func:`index_dtype`, where
    a difference of two indices cannot wrap around.
    """
    return np.dtype(np.uint16) if n_items <= 1 << 16 else index_dtype(n_items)


def check_landmarks(landmarks, n_items: int, bound: str | None = None) -> np.ndarray:
    """Distinct item indices below ``n_items``, in column order, as ``int64``; ``bound`` words the range in
    the error (default ``n_items=<n>``). Integral floats are taken as integers, as triplets are."""
    if isinstance(landmarks, (str, bytes, AbstractSet, Mapping)):  # as io's labels: no order, or no say which
        raise ValueError(f"landmarks must list item indices in column order (a list, tuple or array), got a "
                         f"{type(landmarks).__name__}")
    lm = np.asarray(landmarks)
    if lm.ndim != 1 or lm.size == 0:
        raise ValueError(f"landmarks must be a non-empty 1-D sequence of item indices, got shape {lm.shape}")
    if lm.dtype.kind not in "iuf":
        raise ValueError(f"landmarks must hold integer item indices, got dtype {lm.dtype}")
    if lm.dtype.kind == "f" and not (np.isfinite(lm) & (lm == np.round(lm))).all():
        raise ValueError("landmarks must hold integer item indices, got non-integer values")
    bad = lm[(lm < 0) | (lm >= n_items)]  # before any cast: 1e30 is no index, not a wrapped-around one
    if bad.size:
        raise ValueError(f"landmarks index {int(bad[0])} is out of range for {bound or f'n_items={n_items}'}")
    values, counts = np.unique(lm, return_counts=True)
    if values.size != lm.size:
        raise ValueError(f"landmarks must be distinct items, got {int(values[counts > 1][0])} more than once")
    return lm.astype(np.int64)


def check_random_state(random_state, stream: int | None = None, draw: bool = True) -> np.random.Generator | None:
    """Turn ``None``, an int, a ``SeedSequence``, a ``Generator`` or a ``RandomState`` into a ``Generator``.

    ``stream`` (an int) gives a seed a stream of its own, independent of
    ``default_rng(seed)``: a random start drawn as ``default_rng(seed).normal(...)``
    would be the very points ``make_points("gaussian", random_state=seed)`` draws
    (up to scale), which hands an optimiser seeded like its data the answer. A
    ``Generator`` is used as given (its owner decides what it has drawn).
    Anything else (a string, a float such as 1.5 or NaN, a bool) is a
    ``ValueError`` that says what was given. ``draw=False`` only checks: a ``RandomState``, whose
    Generator takes a draw from it, then gives None and is left as it was (a query such as
    ``estimate_resources`` must not change the next fit).
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1)) if draw else None
    integral = isinstance(random_state, numbers.Integral) and not isinstance(random_state, (bool, np.bool_))
    if random_state is None or integral or isinstance(random_state, np.random.SeedSequence):
        if integral and random_state < 0:
            raise ValueError(f"random_state must be a non-negative integer, got {random_state}")
        if stream is not None and random_state is not None:
            seq = random_state if isinstance(random_state, np.random.SeedSequence) else (
                np.random.SeedSequence(int(random_state)))
            random_state = np.random.SeedSequence(seq.entropy, spawn_key=seq.spawn_key + (stream,))
        return np.random.default_rng(random_state)
    shown = f" {random_state!r}" if isinstance(random_state, (str, bytes, numbers.Number, np.bool_)) else ""
    raise ValueError(
        f"random_state must be None, an int, a SeedSequence, a numpy Generator or a RandomState, "
        f"got {type(random_state).__name__}{shown}"
    )


def check_int(value, name: str, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """Validate an integer argument (bools are refused)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if not isinstance(value, bool) and isinstance(value, numbers.Real) and float(value).is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def check_n_jobs(value, name: str = "n_jobs", maximum: int = MAX_JOBS) -> int:
    """A number of threads: 1 to ``maximum``, or -1 for every core (returned as the core count)."""
    n_jobs = check_int(value, name, minimum=-1)
    if n_jobs == 0:
        raise ValueError(f"{name} must be a positive number of threads or -1 (every core), got 0")
    if n_jobs > maximum:
        raise ValueError(f"{name} must be <= {maximum} threads, got {n_jobs}")
    if n_jobs == -1:
        n_jobs = os.cpu_count() or 1
    return n_jobs


#: The smallest positive BTL regularization: below it the ranking's Newton solver
#: divides by the curvature of uncompared items (``lambda``) and overflows.
MIN_REGULARIZATION = 1e-50
#: The largest BTL regularization. A penalty of 1000 already pulls the scores of 345 comparisons per item
#: and landmark far enough towards 0 to cost LOE's embedding (Procrustes 0.087 against 0.004 at 1, n = 1000,
#: c = 50); at 1e50 the scores are rounding noise (Procrustes 0.999), and at 1e160 the gradient overflows.
MAX_REGULARIZATION = 1e6


def check_regularization(value, name: str = "regularization") -> float:
    """The BTL penalty ``lambda``: 0, or from :data:`MIN_REGULARIZATION` to :data:`MAX_REGULARIZATION`."""
    reg = check_float(value, name, minimum=0.0)
    if reg > MAX_REGULARIZATION:
        raise ValueError(
            f"{name} must be at most {MAX_REGULARIZATION:g} (a larger penalty pulls every ranking score to 0 "
            f"whatever the answers, and overflows the ranking's Newton solver), got {reg:g}"
        )
    if 0.0 < reg < MIN_REGULARIZATION:
        raise ValueError(
            f"{name} must be 0 or at least {MIN_REGULARIZATION:g} (smaller values overflow the ranking's "
            f"Newton solver for items a landmark never compared), got {reg:g}"
        )
    return reg


def check_float(
    value, name: str, *, minimum: float | None = None, maximum: float | None = None,
    strict_minimum: bool = False,
) -> float:
    """Validate a finite real argument."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    try:
        value = float(value)
    except OverflowError:  # an int beyond the floats (10**400): as infinite as float("inf")
        digits = int(abs(int(value)).bit_length() * 0.30103) + 1  # str() refuses ints beyond 4,300 digits
        raise ValueError(f"{name} must be finite, got an integer of about {digits:,} digits") from None
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    if minimum is not None:
        if strict_minimum and value <= minimum:
            raise ValueError(f"{name} must be > {minimum}, got {value}")
        if not strict_minimum and value < minimum:
            raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def _scan(arr, threads):
    """:func:`loe_viz.kernels.triplets.scan` of ``arr``, as two halves side by side when it pays."""
    from .kernels.triplets import scan  # numba: imported by the first check, not by every import of this module
    if threads < 2 or arr.shape[0] < PARALLEL_SCAN_MIN:
        return tuple(int(v) for v in scan(arr))
    half = arr.shape[0] // 2
    (lo, hi, bad), (lo2, hi2, bad2) = side_by_side(kind("scan", arr), lambda: scan(arr[:half]),
                                                   lambda: scan(arr[half:]))
    return int(min(lo, lo2)), int(max(hi, hi2)), int(bad if bad >= 0 else half + bad2 if bad2 >= 0 else -1)


def check_points(X, name: str = "X", *, min_points: int = 1) -> np.ndarray:
    """A finite float64 array of shape (n, d)."""
    try:
        raw = np.asarray(X)
        arr = None if raw.dtype.kind == "c" else np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric array of shape (n_points, n_dims): {exc}") from None
    if arr is None:  # NumPy would drop the imaginary parts with a mere warning
        raise ValueError(f"{name} must hold real numbers, got dtype {raw.dtype}")
    if arr.ndim == 1:
        raise ValueError(
            f"{name} must be 2-D of shape (n_points, n_dims), got 1-D with {arr.shape[0]} values; "
            "use X.reshape(-1, 1) for one-dimensional points"
        )
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D of shape (n_points, n_dims), got shape {arr.shape}")
    if arr.shape[0] < min_points:
        raise ValueError(f"{name} must have at least {min_points} points, got {arr.shape[0]}")
    if arr.shape[1] < 1:
        raise ValueError(f"{name} must have at least one column, got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        row = int(np.argwhere(bad)[0, 0])
        kind = "NaN" if np.isnan(arr[bad]).any() else "infinite"
        raise ValueError(f"{name} contains {kind} values (first at row {row})")
    return np.ascontiguousarray(arr)


def _nullable_frame(triplets, name: str):
    """A pandas frame of nullable integer columns ('Int64', which NumPy would hold as objects, one Python int at a
    time: 13 s for 5 * 10^6 rows) as an int64 array at once; a missing value named with its row. Else as given."""
    dtypes = getattr(triplets, "dtypes", None)
    if dtypes is None or isinstance(triplets, np.ndarray) or not hasattr(dtypes, "__iter__"):
        return triplets
    dtypes = list(dtypes)
    if not all(getattr(dt, "kind", "") in "iu" for dt in dtypes) or all(isinstance(dt, np.dtype) for dt in dtypes):
        return triplets
    missing = np.asarray(triplets.isna()).any(axis=1)
    if missing.any():
        raise ValueError(f"{name} has a missing value at row {int(np.argmax(missing))}: drop or fill the rows with "
                         "missing values (pandas: .dropna())")
    return triplets.to_numpy(dtype=np.int64)


def _integers_of_objects(arr: np.ndarray, name: str) -> np.ndarray:
    """An object array of integers (a pandas nullable-integer frame, lists of Python ints) as int64; a missing value
    or anything else named with its row."""
    flat = arr.reshape(-1)
    for t, v in enumerate(flat.tolist()):
        if isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_)):
            continue
        row = t // arr.shape[-1] if arr.ndim == 2 and arr.shape[-1] else t
        if v is None or type(v).__name__ == "NAType" or (isinstance(v, float) and math.isnan(v)):
            raise ValueError(f"{name} has a missing value at row {row}: drop or fill the rows with missing values "
                             "(pandas: .dropna())")
        raise ValueError(f"{name} must be an integer array of shape (m, 3), got {type(v).__name__} values "
                         f"(first at row {row}: {v!r:.60})")
    try:
        return arr.astype(np.int64)
    except OverflowError:
        raise ValueError(f"{name} holds an integer too large for an item index (at most 2**63 - 1)") from None


#: Bytes each item takes at the least in any fit (its coordinates and gradient, or its count and
#: distances): a fit of more items than the available memory over this cannot even start.
MIN_ITEM_BYTES = 32


def check_triplets(triplets, n_items: int | None = None, name: str = "triplets",
                   threads: int = 1, fit: bool = False) -> tuple[np.ndarray, int]:
    """Validate list-order triplets and return ``(triplets, n_items)``.

    Parameters
    ----------
    triplets : array-like of shape (m, 3), or TripletData
        Row ``(i, j, k)`` says item ``i`` is closer to ``j`` than to ``k``. What
        :func:`loe_viz.read_triplets` returns is taken with its ``n_items``.
    n_items : int, optional
        Number of items; inferred as ``max index + 1`` when omitted.
    threads : int, default 1
        With 2 or more and at least ``PARALLEL_SCAN_MIN`` triplets, the scan runs as two
        halves side by side (the same checks and messages).
    fit : bool, default False
        The triplets are about to be fitted: refuse more items than the available memory
        holds at ``MIN_ITEM_BYTES`` each (before any per-item array is allocated).

    Returns
    -------
    triplets : ndarray of shape (m, 3), C-contiguous, int32 or int64
    n_items : int
    """
    from .io.layouts import TripletData

    if isinstance(triplets, TripletData):  # read_triplets(...): its items include those in no triplet
        if n_items is not None and check_int(n_items, "n_items", minimum=3) != triplets.n_items:
            raise ValueError(f"n_items={n_items} does not match the {triplets.n_items} items read from "
                             f"{triplets.source}; leave n_items out to use them")
        triplets, n_items = triplets.triplets, triplets.n_items
    if triplets is None:
        raise ValueError(f"{name} is None: pass an integer array of shape (m, 3) (list-order: i is closer to j than "
                         "to k) or what loe_viz.read_triplets returns")
    triplets = _nullable_frame(triplets, name)
    try:
        arr = np.asarray(triplets)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an integer array of shape (m, 3), got ragged rows") from None
    if arr.dtype == object:  # a pandas nullable-integer frame ('Int64') gives Python ints, and pd.NA where missing
        arr = _integers_of_objects(arr, name)
    if arr.ndim != 2 or arr.shape[1] != 3:
        raise ValueError(f"{name} must have shape (m, 3), got {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} is empty: at least one triplet is needed")
    if arr.dtype.kind == "f":
        if not (finite := np.isfinite(arr)).all():
            row = int(np.argmin(finite.all(axis=1)))
            kind = "a missing value (NaN)" if np.isnan(arr[row]).any() else "an infinite value"
            raise ValueError(f"{name} has {kind} at row {row}: drop or fill the rows with missing values "
                             "(pandas: .dropna())")
        if not (whole := arr == np.round(arr)).all():
            row = int(np.argmin(whole.all(axis=1)))
            raise ValueError(f"{name} must hold integer item indices, got non-integer values (first at row {row}: "
                             f"{arr[row].tolist()})")
    elif arr.dtype.kind not in "iu":
        raise ValueError(f"{name} must hold integer item indices, got dtype {arr.dtype}")
    if arr.dtype == np.uint64 and arr.size and arr.max() > np.iinfo(np.int64).max:
        row = int(np.argwhere(arr > np.iinfo(np.int64).max)[0, 0])
        raise ValueError(
            f"{name} index {int(arr.max())} is too large for an item index (at most 2**63 - 1; first at row {row})"
        )
    if arr.dtype.kind == "f" or arr.dtype.itemsize > 8 or arr.dtype == np.uint64:
        arr = arr.astype(np.int64)
    if not arr.dtype.isnative:  # big-endian data (FITS, HDF5, another machine's .npy): numba takes native order
        arr = arr.astype(arr.dtype.newbyteorder("="))
    arr = np.ascontiguousarray(arr)
    lo, hi, bad = _scan(arr, threads)
    if lo < 0:
        row, col = (int(v) for v in np.argwhere(arr < 0)[0])
        first = int(arr[row, col])  # the first one met, in the row named; the smallest may lie further on
        raise ValueError(f"{name} contains a negative index ({first}) at row {row}"
                         + (f"; the smallest is {lo}" if lo != first else ""))
    if bad >= 0:  # before the n_items checks: [[0, 0, 1]] has a repeat, not too few items
        row = tuple(int(v) for v in arr[bad])
        item = row[1] if row[1] in (row[0], row[2]) else row[0]
        raise ValueError(
            f"{name} row {bad} repeats an item ({item}): {row}; a triplet needs three distinct items"
        )
    given = n_items is not None
    if n_items is None:
        n_items = hi + 1
    else:
        n_items = check_int(n_items, "n_items", minimum=3)
        if hi >= n_items:
            row, col = (int(v) for v in np.argwhere(arr >= n_items)[0])
            first = int(arr[row, col])
            raise ValueError(f"{name} index {first} is out of range for n_items={n_items} (first at row {row}"
                             + (f"; the largest is {hi})" if hi != first else ")"))
    if n_items < 3:
        raise ValueError(f"n_items must be >= 3, got {n_items}")
    if fit:
        _check_item_memory(n_items, given)
    out = arr if arr.dtype == index_dtype(n_items) else arr.astype(index_dtype(n_items))
    return out, n_items


#: Below this share of ``n_items`` appearing in any triplet, a fit that needs 1 GiB or more says that most
#: of its memory goes to items that appear in no triplet (a stray large id, or ids that were never relabelled).
SPARSE_ITEMS = 0.01


def _check_item_memory(n_items: int, given: bool, item_bytes: int = MIN_ITEM_BYTES, who: str | None = None,
                       triplets: np.ndarray | None = None, warn: bool = True, stacklevel: int = 3) -> str | None:
    """Refuse, before anything of size ``n_items`` is allocated, more items than memory can hold.

    A stray large index in a small array (``[[0, 1, 2_000_000_000]]``) makes ``n_items`` two
    billion; every fit then allocates per-item arrays of tens of GiB and fails late, or is killed.

    With the defaults this is the floor of every fit (``MIN_ITEM_BYTES`` per item). An estimator
    that knows its own peak bytes per item passes them as ``item_bytes``, says what it is in ``who``
    (e.g. ``"STE at n_components=2"``) and gives its validated ``triplets``: its refusal then names
    the largest index and its row and how many items appear in any triplet, and a fit that memory
    can hold but that spends 1 GiB or more on items mostly in no triplet (fewer than
    ``SPARSE_ITEMS`` of them appear in one) is warned about (``warn=False``: its text is returned instead,
    for a caller that warns once its other checks have passed).
    """
    need = n_items * item_bytes
    if need < 1 << 30:  # below 1 GiB: not worth a look at the system's memory
        return
    from ._format import format_bytes
    from .resources import available_memory

    avail = available_memory()
    if who is None:
        if avail is not None and need > avail:
            where = "as given" if given else "the largest index + 1"
            raise ValueError(
                f"n_items={n_items:,} ({where}) needs at least {format_bytes(need)} for the items' own arrays, "
                f"more than the {format_bytes(avail)} of memory available; items are indices 0..n_items-1, so "
                "map sparse ids to 0..k-1 first (read_triplets does)"
            )
        return
    flat = triplets.ravel()
    top = int(np.argmax(flat))  # the first occurrence of the largest index
    hi, row = int(flat[top]), top // triplets.shape[1]
    if 8 * flat.size < n_items:  # a sorted copy of the indices is the smaller: a stray id of 4e10 is 37 GiB of flags
        used = int(np.unique(flat).size)
    else:  # one byte per item, at most 24 per triplet
        seen = np.zeros(n_items, dtype=np.bool_)
        seen[flat] = True
        used = int(np.count_nonzero(seen))
        del seen
    few = used < SPARSE_ITEMS * n_items
    share = f"only {used:,} of the items ({100 * used / n_items:.2g} %) appear in any triplet"
    if n_items == hi + 1:
        where = f"the largest index + 1; index {hi:,} is in row {row:,}"
        fix = "items are indices 0..n_items-1, so map sparse ids to 0..k-1 first (read_triplets does)"
    else:
        where = f"as given; the largest index is {hi:,}"
        fix = (f"pass fewer items (n_items={hi + 1:,} covers every index in the triplets), or map sparse ids to "
               "0..k-1 first (read_triplets does)")
    if avail is not None and need > avail:
        raise ValueError(
            f"n_items={n_items:,} ({where}) needs about {format_bytes(need)} for {who} "
            f"({format_bytes(item_bytes)} per item), more than the {format_bytes(avail)} of memory available; "
            + (f"{share}: {fix}" if few else
               "fit fewer items or in fewer dimensions (n_components), or on a machine with more memory")
        )
    if few:
        import warnings

        note = (f"n_items={n_items:,} ({where}) makes {who} allocate about {format_bytes(need)} "
                f"({format_bytes(item_bytes)} per item), yet {share} (the others keep their starting positions): "
                f"{fix}")
        if not warn:
            return note
        warnings.warn(note, stacklevel=stacklevel)
    return None
