"""Ordinal-embedding baselines: speed and accuracy, against cblearn on the same triplets.

    python benchmarks/bench_baselines.py                   # n = 1000 table (+ cblearn if importable)
    python benchmarks/bench_baselines.py --no-cblearn      # ours only
    python benchmarks/bench_baselines.py --large           # adds STE and LOE-STE at n = 10^5
    python benchmarks/bench_baselines.py --large --c 50    # ... with floor(50 n ln n) triplets

Protocol (loe-algorithm.md, sections 5 and 6): x ~ N(0, I/(2d)) with n = 1000, d = 2;
345k uniformly random triplets answered under the BTL model P = sigmoid(D_ik - D_ij)
(temperature 1). For every baseline: wall-clock and CPU time of the fit (median of
--repeats runs, kernels compiled first), iterations, Procrustes error and the error on
10^4 held-out noiseless triplets. cblearn (optional ``bench`` extra: ``pip install
cblearn``) runs its scipy backend with default settings on the same triplets, once per
estimator, with BLAS held to one thread like ours (threadpoolctl); the ratio is
cblearn's time over ours. For SOE and CKL cblearn also runs with our settings
(SOE n_init=1, CKL mu=0.1: see MATCHED). "time to cblearn's error" is the first moment our run's
iterate is at least as good on the held-out triplets as cblearn's final embedding (read
off per-iteration snapshots taken by the callback, whose cost is included).

With --large: STE on floor(c n ln n) uniform BTL triplets of n = 10^5 points, and LOE-STE
(eps = 0.3) on the same budget drawn from the oracle; Procrustes and triplet errors are
computed on all points. Results go to benchmarks/results/baselines.json (sections this run
does not redo, e.g. another --c, are kept).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import time

import numpy as np

import loe_viz as lv
from loe_viz.methods import BASELINES, METHODS

OURS = {name: METHODS[name].estimator for name in BASELINES}
STE = METHODS["STE"].estimator
LOESTE = METHODS["LOESTE"].estimator
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "baselines.json")


def load_average():
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except OSError:  # pragma: no cover
        return None


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def blas_one_thread():
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def make_data(n, d, m, seed):
    X = lv.make_points("gaussian", n, d, random_state=seed)
    oracle = lv.TripletOracle(X, temperature=1.0, random_state=seed + 1)
    return X, oracle, oracle.uniform_triplets(m)


def held_out_error(X, Z, seed=12345):
    return lv.triplet_error(X, Z, n_test=10_000, random_state=seed)


def warm_up():
    """Compile (or load from cache) every kernel before timing."""
    X, _, T = make_data(30, 2, 500, 99)
    t = time.perf_counter()
    for Est in OURS.values():
        Est(max_iter=2, n_jobs=1).fit(T)
        Est(max_iter=2, n_jobs=2).fit(T)
    return time.perf_counter() - t


def run_ours(name, X, T, repeats, seed):
    """Median time over repeats; the last run's per-iteration snapshots for the error curve."""
    times, cpus, fits = [], [], []
    snaps, snap_cpu = [], []
    c0 = 0.0
    for r in range(repeats):
        record = r == repeats - 1
        if record:
            snaps.clear()

            def cb(it, Z):
                snap_cpu.append(time.process_time() - c0)
                snaps.append(Z)  # already a copy
        else:
            cb = None
        est = OURS[name](random_state=seed, callback=cb)
        t0, c0 = time.perf_counter(), time.process_time()
        est.fit(T, n_items=X.shape[0])
        times.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        fits.append(est)
    est = fits[-1]
    curve_err = [held_out_error(X, Z) for Z in snaps]
    return est, {
        "time": statistics.median(times),
        "times": times,
        "cpu": statistics.median(cpus),
        "iterations": est.n_iter_,
        "evaluations": est.n_evals_,
        "stop_reason": est.stop_reason_,
        "procrustes": lv.procrustes_error(X, est.embedding_),
        "triplet_error": held_out_error(X, est.embedding_),
        "curve": {
            "elapsed": est.history_.elapsed[1:].tolist(),
            "cpu": snap_cpu,
            "triplet_error": curve_err,
            "loss": est.history_.loss[1:].tolist(),
        },
    }


