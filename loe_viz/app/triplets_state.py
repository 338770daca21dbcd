"""State of the explorer's "Your triplets" mode: read a triplet file, embed it, score it.

:class:`TripletsState` holds one triplet data set (a bundled sample or an
uploaded file, read by :func:`loe_viz.io.read_triplets`), a summary of how it
was read, the run settings (methods, dimension, held-out fraction, seed) and the
results of the last run: one :class:`MethodResult` per method, with its
embedding, held-out and training accuracy, time and, where the sample's ground
truth is known, its Procrustes error.

Real triplets come without the points that generated them, so every method is
fitted on a random training part and judged by the fraction of the held-out
triplets its embedding satisfies (:mod:`loe_viz.evaluation`).

As in :mod:`loe_viz.app.state`: no Panel import, bad input never raises (it
sets :attr:`TripletsState.error` and keeps the previous data and results), and
the heavy work (:func:`embed_triplets`) is a plain function that runs on any
thread; :meth:`TripletsState.run` with ``background=True`` runs it through a
:class:`~loe_viz.app.jobs.JobRunner` and hands results to :attr:`TripletsState.dispatch`.
"""

from __future__ import annotations

import dataclasses
import io
import logging
import math
import re
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Callable

import numpy as np
import param

from ..data import sample_dir
from ..describe import summarize
from ..loe import auto_landmark_plan
from ..loeste import START_HEADS
from ..methods import METHODS
from .colors import position_colors
from .._format import format_seconds
from ..io.writing import write_embedding_table
from .jobs import Cancelled, JobRunner, RunsJobs, log_failure
from .text import file_stem, plain
from .uploads import ReadsUploads, upload_name

__all__ = [
    "SAMPLE_DIR",
    "SAMPLES",
    "Sample",
    "TRIPLET_METHODS",
    "METHOD_LABELS",
    "MethodResult",
    "TripletsState",
    "summarize",
    "loe_landmark_plan",
    "embed_triplets",
]

log = logging.getLogger(__name__)

#: Directory of the bundled sample files (package data ``loe_viz/data``, found through importlib.resources).
SAMPLE_DIR = sample_dir()


@dataclass(frozen=True)
class Sample:
    """A bundled triplet file.

    Attributes
    ----------
    file : str
        File name in :data:`SAMPLE_DIR`.
    title : str
        What the picker shows.
    description : str
        One sentence on what it holds.
    truth : str or None
        A points file in :data:`SAMPLE_DIR` with the ground truth, one row per
        item in the triplet file's item order (None when unknown).
    unit : str
        The unit of the truth's coordinates (``"km"``), '' when they have none.
    """

    file: str
    title: str
    description: str
    truth: str | None = None
    unit: str = ""


#: The bundled samples, by file name (see ``sample_data/README.md``).
SAMPLES = {
    s.file: s for s in (
        Sample("european_capitals_crowd.csv", "European capitals: 4,000 synthetic crowd-style answers, city names",
               "44 capitals; synthetic answers in a crowd-sourcing tool's layout, each naming the city closer "
               "to the one shown on top: generated from straight-line distances with noise T = 0.1, not given "
               "by people.",
               "european_capitals_map_km.csv", "km"),
        Sample("gaussian_2d_crowd.csv", "Gaussian 2-D: 8,000 synthetic crowd-style answers",
               "200 points x ~ N(0, I/4); uniformly random synthetic triplets in the crowd layout (noise T = 0.2).",
               "gaussian_2d_points.csv"),
        Sample("gaussian_2d_landmark_triplets.csv", "Gaussian 2-D: 25,000 landmark triplets",
               "The same 200 points; triplets headed by 10 landmark items only (the design LOE needs).",
               "gaussian_2d_points.csv"),
        Sample("gaussian_3d_triplets.npz", "Gaussian 3-D: 6,000 nearly noiseless triplets (.npz)",
               "100 points in 3-D, uniformly random triplets (noise T = 0.02), as a NumPy archive.",
               "gaussian_3d_points.csv"),
    )
}

#: Methods offered, in display order (the names of :data:`loe_viz.methods.METHODS`).
TRIPLET_METHODS = tuple(METHODS)

#: How each method is named on screen.
METHOD_LABELS = {name: m.label for name, m in METHODS.items()}

# Item labels are drawn in the plot up to this many items.
LABELS_DRAWN_MAX = 60


