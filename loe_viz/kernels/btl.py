"""Numba kernels for the regularised Bradley-Terry-Luce (BTL) ranking of one landmark.

A landmark's comparisons are two index arrays: ``near[t]`` lost and ``far[t]`` won
comparison ``t`` (the item farther from the landmark wins, so scores estimate
distances). The objective minimised is the negative log-likelihood

    f(w) = sum_t log(1 + exp(-(w[far[t]] - w[near[t]]))) + lam / 2 * ||w||^2

whose gradient sums to ``lam * sum(w)``; the driver keeps ``sum(w) = 0``.
Each kernel below is one pass over the comparisons (or, for
:func:`newton_direction`, a handful of cheap ones); the Newton iteration itself
lives in the Python driver :func:`loe_viz.ranking.rank_column`.
"""

from __future__ import annotations

import numpy as np
from ._jit import njit

from .fastexp import expneg32, sigmoid
from .prefetch import WRITE_AHEAD, prefetch_write


@njit(nogil=True, cache=True, inline="always")
def _log1pexp(x):
    # log(1 + exp(x)) without overflow
    if x > 0:
        return x + np.log1p(np.exp(-x))
    return np.log1p(np.exp(x))


@njit(nogil=True, cache=True, inline="always")
def _dot(a, b):
    # A plain loop, not np.dot: numba's np.dot calls multithreaded BLAS, whose thread
    # wake-ups cost milliseconds per call on a busy machine (tens of calls per Newton step).
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * b[i]
    return s


@njit(nogil=True, cache=True)
def objective(near, far, w, lam):
    """Negative log-likelihood plus ``lam/2 ||w||^2``."""
    f = 0.0
    for t in range(near.shape[0]):
        f += _log1pexp(w[near[t]] - w[far[t]])
    return f + 0.5 * lam * _dot(w, w)


#: Comparisons per block of the two-phase passes: gather and logistic into block-sized
#: scratch (24 KiB, in L1), then scatter.
_BLOCK = 1024


@njit(nogil=True, cache=True, error_model="numpy", fastmath={"contract"})
def _logistic_block(zb, qb, cb, count, precise, h, t0):
    """``qb = 1 - sigmoid(zb)`` and ``cb = h[t0:t0 + count] = qb (1 - qb)`` over ``count`` entries, vectorised.

    Unless ``precise``, ``z`` is rounded to single precision and the exponential
    evaluated in it (relative error ``1e-7 (1 + |z|)`` against 2.3e-16; see
    :mod:`loe_viz.kernels.fastexp`). ``|z|`` is clamped at 80.
    """
    if precise:
        for i in range(count):
            q = sigmoid(-zb[i], 80.0)  # 1 - sigmoid(z)
            qb[i] = q
            c = q * (1.0 - q)
            cb[i] = c
            h[t0 + i] = c
    else:
        one = np.float32(1.0)
        for i in range(count):  # all in single precision: eight lanes
            z = np.float32(zb[i])
            a = abs(z)
            a = a if a < np.float32(80.0) else np.float32(80.0)
            e = expneg32(a)
            r = one / (one + e)
            s = np.float32(z >= np.float32(0.0))
            qb[i] = np.float64((s * e + (one - s)) * r)
            c = e * r * r  # q (1 - q) = e / (1 + e)^2, without cancellation
            cb[i] = np.float64(c)
            h[t0 + i] = c


@njit(nogil=True, cache=True)
def gradient(near, far, w, lam, mask, grad, hdiag, h, precise):
    """One pass: the gradient, the per-comparison curvature ``h`` and its diagonal sum.

    ``grad`` is projected onto the sum-zero subspace of ``mask``. ``grad``, ``hdiag``
    (length n) and ``h`` (length m, float32) are written in place. Unless
    ``precise``, the exponential is evaluated in single precision: its relative
    error (1e-7 per unit of log-odds) is far below the statistical error of the scores and it makes
    the pass cheaper; the driver switches to ``precise`` for the last
    iterations so the optimum is found to full accuracy.
    Blocks of comparisons are gathered, passed through a vectorised logistic,
    then scattered into the gradient and the diagonal, which are interleaved so
    that one cache line holds both.
    Returns the Euclidean norm of the projected gradient.
    """
    n = w.shape[0]
    gh = np.empty((n, 2))  # gh[a] = (grad[a], hdiag[a])
    for a in range(n):
        gh[a, 0] = lam * w[a]
        gh[a, 1] = lam
    gradient_accumulate(near, far, w, h, precise, gh)
    return gradient_finish(gh, gh[:0], mask, grad, hdiag)


