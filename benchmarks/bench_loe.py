"""LOE speed and accuracy on the authors' protocol, against a plain NumPy/SciPy LOE.

    python benchmarks/bench_loe.py                 # the reference table (n <= 5000)
    python benchmarks/bench_loe.py --large         # adds n = 10^5, C = 200 (2.3e8 comparisons)
    python benchmarks/bench_loe.py --seeds 10      # more seeds
    python benchmarks/bench_loe.py --robust        # landmark choice at n = 10^5, c = 50, 10 seeds
    python benchmarks/bench_loe.py --million       # n = 10^6, c = 50 with the defaults (one seed)
    python benchmarks/bench_loe.py --deficient     # d = 5, l = 8: the embedding on every seed
    python benchmarks/bench_loe.py --choice        # the landmark-choice table at n = 1000 (README), defaults included
    python benchmarks/bench_loe.py --stored-speed  # n = 1000, C = 200 from stored triplets, warm, best of 9
    python benchmarks/bench_loe.py --stored-shares # 10^7 stored triplets, 50 landmarks: shares in one pass or per task
    python benchmarks/bench_loe.py --idle-split    # 5 landmarks, 2 threads: last rankings split over the idle worker, or not

Protocol (loe-algorithm.md section 6): x ~ N(0, I/(2d)), l = d + 3 random landmarks,
floor(C n ln n) comparisons in total split evenly over the landmarks, BTL answers at
temperature 1, 3 seeds. Prints per configuration: time per stage (warm: the kernels are
compiled and cached first), peak memory of the fit, Procrustes and triplet error, and the
NumPy/SciPy implementation's time and errors on the same comparisons, with the ratio.
Results go to benchmarks/results/loe.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))

import loe_viz as lv  # noqa: E402
from reference_numpy import loe_numpy  # noqa: E402

REFERENCE = {  # the authors' MATLAB code under GNU Octave (loe-algorithm.md, section 6)
    (1000, 2, 200): (4.0, 0.046, 0.077),
    (1000, 2, 50): (2.0, 0.24, 0.155),
    (2000, 2, 200): (10.4, 0.057, 0.069),
    (1000, 5, 200): (2.5, 0.21, 0.187),
    (5000, 2, 100): (27.0, 0.087, 0.096),
}


def first_call_times():
    """Import and first-fit times in a fresh interpreter, cold (empty numba cache) and warm (cache filled)."""
    import subprocess
    import tempfile

    code = (
        "import time; t=time.perf_counter(); import loe_viz as lv; t1=time.perf_counter();"
        "X=lv.make_points('gaussian',200,random_state=0); o=lv.TripletOracle(X,random_state=1);"
        "lv.LOE(random_state=2).fit_oracle(o, 5000); t2=time.perf_counter();"
        "print(round(t1-t,3), round(t2-t1,3))"
    )
    out = {}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        for label in ("cold", "warm"):  # the first run fills the empty cache, the second reads it
            res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
            imp, fit = (float(v) for v in res.stdout.split())
            out[label] = dict(import_s=imp, first_fit_s=fit)
    return out


def run_config(n, d, C, seeds, numpy_ref=True):
    rows = []
    for seed in range(seeds):
        X = lv.make_points("gaussian", n, d, random_state=seed)
        oracle = lv.TripletOracle(X, random_state=1000 + seed)
        l = d + 3
        per = lv.total_budget(n, C) // l
        lms = np.sort(np.random.default_rng(2000 + seed).choice(n, l, replace=False))
        t0 = time.perf_counter()
        T = oracle.landmark_triplets(lms, per)
        t_sample = time.perf_counter() - t0
        est = lv.LOE(n_components=d)
        tracemalloc.start()
        t0 = time.perf_counter()
        est.fit(T, n_items=n)
        t_fit = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        Z = est.embedding_
        row = dict(
            seed=seed, n=n, d=d, C=C, comparisons=int(T.shape[0]), sample_s=t_sample, fit_s=t_fit,
            fit_peak_mib=peak / 2**20, stages={k: v for k, v in est.stages_.timings.items()},
            newton_iters=est.stages_.ranking.n_iter.tolist(),
            procrustes=lv.procrustes_error(X, Z), triplet_error=lv.triplet_error(X, Z, random_state=seed),
        )
        if numpy_ref:
            t0 = time.perf_counter()
            Zr = loe_numpy(T, n, d, lms)
            row["numpy_s"] = time.perf_counter() - t0
            row["numpy_procrustes"] = lv.procrustes_error(X, Zr)
            row["numpy_triplet_error"] = lv.triplet_error(X, Zr, random_state=seed)
        rows.append(row)
    return rows


def summarise(rows):
    def ms(key):
        v = np.array([r[key] for r in rows])
        return v.mean(), v.std()

    r0 = rows[0]
    out = dict(n=r0["n"], d=r0["d"], C=r0["C"], comparisons=r0["comparisons"], seeds=len(rows))
    for key in ("fit_s", "sample_s", "fit_peak_mib", "procrustes", "triplet_error", "numpy_s", "numpy_procrustes",
                "numpy_triplet_error"):
        if key in r0:
            out[key], out[key + "_std"] = ms(key)
    out["stages_s"] = {k: float(np.mean([r["stages"][k] for r in rows])) for k in r0["stages"]}
    if "numpy_s" in r0:
        out["speedup_vs_numpy"] = out["numpy_s"] / out["fit_s"]
    ref = REFERENCE.get((out["n"], out["d"], out["C"]))
    if ref:
        out["reference"] = dict(time_s=ref[0], procrustes=ref[1], triplet_error=ref[2])
    return out


def noiseless_table():
    """Noiseless answers, large budgets: the paper's pipeline alone against the ordinal polish."""
    print("\nnoiseless answers (T = 0), maxmin landmarks, d = 2: Procrustes of LMDS alone -> with refine='auto'")
    rows = []
    for n, per, seeds in [(200, 100_000, (0, 1, 2)), (1000, 1_000_000, (0,))]:
        for seed in seeds:
            X = lv.make_points("gaussian", n, 2, random_state=seed)
            oracle = lv.TripletOracle(X, temperature=0.0, random_state=1000 + seed)
            t0 = time.perf_counter()
            est = lv.LOE(landmark_selection="maxmin", random_state=3000 + seed).fit_oracle(oracle, per)
            wall = time.perf_counter() - t0
            row = dict(n=n, per_landmark=per, seed=seed, lmds_procrustes=lv.procrustes_error(X, est.stages_.lmds.embedding),
                       procrustes=lv.procrustes_error(X, est.embedding_), refine_iter=est.stages_.refine.n_iter,
                       ranking_s=est.stages_.timings["ranking"], refine_s=est.stages_.timings["refine"], total_s=wall)
            rows.append(row)
            print(f"  n={n:5d} {per:9,d} per landmark seed {seed}: {row['lmds_procrustes']:.4f} -> "
                  f"{row['procrustes']:.5f} ({row['refine_iter']} polish iterations; ranking {row['ranking_s']:.1f} s, "
                  f"polish {row['refine_s']:.1f} s)", flush=True)
    return rows


