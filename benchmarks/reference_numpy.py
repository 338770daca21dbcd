"""A plain NumPy/SciPy LOE, the yardstick for ``bench_loe.py``.

The same algorithm and the same comparisons as :class:`loe_viz.LOE`, written the
way one would without numba: vectorised NumPy for the BTL objective and
gradient, SciPy's L-BFGS for each ranking, NumPy eigen-decompositions for the
landmark block. It shares no code with the package.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize


def _btl(near, far, n, head, lam):
    keep = np.ones(n, dtype=bool)
    keep[head] = False

    def fg(w_free):
        w = np.zeros(n)
        w[keep] = w_free - w_free.mean()
        z = w[far] - w[near]
        f = np.logaddexp(0.0, -z).sum() + 0.5 * lam * w @ w
        q = 0.5 * (1.0 - np.tanh(0.5 * z))  # 1 - sigmoid(z)
        g = lam * w + np.bincount(near, q, minlength=n) - np.bincount(far, q, minlength=n)
        g = g[keep]
        return f, g - g.mean()

    res = minimize(fg, np.zeros(n - 1), jac=True, method="L-BFGS-B", options=dict(maxiter=2000, gtol=1e-6))
    w = np.zeros(n)
    w[keep] = res.x - res.x.mean()
    return w


def loe_numpy(triplets, n, d, landmarks, lam=1e-3):
    """Embed ``n`` items from list-order ``triplets`` headed by ``landmarks``."""
    l = len(landmarks)
    R = np.zeros((n, l))
    for c, h in enumerate(landmarks):
        sel = triplets[:, 0] == h
        R[:, c] = _btl(triplets[sel, 1], triplets[sel, 2], n, h, lam)
    W = R[landmarks]
    s = (W - W.T).mean(axis=1) - W.sum() / (l * (l - 1))
    J = np.ones((l, l)) - np.eye(l)
    C = W + J * s[None, :]
    s = s + np.sort(np.linalg.eigvalsh(0.5 * (C + C.T)))[::-1][1]
    X = W + J * s[None, :]
    V = np.eye(l) - 1.0 / l
    Xk = 0.5 * (X + X.T)
    np.fill_diagonal(Xk, 0)
    P = np.zeros_like(Xk)
    for _ in range(1000):  # Dykstra
        T = Xk + P
        B = V @ T @ V
        vals, vecs = np.linalg.eigh(0.5 * (B + B.T))
        Y = T - (vecs * np.clip(vals, 0, None)) @ vecs.T
        P = T - Y
        Xn = 0.5 * (Y + Y.T)
        np.fill_diagonal(Xn, 0)
        done = np.abs(Y - Xn).max() / np.abs(Y).max() <= 1e-10
        Xk = Xn
        if done:
            break
    E = Xk
    F = R + s[None, :]
    A = -0.5 * V @ E @ V
    vals, vecs = np.linalg.eigh(A)
    vals, vecs = vals[::-1][:d], vecs[:, ::-1][:, :d]
    Z = -0.5 * (F - E.mean(axis=0)) @ (vecs / np.sqrt(vals))
    Z[landmarks] = vecs * np.sqrt(vals)
    return Z