def loe_landmark_plan(head_counts, n_items: int, n_components: int, n_landmarks: int | None = None):
    """The landmarks LOE uses in this mode: ``(l, search, covered)``.

    Parameters
    ----------
    head_counts : array of int
        Triplets headed by each head, in any order (zeros may be left out).
    n_items : int
    n_components : int
    n_landmarks : int or None
        The setting; None is LOE's ``n_landmarks="auto"`` (see :func:`loe_viz.loe.auto_landmark_plan`).

    Returns
    -------
    l : int
        The landmarks (the busiest heads); with ``search``, the most the held-out search may take.
        May exceed the number of heads: LOE then says why it cannot run.
    search : bool
        True when LOE chooses how many of the ``l`` busiest heads to use on a held-out share.
    covered : int
        Triplets headed by the ``l`` busiest heads.
    """
    counts = np.sort(np.asarray(head_counts, dtype=np.int64))[::-1]
    if n_landmarks is not None:
        l, search = int(n_landmarks), False
    else:
        padded = np.zeros(max(int(n_items), counts.size), dtype=np.int64)
        padded[:counts.size] = counts
        plan = auto_landmark_plan(padded, n_components)
        l, search = plan.n_landmarks, plan.search
    return l, search, int(counts[:l].sum())


# ==================================================================== results
@dataclass(frozen=True)
class MethodResult:
    """One method fitted on the training triplets.

    Attributes
    ----------
    method : str
        Name in :data:`TRIPLET_METHODS`.
    embedding : ndarray of shape (n, d) or None
        None when the method could not run (see ``error``).
    test_accuracy, train_accuracy : float
        Fraction of the held-out / training triplets the embedding satisfies.
    seconds : float
        Wall time of the fit.
    agreement_with_ste : float
        Procrustes disparity to STE's embedding (0: the same up to rotation,
        reflection, scale and translation); NaN without STE.
    procrustes : float
        Procrustes error against the sample's ground truth; NaN when unknown.
    detail : str
        How the fit went, in words.
    error : str
        Why the method could not run ("" when it did).
    """

    method: str
    embedding: np.ndarray | None = field(repr=False, default=None)
    test_accuracy: float = float("nan")
    train_accuracy: float = float("nan")
    seconds: float = 0.0
    agreement_with_ste: float = float("nan")
    procrustes: float = float("nan")
    detail: str = ""
    error: str = ""
    landmarks: np.ndarray | None = field(repr=False, default=None)

    @property
    def label(self) -> str:
        """The method's name on screen."""
        return METHOD_LABELS.get(self.method, self.method)

    @property
    def ok(self) -> bool:
        return self.embedding is not None and not self.error


def embed_triplets(triplets, n_items: int, methods, n_components: int = 2, test_fraction: float = 0.2,
                   seed: int = 0, n_landmarks: int | None = None, max_seconds: float = 30.0, truth=None,
                   on_result: Callable[[MethodResult, float], None] | None = None,
                   on_progress: Callable[[float, str], None] | None = None,
                   should_stop: Callable[[], bool] | None = None) -> tuple[dict, dict]:
    """Split the triplets, fit every method on the training part, score it on the rest.

    A plain function (no state, no UI): the explorer runs it on a worker thread.

    Parameters
    ----------
    triplets : int ndarray of shape (m, 3)
        List-order triplets.
    n_items : int
    methods : sequence of str
        Names in :data:`TRIPLET_METHODS`, fitted in that order.
    n_components : int, default 2
    test_fraction : float, default 0.2
        Fraction of the triplets held out (seeded split).
    seed : int, default 0
        Seed of the split and of every method's random start.
    n_landmarks : int, optional
        LOE's (and LOE-STE's) landmarks; None: LOE's ``"auto"`` (:func:`loe_landmark_plan`), and
        LOE-STE's default (up to ``4 (d + 3)`` of the busiest heads, see :class:`loe_viz.LOESTE`).
    max_seconds : float, default 30
        Time limit of each iterative method (it stops and keeps its last iterate).
    truth : ndarray of shape (n_items, D), optional
        Known positions: each result then carries its Procrustes error.
    on_result : callable, optional
        ``on_result(result, fraction_done)`` after each method.
    on_progress : callable, optional
        ``on_progress(fraction_done, message)`` while a method runs (at most 4 times a second).
    should_stop : callable, optional
        Returns True to cancel: the running method stops after its current iteration
        and no further method starts.

    Returns
    -------
    results : dict
        Method name -> :class:`MethodResult`, in the order run.
    info : dict
        ``n_train``, ``n_test``, ``n_landmarks`` and ``loe_triplets`` (LOE's landmarks
        and the training triplets they head; None until LOE's held-out search has
        chosen them), ``unseen_test`` (held-out triplets naming
        an item absent from the training part), ``agreement_loe_ste``,
        ``cancelled`` and ``seconds``.
    """
    from .. import metrics as M
    from ..evaluation import embedding_agreement, train_test_split_triplets

    t_run = time.perf_counter()
    stop = should_stop or (lambda: False)
    methods = [m for m in TRIPLET_METHODS if m in set(methods)]
    if not methods:
        raise ValueError("methods must name at least one of " + ", ".join(METHOD_LABELS[m] for m in TRIPLET_METHODS))
    d = int(n_components)
    if d < 1:
        raise ValueError(f"n_components must be >= 1, got {n_components}")
    if d >= n_items:
        raise ValueError(f"n_components must be smaller than the number of items ({n_items}), got {d}")
    train, test = train_test_split_triplets(triplets, test_size=float(test_fraction), random_state=int(seed))
    heads = np.bincount(train[:, 0], minlength=n_items)
    counts = np.sort(heads[heads > 0])[::-1]
    l, search, covered = loe_landmark_plan(counts, n_items, d, n_landmarks)
    seen = np.zeros(n_items, dtype=bool)
    seen[train.ravel()] = True
    info = {
        "n_train": int(train.shape[0]), "n_test": int(test.shape[0]), "n_landmarks": None if search else l,
        "loe_triplets": None if search else covered, "n_heads_train": int(counts.size),
        "unseen_test": float((~seen[test]).any(axis=1).mean()), "agreement_loe_ste": float("nan"),
        "cancelled": False, "n_components": d, "test_fraction": float(test_fraction), "seed": int(seed),
    }
    results: dict[str, MethodResult] = {}
    k = len(methods)
    for i, name in enumerate(methods):
        if stop():
            info["cancelled"] = True
            break
        base, step = i / k, 1.0 / k
        if on_progress is not None:
            on_progress(base, f"Fitting {METHOD_LABELS[name]} ({i + 1}/{k})…")
        try:
            res = _fit_one(name, train, test, n_items, d, n_landmarks, int(seed), float(max_seconds), truth, stop,
                           on_progress, base, step, M)
        except Cancelled:  # the methods that finished keep their results; the cancelled one has none
            info["cancelled"] = True
            break
        results[name] = res
        if name == "LOE" and res.landmarks is not None:  # what the search chose
            info["n_landmarks"] = int(res.landmarks.size)
            info["loe_triplets"] = int(np.isin(train[:, 0], res.landmarks).sum())
        if on_result is not None:
            on_result(res, (i + 1) / k)
    if stop():
        info["cancelled"] = True
    ste = results.get("STE")
    if ste is not None and ste.ok:
        for name, r in list(results.items()):
            if r.ok:
                try:
                    a = 0.0 if name == "STE" else embedding_agreement(r.embedding, ste.embedding)
                except ValueError:
                    a = float("nan")
                results[name] = _replace(r, agreement_with_ste=a)
        if "LOE" in results:
            info["agreement_loe_ste"] = results["LOE"].agreement_with_ste
    info["seconds"] = time.perf_counter() - t_run
    return results, info


