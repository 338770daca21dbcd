"""Memory and time estimates of an LOE run, and the memory limit that guards it.

Before ranking, :class:`loe_viz.LOE` estimates the peak memory and the time of
the run with :func:`estimate_resources` and refuses, with a ``ValueError``
quoting the estimate, a run whose peak would exceed its ``memory_limit``: a run
that cannot fit is stopped before it starts instead of being killed by the
operating system half-way through.

The memory model counts what LOE allocates (inputs the caller already holds,
such as the oracle's points or the stored triplets, are not counted):

* each running landmark task holds its comparisons as two index arrays
  (4 bytes each per comparison with int32 indices, 8 with int64) and two
  float32 curvature arrays of the Newton solver (8 bytes per comparison), plus
  about a dozen float64 vectors of length ``n``;
* the finished rankings, the ``(n, l)`` score and distance matrices and the
  embedding, ``O(n l)``;
* with stored triplets, a converted copy of them when they had to be converted
  (e.g. int64 indices to int32, or a list to an array); validation itself is
  one pass without temporaries.

The time model is ``comparisons x seconds per comparison``, the per-comparison
costs of sampling and of ranking being *measured on the development machine*
(2 cores, x86-64; see ``CALIBRATION``) at several ``n`` and interpolated in
``log n`` (the cost per comparison grows with ``n`` as the score vector outgrows
the caches). On another machine the seconds scale with its speed; re-measure
with ``benchmarks/bench_scale.py``. Landmark tasks run in rounds of ``n_jobs``,
so ``l = 5`` landmarks on 2 threads take 3 rounds.
"""

from __future__ import annotations

import math
import numbers
import os
import re
from dataclasses import dataclass, field

import numpy as np

from ._validation import MAX_LANDMARK_JOBS, check_int, check_n_jobs, comparison_dtype
from ._format import format_bytes, format_seconds  # noqa: F401  (re-exported: part of this module's API)

__all__ = [
    "CALIBRATION",
    "ResourceEstimate",
    "available_memory",
    "estimate_resources",
    "format_bytes",
    "format_seconds",
    "resolve_memory_limit",
]

#: Fraction of the available memory that ``memory_limit=None`` allows a run.
DEFAULT_MEMORY_FRACTION = 0.8

#: Seconds per comparison of one landmark task on a core of its own, from
#: ``benchmarks/bench_scale.py`` on the development machine (2 cores, x86-64,
#: L2 2 MiB per core; numba 0.68; budgets ``c = 50``, ``l = 6``, a quiet machine;
#: re-measured after the rankings' statistical stopping rule and the finer tiles,
#: which had left the former figures 3 to 9 times too high: n = 3 * 10^5 was
#: estimated at 50 s and took 7.4 s, n = 10^6 at 4.1 min and took 41 s):
#: ``n`` grid, sampling (draw and answer one comparison) and ranking (all Newton
#: and conjugate-gradient passes of a landmark, divided by its comparisons), the
#: CPU seconds of the sweep split by stage. Past ``5.5 * 10^4`` items both stages
#: work tile by tile (:mod:`loe_viz._tiles`), which keeps the growth with ``n``
#: small. ``scanning``: one stored triplet looked at when pulling a landmark's
#: share. ``parallel_efficiency``: throughput of ``k`` concurrent tasks per task,
#: relative to one task alone (2 threads: 1.71 / 2, measured at ``n = 10^5``).
CALIBRATION = {
    "n": (1e4, 1e5, 3e5, 1e6),
    "sampling": (8.5e-9, 1.43e-8, 2.56e-8, 3.13e-8),
    "ranking": (5.3e-8, 4.1e-8, 4.9e-8, 8.1e-8),
    "scanning": 1.5e-9,
    "parallel_efficiency": {1: 1.0, 2: 0.86},
    "machine": "development machine: 2 cores, x86-64, numba 0.68",
}

