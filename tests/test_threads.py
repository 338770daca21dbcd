"""Two halves of a pass side by side (loe_viz._threads) and the passes of LOE.fit that use them."""

import threading

import numpy as np
import pytest

import loe_viz._landmark_tasks as tasks
import loe_viz._threads as threads_mod
from loe_viz import LOE, TripletOracle, make_points


@pytest.fixture(autouse=True)
def _cold(monkeypatch):
    monkeypatch.setattr(threads_mod, "_WARM", set())


def test_a_kind_runs_on_one_thread_until_it_has_completed_once():
    seen = []

    def half(tag):
        return lambda: seen.append((tag, threading.get_ident())) or tag

    key = threads_mod.kind("k", np.zeros(3, np.int32))
    me = threading.get_ident()
    assert threads_mod.side_by_side(key, half("a"), half("b")) == ("a", "b")
    assert [t for _, t in seen] == [me, me]  # cold: both on the calling thread
    seen.clear()
    assert threads_mod.side_by_side(key, half("a"), half("b"), parallel=False) == ("a", "b")
    assert [t for _, t in seen] == [me, me]  # warm, but not asked to split
    seen.clear()
    assert threads_mod.side_by_side(key, half("a"), half("b")) == ("a", "b")
    assert dict(seen)["a"] == me and dict(seen)["b"] != me
    # another dtype is another compiled kernel: cold again
    seen.clear()
    threads_mod.side_by_side(threads_mod.kind("k", np.zeros(3, np.int64)), half("a"), half("b"))
    assert [t for _, t in seen] == [me, me]


def test_an_exception_of_either_half_reaches_the_caller_after_both_end():
    key = threads_mod.kind("k")
    threads_mod.side_by_side(key, lambda: 1, lambda: 2)
    ended = []

    def boom():
        raise RuntimeError("second half failed")

    with pytest.raises(RuntimeError, match="^second half failed$"):
        threads_mod.side_by_side(key, lambda: ended.append(1), boom)
    assert ended == [1]
    with pytest.raises(ZeroDivisionError):
        threads_mod.side_by_side(key, lambda: 1 / 0, lambda: ended.append(2))
    assert ended == [1, 2]


@pytest.mark.parametrize("order", ["grouped", "shuffled"])
def test_head_counts_and_shares_in_halves_equal_numpy(order, monkeypatch):
    monkeypatch.setattr(tasks, "PARALLEL_MIN", 100)
    rng = np.random.default_rng(5)
    n = 400
    X = make_points("gaussian", n, random_state=0)
    heads = np.array([3, 77, 150, 222, 399])
    T = TripletOracle(X, random_state=1).landmark_triplets(heads, 3001)
    if order == "shuffled":
        T = np.ascontiguousarray(T[rng.permutation(T.shape[0])])
    for _ in range(2):  # cold, then side by side
        counts, half = tasks.head_counts(T, n, threads=2)
        np.testing.assert_array_equal(counts, np.bincount(T[:, 0], minlength=n))
        row, before = half
        assert row == T.shape[0] // 2
        np.testing.assert_array_equal(before, np.bincount(T[:row, 0], minlength=n))
        chosen = heads[[2, 0, 4]]
        for (near, far), h in zip(tasks.landmark_shares(T, chosen, counts, n, half), chosen):
            rows = T[T[:, 0] == h]
            np.testing.assert_array_equal(near, rows[:, 1])
            np.testing.assert_array_equal(far, rows[:, 2])
    assert tasks.head_counts(T, n, threads=1)[1] is None


def test_fit_on_two_threads_equals_one_thread_with_every_pass_in_halves(monkeypatch):
    import loe_viz._validation as validation

    monkeypatch.setattr(tasks, "PARALLEL_MIN", 1000)
    monkeypatch.setattr(validation, "PARALLEL_SCAN_MIN", 1000)
    X = make_points("gaussian", 200, random_state=0)
    T = TripletOracle(X, random_state=1).landmark_triplets([0, 5, 9, 33, 70], 4000)
    one = LOE(n_landmarks=5, n_jobs=1).fit(T, n_items=200)
    for _ in range(2):
        two = LOE(n_landmarks=5, n_jobs=2).fit(T, n_items=200)
        np.testing.assert_array_equal(two.embedding_, one.embedding_)
    assert {k[0] for k in threads_mod._WARM} >= {"scan", "count_heads", "split_by_slot"}
