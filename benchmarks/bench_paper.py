"""The paper's experiments (Ghosh, Chen & Yue, NeurIPS 2019), scaled to a 2-core machine.

    python benchmarks/bench_paper.py fig2a         # error vs time, every method, n = 2*10^4, c = 200
    python benchmarks/bench_paper.py fig2b         # time to reach LOE's error, n = 5e3 .. 4e4, c = 50
    python benchmarks/bench_paper.py warmstart     # LOE-STE vs STE from a random start, d = 2 and d = 10
    python benchmarks/bench_paper.py budget        # error vs budget c at n = 5000 (LOE, STE, cblearn's STE)
    python benchmarks/bench_paper.py all           # the four in turn (about 20 to 25 minutes)
    python benchmarks/bench_paper.py all --quick   # tiny sizes, seconds (the smoke test)
    python benchmarks/bench_paper.py fig2a --plot-only   # re-derive the summaries, redraw the HTML

Each experiment writes ``benchmarks/results/paper_<name>.json`` and a standalone Bokeh page
``paper_<name>.html`` (``--output-dir`` to write elsewhere).

Common protocol (the paper's section 5 and loe-algorithm.md sections 4 to 6): ground truth
x ~ N(0, I/(2d)); every answer drawn under the BTL model P("j closer to i") =
sigmoid(D_ik - D_ij) (temperature 1, squared distances); a budget of floor(c n ln n)
comparisons in total. LOE spends it on l = d + 3 random landmarks (floor(budget / l) each,
``LOE.fit_oracle``); the baselines (STE, t-STE, SOE, GNMDS, CKL, with the library's
defaults) are fitted on the same number of uniformly random triplets; LOE-STE
(``LOESTE.fit_oracle``) spends eps of it on LOE's landmarks and the rest on uniform
triplets for STE started from LOE's embedding. Errors: Procrustes disparity on all items,
and the triplet error on 10^4 held-out *noiseless* uniform triplets (the same sample for
every method of a trial). Ground truth, the uniform-triplet oracle, the landmark oracle,
the landmark choice, the random initialisation and the held-out sample each have their
own seed (``--seed`` shifts them all).

Clocks: wall-clock seconds of the fit on one thread per method (``--jobs``), kernels
compiled first. **Drawing the comparisons from the simulated oracle is not counted** for
any method: the baselines get their triplets in memory (the sampling time is recorded),
and LOE's and LOE-STE's own sampling share (``timings["sampling"]``) is subtracted.
Curves are recorded through the estimators' ``callback`` after every L-BFGS iteration;
the time spent computing the errors inside the callback is taken off the clock. Process
CPU seconds are recorded beside wall seconds, and every ratio is reported in both: other
jobs on a shared machine inflate wall times, CPU times much less.

What is scaled, and why (at the paper's sizes each figure would take hours on 2 cores;
here each must finish in minutes):

* ``fig2a``: the paper's n = 10^5, c = 200 (2.3*10^8 triplets per method; STE alone took
  9 minutes on a quarter of that, n = 10^5 with c = 50, in ``bench_baselines.py --large``)
  becomes n = 2*10^4, c = 200 (4*10^7 triplets), every iterative method capped at
  ``--cap`` = 100 s: the figure takes about 6.5 minutes.
* ``fig2b``: the paper's n in {2, 4, 6, 8, 10} * 10^4 with c = 200 becomes
  n in {5, 10, 20, 40} * 10^3 with c = 50; each baseline stops once its Procrustes error
  is at or below LOE's, or after ``--cap`` = 60 s ("not reached within 60 s").
  3 trials per n, like the paper; the headline is the median over the trials at the
  largest n of the fastest baseline's time to LOE's error over LOE's time.
* ``warmstart``: the paper's (d = 2, n = 10^5, c = 50, eps = 0.3) becomes n = 4*10^4, and
  (d = 10, n = 2*10^4, c = 200, eps = 0.2) becomes n = 5000 (a triplet costs STE about 3
  times as much at d = 10 as at d = 2); STE and LOE-STE each capped at ``--cap`` = 150 s.
  One trial each (the paper: 3).
* ``budget`` (not a figure of the paper: a check of its rate, error ~ 1/sqrt(c) for the
  distances, so about c^-1 for the squared Procrustes disparity and c^-1/2 for the triplet
  error): n = 5000, c in {5, 10, 20, 50, 100, 200}, 3 seeds, STE capped at 60 s.
  cblearn's STE (optional: skipped with a message when ``cblearn`` is not importable, or
  with ``--no-cblearn``) runs on the very same triplets from the same start for
  c <= 10, where its n x n matrices fit (about 0.2 GB each at n = 5000).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import _plots  # noqa: E402
import _runinfo  # noqa: E402

import loe_viz as lv  # noqa: E402
from loe_viz.methods import BASELINES as BASELINE_NAMES, METHODS  # noqa: E402

RESULTS = os.path.join(HERE, "results")
BASELINES = {name: METHODS[name].estimator for name in BASELINE_NAMES}
LOESTE = METHODS["LOESTE"].estimator
EXPERIMENTS = ("fig2a", "fig2b", "warmstart", "budget")

#: Full-size settings (see the module docstring for how they scale the paper's).
FULL = {
    "fig2a": {"n": 20_000, "d": 2, "c": 200.0, "eps": 0.3, "cap": 100.0,
              "paper": {"n": 100_000, "d": 2, "c": 200}},
    "fig2b": {"sizes": [5_000, 10_000, 20_000, 40_000], "d": 2, "c": 50.0, "cap": 60.0, "trials": 3,
              "paper": {"sizes": [20_000, 40_000, 60_000, 80_000, 100_000], "d": 2, "c": 200, "trials": 3}},
    "warmstart": {"settings": [{"d": 2, "n": 40_000, "c": 50.0, "eps": 0.3,
                                "paper": {"n": 100_000, "c": 50, "eps": 0.3}},
                               {"d": 10, "n": 5_000, "c": 200.0, "eps": 0.2,
                                "paper": {"n": 20_000, "c": 200, "eps": 0.2}}],
                  "cap": 150.0},
    "budget": {"n": 5_000, "d": 2, "budgets": [5.0, 10.0, 20.0, 50.0, 100.0, 200.0], "seeds": 3, "cap": 60.0,
               "cblearn_max_c": 10.0},
}

#: Tiny settings for ``--quick`` (seconds in all; checks the plumbing, not the figures).
QUICK = {
    "fig2a": {"n": 400, "d": 2, "c": 30.0, "eps": 0.3, "cap": 1.0, "paper": FULL["fig2a"]["paper"]},
    "fig2b": {"sizes": [300, 600], "d": 2, "c": 30.0, "cap": 1.0, "trials": 2, "paper": FULL["fig2b"]["paper"]},
    "warmstart": {"settings": [{"d": 2, "n": 400, "c": 30.0, "eps": 0.3, "paper": {"n": 100_000, "c": 50, "eps": 0.3}},
                               {"d": 10, "n": 200, "c": 50.0, "eps": 0.2,
                                "paper": {"n": 20_000, "c": 200, "eps": 0.2}}],
                  "cap": 1.0},
    "budget": {"n": 300, "d": 2, "budgets": [10.0, 30.0], "seeds": 2, "cap": 1.0, "cblearn_max_c": 10.0},
}

N_TEST = 10_000


# --------------------------------------------------------------------------- bookkeeping
def _load():
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except OSError:  # pragma: no cover - not on Linux
        return None


def _machine() -> dict:
    import numba
    import scipy

    return {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
            "numpy": np.__version__, "scipy": scipy.__version__, "numba": numba.__version__,
            "loe_viz": lv.__version__, "code": _runinfo.code_version()}


def _json_default(obj):
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def _save(path: str, data: dict) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(data, fh, indent=1, default=_json_default)
    os.replace(tmp, path)


def _log(msg: str) -> None:
    print(msg, flush=True)


def trial_seeds(base: int) -> dict:
    """Distinct seeds for every random ingredient of one trial."""
    names = ("truth", "oracle_uniform", "oracle_landmark", "landmarks", "init", "test")
    return {k: 1000 * int(base) + i for i, k in enumerate(names)}


def have_cblearn(args) -> bool:
    if args.no_cblearn:
        return False
    try:
        import cblearn  # noqa: F401
    except ImportError:
        _log("cblearn is not importable: its runs are skipped (pip install cblearn)")
        return False
    return True


# --------------------------------------------------------------------------- one trial
class Problem:
    """Ground truth, oracles and the held-out noiseless triplets of one trial.

    Parameters
    ----------
    n, d : int
        Items and dimension.
    seeds : dict
        From :func:`trial_seeds`.
    n_test : int
        Held-out noiseless triplets for the triplet error.
    """

    def __init__(self, n: int, d: int, seeds: dict, n_test: int = N_TEST):
        self.n, self.d, self.seeds = int(n), int(d), seeds
        self.X = lv.make_points("gaussian", self.n, self.d, random_state=seeds["truth"])
        self.test = lv.TripletOracle(self.X, temperature=0.0, random_state=seeds["test"]).uniform_triplets(n_test)

    def oracle(self, kind: str) -> lv.TripletOracle:
        """A fresh BTL oracle (temperature 1) seeded for ``kind`` ("uniform" or "landmark")."""
        return lv.TripletOracle(self.X, temperature=1.0, random_state=self.seeds[f"oracle_{kind}"])

    def uniform(self, m: int):
        """``m`` uniform BTL triplets and the seconds it took to draw them."""
        t0 = time.perf_counter()
        T = self.oracle("uniform").uniform_triplets(m)
        return T, time.perf_counter() - t0

    def init(self, scale: float = 0.1) -> np.ndarray:
        """The random start of the iterative methods (the estimators' default scale)."""
        return np.random.default_rng(self.seeds["init"]).normal(scale=scale, size=(self.n, self.d))

    def errors(self, Z) -> tuple[float, float]:
        """Procrustes error on all items and the error on the held-out noiseless triplets."""
        return lv.procrustes_error(self.X, Z), 1.0 - lv.triplet_accuracy(Z, self.test)


class Trace:
    """Errors of a fit's iterates against time, recorded by the estimator's callback.

    The time spent computing the errors is subtracted from the clock. With
    ``target``, the callback stops the fit once the Procrustes error is at or
    below it.
    """

    def __init__(self, problem: Problem, target: float | None = None):
        self.problem = problem
        self.target = target
        self.rows = {"iteration": [], "elapsed": [], "cpu": [], "procrustes": [], "triplet_error": []}
        self.start()

    def start(self) -> None:
        self._t0, self._c0 = time.perf_counter(), time.process_time()
        self._wall_off = self._cpu_off = 0.0

    def clock(self) -> tuple[float, float]:
        """Wall and CPU seconds since :meth:`start`, without the error computations."""
        return (time.perf_counter() - self._t0 - self._wall_off,
                time.process_time() - self._c0 - self._cpu_off)

    def record(self, iteration: int, Z, elapsed: float, cpu: float) -> float:
        t, c = time.perf_counter(), time.process_time()
        p, e = self.problem.errors(Z)
        for key, v in zip(self.rows, (int(iteration), elapsed, cpu, p, e)):
            self.rows[key].append(v)
        self._wall_off += time.perf_counter() - t
        self._cpu_off += time.process_time() - c
        return p

    def __call__(self, iteration: int, Z) -> bool:
        elapsed, cpu = self.clock()
        p = self.record(iteration, Z, elapsed, cpu)
        return self.target is not None and p <= self.target

    def shift(self, start: int, seconds: float) -> None:
        """Take ``seconds`` (e.g. sampling) off the clock of the points from index ``start`` on."""
        for key in ("elapsed", "cpu"):
            self.rows[key][start:] = [v - seconds for v in self.rows[key][start:]]

    def close(self, iteration: int, procrustes: float, triplet_error: float, elapsed: float, cpu: float) -> None:
        """Add the returned embedding's errors when they differ from the last iterate's.

        A converged L-BFGS-B run may return a point after the last iteration
        the callback saw; the curve then ends at the errors the fit returned.
        """
        rows = self.rows
        if rows["iteration"] and (rows["procrustes"][-1], rows["triplet_error"][-1]) == (procrustes, triplet_error):
            return
        for key, v in zip(rows, (int(iteration), elapsed, cpu, procrustes, triplet_error)):
            rows[key].append(v)

    def reach(self, target: float, key: str = "procrustes"):
        """First elapsed time at which ``key`` is at or below ``target`` (None if never)."""
        return reach(self.rows, target, key)


def reach(curve: dict, target: float, key: str = "procrustes", clock: str = "elapsed"):
    """First ``curve[clock]`` (wall ``"elapsed"`` or ``"cpu"``) at which ``curve[key] <= target`` (None if never)."""
    for t, v in zip(curve[clock], curve[key]):
        if v <= target:
            return t
    return None


def _ratio(a, b):
    return None if a is None or b is None or b <= 0 else a / b


def loe_cpu(loe: dict) -> float:
    """LOE's CPU seconds without its sampling (whose wall time is its CPU time on one thread)."""
    return loe.get("cpu", loe["cpu_with_sampling"] - loe["timings"]["sampling"])


def run_loe(problem: Problem, c: float, jobs: int) -> dict:
    """LOE on floor(c n ln n) landmark comparisons; its time excludes drawing them."""
    d = problem.d
    l = d + 3
    total = lv.total_budget(problem.n, c)
    per = total // l
    model = lv.LOE(n_components=d, random_state=problem.seeds["landmarks"], n_jobs=jobs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        c0 = time.process_time()
        try:
            model.fit_oracle(problem.oracle("landmark"), per)
        except lv.DimensionError as exc:
            return {"error": str(exc), "per_landmark": per, "comparisons": per * l}
        cpu = time.process_time() - c0
    tm = dict(model.stages_.timings)
    p, e = problem.errors(model.embedding_)
    return {"time": tm["total"] - tm["sampling"], "time_with_sampling": tm["total"],
            "cpu": cpu - tm["sampling"], "cpu_with_sampling": cpu,
            "timings": tm, "landmarks": model.landmarks_.tolist(), "n_landmarks": l, "per_landmark": per,
            "comparisons": per * l, "procrustes": p, "triplet_error": e,
            "warnings": sorted({str(w.message) for w in caught})}


def run_baseline(name: str, problem: Problem, T, cap: float, jobs: int, target: float | None = None,
                 keep_curve: bool = True) -> dict:
    """One baseline from the trial's random start, capped at ``cap`` seconds."""
    X0 = problem.init()
    trace = Trace(problem, target)
    trace.record(0, X0, 0.0, 0.0)
    est = BASELINES[name](n_components=problem.d, time_budget=cap, callback=trace, n_jobs=jobs)
    trace.start()
    est.fit(T, n_items=problem.n, init=X0)
    wall, cpu = trace.clock()
    p, e = problem.errors(est.embedding_)
    trace.close(est.n_iter_, p, e, wall, cpu)
    out = {"time": wall, "cpu": cpu, "iterations": est.n_iter_, "evaluations": est.n_evals_,
           "stop_reason": est.stop_reason_, "procrustes": p, "triplet_error": e, "cap": cap}
    if keep_curve:
        out["curve"] = trace.rows
    if target is not None:
        out["time_to_target"] = trace.reach(target)
    return out


def run_loeste(problem: Problem, total: int, eps: float, cap: float, jobs: int, seconds_per_sample: float) -> dict:
    """LOE-STE (``LOESTE.fit_oracle``) on ``total`` comparisons; the sampling is taken off its clock.

    Its ``time_budget`` covers sampling too, so it is set to ``cap`` plus the
    expected sampling time: the STE stage then stops about ``cap`` seconds of
    computation after the start.
    """
    trace = Trace(problem)
    model = LOESTE(n_components=problem.d, eps=eps, callback=trace,
                   time_budget=cap + seconds_per_sample * total,
                   loe_params={"n_jobs": jobs, "random_state": problem.seeds["landmarks"]},
                   ste_params={"n_jobs": jobs})
    trace.start()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model.fit_oracle(problem.oracle("landmark"), total)
        except lv.DimensionError as exc:
            return {"error": str(exc), "eps": eps}
    wall, cpu = trace.clock()
    loe_sampling = model.loe_.stages_.timings["sampling"]
    uniform_sampling = model.timings_["sampling"]
    trace.shift(0, loe_sampling)
    trace.shift(1, uniform_sampling)
    sampling = loe_sampling + uniform_sampling
    p, e = problem.errors(model.embedding_)
    trace.close(model.n_iter_, p, e, wall - sampling, cpu - sampling)
    loe_p, loe_e = trace.rows["procrustes"][0], trace.rows["triplet_error"][0]
    return {"time": wall - sampling, "time_with_sampling": wall, "cpu_with_sampling": cpu, "eps": eps,
            "loe_time": trace.rows["elapsed"][0], "loe_procrustes": loe_p, "loe_triplet_error": loe_e,
            "sampling": {"landmark": loe_sampling, "uniform": uniform_sampling},
            "landmark_comparisons": model.n_landmark_triplets_, "ste_triplets": model.n_ste_triplets_,
            "iterations": model.n_iter_, "stop_reason": model.stop_reason_, "procrustes": p, "triplet_error": e,
            "cap": cap, "curve": trace.rows, "warnings": sorted({str(w.message) for w in caught})}


def run_cblearn_ste(problem: Problem, T) -> dict:
    """cblearn's STE (scipy backend, default settings) on the same triplets from the same start."""
    from cblearn import embedding as cbe

    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl is a dependency of loe_viz
        import contextlib

        def threadpool_limits(**_):
            return contextlib.nullcontext()

    T64 = np.asarray(T, dtype=np.int64)
    est = cbe.STE(n_components=problem.d, random_state=problem.seeds["init"])
    with threadpool_limits(limits=1, user_api="blas"):  # like ours: BLAS on one thread
        t0, c0 = time.perf_counter(), time.process_time()
        est.fit(T64, init=problem.init(), n_objects=problem.n)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    p, e = problem.errors(est.embedding_)
    return {"time": wall, "cpu": cpu, "iterations": int(est.n_iter_), "procrustes": p, "triplet_error": e}


def warm_up(jobs: int) -> float:
    """Compile (or load from numba's cache) every kernel before anything is timed."""
    t0 = time.perf_counter()
    problem = Problem(80, 2, trial_seeds(999), n_test=100)
    T, _ = problem.uniform(3000)
    for name in BASELINES:
        run_baseline(name, problem, T, cap=5.0, jobs=jobs)
    run_loe(problem, 30, jobs)
    run_loeste(problem, lv.total_budget(80, 30), 0.3, 5.0, jobs, 0.0)
    return time.perf_counter() - t0


# --------------------------------------------------------------------------- experiments
def fig2a(cfg: dict, args) -> dict:
    """Error against time for every method on one budget (the paper's Figure 2(a))."""
    n, d, c, cap, eps = cfg["n"], cfg["d"], cfg["c"], cfg["cap"], cfg["eps"]
    seeds = trial_seeds(args.seed)
    problem = Problem(n, d, seeds, args.n_test)
    total = lv.total_budget(n, c)
    _log(f"fig2a: n={n}, d={d}, c={c:g}: {total:,} comparisons per method, cap {cap:g} s; load {_load()}")
    loe = run_loe(problem, c, args.jobs)
    _log(f"  LOE: {loe['time']:.2f} s (+{loe['timings']['sampling']:.2f} s sampling), Procrustes "
         f"{loe['procrustes']:.4f}, triplet error {loe['triplet_error']:.4f}")
    T, t_sample = problem.uniform(total)
    _log(f"  {total:,} uniform triplets drawn in {t_sample:.1f} s")
    methods = {}
    for name in BASELINES:
        r = run_baseline(name, problem, T, cap, args.jobs)
        methods[name] = r
        _log(f"  {name}: {r['time']:.1f} s, {r['iterations']} iterations ({r['stop_reason']}), Procrustes "
             f"{r['procrustes']:.4f}, triplet error {r['triplet_error']:.4f}; load {_load()}")
    del T
    r = run_loeste(problem, total, eps, cap, args.jobs, t_sample / total)
    methods["LOE-STE"] = r
    _log(f"  LOE-STE (eps {eps:g}): {r['time']:.1f} s (LOE part {r['loe_time']:.2f} s, Procrustes "
         f"{r['loe_procrustes']:.4f}), {r['iterations']} STE iterations ({r['stop_reason']}), Procrustes "
         f"{r['procrustes']:.4f}, triplet error {r['triplet_error']:.4f}")
    res = {"protocol": {**cfg, "total_comparisons": total, "uniform_sampling_seconds": t_sample, "seeds": seeds,
                        "jobs": args.jobs, "n_test": args.n_test},
           "loe": loe, "methods": methods}
    summarise_fig2a(res)
    s = res["summary"]
    if s["fastest_baseline"]:
        _log(f"  fastest baseline to LOE's Procrustes error: {s['fastest_baseline']}, "
             f"{s['fastest_baseline_time_to_loe_procrustes']:.1f} s = {s['ratio']:.1f}x LOE's {loe['time']:.1f} s "
             f"(CPU time: {_plots.fmt(s['cpu_ratio'], '.1f')}x, {s['cpu_fastest_baseline']})")
    else:
        _log(f"  no baseline reached LOE's Procrustes error within {cap:g} s")
    return res


def _fastest(times: dict):
    reached = {k: t for k, t in times.items() if t is not None}
    if not reached:
        return None, None
    best = min(reached, key=reached.get)
    return best, reached[best]


def summarise_fig2a(res: dict) -> None:
    """Times to LOE's errors (wall and CPU) and the fastest baseline, from the recorded curves."""
    loe = res["loe"]
    for r in res["methods"].values():
        c = r["curve"]
        r["time_to_loe_procrustes"] = reach(c, loe["procrustes"])
        r["time_to_loe_triplet_error"] = reach(c, loe["triplet_error"], "triplet_error")
        r["ratio_to_loe_time"] = _ratio(r["time_to_loe_procrustes"], loe["time"])
        r["cpu_to_loe_procrustes"] = reach(c, loe["procrustes"], clock="cpu")
        r["cpu_ratio_to_loe"] = _ratio(r["cpu_to_loe_procrustes"], loe_cpu(loe))
    base = {k: v for k, v in res["methods"].items() if k in BASELINES}
    fastest, t = _fastest({k: v["time_to_loe_procrustes"] for k, v in base.items()})
    cpu_fastest, ct = _fastest({k: v["cpu_to_loe_procrustes"] for k, v in base.items()})
    res["summary"] = {"fastest_baseline": fastest, "fastest_baseline_time_to_loe_procrustes": t,
                      "ratio": _ratio(t, loe["time"]), "loe_cpu": loe_cpu(loe),
                      "cpu_fastest_baseline": cpu_fastest, "cpu_fastest_baseline_to_loe_procrustes": ct,
                      "cpu_ratio": _ratio(ct, loe_cpu(loe))}


def fig2b(cfg: dict, args) -> dict:
    """LOE's time and each baseline's time to reach LOE's Procrustes error, against n (Figure 2(b))."""
    d, c, cap = cfg["d"], cfg["c"], cfg["cap"]
    rows = []
    _log(f"fig2b: n in {cfg['sizes']}, d={d}, c={c:g}, {cfg['trials']} trial(s); baselines stop at LOE's "
         f"Procrustes error or after {cap:g} s")
    for trial in range(cfg["trials"]):
        seeds = trial_seeds(args.seed + trial)
        for n in cfg["sizes"]:
            problem = Problem(n, d, seeds, args.n_test)
            total = lv.total_budget(n, c)
            row = {"n": n, "trial": trial, "seeds": seeds, "total_comparisons": total}
            loe = run_loe(problem, c, args.jobs)
            if "error" in loe:
                _log(f"  trial {trial} n={n}: LOE failed: {loe['error']}")
                rows.append({**row, "loe": loe, "methods": {}})
                continue
            target = loe["procrustes"]
            T, t_sample = problem.uniform(total)
            line = f"  trial {trial} n={n:,} ({total:,} comparisons): LOE {loe['time']:.2f} s, Procrustes {target:.4f};"
            methods = {}
            for name in BASELINES:
                r = run_baseline(name, problem, T, cap, args.jobs, target=target)
                t = r["time_to_target"]
                methods[name] = r
                line += f" {name} " + (f"{t:.1f} s" if t is not None else f">{cap:g} s")
            del T
            _log(line + f"; load {_load()}")
            rows.append({**row, "uniform_sampling_seconds": t_sample, "loe": loe, "methods": methods})
    res = {"protocol": {**cfg, "jobs": args.jobs, "n_test": args.n_test}, "rows": rows}
    summarise_fig2b(res)
    s = res["summary"]
    if s.get("ratio") is not None:
        _log(f"  headline: at n={s['n']:,} the fastest baseline needs {s['ratio']:.1f}x LOE's time to reach LOE's "
             f"Procrustes error (median over {len(s['trials'])} trial(s): "
             + ", ".join(f"{_plots.fmt(t['ratio'], '.1f')}x {t['fastest_baseline']}" for t in s["trials"])
             + f"); CPU time {_plots.fmt(s['cpu_ratio'], '.1f')}x")
    elif s.get("n") is not None:
        _log(f"  headline: at n={s['n']:,} no baseline reached LOE's error within {cap:g} s")
    return res


def _median(values):
    vals = [v for v in values if v is not None]
    return float(np.median(vals)) if vals else None


def summarise_fig2b(res: dict) -> None:
    """Each baseline's time (wall and CPU) to LOE's Procrustes error; the headline at the largest n.

    The headline ratio is, per trial, the fastest baseline's time to LOE's
    error over LOE's time, then the median over the trials.
    """
    cap = res["protocol"]["cap"]
    for row in res["rows"]:
        row.setdefault("trial", 0)
        loe = row["loe"]
        if "error" in loe:
            continue
        for r in row["methods"].values():
            r["time_to_target"] = reach(r["curve"], loe["procrustes"])
            r["cpu_to_target"] = reach(r["curve"], loe["procrustes"], clock="cpu")
            r["ratio_to_loe_time"] = _ratio(r["time_to_target"], loe["time"])
            r["cpu_ratio_to_loe"] = _ratio(r["cpu_to_target"], loe_cpu(loe))
    ok = [r for r in res["rows"] if "error" not in r["loe"]]
    summary = {"n": None, "ratio": None, "cpu_ratio": None, "trials": []}
    if ok:
        n_max = max(r["n"] for r in ok)
        for row in (r for r in ok if r["n"] == n_max):
            loe = row["loe"]
            fastest, t = _fastest({k: v["time_to_target"] for k, v in row["methods"].items()})
            cpu_fastest, ct = _fastest({k: v["cpu_to_target"] for k, v in row["methods"].items()})
            summary["trials"].append({
                "trial": row["trial"], "loe_time": loe["time"], "loe_cpu": loe_cpu(loe),
                "loe_procrustes": loe["procrustes"], "fastest_baseline": fastest, "fastest_time": t,
                "ratio": _ratio(t, loe["time"]), "cpu_fastest_baseline": cpu_fastest, "cpu_fastest_time": ct,
                "cpu_ratio": _ratio(ct, loe_cpu(loe)),
                "ratio_lower_bound": cap / loe["time"] if fastest is None else None})
        trials = summary["trials"]
        summary.update(n=n_max, ratio=_median([t["ratio"] for t in trials]),
                       cpu_ratio=_median([t["cpu_ratio"] for t in trials]),
                       loe_time=_median([t["loe_time"] for t in trials]),
                       not_reached_trials=sum(t["fastest_baseline"] is None for t in trials))
    # medians over the trials, per n, for the plot and the table
    per_n = []
    for n in sorted({r["n"] for r in ok}):
        rs = [r for r in ok if r["n"] == n]
        entry = {"n": n, "trials": len(rs), "loe_time": _median([r["loe"]["time"] for r in rs]),
                 "loe_procrustes": _median([r["loe"]["procrustes"] for r in rs])}
        for name in BASELINES:
            times = [r["methods"][name]["time_to_target"] for r in rs]
            # a run that never reached the target counts as slower than any that did
            ranked = sorted(times, key=lambda t: math.inf if t is None else t)
            mid = ranked[(len(ranked) - 1) // 2] if ranked else None
            entry[name] = mid
        per_n.append(entry)
    summary["per_n_median"] = per_n
    res["summary"] = summary


def _speedups(ste_curve, lst_curve, key, lo, hi, k=6):
    """STE's time over LOE-STE's to reach each of ``k`` error levels from ``hi`` down to ``lo``."""
    out = []
    if not (lo > 0 and hi > lo):
        return out
    for level in np.geomspace(hi, lo, k):
        a, b = reach(ste_curve, level, key), reach(lst_curve, level, key)
        out.append({"error": float(level), "ste": a, "loe_ste": b, "ratio": _ratio(a, b)})
    return out


def warmstart(cfg: dict, args) -> dict:
    """LOE-STE against STE from a random start, error against time (the paper's warm-start figure)."""
    cap = cfg["cap"]
    out = []
    for k, s in enumerate(cfg["settings"]):
        n, d, c, eps = s["n"], s["d"], s["c"], s["eps"]
        seeds = trial_seeds(args.seed + k)
        problem = Problem(n, d, seeds, args.n_test)
        total = lv.total_budget(n, c)
        _log(f"warmstart: d={d}, n={n:,}, c={c:g}, eps={eps:g}: {total:,} comparisons, cap {cap:g} s; load {_load()}")
        T, t_sample = problem.uniform(total)
        ste = run_baseline("STE", problem, T, cap, args.jobs)
        del T
        _log(f"  STE: {ste['time']:.1f} s, {ste['iterations']} iterations ({ste['stop_reason']}), Procrustes "
             f"{ste['procrustes']:.4f}, triplet error {ste['triplet_error']:.4f}")
        lst = run_loeste(problem, total, eps, cap, args.jobs, t_sample / total)
        res = {"setting": s, "total_comparisons": total, "uniform_sampling_seconds": t_sample, "seeds": seeds,
               "STE": ste, "LOE-STE": lst}
        if "error" in lst:
            _log(f"  LOE-STE failed: {lst['error']}")
            out.append(res)
            continue
        _log(f"  LOE-STE: {lst['time']:.1f} s (LOE {lst['loe_time']:.2f} s, Procrustes {lst['loe_procrustes']:.4f}), "
             f"{lst['iterations']} STE iterations ({lst['stop_reason']}), Procrustes {lst['procrustes']:.4f}, "
             f"triplet error {lst['triplet_error']:.4f}")
        _summarise_setting(res)
        for key in ("procrustes", "triplet_error"):
            r = res[key]
            if r["ratio_to_ste_final"] is not None:
                msg = (f"LOE-STE reaches STE's final {key} ({r['ste_final']:.4f}) in "
                       f"{r['loe_ste_time_to_ste_final']:.1f} s against STE's {r['ste_time_to_ste_final']:.1f} s: "
                       f"{r['ratio_to_ste_final']:.2f}x sooner")
            else:
                msg = (f"LOE-STE does not reach STE's final {key} ({r['ste_final']:.4f}; its own final "
                       f"{r['loe_ste_final']:.4f}); to {r['common_level']:.4f}: STE "
                       f"{_plots.fmt(r['ste_time_to_common'], '.1f')} s, LOE-STE "
                       f"{_plots.fmt(r['loe_ste_time_to_common'], '.1f')} s, ratio "
                       f"{_plots.fmt(r['ratio_to_common'], '.2f')}")
            _log("  " + msg + f" (CPU-time ratio to the common level {_plots.fmt(r['cpu_ratio_to_common'], '.2f')})")
        out.append(res)
    return {"protocol": {**cfg, "jobs": args.jobs, "n_test": args.n_test}, "settings": out}


def _summarise_setting(res: dict) -> None:
    """For both errors: who reaches STE's final error, and the common level, when (wall and CPU)."""
    ste, lst = res["STE"], res["LOE-STE"]
    for key in ("procrustes", "triplet_error"):
        ste_final, lst_final = ste[key], lst[key]
        a = reach(ste["curve"], ste_final, key)
        b = reach(lst["curve"], ste_final, key)
        common = max(ste_final, lst_final)
        ca, cb = reach(ste["curve"], common, key), reach(lst["curve"], common, key)
        cpu_a, cpu_b = reach(ste["curve"], common, key, "cpu"), reach(lst["curve"], common, key, "cpu")
        res[key] = {
            "ste_final": ste_final, "loe_ste_final": lst_final,
            "ste_time_to_ste_final": a, "loe_ste_time_to_ste_final": b, "ratio_to_ste_final": _ratio(a, b),
            "common_level": common, "ste_time_to_common": ca, "loe_ste_time_to_common": cb,
            "ratio_to_common": _ratio(ca, cb), "ste_cpu_to_common": cpu_a, "loe_ste_cpu_to_common": cpu_b,
            "cpu_ratio_to_common": _ratio(cpu_a, cpu_b),
            "speedups": _speedups(ste["curve"], lst["curve"], key, common, lst["loe_" + key]),
        }


def summarise_warmstart(res: dict) -> None:
    """Re-derive every setting's ratios from the recorded curves."""
    for r in res["settings"]:
        if "error" not in r["LOE-STE"]:
            _summarise_setting(r)


def _slope(cs, errs):
    cs, errs = np.asarray(cs, float), np.asarray(errs, float)
    ok = np.isfinite(errs) & (errs > 0)
    if ok.sum() < 2 or np.unique(cs[ok]).size < 2:
        return None
    return float(np.polyfit(np.log(cs[ok]), np.log(errs[ok]), 1)[0])


def budget(cfg: dict, args) -> dict:
    """Error against the budget multiplier c at fixed n, for LOE and STE (and cblearn's STE)."""
    n, d, cap = cfg["n"], cfg["d"], cfg["cap"]
    use_cb = have_cblearn(args)
    runs = []
    _log(f"budget: n={n:,}, d={d}, c in {cfg['budgets']}, {cfg['seeds']} seed(s), STE cap {cap:g} s"
         + (f", cblearn's STE for c <= {cfg['cblearn_max_c']:g} (seed 0)" if use_cb else ""))
    for r in range(cfg["seeds"]):
        seeds = trial_seeds(args.seed + r)
        problem = Problem(n, d, seeds, args.n_test)
        for c in cfg["budgets"]:
            total = lv.total_budget(n, c)
            loe = run_loe(problem, c, args.jobs)
            T, t_sample = problem.uniform(total)
            ste = run_baseline("STE", problem, T, cap, args.jobs, keep_curve=False)
            row = {"seed": r, "seeds": seeds, "c": c, "total_comparisons": total, "uniform_sampling_seconds": t_sample,
                   "LOE": loe, "STE": ste}
            line = (f"  seed {r} c={c:g}: LOE {_plots.fmt(loe.get('procrustes'), '.4f')} / "
                    f"{_plots.fmt(loe.get('triplet_error'), '.4f')} ({_plots.fmt(loe.get('time'), '.2f')} s), "
                    f"STE {ste['procrustes']:.4f} / {ste['triplet_error']:.4f} ({ste['time']:.1f} s, "
                    f"{ste['stop_reason']})")
            if use_cb and r == 0 and c <= cfg["cblearn_max_c"]:
                cb = run_cblearn_ste(problem, T)
                row["cblearn STE"] = cb
                line += f", cblearn STE {cb['procrustes']:.4f} / {cb['triplet_error']:.4f} ({cb['time']:.1f} s)"
            del T
            _log(line)
            runs.append(row)
    summary = {}
    for method in ("LOE", "STE"):
        for key in ("procrustes", "triplet_error"):
            pts = [(row["c"], row[method].get(key, np.nan)) for row in runs]
            cs = sorted({c for c, _ in pts})
            means = [float(np.mean([e for c2, e in pts if c2 == c])) for c in cs]
            summary[f"{method}_{key}"] = {
                "c": cs, "mean": means,
                "std": [float(np.std([e for c2, e in pts if c2 == c])) for c in cs],
                "slope_of_means": _slope(cs, means),
                "slope_all_points": _slope([p[0] for p in pts], [p[1] for p in pts]),
            }
    for key in ("procrustes", "triplet_error"):
        s = summary[f"LOE_{key}"]
        theory = -1.0 if key == "procrustes" else -0.5
        _log(f"  LOE {key}: slope of log error vs log c = {_plots.fmt(s['slope_of_means'], '.2f')} (means), "
             f"{_plots.fmt(s['slope_all_points'], '.2f')} (all points); rate theory {theory:g}; STE "
             f"{_plots.fmt(summary[f'STE_{key}']['slope_of_means'], '.2f')}")
    return {"protocol": {**cfg, "cblearn": use_cb, "jobs": args.jobs, "n_test": args.n_test}, "runs": runs,
            "summary": summary}


RUNNERS = {"fig2a": fig2a, "fig2b": fig2b, "warmstart": warmstart, "budget": budget}
SUMMARIES = {"fig2a": summarise_fig2a, "fig2b": summarise_fig2b, "warmstart": summarise_warmstart}


# --------------------------------------------------------------------------- pages
def _intro(title: str, data: dict, text: str) -> str:
    m = data.get("machine", {})
    quick = " <b>(--quick: tiny sizes, not a measurement)</b>" if data.get("quick") else ""
    return (f"<h2>{title}{quick}</h2><p>{text}</p>"
            f"<p style='font-size:11px'>Command: <code>{data.get('command', '')}</code>; {m.get('cpus')} cores; "
            f"load average {data.get('load_start')} at the start, {data.get('load_end')} at the end; "
            f"loe_viz {m.get('code')}; numba {m.get('numba')}; {data.get('date', '')}.</p>")


def _error_time_figures(series, loe=None, title_suffix=""):
    """Procrustes and triplet error against time for ``{name: curve}``, LOE as a point and a line."""
    figs = []
    for key, label in (("procrustes", "Procrustes error"), ("triplet_error", "held-out triplet error")):
        f = _plots.figure(f"{label} vs time{title_suffix}", "seconds (sampling and error computation excluded)",
                          label, y_log=True)
        t_max = 0.0
        for name, curve in series.items():
            _plots.curve(f, name, curve["elapsed"], curve[key])
            t_max = max([t_max, *curve["elapsed"]])
        if loe is not None and loe.get(key) is not None:
            _plots.point(f, "LOE", loe["time"], loe[key])
            _plots.hline(f, "LOE", loe[key], (0.0, max(t_max, loe["time"])), label="LOE's error")
        figs.append(_plots.finish(f))
    return figs


def html_fig2a(data: dict, path: str) -> None:
    res = data["results"]
    p, loe = res["protocol"], res["loe"]
    rows = [["LOE", _plots.fmt(loe["time"], ".3g"), _plots.fmt(loe_cpu(loe), ".3g"), "-", "-",
             _plots.fmt(loe["procrustes"], ".4f"), _plots.fmt(loe["triplet_error"], ".4f"), "-", "-", "-", "-", "-"]]
    for name, r in res["methods"].items():
        rows.append([name, _plots.fmt(r["time"], ".3g"), _plots.fmt(r["curve"]["cpu"][-1], ".3g"), r["iterations"],
                     r["stop_reason"], _plots.fmt(r["procrustes"], ".4f"), _plots.fmt(r["triplet_error"], ".4f"),
                     _plots.fmt(r["time_to_loe_procrustes"], ".3g", "not reached"),
                     _plots.fmt(r["ratio_to_loe_time"], ".2g"),
                     _plots.fmt(r["cpu_to_loe_procrustes"], ".3g", "not reached"),
                     _plots.fmt(r["cpu_ratio_to_loe"], ".2g"),
                     _plots.fmt(r["time_to_loe_triplet_error"], ".3g", "not reached")])
    s = res["summary"]
    head = (f"n = {p['n']:,}, d = {p['d']}, c = {p['c']:g}: {p['total_comparisons']:,} comparisons for every method "
            f"(the paper: n = {p['paper']['n']:,}). LOE: {loe['n_landmarks']} random landmarks; baselines: uniform "
            f"BTL triplets from one random start, each capped at {p['cap']:g} s; LOE-STE: eps = {p['eps']:g}. "
            f"Times exclude drawing the comparisons (uniform triplets: {p['uniform_sampling_seconds']:.1f} s; "
            f"LOE's landmark comparisons: {loe['timings']['sampling']:.1f} s). ")
    if s["fastest_baseline"]:
        head += (f"<b>Fastest baseline to LOE's Procrustes error: {s['fastest_baseline']}, "
                 f"{s['fastest_baseline_time_to_loe_procrustes']:.1f} s = {s['ratio']:.1f}x LOE's "
                 f"{loe['time']:.1f} s</b> (in CPU seconds, which other jobs on the machine disturb less: "
                 f"{s['cpu_fastest_baseline']}, {_plots.fmt(s['cpu_ratio'], '.1f')}x). ")
    else:
        head += f"<b>No baseline reached LOE's Procrustes error within {p['cap']:g} s.</b>"
    table = _plots.table(["method", "time s", "CPU s", "iterations", "stop", "Procrustes", "triplet error",
                          "time to LOE's Procrustes s", "x LOE's time", "CPU s to LOE's Procrustes",
                          "x LOE's CPU", "time to LOE's triplet error s"], rows)
    figs = _error_time_figures({k: v["curve"] for k, v in res["methods"].items()}, loe)
    _plots.write_page(path, "LOE paper Figure 2(a), scaled", [_intro("Figure 2(a), scaled: error vs time", data, head),
                                                                 table, figs])


def html_fig2b(data: dict, path: str) -> None:
    res = data["results"]
    p, s = res["protocol"], res["summary"]
    names = list(BASELINES)
    cap_txt = ">" + format(p["cap"], "g")
    rows = []
    for r in res["rows"]:
        loe = r["loe"]
        if "error" in loe:
            rows.append([f"{r['n']:,}", r.get("trial", 0), "failed", "-", *["-"] * len(names)])
            continue
        cells = [f"{_plots.fmt(m['time_to_target'], '.3g', cap_txt)} ({_plots.fmt(m['cpu_to_target'], '.3g')})"
                 for m in r["methods"].values()]
        rows.append([f"{r['n']:,}", r.get("trial", 0),
                     f"{_plots.fmt(loe['time'], '.3g')} ({_plots.fmt(loe_cpu(loe), '.3g')})",
                     _plots.fmt(loe["procrustes"], ".4f"), *cells])
    f = _plots.figure("Time to reach LOE's Procrustes error vs n (median over trials)", "n (items)", "seconds",
                      x_log=True, y_log=True, x_ticks=p["sizes"])
    med = s.get("per_n_median", [])
    ns = [e["n"] for e in med]
    _plots.curve(f, "LOE", ns, [e["loe_time"] for e in med], label="LOE (its own time)")
    for name in names:
        ts = [e[name] for e in med]
        _plots.curve(f, name, ns, ts)
        for n, t in zip(ns, ts):
            if t is None:  # drawn at the cap
                _plots.point(f, name, n, p["cap"], marker="x", size=12, label=f"{name}: not reached (at cap)")
    ok = [r for r in res["rows"] if "error" not in r["loe"]]
    if len({r.get("trial", 0) for r in ok}) > 1:  # every trial as a faint point
        for r in ok:
            _plots.point(f, "LOE", r["n"], r["loe"]["time"], marker="circle", size=4, label="single trials")
            for name in names:
                t = r["methods"][name]["time_to_target"]
                if t is not None:
                    _plots.point(f, name, r["n"], t, marker="circle", size=4, label="single trials")
    if s.get("ratio") is not None:
        per = ", ".join(f"{_plots.fmt(t['ratio'], '.1f')}x ({t['fastest_baseline']})" for t in s["trials"])
        head = (f"<b>At n = {s['n']:,} the fastest baseline needs {s['ratio']:.1f}x LOE's time to reach LOE's "
                f"Procrustes error</b> (median over {len(s['trials'])} trial(s): {per}; in CPU seconds "
                f"{_plots.fmt(s['cpu_ratio'], '.1f')}x). The paper: about 6x at n = 10^5, c = 200. ")
    elif s.get("n") is not None:
        head = f"<b>At n = {s['n']:,} no baseline reached LOE's Procrustes error within {p['cap']:g} s.</b> "
    else:
        head = ""
    head += (f"d = {p['d']}, c = {p['c']:g} (the paper: c = {p['paper']['c']}, n = 2*10^4 to 10^5, 3 trials); "
             f"{p.get('trials', 1)} trial(s) per n (each with its own ground truth, oracles, landmarks and start); "
             f"every baseline stops at LOE's Procrustes error or after {p['cap']:g} s. Times exclude drawing the "
             "comparisons; CPU seconds in brackets (other jobs on the machine inflate wall times).")
    table = _plots.table(["n", "trial", "LOE s (CPU s)", "LOE Procrustes",
                          *[f"{k} s (CPU s) to LOE's error" for k in names]], rows)
    _plots.write_page(path, "LOE paper Figure 2(b), scaled",
                      [_intro("Figure 2(b), scaled: time to LOE's error vs n", data, head), table,
                       [_plots.finish(f, "top_left")]])


def html_warmstart(data: dict, path: str) -> None:
    res = data["results"]
    blocks = [_intro("Warm start, scaled: LOE-STE vs STE from a random start", data,
                     "STE on floor(c n ln n) uniform BTL triplets from a random start (its own seed); LOE-STE spends "
                     "eps of the same budget on LOE's landmarks and starts STE on the rest from LOE's embedding. "
                     "Times exclude drawing the comparisons.")]
    for r in res["settings"]:
        s = r["setting"]
        ste, lst = r["STE"], r["LOE-STE"]
        if "error" in lst:
            blocks.append(f"<h3>d = {s['d']}, n = {s['n']:,}: LOE-STE failed: {lst['error']}</h3>")
            continue
        rows = [["STE", _plots.fmt(ste["time"], ".3g"), ste["iterations"], ste["stop_reason"],
                 _plots.fmt(ste["procrustes"], ".4f"), _plots.fmt(ste["triplet_error"], ".4f")],
                ["LOE-STE", _plots.fmt(lst["time"], ".3g"), lst["iterations"], lst["stop_reason"],
                 _plots.fmt(lst["procrustes"], ".4f"), _plots.fmt(lst["triplet_error"], ".4f")],
                ["(its LOE part)", _plots.fmt(lst["loe_time"], ".3g"), "-", "-",
                 _plots.fmt(lst["loe_procrustes"], ".4f"), _plots.fmt(lst["loe_triplet_error"], ".4f")]]
        txt = []
        for key in ("procrustes", "triplet_error"):
            q = r[key]
            if q["ratio_to_ste_final"] is not None:
                txt.append(f"{key}: LOE-STE reaches STE's final {q['ste_final']:.4f} after "
                           f"{q['loe_ste_time_to_ste_final']:.1f} s, STE after {q['ste_time_to_ste_final']:.1f} s "
                           f"(<b>{q['ratio_to_ste_final']:.2f}x</b>)")
            else:
                txt.append(f"{key}: LOE-STE does not reach STE's final {q['ste_final']:.4f} (its own final "
                           f"{q['loe_ste_final']:.4f}); both reach {q['common_level']:.4f}: STE after "
                           f"{_plots.fmt(q['ste_time_to_common'], '.1f')} s, LOE-STE after "
                           f"{_plots.fmt(q['loe_ste_time_to_common'], '.1f')} s "
                           f"(<b>{_plots.fmt(q['ratio_to_common'], '.2f')}x</b>; CPU seconds "
                           f"{_plots.fmt(q.get('cpu_ratio_to_common'), '.2f')}x)")
        paper = s["paper"]
        head = (f"<h3>d = {s['d']}, n = {s['n']:,}, c = {s['c']:g}, eps = {s['eps']:g} "
                f"(the paper: n = {paper['n']:,}, c = {paper['c']}, eps = {paper['eps']})</h3>"
                f"<p>{r['total_comparisons']:,} comparisons; cap {res['protocol']['cap']:g} s each.<br>"
                + "<br>".join(txt) + "</p>")
        loe_pt = {"time": lst["loe_time"], "procrustes": lst["loe_procrustes"],
                  "triplet_error": lst["loe_triplet_error"]}
        figs = _error_time_figures({"STE": ste["curve"], "LOE-STE": lst["curve"]}, loe_pt, f" (d = {s['d']})")
        blocks += [head, _plots.table(["method", "time s", "iterations", "stop", "Procrustes", "triplet error"], rows),
                   figs]
    _plots.write_page(path, "LOE paper warm start, scaled", blocks)


def html_budget(data: dict, path: str) -> None:
    res = data["results"]
    p, s = res["protocol"], res["summary"]
    figs = []
    for key, label, theory in (("procrustes", "Procrustes error", -1.0),
                               ("triplet_error", "held-out triplet error", -0.5)):
        f = _plots.figure(f"{label} vs budget c (n = {p['n']:,})", "c (budget floor(c n ln n))", label,
                          x_log=True, y_log=True, x_ticks=p["budgets"])
        for method in ("LOE", "STE"):
            q = s[f"{method}_{key}"]
            slope = _plots.fmt(q["slope_of_means"], ".2f")
            _plots.curve(f, method, q["c"], q["mean"], label=f"{method} (mean; slope {slope})")
            pts = [(row["c"], row[method].get(key)) for row in res["runs"]]
            for c, e in pts:
                if e is not None:
                    _plots.point(f, method, c, e, marker="circle", size=5, label=f"{method} (each seed)")
        cb = [(row["c"], row["cblearn STE"][key]) for row in res["runs"] if "cblearn STE" in row]
        if cb:
            _plots.curve(f, "cblearn STE", [c for c, _ in cb], [e for _, e in cb], label="cblearn STE (seed 0)")
            for c, e in cb:
                _plots.point(f, "cblearn STE", c, e, marker="triangle", size=10, label="cblearn STE (seed 0)")
        q = s[f"LOE_{key}"]
        if q["mean"] and q["mean"][0] > 0:
            ref = [q["mean"][0] * (c / q["c"][0]) ** theory for c in q["c"]]
            _plots.curve(f, "rate", q["c"], ref, dash="dotted", markers=False, index=2, label=f"slope {theory:g}")
        figs.append(_plots.finish(f, "top_right"))
    rows = []
    for i, c in enumerate(s["LOE_procrustes"]["c"]):
        cb = [row["cblearn STE"] for row in res["runs"] if row["c"] == c and "cblearn STE" in row]
        ours = [row["STE"] for row in res["runs"] if row["c"] == c and row["seed"] == 0]
        loe_t = [row["LOE"].get("time", np.nan) for row in res["runs"] if row["c"] == c]
        ste_t = [row["STE"]["time"] for row in res["runs"] if row["c"] == c]
        rows.append([
            f"{c:g}", f"{lv.total_budget(p['n'], c):,}",
            f"{s['LOE_procrustes']['mean'][i]:.4f} +- {s['LOE_procrustes']['std'][i]:.4f}",
            f"{s['LOE_triplet_error']['mean'][i]:.4f} +- {s['LOE_triplet_error']['std'][i]:.4f}",
            _plots.fmt(float(np.nanmean(loe_t)), ".3g"),
            f"{s['STE_procrustes']['mean'][i]:.4f} +- {s['STE_procrustes']['std'][i]:.4f}",
            f"{s['STE_triplet_error']['mean'][i]:.4f} +- {s['STE_triplet_error']['std'][i]:.4f}",
            _plots.fmt(float(np.mean(ste_t)), ".3g"),
            (f"{cb[0]['procrustes']:.4f} / {cb[0]['triplet_error']:.4f}, {cb[0]['time']:.3g} s "
             f"(ours, same triplets: {ours[0]['procrustes']:.4f} / {ours[0]['triplet_error']:.4f}, "
             f"{ours[0]['time']:.3g} s)") if cb and ours else "-",
        ])
    lp, lt = s["LOE_procrustes"], s["LOE_triplet_error"]
    head = (f"n = {p['n']:,}, d = {p['d']}, {p['seeds']} seed(s) (ground truth, oracle, landmarks and start differ per "
            f"seed; within a seed the larger budgets extend the smaller ones' draws). STE capped at {p['cap']:g} s. "
            f"<b>Fitted slope of log error against log c for LOE: Procrustes {_plots.fmt(lp['slope_of_means'], '.2f')} "
            f"(theory about -1), triplet error {_plots.fmt(lt['slope_of_means'], '.2f')} (theory about -1/2)</b>; "
            f"over every (c, seed) point: {_plots.fmt(lp['slope_all_points'], '.2f')} and "
            f"{_plots.fmt(lt['slope_all_points'], '.2f')}. "
            f"STE: {_plots.fmt(s['STE_procrustes']['slope_of_means'], '.2f')} "
            f"and {_plots.fmt(s['STE_triplet_error']['slope_of_means'], '.2f')}. "
            + ("cblearn's STE (scipy backend, default settings) ran on the same triplets from the same start for "
               f"c <= {p['cblearn_max_c']:g}, seed 0." if p.get("cblearn") else "cblearn was not run."))
    table = _plots.table(["c", "comparisons", "LOE Procrustes", "LOE triplet error", "LOE s", "STE Procrustes",
                          "STE triplet error", "STE s", "cblearn STE: Procrustes / triplet error, time"], rows)
    _plots.write_page(path, "LOE error vs budget", [_intro("Error vs budget c", data, head), table, figs])


PAGES = {"fig2a": html_fig2a, "fig2b": html_fig2b, "warmstart": html_warmstart, "budget": html_budget}


# --------------------------------------------------------------------------- driver
def _config(name: str, args) -> dict:
    cfg = json.loads(json.dumps((QUICK if args.quick else FULL)[name]))
    if args.cap is not None:
        cfg["cap"] = args.cap
    if args.n is not None and "n" in cfg:
        cfg["n"] = int(args.n)
    if args.c is not None and "c" in cfg:
        cfg["c"] = args.c
    if args.sizes is not None and "sizes" in cfg:
        cfg["sizes"] = [int(v) for v in args.sizes]
    if args.budgets is not None and "budgets" in cfg:
        cfg["budgets"] = list(args.budgets)
    if args.seeds is not None and "seeds" in cfg:
        cfg["seeds"] = args.seeds
    if args.trials is not None and "trials" in cfg:
        cfg["trials"] = args.trials
    return cfg


def _command(argv) -> str:
    """The command line, without the output directory (machine specific)."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a == "--output-dir":
            skip = True
            continue
        if a.startswith("--output-dir="):
            continue
        out.append(a)
    return "python benchmarks/bench_paper.py " + " ".join(out)


def run_experiment(name: str, args, argv) -> dict:
    json_path = os.path.join(args.output_dir, f"paper_{name}.json")
    html_path = os.path.join(args.output_dir, f"paper_{name}.html")
    if args.plot_only:  # re-derive the summaries from the recorded curves, then redraw
        with open(json_path) as fh:
            data = json.load(fh)
        if name in SUMMARIES:
            SUMMARIES[name](data["results"])
            _save(json_path, data)
        PAGES[name](data, html_path)
        _log(f"wrote {html_path}")
        return data
    cfg = _config(name, args)
    data = {"experiment": name, "quick": bool(args.quick), "command": _command(argv),
            "date": time.strftime("%Y-%m-%d %H:%M"), "machine": _machine(), "load_start": _load()}
    t0 = time.perf_counter()
    data["results"] = RUNNERS[name](cfg, args)
    data["seconds"] = time.perf_counter() - t0
    data["load_end"] = _load()
    _save(json_path, data)
    PAGES[name](data, html_path)
    _log(f"{name}: {data['seconds']:.0f} s; wrote {json_path} and {html_path}")
    return data


def main(argv=None) -> dict:
    """Run the experiments named on the command line; returns ``{name: result dict}``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("experiment", choices=[*EXPERIMENTS, "all"])
    ap.add_argument("--quick", action="store_true", help="tiny sizes (seconds): checks the plumbing")
    ap.add_argument("--output-dir", default=RESULTS)
    ap.add_argument("--seed", type=int, default=0, help="base of every seed")
    ap.add_argument("--jobs", type=int, default=1, help="threads of every method (LOE's rankings, the loss kernels)")
    ap.add_argument("--n-test", type=int, default=N_TEST, help="held-out noiseless triplets for the triplet error")
    ap.add_argument("--no-cblearn", action="store_true", help="skip cblearn's STE in the budget sweep")
    ap.add_argument("--plot-only", action="store_true",
                    help="re-derive the summaries from the curves in the saved JSON and redraw the HTML")
    ap.add_argument("--cap", type=float, help="seconds each iterative method may run")
    ap.add_argument("--n", type=float, help="items (fig2a, budget)")
    ap.add_argument("--c", type=float, help="budget multiplier (fig2a, fig2b)")
    ap.add_argument("--sizes", type=float, nargs="+", help="item counts (fig2b)")
    ap.add_argument("--budgets", type=float, nargs="+", help="budget multipliers (budget)")
    ap.add_argument("--seeds", type=int, help="seeds per budget (budget)")
    ap.add_argument("--trials", type=int, help="trials (seeds) per n (fig2b)")
    args = ap.parse_args(argv)
    os.makedirs(args.output_dir, exist_ok=True)
    names = list(EXPERIMENTS) if args.experiment == "all" else [args.experiment]
    if not args.plot_only:
        _log(f"kernels compiled / loaded in {warm_up(args.jobs):.1f} s; load average {_load()}")
    return {name: run_experiment(name, args, argv) for name in names}


if __name__ == "__main__":
    main()
