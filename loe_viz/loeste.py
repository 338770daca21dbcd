"""LOE-STE: STE warm-started from Landmark Ordinal Embedding (Ghosh, Chen & Yue, 2019).

LOE is fast but uses its comparisons less efficiently than STE; STE is
accurate but slow to leave its random start. LOE-STE spends a fraction
``eps`` of the comparison budget on landmark comparisons, fits LOE, and runs
STE from LOE's embedding on the remaining uniformly random comparisons.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from ._format import format_bytes
from ._landmark_tasks import head_counts
from ._params import ParamsMixin
from ._validation import _check_item_memory, check_float, check_int, check_random_state, check_triplets
from .baselines import STE, FitHistory, _item_bytes
from .loe import AUTO_REGULARIZATION, LOE, WELL_COVERED, auto_landmark_plan
from .oracle import check_oracle, check_table_memory
from .progress import resolve_progress
from .resources import _OVERHEAD, resolve_memory_limit

__all__ = ["LOESTE"]

#: Bytes per item and embedding dimension that an STE fit holds beside its triplets and its threads' gradient
#: buffers: L-BFGS-B's ten pairs of history vectors, its work arrays and the iterates (measured: 420 at
#: n = 10^5, d = 2).
STE_BYTES_PER_COORDINATE = 512

# LOESTE owns these; setting them through loe_params / ste_params is refused.
_LOE_OWNED = ("n_components", "n_landmarks")
_STE_OWNED = ("n_components", "callback", "time_budget")
#: On stored triplets the warm start uses up to this many times d + 3 heads (see LOESTE's n_landmarks).
START_HEADS = 4


def _start_needs(d: int, have: int, why: str) -> str:
    """The start's landmarks LOESTE chose itself are more than the data has: what it needs, and what fits."""
    fix = f"use n_components <= {have - 3}" if have > 3 else "STE, which fits every triplet, needs no landmarks"
    return f"LOESTE's start (LOE) needs at least n_components + 3 = {d + 3} landmarks, {why}; {fix}"


