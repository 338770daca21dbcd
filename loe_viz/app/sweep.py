"""Sweeps: LOE's error against one setting (budget c, noise T, landmarks l or items n), several seeds.

:class:`SweepState` runs one LOE fit per (value, seed) in the background, through the
explorer's one job mechanism (:class:`~loe_viz.app.jobs.JobRunner`), with progress and
cancellation, and keeps every result; :func:`summarize` gives the mean
and spread per value and :func:`loglog_slope` the fitted slope of error against the
setting on log-log axes (expected for the budget, if each ranking's error shrinks at the rate
of the paper's O(1/sqrt(m)) bound: -1 for the Procrustes error, -1/2 for the triplet error).
No Panel: the Lessons mode draws it, and scripts can use it::

    s = SweepState(variable="budget", values=[5, 10, 20, 40], seeds=3, n=500)
    s.start(background=False)
    summarize(s.points)
"""

from __future__ import annotations

import csv
import io
import logging
import math
import sys
import threading
import time
from dataclasses import asdict, dataclass
from functools import partial

import numpy as np
import param

from ..points import POINT_KINDS
from .jobs import Cancelled, JobRunner, RunsJobs, Token
from .scoring import scores

__all__ = ["SWEEP_VARIABLES", "METRICS", "THEORY_SLOPES", "SweepPoint", "SweepState", "run_point",
           "summarize", "loglog_slope"]

log = logging.getLogger(__name__)

#: What a sweep can vary: parameter -> label on the x axis.
SWEEP_VARIABLES = {
    "budget": "budget c (c·n·ln n comparisons)",
    "temperature": "noise temperature T",
    "n_landmarks": "landmarks ℓ",
    "n": "items n",
}

#: What is measured: field of :class:`SweepPoint` -> label.
METRICS = {
    "procrustes": "Procrustes error",
    "triplet_error": "triplet error",
    "seconds": "fit time (s)",
}

#: Slopes expected on log-log axes, for (variable, metric), if each ranking's error shrinks at the rate of the
#: paper's O(1/sqrt(m)) bound (our reading of the bound, not a result of the paper).
THEORY_SLOPES = {
    ("budget", "procrustes"): -1.0,
    ("budget", "triplet_error"): -0.5,
}

_clock = time.perf_counter  # what times a sweep's fits
_now = time.monotonic  # what spaces a sweep's updates of the page

# A sweep never runs more fits than this (values x seeds x repeats).
MAX_RUNS = 200
# A timed point never fits more often than this.
MAX_REPEATS = 30
# A timing sweep repeats a point's fits until they took this long (and at least `repeats` times).
TIMED_SECONDS = 0.25


@dataclass(frozen=True)
class SweepPoint:
    """One LOE fit of a sweep."""

    value: float
    seed: int
    procrustes: float
    triplet_error: float
    seconds: float
    n_triplets: int


def run_point(config: dict, variable: str, value, seed: int, token: Token | None = None,
              repeats: int = 1, min_seconds: float = 0.0) -> SweepPoint:
    """Fit LOE at ``config`` with ``config[variable] = value`` and the given seed.

    Parameters
    ----------
    config : dict
        ``kind, n, d, temperature, budget`` (c), ``n_landmarks`` (None: d + 3),
        ``landmark_selection``, ``refine`` (LOE's, default "auto").
    variable : str
        One of :data:`SWEEP_VARIABLES`.
    value : float
    seed : int
        Seed of the points, the answers and LOE (as in the walk-through).
    token : loe_viz.app.jobs.Token, optional
        Cancels the fit: LOE stops at its next progress call and
        :class:`~loe_viz.app.jobs.Cancelled` is raised.
    repeats : int, default 1
        The same fit (same points, answers and seed) is made this many times and the
        point keeps the shortest time: a fit of a few hundredths of a second takes
        several times longer when another thread holds the interpreter meanwhile.
        The errors are those of the first fit.
    min_seconds : float, default 0
        With ``repeats`` > 1, short fits are repeated further until their times add up
        to this (at most :data:`MAX_REPEATS` fits): the shortest of many quick fits.

    Returns
    -------
    SweepPoint
    """
    from ..loe import LOE
    from ..oracle import TripletOracle, total_budget
    from ..points import make_points

    cfg = dict(config)
    cfg[variable] = value
    n, d = int(cfg["n"]), int(cfg["d"])
    l = int(cfg.get("n_landmarks") or d + 3)
    X = make_points(cfg.get("kind", "gaussian"), n, d, random_state=seed)
    per_landmark = total_budget(n, float(cfg["budget"])) // l

    embedding, seconds, spent, fits = None, math.inf, 0.0, 0
    repeats = max(1, int(repeats))
    while fits < repeats or (repeats > 1 and spent < min_seconds and fits < MAX_REPEATS):
        # a fresh oracle each time: the same answers, so the same fit
        oracle = TripletOracle(X, temperature=float(cfg["temperature"]), random_state=seed)
        model = LOE(n_components=d, n_landmarks=l, landmark_selection=cfg.get("landmark_selection", "random"),
                    refine=cfg.get("refine", "auto"), random_state=seed)
        t0 = _clock()
        model.fit_oracle(oracle, per_landmark, progress=token)
        took = _clock() - t0
        seconds, spent, fits = min(seconds, took), spent + took, fits + 1
        if embedding is None:
            embedding = model.embedding_
    p, t = scores(X, embedding, seed)
    return SweepPoint(float(value), int(seed), p, t, seconds, int(l * per_landmark))


