"""The ordinal polish: its stress kernel against NumPy, and recovery from exact orders."""

import re
import warnings

import numpy as np
import pytest

import loe_viz as lv
from loe_viz import make_points, procrustes_error
from loe_viz.kernels import linalg
from loe_viz.refine import ordinal_refine


def ref_stress(Y, landmarks, target, weight):
    D = np.linalg.norm(Y[:, None, :] - Y[landmarks][None, :, :], axis=-1)
    return np.sum(weight * (D - target) ** 2)


def test_stress_and_gradient_match_numpy_and_finite_differences(rng):
    n, d, l = 15, 3, 4
    Y = rng.standard_normal((n, d))
    landmarks = np.array([2, 5, 9, 11])
    target = np.abs(rng.standard_normal((n, l))) + 0.5
    weight = (rng.random((n, l)) > 0.2).astype(float)
    weight[landmarks, np.arange(l)] = 0.0
    grad = np.empty_like(Y)
    f = linalg.landmark_stress(Y, landmarks, target, weight, grad)
    assert f == pytest.approx(ref_stress(Y, landmarks, target, weight), rel=1e-12)
    eps = 1e-6
    num = np.empty_like(Y)
    for a in range(n):
        for t in range(d):
            Yp, Ym = Y.copy(), Y.copy()
            Yp[a, t] += eps
            Ym[a, t] -= eps
            num[a, t] = (ref_stress(Yp, landmarks, target, weight) - ref_stress(Ym, landmarks, target, weight)) / (2 * eps)
    np.testing.assert_allclose(grad, num, rtol=1e-5, atol=1e-7)
    D = np.empty((n, l))
    linalg.landmark_distances(Y, landmarks, D)
    np.testing.assert_allclose(D, np.linalg.norm(Y[:, None, :] - Y[landmarks][None], axis=-1), rtol=1e-12)


def test_recovers_points_from_exact_orders_and_a_monotonically_distorted_start():
    X = make_points("uniform", 400, random_state=3)
    landmarks = np.array([0, 57, 123, 250, 311, 399])
    D = ((X[:, None, :] - X[landmarks][None]) ** 2).sum(-1)
    R = np.argsort(np.argsort(D, axis=0), axis=0).astype(float)  # ranks: only the order is known
    # a start distorted as rank-like BTL scores distort it: squash the radial structure
    start = X + 0.15 * np.sin(3 * X[:, ::-1])
    assert procrustes_error(X, start) > 0.01
    res = ordinal_refine(start, R, landmarks)
    assert res.stress[-1] < res.stress[0]
    assert procrustes_error(X, res.embedding) < 2e-3
    # rows stay in item order, scale is kept
    assert res.embedding.shape == X.shape
    size = lambda Z: np.sqrt(np.mean(np.sum((Z - Z.mean(0)) ** 2, axis=1)))  # noqa: E731
    assert size(res.embedding) == pytest.approx(size(start), rel=1e-9)


def test_unranked_items_do_not_count_for_their_landmark():
    X = make_points("uniform", 120, random_state=8)
    landmarks = np.array([1, 30, 60, 90, 110])
    D = ((X[:, None, :] - X[landmarks][None]) ** 2).sum(-1)
    R = D.copy()
    R[5, 0] = 1e9  # garbage score for an item landmark 0 never compared
    res = ordinal_refine(X + 0.01, R, landmarks, unranked=[np.array([5]), [], [], [], []])
    assert procrustes_error(X, res.embedding) < 1e-3


