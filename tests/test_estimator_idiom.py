"""Every public estimator follows the scikit-learn estimator idiom.

The checks mirror scikit-learn's ``check_estimator`` (``check_parameters_default_constructible``,
``check_get_params_invariance``, ``check_set_params``, ``check_no_attributes_set_in_init``,
``check_dont_overwrite_parameters``, ``check_estimators_overwrite_params``, ``clone``) without
depending on scikit-learn.
"""

import copy
import inspect

import numpy as np
import pytest

from loe_viz import CKL, GNMDS, LOE, LOESTE, SOE, STE, TSTE
from loe_viz.methods import METHODS

ESTIMATORS = [LOE, STE, TSTE, SOE, GNMDS, CKL, LOESTE]

BAD_SEED = "random_state must be None, an int, a SeedSequence, a numpy Generator or a RandomState, got str"

#: One invalid value per parameter, and the start of the ValueError it gives at fit.
_COMMON_BAD = {
    "n_components": (0, "n_components must be >= 1"),
    "max_iter": (0, "max_iter must be >= 1"),
    "tol": (-1.0, "tol must be >= 0"),
    "time_budget": (-1.0, "time_budget must be >= 0"),
    "callback": ("print", "callback must be callable or None, got str"),
    "random_state": ("seed", BAD_SEED),
    "verbose": ("yes", "verbose must be a bool, got 'yes'"),
    "init_scale": (0.0, "init_scale must be > 0"),
    "n_jobs": (0, "n_jobs must be a positive number of threads or -1"),
}
BAD = {
    STE: _COMMON_BAD,
    TSTE: {**_COMMON_BAD, "alpha": (-1.0, "alpha must be > 0")},
    SOE: {**_COMMON_BAD, "margin": (0.0, "margin must be > 0")},
    GNMDS: {**_COMMON_BAD, "regularization": (-1.0, "regularization must be >= 0")},
    CKL: {**_COMMON_BAD, "mu": (-1.0, "mu must be >= 0")},
    LOE: {
        "n_components": (0, "n_components must be >= 1"),
        "n_landmarks": (4, "n_landmarks must be >= n_components + 3 = 5"),
        "landmarks": ([0, 0, 1, 2, 3], "landmarks must be distinct items"),
        "landmark_selection": ("far", "landmark_selection must be one of "),
        "regularization": (-1.0, "regularization must be >= 0"),
        "offset": ("median", "offset must be one of"),
        "tol": (0.0, "tol must be > 0"),
        "max_iter": (0, "max_iter must be >= 1"),
        "n_jobs": (0, "n_jobs must be a positive number of threads or -1"),
        "executor": ("pool", "executor must be a concurrent.futures.Executor, got str"),
        "memory_limit": ("lots", "memory_limit must be None, a number of bytes"),
        "refine": ("always", "refine must be one of 'auto', 'ordinal' or None"),
        "random_state": ("seed", BAD_SEED),
        "landmark_share": (0.9, "landmark_share must be <= 0.5"),
    },
    LOESTE: {
        "n_components": (0, "n_components must be >= 1"),
        "n_landmarks": (4, "n_landmarks must be >= n_components + 3 = 5"),
        "eps": (1.0, "eps must be < 1"),
        "loe_params": ([1], "loe_params must be a dict of keyword arguments or None, got list"),
        "ste_params": ({"callback": print}, "ste_params must not set callback"),
        "random_state": ("seed", BAD_SEED),
        "callback": (1, "callback must be callable or None, got int"),
        "time_budget": (-1.0, "time_budget must be >= 0"),
    },
}
#: A valid value, different from the default, for every parameter (for the set_params round trip).
OTHER = {
    "n_components": 3, "max_iter": 7, "tol": 1e-4, "time_budget": 5.0, "callback": print, "random_state": 3,
    "verbose": True, "init_scale": 0.2, "n_jobs": 2, "alpha": 2.0, "margin": 0.3, "regularization": 0.05,
    "mu": 0.2, "n_landmarks": 7, "landmarks": [0, 1, 2, 3, 4], "landmark_selection": "maxmin", "offset": "mean",
    "executor": None, "memory_limit": "1GiB", "refine": None, "eps": 0.2, "loe_params": {"tol": 1e-4},
    "ste_params": {"max_iter": 5}, "landmark_share": 0.1,
}


@pytest.fixture(scope="module")
def triplets():
    # ground truth from seed 0, answers from seed 1 (the estimators seed themselves with 2)
    X = np.random.default_rng(0).normal(size=(25, 2))
    rng = np.random.default_rng(1)
    i, j, k = (rng.integers(0, 25, 6000) for _ in range(3))
    keep = (i != j) & (i != k) & (j != k)
    i, j, k = i[keep], j[keep], k[keep]
    closer = ((X[i] - X[j]) ** 2).sum(1) < ((X[i] - X[k]) ** 2).sum(1)
    return np.stack([i, np.where(closer, j, k), np.where(closer, k, j)], axis=1)


def quick(Est, **params):
    """An estimator that fits the small problem in well under a second."""
    if Est is LOESTE:
        params.setdefault("ste_params", {"max_iter": 20})
    elif Est is not LOE:
        params.setdefault("max_iter", 20)
    return Est(**params)