def _replace(r: MethodResult, **kw) -> MethodResult:
    from dataclasses import replace
    return replace(r, **kw)


def _fit_one(name, train, test, n, d, l, seed, max_seconds, truth, stop, on_progress, base, step, M):
    """Fit one method; failures become a result with ``error`` set (the run goes on)."""
    from .. import LOE, LOESTE

    label = METHOD_LABELS[name]
    t0 = time.perf_counter()
    last = {"t": 0.0}

    def callback(iteration, embedding):
        now = time.perf_counter() - t0
        if on_progress is not None and now - last["t"] >= 0.25:
            last["t"] = now
            on_progress(base + step * min(now / max_seconds, 0.95), f"Fitting {label}: iteration {iteration}…")
        return bool(stop())

    def check_stop(stage, done, total):  # also heard within a baseline's long pass over the triplets
        if stop():
            raise Cancelled()

    try:
        if name == "LOE":
            model = LOE(n_components=d, n_landmarks="auto" if l is None else l, random_state=seed)
        elif name == "LOESTE":
            model = LOESTE(n_components=d, n_landmarks=l, random_state=seed, callback=callback,
                           time_budget=max_seconds)
        else:
            cls = METHODS[name].estimator
            model = cls(n_components=d, random_state=seed, callback=callback, time_budget=max_seconds)
        model.fit(train, n_items=n, progress=check_stop)
        Z = np.asarray(model.embedding_, dtype=np.float64)
        if not np.all(np.isfinite(Z)):
            raise ValueError("the fit produced non-finite coordinates")
    except Cancelled:
        raise
    except ValueError as exc:
        return MethodResult(name, seconds=time.perf_counter() - t0, error=str(exc))
    except Exception as exc:  # a bug or an unexpected input: say so, keep going
        log.warning("%s failed", name, exc_info=True)
        return MethodResult(name, seconds=time.perf_counter() - t0, error=f"{type(exc).__name__}: {exc}")
    sec = time.perf_counter() - t0
    detail = _detail(name, model, train.shape[0])
    proc = float("nan")
    if truth is not None:
        try:
            proc = float(M.procrustes_error(truth, Z))
        except ValueError:
            pass
    landmarks = getattr(model, "landmarks_", None)
    if name == "LOESTE":
        landmarks = model.loe_.landmarks_
    return MethodResult(name, embedding=Z, test_accuracy=float(M.triplet_accuracy(Z, test)),
                        train_accuracy=float(M.triplet_accuracy(Z, train)), seconds=sec, procrustes=proc,
                        detail=detail, landmarks=None if landmarks is None else np.array(landmarks))


