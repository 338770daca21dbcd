"""Numba kernels that index list-order triplets by their head."""

from __future__ import annotations

import numpy as np
from ._jit import njit


#: Up to this many items :func:`count_heads` counts into four interleaved partial tables
#: (``16 n`` bytes, 16 MiB at the limit).
COUNT_LANES_MAX_ITEMS = 1 << 20


@njit(nogil=True, cache=True)
def count_heads(triplets, n, counts):
    """``counts[i]`` = number of triplets whose head is ``i``.

    Triplets grouped by head (a landmark's block after another's, as an oracle or a
    design writes them) make one counter take every increment, each waiting for the
    previous one through memory (about 3 ns a row); four partial tables, one per row
    modulo 4, break that chain (1.38M rows over 5 heads: 4.0 -> 1.8 ms) and cost the
    same on shuffled heads. Above :data:`COUNT_LANES_MAX_ITEMS` items, one table.
    """
    m = triplets.shape[0]
    if n > COUNT_LANES_MAX_ITEMS or m // 4 + 3 > 2**31 - 1:  # a lane's count must fit in int32
        for i in range(n):
            counts[i] = 0
        for t in range(m):
            counts[triplets[t, 0]] += 1
        return
    part = np.zeros((4, n), dtype=np.int32)
    q = m - m % 4
    for t in range(0, q, 4):
        part[0, triplets[t, 0]] += 1
        part[1, triplets[t + 1, 0]] += 1
        part[2, triplets[t + 2, 0]] += 1
        part[3, triplets[t + 3, 0]] += 1
    for t in range(q, m):
        part[0, triplets[t, 0]] += 1
    for i in range(n):
        counts[i] = np.int64(part[0, i]) + part[1, i] + part[2, i] + part[3, i]


@njit(nogil=True, cache=True)
def split_by_slot(triplets, slot, start, near, far):
    """Scatter the triplets whose head has a slot (>= 0) into per-slot blocks.

    ``slot[i]`` is the landmark column of item ``i`` or -1; the comparisons of
    column ``c`` land in ``near/far[start[c]:]`` in input order (``start`` is not
    changed). The write position of the current run of one slot stays in a
    register: triplets grouped by head (a landmark's block after another's) would
    otherwise make each row wait for the previous row's store to the same counter
    (1.38M rows over 5 heads: 4.8 -> 2.9 ms; the same on shuffled heads).
    """
    fill = start.copy()
    last = -1
    p = 0
    for t in range(triplets.shape[0]):
        c = slot[triplets[t, 0]]
        if c != last:
            if last >= 0:
                fill[last] = p
            last = c
            if c >= 0:
                p = fill[c]
        if c >= 0:
            near[p] = triplets[t, 1]
            far[p] = triplets[t, 2]
            p += 1


@njit(nogil=True, cache=True)
def scan(triplets):
    """One pass over integer triplets: ``(min, max, first row repeating an item or -1)``.

    ``triplets`` is C-contiguous. The extremes are taken over the flat array and the
    repeats counted without a branch (both loops vectorise); only a file with a repeat
    is read again, to the first one. One loop with the search inside took 8 ms for
    1.38 million rows inside a fit, against 3.5 ms.
    """
    flat = triplets.reshape(-1)
    lo = flat[0]
    hi = flat[0]
    for t in range(flat.shape[0]):
        v = flat[t]
        lo = min(lo, v)
        hi = max(hi, v)
    repeats = 0
    for t in range(triplets.shape[0]):
        i = triplets[t, 0]
        j = triplets[t, 1]
        k = triplets[t, 2]
        repeats += (i == j) | (i == k) | (j == k)
    bad = -1
    if repeats:
        for t in range(triplets.shape[0]):
            i = triplets[t, 0]
            j = triplets[t, 1]
            k = triplets[t, 2]
            if i == j or i == k or j == k:
                bad = t
                break
    return lo, hi, bad


@njit(nogil=True, cache=True)
def join_items(triplets, parent):
    """Join the three items of every triplet: a union-find over ``parent`` (``parent[i] = i`` at the start).

    Each root is the smallest item of its group; path halving keeps the trees flat, so one pass costs
    about the same as reading the triplets. On return ``parent[i]`` is the root of ``i``'s group.
    """
    for t in range(triplets.shape[0]):
        a = triplets[t, 0]
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        for c in range(1, 3):
            b = triplets[t, c]
            while parent[b] != b:
                parent[b] = parent[parent[b]]
                b = parent[b]
            if a < b:
                parent[b] = a
            elif b < a:
                parent[a] = b
                a = b
    for i in range(parent.shape[0]):  # a root is smaller than its items: one pass in increasing order suffices
        parent[i] = parent[parent[i]]
