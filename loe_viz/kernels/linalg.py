"""Numba kernels for the landmark block: EDM projection (Dykstra) and LMDS triangulation."""

from __future__ import annotations

import numpy as np
from ._jit import njit


@njit(nogil=True, cache=True)
def _project_hollow(X, out):
    """Nearest symmetric matrix with zero diagonal."""
    l = X.shape[0]
    for i in range(l):
        out[i, i] = 0.0
        for j in range(i + 1, l):
            v = 0.5 * (X[i, j] + X[j, i])
            out[i, j] = v
            out[j, i] = v


@njit(nogil=True, cache=True)
def _project_cone(X, out):
    """Nearest matrix with ``V X V`` negative semidefinite (``V = I - 11^T / l``): subtract the positive part
    of ``V X V``, which is ``X`` less its row and column means plus its grand mean (no product with ``V``)."""
    l = X.shape[0]
    row = np.zeros(l)
    col = np.zeros(l)
    for i in range(l):
        for j in range(l):
            row[i] += X[i, j]
            col[j] += X[i, j]
    row /= l
    col /= l
    g = row.mean()
    B = np.empty((l, l))
    for i in range(l):
        for j in range(l):
            B[i, j] = 0.5 * (X[i, j] + X[j, i]) - 0.5 * (row[i] + col[i] + row[j] + col[j]) + g
    vals, vecs = np.linalg.eigh(B)
    for i in range(l):
        for j in range(l):
            out[i, j] = X[i, j]
    for k in range(l):
        if vals[k] > 0.0:
            v = vecs[:, k].copy()
            for i in range(l):
                a = vals[k] * v[i]
                for j in range(l):
                    out[i, j] -= a * v[j]


@njit(nogil=True, cache=True)
def dykstra_edm(W, P, max_iter, tol, residuals):
    """Project ``W`` onto the cone of Euclidean distance matrices by Dykstra's algorithm.

    Alternates the projection onto symmetric hollow matrices (a subspace: no
    correction needed) with the projection onto ``{X : V X V <= 0}`` (a convex
    cone: Dykstra's correction applied). Stops when
    ``||Y - X||_inf / ||Y||_inf <= tol``.

    Parameters
    ----------
    W : float64 (l, l)
    P : float64 (l, l)
        The cone step's correction to start from, overwritten with the last one. Zeros: a
        cold start. The last correction of a nearby matrix ``W0`` with projection ``E0``,
        given with ``W = E0 + (W1 - W0)``, projects ``W1`` (Dykstra's algorithm is block
        coordinate ascent on the dual problem, which converges from any feasible dual
        point) in fewer iterations.
    max_iter : int
    tol : float
    residuals : float64 (max_iter,)
        Written with the relative change of each iteration.

    Returns
    -------
    E : float64 (l, l)
        The projection (symmetric, hollow, conditionally negative definite).
    n_iter : int
    """
    l = W.shape[0]
    X = np.empty((l, l))
    Y = np.empty((l, l))
    T = np.empty((l, l))
    _project_hollow(W, X)
    it = 0
    for it in range(1, max_iter + 1):
        for i in range(l):
            for j in range(l):
                T[i, j] = X[i, j] + P[i, j]
        _project_cone(T, Y)
        for i in range(l):
            for j in range(l):
                P[i, j] = T[i, j] - Y[i, j]
        X_new = np.empty((l, l))
        _project_hollow(Y, X_new)
        num = 0.0
        den = 0.0
        for i in range(l):
            for j in range(l):
                diff = abs(Y[i, j] - X_new[i, j])
                if diff > num:
                    num = diff
                if abs(Y[i, j]) > den:
                    den = abs(Y[i, j])
        X = X_new
        r = num / den if den > 0 else 0.0
        residuals[it - 1] = r
        if r <= tol:
            break
    return X, it


@njit(nogil=True, cache=True)
def triangulate(F, mu, Lsharp, out):
    """Landmark MDS placement: ``out[a] = -1/2 * Lsharp @ (F[a] - mu)`` for every row ``a``.

    Parameters
    ----------
    F : float64 (n, l)
        Estimated squared distances from each item to each landmark.
    mu : float64 (l,)
        Column means of the landmark distance matrix.
    Lsharp : float64 (d, l)
        ``Lambda^(-1/2) Q^T`` of the top eigenpairs.
    out : float64 (n, d)
    """
    n, l = F.shape
    d = Lsharp.shape[0]
    for a in range(n):
        for c in range(d):
            s = 0.0
            for k in range(l):
                s += Lsharp[c, k] * (F[a, k] - mu[k])
            out[a, c] = -0.5 * s


@njit(nogil=True, cache=True)
def landmark_distances(Y, landmarks, out):
    """``out[a, c] = ||Y[a] - Y[landmarks[c]]||`` (Euclidean, not squared)."""
    n, d = Y.shape
    for a in range(n):
        for c in range(landmarks.shape[0]):
            s = 0.0
            for t in range(d):
                diff = Y[a, t] - Y[landmarks[c], t]
                s += diff * diff
            out[a, c] = np.sqrt(s)


@njit(nogil=True, cache=True)
def landmark_stress(Y, landmarks, target, weight, grad):
    """Raw stress ``sum w (||Y[a] - Y[L_c]|| - target[a, c])^2`` and its gradient (written to ``grad``).

    ``weight`` (n, l) is 1 for the item/landmark pairs that count and 0 for the
    others (a landmark with itself, items a landmark never compared).
    """
    n, d = Y.shape
    for a in range(n):
        for t in range(d):
            grad[a, t] = 0.0
    f = 0.0
    for a in range(n):
        for c in range(landmarks.shape[0]):
            if weight[a, c] == 0.0:
                continue
            b = landmarks[c]
            s = 0.0
            for t in range(d):
                diff = Y[a, t] - Y[b, t]
                s += diff * diff
            dist = np.sqrt(s)
            r = dist - target[a, c]
            f += weight[a, c] * r * r
            if dist > 0.0:
                k = 2.0 * weight[a, c] * r / dist
                for t in range(d):
                    g = k * (Y[a, t] - Y[b, t])
                    grad[a, t] += g
                    grad[b, t] -= g
    return f
