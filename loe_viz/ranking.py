"""Stage 1: one BTL ranking per landmark (the driver around :mod:`loe_viz.kernels.btl`)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from . import _threads
from ._threads import kind, side_by_side
from ._tiles import tile_shift
from .kernels import btl
from .kernels import uncertainty as _unc_kernels

__all__ = ["ColumnRanking", "RankingResult", "RankingCancelled", "rank_column", "cache_order"]


class RankingCancelled(Exception):
    """A ranking stopped at a Newton-iteration boundary because its ``cancel`` event was set."""

#: Newton decrement per scored item, in units of ``tol``, below which a ranking stops (see
#: :func:`rank_column`): at ``tol = 1e-5``, 0.2, i.e. 0.1 of log-likelihood per item left to gain,
#: against a statistical gap of about 1/2 per item. At n = 10^5, c = 50 the scores then differ
#: from the exact optimum by 0.07 (a landmark at the edge of the data) and 0.024 (one at the
#: centre) of their standard errors, root mean square, against 0.020 and 0.003 at the former 200:
#: the edge landmarks take two Newton steps instead of three, the central ones one instead of two.
#: Every embedding measured got faster and more accurate: n = 10^5, c = 50, MaxMin, 10 seeds,
#: 2.58 -> 2.14 s and median Procrustes 0.0082 -> 0.0071 (worst 0.0085 -> 0.0075); n = 10^6,
#: c = 50: 50.0 -> 35.5 s, 0.0070 -> 0.0059; the 90 % ellipses of ``uncertainty_`` covered 0.90 to
#: 0.92 at n = 10^3 to 10^5, c = 20 to 200 (0.91 to 0.94 before; 0.889 to 0.906 with today's
#: rankings, docs/benchmarks.md); n = 1000 tables unchanged.
DECREMENT_PER_TOL = 20_000.0

#: From the second Newton iteration on, a ranking whose next direction promises at most the
#: decrement at which it stops returns the scores it has instead of taking that step: the step's
#: gradient pass is saved, and the curvature of the last pass, from which the variances come, is
#: that of the scores returned. These rankings are mostly those of landmarks at the edge of the
#: data (MaxMin's), whose first step starts far from the optimum; the maximum-likelihood scores of
#: their items that win or lose nearly every comparison spread out more than the distances, and
#: the step not taken would bring them closer to that. n = 10^5, c = 50, 10 seeds: the defaults
#: 3.66 -> 3.36 s, median Procrustes 0.0071 -> 0.0066; random landmarks (mostly one step) 2.90 ->
#: 2.88 s, 0.0373 -> 0.0363 (docs/benchmarks.md has the other settings). The rule is off:
#:
#: - for the first step (returning the mean-field start when it promises little made random
#:   landmarks worse: 0.074 -> 0.091 on one seed);
#: - below a stopping decrement of ``SKIP_MIN_DECREMENT`` per item (``tol`` < 5e-7: the optimum
#:   itself is asked for);
#: - once the trust region has cut a step (noiseless answers, whose scores run off towards the
#:   penalty's bound: their ordinal polish went from a median Procrustes of 0.047 to 0.19 at
#:   n = 300 over 10 seeds);
#: - below ``SKIP_MIN_PER_ITEM`` comparisons per scored item, where the asymptotics behind the
#:   statistical tolerance and the variances do not hold yet (collected-style triplets, a few per
#:   head item, lost 0.4 to 1.1 points of held-out accuracy with LOE alone).
FINAL_STEP_SKIPPED = True
SKIP_MIN_DECREMENT = 0.01
SKIP_MIN_PER_ITEM = 20

#: Where the last-step rule applies, the direction it would judge is often not computed at all:
#: ``g . M^-1 g`` (``M`` the conjugate gradients' block-Jacobi preconditioner, ``g`` the gradient)
#: comes free of the products, and after a first step it stays below the decrement of the
#: direction the conjugate gradients then find, by a factor of 1.0 to 2.6 on Gaussian points
#: (n = 10^3 to 3 * 10^5, c = 20 to 200, landmarks from the centre to the edge of the data). When
#: this many times the estimate is at most the stopping decrement, the ranking returns its scores
#: as the rule would, without the direction's products: MaxMin's edge landmarks at n = 10^5, c = 50
#: take one product instead of three, as many passes as a central landmark. On clustered data the
#: Hessian couples the items far more than its diagonal says (after a first step the factor reached
#: 8 to 21 on four blobs, n = 300), so the estimate is trusted only where the last direction's
#: decrement exceeded its own estimate by at most ``JACOBI_FIT`` (1.04 to 1.05 at the edge landmarks
#: above; 1.5 to 2.5 on those blobs).
SKIP_BY_ESTIMATE = 4.0
JACOBI_FIT = 1.15

#: Mean-field iterations of the starting scores: each costs O(n) plus a 128-point table, nothing
#: beside a pass over the comparisons; six instead of two bring the start of a landmark at the
#: edge of the data (n = 10^5) 40% closer to the optimum and save a Newton step and a third of
#: its conjugate-gradient passes (central landmarks: unchanged).
MEANFIELD_ITER = 6

# Up to this many items the per-item vectors of a Newton step stay in the CPU caches.
_CACHE_RESIDENT = 30_000


#: Items with more than this many times the median number of comparisons are *heavy* (e.g. the
#: other landmarks, which take the landmark share of the budget among themselves). They are
#: coupled tightly to each other and loosely to the rest, which Jacobi-preconditioned CG resolves
#: slowly (20 to 75 iterations per ranking instead of about 15 at n = 3 * 10^4, c = 50 with
#: MaxMin's landmarks), so the preconditioner takes the Hessian's block on them exactly.
HEAVY_FACTOR = 20.0


def _heavy_direction(near, far, appearances, mask):
    """The heavy items, or None: ``(heavy, within, pos)``.

    ``heavy`` holds their indices, ``within`` the comparisons among them (one
    pass over the comparisons, only when there are heavy items), ``pos`` each
    item's position in ``heavy`` (-1 for the others).
    """
    scored = appearances[mask]
    if scored.size < 3:
        return None
    heavy = mask & (appearances > HEAVY_FACTOR * max(float(np.median(scored)), 1.0))
    k = int(heavy.sum())
    if k == 0 or k > scored.size // 2:
        return None
    within = btl.pairs_within(near, far, heavy.view(np.uint8), int(appearances[heavy].sum()) // 2)
    idx = np.flatnonzero(heavy)
    pos = np.full(heavy.shape[0], -1, dtype=np.int64)
    pos[idx] = np.arange(k)
    return idx, within, pos


def _block_inverse(near, far, coarse, h, hdiag):
    """``(heavy, inverse of the Hessian's block on them)`` at the curvature ``h``; empty without heavy items."""
    if coarse is None:
        return np.zeros(0, dtype=np.int64), np.zeros((0, 0))
    heavy, within, pos = coarse
    block = np.empty((heavy.size, heavy.size))
    btl.block_hessian(near, far, h, hdiag, heavy, within, pos, block)
    return heavy, np.linalg.inv(block)


#: From this many comparisons on, each pass over them is computed as two halves whose sums are
#: added (always, so the result does not depend on the threads): while the caller's scheduler
#: reports an idle worker (``cancel.idle_workers > 0``), the second half runs on a helper thread.
SPLIT_MIN = 1 << 18


class _Halves:
    """The comparisons cut in two, and a helper thread that takes the second half while a worker idles."""

    def __init__(self, near, far, h, cancel):
        half = near.shape[0] // 2
        self.near = (near[:half], near[half:])
        self.far = (far[:half], far[half:])
        self.h = (h[:half], h[half:])
        self.cancel = cancel
        self.pool = None

    def run(self, key, first, second):
        """Call ``first()`` and ``second()``, side by side when a worker of the caller idles.

        Until a pass of this ``key`` (:func:`loe_viz._threads.kind`) has completed in this
        process, both halves run on the calling thread: the kernel is compiled (or loaded
        from numba's cache) for these arrays before a second thread calls it.
        """
        idle = getattr(self.cancel, "idle_workers", 0) > 0
        if idle and self.pool is None and key in _threads._WARM:
            self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="loe-half")
        side_by_side(key, first, second, parallel=idle, pool=self.pool)

    def close(self):
        if self.pool is not None:
            self.pool.shutdown(wait=True)

    def gradient(self, w, lam, mask, grad, hdiag, precise):
        """:func:`loe_viz.kernels.btl.gradient` as two halves."""
        n = w.shape[0]
        gh = np.empty((n, 2))
        gh[:, 0] = lam * w
        gh[:, 1] = lam
        gh2 = np.zeros((n, 2))
        self.run(kind("gradient", self.near[0], w, self.h[0]),
                 lambda: btl.gradient_accumulate(self.near[0], self.far[0], w, self.h[0], precise, gh),
                 lambda: btl.gradient_accumulate(self.near[1], self.far[1], w, self.h[1], precise, gh2))
        return btl.gradient_finish(gh, gh2, mask, grad, hdiag)

    def newton_direction(self, hdiag, lam, mask, grad, max_iter, rtol, d, heavy, hinv, single):
        """:func:`loe_viz.kernels.btl.newton_direction_coarse` with each product as two halves."""
        n = grad.shape[0]
        dt = np.float32 if single else np.float64
        pv = (np.empty((n, 2), dtype=dt), np.empty((n, 2), dtype=dt))

        def product(p, out):
            for part in pv:
                part[:, 0] = p
                part[:, 1] = 0.0
            self.run(kind("product", self.near[0], self.h[0], pv[0]),
                     lambda: btl.hessian_vector_accumulate(self.near[0], self.far[0], self.h[0], pv[0]),
                     lambda: btl.hessian_vector_accumulate(self.near[1], self.far[1], self.h[1], pv[1]))
            np.multiply(p, lam, out=out)
            out += pv[0][:, 1]
            out += pv[1][:, 1]
            btl._center(out, mask)

        z = np.empty(n)
        Hp = np.empty(n)
        d[:] = 0.0
        r = -grad
        btl.precondition(r, hdiag, mask, heavy, hinv, z)
        p = z.copy()
        rz = btl._dot(r, z)
        tol = rtol * np.sqrt(btl._dot(grad, grad))
        it = 0
        while it < max_iter:
            if np.sqrt(btl._dot(r, r)) <= tol or rz <= 0.0:
                break
            product(p, Hp)
            pHp = btl._dot(p, Hp)
            if pHp <= 0.0:
                break
            alpha = rz / pHp
            d += alpha * p
            r -= alpha * Hp
            btl.precondition(r, hdiag, mask, heavy, hinv, z)
            rz_new = btl._dot(r, z)
            beta = rz_new / rz
            rz = rz_new
            p *= beta
            p += z
            it += 1
        btl._center(d, mask)
        return it


