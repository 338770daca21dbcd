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
def split_by_slot(triplets, slot, offsets, near, far):
    """Scatter the triplets whose head has a slot (>= 0) into per-slot blocks.

    ``slot[i]`` is the landmark column of item ``i`` or -1; the comparisons of
    column ``c`` land in ``near/far[offsets[c]:offsets[c + 1]]`` in input order.
    """
    fill = offsets[:-1].copy()
    for t in range(triplets.shape[0]):
        c = slot[triplets[t, 0]]
        if c >= 0:
            p = fill[c]
            near[p] = triplets[t, 1]
            far[p] = triplets[t, 2]
            fill[c] = p + 1


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
