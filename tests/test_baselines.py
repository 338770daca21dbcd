"""The ordinal-embedding baselines (STE, t-STE, SOE, GNMDS, CKL) and LOE-STE."""

import os
import re
import time

import numpy as np
import pytest

from loe_viz import TripletOracle, make_points
from loe_viz.baselines import CKL, GNMDS, SOE, STE, STOP_REASONS, TSTE, FitHistory, TripletEmbedding
from loe_viz.kernels import losses as L
from loe_viz.loe import LOE
from loe_viz.loeste import LOESTE

try:
    from loe_viz.metrics import procrustes_error
except ImportError:  # pragma: no cover
    from scipy.spatial import procrustes

    def procrustes_error(X, Z):
        return procrustes(X, Z)[2]


ESTIMATORS = [STE, TSTE, SOE, GNMDS, CKL]


def noiseless_triplets(X, m, seed):
    """``m`` uniformly random list-order triplets answered without noise (plain NumPy)."""
    rng = np.random.default_rng(seed)
    n = X.shape[0]
    i = rng.integers(0, n, m)
    j = (i + rng.integers(1, n, m)) % n
    k = (i + rng.integers(1, n - 1, m)) % n
    k = np.where(k == j, (k + 1) % n, k)
    k = np.where(k == i, (k + 1) % n, k)
    k = np.where(k == j, (k + 1) % n, k)
    dij = ((X[i] - X[j]) ** 2).sum(1)
    dik = ((X[i] - X[k]) ** 2).sum(1)
    near = np.where(dij < dik, j, k)
    far = np.where(dij < dik, k, j)
    T = np.stack([i, near, far], axis=1).astype(np.int32)
    assert ((T[:, 0] != T[:, 1]) & (T[:, 0] != T[:, 2]) & (T[:, 1] != T[:, 2])).all()
    return T


@pytest.fixture(scope="module")
def truth():
    # ground truth from seed 0; triplets from seed 1; initialisations from seed 2
    X = np.random.default_rng(0).normal(scale=0.5, size=(40, 2))
    return X, noiseless_triplets(X, 3000, seed=1)


def triplet_agreement(Z, T):
    dij = ((Z[T[:, 0]] - Z[T[:, 1]]) ** 2).sum(1)
    dik = ((Z[T[:, 0]] - Z[T[:, 2]]) ** 2).sum(1)
    return float(np.mean(dij < dik))


# ------------------------------------------------------------------ recovery
@pytest.mark.parametrize("Est", ESTIMATORS)
def test_recovers_noiseless_configuration(Est, truth):
    X, T = truth
    est = Est(n_components=2, random_state=2)
    assert est.fit(T) is est
    Z = est.embedding_
    assert Z.shape == (40, 2) and Z.dtype == np.float64
    assert procrustes_error(X, Z) < 0.05
    assert est.stop_reason_ in STOP_REASONS
    assert est.n_iter_ >= 1 and est.n_evals_ >= est.n_iter_
    h = est.history_
    assert isinstance(h, FitHistory) and len(h) == est.n_iter_ + 1
    np.testing.assert_array_equal(h.iteration, np.arange(est.n_iter_ + 1))
    assert np.all(np.diff(h.elapsed) >= 0)
    assert np.all(np.diff(h.loss) <= 1e-12)  # L-BFGS iterates never go uphill
    assert h.loss[-1] == pytest.approx(est.loss_)


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_same_seed_as_the_data_does_not_start_at_the_answer(Est):
    """``make_points("gaussian", random_state=s)`` draws ``default_rng(s).standard_normal``; a random start
    drawn from the same stream would be the truth up to scale (Procrustes 0.12 after one STE iteration
    before the start had a stream of its own)."""
    from loe_viz import TripletOracle, make_points

    X = make_points("gaussian", 300, random_state=0)
    T = TripletOracle(X, random_state=1).uniform_triplets(20_000)
    for seed in (0, 1):
        assert procrustes_error(X, Est(random_state=seed, max_iter=1).fit(T).embedding_) > 0.5


def test_fit_transform_and_reproducibility(truth):
    X, T = truth
    Z1 = STE(random_state=2).fit_transform(T)
    Z2 = STE(random_state=2).fit(T).embedding_
    np.testing.assert_array_equal(Z1, Z2)
    Z3 = STE(random_state=3).fit(T).embedding_
    assert not np.array_equal(Z1, Z3)


def test_objective_matches_kernel(truth):
    X, T = truth
    for Est, kind, param, reg in [
        (STE, "ste", 0.0, 0.0), (TSTE, "tste", 1.0, 0.0), (SOE, "soe", 0.1, 0.0),
        (GNMDS, "gnmds", 0.0, 0.0), (CKL, "ckl", 0.1, 0.0),
    ]:
        est = Est(random_state=2, max_iter=3).fit(T)
        f, g = L.triplet_loss_grad(est.embedding_, T, L.KINDS[kind], param, reg, 1)
        assert est.loss_ == pytest.approx(f, rel=1e-12)
        f2, g2 = est.loss_and_grad(est.embedding_, T)
        assert f2 == pytest.approx(f, rel=1e-12)
        np.testing.assert_allclose(g2, g, rtol=1e-12)


