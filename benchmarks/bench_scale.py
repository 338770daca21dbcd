"""LOE at scale: time per stage, peak memory and accuracy from n = 10^4 to 10^6 (issue 6).

    python benchmarks/bench_scale.py                     # the sweep (the n = 10^6 run takes long)
    python benchmarks/bench_scale.py --sizes 1e4 3e4     # a quick subset
    python benchmarks/bench_scale.py --throughput-only   # 1 vs 2 threads on the ranking stage
    python benchmarks/bench_scale.py --plot-only         # redraw the HTML from the saved JSON
    python benchmarks/bench_scale.py --merge a.json b.json   # combine runs made separately

Protocol: x ~ N(0, I/(2d)) with d = 2, BTL answers at temperature 1, a budget of
floor(c n ln n) comparisons in total (c = 50, and c = 200 where it fits) split evenly over
``--landmarks`` random landmarks (default 6: a multiple of the 2 cores, so both stay busy;
the paper's d + 3 = 5 on 2 cores runs in 3 rounds). Every configuration runs
``LOE.fit_oracle`` in a fresh process (``--jobs`` threads, default 2) after a warm-up, so
its peak resident memory (``ru_maxrss``) is its own. A configuration runs only when
``loe_viz.estimate_resources`` says it fits ``--max-memory`` and ``--max-seconds``.

Reported per configuration: seconds per stage (sampling, ranking, shifts, edm, lmds),
peak memory (and the estimate), Procrustes error on all items and triplet error on
``--n-test`` random noiseless triplets (a sample: the items are too many to test all
triplets), and per-comparison costs (to re-calibrate ``loe_viz.resources.CALIBRATION``).
Across sizes: the fitted slope of log time against log n and against log(n ln n).
The ranking-stage throughput of 2 threads against 1 is measured on stored triplets
(``LOE.fit``, so sampling is excluded) with l = 6 and l = 5 landmarks.

Results go to benchmarks/results/scale.json and benchmarks/results/scale.html (``--out`` names another JSON file)
(a standalone Bokeh page that loads BokehJS from its CDN). The machine's load average is recorded with every run: on a
shared machine, wall-clock figures depend on it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _runinfo  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
JSON_PATH = os.path.join(RESULTS, "scale.json")
HTML_PATH = os.path.join(RESULTS, "scale.html")
GIB = 2**30


def _rss_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def _peak_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kB on Linux


def _load() -> float:
    try:
        return float(os.getloadavg()[0])
    except OSError:
        return float("nan")


def _warm_up():
    import loe_viz as lv

    X = lv.make_points("gaussian", 400, random_state=0)
    lv.LOE(n_landmarks=6, n_jobs=2).fit_oracle(lv.TripletOracle(X, random_state=0), 20_000)
    T = lv.TripletOracle(X, random_state=0).landmark_triplets(np.arange(6), 20_000)
    lv.LOE(n_landmarks=6, n_jobs=2).fit(T, n_items=400)


# ------------------------------------------------------------------ child runs
def child_fit(cfg: dict) -> dict:
    """One fit_oracle configuration, measured in this (fresh) process."""
    import warnings

    import loe_viz as lv
    from loe_viz.metrics import procrustes_error, triplet_error
    from loe_viz.progress import TextProgress

    warnings.simplefilter("ignore")
    _warm_up()
    n, c, l, jobs, seed = cfg["n"], cfg["c"], cfg["landmarks"], cfg["jobs"], cfg["seed"]
    X = lv.make_points("gaussian", n, 2, random_state=seed)
    oracle = lv.TripletOracle(X, random_state=1000 + seed)
    per = lv.total_budget(n, c) // l
    model = lv.LOE(n_landmarks=l, n_jobs=jobs, random_state=seed, memory_limit=math.inf)
    est = model.estimate_resources(n, per)
    rss0 = _rss_bytes()
    bar = TextProgress(file=sys.stderr, estimate=est, min_interval=5.0)
    load0 = _load()
    t0, c0 = time.perf_counter(), time.process_time()
    model.fit_oracle(oracle, per, progress=bar)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    bar.close()
    peak = _peak_bytes()
    Z = model.embedding_
    cols = model.stages_.ranking.columns
    t = model.stages_.timings
    return {
        **cfg,
        "per_landmark": int(per),
        "total_comparisons": int(per * l),
        "timings": {k: float(v) for k, v in t.items()},
        "wall_seconds": wall,
        "cpu_seconds": cpu,
        "load_before": load0,
        "load_after": _load(),
        "rss_before_fit_bytes": rss0,
        "peak_rss_bytes": peak,
        "fit_peak_bytes": peak - rss0,
        "estimate": {"peak_bytes": est.peak_bytes, "seconds": est.seconds,
                     "sampling_seconds": est.sampling_seconds, "ranking_seconds": est.ranking_seconds},
        "procrustes_error": procrustes_error(X, Z),
        "procrustes_on": n,
        "triplet_error": triplet_error(X, Z, n_test=cfg["n_test"], random_state=seed),
        "triplet_error_n_test": cfg["n_test"],
        "newton_iterations": [int(cc.n_iter) for cc in cols],
        "cg_iterations": [int(cc.cg_iters) for cc in cols],
        "converged": [bool(cc.converged) for cc in cols],
        "unranked_items": int(sum(cc.unranked.size for cc in cols)),
    }


def child_throughput(cfg: dict) -> dict:
    """Ranking-stage throughput with 1 and 2 threads on the same stored triplets."""
    import warnings

    import loe_viz as lv

    warnings.simplefilter("ignore")
    _warm_up()
    n, c, l, seed = cfg["n"], cfg["c"], cfg["landmarks"], cfg["seed"]
    X = lv.make_points("gaussian", n, 2, random_state=seed)
    oracle = lv.TripletOracle(X, random_state=1000 + seed)
    per = lv.total_budget(n, c) // l
    lms = np.sort(np.random.default_rng(seed).choice(n, size=l, replace=False))
    T = oracle.landmark_triplets(lms, per)
    runs = []
    ref = None
    for jobs in cfg["order"]:
        load0 = _load()
        t0, c0 = time.perf_counter(), time.process_time()
        model = lv.LOE(n_landmarks=l, landmarks=lms, n_jobs=jobs, memory_limit=math.inf).fit(T, n_items=n)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        if ref is None:
            ref = model.embedding_
        same = bool(np.array_equal(ref, model.embedding_))
        rank = model.stages_.timings["ranking"]
        runs.append({"jobs": jobs, "ranking_seconds": rank, "comparisons_per_second": per * l / rank,
                     "wall_seconds": wall, "cpu_seconds": cpu, "load_before": load0, "load_after": _load(),
                     "identical_to_first": same})
        print(f"  throughput n={n} c={c} l={l} jobs={jobs}: ranking {rank:.1f} s, "
              f"{per * l / rank / 1e6:.2f} M comparisons/s, cpu/wall {cpu / wall:.2f}, load {load0:.1f}",
              file=sys.stderr, flush=True)
    by = {}
    for r in runs:
        by.setdefault(r["jobs"], []).append(r["comparisons_per_second"])
    best = {j: max(v) for j, v in by.items()}
    return {**cfg, "per_landmark": int(per), "runs": runs,
            "ratio_best": best[2] / best[1] if 1 in best and 2 in best else None,
            "ratio_median": float(np.median(by[2]) / np.median(by[1])) if 1 in by and 2 in by else None}


def _run_child(kind: str, cfg: dict, log) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), f"--child-{kind}", json.dumps(cfg)]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=log, text=True)
    if proc.returncode != 0:
        return {**cfg, "error": f"exit code {proc.returncode}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------- sweep
def fitted_slopes(rows):
    ok = [r for r in rows if "timings" in r]
    if len(ok) < 2:
        return None
    n = np.array([r["n"] for r in ok], dtype=float)
    t = np.array([r["timings"]["total"] for r in ok])
    s_n = np.polyfit(np.log(n), np.log(t), 1)[0]
    s_nlogn = np.polyfit(np.log(n * np.log(n)), np.log(t), 1)[0]
    rank = np.array([r["timings"]["sampling"] + r["timings"]["ranking"] for r in ok])
    cpu = np.array([r["cpu_seconds"] for r in ok])
    return {"sizes": [int(v) for v in n], "log_time_vs_log_n": float(s_n),
            "log_time_vs_log_nlogn": float(s_nlogn),
            "log_cpu_time_vs_log_nlogn": float(np.polyfit(np.log(n * np.log(n)), np.log(cpu), 1)[0]),
            "log_sampling_ranking_time_vs_log_nlogn": float(np.polyfit(np.log(n * np.log(n)), np.log(rank), 1)[0])}


def calibration_from(rows):
    """Per-comparison costs measured in the sweep, for ``loe_viz.resources.CALIBRATION``.

    From CPU seconds (all threads), split between sampling and ranking like the wall
    time: the cost on a core of its own, which is what the estimate models, and less
    sensitive than wall time to other processes sharing the machine.
    """
    out = []
    for r in rows:
        if "timings" not in r:
            continue
        t = r["timings"]
        busy = t["sampling"] + t["ranking"]
        comparisons = r["total_comparisons"]
        cpu = r["cpu_seconds"]
        out.append({"n": r["n"], "c": r["c"],
                    "sampling_cpu_s_per_comparison": cpu * t["sampling"] / busy / comparisons,
                    "ranking_cpu_s_per_comparison": cpu * t["ranking"] / busy / comparisons,
                    "wall_s_per_comparison": busy / comparisons})
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", nargs="+", type=float, default=[1e4, 3e4, 1e5, 3e5, 1e6])
    ap.add_argument("--budgets", nargs="+", type=float, default=[50, 200])
    ap.add_argument("--landmarks", type=int, default=6)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-test", type=int, default=100_000)
    ap.add_argument("--max-memory", type=float, default=12.0, help="GiB a configuration may use (estimate)")
    ap.add_argument("--max-seconds", type=float, default=2400.0, help="estimated seconds a configuration may take")
    ap.add_argument("--throughput-n", type=float, default=1e5, help="n of the 1-vs-2-thread ranking measurement")
    ap.add_argument("--throughput-c", type=float, default=50, help="c of the 1-vs-2-thread ranking measurement")
    ap.add_argument("--no-throughput", action="store_true")
    ap.add_argument("--throughput-only", action="store_true")
    ap.add_argument("--plot-only", action="store_true")
    ap.add_argument("--merge", nargs="+", metavar="JSON", help="combine the runs of several result files")
    ap.add_argument("--out", metavar="JSON", help="where to write the results (default benchmarks/results/scale.json; "
                    "the HTML figure beside it)")
    ap.add_argument("--child-fit")
    ap.add_argument("--child-throughput")
    args = ap.parse_args(argv)

    if args.child_fit:
        print(json.dumps(child_fit(json.loads(args.child_fit))))
        return
    if args.child_throughput:
        print(json.dumps(child_throughput(json.loads(args.child_throughput))))
        return

    global JSON_PATH, HTML_PATH
    if args.out:  # a read-only or shared checkout: results elsewhere
        JSON_PATH = os.path.abspath(args.out)
        HTML_PATH = os.path.splitext(JSON_PATH)[0] + ".html"
    os.makedirs(os.path.dirname(JSON_PATH), exist_ok=True)
    if args.plot_only:
        with open(JSON_PATH) as f:
            write_html(json.load(f))
        print(f"wrote {HTML_PATH}")
        return
    if args.merge:
        merged = merge_results(args.merge)
        _save(merged)
        write_html(merged)
        print(f"wrote {JSON_PATH} and {HTML_PATH}")
        return

    import loe_viz as lv

    results = {"protocol": {"d": 2, "points": "gaussian N(0, I/(2d))", "temperature": 1.0,
                            "budget": "floor(c n ln n) in total", "landmarks": args.landmarks,
                            "jobs": args.jobs, "seed": args.seed, "cpu_count": os.cpu_count(),
                            "calibration_used": lv.resources.CALIBRATION["machine"],
                            "code": _runinfo.code_version(), "started": time.strftime("%Y-%m-%d %H:%M:%S")},
               "runs": [], "skipped": [], "throughput": []}
    if os.path.exists(JSON_PATH):
        with open(JSON_PATH) as f:
            old = json.load(f)
        if args.throughput_only:
            results = old
    log = sys.stderr

    if not args.throughput_only:
        for c in args.budgets:
            for n in (int(v) for v in args.sizes):
                per = lv.total_budget(n, c) // args.landmarks
                est = lv.LOE(n_landmarks=args.landmarks, n_jobs=args.jobs).estimate_resources(n, per)
                cfg = {"n": n, "c": c, "landmarks": args.landmarks, "jobs": args.jobs, "seed": args.seed,
                       "n_test": args.n_test}
                if est.peak_bytes > args.max_memory * GIB or est.seconds > args.max_seconds:
                    why = f"estimate {est.summary()} exceeds --max-memory {args.max_memory} GiB or --max-seconds {args.max_seconds:.0f}"
                    print(f"skip n={n} c={c}: {why}", flush=True)
                    results["skipped"].append({**cfg, "reason": why})
                    continue
                print(f"run n={n} c={c} l={args.landmarks} jobs={args.jobs}: {est.summary()}", flush=True)
                row = _run_child("fit", cfg, log)
                results["runs"].append(row)
                if "timings" in row:
                    tt = row["timings"]
                    print(f"  total {tt['total']:.1f} s (sampling {tt['sampling']:.1f}, ranking {tt['ranking']:.1f}, "
                          f"shifts+edm+lmds {tt['shifts'] + tt['edm'] + tt['lmds']:.2f}), peak {row['peak_rss_bytes'] / GIB:.2f} GiB "
                          f"(fit {row['fit_peak_bytes'] / GIB:.2f}, estimate {row['estimate']['peak_bytes'] / GIB:.2f}), "
                          f"Procrustes {row['procrustes_error']:.4f}, triplet error {row['triplet_error']:.4f}, "
                          f"load {row['load_before']:.1f}", flush=True)
                else:
                    print(f"  failed: {row['error']}", flush=True)
                _save(results)
        results["slopes"] = {str(c): fitted_slopes([r for r in results["runs"] if r["c"] == c]) for c in args.budgets}
        results["calibration"] = calibration_from(results["runs"])
        for c, s in results["slopes"].items():
            if s:
                print(f"c={c}: slope of log time vs log n {s['log_time_vs_log_n']:.3f}, "
                      f"vs log(n ln n) {s['log_time_vs_log_nlogn']:.3f} over n = {s['sizes']}")
        _save(results)

    if not args.no_throughput:
        results["throughput"] = []
        n_t, c_t = int(args.throughput_n), args.throughput_c
        for l in (6, 5):
            cfg = {"n": n_t, "c": c_t, "landmarks": l, "seed": args.seed, "order": [1, 2, 1, 2]}
            row = _run_child("throughput", cfg, log)
            results["throughput"].append(row)
            if row.get("ratio_best"):
                print(f"throughput l={l}: 2 threads / 1 thread = {row['ratio_best']:.2f} (best of 2 each), "
                      f"{row['ratio_median']:.2f} (median)", flush=True)
            _save(results)
    write_html(results)
    print(f"wrote {JSON_PATH} and {HTML_PATH}")


def merge_results(paths):
    """Runs of several result files (a later file wins for the same configuration), re-summarised."""
    out = None
    runs, skipped, throughput = {}, {}, []
    for path in paths:
        with open(path) as f:
            res = json.load(f)
        if out is None:
            out = {k: v for k, v in res.items() if k not in ("runs", "skipped", "throughput", "slopes", "calibration")}
            out["merged_from"] = []
        out["merged_from"].append({"file": os.path.basename(path), "protocol": res.get("protocol")})
        for r in res.get("runs", []):
            runs[(r["n"], r["c"], r["landmarks"], r["jobs"])] = r
        for r in res.get("skipped", []):
            skipped[(r["n"], r["c"])] = r
        throughput += res.get("throughput") or []
    out["runs"] = sorted(runs.values(), key=lambda r: (r["c"], r["n"]))
    done = {(r["n"], r["c"]) for r in out["runs"] if "timings" in r}
    out["skipped"] = [r for key, r in skipped.items() if key not in done]
    out["throughput"] = throughput
    budgets = sorted({r["c"] for r in out["runs"]})
    out["slopes"] = {str(c): fitted_slopes([r for r in out["runs"] if r["c"] == c]) for c in budgets}
    out["calibration"] = calibration_from(out["runs"])
    return out


def _save(results):
    tmp = JSON_PATH + ".tmp"
    with open(tmp, "w") as f:
        json.dump(results, f, indent=1)
    os.replace(tmp, JSON_PATH)


# ---------------------------------------------------------------------- plot
def write_html(results):
    from bokeh.embed import file_html
    from bokeh.layouts import column, row
    from bokeh.models import ColumnDataSource, Div, HoverTool
    from bokeh.plotting import figure
    from bokeh.resources import CDN

    runs = [r for r in results.get("runs", []) if "timings" in r]
    colours = {50.0: "#1f77b4", 200.0: "#d62728"}
    stage_colours = {"sampling": "#2ca02c", "ranking": "#1f77b4", "total": "#000000"}
    f_time = figure(title="Time per stage vs n", x_axis_type="log", y_axis_type="log", width=520, height=380,
                    x_axis_label="n (items)", y_axis_label="seconds")
    f_mem = figure(title="Peak memory vs n", x_axis_type="log", y_axis_type="log", width=520, height=380,
                   x_axis_label="n (items)", y_axis_label="GiB")
    f_err = figure(title="Errors vs n", x_axis_type="log", y_axis_type="log", width=520, height=380,
                   x_axis_label="n (items)", y_axis_label="error")
    for c in sorted({r["c"] for r in runs}):
        rs = sorted((r for r in runs if r["c"] == c), key=lambda r: r["n"])
        n = [r["n"] for r in rs]
        dash = "solid" if c == 50 else "dashed"
        for stage in ("sampling", "ranking", "total"):
            src = ColumnDataSource({"n": n, "t": [max(r["timings"][stage], 1e-3) for r in rs]})
            f_time.line("n", "t", source=src, color=stage_colours[stage], line_dash=dash,
                        legend_label=f"{stage}, c={c:g}")
            f_time.scatter("n", "t", source=src, color=stage_colours[stage], size=6)
        base = rs[0]
        ref = [base["timings"]["total"] * (v * math.log(v)) / (base["n"] * math.log(base["n"])) for v in n]
        f_time.line(n, ref, color="grey", line_dash="dotted", legend_label=f"∝ n ln n (c={c:g})")
        col = colours.get(c, "#9467bd")
        f_mem.line(n, [r["peak_rss_bytes"] / GIB for r in rs], color=col, line_dash=dash,
                   legend_label=f"measured peak RSS, c={c:g}")
        f_mem.scatter(n, [r["peak_rss_bytes"] / GIB for r in rs], color=col, size=6)
        f_mem.line(n, [r["estimate"]["peak_bytes"] / GIB for r in rs], color=col, line_dash="dotted",
                   legend_label=f"estimate (fit only), c={c:g}")
        f_err.line(n, [r["procrustes_error"] for r in rs], color=col, line_dash=dash, legend_label=f"Procrustes, c={c:g}")
        f_err.scatter(n, [r["procrustes_error"] for r in rs], color=col, size=6)
        f_err.line(n, [r["triplet_error"] for r in rs], color=col, line_dash="dotdash", legend_label=f"triplet error, c={c:g}")
        f_err.scatter(n, [r["triplet_error"] for r in rs], color=col, size=6, marker="square")
    for f in (f_time, f_mem, f_err):
        f.legend.location = "top_left"
        f.legend.label_text_font_size = "8pt"
        f.add_tools(HoverTool(tooltips=[("n", "@x{0,0}"), ("value", "@y{0.000}")]))
    rows_html = "".join(
        f"<tr><td>{r['n']:,}</td><td>{r['c']:g}</td><td>{r['landmarks']}</td><td>{r['jobs']}</td>"
        f"<td>{r['total_comparisons']:,}</td><td>{r['timings']['sampling']:.1f}</td><td>{r['timings']['ranking']:.1f}</td>"
        f"<td>{r['timings']['shifts'] + r['timings']['edm'] + r['timings']['lmds']:.2f}</td><td>{r['timings']['total']:.1f}</td>"
        f"<td>{r['peak_rss_bytes'] / GIB:.2f}</td><td>{r['estimate']['peak_bytes'] / GIB:.2f}</td>"
        f"<td>{r['estimate']['seconds']:.0f}</td>"
        f"<td>{r['procrustes_error']:.4f}</td><td>{r['triplet_error']:.4f}</td><td>{r['load_before']:.1f}</td></tr>"
        for r in sorted(runs, key=lambda r: (r["c"], r["n"])))
    slopes = results.get("slopes", {})
    slope_html = "".join(
        f"<li>c = {c}: slope of log time against log n = {s['log_time_vs_log_n']:.3f}, against log(n ln n) = "
        f"{s['log_time_vs_log_nlogn']:.3f}, CPU seconds against log(n ln n) = {s['log_cpu_time_vs_log_nlogn']:.3f} "
        f"(n = {', '.join(f'{v:,}' for v in s['sizes'])})</li>"
        for c, s in slopes.items() if s)
    thr_html = "".join(
        f"<li>{t.get('label', '')} n = {t['n']:,}, c = {t['c']:g}, l = {t['landmarks']}: 2 threads give {t['ratio_best']:.2f}x the "
        f"ranking throughput of 1 (best of each), {t['ratio_median']:.2f}x (median); "
        + ", ".join(f"{r['jobs']} thread(s) {r['comparisons_per_second'] / 1e6:.2f} M/s (load {r['load_before']:.1f})"
                    for r in t["runs"]) + "</li>"
        for t in results.get("throughput", []) if t.get("ratio_best"))
    skipped = "".join(f"<li>n = {s['n']:,}, c = {s['c']:g}: {s['reason']}</li>" for s in results.get("skipped", []))
    p = results.get("protocol", {})
    head = Div(text=f"""
