"""State of the LOE walk-through: configuration in, results out, no Panel.

:class:`ExplorerState` holds the configuration of one session (the points, the
noise, the comparison budget, the landmarks) as parameters, and the results
derived from it (points, triplets, the fitted :class:`loe_viz.loe.LOE` with its
``stages_``, the metrics).  The computation itself is
:func:`loe_viz.app.pipeline.run_pipeline`; bad input never raises out of the
state: it sets :attr:`ExplorerState.error` and keeps the previous results.

Threads: with ``ExplorerState(background=True)`` the pipeline runs through a
:class:`~loe_viz.app.jobs.JobRunner` (latest wins: a new configuration cancels
the run of the previous one) and results are handed to
:attr:`ExplorerState.dispatch`, a callable that runs a function where the UI
may be touched (the Panel explorer passes one from
:mod:`loe_viz.app.session`).  With the default ``background=False`` everything
runs synchronously, which is what the tests and scripts use.

Related modules: :mod:`loe_viz.app.compare_state` (the Compare step),
:mod:`loe_viz.app.limits` (what a run may cost), :mod:`loe_viz.app.truth`
(ground-truth quantities the steps draw).
"""

from __future__ import annotations

import json
import logging
from functools import partial

import param

from ..points import POINT_KINDS
from .jobs import Cancelled, JobRunner, RunsJobs, Token, log_failure
from .link import quote_link_value, refused_link_settings
from .uploads import ReadsUploads, read_point_table, upload_name
from .pipeline import budget_range, convert_budget, Cache, Config, read_points_upload, run_pipeline

__all__ = [
    "STEPS",
    "BUDGET_UNITS",
    "OFFSET_RULES",
    "URL_PARAMS",
    "CONFIG_PARAMS",
    "ExplorerState",
]

log = logging.getLogger(__name__)

#: The steps of the explorer, in order (``ExplorerState.step`` indexes this).
STEPS = ("Configure", "Sample", "Ranking", "Shifts", "EDM", "Embedding", "Compare")

#: Budget units: label shown to people -> value stored (and put in the URL).
BUDGET_UNITS = {
    "c in c·n·ln n comparisons in total": "total_c",
    "comparisons per landmark": "per_landmark",
}

#: Offset rules of the shifts stage: label -> value of ``LOE(offset=...)``.  The labels fit the
#: sidebar's box at 15 px ("second-largest" ran under the box's arrow).
OFFSET_RULES = {
    "λ₂, 2nd-largest eigenvalue (paper)": "lambda2",
    "mean of λ₂ … λ_(ℓ−d−1) (variant)": "mean",
}

#: Configuration parameters that are put in (and read from) the URL.
URL_PARAMS = (
    "kind", "n", "d", "seed", "temperature", "budget_unit", "budget",
    "n_landmarks", "landmark_selection", "offset", "paper_only", "step",
)

#: Parameters whose change requires a new run of the pipeline.
CONFIG_PARAMS = tuple(p for p in URL_PARAMS if p != "step")



#: A point this many times farther from the centre than the median point sets the scale of every distance alone.
FAR_POINT_RATIO = 1e6


def far_point_note(X) -> str:
    """What to say of points whose one far outlier sets the scale of every distance ('' when none does).

    A point at 1e200 among points near 1: every other distance is noise at its scale, and the walk-through showed a
    Procrustes error of 0.9999 and coin-flip answers with nothing saying why.
    """
    import numpy as np

    r = np.abs(X - np.median(X, axis=0)).max(axis=1)  # the largest coordinate's distance: no square to overflow
    med, i = float(np.median(r)), int(np.argmax(r))
    if not med > 0 or not r[i] > FAR_POINT_RATIO * med:
        return ""
    return (f"item {i} lies {r[i] / med:.0e} times farther from the centre than the median item: its distances set "
            "the scale of all the others, which then look like one point, and the answers about them are noise; "
            "remove it or rescale")

