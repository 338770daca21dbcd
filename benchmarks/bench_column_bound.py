"""How far LOE's rankings can go on collected-style triplets when the shifts are known.

    python benchmarks/bench_column_bound.py              # the capitals file and n = 1000 (5 folds each)
    python benchmarks/bench_column_bound.py --n 2000     # other sizes of the Zipf-headed sets

LOE estimates, for each landmark, a BTL ranking of the other items from the triplets that
landmark heads; each ranking is known only up to its own shift, which LOE recovers from the
landmark block. On collected triplets (a few answers per item and head) LOE stays well below
STE in held-out accuracy (``bench_collected.py``). This benchmark asks which part loses it: it
keeps LOE's rankings and replaces the estimated shifts by the best ones the true points allow
(one scale and one shift per column, least squares of the ranked scores on the true squared
distances), then projects onto the EDM cone and places every item by landmark MDS as LOE does.
What the true shifts gain bounds what a better shift estimate (or more comparisons among the
landmarks) could gain; what is still missing to STE is lost in the rankings themselves. It is a
reference that needs the truth, not a method.

Rows, held-out accuracy over the folds of ``bench_collected.py`` (same data, seeds and split):
LOE with its defaults, and placed with the true shifts; LOE on every head with at least 3
triplets (at most 200, the penalty its defaults chose), and placed with the true shifts; where
every item heads (the capitals file), one BTL fit of every pair's distance (the block's symmetry,
which LOE's columns leave out); the ML fit of the triplets LOE's defaults use (STE on them, from
LOE's embedding); STE; the true points.
Results go to benchmarks/results/column_bound.json.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings

import numpy as np

import loe_viz as lv
from bench_collected import OwnTripletsML, capitals, collected_triplets, load_average
from loe_viz.baselines import STE
from loe_viz.edm import project_edm
from loe_viz.lmds import landmark_mds
from loe_viz.loe import LOEWarning

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results", "column_bound.json")
MAX_HEADS = 200


def _ranked_truth(stages, X):
    """``(R, landmarks, D, ranked)``: the rankings, the true squared distances to the landmarks (n, l), and which
    scores rest on comparisons (not a landmark's own entry, not an item its comparisons missed)."""
    R, L = stages.ranking.R, stages.landmarks
    n, l = R.shape
    D = ((X[:, None, :] - X[None, L, :]) ** 2).sum(-1)
    ranked = np.ones((n, l), dtype=bool)
    ranked[L, np.arange(l)] = False
    for c, un in enumerate(stages.ranking.unranked):
        ranked[un, c] = False
    return R, L, D, ranked


def true_shift_embedding(stages, X, d):
    """LOE's rankings placed with the shifts (and the scale) that fit the true squared distances best."""
    R, L, D, ranked = _ranked_truth(stages, X)
    l = L.size
    rows, cols = np.nonzero(ranked)
    A = np.zeros((rows.size, l + 1))  # R[i, c] ~ a * D[i, c] - s[c]
    A[:, 0], A[np.arange(rows.size), 1 + cols] = D[rows, cols], -1.0
    a, *s = np.linalg.lstsq(A, R[rows, cols], rcond=None)[0]
    Dh = (R + np.asarray(s)[None, :]) / a
    Dh[L, np.arange(l)] = 0.0
    W = Dh[L].copy()
    np.fill_diagonal(W, 0.0)
    E = project_edm((W + W.T) / 2).E
    return landmark_mds(E, Dh, L, d, deficient="floor").embedding


def joint_symmetric_embedding(train, n, d, reg=0.1):
    """Every head a landmark, without columns: each pair's distance is one parameter of a single BTL fit of all
    the triplets (the score of j in i's ranking and of i in j's are the same number, and no shift is left to
    estimate), then one constant offset (chosen on the training triplets), the EDM projection and classical
    MDS. It uses the symmetry LOE's columns leave out, not the low rank STE fits."""
    from scipy.optimize import minimize

    iu = np.triu_indices(n, 1)
    pair = np.zeros((n, n), dtype=np.int64)
    pair[iu] = pair[iu[1], iu[0]] = np.arange(iu[0].size)
    near, far = pair[train[:, 0], train[:, 1]], pair[train[:, 0], train[:, 2]]

    def loss(x):
        z = x[far] - x[near]  # P(near is closer) = sigmoid(D_far - D_near)
        p = 0.5 * (1.0 - np.tanh(0.5 * z))  # sigmoid(-z), the loss's slope in z
        g = np.bincount(near, p, iu[0].size) - np.bincount(far, p, iu[0].size)
        return np.logaddexp(0.0, -z).sum() + reg * x @ x, g + 2.0 * reg * x

    x = minimize(loss, np.zeros(iu[0].size), jac=True, method="L-BFGS-B").x
    best = None
    for offset in np.linspace(-x.min(), -x.min() + 3.0 * x.std(), 7):
        W = np.zeros((n, n))
        W[iu] = x + offset
        E = project_edm(W + W.T).E
        Z = landmark_mds(E, E, np.arange(n), d, deficient="floor").embedding
        fit = lv.triplet_accuracy(Z, train)
        if best is None or fit > best[0]:
            best = (fit, Z)
    return best[1]


def column_correlation(stages, X):
    """Mean over the columns of the correlation between a ranking's scores and the true squared distances."""
    R, _, D, ranked = _ranked_truth(stages, X)
    return float(np.mean([np.corrcoef(R[ranked[:, c], c], D[ranked[:, c], c])[0, 1] for c in range(R.shape[1])]))


def evaluate(T, n, X, d, folds, seed, label):
    rng = np.random.default_rng(seed)
    parts = np.array_split(rng.permutation(T.shape[0]), folds)
    out, corr = {}, []

    def put(name, Z, test):
        out.setdefault(name, []).append(lv.triplet_accuracy(np.asarray(Z, float), test))

    for f, test_idx in enumerate(parts):
        train, test = T[np.setdiff1d(np.arange(T.shape[0]), test_idx)], T[np.sort(test_idx)]
        est_seed = seed + 100 * f + 3  # as bench_collected: never the data's seed
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LOEWarning)
            loe = lv.LOE(n_components=d, random_state=est_seed).fit(train, n_items=n)
            reg = (loe.auto_search_ or {}).get("chosen_regularization", loe.regularization)
            counts = np.bincount(train[:, 0], minlength=n)
            heads = min(int((counts >= 3).sum()), MAX_HEADS)
            many = lv.LOE(n_components=d, n_landmarks=heads, regularization=reg, refine=None,
                          random_state=est_seed).fit(train, n_items=n)
            own = OwnTripletsML(d, est_seed).fit(train, n)
            ste = STE(n_components=d, random_state=est_seed).fit(train, n_items=n)
        put("LOE (defaults)", loe.embedding_, test)
        put("LOE (defaults), true shifts", true_shift_embedding(loe.stages_, X, d), test)
        put("LOE (every head), own shifts", many.embedding_, test)
        put("LOE (every head), true shifts", true_shift_embedding(many.stages_, X, d), test)
        if loe.landmarks_.size == n:  # every item heads: the whole matrix is the landmark block
            put("every pair fitted jointly (symmetric)", joint_symmetric_embedding(train, n, d), test)
        put("ML fit of LOE's own triplets", own.embedding_, test)
        put("STE (random start)", ste.embedding_, test)
        put("true points", X, test)
        corr.append(column_correlation(loe.stages_, X))
        print(f"  {label} fold {f + 1}/{folds}: " + ", ".join(f"{k} {v[-1]:.3f}" for k, v in out.items())
              + f" ({loe.landmarks_.size} and {heads} landmarks; scores against true squared distances: "
              f"correlation {corr[-1]:.2f})", flush=True)
    res = {k: {"test_accuracy": v, "mean": float(np.mean(v)), "std": float(np.std(v, ddof=1))}
           for k, v in out.items()}
    return res | {"column_correlation": {"per_fold": corr, "mean": float(np.mean(corr))}}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, nargs="*", default=[1000])
    ap.add_argument("--c", type=float, default=10.0)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--output", default=RESULTS)
    args = ap.parse_args(argv)
    t0, d = time.perf_counter(), 2
    sets = {}
    T, n, Xc = capitals()
    sets["european_capitals_crowd.csv"] = (T, n, Xc)
    for n in args.n:
        X = lv.make_points("gaussian", n, d, random_state=args.seed)
        for noise in ("btl", "flip"):
            sets[f"gaussian n={n} d={d} {noise}"] = (collected_triplets(X, lv.total_budget(n, args.c), noise,
                                                                        args.seed + 7)[0], n, X)
    result = {"load_average_start": load_average(), "protocol": {"c": args.c, "folds": args.folds,
                                                                 "seed": args.seed, "max_heads": MAX_HEADS}}
    for label, (T, n, X) in sets.items():
        result[label] = evaluate(T, n, X, d, args.folds, args.seed, label)
    print(f"\nheld-out accuracy, mean +- std over {args.folds} folds")
    names = [k for k in result[next(iter(sets))] if k != "column_correlation"]  # the first set has every row
    print(f"{'method':<34}" + "".join(f"{k[:26]:>28}" for k in sets))
    for name in names:
        print(f"{name:<34}" + "".join(f"{result[k][name]['mean']:>20.3f} +- {result[k][name]['std']:.3f}"
                                      if name in result[k] else f"{'-':>28}" for k in sets))
    print(f"{'scores vs true squared distances':<34}" + "".join(
        f"{'correlation ' + format(result[k]['column_correlation']['mean'], '.2f'):>28}" for k in sets))
    result["seconds"] = round(time.perf_counter() - t0, 1)
    result["load_average_end"] = load_average()
    with open(args.output, "w") as fh:
        json.dump(result, fh, indent=1)
    print(f"\nwrote {args.output} ({result['seconds']} s)")


if __name__ == "__main__":
    main()