def cache_order(near: np.ndarray, far: np.ndarray, n_items: int):
    """The comparisons reordered so that passes over them stay in the CPU cache.

    For large ``n_items`` (see :mod:`loe_viz._tiles`), returns new arrays
    holding the same comparisons grouped by tiles of near items by far items
    (a stable counting sort, linear in the number of comparisons); otherwise
    returns ``near`` and ``far`` themselves. The BTL likelihood does not depend
    on the order of the comparisons, so the scores are the same up to rounding.
    Callers that own the input arrays should drop them afterwards: the
    reordered copy is what :func:`rank_column` then needs (``reorder=False``).

    Parameters
    ----------
    near, far : int arrays (m,)
    n_items : int

    Returns
    -------
    near, far : int arrays (m,)
    """
    shift = tile_shift(n_items)
    if shift is None or near.shape[0] == 0:
        return near, far
    out_near = np.empty_like(near)
    out_far = np.empty_like(far)
    btl.tile_order(near, far, shift, out_near, out_far)
    return out_near, out_far


@dataclass(frozen=True)
class ColumnRanking:
    """The BTL fit of one landmark.

    Attributes
    ----------
    head : int
        The landmark (item index).
    scores : ndarray (n,)
        Sum-zero scores of every item; ``scores[head] = 0``. They estimate the
        squared distances to ``head`` minus their mean.
    n_comparisons : int
    n_iter : int
        Newton iterations: directions computed. The last of them is not taken
        when it promised too little to be worth its gradient pass
        (``FINAL_STEP_SKIPPED``); ``len(grad_history) - 1`` steps were taken.
    cg_iters : int
        Conjugate-gradient iterations (Hessian-vector products) in all.
    grad_norm : float
        Norm of the projected gradient at the returned scores.
    converged : bool
    grad_history : ndarray
        Gradient norm at the start and after each Newton step taken.
    unranked : ndarray
        Items (other than ``head``) that took part in no comparison: their score is
        the mean, 0, and carries no information.
    agreement : float
        Fraction of the comparisons the fitted scores reproduce. Close to 1 means
        the answers look noiseless: the likelihood then has no finite maximiser and
        the regularised scores behave like ranks, not distances.
    score_variance : ndarray (n,) or None
        Sampling variance of each score: the diagonal of the inverse Fisher
        information of the sum-zero scores at the fit
        (:func:`loe_viz.kernels.uncertainty.score_moments`); 0 for ``head``.
    score_bias : ndarray (n,) or None
        First-order bias of the maximum-likelihood scores (same kernel); 0 for
        ``head``. Used by :mod:`loe_viz.uncertainty`.
    """

    head: int
    scores: np.ndarray
    n_comparisons: int
    n_iter: int
    cg_iters: int
    grad_norm: float
    converged: bool
    grad_history: np.ndarray
    unranked: np.ndarray
    agreement: float = float("nan")
    score_variance: np.ndarray | None = None
    score_bias: np.ndarray | None = None


