"""Tests of loe_viz.evaluation (quality without ground truth) and of sample_data/."""

from __future__ import annotations

import importlib.util
import os
import warnings

import numpy as np
import pytest

from loe_viz.data import sample_dir
from loe_viz.evaluation import (
    DimensionSelection,
    clone_estimator,
    cross_validate_triplets,
    embedding_agreement,
    heldout_accuracy,
    select_dimension,
    train_test_split_triplets,
)
from loe_viz.io import read_triplets
from loe_viz.oracle import TripletOracle
from loe_viz.points import load_points, make_points

# The bundled files, where the installed package keeps them (importlib.resources), and their script.
SAMPLE = str(sample_dir())
SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "sample_data",
                      "make_sample_data.py")


class TinyEmbedder:
    """Stand-in estimator: logistic triplet loss, full-batch gradient descent, pure NumPy."""

    def __init__(self, n_components=2, n_iter=200, step=0.5, reg=1e-3, random_state=0):
        self.n_components = n_components
        self.n_iter = n_iter
        self.step = step
        self.reg = reg
        self.random_state = random_state

    def get_params(self, deep=True):
        return dict(n_components=self.n_components, n_iter=self.n_iter, step=self.step, reg=self.reg,
                    random_state=self.random_state)

    def fit(self, triplets, n_items=None):
        T = np.asarray(triplets)
        n = int(T.max()) + 1 if n_items is None else n_items
        d = self.n_components
        X = 0.1 * np.random.default_rng(self.random_state).standard_normal((n, d))
        i, j, k = T.T
        for _ in range(self.n_iter):
            uij, uik = X[i] - X[j], X[i] - X[k]
            s = 0.5 * (1.0 + np.tanh(0.5 * ((uij ** 2).sum(1) - (uik ** 2).sum(1))))
            gij, gik = 2 * uij * s[:, None], 2 * uik * s[:, None]
            G = np.empty_like(X)
            for c in range(d):
                G[:, c] = (np.bincount(i, gij[:, c] - gik[:, c], n) - np.bincount(j, gij[:, c], n)
                           + np.bincount(k, gik[:, c], n))
            X -= self.step * (G * (n / len(T)) + self.reg * X)
        self.embedding_ = X
        return self


class NoParams:
    """An estimator without get_params (cloned by deepcopy)."""

    def __init__(self):
        self.n_components = 2
        self.rng = np.random.default_rng(12345)

    def fit(self, triplets, n_items=None):
        n = int(np.max(triplets)) + 1 if n_items is None else n_items
        self.embedding_ = self.rng.standard_normal((n, self.n_components))
        return self


def noiseless(n=40, d=2, m=3000, seed=0, temperature=0.0):
    X = make_points("gaussian", n, d=d, random_state=seed)
    return X, TripletOracle(X, temperature=temperature, random_state=seed + 1).uniform_triplets(m)


# ----------------------------------------------------------------------------- splitting

def test_train_test_split_properties():
    _, T = noiseless(m=1001)
    train, test = train_test_split_triplets(T, test_size=0.2, random_state=0)
    assert test.shape == (201, 3) and train.shape == (800, 3)  # ceil(0.2 * 1001)
    both = np.vstack([train, test])
    assert sorted(map(tuple, both.tolist())) == sorted(map(tuple, T.tolist()))
    again = train_test_split_triplets(T, test_size=0.2, random_state=0)
    np.testing.assert_array_equal(again[1], test)
    other = train_test_split_triplets(T, test_size=0.2, random_state=1)
    assert not np.array_equal(other[1], test)
    # rows keep their original order within each part
    idx = np.arange(1001)
    keyed = np.column_stack([idx, idx + 1, idx + 2])
    tr_k, te_k = train_test_split_triplets(keyed, test_size=0.2, random_state=0)
    assert (np.diff(tr_k[:, 0]) > 0).all() and (np.diff(te_k[:, 0]) > 0).all()
    tr, te = train_test_split_triplets(T, test_size=10, random_state=0)
    assert te.shape == (10, 3) and tr.shape == (991, 3)