# cblearn settings that differ from ours by default; the "matched" run uses ours
MATCHED = {
    "SOE": {"n_init": 1},  # cblearn restarts SOE from 10 random starts and keeps the best; we start once
    "CKL": {"mu": 0.1},  # cblearn's mu = 0 makes the loss scale-invariant (see loe_viz.baselines.CKL)
}


def run_cblearn(name, X, T, seed, **kwargs):
    from cblearn import embedding as cbe

    cls = {"STE": cbe.STE, "TSTE": cbe.TSTE, "SOE": cbe.SOE, "GNMDS": cbe.GNMDS, "CKL": cbe.CKL}[name]
    est = cls(n_components=X.shape[1], random_state=seed, **kwargs)
    T64 = T.astype(np.int64)
    with blas_one_thread():
        t0, c0 = time.perf_counter(), time.process_time()
        Z = est.fit_transform(T64, n_objects=X.shape[0])
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {
        "settings": kwargs or "default",
        "time": wall,
        "cpu": cpu,
        "iterations": int(est.n_iter_),
        "procrustes": lv.procrustes_error(X, Z),
        "triplet_error": held_out_error(X, Z),
    }


def time_to_reach(curve, target, clock="elapsed"):
    for t, e in zip(curve[clock], curve["triplet_error"]):
        if e <= target:
            return t
    return None