class ExplorerState(RunsJobs, ReadsUploads, param.Parameterized):
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
    paper_only = param.Boolean(default=False, doc="""
        Run the paper's algorithm only (LOE's refine=None, landmark_share=0): no ordinal polish
        after landmark MDS, so the rank-like distortion of noiseless answers (T = 0) shows, and
        every landmark's pairs uniform, none of them spent on pairs of other landmarks.""")
    step = param.Integer(default=0, bounds=(0, len(STEPS) - 1), doc="""
        Index of the step shown (into STEPS).""")

    # ---- derived results (replaced together; `version` counts them) ---------------
    points = param.Array(default=None, precedence=-1, doc="Ground truth X, shape (n, D).")
    colors = param.Parameter(default=None, precedence=-1, doc="Hex colour of each point.")
    hue_lightness = param.Array(default=None, precedence=-1, doc="Hue and lightness of each point.")
    oracle = param.Parameter(default=None, precedence=-1, doc="The TripletOracle that answered.")
    recorded = param.Parameter(default=None, precedence=-1, doc="""
        The triplets LOE used (loe_viz.app.pipeline.RecordedTriplets): kept by head, the
        (m, 3) array built when a step asks for ``triplets``.""")
    model = param.Parameter(default=None, precedence=-1, doc="The fitted loe_viz.loe.LOE.")
    aligned = param.Array(default=None, precedence=-1, doc="Embedding aligned to the truth (Procrustes).")
    point_error = param.Array(default=None, precedence=-1, doc="Distance of each aligned point to its truth.")
    metrics = param.Dict(default={}, precedence=-1, doc="Errors, counts and timings of the last run.")
    estimate = param.Parameter(default=None, precedence=-1, doc="Estimate of the configured run.")
    config_used = param.Dict(default={}, precedence=-1, doc="The configuration of the shown results.")
    version = param.Integer(default=0, precedence=-1, doc="Incremented when results are replaced.")

    @property
    def triplets(self):
        """The list-order triplets LOE used, as one ``(m, 3)`` array (None before the first result)."""
        return None if self.recorded is None else self.recorded.array()

    # ---- status --------------------------------------------------------------------
    error = param.String(default="", precedence=-1, doc="Why the last configuration could not run.")
    notice = param.String(default="", precedence=-1, doc="A run waiting for confirmation, and why.")
    status = param.String(default="", precedence=-1, doc="What happened last, in words.")
    busy = param.Boolean(default=False, precedence=-1, doc="A run is in progress.")
    uploaded_name = param.String(default="", precedence=-1, doc="Name of the uploaded file.")
    reading = param.String(default="", precedence=-1, doc="Name of the points upload being read ('' when none).")

    def __init__(self, background: bool = False, auto_update: bool = True, n_jobs: int = 1, **params):
        #: Threads of each LOE fit (the landmark rankings run in parallel; numba releases the GIL).
        self.n_jobs = int(n_jobs)
        self.auto_update = bool(auto_update)
        self._jobs = JobRunner("loe-viz-pipeline", background=bool(background))
        self._cache = Cache()
        self._uploaded = None
        self._upload_token = 0
        self._before_upload = None  # kind, n and d before the points upload in use (see leave_upload)
        self._link_problem = ""  # a refused setting of the link, shown with the first result
        self._link_said = ""  # the last such message shown (a later one is added to it while it is on screen)
        self._upload_note = ""  # an upload larger than the explorer takes, said with its first result
        self.last_upload = ""  # the name of the last upload (the page isolates it where a message quotes it)
        self._closed = False
        self._init_reads()
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
        """Run the pipeline on the current configuration (cancelling a run in progress).

        Parameters
        ----------
        force : bool, default False
            Start even when the estimate is above the confirmation thresholds.
        """
        if self._closed:
            return
        cfg = self._snapshot()
        if self._jobs.background:
            # a "Large run: press Run" notice is about the run that waited; this one has started
            self.param.update(busy=True, notice="")
        self._jobs.submit(partial(self._compute, cfg, force))

    def set_budget_unit(self, unit: str) -> None:
        """Switch the budget's unit and convert the number, so the budget stays the same.

        c = 100 at n = 1000 with 5 landmarks becomes 138,155 comparisons per landmark,
        and back (one update, one run).  Values that are not a positive number are
        kept as they are (the run reports them).
        """
        if unit not in BUDGET_UNITS.values():
            raise ValueError(f"budget_unit must be one of {', '.join(BUDGET_UNITS.values())}; got {unit!r}")
        if unit == self.budget_unit:
            return
        l = self.n_landmarks_effective
        budget = self.budget
        if isinstance(self.n, int) and self.n >= 3 and isinstance(l, int) and isinstance(budget, (int, float)):
            budget = convert_budget(self.n, l, float(budget), self.budget_unit, unit)
        self.param.update(budget_unit=unit, budget=budget)

    def cancel(self) -> None:
        """Stop the run in progress (LOE stops at its next progress call); the previous results stay."""
        if self._jobs.busy:
            self._jobs.cancel()
            self.status = "Cancelling…"

    def wait(self, timeout: float | None = 60.0) -> bool:
        """Wait for an upload being read, then for background runs (immediately True when synchronous)."""
        return self._reads.wait(timeout) and self._jobs.wait(timeout)

    def load_file(self, content, filename: str = "points.csv", background: bool = False, box=None) -> bool:
        """Use an uploaded point table as the ground truth.

        Parameters
        ----------
        content : bytes or str
            The file's content (CSV/TSV with numeric columns, optional header; or ``.npy``).
        filename : str
            Its name as the browser gave it, shown in messages and titles with control characters
            replaced and bidi overrides removed (see :func:`loe_viz.app.uploads.upload_name`).
        background : bool, default False
            Read the file on a worker thread (see :class:`~loe_viz.app.uploads.ReadsUploads`):
            :attr:`reading` names it meanwhile, and the points (or the error) arrive through
            :attr:`dispatch`. A newer upload, another ground truth chosen meanwhile or
            :meth:`close` supersede it: its result is then dropped.
        box : optional
            The receipt of the upload box the file came from
            (:func:`loe_viz.app.serving.upload_receipt`), told what became of the file.

        Returns
        -------
        bool
            True when the file was accepted (with ``background``: when the read started);
            otherwise :attr:`error` says why and the previous results stay.
        """
        if self._closed:
            return False
        name = upload_name(filename, "points.csv")
        self.last_upload = name
        return self._start_read(partial(read_point_table, read_points_upload, content, name), name,
                                partial(self._take_points, name), background, box)

    def _take_points(self, filename: str, X) -> bool:
        """Points just read become the ground truth (on the UI thread), and a run starts.

        ``d`` becomes the points' dimension where the sidebar offers it (as "Your triplets" fits a
        sample in its truth's dimension): 3-D points embedded at d = 2 scored a Procrustes error of
        0.34 with nothing saying why.
        """
        if self.kind != "uploaded" or self._before_upload is None:
            self._before_upload = {"kind": self.kind if self.kind != "uploaded" else self.param.kind.default,
                                   "n": self.n, "d": self.d}
        self._uploaded = X
        self._upload_token += 1
        self.uploaded_name = filename
        from .limits import MAX_N

        rows, D = X.shape
        n = min(rows, MAX_N)  # the pipeline draws a seeded subsample of n rows
        self._upload_note = (f"{filename} has {rows:,} points; a random {n:,} of them are used, the most this "
                             "explorer takes" if rows > n else "")
        if far := far_point_note(X):
            self._upload_note = f"{self._upload_note}; {far}" if self._upload_note else far
        if D <= self.param.d.softbounds[1]:
            d = D
        else:
            d = min(self.d, D) if isinstance(self.d, int) and self.d >= 1 else min(2, D)
        new = {"kind": "uploaded", "n": int(n), "d": int(d)}
        # a budget the file's n cannot run with (100 c at n = 200,000, whose top is 29.6): the sidebar took the
        # file, the run refused it, and the page showed the old points beside the new settings; the budget goes
        # to the nearest one that runs, and the first result says so
        l = int(d) + 3 if self.n_landmarks is None else int(self.n_landmarks)
        lo, hi = budget_range(int(n), D, int(d), l, self.budget_unit, landmark_selection=self.landmark_selection,
                              n_jobs=self.n_jobs)
        if lo <= hi and not lo <= self.budget <= hi:
            new["budget"] = min(max(float(self.budget), lo), hi)
            unit = " comparisons per landmark" if self.budget_unit == "per_landmark" else " c"
            said = f"the budget is {new['budget']:,.6g}{unit}, the {'most' if new['budget'] == hi else 'least'} " \
                   f"n = {int(n):,} allows (it was {self.budget:,.6g})"
            self._upload_note = f"{self._upload_note}; {said}" if self._upload_note else said
        changed = {k: v for k, v in new.items() if getattr(self, k) != v}
        if changed:
            self.param.update(**changed)  # the watcher reruns
        elif self.auto_update:
            self.run()
        return True

    def leave_upload(self, token: int | None = None) -> None:
        """Stop using the uploaded points: the ground truth, ``n`` and ``d`` before the upload come back.

        What removing the file from its box does. Every other setting stays, and "uploaded" is no
        longer offered. With ``token`` (an upload's ``_upload_token``), only while that upload is the
        one in use.
        """
        if self._closed or (token is not None and token != self._upload_token) or self._uploaded is None:
            return
        before, self._before_upload = self._before_upload or {"kind": self.param.kind.default}, None
        self._uploaded = None
        self._upload_token += 1
        self._upload_note = ""
        self.uploaded_name = ""
        if self.kind == "uploaded":
            self.param.update(**before)  # the watcher reruns
        # another ground truth was chosen since: it stays, the upload is no longer offered

    def _upload_undo(self):
        """Removing the points file just taken from its box leaves it (see :meth:`leave_upload`)."""
        return partial(self.leave_upload, self._upload_token)

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
        """Apply URL query values; values that do not parse or cannot run are ignored, named in :attr:`error`."""
        updates, bad, unparsed = {}, [], set()
        for p in URL_PARAMS:
            if p not in query:
                continue
            raw = query[p]
            try:
                v = raw
                if isinstance(self.param[p], (param.Number, param.Boolean)) and isinstance(raw, str):
                    v = json.loads(raw)  # what a URL query holds for numbers (as Panel parses it)
                if isinstance(self.param[p], param.Integer) and isinstance(v, float) and v.is_integer():
                    v = int(v)
                self.param[p]._validate(v)
            except Exception:
                bad.append(f"{p}={quote_link_value(raw)}")  # a value of 5,000 characters is cut
                unparsed.add(p)
                if p == "step":
                    bad[-1] += f" (a step is one of {', '.join(k.lower() for k in STEPS)})"
                continue
            updates[p] = v
        # values that parse but cannot run (n above the limit, a budget of inf) are ignored too
        refused = refused_link_settings(updates, self, unparsed)
        unusable = [f"{p}={quote_link_value(query[p])} ({why})" for p, why in refused.items()]
        updates = {p: v for p, v in updates.items() if p not in refused}
        if updates:
            try:
                self.param.update(**updates)
            except Exception as exc:
                self.report_link_problem(f"The link's settings could not be applied: {exc}")
                return
        said = ["that do not parse: " + ", ".join(bad)] if bad else []
        said += ["that cannot be used: " + ", ".join(unusable)] if unusable else []
        if said:
            self.report_link_problem("Ignored settings in the link " + "; ".join(said))

    @property
    def link_problem(self) -> str:
        """The link's refused settings, as :meth:`report_link_problem` said them, until the first result ("": none)."""
        return self._link_problem

    def report_link_problem(self, message: str) -> None:
        """Say that some of the link's settings were refused; the message outlives the first run.

        The first result would otherwise clear it at once, leaving the defaults on screen and
        nothing saying why. It is shown beside that result and dropped by the next run.
        """
        # a link can carry several (n=…, lesson=…), reported before or after the first result
        previous = self._link_problem or (self.error if self.error == self._link_said else "")
        if previous:
            message = previous if message in previous else f"{previous} {message}"
        self._link_problem = self._link_said = message
        self.error = message

    def close(self) -> None:
        """Stop background work and drop the results (frees the session's memory)."""
        self._closed = True
        self._close_reads()
        self._jobs.close()
        self._cache.clear()
        self._uploaded = None
        # plain attribute updates: no watcher of the (closing) views is triggered
        with param.parameterized.discard_events(self):
            self.param.update(points=None, recorded=None, aligned=None, point_error=None, hue_lightness=None,
                              colors=None, oracle=None, model=None, estimate=None)

    # ------------------------------------------------------------------ internals
    def _on_config(self, *events) -> None:
        if self.reading and any(e.name == "kind" for e in events):
            self._forget_read()  # another ground truth chosen while a file is read: it wins
        if self.auto_update:
            self.run()

    def _snapshot(self) -> Config:
        return Config(
            kind=self.kind, n=self.n, d=self.d, seed=self.seed, temperature=self.temperature,
            budget_unit=self.budget_unit, budget=self.budget, n_landmarks=self.n_landmarks,
            landmark_selection=self.landmark_selection, offset=self.offset, upload_token=self._upload_token,
            paper_only=bool(self.paper_only),
            uploaded=self._uploaded, uploaded_name=self.uploaded_name,
        )

    def _publish(self, token: Token, **updates) -> None:
        """Apply ``updates`` on the UI thread; ``busy`` stays set while a newer run waits."""
        def apply():
            if self._closed:
                return
            if "points" in updates:
                updates["version"] = self.version + 1
            updates["busy"] = token.superseded and self._jobs.busy
            self.param.update(**updates)
        self._jobs.publish(apply)

    def _compute(self, cfg: Config, force: bool, token: Token) -> None:
        """Run the pipeline for ``cfg``; publish results, or the error."""
        try:
            updates = run_pipeline(cfg, self._cache, force=force, token=token, n_jobs=self.n_jobs)
        except Cancelled:
            if token.superseded:  # a newer configuration replaced this run: it reports itself
                self._publish(token)
            else:
                self._publish(token, status="Cancelled: the results shown are those of the previous run."
                              if self.model is not None else "Cancelled: no results yet; press Run to start again.")
            return
        except Exception as exc:
            if not isinstance(exc, ValueError):  # a bug or an unexpected input: say so, do not raise
                log_failure(log, "the walk-through's pipeline", exc)
                exc = f"Could not run this configuration ({type(exc).__name__}: {exc})"
            # the link's refused settings are said with the run's refusal too (it replaced them)
            link_problem, self._link_problem = self._link_problem, ""
            self._publish(token, error=f"{link_problem} {exc}" if link_problem else str(exc), notice="")
            return
        link_problem, self._link_problem = self._link_problem, ""
        if link_problem and not updates.get("error"):
            updates["error"] = link_problem
        note, self._upload_note = self._upload_note, ""
        if note and updates.get("status"):
            updates["status"] += f" ({note})"
        self._publish(token, **updates)


def _json(v) -> str:
    return json.dumps(v)
