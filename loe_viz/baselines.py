"""Ordinal-embedding baselines: STE, t-STE, SOE, GNMDS and CKL.

Each estimator minimises a loss over list-order triplets ``(i, j, k)`` ("item
``i`` is closer to ``j`` than to ``k``") of an embedding ``X`` of shape
``(n, d)`` with scipy's L-BFGS-B. Loss and gradient come from the numba
kernels of :mod:`loe_viz.kernels.losses`: one pass over the triplets costs
``O(m d)`` time and ``O(m + n d)`` memory, and no ``n x n`` matrix is ever
formed, so the estimators run at ``n = 10^5`` and beyond.

The objective is the **mean** per-triplet loss (plus, for GNMDS, the penalty
``regularization * ||X||_F^2``); ``history_`` records it per iteration.

Examples
--------
>>> from loe_viz import TripletOracle, make_points, procrustes_error
>>> X = make_points("gaussian", 50, random_state=0)
>>> T = TripletOracle(X, temperature=0.0, random_state=1).uniform_triplets(4000)
>>> ste = STE(n_components=2, random_state=2).fit(T)
>>> procrustes_error(X, ste.embedding_) < 0.05
True
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from ._blas import blas_single_thread
from ._params import ParamsMixin
from ._validation import (
    _check_item_memory, check_float, check_int, check_n_jobs, check_points, check_random_state, check_triplets,
)
from .kernels import losses as _losses
from .progress import resolve_progress

__all__ = ["FitHistory", "TripletEmbedding", "STE", "TSTE", "SOE", "GNMDS", "CKL", "STOP_REASONS"]

#: Values of ``stop_reason_``.
STOP_REASONS = ("converged", "max_iter", "callback", "time_budget", "line_search")
# The random start's stream of an int seed (see check_random_state): any fixed key far from the
# 0, 1, 2, ... that SeedSequence.spawn hands out.
_INIT_STREAM = 104_729
#: Peak bytes per item and embedding dimension of a fit with ``n_jobs=1``: L-BFGS-B's ten correction pairs
#: and work arrays (212), scipy's copies of the iterate and the gradient, and the fit's own start, best
#: iterate and gradient. Measured as the slope of the peak resident memory of 25-iteration fits between
#: 10^6 and 2 * 10^6 items (all but 201 in no triplet): 325 at d = 1 and 2 for each of STE, t-STE, SOE,
#: GNMDS and CKL alike, 309 at d = 5 (tracemalloc: 329 throughout). ``n_jobs > 1`` threads add an (n, d)
#: gradient buffer each (measured: 15 more per coordinate at n_jobs=2, against 16 counted).
ITEM_BYTES_PER_DIMENSION = 330


def check_dimension_fits(d: int, n: int) -> None:
    """Refuse ``n_components=d`` for ``n`` items, which span at most ``n - 1`` dimensions."""
    if d >= n:
        raise ValueError(f"n_components={d} is more than the data allow: {n} items span at most {n - 1} "
                         f"dimensions; use n_components <= {n - 1}")


def _item_bytes(d: int, n_jobs: int) -> int:
    """Peak bytes per item of a baseline fit in ``d`` dimensions on ``n_jobs`` threads."""
    return d * (ITEM_BYTES_PER_DIMENSION + (8 * n_jobs if n_jobs > 1 else 0))


#: A start is next to the collapsed embedding (see ``_optimise``) when ``||grad|| * ||X0 - mean(X0)||``, the
#: decrease in reach at its own distance from it, is at most this many times ``tol * max(|loss|, 1)``. Fits
#: from such starts met the tol test at chance accuracy up to 3 times it (STE, t-STE, CKL, GNMDS, SOE; 40 to
#: 1000 items, init_scale 1e-7 to 0.1); the default start has about 1e5 times it.
_NEAR = 10.0
#: How far below the collapsed embedding's loss (times ``max(|loss|, 1)``) a fit that started next to it
#: must get before the relative-reduction test is allowed to end it.
_ESCAPE = 1e-3


@dataclass(frozen=True)
class _Settings:
    """The validated parameters of one fit (see :meth:`TripletEmbedding._validated`)."""

    d: int
    max_iter: int
    tol: float
    budget: float | None
    init_scale: float
    n_jobs: int
    rng: np.random.Generator
    param: float  # the loss kernel's parameter (alpha, margin or mu)
    regularization: float


class _Stop(Exception):
    """Raised inside scipy's callbacks to end the optimisation early."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class FitHistory:
    """Trace of an iterative fit, one entry per iteration.

    Entry 0 is the initial embedding; entry ``t`` the iterate after
    ``iteration[t]`` optimiser iterations.

    Attributes
    ----------
    iteration : ndarray of int64, shape (k,)
        Iteration number (0 = initial embedding).
    elapsed : ndarray of float64, shape (k,)
        Wall-clock seconds since ``fit`` started (input validation and
        initialisation included; time spent in a user ``callback`` included).
    loss : ndarray of float64, shape (k,)
        The objective at that iterate (mean per-triplet loss, plus the penalty
        for GNMDS).
    """

    iteration: np.ndarray
    elapsed: np.ndarray
    loss: np.ndarray

    def __len__(self) -> int:
        return int(self.iteration.size)

    def as_dict(self) -> dict:
        """The three arrays as plain lists (for JSON)."""
        return {
            "iteration": self.iteration.tolist(),
            "elapsed": self.elapsed.tolist(),
            "loss": self.loss.tolist(),
        }