@pytest.mark.slow
def test_rank_start_and_polish_keep_the_better_of_two_starts():
    from loe_viz.refine import order_agreement, polish, rank_start

    X = make_points("uniform", 300, random_state=11)
    landmarks = np.array([3, 77, 150, 201, 260])
    D = ((X[:, None, :] - X[landmarks][None]) ** 2).sum(-1)
    R = np.argsort(np.argsort(D, axis=0), axis=0).astype(float)
    Y0 = rank_start(R, landmarks, 2)  # ranks^(2/d) estimate squared distances for uniform points
    assert procrustes_error(X, Y0) < 0.3  # a rough start: boundaries bend the distribution of distances
    assert order_agreement(X, R, landmarks) == pytest.approx(1.0)
    bad = np.random.default_rng(0).standard_normal(X.shape)  # a start that knows nothing
    res = polish(bad, R, landmarks, 2)
    # either a consistent fit (close to the truth) or nothing: never a degenerate layout
    if res is not None:
        assert res.start in ("lmds", "ranks") and res.order_agreement > 0.95
        assert procrustes_error(X, res.embedding) < 2e-3
    near = X + 0.1 * np.sin(3 * X[:, ::-1])
    res = polish(near, R, landmarks, 2)
    assert res is not None and res.order_agreement > order_agreement(near, R, landmarks)
    assert procrustes_error(X, res.embedding) < 2e-3
    assert polish(X, R, landmarks, 2) is None  # nothing beats the truth: LMDS is kept



@pytest.mark.filterwarnings("ignore::loe_viz.LOEWarning")
def test_polish_stops_once_the_order_agreement_stops_rising():
    """Sparse noiseless scores: the stress keeps falling long after the orders stop being fitted better."""
    import loe_viz as lv
    from loe_viz.refine import _agreement, _orders, _refine

    X = make_points("gaussian", 600, random_state=3)
    T = lv.TripletOracle(X, temperature=0.0, random_state=4).landmark_triplets(np.array([10, 200, 350, 420, 590]),
                                                                              1500)
    model = lv.LOE(n_components=2, refine=None, random_state=5).fit(T)
    ranking = model.stages_.ranking
    orders, weight = _orders(np.asarray(ranking.R), model.landmarks_, ranking.unranked)
    res = _refine(model.embedding_, model.landmarks_, orders, weight, max_iter=60, patience=5)
    assert not res.converged and res.n_iter < 60  # the stress alone would have run all 60
    assert res.order_agreement == pytest.approx(_agreement(res.embedding, model.landmarks_, orders))
    assert res.order_agreement > _agreement(model.embedding_, model.landmarks_, orders) + 0.1
    # the returned iterate is the best: no more outer iterations from the same start fit the orders better
    longer = _refine(model.embedding_, model.landmarks_, orders, weight, max_iter=res.n_iter + 10, patience=10**6)
    assert longer.order_agreement == pytest.approx(res.order_agreement)


@pytest.mark.filterwarnings("ignore::loe_viz.LOEWarning")
def test_give_up_abandons_only_a_polish_that_cannot_fit_the_orders():
    import os

    import loe_viz as lv
    from loe_viz.refine import HOPELESS_AGREEMENT, _orders, _refine, polish

    # crowd answers over many heads: each landmark's scores rest on a few noisy comparisons, and no
    # layout reproduces their order; the polish ends in None either way, the hopeless start after one
    # outer iteration instead of many
    data = lv.read_triplets(os.path.join(os.path.dirname(__file__), "..", "sample_data", "gaussian_2d_crowd.csv"))
    noisy = lv.LOE(n_landmarks=10, refine=None, random_state=0).fit(data.triplets, n_items=data.n_items)
    st = noisy.stages_
    orders, weight = _orders(np.asarray(st.ranking.R), noisy.landmarks_, st.ranking.unranked)
    quick = _refine(noisy.embedding_, noisy.landmarks_, orders, weight, give_up_below=HOPELESS_AGREEMENT)
    full = _refine(noisy.embedding_, noisy.landmarks_, orders, weight)
    assert quick.n_iter == 1 < full.n_iter and full.order_agreement < 0.95
    args = (st.lmds.embedding, st.ranking.R, noisy.landmarks_, 2)
    assert polish(*args, unranked=st.ranking.unranked, give_up=True) is None
    assert polish(*args, unranked=st.ranking.unranked) is None
    # noiseless answers: the polish that succeeds is the same with give_up
    X = make_points("gaussian", 300, random_state=1)
    spread = [X[:, 0].argmax(), X[:, 0].argmin(), X[:, 1].argmax(), X[:, 1].argmin(), (X ** 2).sum(1).argmin()]
    T = lv.TripletOracle(X, temperature=0.0, random_state=2).landmark_triplets(np.sort(spread), 4000)
    clean = lv.LOE(refine=None, random_state=3).fit(T, n_items=300)
    st = clean.stages_
    args = (st.lmds.embedding, st.ranking.R, clean.landmarks_, 2)
    a = polish(*args, unranked=st.ranking.unranked, give_up=True)
    b = polish(*args, unranked=st.ranking.unranked)
    assert a is not None and a.order_agreement > 0.95
    np.testing.assert_array_equal(a.embedding, b.embedding)
    assert procrustes_error(X, a.embedding) < procrustes_error(X, clean.embedding_) / 3  # 0.018 against 0.084


