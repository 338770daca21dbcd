"""Per-kernel cost of one landmark's sampling and ranking, in nanoseconds per comparison.

    python benchmarks/bench_kernels.py                    # n = 1000 (276k) and n = 10^5 (4.6e7)
    python benchmarks/bench_kernels.py --quick            # n = 10^5 with 10^7 comparisons
    python benchmarks/bench_kernels.py --against DIR      # side by side with the loe_viz under DIR

The setting is one landmark of LOE at C = 200 with 5 landmarks (``total_budget(n, 200) // 5``
comparisons, Gaussian points in 2-D, temperature 1). Times are CPU seconds of the
measuring thread (``time.thread_time``), the best of a few repetitions, so that other
processes on a busy machine inflate them less than wall time; ``uptime``'s load average
is printed beside them. With ``--against DIR`` (the root of another checkout, e.g. made
by ``git worktree add DIR main``) both versions run in turn in fresh interpreters,
twice each, and the table shows the best time of each and the ratio old / new.

Measured 2026-12-01 (2-core AMD EPYC VM, load average 1.6-1.8 from other work) against the
kernels before the blocked passes (ns per comparison, old -> new):

    n = 10^5, 4.6e7 comparisons: sampling 86 -> 16, gradient (float32 / float64 logistic)
    19 / 31 -> 12 / 18, CG iteration 6.9 -> 4.6 (single-precision products), score_moments
    (now with the agreement) 13.7 -> 10.6, agreement pass 8.8 -> none; rank_column
    10.2 s -> 5.0 s (uniform comparisons, no landmark share).
    n = 1000, 276k comparisons: sampling 40 -> 15, mean-field start 22 -> 8, rank_column
    44 ms -> 18 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np


def _load():
    return os.getloadavg()[0]


def _best(f, reps):
    f()  # warm: compiled, pages touched
    best = np.inf
    for _ in range(reps):
        t = time.thread_time()
        f()
        best = min(best, time.thread_time() - t)
    return best


def measure(n: int, m: int, reps: int) -> dict:
    """ns per comparison of each kernel, on one landmark's comparisons (the loe_viz importable now)."""
    import loe_viz as lv
    from loe_viz import ranking as rk
    from loe_viz.kernels import btl
    from loe_viz.kernels import uncertainty as uk

    X = lv.make_points("gaussian", n, 2, random_state=0)
    oracle = lv.TripletOracle(X, random_state=1)
    head = 123
    near = np.empty(m, dtype=np.int32)
    far = np.empty(m, dtype=np.int32)
    out = {}
    out["sampling"] = _best(lambda: oracle.comparisons(head, m, 5, tiled=True, out=(near, far)), max(1, reps // 2))
    mask = np.ones(n, dtype=bool)
    mask[head] = False
    w = np.empty(n)
    out["meanfield_start"] = _best(lambda: btl.meanfield_start(near, far, mask, rk.MEANFIELD_ITER, 128, w), reps)
    grad, hd, h = np.empty(n), np.empty(n), np.empty(m, dtype=np.float32)
    out["gradient f32"] = _best(lambda: btl.gradient(near, far, w, 1e-3, mask, grad, hd, h, False), reps)
    out["gradient f64"] = _best(lambda: btl.gradient(near, far, w, 1e-3, mask, grad, hd, h, True), reps)
    d, work = np.empty(n), np.empty((4, n))
    # five conjugate-gradient iterations (tolerance never met), per iteration
    out["CG iteration"] = _best(lambda: btl.newton_direction(near, far, h, hd, 1e-3, mask, grad, 5, 1e-300, d, work),
                                reps) / 5
    if hasattr(btl, "newton_direction_coarse"):  # products in single precision, as rank_column past the cache
        none, empty = np.zeros(0, dtype=np.int64), np.zeros((0, 0))
        out["CG iteration f32"] = _best(lambda: btl.newton_direction_coarse(
            near, far, h, hd, 1e-3, mask, grad, 5, 1e-300, d, work, none, empty, True), reps) / 5
    counts = np.empty(n, dtype=np.int64)
    out["count_appearances"] = _best(lambda: btl.count_appearances(near, far, n, counts), reps)
    if hasattr(btl, "win_counts"):
        wins = np.empty((n, 2), dtype=np.int32)
        out["win_counts"] = _best(lambda: btl.win_counts(near, far, wins), reps)
    out["agreement"] = _best(lambda: btl.agreement(near, far, w), reps)
    sv, sb = np.empty(n), np.empty(n)
    out["score_moments"] = _best(lambda: uk.score_moments(near, far, w, h, hd, mask, sv, sb), reps)
    cols = []
    out["rank_column"] = _best(lambda: cols.append(rk.rank_column(near, far, head, n, reorder=False)),
                               max(1, reps // 2))
    col = cols[-1]
    res = {k: v / m * 1e9 for k, v in out.items()}
    res["rank_column passes"] = f"{col.n_iter} Newton, {col.cg_iters} CG"
    res["rank_column s"] = out["rank_column"]
    res["sampling s"] = out["sampling"]
    return res


def _child(args) -> dict:
    return {f"{n}": measure(n, m, reps) for n, m, reps in _settings(args)}


def _settings(args):
    from math import floor, log

    big = 10**7 if args.quick else floor(200 * 10**5 * log(10**5)) // 5
    small = floor(200 * 1000 * log(1000)) // 5
    return [(1000, small, 9), (100_000, big, 2)]


def _run_in(root: str, args) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), "--child"] + (["--quick"] if args.quick else [])
    env = dict(os.environ, PYTHONPATH=os.path.abspath(root))
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=os.path.abspath(root), check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="n = 10^5 with 10^7 comparisons instead of 4.6e7")
    ap.add_argument("--against", metavar="DIR", help="root of another checkout to compare with")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(_child(args)))
        return
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    load0 = _load()
    if args.against:
        runs = {"old": [], "new": []}
        for _ in range(2):
            runs["old"].append(_run_in(args.against, args))
            runs["new"].append(_run_in(here, args))
    else:
        runs = {"new": [_run_in(here, args)]}
    load1 = _load()
    for n, m, _ in _settings(args):
        print(f"\nn = {n}, m = {m} comparisons (one landmark), ns per comparison; load average {load0:.2f} -> {load1:.2f}")
        keys = list(runs["new"][0][str(n)])
        for k in keys:
            vals = {}
            for label, rs in runs.items():
                got = [r[str(n)].get(k) for r in rs if k in r[str(n)]]
                vals[label] = (min(got) if isinstance(got[0], float) else got[0]) if got else None
            if isinstance(vals["new"], float):
                line = f"  {k:20s} new {vals['new']:8.2f}"
                if "old" in vals and isinstance(vals.get("old"), float):
                    line += f"   old {vals['old']:8.2f}   old/new {vals['old'] / vals['new']:5.2f}"
            else:
                line = f"  {k:20s} new {vals['new']}" + (f"   old {vals['old']}" if "old" in vals else "")
            print(line)


if __name__ == "__main__":
    main()