@njit(nogil=True, cache=True)
def gradient_accumulate(near, far, w, h, precise, gh):
    """The comparisons' part of :func:`gradient`: adds their terms to ``gh[:, 0]`` (gradient)
    and ``gh[:, 1]`` (diagonal) and writes their curvature to ``h``.

    Two threads can each take a share of the comparisons, with their own ``gh``
    (see :func:`gradient_finish`).
    """
    m = near.shape[0]
    zb = np.empty(_BLOCK)
    qb = np.empty(_BLOCK)
    cb = np.empty(_BLOCK)
    for t0 in range(0, m, _BLOCK):
        count = min(_BLOCK, m - t0)
        for i in range(count):
            zb[i] = w[far[t0 + i]] - w[near[t0 + i]]  # log-odds that "far" wins
        _logistic_block(zb, qb, cb, count, precise, h, t0)
        for i in range(count):
            a = near[t0 + i]
            b = far[t0 + i]
            q = qb[i]
            c = cb[i]
            # d f / d w_far = -q, d f / d w_near = +q
            gh[b, 0] -= q
            gh[a, 0] += q
            gh[a, 1] += c
            gh[b, 1] += c


@njit(nogil=True, cache=True)
def gradient_finish(gh, gh2, mask, grad, hdiag):
    """``grad``, ``hdiag`` from the sums ``gh`` (plus ``gh2`` unless it is empty): projected
    gradient and its norm, as :func:`gradient` returns it."""
    n = gh.shape[0]
    for a in range(n):
        grad[a] = gh[a, 0]
        hdiag[a] = gh[a, 1]
    if gh2.shape[0] == n:
        for a in range(n):
            grad[a] += gh2[a, 0]
            hdiag[a] += gh2[a, 1]
    _center(grad, mask)
    return np.sqrt(_dot(grad, grad))


@njit(nogil=True, cache=True)
def hessian_vector(near, far, h, lam, v, out):
    """``out = H v`` for the Hessian whose comparison weights are ``h`` (a weighted graph Laplacian + lam I)."""
    n = v.shape[0]
    for a in range(n):
        out[a] = lam * v[a]
    for t in range(near.shape[0]):
        a = near[t]
        b = far[t]
        c = h[t] * (v[b] - v[a])
        out[b] += c
        out[a] -= c


@njit(nogil=True, cache=True, error_model="numpy")
def hessian_vector_single(near, far, h, lam, v, out, pv):
    """:func:`hessian_vector` accumulated in single precision (relative error ~1e-6).

    ``pv`` (float32, (n, 2)) is scratch holding ``v`` and the sums side by side:
    8 bytes per item, so at n = 10^5 they stay in a 1 MiB L2 cache.
    """
    n = v.shape[0]
    for a in range(n):
        pv[a, 0] = v[a]
        pv[a, 1] = 0.0
    hessian_vector_accumulate(near, far, h, pv)
    for a in range(n):
        out[a] = lam * v[a] + pv[a, 1]


@njit(nogil=True, cache=True, error_model="numpy")
def hessian_vector_accumulate(near, far, h, pv):
    """The comparisons' part of a Hessian-vector product: adds ``L v`` to ``pv[:, 1]`` for
    ``v = pv[:, 0]`` (float32 or float64, accumulated in that precision). Two threads can each
    take a share of the comparisons, with their own ``pv``."""
    for t in range(near.shape[0]):
        a = near[t]
        b = far[t]
        c = h[t] * (pv[b, 0] - pv[a, 0])
        pv[b, 1] += c
        pv[a, 1] -= c


@njit(nogil=True, cache=True)
def _center(v, mask):
    s = 0.0
    cnt = 0
    for a in range(v.shape[0]):
        if mask[a]:
            s += v[a]
            cnt += 1
    if cnt > 0:
        s /= cnt
        for a in range(v.shape[0]):
            if mask[a]:
                v[a] -= s
            else:
                v[a] = 0.0


@njit(nogil=True, cache=True)
def newton_direction(near, far, h, hdiag, lam, mask, grad, max_iter, rtol, d, work):
    """Solve ``H d = -grad`` by Jacobi-preconditioned conjugate gradients (in place on ``d``).

    Stops when ``||r|| <= rtol * ||grad||`` or after ``max_iter`` Hessian-vector
    products (one pass over the comparisons each). Returns the iterations used.
    """
    return newton_direction_coarse(near, far, h, hdiag, lam, mask, grad, max_iter, rtol, d, work,
                                   np.zeros(0, dtype=np.int64), np.zeros((0, 0)), False)