class TripletEmbedding(ParamsMixin):
    """Base class: an embedding fitted by L-BFGS-B on a triplet loss.

    Subclasses set ``_kind`` (a :mod:`loe_viz.kernels.losses` kind code) and
    implement ``_loss_params(d) -> (param, regularization)``, which validates
    their own parameters.

    Parameters
    ----------
    n_components : int, default 2
        Embedding dimension ``d``.
    max_iter : int, default 1000
        Maximum number of L-BFGS-B iterations.
    tol : float, default 1e-7
        Stop when an iteration lowers the objective by less than
        ``tol * max(|f|, 1)`` (scipy's ``ftol``), or when the largest gradient
        entry is below ``tol * 1e-3`` (scipy's ``gtol``).
    time_budget : float, optional
        Seconds after which the run stops and returns the last completed
        iterate (checked at every loss evaluation once one iteration is done,
        so at least one iteration always runs).
    callback : callable, optional
        ``callback(iteration, embedding)`` after every iteration, with the
        iteration number (1-based) and a copy of the current ``(n, d)``
        embedding. Returning a true value stops the run after that iteration.
    random_state : None, int, SeedSequence, numpy.random.Generator or RandomState
        Seed of the random initialisation. An int seeds a stream of its own:
        ``STE(random_state=0)`` never starts at the points
        ``make_points("gaussian", random_state=0)`` drew.
    verbose : bool, default False
        Print the objective every 10 iterations and the stop reason.
    init_scale : float, default 0.1
        Standard deviation of the Gaussian random initialisation. Every loss
        (but CKL's with ``mu=0``) has a saddle where all items share one point
        and changes only as a power of the distance from it, so from a small
        start (say 1e-4) an iteration can gain less than ``tol`` resolves. Such
        a start is fitted with the ``tol`` test off until the objective is
        ``1e-3 * max(|f|, 1)`` below the saddle's ``f``, then afresh with it on.
        A start so close that no iteration lowers the objective (say 1e-12)
        ends with ``stop_reason_ == "line_search"`` and an
        ``optimizer_message_`` that says so, never ``"converged"``.
    n_jobs : int, default 1
        Threads used by the loss kernel (``-1``: every core). ``1`` runs the
        kernel serially; more splits the triplets into chunks with separate
        gradient buffers (numba ``prange``). On an idle 2-core machine two
        threads made one loss pass 1.5-1.9x faster, but on a busy one (load
        average ~5) whole fits were 1.5-4x *slower* than serial, hence the
        default.

    Attributes
    ----------
    embedding_ : ndarray of shape (n, d)
    n_items_ : int
    n_iter_ : int
        L-BFGS-B iterations performed.
    n_evals_ : int
        Loss-and-gradient evaluations performed.
    loss_ : float
        Objective at ``embedding_``.
    history_ : FitHistory
        Iteration, elapsed seconds and objective, per iteration.
    stop_reason_ : str
        One of ``"converged"``, ``"max_iter"``, ``"callback"``,
        ``"time_budget"``, ``"line_search"`` (L-BFGS-B could not make progress
        along its search direction; usual at the optimum of the piecewise
        quadratic SOE and GNMDS losses).
    optimizer_message_ : str
        scipy's own message (or the early-stop reason).
    """

    _kind: int = -1

    def __init__(
        self,
        n_components: int = 2,
        *,
        max_iter: int = 1000,
        tol: float = 1e-7,
        time_budget: float | None = None,
        callback=None,
        random_state=None,
        verbose: bool = False,
        init_scale: float = 0.1,
        n_jobs: int = 1,
    ):
        self._set_params_from(locals())

    # -------------------------------------------------------------- checking
    def _loss_params(self, d: int) -> tuple[float, float]:  # pragma: no cover - abstract
        raise NotImplementedError

    @staticmethod
    def _collapsed_loss(param: float, regularization: float) -> float | None:
        """The objective with every item at one point, when that is a saddle of it; else None."""
        return None

    def _validated(self, draw: bool = True) -> _Settings:
        """Check every parameter (each bad one a ``ValueError`` naming it); ``draw=False`` leaves a ``RandomState``
        as it was (``rng`` None)."""
        d = check_int(self.n_components, "n_components", minimum=1)
        max_iter = check_int(self.max_iter, "max_iter", minimum=1)
        tol = check_float(self.tol, "tol", minimum=0.0)
        budget = None
        if self.time_budget is not None:
            budget = check_float(self.time_budget, "time_budget", minimum=0.0)
        if self.callback is not None and not callable(self.callback):
            raise ValueError(f"callback must be callable or None, got {type(self.callback).__name__}")
        if not isinstance(self.verbose, (bool, np.bool_)):
            raise ValueError(f"verbose must be a bool, got {self.verbose!r}")
        init_scale = check_float(self.init_scale, "init_scale", minimum=0.0, strict_minimum=True)
        n_jobs = check_n_jobs(self.n_jobs)
        rng = check_random_state(self.random_state, stream=_INIT_STREAM, draw=draw)
        param, reg = self._loss_params(d)
        return _Settings(d=d, max_iter=max_iter, tol=tol, budget=budget, init_scale=init_scale, n_jobs=n_jobs,
                         rng=rng, param=param, regularization=reg)

    @staticmethod
    def _check_init(init, n: int, d: int) -> np.ndarray:
        X0 = check_points(init, "init")
        if X0.shape != (n, d):
            raise ValueError(f"init must have shape (n_items, n_components) = ({n}, {d}), got {X0.shape}")
        if np.all(X0 == X0[0]):
            # every loss is stationary there: L-BFGS-B would stop at once and call it converged
            raise ValueError(
                "init places every item at the same point, where the gradient of every loss is zero and the "
                "fit cannot start; give distinct starting points (init=None draws a random start)"
            )
        return X0.copy()

    # ----------------------------------------------------------------- fitting
    def loss_and_grad(self, embedding, triplets) -> tuple[float, np.ndarray]:
        """The objective and its gradient at ``embedding`` for ``triplets``.

        Parameters
        ----------
        embedding : array-like of shape (n, d)
        triplets : int array-like of shape (m, 3), list-order

        Returns
        -------
        loss : float
        grad : ndarray of shape (n, d)
        """
        X = check_points(embedding, "embedding")
        T, _ = check_triplets(triplets, n_items=max(X.shape[0], 3))
        if T.max() >= X.shape[0]:
            raise ValueError(f"triplets index {int(T.max())} is out of range for {X.shape[0]} embedded items")
        param, reg = self._loss_params(X.shape[1])
        return _losses.triplet_loss_grad(X, T, self._kind, param, reg, 1)

    def fit(self, triplets, n_items: int | None = None, init=None, progress=None) -> "TripletEmbedding":
        """Fit the embedding to list-order triplets.

        Parameters
        ----------
        triplets : int array-like of shape (m, 3)
            List-order: row ``(i, j, k)`` says item ``i`` is closer to ``j`` than to ``k``.
        n_items : int, optional
            Number of items (default: largest index + 1). Items that appear in
            no triplet keep their initial position, with a warning. More items than the
            available memory holds (about ``330 * n_components`` bytes each)
            are refused before anything is allocated; a fit of 1 GiB or more
            in which fewer than 1 % of the items appear in any triplet is
            warned about (a stray large id, or ids never mapped to 0..k-1).
        init : array-like of shape (n_items, n_components), optional
            Starting embedding (e.g. LOE's); default a Gaussian with standard
            deviation ``init_scale`` drawn from ``random_state``. A start with
            every item at the same point (e.g. all zeros) is refused: every
            loss has zero gradient there, so no fit could leave it.
        progress : None, True or callable, optional
            True draws a tqdm bar; a callable gets ``progress("iteration", it, max_iter)``
            after every iteration, and with unchanged counts every ``2**22`` triplets
            of a longer pass (see :func:`loe_viz.progress.resolve_progress`). An
            exception it raises stops the fit and propagates.

        Returns
        -------
        self
        """
        return self._fit(triplets, n_items, init, progress)

    def _fit(self, triplets, n_items, init, progress, check_items: bool = True) -> "TripletEmbedding":
        """:meth:`fit`; ``check_items=False`` for a caller that has checked (and warned about) the items'
        memory at this fit's bytes per item already (LOE-STE, before its LOE stage)."""
        progress = resolve_progress(progress)
        t_start = time.perf_counter()
        cfg = self._validated()
        d = cfg.d
        T, n = check_triplets(triplets, n_items)  # its memory floor is below this fit's own check
        check_dimension_fits(d, n)
        if check_items:
            _check_item_memory(n, n_items is not None, _item_bytes(d, cfg.n_jobs),
                               f"{type(self).__name__} at n_components={d}", T, stacklevel=4)
            _warn_groups(triplets, T, n)
        if init is None:
            X0 = cfg.rng.normal(scale=cfg.init_scale, size=(n, d))
        else:
            X0 = self._check_init(init, n, d)
        return self._optimise(T, n, d, X0, cfg, t_start, progress)

    def fit_transform(self, triplets, n_items: int | None = None, init=None, progress=None) -> np.ndarray:
        """Fit and return ``embedding_``."""
        progress = resolve_progress(progress)
        return self.fit(triplets, n_items=n_items, init=init, progress=progress).embedding_

    def _optimise(self, T, n, d, X0, cfg: _Settings, t_start, progress=None) -> "TripletEmbedding":
        kind = self._kind
        n_jobs = cfg.n_jobs
        budget = cfg.budget
        param, reg = cfg.param, cfg.regularization
        user_cb = self.callback
        verbose = bool(self.verbose)

        state = {"n_evals": 0, "last_x": None, "last_f": None, "last_g": None, "n_iter": 0}
        x_best = X0.ravel().copy()
        hist_it, hist_t, hist_f = [], [], []
        known = None  # (x, f, g) already evaluated, handed out when scipy asks for that x first

        def over_budget():
            if budget is not None and state["n_iter"] > 0 and time.perf_counter() - t_start > budget:
                raise _Stop("time_budget")

        def between_blocks():  # inside a long pass: a heartbeat, and the time limit
            if progress is not None:
                progress("iteration", state["n_iter"], cfg.max_iter)
            over_budget()

        between = between_blocks if progress is not None or budget is not None else None  # else one block

        def fun(x):
            nonlocal known
            if known is not None:
                x_known, f_known, g_known = known
                known = None
                if np.array_equal(x, x_known):
                    return f_known, g_known
            over_budget()
            f, g = _losses.triplet_loss_grad(x.reshape(n, d), T, kind, param, reg, n_jobs, between)
            state["n_evals"] += 1
            state["last_x"] = x
            state["last_f"] = f
            state["last_g"] = g = g.ravel()
            if not hist_it:  # scipy evaluates the starting point first
                hist_it.append(0)
                hist_t.append(time.perf_counter() - t_start)
                hist_f.append(f)
            return f, g

        f_best = np.inf

        def cb(xk):
            nonlocal x_best, f_best
            state["n_iter"] += 1
            it = state["n_iter"]
            if state["last_x"] is not None and np.array_equal(state["last_x"], xk):
                fk = state["last_f"]
            else:  # not expected with L-BFGS-B, whose iterate is its last evaluation
                fk, _ = _losses.triplet_loss_grad(xk.reshape(n, d), T, kind, param, reg, n_jobs)
            x_best = xk.copy()
            f_best = fk
            hist_it.append(it)
            hist_t.append(time.perf_counter() - t_start)
            hist_f.append(fk)
            if verbose and it % 10 == 0:
                print(f"{type(self).__name__}: iteration {it}, loss {fk:.6g}, {hist_t[-1]:.2f} s", flush=True)
            if progress is not None:
                progress("iteration", it, cfg.max_iter)
            if user_cb is not None and user_cb(it, x_best.reshape(n, d).copy()):
                raise _Stop("callback")
            if budget is not None and time.perf_counter() - t_start > budget:
                raise _Stop("time_budget")
            if escape_below is not None and fk <= escape_below:
                raise _Stop("escaped")

        maxfun = max(15000, 50 * cfg.max_iter)

        def lbfgsb(tol):
            """One L-BFGS-B run from ``x_best`` with the iterations and evaluations left: ``(stop reason,
            message)``; keeps the best iterate in ``x_best``."""
            nonlocal x_best, f_best, known
            reuse = state["last_x"] is not None and np.array_equal(state["last_x"], x_best)
            if reuse:  # scipy's first call, at x_best, gets the last evaluation: no second pass
                known = (x_best.copy(), state["last_f"], state["last_g"])
            options = dict(maxiter=cfg.max_iter - state["n_iter"], maxfun=max(maxfun - state["n_evals"] + reuse, 1),
                           ftol=tol, gtol=tol * 1e-3)
            try:
                res = minimize(fun, x_best.copy(), jac=True, method="L-BFGS-B", callback=cb, options=options)
            except _Stop as stop:
                return stop.reason, f"stopped by {stop.reason}"
            message = res.message if isinstance(res.message, str) else str(res.message)
            # scipy's final x is its last accepted iterate; keep it if it is better
            if res.fun <= f_best:
                x_best = np.asarray(res.x, dtype=np.float64).copy()
                f_best = float(res.fun)
            return {0: "converged", 1: "max_iter"}.get(res.status, "line_search"), message

        # Without a penalty, every loss but CKL's with mu = 0 has a saddle where all items share one point
        # (the gradient is zero there, or for SOE every direction is a kink), and changes only as a power of the
        # distance from it. From a start that close (a small init_scale), L-BFGS-B met the relative-reduction
        # test within two iterations, at chance accuracy, and called it converged: an iteration that gained
        # next to nothing, or one whose steps from next to the saddle left its curvature memory pointing
        # nowhere. Such a fit runs with the tol tests off until its objective is clear of the collapsed
        # embedding's, then afresh with them on. "That close" is judged by the decrease in reach at the
        # start's own distance from the saddle, not by its objective, which can equal the saddle's by mere
        # cancellation at any distance.
        escape_below = None
        collapsed = self._collapsed_loss(param, reg)
        scale = 1.0 if collapsed is None else max(abs(collapsed), 1.0)

        def start_next_to_collapse():
            reach = np.linalg.norm(state["last_g"]) * np.linalg.norm(X0 - X0.mean(axis=0))
            return collapsed is not None and reach <= _NEAR * cfg.tol * scale

        def ends_next_to_collapse(f):  # the objective at the end cannot be told from the saddle's
            return collapsed is not None and abs(f - collapsed) <= cfg.tol * scale

        def current():  # the objective at x_best (before the first iteration: the start's)
            return f_best if np.isfinite(f_best) else state["last_f"]

        def escape():
            nonlocal escape_below
            escape_below = collapsed - _ESCAPE * scale
            while True:  # a run that lowered the objective but stopped short is followed by a fresh one
                if state["n_iter"] >= cfg.max_iter:
                    reason, message = "max_iter", "STOP: TOTAL NO. OF ITERATIONS REACHED LIMIT"
                    break
                f_run = current()
                reason, message = lbfgsb(0.0)
                if reason not in ("converged", "line_search") or not f_best < f_run:
                    break
            escape_below = None
            if reason == "escaped":
                if verbose:
                    print(f"{type(self).__name__}: clear of the collapsed embedding after {state['n_iter']} "
                          f"iterations, loss {f_best:.6g}; L-BFGS-B starts afresh", flush=True)
                if state["n_iter"] >= cfg.max_iter:
                    return "max_iter", "STOP: TOTAL NO. OF ITERATIONS REACHED LIMIT"
                return lbfgsb(cfg.tol)
            if reason in ("converged", "line_search"):  # no iteration lowers the objective any more
                fix = ("start farther from it (a larger init_scale)" if reg == 0.0 else
                       f"with regularization={reg:g} it can be the optimum; if not, start farther from it (a "
                       "larger init_scale)")
                return "line_search", (
                    f"no progress next to the collapsed embedding (every item at one point, where the loss is "
                    f"stationary): the objective is {current() - collapsed:+.3g} from its {collapsed:.6g} ({message}); "
                    f"{fix}")
            return reason, message

        with blas_single_thread():
            fun(x_best)  # the start's objective decides how to begin; scipy's first call reuses it
            if start_next_to_collapse():
                reason, message = escape()
            else:
                reason, message = lbfgsb(cfg.tol)
                # drifted there from farther out (with a penalty the collapsed embedding can be the optimum)
                if reason == "converged" and reg == 0.0 and ends_next_to_collapse(f_best):
                    reason, message = escape()
        if verbose:
            print(f"{type(self).__name__}: {reason} after {state['n_iter']} iterations ({message}), loss {f_best:.6g}", flush=True)
        if progress is not None and reason != "callback":  # the last call says it is done
            progress("iteration", state["n_iter"], state["n_iter"])

        self.embedding_ = x_best.reshape(n, d)
        self.n_items_ = n
        self.n_iter_ = state["n_iter"]
        self.n_evals_ = state["n_evals"]
        self.loss_ = float(f_best)
        self.stop_reason_ = reason
        self.optimizer_message_ = message
        self.history_ = FitHistory(
            iteration=np.asarray(hist_it, dtype=np.int64),
            elapsed=np.asarray(hist_t, dtype=np.float64),
            loss=np.asarray(hist_f, dtype=np.float64),
        )
        return self