@dataclass(frozen=True)
class RankingResult:
    """All landmark rankings, stacked.

    Attributes
    ----------
    landmarks : ndarray (l,)
    R : ndarray (n, l)
        Column ``c`` holds the scores of landmark ``c``; ``R[landmarks[c], c] = 0``.
    columns : tuple of ColumnRanking
    regularization : float
    """

    landmarks: np.ndarray
    R: np.ndarray
    columns: tuple
    regularization: float

    @property
    def n_iter(self) -> np.ndarray:
        return np.array([c.n_iter for c in self.columns])

    @property
    def grad_norm(self) -> np.ndarray:
        return np.array([c.grad_norm for c in self.columns])

    @property
    def converged(self) -> np.ndarray:
        return np.array([c.converged for c in self.columns])

    @property
    def n_comparisons(self) -> np.ndarray:
        return np.array([c.n_comparisons for c in self.columns])

    @property
    def unranked(self) -> tuple:
        return tuple(c.unranked for c in self.columns)

    @property
    def unranked_items(self) -> np.ndarray:
        """Items that at least one landmark's comparisons miss, sorted, each once."""
        return np.unique(np.concatenate(self.unranked)) if self.columns else np.zeros(0, dtype=np.int64)

    @property
    def separation(self) -> np.ndarray:
        """How far each ranking tells its items apart: the variance of its scores over the items it ranked, over the
        mean sampling variance of a score (about 1 when the answers are coin flips; NaN for a column without
        variances). See :attr:`signal`."""
        out = np.full(len(self.columns), np.nan)
        for c, col in enumerate(self.columns):
            ranked = np.ones(col.scores.size, dtype=bool)
            ranked[col.unranked] = False
            ranked[col.head] = False
            if col.score_variance is not None and ranked.sum() > 1:
                noise = float(np.mean(col.score_variance[ranked]))
                out[c] = float(np.var(col.scores[ranked])) / noise if noise > 0 else np.inf
        return out

    @property
    def comparisons_per_item(self) -> float:
        """Comparisons per ranked item of the median landmark (below 1, a ranking reproduces all of them)."""
        return float(np.median(self.n_comparisons / np.maximum(self.items_covered, 1)))

    @property
    def signal(self) -> float:
        """What all the rankings tell of the items beyond noise: the sum over the columns of :attr:`separation`
        minus 1 (about 0 for coin flips, however many rankings; inf where no column has variances). LOE's
        embedding pools the columns, so a few sharp rankings or many weak ones place the items alike; see
        :data:`loe_viz.uncertainty.SIGNAL_MIN`."""
        sep = self.separation
        sep = sep[~np.isnan(sep)]
        return float(np.sum(sep - 1.0)) if sep.size else float("inf")

    @property
    def items_covered(self) -> np.ndarray:
        """Items (other than the landmark) that each landmark's comparisons touch."""
        n = self.R.shape[0]
        return np.array([n - 1 - c.unranked.size for c in self.columns])

    @classmethod
    def from_columns(cls, columns, n_items: int, regularization: float) -> "RankingResult":
        R = np.empty((n_items, len(columns)))
        for c, col in enumerate(columns):
            R[:, c] = col.scores
        landmarks = np.array([c.head for c in columns], dtype=np.int64)
        return cls(landmarks=landmarks, R=R, columns=tuple(columns), regularization=regularization)


