"""The simulated triplet oracle: sampling design, noise model, reproducibility."""

import math
import re

import numpy as np
import pytest
from scipy.stats import chisquare

from loe_viz._validation import check_random_state
from loe_viz.oracle import TripletOracle, total_budget
from loe_viz.points import make_points


def sqd(X, a, b):
    return np.sum((X[a] - X[b]) ** 2, axis=-1)


@pytest.fixture(scope="module")
def X():
    return make_points("gaussian", 60, d=3, random_state=101)


# --------------------------------------------------------------------------- budget
def test_total_budget_is_floor_c_n_ln_n():
    for n, c in [(1000, 50), (1000, 200), (2, 1), (12345, 0.5), (100000, 50)]:
        assert total_budget(n, c) == math.floor(c * n * math.log(n))
    assert isinstance(total_budget(10, 2), int)


@pytest.mark.parametrize(
    "n, c, match",
    [(1, 5, r"^n must be >= 2, got 1$"), (10, 0, r"^c must be > 0\.0, got 0\.0$"),
     (10, -1.0, r"^c must be > 0\.0, got -1\.0$"), (10, "a", r"^c must be a real number")],
)
def test_total_budget_errors(n, c, match):
    with pytest.raises(ValueError, match=match):
        total_budget(n, c)


# --------------------------------------------------------------------------- landmark triplets
def test_landmark_triplets_shape_heads_and_items(X):
    lm = [7, 0, 59, 31, 12]
    o = TripletOracle(X, random_state=1)
    T = o.landmark_triplets(lm, per_landmark=400)
    assert T.shape == (5 * 400, 3) and T.dtype == np.int32
    # grouped by landmark, in the given order
    np.testing.assert_array_equal(T[:, 0], np.repeat(lm, 400))
    assert ((T >= 0) & (T < 60)).all()
    assert (T[:, 0] != T[:, 1]).all() and (T[:, 0] != T[:, 2]).all() and (T[:, 1] != T[:, 2]).all()
    assert o.n_items == 60 and o.n_dims == 3 and o.temperature == 1.0
    assert repr(o) == "TripletOracle(n_items=60, n_dims=3, temperature=1.0)"


def test_landmark_pairs_are_uniform_over_other_items():
    # n = 6, head 2: the 10 unordered pairs of {0, 1, 3, 4, 5} equally likely
    Xs = make_points("uniform", 6, d=2, random_state=3)
    T = TripletOracle(Xs, random_state=5).landmark_triplets([2], per_landmark=30000)
    assert not (T[:, 1:] == 2).any()
    pairs = np.sort(T[:, 1:], axis=1)
    keys, counts = np.unique(pairs[:, 0] * 6 + pairs[:, 1], return_counts=True)
    assert keys.size == 10
    assert chisquare(counts).pvalue > 1e-4


@pytest.mark.parametrize("n", [3, 4, 17])
def test_noiseless_answers_are_always_correct(n):
    Xs = make_points("gaussian", n, d=2, random_state=n)
    o = TripletOracle(Xs, temperature=0.0, random_state=9)
    lm = np.arange(min(n, 5))
    for T in (o.landmark_triplets(lm, per_landmark=500), o.uniform_triplets(3000)):
        assert (sqd(Xs, T[:, 0], T[:, 1]) < sqd(Xs, T[:, 0], T[:, 2])).all()


def test_noisy_answers_are_sometimes_wrong_and_mostly_right(X):
    T = TripletOracle(X, temperature=0.05, random_state=2).uniform_triplets(20000)
    right = np.mean(sqd(X, T[:, 0], T[:, 1]) < sqd(X, T[:, 0], T[:, 2]))
    assert 0.6 < right < 0.995


def _rate_bound(p, m):
    return 5.0 * math.sqrt(p * (1 - p) / m) + 1e-9


@pytest.mark.parametrize("T", [0.5, 1.0, 2.0])
def test_answer_rate_matches_logistic_model(T):
    # three items: the only query about head 0 is the pair {1, 2}
    Xs = np.array([[0.0, 0.0], [0.6, 0.0], [0.0, 1.1]])
    delta = sqd(Xs, 0, 2) - sqd(Xs, 0, 1)  # D_ik - D_ij for j = 1, k = 2
    p = 1.0 / (1.0 + math.exp(-delta / T))
    m = 40000
    o = TripletOracle(Xs, temperature=T, random_state=int(T * 10))
    L = o.landmark_triplets([0], per_landmark=m)
    rate = np.mean(L[:, 1] == 1)
    assert abs(rate - p) < _rate_bound(p, m)
    # the same law for uniformly drawn triplets headed by 0
    U = o.uniform_triplets(3 * m)
    U = U[U[:, 0] == 0]
    rate_u = np.mean(U[:, 1] == 1)
    assert abs(rate_u - p) < _rate_bound(p, U.shape[0])


