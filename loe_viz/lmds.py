"""Stage 4: landmark multidimensional scaling (de Silva & Tenenbaum, 2004)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .kernels import linalg

__all__ = ["LMDSResult", "landmark_mds", "DimensionError"]


class DimensionError(ValueError):
    """The landmark distances support fewer positive dimensions than requested."""


@dataclass(frozen=True)
class LMDSResult:
    """Landmark MDS output.

    Attributes
    ----------
    embedding : ndarray (n, d)
        Coordinates of every item, rows in the caller's item order.
    eigenvalues : ndarray (l,)
        Signed eigenvalues of ``-1/2 V E V``, descending.
    n_components : int
    n_supported : int
        How many of the top ``n_components`` eigenvalues are positive; the axes
        past them were placed with ``deficient`` (see :func:`landmark_mds`).
    """

    embedding: np.ndarray
    eigenvalues: np.ndarray
    n_components: int
    n_supported: int = -1


def landmark_mds(E: np.ndarray, D_landmarks: np.ndarray, landmarks: np.ndarray, n_components: int,
                 deficient: str = "raise", rtol: float = 1e-9) -> LMDSResult:
    """Place every item from its estimated squared distances to the landmarks.

    Parameters
    ----------
    E : ndarray (l, l)
        Squared-distance matrix of the landmarks (an EDM).
    D_landmarks : ndarray (n, l)
        Estimated squared distance of every item to every landmark (rows in item order).
    landmarks : ndarray (l,)
        Item index of each landmark; those rows get the classical-MDS coordinates
        ``Q Lambda^(1/2)``, every other row is triangulated.
    n_components : int
    deficient : {"raise", "floor"}, default "raise"
        When fewer than ``n_components`` eigenvalues of ``-1/2 V E V`` are
        positive: ``"raise"`` a :class:`DimensionError`; ``"floor"`` place the
        items anyway, each unsupported axis scaled as if its eigenvalue were the
        smallest positive one (the landmarks then sit almost on a
        lower-dimensional set along those axes, and every other item is
        triangulated along them with the noise-to-signal ratio of the weakest
        supported axis instead of an unbounded one).

    rtol : float, default 1e-9
        Eigenvalues at or below ``rtol`` times the largest magnitude count as zero.
        A projection stopped at a relative residual ``tol`` (:func:`~loe_viz.edm.project_edm`)
        leaves eigenvalues of up to about ``0.2 * tol`` where the cone has none; counted as
        axes, they would divide the triangulation by their square roots and stretch one
        axis a thousandfold. Pass ``10 * tol``; the default suits ``project_edm``'s own.

    Returns
    -------
    LMDSResult

    Raises
    ------
    DimensionError
        With ``deficient="raise"``, when fewer than ``n_components`` eigenvalues
        of ``-1/2 V E V`` are positive (the landmarks span fewer dimensions); with
        ``"floor"``, only when none is positive. Never a complex or NaN embedding.

    Notes
    -----
    Eigenvector signs are fixed so that the entry of largest magnitude is
    positive, which makes the output deterministic.
    """
    if not 0.0 <= rtol < 1.0:
        raise ValueError(f"rtol must be in [0, 1), got {rtol!r}")
    l = E.shape[0]
    V = np.eye(l) - 1.0 / l
    A = -0.5 * V @ E @ V
    A = 0.5 * (A + A.T)
    vals, vecs = np.linalg.eigh(A)
    vals = vals[::-1]
    vecs = vecs[:, ::-1]
    top = vals[:n_components]
    # relative to the spectral norm of A, not to the largest signed eigenvalue, which may itself be
    # round-off when A has no positive part
    scale = max(float(np.abs(vals).max()), 1e-300)
    positive = int(np.sum(vals > rtol * scale))
    if positive == 0:  # no axis to place anything on, floor or not
        raise DimensionError(
            "the landmark distances carry no spatial information: the landmark block has no positive eigenvalue "
            f"({np.array2string(top, precision=3)}); each landmark needs more comparisons (or fewer, busier "
            "landmarks), or fit every triplet at once (STE)"
        )
    if positive < n_components and deficient != "floor":
        raise DimensionError(
            f"n_components={n_components} is larger than the landmark distances support: only {positive} "
            f"positive eigenvalue(s) ({np.array2string(top, precision=3)}); use n_components <= {positive} "
            "or more comparisons/landmarks"
        )
    Q = vecs[:, :n_components].copy()
    if positive < n_components:
        Q[:, positive:] = _unsupported_axes(vecs[:, positive:], D_landmarks, E, n_components - positive)
    for c in range(n_components):
        k = np.argmax(np.abs(Q[:, c]))
        if Q[k, c] < 0:
            Q[:, c] = -Q[:, c]
    if positive < n_components:
        top = np.maximum(top, top[positive - 1])
    root = np.sqrt(top)
    Lsharp = np.ascontiguousarray((Q / root).T)
    mu = E.mean(axis=0)
    out = np.empty((D_landmarks.shape[0], n_components))
    linalg.triangulate(np.ascontiguousarray(D_landmarks, dtype=np.float64), mu, Lsharp, out)
    out[landmarks] = Q * root
    return LMDSResult(embedding=out, eigenvalues=vals.copy(), n_components=n_components,
                      n_supported=min(positive, n_components))


def _unsupported_axes(rest: np.ndarray, D_landmarks: np.ndarray, E: np.ndarray, k: int) -> np.ndarray:
    """``k`` orthonormal directions in the span of ``rest``, orthogonal to the ones vector,
    along which the rows of ``D_landmarks`` (centred by the landmark block's column means) vary most."""
    l = rest.shape[0]
    ones = np.full(l, 1.0 / np.sqrt(l))
    N = rest - np.outer(ones, ones @ rest)
    U, sv, _ = np.linalg.svd(N, full_matrices=False)
    N = U[:, sv > 1e-8 * max(sv.max(), 1e-300)]
    if N.shape[1] < k:  # cannot happen for l > n_components; keep the eigenvectors
        return rest[:, :k]
    Fc = np.asarray(D_landmarks, dtype=np.float64) - E.mean(axis=0)
    P = Fc @ N
    G = P.T @ P
    vals, vecs = np.linalg.eigh(0.5 * (G + G.T))
    Q = N @ vecs[:, ::-1][:, :k]
    return Q