def test_method_parameters_reach_the_kernel(truth):
    X, T = truth
    cases = [
        (TSTE(alpha=3.0), L.KIND_TSTE, 3.0, 0.0),
        (TSTE(n_components=4), L.KIND_TSTE, 3.0, 0.0),  # default alpha = d - 1
        (SOE(margin=0.5), L.KIND_SOE, 0.5, 0.0),
        (GNMDS(regularization=0.2), L.KIND_GNMDS, 0.0, 0.2),
        (CKL(mu=0.3), L.KIND_CKL, 0.3, 0.0),
    ]
    for est, kind, param, reg in cases:
        Zd = np.random.default_rng(5).normal(size=(40, est.n_components))
        f, _ = est.loss_and_grad(Zd, T)
        assert f == pytest.approx(L.triplet_loss_grad(Zd, T, kind, param, reg, 1)[0], rel=1e-12)


def test_init_is_used(truth):
    X, T = truth
    init = X + np.random.default_rng(7).normal(scale=1e-3, size=X.shape)
    est = STE(max_iter=1).fit(T, init=init)
    f0, _ = est.loss_and_grad(init, T)
    assert est.history_.loss[0] == pytest.approx(f0, rel=1e-12)
    assert procrustes_error(X, est.embedding_) < 0.01  # one step from the truth stays near it
    # the caller's array is not modified
    assert np.array_equal(init, X + np.random.default_rng(7).normal(scale=1e-3, size=X.shape))


def test_items_without_triplets_keep_their_start(truth):
    X, T = truth
    init = np.random.default_rng(8).normal(size=(45, 2))
    msg = (r"^5 of the 45 items appear in no triplet \(e\.g\. \[40, 41, 42, 43, 44\]\): they stay at their starting "
           r"position, which says nothing about them; leave them out of n_items, or collect triplets that name them$")
    with pytest.warns(UserWarning, match=msg) as caught:
        est = STE(max_iter=5).fit(T, n_items=45, init=init)
    assert [w.filename for w in caught] == [__file__]  # said at the caller's line
    np.testing.assert_array_equal(est.embedding_[40:], init[40:])
    assert est.n_items_ == 45


def test_parallel_kernel_gives_the_same_fit(truth):
    X, T = truth
    Z1 = STE(random_state=2, max_iter=20).fit(T).embedding_
    Z2 = STE(random_state=2, max_iter=20, n_jobs=2).fit(T).embedding_
    np.testing.assert_allclose(Z2, Z1, rtol=1e-6, atol=1e-8)


def test_params_api():
    est = SOE(margin=0.2, max_iter=50)
    assert est.get_params()["margin"] == 0.2
    assert est.set_params(margin=0.3) is est and est.margin == 0.3
    assert repr(est) == "SOE(max_iter=50, margin=0.3)"
    with pytest.raises(ValueError, match="^alpha is not a parameter of SOE"):
        est.set_params(alpha=1.0)
    assert isinstance(est, TripletEmbedding)


# ----------------------------------------------------------- stopping early
def test_callback_true_stops_after_that_iteration(truth):
    X, T = truth
    seen = []

    def cb(it, Z):
        seen.append((it, Z))
        return it == 3

    est = STE(random_state=2, callback=cb).fit(T)
    assert [s[0] for s in seen] == [1, 2, 3]
    assert est.n_iter_ == 3
    assert est.stop_reason_ == "callback"
    np.testing.assert_array_equal(est.embedding_, seen[-1][1])
    assert len(est.history_) == 4
    # the callback gets copies: keeping them is safe
    assert not np.array_equal(seen[0][1], seen[2][1])


def test_callback_none_or_false_does_not_stop(truth):
    X, T = truth
    calls = []
    est = STE(random_state=2, callback=lambda it, Z: calls.append(it)).fit(T)
    assert est.stop_reason_ != "callback"
    assert calls == list(range(1, est.n_iter_ + 1))


def test_time_budget_zero_stops_after_one_iteration(truth):
    X, T = truth
    est = GNMDS(random_state=2, time_budget=0.0).fit(T)
    assert est.stop_reason_ == "time_budget"
    assert est.n_iter_ == 1


def test_time_budget_stops_a_long_run(truth):
    X, T = truth
    budget = 0.3
    t0 = time.perf_counter()
    est = STE(random_state=2, max_iter=100_000, tol=0.0, time_budget=budget,
              callback=lambda it, Z: time.sleep(0.02)).fit(T)
    wall = time.perf_counter() - t0
    assert est.stop_reason_ == "time_budget"
    assert budget <= wall < budget + 2.0  # generous: the test machine may be busy
    assert 1 <= est.n_iter_ < 100_000


