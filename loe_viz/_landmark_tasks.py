"""Per-landmark tasks of :class:`loe_viz.LOE`, picklable for any ``concurrent.futures`` executor.

A task ranks one landmark. With stored triplets it first pulls that landmark's
share out of them: a thread shares the caller's array (in memory or
memory-mapped), and a task sent to another process re-opens the ``.npy`` file
the array was memory-mapped from, so only a small handle travels. With an
oracle it draws the landmark's comparisons from a seed.

The MaxMin landmark choice reads a cheap *pilot* of each chosen landmark (a
share of its comparisons, or its stored share): mean-field BTL scores
(:func:`pilot_scores`), each column measured from its own nearest items
(:class:`MaxMinChain`), which no per-column shift changes. Raw BTL scores
carry a per-column shift that is unknown until the shifts stage.
"""

from __future__ import annotations

import mmap
import time
from dataclasses import asdict, dataclass

import numpy as np

from ._threads import kind, side_by_side
from ._validation import comparison_dtype
from .oracle import TripletOracle
from .kernels import btl, shares
from .kernels import triplets as triplet_kernels
from .ranking import MEANFIELD_ITER, cache_order, rank_column

__all__ = [
    "RankSettings", "StoredTriplets", "head_counts", "landmark_share", "landmark_shares", "rank_share", "rank_oracle",
    "pilot_share", "pilot_oracle", "pilot_scores", "MaxMinChain", "maxmin_select",
]


@dataclass(frozen=True)
class RankSettings:
    """Validated settings of every landmark ranking (:func:`loe_viz.ranking.rank_column`)."""

    regularization: float = 1e-3
    tol: float = 1e-5
    max_iter: int = 50

    def kwargs(self) -> dict:
        return asdict(self)


class StoredTriplets:
    """A picklable handle to list-order triplets memory-mapped from a file.

    Parameters
    ----------
    filename : str
    offset : int
        Byte offset of the array in the file.
    shape : tuple of int
    dtype : numpy dtype

    Notes
    -----
    Remote workers must see the same file at the same path (a shared or local
    file system).
    """

    def __init__(self, filename, offset: int, shape, dtype):
        self.filename = str(filename)
        self.offset = int(offset)
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)

    @classmethod
    def from_array(cls, original, validated: np.ndarray) -> "StoredTriplets | None":
        """The handle of ``original`` when ``validated`` is exactly its file-backed memory, else None.

        Only a memory map made directly from a file (e.g. ``np.load(path,
        mmap_mode="r")``), not a view of one, has a trustworthy offset.
        """
        if not isinstance(original, np.memmap) or not isinstance(original.base, mmap.mmap):
            return None
        if original.filename is None or not original.flags.c_contiguous:
            return None
        if validated.dtype != original.dtype or validated.shape != original.shape:
            return None
        if validated.ctypes.data != original.ctypes.data:
            return None
        return cls(original.filename, original.offset, original.shape, original.dtype)

    def open(self) -> np.ndarray:
        """The triplets, memory-mapped read-only."""
        return np.memmap(self.filename, dtype=self.dtype, mode="r", offset=self.offset, shape=self.shape)

    def __repr__(self) -> str:
        return f"StoredTriplets({self.filename!r}, offset={self.offset}, shape={self.shape}, dtype={self.dtype})"


def comparison_buffers(count: int, n_items: int) -> tuple[np.ndarray, np.ndarray]:
    """Empty ``(near, far)`` arrays for ``count`` comparisons among ``n_items`` items, in the fit's own
    index dtype (:func:`~loe_viz._validation.comparison_dtype`: uint16 up to 2**16 items)."""
    dt = comparison_dtype(n_items)
    return np.empty(int(count), dtype=dt), np.empty(int(count), dtype=dt)


def landmark_share(triplets: np.ndarray, head: int, count: int, n_items: int):
    """``(near, far)`` of the triplets headed by ``head``, in row order.

    Parameters
    ----------
    triplets : int ndarray (m, 3)
        List-order triplets (validated).
    head : int
    count : int
        Number of triplets headed by ``head`` (from a previous count).
    n_items : int

    Returns
    -------
    near, far : int ndarrays (count,), of :func:`~loe_viz._validation.comparison_dtype`.
    """
    near, far = comparison_buffers(count, n_items)
    got = shares.landmark_share(triplets, head, near, far)
    if got != count:
        raise RuntimeError(f"landmark {head}: expected {count} triplets in the stored triplets, found {got}")
    return near, far


#: From this many triplets on, :func:`head_counts` and :func:`landmark_shares` run as two halves side by side.
PARALLEL_MIN = 1 << 18


