"""Argument checks: accepted values are normalised, every refusal names the argument."""

import numpy as np
import pytest

from loe_viz._validation import (
    check_float,
    check_int,
    check_points,
    check_n_jobs,
    check_random_state,
    check_regularization,
    check_triplets,
    comparison_dtype,
    index_dtype,
)


# --------------------------------------------------------------------------- index_dtype
def test_index_dtype_switches_at_int32_limit():
    assert index_dtype(3) == np.int32
    assert index_dtype(2**31 - 2) == np.int32
    assert index_dtype(2**31 - 1) == np.int64
    assert index_dtype(2**40) == np.int64


def test_comparison_dtype_is_uint16_while_every_index_fits_in_16_bits():
    assert comparison_dtype(3) == np.uint16
    assert comparison_dtype(2**16) == np.uint16  # indices up to 65535
    assert comparison_dtype(2**16 + 1) == np.int32
    assert comparison_dtype(2**31 - 1) == np.int64


# --------------------------------------------------------------------------- check_random_state
def test_random_state_int_is_reproducible_and_seeds_differ():
    a = check_random_state(7).random(5)
    b = check_random_state(7).random(5)
    c = check_random_state(8).random(5)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_random_state_generator_is_passed_through():
    g = np.random.default_rng(0)
    assert check_random_state(g) is g


def test_random_state_accepts_none_seedsequence_numpy_int_and_randomstate():
    assert isinstance(check_random_state(None), np.random.Generator)
    ss = np.random.SeedSequence(3)
    np.testing.assert_array_equal(
        check_random_state(ss).random(3), np.random.default_rng(np.random.SeedSequence(3)).random(3)
    )
    np.testing.assert_array_equal(check_random_state(np.int64(5)).random(3), check_random_state(5).random(3))
    g1 = check_random_state(np.random.RandomState(1))
    g2 = check_random_state(np.random.RandomState(1))
    assert isinstance(g1, np.random.Generator)
    np.testing.assert_array_equal(g1.random(3), g2.random(3))


def test_random_state_stream_is_reproducible_and_apart_from_the_plain_seed():
    plain = check_random_state(7).normal(size=50)
    own = check_random_state(7, stream=3).normal(size=50)
    np.testing.assert_array_equal(own, check_random_state(7, stream=3).normal(size=50))
    np.testing.assert_array_equal(own, check_random_state(np.random.SeedSequence(7), stream=3).normal(size=50))
    assert not np.array_equal(own, check_random_state(7, stream=4).normal(size=50))
    assert abs(np.corrcoef(plain, own)[0, 1]) < 0.5  # an independent stream, not the same draws
    g = np.random.default_rng(0)
    assert check_random_state(g, stream=3) is g  # a Generator's owner decides what it has drawn
    assert isinstance(check_random_state(None, stream=3), np.random.Generator)


@pytest.mark.parametrize(
    "value, match",
    [
        (-1, r"^random_state must be a non-negative integer, got -1$"),
        ("seed", r"^random_state must be None, an int, a SeedSequence, a numpy Generator or a RandomState, "
         r"got str 'seed'$"),
        (1.5, r"^random_state must be None, an int, a SeedSequence, a numpy Generator or a RandomState, "
         r"got float 1\.5$"),
        (float("nan"), r"^random_state must be None, an int, a SeedSequence, a numpy Generator or a RandomState, "
         r"got float nan$"),
        (True, r"^random_state must be None, an int, a SeedSequence, a numpy Generator or a RandomState, "
         r"got bool True$"),
        ([1], r"^random_state must be None, an int, a SeedSequence, a numpy Generator or a RandomState, "
         r"got list$"),
    ],
)
def test_random_state_errors(value, match):
    with pytest.raises(ValueError, match=match):
        check_random_state(value)


# --------------------------------------------------------------------------- check_int
def test_check_int_accepts_integers_and_integral_floats():
    assert check_int(5, "n") == 5
    assert type(check_int(np.int64(5), "n")) is int
    assert check_int(4.0, "n") == 4
    assert check_int(np.float32(6.0), "n") == 6
    assert check_int(3, "n", minimum=3, maximum=3) == 3


