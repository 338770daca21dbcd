"""Per-column shift recovery (LOE steps 3 and 4)."""

import dataclasses

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from loe_viz.points import make_points
from loe_viz.shifts import OFFSET_METHODS, ShiftResult, apply_shifts, estimate_shifts


def sq_dists(X):
    return cdist(X, X, "sqeuclidean")


def unshift(D, t):
    """What the rankings give without noise: column c of D lowered by t[c], zero diagonal."""
    W = D - t[None, :]
    np.fill_diagonal(W, 0.0)
    return W


def lstsq_shifts(W):
    """Least squares on s_c - s_r = W[c, r] - W[r, c] (c < r) plus sum(s) = -sum(W) / (l - 1)."""
    l = W.shape[0]
    rows, rhs = [], []
    for c in range(l):
        for r in range(c + 1, l):
            row = np.zeros(l)
            row[c], row[r] = 1.0, -1.0
            rows.append(row)
            rhs.append(W[c, r] - W[r, c])
    rows.append(np.ones(l))
    rhs.append(-W.sum() / (l - 1))
    return np.linalg.lstsq(np.array(rows), np.array(rhs), rcond=None)[0]


def noisy_block(l, d, seed, noise=0.05):
    rng = np.random.default_rng(seed)
    D = sq_dists(make_points("gaussian", l, d=d, random_state=seed + 1000))
    W = unshift(D, rng.normal(0, 2, l)) + noise * rng.standard_normal((l, l))
    np.fill_diagonal(W, 0.0)
    return W


def test_apply_shifts_is_W_plus_J_diag_s():
    rng = np.random.default_rng(0)
    W = rng.standard_normal((6, 6))
    np.fill_diagonal(W, 0.0)
    s = rng.standard_normal(6)
    J = np.ones((6, 6)) - np.eye(6)
    np.testing.assert_allclose(apply_shifts(W, s), W + J @ np.diag(s), atol=1e-15)


@pytest.mark.parametrize("l, d", [(4, 1), (5, 2), (9, 2), (12, 4), (20, 3)])
def test_least_squares_shifts_match_lstsq(l, d):
    W = noisy_block(l, d, seed=l, noise=0.3)
    res = estimate_shifts(W, n_components=d)
    np.testing.assert_allclose(res.s_ls, lstsq_shifts(W), atol=1e-10)
    # the gauge: the off-diagonal entries of the least-squares block sum to zero
    assert abs(apply_shifts(W, res.s_ls).sum()) < 1e-9


@pytest.mark.parametrize("d", [1, 2, 3, 4])
@pytest.mark.parametrize("extra", [0, 1, 4])
@pytest.mark.parametrize("method", OFFSET_METHODS)
def test_noiseless_shifts_are_recovered_exactly(d, extra, method):
    l = d + 3 + extra
    X = make_points("gaussian", l, d=d, random_state=10 * d + extra)
    D = sq_dists(X)
    t = np.random.default_rng(99 + d + extra).normal(0, 3, l)  # different seed from the points
    res = estimate_shifts(unshift(D, t), n_components=d, method=method)
    np.testing.assert_allclose(res.s, t, atol=1e-9)
    np.testing.assert_allclose(res.shifted, D, atol=1e-9)
    assert res.s == pytest.approx(res.s_ls + res.offset)
    assert res.method == method


def test_noiseless_exact_for_landmarks_on_a_circle():
    # cocircular landmarks: the block has lower rank, the rule must still hold
    ang = np.linspace(0, 2 * np.pi, 7, endpoint=False) + 0.1
    X = np.column_stack([np.cos(ang), np.sin(ang)])
    D = sq_dists(X)
    t = np.linspace(-2, 3, 7)
    for l in (5, 6, 7):
        res = estimate_shifts(unshift(D[:l, :l], t[:l]), n_components=2)
        np.testing.assert_allclose(res.s, t[:l], atol=1e-9)


def test_eigenvalues_and_offset_rule():
    W = noisy_block(10, 2, seed=4)
    res = estimate_shifts(W, n_components=2)
    C = apply_shifts(W, res.s_ls)
    ref = np.sort(np.linalg.eigvalsh(0.5 * (C + C.T)))[::-1]
    np.testing.assert_allclose(res.eigenvalues, ref, atol=1e-10)
    assert np.all(np.diff(res.eigenvalues) <= 0)
    assert res.offset == pytest.approx(ref[1])  # second-largest SIGNED eigenvalue
    assert res.offset_indices == (1,)
    mean = estimate_shifts(W, n_components=2, method="mean")
    # eigenvalues 2 .. l-d-1 (1-based) are the ones equal to the offset without noise
    assert mean.offset_indices == tuple(range(1, 10 - 2 - 1))
    assert mean.offset == pytest.approx(ref[1:7].mean())


def test_noiseless_eigenvalues_repeat_the_offset():
    d, l = 2, 9
    D = sq_dists(make_points("uniform", l, d=d, random_state=3))
    res = estimate_shifts(unshift(D, np.arange(l, dtype=float)), n_components=d, method="mean")
    vals = res.eigenvalues[list(res.offset_indices)]
    np.testing.assert_allclose(vals, res.offset, atol=1e-9)


def test_lambda2_offset_is_at_least_the_mean_variant():
    for seed in range(5):
        W = noisy_block(12, 2, seed=seed, noise=0.2)
        a = estimate_shifts(W, 2, "lambda2")
        b = estimate_shifts(W, 2, "mean")
        np.testing.assert_array_equal(a.s_ls, b.s_ls)
        assert a.offset >= b.offset
    # identical when l = d + 3 (a single eigenvalue is averaged)
    W = noisy_block(5, 2, seed=7, noise=0.2)
    assert estimate_shifts(W, 2, "mean").offset == estimate_shifts(W, 2, "lambda2").offset


@pytest.mark.parametrize("method", OFFSET_METHODS)
def test_result_does_not_depend_on_unknown_column_shifts(method):
    # adding arbitrary per-column constants to W changes s but not the shifted block
    W = noisy_block(8, 2, seed=11, noise=0.3)
    u = np.random.default_rng(12).normal(0, 5, 8)
    a = estimate_shifts(W, 2, method)
    b = estimate_shifts(apply_shifts(W, u), 2, method)
    np.testing.assert_allclose(b.s, a.s - u, atol=1e-9)
    np.testing.assert_allclose(b.shifted, a.shifted, atol=1e-9)


def test_result_is_frozen_and_keeps_input():
    W = noisy_block(6, 2, seed=1)
    res = estimate_shifts(W, 2)
    assert isinstance(res, ShiftResult)
    np.testing.assert_array_equal(res.W, W)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.offset = 0.0


def test_errors():
    W = noisy_block(6, 2, seed=1)
    with pytest.raises(ValueError, match=r"^offset must be one of lambda2, mean; got 'median'$"):
        estimate_shifts(W, 2, method="median")
    with pytest.raises(ValueError, match=r"^n_landmarks must be >= n_components \+ 3 = 6, got 5$"):
        estimate_shifts(W[:5, :5], 3)