def table_n1000(args, out):
    n, d, m = 1000, 2, 345_000
    X, _, T = make_data(n, d, m, args.seed)
    rows = {}
    have_cb = False
    if not args.no_cblearn:
        try:
            import cblearn  # noqa: F401

            have_cb = True
        except ImportError:
            print("cblearn is not importable: its columns are skipped (pip install cblearn)")
    print(f"\nn={n}, d={d}, m={m} BTL triplets (temperature 1); times in seconds, median of {args.repeats}")
    print("  time: wall-clock; cpu: process CPU time (robust to other load on the machine); ratio: cblearn / ours;\n"
          "  t->cbl err: our wall time until the held-out error is <= cblearn's final one; x sooner: cblearn's\n"
          "  time over that (wall, then CPU)")
    hdr = f"{'method':6s} {'time':>7s} {'cpu':>7s} {'iter':>5s} {'procr.':>7s} {'t.err':>6s}"
    if have_cb:
        hdr += f" | {'cbl time':>8s} {'cbl cpu':>8s} {'iter':>5s} {'procr.':>7s} {'t.err':>6s} | {'ratio':>6s} {'cpu r.':>6s} {'t->cbl err':>10s} {'x sooner':>10s}"
    print(hdr)
    for name in args.methods:
        est, ours = run_ours(name, X, T, args.repeats, args.seed + 2)
        row = {"ours": ours}
        line = (f"{name:6s} {ours['time']:7.2f} {ours['cpu']:7.2f} {ours['iterations']:5d} "
                f"{ours['procrustes']:7.4f} {ours['triplet_error']:6.4f}")
        if have_cb:
            cb = run_cblearn(name, X, T, args.seed + 2)
            row["cblearn"] = cb
            row["ratio_time"] = cb["time"] / ours["time"]
            row["ratio_cpu"] = cb["cpu"] / ours["cpu"]
            reach = time_to_reach(ours["curve"], cb["triplet_error"])
            row["time_to_cblearn_error"] = reach
            row["sooner"] = None if reach is None else cb["time"] / reach
            reach_cpu = time_to_reach(ours["curve"], cb["triplet_error"], "cpu")
            row["cpu_to_cblearn_error"] = reach_cpu
            row["sooner_cpu"] = None if reach_cpu is None else cb["cpu"] / reach_cpu
            row["error_vs_cblearn"] = ours["triplet_error"] / cb["triplet_error"] - 1.0
            reach_s = "never" if reach is None else f"{reach:.3f}"
            sooner_s = "-" if reach is None else f"{row['sooner']:.0f}x"
            if reach_cpu is not None:
                sooner_s += f"/{row['sooner_cpu']:.0f}x"
            line += (f" | {cb['time']:8.2f} {cb['cpu']:8.2f} {cb['iterations']:5d} {cb['procrustes']:7.4f} "
                     f"{cb['triplet_error']:6.4f} | {row['ratio_time']:6.1f} {row['ratio_cpu']:6.1f} "
                     f"{reach_s:>10s} {sooner_s:>10s}")
            if name in MATCHED:
                print(line, flush=True)
                cbm = run_cblearn(name, X, T, args.seed + 2, **MATCHED[name])
                row["cblearn_matched"] = cbm
                row["ratio_time_matched"] = cbm["time"] / ours["time"]
                row["ratio_cpu_matched"] = cbm["cpu"] / ours["cpu"]
                reach = time_to_reach(ours["curve"], cbm["triplet_error"])
                reach_cpu = time_to_reach(ours["curve"], cbm["triplet_error"], "cpu")
                row["time_to_cblearn_matched_error"] = reach
                row["cpu_to_cblearn_matched_error"] = reach_cpu
                reach_s = "never" if reach is None else f"{reach:.3f}"
                sooner_s = "-" if reach is None else f"{cbm['time'] / reach:.0f}x"
                if reach_cpu is not None:
                    sooner_s += f"/{cbm['cpu'] / reach_cpu:.0f}x"
                label = ",".join(f"{k}={v}" for k, v in MATCHED[name].items())
                line = (f"{'':6s} {'':7s} {'':7s} {'':5s} {'':7s} {'':6s} | {cbm['time']:8.2f} {cbm['cpu']:8.2f} "
                        f"{cbm['iterations']:5d} {cbm['procrustes']:7.4f} {cbm['triplet_error']:6.4f} | "
                        f"{row['ratio_time_matched']:6.1f} {row['ratio_cpu_matched']:6.1f} {reach_s:>10s} "
                        f"{sooner_s:>10s}  (cblearn {label})")
        print(line, flush=True)
        rows[name] = row
    out["n1000"] = {"n": n, "d": d, "m": m, "temperature": 1.0, "seed": args.seed, "repeats": args.repeats,
                    "cblearn": have_cb, "date": time.strftime("%Y-%m-%d %H:%M"), "load_average_end": load_average(),
                    "results": rows}
    if have_cb:
        import cblearn

        out["n1000"]["cblearn_version"] = getattr(cblearn, "__version__", "unknown")


