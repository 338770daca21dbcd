"""Quality of an embedding against ground truth, or against triplets."""

from __future__ import annotations

import re

import numpy as np

from ._validation import check_int, check_points, check_random_state, check_triplets, index_dtype
from .kernels import sampling
from .points import distance_exponent, scale_exponent

__all__ = ["procrustes_error", "align", "triplet_error", "triplet_accuracy"]


def _check_pair(X, Z):
    X = check_points(X, "X")
    Z = check_points(Z, "Z")
    if X.shape[0] != Z.shape[0]:
        raise ValueError(f"Z must have as many rows as X ({X.shape[0]}), got {Z.shape[0]}")
    d = max(X.shape[1], Z.shape[1])
    # compare in the larger dimension: pad the smaller with zero columns
    if X.shape[1] < d:
        X = np.hstack([X, np.zeros((X.shape[0], d - X.shape[1]))])
    if Z.shape[1] < d:
        Z = np.hstack([Z, np.zeros((Z.shape[0], d - Z.shape[1]))])
    return X, Z


def unit_frame(A):
    """``(U, e, norm)``: ``A`` centred and of unit Frobenius norm, with ``A - mean = U * norm * 2**e``; None when
    every row of ``A`` is the same point.

    Computed in copies divided by powers of two (which change no digit of a coordinate), so that no sum of
    squares overflows (coordinates beyond about 1e154) or vanishes (below about 1e-154): ``U`` is the same
    for ``A`` and ``c * A`` at any finite scale ``c``, and bit for bit what plain arithmetic gives where that
    does not overflow.
    """
    if (A == A[0]).all():  # exactly: the mean of 80 copies of 0.1 is not always 0.1
        return None
    e1 = scale_exponent(A)
    C = np.ldexp(A, -e1)  # largest coordinate in [0.5, 1): the mean cannot overflow
    C -= C.mean(axis=0)
    e2 = scale_exponent(C)  # the spread may be far below the coordinates themselves
    if not C.any():  # rows apart by less than 2**-1074 of the largest coordinate
        return None
    C = np.ldexp(C, -e2)
    norm = float(np.linalg.norm(C))  # in [0.5, sqrt(n d)]
    return C / norm, e1 + e2, norm


def _standardise(A, message="X and Z must each contain more than one distinct point"):
    frame = unit_frame(A)
    if frame is None:
        raise ValueError(message)
    return frame[0]


def align(X, Z):
    """Move ``Z`` onto ``X`` by the best translation, rotation/reflection and scaling.

    Parameters
    ----------
    X : array-like (n, d)
        Reference (ground truth).
    Z : array-like (n, d')
        Embedding to align.

    Returns
    -------
    Z_aligned : ndarray (n, max(d, d'))
        ``Z`` in the frame and scale of ``X``.
    per_point_error : ndarray (n,)
        Euclidean distance from each point of ``X`` to its aligned estimate.
    """
    X, Z = _check_pair(X, Z)
    frame = unit_frame(X)
    if frame is None:
        raise ValueError("X and Z must each contain more than one distinct point")
    A, e, nx = frame
    B = _standardise(Z)
    U, s, Vt = np.linalg.svd(A.T @ B)
    R = (U @ Vt).T
    # in X's coordinates divided by 2**e1 (its largest in [0.5, 1)), where nothing overflows or vanishes
    e1 = scale_exponent(X)
    Xs = np.ldexp(X, -e1)
    Zs = np.ldexp((B @ R) * s.sum() * nx, e - e1) + Xs.mean(axis=0)
    return np.ldexp(Zs, e1), np.ldexp(np.linalg.norm(Zs - Xs, axis=1), e1)


