"""The walk-through's computation: configuration in, results out (no state, no UI).

:func:`run_pipeline` validates a :class:`Config` snapshot, prices the run
(:mod:`loe_viz.app.limits`) *before* allocating anything, then draws the
points, answers the comparisons with a recording oracle, fits LOE and scores
the embedding.  It runs on any thread; a :class:`~loe_viz.app.jobs.Token`
passed as ``token`` cancels it (LOE stops at its next progress call).
"""

from __future__ import annotations

import io
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .._format import format_seconds
from ..uncertainty import mostly_noise
from .limits import CONFIRM_BYTES, CONFIRM_SECONDS, MAX_SEED, check_run, check_size, estimate_run, quote_count

__all__ = ["Config", "RecordingOracle", "RecordedTriplets", "Cache", "run_pipeline", "read_points_upload"]


@dataclass
class Config:
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
    upload_token: int = 0
    paper_only: bool = False
    uploaded: np.ndarray | None = field(repr=False, default=None)
    uploaded_name: str = ""


class RecordingOracle:
    """Wraps a :class:`~loe_viz.oracle.TripletOracle` and keeps every answered triplet.

    ``LOE.fit_oracle`` may query the oracle adaptively (MaxMin landmarks); the
    explorer needs the triplets it used for the Sample step and for the
    baselines of the Compare step.  The answers are kept as the wrapped oracle
    returned them (one landmark's ``near`` and ``far`` arrays, no copy) and
    :meth:`record` hands them over as :class:`RecordedTriplets`, which builds the
    ``(m, 3)`` array only when a step asks for it: at n = 2000 that array is 18 MB
    of fresh memory, and writing it took 50 ms of every seed change served.
    """

    def __init__(self, oracle):
        self._oracle = oracle
        #: (order key, block): LOE answers its landmarks on worker threads, so the blocks
        #: arrive in whatever order the threads finish; the key puts them back in one order.
        #: A block is ``(head, near, far)``, or an ``(m, 3)`` array of whole triplets.
        self.blocks: list[tuple[tuple, Any]] = []

    def __getattr__(self, name):
        return getattr(self._oracle, name)

    def landmark_triplets(self, landmarks, per_landmark):
        """Answer and record triplets headed by ``landmarks``."""
        out = self._oracle.landmark_triplets(landmarks, per_landmark)
        self.blocks.append(((-1, 0, len(self.blocks)), out))
        return out

    def uniform_triplets(self, m):
        """Answer and record ``m`` uniformly random triplets."""
        out = self._oracle.uniform_triplets(m)
        self.blocks.append(((-1, 0, len(self.blocks)), out))
        return out

    def comparisons(self, head, per_landmark, seed, tiled=False, out=None):
        """Answer one landmark's comparisons (what ``LOE.fit_oracle`` calls) and record them."""
        near, far = self._oracle.comparisons(head, per_landmark, seed, tiled=tiled, out=out)
        self._record((int(head), 0, int(seed)), head, near, far, owned=out is None)
        return near, far

    def block_comparisons(self, head, others, count, seed, out=None):
        """Answer comparisons among the landmarks (LOE's landmark-block share) and record them."""
        near, far = self._oracle.block_comparisons(head, others, count, seed, out=out)
        self._record((int(head), 1, int(seed)), head, near, far, owned=out is None)
        return near, far

    def _record(self, key, head, near, far, owned) -> None:
        # arrays the oracle allocated for this call are ours to keep; a caller's buffers are copied
        if not owned:
            near, far = near.copy(), far.copy()
        self.blocks.append((key, (int(head), near, far)))  # list.append is atomic: safe from the worker threads

    def record(self) -> "RecordedTriplets":
        """Every recorded triplet, by head, then by draw (the same configuration gives the same
        record, whatever order LOE's threads finished in); the recorder starts empty again."""
        blocks = tuple(b for _, b in sorted(self.blocks, key=lambda kb: kb[0]))
        self.blocks = []
        return RecordedTriplets(blocks)