<h2>LOE at scale (benchmarks/bench_scale.py)</h2>
<p>d = {p.get('d')}, points {p.get('points')}, BTL temperature {p.get('temperature')}, budget {p.get('budget')},
{p.get('landmarks')} random landmarks, {p.get('jobs')} thread(s), seed {p.get('seed')}, {p.get('cpu_count')} cores.
Peak memory is the resident set of a fresh process running one configuration (interpreter, numba and the
points included); the estimate is <code>loe_viz.estimate_resources</code>'s peak of the fit alone.
Triplet error on a sample of random noiseless triplets; Procrustes error on all items.
The load average (other processes on the machine) is shown for each run.</p>
<table border="1" cellspacing="0" cellpadding="3" style="font-size:11px">
<tr><th>n</th><th>c</th><th>l</th><th>threads</th><th>comparisons</th><th>sampling s</th><th>ranking s</th>
<th>shifts+edm+lmds s</th><th>total s</th><th>peak GiB</th><th>estimate GiB</th><th>estimate s</th>
<th>Procrustes</th><th>triplet error</th><th>load</th></tr>{rows_html}</table>
<ul>{slope_html}</ul><h3>Ranking throughput, 2 threads vs 1</h3><ul>{thr_html}</ul>
<h3>Skipped</h3><ul>{skipped or '<li>none</li>'}</ul>""", width=1100)
    layout = column(head, row(f_time, f_mem), f_err)
    with open(HTML_PATH, "w") as f:
        f.write(file_html(layout, resources=CDN, title="LOE at scale"))


if __name__ == "__main__":
    main()
