"""One landmark's BTL ranking: the optimum, its meaning, and its diagnostics."""

import numpy as np
import pytest
from scipy.optimize import minimize

from loe_viz import TripletOracle, make_points
from loe_viz.kernels import btl
from loe_viz.ranking import RankingResult, rank_column


def _objective(w_free, near, far, n, head, lam):
    w = np.insert(w_free, head, 0.0)
    z = w[far] - w[near]
    f = np.sum(np.logaddexp(0.0, -z)) + 0.5 * lam * w @ w
    q = 1.0 / (1.0 + np.exp(z))
    g = lam * w
    np.add.at(g, far, -q)
    np.add.at(g, near, q)
    return f, np.delete(g, head)


@pytest.mark.parametrize("lam", [1e-3, 1.0])
def test_matches_scipy_optimum(lam):
    X = make_points("gaussian", 40, random_state=3)
    oracle = TripletOracle(X, random_state=4)
    near, far = oracle.comparisons(7, 3000, seed=11)
    col = rank_column(near, far, 7, 40, regularization=lam, tol=1e-9)
    assert col.converged
    ref = minimize(_objective, np.zeros(39), args=(near, far, 40, 7, lam), jac=True, method="L-BFGS-B",
                   options=dict(gtol=1e-12, ftol=1e-15, maxiter=10_000))
    w_ref = np.insert(ref.x, 7, 0.0)
    # the regularised optimum has sum zero on its own; ours enforces it exactly
    w_ref[np.arange(40) != 7] -= w_ref[np.arange(40) != 7].mean()
    np.testing.assert_allclose(col.scores, w_ref, atol=2e-5)
    assert col.scores[7] == 0.0
    assert abs(col.scores.sum()) < 1e-9


@pytest.mark.parametrize("tol", [1e-7, 1e-8])
def test_a_tol_below_the_statistical_ones_reaches_the_optimum(tol):
    """Below tol = 5e-7 the docs promise the optimum, but the decrement test (10^4 tol per item) still stopped the
    ranking: with 10 comparisons per item, items that won or lost nearly all of theirs were left up to 2 short."""
    n, head = 2000, 5
    X = make_points("gaussian", n, d=3, random_state=4)
    near, far = TripletOracle(X, random_state=2).comparisons(head, 10 * n, seed=7)
    col = rank_column(near, far, head, n, tol=tol, max_iter=500)
    ref = minimize(_objective, np.zeros(n - 1), args=(near, far, n, head, 1e-3), jac=True, method="L-BFGS-B",
                   options=dict(gtol=1e-10, ftol=1e-15, maxiter=20_000))
    assert col.converged and np.abs(ref.jac).max() < 1e-5
    w_ref = np.insert(ref.x, head, 0.0)
    w_ref[np.arange(n) != head] -= w_ref[np.arange(n) != head].mean()
    assert np.abs(col.scores - w_ref).max() < 1e-3


def test_scores_estimate_centred_squared_distances():
    n = 200
    X = make_points("gaussian", n, random_state=5)
    oracle = TripletOracle(X, random_state=6)
    head = 17
    near, far = oracle.comparisons(head, 400_000, seed=12)
    col = rank_column(near, far, head, n)
    D = ((X - X[head]) ** 2).sum(axis=1)
    others = np.arange(n) != head
    target = D[others] - D[others].mean()
    err = col.scores[others] - target
    # sqrt(n log n / m) ~ 0.05: the estimate is accurate and unbiased in scale
    assert np.sqrt(np.mean(err**2)) < 0.08
    slope = np.polyfit(target, col.scores[others], 1)[0]
    assert slope == pytest.approx(1.0, abs=0.05)


def test_never_fits_closer_wins():
    # Farther items must get larger scores: the sign convention of the whole pipeline.
    X = make_points("uniform", 60, random_state=1)
    near, far = TripletOracle(X, temperature=0, random_state=2).comparisons(0, 20_000, seed=3)
    col = rank_column(near, far, 0, 60)
    D = ((X - X[0]) ** 2).sum(axis=1)
    assert np.corrcoef(D[1:], col.scores[1:])[0, 1] > 0.95


def test_unranked_items_are_reported_and_finite():
    n = 30
    rng = np.random.default_rng(0)
    near = rng.integers(1, 20, 500).astype(np.int32)
    far = rng.integers(1, 20, 500).astype(np.int32)
    keep = near != far
    col = rank_column(near[keep], far[keep], 0, n)
    np.testing.assert_array_equal(col.unranked, np.arange(20, 30))
    assert np.all(np.isfinite(col.scores))
    np.testing.assert_allclose(col.scores[20:], 0.0, atol=1e-5)  # the mean: no information


