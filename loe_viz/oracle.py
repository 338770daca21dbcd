"""A simulated triplet oracle: answers "is i closer to j or to k?" about known points."""

from __future__ import annotations

import math

import numpy as np

from ._format import format_bytes
from ._tiles import tile_shift
from ._validation import check_float, check_int, check_landmarks, check_points, check_random_state, index_dtype
from .kernels import sampling
from .points import distance_exponent
from .resources import resolve_memory_limit

__all__ = ["TripletOracle", "total_budget", "check_table_memory"]


def total_budget(n: int, c: float) -> int:
    """The paper's budget ``floor(c * n * ln n)`` comparisons in total.

    Parameters
    ----------
    n : int
        Number of items.
    c : float
        Budget multiplier (the paper uses 50 to 200).
    """
    n = check_int(n, "n", minimum=2)
    c = check_float(c, "c", minimum=0.0, strict_minimum=True)
    return int(math.floor(c * n * math.log(n)))


def check_table_memory(request: str, rows: int, n_items: int, memory_limit, *, advice: str,
                       name: str = "memory_limit", extra_bytes: int = 0) -> int:
    """Refuse, before it is allocated, a table of ``rows`` triplets that would exceed ``memory_limit``.

    The table is ``(rows, 3)`` of :func:`loe_viz._validation.index_dtype` (4 bytes an index up to
    ``2**31 - 1`` items); ``extra_bytes`` is what the request allocates beside it. Raises the
    ``ValueError`` of :func:`loe_viz.resources.check_memory`'s form, naming ``request``, the bytes and
    the limit; returns the bytes otherwise.
    """
    dt = index_dtype(n_items)
    table = 3 * dt.itemsize * rows  # a Python int: 10**30 rows is a size, not a wrapped-around one
    need = table + extra_bytes
    limit, how = resolve_memory_limit(memory_limit, name)
    if need > limit:
        shape = f"({rows:,}, 3)" if rows < 10**15 else f"({rows:.3g}, 3)"
        beside = f" and {format_bytes(extra_bytes)} beside it" if extra_bytes else ""
        raise ValueError(
            f"{name} exceeded: {request} needs {format_bytes(need)} (an {dt.name} table of shape {shape}{beside}), "
            f"more than the limit of {format_bytes(limit)} ({how}). {advice} (float('inf') turns the check off)."
        )
    return need