def large(args, out):
    n, d = 100_000, 2
    m = lv.total_budget(n, args.c)
    print(f"\nn={n}, d={d}, c={args.c:g}: m = floor(c n ln n) = {m} BTL triplets; load average {load_average()}")
    X = lv.make_points("gaussian", n, d, random_state=args.seed)
    oracle = lv.TripletOracle(X, temperature=1.0, random_state=args.seed + 1)
    t0 = time.perf_counter()
    T = oracle.uniform_triplets(m)
    t_gen = time.perf_counter() - t0
    print(f"  sampling the triplets: {t_gen:.1f} s ({T.nbytes / 2**20:.0f} MiB as {T.dtype})")
    res = {"n": n, "d": d, "c": args.c, "m": m, "sampling_time": t_gen, "date": time.strftime("%Y-%m-%d %H:%M"),
           "load_average_start": load_average()}

    ste = STE(random_state=args.seed + 2, verbose=False)
    t0, c0 = time.perf_counter(), time.process_time()
    ste.fit(T, n_items=n)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    res["STE"] = {
        "time": wall, "cpu": cpu, "iterations": ste.n_iter_, "evaluations": ste.n_evals_,
        "stop_reason": ste.stop_reason_, "procrustes": lv.procrustes_error(X, ste.embedding_),
        "triplet_error": held_out_error(X, ste.embedding_), "seconds_per_evaluation": wall / ste.n_evals_,
        "history": ste.history_.as_dict(),
    }
    r = res["STE"]
    print(f"  STE: {wall:.1f} s ({cpu:.1f} s CPU), {ste.n_iter_} iterations / {ste.n_evals_} evaluations "
          f"({1e3 * r['seconds_per_evaluation']:.0f} ms each), {ste.stop_reason_}; Procrustes "
          f"{r['procrustes']:.4f}, triplet error {r['triplet_error']:.4f}", flush=True)
    del T

    oracle2 = lv.TripletOracle(X, temperature=1.0, random_state=args.seed + 1)
    model = LOESTE(random_state=args.seed + 3)
    t0 = time.perf_counter()
    model.fit_oracle(oracle2, m)
    wall = time.perf_counter() - t0
    res["LOESTE"] = {
        "time": wall, "timings": model.timings_, "eps": model.eps, "iterations": model.n_iter_,
        "stop_reason": model.stop_reason_,
        "loe_procrustes": lv.procrustes_error(X, model.loe_.embedding_),
        "loe_triplet_error": held_out_error(X, model.loe_.embedding_),
        "procrustes": lv.procrustes_error(X, model.embedding_),
        "triplet_error": held_out_error(X, model.embedding_),
        "history": model.history_.as_dict(),
    }
    r = res["LOESTE"]
    tm = model.timings_
    print(f"  LOE-STE (eps 0.3, same budget from the oracle): {wall:.1f} s (LOE incl. sampling {tm['loe']:.1f} s, "
          f"uniform sampling {tm['sampling']:.1f} s, STE {tm['ste']:.1f} s, {model.n_iter_} iterations); "
          f"LOE alone: Procrustes {r['loe_procrustes']:.4f}, triplet error {r['loe_triplet_error']:.4f}; "
          f"LOE-STE: Procrustes {r['procrustes']:.4f}, triplet error {r['triplet_error']:.4f}")
    res["peak_rss_mb"] = peak_rss_mb()
    res["load_average_end"] = load_average()
    print(f"  peak resident memory of the process: {res['peak_rss_mb']:.0f} MiB", flush=True)
    out[f"n100000_c{args.c:g}"] = res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--methods", default=",".join(BASELINES))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-cblearn", action="store_true")
    ap.add_argument("--large", action="store_true", help="add n = 10^5 STE and LOE-STE")
    ap.add_argument("--c", type=float, default=10.0, help="budget multiplier for --large: m = floor(c n ln n)")
    ap.add_argument("--skip-small", action="store_true", help="only the --large part")
    ap.add_argument("--output", default=RESULTS)
    args = ap.parse_args(argv)
    args.methods = [s.strip().upper().replace("-", "") for s in args.methods.split(",") if s.strip()]
    bad = [s for s in args.methods if s not in OURS]
    if bad:
        ap.error(f"unknown methods {bad}; choose from {', '.join(OURS)}")

    out = {
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
                    "load_average_start": load_average()},
        "versions": {"numpy": np.__version__, "loe_viz": getattr(lv, "__version__", "?")},
    }
    import numba
    import scipy

    out["versions"].update(numba=numba.__version__, scipy=scipy.__version__)
    out["warm_up_seconds"] = warm_up()
    print(f"kernels compiled / loaded in {out['warm_up_seconds']:.1f} s; load average {out['machine']['load_average_start']}")
    if not args.skip_small:
        table_n1000(args, out)
    if args.large:
        large(args, out)
    out["machine"]["load_average_end"] = load_average()
    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    merged = {}
    if os.path.exists(args.output):  # keep the sections this run did not redo (e.g. another c)
        try:
            with open(args.output) as fh:
                merged = json.load(fh)
        except (OSError, ValueError):
            merged = {}
    merged.update(out)
    tmp = args.output + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(merged, fh, indent=1)
    os.replace(tmp, args.output)
    print(f"\nload average at the end {out['machine']['load_average_end']}; results written to {args.output}")


if __name__ == "__main__":
    main()
