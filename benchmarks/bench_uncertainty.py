"""Calibration of LOE's per-item uncertainty (issue 14, item 5).

    python benchmarks/bench_uncertainty.py                       # n = 1e3, 1e4, 1e5; c = 20, 50, 200
    python benchmarks/bench_uncertainty.py --sizes 1000 --seeds 4  # a quick subset
    python benchmarks/bench_uncertainty.py --sizes 1e5 --out benchmarks/results/uncertainty_1e5.json
    python benchmarks/bench_uncertainty.py --merge a.json b.json   # combine runs made separately
    python benchmarks/bench_uncertainty.py --kernel-cost           # score-moments pass against one ranking
    python benchmarks/bench_uncertainty.py --block-cost            # the block derivatives, cold and warm starts

Protocol: x ~ N(0, I/(2d)) with d = 2 (ground-truth seed ``1000 + s``), BTL answers at
temperature 1 (oracle seed ``2000 + s``), the paper's total budget
``loe_viz.total_budget(n, c)`` split evenly over the landmarks, and ``LOE`` with its default
settings (landmark seed ``3000 + s``; ``--jobs`` threads). For every fit, the embedding is
aligned to the truth by the best translation, rotation/reflection and scale, the same
rotation and scale are applied to ``LOE.uncertainty_``, and a true position counts as
covered when its squared Mahalanobis distance to the aligned estimate is at most the 90 %
quantile of chi-square with d degrees of freedom.

Reported per (n, c): coverage of the 90 % ellipses pooled over items and seeds (and per
seed), the same with two ablations of the model (the items' own rows only; without removing
the similarity gauge), the Procrustes error, the ellipse size (median over items of the
geometric-mean half-axis ``sqrt(chi2_d(0.9)) det(Sigma)^(1/(2d))`` after alignment), and the
time of the covariances beside the time of the fit. Across budgets at each n: the fitted
slope of log(ellipse size) against log c (1/sqrt(c) is -0.5). Fits that raise
``DimensionError`` (the landmark block supports fewer than d dimensions) are counted and
skipped. The load average is recorded: on a shared machine wall-clock figures depend on it.
Results go to benchmarks/results/uncertainty.json (rewritten after every configuration, so a
long run keeps what finished).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _runinfo  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
JSON_PATH = os.path.join(HERE, "results", "uncertainty.json")
DEFAULT_SEEDS = {1000: 10, 10_000: 3, 100_000: 2}


def _aligned(X, Z, cov):
    """Aligned embedding and covariances (Z -> scale * Z R + t onto X)."""
    Xc = X - X.mean(axis=0)
    Zc = Z - Z.mean(axis=0)
    U, sv, Vt = np.linalg.svd(Xc.T @ Zc)
    R = (U @ Vt).T
    scale = sv.sum() / float(np.sum(Zc * Zc))
    Za = scale * Zc @ R + X.mean(axis=0)
    C = scale**2 * np.einsum("ji,njk,kl->nil", R, cov, R)
    return Za, C


def _inside(X, Za, C, q):
    diff = X - Za
    m2 = np.einsum("ni,nij,nj->n", diff, np.linalg.pinv(C, hermitian=True), diff)
    return m2 <= q


def run_one(n, c, seed, n_jobs, d=2):
    from scipy.stats import chi2

    import loe_viz
    from loe_viz.uncertainty import item_covariance

    X = loe_viz.make_points("gaussian", n, d, random_state=1000 + seed)
    oracle = loe_viz.TripletOracle(X, temperature=1.0, random_state=2000 + seed)
    model = loe_viz.LOE(n_components=d, n_jobs=n_jobs, random_state=3000 + seed)
    l = model.n_landmarks if isinstance(model.n_landmarks, int) else d + 3  # fit_oracle's default
    per = loe_viz.total_budget(n, c) // l
    t0 = time.perf_counter()
    try:
        model.fit_oracle(oracle, per)
    except loe_viz.DimensionError as exc:
        return {"n": n, "c": c, "seed": seed, "dimension_error": str(exc)}
    t_fit = time.perf_counter() - t0
    t0 = time.perf_counter()
    cov = model.uncertainty_
    t_unc = time.perf_counter() - t0
    if cov is None:
        return {"n": n, "c": c, "seed": seed, "no_uncertainty": model.stages_.uncertainty.reason}
    Z = model.embedding_
    q = chi2.ppf(0.9, d)
    Za, C = _aligned(X, Z, cov)
    inside = _inside(X, Za, C, q)
    size = np.sqrt(q) * np.linalg.det(C) ** (1.0 / (2 * d))
    st = model.stages_
    ablations = {}
    # the covariance alone (without the squared first-order bias): its size should go like 1/sqrt(c)
    C0 = item_covariance(st.W, st.D_landmarks, st.landmarks, st.lmds.embedding, st.uncertainty.score_variance,
                         model.offset)
    _, C0a = _aligned(X, Z, C0)
    size0 = np.sqrt(q) * np.maximum(np.linalg.det(C0a), 0.0) ** (1.0 / (2 * d))
    for name, kw in (("items_only", dict(block=False)), ("no_gauge", dict(gauge=False))):
        Ck = item_covariance(st.W, st.D_landmarks, st.landmarks, st.lmds.embedding,
                             st.uncertainty.score_variance, model.offset, **kw)
        keep = np.ones(n, dtype=bool)
        if name == "items_only":
            keep[st.landmarks] = False  # their rows carry no item term
        _, Cka = _aligned(X, Z, Ck)
        ablations[name] = float(np.mean(_inside(X[keep], Za[keep], Cka[keep], q)))
    return {
        "n": n, "c": c, "seed": seed, "n_landmarks": int(l), "per_landmark": int(per),
        "coverage": float(np.mean(inside)), "n_inside": int(inside.sum()),
        "coverage_items_only": ablations["items_only"], "coverage_no_gauge": ablations["no_gauge"],
        "procrustes": float(loe_viz.procrustes_error(X, Z)),
        "ellipse_size_median": float(np.median(size)),
        "ellipse_size_median_no_bias": float(np.median(size0)),
        "aligned_error_median": float(np.median(np.linalg.norm(X - Za, axis=1))),
        "fit_seconds": t_fit, "uncertainty_seconds": t_unc,
        "load_average": list(os.getloadavg()),
    }


def summarise(runs):
    cells = {}
    for r in runs:
        cells.setdefault((r["n"], r["c"]), []).append(r)
    summary = []
    for (n, c), rs in sorted(cells.items()):
        ok = [r for r in rs if "coverage" in r]
        if not ok:
            summary.append({"n": n, "c": c, "fits": 0, "dimension_errors": len(rs)})
            continue
        inside = sum(r["n_inside"] for r in ok)
        total = sum(r["n"] for r in ok)
        summary.append({
            "n": n, "c": c, "fits": len(ok), "dimension_errors": len(rs) - len(ok),
            "coverage": inside / total,
            "coverage_per_seed": [round(r["coverage"], 3) for r in ok],
            "coverage_items_only": float(np.mean([r["coverage_items_only"] for r in ok])),
            "coverage_no_gauge": float(np.mean([r["coverage_no_gauge"] for r in ok])),
            "in_band": bool(0.85 <= inside / total <= 0.95),
            "procrustes_median": float(np.median([r["procrustes"] for r in ok])),
            "ellipse_size_median": float(np.median([r["ellipse_size_median"] for r in ok])),
            "ellipse_size_median_no_bias": float(np.median([r.get("ellipse_size_median_no_bias", np.nan) for r in ok])),
            "aligned_error_median": float(np.median([r.get("aligned_error_median", np.nan) for r in ok])),
            "fit_seconds_median": float(np.median([r["fit_seconds"] for r in ok])),
            "uncertainty_seconds_median": float(np.median([r["uncertainty_seconds"] for r in ok])),
        })
    slopes = {}
    for key in ("ellipse_size_median", "ellipse_size_median_no_bias", "aligned_error_median"):
        for n in sorted({s["n"] for s in summary}):
            pts = [(s["c"], s[key]) for s in summary if s["n"] == n and np.isfinite(s.get(key, np.nan))]
            if len(pts) >= 2:
                cs, sz = np.log([p[0] for p in pts]), np.log([p[1] for p in pts])
                slopes.setdefault(key, {})[str(n)] = float(np.polyfit(cs, sz, 1)[0])
    return summary, slopes


def save(runs, path):
    summary, slopes = summarise(runs)
    out = {
        "code_version": _runinfo.code_version(),
        "protocol": "d=2, x ~ N(0, I/4), T=1, total_budget(n, c) split over LOE's default landmarks, 90% ellipses",
        "summary": summary, "slope_vs_c": slopes, "runs": runs,
    }
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
    return summary, slopes


def print_summary(summary, slopes):
    print(f"{'n':>7} {'c':>4} {'fits':>4} {'cover':>6} {'items':>6} {'nogauge':>7} {'procr':>7} {'size':>7} "
          f"{'fit s':>7} {'unc s':>6}  per seed")
    for s in summary:
        if "coverage" not in s:
            print(f"{s['n']:>7} {s['c']:>4} {0:>4}  (all {s['dimension_errors']} fits raised DimensionError)")
            continue
        print(f"{s['n']:>7} {s['c']:>4g} {s['fits']:>4} {s['coverage']:>6.3f} {s['coverage_items_only']:>6.3f} "
              f"{s['coverage_no_gauge']:>7.3f} {s['procrustes_median']:>7.4f} {s['ellipse_size_median']:>7.4f} "
              f"{s['fit_seconds_median']:>7.2f} {s['uncertainty_seconds_median']:>6.3f}  {s['coverage_per_seed']}")
    names = {"ellipse_size_median": "ellipse size", "ellipse_size_median_no_bias": "ellipse size without the bias term",
             "aligned_error_median": "median aligned error"}
    for key, per_n in slopes.items():
        for n, sl in per_n.items():
            print(f"n = {n}: slope of log({names[key]}) vs log(c) = {sl:.3f} (1/sqrt(c): -0.5)")


def kernel_cost(sizes=(1000, 10_000), c=50, l=5, repeats=3):
    """Seconds of the score-moments pass against those of one landmark's ranking (which includes it)."""
    import loe_viz
    from loe_viz.kernels import btl
    from loe_viz.kernels import uncertainty as unc_kernels
    from loe_viz.ranking import rank_column

    for n in sizes:
        X = loe_viz.make_points("gaussian", n, random_state=0)
        oracle = loe_viz.TripletOracle(X, random_state=1)
        per = loe_viz.total_budget(n, c) // l
        near, far = oracle.comparisons(0, per, oracle.next_seeds(1)[0], tiled=True)
        mask = np.ones(n, dtype=bool)
        mask[0] = False
        t_rank, t_mom = [], []
        for _ in range(repeats + 1):  # the first compiles
            t0 = time.perf_counter()
            col = rank_column(near, far, 0, n, reorder=False)
            t_rank.append(time.perf_counter() - t0)
            g, hd, h = np.empty(n), np.empty(n), np.empty(per, dtype=np.float32)
            btl.gradient(near, far, col.scores, 1e-3, mask, g, hd, h, True)
            v, b = np.empty(n), np.empty(n)
            t0 = time.perf_counter()
            unc_kernels.score_moments(near, far, col.scores, h, hd, mask, v, b)
            t_mom.append(time.perf_counter() - t0)
        r, m = min(t_rank[1:]), min(t_mom[1:])
        print(f"n = {n}, {per:,} comparisons: ranking {r:.3f} s (score moments included), score moments "
              f"{m:.4f} s = {100 * m / r:.1f} % (load average {os.getloadavg()[0]:.1f})")


