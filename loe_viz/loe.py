"""The Landmark Ordinal Embedding estimator."""

from __future__ import annotations

import math
import sys
import threading
import time
import warnings
from concurrent.futures import FIRST_COMPLETED, Executor, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace as _dc_replace

import numpy as np

from ._landmark_tasks import (
    RankSettings, StoredTriplets, head_counts, landmark_share, landmark_shares, pilot_oracle, pilot_share, rank_oracle,
    rank_share, pilot_scores, MaxMinChain,
)
from ._params import ParamsMixin
from ._validation import (MAX_LANDMARK_JOBS, check_float, check_int, check_landmarks, check_n_jobs, check_random_state,
                          check_regularization, check_triplets, comparison_dtype)
from .describe import comparison_groups, groups_note, item_examples
from .edm import FIT_TOL, EDMResult, project_edm
from .kernels import sampling as sampling_kernels
from .kernels import triplets as triplet_kernels
from .lmds import LMDSResult, landmark_mds
from .oracle import check_oracle
from .progress import resolve_progress
from .ranking import RankingResult
from .refine import RefineResult, polish as ordinal_polish
from .resources import ResourceEstimate, check_memory, estimate_resources, resolve_memory_limit
from .shifts import OFFSET_METHODS, ShiftResult, estimate_shifts
from .uncertainty import SIGNAL_MIN, ItemUncertainty, mostly_noise

__all__ = ["LOE", "LOEStages", "LOEWarning", "LANDMARK_SELECTIONS", "AutoLandmarkPlan", "auto_landmark_plan"]

#: Landmark choices: ``"random"`` (the paper; on stored triplets the busiest heads),
#: ``"maxmin"`` (each next landmark is the item farthest from those chosen so far, read
#: off cheap pilots), ``"auto"``: MaxMin when drawing from an oracle, the busiest heads
#: of stored triplets.
LANDMARK_SELECTIONS = ("auto", "random", "maxmin")
REFINE_MODES = ("auto", "ordinal", None)
#: ``refine="auto"`` treats answers as noiseless when every landmark's fitted
#: scores reproduce at least this fraction of its comparisons.
NOISELESS_AGREEMENT = 0.999
#: Share of each landmark's budget that MaxMin's pilot draws first (reused in its ranking).
PILOT_SHARE = 0.25
#: Parts each oracle pilot is drawn in, side by side.
PILOT_PARTS = 4
#: Smallest pilot, in comparisons per item (each item then takes part in about 80). At n = 10^5,
#: c = 50 (10 seeds) MaxMin's landmarks were as good as with 100 (Procrustes median 0.0082 and
#: worst 0.0085, against 0.0083 and 0.0092) and the chain of pilots took 0.29 s instead of 0.62 s;
#: with 10 per item the closest landmarks came twice as near each other on one seed.
PILOT_PER_ITEM = 40
#: Largest pilot (comparisons per landmark).
PILOT_CAP = 20_000_000
#: Seconds between heartbeat calls of ``progress`` while rankings run.
HEARTBEAT = 0.25
#: ``n_landmarks="auto"`` on stored triplets: a head is well covered with this many triplets per item
#: (each item then takes part in about ten of its comparisons).
WELL_COVERED = 5
#: ``n_landmarks="auto"`` on stored triplets with fewer than ``d + 4`` well-covered heads: heads
#: with this many triplets per item are still used (each item then takes part in about 0.2 of a
#: head's comparisons; many such heads together still place it). It was 0.2, which on uniformly
#: headed crowd answers (the bundled ``gaussian_2d_crowd.csv``: 200 heads of about 32 triplets)
#: kept the few heads that Poisson noise lifted above 40 triplets and called them evenly covered:
#: held-out accuracy 0.582 with 17 to 21 landmarks, 0.688 with the 100 busiest. On Zipf-headed
#: sets the held-out search then tries up to about 65 heads: 0.598 -> 0.604, 0.671 -> 0.678 and
#: 0.669 -> 0.679 (n = 1000 BTL and flips, n = 2000 flips) in about twice the time; 0.05 (up to
#: 100 heads) added 0.002 to 0.008 more in about 1.6 times that. Measured again with up to 200 heads
#: and no polish of sparse rankings (three 80/20 splits of the four Zipf sets): 0.05 adds 0.004 to
#: 0.010 in 1.3 to 2.2 times the time (0.33 to 0.44 s against 0.16 to 0.32 s), 0.03 another 0.001
#: or less in 2 to 4 times that.
SPARSE_COVERED = 0.1
#: From this share of unknown item-landmark distances on, LOE's warning says what fits such triplets
#: better (``ADVICE_SPREAD``). Triplets spread over many heads, each of them LOE then ranks from few
#: comparisons (held-out accuracy, 80/20 split): 10^5 uniformly headed items, 97.9 % unknown, LOE
#: 0.500 and LOE-STE 0.674 (0.675 for the true points); 2000 such items, 52 % unknown, 0.616 and
#: 0.674; the bundled crowd sample, 72 % unknown, 0.758 and STE 0.850.
SPREAD_UNKNOWN = 0.5
ADVICE_SPREAD = ("; LOE places each item from its landmarks' own comparisons, so with triplets spread over many "
                 "heads the LOESTE estimator (LOE's embedding refined on every triplet) or STE, which fit all of "
                 "them, place the items better")
#: ``n_landmarks="auto"`` on stored triplets uses at most this many heads (the busiest): a file where
#: every one of 10^4 items heads as many triplets would otherwise give 10^4 landmarks. It was 100,
#: which on the bundled ``gaussian_2d_crowd.csv`` (200 heads of about 32 training triplets) left half
#: the heads out: held-out accuracy 0.692 -> 0.762 with all of them (three 80/20 splits), in 0.54 s
#: instead of 0.28 s, most of it a polish that ``SPARSE_COMPARISONS`` now skips. On the Zipf-headed
#: sets of ``bench_collected.py`` more heads help too (200 of them at the penalty 1.0: +0.008 and
#: +0.013 at n = 1000), but those below ``SPARSE_COVERED * n`` triplets are not candidates, so those
#: sets fit as before.
AUTO_MAX_LANDMARKS = 200
#: ``n_landmarks="auto"``: the candidate heads are unevenly covered (a held-out search chooses how
#: many to use) when the quietest holds less than half the busiest one's triplets and the variance
#: of their counts exceeds this many times their mean: Poisson counts (uniformly random heads) give
#: about 1, a landmark design 0, Zipf-headed answers hundreds. The first rule alone took the Poisson
#: noise of 200 heads of about 32 triplets (16 against 49) for uneven coverage: the search then cost
#: 1.6 s there and chose 191 to 194 of the 200 heads, 0.759 against 0.762 with all of them.
UNEVEN_DISPERSION = 4.0
#: ``refine="auto"`` does not polish rankings with fewer comparisons than ranked items (the median over
#: the landmarks), however noiseless they look: each then reproduces all of its comparisons, noisy or
#: not, and every such polish measured was abandoned after its first iteration
#: (``refine.HOPELESS_AGREEMENT``). On ``gaussian_2d_crowd.csv`` (0.58 comparisons per item and
#: landmark, 198 landmarks, 80% of the file) that attempt took 1.44 of the fit's 1.59 s, for the same
#: embedding; on the bundled samples, three 80/20 splits each, the held-out accuracies stayed the same
#: to the last digit and ``gaussian_3d_triplets.npz`` fitted in 0.04 to 0.09 s instead of 0.5 to 0.7 s.
SPARSE_COMPARISONS = 1.0
#: ``n_landmarks="auto"`` on stored triplets: share of the triplets held out to judge the choices.
HELDOUT_SHARE = 0.1
#: ``n_landmarks="auto"`` on unevenly covered heads also tries these penalties beside
#: ``regularization``. A collected set's rankings rest on a few comparisons per item, where the
#: tiny default lets the scores of items that won or lost everything run off; 1.0 shrinks them to
#: what the data support. Zipf-headed sets (n = 1000 and 2000, BTL and flip noise, 20% held out),
#: held-out accuracy at 1e-3 -> 1.0 with 40 heads: 0.546 -> 0.625, 0.612 -> 0.684, 0.539 -> 0.595,
#: 0.622 -> 0.667, and within 0.008 of the best of 0.1, 0.3, 1 and 3 for 5 to 80 heads. Landmark
#: designs (evenly covered heads, oracle fits) keep ``regularization``: there 1.0 over-shrinks.
AUTO_REGULARIZATION = (1.0,)



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
    uncertainty : ItemUncertainty or None
        Score variances of the rankings and, computed on first access, the
        per-item covariances of the landmark-MDS embedding
        (:mod:`loe_viz.uncertainty`).
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
    uncertainty: ItemUncertainty | None = None

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

    def __repr__(self) -> str:
        # the dataclass's own repr printed every array of every stage (some 10^5 characters at n = 1000)
        n, l = self.D_landmarks.shape
        stages = ", ".join(k for k in ("ranking", "shifts", "edm", "lmds", "refine", "uncertainty")
                           if getattr(self, k) is not None)
        total = self.timings.get("total")
        return (f"LOEStages(n_items={n}, n_landmarks={l}, n_components={self.lmds.n_components}, "
                f"n_triplets_used={self.n_triplets_used}, stages=[{stages}]"
                + (f", seconds={total:.3g}" if total is not None else "") + ")")