def test_separable_data_stays_finite_and_converges():
    # Noiseless answers make the MLE diverge; regularisation and the trust region keep it finite.
    X = make_points("circle", 50, random_state=1)
    near, far = TripletOracle(X, temperature=0.0, random_state=2).comparisons(3, 5000, seed=4)
    col = rank_column(near, far, 3, 50)
    assert col.converged
    assert np.all(np.isfinite(col.scores))
    assert col.grad_history[-1] < col.grad_history[0]


def test_meanfield_start_is_close_and_reaches_the_same_optimum():
    n = 300
    X = make_points("gaussian", n, random_state=8)
    near, far = TripletOracle(X, random_state=9).comparisons(5, 60_000, seed=1)
    # a tolerance far below the default's (whose Newton decrement is statistical, 0.2 per item)
    a = rank_column(near, far, 5, n, tol=1e-12)
    b = rank_column(near, far, 5, n, w0=np.zeros(n), tol=1e-12)
    np.testing.assert_allclose(a.scores, b.scores, atol=1e-6)
    assert a.n_iter < b.n_iter
    mask = np.arange(n) != 5
    w = np.empty(n)
    btl.meanfield_start(near, far, mask, 2, 200, w)
    assert w[5] == 0.0 and abs(w.sum()) < 1e-9
    assert np.corrcoef(w[mask], a.scores[mask])[0, 1] > 0.98


def test_ranking_result_stacks_columns():
    X = make_points("gaussian", 50, random_state=1)
    oracle = TripletOracle(X, random_state=2)
    cols = [rank_column(*oracle.comparisons(h, 2000, seed=h), h, 50) for h in (4, 9, 1)]
    res = RankingResult.from_columns(cols, 50, 1e-3)
    assert res.R.shape == (50, 3)
    np.testing.assert_array_equal(res.landmarks, [4, 9, 1])
    assert res.R[4, 0] == 0 and res.R[9, 1] == 0 and res.R[1, 2] == 0
    np.testing.assert_array_equal(res.n_comparisons, [2000, 2000, 2000])
    np.testing.assert_array_equal(res.items_covered, [49 - c.unranked.size for c in cols])
    assert res.items_covered.max() <= 49


def test_cache_order_keeps_the_comparisons_and_the_scores():
    # Above the tiling threshold the comparisons are regrouped, never changed: the same
    # multiset of (near, far) pairs, and the same optimum up to rounding.
    from loe_viz._tiles import _MIN_ITEMS as _TILE_MIN_ITEMS
    from loe_viz.ranking import cache_order

    n = _TILE_MIN_ITEMS + 5000
    rng = np.random.default_rng(21)
    near = rng.integers(1, n, 400_000).astype(np.int32)
    far = rng.integers(1, n - 1, 400_000).astype(np.int32)
    far[far >= near] += 1
    far[far == 0] = 1
    keep = far != near
    near, far = near[keep], far[keep]
    tn, tf = cache_order(near, far, n)
    assert tn is not near and tn.dtype == near.dtype
    assert not np.array_equal(tn, near)  # really regrouped
    pairs = lambda a, b: np.sort(a.astype(np.int64) * n + b)  # noqa: E731
    np.testing.assert_array_equal(pairs(tn, tf), pairs(near, far))
    small_n, small_f = cache_order(near[:10], far[:10], 1000)
    assert np.shares_memory(small_n, near) and np.shares_memory(small_f, far)  # small n: no copy
    a = rank_column(near, far, 0, n, reorder=True, tol=1e-8)
    b = rank_column(near, far, 0, n, reorder=False, tol=1e-8)
    np.testing.assert_allclose(a.scores, b.scores, atol=1e-6)
    assert a.n_comparisons == b.n_comparisons


def test_heavy_items_get_a_coarse_direction_and_the_same_optimum():
    # The landmark share: a few items with thousands of comparisons among themselves. The
    # preconditioner then resolves their joint direction exactly; the optimum is unchanged.
    X = make_points("gaussian", 60, random_state=5)
    oracle = TripletOracle(X, random_state=6)
    near, far = oracle.comparisons(3, 6000, seed=12)
    block = np.array([10, 20, 30, 40])
    bn, bf = oracle.block_comparisons(3, block, 30_000, seed=13)
    near, far = np.concatenate([near, bn]), np.concatenate([far, bf])
    col = rank_column(near, far, 3, 60, regularization=1e-3, tol=1e-9)
    assert col.converged
    ref = minimize(_objective, np.zeros(59), args=(near, far, 60, 3, 1e-3), jac=True, method="L-BFGS-B",
                   options=dict(gtol=1e-12, ftol=1e-15, maxiter=20_000))
    w_ref = np.insert(ref.x, 3, 0.0)
    w_ref[np.arange(60) != 3] -= w_ref[np.arange(60) != 3].mean()
    np.testing.assert_allclose(col.scores, w_ref, atol=5e-5)


