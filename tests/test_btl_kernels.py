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
    its = btl.newton_direction(near, far, h, hd, lam, mask, g, 200, 1e-12, d, np.empty((4, n)))
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


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("shift,m", [(0, 500), (2, 500), (5, 500), (2, 7), (3, 5003)])
def test_tile_order_is_a_stable_sort_by_tile(rng, shift, m, dtype):
    # m = 7 is shorter than the write prefetch's reach, 5003 no multiple of a cache line
    near, far, _ = _problem(rng, n=50, m=m)
    near, far = near.astype(dtype), far.astype(dtype)
    out_near, out_far = np.empty_like(near), np.empty_like(far)
    btl.tile_order(near, far, shift, out_near, out_far)
    nb = (max(near.max(), far.max()) >> shift) + 1
    key = (near >> shift).astype(np.int64) * nb + (far >> shift)
    order = np.argsort(key, kind="stable")
    np.testing.assert_array_equal(out_near, near[order])
    np.testing.assert_array_equal(out_far, far[order])


def test_win_counts(rng):
    near, far, _ = _problem(rng)
    counts = np.empty((12, 2), dtype=np.int32)
    btl.win_counts(near, far, counts)
    np.testing.assert_array_equal(counts[:, 0], np.bincount(far, minlength=12))
    np.testing.assert_array_equal(counts[:, 1], np.bincount(near, minlength=12) + np.bincount(far, minlength=12))


def test_agreement_counts_ties_half(rng):
    near, far, w = _problem(rng, n=12, m=2000)
    w = np.round(w)  # many ties
    diff = w[far] - w[near]
    ref = (np.sum(diff > 0) + 0.5 * np.sum(diff == 0)) / diff.size
    assert btl.agreement(near, far, w) == pytest.approx(ref, abs=1e-15)
    assert btl.agreement(near[:0], far[:0], w) == 1.0


@pytest.mark.parametrize("scale", [0.5, 30.0])
def test_gradient_single_precision_logistic(rng, scale):
    # far from the optimum the driver uses the single-precision logistic: 3e-7 relative
    near, far, w = _problem(rng, n=40, m=3000)
    w *= scale  # scale 30: many |z| beyond the clamp at 80
    n = w.size
    mask = np.ones(n, dtype=bool)
    g, hd, h = np.empty(n), np.empty(n), np.empty(near.size, dtype=np.float32)
    btl.gradient(near, far, w, 0.1, mask, g, hd, h, False)
    ref = ref_gradient(near, far, w, 0.1)
    ref_p = ref - ref.mean()
    np.testing.assert_allclose(g, ref_p, rtol=0, atol=1e-6 * np.abs(ref).max())
    # the log-odds are rounded to single precision first, as the driver's tolerance allows
    z = np.clip(w[far] - w[near], -80, 80).astype(np.float32).astype(np.float64)
    e = np.exp(-np.abs(z))
    np.testing.assert_allclose(h, e / (1 + e) ** 2, rtol=4e-7, atol=1e-30)  # q (1 - q) without cancellation
    g2, hd2, h2 = np.empty(n), np.empty(n), np.empty(near.size, dtype=np.float32)
    btl.gradient(near, far, w, 0.1, mask, g2, hd2, h2, True)
    np.testing.assert_allclose(g2, ref_p, rtol=0, atol=1e-13 * np.abs(ref).max())


def test_meanfield_start_from_counts_is_the_same(rng):
    near, far, w = _problem(rng, n=300, m=30000)
    mask = np.ones(300, dtype=bool)
    mask[7] = False
    a, b = np.empty(300), np.empty(300)
    btl.meanfield_start(near, far, mask, 3, 64, a)
    counts = np.empty((300, 2), dtype=np.int32)
    btl.win_counts(near, far, counts)
    btl.meanfield_from_counts(counts, mask, 3, 64, b)
    np.testing.assert_array_equal(a, b)
    assert a[7] == 0.0 and abs(a[mask].sum()) < 1e-9