def procrustes_error(X, Z) -> float:
    """Procrustes disparity between ground truth ``X`` and embedding ``Z``.

    The sum of squared differences between the standardised ``X`` and the best
    translated, rotated/reflected and scaled ``Z`` (``scipy.spatial.procrustes``'s
    disparity): 0 is a perfect recovery, 1 is no better than a point. Like the
    disparity itself, the result does not depend on the scale of either
    argument, however large or small (coordinates of 1e200 or 1e-200 included).

    Parameters
    ----------
    X, Z : array-like of shape (n, d)

    Returns
    -------
    float
    """
    X, Z = _check_pair(X, Z)
    A = _standardise(X)
    B = _standardise(Z)
    s = np.linalg.svd(A.T @ B, compute_uv=False)
    return float(max(0.0, 1.0 - s.sum() ** 2))


def triplet_error(X, Z, n_test: int = 10_000, random_state=None) -> float:
    """Fraction of random noiseless triplets of ``X`` that ``Z`` answers wrongly.

    Parameters
    ----------
    X : array-like (n, d)
        Ground truth.
    Z : array-like (n, d')
        Embedding.
    n_test : int, default 10_000
        Number of uniformly random triplets (distinct items) drawn.
    random_state : None, int, SeedSequence, numpy.random.Generator or RandomState

    Returns
    -------
    float in [0, 1]
    """
    X = check_points(X, "X", min_points=3)
    Z = check_points(Z, "Z")
    if X.shape[0] != Z.shape[0]:
        raise ValueError(f"Z must have as many rows as X ({X.shape[0]}), got {Z.shape[0]}")
    n_test = check_int(n_test, "n_test", minimum=1)
    seed = np.uint64(check_random_state(random_state).integers(0, 2**63 - 1))
    T = np.empty((n_test, 3), dtype=index_dtype(X.shape[0]))
    sampling.uniform_triplets(_comparable(X), n_test, 0.0, seed, T)
    return 1.0 - sampling.triplet_agreement(_comparable(Z), T)


def _comparable(P: np.ndarray) -> np.ndarray:
    """``P``, or ``P`` divided by a power of two where its squared distances would overflow or vanish (see
    :func:`loe_viz.points.distance_exponent`): the same comparisons of distances, at any finite scale."""
    e = distance_exponent(P)
    return np.ldexp(P, -e) if e else P


def triplet_accuracy(Z, triplets) -> float:
    """Fraction of list-order ``triplets`` that the embedding ``Z`` satisfies (ties count half).

    Parameters
    ----------
    Z : array-like (n, d)
    triplets : int array-like (m, 3), list-order

    Returns
    -------
    float in [0, 1]
    """
    Z = check_points(Z, "Z")
    try:
        T, _ = check_triplets(triplets, n_items=Z.shape[0])
    except ValueError as exc:
        if Z.shape[1] == 3 and np.ndim(triplets) == 2 and np.shape(triplets)[1] != 3:  # the two swapped?
            raise ValueError(f"{exc} (triplet_accuracy takes the embedding first, then the triplets)") from None
        raise ValueError(_in_rows_of_z(str(exc), Z.shape[0])) from None
    return float(sampling.triplet_agreement(_comparable(Z), T))


def _in_rows_of_z(message: str, n: int) -> str:
    """check_triplets' message in the terms of an embedding: its ``n_items`` is the number of rows of ``Z``, an
    argument the caller did not pass."""
    message = re.sub(r"\bis out of range for n_items=\d+", f"is out of range for Z, whose {n} rows are items 0..{n - 1}",
                     message)
    message = re.sub(r"^n_items must be >= 3, got \d+$", f"Z must have at least 3 rows (items), got {n}", message)
    return re.sub(r"^n_items=\d+ does not match the (\d+) items read from (.*); leave n_items out to use them$",
                  rf"Z has {n} rows but the triplets read from \2 name \1 items", message)


def sample_rows(n: int, k: int, random_state=None) -> np.ndarray:
    """``min(n, k)`` distinct row indices, for measuring errors on a sample at large n."""
    n = check_int(n, "n", minimum=1)
    k = check_int(k, "k", minimum=1)
    if k >= n:
        return np.arange(n)
    return np.sort(check_random_state(random_state).choice(n, size=k, replace=False))