def test_a_long_pass_hears_progress_and_the_time_limit_between_blocks(truth, monkeypatch):
    """Over more than EVAL_BLOCK triplets, progress is called with unchanged counts inside a pass
    (a cancel raised there ends the fit before the pass does) and the time limit is checked there."""
    from loe_viz.kernels import losses

    X, T = truth  # 3,000 triplets
    monkeypatch.setattr(losses, "EVAL_BLOCK", 500)
    calls = []
    est = STE(random_state=2, max_iter=3, tol=0.0).fit(T, progress=lambda *a: calls.append(a))
    iterations = [c for c in calls if c[1] > 0]
    assert [c[1] for c in iterations][-1] == est.n_iter_ == 3
    # five heartbeats per pass (six blocks); every evaluation before the first iteration ends has them
    assert calls[:5] == [("iteration", 0, 3)] * 5
    assert len(calls) >= 5 * est.n_evals_

    class Cancelled(Exception):
        pass

    def cancel(stage, done, total):
        calls.append(done)
        if len(calls) == 2:
            raise Cancelled

    calls.clear()
    with pytest.raises(Cancelled):
        STE(random_state=2).fit(T, progress=cancel)
    assert calls == [0, 0]  # stopped inside the first pass

    def slow(stage, done, total):
        time.sleep(0.01)

    t0 = time.perf_counter()
    est = STE(random_state=2, max_iter=100_000, tol=0.0, time_budget=0.2).fit(T, progress=slow)
    assert est.stop_reason_ == "time_budget" and est.n_iter_ >= 1
    assert time.perf_counter() - t0 < 2.0  # generous: the machine may be busy


def test_max_iter(truth):
    X, T = truth
    est = TSTE(random_state=2, max_iter=4, tol=0.0).fit(T)
    assert est.n_iter_ == 4
    assert est.stop_reason_ == "max_iter"


# ------------------------------------------------------------ a start next to the saddle
@pytest.mark.parametrize("Est", ESTIMATORS)
def test_a_small_init_scale_fits_as_well_as_the_default(Est, truth):
    """init_scale=1e-4 (STE, t-STE, GNMDS) or 1e-6 (CKL, SOE) stopped after one iteration at chance accuracy,
    'converged': every loss has a saddle with all items at one point and is flat next to it."""
    X, T = truth
    default = triplet_agreement(Est(random_state=2).fit(T).embedding_, T)
    for scale in (1e-4, 1e-6):
        est = Est(random_state=2, init_scale=scale).fit(T)
        assert est.stop_reason_ == "converged", scale
        assert triplet_agreement(est.embedding_, T) >= default - 0.01, scale
        assert procrustes_error(X, est.embedding_) < 0.05, scale
        h = est.history_  # one trace across the fit's two L-BFGS-B runs
        np.testing.assert_array_equal(h.iteration, np.arange(est.n_iter_ + 1))
        assert np.all(np.diff(h.loss) <= 1e-12) and h.loss[-1] == pytest.approx(est.loss_)


def test_the_reported_example_of_a_small_start():
    X = make_points("gaussian", 300, d=2, random_state=0)
    T = TripletOracle(X, temperature=0.0, random_state=1).uniform_triplets(20_000)
    for Est in (STE, TSTE, CKL, GNMDS):
        est = Est(random_state=2, init_scale=1e-4).fit(T)
        assert est.stop_reason_ == "converged" and est.n_iter_ > 20, Est.__name__
        assert triplet_agreement(est.embedding_, T) > 0.95, Est.__name__  # was 0.525


SADDLE_MESSAGE = (r"^no progress next to the collapsed embedding \(every item at one point, where the loss is "
                  r"stationary\): the objective is [+-][0-9.e+-]+ from its {} \(CONVERGENCE: .*\); {}$")


@pytest.mark.parametrize("Est, collapsed", [(STE, "0.693147"), (TSTE, "0.693147"), (CKL, "0.693147"),
                                            (GNMDS, "1"), (SOE, "0.01")])
def test_a_start_the_objective_cannot_tell_from_the_saddle_is_never_called_converged(Est, collapsed, truth):
    X, T = truth
    refused = 0
    for seed in range(4):  # at 1e-12 some starts still get away (the first step is a unit step), some cannot
        est = Est(random_state=seed, init_scale=1e-12).fit(T)
        if est.stop_reason_ == "converged":
            assert procrustes_error(X, est.embedding_) < 0.05
        else:
            refused += 1
            assert est.stop_reason_ == "line_search"
            assert re.match(SADDLE_MESSAGE.format(collapsed, r"start farther from it \(a larger init_scale\)"),
                            est.optimizer_message_), est.optimizer_message_
            assert est.loss_ == pytest.approx(float(collapsed), rel=1e-6)
    assert refused >= (0 if Est is SOE else 1)


def test_with_a_penalty_the_saddle_message_allows_that_it_is_the_optimum(truth):
    X, T = truth
    est = GNMDS(random_state=2, init_scale=1e-4, regularization=0.1).fit(T)
    assert est.stop_reason_ == "line_search"
    assert re.match(SADDLE_MESSAGE.format("1", r"with regularization=0\.1 it can be the optimum; if not, start "
                                               r"farther from it \(a larger init_scale\)"), est.optimizer_message_)
    small = GNMDS(random_state=2, init_scale=1e-4, regularization=1e-4).fit(T)  # a saddle still: left
    assert small.stop_reason_ == "converged" and procrustes_error(X, small.embedding_) < 0.05
    strong = GNMDS(random_state=2, regularization=0.1).fit(T)  # from the default start: the collapse is the optimum
    assert strong.stop_reason_ == "converged" and strong.loss_ == pytest.approx(1.0, abs=1e-6)