def test_coarse_preconditioner_solves_the_same_system_in_fewer_iterations():
    from loe_viz.ranking import _block_inverse, _heavy_direction

    X = make_points("gaussian", 400, random_state=7)
    oracle = TripletOracle(X, random_state=8)
    head = 5
    near, far = oracle.comparisons(head, 40_000, seed=14)
    bn, bf = oracle.block_comparisons(head, np.array([50, 150, 250, 350]), 40_000, seed=15)
    near, far = np.concatenate([near, bn]), np.concatenate([far, bf])
    n = 400
    mask = np.ones(n, dtype=bool)
    mask[head] = False
    w = rank_column(near, far, head, n).scores
    g, hd, h = np.empty(n), np.empty(n), np.empty(near.size, dtype=np.float32)
    btl.gradient(near, far, w + 0.3 * np.where(mask, np.sin(np.arange(n)), 0.0), 1e-3, mask, g, hd, h, True)
    wins = np.empty((n, 2), dtype=np.int32)
    btl.win_counts(near, far, wins)
    coarse = _heavy_direction(near, far, wins[:, 1], mask)
    assert coarse is not None and coarse[0].tolist() == [50, 150, 250, 350]
    heavy, hinv = _block_inverse(near, far, coarse, h, hd)
    # the block is the Hessian's, built without a pass over all comparisons: H e_a against a pass
    H = np.empty((4, n))
    for r, a in enumerate(heavy):
        e = np.zeros(n)
        e[a] = 1.0
        btl.hessian_vector(near, far, h, 1e-3, e, H[r])
    np.testing.assert_allclose(np.linalg.inv(hinv), H[:, heavy], rtol=1e-5)
    d1, d2 = np.empty(n), np.empty(n)
    it_jacobi = btl.newton_direction(near, far, h, hd, 1e-3, mask, g, 200, 1e-8, d1, np.empty((4, n)))
    it_coarse = btl.newton_direction_coarse(near, far, h, hd, 1e-3, mask, g, 200, 1e-8, d2, np.empty((4, n)),
                                            heavy, hinv, False)
    np.testing.assert_allclose(d2, d1, rtol=1e-5, atol=1e-7 * np.abs(d1).max())
    assert it_coarse < it_jacobi
    # without heavy items there is no coarse direction
    assert _heavy_direction(near[:40_000], far[:40_000], np.bincount(np.concatenate([near[:40_000], far[:40_000]]),
                                                                     minlength=n), mask) is None


@pytest.mark.parametrize("n", [2000, 40_000])
def test_halves_on_a_helper_thread_give_the_same_scores(n, monkeypatch):
    # From SPLIT_MIN comparisons on, passes are summed as two halves; a helper thread takes the
    # second half only while the scheduler reports an idle worker. Same arithmetic either way.
    import threading

    from loe_viz import ranking

    X = make_points("gaussian", n, random_state=9)
    oracle = TripletOracle(X, random_state=10)
    near, far = oracle.comparisons(1, ranking.SPLIT_MIN + 1001, seed=16)
    bn, bf = oracle.block_comparisons(1, np.array([7, 70, 700]), 30_000, seed=17)  # heavy items: block Jacobi
    near, far = np.concatenate([near, bn]), np.concatenate([far, bf])
    serial = rank_column(near, far, 1, n)
    idle = threading.Event()
    idle.idle_workers = 1
    threaded = rank_column(near, far, 1, n, cancel=idle)
    np.testing.assert_array_equal(threaded.scores, serial.scores)
    np.testing.assert_array_equal(threaded.score_variance, serial.score_variance)
    assert threaded.cg_iters == serial.cg_iters and threaded.n_iter == serial.n_iter
    # ... and the optimum of the undivided passes
    tight = rank_column(near, far, 1, n, tol=1e-8, cancel=idle)
    monkeypatch.setattr(ranking, "SPLIT_MIN", 10**12)
    whole = rank_column(near, far, 1, n, tol=1e-8)
    spread = serial.scores.std()
    np.testing.assert_allclose(tight.scores, whole.scores, atol=1e-6 * spread)


