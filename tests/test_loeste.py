"""LOESTE's messages when the landmarks of its start are its own choice: what the start needs, not an
n_landmarks the caller never set."""

from __future__ import annotations

import numpy as np
import pytest

from loe_viz import LOESTE, TripletOracle


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