@pytest.mark.parametrize("scale", [1e200, 1e-200, 1e160, 1e-160, 1e300, 1e-300])
def test_noiseless_answers_are_right_at_any_scale(scale):
    """Squared distances of points near 1e200 overflowed (inf - inf) and near 1e-200 vanished (0 == 0): a
    noiseless oracle answered at chance."""
    Xs = make_points("gaussian", 50, d=2, random_state=4)
    o = TripletOracle(Xs * scale, temperature=0.0, random_state=9)
    for T in (o.landmark_triplets([0, 1, 2], per_landmark=500), o.uniform_triplets(3000)):
        assert (sqd(Xs, T[:, 0], T[:, 1]) < sqd(Xs, T[:, 0], T[:, 2])).all()
    near, far = o.block_comparisons(0, np.arange(1, 20), 500, seed=5)
    assert (sqd(Xs, 0, near) < sqd(Xs, 0, far)).all()
    np.testing.assert_array_equal(o.X, Xs * scale)  # the caller's points, as given


def test_a_huge_scale_and_temperature_give_the_answers_of_their_ratio():
    """Points near 1e157 with temperature 1: the noise is nothing beside distances of 1e314 (noiseless); points
    near 1e-157: distances of 1e-314 are nothing beside it (coin flips), as the model says."""
    Xs = make_points("gaussian", 50, d=2, random_state=4)
    T = TripletOracle(Xs * 1e157, temperature=1.0, random_state=9).uniform_triplets(3000)
    assert (sqd(Xs, T[:, 0], T[:, 1]) < sqd(Xs, T[:, 0], T[:, 2])).all()
    T = TripletOracle(Xs * 1e-157, temperature=1.0, random_state=9).uniform_triplets(20000)
    right = np.mean(sqd(Xs, T[:, 0], T[:, 1]) < sqd(Xs, T[:, 0], T[:, 2]))
    assert abs(right - 0.5) < _rate_bound(0.5, 20000)


@pytest.mark.parametrize("k", [400, -400])
def test_rescaled_points_give_the_same_answers_bit_for_bit(k):
    """Points beyond 2**256 (or below 2**-256) are compared divided by a power of two, which changes no digit: the
    answers are those of the points at their usual scale, noise included."""
    Xs = make_points("gaussian", 300, d=3, random_state=2)
    a = TripletOracle(Xs, temperature=0.5, random_state=7)
    b = TripletOracle(np.ldexp(Xs, k), temperature=float(np.ldexp(0.5, 2 * k)), random_state=7)
    np.testing.assert_array_equal(a.landmark_triplets([4, 8], 2000), b.landmark_triplets([4, 8], 2000))
    np.testing.assert_array_equal(a.uniform_triplets(5000), b.uniform_triplets(5000))
    for x, y in zip(a.block_comparisons(3, np.arange(10, 60), 2000, seed=5),
                    b.block_comparisons(3, np.arange(10, 60), 2000, seed=5)):
        np.testing.assert_array_equal(x, y)
    for x, y in zip(a.comparisons(3, 4000, seed=6, tiled=True), b.comparisons(3, 4000, seed=6, tiled=True)):
        np.testing.assert_array_equal(x, y)


def test_ties_are_broken_at_random_without_noise():
    Xs = np.array([[0.0], [-1.0], [1.0]])  # D_01 == D_02
    L = TripletOracle(Xs, temperature=0.0, random_state=4).landmark_triplets([0], per_landmark=20000)
    assert abs(np.mean(L[:, 1] == 1) - 0.5) < _rate_bound(0.5, 20000)