def ref_meanfield(counts, mask, n_iter, n_grid, bins):
    """NumPy reference of btl.meanfield_from_counts: Phi over a sample of the scores (every
    n // 1000-th item) binned at their bin means."""
    n = counts.shape[0]
    pi = (counts[:, 0] + 0.5) / (counts[:, 1] + 1.0)
    w = np.where(mask, np.log(pi / (1 - pi)), 0.0)
    sample = mask & (np.arange(n) % max(1, n // 1000) == 0)
    for _ in range(n_iter):
        lo, hi = w[mask].min(), w[mask].max()
        s = w[sample]
        if s.size <= bins:
            pos, weight = s, np.ones(s.size)
        else:
            b = np.minimum(((s - lo) * (bins / (hi - lo))).astype(int), bins - 1)
            weight = np.bincount(b, minlength=bins)
            pos = np.bincount(b, weights=s, minlength=bins)[weight > 0] / weight[weight > 0]
            weight = weight[weight > 0]
        grid = np.linspace(lo - 12, hi + 12, n_grid)
        phi = (weight / (1 + np.exp(pos[None, :] - grid[:, None]))).sum(axis=1) / s.size
        w = np.where(mask, np.interp(pi, phi, grid), 0.0)  # phi increases: interp inverts it
    w[mask] -= w[mask].mean()
    return w


@pytest.mark.parametrize("n", [40, 3000])  # every item in the table; a sample of 1000, binned
def test_meanfield_matches_numpy_reference(rng, n):
    X = rng.standard_normal((n, 2))
    D = ((X - X[0]) ** 2).sum(axis=1)
    m = 60 * n
    j, k = rng.integers(1, n, m), rng.integers(1, n, m)
    keep = j != k
    j, k = j[keep], k[keep]
    closer = rng.random(j.size) < 1 / (1 + np.exp(D[j] - D[k]))  # BTL answers at T = 1
    near = np.where(closer, j, k).astype(np.int32)
    far = np.where(closer, k, j).astype(np.int32)
    counts = np.empty((n, 2), dtype=np.int32)
    btl.win_counts(near, far, counts)
    mask = np.arange(n) != 0
    w = np.empty(n)
    btl.meanfield_from_counts(counts, mask, 6, 128, w)
    ref = ref_meanfield(counts, mask, 6, 128, btl.MEANFIELD_BINS)
    # the kernel sums single-precision terms: Phi agrees to ~1e-7, the inverted scores to ~1e-5
    np.testing.assert_allclose(w, ref, rtol=0, atol=2e-5)
    assert w[0] == 0.0 and abs(w.sum()) < 1e-9
    assert np.corrcoef(w[mask], D[mask])[0, 1] > 0.9


def test_score_moments_returns_the_agreement_of_its_pass(rng):
    from loe_viz.kernels import uncertainty as uk

    near, far, w = _problem(rng, n=30, m=3000)
    w = np.round(2 * w) / 2  # with ties
    n = w.size
    mask = np.ones(n, dtype=bool)
    g, hd, h = np.empty(n), np.empty(n), np.empty(near.size, dtype=np.float32)
    btl.gradient(near, far, w, 0.01, mask, g, hd, h, True)
    var, bias = np.empty(n), np.empty(n)
    got = uk.score_moments(near, far, w, h, hd, mask, var, bias)
    diff = w[far] - w[near]
    assert got == pytest.approx((np.sum(diff > 0) + 0.5 * np.sum(diff == 0)) / diff.size, abs=1e-15)
    assert got == btl.agreement(near, far, w)


def test_single_precision_exponential_against_numpy():
    from numba import njit

    from loe_viz.kernels.fastexp import expneg32

    @njit
    def many(a):
        out = np.empty(a.size)
        for i in range(a.size):
            out[i] = np.float64(expneg32(a[i]))
        return out

    a = np.linspace(0, 80, 400_001).astype(np.float32)
    ref = np.exp(-a.astype(np.float64))
    assert (np.abs(many(a) - ref) / ref).max() < 1.1e-7


def test_single_precision_hessian_vector(rng):
    near, far, w = _problem(rng, n=50, m=5000)
    n = w.size
    g, hd, h = np.empty(n), np.empty(n), np.empty(near.size, dtype=np.float32)
    btl.gradient(near, far, w, 0.1, np.ones(n, dtype=bool), g, hd, h, True)
    v = rng.standard_normal(n)
    ref = ref_hessian(near, far, w, 0.1) @ v
    out = np.empty(n)
    btl.hessian_vector_single(near, far, h, 0.1, v, out, np.empty((n, 2), dtype=np.float32))
    np.testing.assert_allclose(out, ref, rtol=0, atol=2e-5 * np.abs(ref).max())
    # the Newton direction with single-precision products solves the same system to ~1e-5
    mask = np.ones(n, dtype=bool)
    mask[0] = False
    d1, d2 = np.empty(n), np.empty(n)
    btl.newton_direction(near, far, h, hd, 0.1, mask, g, 100, 1e-10, d1, np.empty((4, n)))
    btl.newton_direction_coarse(near, far, h, hd, 0.1, mask, g, 100, 1e-10, d2, np.empty((4, n)),
                                np.zeros(0, dtype=np.int64), np.zeros((0, 0)), True)
    np.testing.assert_allclose(d2, d1, rtol=0, atol=1e-5 * np.abs(d1).max())