class LOESTE(ParamsMixin):
    """LOE-STE: Landmark Ordinal Embedding, then STE started from its embedding.

    Parameters
    ----------
    n_components : int, default 2
        Embedding dimension ``d``.
    n_landmarks : int, optional
        LOE's number of landmarks. Default in :meth:`fit_oracle`: ``d + 3``
        (the paper). Default in :meth:`fit` on stored triplets: the busiest of
        the heads that ``LOE(n_landmarks="auto")`` considers
        (:func:`loe_viz.loe.auto_landmark_plan`), at most ``4 (d + 3)``
        (``START_HEADS``), without its held-out search; when these heads
        carry fewer than ``5 n`` triplets each (collected answers: a few
        comparisons per item and head) LOE's penalty is then 1.0
        (``loe.AUTO_REGULARIZATION``, unless ``loe_params`` sets one) and it
        skips its ordinal polish (STE refines). Measured on Zipf-headed
        collected-style sets (``benchmarks/bench_collected.py --fresh``): a
        start about twice as close to the truth as from ``d + 3`` heads; with
        BTL answers LOE-STE then comes within 0.001 of STE's final held-out
        accuracy in about 0.6 times STE's time from a random start, with
        answers flipped at random in about the same time.
    eps : float, default 0.3
        Fraction of the budget :meth:`fit_oracle` spends on landmark
        comparisons, ``0 < eps < 1`` (the paper uses 0.3 for d = 2 and 0.2
        for d = 10).
    loe_params : dict, optional
        Further :class:`~loe_viz.LOE` arguments (e.g. ``regularization``,
        ``landmark_selection``, ``n_jobs``, ``random_state``).
    ste_params : dict, optional
        Further :class:`~loe_viz.baselines.STE` arguments (e.g. ``max_iter``,
        ``tol``, ``n_jobs``, ``verbose``).
    random_state : None, int, SeedSequence, numpy.random.Generator or RandomState
        Seeds LOE's landmark choice (unless ``loe_params`` gives one).
    callback : callable, optional
        ``callback(iteration, embedding)``: once with iteration 0 and LOE's
        embedding, then after every STE iteration. Returning a true value
        stops the run (at iteration 0: STE is skipped).
    time_budget : float, optional
        Seconds for the whole fit (sampling, LOE and STE). LOE always
        completes; STE gets what is left, and is skipped when nothing is.

    Attributes
    ----------
    embedding_ : ndarray of shape (n, d)
    n_items_ : int
        Number of items ``n``, as LOE and STE report it.
    loe_ : LOE
        The fitted LOE.
    ste_ : STE or None
        The fitted STE (None when it was skipped).
    history_ : FitHistory
        Point 0 is LOE's embedding (its elapsed time is when LOE finished, its
        loss STE's objective there); the others are STE's iterations, with
        elapsed seconds counted from the start of the LOE-STE fit.
    n_iter_ : int
        STE iterations.
    stop_reason_ : str
        STE's stop reason, or ``"callback"`` / ``"time_budget"`` if STE was skipped.
    timings_ : dict
        Seconds: ``loe`` (sampling and fitting the landmark comparisons),
        ``sampling`` (drawing the uniform comparisons; :meth:`fit_oracle`
        only), ``ste`` and ``total``.
    n_landmark_triplets_ : int
        Comparisons used by LOE.
    n_ste_triplets_ : int
        Comparisons STE was fitted on.

    Examples
    --------
    >>> from loe_viz import TripletOracle, make_points, total_budget
    >>> X = make_points("gaussian", 500, random_state=0)
    >>> oracle = TripletOracle(X, random_state=1)
    >>> model = LOESTE(random_state=2).fit_oracle(oracle, total_budget(500, 50))
    >>> bool(model.history_.loss[-1] < model.history_.loss[0])
    True
    """

    def __init__(
        self,
        n_components: int = 2,
        *,
        n_landmarks: int | None = None,
        eps: float = 0.3,
        loe_params: dict | None = None,
        ste_params: dict | None = None,
        random_state=None,
        callback=None,
        time_budget: float | None = None,
    ):
        self._set_params_from(locals())

    # ------------------------------------------------------------------ checks
    @staticmethod
    def _check_params_dict(value, name: str, owned: tuple) -> dict:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise ValueError(f"{name} must be a dict of keyword arguments or None, got {type(value).__name__}")
        clash = [k for k in owned if k in value]
        if clash:
            raise ValueError(f"{name} must not set {', '.join(clash)}: LOESTE sets it (pass it to LOESTE instead)")
        return dict(value)

    def _build(self, progress, stored=None, n_items=None):
        """Check every parameter; build the LOE and STE stages and the progress callable.

        ``stored``: ``(triplets, n, n_items given)`` when fitting stored triplets (their heads pick the warm
        start's landmarks); ``n_items``: the oracle's items otherwise. A bad value of ``loe_params`` or
        ``ste_params`` is named as their key (``loe_params['tol'] must be > 0.0``)."""
        d = check_int(self.n_components, "n_components", minimum=1)
        eps = check_float(self.eps, "eps", minimum=0.0, strict_minimum=True)
        if eps >= 1.0:
            raise ValueError(f"eps must be < 1 (the rest of the budget goes to STE), got {eps}")
        if self.callback is not None and not callable(self.callback):
            raise ValueError(f"callback must be callable or None, got {type(self.callback).__name__}")
        budget = None
        if self.time_budget is not None:
            budget = check_float(self.time_budget, "time_budget", minimum=0.0)
        loe_kw = self._check_params_dict(self.loe_params, "loe_params", _LOE_OWNED)
        ste_kw = self._check_params_dict(self.ste_params, "ste_params", _STE_OWNED)
        rng = check_random_state(self.random_state)
        loe_kw.setdefault("random_state", int(rng.integers(0, 2**31 - 1)))
        try:
            ste = STE(n_components=d, **ste_kw)
        except TypeError as exc:
            raise ValueError(f"ste_params has an argument STE does not take: {exc}") from None
        try:
            threads = ste._validated(draw=False).n_jobs  # fail before the (possibly long) LOE stage
        except ValueError as exc:
            raise _named(exc, "ste_params", ste_kw) from None
        note = None
        if stored is not None:  # STE's stage holds the most per item: check its items before anything of size n
            T, n, given = stored
            note = _check_item_memory(n, given, _item_bytes(d, threads), f"LOE-STE's STE stage at n_components={d}",
                                      T, warn=False)
        l = self.n_landmarks
        if l is None and "landmarks" not in loe_kw:
            l = d + 3
            if stored is not None:
                counts = head_counts(*stored[:2])[0]
                # No held-out search (it cost several STE runs' time): a few times d + 3 of the heads the
                # search would consider, which spread the start far better than d + 3 of them do
                plan = auto_landmark_plan(counts, d)
                if plan.heads.size < d + 3:  # LOE would name an n_landmarks the caller never set
                    raise ValueError(_start_needs(d, plan.heads.size, "items that head triplets, but the triplets "
                                                  f"have only {plan.heads.size} distinct head item(s)"))
                l = min(plan.n_landmarks, START_HEADS * (d + 3))  # the plan has d + 3 or more
                if counts[plan.heads[min(l, plan.heads.size) - 1]] < WELL_COVERED * counts.size:
                    loe_kw.setdefault("regularization", AUTO_REGULARIZATION[0])
                    loe_kw.setdefault("refine", None)
        try:
            loe = LOE(n_components=d, n_landmarks=l, **loe_kw)
        except TypeError as exc:
            raise ValueError(f"loe_params has an argument LOE does not take: {exc}") from None
        n_items = stored[1] if stored is not None else n_items
        if n_items is not None:
            try:
                loe._validated(n_items, draw=False)
            except ValueError as exc:  # one of loe_params' values; the fit words the rest (its start's landmarks)
                if (named := _named(exc, "loe_params", loe_kw)) is not exc:
                    raise named from None
        if note is not None:  # once the other checks have passed; STE's stage does not say it again
            warnings.warn(note, stacklevel=3)
        return d, eps, budget, loe, ste, resolve_progress(progress)

    # ----------------------------------------------------------------- fitting
    def fit_oracle(self, oracle, total: int, progress=None) -> "LOESTE":
        """Spend ``total`` comparisons from ``oracle``: ``eps`` of them on LOE, the rest on STE.

        LOE draws ``floor(eps * total / l)`` comparisons for each of its ``l``
        landmarks; STE, started from LOE's embedding, is fitted on
        ``total - l * floor(eps * total / l)`` uniformly random triplets.

        Before anything is drawn, the memory of both stages is checked against
        LOE's ``memory_limit`` (set through ``loe_params``; see
        :func:`loe_viz.resources.check_memory`): LOE's estimated peak, then
        STE's table of triplets with STE's working memory and LOE's results
        (the table against the oracle's own ``memory_limit`` too). A request
        beyond either is refused with a ``ValueError`` that names the stage, the
        bytes and the limit, before LOE's comparisons are drawn.

        Parameters
        ----------
        oracle : TripletOracle
            Answers the comparisons (``comparisons`` / ``uniform_triplets``).
        total : int
            Total number of comparisons, e.g. :func:`loe_viz.total_budget`.
        progress : None, True or callable, optional
            LOE's stages, then STE's iterations (see :func:`loe_viz.progress.resolve_progress`).

        Returns
        -------
        self
        """
        t_start = time.perf_counter()
        n = int(check_oracle(oracle, "uniform_triplets").n_items)
        d, eps, budget, loe, ste, progress = self._build(progress, n_items=n)
        total = check_int(total, "total", minimum=1)
        if self.n_landmarks is not None:
            l = check_int(self.n_landmarks, "n_landmarks", minimum=1)
        elif loe.landmarks is not None:
            l = len(np.atleast_1d(loe.landmarks))
        else:
            l = d + 3
            if l > n:  # LOE would name an n_landmarks the caller never set
                raise ValueError(_start_needs(d, n, f"but there are only {n} items"))
        per_landmark = int(eps * total) // max(l, 1)
        if per_landmark < 1:
            raise ValueError(
                f"total={total} with eps={eps} leaves no comparison for each of the {l} landmarks"
            )
        m_ste = total - l * per_landmark
        if m_ste < 1:
            raise ValueError(f"total={total} leaves no comparison for STE after LOE's {l * per_landmark}")
        self._check_memory(oracle, loe, ste, n, l, per_landmark, m_ste, total, eps)
        try:
            loe.fit_oracle(oracle, per_landmark, progress=progress)
        except ValueError as exc:
            if str(exc).startswith("per_landmark"):
                raise ValueError(
                    f"total={total} is too small: eps={eps} of it gives {per_landmark} comparisons per landmark; {exc}"
                ) from None
            raise
        n_lm = int(loe.n_triplets_used_)
        t_loe = time.perf_counter()
        skip = self._stop_after_loe(loe, budget, t_start)
        if skip is not None:
            return self._finish_without_ste(loe, skip, n_lm, t_start, t_loe)
        triplets = oracle.uniform_triplets(m_ste)
        t_sample = time.perf_counter()
        return self._run_ste(ste, loe, triplets, n, budget, t_start, t_loe, t_sample - t_loe, n_lm, progress)

    def fit(self, triplets, n_items: int | None = None, progress=None) -> "LOESTE":
        """Fit on given list-order triplets.

        LOE uses the triplets headed by its landmarks (see :meth:`LOE.fit`);
        STE then starts from LOE's embedding and is fitted on all triplets.

        Parameters
        ----------
        triplets, n_items
            As for :meth:`LOE.fit`: list-order triplets of shape (m, 3), and
            the number of items (default: largest index + 1).
        progress : None, True or callable, optional
            As for :meth:`fit_oracle`.

        Returns
        -------
        self
        """
        t_start = time.perf_counter()
        T, n = check_triplets(triplets, n_items)
        d, eps, budget, loe, ste, progress = self._build(progress, (T, n, n_items is not None))
        from .io.layouts import TripletData

        # the file's triplets as read: LOE's warnings name their items by its labels
        loe.fit(triplets if isinstance(triplets, TripletData) else T, n_items=n, progress=progress)
        n_lm = int(loe.n_triplets_used_)
        t_loe = time.perf_counter()
        skip = self._stop_after_loe(loe, budget, t_start)
        if skip is not None:
            return self._finish_without_ste(loe, skip, n_lm, t_start, t_loe)
        return self._run_ste(ste, loe, T, n, budget, t_start, t_loe, 0.0, n_lm, progress)

    def fit_transform(self, triplets, n_items: int | None = None, progress=None) -> np.ndarray:
        """Fit on triplets and return ``embedding_``."""
        progress = resolve_progress(progress)
        return self.fit(triplets, n_items=n_items, progress=progress).embedding_

    # --------------------------------------------------------------- internals
    @staticmethod
    def _check_memory(oracle, loe, ste, n, l, per_landmark, m_ste, total, eps) -> None:
        """Refuse, before LOE draws anything, a fit_oracle whose LOE or STE stage would exceed the memory limit.

        LOE checks its own stage only when it starts, and the STE stage's triplets were drawn (or refused) only
        once LOE had finished: a total too large for STE cost the whole LOE stage first.
        """
        what = f"total={total:,} with eps={eps}"
        est = loe.estimate_resources(n, per_landmark)
        limit, how = resolve_memory_limit(loe.memory_limit)
        if est.peak_bytes > limit:
            raise ValueError(
                f"memory_limit exceeded: LOE-STE's start (LOE, {per_landmark:,} comparisons for each of {l} "
                f"landmarks: {what}) needs an estimated {est.summary()}, more than the limit of "
                f"{format_bytes(limit)} ({how}). Use a smaller total or eps, fewer parallel jobs (n_jobs), or a "
                "higher memory_limit in loe_params (float('inf') turns the check off)."
            )
        d = int(ste.n_components)
        threads = ste._validated(draw=False).n_jobs  # each keeps a gradient buffer
        held = est.details["results_bytes"] + (STE_BYTES_PER_COORDINATE + 8 * threads) * n * d + _OVERHEAD
        request = f"LOE-STE's STE stage ({m_ste:,} uniformly random triplets: {what})"
        advice = "Use a smaller total (or a larger eps), or a higher memory_limit"
        check_table_memory(request, m_ste, n, loe.memory_limit, extra_bytes=held,
                           advice=f"{advice} in loe_params")
        # the oracle refuses a table beyond its own limit when asked for it: ask it now, not after LOE
        check_table_memory(request, m_ste, n, getattr(oracle, "memory_limit", None),
                           advice=f"{advice} of the oracle")

    def _stop_after_loe(self, loe, budget, t_start) -> str | None:
        """Why STE is skipped (``"callback"`` or ``"time_budget"``), or None to run it."""
        if self.callback is not None and self.callback(0, np.array(loe.embedding_, dtype=np.float64)):
            return "callback"
        if budget is not None and time.perf_counter() - t_start >= budget:
            return "time_budget"
        return None

    def _finish_without_ste(self, loe, reason, n_lm, t_start, t_loe) -> "LOESTE":
        """STE skipped (nothing sampled for it): LOE's embedding is the result."""
        now = time.perf_counter()
        self.loe_ = loe
        self.ste_ = None
        self.embedding_ = np.array(loe.embedding_, dtype=np.float64)
        self.n_items_ = int(loe.n_items_)
        self.n_iter_ = 0
        self.stop_reason_ = reason
        self.n_landmark_triplets_ = n_lm
        self.n_ste_triplets_ = 0
        self.history_ = FitHistory(
            iteration=np.zeros(1, dtype=np.int64),
            elapsed=np.array([t_loe - t_start]),
            loss=np.array([np.nan]),
        )
        self.timings_ = {"loe": t_loe - t_start, "sampling": 0.0, "ste": 0.0, "total": now - t_start}
        return self

    def _run_ste(self, ste, loe, triplets, n, budget, t_start, t_loe, t_sample, n_lm, progress=None) -> "LOESTE":
        t_ste = time.perf_counter()
        offset = t_ste - t_start
        if budget is not None:
            ste.time_budget = max(budget - offset, 0.0)
        if self.callback is not None:
            ste.callback = self.callback
        init = np.array(loe.embedding_, dtype=np.float64)
        ste._fit(triplets, n, init, progress, check_items=False)  # checked with LOE's stage (or fit_oracle's)
        now = time.perf_counter()
        h = ste.history_
        self.loe_ = loe
        self.ste_ = ste
        self.embedding_ = ste.embedding_
        self.n_items_ = int(ste.n_items_)
        self.n_iter_ = ste.n_iter_
        self.stop_reason_ = ste.stop_reason_
        self.n_landmark_triplets_ = n_lm
        self.n_ste_triplets_ = int(np.asarray(triplets).shape[0])
        self.history_ = FitHistory(iteration=h.iteration.copy(), elapsed=h.elapsed + offset, loss=h.loss.copy())
        self.timings_ = {"loe": t_loe - t_start, "sampling": t_sample, "ste": now - t_ste, "total": now - t_start}
        return self


def _named(exc: ValueError, name: str, given: dict) -> ValueError:
    """A stage's ``ValueError`` about one of the values ``given`` in ``name`` (``"tol must be > 0.0"``), worded as
    that key of ``name`` (``"loe_params['tol'] must be > 0.0"``); about anything else, as it was."""
    text = str(exc)
    key = next((k for k in given if text.startswith(f"{k} ")), None)
    return ValueError(f"{name}[{key!r}]{text[len(key):]}") if key is not None else exc