# --------------------------------------------------------------------------- uniform triplets
def test_uniform_triplets_shape_and_head_coverage():
    n, m = 20, 60000
    Xs = make_points("gaussian", n, d=2, random_state=0)
    T = TripletOracle(Xs, random_state=3).uniform_triplets(m)
    assert T.shape == (m, 3) and T.dtype == np.int32
    assert ((T >= 0) & (T < n)).all()
    assert (T[:, 0] != T[:, 1]).all() and (T[:, 0] != T[:, 2]).all() and (T[:, 1] != T[:, 2]).all()
    heads = np.bincount(T[:, 0], minlength=n)
    assert chisquare(heads).pvalue > 1e-4
    assert heads.min() > 0.8 * m / n and heads.max() < 1.2 * m / n
    # every item also appears in the pair positions about equally often
    members = np.bincount(T[:, 1:].ravel(), minlength=n)
    assert members.min() > 0.8 * 2 * m / n and members.max() < 1.2 * 2 * m / n


# --------------------------------------------------------------------------- reproducibility
def test_same_seed_same_sequence_of_calls(X):
    a, b = TripletOracle(X, random_state=42), TripletOracle(X, random_state=42)
    a1, a2 = a.landmark_triplets([1, 2, 3], 200), a.uniform_triplets(500)
    b1, b2 = b.landmark_triplets([1, 2, 3], 200), b.uniform_triplets(500)
    np.testing.assert_array_equal(a1, b1)
    np.testing.assert_array_equal(a2, b2)
    # successive calls draw fresh queries
    assert not np.array_equal(a1, a.landmark_triplets([1, 2, 3], 200))
    assert not np.array_equal(a2, a.uniform_triplets(500))


def test_different_seeds_differ(X):
    a = TripletOracle(X, random_state=1).landmark_triplets([0, 1], 300)
    b = TripletOracle(X, random_state=2).landmark_triplets([0, 1], 300)
    assert not np.array_equal(a, b)
    assert not np.array_equal(TripletOracle(X, random_state=1).uniform_triplets(300),
                              TripletOracle(X, random_state=2).uniform_triplets(300))


def test_seedsequence_and_generator_random_states(X):
    a = TripletOracle(X, random_state=np.random.SeedSequence(8)).uniform_triplets(100)
    b = TripletOracle(X, random_state=np.random.SeedSequence(8)).uniform_triplets(100)
    np.testing.assert_array_equal(a, b)
    g1 = TripletOracle(X, random_state=np.random.default_rng(8)).uniform_triplets(100)
    g2 = TripletOracle(X, random_state=np.random.default_rng(8)).uniform_triplets(100)
    np.testing.assert_array_equal(g1, g2)


def test_a_numpy_random_state_is_taken_as_the_estimators_take_it(X):
    """TripletOracle refused np.random.RandomState, which LOE, STE and make_points take (check_random_state)."""
    a = TripletOracle(X, random_state=np.random.RandomState(3)).uniform_triplets(200)
    b = TripletOracle(X, random_state=np.random.RandomState(3)).uniform_triplets(200)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, TripletOracle(X, random_state=np.random.RandomState(4)).uniform_triplets(200))
    # as a Generator that check_random_state makes of it
    g = check_random_state(np.random.RandomState(3))
    np.testing.assert_array_equal(a, TripletOracle(X, random_state=g).uniform_triplets(200))


@pytest.mark.parametrize("bad", ["x", True, np.bool_(False), 1.5, float("nan"), [1, 2], object()])
def test_a_random_state_is_refused_as_the_estimators_refuse_it(X, bad):
    with pytest.raises(ValueError) as ours:
        TripletOracle(X, random_state=bad)
    with pytest.raises(ValueError) as theirs:
        check_random_state(bad)
    assert str(ours.value) == str(theirs.value)


def test_comparisons_are_a_pure_function_of_the_seed(X):
    # a worker holding only (X, T, head, m, seed) reproduces a landmark's block
    o = TripletOracle(X, temperature=0.5, random_state=77)
    seeds = TripletOracle(X, random_state=77).next_seeds(2)
    T = o.landmark_triplets([5, 9], per_landmark=250)
    other = TripletOracle(X, temperature=0.5, random_state=0)
    for c, (head, seed) in enumerate(zip([5, 9], seeds)):
        near, far = other.comparisons(head, 250, seed)
        np.testing.assert_array_equal(T[c * 250:(c + 1) * 250, 1], near)
        np.testing.assert_array_equal(T[c * 250:(c + 1) * 250, 2], far)
    n1, f1 = other.comparisons(5, 100, 123)
    n2, f2 = other.comparisons(5, 100, 123)
    np.testing.assert_array_equal(n1, n2)
    np.testing.assert_array_equal(f1, f2)


