"""State of the LOE explorer: configuration in, results out, no Panel.

:class:`ExplorerState` holds the configuration of one session (the points, the
noise, the comparison budget, the landmarks) as parameters, and the results
derived from it (points, triplets, the fitted :class:`loe_viz.loe.LOE` with its
``stages_``, the metrics).  Every computation goes through the library.  Bad
input never raises out of the state: it sets :attr:`ExplorerState.error` and
keeps the previous results.

:class:`CompareState` runs LOE and the baselines on the same triplets in a
background thread, with progress and cancellation.

Threads: the state does not know about Panel or bokeh.  When
``ExplorerState(background=True)`` the pipeline runs on a private worker
thread (the numba kernels release the GIL) and its results are handed to
:attr:`ExplorerState.dispatch`, a callable that runs a function where the UI
may be touched (the Panel explorer passes one that schedules it on the
session's event loop).  With the default ``background=False`` everything runs
synchronously, which is what the tests and scripts use.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable

import numpy as np
import param

from ..points import POINT_KINDS, load_points, make_points
from .colors import position_colors

__all__ = [
    "STEPS",
    "BUDGET_UNITS",
    "URL_PARAMS",
    "BASELINE_METHODS",
    "ExplorerState",
    "CompareState",
    "Worker",
    "estimate_cost",
    "warm_up",
]

log = logging.getLogger(__name__)

#: The steps of the explorer, in order (``ExplorerState.step`` indexes this).
STEPS = ("Configure", "Sample", "Ranking", "Shifts", "EDM", "Embedding", "Compare")

#: Budget units: label shown to people -> value stored (and put in the URL).
BUDGET_UNITS = {
    "c in c·n·ln n comparisons in total": "total_c",
    "comparisons per landmark": "per_landmark",
}

#: Offset rules of the shifts stage: label -> value of ``LOE(offset=...)``.
OFFSET_RULES = {
    "λ₂, second-largest eigenvalue (paper)": "lambda2",
    "mean of λ₂ … λ_(l−d−1) (variant)": "mean",
}

#: Configuration parameters that are put in (and read from) the URL.
URL_PARAMS = (
    "kind", "n", "d", "seed", "temperature", "budget_unit", "budget",
    "n_landmarks", "landmark_selection", "offset", "step",
)

#: Parameters whose change requires a new run of the pipeline.
CONFIG_PARAMS = tuple(p for p in URL_PARAMS if p != "step")

#: Methods of the Compare step: names of estimators exported by :mod:`loe_viz`.
BASELINE_METHODS = ("LOE", "STE", "TSTE", "SOE", "GNMDS", "CKL", "LOESTE")

# Comparisons per second assumed before the first measurement (deliberately low).
_DEFAULT_RATE = 1.0e6
# Above these estimates an automatic run waits for an explicit "Run".
CONFIRM_SECONDS = 8.0
CONFIRM_BYTES = 1.5 * 2**30
# Never start a run needing more memory than this.
MAX_BYTES = 8 * 2**30


def _fmt_bytes(b: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if b < 1024 or unit == "TB":
            return f"{b:.0f} {unit}" if unit in ("B", "KB") else f"{b:.1f} {unit}"
        b /= 1024.0
    return f"{b:.1f} TB"  # pragma: no cover


def _fmt_seconds(s: float) -> str:
    if s < 1:
        return f"{s * 1000:.0f} ms"
    if s < 120:
        return f"{s:.1f} s"
    return f"{s / 60:.1f} min"


@dataclass
class Estimate:
    """What a run will cost, before it starts.

    Attributes
    ----------
    n_landmarks, per_landmark, n_comparisons : int
    seconds : float
        Expected wall time of the fit (from the throughput measured so far).
    bytes : float
        Peak memory of the run (triplets, scores, points).
    """

    n_landmarks: int
    per_landmark: int
    n_comparisons: int
    seconds: float
    bytes: float

    @property
    def text(self) -> str:
        """The estimate in words (comparisons, time, memory)."""
        return (
            f"{self.n_comparisons:,} comparisons ({self.per_landmark:,} per landmark × "
            f"{self.n_landmarks} landmarks): about {_fmt_seconds(self.seconds)} and "
            f"{_fmt_bytes(self.bytes)}"
        )


def estimate_cost(n: int, D: int, d: int, n_landmarks: int, per_landmark: int,
                  rate: float = _DEFAULT_RATE) -> Estimate:
    """Estimate time and memory of one LOE run.

    Parameters
    ----------
    n, D, d : int
        Items, dimension of the data, embedding dimension.
    n_landmarks, per_landmark : int
        Landmarks and comparisons per landmark.
    rate : float
        Comparisons fitted per second (measured on this machine when known).

    Returns
    -------
    Estimate
    """
    m = int(n_landmarks) * int(per_landmark)
    itemsize = 4 if n < 2**31 - 1 else 8
    nbytes = (
        2.2 * m * 3 * itemsize          # the triplets, and one per-landmark copy while fitting
        + 6.0 * n * n_landmarks * 8     # scores R, F and the solver's work vectors
        + 8.0 * n * max(D, d) * 8       # points, embedding, aligned copies, colours
        + 2.0e6
    )
    seconds = m / max(rate, 1.0) + 1e-6 * n * n_landmarks + 0.02
    return Estimate(int(n_landmarks), int(per_landmark), m, float(seconds), float(nbytes))


class Worker:
    """One background thread running the latest submitted job ("latest wins").

    A job submitted while another runs replaces any job still waiting, so a
    burst of control changes costs at most one run beyond the one in progress.

    Parameters
    ----------
    name : str
        Name of the thread (for debugging).
    """

    def __init__(self, name: str = "loe-viz-worker"):
        self._name = name
        self._lock = threading.Lock()
        self._idle = threading.Event()
        self._idle.set()
        self._pending: Callable[[], None] | None = None
        self._thread: threading.Thread | None = None
        self._closed = False

    def submit(self, job: Callable[[], None]) -> None:
        """Queue ``job``, replacing a job that has not started yet."""
        with self._lock:
            if self._closed:
                return
            self._pending = job
            self._idle.clear()
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name=self._name, daemon=True)
                self._thread.start()

    def _loop(self) -> None:
        while True:
            with self._lock:
                job, self._pending = self._pending, None
                if job is None or self._closed:
                    self._thread = None
                    self._pending = None
                    self._idle.set()
                    return
            try:
                job()
            except Exception as exc:  # a job must never kill the worker
                log.warning("background job failed: %s: %s", type(exc).__name__, exc)

    @property
    def busy(self) -> bool:
        """True while a job runs or waits."""
        return not self._idle.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until no job runs or waits; return False on time-out."""
        return self._idle.wait(timeout)

    def close(self) -> None:
        """Drop a waiting job and stop after the running one."""
        with self._lock:
            self._closed = True
            self._pending = None