def head_counts(triplets: np.ndarray, n_items: int, threads: int = 1):
    """``(counts, half)``: the number of triplets headed by each item, and ``half``, None or
    ``(row, counts of the rows before it)`` when two halves were counted side by side
    (``threads`` >= 2 and at least ``PARALLEL_MIN`` triplets), for :func:`landmark_shares`."""
    n = int(n_items)
    counts = np.empty(n, dtype=np.int64)
    m = triplets.shape[0]
    if threads < 2 or m < PARALLEL_MIN:
        triplet_kernels.count_heads(triplets, n, counts)
        return counts, None
    row = m // 2
    before = np.empty(n, dtype=np.int64)
    side_by_side(kind("count_heads", triplets), lambda: triplet_kernels.count_heads(triplets[:row], n, before),
                 lambda: triplet_kernels.count_heads(triplets[row:], n, counts))
    counts += before
    return counts, (row, before)


def landmark_shares(triplets: np.ndarray, heads: np.ndarray, counts: np.ndarray, n_items: int, half=None) -> list:
    """:func:`landmark_share` of each of ``heads`` (distinct), all from one pass over the triplets.

    Pulling each share out on its own reads every triplet once per landmark (at
    10^7 triplets, 12 ms each, a third of a ranking); one pass scatters them all
    into one buffer of ``2 * counts[heads].sum()`` indices, which the caller
    accounts for. With ``half`` from :func:`head_counts`, the rows before and after
    ``half[0]`` are scattered side by side (the same result).

    Returns
    -------
    list of ``(near, far)``
        Views into the buffer, one per head, each in row order.
    """
    heads = np.asarray(heads, dtype=np.int64)
    slot = np.full(int(n_items), -1, dtype=np.int64)
    slot[heads] = np.arange(heads.size)
    offsets = np.zeros(heads.size + 1, dtype=np.int64)
    np.cumsum(counts[heads], out=offsets[1:])
    near, far = comparison_buffers(int(offsets[-1]), n_items)
    start = offsets[:-1]
    if half is None:
        triplet_kernels.split_by_slot(triplets, slot, start, near, far)
    else:
        row, before = half
        side_by_side(kind("split_by_slot", triplets, near),
                     lambda: triplet_kernels.split_by_slot(triplets[:row], slot, start, near, far),
                     lambda: triplet_kernels.split_by_slot(triplets[row:], slot, start + before[heads], near, far))
    return [(near[a:b], far[a:b]) for a, b in zip(offsets[:-1], offsets[1:])]


def rank_share(source, head: int, count: int, n_items: int, settings: RankSettings, cancel=None):
    """Executor task: pull landmark ``head``'s share out of the stored triplets and rank it.

    Parameters
    ----------
    source : ndarray, StoredTriplets or tuple
        The validated triplets, a handle that re-opens them from their file, or
        the share itself as ``(near, far)``.
    head, count, n_items : int
    settings : RankSettings
    cancel : threading.Event, optional
        Stops the ranking at its next Newton iteration once set.

    Returns
    -------
    ColumnRanking
    """
    if isinstance(source, tuple):
        near, far = source
    else:
        triplets = source.open() if isinstance(source, StoredTriplets) else source
        near, far = landmark_share(triplets, int(head), int(count), int(n_items))
        del triplets
    near, far = cache_order(near, far, int(n_items))  # the share in arrival order is freed here
    return rank_column(near, far, int(head), int(n_items), reorder=False, cancel=cancel, **settings.kwargs())