@pytest.mark.parametrize("bad", [0, 0.0, 1.0, -0.1, 1001, "0.2", True])
def test_train_test_split_rejects(bad):
    _, T = noiseless(m=1001)
    with pytest.raises(ValueError, match="^test_size must"):
        train_test_split_triplets(T, test_size=bad)


def test_split_needs_two_rows_and_valid_triplets():
    with pytest.raises(ValueError, match="at least 2 rows"):
        train_test_split_triplets([[0, 1, 2]])
    with pytest.raises(ValueError, match="triplets row 0 repeats an item"):
        train_test_split_triplets([[0, 1, 1], [0, 1, 2]])


# ----------------------------------------------------------------------------- cloning

def test_clone_estimator():
    rng = np.random.default_rng(3)
    est = TinyEmbedder(n_components=3, random_state=rng)
    c = clone_estimator(est, n_components=2)
    assert isinstance(c, TinyEmbedder) and c.n_components == 2 and est.n_components == 3
    assert c.random_state is not rng  # deep-copied: the original generator is not consumed
    with pytest.raises(ValueError, match=r"params \['bogus'\] are not parameters"):
        clone_estimator(est, bogus=1)
    fitted = NoParams().fit([[0, 1, 2]])
    c2 = clone_estimator(fitted)
    assert not hasattr(c2, "embedding_") and hasattr(fitted, "embedding_")
    with pytest.raises(ValueError, match="^estimator must have a fit"):
        clone_estimator(object())
    # cross-validation blamed fold 0 for an argument that is no estimator
    with pytest.raises(ValueError, match=r"^estimator must have a fit\(triplets, n_items=None\) method, got function$"):
        cross_validate_triplets(lambda: None, [[0, 1, 2], [1, 2, 0], [2, 0, 1], [0, 2, 1]], n_splits=2)


# ----------------------------------------------------------------------------- held-out accuracy

def test_heldout_accuracy_leaves_estimator_unfitted():
    _, T = noiseless()
    est = TinyEmbedder()
    acc = heldout_accuracy(est, T, test_size=0.25, random_state=0)
    assert 0.9 < acc <= 1.0
    assert not hasattr(est, "embedding_")
    assert heldout_accuracy(est, T, test_size=0.25, random_state=0) == acc
    chance = heldout_accuracy(NoParams(), T, random_state=0)
    assert 0.4 < chance < 0.6


def test_heldout_accuracy_checks_the_embedding():
    class Broken(NoParams):
        def fit(self, triplets, n_items=None):
            self.embedding_ = np.zeros((3, 2))
            return self

    _, T = noiseless()
    with pytest.raises(ValueError, match="embedding_ has 3 rows, expected n_items=40"):
        heldout_accuracy(Broken(), T)


def test_cross_validate_on_sample_file():
    data = read_triplets(os.path.join(SAMPLE, "european_capitals_crowd.csv"))
    res = cross_validate_triplets(TinyEmbedder(n_iter=150), data, n_splits=4, random_state=0)
    assert res["test_accuracy"].shape == (4,)
    assert res["n_test"].sum() == data.n_triplets
    assert (res["n_train"] + res["n_test"] == data.n_triplets).all()
    assert (res["test_accuracy"] > 0.85).all() and (res["train_accuracy"] > 0.85).all()
    assert res["mean_test_accuracy"] == pytest.approx(res["test_accuracy"].mean())
    assert (res["unseen_fraction"] == 0).all()
    with pytest.raises(ValueError, match="^n_splits must be >= 2"):
        cross_validate_triplets(TinyEmbedder(), data, n_splits=1)


def test_cross_validate_names_the_failing_fold():
    class Fails(NoParams):
        def fit(self, triplets, n_items=None):
            raise ValueError("n_landmarks must be >= 5")

    _, T = noiseless(m=100)
    with pytest.raises(ValueError, match="fold 0 of 3: n_landmarks must be >= 5"):
        cross_validate_triplets(Fails(), T, n_splits=3)


# ----------------------------------------------------------------------------- agreement