def test_auto_does_not_polish_sparse_rankings_that_only_look_noiseless_and_ordinal_runs_in_full(monkeypatch):
    # 40 triplets per head over 200 items: every ranking of the 100 busiest heads reproduces all its
    # comparisons (it looks noiseless), from 0.62 comparisons per ranked item, and no layout fits the
    # orders of such sparse scores. "auto" does not try (it used to stop each start after one outer
    # iteration, 1.4 s of a 1.6 s fit on 200 heads), "ordinal" runs them in full; both end with LMDS's
    # embedding, that of refine=None, and a warning. (On all 200 heads, the default since
    # n_landmarks="auto" takes up to 200, some rankings of the whole file miss a comparison.)
    import os

    import loe_viz as lv
    from loe_viz import refine

    data = lv.read_triplets(os.path.join(os.path.dirname(__file__), "..", "sample_data", "gaussian_2d_crowd.csv"))
    calls = []
    real = refine._refine

    def recording(*args, **kw):
        res = real(*args, **kw)
        calls.append(res.n_iter)
        return res

    monkeypatch.setattr(refine, "_refine", recording)
    sparse = (r"reproduce 100\.00% of their comparisons, but with 0\.62 comparison\(s\) per ranked item and landmark "
              r"they would for noisy answers too: the scores are poorly determined")
    fits = {}
    for mode, then in (("auto", "; more comparisons per landmark would help"), (None, "; more comparisons"),
                       ("ordinal", ", and the ordinal polish found no consistent fit")):
        calls.clear()
        with pytest.warns(lv.LOEWarning, match=sparse + re.escape(then)):
            fits[mode] = lv.LOE(refine=mode, n_landmarks=100, random_state=0).fit(data.triplets,
                                                                                 n_items=data.n_items)
        fits[f"{mode} iterations"] = list(calls)
    assert fits["auto iterations"] == [] and min(fits["ordinal iterations"]) > 1
    assert fits["auto"].stages_.refine is None and fits["ordinal"].stages_.refine is None
    np.testing.assert_array_equal(fits["auto"].embedding_, fits["ordinal"].embedding_)
    np.testing.assert_array_equal(fits["auto"].embedding_, fits[None].embedding_)


@pytest.mark.parametrize("kwargs, advised", [
    (dict(), False),  # n_landmarks="auto": the busiest heads, chosen by their counts
    (dict(n_landmarks=10), True),  # the busiest 10 heads; MaxMin would choose others
    (dict(n_landmarks=10, landmark_selection="maxmin"), False),  # MaxMin already
    (dict(landmarks=np.arange(10)), False),  # chosen by the caller
])
def test_a_failed_polish_advises_maxmin_only_where_it_would_choose_the_landmarks(kwargs, advised):
    """The advice 'try landmark_selection="maxmin"' was given to fits whose landmarks MaxMin could not change."""
    X = lv.make_points("gaussian", 40, d=2, random_state=0)
    T = lv.TripletOracle(X, temperature=0, random_state=1).uniform_triplets(3000)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lv.LOE(random_state=2, **kwargs).fit(T, n_items=40)
    failed = [str(w.message) for w in caught if "ordinal polish found no consistent fit" in str(w.message)]
    assert len(failed) == 1
    assert ("landmark_selection='maxmin'" in failed[0]) is advised