@pytest.mark.parametrize(
    "value, kw, match",
    [
        (3.5, {}, r"^n must be an integer, got 3\.5$"),
        ("3", {}, r"^n must be an integer, got '3'$"),
        (None, {}, r"^n must be an integer, got None$"),
        (float("nan"), {}, r"^n must be an integer, got nan$"),
        (float("inf"), {}, r"^n must be an integer, got inf$"),
        (True, {}, r"^n must be an integer, got True$"),
        (False, {}, r"^n must be an integer, got False$"),
        (1, {"minimum": 2}, r"^n must be >= 2, got 1$"),
        (11, {"maximum": 10}, r"^n must be <= 10, got 11$"),
    ],
)
def test_check_int_errors(value, kw, match):
    with pytest.raises(ValueError, match=match):
        check_int(value, "n", **kw)


# --------------------------------------------------------------------------- check_float
def test_check_float_accepts_reals():
    assert check_float(1, "t") == 1.0
    assert type(check_float(np.float32(0.5), "t")) is float
    assert check_float(0.0, "t", minimum=0.0) == 0.0
    assert check_float(2.0, "t", maximum=2.0) == 2.0


@pytest.mark.parametrize(
    "value, kw, match",
    [
        ("1", {}, r"^t must be a real number, got '1'$"),
        (True, {}, r"^t must be a real number, got True$"),
        (None, {}, r"^t must be a real number, got None$"),
        (1 + 2j, {}, r"^t must be a real number, got \(1\+2j\)$"),
        (float("nan"), {}, r"^t must be finite, got nan$"),
        (float("-inf"), {}, r"^t must be finite, got -inf$"),
        (-0.5, {"minimum": 0.0}, r"^t must be >= 0\.0, got -0\.5$"),
        (0.0, {"minimum": 0.0, "strict_minimum": True}, r"^t must be > 0\.0, got 0\.0$"),
        (3.0, {"maximum": 2.0}, r"^t must be <= 2\.0, got 3\.0$"),
    ],
)
def test_check_float_errors(value, kw, match):
    with pytest.raises(ValueError, match=match):
        check_float(value, "t", **kw)


# --------------------------------------------------------------------------- check_points
def test_check_points_returns_contiguous_float64():
    X = np.asfortranarray(np.arange(12, dtype=np.int16).reshape(4, 3))
    out = check_points(X)
    assert out.dtype == np.float64 and out.flags.c_contiguous
    np.testing.assert_array_equal(out, X)
    out = check_points([[1, 2], [3, 4]])
    assert out.shape == (2, 2)


@pytest.mark.parametrize(
    "X, kw, match",
    [
        (np.zeros(5), {}, r"^X must be 2-D of shape \(n_points, n_dims\), got 1-D with 5 values; use X\.reshape"),
        (np.zeros((2, 2, 2)), {}, r"^X must be 2-D of shape \(n_points, n_dims\), got shape \(2, 2, 2\)$"),
        (np.zeros((3, 0)), {}, r"^X must have at least one column, got shape \(3, 0\)$"),
        (np.zeros((2, 2)), {"min_points": 3}, r"^X must have at least 3 points, got 2$"),
        ([["a", "b"]], {}, r"^X must be a numeric array of shape \(n_points, n_dims\)"),
        ([[1.0, 2.0], [3.0]], {}, r"^X must be a numeric array of shape \(n_points, n_dims\)"),
        ([[0.0, 1.0], [2.0, np.nan]], {}, r"^X contains NaN values \(first at row 1\)$"),
        ([[0.0, 1.0], [2.0, 3.0], [np.inf, 0.0]], {}, r"^X contains infinite values \(first at row 2\)$"),
        # NumPy casts complex to float with a warning only, dropping the imaginary parts
        (np.ones((3, 2)) * 1j, {}, r"^X must hold real numbers, got dtype complex128$"),
        ([[1, 2], [3, 4j]], {}, r"^X must hold real numbers, got dtype complex128$"),
    ],
)
def test_check_points_errors(X, kw, match):
    with pytest.raises(ValueError, match=match):
        check_points(X, **kw)


def test_check_points_uses_given_name():
    with pytest.raises(ValueError, match=r"^Z contains NaN"):
        check_points([[np.nan]], name="Z")


# --------------------------------------------------------------------------- check_triplets
def test_check_triplets_infers_n_items_and_index_dtype():
    T, n = check_triplets([[0, 1, 2], [4, 3, 1]])
    assert n == 5
    assert T.dtype == np.int32 and T.flags.c_contiguous and T.shape == (2, 3)
    np.testing.assert_array_equal(T, [[0, 1, 2], [4, 3, 1]])