ROBUST_VARIANTS = [
    ("random", dict(landmark_selection="random", landmark_share=0.0)),  # the paper
    ("maxmin", dict(landmark_selection="maxmin", landmark_share=0.0)),
    ("random+share", dict(landmark_selection="random")),
    ("defaults", dict()),  # MaxMin and a 2% landmark share
]


def robust_table(n=100_000, c=50, seeds=10, d=2, variants=None, partial=None):
    """Landmark choice at large n: random against MaxMin (pilot + parallel rankings), the landmark share.

    Data fixed (seed 0); oracle and landmark seeds varied; l = d + 3; the budget
    floor(c n ln n) in total, split over the landmarks; 2 threads; the variants in turn, in
    reverse order on odd seeds.
    """
    X = lv.make_points("gaussian", n, d, random_state=0)
    l = d + 3
    per = lv.total_budget(n, c) // l
    rows_idx = lv.metrics.sample_rows(n, 20_000, random_state=0)
    variants = variants or ROBUST_VARIANTS
    print(f"\nlandmark choice at n={n}, c={c} ({per * l:.3g} comparisons, {per} per landmark), d={d}, l={l}, "
          f"2 threads, seeds 0..{seeds - 1}; load average {os.getloadavg()[0]:.1f}")
    out = []
    for seed in range(seeds):
        # odd seeds run the variants in reverse: a fit's place in the sequence (the memory the fits
        # before it left to the allocator, the host's drift) must not favour one variant
        for name, kw in variants if seed % 2 == 0 else variants[::-1]:
            oracle = lv.TripletOracle(X, random_state=1000 + seed)
            t0 = time.perf_counter()
            c0 = time.process_time()
            est = lv.LOE(n_components=d, random_state=3000 + seed, n_jobs=2, **kw).fit_oracle(oracle, per)
            wall = time.perf_counter() - t0
            cpu = time.process_time() - c0
            proc = lv.procrustes_error(X[rows_idx], est.embedding_[rows_idx])
            cols = est.stages_.ranking.columns
            out.append(dict(variant=name, seed=seed, n=n, c=c, seconds=wall, cpu_seconds=cpu, procrustes=proc,
                            load_average=os.getloadavg()[0], newton=est.stages_.ranking.n_iter.tolist(),
                            cg=[col.cg_iters for col in cols], stages_s=est.stages_.timings))
            print(f"  seed {seed} {name:13s} {wall:6.2f} s ({cpu:6.2f} s CPU)  Procrustes {proc:.4f}  "
                  f"Newton {[col.n_iter for col in cols]} CG {[col.cg_iters for col in cols]}  "
                  f"(load {os.getloadavg()[0]:.1f})", flush=True)
        if partial is not None:  # keep what is measured if the run is stopped
            with open(partial, "w") as fh:
                json.dump(dict(rows=out), fh, indent=1, default=float)
    print("  summary: variant, median / worst Procrustes, median seconds, time ratio to the first variant "
          "(median of the per-seed ratios: interleaved runs share the load), CPU seconds")
    first = variants[0][0]
    base = np.median([r["seconds"] for r in out if r["variant"] == first])
    by_seed = {r["seed"]: r for r in out if r["variant"] == first}
    summary = []
    for name, _ in variants:
        e = np.array([r["procrustes"] for r in out if r["variant"] == name])
        t = np.array([r["seconds"] for r in out if r["variant"] == name])
        cpu = np.array([r["cpu_seconds"] for r in out if r["variant"] == name])
        paired = np.median([r["seconds"] / by_seed[r["seed"]]["seconds"] for r in out if r["variant"] == name])
        summary.append(dict(variant=name, median=float(np.median(e)), worst=float(e.max()),
                            median_s=float(np.median(t)), ratio=float(np.median(t) / base),
                            paired_ratio=float(paired), median_cpu_s=float(np.median(cpu))))
        print(f"  {name:13s} {np.median(e):.4f} / {e.max():.4f}  {np.median(t):6.2f} s  {np.median(t) / base:.2f}x "
              f"(paired {paired:.2f}x)  {np.median(cpu):6.2f} s CPU")
    return dict(rows=out, summary=summary)


