"""Numba kernels that pull one landmark's share out of stored list-order triplets.

Used by the memory-lean :meth:`loe_viz.LOE.fit` path: each landmark task scans
the stored triplets (in memory or memory-mapped from disk) and copies only the
comparisons headed by its landmark, in input order, so no more than one share
per running task is ever held in memory.
"""

from __future__ import annotations

from ._jit import njit


@njit(nogil=True, cache=True)
def count_head(triplets, head):
    """Number of rows of ``triplets`` whose head (column 0) is ``head``."""
    c = 0
    for t in range(triplets.shape[0]):
        if triplets[t, 0] == head:
            c += 1
    return c


@njit(nogil=True, cache=True)
def landmark_share(triplets, head, near, far):
    """Copy ``(near, far)`` of the rows headed by ``head`` into ``near``/``far``, in row order.

    ``near`` and ``far`` must hold exactly :func:`count_head` entries. Returns
    the number of entries written.
    """
    p = 0
    cap = near.shape[0]
    for t in range(triplets.shape[0]):
        if triplets[t, 0] == head:
            if p < cap:
                near[p] = triplets[t, 1]
                far[p] = triplets[t, 2]
            p += 1
    return p
