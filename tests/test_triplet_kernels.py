"""Kernels that index list-order triplets by their head, against NumPy."""

import numpy as np
import pytest

from loe_viz.kernels import triplets as kernels


def _grouped(rng, n, heads, per):
    """``per`` triplets of each head in a block (as an oracle or a design writes them)."""
    rows = [np.column_stack([np.full(per, h), rng.integers(0, n, per), rng.integers(0, n, per)]) for h in heads]
    return np.ascontiguousarray(np.concatenate(rows).astype(np.int32))


@pytest.mark.parametrize("n", [7, 1000, kernels.COUNT_LANES_MAX_ITEMS + 5])
@pytest.mark.parametrize("order", ["grouped", "shuffled"])
def test_count_heads_matches_bincount(n, order):
    rng = np.random.default_rng(4)
    T = _grouped(rng, n, rng.choice(n, 5, replace=False), 1001)  # 5005 rows: not a multiple of 4
    if order == "shuffled":
        T = np.ascontiguousarray(T[rng.permutation(T.shape[0])])
    counts = np.full(n, -1, dtype=np.int64)  # every entry is written
    kernels.count_heads(T, n, counts)
    np.testing.assert_array_equal(counts, np.bincount(T[:, 0], minlength=n))


@pytest.mark.parametrize("m", [1, 2, 3, 4, 5])
def test_count_heads_of_a_few_rows(m):
    T = np.array([[2, 0, 1], [2, 1, 0], [0, 1, 2], [2, 0, 1], [1, 0, 2]][:m], dtype=np.int64)
    counts = np.empty(3, dtype=np.int64)
    kernels.count_heads(T, 3, counts)
    np.testing.assert_array_equal(counts, np.bincount(T[:, 0], minlength=3))


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_scan_finds_the_extremes_and_the_first_repeating_row_like_numpy(dtype):
    from loe_viz.kernels.triplets import scan

    rng = np.random.default_rng(7)
    for m in (1, 5, 1000, 100_003):
        T = rng.integers(-20, 5000, size=(m, 3)).astype(dtype)
        ok = (T[:, 0] != T[:, 1]) & (T[:, 0] != T[:, 2]) & (T[:, 1] != T[:, 2])
        T = T[ok] if ok.any() else np.array([[1, 2, 3]], dtype=dtype)
        assert scan(T) == (T.min(), T.max(), -1)
        for row, cols in ((T.shape[0] - 1, (1, 2)), (T.shape[0] // 2, (0, 2)), (0, (0, 1))):
            R = T.copy()
            R[row, cols[1]] = R[row, cols[0]]
            if row + 1 < R.shape[0]:
                R[-1, 2] = R[-1, 0]  # a later repeat does not hide the first
            rep = (R[:, 0] == R[:, 1]) | (R[:, 0] == R[:, 2]) | (R[:, 1] == R[:, 2])
            assert scan(R) == (R.min(), R.max(), int(np.argmax(rep)))


@pytest.mark.parametrize("order", ["grouped", "shuffled"])
def test_split_by_slot_gives_each_slot_its_rows_in_order_from_any_start(order):
    # the kernel keeps the write position of a run of one slot in a register: runs of one head
    # (grouped), alternating heads (shuffled), rows of no slot between them, and two halves
    # scattered from the positions the first half ends at, all against NumPy
    rng = np.random.default_rng(11)
    n = 300
    heads = rng.choice(n, 6, replace=False)
    T = _grouped(rng, n, heads, 997)
    T = np.concatenate([T, _grouped(rng, n, [h for h in range(n) if h not in heads][:3], 50)])
    if order == "shuffled":
        T = T[rng.permutation(T.shape[0])]
    T = np.ascontiguousarray(T)
    chosen = heads[[4, 0, 2, 5]]  # two heads have no slot
    slot = np.full(n, -1, dtype=np.int64)
    slot[chosen] = np.arange(chosen.size)
    counts = np.array([np.sum(T[:, 0] == h) for h in chosen])
    offsets = np.concatenate([[0], np.cumsum(counts)])
    row = T.shape[0] // 3
    before = np.array([np.sum(T[:row, 0] == h) for h in chosen])
    whole = [np.full(offsets[-1], -1, np.int32) for _ in range(2)]
    halves = [np.full(offsets[-1], -1, np.int32) for _ in range(2)]
    start = offsets[:-1].copy()
    kernels.split_by_slot(T, slot, start, *whole)
    np.testing.assert_array_equal(start, offsets[:-1])  # not changed
    kernels.split_by_slot(T[row:], slot, offsets[:-1] + before, *halves)
    kernels.split_by_slot(T[:row], slot, offsets[:-1], *halves)
    for c, h in enumerate(chosen):
        rows = T[T[:, 0] == h]
        for out in (whole, halves):
            np.testing.assert_array_equal(out[0][offsets[c]:offsets[c + 1]], rows[:, 1])
            np.testing.assert_array_equal(out[1][offsets[c]:offsets[c + 1]], rows[:, 2])