@njit(nogil=True, cache=True)
def precondition(r, hdiag, mask, heavy, hinv, z):
    """``z = M^-1 r`` projected: block Jacobi, ``1 / hdiag`` except the dense inverse ``hinv`` of
    the Hessian's block on the items ``heavy``."""
    for a in range(r.shape[0]):
        z[a] = r[a] / hdiag[a] if hdiag[a] > 0 else 0.0
    k = heavy.shape[0]
    for i in range(k):
        s = 0.0
        for j in range(k):
            s += hinv[i, j] * r[heavy[j]]
        z[heavy[i]] = s
    _center(z, mask)


@njit(nogil=True, cache=True)
def newton_direction_coarse(near, far, h, hdiag, lam, mask, grad, max_iter, rtol, d, work, heavy, hinv, single):
    """:func:`newton_direction` preconditioned by block Jacobi: the items ``heavy`` as one block.

    A few items with far more comparisons than the rest, mostly among
    themselves (the other landmarks, with the landmark share of the budget),
    are coupled tightly to each other and loosely to all the others: Jacobi
    resolves their joint moves slowly (a condition number of the ratio of their
    comparison counts), and CG took 20 to 75 iterations per ranking instead of
    about 15. ``hinv`` is the inverse of the Hessian's block on them
    (:func:`block_hessian`); empty ``heavy``: Jacobi only.
    With ``single``, the Hessian-vector products are accumulated in single
    precision (:func:`hessian_vector_single`): only the direction is then
    approximate (the gradient, hence the optimum, is not).
    """
    n = grad.shape[0]
    r = work[0]
    z = work[1]
    p = work[2]
    Hp = work[3]
    pv = np.empty((n if single else 0, 2), dtype=np.float32)
    for a in range(n):
        d[a] = 0.0
        r[a] = -grad[a]
    precondition(r, hdiag, mask, heavy, hinv, z)
    for a in range(n):
        p[a] = z[a]
    rz = _dot(r, z)
    tol = rtol * np.sqrt(_dot(grad, grad))
    it = 0
    while it < max_iter:
        if np.sqrt(_dot(r, r)) <= tol or rz <= 0.0:
            break
        if single:
            hessian_vector_single(near, far, h, lam, p, Hp, pv)
        else:
            hessian_vector(near, far, h, lam, p, Hp)
        _center(Hp, mask)  # projected CG: P H P on the sum-zero subspace
        pHp = _dot(p, Hp)
        if pHp <= 0.0:
            break
        alpha = rz / pHp
        for a in range(n):
            d[a] += alpha * p[a]
            r[a] -= alpha * Hp[a]
        precondition(r, hdiag, mask, heavy, hinv, z)
        rz_new = _dot(r, z)
        beta = rz_new / rz
        rz = rz_new
        for a in range(n):
            p[a] = z[a] + beta * p[a]
        it += 1
    _center(d, mask)
    return it


@njit(nogil=True, cache=True)
def pairs_within(near, far, member, bound):
    """Indices of the comparisons whose two items both have ``member[item]`` set (int64).

    ``bound`` is at least their number (e.g. half the members' appearances): one
    pass fills a buffer of that size, and a view of the filled part is returned.
    """
    out = np.empty(bound, dtype=np.int64)
    k = 0
    for t in range(near.shape[0]):
        if member[near[t]] & member[far[t]]:
            out[k] = t
            k += 1
    return out[:k]


@njit(nogil=True, cache=True)
def block_hessian(near, far, h, hdiag, heavy, within, pos, out):
    """The Hessian's block on the items ``heavy`` (k x k, into ``out``).

    The diagonal is ``hdiag`` (every comparison of the item, plus the penalty);
    entry ``(i, j)`` sums ``-h[t]`` over the comparisons ``within`` between the
    two items. ``pos[a]`` is item ``a``'s row (-1 for other items).
    """
    k = heavy.shape[0]
    for i in range(k):
        for j in range(k):
            out[i, j] = 0.0
        out[i, i] = hdiag[heavy[i]]
    for q in range(within.shape[0]):
        t = within[q]
        i = pos[near[t]]
        j = pos[far[t]]
        if i != j:
            out[i, j] -= h[t]
            out[j, i] -= h[t]