class _RecordingOracle:
    """Wraps a :class:`~loe_viz.oracle.TripletOracle` and keeps every answered triplet.

    ``LOE.fit_oracle`` may query the oracle adaptively (MaxMin landmarks); the
    explorer needs the triplets it used for the Sample step and for the
    baselines of the Compare step.
    """

    def __init__(self, oracle):
        self._oracle = oracle
        self.blocks: list[np.ndarray] = []

    def __getattr__(self, name):
        return getattr(self._oracle, name)

    def landmark_triplets(self, landmarks, per_landmark):
        """Answer and record triplets headed by ``landmarks``."""
        out = self._oracle.landmark_triplets(landmarks, per_landmark)
        self.blocks.append(out)
        return out

    def uniform_triplets(self, m):
        """Answer and record ``m`` uniformly random triplets."""
        out = self._oracle.uniform_triplets(m)
        self.blocks.append(out)
        return out

    def comparisons(self, head, per_landmark, seed, tiled=False):
        """Answer one landmark's comparisons (what ``LOE.fit_oracle`` calls) and record them."""
        near, far = self._oracle.comparisons(head, per_landmark, seed, tiled=tiled)
        block = np.empty((near.size, 3), dtype=near.dtype)
        block[:, 0] = head
        block[:, 1] = near
        block[:, 2] = far
        self.blocks.append(block)
        return near, far

    def block_comparisons(self, head, others, count, seed):
        """Answer one landmark's comparisons among the other landmarks and record them."""
        near, far = self._oracle.block_comparisons(head, others, count, seed)
        self.blocks.append(np.column_stack([np.full(near.size, head, dtype=near.dtype), near, far]))
        return near, far

    def triplets(self) -> np.ndarray:
        """Every recorded triplet, in list order, as one ``(m, 3)`` array."""
        if not self.blocks:
            return np.empty((0, 3), dtype=np.int32)
        return np.concatenate(self.blocks, axis=0)


@dataclass
class _Config:
    """An immutable snapshot of the configuration, taken on the UI thread."""

    kind: str
    n: Any
    d: Any
    seed: Any
    temperature: Any
    budget_unit: str
    budget: Any
    n_landmarks: Any
    landmark_selection: str
    offset: str
    upload_token: int
    uploaded: np.ndarray | None = field(repr=False, default=None)
    uploaded_name: str = ""


