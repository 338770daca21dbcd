"""Optional stage 5: an ordinal (non-metric) polish of the embedding for noiseless answers.

Without noise the BTL likelihood of a landmark's comparisons has no finite
maximiser: the regularised scores keep the items' order but come out rank-like
(roughly the fraction of items nearer to the landmark), not distances, so
landmark MDS returns a monotonically distorted layout. The order itself is then
exact, and it is what this stage fits: Kruskal's non-metric MDS restricted to
the ``n x l`` item-landmark distances, started from the LOE embedding.

Each outer iteration takes, for every landmark, the isotonic regression of the
current distances on the order of its scores (the disparities, rescaled to the
distances' sum of squares so that the layout cannot shrink away), then moves the
points towards them by a few L-BFGS steps on the stress (a numba kernel,
``O(n l d)`` per evaluation).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._blas import blas_single_thread
from .edm import FIT_TOL, project_edm
from .kernels import linalg
from .lmds import landmark_mds

__all__ = ["RefineResult", "ordinal_refine", "order_agreement", "rank_start", "polish", "CONSISTENT_AGREEMENT",
           "SETTLED_AGREEMENT", "HOPELESS_AGREEMENT"]

#: A polished embedding counts as a consistent fit of the landmarks' orders above this
#: mean rank correlation (good fits measured at 0.97 to 0.99, degenerate ones at 0.6 to 0.75).
CONSISTENT_AGREEMENT = 0.95

#: A polish that reproduces the orders this well is kept without trying another start. A consistent
#: fit can still stall in a local minimum below it: noiseless answers, n = 300, seed 3 (the
#: explorer's ``?n=300&seed=3&temperature=0``) stopped at 0.974 and Procrustes 0.35 from LOE's
#: embedding, where the rank quantiles' start reached 0.996 and 0.11.
SETTLED_AGREEMENT = 0.99

#: ``polish(..., give_up=True)`` (``refine="auto"``) abandons a start whose first outer iteration
#: leaves the order agreement below this. Measured after that iteration (``LOE`` fits): every fit that
#: went on to be consistent was at 0.827 or more (noiseless answers, n = 100 to 5000, d = 2 and 3,
#: MaxMin and random landmarks, three or four seeds each; moons, circle, blobs; temperatures 0.01 to
#: 0.2); collected-style triplets spread over many heads, whose scores rest on a few comparisons
#: each, at 0.23 to 0.51 (Zipf-headed sets at n = 1000 and 2000 with 40 heads, ``gaussian_2d_crowd.csv``,
#: whose sparse rankings even look noiseless), never consistent after 8 to 30 iterations (0.33 to
#: 0.51). Between the two lie fits that may go either way (Zipf sets with 5 heads and the capitals
#: file at 0.69 to 0.79, which then stopped at 0.74 to 0.86): they are polished in full.
HOPELESS_AGREEMENT = 0.6


@dataclass(frozen=True)
class RefineResult:
    """The ordinal polish.

    Attributes
    ----------
    embedding : ndarray (n, d)
        Polished coordinates, rows in item order, scaled to the RMS size of the
        starting embedding.
    stress : ndarray
        Kruskal stress (``sqrt(sum (dist - disparity)^2 / sum disparity^2)``)
        after each outer iteration; 0 means every landmark's order is reproduced.
    n_iter : int
    converged : bool
        The stress stopped improving by more than ``tol`` (relative) per iteration.
    order_agreement : float
        Mean Spearman correlation, over the landmarks, between the embedding's
        distances to the landmark and its scores (1: every order reproduced).
        The polish returns the iterate where this was highest, and stops once it
        has not risen for ``patience`` outer iterations.
    start : str
        Where the polish started: ``"lmds"`` (LOE's embedding) or ``"ranks"``
        (:func:`rank_start`).
    """

    embedding: np.ndarray
    stress: np.ndarray
    n_iter: int
    converged: bool
    order_agreement: float = float("nan")
    start: str = "lmds"


def _orders(R: np.ndarray, landmarks: np.ndarray, unranked) -> tuple[list, np.ndarray]:
    n, l = R.shape
    weight = np.ones((n, l))
    orders = []
    for c in range(l):
        weight[landmarks[c], c] = 0.0
        if unranked is not None and len(unranked[c]):
            weight[np.asarray(unranked[c], dtype=np.int64), c] = 0.0
        keep = np.flatnonzero(weight[:, c] > 0)
        orders.append(keep[np.argsort(R[keep, c], kind="stable")])
    return orders, weight


def ordinal_refine(
    Y0: np.ndarray,
    R: np.ndarray,
    landmarks: np.ndarray,
    *,
    unranked=None,
    max_iter: int = 200,
    inner_iter: int = 50,
    tol: float = 1e-4,
    patience: int = 5,
) -> RefineResult:
    """Fit the embedding to the order of each landmark's scores (non-metric landmark MDS).

    Parameters
    ----------
    Y0 : ndarray (n, d)
        Starting embedding (LOE's landmark MDS output).
    R : ndarray (n, l)
        Scores of every item for each landmark; only their order is used (larger
        score = farther from the landmark).
    landmarks : ndarray (l,)
        Item index of each column's landmark.
    unranked : sequence of arrays, optional
        Per column, the items that landmark never compared (left out of its order).
    max_iter : int, default 200
        Outer iterations (isotonic regression, then ``inner_iter`` L-BFGS steps).
    inner_iter : int, default 50
    tol : float, default 1e-4
        Stop when an outer iteration lowers the stress by less than this fraction.
    patience : int, default 5
        Stop when the order agreement has not improved for this many outer
        iterations. On sparse or rank-like scores the stress can keep falling
        while the fit drifts toward a degenerate configuration that reproduces
        the orders worse; the best iterate is returned.

    Returns
    -------
    RefineResult
    """
    landmarks = np.asarray(landmarks, dtype=np.int64)
    orders, weight = _orders(np.asarray(R), landmarks, unranked)
    return _refine(Y0, landmarks, orders, weight, max_iter=max_iter, inner_iter=inner_iter, tol=tol,
                   patience=patience)


def _refine(Y0, landmarks, orders, weight, *, max_iter=200, inner_iter=50, tol=1e-4, patience=5,
            start="lmds", progress=None, give_up_below=None) -> RefineResult:
    """:func:`ordinal_refine` on orders already sorted by :func:`_orders`.

    ``progress``, when given, gets ``progress("refine", 0, 1)`` (a heartbeat) at most
    every 0.25 s, from the L-BFGS-B iterations; an exception it raises stops the fit.
    ``give_up_below``: stop after the first outer iteration when the order agreement is below it.
    """
    import time

    from scipy.optimize import isotonic_regression, minimize  # on first use: it costs ~0.5 s of import

    last = [0.0]  # the first iteration beats at once

    def beat(*_):
        now = time.perf_counter()
        if now - last[0] >= 0.25:
            last[0] = now
            progress("refine", 0, 1)

    Y = np.array(Y0, dtype=np.float64, order="C")
    n, d = Y.shape
    l = landmarks.size
    size0 = np.sqrt(np.mean(np.sum((Y - Y.mean(0)) ** 2, axis=1)))
    counted = weight > 0
    D = np.empty((n, l))
    target = np.zeros((n, l))
    grad = np.empty((n, d))
    history = []
    converged = False
    it = 0
    best_Y, best_agreement, best_it = Y.copy(), _agreement(Y, landmarks, orders), 0
    scored = not np.isnan(best_agreement)  # False when no order is long enough to score: stress alone stops

    def fun(y):
        f = linalg.landmark_stress(y.reshape(n, d), landmarks, target, weight, grad)
        return f, grad.ravel().copy()

    with blas_single_thread():  # L-BFGS-B's small BLAS calls: thread wake-ups would dominate
        for it in range(1, max_iter + 1):
            linalg.landmark_distances(Y, landmarks, D)
            for c in range(l):
                o = orders[c]
                if o.size:
                    target[o, c] = isotonic_regression(D[o, c]).x
            norm_t = float(np.sum(target[counted] ** 2))
            if norm_t <= 0.0:
                break
            target *= np.sqrt(float(np.sum(D[counted] ** 2)) / norm_t)
            res = minimize(fun, Y.ravel(), jac=True, method="L-BFGS-B", options=dict(maxiter=inner_iter),
                           callback=None if progress is None else beat)
            Y = np.ascontiguousarray(res.x.reshape(n, d))
            history.append(float(np.sqrt(res.fun / np.sum(target[counted] ** 2))))
            agreement = _agreement(Y, landmarks, orders)
            if agreement > best_agreement:
                best_Y, best_agreement, best_it = Y.copy(), agreement, it
            if give_up_below is not None and it == 1 and not agreement >= give_up_below:
                break
            if len(history) > 1 and history[-2] - history[-1] <= tol * history[-2]:
                converged = True
                break
            if scored and it - best_it >= patience:
                break
    if scored:
        Y = best_Y
    Y -= Y.mean(0)
    size = np.sqrt(np.mean(np.sum(Y ** 2, axis=1)))
    if size > 0 and size0 > 0:
        Y *= size0 / size
    return RefineResult(embedding=Y, stress=np.array(history), n_iter=it, converged=converged,
                        order_agreement=_agreement(Y, landmarks, orders), start=start)


def order_agreement(Y: np.ndarray, R: np.ndarray, landmarks: np.ndarray, unranked=None) -> float:
    """Mean Spearman correlation between distances to each landmark in ``Y`` and that landmark's scores."""
    landmarks = np.asarray(landmarks, dtype=np.int64)
    orders, _ = _orders(np.asarray(R), landmarks, unranked)
    return _agreement(Y, landmarks, orders)


def _agreement(Y, landmarks, orders) -> float:
    """:func:`order_agreement` on orders already sorted by :func:`_orders`."""
    D = np.empty((Y.shape[0], landmarks.size))
    linalg.landmark_distances(np.ascontiguousarray(Y, dtype=np.float64), landmarks, D)
    rho = []
    for c, o in enumerate(orders):
        if o.size < 3:
            continue
        a = np.argsort(np.argsort(D[o, c], kind="stable"), kind="stable").astype(float)
        b = np.arange(o.size, dtype=float)  # o is sorted by score
        a -= a.mean()
        b -= b.mean()
        den = np.sqrt((a @ a) * (b @ b))
        rho.append(float(a @ b / den) if den > 0 else 0.0)
    return float(np.mean(rho)) if rho else float("nan")


def rank_start(R: np.ndarray, landmarks: np.ndarray, n_components: int) -> np.ndarray:
    """A starting embedding from the score ranks alone.

    Without noise a landmark's win rates are the fraction of items nearer to it,
    i.e. the distribution function of squared distances, which for a locally
    uniform density in ``d`` dimensions grows like ``D^(d/2)``: the rank quantile
    raised to ``2/d`` estimates the squared distance up to a common scale. The
    landmark block of that estimate is symmetrised and projected onto the EDM
    cone, and landmark MDS places the items.
    """
    R = np.asarray(R, dtype=np.float64)
    n, l = R.shape
    landmarks = np.asarray(landmarks, dtype=np.int64)
    Dh = np.empty_like(R)
    for c in range(l):
        ranks = np.argsort(np.argsort(R[:, c], kind="stable"), kind="stable")
        Dh[:, c] = (ranks / max(n - 1, 1)) ** (2.0 / n_components)
        Dh[landmarks[c], c] = 0.0
    W = Dh[landmarks]
    E = project_edm(0.5 * (W + W.T), tol=FIT_TOL).E  # a start: LOE's tolerance is ample
    return landmark_mds(E, Dh, landmarks, n_components, rtol=10 * FIT_TOL).embedding


def polish(Y_lmds: np.ndarray, R: np.ndarray, landmarks: np.ndarray, n_components: int, unranked=None,
           give_up: bool = False, **kw) -> RefineResult | None:
    """The ordinal polish from LOE's embedding, and from :func:`rank_start` when that falls short.

    Non-metric MDS on a few landmarks' orders has local minima; a poor start can
    end in one. The polish from ``Y_lmds`` is kept when it reproduces the
    landmarks' orders almost exactly (:func:`order_agreement` at least
    ``SETTLED_AGREEMENT``); otherwise the rank quantiles are tried as well and the
    better of the two is returned, provided it is consistent (above
    ``CONSISTENT_AGREEMENT``, which degenerate fits stay well below) and better
    than ``Y_lmds`` itself; otherwise None. With ``give_up``, a start whose first
    outer iteration stays below ``HOPELESS_AGREEMENT`` is abandoned (scores too
    noisy for their order to be fitted: the polish would end in None after many
    iterations).
    """
    if give_up:
        kw["give_up_below"] = HOPELESS_AGREEMENT
    landmarks = np.asarray(landmarks, dtype=np.int64)
    orders, weight = _orders(np.asarray(R), landmarks, unranked)  # sorted once for every start
    base = _agreement(Y_lmds, landmarks, orders)
    best = None
    for start, Y0 in (("lmds", Y_lmds), ("ranks", None)):
        if Y0 is None:
            try:
                Y0 = rank_start(R, landmarks, n_components)
            except ValueError:  # the rank block supports fewer dimensions: skip this start
                continue
        res = _refine(Y0, landmarks, orders, weight, start=start, **kw)
        if res.order_agreement > max(base, CONSISTENT_AGREEMENT) and (
                best is None or res.order_agreement > best.order_agreement):
            best = res
        if best is not None and best.order_agreement >= SETTLED_AGREEMENT:
            break
    return best