def deficient_table(seeds=10):
    """d = 5, l = 8, n = 1000, C = 200 (the authors' protocol): an embedding on every seed."""
    import warnings

    n, d, C = 1000, 5, 200
    print(f"\nd={d}, l={d + 3}, n={n}, C={C}: Procrustes per seed (authors' code: 0.21 +- 0.03, one seed complex)")
    rows = []
    for seed in range(seeds):
        X = lv.make_points("gaussian", n, d, random_state=seed)
        oracle = lv.TripletOracle(X, random_state=1000 + seed)
        lms = np.sort(np.random.default_rng(2000 + seed).choice(n, d + 3, replace=False))
        T = oracle.landmark_triplets(lms, lv.total_budget(n, C) // (d + 3))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", lv.LOEWarning)
            est = lv.LOE(n_components=d).fit(T, n_items=n)
        warned = any("support only" in str(w.message) for w in caught)
        proc = lv.procrustes_error(X, est.embedding_)
        rows.append(dict(seed=seed, procrustes=proc, warned=warned, supported=est.stages_.lmds.n_supported))
        print(f"  seed {seed}: Procrustes {proc:.3f}  supported dimensions {est.stages_.lmds.n_supported}"
              f"{'  (warned)' if warned else ''}", flush=True)
    e = np.array([r["procrustes"] for r in rows])
    print(f"  mean {e.mean():.3f} +- {e.std():.3f}, worst {e.max():.3f}")
    return rows


def million(seeds=1, n=1_000_000, c=50):
    """n = 10^6, c = 50, d = 2, defaults, 2 threads: time, peak RSS, Procrustes on 20k sampled items."""
    X = lv.make_points("gaussian", n, 2, random_state=0)
    rows_idx = lv.metrics.sample_rows(n, 20_000, random_state=0)
    per = lv.total_budget(n, c) // 5
    out = []
    for seed in range(seeds):
        oracle = lv.TripletOracle(X, random_state=1000 + seed)
        t0 = time.perf_counter()
        est = lv.LOE(n_components=2, random_state=3000 + seed, n_jobs=2).fit_oracle(oracle, per)
        wall = time.perf_counter() - t0
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
        proc = lv.procrustes_error(X[rows_idx], est.embedding_[rows_idx])
        out.append(dict(seed=seed, n=n, c=c, seconds=wall, peak_rss_gib=peak, procrustes=proc,
                        load_average=os.getloadavg(), stages_s=est.stages_.timings))
        print(f"n=10^6 c={c} seed {seed}: {wall:.1f} s, peak RSS {peak:.2f} GiB, Procrustes {proc:.4f} "
              f"(load average {os.getloadavg()[0]:.1f})", flush=True)
    return out


def choice_table():
    """Landmark choice: the spread over seeds at a fixed total budget (n = 1000, d = 2, C = 200)."""
    print("\nlandmark choice at a fixed total budget (n=1000, d=2, C=200, seeds 0..9): Procrustes mean +- std")
    n, d, C = 1000, 2, 200
    spread = []
    for l, selection, offset, share in [(5, "random", "lambda2", 0.0), (5, "maxmin", "lambda2", 0.0),
                                        (10, "random", "lambda2", 0.0), (10, "random", "mean", 0.0),
                                        (10, "maxmin", "mean", 0.0), (5, "auto", "lambda2", 0.02)]:
        errs = []
        for seed in range(10):
            X = lv.make_points("gaussian", n, d, random_state=seed)
            oracle = lv.TripletOracle(X, random_state=1000 + seed)
            est = lv.LOE(n_components=d, n_landmarks=l, landmark_selection=selection, offset=offset,
                         landmark_share=share, random_state=3000 + seed)
            est.fit_oracle(oracle, lv.total_budget(n, C) // l)
            errs.append(lv.procrustes_error(X, est.embedding_))
        errs = np.array(errs)
        label = "defaults" if (selection, share) == ("auto", 0.02) else selection
        spread.append(dict(n_landmarks=l, selection=label, offset=offset, landmark_share=share,
                           procrustes_mean=errs.mean(), procrustes_std=errs.std(), procrustes_max=errs.max()))
        print(f"  l={l:2d} {label:8s} offset={offset:7s} share={share:.2f}: {errs.mean():.4f} +- {errs.std():.4f} "
              f"(worst {errs.max():.4f})", flush=True)
    return spread


def stored_speed(repeats=9):
    """n = 1000, C = 200 from stored triplets (5 landmarks): warm fit time, best of ``repeats``, 1 and 2 threads."""
    n, d, C = 1000, 2, 200
    X = lv.make_points("gaussian", n, d, random_state=0)
    lms = np.sort(np.random.default_rng(2000).choice(n, 5, replace=False))
    T = lv.TripletOracle(X, random_state=1000).landmark_triplets(lms, lv.total_budget(n, C) // 5)
    out = {}
    for n_jobs in (1, 2):
        est = lv.LOE(n_components=d, n_jobs=n_jobs)
        est.fit(T, n_items=n)  # warm
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            est.fit(T, n_items=n)
            times.append(time.perf_counter() - t0)
        out[f"n_jobs={n_jobs}"] = dict(best_s=min(times), median_s=float(np.median(times)),
                                       procrustes=lv.procrustes_error(X, est.embedding_))
        print(f"n=1000 C=200 stored ({T.shape[0]} triplets), n_jobs={n_jobs}: best {min(times) * 1e3:.1f} ms, "
              f"median {np.median(times) * 1e3:.1f} ms of {repeats} (load average {os.getloadavg()[0]:.1f})",
              flush=True)
    return out


def idle_split(rounds=6):
    """5 random landmarks on 2 threads: the last rankings' passes split over the idle worker against
    kept on one thread (``ranking.SPLIT_MIN`` out of reach), alternating in one process."""
    from loe_viz import ranking

    split_min = ranking.SPLIT_MIN
    out = {}
    for n, c in ((2000, 100), (20_000, 100), (100_000, 50)):
        X = lv.make_points("gaussian", n, 2, random_state=0)
        per = lv.total_budget(n, c) // 5
        times = {"split": [], "one thread": []}
        for r in range(rounds + 1):
            for label, value in (("split", split_min), ("one thread", 10**18)):
                ranking.SPLIT_MIN = value
                oracle = lv.TripletOracle(X, random_state=1000 + r)
                est = lv.LOE(n_components=2, n_landmarks=5, landmark_selection="random", random_state=r, n_jobs=2)
                t0 = time.perf_counter()
                est.fit_oracle(oracle, per)
                if r:  # the first round warms up
                    times[label].append(time.perf_counter() - t0)
        ranking.SPLIT_MIN = split_min
        out[str(n)] = {k: dict(median_s=float(np.median(v)), best_s=float(np.min(v))) for k, v in times.items()}
        print(f"n={n} c={c}: split {np.median(times['split']):.3f} s (best {np.min(times['split']):.3f}), one thread "
              f"{np.median(times['one thread']):.3f} s (best {np.min(times['one thread']):.3f}), {rounds} rounds, "
              f"load average {os.getloadavg()[0]:.1f}", flush=True)
    return out


def stored_shares(repeats=5):
    """n = 10^4, 10^7 stored triplets over 50 heads, 2 threads: every landmark's share pulled out in
    one pass (the default with many landmarks per worker) against one pass per landmark in its task
    (what a memory limit just under the one-pass estimate falls back to); the same embedding."""
    n = 10_000
    X = lv.make_points("gaussian", n, 2, random_state=0)
    heads = np.sort(np.random.default_rng(1).choice(n, 50, replace=False))
    T = lv.TripletOracle(X, random_state=2).landmark_triplets(heads, 200_000)
    T = T[np.random.default_rng(3).permutation(T.shape[0])]  # heads interleaved, as in a collected file
    one = lv.LOE(n_components=2, n_landmarks=50, n_jobs=2)
    one.fit(T, n_items=n)
    per = lv.LOE(n_components=2, n_landmarks=50, n_jobs=2, memory_limit=one.resource_estimate_.peak_bytes - 1)
    per.fit(T, n_items=n)
    assert np.array_equal(one.embedding_, per.embedding_)
    times = {"one_pass": [], "per_task": []}
    for _ in range(repeats):  # interleaved: both share the machine's load
        for name, est in (("one_pass", one), ("per_task", per)):
            t0 = time.perf_counter()
            est.fit(T, n_items=n)
            times[name].append(time.perf_counter() - t0)
    out = {k: float(np.median(v)) for k, v in times.items()}
    print(f"n=10^4, {T.shape[0]:.0e} stored triplets, 50 landmarks, 2 threads: shares in one pass "
          f"{out['one_pass']:.3f} s, one pass per landmark {out['per_task']:.3f} s (median of {repeats}; "
          f"ratio {out['one_pass'] / out['per_task']:.2f}; load average {os.getloadavg()[0]:.1f})", flush=True)
    return out


def large_run():
    """n = 10^5, C = 200 (the paper's Figure 2(a) setting), defaults, 2 threads: sampling + fit."""
    n, d, C = 100_000, 2, 200
    X = lv.make_points("gaussian", n, d, random_state=0)
    oracle = lv.TripletOracle(X, random_state=1)
    l = d + 3
    per = lv.total_budget(n, C) // l
    out = []
    for n_jobs in (2,):
        t0 = time.perf_counter()
        c0 = time.process_time()
        est = lv.LOE(n_components=d, random_state=2, n_jobs=n_jobs).fit_oracle(oracle, per)
        wall = time.perf_counter() - t0
        cpu = time.process_time() - c0
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB -> GiB
        rows = lv.metrics.sample_rows(n, 5000, random_state=0)
        proc = lv.procrustes_error(X, est.embedding_)
        trip = lv.triplet_error(X[rows], est.embedding_[rows], random_state=0)
        out.append(dict(n=n, d=d, C=C, comparisons=per * l, n_jobs=n_jobs, sampling_plus_fit_s=wall, cpu_s=cpu,
                        load_average=os.getloadavg(), stages_s=est.stages_.timings, peak_rss_gib=peak,
                        procrustes=proc, triplet_error_sampled=trip,
                        newton_iters=est.stages_.ranking.n_iter.tolist()))
        print(f"n=10^5 C=200 ({per * l:.3g} comparisons), n_jobs={n_jobs}: sampling+fit {wall:.1f} s wall, "
              f"{cpu:.1f} s CPU (load average {os.getloadavg()[0]:.1f}), peak RSS {peak:.2f} GiB, "
              f"Procrustes {proc:.4f}, triplet error {trip:.3f} (5000-item sample)", flush=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--large", action="store_true", help="also n = 10^5, C = 200 (needs ~2 min and ~5 GiB)")
    ap.add_argument("--no-numpy", action="store_true", help="skip the NumPy/SciPy yardstick")
    ap.add_argument("--noiseless-only", action="store_true",
                    help="only the noiseless recovery table (the ordinal polish against the paper's pipeline)")
    ap.add_argument("--robust", action="store_true", help="only the landmark-choice table at n = 10^5, c = 50")
    ap.add_argument("--robust-n", type=int, default=100_000)
    ap.add_argument("--variants", default="random,maxmin,random+share,defaults",
                    help="--robust: which of random, maxmin, random+share, defaults")
    ap.add_argument("--million", action="store_true", help="only n = 10^6, c = 50 with the defaults")
    ap.add_argument("--deficient", action="store_true", help="only the d = 5, l = 8 table")
    ap.add_argument("--large-only", action="store_true", help="only n = 10^5, C = 200")
    ap.add_argument("--choice", action="store_true", help="only the landmark-choice table at n = 1000")
    ap.add_argument("--stored-speed", action="store_true", help="only the n = 1000, C = 200 stored-triplets timing")
    ap.add_argument("--stored-shares", action="store_true",
                    help="only the 10^7 stored triplets over 50 heads: shares in one pass against one per landmark")
    ap.add_argument("--idle-split", action="store_true",
                    help="only the last rankings split over the idle worker against kept on one thread")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "loe.json"))
    args = ap.parse_args()

    # compile (or load from cache) before timing anything
    lv.LOE().fit_oracle(lv.TripletOracle(lv.make_points("gaussian", 50, random_state=0), random_state=0), 2000)
    for flag, name, fn in [("robust", "robust", lambda: robust_table(
        n=args.robust_n, seeds=args.seeds, variants=[v for v in ROBUST_VARIANTS if v[0] in args.variants.split(",")],
        partial=args.out.replace(".json", "_robust_partial.json"))),
                           ("million", "million", lambda: million(seeds=args.seeds)),
                           ("deficient", "deficient", lambda: deficient_table(seeds=args.seeds)),
                           ("choice", "choice", choice_table), ("large_only", "large", large_run), ("stored_speed", "stored_speed", stored_speed),
                           ("stored_shares", "stored_shares", stored_shares), ("idle_split", "idle_split", idle_split)]:
        if getattr(args, flag):
            out = args.out.replace(".json", f"_{name}.json")
            result = {name: fn(), "load_average_end": os.getloadavg()}
            with open(out, "w") as fh:
                json.dump(result, fh, indent=1, default=float)
            print(f"saved {out}")
            return
    first = first_call_times()
    for label, t in first.items():
        print(f"fresh interpreter, {label} numba cache: import loe_viz {t['import_s']:.2f} s, "
              f"first fit {t['first_fit_s']:.2f} s")

    if args.noiseless_only:
        out = args.out.replace(".json", "_noiseless.json")
        with open(out, "w") as fh:
            json.dump(dict(noiseless=noiseless_table()), fh, indent=1, default=float)
        print(f"saved {out}")
        return
    results = dict(first_call=first, configs=[])
    configs = [(1000, 2, 200), (1000, 2, 50), (2000, 2, 200), (1000, 5, 200), (5000, 2, 100)]
    header = (f"{'n':>7} {'d':>2} {'C':>4} {'comparisons':>12} | {'fit s':>7} {'rank':>6} {'rest ms':>7} {'peak MiB':>8} | "
              f"{'Procrustes':>15} {'triplet err':>15} | {'numpy s':>8} {'ratio':>6} {'np Procr.':>9} | reference s / Procr. / trip")
    print(header)
    for n, d, C in configs:
        s = summarise(run_config(n, d, C, args.seeds, numpy_ref=not args.no_numpy))
        results["configs"].append(s)
        st = s["stages_s"]
        rest = 1e3 * (st["shifts"] + st["edm"] + st["lmds"])
        ref = s.get("reference")
        refs = f"{ref['time_s']:.1f} / {ref['procrustes']:.3f} / {ref['triplet_error']:.3f}" if ref else ""
        nps = (f"{s['numpy_s']:8.2f} {s['speedup_vs_numpy']:5.0f}x {s['numpy_procrustes']:9.3f}"
               if "numpy_s" in s else " " * 26)
        print(f"{n:7d} {d:2d} {C:4d} {s['comparisons']:12d} | {s['fit_s']:7.3f} {st['ranking']:6.3f} {rest:7.2f} "
              f"{s['fit_peak_mib']:8.1f} | {s['procrustes']:.3f} +- {s['procrustes_std']:.3f} "
              f"{s['triplet_error']:.3f} +- {s['triplet_error_std']:.3f} | {nps} | {refs}", flush=True)

    results["landmark_choice"] = choice_table()

    results["noiseless"] = noiseless_table()

    if args.large:
        results["large"] = large_run()

    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(results, fh, indent=1, default=float)
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