def _detail(name, model, m_train) -> str:
    if name == "LOE":
        text = (f"{len(model.landmarks_)} landmarks (the busiest heads) head {model.n_triplets_used_:,} of the "
                f"{m_train:,} training triplets")
        found = model.auto_search_
        if found:
            text += (f"; their number and the ranking penalty ({found['chosen_regularization']:g}) were chosen on a "
                     f"held-out tenth among {', '.join(map(str, found['n_landmarks']))} landmarks")
        unranked = model.stages_.ranking.unranked_items
        if unranked.size:
            text += (f"; {len(unranked):,} item(s) are missing from at least one landmark's triplets "
                     "(their distance to it is set to the mean)")
        if not model.stages_.edm.converged:
            text += "; the EDM projection stopped before its tolerance"
        return text
    if name == "LOESTE":
        k = model.loe_.landmarks_.size
        why = ""
        if model.n_landmarks is None:  # LOE-STE's own choice, not LOE's held-out search (see LOESTE)
            why = (f": the busiest heads, at most {START_HEADS} × (d + 3) = {START_HEADS * (model.n_components + 3)}, "
                   "without LOE's held-out search, as it only gives STE its start")
        text = (f"LOE ({k} landmarks{why}) on {model.n_landmark_triplets_:,} landmark triplets, "
                f"then STE on all {m_train:,}: {_stopped(model)}")
        return text
    return _stopped(model)


def _stopped(model) -> str:
    """How a baseline's optimiser ended, in words ("1000 iterations, max_iter" was the attribute's value)."""
    k, why = model.n_iter_, model.stop_reason_
    its = f"{k:,} iteration{'s' * (k != 1)}"
    return {"converged": f"converged in {its}",
            "max_iter": f"stopped at its limit of {its}, not converged",
            "time_budget": f"stopped by the time limit after {its}, not converged",
            "callback": f"stopped after {its}",
            "line_search": f"stopped after {its}: no step lowered the loss further"}.get(why, f"{its}, {why}")


def _read_triplet_upload(content, filename: str, skip_bad_rows: bool = False):
    """The :class:`~loe_viz.io.TripletData` of an uploaded file's ``content`` (bytes or str), and its summary.

    Both can take seconds for a file near the upload limit (a million triplets):
    the explorer calls this on a worker thread.
    """
    from ..io import read_triplets

    if content is None or len(content) == 0:
        raise ValueError(f"{filename}: the file is empty")
    buf = io.BytesIO(content.encode("utf-8") if isinstance(content, str) else bytes(content))
    buf.name = filename

    def read(item_type="auto"):
        buf.seek(0)
        return read_triplets(buf, errors="skip" if skip_bad_rows else "raise", item_type=item_type)

    # The page has no box for the reader's item_type: where the reader would advise item_type='str' ('1984' among
    # book titles, films named by years and words, a person called 'Nan', ids such as '0.5') the file is read
    # again with every id a text label, and that reading is taken, with a note saying why, unless it looks like
    # integer ids with a typo or two ('1O', 'nan': so read, '7' and '7.0' were two items; see _read_as_labels)
    # and, with rows skipped, where it skips fewer rows. A file refused both ways is refused with what the
    # labels' reading found, the problem left once the ids are labels.
    try:
        data = read()
    except ValueError as exc:
        every = re.search(r"no valid rows: all ([\d,]+) data row", str(exc)) if skip_bad_rows else None
        if _AS_LABELS not in str(exc) and every is None:
            raise
        refusal = exc.with_traceback(None)  # the reader's frames (and what they hold) go before reading again
    else:
        refusal = None
    if refusal is not None:
        labelled = _read_as_labels(read, str(refusal), filename, int(every[1].replace(",", "")) if every else 0)
        if labelled is None:
            raise refusal from None
        return labelled, summarize(labelled)
    why = next((n for n in data.notes if _AS_LABELS in n), "")
    if why:
        try:
            labelled = _read_as_labels(read, why, filename, data.n_skipped)
        except ValueError:
            labelled = None
        if labelled is not None and labelled.n_skipped < data.n_skipped:
            return labelled, summarize(labelled)
    return data, summarize(data)


#: The reader's advice that the upload then follows (see :func:`_read_triplet_upload`).
_AS_LABELS = "item_type='str'"


#: Below this share of rows holding a label that is no integer, integer ids are most of a file's labels, and
#: the labels' reading splits no number in two, the other labels are typos of integer ids, not items.
TYPO_ROWS = 0.05