class ExplorerState(param.Parameterized):
    """Configuration and results of one explorer session.

    Parameters
    ----------
    background : bool, default False
        Run the pipeline on a worker thread (results delivered through
        :attr:`dispatch`) instead of synchronously.
    n_jobs : int, default 1
        Threads used by each LOE fit.
    auto_update : bool, default True
        Rerun the pipeline whenever a configuration parameter changes.
    **params
        Initial values of the parameters below.

    Examples
    --------
    >>> s = ExplorerState(n=300, seed=1)   # computes at once
    >>> s.metrics["procrustes"] < 0.5
    True
    >>> s.n = 3                            # too few items for 5 landmarks
    >>> s.error.startswith("n ")
    True
    """

    # ---- configuration (URL-able) -------------------------------------------------
    kind = param.Selector(default="gaussian", objects=list(POINT_KINDS) + ["uploaded"], doc="""
        Ground-truth configuration: a generator of loe_viz.make_points, or "uploaded".""")
    n = param.Integer(default=1000, softbounds=(20, 5000), doc="""
        Number of items (for uploaded data: the rows used, a seeded subsample if fewer).""")
    d = param.Integer(default=2, softbounds=(1, 10), doc="""
        Dimension of the ground truth (synthetic kinds) and of the embedding.""")
    seed = param.Integer(default=0, softbounds=(0, 99), doc="""
        Seed of the points, the oracle's answers, and the landmark choice.""")
    temperature = param.Number(default=1.0, softbounds=(0.0, 2.0), doc="""
        Noise T of the answers: P(j closer to i than k) = sigmoid((D_ik - D_ij) / T);
        1 is the paper's model, 0 answers without noise.""")
    budget_unit = param.Selector(default="total_c", objects=BUDGET_UNITS, doc="""
        Unit of `budget`: a multiplier c of c·n·ln n comparisons in total (split evenly
        over the landmarks), or a number of comparisons per landmark.""")
    budget = param.Number(default=100.0, softbounds=(1.0, 400.0), doc="""
        The comparison budget, in the unit of `budget_unit`.""")
    n_landmarks = param.Integer(default=None, allow_None=True, softbounds=(3, 50), doc="""
        Number of landmarks l (None: d + 3, the fewest LOE allows).""")
    landmark_selection = param.Selector(default="random", objects=["random", "maxmin"], doc="""
        Landmarks drawn at random, or MaxMin (each next landmark the item farthest
        from those chosen, read off the rankings already fitted).""")
    offset = param.Selector(default="lambda2", objects=OFFSET_RULES, doc="""
        Common offset of the shifts: the paper's second-largest eigenvalue, or the
        average of the eigenvalues that equal the offset without noise (less variance).""")
    step = param.Integer(default=0, bounds=(0, len(STEPS) - 1), doc="""
        Index of the step shown (into STEPS).""")

    # ---- derived results (replaced together; `version` counts them) ---------------
    points = param.Array(default=None, precedence=-1, doc="Ground truth X, shape (n, D).")
    colors = param.Parameter(default=None, precedence=-1, doc="Hex colour of each point.")
    hue_lightness = param.Array(default=None, precedence=-1, doc="Hue and lightness of each point.")
    oracle = param.Parameter(default=None, precedence=-1, doc="The TripletOracle that answered.")
    triplets = param.Array(default=None, precedence=-1, doc="The list-order triplets LOE used.")
    model = param.Parameter(default=None, precedence=-1, doc="The fitted loe_viz.loe.LOE.")
    aligned = param.Array(default=None, precedence=-1, doc="Embedding aligned to the truth (Procrustes).")
    point_error = param.Array(default=None, precedence=-1, doc="Distance of each aligned point to its truth.")
    metrics = param.Dict(default={}, precedence=-1, doc="Errors, counts and timings of the last run.")
    estimate = param.Parameter(default=None, precedence=-1, doc="Estimate of the configured run.")
    config_used = param.Dict(default={}, precedence=-1, doc="The configuration of the shown results.")
    version = param.Integer(default=0, precedence=-1, doc="Incremented when results are replaced.")

    # ---- status --------------------------------------------------------------------
    error = param.String(default="", precedence=-1, doc="Why the last configuration could not run.")
    notice = param.String(default="", precedence=-1, doc="A run waiting for confirmation, and why.")
    status = param.String(default="", precedence=-1, doc="What happened last, in words.")
    busy = param.Boolean(default=False, precedence=-1, doc="A run is in progress.")
    uploaded_name = param.String(default="", precedence=-1, doc="Name of the uploaded file.")

    def __init__(self, background: bool = False, auto_update: bool = True, n_jobs: int = 1, **params):
        self._background = bool(background)
        #: Threads of each LOE fit (the landmark rankings run in parallel; numba releases the GIL).
        self.n_jobs = int(n_jobs)
        self.auto_update = bool(auto_update)
        #: Runs a callable where results may be published (the UI thread).
        self.dispatch: Callable[[Callable[[], None]], None] = lambda fn: fn()
        self._worker = Worker("loe-viz-pipeline") if self._background else None
        self._cache: dict[str, tuple[Any, Any]] = {}
        self._uploaded: np.ndarray | None = None
        self._upload_token = 0
        self._rate = _DEFAULT_RATE
        self._generation = 0
        self._closed = False
        super().__init__(**params)
        self.param.watch(self._on_config, list(CONFIG_PARAMS))
        if self.auto_update:
            self.run()

    # ------------------------------------------------------------------ public API
    @property
    def n_landmarks_effective(self) -> int | None:
        """The landmarks the configuration asks for (``d + 3`` when unset)."""
        if self.n_landmarks is not None:
            return self.n_landmarks
        return self.d + 3 if isinstance(self.d, int) else None

    def run(self, force: bool = False) -> None:
        """Run the pipeline on the current configuration.

        Parameters
        ----------
        force : bool, default False
            Start even when the estimate is above the confirmation thresholds.
        """
        if self._closed:
            return
        cfg = self._snapshot()
        self._generation += 1
        gen = self._generation
        if self._worker is None:
            self._compute(cfg, force, gen)
        else:
            self.busy = True
            self._worker.submit(partial(self._compute, cfg, force, gen))

    def wait(self, timeout: float | None = 60.0) -> bool:
        """Wait for background runs to finish (immediately True when synchronous)."""
        return True if self._worker is None else self._worker.wait(timeout)

    def load_file(self, content, filename: str = "points.csv") -> bool:
        """Use an uploaded point table as the ground truth.

        Parameters
        ----------
        content : bytes or str
            The file's content (CSV/TSV with numeric columns, optional header).
        filename : str
            Name shown in messages.

        Returns
        -------
        bool
            True when the file was accepted; otherwise :attr:`error` says why and the
            previous results stay.
        """
        try:
            if content is None or len(content) == 0:
                raise ValueError(f"{filename}: the file is empty")
            if filename.lower().endswith(".npy") and isinstance(content, bytes):
                X = _load_npy(content, filename)
            else:
                X = load_points(content, name=filename)
        except ValueError as exc:
            self.error = f"Upload rejected: {exc}"
            return False
        except Exception as exc:  # never raise out of the state
            self.error = f"Upload rejected: {filename} could not be read ({type(exc).__name__}: {exc})"
            return False
        self._uploaded = X
        self._upload_token += 1
        self.uploaded_name = filename
        n, D = X.shape
        d = min(self.d, D) if isinstance(self.d, int) and self.d >= 1 else min(2, D)
        new = {"kind": "uploaded", "n": int(n), "d": int(d)}
        changed = {k: v for k, v in new.items() if getattr(self, k) != v}
        if changed:
            self.param.update(**changed)  # the watcher reruns
        elif self.auto_update:
            self.run()
        return True

    def to_query(self) -> dict[str, str]:
        """The URL-able configuration as strings (what the explorer puts in the URL)."""
        out = {}
        for p in URL_PARAMS:
            v = getattr(self, p)
            if v is None:
                continue
            s = self.param[p].serialize(v)
            out[p] = s if isinstance(s, str) else _json(s)
        return out

    def from_query(self, query: dict[str, str]) -> None:
        """Apply URL query values; values that do not parse set :attr:`error`."""
        updates, bad = {}, []
        for p in URL_PARAMS:
            if p not in query:
                continue
            raw = query[p]
            try:
                v = raw
                if isinstance(self.param[p], param.Number) and isinstance(raw, str):
                    import json
                    v = json.loads(raw)  # what a URL query holds for numbers (as Panel parses it)
                if isinstance(self.param[p], param.Integer) and isinstance(v, float) and v.is_integer():
                    v = int(v)
                self.param[p]._validate(v)
            except Exception:
                bad.append(f"{p}={raw!r}")
                continue
            updates[p] = v
        if updates:
            try:
                self.param.update(**updates)
            except Exception as exc:
                self.error = f"The link's settings could not be applied: {exc}"
                return
        if bad:
            self.error = "Ignored settings in the link that do not parse: " + ", ".join(bad)

    def close(self) -> None:
        """Stop background work and drop the results (frees the session's memory)."""
        self._closed = True
        if self._worker is not None:
            self._worker.close()
        self._cache.clear()
        self._uploaded = None
        self.points = self.triplets = self.aligned = self.point_error = self.hue_lightness = None
        self.colors = self.oracle = self.model = None

    # ------------------------------------------------------------------ internals
    def _on_config(self, *events) -> None:
        if self.auto_update:
            self.run()

    def _snapshot(self) -> _Config:
        return _Config(
            kind=self.kind, n=self.n, d=self.d, seed=self.seed, temperature=self.temperature,
            budget_unit=self.budget_unit, budget=self.budget, n_landmarks=self.n_landmarks,
            landmark_selection=self.landmark_selection, offset=self.offset, upload_token=self._upload_token,
            uploaded=self._uploaded, uploaded_name=self.uploaded_name,
        )

    def _publish(self, **updates) -> None:
        def apply():
            if self._closed:
                return
            self.param.update(**updates)
        try:
            self.dispatch(apply)
        except Exception as exc:  # e.g. the session went away
            log.debug("could not publish results: %s", exc)

    def _compute(self, cfg: _Config, force: bool, gen: int) -> None:
        """Run the pipeline for ``cfg``; publish results, or the error."""
        try:
            updates = self._pipeline(cfg, force)
        except ValueError as exc:
            self._publish(error=str(exc), busy=self._still_busy(gen), notice="")
            return
        except Exception as exc:  # a bug or an unexpected input: say so, do not raise
            log.debug("pipeline failed", exc_info=True)
            self._publish(error=f"Could not run this configuration ({type(exc).__name__}: {exc})",
                          busy=self._still_busy(gen), notice="")
            return
        updates.setdefault("busy", self._still_busy(gen))
        self._publish(**updates)

    def _still_busy(self, gen: int) -> bool:
        return gen != self._generation

    def _cached(self, slot: str, key, make):
        hit = self._cache.get(slot)
        if hit is not None and hit[0] == key:
            return hit[1]
        value = make()
        self._cache[slot] = (key, value)
        return value

    def _pipeline(self, cfg: _Config, force: bool) -> dict:
        from .._validation import check_float, check_int
        from .. import metrics as M
        from ..loe import LOE
        from ..oracle import TripletOracle, total_budget

        # -- validate the scalars (messages start with the parameter's name) ------
        d = check_int(cfg.d, "d", minimum=1)
        n = check_int(cfg.n, "n", minimum=3)
        seed = check_int(cfg.seed, "seed", minimum=0)
        temperature = check_float(cfg.temperature, "temperature", minimum=0.0)
        budget = check_float(cfg.budget, "budget", minimum=0.0, strict_minimum=True)
        l = d + 3 if cfg.n_landmarks is None else check_int(cfg.n_landmarks, "n_landmarks", minimum=d + 3)
        if l < d + 3:
            raise ValueError(f"n_landmarks must be >= d + 3 = {d + 3}, got {l}")
        if n < l + 2:
            raise ValueError(
                f"n must be at least n_landmarks + 2 = {l + 2} (l = {l} landmarks for d = {d}), got {n}"
            )

        # -- the ground truth ----------------------------------------------------------
        if cfg.kind == "uploaded":
            if cfg.uploaded is None:
                raise ValueError("kind 'uploaded' needs a point file: upload a CSV first")
            rows, D = cfg.uploaded.shape
            if n > rows:
                raise ValueError(f"n must be <= {rows}, the rows of {cfg.uploaded_name or 'the upload'}, got {n}")
            if d > D:
                raise ValueError(
                    f"d must be <= {D}, the columns of {cfg.uploaded_name or 'the upload'}, got {d}"
                )
            key = ("uploaded", cfg.upload_token, n, seed)

            def make():
                if n == rows:
                    return cfg.uploaded
                idx = np.sort(np.random.default_rng(seed).choice(rows, n, replace=False))
                return np.ascontiguousarray(cfg.uploaded[idx])
        else:
            key = (cfg.kind, n, d, seed)

            def make():
                return make_points(cfg.kind, n, d, random_state=seed)

        X = self._cached("points", key, make)
        D = X.shape[1]
        colors, hue_lightness = self._cached("colors", key, lambda: position_colors(X))

        # -- the budget ---------------------------------------------------------------
        if cfg.budget_unit == "per_landmark":
            per_landmark = int(budget)
            if per_landmark < 1:
                raise ValueError(f"budget must be at least 1 comparison per landmark, got {budget:g}")
        else:
            total = total_budget(n, budget)
            per_landmark = total // l
            if per_landmark < 1:
                raise ValueError(
                    f"budget c = {budget:g} gives {total} comparisons in total, fewer than one per "
                    f"landmark ({l} landmarks): raise c"
                )
        need = n // 2
        if per_landmark < need:
            raise ValueError(
                f"budget gives {per_landmark:,} comparisons per landmark, fewer than the {need:,} needed for "
                f"{n:,} items (each landmark's comparisons must touch every item about once): raise it"
            )
        est = estimate_cost(n, D, d, l, per_landmark, self._rate)
        if est.bytes > MAX_BYTES:
            raise ValueError(
                f"budget needs about {_fmt_bytes(est.bytes)} of memory ({est.n_comparisons:,} comparisons), "
                f"more than the {_fmt_bytes(MAX_BYTES)} this explorer allows: lower it"
            )
        if not force and (est.seconds > CONFIRM_SECONDS or est.bytes > CONFIRM_BYTES):
            return {
                "notice": f"Large run: {est.text}. Press “Run” to start it.",
                "estimate": est, "error": "",
            }

        # -- sample and fit -------------------------------------------------------------
        fit_key = key + (d, temperature, per_landmark, l, cfg.landmark_selection, cfg.offset)

        def fit():
            oracle = TripletOracle(X, temperature=temperature, random_state=seed)
            rec = _RecordingOracle(oracle)
            model = LOE(n_components=d, n_landmarks=l, landmark_selection=cfg.landmark_selection,
                        offset=cfg.offset, random_state=seed, n_jobs=self.n_jobs)
            t0 = time.perf_counter()
            model.fit_oracle(rec, per_landmark)
            seconds = time.perf_counter() - t0
            return oracle, rec.triplets(), model, seconds

        t_start = time.perf_counter()
        oracle, triplets, model, fit_seconds = self._cached("fit", fit_key, fit)

        # -- metrics ----------------------------------------------------------------------
        def score():
            Z = np.asarray(model.embedding_, dtype=np.float64)
            Zp = Z if Z.shape[1] == D else np.hstack([Z, np.zeros((Z.shape[0], D - Z.shape[1]))])
            aligned, per_point = M.align(X, Zp)
            return {
                "aligned": np.asarray(aligned),
                "point_error": np.asarray(per_point),
                "procrustes": float(M.procrustes_error(X, Zp)),
                "triplet_error": float(M.triplet_error(X, Z, n_test=10_000, random_state=seed)),
                "train_accuracy": float(_accuracy(M, Z, triplets)),
            }

        sc = self._cached("score", fit_key, score)
        if fit_seconds > 0.05 and triplets.shape[0] > 0:
            self._rate = 0.5 * self._rate + 0.5 * (triplets.shape[0] / fit_seconds)
        total_seconds = time.perf_counter() - t_start
        metrics = {
            "procrustes": sc["procrustes"],
            "triplet_error": sc["triplet_error"],
            "train_accuracy": sc["train_accuracy"],
            "n_triplets": int(triplets.shape[0]),
            "per_landmark": per_landmark,
            "n_landmarks": l,
            "fit_seconds": fit_seconds,
            "seconds": total_seconds,
            "n": n, "D": D, "d": d,
        }
        config_used = {
            "kind": cfg.kind, "n": n, "d": d, "D": D, "seed": seed, "temperature": temperature,
            "budget_unit": cfg.budget_unit, "budget": budget, "n_landmarks": l,
            "landmark_selection": cfg.landmark_selection, "offset": cfg.offset, "per_landmark": per_landmark,
            "uploaded_name": cfg.uploaded_name if cfg.kind == "uploaded" else "",
        }
        ranking = model.stages_.ranking
        unranked = set()
        for col in getattr(ranking, "columns", ()):
            unranked.update(int(v) for v in getattr(col, "unranked", ()))
        notes = []
        if unranked:
            notes.append(f"{len(unranked)} item(s) never compared by some landmark (their score is the mean)")
        if not getattr(model.stages_.edm, "converged", True):
            notes.append("the EDM projection stopped before its tolerance")
        metrics["unranked"] = len(unranked)
        status = f"LOE fitted {triplets.shape[0]:,} comparisons in {_fmt_seconds(fit_seconds)}"
        if notes:
            status += " — note: " + "; ".join(notes)
        return {
            "points": X, "colors": colors, "hue_lightness": hue_lightness, "oracle": oracle,
            "triplets": triplets, "model": model, "aligned": sc["aligned"],
            "point_error": sc["point_error"], "metrics": metrics, "estimate": est,
            "config_used": config_used, "error": "", "notice": "",
            "status": status,
            "version": self.version + 1,
        }