def block_cost(repeats: int = 5):
    """Time one run of the block steps the covariances' derivatives repeat, from scratch (the EDM projection
    from the block itself, to 1e-10) against from the unperturbed block's projection (as ``item_covariance``
    runs them), and the whole covariance, on stored triplets with many landmarks: 300 items, 10^6 uniform
    triplets, ``LOE``'s default landmarks (every head: 200)."""
    import loe_viz
    from loe_viz._blas import blas_single_thread
    from loe_viz.uncertainty import block_solution, item_covariance

    X = loe_viz.make_points("gaussian", 300, random_state=3)
    T = loe_viz.TripletOracle(X, 1.0, random_state=4).uniform_triplets(1_000_000)
    u = loe_viz.LOE(random_state=5).fit(T, n_items=300).stages_.uncertainty
    W, l = u.W, u.W.shape[0]
    base = block_solution(W, 2, u.offset)
    D = np.random.default_rng(0).choice((-1.0, 1.0), size=(l, l))
    np.fill_diagonal(D, 0.0)
    W1 = W + 1e-4 * np.abs(W).max() * D
    times = {"cold": [], "warm": []}
    with blas_single_thread():  # as item_covariance runs them
        for _ in range(repeats + 1):  # the first compiles
            for key, ref in (("cold", None), ("warm", base)):
                t0 = time.perf_counter()
                sol = block_solution(W1, 2, u.offset, reference=ref)
                times[key].append((time.perf_counter() - t0, sol.edm.n_iter))
    cold, warm = min(times["cold"][1:]), min(times["warm"][1:])
    t0 = time.perf_counter()
    item_covariance(u.W, u.D_landmarks, u.landmarks, u.embedding, u.score_variance, u.offset, biases=u.score_bias)
    total = time.perf_counter() - t0
    print(f"{l} landmarks: block steps from scratch {cold[0]:.4f} s ({cold[1]} Dykstra iterations), from the "
          f"unperturbed projection {warm[0]:.4f} s ({warm[1]}), {cold[0] / warm[0]:.2f}x; the covariances of "
          f"300 items {total:.1f} s (load average {os.getloadavg()[0]:.1f})")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", type=float, default=[1000, 1e4, 1e5])
    ap.add_argument("--budgets", nargs="+", type=float, default=[20, 50, 200])
    ap.add_argument("--seeds", type=int, default=None, help="seeds per size (default 10 / 3 / 2 for 1e3 / 1e4 / 1e5)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default=JSON_PATH)
    ap.add_argument("--merge", nargs="+", default=None, help="combine the runs of saved JSON files into --out")
    ap.add_argument("--kernel-cost", action="store_true", help="time the score-moments pass against a ranking")
    ap.add_argument("--block-cost", action="store_true", help="time the block derivatives' steps, cold and warm")
    args = ap.parse_args(argv)
    if args.block_cost:
        block_cost()
        return
    if args.kernel_cost:
        kernel_cost()
        return
    if args.merge:
        runs = []
        for p in args.merge:
            with open(p) as f:
                runs += json.load(f)["runs"]
        print_summary(*save(runs, args.out))
        return
    import loe_viz  # noqa: F401  (compile the kernels before timing)

    runs = []
    for n in [int(s) for s in args.sizes]:
        k = args.seeds or DEFAULT_SEEDS.get(n, 2)
        for c in args.budgets:
            for seed in range(k):
                r = run_one(n, c, seed, args.jobs)
                runs.append(r)
                print(json.dumps({key: (round(v, 4) if isinstance(v, float) else v) for key, v in r.items()
                                  if key != "load_average"}), flush=True)
                save(runs, args.out)
    print_summary(*save(runs, args.out))


if __name__ == "__main__":
    main()