def _read_as_labels(read, why: str, filename: str, skipped: int = 0):
    """The file read with every id a text label, with a note that quotes ``why`` (the reader's message or its note
    on the ``skipped`` rows, without its advice); None where it looks like integer ids with a typo or two: two
    labels of one number ('7' and '7.0', '3' and '003'), or integers for most labels and the others in fewer than
    :data:`TYPO_ROWS` of the rows. Raises the reading's own ``ValueError``."""
    from ..io.layouts import INT_RE, is_number

    data = read("str")
    labels = data.labels.tolist()
    numbers = [v for v in (float(x) for x in labels if is_number(x)) if math.isfinite(v)]
    integer = np.array([bool(INT_RE.match(x.strip())) for x in labels])
    others = float(np.mean((~integer)[data.triplets].any(axis=1))) if data.n_triplets else 0.0
    if len(set(numbers)) < len(numbers) or (2 * integer.sum() > data.n_items and others < TYPO_ROWS):
        return None
    reason = re.split(r"[;,] (?:or )?pass item_type='str'", why.removeprefix(f"{filename}: ").split("(first: ")[-1])[0]
    note = f"every id was read as a text label ({reason})" if not skipped else (
        f"every id was read as a text label, which skips {data.n_skipped:,} row(s) instead of {skipped:,} ({reason})")
    return dataclasses.replace(data, notes=(*data.notes, note))