def rank_oracle(oracle, head: int, per_landmark: int, seed, settings: RankSettings, pilot=None, pilot_wins=None,
                block=None, block_count: int = 0, block_seed=0, cancel=None):
    """Executor task: draw one landmark's comparisons from the oracle, then rank them.

    The landmark's ``per_landmark`` comparisons are the pilot's (a list of ``(near, far)``
    parts already drawn, reused, with ``pilot_wins`` their summed win counts from
    :func:`pilot_oracle`, or None to count them here), ``block_count`` comparisons among the other
    landmarks ``block`` (:meth:`~loe_viz.TripletOracle.block_comparisons`), and
    uniformly random pairs for the rest. Only the oracle's points travel to a
    remote worker; the comparisons are reproduced there from the seeds.

    Returns
    -------
    column : ColumnRanking
    sampling_s, ranking_s : float
        Seconds spent drawing and ranking.
    """
    t0 = time.perf_counter()
    n = oracle.n_items
    near, far = comparison_buffers(per_landmark, n)
    # Win counts of the pilot's parts (counted where they were drawn), the uniform rest and the
    # block, kept apart until the mean-field start of the uniform ones: no pass counts twice.
    wins = np.zeros((n, 2), dtype=np.int32)
    p = 0
    for part_near, part_far in pilot or ():
        near[p:p + part_near.shape[0]] = part_near
        far[p:p + part_near.shape[0]] = part_far
        p += part_near.shape[0]
        if pilot_wins is None:
            _add_counts(wins, part_near, part_far)
    if pilot_wins is not None:
        wins += pilot_wins
    q = int(block_count) if block is not None else 0
    rest = per_landmark - p - q
    # Each part is in cache order by itself (tiles), so passes over the whole stay cache-friendly.
    if isinstance(oracle, TripletOracle):  # drawn in place
        oracle.comparisons(head, rest, seed, tiled=True, out=(near[p:p + rest], far[p:p + rest]))
        if q:
            oracle.block_comparisons(head, block, q, block_seed, out=(near[p + rest:], far[p + rest:]))
    else:  # an object with the oracle's methods (e.g. one that records the comparisons): copied in
        near[p:p + rest], far[p:p + rest] = oracle.comparisons(head, rest, seed, tiled=True)
        if q:
            near[p + rest:], far[p + rest:] = oracle.block_comparisons(head, block, q, block_seed)
        check_oracle_items(near[p:], far[p:], n, head)
    t1 = time.perf_counter()
    _add_counts(wins, near[p:p + rest], far[p:p + rest])
    w0 = block_start(wins, near[p + rest:], far[p + rest:], int(head), n, block) if q else None
    if q:
        _add_counts(wins, near[p + rest:], far[p + rest:])
    col = rank_column(near, far, int(head), n, reorder=False, cancel=cancel, w0=w0, wins=wins, **settings.kwargs())
    return col, t1 - t0, time.perf_counter() - t1


def check_oracle_items(near, far, n_items: int, head) -> None:
    """Refuse comparisons from an oracle object that name items outside its ``n_items`` (the kernels index arrays
    of ``n_items`` rows with them: a wrapper that misstates ``n_items`` wrote out of bounds)."""
    for a in (np.asarray(near), np.asarray(far)):
        if a.size == 0:
            continue
        lo, hi = int(a.min()), int(a.max())
        if lo < 0 or hi >= n_items:
            raise ValueError(f"the oracle's comparisons headed by item {int(head)} name item {hi if hi >= n_items else lo}"
                             f", outside its n_items = {n_items} (indices 0..{n_items - 1}); an oracle must answer "
                             "with indices below its n_items")


def _add_counts(wins, near, far):
    """Add the win counts of ``(near, far)`` (:func:`loe_viz.kernels.btl.win_counts`) to ``wins``."""
    counts = np.empty_like(wins)
    btl.win_counts(near, far, counts)
    wins += counts


def block_start(wins, near, far, head: int, n_items: int, block) -> np.ndarray:
    """Starting scores of a ranking whose last comparisons are among the other landmarks ``block``.

    The mean-field start (:func:`loe_viz.kernels.btl.meanfield_start`) assumes
    uniformly random opponents; the landmark share gives the landmarks
    thousands of comparisons against each other instead, so their mean-field
    scores can be off by many units and Newton's trust region then needs
    several steps to bring them home. Here the win counts ``wins`` of the uniform
    comparisons alone give the mean-field start, and the landmarks' scores are
    replaced by the BTL fit of their comparisons among themselves, ``(near, far)``,
    anchored (weakly) to their mean-field values: a Newton solve in ``len(block)``
    unknowns. Sum-zero over the items other than ``head``.
    """
    n = int(n_items)
    mask = np.ones(n, dtype=np.bool_)
    mask[head] = False
    w = np.empty(n)
    btl.meanfield_from_counts(wins, mask, MEANFIELD_ITER, 128, w)
    block = np.sort(np.asarray(block, dtype=np.int64))
    k = block.size
    if k >= 2 and near.shape[0]:
        a = np.searchsorted(block, near)
        b = np.searchsorted(block, far)
        # wins[i, j]: times block[j] (farther) beat block[i]
        wins = np.bincount(a * k + b, minlength=k * k).reshape(k, k).astype(np.float64)
        v = w[block].copy()
        anchor = w[block].copy()
        kappa = 1.0
        for _ in range(100):
            z = v[None, :] - v[:, None]  # z[i, j] = v_j - v_i: log-odds that j beats i
            q = 1.0 / (1.0 + np.exp(np.clip(z, -80, 80)))  # 1 - sigmoid
            g = kappa * (v - anchor) + (wins * q).sum(axis=0) * -1.0 + (wins * q).sum(axis=1)
            c = wins * q * (1.0 - q)
            c = c + c.T
            H = np.diag(c.sum(axis=1) + kappa) - c
            step = np.linalg.solve(H, -g)
            big = np.abs(step).max()
            if big > 4.0:
                step *= 4.0 / big
            v += step
            if big < 1e-8:
                break
        w[block] = v
    w[~mask] = 0.0
    w[mask] -= w[mask].mean()
    return w


