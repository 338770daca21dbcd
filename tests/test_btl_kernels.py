"""The BTL kernels against slow NumPy references written from the formulas."""

import numpy as np
import pytest

from loe_viz.kernels import btl


def _problem(rng, n=12, m=200):
    near = rng.integers(0, n, m).astype(np.int32)
    far = rng.integers(0, n - 1, m).astype(np.int32)
    far[far >= near] += 1  # distinct pairs
    w = rng.standard_normal(n)
    return near, far, w


def ref_objective(near, far, w, lam):
    z = w[far] - w[near]
    return np.sum(np.log1p(np.exp(-z))) + 0.5 * lam * w @ w


def ref_gradient(near, far, w, lam):
    z = w[far] - w[near]
    q = 1.0 / (1.0 + np.exp(z))
    g = lam * w.copy()
    np.add.at(g, far, -q)
    np.add.at(g, near, q)
    return g


def ref_hessian(near, far, w, lam):
    n = w.size
    z = w[far] - w[near]
    p = 1.0 / (1.0 + np.exp(-z))
    c = p * (1 - p)
    H = lam * np.eye(n)
    for a, b, ct in zip(near, far, c):
        H[a, a] += ct
        H[b, b] += ct
        H[a, b] -= ct
        H[b, a] -= ct
    return H


@pytest.mark.parametrize("lam", [0.0, 0.3])
def test_objective_matches_reference(rng, lam):
    near, far, w = _problem(rng)
    assert btl.objective(near, far, w, lam) == pytest.approx(ref_objective(near, far, w, lam), rel=1e-12)


@pytest.mark.parametrize("lam", [0.0, 0.3])
def test_gradient_matches_reference_and_finite_differences(rng, lam):
    near, far, w = _problem(rng)
    n = w.size
    mask = np.ones(n, dtype=bool)
    mask[3] = False
    w[3] = 0.0
    g = np.empty(n)
    hd = np.empty(n)
    h = np.empty(near.size, dtype=np.float32)
    gnorm = btl.gradient(near, far, w, lam, mask, g, hd, h, True)
    ref = ref_gradient(near, far, w, lam)
    # projected onto the sum-zero subspace of the masked items
    ref_p = np.where(mask, ref - ref[mask].mean(), 0.0)
    np.testing.assert_allclose(g, ref_p, rtol=1e-6, atol=1e-6)  # float32 logistic
    assert gnorm == pytest.approx(np.linalg.norm(ref_p), rel=1e-6)
    # finite differences of the objective
    eps = 1e-6
    fd = np.array([
        (ref_objective(near, far, w + eps * e, lam) - ref_objective(near, far, w - eps * e, lam)) / (2 * eps)
        for e in np.eye(n)
    ])
    np.testing.assert_allclose(ref, fd, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(hd, np.diag(ref_hessian(near, far, w, lam)), rtol=1e-5)


def test_hessian_vector_matches_dense_hessian(rng):
    near, far, w = _problem(rng)
    n = w.size
    lam = 0.1
    g = np.empty(n)
    hd = np.empty(n)
    h = np.empty(near.size, dtype=np.float32)
    btl.gradient(near, far, w, lam, np.ones(n, dtype=bool), g, hd, h, True)
    v = rng.standard_normal(n)
    out = np.empty(n)
    btl.hessian_vector(near, far, h, lam, v, out)
    np.testing.assert_allclose(out, ref_hessian(near, far, w, lam) @ v, rtol=1e-5, atol=1e-6)


def test_newton_direction_solves_projected_system(rng):
    near, far, w = _problem(rng, n=15, m=400)
    n = w.size
    lam = 0.0
    mask = np.ones(n, dtype=bool)
    mask[0] = False
    w[0] = 0.0
    g = np.empty(n)
    hd = np.empty(n)
    h = np.empty(near.size, dtype=np.float32)
    btl.gradient(near, far, w, lam, mask, g, hd, h, True)
    d = np.empty(n)
    its = btl.newton_direction(near, far, h, hd, lam, mask, g, 200, 1e-12, d, np.empty((4, n)),
                               np.zeros(0, dtype=np.int64), np.zeros((0, 0)))
    assert its > 0
    # Reference: minimum-norm solution of H d = -g on the sum-zero subspace of the masked items.
    H = ref_hessian(near, far, w, lam)[np.ix_(mask, mask)]
    gm = g[mask]
    P = np.eye(mask.sum()) - 1.0 / mask.sum()
    ref = np.linalg.lstsq(P @ H @ P, -P @ gm, rcond=None)[0]
    ref = P @ ref
    np.testing.assert_allclose(d[mask], ref, rtol=1e-4, atol=1e-6)
    assert d[0] == 0.0
    assert abs(d[mask].sum()) < 1e-9


def test_count_appearances(rng):
    near, far, _ = _problem(rng)
    counts = np.empty(12, dtype=np.int64)
    btl.count_appearances(near, far, 12, counts)
    np.testing.assert_array_equal(counts, np.bincount(near, minlength=12) + np.bincount(far, minlength=12))


@pytest.mark.parametrize("shift", [0, 2, 5])
def test_tile_order_is_a_stable_sort_by_tile(rng, shift):
    near, far, _ = _problem(rng, n=50, m=500)
    out_near, out_far = np.empty_like(near), np.empty_like(far)
    btl.tile_order(near, far, shift, out_near, out_far)
    nb = (max(near.max(), far.max()) >> shift) + 1
    key = (near >> shift).astype(np.int64) * nb + (far >> shift)
    order = np.argsort(key, kind="stable")
    np.testing.assert_array_equal(out_near, near[order])
    np.testing.assert_array_equal(out_far, far[order])


def test_block_preconditioned_direction_solves_the_same_system_and_block_hessian_matches_numpy(rng):
    near, far, w = _problem(rng, n=15, m=400)
    n = w.size
    lam = 1e-3
    mask = np.ones(n, dtype=bool)
    mask[0] = False
    w[0] = 0.0
    # items 3, 5 and 9 compared among themselves many times, from row 400 on
    extra = rng.integers(0, 3, size=(900, 2))
    extra = extra[extra[:, 0] != extra[:, 1]]
    blk = np.array([3, 5, 9])
    near = np.concatenate([near, blk[extra[:, 0]]]).astype(near.dtype)
    far = np.concatenate([far, blk[extra[:, 1]]]).astype(far.dtype)
    g, hd, h = np.empty(n), np.empty(n), np.empty(near.size, dtype=np.float32)
    btl.gradient(near, far, w, lam, mask, g, hd, h, True)
    pos = np.full(n, -1, dtype=np.int64)
    pos[blk] = np.arange(3)
    B = np.empty((3, 3))
    btl.block_hessian(near, far, h, hd, 400, pos, B)
    ref = np.diag(hd[blk])
    for t in range(400, near.size):
        i, j = pos[near[t]], pos[far[t]]
        ref[i, j] -= h[t]
        ref[j, i] -= h[t]
    np.testing.assert_allclose(B, ref, rtol=1e-6)
    d_plain, d_block = np.empty(n), np.empty(n)
    btl.newton_direction(near, far, h, hd, lam, mask, g, 500, 1e-12, d_plain, np.empty((4, n)),
                         np.zeros(0, dtype=np.int64), np.zeros((0, 0)))
    btl.newton_direction(near, far, h, hd, lam, mask, g, 500, 1e-12, d_block, np.empty((4, n)),
                         blk.astype(np.int64), np.linalg.inv(B))
    np.testing.assert_allclose(d_block, d_plain, rtol=1e-5, atol=1e-8)