# --------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    "kw, match",
    [
        ({"temperature": -0.1}, r"^temperature must be >= 0\.0, got -0\.1$"),
        ({"temperature": float("nan")}, r"^temperature must be finite, got nan$"),
        ({"random_state": -1}, r"^random_state must be a non-negative integer, got -1$"),
        ({"random_state": "x"}, r"^random_state must be None, an int, a SeedSequence, a numpy Generator or a "
                                r"RandomState, got str 'x'$"),
        ({"random_state": True}, r"^random_state must be None, an int, a SeedSequence, a numpy Generator or a "
                                 r"RandomState, got bool True$"),
        ({"memory_limit": "lots"}, r"^memory_limit must be None, a number of bytes, a size such as '8GiB'"),
        ({"memory_limit": 0}, r"^memory_limit must be a positive number of bytes, got 0$"),
    ],
)
def test_oracle_constructor_errors(X, kw, match):
    with pytest.raises(ValueError, match=match):
        TripletOracle(X, **kw)


@pytest.mark.parametrize(
    "Xbad, match",
    [
        (np.zeros((2, 2)), r"^X must have at least 3 points, got 2$"),
        (np.zeros(5), r"^X must be 2-D"),
        ([[0.0], [1.0], [np.nan]], r"^X contains NaN values \(first at row 2\)$"),
    ],
)
def test_oracle_bad_points(Xbad, match):
    with pytest.raises(ValueError, match=match):
        TripletOracle(Xbad)


@pytest.mark.parametrize(
    "landmarks, per, match",
    [
        ([], 10, r"^landmarks must be a non-empty 1-D sequence of item indices, got shape \(0,\)$"),
        ([[0, 1]], 10, r"^landmarks must be a non-empty 1-D sequence of item indices, got shape \(1, 2\)$"),
        ([0.0, 1.5], 10, r"^landmarks must hold integer item indices, got non-integer values$"),
        ([0.0, np.nan], 10, r"^landmarks must hold integer item indices, got non-integer values$"),
        ([0.0, 1e30], 10, r"^landmarks index 1000000000000000019884624838656 is out of range for 60 items$"),
        (["0", "1"], 10, r"^landmarks must hold integer item indices, got dtype <U1$"),
        ([True, False], 10, r"^landmarks must hold integer item indices, got dtype bool$"),
        ({0, 1, 2}, 10, r"^landmarks must list item indices in column order \(a list, tuple or array\), got a set$"),
        ("012", 10, r"^landmarks must list item indices in column order \(a list, tuple or array\), got a str$"),
        ([0, 60], 10, r"^landmarks index 60 is out of range for 60 items$"),
        ([-1, 3], 10, r"^landmarks index -1 is out of range for 60 items$"),
        ([3, 4, 3], 10, r"^landmarks must be distinct items, got 3 more than once$"),
        ([0, 1], 0, r"^per_landmark must be >= 1, got 0$"),
        ([0, 1], 2.5, r"^per_landmark must be an integer, got 2\.5$"),
    ],
)
def test_landmark_triplets_errors(X, landmarks, per, match):
    with pytest.raises(ValueError, match=match):
        TripletOracle(X, random_state=0).landmark_triplets(landmarks, per)


def test_landmarks_written_as_whole_floats_are_indices_as_in_loe(X):
    """The oracle reads landmarks as LOE and check_triplets do: 2.0 is item 2 (a column read from a CSV)."""
    as_float = TripletOracle(X, random_state=0).landmark_triplets([0.0, 5.0, 2.0], 10)
    as_int = TripletOracle(X, random_state=0).landmark_triplets([0, 5, 2], 10)
    np.testing.assert_array_equal(as_float, as_int)


def test_uniform_triplets_errors(X):
    with pytest.raises(ValueError, match=r"^m must be >= 1, got 0$"):
        TripletOracle(X).uniform_triplets(0)


