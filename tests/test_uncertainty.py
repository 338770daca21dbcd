"""Per-item uncertainty of LOE: the score moments against exact references, and calibration."""

import re
import warnings

import numpy as np
import pytest
from scipy.stats import chi2, spearmanr

from loe_viz import LOE, LOEWarning, TripletOracle, make_points, total_budget
from loe_viz.kernels import uncertainty as kernels
from loe_viz.ranking import rank_column
from loe_viz.uncertainty import (
    ItemUncertainty,
    block_solution,
    coverage,
    ellipse_axes,
    item_covariance,
    score_variances,
)


def _exact_moments(near, far, w, head, n, lam):
    """Slow NumPy reference: exact inverse of the sum-zero-constrained Hessian and the Cox-Snell bias."""
    idx = np.array([a for a in range(n) if a != head])
    k = idx.size
    z = w[far] - w[near]
    p = 1.0 / (1.0 + np.exp(-z))  # probability that the far item wins
    h = p * (1.0 - p)
    X = np.zeros((near.size, n))
    X[np.arange(near.size), far] = 1.0
    X[np.arange(near.size), near] = -1.0
    X = X[:, idx]
    H = X.T @ (h[:, None] * X) + lam * np.eye(k)
    P = np.eye(k) - 1.0 / k
    Hinv = P @ np.linalg.pinv(P @ H @ P) @ P
    leverage = np.einsum("ti,ij,tj->t", X, Hinv, X)
    bias = Hinv @ (X.T @ (h * (p - 0.5) * leverage))
    return idx, Hinv, bias


@pytest.mark.parametrize("per", [2000, 6000])
def test_score_moments_match_exact_inverse(per):
    n, head = 200, 3
    X = make_points("gaussian", n, random_state=0)
    oracle = TripletOracle(X, temperature=1.0, random_state=11)
    near, far = oracle.comparisons(head, per, oracle.next_seeds(1)[0])
    col = rank_column(near, far, head, n, regularization=1e-3)
    idx, cov_exact, bias_exact = _exact_moments(near, far, col.scores, head, n, 1e-3)
    # A common error of all scores of a column is absorbed by that column's shift, so what
    # the embedding needs is the variance of score differences, which does not depend on
    # the sum-zero gauge (in that gauge the few nearly separated items, whose scores are
    # barely determined, pass part of their variance to every other item through the
    # mean). Compare var(w_a - w_b) with var_a + var_b over pairs never compared directly.
    compared = np.zeros((n, n), dtype=bool)
    compared[near, far] = compared[far, near] = True
    a, b = np.triu_indices(idx.size, 1)
    keep = ~compared[idx[a], idx[b]]
    a, b = a[keep], b[keep]
    exact = cov_exact[a, a] + cov_exact[b, b] - 2 * cov_exact[a, b]
    v = col.score_variance[idx]
    ratio = (v[a] + v[b]) / exact
    # Items take part in 2 * per / n = 20 or 60 comparisons on average: the Neumann series
    # with its second-order term is within 3% for the typical pair and 6% for 95% of them;
    # pairs with a nearly separated item (an extreme score, whose few informative
    # comparisons leave the series' higher-order terms large) are underestimated by up to
    # ~11% (11% of variance is 5.5% of an ellipse's axes).
    assert abs(np.median(ratio) - 1.0) < 0.03, np.median(ratio)
    assert np.quantile(np.abs(ratio - 1.0), 0.95) < 0.06
    assert np.all(np.abs(ratio - 1.0) < 0.12), (ratio.min(), ratio.max())
    assert col.score_variance[head] == 0.0 and col.score_bias[head] == 0.0
    # The bias uses the diagonal of H for H^-1: the same field in sign and order (its
    # magnitude within ~50%; it enters the uncertainty as a second-order term). A few nearly
    # separated items dominate any linear correlation, so compare ranks and signs.
    b = col.score_bias[idx]
    assert spearmanr(b, bias_exact)[0] > 0.9
    big = np.abs(bias_exact) > np.median(np.abs(bias_exact))
    assert np.mean(np.sign(b[big]) == np.sign(bias_exact[big])) > 0.95
    assert abs(b.sum()) < 1e-9  # sum-zero like the scores