def rank_column(
    near: np.ndarray,
    far: np.ndarray,
    head: int,
    n_items: int,
    *,
    regularization: float = 1e-3,
    tol: float = 1e-5,
    max_iter: int = 50,
    cg_max_iter: int = 100,
    w0: np.ndarray | None = None,
    wins: np.ndarray | None = None,
    max_step: float = 4.0,
    reorder: bool = True,
    cancel=None,
) -> ColumnRanking:
    """Fit the l2-regularised, sum-zero BTL scores of one landmark by Newton-CG.

    Each Newton iteration solves the Newton system with Jacobi-preconditioned
    conjugate gradients (cheap passes that reuse the curvature of the last
    gradient pass) and takes the full step when the directional derivative at the
    new point shows it did not overshoot; otherwise it falls back to the secant
    step along the same direction. The objective is convex, so this needs no
    evaluation of the log-likelihood itself: one gradient pass per iteration.

    Parameters
    ----------
    near, far : int arrays (m,)
        For comparison ``t`` item ``near[t]`` was answered closer to ``head`` than
        ``far[t]``; the farther item wins the BTL comparison.
    head : int
    n_items : int
    regularization : float
        ``lambda`` of the penalty ``lambda / 2 ||w||^2``.
    tol : float
        Converged when no score moves by more than ``tol`` in a Newton step, when
        the gradient norm falls below ``tol``, or when the Newton decrement of
        the step just taken, ``-grad . d`` (twice the log-likelihood that step
        expected to gain), is at most ``DECREMENT_PER_TOL * tol`` per scored
        item (from ``tol = 5e-7`` up; below, the optimum itself is asked for and only
        the first two tests stop it): the optimisation error left is then below the statistical error of
        the scores, whose log-likelihood gap to the truth is about 1/2 per item
        (at the default ``tol``, 0.1 per item: at n = 10^5, c = 50 the scores
        then differ from the exact optimum by 0.02 to 0.07 of their standard
        errors, root mean square, and by 2 at most). From the second iteration
        on, a direction that promises no more than that is not taken: the
        scores are returned as they are (``FINAL_STEP_SKIPPED`` says when: not
        below ``tol = 5e-7``, which asks for the optimum itself).
    max_iter : int
        Cap on Newton iterations.
    cg_max_iter : int
        Cap on conjugate-gradient iterations per Newton step.
    w0 : ndarray (n,), optional
        Starting scores. By default a mean-field inversion of the win rates
        (:func:`loe_viz.kernels.btl.meanfield_start`), which with uniformly
        random pairs lands within a few Newton steps of the optimum.
    wins : int32 ndarray (n, 2), optional
        The comparisons' win counts (:func:`loe_viz.kernels.btl.win_counts`), when the
        caller has counted them already (a pass over the comparisons saved).
    max_step : float, default 4.0
        Trust radius: the largest change of one score in one Newton step.
    reorder : bool, default True
        Pass the comparisons through :func:`cache_order` first (a copy, for
        large ``n_items`` only). Callers that have already done so, and dropped
        their own arrays to save memory, pass False.
    cancel : threading.Event, optional
        Checked before each Newton iteration: once set, the ranking stops and
        raises :class:`RankingCancelled` (the kernels themselves are not interrupted).
        With at least ``SPLIT_MIN`` comparisons, an integer attribute
        ``cancel.idle_workers`` (set by :class:`loe_viz.LOE`'s scheduler) greater
        than 0 lets the ranking run half of each pass on a helper thread; the
        scores are the same either way.

    Returns
    -------
    ColumnRanking
    """
    n = int(n_items)
    if reorder:
        near, far = cache_order(near, far, n)
    m = near.shape[0]
    mask = np.ones(n, dtype=np.bool_)
    mask[head] = False
    if wins is None:  # (won, took part in): the start's win rates and the coverage
        wins = np.empty((n, 2), dtype=np.int32)
        btl.win_counts(near, far, wins)
    if w0 is None:
        w = np.empty(n)
        btl.meanfield_from_counts(wins, mask, MEANFIELD_ITER, 128, w)
    else:
        w = np.array(w0, dtype=np.float64)
    coarse = _heavy_direction(near, far, wins[:, 1], mask)
    trial = np.empty(n)
    d = np.empty(n)
    grad, grad_t = np.empty(n), np.empty(n)
    hdiag, hdiag_t = np.empty(n), np.empty(n)
    # One curvature array (4 bytes per comparison): the conjugate gradients read it before the
    # trial point's gradient pass overwrites it, and the trial point is always taken.
    h = np.empty(m, dtype=np.float32)
    work = np.empty((4, n))
    halves = _Halves(near, far, h, cancel) if m >= SPLIT_MIN else None
    try:
        return _newton(near, far, head, n, mask, w, trial, d, grad, grad_t, hdiag, hdiag_t, h, work, wins, coarse,
                       halves, regularization, tol, max_iter, cg_max_iter, max_step, cancel)
    finally:
        if halves is not None:
            halves.close()