class RecordedTriplets:
    """The triplets a run answered, kept by head; the ``(m, 3)`` array is built on first use.

    Parameters
    ----------
    blocks : tuple
        In order, each ``(head, near, far)`` (the list-order triplets
        ``(head, near[t], far[t])``) or an ``(m, 3)`` array of triplets.
    """

    def __init__(self, blocks: tuple = ()):
        self._blocks = tuple(blocks)
        self._array = None
        self._lock = threading.Lock()
        self.n_triplets = int(sum(b[1].shape[0] if isinstance(b, tuple) else b.shape[0] for b in self._blocks))

    def __len__(self) -> int:
        return self.n_triplets

    def array(self) -> np.ndarray:
        """The triplets in list order, one ``(m, 3)`` array (built once, then shared: do not modify)."""
        with self._lock:
            if self._array is None:
                self._array = self._build()
            return self._array

    def _build(self) -> np.ndarray:
        dtypes = [(b[1] if isinstance(b, tuple) else b).dtype for b in self._blocks]
        out = np.empty((self.n_triplets, 3), dtype=np.result_type(*dtypes) if dtypes else np.int32)
        p = 0
        for b in self._blocks:
            if isinstance(b, tuple):
                head, near, far = b
                q = p + near.shape[0]
                out[p:q, 0] = head
                out[p:q, 1] = near
                out[p:q, 2] = far
            else:
                q = p + b.shape[0]
                out[p:q] = b
            p = q
        return out

    def agreement(self, Z: np.ndarray) -> float:
        """Fraction of the triplets that the embedding ``Z`` satisfies, ties counting half
        (:func:`loe_viz.metrics.triplet_accuracy` of :meth:`array`, without building it)."""
        from ..kernels import sampling

        if not self.n_triplets:
            return float("nan")
        Z = np.ascontiguousarray(Z, dtype=np.float64)
        good = 0.0
        for b in self._blocks:
            if isinstance(b, tuple):
                good += sampling.head_agreement(Z, b[0], b[1], b[2])
            else:
                good += sampling.triplet_agreement(Z, b) * b.shape[0]
        return good / self.n_triplets


class Cache:
    """One remembered value per slot, reused while its key is unchanged."""

    def __init__(self):
        self._slots: dict[str, tuple[Any, Any]] = {}

    def get(self, slot: str, key, make: Callable[[], Any]):
        hit = self._slots.get(slot)
        if hit is not None and hit[0] == key:
            return hit[1]
        self._slots.pop(slot, None)  # drop the old value before making the new one
        value = make()
        self._slots[slot] = (key, value)
        return value

    def holds(self, slot: str, key) -> bool:
        """Whether :meth:`get` of ``slot`` with ``key`` would reuse the remembered value."""
        hit = self._slots.get(slot)
        return hit is not None and hit[0] == key

    def clear(self) -> None:
        self._slots.clear()


def read_points_upload(content, filename: str) -> np.ndarray:
    """An uploaded point table (CSV/TSV text, or a NumPy ``.npy``) as a float array (n, D)."""
    from .._validation import check_points
    from ..points import load_points

    if content is None or len(content) == 0:
        raise ValueError(f"{filename}: the file is empty")
    if filename.lower().endswith(".npy") and isinstance(content, bytes):
        from ..io.arrays import read_array  # the header's shape is checked against the bytes sent before allocating

        X = read_array(io.BytesIO(content), filename, "the array", {"array_bytes": np.inf}, len(content))
        X = check_points(X, name=filename, min_points=3)
    else:
        X = load_points(content, name=filename)
    from . import limits

    limits.check_columns(X.shape[1], filename)  # before anything of size D x D is computed from it
    # the different rows, counted up to 7 at any row count (np.unique sorts them all): a pass over X for each
    distinct, unlike = 0, np.ones(X.shape[0], dtype=bool)  # the rows unlike every row counted so far
    while distinct < 7 and unlike.any():
        distinct += 1
        unlike &= (X != X[np.argmax(unlike)]).any(axis=1)
    if distinct == 1:
        raise ValueError(f"{filename}: all {X.shape[0]:,} points are the same point, so every distance is 0 "
                         "and there is nothing to compare: upload points at different positions")
    if distinct < 7:
        raise ValueError(f"{filename}: only {distinct} different points among the {X.shape[0]:,} rows; an "
                         "embedding needs at least 7 (5 landmarks and more items)")
    return X


def per_landmark_of(n: int, l: int, unit: str, budget: float) -> int:
    """Comparisons per landmark of ``budget`` in ``unit`` (``total_c``: ⌊c·n·ln n⌋ split over ``l``)."""
    if not np.isfinite(budget) or budget <= 0:
        return 0
    if unit == "per_landmark":
        return int(min(budget, 2.0**62))
    return int(min(np.floor(budget * n * np.log(n)), 2.0**62)) // l


def convert_budget(n: int, l: int, budget: float, old_unit: str, new_unit: str) -> float:
    """``budget`` given in ``old_unit`` expressed in ``new_unit`` (c <-> comparisons per landmark).

    Rounded to what the unit shows: whole comparisons per landmark, c to 3 significant digits.
    """
    if old_unit == new_unit or not np.isfinite(budget) or budget <= 0:
        return float(budget)
    if new_unit == "per_landmark":
        return float(per_landmark_of(n, l, "total_c", budget))
    c = budget * l / (n * np.log(n))
    return float(f"{c:.3g}")