def pilot_scores(counts: np.ndarray, head: int, n_items: int) -> np.ndarray:
    """Approximate BTL scores of one landmark's comparisons, without Newton steps.

    The mean-field inversion (:func:`loe_viz.kernels.btl.meanfield_from_counts`) of the
    items' win counts ``counts`` (:func:`loe_viz.kernels.btl.win_counts` of the
    comparisons): on the scale of squared distances, up to the column's shift.
    The landmark itself gets ``-inf``.
    """
    mask = np.ones(n_items, dtype=np.bool_)
    mask[head] = False
    w = np.empty(n_items)
    btl.meanfield_from_counts(counts, mask, 2, 128, w)
    w[head] = -np.inf
    return w


def pilot_share(source, head: int, count: int, n_items: int, cancel=None):
    """Pilot task on stored triplets: :func:`pilot_scores` of landmark ``head``'s whole share.

    ``source`` as in :func:`rank_share`: the triplets, a file handle, or the share itself.
    """
    if isinstance(source, tuple):
        near, far = source
    else:
        if isinstance(source, StoredTriplets):
            source = source.open()
        near, far = landmark_share(source, int(head), int(count), int(n_items))
    counts = np.empty((int(n_items), 2), dtype=np.int32)
    btl.win_counts(near, far, counts)
    return pilot_scores(counts, int(head), int(n_items))


def pilot_oracle(oracle, head: int, count: int, seed, cancel=None):
    """Pilot task on an oracle: ``count`` comparisons of ``head`` as ``(near, far)``, reused in its
    ranking, and their win counts (:func:`loe_viz.kernels.btl.win_counts`), counted here so that
    the parts of a pilot count side by side and the chain only adds them up."""
    if isinstance(oracle, TripletOracle):  # drawn into the fit's own dtype, as the ranking's
        near, far = oracle.comparisons(int(head), int(count), seed, tiled=True,
                                       out=comparison_buffers(count, oracle.n_items))
    else:
        near, far = oracle.comparisons(int(head), int(count), seed, tiled=True)
        check_oracle_items(near, far, int(oracle.n_items), head)
    counts = np.empty((int(oracle.n_items), 2), dtype=np.int32)
    btl.win_counts(near, far, counts)
    return near, far, counts


#: MaxMin measures each score column from this quantile of its scores (its nearest items).
NEAR_QUANTILE = 0.01


class MaxMinChain:
    """MaxMin: each next landmark is the candidate whose nearest chosen landmark is farthest.

    Feed :meth:`add` the score column of the newest landmark (BTL scores or
    :func:`pilot_scores`: squared distances up to an unknown shift); it returns
    the next landmark. Each column is measured from its own nearest items
    (minus its ``NEAR_QUANTILE`` quantile), which removes the shift: comparing
    raw columns would favour items whose landmarks have a small mean distance,
    which pulled MaxMin's landmarks to the centre. (Rank quantiles are
    shift-free too, but they measure how many items lie nearer, not how far:
    once the periphery is covered they pick the dense centre again.)

    Parameters
    ----------
    first : int
        The first landmark.
    candidates : int ndarray
        Items that may become landmarks.
    n_landmarks : int
    """

    def __init__(self, first: int, candidates: np.ndarray, n_landmarks: int):
        self.candidates = np.asarray(candidates, dtype=np.int64)
        self.n_landmarks = int(n_landmarks)
        self.chosen = [int(first)]
        self._nearest = None  # per candidate, the smallest distance estimate over the chosen landmarks

    @property
    def complete(self) -> bool:
        return len(self.chosen) >= self.n_landmarks

    def add(self, scores: np.ndarray) -> int:
        """Take the scores of ``chosen[-1]`` and choose the next landmark."""
        col = np.asarray(scores, dtype=np.float64)
        finite = col[np.isfinite(col)]
        q = col[self.candidates] - (np.quantile(finite, NEAR_QUANTILE) if finite.size else 0.0)
        self._nearest = q if self._nearest is None else np.minimum(self._nearest, q)
        far = self._nearest.copy()
        far[np.isin(self.candidates, self.chosen)] = -np.inf
        self.chosen.append(int(self.candidates[int(np.argmax(far))]))
        return self.chosen[-1]


def maxmin_select(first: int, candidates: np.ndarray, n_landmarks: int, scores_of) -> np.ndarray:
    """The landmarks :class:`MaxMinChain` chooses, ``scores_of(head)`` giving each new landmark's scores.

    Returns
    -------
    int ndarray (n_landmarks,)
        The landmarks in the order chosen.
    """
    chain = MaxMinChain(first, candidates, n_landmarks)
    while not chain.complete:
        chain.add(scores_of(chain.chosen[-1]))
    return np.array(chain.chosen, dtype=np.int64)
