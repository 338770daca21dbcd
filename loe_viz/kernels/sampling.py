"""Numba kernels that draw and answer triplet queries.

Randomness comes from a counter-based SplitMix64 stream whose 64-bit seed is an
argument, so every kernel is a pure function of its inputs: the same seed gives
the same comparisons on any thread, process or machine.
"""

from __future__ import annotations

import numpy as np
from ._jit import njit

from .fastexp import sigmoid as _sigmoid
from .prefetch import WRITE_AHEAD, prefetch_write

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_INV53 = 1.0 / 9007199254740992.0  # 2 ** -53


@njit(nogil=True, cache=True, inline="always")
def splitmix64(state):
    """Advance a SplitMix64 state; return ``(new_state, 64 random bits)``."""
    state = state + _GOLDEN
    z = state
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return state, z ^ (z >> np.uint64(31))


@njit(nogil=True, cache=True, inline="always")
def uniform01(state):
    """A double in [0, 1) and the advanced state."""
    state, z = splitmix64(state)
    return state, np.float64(z >> np.uint64(11)) * _INV53


@njit(nogil=True, cache=True, inline="always")
def below(z, k):
    """Map 64 random bits to an integer in [0, k) by a multiply-shift (Lemire), k < 2**32."""
    return np.int64(((z >> np.uint64(32)) * np.uint64(k)) >> np.uint64(32))


@njit(nogil=True, cache=True, inline="always")
def _sqdist(X, a, b):
    s = 0.0
    for t in range(X.shape[1]):
        diff = X[a, t] - X[b, t]
        s += diff * diff
    return s


@njit(nogil=True, cache=True, inline="always")
def _j_closer(dij, dik, temperature, u):
    """The answer to "is j closer than k?" given the squared distances and a uniform coin ``u``."""
    if temperature > 0.0:
        # P(j is closer) = sigmoid((D_ik - D_ij) / T)
        z = (dik - dij) / temperature
        if z >= 0:
            p = 1.0 / (1.0 + np.exp(-z))
        else:
            e = np.exp(z)
            p = e / (1.0 + e)
        return u < p
    if dij == dik:
        return u < 0.5
    return dij < dik


@njit(nogil=True, cache=True, inline="always")
def _answer(X, i, j, k, temperature, state):
    """Return (closer, farther, state) for the query "is j or k closer to i?"."""
    dij = _sqdist(X, i, j)
    dik = _sqdist(X, i, k)
    state, u = uniform01(state)
    if _j_closer(dij, dik, temperature, u):
        return j, k, state
    return k, j, state


@njit(nogil=True, cache=True, inline="always")
def _pair(state, head, n):
    """A uniformly random pair ``(j, k)`` of distinct items other than ``head``, and the new state."""
    state, z = splitmix64(state)
    j = below(z, n - 1)
    state, z = splitmix64(state)
    k = below(z, n - 2)
    # map j into [0, n) \ {head}, then k into [0, n) \ {head, j}
    if j >= head:
        j += 1
    lo = head if head < j else j
    hi = j if head < j else head
    if k >= lo:
        k += 1
    if k >= hi:
        k += 1
    return j, k, state


#: Comparisons drawn, answered and written per block: the block's scratch (40 KiB) stays in the
#: L1/L2 cache, and each phase of a block is a short loop the CPU overlaps or vectorises.
_BLOCK = 1024

#: A coin closer than this to the answer probability is decided again with libm's exponential.
_NEAR_TIE = 1e-13


@njit(nogil=True, cache=True)
def head_distances(X, head):
    """Squared distances from ``head`` to every item (as :func:`_sqdist` computes them)."""
    n = X.shape[0]
    dh = np.empty(n)
    for a in range(n):
        dh[a] = _sqdist(X, head, a)
    return dh


@njit(nogil=True, cache=True, error_model="numpy")
def _answer_block(dh, head, n, temperature, state, count, jb, kb, ub, zb, closer):
    """Draw ``count`` pairs and coins from ``state`` and answer them against ``dh``.

    Writes the pairs to ``jb``/``kb`` and ``closer[i] = 1`` when ``jb[i]`` is
    answered closer; returns the advanced state. The answers are exactly
    :func:`_j_closer`'s (libm's exponential) on the same draws: the logistic is
    evaluated with :func:`_sigmoid` (plain arithmetic), and a coin within
    ``_NEAR_TIE`` of it is decided again by :func:`_j_closer`. Phases (draw, gather, logistic, decide)
    are separate loops so that the gathers overlap and the logistic vectorises.
    """
    for i in range(count):
        j, k, state = _pair(state, head, n)
        state, u = uniform01(state)
        jb[i] = j
        kb[i] = k
        ub[i] = u
    if temperature > 0.0:
        for i in range(count):
            zb[i] = (dh[kb[i]] - dh[jb[i]]) / temperature
        for i in range(count):
            zb[i] = _sigmoid(zb[i], 700.0)  # P(j closer)
        for i in range(count):
            u = ub[i]
            p = zb[i]
            if abs(u - p) < _NEAR_TIE:
                closer[i] = _j_closer(dh[jb[i]], dh[kb[i]], temperature, u)
            else:
                closer[i] = u < p
    else:
        for i in range(count):
            closer[i] = _j_closer(dh[jb[i]], dh[kb[i]], 0.0, ub[i])
    return state


@njit(nogil=True, cache=True, inline="always")
def _block_buffers():
    """Scratch space of :func:`_answer_block`: pairs, coins, log-odds and answers of one block."""
    return (np.empty(_BLOCK, dtype=np.int64), np.empty(_BLOCK, dtype=np.int64), np.empty(_BLOCK),
            np.empty(_BLOCK), np.empty(_BLOCK, dtype=np.int64))


