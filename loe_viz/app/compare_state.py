"""State of the Compare step: LOE against the baselines on the walk-through's triplets.

:class:`CompareState` runs the chosen methods one after the other through a
:class:`~loe_viz.app.jobs.JobRunner` and grows a list of
:class:`CompareRecord` (error against time) while they run.  No Panel import.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from functools import partial

import numpy as np
import param

from .._format import format_seconds
from ..loeste import LOESTE
from ..methods import METHODS
from .jobs import Cancelled, JobRunner, RunsJobs, log_failure

__all__ = ["BASELINE_METHODS", "COMPARE_PROTOCOLS", "CompareRecord", "CompareState"]

log = logging.getLogger(__name__)

#: Methods of the Compare step: names of estimators exported by :mod:`loe_viz`.
BASELINE_METHODS = tuple(METHODS)

#: Which triplets the baselines get: label -> value of ``CompareState.protocol``.
COMPARE_PROTOCOLS = {
    "as many uniformly random triplets (the paper's protocol)": "uniform",
    "the same triplets LOE used": "landmark",
}


_OUT_OF_DATE = "The configuration changed since this comparison: press “Run comparison” to compare on the new one."


@dataclass
class CompareRecord:
    """One point of the error-versus-time curves."""

    method: str
    seconds: float
    procrustes: float
    triplet_error: float
    final: bool = False


class CompareState(RunsJobs, param.Parameterized):
    """LOE against the baselines on the same triplets, run in the background.

    Parameters
    ----------
    source : ExplorerState
        Supplies the points, the triplets and the configuration (and the
        ``dispatch`` through which results reach the UI).
    """

    methods = param.ListSelector(default=["LOE", "STE", "LOESTE"], objects=list(BASELINE_METHODS), doc="""
        Methods to run, in order.""")
    protocol = param.Selector(default="uniform", objects=COMPARE_PROTOCOLS, doc="""
        "uniform": the baselines get as many comparisons as LOE, as uniformly random triplets
        answered by the same oracle (the paper's protocol; LOE-STE splits them as the paper did at d = 2,
        30 % on LOE's landmarks and the rest for STE); "landmark": they get the very
        triplets LOE used, all headed by its few landmarks, from which every baseline ends
        less accurate than from uniform triplets (STE from LOE's embedding, LOE-STE, still
        improves on LOE).""")
    max_seconds = param.Number(default=30.0, bounds=(1.0, 600.0), doc="""
        Time limit of each baseline (it is stopped and its last estimate kept).""")
    running = param.Boolean(default=False, precedence=-1)
    progress = param.Integer(default=0, bounds=(0, 100), precedence=-1)
    records = param.List(default=[], precedence=-1, doc="CompareRecord list, growing during a run.")
    message = param.String(default="", precedence=-1)
    version = param.Integer(default=0, precedence=-1)

    _bumps_version = "records"

    def set_max_seconds(self, value) -> bool:
        """Take a time limit typed in a box, or say in :attr:`message` why not (a bounded box snapped it back
        to 30 without a word); True if taken."""
        lo, hi = self.param.max_seconds.bounds
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not (number and np.isfinite(value) and lo <= value <= hi):
            got = ("the box was empty" if value is None else f"got {value:g}" if number else f"got {value!r:.40}")
            self.message = (f"Time limit per method must be from {lo:g} to {hi:g} s ({got}); it stays "
                            f"{self.max_seconds:g} s.")
            return False
        self.max_seconds = float(value)
        if self.message.startswith("Time limit per method"):
            self.message = ""
        return True

    def __init__(self, source, **params):
        super().__init__(**params)
        self.source = source
        self._jobs = JobRunner("loe-viz-compare")
        self._compared = None  # the walk-through's fit the records compare against
        if isinstance(source, param.Parameterized) and "model" in source.param:
            source.param.watch(self._on_new_fit, "model")

    def _on_new_fit(self, event) -> None:
        """The walk-through fitted another configuration: the records (and a run on the old one) are out of date."""
        if self._compared is None or event.new is self._compared:
            return
        self._compared = None
        self.cancel()
        self.param.update(records=[], progress=0, message=_OUT_OF_DATE)

    def start(self, background: bool = True) -> None:
        """Start a comparison on the source's current triplets."""
        if self.running or self._jobs.closed:
            return
        src = self.source
        if src is None:  # closed
            return
        if src.points is None or src.model is None or src.recorded is None:
            self.message = "Nothing to compare yet: wait for LOE to finish on the configuration."
            return
        self._jobs.dispatch = src.dispatch
        self._compared = src.model
        self.records = []
        self.progress = 0
        self.running = True
        self.message = "Starting…"
        cfg = dict(src.config_used)
        cfg["landmarks"] = np.asarray(src.model.landmarks_)
        cfg["protocol"] = self.protocol
        cfg["loe_embedding"] = np.asarray(src.model.embedding_)
        tl = src.model.stages_.timings  # the walk-through's fit on its comparisons, their drawing left out
        cfg["loe_seconds"] = float(tl["total"] - tl.get("sampling", 0.0))
        cfg["loe_params"] = src.model.get_params()
        job = partial(self._run, src.points, src.recorded, cfg, list(self.methods), float(self.max_seconds))
        self._jobs.submit(job, background=background)

    def close(self) -> None:
        """Cancel a running comparison and drop the data (without touching the UI: its session may be gone)."""
        self._jobs.close()
        self.source = None
        with param.parameterized.discard_events(self):  # the views' watchers would redraw on a closed page
            self.records = []

    # -------------------------------------------------------------- internals
    def _run(self, X, recorded, cfg, methods, max_seconds, token) -> None:
        from . import scoring
        from .warmup import wait_warm_up, warming_up

        records: list[CompareRecord] = []
        notes: list[str] = []  # what the final message adds
        seed = cfg["seed"]

        def scores(Z):  # the walk-through's definition and test sample (one number per embedding)
            return scoring.scores(X, Z, seed)

        # the (m, 3) array of LOE's own triplets only where the baselines get them; the paper's
        # protocol needs their number alone (and LOE-STE draws its own share of it)
        uniform = cfg.get("protocol", "uniform") == "uniform"
        baseline_triplets = None
        if any(m != "LOE" and not (m == "LOESTE" and uniform) for m in methods):
            baseline_triplets = uniform_like(X, cfg, len(recorded)) if uniform else recorded.array()

        def push(rec, frac, msg):
            records.append(rec)
            self._report(records=list(records), progress=int(round(100 * frac)), message=msg)

        try:
            if warming_up():  # the server's first minute: the kernels still compile
                self._report(message="Preparing the compiled kernels (the server has just started)…",
                              progress=0)
                wait_warm_up(token.check)
            for i, name in enumerate(methods):
                token.check()
                base = i / len(methods)
                step = 1.0 / len(methods)
                again = name == "LOE" and not cfg.get("kernels_ready", True)
                self._report(message="Timing LOE again (its fit in the walk-through also compiled the kernels)…"
                             if again else f"Running {METHODS[name].label} ({i + 1}/{len(methods)})…",
                             progress=int(round(100 * base)))
                if name == "LOE":
                    # the walk-through's own embedding, so the status line and this table show one
                    # triplet error (a refit on the stored triplets starts elsewhere and stops a
                    # fraction of a standard error away)
                    sec = _loe_seconds(X, cfg, token) if again else cfg["loe_seconds"]
                    p, t = scores(cfg["loe_embedding"])
                    push(CompareRecord("LOE", sec, p, t, final=True), base + step,
                         f"LOE done in {format_seconds(sec)}")
                    continue
                if name == "LOESTE" and uniform:
                    notes.append(self._run_loeste(X, len(recorded), cfg, max_seconds, scores, push, base, step,
                                                  token))
                    continue
                notes.append(self._run_baseline(name, X, baseline_triplets, cfg, max_seconds, scores, push, base,
                                                step, token))
            token.check()
        except Cancelled:
            if self._compared is None:  # a new fit in the walk-through cancelled the run: its records are gone too
                self._report(running=False, records=[], progress=0, message=_OUT_OF_DATE)
            else:
                self._report(running=False, message="Cancelled.")
            return
        except Exception as exc:
            log_failure(log, "comparison", exc)
            self._report(running=False, message=f"The comparison stopped: {type(exc).__name__}: {exc}")
            return
        self._report(running=False, progress=100, message=" ".join(["Done."] + [x for x in notes if x]))

    def _live(self, name, clock, max_seconds, scores, push, base, step, token):
        """The ``callback`` of a fit: a record every quarter second of ``clock``, stop on cancel or time limit."""
        last = {"t": -1.0}

        def callback(iteration, embedding):
            now = clock()
            if token.cancelled:
                return True
            if now - last["t"] >= 0.25:
                last["t"] = now
                p, t = scores(embedding)
                push(CompareRecord(name, now, p, t), base + step * min(now / max_seconds, 0.95),
                     f"{METHODS[name].label}…")
            return bool(now > max_seconds)

        return callback

    @staticmethod
    def _done(name, model, sec, scores, push, base, step, note=""):
        p, t = scores(model.embedding_)
        push(CompareRecord(name, sec, p, t, final=True), base + step,
             f"{METHODS[name].label} done in {format_seconds(sec)}" + (f". {note}" if note else ""))

    def _run_baseline(self, name, X, triplets, cfg, max_seconds, scores, push, base, step, token):
        """Fit one baseline on the given triplets (LOE-STE: on LOE's own triplets), reporting its error as it goes."""

        d, seed, n = cfg["d"], cfg["seed"], X.shape[0]
        clock = _Stopwatch()
        callback = self._live(name, clock, max_seconds, scores, push, base, step, token)
        common = dict(n_components=d, random_state=seed, callback=callback, time_budget=max_seconds)
        if name == "LOESTE":
            # LOE-STE's LOE stage uses the landmarks and offset of the explorer's LOE.
            loe_params = {"offset": cfg.get("offset", "lambda2"), "landmarks": cfg["landmarks"]}
            model = METHODS["LOESTE"].estimator(n_landmarks=None, loe_params=loe_params, **common)
        else:
            model = METHODS[name].estimator(**common)
        # progress raises Cancelled within a pass over many triplets (the callback only hears a cancel
        # between iterations, and one iteration of the largest run is several seconds)
        model.fit(triplets, n_items=n, progress=token)
        token.check()  # a cancelled baseline returns its last iterate: not a result
        note = _time_limit_note(name, model, max_seconds)
        self._done(name, model, clock(), scores, push, base, step, note)
        return note

    def _run_loeste(self, X, m, cfg, max_seconds, scores, push, base, step, token):
        """LOE-STE under the paper's protocol: the same ``m`` answers as the others, split as the paper does.

        ``eps`` of them are LOE's comparisons on the explorer's landmarks (with its offset), the rest uniformly
        random triplets for STE, all answered like the others' (same points, same noise T). Its time is LOE's
        fit plus STE's, without drawing the answers, as the other methods are timed.
        """
        name, n, l = "LOESTE", X.shape[0], len(cfg["landmarks"])
        eps, note = _loeste_eps(m, n, l)
        if eps is None:  # the budget at its least: LOE's n/2 comparisons per landmark are all of it
            self._report(message=note)
            return note
        clock = _Stopwatch()
        callback = self._live(name, clock, max_seconds, scores, push, base, step, token)
        model = _ComparedLOESTE(
            cfg["d"], eps=eps, random_state=cfg["seed"], callback=callback, time_budget=max_seconds,
            loe_params={"offset": cfg.get("offset", "lambda2"), "landmarks": cfg["landmarks"]})
        model.stopwatch = clock
        model.fit_oracle(_oracle_like(X, cfg, 8), m, progress=token)
        token.check()  # a cancelled run returns its last iterate: not a result
        limit = _time_limit_note(name, model, max_seconds)
        note = " ".join(x for x in (note, limit) if x)
        self._done(name, model, _fit_seconds(model.loe_) + model.timings_["ste"], scores, push, base, step, note)
        return note


def _time_limit_note(name, model, max_seconds) -> str:
    """What a fit stopped by the time limit says: its error is that of an unfinished fit."""
    if model.stop_reason_ not in ("time_budget", "callback"):  # the callback stops a fit only at the limit here
        return ""
    return (f"{METHODS[name].label} stopped at the {max_seconds:g} s time limit before it converged: its error is "
            "that of an unfinished fit.")


class _Stopwatch:
    """Seconds of fitting: ``elapsed`` at the last :meth:`restart`, plus the time since."""

    def __init__(self):
        self.restart(0.0)

    def restart(self, elapsed: float) -> None:
        self._elapsed, self._t = float(elapsed), time.perf_counter()

    def __call__(self) -> float:
        return self._elapsed + time.perf_counter() - self._t


class _ComparedLOESTE(LOESTE):
    """LOESTE whose ``stopwatch`` leaves out drawing the answers, as the Compare step times the other methods.

    When LOE has finished (before the callback hears of it) the stopwatch restarts at LOE's fitting time
    without its sampling, and again when STE's uniform triplets have been drawn.
    """

    stopwatch = None

    def _stop_after_loe(self, loe, budget, t_start):
        if self.stopwatch is not None:
            self.stopwatch.restart(_fit_seconds(loe))
        return super()._stop_after_loe(loe, budget, t_start)

    def _run_ste(self, ste, loe, *args, **kwargs):
        if self.stopwatch is not None:
            self.stopwatch.restart(_fit_seconds(loe))
        return super()._run_ste(ste, loe, *args, **kwargs)


def _fit_seconds(loe) -> float:
    """A fitted LOE's time without drawing its comparisons (as the walk-through's LOE is timed)."""
    tl = loe.stages_.timings
    return float(tl["total"] - tl.get("sampling", 0.0))


#: LOE-STE's share of the answers for its LOE stage under the paper's protocol: LOESTE's own default.
LOESTE_EPS = float(LOESTE().eps)


def _loeste_eps(m: int, n: int, l: int) -> tuple[float | None, str]:
    """LOE-STE's share of ``m`` answers for its ``l`` landmarks: LOESTE's ``eps``, or more where that leaves a
    landmark fewer than the n/2 comparisons LOE needs (and a note that says so); None where nothing is left for
    STE then."""
    eps = LOESTE_EPS
    need = l * max(n // 2, 1)
    if int(eps * m) // l * l >= need:
        return eps, ""
    if m - need < 1:
        return None, (f"LOE-STE was not run: its LOE stage needs n/2 = {n // 2:,} comparisons for each of the "
                      f"{l} landmarks, all of the {m:,}, and none would be left for STE (a larger budget leaves some).")
    more = (need + 0.5) / m  # int(more * m) // l is then n // 2
    return more, (f"LOE-STE's LOE stage needs n/2 = {n // 2:,} comparisons per landmark: it got {100 * more:.0f} % "
                  f"of the {m:,}, not {100 * eps:.0f} %.")


def _loe_seconds(X: np.ndarray, cfg: dict, token) -> float:
    """LOE's fit time measured again with the walk-through's settings, whose own fit compiled the kernels."""
    from ..loe import LOE
    from ..oracle import TripletOracle

    model = LOE(**cfg["loe_params"])
    model.fit_oracle(TripletOracle(X, temperature=cfg["temperature"], random_state=cfg["seed"]), cfg["per_landmark"],
                     progress=token)
    return _fit_seconds(model)


def uniform_like(X: np.ndarray, cfg: dict, m: int) -> np.ndarray:
    """``m`` uniformly random triplets answered like the walk-through's (same points, same noise T).

    Seeded from the configuration's seed (a stream of its own, not LOE's answers), so a
    comparison is reproducible.
    """
    return _oracle_like(X, cfg, 7).uniform_triplets(int(m))


def _oracle_like(X: np.ndarray, cfg: dict, stream: int):
    """An oracle that answers like the walk-through's (same points, same noise T) from a stream of its own."""
    from ..oracle import TripletOracle

    return TripletOracle(X, temperature=float(cfg["temperature"]),
                         random_state=np.random.SeedSequence([int(cfg["seed"]), stream]))