def test_score_moments_kernel_on_a_complete_graph():
    # Complete graph, equal weights c, all scores 0: D = c (k - 1) for every item, and the
    # series gives 1/D + (k - 1) c^2 / D^3 less the constraint's 2 / (k D); for the
    # variance of a difference, 2 (that) agrees with the exact 2 / (c k) to O(1/k^2).
    # The bias is exactly zero.
    k = 30
    near, far = np.triu_indices(k)
    keep = near != far
    near, far = near[keep].astype(np.int64), far[keep].astype(np.int64)
    w = np.zeros(k)
    h = np.full(near.size, 0.25, dtype=np.float32)
    hdiag = np.full(k, 0.25 * (k - 1))
    var, bias = np.empty(k), np.empty(k)
    kernels.score_moments(near, far, w, h, hdiag, np.ones(k, dtype=np.bool_), var, bias)
    D = 0.25 * (k - 1)
    np.testing.assert_allclose(var, (1 - 2 / k) / D + (k - 1) * 0.25**2 / D**3, rtol=1e-6)
    assert abs(2 * var[0] / (2 / (0.25 * k)) - 1) < 2 / k**2
    np.testing.assert_allclose(bias, 0.0, atol=1e-15)


def _fit(n, c, seed, **kw):
    X = make_points("gaussian", n, random_state=100 + seed)  # ground truth
    oracle = TripletOracle(X, temperature=1.0, random_state=200 + seed)  # answers
    model = LOE(n_components=X.shape[1], random_state=300 + seed, **kw)  # landmarks: a third seed
    l = X.shape[1] + 3  # fit_oracle's default number of landmarks
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit_oracle(oracle, total_budget(n, c) // l)
    return X, model


def test_uncertainty_shapes_symmetry_positive_definite():
    X, model = _fit(300, 50, 1)
    C = model.uncertainty_
    n, d = model.embedding_.shape
    assert C.shape == (n, d, d)
    np.testing.assert_array_equal(C, C.transpose(0, 2, 1))
    assert np.linalg.eigvalsh(C).min() > 0  # landmarks included: their rows come from the block
    assert model.stages_.uncertainty.covariance is C  # computed once
    assert model.stages_.uncertainty.score_variance.shape == (n, model.landmarks_.size)


def test_uncertainty_three_dimensions():
    X = make_points("gaussian", 400, d=3, random_state=5)
    oracle = TripletOracle(X, temperature=1.0, random_state=6)
    model = LOE(n_components=3, n_landmarks=8, random_state=7).fit_oracle(oracle, 30_000)
    C = model.uncertainty_
    assert C.shape == (400, 3, 3)
    assert np.linalg.eigvalsh(C).min() > 0


def test_uncertainty_coverage_in_band():
    # n = 1000 items, c = 100, three fixed seeds pooled: 3000 positions. Were every
    # position independent, the binomial standard error of a 90% coverage would be
    # sqrt(0.9 * 0.1 / 3000) = 0.0055, and the band 0.85..0.95 is 9 of them wide on either
    # side. Positions of one fit share the landmark block's error, which makes the
    # per-fit coverage vary more (about +-0.03 between seeds in
    # benchmarks/bench_uncertainty.py), i.e. about +-0.017 for the mean of three fits: the
    # band is still three of those wide on either side of 0.90.
    inside = total = 0
    for seed in (1, 2, 3):
        X, model = _fit(1000, 100, seed)
        cov = coverage(X, model.embedding_, model.uncertainty_)
        inside += cov * X.shape[0]
        total += X.shape[0]
    assert 0.85 <= inside / total <= 0.95, inside / total


def test_without_the_block_and_gauge_terms_the_ellipses_are_smaller():
    X, model = _fit(500, 50, 2)
    st = model.stages_
    args = (st.W, st.D_landmarks, st.landmarks, st.lmds.embedding, st.uncertainty.score_variance, model.offset)
    full = item_covariance(*args)
    items = item_covariance(*args, block=False)
    no_gauge = item_covariance(*args, gauge=False)
    keep = np.ones(500, dtype=bool)
    keep[st.landmarks] = False
    tr = lambda C: np.trace(C[keep], axis1=1, axis2=2)  # noqa: E731
    assert np.all(tr(full) >= tr(items) - 1e-12)  # the block adds a PSD term
    assert tr(no_gauge).sum() > tr(full).sum()  # the similarity gauge removes part of it
    assert np.all(np.trace(items[st.landmarks], axis1=1, axis2=2) == 0)


def test_refined_fit_reports_no_uncertainty_and_why():
    X = make_points("gaussian", 300, random_state=0)
    oracle = TripletOracle(X, temperature=0.0, random_state=1)
    model = LOE(n_components=2, n_landmarks=10, random_state=2, refine="ordinal").fit_oracle(oracle, 20_000)
    if model.stages_.refine is None:
        pytest.skip("the polish did not fit the orders here")
    assert model.uncertainty_ is None
    assert "ordinal polish" in model.stages_.uncertainty.reason


def test_block_solution_reproduces_landmark_mds():
    X, model = _fit(300, 50, 4)
    st = model.stages_
    b = block_solution(st.W, 2, model.offset)
    np.testing.assert_allclose(b.landmark_coords, st.lmds.embedding[st.landmarks], atol=1e-8)
    np.testing.assert_allclose(b.s, st.shifts.s)


def test_ellipse_axes_of_a_known_covariance():
    theta = 0.3
    R = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
    C = R @ np.diag([4.0, 1.0]) @ R.T
    a, b, angle = ellipse_axes(C[None], level=0.9)
    q = chi2.ppf(0.9, 2)
    np.testing.assert_allclose([a[0], b[0]], [np.sqrt(4 * q), np.sqrt(q)])
    assert np.isclose(np.tan(angle[0]), np.tan(theta))
    with pytest.raises(ValueError, match="ellipses need 2 x 2 covariances"):
        ellipse_axes(np.eye(3)[None])
    with pytest.raises(ValueError, match=r"level must be in \(0, 1\)"):
        ellipse_axes(C[None], level=1.5)


def test_coverage_is_exact_for_gaussian_errors_in_a_rotated_scaled_frame():
    rng = np.random.default_rng(0)
    n = 4000
    X = rng.normal(size=(n, 2))
    C = np.array([[0.02, 0.01], [0.01, 0.03]])
    err = rng.multivariate_normal([0, 0], C, size=n)
    R = np.array([[0.0, -1.0], [1.0, 0.0]])
    Z = 2.0 * (X + err) @ R + 5.0  # the embedding's frame: rotated, scaled, moved
    covZ = np.broadcast_to(4.0 * R.T @ C @ R, (n, 2, 2))
    assert abs(coverage(X, Z, covZ) - 0.9) < 0.015  # binomial SE 0.0047
    with pytest.raises(ValueError, match="shapes disagree"):
        coverage(X, Z, covZ[:10])


def test_score_variances_stacks_columns():
    X, model = _fit(200, 50, 3)
    V = score_variances(model.stages_.ranking.columns, 200)
    assert V.shape == (200, model.landmarks_.size)
    assert np.all(V[model.landmarks_, np.arange(model.landmarks_.size)] == 0)
    assert isinstance(model.stages_.uncertainty, ItemUncertainty)
    assert "not yet computed" in repr(_fit(200, 50, 3)[1].stages_.uncertainty)


def test_explorer_ellipse_plot_and_summary():
    pytest.importorskip("holoviews")
    from loe_viz.app.colors import principal_plane
    from loe_viz.app.uncertainty_plot import aligned_covariances, ellipse_outlines, ellipse_plot, ellipse_summary

    X, model = _fit(300, 50, 1)
    Za, C = aligned_covariances(X, model.embedding_, model.uncertainty_)
    assert Za.shape == (300, 2) and C.shape == (300, 2, 2)
    summ = ellipse_summary(X, model.embedding_, model.uncertainty_)
    assert summ["coverage"] == pytest.approx(coverage(X, model.embedding_, model.uncertainty_))
    # an outline's points are at Mahalanobis distance chi2_2(0.9) from its centre
    out = ellipse_outlines(Za[:3], C[:3], 0.9)
    diff = out[0] - Za[0]
    m2 = np.einsum("ti,ij,tj->t", diff, np.linalg.inv(C[0]), diff)
    np.testing.assert_allclose(m2, chi2.ppf(0.9, 2), rtol=1e-9)
    mean, basis = principal_plane(X)
    plot = ellipse_plot(X, model.embedding_, model.uncertainty_, mean, basis, landmarks=model.landmarks_,
                        max_items=50)
    paths = plot.get(0)
    assert len(paths.data) >= 50  # the subset plus the landmarks
    # the title says that the plot shows a subset (the share inside, said above it, counts every item), and the
    # axes of 3-D points name the principal plane drawn
    k = len(paths.data)
    assert plot.opts.get().kwargs["title"] == f"90 % ellipses (blue), truth × (showing {k:,} of 300)"
    assert (paths.kdims[0].label, paths.kdims[1].label) == ("x₁", "x₂")
    X3 = np.column_stack([X, 0.1 * X[:, 0]])
    plot3 = ellipse_plot(X3, model.embedding_, model.uncertainty_, *principal_plane(X3), max_items=400)
    assert plot3.opts.get().kwargs["title"] == "90 % ellipses (blue), truth ×"  # every item shown
    assert [d.label for d in plot3.get(0).kdims] == ["principal axis 1 of 3", "principal axis 2 of 3"]


def test_many_landmarks_estimate_the_block_term_from_a_bounded_number_of_derivatives(monkeypatch):
    """Each block entry took its own derivative: 2 l (l - 1) block solutions, 25 minutes at l = 200.

    Past 2 * block_probes entries the block term comes from ``block_probes`` random sign
    combinations of the entries: a bounded number of block solutions, and (the estimate is
    unbiased, its relative error about sqrt(2 / probes) per variance) item covariances close
    to the per-entry ones.
    """
    import loe_viz.uncertainty as unc

    X = make_points("gaussian", 120, random_state=5)
    oracle = TripletOracle(X, temperature=1.0, random_state=6)
    model = LOE(n_components=2, n_landmarks=16, random_state=7).fit_oracle(oracle, total_budget(120, 50))
    st = model.stages_
    args = (st.W, st.D_landmarks, st.landmarks, st.lmds.embedding, st.uncertainty.score_variance, model.offset)
    kw = dict(biases=st.uncertainty.score_bias)
    exact = item_covariance(*args, **kw)  # 240 entries <= 2 * 256: one derivative each
    calls = []
    solve = unc.block_solution
    monkeypatch.setattr(unc, "block_solution", lambda *a, **k: calls.append(1) or solve(*a, **k))
    probed = item_covariance(*args, **kw, block_probes=64)  # 240 entries > 128: 64 probes
    assert len(calls) == 1 + 2 * 64 + 2  # the base, two per probe, two for the bias
    again = item_covariance(*args, **kw, block_probes=64)
    assert np.array_equal(probed, again)  # a fixed seed: the same covariances every time
    ratio = np.trace(probed, axis1=1, axis2=2) / np.trace(exact, axis1=1, axis2=2)
    assert 0.97 <= np.median(ratio) <= 1.03 and 0.7 <= ratio.min() and ratio.max() <= 1.3, ratio
    assert coverage(X, st.lmds.embedding, probed) == pytest.approx(coverage(X, st.lmds.embedding, exact), abs=0.03)


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "many"])
def test_block_probes_must_be_a_positive_whole_number(bad):
    X, model = _fit(200, 50, 1)
    st = model.stages_
    with pytest.raises(ValueError, match=rf"^block_probes must be a positive whole number, got {bad!r}$"):
        item_covariance(st.W, st.D_landmarks, st.landmarks, st.lmds.embedding, st.uncertainty.score_variance,
                        block_probes=bad)