def test_embedding_agreement():
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((50, 2))
    c, s = np.cos(0.7), np.sin(0.7)
    moved = 3.0 * Z @ np.array([[c, -s], [s, c]]) * np.array([1, -1]) + [5, -2]
    assert embedding_agreement(Z, moved) < 1e-12
    other = rng.standard_normal((50, 2))
    a = embedding_agreement(Z, other)
    assert 0.5 < a <= 1.0
    assert embedding_agreement(other, Z) == pytest.approx(a)
    assert embedding_agreement(Z, np.hstack([Z, np.zeros((50, 1))])) < 1e-12  # padded dimensions
    with pytest.raises(ValueError, match="^Z2 must have as many rows as Z1"):
        embedding_agreement(Z, Z[:10])
    with pytest.raises(ValueError, match="^Z1 must contain at least two distinct points"):
        embedding_agreement(np.ones((50, 2)), Z)


@pytest.mark.parametrize("s1, s2", [(1e200, 1.0), (1e-200, 1.0), (1e300, 1e-300)])
def test_embedding_agreement_is_the_same_at_any_scale(s1, s2):
    """Embeddings near 1e200 overflowed the norms (agreement 1.0 for identical ones); near 1e-200 they vanished
    ("Z1 must contain at least two distinct points")."""
    rng = np.random.default_rng(0)
    Z, other = rng.standard_normal((50, 2)), rng.standard_normal((50, 2))
    assert embedding_agreement(Z * s1, Z * s2) < 1e-12
    assert embedding_agreement(Z * s1, other * s2) == pytest.approx(embedding_agreement(Z, other), rel=1e-9)
    with pytest.raises(ValueError, match="^Z2 must contain at least two distinct points"):
        embedding_agreement(Z * s1, np.full((50, 2), s2))


# ----------------------------------------------------------------------------- dimension

@pytest.mark.parametrize("d_true", [2, 3])
def test_select_dimension_finds_the_true_dimension(d_true):
    _, T = noiseless(d=d_true, m=3000, temperature=0.02)
    res = select_dimension(lambda d: TinyEmbedder(n_components=d), T, dims=(1, 2, 3, 4), random_state=0)
    assert isinstance(res, DimensionSelection)
    assert res.best_dim == d_true
    assert res.errors.shape == (4, 3)
    assert res.mean_error[0] > res.mean_error[d_true - 1] + 0.05
    assert (np.diff(res.train_error[:d_true]) < 0).all()
    assert res.as_dict()["best_dim"] == d_true


def test_select_dimension_accepts_an_estimator_and_checks_arguments():
    _, T = noiseless(d=2, m=1500, temperature=0.02)
    res = select_dimension(TinyEmbedder(n_iter=100), T, dims=[2, 1], n_splits=2, random_state=0, rule="min")
    assert res.dims.tolist() == [1, 2] and res.rule == "min"
    with pytest.raises(ValueError, match="^rule must be"):
        select_dimension(TinyEmbedder(), T, rule="best")
    with pytest.raises(ValueError, match="^dims must be >= 1"):
        select_dimension(TinyEmbedder(), T, dims=(0, 1))
    with pytest.raises(ValueError, match="^estimator_factory must be"):
        select_dimension(42, T)


def test_select_dimension_takes_a_class_as_a_factory_and_refuses_one_that_ignores_d():
    """A class gave a TypeError from its unbound get_params; a factory that ignored d was reported as every d."""
    from loe_viz.baselines import SOE

    _, T = noiseless(d=2, m=1500, temperature=0.02)
    res = select_dimension(TinyEmbedder, T, dims=(1, 2), n_splits=2, random_state=0)
    assert res.dims.tolist() == [1, 2] and res.best_dim == 2
    with pytest.raises(ValueError, match=r"^estimator_factory\(1\) returned an estimator with n_components=2; it "
                                         r"must embed in the dimension it is given$"):
        select_dimension(lambda d: SOE(n_components=2, max_iter=5), T, dims=(1, 2, 3))

    class Fixed(TinyEmbedder):  # no n_components attribute: caught on its embedding
        def __init__(self):
            super().__init__(n_components=2)
            del self.n_components

        def get_params(self, deep=True):
            return {}

        def fit(self, T, n_items=None):
            self.n_components = 2
            super().fit(T, n_items)
            del self.n_components
            return self
    with pytest.raises(ValueError, match=r"^estimator_factory\(1\) returned an estimator whose embedding_ has 2 "
                                         r"columns; it must embed in the dimension it is given$"):
        select_dimension(lambda d: Fixed(), T, dims=(1, 2), n_splits=2)
    with pytest.raises(ValueError, match=r"^estimator_factory\(1\) returned int, not an estimator with a "
                                         r"fit\(triplets, n_items=None\) method$"):
        select_dimension(lambda d: 7, T, dims=(1, 2))