def test_a_start_whose_objective_equals_the_saddles_by_cancellation_is_fitted_as_before(monkeypatch):
    """At n = 1000 the default start's objective was within tol=1e-4 of log 2 (-1.1e-5) at a distance from
    the saddle no fit has trouble with: one L-BFGS-B run with the tol test, as before the saddle was handled."""
    import loe_viz.baselines as B

    X = make_points("gaussian", 1000, d=2, random_state=0)
    T = TripletOracle(X, temperature=0.0, random_state=1).uniform_triplets(50_000)
    est = STE(random_state=1, tol=1e-4)
    f0, _ = est.loss_and_grad(est._validated().rng.normal(scale=0.1, size=(1000, 2)), T)
    assert abs(f0 - np.log(2)) < 1e-4  # the case in point
    runs = []
    minimize = B.minimize
    monkeypatch.setattr(B, "minimize", lambda *a, **k: runs.append(k["options"]["ftol"]) or minimize(*a, **k))
    assert est.fit(T).stop_reason_ == "converged" and runs == [1e-4]
    runs.clear()
    STE(random_state=1, tol=1e-4, init_scale=1e-4).fit(T)
    assert runs[0] == 0.0 and runs[-1] == 1e-4  # a small start: the tol test off, then on


@pytest.mark.parametrize("scale", [0.1, 1e-4])
def test_the_start_is_evaluated_once(scale, truth, monkeypatch):
    """The fit looks at the start's objective before it begins; scipy's first call reuses that pass."""
    X, T = truth
    passes = []
    kernel = L.triplet_loss_grad
    monkeypatch.setattr(L, "triplet_loss_grad", lambda *a, **k: passes.append(1) or kernel(*a, **k))
    est = STE(random_state=2, init_scale=scale).fit(T)
    assert len(passes) == est.n_evals_ and est.stop_reason_ == "converged"


# ------------------------------------------------------------- validation
BAD_ARGS = [
    (STE, dict(n_components=0), "n_components must be >= 1"),
    (STE, dict(n_components=1.5), "n_components must be an integer"),
    (STE, dict(n_components=40), r"^n_components=40 is more than the data allow: 40 items span at most 39 "
                                 r"dimensions; use n_components <= 39$"),
    (STE, dict(max_iter=0), "max_iter must be >= 1"),
    (STE, dict(tol=-1.0), "tol must be >= 0"),
    (STE, dict(tol=float("nan")), "tol must be finite"),
    (STE, dict(time_budget=-1.0), "time_budget must be >= 0"),
    (STE, dict(time_budget="soon"), "time_budget must be a real number"),
    (STE, dict(callback=5), "callback must be callable"),
    (STE, dict(random_state=-3), "random_state must be a non-negative integer"),
    (STE, dict(verbose="yes"), "verbose must be a bool"),
    (STE, dict(init_scale=0.0), "init_scale must be > 0"),
    (STE, dict(n_jobs=0), "n_jobs must be a positive number"),
    (STE, dict(n_jobs=-2), "n_jobs must be >= -1"),
    (TSTE, dict(alpha=0.0), "alpha must be > 0"),
    (TSTE, dict(alpha=float("inf")), "alpha must be finite"),
    (SOE, dict(margin=0.0), "margin must be > 0"),
    (GNMDS, dict(regularization=-0.1), "regularization must be >= 0"),
    (CKL, dict(mu=-1.0), "mu must be >= 0"),
]


@pytest.mark.parametrize("Est, kwargs, message", BAD_ARGS)
def test_invalid_constructor_argument(Est, kwargs, message, truth):
    X, T = truth
    with pytest.raises(ValueError, match="^" + message):
        Est(**kwargs).fit(T)


def test_invalid_init_shape(truth):
    X, T = truth
    with pytest.raises(ValueError, match=r"^init must have shape \(n_items, n_components\) = \(40, 2\), got \(40, 3\)"):
        STE().fit(T, init=np.zeros((40, 3)))
    with pytest.raises(ValueError, match=r"^init must have shape .* got \(39, 2\)"):
        STE().fit(T, init=np.zeros((39, 2)))


def test_invalid_init_values(truth):
    X, T = truth
    bad = X.copy()
    bad[5, 1] = np.nan
    with pytest.raises(ValueError, match="^init contains NaN values"):
        STE().fit(T, init=bad)
    bad[5, 1] = np.inf
    with pytest.raises(ValueError, match="^init contains infinite values"):
        STE().fit(T, init=bad)
    with pytest.raises(ValueError, match="^init must be 2-D"):
        STE().fit(T, init=np.zeros(80))


def test_invalid_triplets_and_n_items(truth):
    X, T = truth
    with pytest.raises(ValueError, match="^triplets must have shape"):
        STE().fit(T[:, :2])
    with pytest.raises(ValueError, match="^triplets contains a negative index"):
        STE().fit(np.array([[0, 1, -2]]))
    with pytest.raises(ValueError, match="^triplets row 0 repeats an item"):
        STE().fit(np.array([[0, 1, 1], [0, 1, 2]]))
    with pytest.raises(ValueError, match=r"^triplets index 38 is out of range for n_items=20 \(first at row 0; the "
                                         r"largest is 39\)"):
        STE().fit(T, n_items=20)
    with pytest.raises(ValueError, match="^n_items must be >= 3"):
        STE().fit(T, n_items=2)


