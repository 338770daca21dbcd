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
from numba import njit


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


@njit(nogil=True, cache=True)
def gradient(near, far, w, lam, mask, grad, hdiag, h, precise):
    """One pass: the gradient, the per-comparison curvature ``h`` and its diagonal sum.

    ``grad`` is projected onto the sum-zero subspace of ``mask``. ``grad``, ``hdiag``
    (length n) and ``h`` (length m, float32) are written in place. Unless
    ``precise``, the exponential is evaluated in single precision: its relative
    error (1e-7) is far below the statistical error of the scores and it makes
    the pass much cheaper; the driver switches to ``precise`` for the last
    iterations so the optimum is found to full accuracy.
    Returns the Euclidean norm of the projected gradient.
    """
    n = w.shape[0]
    for a in range(n):
        grad[a] = lam * w[a]
        hdiag[a] = lam
    for t in range(near.shape[0]):
        a = near[t]
        b = far[t]
        z = w[b] - w[a]  # log-odds that "far" wins
        if z > 80.0:
            z = 80.0
        elif z < -80.0:
            z = -80.0
        if precise:
            q = 1.0 / (1.0 + np.exp(z))  # 1 - sigmoid(z)
        else:
            q = 1.0 / (1.0 + np.float64(np.exp(np.float32(z))))
        # d f / d w_far = -q, d f / d w_near = +q
        grad[b] -= q
        grad[a] += q
        c = q * (1.0 - q)
        h[t] = c
        hdiag[a] += c
        hdiag[b] += c
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


@njit(nogil=True, cache=True, inline="always")
def _precondition(r, hdiag, bidx, binv, z):
    """``z = M^-1 r``: Jacobi, with the dense inverse ``binv`` on the items ``bidx``."""
    for a in range(r.shape[0]):
        z[a] = r[a] / hdiag[a] if hdiag[a] > 0 else 0.0
    k = bidx.shape[0]
    for i in range(k):
        s = 0.0
        for j in range(k):
            s += binv[i, j] * r[bidx[j]]
        z[bidx[i]] = s


@njit(nogil=True, cache=True)
def block_hessian(near, far, h, hdiag, first, pos, out):
    """The Hessian's block on a few items, from the comparisons ``first:`` among them.

    ``pos[a]`` is item ``a``'s row in ``out`` (k x k), -1 for other items. The
    diagonal is ``hdiag`` (every comparison of the item, plus the penalty); the
    off-diagonal entries sum ``-h`` over the comparisons from row ``first`` on
    whose two items are both in the block (comparisons between two of them
    before ``first`` are left out: the result only preconditions).
    """
    k = out.shape[0]
    for i in range(k):
        for j in range(k):
            out[i, j] = 0.0
    for a in range(pos.shape[0]):
        if pos[a] >= 0:
            out[pos[a], pos[a]] = hdiag[a]
    for t in range(first, near.shape[0]):
        i = pos[near[t]]
        j = pos[far[t]]
        if i >= 0 and j >= 0 and i != j:
            out[i, j] -= h[t]
            out[j, i] -= h[t]


@njit(nogil=True, cache=True)
def newton_direction(near, far, h, hdiag, lam, mask, grad, max_iter, rtol, d, work, bidx, binv):
    """Solve ``H d = -grad`` by preconditioned conjugate gradients (in place on ``d``).

    The preconditioner is Jacobi (``1 / hdiag``), except on the items ``bidx``,
    where it is ``binv``, the inverse of the Hessian's block on them
    (:func:`block_hessian`): items that compared among themselves far more often
    than with the rest (the landmark share) are strongly coupled, and Jacobi
    alone leaves CG a condition number of the ratio of their comparison counts.
    An empty ``bidx`` gives plain Jacobi.

    Stops when ``||r|| <= rtol * ||grad||`` or after ``max_iter`` Hessian-vector
    products (one pass over the comparisons each). Returns the iterations used.
    """
    n = grad.shape[0]
    r = work[0]
    z = work[1]
    p = work[2]
    Hp = work[3]
    for a in range(n):
        d[a] = 0.0
        r[a] = -grad[a]
    _precondition(r, hdiag, bidx, binv, z)
    _center(z, mask)
    for a in range(n):
        p[a] = z[a]
    rz = _dot(r, z)
    tol = rtol * np.sqrt(_dot(grad, grad))
    it = 0
    while it < max_iter:
        if np.sqrt(_dot(r, r)) <= tol or rz <= 0.0:
            break
        hessian_vector(near, far, h, lam, p, Hp)
        _center(Hp, mask)  # projected CG: P H P on the sum-zero subspace
        pHp = _dot(p, Hp)
        if pHp <= 0.0:
            break
        alpha = rz / pHp
        for a in range(n):
            d[a] += alpha * p[a]
            r[a] -= alpha * Hp[a]
        _precondition(r, hdiag, bidx, binv, z)
        _center(z, mask)
        rz_new = _dot(r, z)
        beta = rz_new / rz
        rz = rz_new
        for a in range(n):
            p[a] = z[a] + beta * p[a]
        it += 1
    _center(d, mask)
    return it