@dataclass(frozen=True)
class _Settings:
    """LOE's parameters, validated against the number of items."""

    d: int
    l: int | None  # None: "auto"
    landmarks: np.ndarray | None
    selection: str
    offset: str
    rank: RankSettings
    n_jobs: int
    refine: str | None
    landmark_share: float
    rng: np.random.Generator | None  # None: checked only (draw=False)


def _pilot_done(result, cancel=None):
    """The pilot's comparisons, kept for the landmark's full ranking."""
    return result


def _heldout_accuracy(Z: np.ndarray, T: np.ndarray) -> float:
    """Fraction of list-order triplets ``T`` that the embedding ``Z`` satisfies."""
    return float(sampling_kernels.triplet_agreement(np.ascontiguousarray(Z, dtype=np.float64), T))


@dataclass(frozen=True)
class AutoLandmarkPlan:
    """What ``n_landmarks="auto"`` does with stored triplets, known from the head counts alone.

    Attributes
    ----------
    heads : ndarray of int
        The candidate heads, busiest first (ties by index).
    min_triplets : float
        The triplets a head needs to be a candidate (``WELL_COVERED * n``, or ``SPARSE_COVERED * n``
        when fewer than ``d + 4`` heads have that many; 0 when even those are too few).
    search : bool
        False: every candidate is a landmark. True: their coverage is uneven (``UNEVEN_DISPERSION``), and
        the number used (``d + 3``, ``2 (d + 3)``, ... up to all of them) is chosen on a held-out share
        when fitting.
    n_landmarks : int
        The landmarks the fit uses (without ``search``) or the most it tries (with it): the number of
        candidates, and at least ``d + 3`` (more than the heads: the fit then says why it cannot run).
    """

    heads: np.ndarray
    min_triplets: float
    search: bool
    n_landmarks: int


def _busiest(counts: np.ndarray) -> np.ndarray:
    """The items heading at least one triplet, most triplets first, ties by index."""
    heads = np.flatnonzero(counts)
    return heads[np.lexsort((heads, -counts[heads]))]


def auto_landmark_plan(head_counts, n_components: int) -> AutoLandmarkPlan:
    """The landmarks ``LOE(n_landmarks="auto").fit`` considers, from the triplets each item heads.

    Parameters
    ----------
    head_counts : array of int, shape (n,)
        Triplets headed by each item.
    n_components : int

    Returns
    -------
    AutoLandmarkPlan
        Without enough heads (fewer than ``d + 4`` with ``SPARSE_COVERED * n`` triplets) the ``d + 3``
        busiest, which may be fewer than ``d + 3``: the fit then says so.

    Examples
    --------
    >>> plan = auto_landmark_plan([400, 380, 0, 410, 395, 390, 405], n_components=2)
    >>> plan.heads.tolist(), plan.search
    ([3, 6, 0, 4, 5, 1], False)
    """
    counts = np.asarray(head_counts)
    n, d = counts.size, int(n_components)
    ranked = _busiest(counts)
    need = WELL_COVERED * n
    covered = ranked[counts[ranked] >= need]
    if covered.size <= d + 3:  # sparse heads (e.g. crowd answers): more of them may still help
        need = SPARSE_COVERED * n
        covered = ranked[counts[ranked] >= need]
        if covered.size <= d + 3:
            return AutoLandmarkPlan(ranked[:d + 3], 0.0, False, d + 3)
    covered = covered[:AUTO_MAX_LANDMARKS]
    # evenly covered heads (a design, or uniform heads): all of them; else a held-out choice
    c = counts[covered].astype(float)
    search = bool(c[-1] < 0.5 * c[0] and c.var() > UNEVEN_DISPERSION * c.mean())
    return AutoLandmarkPlan(covered, float(need), search, int(covered.size))