def test_check_triplets_accepts_integral_floats_and_explicit_n_items():
    T, n = check_triplets(np.array([[0.0, 1.0, 2.0]]), n_items=10)
    assert n == 10 and T.dtype.kind == "i"
    np.testing.assert_array_equal(T, [[0, 1, 2]])
    T, n = check_triplets(np.array([[2, 1, 0]], dtype=np.uint64), n_items=np.int64(3))
    assert n == 3 and T.dtype.kind == "i"


@pytest.mark.parametrize(
    "T, kw, match",
    [
        (np.array([[0, 1, None]], dtype=object), {},
         r"^triplets has a missing value at row 0: drop or fill the rows with missing values \(pandas: \.dropna\(\)\)$"),
        (np.array([[0, 1, 2], [0, 1, "2"]], dtype=object), {},
         r"^triplets must be an integer array of shape \(m, 3\), got str values \(first at row 1: '2'\)$"),
        ([[0, 1, 2], [3, 4]], {}, r"^triplets must be an integer array of shape \(m, 3\), got ragged rows$"),
        (np.zeros((4, 2), dtype=int), {}, r"^triplets must have shape \(m, 3\), got \(4, 2\)$"),
        (np.arange(3), {}, r"^triplets must have shape \(m, 3\), got \(3,\)$"),
        (np.zeros((0, 3), dtype=int), {}, r"^triplets is empty: at least one triplet is needed$"),
        ([[0.0, 1.0, 2.0], [0.0, 1.0, np.nan]], {},
         r"^triplets has a missing value \(NaN\) at row 1: drop or fill the rows with missing values \(pandas: "
         r"\.dropna\(\)\)$"),
        ([[0.0, 1.0, 2.0], [1.0, 2.0, 3.0], [np.inf, 1.0, 2.0]], {},
         r"^triplets has an infinite value at row 2: drop or fill the rows with missing values \(pandas: \.dropna\(\)\)$"),
        ([[0.0, 1.0, 2.0], [0.0, 1.5, 2.0]], {},
         r"^triplets must hold integer item indices, got non-integer values \(first at row 1: \[0\.0, 1\.5, 2\.0\]\)$"),
        (None, {}, r"^triplets is None: pass an integer array of shape \(m, 3\) \(list-order: i is closer to j than to "
                   r"k\) or what loe_viz\.read_triplets returns$"),
        (np.array([[True, False, True]]), {}, r"^triplets must hold integer item indices, got dtype bool$"),
        ([["a", "b", "c"]], {}, r"^triplets must hold integer item indices, got dtype <U1$"),
        ([[0, 1, 2], [3, -1, 2]], {}, r"^triplets contains a negative index \(-1\) at row 1$"),
        ([[0, 1, 2], [0, 1, 7], [9, 1, 2]], {"n_items": 8},
         r"^triplets index 9 is out of range for n_items=8 \(first at row 2\)$"),
        ([[0, 1, 2], [0, 1, 8], [9, 1, 2]], {"n_items": 8},  # the first one and its row, then the largest
         r"^triplets index 8 is out of range for n_items=8 \(first at row 1; the largest is 9\)$"),
        ([[0, 1, 2], [3, -1, 2], [0, -5, 1]], {}, r"^triplets contains a negative index \(-1\) at row 1; the smallest is -5$"),
        ([[0, 1, 2]], {"n_items": 2}, r"^n_items must be >= 3, got 2$"),
        ([[0, 0, 1]], {}, r"^triplets row 0 repeats an item \(0\): \(0, 0, 1\); a triplet needs three distinct items$"),
        ([[0, 1, 1]], {}, r"^triplets row 0 repeats an item \(1\): \(0, 1, 1\); a triplet needs three distinct items$"),
        (np.array([[0, 1, 2**63]], dtype=np.uint64), {},
         r"^triplets index 9223372036854775808 is too large for an item index \(at most 2\*\*63 - 1; first at row 0\)$"),
        ([[0, 1, 2]], {"n_items": 3.5}, r"^n_items must be an integer, got 3\.5$"),
        ([[0, 1, 2], [0, 2, 2], [3, 3, 1]], {},
         r"^triplets row 1 repeats an item \(2\): \(0, 2, 2\); a triplet needs three distinct items$"),
        ([[5, 1, 5]], {}, r"^triplets row 0 repeats an item \(5\): \(5, 1, 5\)"),
    ],
)
def test_check_triplets_errors(T, kw, match):
    with pytest.raises(ValueError, match=match):
        check_triplets(T, **kw)