def _accuracy(M, Z, triplets) -> float:
    fn = getattr(M, "triplet_accuracy", None) or getattr(M, "triplet_accuracy_on")
    return fn(Z, triplets)


def _load_npy(content: bytes, filename: str) -> np.ndarray:
    import io

    from .._validation import check_points
    try:
        X = np.load(io.BytesIO(content), allow_pickle=False)
    except Exception as exc:
        raise ValueError(f"{filename}: not a numeric .npy array ({exc})") from None
    return check_points(X, name=filename, min_points=3)


def _json(v) -> str:
    import json
    return json.dumps(v)


# ====================================================================== compare
@dataclass
class CompareRecord:
    """One point of the error-versus-time curves."""

    method: str
    seconds: float
    procrustes: float
    triplet_error: float
    final: bool = False


class BackgroundRun:
    """Mixin for a param state that runs one job at a time on a daemon thread.

    The class provides ``running`` and ``message`` parameters; ``__init__``
    must call :meth:`_init_background`. The job polls ``self._cancel``.
    """

    _thread_name = "loe-viz-job"

    def _init_background(self) -> None:
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None

    def _start(self, job: Callable[[], None], background: bool) -> None:
        if background:
            self._thread = threading.Thread(target=job, name=self._thread_name, daemon=True)
            self._thread.start()
        else:
            job()

    def cancel(self) -> None:
        """Ask the running job to stop (after its current iteration)."""
        self._cancel.set()
        if self.running:
            self.message = "Cancelling…"

    def wait(self, timeout: float | None = None) -> None:
        """Wait for a background job to end."""
        if self._thread is not None:
            self._thread.join(timeout)