class STE(TripletEmbedding):
    """Stochastic Triplet Embedding (van der Maaten & Weinberger, 2012).

    Minimises the mean of ``-log p_ijk`` with
    ``p_ijk = exp(-D_ij) / (exp(-D_ij) + exp(-D_ik))`` (squared distances): the
    maximum-likelihood embedding under the BTL noise model
    ``P = sigmoid(D_ik - D_ij)``.

    Parameters
    ----------
    n_components, max_iter, tol, time_budget, callback, random_state, verbose, init_scale, n_jobs
        See :class:`loe_viz.baselines.TripletEmbedding`.

    Attributes
    ----------
    embedding_, n_iter_, n_evals_, loss_, history_, stop_reason_, optimizer_message_
        See :class:`loe_viz.baselines.TripletEmbedding`.
    """

    _kind = _losses.KIND_STE

    def _loss_params(self, d):
        return 0.0, 0.0

    @staticmethod
    def _collapsed_loss(param, regularization):
        return float(np.log(2.0))  # p_ijk = 1/2


class TSTE(TripletEmbedding):
    """t-Distributed Stochastic Triplet Embedding (van der Maaten & Weinberger, 2012).

    STE with the heavy-tailed Student-t kernel ``q = (1 + D / alpha) ** (-(alpha + 1) / 2)``:
    minimises the mean of ``-log(q_ij / (q_ij + q_ik))``.

    Parameters
    ----------
    n_components, max_iter, tol, time_budget, callback, random_state, verbose, init_scale, n_jobs
        See :class:`loe_viz.baselines.TripletEmbedding`.
    alpha : float, optional
        Degrees of freedom (> 0); default ``max(n_components - 1, 1)``.

    Notes
    -----
    Nothing in the loss fixes the embedding's scale, and the heavy tails keep lowering it as the
    satisfied triplets' items move apart: the embedding grows for as long as the optimiser runs, so
    its scale depends on ``tol`` and ``max_iter`` (root mean square 218 at the default ``tol``, 27,586
    at ``tol=1e-12``, on the bundled ``gaussian_2d_crowd.csv``) while its shape and held-out accuracy
    do not (0.845 both). Compare t-STE's embeddings with others after a similarity alignment
    (:func:`loe_viz.metrics.procrustes_error`), as every metric here does.
    """

    _kind = _losses.KIND_TSTE

    def __init__(self, n_components=2, *, alpha=None, **kwargs):
        super().__init__(n_components, **kwargs)
        self.alpha = alpha

    def _loss_params(self, d):
        if self.alpha is None:
            return float(max(d - 1, 1)), 0.0
        return check_float(self.alpha, "alpha", minimum=0.0, strict_minimum=True), 0.0

    @staticmethod
    def _collapsed_loss(param, regularization):
        return float(np.log(2.0))  # q_ij = q_ik = 1


