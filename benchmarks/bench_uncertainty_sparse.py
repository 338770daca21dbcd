"""Where LOE's per-item uncertainty stops being calibrated: few comparisons per item.

    python benchmarks/bench_uncertainty_sparse.py                 # about a minute on 2 cores
    python benchmarks/bench_uncertainty_sparse.py --seeds 5 --n 500

``bench_uncertainty.py`` measures the 90 % regions at the paper's budgets, where every
ranking holds tens of comparisons per item (c = 20 with d + 3 landmarks at n = 1000: about
28). Collected triplets hold far fewer (the bundled capitals file: 1.7 per item and
landmark). Here: Gaussian points in d = 2 (seed ``10 + s``), BTL answers at temperature 1
(seed ``20 + s``), LOE with l landmarks (seed ``30 + s``) and ``per_item * n`` comparisons per
landmark. Printed per (comparisons per item, l): the coverage of the 90 % regions after the
best similarity alignment (``loe_viz.uncertainty.coverage``), and the ratio of the predicted
rms error (from the traces of ``uncertainty_``) to the rms error measured against the truth.
Results go to benchmarks/results/uncertainty_sparse.json.
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


def rms_ratio(X, Z, cov) -> float:
    """Predicted rms error (traces of ``cov``) over the rms error after the best similarity alignment."""
    Xc, Zc = X - X.mean(axis=0), Z - Z.mean(axis=0)
    U, sv, Vt = np.linalg.svd(Zc.T @ Xc)
    R = U @ Vt  # rotates the truth onto Z
    Xa = (Xc @ R.T) * (sv.sum() / float(np.sum(Xc * Xc)))
    actual = np.sqrt(np.mean(np.sum((Xa - Zc) ** 2, axis=1)))
    predicted = np.sqrt(np.mean(np.trace(cov, axis1=1, axis2=2)))
    return float(predicted / actual)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--per-item", type=float, nargs="+", default=[2, 5, 10, 20, 40])
    ap.add_argument("--landmarks", type=int, nargs="+", default=[5, 20])
    ap.add_argument("--out", default=os.path.join(HERE, "results", "uncertainty_sparse.json"))
    args = ap.parse_args(argv)

    import loe_viz as lv
    from loe_viz.uncertainty import coverage

    rows = []
    for per in args.per_item:
        for l in args.landmarks:
            cov, ratio = [], []
            for s in range(args.seeds):
                X = lv.make_points("gaussian", args.n, 2, random_state=10 + s)
                oracle = lv.TripletOracle(X, temperature=1.0, random_state=20 + s)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model = lv.LOE(n_components=2, n_landmarks=l, random_state=30 + s).fit_oracle(
                        oracle, int(per * args.n))
                    C = model.uncertainty_
                if C is None:
                    continue
                cov.append(coverage(X, model.embedding_, C))
                ratio.append(rms_ratio(X, model.embedding_, C))
            rows.append({"per_item": per, "n_landmarks": l, "coverage": cov, "rms_ratio": ratio})
            print(f"{per:5g} comparisons per item, l = {l:3d}: coverage of the 90 % regions "
                  f"{' '.join(f'{v:.3f}' for v in cov)}; predicted / actual rms error "
                  f"{' '.join(f'{v:.2f}' for v in ratio)}", flush=True)
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump({"code": _runinfo.code_version(), "n": args.n, "seeds": args.seeds, "rows": rows}, fh, indent=1)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