@njit(nogil=True, cache=True)
def _write_answered(X, head, m, temperature, seed, near, far, starts, shift, nb):
    """Draw and answer ``m`` comparisons of ``head`` from ``seed`` and write them to ``near``/``far``.

    In the order drawn when ``starts`` is None (numba compiles that case
    without the branch); otherwise at the next free place of the drawn pair's
    tile ``(j >> shift) * nb + (k >> shift)``, ``starts`` holding each tile's
    next place (advanced in place). Each tile's output is then one of ``nb**2``
    write streams, more than the CPU follows by itself: whenever a tile starts a
    new cache line, the line ``WRITE_AHEAD`` places on is fetched for writing, so
    the writes find their lines in cache (2 * 10^7 comparisons: 336 -> 270 ms at
    n = 10^5, 49 tiles; 427 -> 362 ms at n = 10^6, 256 tiles; in the order drawn 145
    and 223 ms).
    """
    n = X.shape[0]
    dh = head_distances(X, head)
    jb, kb, ub, zb, closer = _block_buffers()
    state = np.uint64(seed)
    top = near.shape[0] - 1
    for t0 in range(0, m, _BLOCK):
        count = min(_BLOCK, m - t0)
        state = _answer_block(dh, head, n, temperature, state, count, jb, kb, ub, zb, closer)
        for i in range(count):
            j = jb[i]
            k = kb[i]
            if starts is None:
                p = t0 + i
            else:
                q = (j >> shift) * nb + (k >> shift)
                p = starts[q]
                starts[q] = p + 1
                if (p & 15) == 0:
                    ahead = min(p + WRITE_AHEAD, top)
                    prefetch_write(near, ahead)
                    prefetch_write(far, ahead)
            a = k + closer[i] * (j - k)
            near[p] = a
            far[p] = j + k - a


@njit(nogil=True, cache=True)
def landmark_comparisons(X, head, m, temperature, seed, near, far):
    """Draw ``m`` answered comparisons headed by ``head`` into ``near``/``far``.

    Each comparison is a uniformly random pair of distinct items other than
    ``head`` (pairs may repeat), answered under the BTL model with the given
    temperature (0 = noiseless).

    Parameters
    ----------
    X : float64 (n, d)
    head : int
    m : int
    temperature : float
    seed : uint64
    near, far : int arrays of length >= m, written in place.
    """
    _write_answered(X, head, m, temperature, seed, near, far, None, 0, 0)


@njit(nogil=True, cache=True)
def landmark_comparisons_tiled(X, head, m, temperature, seed, shift, near, far):
    """The comparisons of :func:`landmark_comparisons`, grouped in cache-sized tiles.

    Draws the same ``m`` pairs and coins from the same stream, but writes them
    grouped by tile ``(j >> shift, k >> shift)`` of the drawn pair, in the order
    drawn within a tile (a counting sort: the stream is drawn twice, the first
    time for the pairs only). The result is a permutation of
    :func:`landmark_comparisons`' output: the same answered comparisons.
    """
    n = X.shape[0]
    nb = ((n - 1) >> shift) + 1
    starts = np.zeros(nb * nb + 1, dtype=np.int64)
    state = np.uint64(seed)
    for t in range(m):
        j, k, state = _pair(state, head, n)
        state = state + _GOLDEN  # the coin's draw, not needed yet
        starts[(j >> shift) * nb + (k >> shift) + 1] += 1
    for q in range(nb * nb):
        starts[q + 1] += starts[q]
    _write_answered(X, head, m, temperature, seed, near, far, starts, shift, nb)


@njit(nogil=True, cache=True)
def uniform_triplets(X, m, temperature, seed, out):
    """Draw ``m`` answered triplets with uniformly random distinct (i, j, k).

    Rows of ``out`` (shape (m, 3)) are written in list-order.
    """
    n = X.shape[0]
    state = np.uint64(seed)
    for t in range(m):
        state, z = splitmix64(state)
        i = below(z, n)
        j, k, state = _pair(state, i, n)
        a, b, state = _answer(X, i, j, k, temperature, state)
        out[t, 0] = i
        out[t, 1] = a
        out[t, 2] = b


@njit(nogil=True, cache=True)
def triplet_agreement(Z, triplets):
    """Fraction of list-order ``triplets`` that the embedding ``Z`` satisfies (ties count half).

    Counted without branches: on a fitted embedding a third of the answers or more
    disagree with it, in no predictable order, and the mispredicted branches made
    the loop 3x slower (23 against 7 ms for 1.5 million triplets at n = 2000).
    """
    m = triplets.shape[0]
    good = 0
    ties = 0
    for t in range(m):
        i = triplets[t, 0]
        dij = _sqdist(Z, i, triplets[t, 1])
        dik = _sqdist(Z, i, triplets[t, 2])
        good += dij < dik
        ties += dij == dik
    return (good + 0.5 * ties) / m


@njit(nogil=True, cache=True)
def head_agreement(Z, head, near, far):
    """Satisfied comparisons of one head: ``(i, near[t], far[t])`` with ``i = head``, ties counting half.

    The sum (not the fraction) of :func:`triplet_agreement` over the comparisons, so
    the shares of several heads add up; counted without branches, as there.
    """
    good = 0
    ties = 0
    for t in range(near.shape[0]):
        dij = _sqdist(Z, head, near[t])
        dik = _sqdist(Z, head, far[t])
        good += dij < dik
        ties += dij == dik
    return good + 0.5 * ties