def test_a_ranking_near_its_optimum_returns_its_scores_without_the_last_step(monkeypatch):
    # A landmark at the edge of the data: its first Newton step starts far from the optimum (it
    # promises more than the decrement at which the ranking stops), its second promises less, so
    # that second step is not taken: one gradient pass fewer, and the scores are the first step's.
    from loe_viz import ranking
    from loe_viz.kernels import uncertainty as unc

    n = 400
    X = make_points("gaussian", n, random_state=5)
    head = int(np.argmax((X**2).sum(axis=1)))
    near, far = TripletOracle(X, random_state=6).comparisons(head, 60 * n, seed=12)
    skipped = rank_column(near, far, head, n)
    monkeypatch.setattr(ranking, "FINAL_STEP_SKIPPED", False)
    taken = rank_column(near, far, head, n)
    exact = rank_column(near, far, head, n, tol=1e-10)
    assert skipped.converged and taken.converged
    assert skipped.n_iter == taken.n_iter == 2
    assert len(skipped.grad_history) == 2 and len(taken.grad_history) == 3
    assert skipped.grad_history[1] == pytest.approx(taken.grad_history[1])  # the same first step
    # within the stopping decrement (0.2 per item) of the optimum: below half a standard error, root
    # mean square, where the step not taken would have brought them much closer
    others = np.arange(n) != head
    se = np.sqrt(exact.score_variance[others])
    rms = lambda col: np.sqrt(np.mean(((col.scores - exact.scores)[others] / se) ** 2))  # noqa: E731
    assert 0.05 < rms(skipped) < np.sqrt(0.2)
    assert rms(taken) < 0.2 * rms(skipped)
    # the variances are those of the scores returned: a gradient pass at them gives the same ones
    mask = others.copy()
    grad, hdiag, h = np.empty(n), np.empty(n), np.empty(near.shape[0], dtype=np.float32)
    btl.gradient(near, far, skipped.scores, 1e-3, mask, grad, hdiag, h, False)
    var, bias = np.empty(n), np.empty(n)
    unc.score_moments(near, far, skipped.scores, h, hdiag, mask, var, bias)
    np.testing.assert_allclose(skipped.score_variance, var, rtol=1e-5)
    # below the statistical tolerances (tol < 5e-7) every step is taken
    monkeypatch.setattr(ranking, "FINAL_STEP_SKIPPED", True)
    tight = rank_column(near, far, head, n, tol=1e-7)
    assert len(tight.grad_history) == tight.n_iter + 1
    # and so it is once the trust region has cut a step: noiseless answers, whose scores run off
    # towards the penalty's bound (nearly every comparison reproduced), are not in the statistical regime
    near0, far0 = TripletOracle(X, temperature=0, random_state=6).comparisons(head, 60 * n, seed=12)
    # nor with fewer than 20 comparisons per scored item (collected-style heads)
    few, enough = (rank_column(near[:k * n], far[:k * n], head, n) for k in (10, 25))
    assert few.n_iter == enough.n_iter == 2
    assert len(few.grad_history) == 3 and len(enough.grad_history) == 2
    noiseless = rank_column(near0, far0, head, n)
    assert noiseless.n_iter > 2 and noiseless.agreement > 0.99
    assert len(noiseless.grad_history) == noiseless.n_iter + 1


def test_the_last_step_rule_skips_from_the_preconditioner_estimate_where_it_fits(monkeypatch):
    # After a first step, g . M^-1 g (M the block-Jacobi preconditioner) comes free of the direction's
    # products; where it describes the Hessian (the last direction's decrement within JACOBI_FIT of its
    # estimate) and promises little, the ranking stops without computing the direction: the same
    # scores as judging the direction itself, with fewer conjugate-gradient products.
    from loe_viz import ranking

    trusted_factor = ranking.SKIP_BY_ESTIMATE

    def both(X, head, m, oracle_seed):
        near, far = TripletOracle(X, random_state=oracle_seed).comparisons(head, m, seed=12)
        rule = rank_column(near, far, head, X.shape[0])
        monkeypatch.setattr(ranking, "SKIP_BY_ESTIMATE", np.inf)  # every direction computed and judged
        judged = rank_column(near, far, head, X.shape[0])
        monkeypatch.setattr(ranking, "SKIP_BY_ESTIMATE", trusted_factor)
        return rule, judged, (near, far)

    X = make_points("gaussian", 400, random_state=5)
    edge = int(np.argmax((X**2).sum(axis=1)))
    rule, judged, _ = both(X, edge, 60 * 400, 6)
    assert rule.n_iter == judged.n_iter == 2 and len(rule.grad_history) == 2
    np.testing.assert_array_equal(rule.scores, judged.scores)
    assert rule.cg_iters < judged.cg_iters
    # On clustered points the Hessian couples the items far more than its diagonal says: the estimate
    # is not trusted there, and trusting it would stop a step early.
    blobs = make_points("blobs", 300, random_state=3)
    rule, judged, (near, far) = both(blobs, 0, 30_000, 5)
    np.testing.assert_array_equal(rule.scores, judged.scores)
    assert rule.cg_iters == judged.cg_iters and rule.n_iter == 3
    monkeypatch.setattr(ranking, "JACOBI_FIT", np.inf)
    trusted = rank_column(near, far, 0, 300)
    assert trusted.n_iter == 2 and not np.array_equal(trusted.scores, rule.scores)
