"""Embedding quality metrics against scipy and NumPy references."""

import numpy as np
import pytest
from scipy.spatial import procrustes
from scipy.stats import ortho_group

from loe_viz.metrics import align, procrustes_error, sample_rows, triplet_accuracy, triplet_error
from loe_viz.points import make_points


def similarity(X, seed, scale=2.7):
    """A random similarity transform (rotation/reflection, scale, translation) of X."""
    rng = np.random.default_rng(seed)
    Q = ortho_group.rvs(X.shape[1], random_state=seed) if X.shape[1] > 1 else np.array([[-1.0]])
    return scale * X @ Q + rng.normal(size=X.shape[1]) * 5


def reference_accuracy(Z, T):
    dij = np.sum((Z[T[:, 0]] - Z[T[:, 1]]) ** 2, axis=1)
    dik = np.sum((Z[T[:, 0]] - Z[T[:, 2]]) ** 2, axis=1)
    return np.mean(np.where(dij < dik, 1.0, np.where(dij == dik, 0.5, 0.0)))


# --------------------------------------------------------------------------- procrustes_error
@pytest.mark.parametrize("d", [1, 2, 3, 5])
def test_procrustes_error_matches_scipy(d):
    X = make_points("gaussian", 80, d=d, random_state=d)
    Z = X + 0.3 * np.random.default_rng(100 + d).standard_normal(X.shape)
    _, _, disparity = procrustes(X, Z)
    assert procrustes_error(X, Z) == pytest.approx(disparity, rel=1e-10, abs=1e-14)
    W = np.random.default_rng(200 + d).standard_normal(X.shape)
    assert procrustes_error(X, W) == pytest.approx(procrustes(X, W)[2], rel=1e-10)


def test_procrustes_error_of_a_similarity_transform_is_zero():
    X = make_points("swiss_roll", 200, d=3, random_state=0)
    assert procrustes_error(X, similarity(X, 1)) < 1e-12
    assert procrustes_error(similarity(X, 1), X) < 1e-12


def test_procrustes_error_pads_the_smaller_dimension():
    X = make_points("gaussian", 50, d=3, random_state=1)
    Z = make_points("gaussian", 50, d=2, random_state=2)
    Zp = np.hstack([Z, np.zeros((50, 1))])
    assert procrustes_error(X, Z) == pytest.approx(procrustes(X, Zp)[2], rel=1e-10)
    # an embedding in fewer dimensions than the truth loses the third axis
    assert procrustes_error(X, X[:, :2]) == pytest.approx(procrustes(X, np.hstack([X[:, :2], np.zeros((50, 1))]))[2])
    assert procrustes_error(X, X[:, :2]) > 0.05


def test_procrustes_error_range_and_errors():
    X = make_points("gaussian", 30, d=2, random_state=0)
    assert 0.0 <= procrustes_error(X, np.random.default_rng(1).standard_normal((30, 2))) <= 1.0
    with pytest.raises(ValueError, match=r"^Z must have as many rows as X \(30\), got 29$"):
        procrustes_error(X, X[:-1])
    with pytest.raises(ValueError, match=r"^X and Z must each contain more than one distinct point$"):
        procrustes_error(X, np.ones((30, 2)))
    with pytest.raises(ValueError, match=r"^Z contains NaN values \(first at row 0\)$"):
        procrustes_error(X, np.full((30, 2), np.nan))


@pytest.mark.parametrize("sx, sz", [(1e200, 1.0), (1.0, 1e-200), (1e200, 1e-200), (1e-300, 1e300), (1e305, 1e-305)])
def test_procrustes_error_is_the_same_at_any_scale(sx, sz):
    """Sums of squares of coordinates near 1e200 overflowed (the error came out 1.0, "no better than a point"), and
    near 1e-200 vanished ("X and Z must each contain more than one distinct point")."""
    X = make_points("gaussian", 80, d=3, random_state=0)
    Z = X + 0.3 * np.random.default_rng(1).standard_normal(X.shape)
    assert procrustes_error(X * sx, Z * sz) == pytest.approx(procrustes_error(X, Z), rel=1e-9)
    assert procrustes_error(X * sx, similarity(X, 1) * sz) < 1e-12
    # bit for bit where plain arithmetic neither overflows nor vanishes: a power of two changes no digit
    assert procrustes_error(np.ldexp(X, 600), np.ldexp(Z, -600)) == procrustes_error(X, Z)
    with pytest.raises(ValueError, match=r"^X and Z must each contain more than one distinct point$"):
        procrustes_error(X * sx, np.full((80, 3), sz))


# --------------------------------------------------------------------------- align
@pytest.mark.parametrize("d", [1, 2, 4])
def test_align_inverts_a_similarity_transform(d):
    X = make_points("uniform", 100, d=d, random_state=d)
    Z = similarity(X, 10 + d, scale=0.3)
    Za, err = align(X, Z)
    assert Za.shape == X.shape and err.shape == (100,)
    np.testing.assert_allclose(Za, X, atol=1e-10)
    assert err.max() < 1e-10


