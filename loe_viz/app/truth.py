"""What the walk-through's steps compare the estimates with: quantities of the ground truth.

Plain NumPy functions of the points (no state, no Panel), so they are tested
on their own; the step views draw them beside LOE's estimates.
"""

from __future__ import annotations

import numpy as np

__all__ = ["true_scores", "landmark_truth", "centre", "flipped_answers"]


def true_scores(X: np.ndarray, head: int, temperature: float) -> np.ndarray:
    """What the scores of landmark ``head`` estimate: ``(D[:, head] - mean) / T``.

    The mean is over the items other than ``head`` (the scores sum to zero over
    them) and the entry of ``head`` itself is 0.  With ``T = 0`` the scale is
    not identified, so no division happens.
    """
    X = np.asarray(X, dtype=np.float64)
    d = ((X - X[head]) ** 2).sum(1)
    mask = np.ones(X.shape[0], bool)
    mask[head] = False
    out = d - d[mask].mean()
    out[head] = 0.0
    return out / temperature if temperature > 0 else out


def landmark_truth(X: np.ndarray, landmarks: np.ndarray, temperature: float) -> tuple[np.ndarray, np.ndarray]:
    """True landmark block ``D_LL / T`` and true shifts ``s_c = mean_{a != c} D_{a c} / T``.

    Returns
    -------
    DL : ndarray of shape (l, l)
        Squared distances between the landmarks (divided by ``T`` when ``T > 0``).
    shifts : ndarray of shape (l,)
        Mean squared distance of each landmark to the other items (same scale).
    """
    X = np.asarray(X, dtype=np.float64)
    landmarks = np.asarray(landmarks)
    XL = X[landmarks]
    DL = ((XL[:, None, :] - XL[None, :, :]) ** 2).sum(-1)
    colsum = np.empty(landmarks.size)
    for c, h in enumerate(landmarks):
        d = ((X - X[h]) ** 2).sum(1)
        colsum[c] = (d.sum() - d[h]) / (X.shape[0] - 1)
    scale = 1.0 / temperature if temperature > 0 else 1.0
    return DL * scale, colsum * scale


def centre(M: np.ndarray) -> np.ndarray:
    """``V M V`` with the centring matrix ``V = I - 11ᵀ / l``."""
    M = np.asarray(M, dtype=np.float64)
    l = M.shape[0]
    V = np.eye(l) - np.ones((l, l)) / l
    return V @ M @ V


def flipped_answers(X: np.ndarray, triplets: np.ndarray) -> np.ndarray:
    """Per triplet ``(i, j, k)``: True where the answer contradicts the truth (``D_ij > D_ik``)."""
    X = np.asarray(X, dtype=np.float64)
    T = np.asarray(triplets)
    a, b, c = T[:, 0], T[:, 1], T[:, 2]
    return ((X[a] - X[b]) ** 2).sum(1) > ((X[a] - X[c]) ** 2).sum(1)
