"""Where noisy answers leave LOE's rankings unable to tell the items apart: signal, error and coverage.

    python benchmarks/bench_separation.py                     # about three minutes on 2 cores
    python benchmarks/bench_separation.py --n 10000 --c 20 50 --temperature 3 6 10 30

A ranking's separation (``RankingResult.separation``) is the variance of its scores over the
items it ranked divided by the mean sampling variance of one score: about 1 when the answers are
coin flips, whatever the budget. The rankings' signal (``RankingResult.signal``) sums the
separations minus 1 over the landmarks. Here: Gaussian points in d = 2 (seed 5), BTL answers at each
temperature (seed 6), LOE with its defaults (seed 7) on ``total_budget(n, c)`` comparisons.
Printed per (c, temperature): the signal, the median ranking's separation, comparisons per item and
landmark, LOE's Procrustes error, the coverage of the nominal 90 % regions after the best
similarity alignment, and whether the fit warned that the rankings barely tell the items apart
(``uncertainty.SIGNAL_MIN``). Results go to
benchmarks/results/separation.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _runinfo  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--c", type=float, nargs="+", default=[20, 50, 200])
    ap.add_argument("--temperature", type=float, nargs="+", default=[1, 3, 6, 10, 20, 30, 1e6])
    ap.add_argument("--out", default=os.path.join(HERE, "results", "separation.json"))
    args = ap.parse_args(argv)

    import loe_viz as lv
    from loe_viz.uncertainty import coverage

    X = lv.make_points("gaussian", args.n, 2, random_state=5)
    rows = []
    for c in args.c:
        for t in args.temperature:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                model = lv.LOE(random_state=7).fit_oracle(lv.TripletOracle(X, temperature=t, random_state=6),
                                                          lv.total_budget(args.n, c))
            ranking = model.stages_.ranking
            row = {"c": c, "temperature": t, "signal": ranking.signal,
                   "separation": float(np.median(ranking.separation)),
                   "per_item": float(np.median(ranking.n_comparisons / ranking.items_covered)),
                   "procrustes": float(lv.procrustes_error(X, model.embedding_)),
                   "coverage": float(coverage(X, model.embedding_, model.stages_.uncertainty.covariance)),
                   "warned": any("barely tell the items apart" in str(w.message) for w in caught)}
            rows.append(row)
            print(f"c = {c:4g}, T = {t:7g}: signal {row['signal']:8.3g}, separation {row['separation']:7.3g}, "
                  f"{row['per_item']:6.1f} comparisons "
                  f"per item; Procrustes {row['procrustes']:.3f}, 90 % regions cover {row['coverage']:.2f}"
                  f"{'; warned' if row['warned'] else ''}", flush=True)
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump({"code": _runinfo.code_version(), "n": args.n, "rows": rows}, fh, indent=1)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