class SOE(TripletEmbedding):
    """Soft Ordinal Embedding (Terada & von Luxburg, 2014).

    Minimises the mean of ``max(0, margin + ||x_i - x_j|| - ||x_i - x_k||) ** 2``
    (unsquared distances).

    Parameters
    ----------
    n_components, max_iter, tol, time_budget, callback, random_state, verbose, init_scale, n_jobs
        See :class:`loe_viz.baselines.TripletEmbedding`.
    margin : float, default 0.1
        Required gap between the two distances (> 0); it fixes the scale.
    """

    _kind = _losses.KIND_SOE

    def __init__(self, n_components=2, *, margin=0.1, **kwargs):
        super().__init__(n_components, **kwargs)
        self.margin = margin

    def _loss_params(self, d):
        return check_float(self.margin, "margin", minimum=0.0, strict_minimum=True), 0.0

    @staticmethod
    def _collapsed_loss(margin, regularization):
        return margin * margin  # every hinge at the margin


class GNMDS(TripletEmbedding):
    """Generalised Non-metric Multidimensional Scaling (Agarwal et al., 2007), in embedding space.

    Minimises the mean hinge loss ``max(0, 1 + D_ij - D_ik)`` on squared
    distances plus ``regularization * ||X||_F^2``.

    Parameters
    ----------
    n_components, max_iter, tol, time_budget, callback, random_state, verbose, init_scale, n_jobs
        See :class:`loe_viz.baselines.TripletEmbedding`.
    regularization : float, default 0.0
        Weight of the l2 penalty (>= 0). Relative to a *summed* hinge loss (as
        in cblearn's ``lambd``) this is ``lambd / m``.
    """

    _kind = _losses.KIND_GNMDS

    def __init__(self, n_components=2, *, regularization=0.0, **kwargs):
        super().__init__(n_components, **kwargs)
        self.regularization = regularization

    def _loss_params(self, d):
        return 0.0, check_float(self.regularization, "regularization", minimum=0.0)

    @staticmethod
    def _collapsed_loss(param, regularization):
        return 1.0  # every hinge at 1, no penalty