# ------------------------------------------------------------------ LOE-STE
@pytest.fixture(scope="module")
def oracle_setup():
    from loe_viz.oracle import TripletOracle

    X = np.random.default_rng(0).normal(scale=0.5, size=(150, 2))
    return X, TripletOracle(X, temperature=1.0, random_state=1)


def test_loeste_starts_where_loe_ended_and_improves(oracle_setup):
    from loe_viz.metrics import triplet_error

    X, oracle = oracle_setup
    seen = []
    model = LOESTE(random_state=2, callback=lambda it, Z: seen.append((it, Z.copy()))).fit_oracle(oracle, 60_000)
    loe_Z = model.loe_.embedding_
    # LOE's embedding is handed over unchanged: it is STE's first point and the callback's iteration 0
    assert seen[0][0] == 0
    np.testing.assert_array_equal(seen[0][1], loe_Z)
    assert model.history_.iteration[0] == 0
    assert model.history_.elapsed[0] >= model.timings_["loe"]
    assert model.ste_.history_.loss[0] == model.history_.loss[0]
    # budget split: eps of the total on l = 5 landmarks, the rest on STE
    assert model.n_landmark_triplets_ == 5 * (int(0.3 * 60_000) // 5)
    assert model.n_ste_triplets_ == 60_000 - model.n_landmark_triplets_
    err_loe = triplet_error(X, loe_Z, random_state=3)
    err_final = triplet_error(X, model.embedding_, random_state=3)
    assert err_final < err_loe
    assert model.history_.loss[-1] < model.history_.loss[0]
    np.testing.assert_array_equal(model.embedding_, model.ste_.embedding_)
    assert model.n_iter_ == model.ste_.n_iter_ == len(seen) - 1


def test_loeste_init_equals_loe_embedding(oracle_setup, monkeypatch):
    X, oracle = oracle_setup
    captured = {}
    original = STE._fit

    def spy(self, triplets, n_items, init, progress, **kw):
        captured["init"] = None if init is None else np.array(init)
        return original(self, triplets, n_items, init, progress, **kw)

    monkeypatch.setattr(STE, "_fit", spy)
    model = LOESTE(random_state=2).fit_oracle(oracle, 40_000)
    np.testing.assert_array_equal(captured["init"], model.loe_.embedding_)


@pytest.mark.filterwarnings("ignore:.*took part in no comparison")  # LOE: a few items missed by a landmark
def test_loeste_fit_on_given_triplets(oracle_setup):
    X, oracle = oracle_setup
    from loe_viz.metrics import triplet_error

    T = oracle.uniform_triplets(60_000)
    model = LOESTE(random_state=2, ste_params=dict(max_iter=200)).fit(T)
    assert model.n_ste_triplets_ == 60_000
    assert 0 < model.n_landmark_triplets_ < 60_000
    assert triplet_error(X, model.embedding_, random_state=3) < triplet_error(X, model.loe_.embedding_, random_state=3)
    np.testing.assert_array_equal(model.fit_transform(T), model.embedding_)
    # uniform heads of 400 triplets (< 5 n): 4 (d + 3) of them at penalty 1.0, without a held-out search
    assert model.loe_.landmarks_.size == 20 and model.loe_.auto_search_ is None
    assert model.loe_.regularization == 1.0 and model.loe_.refine is None


def _collected(n, seed):
    """Zipf-headed noisy triplets as people collect them (benchmarks/bench_collected.py's model, smaller)."""
    X = make_points("gaussian", n, random_state=seed)
    oracle = TripletOracle(X, temperature=1.0, random_state=seed + 1)
    rng = np.random.default_rng(seed + 2)
    counts = rng.multinomial(int(10 * n * np.log(n)), 1 / np.arange(1, n + 1) / np.sum(1 / np.arange(1, n + 1)))
    heads = rng.permutation(n)
    T = np.vstack([oracle.landmark_triplets([h], int(c)) for h, c in zip(heads, counts) if c])
    return X, T


@pytest.mark.filterwarnings("ignore:.*took part in no comparison")
@pytest.mark.parametrize("seed", [0, 1])
def test_loeste_warm_start_on_collected_triplets_uses_more_heads_and_starts_closer(seed):
    X, T = _collected(600, seed)
    ste = dict(max_iter=1)  # the start is what is compared
    model = LOESTE(random_state=seed + 10, ste_params=ste).fit(T, n_items=600)
    few = LOESTE(n_landmarks=5, random_state=seed + 10, ste_params=ste).fit(T, n_items=600)
    counts = np.bincount(T[:, 0], minlength=600)
    busiest = np.argsort(-counts, kind="stable")[:20]
    np.testing.assert_array_equal(np.sort(model.loe_.landmarks_), np.sort(busiest))
    assert model.loe_.regularization == 1.0 and few.loe_.regularization == 1e-3
    assert procrustes_error(X, model.loe_.embedding_) < 0.8 * procrustes_error(X, few.loe_.embedding_)
    # what the caller sets wins
    own = LOESTE(random_state=seed + 10, ste_params=ste, loe_params=dict(regularization=0.01, refine="auto"))
    own.fit(T, n_items=600)
    assert own.loe_.regularization == 0.01 and own.loe_.refine == "auto" and own.loe_.landmarks_.size == 20


def test_loeste_warm_start_on_well_covered_heads_keeps_loes_penalty(oracle_setup):
    X, oracle = oracle_setup
    T = oracle.landmark_triplets(np.arange(8), 5 * 150)  # 8 heads of 5 n triplets: a landmark design
    model = LOESTE(random_state=2, ste_params=dict(max_iter=5)).fit(T, n_items=150)
    assert model.loe_.landmarks_.size == 8 and model.loe_.regularization == 1e-3


def test_loeste_callback_at_zero_skips_ste(oracle_setup):
    X, oracle = oracle_setup
    model = LOESTE(random_state=2, callback=lambda it, Z: True).fit_oracle(oracle, 40_000)
    assert model.ste_ is None and model.stop_reason_ == "callback"
    np.testing.assert_array_equal(model.embedding_, model.loe_.embedding_)


def test_loeste_time_budget(oracle_setup):
    X, oracle = oracle_setup
    model = LOESTE(random_state=2, time_budget=0.0).fit_oracle(oracle, 40_000)
    assert model.stop_reason_ == "time_budget" and model.ste_ is None


LOESTE_BAD = [
    (dict(eps=0.0), "eps must be > 0"),
    (dict(eps=1.0), "eps must be < 1"),
    (dict(n_components=0), "n_components must be >= 1"),
    (dict(n_landmarks=3), "n_landmarks must be >= n_components \\+ 3"),
    (dict(callback="x"), "callback must be callable"),
    (dict(time_budget=-1), "time_budget must be >= 0"),
    (dict(loe_params=[1]), "loe_params must be a dict"),
    (dict(loe_params=dict(n_components=3)), "loe_params must not set n_components"),
    (dict(ste_params=dict(callback=print)), "ste_params must not set callback"),
    (dict(ste_params=dict(max_iter=0)), re.escape("ste_params['max_iter'] must be >= 1")),
    (dict(ste_params=dict(bogus=1)), "ste_params has an argument STE does not take"),
    (dict(random_state="seed"), "random_state must be"),
]


@pytest.mark.parametrize("kwargs, message", LOESTE_BAD)
def test_loeste_invalid_argument(kwargs, message, oracle_setup):
    X, oracle = oracle_setup
    with pytest.raises(ValueError, match="^" + message):
        LOESTE(**kwargs).fit_oracle(oracle, 40_000)


class _AnswersOnly:
    """Half an oracle: a wrapper that forgot part of what a fit calls."""

    n_items = 30

    def comparisons(self, head, per_landmark, seed):
        raise AssertionError("never reached")


@pytest.mark.parametrize("estimator", [LOE(), LOESTE()], ids=["LOE", "LOESTE"])
def test_fit_oracle_names_what_is_no_oracle(estimator):
    """An array or a number passed as the oracle raised AttributeError: 'numpy.ndarray' object has no attribute
    'n_items'."""
    for bad, message in [(np.zeros((30, 2)), "got ndarray"), (2.5, "got float"),
                         (_AnswersOnly(), "got _AnswersOnly (it has no block_comparisons)")]:
        with pytest.raises(ValueError, match=r"^oracle must be a TripletOracle, " + re.escape(message) + "$"):
            estimator.fit_oracle(bad, 1000)


def test_loeste_total_too_small(oracle_setup):
    X, oracle = oracle_setup
    with pytest.raises(ValueError, match="^total=100 is too small"):
        LOESTE().fit_oracle(oracle, 100)
    with pytest.raises(ValueError, match="^total must be >= 1"):
        LOESTE().fit_oracle(oracle, 0)


def test_three_dimensions(truth):
    X3 = np.random.default_rng(0).normal(scale=0.5, size=(40, 3))
    T3 = noiseless_triplets(X3, 4000, seed=1)
    Z = STE(n_components=3, random_state=2).fit_transform(T3)
    assert Z.shape == (40, 3)
    assert procrustes_error(X3, Z) < 0.05


def test_concurrent_fits_in_threads_match_serial_fits(truth):
    from concurrent.futures import ThreadPoolExecutor

    X, T = truth
    serial = [STE(random_state=s, max_iter=30).fit(T).embedding_ for s in (2, 3, 4)]
    with ThreadPoolExecutor(3) as pool:
        threaded = list(pool.map(lambda s: STE(random_state=s, max_iter=30).fit(T).embedding_, (2, 3, 4)))
    for a, b in zip(serial, threaded):
        np.testing.assert_array_equal(a, b)


def test_blas_limit_is_restored_after_overlapping_fits(truth):
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from concurrent.futures import ThreadPoolExecutor

    X, T = truth
    before = [(i["filepath"], i["num_threads"]) for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda s: GNMDS(random_state=s, max_iter=10).fit(T), range(4)))
    after = [(i["filepath"], i["num_threads"]) for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
    assert after == before


def test_pinned_blas_stays_on_one_thread_and_fits_do_not_switch_it():
    """A server pins BLAS once; its fits then leave the process-wide thread count alone."""
    pytest.importorskip("threadpoolctl")
    code = (
        "import numpy as np, threadpoolctl\n"
        "from loe_viz import _blas, STE\n"
        "calls = []\n"
        "real = _blas._threadpool_limits\n"
        "_blas._threadpool_limits = lambda **kw: (calls.append(kw), real(**kw))[1]\n"
        "assert _blas.pin_blas_single_thread() and _blas.pin_blas_single_thread()\n"
        "assert len(calls) == 1, calls\n"
        "rng = np.random.default_rng(0)\n"
        "T = np.array([rng.permutation(30)[:3] for _ in range(2000)])\n"
        "STE(random_state=1, max_iter=20).fit(T, n_items=30)\n"
        "assert len(calls) == 1, calls\n"
        "blas = [i['num_threads'] for i in threadpoolctl.threadpool_info() if i['user_api'] == 'blas']\n"
        "assert blas and set(blas) == {1}, blas\n"
        "print('ok')\n"
    )
    import subprocess
    import sys

    env = dict(os.environ, OPENBLAS_NUM_THREADS="2")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-3000:]