@pytest.mark.parametrize("call", [clone_estimator, lambda e: heldout_accuracy(e, [[0, 1, 2]] * 5),
                                  lambda e: cross_validate_triplets(e, [[0, 1, 2]] * 5)])
def test_a_class_where_an_estimator_belongs_is_named(call):
    from loe_viz.baselines import STE

    with pytest.raises(ValueError, match=r"^estimator must be an instance, such as STE\(\), got the class STE$"):
        call(STE)


def _counting(cls, fitted):
    """A subclass of ``cls`` whose fits are recorded in ``fitted`` (its n_components)."""
    class Counting(cls):
        def fit(self, *args, **kwargs):
            fitted.append(self.n_components)
            return super().fit(*args, **kwargs)
    return Counting


def _fit_error(estimator, T, n):
    with pytest.raises(ValueError) as info:
        estimator.fit(T, n_items=n)
    return str(info.value)


def test_select_dimension_checks_every_dimension_before_any_fit():
    """A dimension the data or the estimator cannot take was found only after the fits of every smaller one."""
    from loe_viz.baselines import STE
    from loe_viz.loe import LOE
    from loe_viz.loeste import LOESTE

    X = make_points("gaussian", 8, random_state=0)
    T = TripletOracle(X, random_state=1).uniform_triplets(2000)
    fitted = []
    # beyond what 8 items span (STE), beyond what LOE's 6 landmarks allow, beyond d + 3 <= 8 items (LOE, LOE-STE)
    cases = [(lambda d: _counting(STE, fitted)(n_components=d, random_state=0), 8, STE(n_components=8)),
             (_counting(LOE, fitted)(n_landmarks=6), 4, LOE(n_components=4, n_landmarks=6)),
             (_counting(LOE, fitted)(), 6, LOE(n_components=6)),
             (_counting(LOESTE, fitted)(), 6, LOESTE(n_components=6))]
    for factory, bad, alone in cases:
        with pytest.raises(ValueError) as info:
            select_dimension(factory, T, dims=range(1, 9), random_state=0)
        assert fitted == []
        own = _fit_error(alone, T, 8)  # the estimator's own message for that dimension
        assert str(info.value) in (own, f"n_components={bad}: {own}")
        assert str(info.value).startswith(f"n_components={bad}")


def test_select_dimension_checks_leave_a_shared_random_state_alone():
    from loe_viz.baselines import STE

    _, T = noiseless(n=20, m=600)
    rs = np.random.RandomState(0)
    before = rs.get_state()[1].copy()
    res = select_dimension(lambda d: STE(n_components=d, random_state=rs, max_iter=20), T, dims=(1, 2), n_splits=2,
                           random_state=0)
    assert res.dims.tolist() == [1, 2]
    np.testing.assert_array_equal(rs.get_state()[1], before)


@pytest.mark.skipif(importlib.util.find_spec("loe_viz.baselines") is None, reason="baselines not available")
def test_select_dimension_with_ste_on_the_3d_sample():
    from loe_viz.baselines import STE

    data = read_triplets(os.path.join(SAMPLE, "gaussian_3d_triplets.npz"))
    res = select_dimension(lambda d: STE(n_components=d, random_state=0), data, dims=(1, 2, 3, 4), random_state=0)
    assert res.best_dim == 3