class CompareState(BackgroundRun, param.Parameterized):
    """LOE against the baselines on the same triplets, run in a background thread.

    Parameters
    ----------
    source : ExplorerState
        Supplies the points, the triplets and the configuration.
    """

    _thread_name = "loe-viz-compare"

    methods = param.ListSelector(default=["LOE", "STE", "LOESTE"], objects=list(BASELINE_METHODS), doc="""
        Methods to run, in order.""")
    max_seconds = param.Number(default=30.0, bounds=(1.0, 600.0), doc="""
        Time limit of each baseline (it is stopped and its last estimate kept).""")
    running = param.Boolean(default=False, precedence=-1)
    progress = param.Integer(default=0, bounds=(0, 100), precedence=-1)
    records = param.List(default=[], precedence=-1, doc="CompareRecord list, growing during a run.")
    message = param.String(default="", precedence=-1)
    version = param.Integer(default=0, precedence=-1)

    def __init__(self, source: ExplorerState, **params):
        super().__init__(**params)
        self.source = source
        self.dispatch: Callable[[Callable[[], None]], None] = source.dispatch
        self._init_background()

    def start(self, background: bool = True) -> None:
        """Start a comparison on the source's current triplets."""
        if self.running:
            return
        src = self.source
        if src is None:  # closed
            return
        if src.points is None or src.triplets is None:
            self.message = "Nothing to compare yet: wait for LOE to finish on the configuration."
            return
        self._cancel.clear()
        self.records = []
        self.progress = 0
        self.running = True
        self.message = "Starting…"
        cfg = dict(src.config_used)
        cfg["landmarks"] = np.asarray(src.model.landmarks_) if src.model is not None else None
        job = partial(self._run, src.points, src.triplets, cfg, list(self.methods), float(self.max_seconds))
        self._start(job, background)

    def close(self) -> None:
        """Cancel a running comparison (without touching the UI: its session may be gone)."""
        self._cancel.set()
        self.source = None

    # -------------------------------------------------------------- internals
    def _publish(self, **updates) -> None:
        def apply():
            self.param.update(**updates)
        src = self.source
        if src is None:  # closed: the session is gone
            return
        try:
            src.dispatch(apply)
        except Exception as exc:
            log.debug("could not publish comparison: %s", exc)

    def _run(self, X, triplets, cfg, methods, max_seconds) -> None:
        from .. import metrics as M

        records: list[CompareRecord] = []
        d, seed, n = cfg["d"], cfg["seed"], X.shape[0]
        D = X.shape[1]

        def scores(Z):
            Z = np.asarray(Z, dtype=np.float64)
            Zp = Z if Z.shape[1] == D else np.hstack([Z, np.zeros((n, D - Z.shape[1]))])
            return (float(M.procrustes_error(X, Zp)),
                    float(M.triplet_error(X, Z, n_test=4000, random_state=seed)))

        def push(rec, frac, msg):
            records.append(rec)
            self._publish(records=list(records), progress=int(round(100 * frac)), message=msg,
                          version=self.version + 1)

        try:
            for i, name in enumerate(methods):
                if self._cancel.is_set():
                    break
                base = i / len(methods)
                step = 1.0 / len(methods)
                self._publish(message=f"Running {name} ({i + 1}/{len(methods)})…",
                              progress=int(round(100 * base)))
                if name == "LOE":
                    from ..loe import LOE
                    t0 = time.perf_counter()
                    model = LOE(n_components=d, landmarks=cfg.get("landmarks"), offset=cfg.get("offset", "lambda2"),
                                random_state=seed)
                    model.fit(triplets, n_items=n)
                    sec = time.perf_counter() - t0
                    p, t = scores(model.embedding_)
                    push(CompareRecord("LOE", sec, p, t, final=True), base + step, f"LOE done in {_fmt_seconds(sec)}")
                    continue
                self._run_baseline(name, X, triplets, cfg, max_seconds, scores, push, base, step)
        except Exception as exc:
            log.debug("comparison failed", exc_info=True)
            self._publish(message=f"The comparison stopped: {type(exc).__name__}: {exc}")
            self._publish(running=False)
            return
        done = "Cancelled." if self._cancel.is_set() else "Done."
        self._publish(running=False, progress=100 if not self._cancel.is_set() else self.progress,
                      message=done)

    def _run_baseline(self, name, X, triplets, cfg, max_seconds, scores, push, base, step):
        """Fit one baseline (or LOE-STE), reporting its error as it goes."""
        from .. import CKL, GNMDS, LOESTE, SOE, STE, TSTE

        d, seed, n = cfg["d"], cfg["seed"], X.shape[0]
        t0 = time.perf_counter()
        last = {"t": -1.0}

        def callback(iteration, embedding):
            now = time.perf_counter() - t0
            if now - last["t"] >= 0.25:
                last["t"] = now
                p, t = scores(embedding)
                push(CompareRecord(name, now, p, t), base + step * min(now / max_seconds, 0.95), f"{name}…")
            return bool(self._cancel.is_set() or now > max_seconds)

        common = dict(n_components=d, random_state=seed, callback=callback, time_budget=max_seconds)
        if name == "LOESTE":
            # LOE-STE's LOE stage uses the landmarks and offset of the explorer's LOE.
            landmarks = cfg.get("landmarks")
            loe_params = {"offset": cfg.get("offset", "lambda2")}
            if landmarks is not None:
                loe_params["landmarks"] = landmarks
            model = LOESTE(n_landmarks=None if landmarks is not None else cfg.get("n_landmarks"),
                           loe_params=loe_params, **common)
        else:
            model = {"STE": STE, "TSTE": TSTE, "SOE": SOE, "GNMDS": GNMDS, "CKL": CKL}[name](**common)
        model.fit(triplets, n_items=n)
        sec = time.perf_counter() - t0
        p, t = scores(model.embedding_)
        push(CompareRecord(name, sec, p, t, final=True), base + step, f"{name} done in {_fmt_seconds(sec)}")


# ====================================================================== warm-up
_warm_lock = threading.Lock()
_warm_seconds: float | None = None


def warm_up() -> float:
    """Compile (or load from the on-disk cache) the numba kernels with a tiny fit.

    Safe to call from many threads and many times: the work happens once per
    process.  Returns the seconds the first call took.
    """
    global _warm_seconds
    with _warm_lock:
        if _warm_seconds is not None:
            return _warm_seconds
        t0 = time.perf_counter()
        try:
            s = ExplorerState(n=40, d=2, budget_unit="per_landmark", budget=200.0)
            s2 = ExplorerState(n=40, d=2, budget_unit="per_landmark", budget=200.0, landmark_selection="maxmin")
            s.close()
            s2.close()
        except Exception as exc:  # warm-up is best effort
            log.warning("warm-up failed: %s: %s", type(exc).__name__, exc)
        _warm_seconds = time.perf_counter() - t0
        return _warm_seconds