def budget_range(n: int, D: int, d: int, l: int, unit: str, *, landmark_selection: str = "random",
                 n_jobs: int = 1) -> tuple[float, float]:
    """The budgets a run accepts, in ``unit``: at least n/2 comparisons per landmark, at most
    what fits in :data:`~loe_viz.app.limits.MAX_BYTES` (none, the top below the bottom, when too many
    landmarks take too much memory even so: see :func:`most_landmarks`)."""
    from .limits import MAX_BYTES

    need = max(n // 2, 1)
    b0 = estimate_run(n, D, d, l, need, landmark_selection=landmark_selection, n_jobs=n_jobs).bytes
    b1 = estimate_run(n, D, d, l, 2 * need, landmark_selection=landmark_selection, n_jobs=n_jobs).bytes
    # below `need` when even n/2 comparisons per landmark take too much memory: no budget (the range is empty)
    per_hi = need + (MAX_BYTES - b0) / max((b1 - b0) / need, 1e-9)
    per_hi = float(np.floor(min(per_hi, 2.0**62)))
    if unit == "per_landmark":
        return float(need), per_hi
    scale = l / (n * np.log(n))
    # smallest c whose ⌊c n ln n⌋ // l reaches `need`, rounded up to 3 digits; largest rounded down
    lo = float(np.ceil(need * scale * 1000) / 1000)
    while per_landmark_of(n, l, unit, lo) < need:
        lo = float(f"{lo * 1.001:.4g}")
    hi = float(np.floor(per_hi * scale * 10) / 10)
    if hi < lo:  # a narrow range: its top to the lower end's 3 decimals (8,192.5 was below 8,192.562)
        hi = float(np.floor(per_hi * scale * 1000) / 1000)
    return lo, hi


def most_landmarks(n: int, D: int, d: int, unit: str, *, landmark_selection: str = "random",
                   n_jobs: int = 1) -> int:
    """The most landmarks for which :func:`budget_range` holds a budget at ``n`` items (``d + 2`` when
    not even ``d + 3`` have one): each landmark needs n/2 comparisons, and they all take memory."""
    def fits(l: int) -> bool:
        lo, hi = budget_range(n, D, d, l, unit, landmark_selection=landmark_selection, n_jobs=n_jobs)
        return lo <= hi

    least, most = d + 3, max(n - 2, d + 3)
    if not fits(least):
        return d + 2
    while least < most:  # fewer landmarks take less memory: the largest that fits, by bisection
        mid = (least + most + 1) // 2
        least, most = (mid, most) if fits(mid) else (least, mid - 1)
    return least


def landmarks_message(n: int, d: int, l: int, most: int) -> str:
    """Why no budget can run with ``l`` landmarks at ``n`` items (``most``: the most that can)."""
    why = (f"Landmarks ℓ = {l:,} are too many for n = {n:,} items: each landmark needs at least n/2 = "
           f"{max(n // 2, 1):,} comparisons, and together they need more memory than this explorer allows, "
           "whatever the budget")
    if most < d + 3:
        return why + f"; even the fewest, d + 3 = {d + 3}, do: use fewer items"
    return why + f"; at most ℓ = {most:,} landmarks can run at this n"


def budget_message(n: int, l: int, unit: str, budget: float, lo: float, hi: float) -> str:
    """Why ``budget`` cannot run, with the range that can."""
    what = "comparisons per landmark" if unit == "per_landmark" else "c (c·n·ln n comparisons in total)"
    f = (lambda x: f"{x:,.0f}") if unit == "per_landmark" else (lambda x: f"{x:,.6g}")
    return (f"Budget must be between {f(lo)} and {f(hi)} {what} for n = {n:,} items and ℓ = {l:,} landmarks "
            f"(got {f(budget) if abs(budget) < 1e12 else f'{budget:g}'}): each landmark needs at least n/2 comparisons, and a larger budget needs more "
            "memory than this explorer allows")


def _check(token) -> None:
    if token is not None:
        token.check()


def run_pipeline(cfg: Config, cache: Cache, force: bool = False, token=None, n_jobs: int = 1) -> dict:
    """Run the walk-through for ``cfg``; return the state's updates.

    Parameters
    ----------
    cfg : Config
    cache : Cache
        Points, colours, the fit and its scores of the previous run, reused when
        their inputs did not change.
    force : bool, default False
        Start even when the estimate is above the confirmation thresholds.
    token : loe_viz.app.jobs.Token, optional
        Cancels the run (raises :class:`~loe_viz.app.jobs.Cancelled`).
    n_jobs : int, default 1
        Threads of the LOE fit.

    Returns
    -------
    dict
        Parameter values of :class:`~loe_viz.app.state.ExplorerState`: the
        results, or only ``notice`` and ``estimate`` for a run waiting for
        confirmation.

    Raises
    ------
    ValueError
        A configuration that cannot run; the message starts with the name of
        the setting at fault (the seed and the landmarks as the sidebar names them).
    """
    from .. import metrics as M
    from .._validation import check_float, check_int
    from ..loe import LOE
    from ..oracle import TripletOracle
    from . import scoring
    from .colors import position_colors

    # -- validate the scalars (messages start with the parameter's name) ------------
    d = check_int(cfg.d, "d", minimum=1)
    n = check_int(cfg.n, "n", minimum=3)
    check_size(n, d)
    seed = check_int(cfg.seed, "seed")
    if seed < 0:
        raise ValueError(f"Seed must be 0 or more (got {seed})")
    if seed > MAX_SEED:
        raise ValueError(f"Seed must be at most {MAX_SEED:,} (got {quote_count(seed)})")
    temperature = check_float(cfg.temperature, "temperature", minimum=0.0)
    budget = check_float(cfg.budget, "budget")
    l = d + 3 if cfg.n_landmarks is None else check_int(cfg.n_landmarks, "Landmarks ℓ")
    if l < d + 3:  # said in the sidebar's words (its box is "Landmarks ℓ")
        raise ValueError(f"Landmarks ℓ must be at least d + 3 = {d + 3} (got {l})")
    if n < l + 2:
        raise ValueError(
            f"n must be at least ℓ + 2 = {l + 2} (ℓ = {l} landmarks for d = {d}), got {n}"
        )
    if cfg.kind == "uploaded":
        if cfg.uploaded is None:
            raise ValueError("Ground truth “uploaded” needs a point file: upload a CSV first (“Upload points”)")
        rows, D = cfg.uploaded.shape
        if n > rows:
            raise ValueError(f"n must be <= {rows}, the rows of {cfg.uploaded_name or 'the upload'}, got {n}")
        if d > D:
            raise ValueError(f"d must be <= {D}, the columns of {cfg.uploaded_name or 'the upload'}, got {d}")
    else:
        D = d  # make_points checks the kind and its smallest dimension before drawing

    # -- the budget, priced before anything is allocated ------------------------------
    lo, hi = budget_range(n, D, d, l, cfg.budget_unit, landmark_selection=cfg.landmark_selection, n_jobs=n_jobs)
    if lo > hi:  # no budget at all: the landmarks are too many for this n
        most = most_landmarks(n, D, d, cfg.budget_unit, landmark_selection=cfg.landmark_selection, n_jobs=n_jobs)
        raise ValueError(landmarks_message(n, d, l, most))
    per_landmark = per_landmark_of(n, l, cfg.budget_unit, budget)
    if budget < lo or per_landmark < n // 2:
        raise ValueError(budget_message(n, l, cfg.budget_unit, budget, lo, hi))
    est = estimate_run(n, D, d, l, per_landmark, landmark_selection=cfg.landmark_selection, n_jobs=n_jobs)
    try:
        check_run(est)
    except ValueError:  # too much memory: only the budgets that fit (not the bytes, nor the server's setting)
        raise ValueError(budget_message(n, l, cfg.budget_unit, budget, lo, hi)) from None
    if not force and (est.seconds > CONFIRM_SECONDS or est.bytes > CONFIRM_BYTES):
        return {"notice": f"Large run: {est.text}. Press “Run” to start it.", "estimate": est, "error": ""}
    _check(token)

    # -- the ground truth -------------------------------------------------------------
    if cfg.kind == "uploaded":
        uploaded = cfg.uploaded
        key = ("uploaded", cfg.upload_token, n, seed)

        def make():
            if n == rows:
                return uploaded
            idx = np.sort(np.random.default_rng(seed).choice(rows, n, replace=False))
            return np.ascontiguousarray(uploaded[idx])
    else:
        from ..points import make_points
        key = (cfg.kind, n, d, seed)

        def make():
            return make_points(cfg.kind, n, d, random_state=seed)

    X = cache.get("points", key, make)
    colors, hue_lightness = cache.get("colors", key, lambda: position_colors(X))
    _check(token)

    # -- sample and fit -----------------------------------------------------------------
    fit_key = key + (d, temperature, per_landmark, l, cfg.landmark_selection, cfg.offset, bool(cfg.paper_only))

    def fit():
        from .warmup import kernels_ready

        ready = kernels_ready()  # else the time includes compiling the kernels (a server's first fit)
        oracle = TripletOracle(X, temperature=temperature, random_state=seed)
        rec = RecordingOracle(oracle)
        model = LOE(n_components=d, n_landmarks=l, landmark_selection=cfg.landmark_selection,
                    offset=cfg.offset, random_state=seed, n_jobs=n_jobs,
                    refine=None if cfg.paper_only else "auto",
                    # the paper's design: every pair uniform, none spent among the landmarks (LOE's default 2 %)
                    **({"landmark_share": 0.0} if cfg.paper_only else {}))
        t0 = time.perf_counter()
        model.fit_oracle(rec, per_landmark, progress=token)
        seconds = time.perf_counter() - t0
        return oracle, rec.record(), model, seconds, ready

    t_start = time.perf_counter()
    reused = cache.holds("fit", fit_key)  # Run pressed with nothing changed: that fit again
    oracle, recorded, model, fit_seconds, kernels_were_ready = cache.get("fit", fit_key, fit)
    _check(token)

    # -- metrics ----------------------------------------------------------------------------
    def score():
        Z = np.asarray(model.embedding_, dtype=np.float64)
        Zp = Z if Z.shape[1] == D else np.hstack([Z, np.zeros((Z.shape[0], D - Z.shape[1]))])
        aligned, per_point = M.align(X, Zp)
        return {
            "aligned": np.asarray(aligned),
            "point_error": np.asarray(per_point),
            "procrustes": scoring.procrustes(X, Z),
            "triplet_error": scoring.triplet_error(X, Z, seed),
            "train_accuracy": recorded.agreement(Z),
        }

    sc = cache.get("score", fit_key, score)
    # the fit without drawing the comparisons, timed as the Compare step times it: one figure for one fit
    timings = getattr(model.stages_, "timings", {}) or {}
    loe_seconds = float(timings["total"] - timings.get("sampling", 0.0)) if "total" in timings else fit_seconds
    total_seconds = time.perf_counter() - t_start
    ranking = model.stages_.ranking
    unranked = ranking.unranked_items
    metrics = {
        "procrustes": sc["procrustes"],
        "triplet_error": sc["triplet_error"],
        "train_accuracy": sc["train_accuracy"],
        "n_triplets": recorded.n_triplets,
        "per_landmark": per_landmark,
        "n_landmarks": l,
        "fit_seconds": fit_seconds,  # drawing the comparisons from the oracle and fitting them
        "loe_seconds": loe_seconds,  # the fit alone (what the Compare step quotes for LOE)
        "seconds": total_seconds,
        "n": n, "D": D, "d": d,
        "unranked": int(unranked.size),
    }
    config_used = {
        "kind": cfg.kind, "n": n, "d": d, "D": D, "seed": seed, "temperature": temperature,
        "budget_unit": cfg.budget_unit, "budget": budget, "n_landmarks": l,
        "landmark_selection": cfg.landmark_selection, "offset": cfg.offset, "per_landmark": per_landmark,
        "paper_only": bool(cfg.paper_only),
        "uploaded_name": cfg.uploaded_name if cfg.kind == "uploaded" else "",
        "kernels_ready": kernels_were_ready,
    }
    notes = []
    if unranked.size:
        notes.append(f"{unranked.size} item(s) never compared by some landmark (their score is the mean)")
    if not getattr(model.stages_.edm, "converged", True):
        notes.append("the EDM projection stopped before its tolerance")
    if not ranking.converged.all():
        notes.append(f"{int((~ranking.converged).sum())} ranking(s) stopped before converging")
    if mostly_noise(ranking):  # as LOE warns a library user
        notes.append("the answers are close to coin flips: the rankings barely tell the items apart, so the "
                     "embedding is mostly noise")
    status = (f"LOE fitted {recorded.n_triplets:,} comparisons in {format_seconds(loe_seconds)} "
              f"({format_seconds(fit_seconds)} with drawing them from the oracle)")
    if not kernels_were_ready:
        status += " (including compiling the kernels, which happens once)"
    if reused:
        status += "; the fit is the same as before, so its results are shown again"
    if notes:
        status += " — note: " + "; ".join(notes)
    return {
        "points": X, "colors": colors, "hue_lightness": hue_lightness, "oracle": oracle,
        "recorded": recorded, "model": model, "aligned": sc["aligned"],
        "point_error": sc["point_error"], "metrics": metrics, "estimate": est,
        "config_used": config_used, "error": "", "notice": "", "status": status,
    }
