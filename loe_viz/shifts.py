"""Stage 2: recover the unknown per-column shifts of the landmark block."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["OFFSET_METHODS", "ShiftResult", "estimate_shifts", "apply_shifts"]

#: ``"lambda2"``: the paper's rule (second-largest eigenvalue); ``"mean"``: the average of
#: the eigenvalues that equal the offset without noise (lambda_2 .. lambda_(l-d-1)).
OFFSET_METHODS = ("lambda2", "mean")


@dataclass(frozen=True)
class ShiftResult:
    """Shift estimates for the landmark columns.

    Attributes
    ----------
    W : ndarray (l, l)
        The landmark block of the rankings (zero diagonal); column ``c`` lacks shift ``s[c]``.
    s_ls : ndarray (l,)
        Least-squares shifts, which make ``W + J diag(s_ls)`` as symmetric as possible
        with zero off-diagonal sum.
    eigenvalues : ndarray (l,)
        Signed eigenvalues, descending, of ``sym(W + J diag(s_ls))``.
    offset : float
        The common offset added to ``s_ls``.
    s : ndarray (l,)
        Final shifts ``s_ls + offset``.
    method : str
        ``"lambda2"`` or ``"mean"``.
    offset_indices : tuple
        Positions (0-based, in ``eigenvalues``) averaged into the offset.
    """

    W: np.ndarray
    s_ls: np.ndarray
    eigenvalues: np.ndarray
    offset: float
    s: np.ndarray
    method: str
    offset_indices: tuple

    @property
    def shifted(self) -> np.ndarray:
        """``W + J diag(s)``: the landmark block with the final shifts."""
        return apply_shifts(self.W, self.s)


def apply_shifts(W: np.ndarray, s: np.ndarray) -> np.ndarray:
    """``W + J diag(s)``: add ``s[c]`` to the off-diagonal entries of column ``c``."""
    out = W + s[None, :]
    np.fill_diagonal(out, 0.0)
    return out


def estimate_shifts(W: np.ndarray, n_components: int, method: str = "lambda2") -> ShiftResult:
    """Least-squares shifts plus the eigenvalue offset (steps 3 and 4 of LOE).

    Parameters
    ----------
    W : ndarray (l, l)
        Landmark block of the rankings (``W[r, c]`` = score of landmark ``r`` in the
        ranking of landmark ``c``), zero diagonal.
    n_components : int
        Embedding dimension ``d``; needs ``l >= d + 3``.
    method : {"lambda2", "mean"}
        ``"lambda2"`` adds the second-largest signed eigenvalue (the paper's rule);
        ``"mean"`` adds the mean of eigenvalues 2 .. l-d-1, which all equal the offset
        without noise (a lower-variance variant; identical when ``l = d + 3``).

    Returns
    -------
    ShiftResult
    """
    if method not in OFFSET_METHODS:
        raise ValueError(f"offset must be one of {', '.join(OFFSET_METHODS)}; got {method!r}")
    W = np.asarray(W, dtype=np.float64)
    l = W.shape[0]
    if l < n_components + 3:
        raise ValueError(f"n_landmarks must be >= n_components + 3 = {n_components + 3}, got {l}")
    a = W - W.T
    # s_c - s_r = W[c, r] - W[r, c]; least squares on the complete graph plus the gauge
    # sum over off-diagonal entries of the shifted block = 0.
    s_ls = a.mean(axis=1) - W.sum() / (l * (l - 1))
    C = apply_shifts(W, s_ls)
    C = 0.5 * (C + C.T)
    eig = np.linalg.eigvalsh(C)[::-1].copy()
    if method == "lambda2":
        idx = (1,)
    else:
        idx = tuple(range(1, max(2, l - n_components - 1)))
    offset = float(eig[list(idx)].mean())
    return ShiftResult(
        W=W, s_ls=s_ls, eigenvalues=eig, offset=offset, s=s_ls + offset, method=method, offset_indices=idx
    )
