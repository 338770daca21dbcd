"""Hostile arguments to the estimators: each a clear ValueError, never a crash or a silent wrong answer."""

import warnings

import numpy as np
import pytest

from loe_viz import CKL, GNMDS, LOE, LOESTE, SOE, STE, TSTE, LOEWarning, TripletOracle, make_points

BASELINES = [STE, TSTE, SOE, GNMDS, CKL]
RANDOM_STATE = r"^random_state must be None, an int, a SeedSequence, a numpy Generator or a RandomState, got "


@pytest.fixture(scope="module")
def problem():
    # ground truth from seed 0, answers from seed 1; item 39 is in no triplet
    X = make_points("gaussian", 40, random_state=0)
    T = TripletOracle(X, temperature=1.0, random_state=1).uniform_triplets(4000)
    return X, T[~(T == 39).any(axis=1)]


def test_huge_n_jobs_is_a_value_error_not_an_overflow(problem):
    _, T = problem
    with pytest.raises(ValueError, match=r"^n_jobs must be <= 1024 threads, got 10{30}$"):
        STE(n_jobs=10**30).fit(T)


@pytest.mark.parametrize("Est", BASELINES + [LOE, LOESTE])
def test_a_repeated_item_is_named_before_the_item_count(Est):
    with pytest.raises(ValueError, match=r"^triplets row 0 repeats an item \(0\): \(0, 0, 1\); a triplet needs three"):
        Est().fit([[0, 0, 1]])


def test_uint64_index_beyond_int64_is_too_large_not_negative():
    T = np.array([[0, 1, 2], [1, 2, 2**63]], dtype=np.uint64)
    with pytest.raises(ValueError, match=r"^triplets index 9223372036854775808 is too large for an item index "
                                         r"\(at most 2\*\*63 - 1; first at row 1\)$"):
        STE().fit(T)


def test_tiny_regularization_is_refused_and_the_smallest_accepted_stays_finite(problem):
    _, T = problem
    with pytest.raises(ValueError, match=r"^regularization must be 0 or at least 1e-50 \(smaller values overflow"):
        LOE(regularization=1e-300, random_state=2).fit(T, n_items=40)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LOEWarning)  # item 39 is unranked, on purpose
        for reg in (1e-50, 1e-20):
            Z = LOE(regularization=reg, refine=None, random_state=2).fit(T, n_items=40).embedding_
            assert np.isfinite(Z).all()


@pytest.mark.parametrize("Est", BASELINES)
@pytest.mark.filterwarnings("ignore:.*items appear in no triplet")
def test_a_start_with_every_point_identical_is_refused(Est, problem):
    _, T = problem
    msg = (r"^init places every item at the same point, where the gradient of every loss is zero and the fit "
           r"cannot start; give distinct starting points \(init=None draws a random start\)$")
    with pytest.raises(ValueError, match=msg):
        Est().fit(T, n_items=40, init=np.zeros((40, 2)))
    with pytest.raises(ValueError, match=msg):
        Est().fit(T, n_items=40, init=np.full((40, 2), 3.0))


@pytest.mark.parametrize("Est", BASELINES + [LOE, LOESTE])
@pytest.mark.parametrize("value, shown", [("seed", "str 'seed'"), (float("nan"), "float nan"), (1.5, "float 1.5")])
def test_bad_random_state_is_refused_by_fit(Est, value, shown, problem):
    _, T = problem
    with pytest.raises(ValueError, match=RANDOM_STATE + shown.replace(".", r"\.") + "$"):
        Est(random_state=value).fit(T, n_items=40)
