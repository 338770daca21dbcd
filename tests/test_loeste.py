"""LOESTE's messages when the landmarks of its start are its own choice: what the start needs, not an
n_landmarks the caller never set."""

from __future__ import annotations

import re

import numpy as np
import pytest

from loe_viz import LOESTE, TripletOracle, make_points


@pytest.mark.parametrize("d", [2, 1])
def test_too_few_heads_for_the_start_say_what_it_needs(d):
    # was "n_landmarks=5 is larger than the number of items (4)" (d = 2) and "... but LOE needs n_landmarks=4:
    # triplets headed by at least 4 items" (d = 1)
    T = np.array([[0, 1, 2], [1, 2, 3]])
    with pytest.raises(ValueError) as info:
        LOESTE(n_components=d).fit(T, n_items=4)
    assert str(info.value) == (
        f"LOESTE's start (LOE) needs at least n_components + 3 = {d + 3} landmarks, items that head triplets, but "
        "the triplets have only 2 distinct head item(s); STE, which fits every triplet, needs no landmarks")


def test_too_few_items_for_the_start_name_a_dimension_that_fits():
    X = np.random.default_rng(0).normal(size=(4, 2))
    with pytest.raises(ValueError) as info:
        LOESTE(n_components=2).fit_oracle(TripletOracle(X), 1000)
    assert str(info.value) == ("LOESTE's start (LOE) needs at least n_components + 3 = 5 landmarks, but there are "
                               "only 4 items; use n_components <= 1")


def test_a_start_with_enough_heads_still_fits():
    T = TripletOracle(np.random.default_rng(1).normal(size=(12, 2)), random_state=2).uniform_triplets(600)
    model = LOESTE(n_components=2, random_state=0).fit(T, n_items=12)
    assert model.embedding_.shape == (12, 2)


class _CallLog:
    """An oracle wrapper that records the methods called (not merely looked up)."""

    def __init__(self, oracle):
        self._oracle = oracle
        self.calls = []

    def __getattr__(self, name):
        value = getattr(self._oracle, name)
        if not callable(value):
            return value

        def call(*args, **kwargs):
            self.calls.append(name)
            return value(*args, **kwargs)
        return call


@pytest.fixture(scope="module")
def points():
    from loe_viz import make_points

    return make_points("gaussian", 1000, random_state=0)


def test_a_total_too_large_for_ste_is_refused_before_loe_draws_anything(points):
    """LOE's share fitted the memory limit; LOE drew and fitted it, and only then were STE's 14 million triplets
    drawn (or refused by the oracle), however long LOE had taken."""
    oracle = _CallLog(TripletOracle(points, random_state=1))
    with pytest.raises(ValueError, match=(
            r"^memory_limit exceeded: LOE-STE's STE stage \(14,000,000 uniformly random triplets: total=20,000,000 "
            r"with eps=0\.3\) needs [\d.]+ MiB \(an int32 table of shape \(14,000,000, 3\) and [\d.]+ MiB beside it\), "
            r"more than the limit of 114\.4 MiB \(memory_limit='120MB'\)\. Use a smaller total \(or a larger eps\), or "
            r"a higher memory_limit in loe_params \(float\('inf'\) turns the check off\)\.$")):
        LOESTE(loe_params={"memory_limit": "120MB"}, ste_params={"max_iter": 1}).fit_oracle(oracle, 2 * 10**7)
    assert oracle.calls == []


def test_a_table_beyond_the_oracles_own_limit_is_refused_before_loe_draws_anything(points):
    oracle = _CallLog(TripletOracle(points, random_state=1, memory_limit="100MB"))
    with pytest.raises(ValueError, match=(
            r"^memory_limit exceeded: LOE-STE's STE stage \(14,000,000 uniformly random triplets: total=20,000,000 "
            r"with eps=0\.3\) needs 160\.2 MiB \(an int32 table of shape \(14,000,000, 3\)\), more than the limit of "
            r"95\.4 MiB \(memory_limit='100MB'\)\. Use a smaller total \(or a larger eps\), or a higher memory_limit of "
            r"the oracle")):
        LOESTE(ste_params={"max_iter": 1}).fit_oracle(oracle, 2 * 10**7)
    assert oracle.calls == []


def test_a_total_too_large_for_loe_names_the_start(points):
    oracle = _CallLog(TripletOracle(points, random_state=1))
    with pytest.raises(ValueError, match=(
            r"^memory_limit exceeded: LOE-STE's start \(LOE, 60,000,000,000 comparisons for each of 5 landmarks: "
            r"total=1,000,000,000,000 with eps=0\.3\) needs an estimated peak memory ~[\d.]+ GiB .*, more than the "
            r"limit of 1\.0 GiB \(memory_limit='1GiB'\)\. Use a smaller total or eps")):
        LOESTE(loe_params={"memory_limit": "1GiB"}).fit_oracle(oracle, 10**12)
    assert oracle.calls == []


def test_a_total_within_the_limits_is_fitted(points):
    model = LOESTE(random_state=0, loe_params={"memory_limit": "1GiB"}, ste_params={"max_iter": 5}).fit_oracle(
        TripletOracle(points, random_state=1, memory_limit="1GiB"), 200_000)
    assert model.n_landmark_triplets_ + model.n_ste_triplets_ == 200_000


@pytest.mark.parametrize("params,message", [
    (dict(loe_params={"tol": -1}), "loe_params['tol'] must be > 0.0, got -1.0"),
    (dict(ste_params={"max_iter": 0}), "ste_params['max_iter'] must be >= 1, got 0"),
    (dict(loe_params={"landmarks": [0, 1, 2, 3, 500]}), "loe_params['landmarks'] index 500 is out of range for n_items=100"),
])
def test_a_bad_value_in_loe_or_ste_params_is_named_as_that_key(params, message):
    """'tol must be > 0.0' named a parameter LOESTE does not have: the value came from loe_params."""
    X = make_points("gaussian", 100, random_state=0)
    T = TripletOracle(X, random_state=1).uniform_triplets(3000)
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        LOESTE(**params).fit(T)
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        LOESTE(**params).fit_oracle(TripletOracle(X, random_state=1), 20_000)