@njit(nogil=True, cache=True)
def tile_order(near, far, shift, out_near, out_far):
    """Copy the comparisons into ``out_near``/``out_far`` grouped by tile.

    Items are cut into blocks of ``2**shift`` consecutive indices; comparison
    ``t`` belongs to tile ``(near[t] >> shift, far[t] >> shift)``. A stable
    counting sort writes the tiles one after the other, so a pass over the
    reordered comparisons touches the score vectors two blocks at a time and
    they stay in the CPU cache. Two passes over the comparisons, ``O(m + B^2)``
    for ``B`` blocks; the second fetches each tile's next cache lines for writing
    ahead of use (:mod:`loe_viz.kernels.prefetch`).
    """
    m = near.shape[0]
    top = 0
    for t in range(m):
        top = max(top, near[t], far[t])
    nb = (top >> shift) + 1
    starts = np.zeros(nb * nb + 1, dtype=np.int64)
    for t in range(m):
        starts[(near[t] >> shift) * nb + (far[t] >> shift) + 1] += 1
    for k in range(nb * nb):
        starts[k + 1] += starts[k]
    last = m - 1
    for t in range(m):
        k = (near[t] >> shift) * nb + (far[t] >> shift)
        p = starts[k]
        if (p & 15) == 0:
            ahead = min(p + WRITE_AHEAD, last)
            prefetch_write(out_near, ahead)
            prefetch_write(out_far, ahead)
        out_near[p] = near[t]
        out_far[p] = far[t]
        starts[k] = p + 1


@njit(nogil=True, cache=True)
def count_appearances(near, far, n, counts):
    """``counts[a]`` += number of comparisons item ``a`` takes part in."""
    for a in range(n):
        counts[a] = 0
    for t in range(near.shape[0]):
        counts[near[t]] += 1
        counts[far[t]] += 1


@njit(nogil=True, cache=True)
def agreement(near, far, w):
    """Fraction of comparisons whose winner (``far``) has the larger score (ties count half)."""
    m = near.shape[0]
    if m == 0:
        return 1.0
    good = 0  # twice the count: a win 2, a tie 1 (no branch on the outcome)
    for t in range(m):
        diff = w[far[t]] - w[near[t]]
        good += np.int64(diff > 0) + np.int64(diff >= 0)
    return 0.5 * good / m


@njit(nogil=True, cache=True)
def win_counts(near, far, counts):
    """``counts[a] = (comparisons won by a, comparisons a takes part in)``, one pass.

    ``counts`` is an int32 array (n, 2), written in place: the two counts of an
    item share a cache line.
    """
    for a in range(counts.shape[0]):
        counts[a, 0] = 0
        counts[a, 1] = 0
    for t in range(near.shape[0]):
        a = near[t]
        b = far[t]
        counts[a, 1] += 1
        counts[b, 0] += 1
        counts[b, 1] += 1


@njit(nogil=True, cache=True)
def meanfield_start(near, far, mask, n_iter, n_grid, w):
    """Starting scores from win rates, by a mean-field inversion of the BTL model.

    With uniformly random pairs, item ``a`` wins a fraction
    ``pi_a ~ mean_b sigmoid(w_a - w_b)`` of its comparisons. Starting from
    ``logit(pi)``, each iteration tabulates ``Phi(x) = mean_b sigmoid(x - w_b)``
    on a grid (over a sample of about 1000 items, binned by score) and sets
    ``w_a = Phi^-1(pi_a)``. The result is centred over ``mask`` and written to
    ``w``; masked-out items get 0. One pass over the comparisons
    (:func:`win_counts`) plus :func:`meanfield_from_counts`.
    """
    counts = np.empty((w.shape[0], 2), dtype=np.int32)
    win_counts(near, far, counts)
    meanfield_from_counts(counts, mask, n_iter, n_grid, w)


#: Bins of the sampled scores that tabulate ``Phi`` in :func:`meanfield_from_counts`: each bin enters at the
#: mean of its scores, which leaves an error of second order in the bin width (below 1e-4 of a win
#: rate for scores spread over 25 units, against a rate's sampling error of 0.07 at 200 comparisons).
MEANFIELD_BINS = 256