# ====================================================================== state
class TripletsState(RunsJobs, ReadsUploads, param.Parameterized):
    """One triplet data set, the run settings and the results of the "Your triplets" mode.

    Parameters
    ----------
    **params
        Initial values of the parameters below.

    Examples
    --------
    >>> s = TripletsState()
    >>> s.load_sample("european_capitals_crowd.csv")
    True
    >>> s.summary["n_items"], s.summary["labels"]
    (44, 'text')
    >>> s.run()                                  # synchronous: LOE, STE, LOE-STE
    True
    >>> 0.5 < s.results["STE"].test_accuracy <= 1.0
    True
    """

    # ---- run settings --------------------------------------------------------------
    methods = param.ListSelector(default=["LOE", "STE", "LOESTE"], objects=list(TRIPLET_METHODS), doc="""
        Methods to fit, run in the order of TRIPLET_METHODS.""")
    n_components = param.Integer(default=2, bounds=(1, 10), doc="Embedding dimension d.")
    n_landmarks = param.Integer(default=None, allow_None=True, bounds=(4, 500), doc="""
        LOE's landmarks (the busiest heads); None: LOE's "auto" (see loe_landmark_plan).""")
    test_fraction = param.Number(default=0.2, bounds=(0.05, 0.5), doc="""
        Fraction of the triplets held out to measure accuracy.""")
    seed = param.Integer(default=0, bounds=(0, 2**32 - 1), doc="""
        Seed of the split and the random starts (NumPy's legacy seeds stop at 2**32 - 1).""")
    max_seconds = param.Number(default=30.0, bounds=(1.0, 600.0), doc="""
        Time limit of each iterative method (stopped, its last iterate kept).""")
    shown = param.String(default="", doc="Method whose embedding is shown and downloaded.")
    skip_bad_rows = param.Boolean(default=False, doc="""
        Read an uploaded file without its rows with problems (the reader's errors="skip"), instead of
        refusing it at the first one.""")

    # ---- data ----------------------------------------------------------------------
    data = param.Parameter(default=None, precedence=-1, doc="The loe_viz.io.TripletData read.")
    source = param.String(default="", precedence=-1, doc="Name of the file the data came from.")
    sample = param.String(default="", precedence=-1, doc="File name of the bundled sample, '' for an upload.")
    summary = param.Dict(default={}, precedence=-1, doc="How the file was read (see summarize).")
    truth = param.Array(default=None, precedence=-1, doc="Known positions of a sample's items.")
    data_version = param.Integer(default=0, precedence=-1, doc="Incremented when new data is loaded.")

    # ---- results -------------------------------------------------------------------
    results = param.Dict(default={}, precedence=-1, doc="Method name -> MethodResult of the last run.")
    run_info = param.Dict(default={}, precedence=-1, doc="Split sizes, landmarks, agreement, timings.")
    version = param.Integer(default=0, precedence=-1, doc="Incremented when results change.")

    _bumps_version = "results"

    # ---- status --------------------------------------------------------------------
    error = param.String(default="", precedence=-1, doc="Why the last action failed.")
    setting_error = param.String(default="", precedence=-1, doc="""
        Why the values still in their boxes were refused, one sentence per box (each goes once a value typed in
        that box is taken).""")
    message = param.String(default="", precedence=-1, doc="What the run is doing or did.")
    running = param.Boolean(default=False, precedence=-1)
    reading = param.String(default="", precedence=-1, doc="Name of the upload being read ('' when none).")
    progress = param.Integer(default=0, bounds=(0, 100), precedence=-1)

    #: The run settings the page's boxes set (through :meth:`set_setting`), with the boxes' labels.
    SETTINGS = {"n_components": "Dimension d", "n_landmarks": "LOE landmarks", "test_fraction": "Held-out fraction",
                "seed": "Seed", "max_seconds": "Time limit per method (s)"}

    def __init__(self, **params):
        super().__init__(**params)
        self._jobs = JobRunner("loe-viz-triplets")
        self.last_upload = ""  # the name of the last upload (the page isolates it where a message quotes it)
        self._refused: dict[str, str] = {}  # setting -> why the value left in its box was refused
        self._closed = False
        self._init_reads()

    # ------------------------------------------------------------------ loading
    @staticmethod
    def sample_available(name: str) -> bool:
        """Whether the bundled sample ``name`` is present (a source checkout has them)."""
        return name in SAMPLES and (SAMPLE_DIR / name).is_file()

    def load_sample(self, name: str) -> bool:
        """Read a bundled sample (see :data:`SAMPLES`).

        Returns
        -------
        bool
            True when it was read; otherwise :attr:`error` says why and the
            previous data and results stay.
        """
        self._forget_read()
        if name not in SAMPLES:
            self.error = f"Unknown sample {name!r}: choose one of {', '.join(SAMPLES)}"
            return False
        path = SAMPLE_DIR / name
        if not path.is_file():
            self.error = (f"The sample {name} is not installed here (the package's data folder "
                          "loe_viz/data is missing): upload a triplet file instead")
            return False
        try:
            from ..io import read_triplets
            from ..points import load_points
            data = read_triplets(path)
            truth = None
            spec = SAMPLES[name]
            if spec.truth and (SAMPLE_DIR / spec.truth).is_file():
                X = load_points(SAMPLE_DIR / spec.truth)
                truth = X if X.shape[0] == data.n_items else None
        except Exception as exc:  # a damaged checkout: say so, keep the previous data
            self.error = f"The sample {name} could not be read: {exc}"
            return False
        # the true dimension is known: fit in it (at d = 2 the nearly noiseless 3-D sample scored 72 to 84 %
        # held out, 95 % at d = 3); the box can change it afterwards
        lo, hi = self.param.n_components.bounds
        dim = {} if truth is None or not lo <= truth.shape[1] <= hi else {"n_components": int(truth.shape[1])}
        self._set_data(data, name, sample=name, truth=truth, **dim)
        return True

    def load_upload(self, content, filename: str = "triplets.csv", background: bool = False, box=None) -> bool:
        """Read an uploaded triplet file (any layout :func:`loe_viz.io.read_triplets` reads).

        Parameters
        ----------
        content : bytes or str
            The file's content.
        filename : str
            Its name as the browser gave it (the extension picks NumPy files; messages
            quote it, control characters replaced: see :func:`loe_viz.app.uploads.upload_name`).
        background : bool, default False
            Read (and describe) the file on a worker thread: :attr:`reading` names it
            meanwhile, and the data (or the error) arrive through :attr:`dispatch`.
            A newer upload, a sample chosen meanwhile or :meth:`close` supersede it:
            its result is then dropped.
        box : optional
            The receipt of the upload box the file came from
            (:func:`loe_viz.app.serving.upload_receipt`), told what became of the file.

        Returns
        -------
        bool
            True when it was read (with ``background``: when the read started);
            otherwise :attr:`error` is ``"Upload rejected: "`` followed by the reader's
            message (file, line and problem), and the previous data and results stay.
        """
        if self._closed:
            return False
        name = upload_name(filename, "triplets.csv")
        skip = bool(self.skip_bad_rows)
        self.last_upload = name
        return self._start_read(partial(_read_triplet_upload, content, name, skip), name,
                                partial(self._take_triplets, name), background, box)

    def _take_triplets(self, name, got) -> bool:
        """The data of an upload just read (on the UI thread)."""
        data, summary = got
        self._set_data(data, name, sample="", truth=None, summary=summary)
        return True

    def _set_data(self, data, source: str, sample: str, truth, summary=None, **settings) -> None:
        """New data: the old results no longer apply (a running fit is cancelled); ``settings`` go with it."""
        if self.running:
            self._jobs.cancel()
        self.param.update(**settings,
            data=data, source=source, sample=sample, truth=truth,
            summary=summarize(data) if summary is None else summary,
            results={}, run_info={}, shown="", error="", progress=0,
            message="" if not self.running else "Cancelling the run on the previous data…",
            data_version=self.data_version + 1, version=self.version + 1,
        )

    # -------------------------------------------------------------------- running
    def loe_landmarks(self) -> tuple[int, bool, int]:
        """``(l, search, covered)`` of LOE with the current settings on all the data (see :func:`loe_landmark_plan`)."""
        counts = self.summary.get("head_counts", np.zeros(0, dtype=np.int64))
        return loe_landmark_plan(counts, int(self.summary.get("n_items", 0)), self.n_components, self.n_landmarks)

    def run(self, background: bool = False) -> bool:
        """Fit the chosen methods on a training split of the data and score them.

        Parameters
        ----------
        background : bool, default False
            Run on a worker thread (results arrive through :attr:`dispatch`, one
            method at a time); otherwise run now.

        Returns
        -------
        bool
            False when nothing was started (no data, a run in progress, or a bad
            setting: :attr:`error` says which).
        """
        if self._closed or self.running:
            return False
        if self.data is None:
            self.error = "Nothing to embed yet: pick a sample or upload a triplet file."
            return False
        if not self.methods:
            self.error = "Choose at least one method."
            return False
        if self.data.n_triplets < 2:
            self.error = f"{self.source} holds {self.data.n_triplets} triplet(s): at least 2 are needed to hold some out."
            return False
        self.param.update(running=True, progress=0, error="", results={}, run_info={},
                          message="Starting…", version=self.version + 1)
        job = partial(self._job, self.data, self.truth, self.data_version, dict(
            methods=list(self.methods), n_components=int(self.n_components),
            test_fraction=float(self.test_fraction), seed=int(self.seed), n_landmarks=self.n_landmarks,
            max_seconds=float(self.max_seconds)))
        self._jobs.submit(job, background=background)
        return True

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for an upload being read, then for a run; False on time-out."""
        return self._reads.wait(timeout) and self._jobs.wait(timeout)

    def set_setting(self, name: str, value) -> bool:
        """Set one of :attr:`SETTINGS` from its box; a value out of range is refused with the range, and kept out.

        Returns whether the value was taken (``setting_error`` says why not, beside the other boxes' refusals:
        one refusal used to replace another, and a box left holding a refused value was explained no more
        while the run used the value in use).
        """
        p = self.param[name]
        whole = isinstance(p, param.Integer)
        if whole and isinstance(value, float) and value.is_integer():
            value = int(value)  # a box sends 3.0, or 1e+23 for a long number typed
        try:
            if whole and isinstance(value, float):
                raise ValueError("not a whole number")
            setattr(self, name, value)
        except (ValueError, TypeError):
            lo, hi = p.bounds
            kind = "a whole number " if whole and isinstance(value, float) else ""
            num = lambda v: f"{v:,}" if isinstance(v, int) and abs(v) >= 10**6 else f"{v:g}"  # noqa: E731
            # a whole number typed in full as typed (4,294,967,296, not 4.29497e+09); one past a float's 53 bits
            # came as a float (1e+23 for 99999999999999999999999) and is shown as one
            typed = lambda v: num(v) if isinstance(v, int) and abs(v) < 2**53 else f"{v:g}"  # noqa: E731
            rng = f"from {num(lo)} to {num(hi)}" if hi is not None else f"{num(lo)} or more"
            shown = lambda v: "auto" if v is None else num(v)  # noqa: E731
            got = ("the box was empty" if value is None else
                   f"got {typed(value)}" if isinstance(value, (int, float)) else f"got {value!r}")
            self._refused[name] = (f"{self.SETTINGS[name]} must be {kind}{rng}"
                                   f"{' (empty: auto)' if p.allow_None else ''}; {got}. "
                                   f"It stays {shown(getattr(self, name))}.")
        else:
            self._refused.pop(name, None)
        self.setting_error = " ".join(self._refused[k] for k in self.SETTINGS if k in self._refused)
        return name not in self._refused

    def close(self) -> None:
        """Cancel a running fit and drop the data and results (without touching the UI)."""
        self._closed = True
        self._close_reads()
        self._jobs.close()
        # plain attribute updates: no watcher of the (closing) view is triggered
        with param.parameterized.discard_events(self):
            self.param.update(data=None, truth=None, summary={}, results={}, run_info={})

    def _job(self, data, truth, data_version, cfg, token) -> None:
        results: dict[str, MethodResult] = {}
        last = {"t": 0.0}

        def current():
            return data_version == self.data_version and not self._closed

        def on_progress(frac, msg):
            now = time.perf_counter()
            if now - last["t"] >= 0.25 and current():
                last["t"] = now
                self._report(progress=int(round(100 * frac)), message=msg)

        def on_result(res, frac):
            results[res.method] = res
            if current():
                self._report(results=dict(results), progress=int(round(100 * frac)),
                              message=f"{res.label} " + ("failed" if res.error else f"done in {format_seconds(res.seconds)}"))

        try:
            final, info = embed_triplets(
                data.triplets, data.n_items, truth=truth, on_result=on_result, on_progress=on_progress,
                should_stop=lambda: token.cancelled or not current(), **cfg)
        except Cancelled:
            self._report(running=False, message="Cancelled." if current() else "", progress=0)
            return
        except ValueError as exc:
            self._report(running=False, error=str(exc), message="")
            return
        except Exception as exc:
            log_failure(log, "triplet run", exc)
            self._report(running=False, error=f"The run stopped: {type(exc).__name__}: {exc}", message="")
            return
        if not current():  # new data arrived meanwhile: these results belong to the old data
            self._report(running=False, progress=0, message="")
            return
        ok = {k: r for k, r in final.items() if r.ok}
        shown = self.shown if self.shown in ok else (max(ok, key=lambda k: ok[k].test_accuracy) if ok else "")
        done = "Cancelled." if info["cancelled"] else f"Done in {format_seconds(info['seconds'])}."
        failed = [r.label for r in final.values() if r.error]
        if failed:
            done += " Could not run: " + ", ".join(failed) + " (see the table)."
        self._report(results=dict(final), run_info=info, shown=shown, running=False,
                      progress=100 if not info["cancelled"] else self.progress, message=done)

    # ------------------------------------------------------------------ outputs
    def best_method(self) -> str:
        """The method with the highest held-out accuracy ('' before a run)."""
        ok = {k: r for k, r in self.results.items() if r.ok}
        return max(ok, key=lambda k: ok[k].test_accuracy) if ok else ""

    def display_coordinates(self, method: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """2-D coordinates of a method's embedding for plotting, and each item's colour.

        When the sample's true positions are known, every embedding is aligned
        (translation, rotation/reflection, scale: Procrustes) to them and items
        take the colour of their true position, so the picture reads like the
        truth (a map the right way up). Otherwise every embedding is aligned to
        the best method's, so switching methods does not spin the picture, and
        items keep the colour of their position in the best embedding. More than
        two dimensions are shown in the first two principal axes (of the truth, or
        of the best embedding).

        Returns
        -------
        xy : ndarray of shape (n, 2)
        hue_lightness : ndarray of shape (n, 2)
            See :func:`loe_viz.app.colors.position_colors`.
        """
        from .. import metrics as M
        from .colors import principal_plane, project

        method = method or self.shown or self.best_method()
        res = self.results.get(method)
        if res is None or not res.ok:
            raise ValueError(f"no embedding for {method!r}: run it first")
        Z = res.embedding
        if self.aligned_to_truth:
            ref = np.asarray(self.truth, dtype=np.float64)
            Z = M.align(ref, Z)[0][:, :ref.shape[1]]  # in the truth's frame (a higher d's extra axes left out)
        else:
            ref = self.results[self.best_method()].embedding
            if Z is not ref:
                Z, _ = M.align(ref, Z)
        mean, basis = principal_plane(ref)
        xy = project(Z, mean, basis)
        _, hl = position_colors(ref)
        return xy, hl

    @property
    def aligned_to_truth(self) -> bool:
        """Whether :meth:`display_coordinates` aligns the embeddings to the sample's known positions."""
        return self.truth is not None and self.data is not None and self.truth.shape[0] == self.data.n_items

    @property
    def truth_unit(self) -> str:
        """The unit of the bundled sample's true positions ('' for none, or for an upload)."""
        spec = SAMPLES.get(self.sample)
        return spec.unit if spec is not None and self.aligned_to_truth else ""

    def item_labels(self) -> list[str]:
        """Every item's label as text (its index when the file has none)."""
        if self.data is None:
            return []
        return [str(v) for v in np.asarray(self.data.labels).tolist()]

    def display_labels(self) -> list[str]:
        """:meth:`item_labels` as the page shows them: control and bidi-override characters replaced (see
        :func:`loe_viz.app.text.plain`), so a label cannot break a plot's line or reverse a tooltip."""
        return [plain(x) for x in self.item_labels()]

    def embedding_csv(self, method: str | None = None) -> str:
        """A method's embedding as CSV text: ``item,label,x1..xd``, one row per item, as ``loe-viz embed`` writes it
        (:func:`loe_viz.io.writing.write_embedding_table`); :meth:`csv_filename` names the data and the method.

        There is no comment line above the header: ``pandas.read_csv`` read one as the header (a wrongly shaped
        table, without an error), and with ``comment="#"`` it emptied the rows of labels such as ``#ff0000``.
        """
        method = method or self.shown or self.best_method()
        res = self.results.get(method)
        if self.data is None or res is None or not res.ok:
            return "no embedding yet: run a method first\n"
        buf = io.StringIO()
        write_embedding_table(buf, np.asarray(res.embedding), np.array(self.item_labels(), dtype=object))
        return buf.getvalue()

    def csv_filename(self, method: str | None = None) -> str:
        """A file name for :meth:`embedding_csv`."""
        method = method or self.shown or self.best_method() or "embedding"
        return f"{file_stem(self.source, 'triplets')}_{METHOD_LABELS.get(method, method).lower()}_embedding.csv"