# ------------------------------------------------------------------ memory
@pytest.fixture(scope="module")
def stray_id():
    """Triplets over items 0..199 and one that names item 5,000,000."""
    X = make_points("gaussian", 200, random_state=0)
    T = TripletOracle(X, temperature=0.0, random_state=1).uniform_triplets(2000)
    return np.vstack([T, [[0, 1, 5_000_000]]])


def test_a_stray_large_id_is_refused_at_the_fits_own_bytes_per_item(stray_id, monkeypatch):
    """STE allocated 3 GiB for one stray id: the floor of every fit (32 bytes per item, 160 MB) let it pass."""
    from loe_viz import resources

    monkeypatch.setattr(resources, "available_memory", lambda: 2 << 30)  # 2 GiB, whatever this machine has
    est = STE(random_state=0)
    with pytest.raises(ValueError) as info:
        est.fit(stray_id)
    assert str(info.value) == (
        "n_items=5,000,001 (the largest index + 1; index 5,000,000 is in row 2,000) needs about 3.1 GiB for STE "
        "at n_components=2 (660 B per item), more than the 2.0 GiB of memory available; only 201 of the items "
        "(0.004 %) appear in any triplet: items are indices 0..n_items-1, so map sparse ids to 0..k-1 first "
        "(read_triplets does)")
    with pytest.raises(ValueError) as info:
        est.fit(stray_id[:-1], n_items=5_000_000)
    assert str(info.value) == (
        "n_items=5,000,000 (as given; the largest index is 199) needs about 3.1 GiB for STE at n_components=2 "
        "(660 B per item), more than the 2.0 GiB of memory available; only 200 of the items (0.004 %) appear in "
        "any triplet: pass fewer items (n_items=200 covers every index in the triplets), or map sparse ids to "
        "0..k-1 first (read_triplets does)")
    assert not hasattr(est, "embedding_")
    # the figure grows with the dimension and the threads: 3 * (330 + 2 * 8) bytes
    with pytest.raises(ValueError, match=r"^n_items=5,000,001 \(the largest index \+ 1; index 5,000,000 is in row "
                                         r"2,000\) needs about 4\.8 GiB for CKL at n_components=3 \(1\.0 KiB per "
                                         r"item\), more than"):
        CKL(n_components=3, n_jobs=2).fit(stray_id)