@njit(nogil=True, cache=True, error_model="numpy", fastmath={"contract", "reassoc"})
def _sigmoid_mean(pos, weight, count, x):
    """``sum_b weight[b] sigmoid(x - pos[b])`` over the first ``count`` entries of float32 ``pos``:
    terms in single precision (eight lanes), summed in double precision."""
    acc = 0.0
    x32 = np.float32(x)
    one = np.float32(1.0)
    for b in range(count):
        d = pos[b] - x32
        a = abs(d)
        a = a if a < np.float32(80.0) else np.float32(80.0)
        e = expneg32(a)
        s = np.float32(d >= np.float32(0.0))
        # 1 / (1 + exp(d)): e / (1 + e) for d >= 0, 1 / (1 + e) below, e = exp(-|d|)
        acc += np.float64(weight[b] * ((s * e + (one - s)) / (one + e)))
    return acc


#: Entries of the index of win rates into the table of ``Phi`` in :func:`meanfield_from_counts`.
_RATE_INDEX = 4096


@njit(nogil=True, cache=True)
def meanfield_from_counts(counts, mask, n_iter, n_grid, w):
    """:func:`meanfield_start` from the counts of :func:`win_counts`: ``O(n_iter * (n + n_grid * MEANFIELD_BINS))``.

    ``Phi`` is tabulated over every ``max(1, n // 1000)``-th scored item, binned by score
    (:data:`MEANFIELD_BINS` bins, each at the mean of its scores; exact up to that many). Each item's inversion
    starts from an index of the increasing table by win rate (:data:`_RATE_INDEX` entries) and
    steps on to the first entry at or above its rate, as ``np.searchsorted`` would find it.
    """
    n = w.shape[0]
    pi = np.empty(n)
    others = 0
    for a in range(n):
        pi[a] = (counts[a, 0] + 0.5) / (counts[a, 1] + 1.0)
        if mask[a]:
            others += 1
            w[a] = np.log(pi[a] / (1.0 - pi[a]))
        else:
            w[a] = 0.0
    if others == 0:
        return
    scored = np.flatnonzero(mask)
    step = max(1, n // 1000)  # Phi over every step-th item: a sample of about 1000
    sample = scored[(scored % step) == 0]
    bins = min(MEANFIELD_BINS, sample.size)
    start = np.empty(_RATE_INDEX + 1, dtype=np.int64)
    pos = np.empty(bins, dtype=np.float32)
    weight = np.empty(bins, dtype=np.float32)
    total = np.empty(bins)
    filled = np.empty(bins, dtype=np.int64)
    grid = np.empty(n_grid)
    phi = np.empty(n_grid)
    for _ in range(n_iter):
        lo = np.inf
        hi = -np.inf
        for a in scored:
            lo = min(lo, w[a])
            hi = max(hi, w[a])
        if sample.size <= MEANFIELD_BINS:  # every sampled item at its own score
            for b in range(sample.size):
                pos[b] = w[sample[b]]
                weight[b] = 1.0
            used = sample.size
        else:
            for b in range(bins):
                total[b] = 0.0
                filled[b] = 0
            scale = bins / (hi - lo) if hi > lo else 0.0
            for a in sample:
                b = min(int((w[a] - lo) * scale), bins - 1)
                total[b] += w[a]
                filled[b] += 1
            used = 0
            for b in range(bins):
                if filled[b]:
                    pos[used] = total[b] / filled[b]
                    weight[used] = filled[b]
                    used += 1
        lo -= 12.0
        hi += 12.0
        for g in range(n_grid):
            x = lo + (hi - lo) * g / (n_grid - 1)
            grid[g] = x
            phi[g] = _sigmoid_mean(pos, weight, used, x) / sample.size
        g = 0
        for j in range(_RATE_INDEX + 1):  # start[j]: the first entry at or above the rate j / _RATE_INDEX
            while g < n_grid and phi[g] < j / _RATE_INDEX:
                g += 1
            start[j] = g
        for a in scored:  # the new scores in place: the table is made, and the rates never change
            p = pi[a]
            g = start[int(p * _RATE_INDEX)]  # not past the entry sought: that rate is at most p
            while g < n_grid and phi[g] < p:
                g += 1
            if g <= 0:
                w[a] = grid[0]
            elif g >= n_grid:
                w[a] = grid[n_grid - 1]
            else:
                span = phi[g] - phi[g - 1]
                f = (p - phi[g - 1]) / span if span > 0 else 0.0
                w[a] = grid[g - 1] + f * (grid[g] - grid[g - 1])
    _center(w, mask)