def _seed(seed) -> np.uint64:
    """A comparison seed (an integer in 0..2**64 - 1, such as one of :meth:`TripletOracle.next_seeds`)."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**64:
        raise ValueError(f"seed must be an integer in 0..2**64 - 1 (see next_seeds), got {seed!r:.60}")
    return np.uint64(seed)


class TripletOracle:
    """Answers triplet queries about points ``X`` under the BTL / logistic noise model.

    A query ``(i; j, k)`` is answered "j is closer to i than k" with probability
    ``sigmoid((D_ik - D_ij) / temperature)`` where ``D`` holds squared Euclidean
    distances; ``temperature = 1`` is the paper's model and ``temperature = 0``
    answers without noise. Points of any finite scale are answered as the model
    says: points beyond about 1e77 or below 1e-77 are compared divided by a power
    of two (:func:`loe_viz.points.distance_exponent`, the temperature with them),
    where their squared distances neither overflow nor vanish.

    Parameters
    ----------
    X : array-like of shape (n, d)
        Ground-truth points.
    temperature : float, default 1.0
        Noise scale, ``>= 0``.
    random_state : None, int, SeedSequence, numpy.random.Generator or RandomState
        Seed of the queries and the answers, as for the estimators (a legacy
        ``numpy.random.RandomState`` is taken too). Each sampling call draws
        fresh seeds from it, so a sequence of calls is reproducible.
    memory_limit : None, int, float or str, default None
        Largest table :meth:`uniform_triplets` and :meth:`landmark_triplets`
        may allocate, as LOE's ``memory_limit`` (see
        :func:`loe_viz.resources.resolve_memory_limit`): a request beyond it is
        refused with a ``ValueError`` before anything is drawn. ``None``: 80% of
        the available memory.

    Examples
    --------
    >>> from loe_viz import TripletOracle, make_points
    >>> X = make_points("gaussian", 100, random_state=0)
    >>> oracle = TripletOracle(X, random_state=1)
    >>> oracle.landmark_triplets([0, 1, 2, 3, 4], per_landmark=1000).shape
    (5000, 3)
    """

    def __init__(self, X, temperature: float = 1.0, random_state=None, *, memory_limit=None):
        self.X = check_points(X, "X", min_points=3)
        self.temperature = check_float(temperature, "temperature", minimum=0.0)
        resolve_memory_limit(memory_limit)  # validates the setting
        self.memory_limit = memory_limit
        # The points the kernels compare: X itself, or X divided by 2**e where its squared distances would
        # overflow or vanish (the temperature is divided by 4**e on every call, see _kernel_temperature).
        self._exponent = distance_exponent(self.X)
        self._points = np.ldexp(self.X, -self._exponent) if self._exponent else self.X
        if isinstance(random_state, np.random.SeedSequence):
            self._seeds = random_state
        elif isinstance(random_state, (int, np.integer)) and not isinstance(random_state, (bool, np.bool_)):
            if random_state < 0:
                raise ValueError(f"random_state must be a non-negative integer, got {random_state}")
            self._seeds = np.random.SeedSequence(int(random_state))
        elif random_state is None:
            self._seeds = np.random.SeedSequence()
        else:  # a Generator, or what the estimators also take (a RandomState); anything else is refused as they do
            self._seeds = np.random.SeedSequence(int(check_random_state(random_state).integers(0, 2**63 - 1)))

    @property
    def n_items(self) -> int:
        return self.X.shape[0]

    @property
    def n_dims(self) -> int:
        return self.X.shape[1]

    def _kernel_temperature(self) -> float:
        """The temperature in the units of the compared points: ``temperature / 4**e`` (0 or ``inf`` when that
        is beyond the floats, i.e. answers without noise, or coin flips, as the model gives at that scale)."""
        if not self._exponent:
            return self.temperature
        with np.errstate(over="ignore", under="ignore"):
            return float(np.ldexp(self.temperature, -2 * self._exponent))

    def next_seeds(self, k: int) -> np.ndarray:
        """``k`` fresh 64-bit seeds (advances the oracle's seed sequence)."""
        k = check_int(k, "k", minimum=0)
        return np.array([c.generate_state(1, np.uint64)[0] for c in self._seeds.spawn(k)], dtype=np.uint64)

    def comparisons(self, head: int, per_landmark: int, seed, tiled: bool = False,
                    out: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The answered comparisons of one landmark, as ``(near, far)`` index arrays.

        A pure function of ``(X, temperature, head, per_landmark, seed)``: workers
        of an executor reproduce a landmark's comparisons from its seed alone.
        With ``tiled=True`` and many items, the same comparisons come grouped in
        cache-sized tiles of items (see :mod:`loe_viz._tiles`), which makes both
        the sampling and the ranking passes cache-friendly; otherwise in the
        order drawn. ``out``: two contiguous index arrays of length
        ``per_landmark`` to write into (e.g. slices of a landmark's whole budget).
        """
        head = self._head(head)
        per_landmark = check_int(per_landmark, "per_landmark", minimum=0)
        seed = _seed(seed)
        near, far = self._outputs(out, per_landmark)
        if per_landmark == 0:
            return near, far
        shift = tile_shift(self.n_items) if tiled else None
        temperature = self._kernel_temperature()
        if shift is None:
            sampling.landmark_comparisons(self._points, int(head), int(per_landmark), temperature, seed, near, far)
        else:
            sampling.landmark_comparisons_tiled(self._points, int(head), int(per_landmark), temperature, seed,
                                                shift, near, far)
        return near, far

    def _head(self, head) -> int:
        """``head`` as an item index (the kernels read the head's row of ``X``: one outside it read any memory)."""
        if isinstance(head, (bool, np.bool_)) or not isinstance(head, (int, np.integer)):
            raise ValueError(f"head must be an item index (an integer), got {head!r:.60}")
        if not 0 <= head < self.n_items:
            raise ValueError(f"head must be an item index in 0..{self.n_items - 1}, got {int(head)}")
        return int(head)

    def _others(self, others, head: int) -> np.ndarray:
        """``others`` as distinct item indices other than ``head``, at least two of them."""
        arr = np.asarray(others)
        if arr.ndim != 1 or arr.dtype.kind not in "iu" or arr.dtype == np.uint64 and arr.size and arr.max() > 2**62:
            raise ValueError(f"others must be a 1-D sequence of integer item indices, got {arr.dtype} of shape "
                             f"{arr.shape}")
        arr = arr.astype(np.int64)
        if arr.size and (arr.min() < 0 or arr.max() >= self.n_items):
            bad = int(arr[(arr < 0) | (arr >= self.n_items)][0])
            raise ValueError(f"others must be item indices in 0..{self.n_items - 1}, got {bad}")
        if np.any(arr == head):
            raise ValueError(f"others must not include the head ({head}): an item is not compared with itself")
        values, counts = np.unique(arr, return_counts=True)
        if values.size < arr.size:
            raise ValueError(f"others must be distinct items, got {int(values[counts > 1][0])} more than once")
        if arr.size < 2:
            raise ValueError(f"block comparisons need at least two items other than the head, got {arr.size}")
        return arr

    def _outputs(self, out, count: int) -> tuple[np.ndarray, np.ndarray]:
        """The caller's ``(near, far)`` arrays, or two new index arrays of length ``count``."""
        if out is not None:
            near, far = out
            for a in (near, far):  # the kernels write ``count`` entries into each
                if not (isinstance(a, np.ndarray) and a.ndim == 1 and a.shape[0] == count and a.dtype.kind in "iu"
                        and a.flags.c_contiguous and a.flags.writeable):
                    raise ValueError(f"out must be two writeable contiguous 1-D integer arrays of length {count}")
            return near, far
        dt = index_dtype(self.n_items)
        return np.empty(count, dtype=dt), np.empty(count, dtype=dt)

    def block_comparisons(self, head: int, others, count: int, seed,
                          out: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``count`` answered comparisons headed by ``head`` among the items ``others`` only.

        Each pair is a uniformly random pair of distinct items of ``others``
        (pairs may repeat), answered under the same noise model as
        :meth:`comparisons`; a pure function of its arguments and ``seed``.
        LOE spends a small share of each landmark's budget on the other
        landmarks: the landmark block of the rankings, from which the shifts are
        estimated, then rests on many comparisons instead of a few hundred.
        """
        head = self._head(head)
        count = check_int(count, "count", minimum=0)
        seed = _seed(seed)
        others = self._others(others, head)
        near, far = self._outputs(out, count)
        if count == 0:
            return near, far
        rng = np.random.default_rng(seed)
        a = rng.integers(others.size, size=count)
        b = rng.integers(others.size - 1, size=count)
        b += b >= a
        dh = ((self._points[others] - self._points[head]) ** 2).sum(axis=1)
        dj, dk = dh[a], dh[b]
        u = rng.random(count)
        temperature = self._kernel_temperature()
        if temperature > 0:
            with np.errstate(over="ignore"):  # a temperature of 1e-315 (rescaled points): log-odds of +-inf are fine
                j_closer = u < 0.5 * (1.0 + np.tanh(0.5 * (dk - dj) / temperature))  # sigmoid, no overflow
        else:
            j_closer = np.where(dj == dk, u < 0.5, dj < dk)
        near[:] = np.where(j_closer, others[a], others[b])
        far[:] = np.where(j_closer, others[b], others[a])
        return near, far

    def landmark_triplets(self, landmarks, per_landmark: int) -> np.ndarray:
        """Answered triplets headed by each landmark.

        Parameters
        ----------
        landmarks : sequence of int
            Distinct item indices.
        per_landmark : int
            Comparisons per landmark, each a uniformly random pair of other items.

        Returns
        -------
        triplets : int ndarray of shape (len(landmarks) * per_landmark, 3)
            List-order rows ``(landmark, closer, farther)``, grouped by landmark.

        Raises
        ------
        ValueError
            When the table (and one landmark's comparisons, drawn before they
            are copied into it) would exceed ``memory_limit``: before anything
            is drawn, and without using up any seed.
        """
        lm = check_landmarks(landmarks, self.n_items, f"{self.n_items} items")
        per_landmark = check_int(per_landmark, "per_landmark", minimum=1)
        if self.n_items < 3:
            raise ValueError("X must have at least 3 points to form a triplet")
        check_table_memory(
            f"landmark_triplets of {lm.size:,} landmark(s) with per_landmark={per_landmark:,}",
            lm.size * per_landmark, self.n_items, self.memory_limit,
            extra_bytes=2 * index_dtype(self.n_items).itemsize * per_landmark,  # comparisons' (near, far)
            advice="Draw fewer comparisons per landmark, or fewer landmarks at a time, or raise the oracle's "
                   "memory_limit")
        seeds = self.next_seeds(lm.size)
        out = np.empty((lm.size * per_landmark, 3), dtype=index_dtype(self.n_items))
        for c, (head, seed) in enumerate(zip(lm, seeds)):
            block = out[c * per_landmark:(c + 1) * per_landmark]
            near, far = self.comparisons(head, per_landmark, seed)
            block[:, 0] = head
            block[:, 1] = near
            block[:, 2] = far
        return out

    def uniform_triplets(self, m: int) -> np.ndarray:
        """``m`` answered triplets with uniformly random distinct heads and pairs.

        Returns
        -------
        triplets : int ndarray of shape (m, 3), list-order.

        Raises
        ------
        ValueError
            When the table would exceed ``memory_limit``: before anything is
            drawn, and without using up any seed.
        """
        m = check_int(m, "m", minimum=1)
        check_table_memory(f"uniform_triplets(m={m:,})", m, self.n_items, self.memory_limit,
                           advice="Draw fewer triplets at a time, or raise the oracle's memory_limit")
        out = np.empty((m, 3), dtype=index_dtype(self.n_items))
        sampling.uniform_triplets(self._points, m, self._kernel_temperature(), self.next_seeds(1)[0], out)
        return out

    def __repr__(self) -> str:
        return f"TripletOracle(n_items={self.n_items}, n_dims={self.n_dims}, temperature={self.temperature})"


#: What a fit asks of its oracle: a TripletOracle, or a wrapper of one (the explorer records the answers).
ORACLE_METHODS = ("n_items", "comparisons", "block_comparisons", "next_seeds")


def check_oracle(oracle, *more: str):
    """``oracle``, if it offers what a fit calls (:data:`ORACLE_METHODS` and ``more``)."""
    wanted = ORACLE_METHODS + more
    missing = [m for m in wanted if not hasattr(oracle, m)]
    if missing:  # a wrapper that offers part of it is told which part is missing
        why = f" (it has no {missing[0]})" if len(missing) < len(wanted) else ""
        raise ValueError(f"oracle must be a TripletOracle, got {type(oracle).__name__}{why}")
    return oracle