@pytest.mark.skipif(importlib.util.find_spec("loe_viz.loe") is None, reason="LOE not available")
def test_loe_on_the_landmark_sample():
    from loe_viz.loe import LOE
    from loe_viz.metrics import procrustes_error

    data = read_triplets(os.path.join(SAMPLE, "gaussian_2d_landmark_triplets.csv"))
    X = load_points(os.path.join(SAMPLE, "gaussian_2d_points.csv"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Z = LOE(n_components=2, n_landmarks=10).fit(data.triplets, n_items=data.n_items).embedding_
        acc = heldout_accuracy(LOE(n_components=2, n_landmarks=10), data, random_state=0)
    assert procrustes_error(X, Z) < 0.3
    assert acc > 0.7


# ----------------------------------------------------------------------------- sample data

def test_sample_files_are_small_and_readable():
    names = sorted(n for n in os.listdir(SAMPLE) if os.path.isfile(os.path.join(SAMPLE, n)))
    for name in names:
        assert os.path.getsize(os.path.join(SAMPLE, name)) < 500_000, name
    for name in ("gaussian_2d_landmark_triplets.csv", "gaussian_2d_crowd.csv", "gaussian_3d_triplets.npz"):
        data = read_triplets(os.path.join(SAMPLE, name))
        X = load_points(os.path.join(SAMPLE, name.split("_")[0] + "_" + name.split("_")[1] + "_points.csv"))
        assert data.n_items == X.shape[0]
        np.testing.assert_array_equal(data.labels, np.arange(X.shape[0]))
    caps = read_triplets(os.path.join(SAMPLE, "european_capitals_crowd.csv"))
    with open(os.path.join(SAMPLE, "european_capitals.csv"), encoding="utf-8") as fh:
        rows = [line.split(",")[0] for line in fh.read().splitlines()[1:]]
    assert caps.labels.tolist() == rows
    assert load_points(os.path.join(SAMPLE, "european_capitals_map_km.csv")).shape == (len(rows), 2)


def test_sample_files_are_reproduced(capsys):
    spec = importlib.util.spec_from_file_location("make_sample_data", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(["--check"]) == 0, capsys.readouterr().out


def test_clone_shares_an_executor_and_copies_random_states():
    """Deep-copying a process pool copied its pipes before failing on a lock; the half-made copies, collected, closed
    the pool's own file descriptors: the next fit and submit failed (Bad file descriptor) and Python hung at exit."""
    from concurrent.futures import ProcessPoolExecutor

    from loe_viz import LOESTE

    rng = np.random.default_rng(4)
    with ProcessPoolExecutor(1) as pool:
        est = LOESTE(random_state=rng, loe_params={"executor": pool, "landmarks": [0, 1, 2, 3, 4]})
        for _ in range(3):
            clone = clone_estimator(est)
        import gc

        gc.collect()
        assert clone.loe_params["executor"] is pool and pool.submit(abs, -3).result(timeout=60) == 3
        assert clone.random_state is not rng and clone.random_state.integers(1 << 30) == rng.integers(1 << 30)
        assert clone.loe_params is not est.loe_params and clone.loe_params["landmarks"] is not est.loe_params["landmarks"]


def test_clone_clones_an_estimator_held_by_a_wrapper():
    """A wrapper estimator's inner estimator was shared by the clone once only data were copied: the user's own
    inner STE was fitted by heldout_accuracy."""
    from loe_viz import STE

    class Wrapper:
        def __init__(self, base=None):
            self.base = base

        def get_params(self, deep=False):
            return {"base": self.base}

        def fit(self, triplets, n_items=None):
            self.base.fit(triplets, n_items=n_items)
            self.embedding_ = self.base.embedding_
            return self

    inner = STE(max_iter=5, random_state=0)
    clone = clone_estimator(Wrapper(inner))
    assert clone.base is not inner and clone.base.get_params() == inner.get_params()
    T = TripletOracle(np.random.default_rng(0).normal(size=(30, 2)), random_state=1).uniform_triplets(500)
    heldout_accuracy(Wrapper(inner), T, random_state=0)
    assert not hasattr(inner, "embedding_")
