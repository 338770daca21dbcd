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
        answered by the same oracle (the paper's protocol); "landmark": they get the very
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
        seed = cfg["seed"]

        def scores(Z):  # the walk-through's definition and test sample (one number per embedding)
            return scoring.scores(X, Z, seed)

        # the (m, 3) array of LOE's own triplets only where the baselines get them; the paper's
        # protocol needs their number alone
        baseline_triplets = None
        if any(m != "LOE" for m in methods):
            baseline_triplets = (uniform_like(X, cfg, len(recorded)) if cfg.get("protocol", "uniform") == "uniform"
                                 else recorded.array())

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
                self._run_baseline(name, X, baseline_triplets, cfg, max_seconds, scores, push, base, step, token)
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
        self._report(running=False, progress=100, message="Done.")

    def _run_baseline(self, name, X, triplets, cfg, max_seconds, scores, push, base, step, token):
        """Fit one baseline (or LOE-STE), reporting its error as it goes."""

        d, seed, n = cfg["d"], cfg["seed"], X.shape[0]
        t0 = time.perf_counter()
        last = {"t": -1.0}

        def callback(iteration, embedding):
            now = time.perf_counter() - t0
            if token.cancelled:
                return True
            if now - last["t"] >= 0.25:
                last["t"] = now
                p, t = scores(embedding)
                push(CompareRecord(name, now, p, t), base + step * min(now / max_seconds, 0.95),
                     f"{METHODS[name].label}…")
            return bool(now > max_seconds)

        common = dict(n_components=d, random_state=seed, callback=callback, time_budget=max_seconds)
        if name == "LOESTE" and cfg.get("protocol", "uniform") == "uniform":
            # LOE-STE: STE on the uniform triplets, started from the walk-through's LOE embedding
            # (which LOE fitted on its own landmark triplets)
            model = METHODS["STE"].estimator(**common)
            model.fit(triplets, n_items=n, init=np.array(cfg["loe_embedding"], dtype=np.float64), progress=token)
            token.check()
            sec = time.perf_counter() - t0
            p, t = scores(model.embedding_)
            push(CompareRecord(name, sec, p, t, final=True), base + step,
                 f"{METHODS[name].label} done in {format_seconds(sec)}")
            return
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
        sec = time.perf_counter() - t0
        p, t = scores(model.embedding_)
        push(CompareRecord(name, sec, p, t, final=True), base + step,
             f"{METHODS[name].label} done in {format_seconds(sec)}")


def _loe_seconds(X: np.ndarray, cfg: dict, token) -> float:
    """LOE's fit time measured again with the walk-through's settings, whose own fit compiled the kernels."""
    from ..loe import LOE
    from ..oracle import TripletOracle

    model = LOE(**cfg["loe_params"])
    model.fit_oracle(TripletOracle(X, temperature=cfg["temperature"], random_state=cfg["seed"]), cfg["per_landmark"],
                     progress=token)
    tl = model.stages_.timings
    return float(tl["total"] - tl.get("sampling", 0.0))


def uniform_like(X: np.ndarray, cfg: dict, m: int) -> np.ndarray:
    """``m`` uniformly random triplets answered like the walk-through's (same points, same noise T).

    Seeded from the configuration's seed (a stream of its own, not LOE's answers), so a
    comparison is reproducible.
    """
    from ..oracle import TripletOracle

    oracle = TripletOracle(X, temperature=float(cfg["temperature"]),
                           random_state=np.random.SeedSequence([int(cfg["seed"]), 7]))
    return oracle.uniform_triplets(int(m))