_SAFETY = 1.10  # allocator slack on the modelled bytes
_OVERHEAD = 64 * 2**20  # numba/numpy temporaries not modelled


# --------------------------------------------------------------- available memory
def _meminfo_available() -> int | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def _read_int(path: str) -> int | None:
    try:
        with open(path) as f:
            text = f.read().strip()
    except OSError:
        return None
    if not text or text == "max":
        return None
    try:
        return int(text)
    except ValueError:
        return None


def _cgroup_headroom() -> int | None:
    """Bytes left under this process's cgroup memory limit, if it has one."""
    for limit_path, usage_path in (
        ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),  # cgroup v2
        ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"),  # v1
    ):
        limit = _read_int(limit_path)
        if limit is None or limit >= 2**60:  # "max" or v1's "unlimited"
            continue
        usage = _read_int(usage_path) or 0
        return max(limit - usage, 0)
    return None


def available_memory() -> int | None:
    """Bytes of memory a new allocation can use now, or None when unknown.

    ``MemAvailable`` of ``/proc/meminfo`` (else ``os.sysconf``'s available
    physical pages), capped by the headroom under a cgroup memory limit (a
    container's limit) when there is one.
    """
    avail = _meminfo_available()
    head = _cgroup_headroom()
    if avail is None:
        return head
    return avail if head is None else min(avail, head)


_UNITS = {
    "": 1, "b": 1,
    "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9, "t": 10**12, "tb": 10**12,
    "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
}


def resolve_memory_limit(memory_limit, name: str = "memory_limit") -> tuple[float, str]:
    """Turn a ``memory_limit`` setting into ``(bytes, description)``.

    Parameters
    ----------
    memory_limit : None, int, float or str
        ``None``: ``DEFAULT_MEMORY_FRACTION`` of :func:`available_memory` (no limit
        when that is unknown); a number: bytes (``float("inf")`` turns the check
        off); a string: ``"8GiB"``, ``"500 MB"``, ``"2.5G"`` or a percentage of
        the available memory such as ``"50%"``.

    Returns
    -------
    limit : float
        Bytes (``inf`` for no limit).
    description : str
        How the limit was obtained, for messages.
    """
    if memory_limit is None:
        avail = available_memory()
        if avail is None:
            return math.inf, "no limit: the available memory is unknown"
        return DEFAULT_MEMORY_FRACTION * avail, (
            f"{DEFAULT_MEMORY_FRACTION:.0%} of the {format_bytes(avail)} available"
        )
    if isinstance(memory_limit, str):
        text = memory_limit.strip().lower().replace(" ", "")
        if text.endswith("%"):
            try:
                pct = float(text[:-1])
            except ValueError:
                pct = -1.0
            if not 0 < pct <= 100:
                raise ValueError(f"{name} percentage must be in (0, 100], got {memory_limit!r}")
            avail = available_memory()
            if avail is None:
                return math.inf, "no limit: the available memory is unknown"
            return pct / 100 * avail, f"{pct:g}% of the {format_bytes(avail)} available"
        m = re.fullmatch(r"([0-9]*\.?[0-9]+(?:e[0-9]+)?)([a-z]*)", text)
        if m is None or m.group(2) not in _UNITS:
            raise ValueError(
                f"{name} must be None, a number of bytes, a size such as '8GiB' or '500MB', or a percentage "
                f"of the available memory such as '50%'; got {memory_limit!r}"
            )
        value = float(m.group(1)) * _UNITS[m.group(2)]
        if value <= 0:
            raise ValueError(f"{name} must be positive, got {memory_limit!r}")
        return value, f"memory_limit={memory_limit!r}"
    if isinstance(memory_limit, bool) or not isinstance(memory_limit, (int, float, np.integer, np.floating)):
        raise ValueError(
            f"{name} must be None, a number of bytes, a size string or a percentage, got {type(memory_limit).__name__}"
        )
    value = float(memory_limit)
    if math.isnan(value) or value <= 0:
        raise ValueError(f"{name} must be a positive number of bytes, got {memory_limit!r}")
    return value, ("no limit" if math.isinf(value) else f"memory_limit={format_bytes(value)}")