@njit(nogil=True, cache=True)
def tile_order(near, far, shift, out_near, out_far):
    """Copy the comparisons into ``out_near``/``out_far`` grouped by tile.

    Items are cut into blocks of ``2**shift`` consecutive indices; comparison
    ``t`` belongs to tile ``(near[t] >> shift, far[t] >> shift)``. A stable
    counting sort writes the tiles one after the other, so a pass over the
    reordered comparisons touches the score vectors two blocks at a time and
    they stay in the CPU cache. Two passes over the comparisons, ``O(m + B^2)``
    for ``B`` blocks.
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
    for t in range(m):
        k = (near[t] >> shift) * nb + (far[t] >> shift)
        p = starts[k]
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
    good = 0.0
    for t in range(m):
        diff = w[far[t]] - w[near[t]]
        if diff > 0:
            good += 1.0
        elif diff == 0:
            good += 0.5
    return good / m


@njit(nogil=True, cache=True)
def meanfield_start(near, far, mask, n_iter, n_grid, w):
    """Starting scores from win rates, by a mean-field inversion of the BTL model.

    With uniformly random pairs, item ``a`` wins a fraction
    ``pi_a ~ mean_b sigmoid(w_a - w_b)`` of its comparisons. Starting from
    ``logit(pi)``, each iteration tabulates ``Phi(x) = mean_b sigmoid(x - w_b)``
    on a grid (over a subsample of at most ~1000 items) and sets
    ``w_a = Phi^-1(pi_a)``. The result is centred over ``mask`` and written to
    ``w``; masked-out items get 0. One pass over the comparisons plus
    ``O(n_iter * n_grid * 1000)`` work.
    """
    n = w.shape[0]
    wins = np.zeros(n)
    apps = np.zeros(n)
    for t in range(near.shape[0]):
        apps[near[t]] += 1.0
        apps[far[t]] += 1.0
        wins[far[t]] += 1.0
    pi = np.empty(n)
    others = 0
    for a in range(n):
        pi[a] = (wins[a] + 0.5) / (apps[a] + 1.0)
        if mask[a]:
            others += 1
            w[a] = np.log(pi[a] / (1.0 - pi[a]))
        else:
            w[a] = 0.0
    if others == 0:
        return
    step = max(1, n // 1000)
    grid = np.empty(n_grid)
    phi = np.empty(n_grid)
    wn = np.empty(n)
    for _ in range(n_iter):
        lo = np.inf
        hi = -np.inf
        for a in range(n):
            if mask[a]:
                lo = min(lo, w[a])
                hi = max(hi, w[a])
        lo -= 12.0
        hi += 12.0
        for g in range(n_grid):
            x = lo + (hi - lo) * g / (n_grid - 1)
            acc = 0.0
            cnt = 0
            for b in range(0, n, step):
                if mask[b]:
                    acc += 1.0 / (1.0 + np.float64(np.exp(np.float32(w[b] - x))))
                    cnt += 1
            grid[g] = x
            phi[g] = acc / cnt
        for a in range(n):
            if not mask[a]:
                wn[a] = 0.0
                continue
            k = np.searchsorted(phi, pi[a])
            if k <= 0:
                wn[a] = grid[0]
            elif k >= n_grid:
                wn[a] = grid[n_grid - 1]
            else:
                span = phi[k] - phi[k - 1]
                f = (pi[a] - phi[k - 1]) / span if span > 0 else 0.0
                wn[a] = grid[k - 1] + f * (grid[k] - grid[k - 1])
        for a in range(n):
            w[a] = wn[a]
    _center(w, mask)