def summarize(points, metric: str = "procrustes") -> list[dict]:
    """Per value: ``value, mean, std, min, max, count`` of ``metric`` over the seeds, by value."""
    by: dict[float, list[float]] = {}
    for p in points:
        v = getattr(p, metric)
        if np.isfinite(v):
            by.setdefault(p.value, []).append(float(v))
    out = []
    for value in sorted(by):
        a = np.asarray(by[value])
        out.append(dict(value=value, mean=float(a.mean()), std=float(a.std(ddof=1)) if a.size > 1 else 0.0,
                        min=float(a.min()), max=float(a.max()), count=int(a.size)))
    return out


def loglog_slope(x, y) -> float:
    """Least-squares slope of ``log y`` against ``log x`` (NaN with fewer than two positive pairs)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    if np.unique(x[ok]).size < 2:
        return float("nan")
    return float(np.polyfit(np.log(x[ok]), np.log(y[ok]), 1)[0])


def _per_landmark(c: float, n: int, l: int) -> int:
    """Comparisons per landmark of budget ``c`` at ``n`` items and ``l`` landmarks (⌊c·n·ln n⌋ split over ``l``),
    at most the largest float: ``c = 1e308`` gave infinity, which no integer is."""
    return int(math.floor(min(c * n * math.log(n), sys.float_info.max))) // l


def _budget_problem(cfg: dict) -> str:
    """Why the budget of ``cfg`` is too small for LOE ('' when it is enough)."""
    from . import limits

    n, d = int(cfg["n"]), int(cfg["d"])
    l = int(cfg.get("n_landmarks") or d + 3)
    c = float(cfg["budget"])
    if n < 2 or c <= 0 or n > limits.MAX_N:  # more items than the explorer takes: _cost_problem says so
        return ""
    per_landmark = _per_landmark(c, n, l)
    if per_landmark < n // 2:
        c_min = (n // 2) * l / (n * math.log(n))
        return (f"budget c = {c:g} gives {per_landmark:,} comparisons per landmark at n = {n:,}, ℓ = {l}; "
                f"LOE needs at least n/2 = {n // 2:,}, i.e. c ≥ {math.ceil(c_min * 100) / 100:g}.")
    return ""


def _cost_problem(cfg: dict, variable: str, value) -> str:
    """Why one fit of the sweep at ``variable = value`` is above the explorer's limits ('' when it is not).

    The walk-through prices every run before anything is allocated (:mod:`loe_viz.app.limits`);
    a sweep's values are typed in the page too, so each is priced the same way: ``n = 2e7``
    would otherwise have drawn 320 MB of points before LOE's own check (80 % of the machine's
    memory, not the explorer's limit per run) refused it with a library's advice.
    """
    from .._format import format_bytes
    from . import limits

    cfg = {**cfg, variable: value}
    n, d = int(cfg["n"]), int(cfg["d"])
    l = int(cfg.get("n_landmarks") or d + 3)
    what = f"{SWEEP_VARIABLES[variable].split(' (')[0]} = {value:g}"
    try:
        limits.check_size(n, d)
    except ValueError as exc:
        return f"{what}: {exc}."
    if not float(cfg["budget"]) * n * math.log(n) < 10**18:  # nor does the library's memory model count beyond
        return f"{what}: one fit asks for more than 10¹⁸ comparisons, beyond what this explorer allows per run; " \
               "use smaller values."
    per_landmark = _per_landmark(float(cfg["budget"]), n, l)
    est = limits.estimate_run(n, d, d, l, per_landmark,
                              landmark_selection=cfg.get("landmark_selection", "random"))
    if est.n_comparisons >= 10**18 or est.bytes > limits.MAX_BYTES:
        return (f"{what}: one fit needs about {format_bytes(est.bytes)}, more than the "
                f"{format_bytes(limits.MAX_BYTES)} this explorer allows per run; use smaller values.")
    return ""


class SweepState(RunsJobs, param.Parameterized):
    """Error against one setting over several seeds, computed in the background.

    Parameters
    ----------
    **params
        Values of the parameters below.  ``dispatch`` (a property) runs a callable
        where results may be published; the Panel view sets it to the session's.
    """

    variable = param.Selector(default="budget", objects=list(SWEEP_VARIABLES), doc="The setting varied.")
    values = param.List(default=[5.0, 10.0, 20.0, 40.0, 80.0], item_type=(int, float), doc="""
        Values of `variable`, one group of fits each.""")
    seeds = param.Integer(default=3, bounds=(1, 10), doc="Seeds per value (0, 1, ...).")
    kind = param.Selector(default="gaussian", objects=list(POINT_KINDS), doc="Ground truth.")
    n = param.Integer(default=500, bounds=(20, 20_000), doc="Items (when not swept).")
    d = param.Integer(default=2, bounds=(1, 10), doc="Dimension.")
    temperature = param.Number(default=1.0, bounds=(0.0, None), doc="Noise T (when not swept).")
    budget = param.Number(default=20.0, bounds=(0.0, None), inclusive_bounds=(False, True), doc="""
        Budget c of c·n·ln n comparisons (when not swept).""")
    n_landmarks = param.Integer(default=None, allow_None=True, bounds=(4, 200), doc="Landmarks (None: d + 3).")
    landmark_selection = param.Selector(default="random", objects=["random", "maxmin"])
    repeats = param.Integer(default=1, bounds=(1, 10), doc="""
        Fits per (value, seed); a point keeps the shortest time.  More than one makes a
        timing sweep: quick fits are repeated further, until they took a quarter of a
        second (the shortest of many is what a fit costs when nothing else runs); before
        its first point it waits for the server's warm-up and fits once untimed (the first
        call loads the compiled kernels), and before each point it waits until the page has
        drawn the previous one and ``wait_while()`` is false, so that no other work of the
        page shares the interpreter with the timed fits.""")

    running = param.Boolean(default=False, precedence=-1)
    progress = param.Integer(default=0, bounds=(0, 100), precedence=-1)
    message = param.String(default="", precedence=-1)
    points = param.List(default=[], precedence=-1, doc="SweepPoint list, growing during a run.")
    version = param.Integer(default=0, precedence=-1, doc="Incremented when `points` change.")

    #: Seconds a timing sweep waits at most, before a point, for the page to draw and for ``wait_while()``.
    SETTLE_SECONDS = 30.0
    #: Seconds at least between the page's drawing of the points and the next points published (the last
    #: ones always are): a redraw of the figures takes about a second of the server's event loop, which every
    #: page of the server shares, and new points after every fit (15 in the budget lesson) held it for 10 s,
    #: a Cancel click waiting behind them until the sweep had ended.
    POINTS_SECONDS = 1.0
    #: Seconds at least between two messages of a sweep's progress (a timing sweep says each point).
    STATUS_SECONDS = 0.25

    def __init__(self, **params):
        self._jobs = JobRunner("loe-viz-sweep")
        super().__init__(**params)
        #: ``wait_while()`` true: other work of the page runs (the lessons pass the walk-through's
        #: ``busy``), and a timing sweep waits before its next point.
        self.wait_while = None

    @property
    def config(self) -> dict:
        """The fixed settings of the sweep, as :func:`run_point` takes them."""
        return dict(kind=self.kind, n=self.n, d=self.d, temperature=self.temperature, budget=self.budget,
                    n_landmarks=self.n_landmarks, landmark_selection=self.landmark_selection)

    def check(self) -> str:
        """Why the sweep cannot run as configured ('' when it can)."""
        if not self.values:
            return "Give at least one value to sweep."
        if len(self.values) * self.seeds * self.repeats > MAX_RUNS:
            return (f"{len(self.values)} values × {self.seeds} seeds"
                    + (f" × {self.repeats} repeats" if self.repeats > 1 else "")
                    + f" is more than the {MAX_RUNS} fits a sweep may run.")
        l = self.n_landmarks or self.d + 3
        for v in self.values:
            if not math.isfinite(v):
                return f"{SWEEP_VARIABLES[self.variable]}: {v} is not a number."
            if self.variable in ("budget", "n") and v <= 0:
                return f"{SWEEP_VARIABLES[self.variable]} must be positive, got {v:g}."
            if self.variable == "temperature" and v < 0:
                return f"noise T must be at least 0, got {v:g}."
            if self.variable == "n_landmarks" and not (self.d + 3 <= v < self.n - 1):
                return f"landmarks ℓ must be between d + 3 = {self.d + 3} and n − 2 = {self.n - 2}, got {v:g}."
            if self.variable == "n" and v < l + 2:
                return f"items n must be at least ℓ + 2 = {l + 2}, got {v:g}."
            why = _budget_problem({**self.config, self.variable: v}) or _cost_problem(self.config, self.variable, v)
            if why:
                return why
        return ""

    def configure(self, variable: str, values_text: str, seeds, n) -> bool:
        """Take the form's entries: ``values_text`` as typed ("5, 10; 20"), ``seeds`` and ``n`` as the page's
        boxes send them (an int, a float, or None for an empty box). False, with :attr:`message` saying what
        is wrong and that the sweep did not start, when one of them cannot be taken (nothing is changed)."""
        from .link import quote_link_value

        try:
            values = [float(v) for v in values_text.replace(";", ",").split(",") if v.strip()]
        except ValueError:
            self.message = f"Values must be numbers separated by commas, got {quote_link_value(values_text)}."
            return False
        if any(not math.isfinite(v) for v in values):
            self.message = "Values must be finite numbers."
            return False
        counts = {}
        # the boxes have no bounds of their own: the browser set a bounded box back to its last value without
        # a word (100 seeds ran 3), so a value out of range is refused here, with the range
        for name, label, v in (("seeds", "Seeds", seeds), ("n", "Items n", n)):
            lo, hi = self.param[name].bounds
            if v is None or not (math.isfinite(v) and v == int(v) and lo <= v <= hi):
                whole = v is not None and math.isfinite(v) and v == int(v) and abs(v) < 1e15
                got = "the box is empty" if v is None else f"got {int(v):,}" if whole else f"got {v:g}"
                self.message = f"{label} must be a whole number from {lo:,} to {hi:,}; {got}. The sweep did not start."
                return False
            counts[name] = int(v)
        try:
            self.param.update(variable=variable, values=values, **counts)
        except ValueError as exc:
            self.message = f"Not a valid sweep: {exc}"
            return False
        return True

    def start(self, background: bool = True) -> bool:
        """Start the sweep (False, with :attr:`message` saying why, when it cannot run)."""
        if self._jobs.busy or self._jobs.closed:
            return False
        why = self.check()
        if why:
            self.message = why
            return False
        values = sorted(float(v) for v in self.values)
        if self.variable in ("n", "n_landmarks"):
            values = [int(v) for v in values]
        self.param.update(running=True, progress=0, points=[], message="Starting…", version=self.version + 1)
        self._jobs.submit(partial(self._run, self.config, self.variable, values, int(self.seeds),
                                  int(self.repeats)), background=background)
        return True

    def cancel(self) -> None:
        """Stop the sweep: the fit in progress stops at its next landmark, no other starts."""
        if self._jobs.busy:
            self._jobs.cancel()
            self.message = "Cancelling…"

    def close(self) -> None:
        """Cancel and drop the results without touching the UI (its session may be gone)."""
        self._jobs.close()

    def slope(self, metric: str = "procrustes") -> float:
        """Fitted log-log slope of ``metric`` against the swept setting (all seeds)."""
        return loglog_slope([p.value for p in self.points], [getattr(p, metric) for p in self.points])

    # ------------------------------------------------------------------ internals
    def _publish(self, token: Token, then=None, **updates) -> None:
        """Apply ``updates`` on the UI thread, unless a newer sweep has started since; then publish ``then``,
        which runs after what the update scheduled in turn (the view draws one figure per turn)."""
        def apply():
            if token.superseded:
                return
            if "points" in updates:  # counted here, on the UI thread, so no update is lost
                updates["version"] = self.version + 1
            self.param.update(**updates)
            if then is not None:
                self._jobs.publish(then)
        self._jobs.publish(apply)

    def _settle(self, token: Token) -> None:
        """Wait (at most :attr:`SETTLE_SECONDS`) until ``wait_while()`` is false and the UI has applied
        everything published before: a timed fit that shares the interpreter with a redraw
        measured 0.08 to 0.3 s instead of 0.03 s."""
        deadline = time.monotonic() + self.SETTLE_SECONDS
        while self.wait_while is not None and self.wait_while() and time.monotonic() < deadline:
            token.check()
            time.sleep(0.05)
        drawn = threading.Event()
        # runs after the updates dispatched before it and after what they scheduled (the view's next figure)
        self._jobs.publish(partial(self._jobs.publish, drawn.set))
        while not drawn.wait(0.05) and time.monotonic() < deadline:
            token.check()

    def _run(self, config, variable, values, seeds, repeats, token: Token) -> None:
        from .warmup import wait_warm_up

        total = len(values) * seeds
        done: list[SweepPoint] = []
        timing = repeats > 1
        published = 0  # points published so far
        said = -math.inf  # when the last message was published
        # the points are published once the page has drawn the previous ones and POINTS_SECONDS have passed
        # since (the first ones POINTS_SECONDS after the start, while the page may still be arriving), so
        # that the event loop is free in between: for other pages, and for a Cancel click
        drawn = threading.Event()
        drawn.set()
        drawn_at = _now()

        def on_drawn():
            nonlocal drawn_at
            drawn_at = _now()
            drawn.set()

        def rest() -> dict:  # the points not published yet, to go with the last message
            return dict(points=list(done)) if len(done) > published else {}

        try:
            if timing:
                self._publish(token, message="Preparing: one untimed fit first…")
                wait_warm_up(token.check)
                self._settle(token)
                run_point(config, variable, values[0], 0, token=token)
            for value in values:
                for seed in range(seeds):
                    token.check()
                    if timing or _now() - said >= self.STATUS_SECONDS:
                        said = _now()
                        self._publish(token, progress=int(round(100 * len(done) / total)),
                                      message=f"{SWEEP_VARIABLES[variable]} = {value:g}, seed {seed} "
                                              f"({len(done) + 1} of {total})…")
                    if timing:
                        self._settle(token)
                    done.append(run_point(config, variable, value, seed, token=token, repeats=repeats,
                                          min_seconds=TIMED_SECONDS if timing else 0.0))
                    if timing:  # one redraw per value, and each timed fit waits for the page (_settle)
                        due = seed == seeds - 1
                    else:
                        due = len(done) < total and drawn.is_set() and \
                            _now() - drawn_at >= self.POINTS_SECONDS
                    if due:
                        published = len(done)
                        drawn.clear()
                        self._publish(token, then=on_drawn, points=list(done),
                                      progress=int(round(100 * len(done) / total)))
        except Cancelled:
            self._publish(token, running=False, message=f"Cancelled after {len(done)} of {total} fits.", **rest())
            return
        except Exception as exc:
            log.warning("sweep failed", exc_info=True)
            self._publish(token, running=False, message=f"The sweep stopped: {exc}", **rest())
            return
        self._publish(token, running=False, progress=100, **rest(),
                      message=f"Done: {total} fits." if not timing else
                      f"Done: {total} fits, each timed at least {repeats} times (the shortest kept).")

    def records(self) -> list[dict]:
        """The points as dicts (for a table or a CSV)."""
        return [asdict(p) for p in self.points]

    def to_csv(self) -> str:
        """The points as CSV: a header, then one row per fit, the value under the setting varied, then the error,
        the time and the comparisons, then the sweep's fixed settings (a file that says what it holds)."""
        fixed = {k: ("" if v is None else v) for k, v in self.config.items() if k != self.variable}
        buf = io.StringIO()
        out = csv.writer(buf, lineterminator="\n")
        out.writerow([self.variable, "seed", "procrustes", "triplet_error", "seconds", "n_triplets", *fixed])
        for p in self.points:
            value = int(p.value) if float(p.value).is_integer() else repr(float(p.value))  # every digit
            out.writerow([value, p.seed, repr(p.procrustes), repr(p.triplet_error), repr(p.seconds),
                          p.n_triplets, *fixed.values()])
        return buf.getvalue()

    def file_name(self) -> str:
        """The name of :meth:`to_csv`'s file: the setting varied, the points and their number when not varied."""
        return f"loe_sweep_{self.variable}_{self.kind}" + ("" if self.variable == "n" else f"_n{self.n}") + ".csv"
