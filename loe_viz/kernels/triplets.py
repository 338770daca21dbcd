"""Numba kernels that index list-order triplets by their head."""

from __future__ import annotations

from numba import njit


@njit(nogil=True, cache=True)
def count_heads(triplets, n, counts):
    """``counts[i]`` = number of triplets whose head is ``i``."""
    for i in range(n):
        counts[i] = 0
    for t in range(triplets.shape[0]):
        counts[triplets[t, 0]] += 1


@njit(nogil=True, cache=True)
def scan(triplets):
    """One pass over integer triplets: ``(min, max, first row repeating an item or -1)``."""
    lo = triplets[0, 0]
    hi = triplets[0, 0]
    bad = -1
    for t in range(triplets.shape[0]):
        i = triplets[t, 0]
        j = triplets[t, 1]
        k = triplets[t, 2]
        lo = min(lo, i, j, k)
        hi = max(hi, i, j, k)
        if bad < 0 and (i == j or i == k or j == k):
            bad = t
    return lo, hi, bad