def test_a_request_beyond_the_memory_limit_is_refused_before_anything_is_drawn(X):
    """uniform_triplets(10**12) asked NumPy for 10.9 TiB (a bare MemoryError, or with a smaller request memory the
    machine has not got); landmark_triplets used up seeds first."""
    o = TripletOracle(X, random_state=5, memory_limit="1GiB")
    with pytest.raises(ValueError, match=(
            r"^memory_limit exceeded: uniform_triplets\(m=1,000,000,000,000\) needs 10\.9 TiB \(an int32 table of "
            r"shape \(1,000,000,000,000, 3\)\), more than the limit of 1\.0 GiB \(memory_limit='1GiB'\)\. Draw fewer "
            r"triplets at a time, or raise the oracle's memory_limit \(float\('inf'\) turns the check off\)\.$")):
        o.uniform_triplets(10**12)
    with pytest.raises(ValueError, match=(
            r"^memory_limit exceeded: landmark_triplets of 2 landmark\(s\) with per_landmark=1,000,000,000,000 needs "
            r"29\.1 TiB \(an int32 table of shape \(2,000,000,000,000, 3\) and 7\.3 TiB beside it\), more than the "
            r"limit of 1\.0 GiB \(memory_limit='1GiB'\)\. Draw fewer comparisons per landmark, or fewer landmarks")):
        o.landmark_triplets([0, 1], 10**12)
    # nothing was drawn: the next calls are a fresh oracle's
    fresh = TripletOracle(X, random_state=5)
    np.testing.assert_array_equal(o.landmark_triplets([0, 1], 50), fresh.landmark_triplets([0, 1], 50))
    np.testing.assert_array_equal(o.uniform_triplets(100), fresh.uniform_triplets(100))


def test_by_default_a_request_beyond_most_of_the_available_memory_is_refused(X):
    """Without a memory_limit, NumPy was asked for the table: a bare MemoryError for 10.9 TiB, and a table that
    fits the address space but not the memory (e.g. 95% of it) was drawn until the system killed the process."""
    with pytest.raises(ValueError, match=r"^memory_limit exceeded: uniform_triplets\(m=1,000,000,000,000\) needs "
                                         r"10\.9 TiB .*\(80% of the [\d.]+ [KMGT]iB available\)"):
        TripletOracle(X).uniform_triplets(10**12)
    with pytest.raises(ValueError, match=r"^memory_limit exceeded: landmark_triplets of 3 landmark\(s\) with "
                                         r"per_landmark=1,000,000,000,000 needs"):
        TripletOracle(X).landmark_triplets([0, 1, 2], 10**12)


def test_a_refused_request_allocates_nothing_and_one_within_the_limit_is_drawn(X):
    import tracemalloc

    o = TripletOracle(X, random_state=0, memory_limit="10MB")
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"^memory_limit exceeded: uniform_triplets\(m=2,000,000\) needs 22\.9 MiB"):
            o.uniform_triplets(2_000_000)
        with pytest.raises(ValueError, match=r"^memory_limit exceeded: landmark_triplets of 10 landmark\(s\)"):
            o.landmark_triplets(np.arange(10), 100_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20
    assert o.uniform_triplets(500_000).shape == (500_000, 3)  # 5.7 MiB
    assert o.landmark_triplets(np.arange(10), 50_000).shape == (500_000, 3)  # and two arrays of 50,000 beside it
    assert TripletOracle(X, memory_limit=math.inf).uniform_triplets(100).shape == (100, 3)


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_tiled_comparisons_are_the_same_comparisons_grouped(temperature):
    # Past the tiling threshold the sampler answers tile by tile: the same answered pairs
    # (exactly, coins included), grouped so that each tile's items are contiguous.
    from loe_viz._tiles import tile_shift

    n = 140_000
    shift = tile_shift(n)
    assert shift is not None
    o = TripletOracle(make_points("uniform", n, random_state=5), temperature=temperature, random_state=6)
    near, far = o.comparisons(17, 300_000, seed=99)
    tn, tf = o.comparisons(17, 300_000, seed=99, tiled=True)
    key = lambda a, b: np.sort(a.astype(np.int64) * n + b)  # noqa: E731
    np.testing.assert_array_equal(key(tn, tf), key(near, far))
    tiles = np.minimum(tn, tf) >> shift, np.maximum(tn, tf) >> shift
    lo_tile = tiles[0] * n + tiles[1]
    # each unordered tile (block pair) appears as at most two contiguous runs
    runs = np.count_nonzero(np.diff(lo_tile)) + 1
    assert runs <= 2 * np.unique(lo_tile).size
    # small n: tiled=True changes nothing
    Xs = make_points("uniform", 500, random_state=5)
    a = TripletOracle(Xs, random_state=1).comparisons(3, 1000, seed=4)
    b = TripletOracle(Xs, random_state=1).comparisons(3, 1000, seed=4, tiled=True)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])