def test_check_triplets_uses_given_name():
    with pytest.raises(ValueError, match=r"^held_out is empty"):
        check_triplets(np.zeros((0, 3), dtype=int), name="held_out")


@pytest.mark.parametrize("where", ["first half", "second half", "both halves"])
def test_check_triplets_scanned_in_two_halves_gives_the_same_answers_and_rows(where, monkeypatch):
    import loe_viz._threads as threads_mod
    import loe_viz._validation as validation

    monkeypatch.setattr(threads_mod, "_WARM", set())  # the first call warms the kernel, the next run side by side
    monkeypatch.setattr(validation, "PARALLEL_SCAN_MIN", 64)
    rng = np.random.default_rng(3)
    T = np.column_stack([rng.permutation(600)[:3] for _ in range(301)]).T.astype(np.int64)  # 301 rows, odd
    for _ in range(2):
        got, n = check_triplets(T, threads=2)
        assert n == T.max() + 1
        np.testing.assert_array_equal(got, T)
    rows = {"first half": [40], "second half": [250], "both halves": [120, 151]}[where]
    bad = T.copy()
    for r in rows:
        bad[r, 2] = bad[r, 0]
    neg, big = T.copy(), T.copy()
    neg[rows, 1], big[rows, 1] = -4, 10**6
    for arr, kw in ((bad, {}), (neg, {}), (big, {"n_items": 600})):
        with pytest.raises(ValueError) as serial:
            check_triplets(arr, **kw)
        with pytest.raises(ValueError) as halves:
            check_triplets(arr, threads=2, **kw)
        assert str(halves.value) == str(serial.value)
        assert f"row {rows[0]}" in str(serial.value)


def test_uint64_indices_below_the_int64_limit_are_read_as_they_are():
    T, n = check_triplets(np.array([[0, 1, 2], [2, 1, 0]], dtype=np.uint64))
    assert n == 3 and T.tolist() == [[0, 1, 2], [2, 1, 0]]


# --------------------------------------------------------------------------- check_n_jobs
def test_check_n_jobs():
    assert check_n_jobs(1) == 1 and check_n_jobs(1024) == 1024
    assert check_n_jobs(-1) >= 1
    with pytest.raises(ValueError, match=r"^n_jobs must be <= 1024 threads, got 1000000000000000000000000000000$"):
        check_n_jobs(10**30)
    with pytest.raises(ValueError, match=r"^n_jobs must be a positive number of threads or -1 \(every core\), got 0$"):
        check_n_jobs(0)
    with pytest.raises(ValueError, match=r"^n_jobs must be >= -1, got -2$"):
        check_n_jobs(-2)


# --------------------------------------------------------------------------- check_regularization
def test_check_regularization():
    assert check_regularization(0.0) == 0.0 and check_regularization(1e-50) == 1e-50
    with pytest.raises(ValueError, match=(r"^regularization must be 0 or at least 1e-50 \(smaller values overflow the "
                                          r"ranking's Newton solver for items a landmark never compared\), got 1e-300$")):
        check_regularization(1e-300)
    with pytest.raises(ValueError, match=r"^regularization must be >= 0.0, got -1.0$"):
        check_regularization(-1.0)


@pytest.mark.parametrize("Est", ["LOE", "STE", "LOESTE"])
def test_a_stray_huge_index_is_refused_before_any_per_item_array(monkeypatch, Est):
    import loe_viz
    from loe_viz import resources

    monkeypatch.setattr(resources, "available_memory", lambda: 8 << 30)  # 8 GiB, whatever this machine has
    T = np.array([[0, 1, 2], [1, 2, 0], [0, 3, 1_500_000_000]])
    est = getattr(loe_viz, Est)()
    with pytest.raises(ValueError) as info:
        est.fit(T)
    if Est == "LOE":  # the floor of every fit
        assert str(info.value) == (
            "n_items=1,500,000,001 (the largest index + 1) needs at least 44.7 GiB for the items' own arrays, more "
            "than the 8.0 GiB of memory available; items are indices 0..n_items-1, so map sparse ids to 0..k-1 "
            "first (read_triplets does)")
        with pytest.raises(ValueError, match=r"^n_items=400,000,000 \(as given\) needs at least 11.9 GiB"):
            est.fit(T[:2], n_items=400_000_000)
    else:  # STE (and LOE-STE's STE stage) know their own bytes per item, 20 times the floor at d = 2
        who = "STE" if Est == "STE" else "LOE-STE's STE stage"
        assert str(info.value).startswith(
            "n_items=1,500,000,001 (the largest index + 1; index 1,500,000,000 is in row 2) needs about 922.0 GiB "
            f"for {who} at n_components=2 (660 B per item), more than the 8.0 GiB of memory available; only 5 of "
            "the items")
        with pytest.raises(ValueError, match=r"^n_items=400,000,000 \(as given; the largest index is 2\) needs "
                                             r"about 245\.9 GiB"):
            est.fit(T[:2], n_items=400_000_000)
    assert not hasattr(est, "embedding_")