def _newton(near, far, head, n, mask, w, trial, d, grad, grad_t, hdiag, hdiag_t, h, work, wins, coarse, halves,
            regularization, tol, max_iter, cg_max_iter, max_step, cancel) -> ColumnRanking:
    """The Newton iteration of :func:`rank_column` and its diagnostics."""
    m = near.shape[0]

    def gradient(point, g, hd, precise):
        if halves is not None:
            return halves.gradient(point, regularization, mask, g, hd, precise)
        return btl.gradient(near, far, point, regularization, mask, g, hd, h, precise)

    gnorm = gradient(w, grad, hdiag, False)
    history = [gnorm]
    scored = max(int(mask.sum()), 1)
    # Newton decrement at which to stop; none below tol = 5e-7, which asks for the optimum itself (the test then
    # stopped near-separated items' scores up to 2 short of it, at tol = 1e-7, n = 2000, 10 comparisons per item)
    statistical = DECREMENT_PER_TOL * tol >= SKIP_MIN_DECREMENT
    enough = DECREMENT_PER_TOL * tol * scored if statistical else 0.0
    skip = FINAL_STEP_SKIPPED and statistical and m >= SKIP_MIN_PER_ITEM * scored
    precise = False
    jacobi_fit = np.inf
    converged = False
    cg_total = 0
    it = 0
    while it < max_iter:
        if cancel is not None and cancel.is_set():
            raise RankingCancelled(f"ranking of landmark {head} cancelled after {it} Newton iteration(s)")
        if gnorm <= tol:
            converged = True
            break
        it += 1
        # Inexact Newton. While the score vectors sit in cache a Hessian-vector
        # product costs a fifth of a gradient pass (no exponentials): solve tightly
        # and save Newton steps. Past that both are memory-bound and cost the same:
        # Eisenstat-Walker forcing, loose far from the optimum and tight near it.
        ratio = gnorm / history[0] if history[0] > 0 else 1.0
        rtol = min(1e-2, ratio) if n <= _CACHE_RESIDENT else min(0.5, np.sqrt(ratio))
        heavy, hinv = _block_inverse(near, far, coarse, h, hdiag)
        if skip:
            # The preconditioned gradient norm, free beside the direction's products, tells most
            # rankings that the next direction will promise too little (see SKIP_BY_ESTIMATE).
            btl.precondition(grad, hdiag, mask, heavy, hinv, work[1])
            estimate = float(btl._dot(grad, work[1]))
            if it > 1 and jacobi_fit <= JACOBI_FIT and SKIP_BY_ESTIMATE * estimate <= enough:
                converged = True
                break
        single = n > _CACHE_RESIDENT  # past the cache, products in single precision: half the bytes
        if halves is not None:
            cg_total += halves.newton_direction(hdiag, regularization, mask, grad, cg_max_iter, max(rtol, 1e-6), d,
                                                heavy, hinv, single)
        else:
            cg_total += btl.newton_direction_coarse(
                near, far, h, hdiag, regularization, mask, grad, cg_max_iter, max(rtol, 1e-6), d, work, heavy, hinv,
                single,
            )
        # Trust region: near separation the curvature vanishes and the raw Newton
        # step can be huge; no score moves by more than max_step at once.
        if skip:  # how much the Hessian's coupling adds to the preconditioner's estimate
            jacobi_fit = -float(btl._dot(grad, d)) / estimate if estimate > 0 else np.inf
        big = np.abs(d).max()
        clipped = big > max_step
        skip = skip and not clipped  # a step cut by the trust region: not the statistical regime
        if clipped:
            d *= max_step / big
        slope0 = float(btl._dot(grad, d))  # no BLAS threads: they fight the landmark threads
        if slope0 >= 0.0:  # not a descent direction: the curvature has collapsed
            break
        if skip and it > 1 and -slope0 <= enough:
            # Close enough already: after a first step, a direction that promises no more than the
            # decrement at which the ranking stops is not taken (see FINAL_STEP_SKIPPED).
            converged = True
            break
        alpha = 1.0
        # Single-precision logistic while far from the optimum, double precision near it.
        precise = precise or gnorm < 1e-4 * history[0]
        np.add(w, d, out=trial)
        gnorm_t = gradient(trial, grad_t, hdiag_t, precise)
        slope1 = float(btl._dot(grad_t, d))
        if slope1 > 0.5 * -slope0:
            # Overshot along d: step to the root of the secant of the directional derivative.
            alpha = slope0 / (slope0 - slope1)
            np.multiply(d, alpha, out=trial)
            trial += w
            gnorm_t = gradient(trial, grad_t, hdiag_t, precise)
        w, trial = trial, w
        grad, grad_t = grad_t, grad
        hdiag, hdiag_t = hdiag_t, hdiag
        gnorm = gnorm_t
        history.append(gnorm)
        # The decrement judges the full Newton step only: not a clipped or shortened one.
        if alpha * np.abs(d).max() <= tol or (alpha == 1.0 and not clipped and -slope0 <= enough):
            converged = True
            break
    counts = wins[:, 1].copy()
    counts[head] = 1
    unranked = np.flatnonzero(counts == 0)
    # an item in no comparison has only the penalty's term, whose optimum is 0 (the mean) exactly:
    # put it there rather than where the last Newton step left it
    w[unranked] = 0.0
    # h and hdiag hold the curvature at the returned scores (the last gradient pass)
    score_var, score_bias = np.empty(n), np.empty(n)
    agreement = _unc_kernels.score_moments(near, far, w, h, hdiag, mask, score_var, score_bias)
    return ColumnRanking(
        head=int(head),
        scores=w,
        n_comparisons=int(m),
        n_iter=it,
        cg_iters=cg_total,
        grad_norm=float(gnorm),
        converged=converged,
        grad_history=np.array(history),
        unranked=unranked,
        agreement=float(agreement),
        score_variance=score_var,
        score_bias=score_bias,
    )