# --------------------------------------------------------------------- estimate
@dataclass(frozen=True)
class ResourceEstimate:
    """Estimated peak memory and time of one LOE run.

    Attributes
    ----------
    peak_bytes : int
        Peak memory this process allocates for the run (beyond its inputs).
    seconds : float
        Wall-clock seconds of sampling plus ranking plus the small stages, on
        the machine ``CALIBRATION`` was measured on.
    task_bytes : int
        Peak memory of the largest single landmark task.
    concurrent_tasks : int
        Landmark tasks held in memory at once (``min(n_jobs, l)``).
    worker_bytes : int
        With a remote executor, the memory each worker needs for one task
        (then not part of ``peak_bytes``); 0 otherwise.
    sampling_seconds, ranking_seconds : float
        Wall-clock share of each stage (``ranking`` includes pulling shares out
        of stored triplets).
    details : dict
        The terms of the model, in bytes and seconds.
    """

    peak_bytes: int
    seconds: float
    task_bytes: int
    concurrent_tasks: int
    worker_bytes: int = 0
    sampling_seconds: float = 0.0
    ranking_seconds: float = 0.0
    details: dict = field(default_factory=dict)

    @property
    def peak_gib(self) -> float:
        return self.peak_bytes / 2**30

    def summary(self) -> str:
        """One line: peak memory, what it is made of, and time."""
        parts = [f"peak memory ~{format_bytes(self.peak_bytes)}"]
        if self.concurrent_tasks:
            parts.append(f"({self.concurrent_tasks} landmark task(s) at once of up to {format_bytes(self.task_bytes)})")
        if self.worker_bytes:
            parts.append(f"plus {format_bytes(self.worker_bytes)} on each executor worker")
        text = " ".join(parts) + f", time ~{format_seconds(self.seconds)}"
        stages = [f"{k} {format_seconds(v)}" for k, v in
                  (("sampling", self.sampling_seconds), ("ranking", self.ranking_seconds)) if v > 0]
        if stages:
            text += f" ({', '.join(stages)})"
        return text

    def __str__(self) -> str:
        return self.summary()


def _interp_log(n: float, key: str) -> float:
    grid = np.log(np.asarray(CALIBRATION["n"], dtype=float))
    vals = np.log(np.asarray(CALIBRATION[key], dtype=float))
    x = math.log(max(float(n), 2.0))
    # linear in log-log inside the grid, extrapolated with the end slopes outside
    if x <= grid[0]:
        slope = (vals[1] - vals[0]) / (grid[1] - grid[0])
        return float(math.exp(vals[0] + slope * (x - grid[0])))
    if x >= grid[-1]:
        slope = (vals[-1] - vals[-2]) / (grid[-1] - grid[-2])
        return float(math.exp(vals[-1] + slope * (x - grid[-1])))
    return float(math.exp(np.interp(x, grid, vals)))


def _efficiency(k: int) -> float:
    eff = CALIBRATION["parallel_efficiency"]
    if k in eff:
        return float(eff[k])
    known = max(eff)
    return float(eff[known]) * (0.97 ** (k - known))  # a guess beyond what was measured