# --------------------------------------------------------------------------- the sampler's stream
def _numpy_landmark_comparisons(X, head, m, temperature, seed, pairs=False):
    """A slow NumPy reference of the counter-based stream: three SplitMix64 outputs per comparison
    (j, k, the coin), answered with NumPy's (libm's) exponential; ``pairs``: the drawn (j, k) too."""
    n = X.shape[0]
    with np.errstate(over="ignore"):
        states = np.uint64(seed) + np.uint64(0x9E3779B97F4A7C15) * np.arange(1, 3 * m + 1, dtype=np.uint64)
        z = states
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    z = z.reshape(m, 3)
    j = (((z[:, 0] >> np.uint64(32)) * np.uint64(n - 1)) >> np.uint64(32)).astype(np.int64)
    k = (((z[:, 1] >> np.uint64(32)) * np.uint64(n - 2)) >> np.uint64(32)).astype(np.int64)
    u = (z[:, 2] >> np.uint64(11)).astype(np.float64) * 2.0**-53
    j += j >= head
    lo, hi = np.minimum(head, j), np.maximum(head, j)
    k += k >= lo
    k += k >= hi
    dj = ((X[head] - X[j]) ** 2).sum(axis=1)  # d = 2: the same rounding as the kernel's loop
    dk = ((X[head] - X[k]) ** 2).sum(axis=1)
    if temperature > 0:
        zz = (dk - dj) / temperature
        with np.errstate(over="ignore"):
            e = np.exp(-np.abs(zz))
        p = np.where(zz >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
        closer = u < p
    else:
        closer = np.where(dj == dk, u < 0.5, dj < dk)
    out = np.where(closer, j, k), np.where(closer, k, j)
    return out + (j, k) if pairs else out


@pytest.mark.parametrize("temperature", [0.0, 0.05, 1.0, 30.0])
def test_comparisons_match_a_numpy_reference_of_the_stream(temperature):
    # The sampler evaluates the logistic with its own vectorised exponential and decides coins
    # near the answer probability again with libm's: the answers are exactly libm's, bit for bit.
    Xs = make_points("gaussian", 3000, d=2, random_state=8)
    m = 50_000
    o = TripletOracle(Xs, temperature=temperature, random_state=0)
    near, far = o.comparisons(11, m, seed=2024)
    ref_near, ref_far = _numpy_landmark_comparisons(o.X, 11, m, temperature, 2024)
    np.testing.assert_array_equal(near, ref_near)
    np.testing.assert_array_equal(far, ref_far)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint16])
def test_tiled_sampler_is_the_reference_stream_sorted_by_tile(dtype):
    # The tiled kernel writes the stream's comparisons tile by tile (the tile of the pair as drawn),
    # in the order drawn within a tile, its output lines fetched ahead for writing: exactly a
    # stable sort of the reference stream by tile.
    from loe_viz.kernels import sampling

    Xs = make_points("gaussian", 3000, d=2, random_state=8)
    m, shift = 50_003, 8  # 12 x 12 tiles; m no multiple of a cache line
    near, far = np.empty(m, dtype), np.empty(m, dtype)
    sampling.landmark_comparisons_tiled(Xs, 11, m, 1.0, np.uint64(77), shift, near, far)
    ref_near, ref_far, j, k = _numpy_landmark_comparisons(Xs, 11, m, 1.0, 77, pairs=True)
    nb = ((3000 - 1) >> shift) + 1
    order = np.argsort((j >> shift) * nb + (k >> shift), kind="stable")
    np.testing.assert_array_equal(near, ref_near[order])
    np.testing.assert_array_equal(far, ref_far[order])


def test_vectorised_exponential_against_numpy():
    from loe_viz.kernels.fastexp import expneg as _expneg
    from numba import njit

    @njit
    def many(a):
        out = np.empty_like(a)
        for i in range(a.shape[0]):
            out[i] = _expneg(a[i])
        return out

    a = np.concatenate([np.linspace(0.0, 700.0, 200_001), np.random.default_rng(3).uniform(0, 40, 100_000)])
    rel = np.abs(many(a) - np.exp(-a)) / np.exp(-a)
    assert rel.max() < 3e-16