class CKL(TripletEmbedding):
    """Crowd Kernel Learning (Tamuz et al., 2011), in embedding space.

    Minimises the mean of ``-log p_ijk`` with
    ``p_ijk = (mu + D_ik) / (2 mu + D_ij + D_ik)``.

    Parameters
    ----------
    n_components, max_iter, tol, time_budget, callback, random_state, verbose, init_scale, n_jobs
        See :class:`loe_viz.baselines.TripletEmbedding`.
    mu : float, default 0.1
        Regulariser (>= 0). Scaling the embedding by ``c`` is the same as
        dividing ``mu`` by ``c ** 2``, so any ``mu > 0`` reaches the same
        optimum up to scale; ``mu = 0`` (cblearn's default) makes the loss
        scale-invariant and L-BFGS-B then drifts into degenerate local minima
        (measured at n = 1000, d = 2, 345k BTL triplets, three seeds: Procrustes
        error 0.05 to 0.62 with ``mu = 0`` against 0.0215 with ``mu`` = 0.01 or 0.1).
    """

    _kind = _losses.KIND_CKL

    def __init__(self, n_components=2, *, mu=0.1, **kwargs):
        super().__init__(n_components, **kwargs)
        self.mu = mu

    def _loss_params(self, d):
        return check_float(self.mu, "mu", minimum=0.0), 0.0

    @staticmethod
    def _collapsed_loss(mu, regularization):
        # p_ijk = mu / (2 mu); with mu = 0 the loss is scale-invariant: a small start is as good as any
        return float(np.log(2.0)) if mu > 0.0 else None


def _warn_groups(given, T, n):
    """Warn, at the first caller outside this module (``fit`` or ``fit_transform``), about items that appear in no
    triplet and where the triplets split the items into groups that none relates (named by a file's labels)."""
    import sys
    import warnings

    from .describe import comparison_groups, groups_note, item_examples
    from .io.layouts import TripletData

    labels = given.labels if isinstance(given, TripletData) else None
    groups = comparison_groups(T, n)
    absent = np.flatnonzero(groups < 0)
    notes = [f"{absent.size:,} of the {n:,} items appear in no triplet (e.g. {item_examples(absent[:5], labels)}): "
             "they stay at their starting position, which says nothing about them; leave them out of n_items, or "
             "collect triplets that name them"] if absent.size else []
    if note := groups_note(groups, labels):
        notes.append(note)
    level, frame = 1, sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__") == __name__:
        level, frame = level + 1, frame.f_back
    for note in notes:
        warnings.warn(note, stacklevel=level + 1)