def test_every_registered_method_is_checked():
    assert {m.estimator for m in METHODS.values()} == set(ESTIMATORS)


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_signature_is_explicit_and_keyword_only_after_n_components(Est):
    params = list(inspect.signature(Est).parameters.values())
    assert params[0].name == "n_components" and params[0].default == 2
    assert params[0].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params[1:])
    assert [p.name for p in params] == Est._get_param_names()
    assert set(BAD[Est]) == set(Est._get_param_names())  # every parameter has a bad-value check below
    with pytest.raises(TypeError):
        Est(2, 3)
    with pytest.raises(TypeError):
        Est(bogus=1)


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_defaults_are_stored_unchanged(Est):
    est = Est()
    for name, p in inspect.signature(Est).parameters.items():
        assert getattr(est, name) is p.default or getattr(est, name) == p.default, name
    assert est.get_params() == {k: p.default for k, p in inspect.signature(Est).parameters.items()}
    assert repr(est) == f"{Est.__name__}()"


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_init_stores_its_arguments_and_checks_nothing(Est):
    bad = {name: value for name, (value, _) in BAD[Est].items()}
    est = Est(**bad)  # no validation in __init__: every bad value is accepted here
    assert vars(est).keys() == bad.keys()  # and no other attribute is set
    for name, value in bad.items():
        assert getattr(est, name) is value, name


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_get_params_set_params_round_trip(Est):
    est = Est()
    other = {k: OTHER[k] for k in Est._get_param_names()}
    assert est.set_params(**other) is est
    got = est.get_params()
    assert got.keys() == other.keys() and all(got[k] is other[k] for k in other)
    assert est.get_params(deep=False) == got
    est.set_params(**Est().get_params())
    assert repr(est) == f"{Est.__name__}()"
    with pytest.raises(ValueError, match=rf"^bogus is not a parameter of {Est.__name__}; valid: n_components, "):
        est.set_params(bogus=1)


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_clone_style_reconstruction(Est):
    est = Est(**{k: OTHER[k] for k in list(Est._get_param_names())[:4]})
    params = est.get_params()
    clone = type(est)(**params)
    assert all(clone.get_params()[k] is v for k, v in params.items())  # scikit-learn's clone sanity check
    assert repr(clone) == repr(est)
    deep = type(est)(**copy.deepcopy(params))
    assert deep.get_params().keys() == params.keys()


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_fit_returns_self_sets_only_trailing_underscore_attributes_and_keeps_params(Est, triplets):
    est = quick(Est, random_state=2)
    before = {k: copy.deepcopy(v) for k, v in est.get_params().items()}
    attrs = set(vars(est))
    assert est.fit(triplets) is est
    new = set(vars(est)) - attrs
    assert new and all(a.endswith("_") and not a.startswith("_") for a in new), sorted(new)
    assert "embedding_" in new
    assert est.n_items_ == est.embedding_.shape[0] == int(triplets.max()) + 1  # every estimator says how many items
    after = est.get_params()
    assert all(np.array_equal(after[k], v) if k == "landmarks" else after[k] == v for k, v in before.items())


@pytest.mark.parametrize(
    "Est, name", [(Est, name) for Est in ESTIMATORS for name in BAD[Est]], ids=lambda v: getattr(v, "__name__", v)
)
def test_each_bad_parameter_is_a_value_error_that_names_it(Est, name, triplets):
    value, message = BAD[Est][name]
    assert message.startswith(name)
    est = quick(Est, **{name: value})
    with pytest.raises(ValueError) as info:
        est.fit(triplets)
    assert str(info.value).startswith(message), str(info.value)


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_reading_a_fitted_attribute_before_fit_says_the_estimator_is_not_fitted(Est):
    """LOE().uncertainty_ said "'LOE' object has no attribute 'stages_'", an attribute the user did not read;
    LOE().embedding_ did not say that a fit sets it."""
    import pickle

    import loe_viz

    est = Est()
    fits = "fit or fit_oracle" if Est in (LOE, LOESTE) else "fit"
    with pytest.raises(loe_viz.NotFittedError, match=rf"^{Est.__name__} is not fitted yet \(embedding_ is set by "
                                                     rf"fitting\); call {fits} first$"):
        est.embedding_
    assert issubclass(loe_viz.NotFittedError, AttributeError) and issubclass(loe_viz.NotFittedError, ValueError)
    assert not hasattr(est, "embedding_") and getattr(est, "stop_reason_", None) is None
    with pytest.raises(AttributeError, match=rf"^'{Est.__name__}' object has no attribute 'nothing_'$") as info:
        est.nothing_  # no attribute of any fit: the plain message
    assert not isinstance(info.value, loe_viz.NotFittedError)
    pickle.loads(pickle.dumps(est)), copy.deepcopy(est)  # __getstate__ and friends are looked up as before
    if Est is LOE:
        with pytest.raises(loe_viz.NotFittedError, match=r"^LOE is not fitted yet \(uncertainty_ is set"):
            est.uncertainty_