def test_head_agreement_counts_one_heads_satisfied_comparisons_like_numpy():
    from loe_viz.kernels.sampling import head_agreement

    rng = np.random.default_rng(4)
    Z = rng.integers(-3, 4, size=(40, 2)).astype(np.float64)  # integer points: many ties
    near, far = rng.integers(0, 40, size=(2, 5000)).astype(np.int32)
    for head in (0, 17, 39):
        dn, df = sqd(Z, head, near), sqd(Z, head, far)
        want = np.sum(dn < df) + 0.5 * np.sum(dn == df)
        assert np.sum(dn == df) > 100  # the ties are exercised
        assert head_agreement(Z, head, near, far) == want
    assert head_agreement(Z, 0, near[:0], far[:0]) == 0.0


def test_block_comparisons_and_seeds_are_checked_by_name():
    """Repeated others gave comparisons of an item with itself; a head among others was 'fewer than two items';
    seeds and counts of the wrong kind were NumPy's OverflowError or TypeError, or 1.5 was taken as seed 1."""
    oracle = TripletOracle(make_points("gaussian", 40, random_state=0), random_state=1)
    for others, message in [([1, 1, 2], "others must be distinct items, got 1 more than once"),
                            ([0, 1, 2], "others must not include the head (0): an item is not compared with itself"),
                            ([5], "block comparisons need at least two items other than the head, got 1"),
                            ([1.5, 2, 3], "others must be a 1-D sequence of integer item indices, got float64 of "
                                          "shape (3,)"),
                            ([[1, 2]], "others must be a 1-D sequence of integer item indices, got int64 of shape "
                                       "(1, 2)")]:
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            oracle.block_comparisons(0, others, 10, seed=5)
    near, far = oracle.block_comparisons(0, [1, 2, 3], 200, seed=5)
    assert not np.any(near == far) and set(near) | set(far) == {1, 2, 3}
    for seed in (None, -1, 1.5, True, 2**64, "7"):
        message = f"seed must be an integer in 0..2**64 - 1 (see next_seeds), got {seed!r}"
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            oracle.comparisons(0, 10, seed)
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            oracle.block_comparisons(0, [1, 2], 10, seed)
    for k, message in [(-1, "k must be >= 0, got -1"), (1.5, "k must be an integer, got 1.5")]:
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            oracle.next_seeds(k)
    seeds = oracle.next_seeds(2)
    assert oracle.comparisons(0, 10, seeds[0])[0].shape == (10,) and oracle.comparisons(0, 10, 2**64 - 1)[0].size


def test_comparisons_refuse_a_head_or_budget_outside_the_oracle():
    """comparisons(200, ...) on 200 items answered from the memory past X, comparisons(10**9, ...) crashed the
    interpreter (segmentation fault), a negative budget was NumPy's 'negative dimensions'."""
    oracle = TripletOracle(make_points("gaussian", 200, random_state=0), random_state=1)
    for head, per, message in [(200, 5, "head must be an item index in 0..199, got 200"),
                               (10**9, 5, "head must be an item index in 0..199, got 1000000000"),
                               (-1, 5, "head must be an item index in 0..199, got -1"),
                               (1.5, 5, "head must be an item index (an integer), got 1.5"),
                               (True, 5, "head must be an item index (an integer), got True"),
                               (0, -10, "per_landmark must be >= 0, got -10")]:
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            oracle.comparisons(head, per, seed=1)
    with pytest.raises(ValueError, match=r"^head must be an item index in 0\.\.199, got 500$"):
        oracle.block_comparisons(500, [1, 2, 3], 10, seed=1)
    with pytest.raises(ValueError, match=r"^others must be item indices in 0\.\.199, got 300$"):
        oracle.block_comparisons(0, [1, 2, 300], 10, seed=1)
    short = np.empty(3, dtype=np.int32)
    with pytest.raises(ValueError, match=r"^out must be two writeable contiguous 1-D integer arrays of length 10$"):
        oracle.comparisons(0, 10, seed=1, out=(short, short))  # the kernel wrote 10 entries into 3
    near, far = oracle.comparisons(np.int64(7), np.int64(50), seed=1)  # NumPy integers are indices too
    assert near.shape == far.shape == (50,) and not np.any(near == 7) and near.max() < 200