def test_the_item_memory_check_leaves_other_uses_and_small_fits_alone(monkeypatch):
    from loe_viz import resources

    looked = []
    monkeypatch.setattr(resources, "available_memory", lambda: looked.append(1) or 1 << 20)  # 1 MiB
    T = np.array([[0, 1, 2], [0, 3, 1_500_000_000]])
    assert check_triplets(T)[1] == 1_500_000_001  # not a fit (e.g. writing a file): no limit
    assert check_triplets(T[:1], n_items=30_000_000, fit=True)[1] == 30_000_000  # 0.9 GiB: no look
    assert looked == []


@pytest.mark.filterwarnings("ignore::loe_viz.LOEWarning")  # six items: LOE says they are few
def test_what_read_triplets_returns_is_fitted_with_its_items():
    """LOE().fit(read_triplets(path)) said 'triplets must be an integer array of shape (m, 3), got objects'."""
    import io

    import loe_viz as lv

    data = lv.read_triplets(io.StringIO("0,1,2\n1,2,3\n2,3,0\n3,0,1\n0,2,3\n1,3,0\n"), n_items=6)  # 4, 5 unseen
    T, n = check_triplets(data)
    assert n == 6 and T.tolist() == data.triplets.tolist()
    assert check_triplets(data, n_items=6)[1] == 6
    with pytest.raises(ValueError) as info:
        check_triplets(data, n_items=7)
    assert str(info.value) == ("n_items=7 does not match the 6 items read from <buffer>; leave n_items out to "
                               "use them")
    for est in (lv.LOE(n_landmarks=4, n_components=1), lv.STE(random_state=0)):
        assert est.fit(data).embedding_.shape[0] == 6  # the unseen items too, as with n_items=data.n_items
    assert lv.triplet_accuracy(est.embedding_, data) == lv.triplet_accuracy(est.embedding_, data.triplets)


@pytest.mark.parametrize("dtype", [">i4", ">i8", ">u2", "<i4"])
def test_big_endian_triplets_are_taken_in_native_order(dtype):
    """Triplets from FITS or HDF5 files are often big-endian: every fit, triplet_accuracy and write_triplets ended
    in numba's TypingError ('non-precise type pyobject')."""
    import loe_viz as lv

    X = lv.make_points("gaussian", 60, random_state=0)
    T = lv.TripletOracle(X, random_state=1).uniform_triplets(2000)
    out, n = check_triplets(T.astype(dtype))
    assert out.dtype.isnative and n == 60 and np.array_equal(out, T)
    assert lv.triplet_accuracy(X, T.astype(dtype)) == lv.triplet_accuracy(X, T)
    Z = lv.STE(random_state=5, max_iter=30).fit(T.astype(dtype)).embedding_
    assert np.array_equal(Z, lv.STE(random_state=5, max_iter=30).fit(T).embedding_)


def test_a_pandas_nullable_integer_frame_is_read_as_its_integers():
    """read_csv(dtype_backend="numpy_nullable") gives 'Int64' columns, which NumPy holds as objects: every
    estimator said 'got objects' of integer data."""
    pd = pytest.importorskip("pandas")
    T = np.array([[0, 1, 2], [3, 2, 1], [1, 0, 3]])
    got, n = check_triplets(pd.DataFrame(T, dtype="Int64"))
    np.testing.assert_array_equal(got, T)
    assert n == 4 and got.dtype.kind == "i"
    frame = pd.DataFrame(T, dtype="Int64")
    frame.iloc[2, 1] = pd.NA
    with pytest.raises(ValueError, match=r"^triplets has a missing value at row 2: drop or fill"):
        check_triplets(frame)
    mixed = pd.DataFrame({"h": pd.array(T[:, 0], dtype="Int64"), "j": T[:, 1], "k": T[:, 2]})
    np.testing.assert_array_equal(check_triplets(mixed)[0], T)