def test_an_id_beyond_every_fits_memory_is_refused_with_the_baselines_own_figure():
    """The floor of every fit (32 bytes per item) used to refuse first: "at least 44.7 GiB" for STE's 922 GiB."""
    T = np.array([[0, 1, 2], [0, 2, 1_500_000_000]])
    with pytest.raises(ValueError, match=r"^n_items=1,500,000,001 \(the largest index \+ 1; index 1,500,000,000 is "
                                         r"in row 1\) needs about 922\.0 GiB for STE at n_components=2 \(660 B per "
                                         r"item\), more than the .* of memory available; only 4 of the items"):
        STE().fit(T)


@pytest.mark.parametrize("Est", [STE, LOESTE])
def test_an_id_of_forty_billion_is_refused_without_a_flag_per_item(Est):
    """Counting the items in triplets took one byte per item: 37 GiB of flags, a MemoryError, before the refusal."""
    import tracemalloc

    T = np.array([[0, 1, 2], [1, 2, 3], [2, 3, 4], [3, 4, 0], [4, 0, 40_000_000_000]])
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"^n_items=40,000,000,001 \(the largest index \+ 1; index "
                                             r"40,000,000,000 is in row 4\) needs about 24\.0 TiB for .*only 6 of "
                                             r"the items"):
            Est().fit(T)
        assert tracemalloc.get_traced_memory()[1] < 1 << 20
    finally:
        tracemalloc.stop()


def test_loeste_warns_once_about_items_in_no_triplet_from_the_callers_line(stray_id, monkeypatch):
    import warnings

    from loe_viz import resources

    monkeypatch.setattr(resources, "available_memory", lambda: 64 << 30)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        LOESTE(random_state=0, ste_params=dict(max_iter=2)).fit(stray_id[:-1], n_items=2_000_000)
    mine = [w for w in caught if "allocate about" in str(w.message)]
    assert len(mine) == 1 and mine[0].filename == __file__, [(str(w.message), w.filename) for w in caught]
    assert str(mine[0].message).startswith("n_items=2,000,000 (as given; the largest index is 199) makes LOE-STE's "
                                           "STE stage at n_components=2 allocate about 1.2 GiB")