def test_align_matches_scipy_and_per_point_error():
    X = make_points("moons", 120, d=2, random_state=0)
    Z = X + 0.2 * np.random.default_rng(5).standard_normal(X.shape)
    Z = similarity(Z, 6, scale=4.0)
    Za, err = align(X, Z)
    np.testing.assert_allclose(err, np.linalg.norm(Za - X, axis=1), rtol=1e-12)
    # scipy's standardised pair, mapped back to X's frame
    mtx1, mtx2, _ = procrustes(X, Z)
    mx, nx = X.mean(axis=0), np.linalg.norm(X - X.mean(axis=0))
    np.testing.assert_allclose(mtx1 * nx + mx, X, atol=1e-12)
    np.testing.assert_allclose(Za, mtx2 * nx + mx, atol=1e-10)
    # the aligned estimate is the best similarity: its residual equals the disparity in X's scale
    assert np.sum(err**2) == pytest.approx(procrustes_error(X, Z) * nx**2, rel=1e-9)


@pytest.mark.parametrize("sx, sz", [(1e200, 1.0), (1e-200, 1e200), (1e300, 1e-300)])
def test_align_at_any_scale_is_align_at_the_usual_one_scaled(sx, sz):
    X = make_points("moons", 120, d=2, random_state=0)
    Z = similarity(X + 0.2 * np.random.default_rng(5).standard_normal(X.shape), 6, scale=4.0)
    Za, err = align(X, Z)
    Zb, err_b = align(X * sx, Z * sz)
    np.testing.assert_allclose(Zb / sx, Za, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(err_b / sx, err, rtol=1e-9)


def test_align_lower_dimensional_embedding():
    X = make_points("gaussian", 40, d=3, random_state=3)
    Za, err = align(X, similarity(X[:, :2], 4))
    assert Za.shape == (40, 3)
    assert np.all(np.isfinite(err))


# --------------------------------------------------------------------------- triplet_error
def test_triplet_error_zero_for_similar_embedding():
    X = make_points("gaussian", 500, d=3, random_state=0)
    assert triplet_error(X, similarity(X, 7), random_state=1) == 0.0
    assert triplet_error(X, X, n_test=100, random_state=2) == 0.0


def test_triplet_error_half_for_random_embedding():
    X = make_points("gaussian", 500, d=2, random_state=0)
    Z = make_points("gaussian", 500, d=2, random_state=1)
    e = triplet_error(X, Z, n_test=20000, random_state=2)
    assert abs(e - 0.5) < 0.02


def test_triplet_error_counts_ties_half():
    # a constant embedding ties every triplet
    X = make_points("gaussian", 50, d=2, random_state=0)
    assert triplet_error(X, np.zeros((50, 2)), n_test=500, random_state=0) == pytest.approx(0.5)


def test_triplet_error_grows_with_noise_and_is_reproducible():
    X = make_points("gaussian", 300, d=2, random_state=0)
    rng = np.random.default_rng(9)
    errs = [triplet_error(X, X + s * rng.standard_normal(X.shape), random_state=3) for s in (0.02, 0.1, 0.5)]
    assert 0 < errs[0] < errs[1] < errs[2] < 0.5
    Z = X + 0.1 * rng.standard_normal(X.shape)
    assert triplet_error(X, Z, random_state=4) == triplet_error(X, Z, random_state=4)


@pytest.mark.parametrize("sx, sz", [(1e200, 1.0), (1.0, 1e-200), (1e-200, 1e200), (1e300, 1e-300)])
def test_triplet_error_is_the_same_at_any_scale(sx, sz):
    """Noiseless triplets of points near 1e200 were drawn at chance (their distances overflowed), and an embedding
    near 1e-200 tied every triplet: the error came out 0.5 for a perfect embedding."""
    X = make_points("gaussian", 300, d=2, random_state=0)
    Z = X + 0.1 * np.random.default_rng(9).standard_normal(X.shape)
    assert triplet_error(X * sx, X * sz, random_state=3) == 0.0
    assert triplet_error(X * sx, Z * sz, random_state=3) == pytest.approx(triplet_error(X, Z, random_state=3),
                                                                          abs=2e-3)
    assert triplet_error(np.ldexp(X, 700), np.ldexp(Z, -700), random_state=3) == triplet_error(X, Z, random_state=3)


def test_triplet_error_errors():
    X = make_points("gaussian", 10, d=2, random_state=0)
    with pytest.raises(ValueError, match=r"^n_test must be >= 1, got 0$"):
        triplet_error(X, X, n_test=0)
    with pytest.raises(ValueError, match=r"^Z must have as many rows as X \(10\), got 9$"):
        triplet_error(X, X[:9])
    with pytest.raises(ValueError, match=r"^X must have at least 3 points, got 2$"):
        triplet_error(X[:2], X[:2])


# --------------------------------------------------------------------------- triplet_accuracy
def test_triplet_accuracy_hand_cases():
    Z = np.array([[0.0], [1.0], [3.0], [-1.0]])
    assert triplet_accuracy(Z, [[0, 1, 2]]) == 1.0  # |0-1| < |0-3|
    assert triplet_accuracy(Z, [[0, 2, 1]]) == 0.0
    assert triplet_accuracy(Z, [[0, 1, 3]]) == 0.5  # tie counts half
    assert triplet_accuracy(Z, [[0, 1, 2], [0, 2, 1], [2, 1, 3], [1, 0, 3]]) == pytest.approx(0.75)


def test_triplet_accuracy_matches_reference_on_random_triplets():
    X = make_points("blobs", 200, d=3, random_state=0)
    rng = np.random.default_rng(1)
    T = np.array([rng.choice(200, 3, replace=False) for _ in range(3000)])
    Z = X + 0.3 * rng.standard_normal(X.shape)
    assert triplet_accuracy(Z, T) == pytest.approx(reference_accuracy(Z, T), abs=1e-12)
    # noiseless answers about X are all satisfied by X, and all violated once reversed
    dij = np.sum((X[T[:, 0]] - X[T[:, 1]]) ** 2, axis=1)
    dik = np.sum((X[T[:, 0]] - X[T[:, 2]]) ** 2, axis=1)
    Tc = np.where((dij < dik)[:, None], T, T[:, [0, 2, 1]])
    assert triplet_accuracy(X, Tc) == 1.0
    assert triplet_accuracy(X, Tc[:, [0, 2, 1]]) == 0.0


@pytest.mark.parametrize("scale", [1e200, 1e-200, 1e300, 1e-300])
def test_triplet_accuracy_is_the_same_at_any_scale(scale):
    """An embedding near 1e200 (or 1e-200) tied every triplet (inf == inf, 0 == 0): accuracy 0.5 whatever it was."""
    X = make_points("blobs", 200, d=3, random_state=0)
    rng = np.random.default_rng(1)
    T = np.array([rng.choice(200, 3, replace=False) for _ in range(3000)])
    Z = X + 0.3 * rng.standard_normal(X.shape)
    assert triplet_accuracy(Z * scale, T) == pytest.approx(triplet_accuracy(Z, T), abs=1e-3)
    k = 700 if scale > 1 else -700
    assert triplet_accuracy(np.ldexp(Z, k), T) == triplet_accuracy(Z, T)  # exactly: a power of two changes no digit


def test_triplet_accuracy_errors():
    Z = np.zeros((5, 2))
    with pytest.raises(ValueError, match=r"^triplets index 5 is out of range for Z, whose 5 rows are items 0\.\.4"):
        triplet_accuracy(Z, [[0, 1, 5]])
    with pytest.raises(ValueError, match=r"^triplets row 0 repeats an item"):
        triplet_accuracy(Z, [[0, 0, 1]])


# --------------------------------------------------------------------------- sample_rows
def test_sample_rows():
    np.testing.assert_array_equal(sample_rows(5, 10), np.arange(5))
    r = sample_rows(1000, 50, random_state=0)
    assert r.size == 50 and np.unique(r).size == 50 and np.all(np.diff(r) > 0) and r.max() < 1000
    np.testing.assert_array_equal(r, sample_rows(1000, 50, random_state=0))
    with pytest.raises(ValueError, match=r"^k must be >= 1, got 0$"):
        sample_rows(10, 0)


def test_triplet_accuracy_with_its_arguments_swapped_says_their_order():
    Z = np.random.default_rng(0).normal(size=(40, 2))
    T = np.array([[0, 1, 2], [3, 4, 5]])
    with pytest.raises(ValueError, match=r"^triplets must have shape \(m, 3\), got \(40, 2\) \(triplet_accuracy "
                                         r"takes the embedding first, then the triplets\)$"):
        triplet_accuracy(T, Z)
    with pytest.raises(ValueError, match=r"^triplets must have shape \(m, 3\), got \(2, 2\)$"):  # no swap to suspect
        triplet_accuracy(Z, T[:, :2])


def test_triplet_accuracy_errors_speak_of_the_rows_of_z():
    """triplet_accuracy has no n_items argument, yet its errors said 'n_items must be >= 3', 'out of range for
    n_items=100' and, for a file's TripletData, 'leave n_items out to use them'."""
    import io
    import re

    from loe_viz.io import read_triplets

    X = np.random.default_rng(0).normal(size=(200, 2))
    T = np.array([[0, 1, 2], [199, 3, 4]])
    for Z, triplets, message in [
            (X[:2], [[0, 1, 2]], "Z must have at least 3 rows (items), got 2"),
            (X[:100], T, "triplets index 199 is out of range for Z, whose 100 rows are items 0..99 (first at row 1)"),
            (X, read_triplets(io.StringIO("0,1,2\n1,2,0\n")), "Z has 200 rows but the triplets read from <buffer> "
                                                              "name 3 items")]:
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            triplet_accuracy(Z, triplets)
