"""Time of ``train_test_split_triplets`` on a large triplet table, against sorting the two index arrays.

    python benchmarks/bench_split.py                  # 3.45 * 10^7 triplets, best of 3
    python benchmarks/bench_split.py --rows 1e7 --repeats 5

``loe-viz embed`` holds out a share of a file's triplets before the fit; on a file of
3.45 * 10^7 triplets that split took longer than reading the file. The split marks the
held-out rows in a mask; the reference below is the same permutation with its two parts
sorted and used as indices (the earlier code). Both are timed in the same run, and the
script checks that they select the same rows in the same order.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from loe_viz._validation import check_random_state
from loe_viz.evaluation import _n_test, train_test_split_triplets


def sorted_indices(T, test_size, seed):
    """The reference: the first k of the permutation held out, both parts sorted and used as indices."""
    m = T.shape[0]
    k = _n_test(test_size, m)
    perm = check_random_state(seed).permutation(m)
    return T[np.sort(perm[k:])], T[np.sort(perm[:k])]


def best(f, repeats):
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=3.45e7, help="triplets (default 3.45e7)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each, the best kept (default 3)")
    args = parser.parse_args(argv)
    m, rng = int(args.rows), np.random.default_rng(0)
    h = rng.integers(0, 10_000, m)
    T = np.column_stack([h, (h + rng.integers(1, 5000, m)) % 10_000, (h + rng.integers(5000, 9999, m)) % 10_000])
    T = T.astype(np.int32)
    t_mask, (a, b) = best(lambda: train_test_split_triplets(T, 0.2, random_state=0), args.repeats)
    t_sort, (c, d) = best(lambda: sorted_indices(T, 0.2, 0), args.repeats)
    assert np.array_equal(a, c) and np.array_equal(b, d), "the two splits differ"
    t_perm, _ = best(lambda: check_random_state(0).permutation(m), args.repeats)
    print(f"{m:,} triplets, best of {args.repeats}: split {t_mask:.2f} s, sorted indices {t_sort:.2f} s "
          f"({t_sort / t_mask:.2f}x), the permutation alone {t_perm:.2f} s; the same rows in the same order")


if __name__ == "__main__":
    main()