def test_uncertainty_warns_where_too_few_comparisons_per_item_leave_it_uncalibrated():
    """With 2 comparisons per item and landmark the regions covered 62-99 % of the truth: say so."""
    X = make_points("gaussian", 300, random_state=10)
    oracle = TripletOracle(X, temperature=1.0, random_state=20)
    sparse = LOE(n_components=2, n_landmarks=5, random_state=30).fit_oracle(oracle, 2 * 300)
    with pytest.warns(LOEWarning, match=r"^uncertainty_ rests on 2\.\d+ comparisons per item and landmark; below 10 "
                      r"its 90 % regions are not calibrated \(on simulated answers with 2 to 5 they covered 62 to 99 % "
                      r"of the true positions\)$"):
        assert sparse.uncertainty_.shape == (300, 2, 2)
    dense = LOE(n_components=2, n_landmarks=5, random_state=30).fit_oracle(oracle, 40 * 300)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert dense.uncertainty_.shape == (300, 2, 2)


def test_explorer_says_when_too_few_comparisons_leave_the_ellipses_uncalibrated():
    pytest.importorskip("panel")
    from loe_viz.app.colors import principal_plane
    from loe_viz.app.uncertainty_plot import uncertainty_panes

    X = make_points("gaussian", 300, random_state=10)
    oracle = TripletOracle(X, temperature=1.0, random_state=20)
    mean, basis = principal_plane(X)
    for per_item, said in ((2, True), (40, False)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = LOE(n_components=2, n_landmarks=5, random_state=30).fit_oracle(oracle, per_item * 300)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the page says it; no warning reaches the server's log
            note = uncertainty_panes(model, X, mean, basis)[0].object
        assert ("**Too few comparisons for calibrated ellipses:** each ranking holds 2." in note) is said, note
        assert ("below 10 the variances of a few barely compared items dominate" in note) is said


def test_rankings_that_barely_tell_the_items_apart_are_warned_about_and_leave_the_regions_uncalibrated():
    """Noisy answers on a rich budget (69 comparisons per item and landmark): LOE returned an embedding unrelated to the
    truth without a word, and uncertainty_ was far too confident (90 % regions covering 56 % at temperature 10 and
    0 % at coin flips). Answers near coin flips are now said; temperature 10 is not told apart from fair fits of
    points on a line (see uncertainty.SIGNAL_MIN)."""
    X = make_points("gaussian", 1000, random_state=5)
    budget = total_budget(1000, 50) // 5
    for temperature, noisy in ((1.0, False), (10.0, False), (30.0, True), (1e6, True)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = LOE(random_state=7).fit_oracle(TripletOracle(X, temperature, random_state=6), budget)
        said = [str(w.message) for w in caught if "barely tell the items apart" in str(w.message)]
        unc = model.stages_.uncertainty
        assert bool(said) is noisy and unc.calibrated is not noisy, (temperature, said)
        covered = coverage(X, model.embedding_, unc.covariance)
        assert covered < 0.85 if noisy else temperature == 10.0 or covered >= 0.85, (temperature, covered)
        assert covered < 0.3 if noisy else True  # the warning is deserved (at 10 the regions are too small, unsaid)
        if noisy:
            assert re.fullmatch(
                r"the rankings barely tell the items apart: their score variance beyond noise, summed over the 5 "
                r"landmarks, is -?\d\.\d+ \(about 0 for coin flips, 1\.5 or more where LOE's embedding is more than "
                r"noise\), though they hold 69\.1 comparisons per item: the answers are close to coin flips, so the "
                r"embedding is mostly noise and uncertainty_ is not calibrated; more comparisons per landmark, or "
                r"answers less noisy, would help", said[0])
            with pytest.warns(LOEWarning, match=r"^uncertainty_ rests on rankings that barely tell the items apart"):
                model.uncertainty_


def test_a_penalty_that_outweighs_the_comparisons_is_named_and_one_beyond_1e6_refused():
    X = make_points("gaussian", 1000, random_state=5)
    oracle = TripletOracle(X, 1.0, random_state=6)
    with pytest.warns(LOEWarning, match=r"though they hold 200 comparisons per item: the penalty regularization=1e\+06 "
                                        r"outweighs them, so the embedding is mostly noise .*; a smaller regularization "
                                        r"would help$"):
        LOE(regularization=1e6, random_state=1).fit_oracle(oracle, 200_000)
    with pytest.raises(ValueError, match=r"^regularization must be at most 1e\+06 \(a larger penalty pulls every "
                                         r"ranking score to 0 whatever the answers, and overflows the ranking's Newton "
                                         r"solver\), got 1e\+100$"):
        LOE(regularization=1e100).fit_oracle(oracle, 200_000)


def test_rankings_stopped_before_converging_are_warned_about():
    X = make_points("gaussian", 1000, random_state=5)
    with pytest.warns(LOEWarning, match=r"^4 of the 5 landmark rankings stopped without converging \(after 1 Newton "
                                        r"iteration\(s\), max_iter=1; largest gradient norm \d"):
        LOE(max_iter=1, random_state=1).fit_oracle(TripletOracle(X, 1.0, random_state=6), 200_000)


def test_explorer_says_when_noisy_answers_leave_the_ellipses_uncalibrated():
    pytest.importorskip("panel")
    from loe_viz.app.colors import principal_plane
    from loe_viz.app.uncertainty_plot import uncertainty_panes

    X = make_points("gaussian", 1000, random_state=5)
    mean, basis = principal_plane(X)
    for temperature, said in ((30.0, True), (1.0, False)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = LOE(random_state=7).fit_oracle(TripletOracle(X, temperature, random_state=6),
                                                   total_budget(1000, 50) // 5)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the page says it; no warning reaches the server's log
            note = uncertainty_panes(model, X, mean, basis)[0].object
        assert ("**Answers too noisy for calibrated ellipses:** the rankings barely tell the items apart" in note) is said
        assert ("the ellipses are far too small" in note) is said
        assert "Too few comparisons" not in note


def test_uncertainty_does_not_follow_edits_of_embedding_made_before_it_is_read():
    X = make_points("gaussian", 500, random_state=5)
    fits = [LOE(random_state=0).fit_oracle(TripletOracle(X, random_state=1), 30_000) for _ in range(2)]
    Z = fits[1].embedding_
    Z -= Z.mean(axis=0)
    Z += 5.0
    Z *= 10.0
    np.testing.assert_array_equal(fits[1].uncertainty_, fits[0].uncertainty_)


def test_many_weak_rankings_that_place_the_items_well_are_not_called_noise():
    """A per-ranking rule called a good fit on stored triplets 'rough' (200 landmarks of 17 comparisons per item
    each, median separation 3.0, Procrustes 0.006): LOE pools its rankings, and so does the rule now."""
    X = make_points("gaussian", 300, random_state=3)
    T = TripletOracle(X, 1.0, random_state=4).uniform_triplets(1_000_000)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = LOE(random_state=5).fit(T, n_items=300)
    assert not [w for w in caught if "barely tell" in str(w.message)]
    assert model.stages_.uncertainty.calibrated and len(model.landmarks_) > 50
    assert 0.85 <= coverage(X, model.embedding_, model.uncertainty_) <= 0.97


def test_a_perturbed_block_started_from_the_unperturbed_projection_is_solved_as_from_scratch():
    """The block derivatives project each perturbed block from the unperturbed one's projection, to a looser
    tolerance (``DERIVATIVE_TOL``): the shifts, means and eigenpairs they difference are those of a projection from
    scratch, far closer than the perturbation moves them."""
    _, model = _fit(1000, 50, 3, n_landmarks=20)
    W = model.stages_.uncertainty.W
    base = block_solution(W, 2)
    D = np.random.default_rng(7).choice((-1.0, 1.0), size=W.shape)
    np.fill_diagonal(D, 0.0)
    W1 = W + 1e-4 * np.abs(W).max() * D
    warm, cold = block_solution(W1, 2, reference=base), block_solution(W1, 2)
    assert warm.edm.n_iter < cold.edm.n_iter
    for name in ("s", "mu", "Q", "root"):
        a, b, b0 = getattr(warm, name), getattr(cold, name), getattr(base, name)
        moved = np.abs(b - b0).max()
        assert moved > 0 and np.abs(a - b).max() <= 1e-3 * moved, name