def test_loeste_refuses_its_ste_stages_items_before_fitting_loe(stray_id, monkeypatch):
    """LOE-STE used to fit LOE on five million items (12 s and two warnings) before STE refused them."""
    from loe_viz import resources

    monkeypatch.setattr(resources, "available_memory", lambda: 2 << 30)
    ran = []
    monkeypatch.setattr(LOE, "fit", lambda *a, **k: ran.append(1))
    with pytest.raises(ValueError, match=(
            r"^n_items=5,000,001 \(the largest index \+ 1; index 5,000,000 is in row 2,000\) needs about 3\.1 GiB "
            r"for LOE-STE's STE stage at n_components=2 \(660 B per item\), more than the 2\.0 GiB of memory "
            r"available; only 201 of the items")):
        LOESTE(random_state=0).fit(stray_id)
    assert ran == []


def test_a_large_fit_of_items_in_triplets_is_refused_with_other_advice(monkeypatch):
    from loe_viz import resources

    monkeypatch.setattr(resources, "available_memory", lambda: 1 << 30)
    T = np.random.default_rng(3).permutation(2_000_000)[:3 * 20_000].reshape(-1, 3)  # 3 % of the items
    T[0, 0] = 1_999_999
    with pytest.raises(ValueError, match=(
            r"^n_items=2,000,000 \(the largest index \+ 1; index 1,999,999 is in row 0\) needs about 1\.2 GiB for "
            r"GNMDS at n_components=2 \(660 B per item\), more than the 1\.0 GiB of memory available; fit fewer "
            r"items or in fewer dimensions \(n_components\), or on a machine with more memory$")):
        GNMDS().fit(T)


def test_a_fit_memory_holds_but_spends_on_items_in_no_triplet_is_warned_about(stray_id, monkeypatch):
    import warnings

    from loe_viz import resources

    monkeypatch.setattr(resources, "available_memory", lambda: 64 << 30)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the warning stops the fit before it allocates anything
        with pytest.raises(UserWarning, match=(
                r"^n_items=5,000,001 \(the largest index \+ 1; index 5,000,000 is in row 2,000\) makes TSTE at "
                r"n_components=2 allocate about 3\.1 GiB \(660 B per item\), yet only 201 of the items \(0\.004 %\) "
                r"appear in any triplet \(the others keep their starting positions\): items are indices "
                r"0\.\.n_items-1, so map sparse ids to 0\.\.k-1 first \(read_triplets does\)$")):
            TSTE().fit(stray_id)


def test_a_fit_below_one_gib_does_not_look_at_memory(truth, monkeypatch):
    from loe_viz import resources

    looked = []
    monkeypatch.setattr(resources, "available_memory", lambda: looked.append(1) or 1 << 20)
    X, T = truth
    with pytest.warns(UserWarning, match="199,960 of the 200,000 items appear in no triplet") as caught:
        STE(max_iter=2).fit(T, n_items=200_000)  # 126 MiB at 660 bytes each: no look, no warning about memory
    assert len(caught) == 1
    assert looked == []


@pytest.mark.filterwarnings("ignore:.*items appear in no triplet")
def test_the_bytes_per_item_cover_what_a_fit_allocates():
    """The guard's figure against tracemalloc's peak of two fits (its slope per item; numba's own buffers,
    one (n, d) gradient, are not traced). All five losses share the optimiser and measured alike."""
    import tracemalloc

    from loe_viz.baselines import ITEM_BYTES_PER_DIMENSION

    T = TripletOracle(make_points("gaussian", 50, random_state=0), random_state=1).uniform_triplets(500)
    STE(max_iter=2).fit(T)  # compiled before anything is traced
    peaks = []
    for n in (100_000, 300_000):
        tracemalloc.start()
        STE(random_state=0, max_iter=25, tol=0.0).fit(T, n_items=n)  # 25 iterations fill the ten pairs
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    per_item = (peaks[1] - peaks[0]) / 200_000
    assert 0.9 * 2 * ITEM_BYTES_PER_DIMENSION < per_item + 2 * 8 < 1.1 * 2 * ITEM_BYTES_PER_DIMENSION, per_item


def test_tste_scale_follows_the_stopping_rule_and_its_shape_does_not():
    """What TSTE's docstring says: nothing fixes t-STE's scale, so a tighter tol leaves a larger embedding, of the
    same shape and held-out accuracy (the CLI wrote the capitals' coordinates in the thousands)."""
    from loe_viz.data import sample_path
    from loe_viz.evaluation import train_test_split_triplets
    from loe_viz.io import read_triplets
    from loe_viz.metrics import procrustes_error, triplet_accuracy

    data = read_triplets(sample_path("gaussian_2d_crowd.csv"))
    train, test = train_test_split_triplets(data.triplets, test_size=0.2, random_state=0)
    loose = TSTE(random_state=1).fit(train, n_items=data.n_items)
    tight = TSTE(random_state=1, tol=1e-12, max_iter=3000).fit(train, n_items=data.n_items)
    rms = [float(np.sqrt((m.embedding_ ** 2).sum(1).mean())) for m in (loose, tight)]
    assert rms[1] > 10 * rms[0], rms
    accs = [triplet_accuracy(m.embedding_, test) for m in (loose, tight)]
    assert abs(accs[0] - accs[1]) < 0.01, accs
    assert procrustes_error(loose.embedding_, tight.embedding_) < 0.1
