"""The Landmark Ordinal Embedding estimator."""

from __future__ import annotations

import os
import time
import warnings
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from ._landmark_tasks import StoredTriplets, landmark_share, rank_share
from ._params import ParamsMixin
from ._validation import check_float, check_int, check_random_state, check_regularization, check_triplets
from .edm import EDMResult, project_edm
from .kernels import triplets as triplet_kernels
from .lmds import LMDSResult, landmark_mds
from .ranking import ColumnRanking, RankingResult, rank_column
from .refine import RefineResult, polish as ordinal_polish
from .resources import ResourceEstimate, check_memory, estimate_resources, resolve_memory_limit
from .shifts import OFFSET_METHODS, ShiftResult, estimate_shifts

__all__ = ["LOE", "LOEStages", "LOEWarning", "LANDMARK_SELECTIONS"]

#: Landmark choices: ``"random"`` (the paper) or ``"maxmin"`` (each next landmark is
#: the item farthest from those chosen so far, read off the rankings already fitted).
LANDMARK_SELECTIONS = ("random", "maxmin")
REFINE_MODES = ("auto", "ordinal", None)
#: ``refine="auto"`` treats answers as noiseless when every landmark's fitted
#: scores reproduce at least this fraction of its comparisons.
NOISELESS_AGREEMENT = 0.999


class LOEWarning(UserWarning):
    """Something about the input weakens the embedding (e.g. items no landmark ranked)."""


@dataclass(frozen=True)
class LOEStages:
    """Every intermediate result of one LOE fit, for inspection and teaching.

    Attributes
    ----------
    landmarks : ndarray (l,)
        Item index of each landmark, in column order.
    ranking : RankingResult
        ``R`` (n, l) and per-landmark solver diagnostics.
    shifts : ShiftResult
        ``W``, least-squares shifts, eigenvalues, offset and final shifts.
    edm : EDMResult
        The shifted block, its EDM projection ``E`` and Dykstra's convergence.
    lmds : LMDSResult
        Embedding and the eigenvalues of ``-1/2 V E V``.
    refine : RefineResult or None
        The ordinal polish (:func:`loe_viz.refine.polish`) when it ran and fitted the
        landmarks' orders better than landmark MDS, else None.
    D_landmarks : ndarray (n, l)
        Estimated squared distances from every item to every landmark: ``R + 1 s^T``
        (rows ``F`` of the paper for the non-landmarks).
    timings : dict
        Seconds spent in each stage (``sampling`` when the comparisons were drawn
        from an oracle, ``ranking``, ``shifts``, ``edm``, ``lmds``, ``refine``,
        ``total``).
    n_triplets_used : int
        Comparisons that entered the rankings.
    """

    landmarks: np.ndarray
    ranking: RankingResult
    shifts: ShiftResult
    edm: EDMResult
    lmds: LMDSResult
    D_landmarks: np.ndarray
    timings: dict = field(default_factory=dict)
    n_triplets_used: int = 0
    refine: RefineResult | None = None

    @property
    def R(self) -> np.ndarray:
        return self.ranking.R

    @property
    def W(self) -> np.ndarray:
        return self.shifts.W

    @property
    def E(self) -> np.ndarray:
        return self.edm.E

    @property
    def F(self) -> np.ndarray:
        """Estimated distances of the non-landmark items to the landmarks (item order)."""
        keep = np.ones(self.D_landmarks.shape[0], dtype=bool)
        keep[self.landmarks] = False
        return self.D_landmarks[keep]


def _rank_arrays(near, far, head, n_items, rank_kw):
    """Executor task: rank one landmark from its comparisons."""
    return rank_column(near, far, head, n_items, **rank_kw)


def _rank_oracle(oracle, head, per_landmark, seed, rank_kw):
    """Executor task: draw one landmark's comparisons from the oracle, then rank them.

    Only the oracle's points travel to a remote worker; the comparisons are
    reproduced there from the seed.
    """
    t0 = time.perf_counter()
    near, far = oracle.comparisons(head, per_landmark, seed, tiled=True)  # already in cache order
    t1 = time.perf_counter()
    col = rank_column(near, far, head, oracle.n_items, reorder=False, **rank_kw)
    return col, t1 - t0, time.perf_counter() - t1


