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
    """

    embedding: np.ndarray
    eigenvalues: np.ndarray
    n_components: int


def landmark_mds(E: np.ndarray, D_landmarks: np.ndarray, landmarks: np.ndarray, n_components: int) -> LMDSResult:
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

    Returns
    -------
    LMDSResult

    Raises
    ------
    DimensionError
        When fewer than ``n_components`` eigenvalues of ``-1/2 V E V`` are positive
        (the landmarks span fewer dimensions): never a complex or NaN embedding.

    Notes
    -----
    Eigenvector signs are fixed so that the entry of largest magnitude is
    positive, which makes the output deterministic.
    """
    l = E.shape[0]
    V = np.eye(l) - 1.0 / l
    A = -0.5 * V @ E @ V
    A = 0.5 * (A + A.T)
    vals, vecs = np.linalg.eigh(A)
    vals = vals[::-1]
    vecs = vecs[:, ::-1]
    top = vals[:n_components]
    # relative to the spectral norm of A (eigenvalue round-off is ~eps * ||A||), not to the
    # largest signed eigenvalue, which may itself be round-off when A has no positive part
    scale = max(float(np.abs(vals).max()), 1e-300)
    positive = int(np.sum(vals > 1e-12 * scale))
    if positive < n_components:
        raise DimensionError(
            f"n_components={n_components} is larger than the landmark distances support: only {positive} "
            f"positive eigenvalue(s) ({np.array2string(top, precision=3)}); use n_components <= {max(positive, 1)} "
            "or more comparisons/landmarks"
        )
    Q = vecs[:, :n_components].copy()
    for c in range(n_components):
        k = np.argmax(np.abs(Q[:, c]))
        if Q[k, c] < 0:
            Q[:, c] = -Q[:, c]
    root = np.sqrt(top)
    Lsharp = np.ascontiguousarray((Q / root).T)
    mu = E.mean(axis=0)
    out = np.empty((D_landmarks.shape[0], n_components))
    linalg.triangulate(np.ascontiguousarray(D_landmarks, dtype=np.float64), mu, Lsharp, out)
    out[landmarks] = Q * root
    return LMDSResult(embedding=out, eigenvalues=vals.copy(), n_components=n_components)