def _place(ranking: RankingResult, d: int, offset: str, done=lambda stage: None):
    """The stages after the rankings: shifts, EDM projection of the landmark block, landmark MDS.

    ``done(stage)`` is called as each of "shifts", "edm" and "lmds" ends. Returns
    ``(shifts, edm, D_landmarks, lmds)``.
    """
    landmarks = ranking.landmarks
    W = ranking.R[landmarks, :].copy()
    np.fill_diagonal(W, 0.0)
    shifts = estimate_shifts(W, d, offset)
    done("shifts")
    edm = project_edm(shifts.shifted, tol=FIT_TOL)
    done("edm")
    D_landmarks = ranking.R + shifts.s[None, :]
    D_landmarks[landmarks, np.arange(landmarks.size)] = 0.0
    lmds = landmark_mds(edm.E, D_landmarks, landmarks, d, deficient="floor", rtol=10 * FIT_TOL)
    done("lmds")
    return shifts, edm, D_landmarks, lmds


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
    n_landmarks : int or "auto", default "auto"
        Number of landmarks ``l >= d + 3`` (``None`` means ``"auto"``). With
        given ``landmarks``, their number. ``"auto"`` in :meth:`fit_oracle`:
        ``d + 3`` (the paper). ``"auto"`` in :meth:`fit` on stored triplets: as
        many well-covered heads as help. A head is well covered when it heads
        at least ``5 n`` triplets (each item then appears in about ten of its
        comparisons; heads with fewer add more noise than information). When
        the well-covered heads hold about as many triplets each (landmark
        triplets drawn for LOE, or uniformly random heads: the quietest at least
        half the busiest, or counts that vary no more than Poisson noise would,
        ``UNEVEN_DISPERSION``), all of them are landmarks. When their coverage
        is uneven (e.g. collected triplets), ``l`` is chosen among ``d + 3,
        2 (d + 3), 4 (d + 3), ...`` up to all well-covered heads, together with
        the penalty (see ``regularization``), by the accuracy on a held-out 10%
        of the triplets (``auto_search_``), and the final fit uses every
        triplet. Fewer than
        ``d + 4`` well-covered heads (sparse answers, e.g. from a crowd): the
        same rules among the heads with at least ``n / 10`` triplets (all of them
        when evenly covered, else the held-out choice), or the ``d + 3`` busiest
        when fewer than ``d + 4`` have that many. Never more than the 200 busiest
        heads (``AUTO_MAX_LANDMARKS``).
    landmarks : sequence of int, optional
        Item indices to use as landmarks.
    landmark_selection : {"auto", "maxmin", "random"}, default "auto"
        How landmarks are picked when none are given. ``"maxmin"``: the first
        landmark at random, then each next one the item farthest from those
        already chosen, "farthest" read off cheap *pilots*: mean-field BTL
        scores of the first quarter of each landmark's comparisons (which are
        then reused in its ranking), each column measured from its own nearest
        items, which no per-column shift changes (raw scores carry an unknown
        shift per column, which pulled MaxMin to the centre). Only the pilots
        run one after another, each drawn in parts side by side; the full
        rankings run in parallel. ``"random"``: uniformly random items (the
        paper). On stored triplets the choice is among the well-covered heads:
        ``"random"`` takes the busiest, ``"maxmin"`` applies the rule above to
        their stored shares. ``"auto"``: MaxMin in :meth:`fit_oracle`, the
        busiest heads in :meth:`fit` (on collected triplets coverage matters
        more than spread: MaxMin's peripheral heads fitted held-out triplets
        worse in our Zipf-headed tests).
        Why MaxMin is :meth:`fit_oracle`'s default: random landmarks make the
        error a matter of luck, MaxMin (with the landmark share below) does
        not. Measured (``benchmarks/bench_loe.py --choice`` and ``--robust``,
        ``d = 2``, ``d + 3`` landmarks, BTL answers at temperature 1):
        ``n = 1000``, ``C = 200``, 10 seeds: Procrustes 0.076 +- 0.125 (worst
        0.44) with random landmarks, 0.0034 +- 0.0006 (worst 0.0043) with the
        defaults; ``n = 10^5``, ``c = 50``, 10 seeds: median 0.039 (worst
        0.075) against 0.0082 (worst 0.0085), in 1.2 to 1.35 times the random
        choice's time (docs/benchmarks.md). The cost is the pilots' mean-field
        pass and the wait for the chain of pilots, which are drawn in parts
        side by side.
    regularization : float, default 1e-3
        ``lambda`` of the BTL penalty ``lambda / 2 ||w||^2`` (the paper's small
        ``lambda > 0``); any value > 0 keeps items with no comparisons finite.
        Larger values (0.01 to 0.1) converge in fewer Newton steps at large n,
        where items that win or lose all their comparisons have diverging
        likelihood scores, and help on spread-out configurations; they shrink the
        scores of such items and cost accuracy on clustered ones (measured in
        ``benchmarks/bench_loe.py``). When :meth:`fit` searches ``n_landmarks``
        on held-out triplets (unevenly covered heads), it tries this value and
        ``AUTO_REGULARIZATION`` (1.0), and takes 1.0 when it predicts the
        held-out share better by more than that share's standard error:
        collected triplets, a few per item and head, want the stronger penalty
        (``auto_search_["chosen_regularization"]``). At most 1e6: a larger
        penalty pulls every score to 0 whatever the answers.
    offset : {"lambda2", "mean"}, default "lambda2"
        Offset rule: the paper's second-largest eigenvalue, or the average of the
        eigenvalues that equal the offset without noise (less variance when
        ``l > d + 3``).
    tol : float, default 1e-5
        Newton tolerance of each ranking: it stops when no score moves by more
        than ``tol``, or when a full Newton step is expected to gain less than
        ``10^4 tol`` of log-likelihood per item, 0.1 at the default
        (:func:`loe_viz.ranking.rank_column`; below the scores' statistical
        error, about 1/2 per item). Below 5e-7 every ranking is solved to its
        optimum: only a step that moves no score by more than ``tol`` (or a
        gradient norm below it) stops it.
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
        Ordinal polish after landmark MDS (:func:`loe_viz.refine.polish`): the
        embedding is fitted to the order of each landmark's scores by
        non-metric MDS (the ordinal link instead of the BTL one). Noiseless
        answers leave the BTL likelihood without a finite maximiser and make
        the scores rank-like, which distorts the layout; their order is exact,
        and the polish recovers the points closely from it. ``"auto"`` runs it
        when the rankings reproduce at least 99.9% of their comparisons (the
        answers look noiseless) from at least one comparison per ranked item
        (``SPARSE_COMPARISONS``) and, when :meth:`fit` searches the number of
        landmarks on held-out triplets, when the polished embedding predicts
        the held-out triplets better; it gives up on scores whose order no layout
        comes near after one iteration (``refine.HOPELESS_AGREEMENT``: sparse or
        noisy rankings, e.g. crowd answers spread over many heads); ``"ordinal"``
        always, in full; ``None`` never (the paper's algorithm alone).
    random_state : None, int, SeedSequence, numpy.random.Generator or RandomState
        Seed of the landmark choice and of the held-out split.
    landmark_share : float, default 0.02
        :meth:`fit_oracle` only: share of each landmark's comparisons spent on
        pairs of other landmarks, from 0 (the paper's uniform pairs only) to 0.5. The
        shifts are estimated from the landmark block of the rankings, whose
        entries otherwise rest on a few hundred comparisons each; a 2% share
        gives them hundreds of times more at no measurable cost elsewhere
        (``benchmarks/bench_loe.py --robust`` compares 0 and 0.02).

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
    uncertainty_ : ndarray (n, d, d) or None
        Mean squared error matrix of every item's position in the coordinates of
        ``embedding_``: the covariance propagated from the Fisher information of
        the BTL rankings through the shifts and the landmark triangulation, plus
        the square of the propagated first-order bias of the scores
        (:mod:`loe_viz.uncertainty`), for the error left after the best similarity
        alignment (the gauge in which an embedding from comparisons is defined).
        The ellipsoids ``{y : (y - z)^T C^-1 (y - z) <= chi2_d(0.9)}`` cover ~90%
        of the true positions at temperature 1 (``benchmarks/bench_uncertainty.py``)
        where the rankings hold at least ``CALIBRATED_COMPARISONS`` (10)
        comparisons per item and landmark; with fewer, as in many collected
        sets, they are not calibrated and reading the attribute warns
        (``benchmarks/bench_uncertainty_sparse.py``); so it does where the
        rankings barely tell the items apart (signal below ``SIGNAL_MIN``, 1.5:
        answers near coin flips, or a penalty that outweighs them), and the fit
        warns then too. Computed on first access. None when the ordinal polish produced
        ``embedding_`` (noiseless answers, where BTL variances mean nothing) or the
        landmark block supports fewer than d dimensions; ``stages_.uncertainty.reason``
        says why.
    resource_estimate_ : ResourceEstimate
        The memory and time estimate the run was checked against.
    auto_search_ : dict or None
        When :meth:`fit` chose ``n_landmarks`` (with the penalty and the link)
        on held-out triplets: the candidates (``n_landmarks``,
        ``regularization``), their held-out accuracies (``heldout_accuracy``,
        a row per number of landmarks, a column per penalty), the choices
        (``chosen``, ``chosen_regularization``, ``refine``) and
        ``link_accuracy`` (no ``"ordinal"`` entry when the chosen rankings
        were too sparse to polish, ``SPARSE_COMPARISONS``).

    Notes
    -----
    ``progress(stage, done, total)`` is called from the calling thread: during
    MaxMin's pilots with ``stage="landmarks"``, after each ranking with
    ``stage="ranking"``, at least every 0.25 s while either runs (a heartbeat
    with unchanged counts), then once per later stage. If it raises, the fit
    stops: no new landmark task starts, running rankings stop at their next
    Newton iteration, and the exception propagates once the threads have
    stopped (with another executor, tasks already running there finish).

    Examples
    --------
    >>> from loe_viz import LOE, TripletOracle, make_points, procrustes_error
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
        n_landmarks: int | str | None = "auto",
        landmarks=None,
        landmark_selection: str = "auto",
        regularization: float = 1e-3,
        offset: str = "lambda2",
        tol: float = 1e-5,
        max_iter: int = 50,
        n_jobs: int = 1,
        executor: Executor | None = None,
        memory_limit=None,
        refine: str | None = "auto",
        random_state=None,
        landmark_share: float = 0.02,
    ):
        self._set_params_from(locals())

    def _validated(self, n_items: int, auto_selection: str | None = None, draw: bool = True) -> _Settings:
        """The checked settings for ``n_items`` items; ``landmark_selection="auto"`` becomes ``auto_selection`` if given.
        ``draw=False`` (a check or a query, not a fit) leaves a ``RandomState`` as it was (``rng`` None)."""
        d = check_int(self.n_components, "n_components", minimum=1)
        lm = None
        if self.landmarks is not None:
            lm = check_landmarks(self.landmarks, n_items)
        if self.n_landmarks is None or (isinstance(self.n_landmarks, str) and self.n_landmarks == "auto"):
            l = lm.size if lm is not None else None
        elif isinstance(self.n_landmarks, str):
            raise ValueError(f"n_landmarks must be an integer or 'auto', got {self.n_landmarks!r}")
        else:
            l = check_int(self.n_landmarks, "n_landmarks")  # 0 or -1: the d + 3 below, not '>= 1'
            if lm is not None and lm.size != l:
                raise ValueError(f"n_landmarks={l} disagrees with the {lm.size} landmarks given")
        if lm is not None and lm.size < d + 3:  # the list the caller gave, not an n_landmarks they never set
            raise ValueError(f"landmarks must list at least n_components + 3 = {d + 3} items (LOE needs l >= d + 3 "
                             f"to recover the shifts), got {lm.size}")
        if l is not None and l < d + 3:
            raise ValueError(
                f"n_landmarks must be >= n_components + 3 = {d + 3} (LOE needs l >= d + 3 to recover the shifts), got {l}"
            )
        if l is None and d + 3 > n_items:  # the default number of landmarks, not one the caller chose
            fix = f"use n_components <= {n_items - 3}" if n_items > 3 else "LOE needs at least 4 items"
            raise ValueError(f"n_components={d} needs at least d + 3 = {d + 3} landmarks, but there are only "
                             f"{n_items} items; {fix}")
        if l is not None and l > n_items:
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
        n_jobs = check_n_jobs(self.n_jobs, maximum=MAX_LANDMARK_JOBS)
        if self.executor is not None and not isinstance(self.executor, Executor):
            raise ValueError(f"executor must be a concurrent.futures.Executor, got {type(self.executor).__name__}")
        resolve_memory_limit(self.memory_limit)  # validates the setting
        if self.refine not in REFINE_MODES:
            raise ValueError(f"refine must be one of 'auto', 'ordinal' or None; got {self.refine!r}")
        share = check_float(self.landmark_share, "landmark_share", minimum=0.0, maximum=0.5)
        rng = check_random_state(self.random_state, draw=draw)
        selection = self.landmark_selection
        if selection == "auto" and auto_selection is not None:
            selection = auto_selection
        return _Settings(
            d=d, l=l, landmarks=lm, selection=selection, offset=self.offset,
            rank=RankSettings(regularization=reg, tol=tol, max_iter=max_iter), n_jobs=n_jobs, refine=self.refine,
            landmark_share=share, rng=rng,
        )

    # ------------------------------------------------------------ rankings
    def _workers(self, n_jobs: int) -> int:
        if self.executor is not None:
            return max(1, int(getattr(self.executor, "_max_workers", None) or n_jobs))
        return n_jobs

    def _run(self, fn, tasks, n_jobs, progress, cancel, follow=None, total=None, stage="ranking", work=None):
        """Run the landmark tasks; return their results in task order.

        ``tasks`` are argument tuples of ``fn`` (one ranking each). ``follow``,
        when given, schedules MaxMin: it is called as ``follow(None, None)``
        first and ``follow(key, result)`` after each of the tasks it created,
        and returns new ``(key, fn, args, is_ranking)`` tasks; pilots (not
        rankings) go first, so the chain of pilots runs beside the rankings of
        the landmarks already chosen. At most as many tasks as workers are
        submitted at once, each given ``cancel=cancel`` when it runs in a
        thread. The calling thread waits, calls ``progress("ranking", done,
        total)`` after each ranking and at least every ``HEARTBEAT`` seconds;
        if that raises (or anything else does), ``cancel`` is set, no further
        task starts, and the exception propagates once the threads have stopped.
        ``work``, when given, is each task's size (comparisons still to draw or
        rank): the largest start first, so that the last tasks, which run while
        other workers may idle, are the smallest. Results keep the task order.
        """
        order = range(len(tasks)) if work is None else sorted(range(len(tasks)), key=lambda c: -work[c])
        queue = [(c, fn, tasks[c], True) for c in order]
        if follow is not None:
            queue += follow(None, None)
        total = len(queue) if total is None else total
        remote = self._remote()
        workers = self._workers(n_jobs)
        pool = self.executor if self.executor is not None else ThreadPoolExecutor(max_workers=workers)
        results = {}
        pending = {}
        try:
            while queue or pending:
                queue.sort(key=lambda t: t[3])  # stable: pilots before rankings
                while queue and len(pending) < workers:
                    key, f_task, args, ranking = queue.pop(0)
                    kw = {} if remote else {"cancel": cancel}
                    pending[pool.submit(f_task, *args, **kw)] = (key, ranking)
                # While workers idle (the last tasks), a ranking splits its passes over a helper
                # thread; each kernel is first called on the ranking's own thread (_Halves.run).
                cancel.idle_workers = 0 if queue or remote else workers - len(pending)
                finished, _ = wait(pending, timeout=HEARTBEAT, return_when=FIRST_COMPLETED)
                for f in finished:
                    key, ranking = pending.pop(f)
                    res = f.result()
                    if ranking:
                        results[key] = res
                        if progress is not None:
                            progress(stage, len(results), total)
                    else:
                        queue += follow(key, res)
                if not finished and progress is not None:
                    progress(stage, len(results), total)  # heartbeat: lets the caller cancel
        except BaseException:
            cancel.set()
            for f in pending:
                f.cancel()
            if not remote:
                wait(pending)  # running rankings stop at their next Newton iteration
            raise
        finally:
            if self.executor is None:
                pool.shutdown(wait=True)
        return [results[k] for k in sorted(results)]

    def _local_threads(self) -> int:
        """Threads for the passes over stored triplets before the rankings (2 at most: halves), 1 when
        ``n_jobs`` is not valid (``_validated`` then names the problem) or the tasks run elsewhere."""
        try:
            n_jobs = check_n_jobs(self.n_jobs)
        except ValueError:
            return 1
        return 1 if self._remote() else min(2, self._workers(n_jobs))

    def _remote(self) -> bool:
        """Whether landmark tasks run in other processes (any executor but a thread pool)."""
        return self.executor is not None and not isinstance(self.executor, ThreadPoolExecutor)

    def estimate_resources(self, n_items: int, per_landmark, n_triplets: int | None = None) -> ResourceEstimate:
        """Peak memory and time of a fit with these settings, before running it.

        Parameters
        ----------
        n_items : int
        per_landmark : int or sequence of int
            Comparisons per landmark (one count, or one per landmark).
        n_triplets : int, optional
            For :meth:`fit` on stored triplets: how many are stored. Omit for
            :meth:`fit_oracle`. The estimate is that of each task pulling its own
            landmark's share (one scan of the triplets per landmark); in this
            process :meth:`fit` pulls them all in one pass instead when the buffer
            that takes (2/3 of the triplets' bytes at most) fits the memory limit.

        Returns
        -------
        ResourceEstimate
            See :func:`loe_viz.estimate_resources`.
        """
        s = self._validated(int(n_items), draw=False)
        l = s.l if s.l is not None else s.d + 3
        held = 0
        if n_triplets is None and s.landmarks is None and s.selection in ("auto", "maxmin"):
            per = int(np.max(per_landmark))
            # upper bound: the pilots' comparisons and their win counts, until the rankings take them
            itemsize = comparison_dtype(int(n_items)).itemsize
            held = l * (self._pilot_count(per, int(n_items)) * 2 * itemsize + int(n_items) * 8)
        return estimate_resources(
            n_items, l, per_landmark, self._workers(s.n_jobs), n_components=s.d,
            source="oracle" if n_triplets is None else "triplets", n_triplets=n_triplets, remote=self._remote(),
            held_bytes=held,
        )

    @staticmethod
    def _pilot_count(per_landmark: int, n: int) -> int:
        """Comparisons of MaxMin's pilot of one landmark (reused in its ranking).

        A quarter of its budget or ``PILOT_PER_ITEM`` comparisons per item, whichever
        is more, and at most ``PILOT_CAP`` comparisons, so that the pilots waiting for
        their rankings stay small (at ``n = 10^6``, ``c = 50``: 2e7 of 1.4e8, 20 per item).
        The chain of pilots runs before any full ranking, so its length is wall time.
        """
        return min(per_landmark, PILOT_CAP, max(math.ceil(PILOT_SHARE * per_landmark), PILOT_PER_ITEM * n))

    # ------------------------------------------------------------- fitting
    def fit(self, triplets, n_items: int | None = None, progress=None) -> "LOE":
        """Fit on list-order triplets, using those whose head is a landmark.

        Parameters
        ----------
        triplets : int array-like of shape (m, 3)
            Row ``(i, j, k)`` says item ``i`` is closer to ``j`` than to ``k``.
        n_items : int, optional
            Number of items (default: largest index + 1).
        progress : None, True or callable, optional
            True draws a tqdm bar; a callable is called as ``progress(stage, done,
            total)`` and stops the fit by raising (see the class notes).

        Returns
        -------
        self
        """
        from .io.layouts import TripletData

        progress = resolve_progress(progress)
        t_start = time.perf_counter()
        threads = self._local_threads()
        labels = triplets.labels if isinstance(triplets, TripletData) else None  # to name items in warnings
        T, n = check_triplets(triplets, n_items, threads=threads, fit=True)
        s = self._validated(n, auto_selection="random")  # the busiest heads: the best covered
        cancel = threading.Event()
        counts, half = head_counts(T, n, threads)
        # fitted attributes wait here until the fit succeeds: a refused or cancelled fit leaves the last fit's whole
        self._pending = {"auto_search_": None}
        if s.landmarks is not None:
            landmarks = s.landmarks
            l = landmarks.size
            empty = landmarks[counts[landmarks] == 0]
            if empty.size:
                raise ValueError(
                    f"landmarks {empty.tolist()[:10]} head no triplet: every landmark needs triplets (i, j, k) with i = landmark"
                )
        else:
            l, refine = s.l, s.refine
            if l is None:
                l, refine, reg = self._auto_count(T, counts, n, s, progress)
                s = _replace(s, refine=refine, rank=_dc_replace(s.rank, regularization=reg))
            landmarks = self._select_heads(T, counts, n, l, s)
        # Memory check before ranking. In this process all the shares are pulled out of the triplets
        # in one pass (two halves side by side with 2 threads) if their buffer fits the limit, else
        # each task pulls its own landmark's share, one read of the triplets per landmark: at 10^7
        # triplets over 50 landmarks on 2 threads the fit took 0.64 to 0.74 s against 0.86 to 0.91 s;
        # at 1.38 * 10^6 over 5 landmarks (n = 1000, C = 200) best 35.3 against 39.4 ms, median 52.2
        # against 53.8 ms (the rows grouped by head), 37.2 against 45.6 ms and 50.5 against 58.6 ms
        # (shuffled rows), alternating over 3 to 6 runs.
        remote = self._remote()
        stored = StoredTriplets.from_array(triplets, T) if remote else None
        copied = not (isinstance(triplets, np.ndarray) and np.may_share_memory(triplets, T))
        per = counts[landmarks] if landmarks is not None else np.sort(counts)[::-1][:l]
        one_pass = not remote and landmarks is not None

        def estimate(extra):
            return estimate_resources(
                n, per.size, per, self._workers(s.n_jobs), n_components=s.d,
                source="triplets", n_triplets=T.shape[0], remote=remote, ship_shares=remote and stored is None,
                held_bytes=(T.nbytes if copied else 0) + extra,
            )

        est = estimate(2 * int(per.sum()) * comparison_dtype(n).itemsize if one_pass else 0)
        if one_pass and est.peak_bytes > resolve_memory_limit(self.memory_limit)[0]:
            one_pass, est = False, estimate(0)
        check_memory(est, self.memory_limit)
        self._pending["resource_estimate_"] = est
        t_sel = time.perf_counter()
        if remote and stored is None:  # in-memory triplets, other processes: send each share
            def source(h):
                return landmark_share(T, int(h), int(counts[h]), n)
        else:  # each task pulls its share out of the shared (or re-opened, memory-mapped) triplets
            def source(h, src=stored if stored is not None else T):
                return src
        if landmarks is not None:
            shares = landmark_shares(T, landmarks, counts, n, half) if one_pass else [source(h) for h in landmarks]
            tasks = [(share, int(h), int(counts[h]), n, s.rank) for share, h in zip(shares, landmarks)]
            del shares
            columns = self._run(rank_share, tasks, s.n_jobs, progress, cancel, work=counts[landmarks])
        else:
            follow, _ = self._maxmin_heads(T, counts, n, l, source, s.rank)
            columns = self._run(rank_share, [], s.n_jobs, progress, cancel, follow=follow, total=l)
        t_rank = time.perf_counter()
        timings = {"select": t_sel - t_start, "ranking": t_rank - t_sel}
        return self._finish(columns, n, s, timings, progress, t_start, labels, T)

    def _select_heads(self, T, counts, n, l, s) -> np.ndarray | None:
        """``l`` landmarks among the heads of stored triplets: the busiest, or None for MaxMin."""
        ranked = _busiest(counts)
        if ranked.size < l:
            asked = f"n_landmarks={l}" if isinstance(self.n_landmarks, (int, np.integer)) else (
                f"at least n_components + 3 = {s.d + 3} landmarks")
            raise ValueError(f"triplets have only {ranked.size} distinct head item(s) but LOE needs {asked}: "
                             f"triplets headed by at least {l} items")
        if s.selection == "random" or np.sum(counts[ranked] >= 0.5 * counts[ranked[l - 1]]) <= l:
            return np.sort(ranked[:l])
        return None

    def _maxmin_heads(self, T, counts, n, l, source, settings):
        """``follow`` of :meth:`_run` for MaxMin among the well-covered heads of stored triplets.

        The pilot of a head is the mean-field scores of its whole stored share (one
        scan, no ranking); each chosen head's ranking starts at once.
        """
        ranked = _busiest(counts)
        candidates = np.sort(ranked[counts[ranked] >= 0.5 * counts[ranked[l - 1]]])
        return self._maxmin_follow(
            int(ranked[0]), candidates, l,
            pilot=lambda h, k: [(pilot_share, (source(h), h, int(counts[h]), n))],
            rank=lambda h, pilot_result: (rank_share, (source(h), h, int(counts[h]), n, settings)),
        )

    def _maxmin_follow(self, first, candidates, l, pilot, rank, scores=lambda h, parts: parts[0]):
        """A ``follow`` for :meth:`_run`: the MaxMin chain of :func:`maxmin_select`, one pilot at a time.

        ``pilot(h, k)`` gives the ``(fn, args)`` parts of the ``k``-th pilot (a
        pilot split in parts keeps every worker busy); ``scores(h, parts)`` turns
        their results into the landmark's score column; ``rank(h, parts)`` gives
        the ranking task of a chosen landmark. Returns ``(follow,
        chosen)``: ``chosen`` fills with the landmarks in column order.
        """
        chain = MaxMinChain(first, candidates, l)
        chosen = chain.chosen
        state = {"parts": {}}

        def start_pilot(k):
            parts = pilot(chosen[k], k)
            state["parts"] = {"want": len(parts), "got": {}}
            return [(("pilot", k, i), fn, args, False) for i, (fn, args) in enumerate(parts)]

        def follow(key, result):
            if key is None:
                return start_pilot(0)
            _, k, i = key
            got = state["parts"]["got"]
            got[i] = result
            if len(got) < state["parts"]["want"]:
                return []
            parts = [got[j] for j in sorted(got)]
            chain.add(scores(chosen[k], parts))
            new = [(k, *rank(chosen[k], parts), True)]
            if not chain.complete:
                new += start_pilot(k + 1)
            else:
                new.append((k + 1, *rank(chosen[-1], None), True))
            return new

        return follow, chosen

    def _auto_count(self, T, counts, n, s, progress):
        """``n_landmarks="auto"`` on stored triplets: the number of landmarks, the link and the penalty (see the
        class doc)."""
        d = s.d
        reg = s.rank.regularization
        plan = auto_landmark_plan(counts, d)
        if not plan.search:
            return plan.n_landmarks, s.refine, reg
        need = plan.min_triplets
        # Uneven coverage (collected triplets): judge on a held-out share.
        rng = np.random.default_rng(s.rng.integers(2**63 - 1))
        m = T.shape[0]
        n_test = min(max(int(HELDOUT_SHARE * m), 1), 200_000)
        perm = rng.permutation(m)
        test = np.ascontiguousarray(T[perm[:n_test]])
        train = np.ascontiguousarray(T[np.sort(perm[n_test:])])
        tcounts = np.empty(n, dtype=np.int64)
        triplet_kernels.count_heads(train, n, tcounts)
        n_cov = min(int(np.sum(tcounts >= need)), AUTO_MAX_LANDMARKS)
        grid = []
        l = d + 3
        while l < n_cov:
            grid.append(l)
            l *= 2
        grid.append(max(n_cov, d + 3))
        seed = int(rng.integers(2**63 - 1))
        regs = [reg] + [r for r in AUTO_REGULARIZATION if r != reg]
        accs = np.empty((len(grid), len(regs)))
        subs = [None] * len(regs)  # the best (ranking, lmds) of each penalty
        steps = len(grid) * len(regs) + 1
        # The busiest heads of every smaller choice are among those of the largest: their rankings are
        # fitted once per penalty, and each smaller choice places the items from a subset of them.
        # MaxMin picks each set anew, so it fits each choice.
        nested = s.selection == "random"
        busiest = _busiest(tcounts)  # as _select_heads orders them
        for j in range(len(regs)):
            whole = None
            for i in range(len(grid) - 1, -1, -1):  # the largest first
                k = j * len(grid) + len(grid) - 1 - i
                cb = None if progress is None else (lambda *a, k=k: progress("landmarks", k, steps))
                if whole is None or not nested:
                    est = self._sub_estimator(s, grid[i], None, seed, regs[j])
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", LOEWarning)
                        est.fit(train, n_items=n, progress=cb)
                    fit = whole = (est.stages_.ranking, est.stages_.lmds)
                else:
                    keep = np.isin(whole[0].landmarks, busiest[:grid[i]])
                    ranking = RankingResult.from_columns(
                        [c for c, kept in zip(whole[0].columns, keep) if kept], n, regs[j])
                    fit = (ranking, _place(ranking, d, s.offset, cb or (lambda stage: None))[3])
                accs[i, j] = _heldout_accuracy(fit[1].embedding, test)
                if subs[j] is None or accs[i, j] >= accs[i + 1:, j].max():
                    subs[j] = fit  # the best; among equals the fewest landmarks, as a search from the smallest finds
        # The number of landmarks: the best for each penalty. The penalty: `regularization` unless
        # another one does better by more than the held-out share's standard error. That share
        # follows the file's heads, mostly the busiest ones, and a smaller difference is no
        # evidence: with 5 busy heads of 5000 triplets and 2000 spread over 100 items, 40 landmarks
        # at 1.0 came within 0.002 of the 5 busy heads (SE 0.009) and sometimes won, at 0.628 on
        # fresh triplets against 0.652.
        rows = accs.argmax(axis=0)
        j = 0
        for jj in range(1, len(regs)):
            se = float(np.sqrt(accs[rows[j], j] * (1.0 - accs[rows[j], j]) / n_test))
            if accs[rows[jj], jj] > accs[rows[j], j] + se:
                j = jj
        best, sub = (int(rows[j]), j), subs[j]
        l, reg = grid[best[0]], regs[best[1]]
        refine = s.refine
        link = {}
        if s.refine == "auto":
            # The chosen fit polished, as a fit with refine="ordinal" would (the same seed: the same
            # rankings); a polish that cannot fit the scores' order is abandoned after one iteration
            # (refine.HOPELESS_AGREEMENT) and the link is then the BTL one, as it would be anyway. Rankings
            # with fewer comparisons than items are not tried (SPARSE_COMPARISONS): on the Zipf-headed sets
            # of bench_collected.py every such polish was abandoned, after 40 to 50 % of the fit's time.
            cb = None if progress is None else (lambda *a: progress("landmarks", steps - 1, steps))
            ranking, lmds = sub
            link = {"btl": float(accs[best])}
            if ranking.comparisons_per_item >= SPARSE_COMPARISONS:
                polished = ordinal_polish(lmds.embedding, ranking.R, ranking.landmarks, d,
                                          unranked=ranking.unranked, progress=cb, give_up=True)
                link["ordinal"] = link["btl"] if polished is None else _heldout_accuracy(polished.embedding, test)
            if link.get("ordinal", 0.0) > link["btl"]:
                refine = "ordinal"
        self._pending["auto_search_"] = dict(
            n_landmarks=grid, regularization=regs, heldout_accuracy=accs.tolist(), chosen=l,
            chosen_regularization=reg, heldout_triplets=n_test, link_accuracy=link, refine=refine,
        )
        return l, refine, reg

    def _sub_estimator(self, s, l, refine, seed, reg) -> "LOE":
        return LOE(
            n_components=s.d, n_landmarks=l, landmark_selection=s.selection, regularization=reg,
            offset=s.offset, tol=s.rank.tol, max_iter=s.rank.max_iter, n_jobs=s.n_jobs, executor=self.executor,
            memory_limit=self.memory_limit, refine=refine, random_state=seed,
        )

    def fit_oracle(self, oracle, per_landmark: int, progress=None) -> "LOE":
        """Draw ``per_landmark`` comparisons for each landmark from ``oracle`` and fit.

        Each landmark task samples and ranks its comparisons and keeps only its
        score column, so memory stays ``O(m)`` per running task for ``m``
        comparisons per landmark.

        Parameters
        ----------
        oracle : TripletOracle
        per_landmark : int
            Comparisons per landmark (the paper's ``m``), including MaxMin's pilot
            and the ``landmark_share`` among landmarks. With ``l`` landmarks the
            total budget is ``l * per_landmark``; see :func:`loe_viz.total_budget`.
        progress : None, True or callable, optional
            As for :meth:`fit`.

        Returns
        -------
        self
        """
        progress = resolve_progress(progress)
        t_start = time.perf_counter()
        n = int(check_oracle(oracle).n_items)
        s = self._validated(n, auto_selection="maxmin")
        l = s.l if s.l is not None else s.d + 3
        per_landmark = check_int(per_landmark, "per_landmark", minimum=1)
        need = n // 2  # ceil((n - 1) / 2): each comparison touches two of the other n - 1 items
        if per_landmark < need:
            raise ValueError(
                f"per_landmark={per_landmark} is too small for {n} items: a landmark's comparisons must "
                f"touch every item about once, so at least {need} are needed (and ~{int(20 * n * np.log(n)) // l} "
                "for a usable embedding)"
            )
        est = self.estimate_resources(n, per_landmark)
        check_memory(est, self.memory_limit)
        self._pending = {"resource_estimate_": est, "auto_search_": None}  # set with the others, as in fit
        cancel = threading.Event()
        q = int(round(s.landmark_share * per_landmark)) if l >= 3 else 0
        seeds = oracle.next_seeds(l)
        block_seeds = oracle.next_seeds(l) if q else np.zeros(l, dtype=np.uint64)
        if s.landmarks is None and s.selection == "maxmin":
            # The full rankings need every landmark (for the block comparisons), so they start
            # once the chain of pilots has chosen them all; the chain itself is cheap sampling.
            # Each pilot is drawn in parts (a fixed number: the comparisons must not depend on
            # the workers), so that no core idles while the chain of pilots runs.
            p = self._pilot_count(per_landmark - q, n)
            n_parts = PILOT_PARTS
            sizes = np.diff(np.linspace(0, p, n_parts + 1).astype(np.int64))
            pilot_seeds = oracle.next_seeds(l * n_parts).reshape(l, n_parts)
            # A pilot's parts count their wins where they are drawn; the chain adds them up once
            # (the scores read the sum first, then the pilot keeps it for its ranking).
            wins = {}
            follow, chosen = self._maxmin_follow(
                int(s.rng.integers(n)), np.arange(n), l,
                pilot=lambda h, k: [(pilot_oracle, (oracle, h, int(z), pilot_seeds[k, i])) for i, z in enumerate(sizes)],
                rank=lambda h, parts: (_pilot_done, (None if parts is None else
                                                     ([(r[0], r[1]) for r in parts], wins.pop(h)),)),
                scores=lambda h, parts: pilot_scores(wins.setdefault(h, sum(r[2] for r in parts)), h, n),
            )
            done = self._run(None, [], s.n_jobs, progress, cancel, follow=follow, total=l, stage="landmarks")
            landmarks = np.array(chosen, dtype=np.int64)
            pilots = {int(h): r for h, r in zip(landmarks, done) if r is not None}  # (parts, win counts)
        else:
            landmarks = s.landmarks if s.landmarks is not None else np.sort(s.rng.choice(n, size=l, replace=False))
            pilots = {}
        t_sel = time.perf_counter()
        tasks, to_draw = [], []
        for c, h in enumerate(landmarks):
            others = np.delete(landmarks, c) if q else None
            pilot, pilot_wins = pilots.pop(int(h), (None, None))
            tasks.append((oracle, int(h), per_landmark, seeds[c], s.rank, pilot, pilot_wins, others, q, block_seeds[c]))
            to_draw.append(per_landmark - sum(part[0].shape[0] for part in pilot or ()))
        del pilots
        results = self._run(rank_oracle, tasks, s.n_jobs, progress, cancel, work=to_draw)
        del tasks
        columns = [r[0] for r in results]
        t_rank = time.perf_counter()
        # Tasks sample and rank in turn, several at once: split the wall time of the
        # phase in proportion to the task-seconds of each stage.
        t_sample = sum(r[1] for r in results)
        busy = t_sample + sum(r[2] for r in results)
        wall = t_rank - t_sel
        sampling = wall * t_sample / busy if busy > 0 else 0.0
        timings = {"select": t_sel - t_start, "sampling": sampling, "ranking": wall - sampling}
        return self._finish(columns, n, s, timings, progress, t_start)

    def _finish(self, columns, n, s: _Settings, timings, progress, t_start, labels=None, triplets=None) -> "LOE":
        d = s.d
        ranking = RankingResult.from_columns(columns, n, s.rank.regularization)
        landmarks = ranking.landmarks
        l = landmarks.size
        unranked = ranking.unranked_items
        if unranked.size:  # triplets in groups that none relates leave items unranked: said first, for the whole fit
            if triplets is not None and (note := groups_note(comparison_groups(triplets, n), labels)):
                _warn(note, whole=True)
            missing = sum(int(c.unranked.size) for c in columns)
            pairs = l * (n - 1)  # each landmark's distances to the n - 1 other items
            _warn(
                f"{unranked.size} item(s) took part in no comparison of at least one landmark "
                f"(e.g. {item_examples(unranked[:5], labels)}): {missing:,} of the {pairs:,} item-landmark distances "
                f"({100 * missing / pairs:.3g} %) are unknown and set to their landmark's mean distance",
                ADVICE_SPREAD if missing >= SPREAD_UNKNOWN * pairs else "",
            )
        agree = min(c.agreement for c in columns)
        noiseless = agree >= NOISELESS_AGREEMENT
        # Fewer comparisons than ranked items: a ranking then reproduces all of them, noisy or not, and the
        # order of its scores is mostly the penalty's, not the answers': "auto" does not polish it
        # (SPARSE_COMPARISONS).
        per_item = ranking.comparisons_per_item
        polish = s.refine == "ordinal" or (s.refine == "auto" and noiseless and per_item >= SPARSE_COMPARISONS)
        sparse = (f"the rankings reproduce {100 * agree:.2f}% of their comparisons, but with {per_item:.2g} "
                  "comparison(s) per ranked item and landmark they would for noisy answers too: the scores are "
                  "poorly determined") if noiseless and per_item < SPARSE_COMPARISONS else None
        if noiseless and not polish and sparse:
            _warn(f"{sparse}; more comparisons per landmark would help")
        elif noiseless and not polish:
            _warn(
                f"the fitted rankings reproduce {100 * agree:.2f}% of the comparisons: the answers look noiseless. "
                "BTL scores of noiseless answers are rank-like, not distances, so the embedding is distorted "
                "monotonically; refine='auto' or 'ordinal' fits the embedding to the order of the scores instead"
            )
        if not ranking.converged.all():
            late = ~ranking.converged
            _warn(f"{int(late.sum())} of the {l} landmark rankings stopped without converging (after "
                  f"{int(ranking.n_iter[late].max())} Newton iteration(s), max_iter={s.rank.max_iter}; largest gradient "
                  f"norm {ranking.grad_norm[late].max():.3g}): their scores are not the penalised likelihood's "
                  "optimum; a larger max_iter or tol, or a larger regularization, would help")
        if mostly_noise(ranking):
            signal = ranking.signal
            reg = s.rank.regularization
            why, fix = (f"the penalty regularization={reg:g} outweighs them", "; a smaller regularization would help") \
                if reg >= per_item else ("the answers are close to coin flips", "; more comparisons per landmark, or "
                                         "answers less noisy, would help")
            _warn(f"the rankings barely tell the items apart: their score variance beyond noise, summed over the {l} "
                  f"landmarks, is {signal:.3g} (about 0 for coin flips, {SIGNAL_MIN:g} or more where LOE's embedding "
                  f"is more than noise), though they hold {per_item:.3g} comparisons per item: {why}, so the "
                  "embedding is mostly noise and uncertainty_ is not calibrated", fix)
        t0 = time.perf_counter()
        ends = {}
        shifts, edm, D_landmarks, lmds = _place(ranking, d, s.offset,
                                                lambda stage: ends.setdefault(stage, _stage_done(progress, stage)))
        t1, t2, t3 = ends["shifts"], ends["edm"], ends["lmds"]
        if not edm.converged:
            _warn(
                f"EDM projection stopped after {edm.n_iter} iterations without reaching its tolerance "
                f"(last relative change {edm.residuals[-1]:.2e})"
            )
        if lmds.n_supported < d:
            k = lmds.n_supported
            axes = f"axis {d} is placed" if k + 1 == d else f"axes {k + 1} to {d} are placed"
            _warn(
                f"the landmark distances support only {k} of the n_components={d} dimensions: the top eigenvalues "
                f"of the landmark block are {np.array2string(lmds.eigenvalues[:d], precision=3)}; {axes} "
                f"with the smallest positive eigenvalue ({lmds.eigenvalues[k - 1]:.3g}) and "
                f"{'is' if k + 1 == d else 'are'} unreliable. "
                f"Use more landmarks (n_landmarks > {l}) or more comparisons per landmark"
            )
        refined = None
        if polish:
            # its heartbeats let a cancel stop the polish; "auto" gives up on orders it cannot fit
            refined = ordinal_polish(lmds.embedding, ranking.R, landmarks, d, unranked=ranking.unranked,
                                     progress=progress, give_up=s.refine == "auto")
            # MaxMin is advice only where it would choose (landmarks neither given nor chosen by their counts)
            spread = "landmark_selection='maxmin' or " if s.selection == "random" and s.landmarks is None and (
                s.l is not None) else ""
            if refined is None and sparse:
                _warn(f"{sparse}, and the ordinal polish found no consistent fit of their order; more comparisons "
                      "per landmark would help")
            elif refined is None and noiseless:
                _warn(
                    f"the answers look noiseless (the rankings reproduce {100 * agree:.2f}% of the comparisons), "
                    "so the BTL scores are rank-like; the ordinal polish found no consistent fit of their order "
                    f"(try {spread}more comparisons per landmark), so the embedding is the paper's algorithm's, "
                    "distorted monotonically"
                )
            if progress is not None:
                progress("refine", 1, 1)
        t4 = time.perf_counter()
        timings.update(shifts=t1 - t0, edm=t2 - t1, lmds=t3 - t2, refine=t4 - t3, total=t4 - t_start)
        n_used = int(sum(c.n_comparisons for c in columns))
        uncertainty = ItemUncertainty.from_stages(
            ranking, shifts, D_landmarks, lmds, self.offset,
            reason=None if refined is None else (
                "the ordinal polish replaced the landmark-MDS embedding: the answers look noiseless, "
                "where the BTL score variances carry no meaning"
            ),
        )
        self.stages_ = LOEStages(
            landmarks=landmarks, ranking=ranking, shifts=shifts, edm=edm, lmds=lmds,
            D_landmarks=D_landmarks, timings=timings, n_triplets_used=n_used, refine=refined,
            uncertainty=uncertainty,
        )
        self.embedding_ = refined.embedding if refined is not None else lmds.embedding
        self.landmarks_ = landmarks
        self.n_items_ = n
        self.n_triplets_used_ = n_used
        self.triplets_per_landmark_ = ranking.n_comparisons
        for name, value in self.__dict__.pop("_pending", {}).items():
            setattr(self, name, value)
        return self

    @property
    def uncertainty_(self):
        """Per-item covariances of ``embedding_`` (see the class docstring); computed on first access."""
        unc = self.stages_.uncertainty
        if unc is None or unc.reason is not None:
            return None
        if not unc.calibrated:
            warnings.warn(f"uncertainty_ rests on {unc.not_calibrated}", LOEWarning, stacklevel=2)
        return unc.covariance

    def fit_transform(self, triplets, n_items: int | None = None, progress=None) -> np.ndarray:
        """Fit on triplets and return ``embedding_``."""
        progress = resolve_progress(progress)
        return self.fit(triplets, n_items=n_items, progress=progress).embedding_


_OWN_MODULES = ("loe_viz.loe", "loe_viz.loeste")  # a warning is shown at the first caller outside these


def _warn(message: str, advice: str = "", whole: bool = False) -> None:
    """An :class:`LOEWarning` from :meth:`LOE._finish`, shown at the line that called ``fit``/``fit_oracle``
    (of LOE, or of LOE-STE, whose LOE stage it is: not a line inside LOE-STE).

    In LOE-STE the message says it is about the start STE refines, and ``advice`` (what to use instead
    of LOE alone) is left out; a ``whole`` message is about all the triplets, which LOE-STE's STE stage fits too,
    and is not prefixed."""
    level, frame, in_loeste = 1, sys._getframe(1), False
    while frame is not None and frame.f_globals.get("__name__") in _OWN_MODULES:
        in_loeste = in_loeste or frame.f_globals["__name__"] == "loe_viz.loeste"
        level, frame = level + 1, frame.f_back
    message = message if whole else f"LOE-STE's start (LOE): {message}" if in_loeste else message + advice
    warnings.warn(message, LOEWarning, stacklevel=level + 1)


def _stage_done(progress, stage: str) -> float:
    """The time ``stage`` ended, after calling ``progress(stage, 1, 1)`` (when given)."""
    t = time.perf_counter()
    if progress is not None:
        progress(stage, 1, 1)
    return t


def _replace(s: _Settings, **changes) -> _Settings:
    return _dc_replace(s, **changes)
