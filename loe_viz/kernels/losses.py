"""Numba kernels: loss and gradient of the ordinal-embedding baselines.

Every kernel takes an embedding ``X`` of shape ``(n, d)`` (float64) and
list-order triplets of shape ``(m, 3)`` -- row ``(i, j, k)`` says "item ``i``
is closer to ``j`` than to ``k``" -- and returns ``(loss, grad)``:

* ``loss`` is the **mean** over the ``m`` triplets of the per-triplet loss
  (plus, for GNMDS, the l2 penalty ``regularization * ||X||_F^2``);
* ``grad`` is its exact gradient with respect to ``X``, shape ``(n, d)``.

Write ``D_ij = ||x_i - x_j||^2`` (squared distances). The per-triplet losses are

=========  ================================================================
STE        ``-log p``, ``p = exp(-D_ij) / (exp(-D_ij) + exp(-D_ik))``
           (that is ``softplus(D_ij - D_ik)``)
t-STE      ``-log p``, ``p = q_ij / (q_ij + q_ik)``,
           ``q = (1 + D / alpha) ** (-(alpha + 1) / 2)``
SOE        ``max(0, margin + ||x_i - x_j|| - ||x_i - x_k||) ** 2``
           (unsquared distances)
GNMDS      ``max(0, 1 + D_ij - D_ik)``
CKL        ``-log p``, ``p = (mu + D_ik) / (2 mu + D_ij + D_ik)``
=========  ================================================================

Each pass is a single loop over the triplets: ``O(m d)`` time and
``O(m + n d)`` memory; no ``n x n`` matrix is ever formed. The kernels are
pure functions of arrays and scalars, compiled with ``nogil=True`` so that a
fit running in a worker thread does not hold the interpreter lock.

Implementation notes (measured on a 2-core AMD EPYC, n = 1000, m = 345k):

* the two-dimensional case has its own specialisation of each loop (squared
  distances and gradient scatter without a loop over coordinates), which is
  about 30 % faster than the general one;
* the kernels keep numba's default (Python) error model: with
  ``error_model="numpy"`` a t-STE pass at d = 2 took 1.5 times as long;
* the logarithms of the likelihood losses are not taken per triplet: their
  arguments (all >= 1) are multiplied into a running product whose logarithm
  is added to the sum whenever it exceeds ``1e200``. This saves one
  transcendental call per triplet (about half the cost of a pass) at a
  relative cost in accuracy of about ``1e-13``;
* ``n_threads > 1`` splits the triplets into ``n_threads`` contiguous chunks
  that run in parallel (numba ``prange``), each accumulating into its own
  gradient buffer, and sums the buffers at the end (``O(n_threads n d)``
  extra memory). The result equals the serial one up to the order of
  floating-point summation.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from ._jit import njit

__all__ = [
    "KIND_STE",
    "KIND_TSTE",
    "KIND_SOE",
    "KIND_GNMDS",
    "KIND_CKL",
    "KINDS",
    "triplet_loss_grad",
]

KIND_STE = 0
KIND_TSTE = 1
KIND_SOE = 2
KIND_GNMDS = 3
KIND_CKL = 4
#: Triplets per block of a pass that can be stopped (``triplet_loss_grad``'s ``between``):
#: 0.03 to 0.07 s of STE on two cores (a pass over 8.06 * 10^7 triplets took 0.64 to 1.36 s,
#: ``benchmarks/bench_cancel.py``).
EVAL_BLOCK = 1 << 22
#: Loss name -> kind code accepted by :func:`triplet_loss_grad`.
KINDS = {"ste": KIND_STE, "tste": KIND_TSTE, "soe": KIND_SOE, "gnmds": KIND_GNMDS, "ckl": KIND_CKL}

_TINY = 2.2250738585072014e-308  # np.finfo(float).tiny
_FLUSH = 1e200  # flush the running product of log-arguments above this
_BIG = 1e100  # log-arguments above this are logged directly


# --------------------------------------------------------------------------
# squared distances and gradient scatter, for d == 2 and for any d
# --------------------------------------------------------------------------
@njit(nogil=True, cache=True, inline="always")
def _diff2(X, i, j, k):
    xi0 = X[i, 0]
    xi1 = X[i, 1]
    return xi0 - X[j, 0], xi1 - X[j, 1], xi0 - X[k, 0], xi1 - X[k, 1]


@njit(nogil=True, cache=True, inline="always")
def _sq2(X, i, j, k):
    u0, u1, v0, v1 = _diff2(X, i, j, k)
    return u0 * u0 + u1 * u1, v0 * v0 + v1 * v1


@njit(nogil=True, cache=True, inline="always")
def _scatter2(X, grad, i, j, k, a2, b2):
    u0, u1, v0, v1 = _diff2(X, i, j, k)
    grad[i, 0] += a2 * u0 + b2 * v0
    grad[i, 1] += a2 * u1 + b2 * v1
    grad[j, 0] -= a2 * u0
    grad[j, 1] -= a2 * u1
    grad[k, 0] -= b2 * v0
    grad[k, 1] -= b2 * v1


@njit(nogil=True, cache=True, inline="always")
def _sqd(X, i, j, k):
    dij = 0.0
    dik = 0.0
    for c in range(X.shape[1]):
        u = X[i, c] - X[j, c]
        v = X[i, c] - X[k, c]
        dij += u * u
        dik += v * v
    return dij, dik


@njit(nogil=True, cache=True, inline="always")
def _scatterd(X, grad, i, j, k, a2, b2):
    for c in range(X.shape[1]):
        u = X[i, c] - X[j, c]
        v = X[i, c] - X[k, c]
        grad[i, c] += a2 * u + b2 * v
        grad[j, c] -= a2 * u
        grad[k, c] -= b2 * v


# --------------------------------------------------------------------------
# per-triplet terms: (lin, fac, a, b) with loss_t = lin + log(fac),
# a = d loss_t / d D_ij, b = d loss_t / d D_ik
# --------------------------------------------------------------------------
@njit(nogil=True, cache=True, inline="always")
def _ste_term(dij, dik, param):
    # -log p = softplus(z), z = D_ij - D_ik; = max(z, 0) + log(1 + exp(-|z|))
    z = dij - dik
    e = math.exp(-abs(z))
    r = 1.0 / (1.0 + e)
    s = r if z > 0.0 else e * r  # sigmoid(z)
    return max(z, 0.0), 1.0 + e, s, -s


@njit(nogil=True, cache=True, inline="always")
def _tste_term(dij, dik, param):
    # q_ik / q_ij = ((alpha + D_ij) / (alpha + D_ik)) ** half, half = (alpha + 1) / 2
    # -log p = log(1 + q_ik / q_ij)
    half = 0.5 * (param + 1.0)
    ai = param + dij
    ak = param + dik
    r = ai / ak
    if half == 1.0:
        e = r
    elif half == 1.5:
        e = r * math.sqrt(r)
    elif half == 2.0:
        e = r * r
    else:
        e = r**half
    fac = 1.0 + e
    s = e / fac  # sigmoid(log e)
    if fac > _BIG:
        return math.log(fac), 1.0, s * half / ai, -s * half / ak
    return 0.0, fac, s * half / ai, -s * half / ak


@njit(nogil=True, cache=True, inline="always")
def _soe_term(dij, dik, param):
    rij = math.sqrt(dij)
    rik = math.sqrt(dik)
    h = param + rij - rik
    if h <= 0.0:
        return 0.0, 1.0, 0.0, 0.0
    # d(h^2)/dD = 2 h dr/dD = h / r; at r = 0 the direction vector is zero,
    # so any finite coefficient gives the (sub)gradient 0.
    a = h / rij if rij > 0.0 else 0.0
    b = -h / rik if rik > 0.0 else 0.0
    return h * h, 1.0, a, b


@njit(nogil=True, cache=True, inline="always")
def _gnmds_term(dij, dik, param):
    h = 1.0 + dij - dik
    if h <= 0.0:
        return 0.0, 1.0, 0.0, 0.0
    return h, 1.0, 1.0, -1.0


@njit(nogil=True, cache=True, inline="always")
def _ckl_term(dij, dik, param):
    num = max(param + dik, _TINY)
    den = max(2.0 * param + dij + dik, _TINY)
    inv_num = 1.0 / num
    inv_den = 1.0 / den
    fac = den * inv_num  # >= 1
    if fac > _BIG:
        return math.log(den) - math.log(num), 1.0, inv_den, inv_den - inv_num
    return 0.0, fac, inv_den, inv_den - inv_num


# --------------------------------------------------------------------------
# one loop per family; the per-triplet term and the geometry are arguments
# --------------------------------------------------------------------------
# As pynndescent passes its distance, the loops take the term (and the squared
# distances and scatter, for d = 2 or any d) as jitted functions: numba compiles
# one specialisation per combination with the calls resolved statically, so each
# loop is written once and runs as fast as the loops spelled out per loss did
# (measured with benchmarks/bench_baselines.py). The d = 2 functions pay: with
# the d = 2 test inside one loop instead, a d = 2 pass took 1.5 to 2.7 times
# as long.
# Caching: everything up to _range is inlined (inline="always"), so that the
# functions are globals where they are called; a function passed to a loop
# that is not inlined is lowered as a pointer to the Python object, and numba
# then refuses to cache the caller ("uses dynamic globals").


@njit(nogil=True, cache=True, inline="always")
def _likelihood_loop(term, sq, scatter, X, triplets, start, stop, param, grad):
    # -log p terms: loss_t = lin + log(fac); the logs are taken of a running product
    lin = 0.0
    prod = 1.0
    for t in range(start, stop):
        i, j, k = triplets[t, 0], triplets[t, 1], triplets[t, 2]
        dij, dik = sq(X, i, j, k)
        a0, f, a, b = term(dij, dik, param)
        lin += a0
        prod *= f
        if prod > _FLUSH:
            lin += math.log(prod)
            prod = 1.0
        scatter(X, grad, i, j, k, 2.0 * a, 2.0 * b)
    return lin + math.log(prod)


@njit(nogil=True, cache=True, inline="always")
def _hinge_loop(term, sq, scatter, X, triplets, start, stop, param, grad):
    # hinge terms: zero loss and gradient inside the margin, where most triplets end up
    total = 0.0
    for t in range(start, stop):
        i, j, k = triplets[t, 0], triplets[t, 1], triplets[t, 2]
        dij, dik = sq(X, i, j, k)
        a0, f, a, b = term(dij, dik, param)
        if a0 > 0.0:
            total += a0
            scatter(X, grad, i, j, k, 2.0 * a, 2.0 * b)
    return total


@njit(nogil=True, cache=True, inline="always")
def _likelihood(term, X, T, t0, t1, p, g):
    if X.shape[1] == 2:
        return _likelihood_loop(term, _sq2, _scatter2, X, T, t0, t1, p, g)
    return _likelihood_loop(term, _sqd, _scatterd, X, T, t0, t1, p, g)


@njit(nogil=True, cache=True, inline="always")
def _hinge(term, X, T, t0, t1, p, g):
    if X.shape[1] == 2:
        return _hinge_loop(term, _sq2, _scatter2, X, T, t0, t1, p, g)
    return _hinge_loop(term, _sqd, _scatterd, X, T, t0, t1, p, g)


@njit(nogil=True, cache=True)
def _range(kind, X, triplets, start, stop, param, grad):
    """Add the loss-sum gradient of ``triplets[start:stop]`` to ``grad``; return the loss sum."""
    if kind == KIND_STE:
        return _likelihood(_ste_term, X, triplets, start, stop, param, grad)
    if kind == KIND_TSTE:
        return _likelihood(_tste_term, X, triplets, start, stop, param, grad)
    if kind == KIND_CKL:
        return _likelihood(_ckl_term, X, triplets, start, stop, param, grad)
    if kind == KIND_SOE:
        return _hinge(_soe_term, X, triplets, start, stop, param, grad)
    return _hinge(_gnmds_term, X, triplets, start, stop, param, grad)


@njit(nogil=True, cache=True, parallel=True)
def _range_chunked(kind, X, triplets, param, n_chunks):
    m = triplets.shape[0]
    n, d = X.shape
    buffers = np.zeros((n_chunks, n, d), dtype=np.float64)
    partial = np.zeros(n_chunks, dtype=np.float64)
    for c in prange(n_chunks):
        start = (m * c) // n_chunks
        stop = (m * (c + 1)) // n_chunks
        partial[c] = _range(kind, X, triplets, start, stop, param, buffers[c])
    grad = buffers[0].copy()
    for c in range(1, n_chunks):
        grad += buffers[c]
    return partial.sum(), grad


def triplet_loss_grad(X, triplets, kind, param, regularization, n_threads, between=None):
    """Mean triplet loss and its gradient, for the loss selected by ``kind``.

    Parameters
    ----------
    X : ndarray of shape (n, d), float64
        The embedding.
    triplets : ndarray of shape (m, 3), int32 or int64
        List-order triplets with indices in ``[0, n)``; not checked here
        (out-of-range indices are undefined behaviour), see
        :func:`loe_viz._validation.check_triplets`.
    kind : int
        One of ``KIND_STE``, ``KIND_TSTE``, ``KIND_SOE``, ``KIND_GNMDS``, ``KIND_CKL``.
    param : float
        ``alpha`` for t-STE (> 0), ``margin`` for SOE, ``mu`` for CKL (>= 0);
        ignored by STE and GNMDS.
    regularization : float
        Weight of the added penalty ``regularization * ||X||_F^2`` (0 for none).
    n_threads : int
        ``<= 1`` runs serially; otherwise the triplets are split into that many
        chunks that run in parallel with separate gradient buffers.
    between : callable, optional
        With more than ``EVAL_BLOCK`` triplets, the pass runs in blocks of that
        many and ``between()`` is called after each block but the last: a
        caller's chance to stop a pass of several seconds (an exception it raises
        propagates). The result equals the unblocked one up to the order of
        floating-point summation.

    Returns
    -------
    loss : float
        ``mean_t loss_t + regularization * ||X||_F^2``.
    grad : ndarray of shape (n, d)
        Gradient of ``loss`` with respect to ``X``.

    Notes
    -----
    A Python function over two compiled steps: a cached function that calls the
    ``parallel=True`` :func:`_range_chunked` can crash when loaded from numba's
    cache if the two were compiled in different processes.
    """
    m = triplets.shape[0]
    block = max(m, 1) if between is None else EVAL_BLOCK
    grad = None
    total = 0.0
    for start in range(0, max(m, 1), block):
        part = triplets[start:start + block]
        if start > 0:
            between()
        if n_threads > 1 and part.shape[0] >= 4 * n_threads:
            t, g = _range_chunked(kind, X, part, param, n_threads)
            if grad is None:
                grad = g
            else:
                grad += g
        else:
            if grad is None:
                grad = np.zeros(X.shape, dtype=np.float64)
            t = _range(kind, X, part, 0, part.shape[0], param, grad)
        total += t
    return _mean_and_penalty(X, total, grad, m, float(regularization)), grad


@njit(nogil=True, cache=True)
def _mean_and_penalty(X, total, grad, m, regularization):
    """Scale the loss sum ``total`` and ``grad`` (in place) to means and add ``regularization * ||X||_F^2``."""
    scale = 1.0 / max(m, 1)
    loss = total * scale
    grad *= scale
    if regularization != 0.0:
        sq = 0.0
        n, d = X.shape
        for i in range(n):
            for c in range(d):
                sq += X[i, c] * X[i, c]
                grad[i, c] += 2.0 * regularization * X[i, c]
        loss += regularization * sq
    return loss
