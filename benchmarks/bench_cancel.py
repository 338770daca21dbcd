"""Seconds from a cancel to the end of a baseline's fit, at the explorer's largest Compare run.

    python benchmarks/bench_cancel.py                       # 8.06 * 10^7 triplets, n = 20,000
    python benchmarks/bench_cancel.py --rows 2e7 --delays 1,2,3 --json cancel.json

At that size one pass of STE over the triplets takes seconds, and one L-BFGS-B
iteration holds several passes. A cancel heard only by the ``callback`` (once per
iteration, the explorer's earlier wiring) waits for the iteration to end; a
``progress`` callable that raises is also heard between blocks of
``loe_viz.kernels.losses.EVAL_BLOCK`` triplets inside each pass. Both are measured
in the same run: a fit starts on a worker thread, the cancel comes after each of
``--delays`` seconds, and the script prints the seconds until the fit has returned.
"""

from __future__ import annotations

import argparse
import json
import os
import threading
import time

import numpy as np

from loe_viz import STE
from loe_viz.kernels import losses


class Cancelled(Exception):
    pass


def triplets(n: int, m: int, seed: int = 0) -> np.ndarray:
    """``m`` triplets of distinct items (the order of j and k does not change a pass's cost)."""
    rng = np.random.default_rng(seed)
    T = np.empty((m, 3), dtype=np.int32)
    step = 10_000_000
    for a in range(0, m, step):
        b = min(m, a + step)
        i = rng.integers(0, n, b - a)
        j = (i + rng.integers(1, n, b - a)) % n
        k = (i + rng.integers(1, n - 1, b - a)) % n
        k = np.where(k >= j, k + 1, k) % n
        k = np.where(k == i, (k + 1) % n, k)
        k = np.where(k == j, (k + 1) % n, k)
        T[a:b, 0], T[a:b, 1], T[a:b, 2] = i, j, k
    return T


def cancel_latency(T, n, how: str, delay: float, n_jobs: int) -> dict:
    stop = threading.Event()
    done = {}

    def callback(it, Z):
        return stop.is_set()

    def progress(stage, it, total):
        if stop.is_set():
            raise Cancelled

    def run():
        est = STE(n_components=2, random_state=1, max_iter=10_000, tol=0.0, n_jobs=n_jobs, callback=callback)
        try:
            est.fit(T, n_items=n, progress=progress if how == "within passes" else None)
            done["reason"] = est.stop_reason_
        except Cancelled:
            done["reason"] = "cancelled"
        done["t"] = time.perf_counter()

    th = threading.Thread(target=run)
    th.start()
    time.sleep(delay)
    t0 = time.perf_counter()
    stop.set()
    th.join()
    return dict(how=how, delay_s=delay, latency_s=round(done["t"] - t0, 3), stop=done["reason"])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=float, default=8.06e7)
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--delays", default="0.5,1,1.5,3,4.5,6")
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--json", default=None, help="also write the results to this file")
    args = ap.parse_args(argv)
    m, n = int(args.rows), args.n
    T = triplets(n, m)
    X = np.random.default_rng(2).normal(size=(n, 2))
    losses.triplet_loss_grad(X, T[:1000], losses.KIND_STE, 0.0, 0.0, args.n_jobs)  # compile
    t0 = time.perf_counter()
    losses.triplet_loss_grad(X, T, losses.KIND_STE, 0.0, 0.0, args.n_jobs)
    one_pass = time.perf_counter() - t0
    print(f"{m:,} triplets, n = {n:,}: one STE pass {one_pass:.2f} s on {args.n_jobs} threads; "
          f"blocks of {losses.EVAL_BLOCK:,}; load {os.getloadavg()[0]:.2f}", flush=True)
    rows = []
    for delay in [float(x) for x in args.delays.split(",")]:
        for how in ("between iterations", "within passes"):
            row = cancel_latency(T, n, how, delay, args.n_jobs)
            rows.append(row)
            print(json.dumps(row), flush=True)
    for how in ("between iterations", "within passes"):
        lat = [r["latency_s"] for r in rows if r["how"] == how]
        print(f"{how:>20}: median {np.median(lat):.2f} s, worst {max(lat):.2f} s over {len(lat)} cancels")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(rows=rows, one_pass_s=one_pass, m=m, n=n, block=losses.EVAL_BLOCK), f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