class LOE(ParamsMixin):
    """Landmark Ordinal Embedding (Ghosh, Chen & Yue, NeurIPS 2019).

    Embeds ``n`` items in ``R^d`` from triplet comparisons headed by a few
    landmark items: one regularised BTL ranking per landmark estimates that
    landmark's column of squared distances up to a shift; the shifts are
    recovered from the landmark block (least squares plus the second
    eigenvalue), the block is projected onto the EDM cone, and landmark MDS
    places every item. Cost ``O(l m)`` for ``m`` comparisons per landmark.

    Parameters
    ----------
    n_components : int, default 2
        Embedding dimension ``d``.
    n_landmarks : int, optional
        Number of landmarks ``l >= d + 3``; defaults to ``d + 3`` (the paper), or to
        ``len(landmarks)`` when those are given.
    landmarks : sequence of int, optional
        Item indices to use as landmarks.
    landmark_selection : {"random", "maxmin"}, default "random"
        How :meth:`fit_oracle` picks landmarks when none are given. ``"maxmin"``
        picks each next landmark as the item farthest from those already chosen,
        read off their fitted rankings. :meth:`fit` on given triplets picks the
        heads with the most triplets (``"random"``) or, with ``"maxmin"``, applies
        the same rule among the well-covered heads.
    regularization : float, default 1e-3
        ``lambda`` of the BTL penalty ``lambda / 2 ||w||^2`` (the paper's small
        ``lambda > 0``); any value > 0 keeps items with no comparisons finite.
        Larger values (0.01 to 0.1) converge in fewer Newton steps at large n,
        where items that win or lose all their comparisons have diverging
        likelihood scores, and help on spread-out configurations; they shrink the
        scores of such items and cost accuracy on clustered ones (measured in
        ``benchmarks/bench_loe.py``).
    offset : {"lambda2", "mean"}, default "lambda2"
        Offset rule: the paper's second-largest eigenvalue, or the average of the
        eigenvalues that equal the offset without noise (less variance when
        ``l > d + 3``).
    tol : float, default 1e-5
        Newton tolerance of each ranking (largest score change).
    max_iter : int, default 50
        Newton iterations per ranking.
    n_jobs : int, default 1
        Threads ranking landmarks in parallel (the kernels release the GIL);
        ``-1`` uses every core.
    executor : concurrent.futures.Executor, optional
        Runs the per-landmark rankings instead of the thread pool, e.g. a
        ``dask.distributed`` client's ``get_executor()``. Results do not depend
        on the executor. With stored triplets memory-mapped from a ``.npy`` file
        (``np.load(path, mmap_mode="r")``), each task re-opens the file and reads
        its landmark's share (workers must see the file at the same path);
        otherwise the caller sends each landmark's share.
    memory_limit : None, int, float or str, default None
        Refuse (``ValueError``, quoting the estimate of
        :func:`loe_viz.estimate_resources`) a run whose estimated peak memory
        exceeds this: bytes, a size such as ``"8GiB"``, or a percentage of the
        available memory such as ``"50%"``. ``None``: 80% of the memory
        available when fitting; ``float("inf")``: no check. With an executor
        other than threads, only this process's share is checked.
    refine : {"auto", "ordinal", None}, default "auto"
        Ordinal polish after landmark MDS (:func:`loe_viz.refine.ordinal_refine`):
        the embedding is fitted to the order of each landmark's scores by
        non-metric MDS. Noiseless answers leave the BTL likelihood without a
        finite maximiser and make the scores rank-like, which distorts the
        layout; their order is exact, and the polish recovers the points
        closely from it. ``"auto"`` runs it only when the rankings reproduce at
        least 99.9% of their comparisons (the answers look noiseless);
        ``"ordinal"`` always; ``None`` never (the paper's algorithm alone).
    random_state : None, int or numpy.random.Generator
        Seed of the random landmark choice.

    Attributes
    ----------
    embedding_ : ndarray (n, d)
        The embedding, rows in the caller's item order.
    landmarks_ : ndarray (l,)
    n_items_ : int
    n_triplets_used_ : int
        Comparisons headed by a landmark, i.e. those the rankings used.
    triplets_per_landmark_ : ndarray (l,)
    stages_ : LOEStages
        Every intermediate result (rankings, shifts, EDM projection, LMDS, timings).
    resource_estimate_ : ResourceEstimate
        The memory and time estimate the run was checked against.

    Examples
    --------
    >>> X = make_points("gaussian", 500, random_state=0)
    >>> oracle = TripletOracle(X, random_state=1)
    >>> Z = LOE(n_components=2, random_state=2).fit_oracle(oracle, per_landmark=20_000).embedding_
    >>> procrustes_error(X, Z) < 0.2
    True
    """

    def __init__(
        self,
        n_components: int = 2,
        *,
        n_landmarks: int | None = None,
        landmarks=None,
        landmark_selection: str = "random",
        regularization: float = 1e-3,
        offset: str = "lambda2",
        tol: float = 1e-5,
        max_iter: int = 50,
        n_jobs: int = 1,
        executor: Executor | None = None,
        memory_limit=None,
        refine: str | None = "auto",
        random_state=None,
    ):
        self.n_components = n_components
        self.n_landmarks = n_landmarks
        self.landmarks = landmarks
        self.landmark_selection = landmark_selection
        self.regularization = regularization
        self.offset = offset
        self.tol = tol
        self.max_iter = max_iter
        self.n_jobs = n_jobs
        self.executor = executor
        self.memory_limit = memory_limit
        self.refine = refine
        self.random_state = random_state

    def _validated(self, n_items: int) -> dict:
        d = check_int(self.n_components, "n_components", minimum=1)
        lm = None
        if self.landmarks is not None:
            lm = np.asarray(self.landmarks)
            if lm.ndim != 1 or lm.size == 0:
                raise ValueError(f"landmarks must be a non-empty 1-D sequence of item indices, got shape {lm.shape}")
            if lm.dtype.kind == "f" and np.all(lm == np.round(lm)):
                lm = lm.astype(np.int64)
            if lm.dtype.kind not in "iu":
                raise ValueError(f"landmarks must hold integer item indices, got dtype {lm.dtype}")
            bad = lm[(lm < 0) | (lm >= n_items)]
            if bad.size:
                raise ValueError(f"landmarks index {int(bad[0])} is out of range for n_items={n_items}")
            if np.unique(lm).size != lm.size:
                raise ValueError("landmarks must be distinct items, got repeats")
            lm = lm.astype(np.int64)
        if self.n_landmarks is None:
            l = lm.size if lm is not None else d + 3
        else:
            l = check_int(self.n_landmarks, "n_landmarks", minimum=1)
            if lm is not None and lm.size != l:
                raise ValueError(f"n_landmarks={l} disagrees with the {lm.size} landmarks given")
        if l < d + 3:
            raise ValueError(
                f"n_landmarks must be >= n_components + 3 = {d + 3} (LOE needs l >= d + 3 to recover the shifts), got {l}"
            )
        if l > n_items:
            raise ValueError(f"n_landmarks={l} is larger than the number of items ({n_items})")
        if self.landmark_selection not in LANDMARK_SELECTIONS:
            raise ValueError(
                f"landmark_selection must be one of {', '.join(LANDMARK_SELECTIONS)}; got {self.landmark_selection!r}"
            )
        if self.offset not in OFFSET_METHODS:
            raise ValueError(f"offset must be one of {', '.join(OFFSET_METHODS)}; got {self.offset!r}")
        reg = check_regularization(self.regularization)
        tol = check_float(self.tol, "tol", minimum=0.0, strict_minimum=True)
        max_iter = check_int(self.max_iter, "max_iter", minimum=1)
        n_jobs = check_int(self.n_jobs, "n_jobs", minimum=-1)
        if n_jobs == 0:
            raise ValueError("n_jobs must be a positive number of threads or -1 (every core), got 0")
        if n_jobs == -1:
            n_jobs = os.cpu_count() or 1
        if self.executor is not None and not isinstance(self.executor, Executor):
            raise ValueError(f"executor must be a concurrent.futures.Executor, got {type(self.executor).__name__}")
        resolve_memory_limit(self.memory_limit)  # validates the setting
        check_random_state(self.random_state)  # fit on triplets draws nothing, but a bad seed is still refused
        if self.refine not in REFINE_MODES:
            raise ValueError(f"refine must be one of 'auto', 'ordinal' or None; got {self.refine!r}")
        rank_kw = dict(regularization=reg, tol=tol, max_iter=max_iter)
        return dict(d=d, l=l, landmarks=lm, rank_kw=rank_kw, n_jobs=n_jobs)

    # ------------------------------------------------------------ rankings
    def _map(self, fn, tasks, n_jobs, progress, total):
        """Run ``fn(*task)`` for every task; yield results in task order, reporting progress."""
        if self.executor is not None:
            futures = [self.executor.submit(fn, *t) for t in tasks]
            for i, f in enumerate(futures):
                yield f.result()
                if progress is not None:
                    progress("ranking", i + 1, total)
        elif n_jobs > 1 and len(tasks) > 1:
            with ThreadPoolExecutor(max_workers=n_jobs) as pool:
                futures = [pool.submit(fn, *t) for t in tasks]
                for i, f in enumerate(futures):
                    yield f.result()
                    if progress is not None:
                        progress("ranking", i + 1, total)
        else:
            for i, t in enumerate(tasks):
                yield fn(*t)
                if progress is not None:
                    progress("ranking", i + 1, total)

    @staticmethod
    def _next_maxmin(columns, candidates, chosen):
        """The candidate whose smallest score over the fitted columns is largest."""
        R = np.column_stack([c.scores[candidates] for c in columns])
        far = R.min(axis=1)
        far[np.isin(candidates, chosen)] = -np.inf
        return int(candidates[int(np.argmax(far))])

    def _remote(self) -> bool:
        """Whether landmark tasks run in other processes (any executor but a thread pool)."""
        return self.executor is not None and not isinstance(self.executor, ThreadPoolExecutor)

    def _concurrency(self, n_jobs: int, sequential: bool) -> int:
        if sequential:
            return 1
        if self.executor is not None:
            return int(getattr(self.executor, "_max_workers", None) or n_jobs)
        return n_jobs

    def estimate_resources(self, n_items: int, per_landmark, n_triplets: int | None = None) -> ResourceEstimate:
        """Peak memory and time of a fit with these settings, before running it.

        Parameters
        ----------
        n_items : int
        per_landmark : int or sequence of int
            Comparisons per landmark (one count, or one per landmark).
        n_triplets : int, optional
            For :meth:`fit` on stored triplets: how many are stored (they are
            scanned once per landmark). Omit for :meth:`fit_oracle`.

        Returns
        -------
        ResourceEstimate
            See :func:`loe_viz.estimate_resources`.
        """
        cfg = self._validated(int(n_items))
        sequential = cfg["landmarks"] is None and self.landmark_selection == "maxmin"
        return estimate_resources(
            n_items, cfg["l"], per_landmark, self._concurrency(cfg["n_jobs"], sequential),
            n_components=cfg["d"], source="oracle" if n_triplets is None else "triplets",
            n_triplets=n_triplets, remote=self._remote() and not sequential,
        )

    # ------------------------------------------------------------- fitting
    def fit(self, triplets, n_items: int | None = None, progress=None) -> "LOE":
        """Fit on list-order triplets, using those whose head is a landmark.

        Parameters
        ----------
        triplets : int array-like of shape (m, 3)
            Row ``(i, j, k)`` says item ``i`` is closer to ``j`` than to ``k``.
        n_items : int, optional
            Number of items (default: largest index + 1).
        progress : callable, optional
            ``progress(stage, done, total)`` after each landmark ranking and stage.

        Returns
        -------
        self
        """
        t_start = time.perf_counter()
        T, n = check_triplets(triplets, n_items)
        cfg = self._validated(n)
        l = cfg["l"]
        counts = np.empty(n, dtype=np.int64)
        triplet_kernels.count_heads(T, n, counts)
        heads = np.flatnonzero(counts)
        if cfg["landmarks"] is not None:
            landmarks = cfg["landmarks"]
            empty = landmarks[counts[landmarks] == 0]
            if empty.size:
                raise ValueError(
                    f"landmarks {empty.tolist()[:10]} head no triplet: every landmark needs triplets (i, j, k) with i = landmark"
                )
        else:
            if heads.size < l:
                raise ValueError(
                    f"triplets have only {heads.size} distinct head item(s) but n_landmarks={l}: LOE needs "
                    f"triplets headed by at least {l} items (n_components + 3 = {cfg['d'] + 3})"
                )
            order = np.lexsort((heads, -counts[heads]))  # most triplets first, ties by index
            ranked_heads = heads[order]
            if self.landmark_selection == "maxmin":
                floor = 0.5 * counts[ranked_heads[l - 1]]
                candidates = np.sort(ranked_heads[counts[ranked_heads] >= floor])
                landmarks = None
            else:
                landmarks = np.sort(ranked_heads[:l])
        # Memory check before ranking: each task holds only its own landmark's share.
        sequential = landmarks is None
        per = counts[landmarks] if landmarks is not None else np.sort(counts[candidates])[::-1][:l]
        remote = self._remote() and not sequential
        stored = StoredTriplets.from_array(triplets, T) if remote else None
        copied = not (isinstance(triplets, np.ndarray) and np.may_share_memory(triplets, T))
        est = estimate_resources(
            n, l, per, self._concurrency(cfg["n_jobs"], sequential), n_components=cfg["d"],
            source="triplets", n_triplets=T.shape[0], remote=remote, ship_shares=stored is None,
            held_bytes=T.nbytes if copied else 0,
        )
        check_memory(est, self.memory_limit)
        self.resource_estimate_ = est
        t_sel = time.perf_counter()

        if landmarks is None:  # maxmin among well-covered heads, one landmark at a time
            chosen = [int(ranked_heads[0])]
            columns = []
            while True:
                columns.append(rank_share(T, chosen[-1], counts[chosen[-1]], n, cfg["rank_kw"]))
                if progress is not None:
                    progress("ranking", len(columns), l)
                if len(chosen) == l:
                    break
                chosen.append(self._next_maxmin(columns, candidates, chosen))
            landmarks = np.array(chosen, dtype=np.int64)
        elif remote and stored is None:  # in-memory triplets, other processes: send each share
            tasks = [(*landmark_share(T, int(h), int(counts[h]), n), int(h), n, cfg["rank_kw"]) for h in landmarks]
            columns = list(self._map(_rank_arrays, tasks, cfg["n_jobs"], progress, l))
        else:  # each task pulls its share out of the shared (or re-opened, memory-mapped) triplets
            source = stored if stored is not None else T
            tasks = [(source, int(h), int(counts[h]), n, cfg["rank_kw"]) for h in landmarks]
            columns = list(self._map(rank_share, tasks, cfg["n_jobs"], progress, l))
        t_rank = time.perf_counter()
        timings = {"select": t_sel - t_start, "ranking": t_rank - t_sel}
        return self._finish(columns, n, cfg, timings, progress, t_start)

    def fit_oracle(self, oracle, per_landmark: int, progress=None) -> "LOE":
        """Draw ``per_landmark`` comparisons for each landmark from ``oracle`` and fit.

        One landmark at a time is sampled and ranked, and only its score column
        is kept, so memory stays ``O(m)`` for ``m`` comparisons per landmark.

        Parameters
        ----------
        oracle : TripletOracle
        per_landmark : int
            Comparisons per landmark (the paper's ``m``). With ``l`` landmarks the
            total budget is ``l * per_landmark``; see :func:`loe_viz.total_budget`.
        progress : callable, optional
            ``progress(stage, done, total)`` after each landmark ranking and stage.

        Returns
        -------
        self
        """
        t_start = time.perf_counter()
        n = int(oracle.n_items)
        cfg = self._validated(n)
        l = cfg["l"]
        per_landmark = check_int(per_landmark, "per_landmark", minimum=1)
        need = (n - 1 + 1) // 2
        if per_landmark < need:
            raise ValueError(
                f"per_landmark={per_landmark} is too small for {n} items: a landmark's comparisons must "
                f"touch every item about once, so at least {need} are needed (and ~{int(20 * n * np.log(n)) // l} "
                "for a usable embedding)"
            )
        self.resource_estimate_ = self.estimate_resources(n, per_landmark)
        check_memory(self.resource_estimate_, self.memory_limit)
        rng = check_random_state(self.random_state)
        t_sample = t_ranks = 0.0
        if cfg["landmarks"] is not None or self.landmark_selection == "random":
            landmarks = cfg["landmarks"] if cfg["landmarks"] is not None else np.sort(rng.choice(n, size=l, replace=False))
            seeds = oracle.next_seeds(l)
            tasks = [(oracle, int(h), per_landmark, s, cfg["rank_kw"]) for h, s in zip(landmarks, seeds)]
            columns = []
            for col, ts, tr in self._map(_rank_oracle, tasks, cfg["n_jobs"], progress, l):
                columns.append(col)
                t_sample += ts
                t_ranks += tr
        else:
            candidates = np.arange(n)
            chosen = [int(rng.integers(n))]
            columns = []
            while True:
                col, ts, tr = _rank_oracle(oracle, chosen[-1], per_landmark, oracle.next_seeds(1)[0], cfg["rank_kw"])
                columns.append(col)
                t_sample += ts
                t_ranks += tr
                if progress is not None:
                    progress("ranking", len(columns), l)
                if len(chosen) == l:
                    break
                chosen.append(self._next_maxmin(columns, candidates, chosen))
        t_rank = time.perf_counter()
        # Tasks sample and rank in turn, several at once: split the wall time of the
        # phase in proportion to the task-seconds of each stage.
        wall = t_rank - t_start
        busy = t_sample + t_ranks
        sampling = wall * t_sample / busy if busy > 0 else 0.0
        timings = {"sampling": sampling, "ranking": wall - sampling}
        return self._finish(columns, n, cfg, timings, progress, t_start)

    def _finish(self, columns, n, cfg, timings, progress, t_start) -> "LOE":
        d = cfg["d"]
        ranking = RankingResult.from_columns(columns, n, cfg["rank_kw"]["regularization"])
        landmarks = ranking.landmarks
        l = landmarks.size
        unranked = ranking.unranked_items
        if unranked.size:
            warnings.warn(
                f"{unranked.size} item(s) took part in no comparison of at least one landmark "
                f"(e.g. {unranked[:5].tolist()}); their distance to that landmark is unknown and set to the mean",
                LOEWarning,
                stacklevel=3,
            )
        agree = min(c.agreement for c in columns)
        noiseless = agree >= NOISELESS_AGREEMENT
        polish = self.refine == "ordinal" or (self.refine == "auto" and noiseless)
        if noiseless and not polish:
            warnings.warn(
                f"the fitted rankings reproduce {100 * agree:.2f}% of the comparisons: the answers look noiseless. "
                "BTL scores of noiseless answers are rank-like, not distances, so the embedding is distorted "
                "monotonically; refine='auto' or 'ordinal' fits the embedding to the order of the scores instead",
                LOEWarning,
                stacklevel=3,
            )
        t0 = time.perf_counter()
        W = ranking.R[landmarks, :].copy()
        np.fill_diagonal(W, 0.0)
        shifts = estimate_shifts(W, d, self.offset)
        t1 = time.perf_counter()
        if progress is not None:
            progress("shifts", 1, 1)
        edm = project_edm(shifts.shifted)
        if not edm.converged:
            warnings.warn(
                f"EDM projection stopped after {edm.n_iter} iterations without reaching its tolerance "
                f"(last relative change {edm.residuals[-1]:.2e})",
                LOEWarning,
                stacklevel=3,
            )
        t2 = time.perf_counter()
        if progress is not None:
            progress("edm", 1, 1)
        D_landmarks = ranking.R + shifts.s[None, :]
        D_landmarks[landmarks, np.arange(l)] = 0.0
        lmds = landmark_mds(edm.E, D_landmarks, landmarks, d)
        t3 = time.perf_counter()
        if progress is not None:
            progress("lmds", 1, 1)
        refined = None
        if polish:
            refined = ordinal_polish(lmds.embedding, ranking.R, landmarks, d, unranked=ranking.unranked)
            if refined is None and noiseless:
                warnings.warn(
                    f"the answers look noiseless (the rankings reproduce {100 * agree:.2f}% of the comparisons), "
                    "so the BTL scores are rank-like; the ordinal polish found no consistent fit of their order "
                    "(try landmark_selection='maxmin' or more comparisons per landmark), so the embedding is "
                    "the paper's algorithm's, distorted monotonically",
                    LOEWarning,
                    stacklevel=3,
                )
            if progress is not None:
                progress("refine", 1, 1)
        t4 = time.perf_counter()
        timings.update(shifts=t1 - t0, edm=t2 - t1, lmds=t3 - t2, refine=t4 - t3, total=t4 - t_start)
        n_used = int(sum(c.n_comparisons for c in columns))
        self.stages_ = LOEStages(
            landmarks=landmarks, ranking=ranking, shifts=shifts, edm=edm, lmds=lmds,
            D_landmarks=D_landmarks, timings=timings, n_triplets_used=n_used, refine=refined,
        )
        self.embedding_ = refined.embedding if refined is not None else lmds.embedding
        self.landmarks_ = landmarks
        self.n_items_ = n
        self.n_triplets_used_ = n_used
        self.triplets_per_landmark_ = ranking.n_comparisons
        return self

    def fit_transform(self, triplets, n_items: int | None = None, progress=None) -> np.ndarray:
        """Fit on triplets and return ``embedding_``."""
        return self.fit(triplets, n_items=n_items, progress=progress).embedding_