def estimate_resources(
    n_items: int,
    n_landmarks: int,
    per_landmark,
    n_jobs: int = 1,
    *,
    n_components: int = 2,
    source: str = "oracle",
    n_triplets: int | None = None,
    remote: bool = False,
    ship_shares: bool = False,
    held_bytes: int = 0,
) -> ResourceEstimate:
    """Estimate the peak memory and the time of an LOE run before running it.

    Parameters
    ----------
    n_items : int
        Number of items ``n``.
    n_landmarks : int
        Number of landmarks ``l``.
    per_landmark : int or sequence of int
        Comparisons of each landmark (one number for all, or one per landmark).
    n_jobs : int, default 1
        Landmark tasks running at once (threads, or an executor's workers); -1: one per core.
    n_components : int, default 2
    source : {"oracle", "triplets"}, default "oracle"
        ``"oracle"``: each task samples its comparisons (:meth:`LOE.fit_oracle`);
        ``"triplets"``: each task pulls its share out of ``n_triplets`` stored
        triplets (:meth:`LOE.fit`).
    n_triplets : int, optional
        With ``source="triplets"``, the number of stored triplets (default: the
        sum of ``per_landmark``).
    remote : bool, default False
        The tasks run in other processes (e.g. a ``dask.distributed``
        executor): their memory is reported as ``worker_bytes``, not in
        ``peak_bytes``.
    ship_shares : bool, default False
        With ``remote`` and in-memory triplets, the caller cuts every landmark's
        share and sends it: all shares are held at once by the caller.
    held_bytes : int, default 0
        Memory the run holds throughout beyond the modelled arrays, e.g. a
        converted copy of the stored triplets.

    Returns
    -------
    ResourceEstimate

    Notes
    -----
    The seconds come from per-comparison costs measured on the development
    machine (``CALIBRATION``); they are a guide, not a promise, elsewhere. The
    bytes are a model of the arrays LOE allocates, checked against measured
    peaks by ``benchmarks/bench_scale.py`` (within about 10%).

    Examples
    --------
    >>> from loe_viz import estimate_resources, total_budget
    >>> est = estimate_resources(10**6, 5, total_budget(10**6, 50) // 5, n_jobs=2)
    >>> est.peak_bytes < 12 * 2**30
    True
    """
    n = check_int(n_items, "n_items", minimum=3)
    l = check_int(n_landmarks, "n_landmarks", minimum=1)
    if l > n:  # as LOE refuses it: a landmark is an item
        raise ValueError(f"n_landmarks={l} is larger than the number of items ({n})")
    k_jobs = check_n_jobs(n_jobs, maximum=MAX_LANDMARK_JOBS)  # LOE's own bounds
    d = check_int(n_components, "n_components", minimum=1)
    if l < d + 3:  # as LOE refuses it: no fit has fewer
        raise ValueError(f"n_landmarks must be >= n_components + 3 = {d + 3} (LOE needs l >= d + 3 to recover the "
                         f"shifts), got {l}")
    if source not in ("oracle", "triplets"):
        raise ValueError(f"source must be 'oracle' or 'triplets', got {source!r}")
    if source == "oracle" and n_triplets is not None:  # an oracle's tasks sample their comparisons: nothing stored
        raise ValueError("n_triplets is the number of stored triplets, read only with source='triplets'")
    per = np.atleast_1d(np.asarray(per_landmark))
    if per.dtype.kind == "O" and all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in per.flat):
        per = per.astype(np.float64)  # integers beyond int64
    if per.ndim != 1 or (per.size != 1 and per.size != l):
        raise ValueError(f"per_landmark must be one count or {l} counts (one per landmark), got {per.size}")
    if per.dtype.kind not in "iuf" or not (np.isfinite(per) & (per == np.round(per))).all():
        raise ValueError(f"per_landmark must hold whole numbers of comparisons, got {per_landmark!r:.80}")
    if (per < 0).any():
        raise ValueError("per_landmark must be >= 0")
    # in float64: bytes and seconds are estimates, and a count of 10**30 must give a huge one, not wrap around
    per = np.broadcast_to(per, (l,)).astype(np.float64)
    if n_triplets is None:
        n_triplets = int(per.sum())
    M = check_int(n_triplets, "n_triplets", minimum=0)

    b = comparison_dtype(n).itemsize  # the fit's (near, far) arrays
    per_comparison = 2 * b + 8  # near + far + two float32 curvature arrays
    vectors = 112 * n  # Newton-CG work vectors (fine and coarse level), counts, mask
    task_bytes = per_comparison * per + vectors  # per landmark
    k = max(1, min(k_jobs, l))
    largest = np.sort(task_bytes)[::-1]
    running = int(largest[:k].sum())
    results = 8 * n * l * 3 + 8 * n * d + 64 * l * l  # columns, R, D_landmarks, embedding
    held = check_int(held_bytes, "held_bytes", minimum=0)
    shipped = 2 * b * int(per.sum()) if (remote and ship_shares) else 0
    counts = 8 * n if source == "triplets" else 0
    if remote:
        modelled = held + results + shipped + counts
        worker = int(_SAFETY * int(largest[0]) + _OVERHEAD)
    else:
        modelled = held + running + results + counts
        worker = 0
    peak = int(_SAFETY * modelled + _OVERHEAD)

    s_sample = _interp_log(n, "sampling") if source == "oracle" else 0.0
    s_rank = _interp_log(n, "ranking")
    scan = CALIBRATION["scanning"] * M if source == "triplets" else 0.0
    task_s = per * s_rank + scan
    task_samp = per * s_sample
    rounds = math.ceil(l / k)
    eff = _efficiency(k)
    # tasks run in rounds of k; the wall time of a round is its slowest task
    order = np.argsort(-(task_s + task_samp))
    wall = 0.0
    samp_wall = 0.0
    for r in range(rounds):
        idx = order[r * k:(r + 1) * k]
        tot = task_s[idx] + task_samp[idx]
        j = idx[int(np.argmax(tot))]
        wall += (task_s[j] + task_samp[j]) / eff
        samp_wall += task_samp[j] / eff
    small = 2e-8 * n * l + 1e-7 * l**3  # shifts, EDM projection, landmark MDS
    seconds = float(wall + small)
    details = {
        "index_bytes": b,
        "bytes_per_comparison": per_comparison,
        "vector_bytes_per_task": vectors,
        "running_tasks_bytes": running,
        "results_bytes": results,
        "held_bytes": held,
        "shipped_shares_bytes": shipped,
        "seconds_per_comparison_sampling": s_sample,
        "seconds_per_comparison_ranking": s_rank,
        "scan_seconds_per_task": scan,
        "rounds": rounds,
        "parallel_efficiency": eff,
        "calibration": CALIBRATION["machine"],
    }
    return ResourceEstimate(
        peak_bytes=peak,
        seconds=seconds,
        task_bytes=int(largest[0]),
        concurrent_tasks=0 if remote else k,
        worker_bytes=worker,
        sampling_seconds=float(samp_wall),
        ranking_seconds=float(wall - samp_wall),
        details=details,
    )


def check_memory(estimate: ResourceEstimate, memory_limit, name: str = "memory_limit") -> None:
    """Raise ``ValueError`` quoting ``estimate`` when its peak exceeds ``memory_limit``.

    Parameters
    ----------
    estimate : ResourceEstimate
    memory_limit : None, int, float or str
        As for :func:`resolve_memory_limit`.
    """
    limit, how = resolve_memory_limit(memory_limit, name)
    if estimate.peak_bytes > limit:
        advice = (f"Use fewer comparisons per landmark, fewer parallel jobs (n_jobs), or a higher {name}"
                  if limit >= _OVERHEAD else  # no setting of the run can help: its fixed part alone is above
                  f"Any fit needs {format_bytes(_OVERHEAD)} beside its arrays (numba's and NumPy's working memory): "
                  f"raise {name} to at least {format_bytes(estimate.peak_bytes)}")
        raise ValueError(
            f"{name} exceeded: this run needs an estimated {estimate.summary()}, more than the limit of "
            f"{format_bytes(limit)} ({how}). {advice} (float('inf') turns the check off)."
        )
