"""Landmark MDS (LOE step 7) against a NumPy reference and exact recovery without noise."""

import dataclasses

import numpy as np
import pytest
from scipy.spatial import procrustes
from scipy.spatial.distance import cdist, pdist

from loe_viz.lmds import DimensionError, LMDSResult, landmark_mds
from loe_viz.points import make_points


def sq(A, B):
    return cdist(A, B, "sqeuclidean")


def setup(n, d, l, seed, kind="gaussian"):
    """Points, and landmarks drawn with a different seed (not the first items)."""
    X = make_points(kind, n, d=d, random_state=seed)
    lm = np.random.default_rng(seed + 7919).choice(n, size=l, replace=False)
    return X, lm, sq(X[lm], X[lm]), sq(X, X[lm])


def reference_lmds(E, F, landmarks, d):
    """Step 7 written from the formulas: A = -1/2 V E V, top-d eigenpairs, triangulate the rest."""
    l = E.shape[0]
    V = np.eye(l) - np.ones((l, l)) / l
    w, Q = np.linalg.eigh(-0.5 * V @ E @ V)
    order = np.argsort(w)[::-1][:d]
    w, Q = w[order], Q[:, order]
    mu = E.mean(axis=0)
    Y = -0.5 * (F - mu) @ (Q / np.sqrt(w))
    Y[landmarks] = Q * np.sqrt(w)
    return Y


def match_signs(Y, ref):
    return Y * np.where(np.sum(Y * ref, axis=0) < 0, -1.0, 1.0)


@pytest.mark.parametrize("d", [1, 2, 3, 4])
@pytest.mark.parametrize("extra", [0, 3])
def test_noiseless_recovery_up_to_rigid_motion(d, extra):
    n, l = 80, d + 3 + extra
    X, lm, E, F = setup(n, d, l, seed=d + 10 * extra)
    assert not np.array_equal(np.sort(lm), np.arange(l))
    res = landmark_mds(E, F, lm, d)
    Y = res.embedding
    assert Y.shape == (n, d) and Y.dtype == np.float64
    # rows in the caller's item order: all pairwise distances reproduced (rigid, no scaling)
    np.testing.assert_allclose(pdist(Y), pdist(X), rtol=1e-7, atol=1e-9)
    assert procrustes(X, Y)[2] < 1e-10


def test_recovery_with_landmarks_first_or_last_and_in_any_order():
    X = make_points("uniform", 50, d=3, random_state=1)
    for lm in (np.arange(7), np.arange(43, 50), np.array([49, 0, 25, 3, 30, 12, 41])):
        Y = landmark_mds(sq(X[lm], X[lm]), sq(X, X[lm]), lm, 3).embedding
        np.testing.assert_allclose(pdist(Y), pdist(X), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_matches_numpy_reference_with_noise(seed):
    X, lm, E, F = setup(60, 2, 8, seed=seed)
    rng = np.random.default_rng(seed + 100)
    Fn = F + 0.05 * rng.standard_normal(F.shape)
    N = 0.02 * rng.standard_normal(E.shape)
    En = E + N + N.T
    np.fill_diagonal(En, 0.0)
    res = landmark_mds(En, Fn, lm, 2)
    ref = reference_lmds(En, Fn, lm, 2)
    np.testing.assert_allclose(match_signs(res.embedding, ref), ref, atol=1e-10)
    assert np.isfinite(res.embedding).all()
    l = E.shape[0]
    V = np.eye(l) - 1.0 / l
    np.testing.assert_allclose(res.eigenvalues, np.sort(np.linalg.eigvalsh(-0.5 * V @ En @ V))[::-1], atol=1e-12)


def test_deterministic_and_sign_convention():
    X, lm, E, F = setup(40, 3, 8, seed=5)
    a = landmark_mds(E, F, lm, 3)
    b = landmark_mds(E.copy(), F.copy(), lm.copy(), 3)
    np.testing.assert_array_equal(a.embedding, b.embedding)
    # each landmark coordinate column has its largest-magnitude entry positive
    L = a.embedding[lm]
    assert np.all(L[np.argmax(np.abs(L), axis=0), np.arange(3)] > 0)


def test_landmark_order_does_not_change_the_embedding():
    X, lm, E, F = setup(40, 2, 7, seed=6)
    Y = landmark_mds(E, F, lm, 2).embedding
    p = np.random.default_rng(1).permutation(7)
    Yp = landmark_mds(E[np.ix_(p, p)], F[:, p], lm[p], 2).embedding
    np.testing.assert_allclose(Yp, Y, atol=1e-10)


def test_item_permutation_permutes_rows():
    X, lm, E, F = setup(40, 2, 6, seed=9)
    Y = landmark_mds(E, F, lm, 2).embedding
    perm = np.random.default_rng(2).permutation(40)  # new item a is old item perm[a]
    inv = np.argsort(perm)
    Yp = landmark_mds(E, F[perm], inv[lm], 2).embedding
    np.testing.assert_allclose(Yp, Y[perm], atol=1e-10)


def test_result_fields():
    X, lm, E, F = setup(30, 2, 6, seed=2)
    res = landmark_mds(E, F, lm, 2)
    assert isinstance(res, LMDSResult) and res.n_components == 2
    assert res.eigenvalues.shape == (6,) and np.all(np.diff(res.eigenvalues) <= 1e-12)
    # an exact EDM of 2-D points: two positive eigenvalues, the rest zero
    assert res.eigenvalues[1] > 0
    np.testing.assert_allclose(res.eigenvalues[2:], 0.0, atol=1e-10 * res.eigenvalues[0])
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.n_components = 3


def test_fewer_components_than_the_data_is_a_projection():
    X, lm, E, F = setup(50, 3, 8, seed=4)
    Y2 = landmark_mds(E, F, lm, 2).embedding
    Y3 = landmark_mds(E, F, lm, 3).embedding
    np.testing.assert_allclose(Y2, Y3[:, :2], atol=1e-10)


# --------------------------------------------------------------------------- DimensionError
def test_collinear_landmarks_cannot_support_two_dimensions():
    X = make_points("gaussian", 30, d=2, random_state=3)
    lm = np.array([4, 9, 17, 22, 28])
    X[lm] = np.outer(np.linspace(-1, 1, 5), [0.6, 0.8])  # the landmarks lie on a line
    E, F = sq(X[lm], X[lm]), sq(X, X[lm])
    with pytest.raises(DimensionError, match=(
        r"^n_components=2 is larger than the landmark distances support: only 1 positive eigenvalue\(s\) "
        r".*use n_components <= 1 or more comparisons/landmarks$"
    )):
        landmark_mds(E, F, lm, 2)
    assert issubclass(DimensionError, ValueError)
    # one dimension is supported and is finite
    Y = landmark_mds(E, F, lm, 1).embedding
    assert Y.shape == (30, 1) and np.isfinite(Y).all()
    np.testing.assert_allclose(pdist(Y[lm]), pdist(X[lm]), rtol=1e-9)


def test_deficient_floor_places_every_item_on_the_requested_axes():
    X = make_points("gaussian", 30, d=2, random_state=3)
    lm = np.array([4, 9, 17, 22, 28])
    X[lm] = np.outer(np.linspace(-1, 1, 5), [0.6, 0.8])  # the landmarks lie on a line
    E, F = sq(X[lm], X[lm]), sq(X, X[lm])
    res = landmark_mds(E, F, lm, 2, deficient="floor")
    assert res.embedding.shape == (30, 2) and np.isfinite(res.embedding).all()
    assert res.n_supported == 1
    one = landmark_mds(E, F, lm, 1).embedding
    np.testing.assert_allclose(res.embedding[:, :1], one, atol=1e-9)  # the supported axis is unchanged
    # nothing positive at all: nothing can be computed
    with pytest.raises(DimensionError, match=r"^the landmark distances carry no spatial information: the landmark "
                                             r"block has no positive eigenvalue \(\[0\.\]\); each landmark needs "
                                             r"more comparisons \(or fewer, busier landmarks\), or fit every "
                                             r"triplet at once \(STE\)$"):
        landmark_mds(np.zeros((5, 5)), np.zeros((8, 5)), np.arange(5), 1, deficient="floor")


@pytest.mark.parametrize(
    "E, d, positive",
    [
        (np.zeros((5, 5)), 1, 0),  # all landmarks in one place
        (-cdist(np.arange(5.0)[:, None], np.arange(5.0)[:, None], "sqeuclidean"), 1, 0),  # not an EDM
        (cdist(np.eye(4), np.eye(4), "sqeuclidean"), 4, 3),  # 4 landmarks span 3 dimensions
        (cdist(np.eye(4), np.eye(4), "sqeuclidean"), 5, 3),
    ],
)
def test_dimension_error_never_nan(E, d, positive):
    """The advice names a dimension that works (it said 'use n_components <= 1' after n_components=1 failed)."""
    l = E.shape[0]
    want = (rf"^n_components={d} is larger .* only {positive} positive eigenvalue.*; use n_components <= {positive} "
            if positive else r"^the landmark distances carry no spatial information")
    with pytest.raises(ValueError, match=want):
        landmark_mds(E, np.zeros((l + 3, l)), np.arange(l), d)
    if positive:
        assert landmark_mds(E, np.zeros((l + 3, l)), np.arange(l), positive).embedding.shape == (l + 3, positive)


def test_noisy_non_edm_input_gives_finite_real_output():
    X, lm, E, F = setup(50, 2, 10, seed=12)
    rng = np.random.default_rng(13)
    N = 0.3 * rng.standard_normal(E.shape)
    En = E + N + N.T
    np.fill_diagonal(En, 0.0)
    l = En.shape[0]
    V = np.eye(l) - 1.0 / l
    assert np.linalg.eigvalsh(-0.5 * V @ En @ V).min() < 0  # genuinely not an EDM
    Y = landmark_mds(En, F + 0.3 * rng.standard_normal(F.shape), lm, 2).embedding
    assert Y.dtype == np.float64 and np.isfinite(Y).all()


def _one_dimensional_block_projected_loosely(seed=54):
    """A noisy block of points on a line, projected at LOE's own tolerance: the cone leaves one axis, and
    the stopped projection leaves round-off eigenvalues of about 1e-10 of the largest where it has none."""
    from loe_viz.edm import FIT_TOL, project_edm

    rng = np.random.default_rng(seed)
    l = 7
    x = rng.standard_normal((l, 1))
    N = rng.standard_normal((l, l))
    N = N + N.T
    np.fill_diagonal(N, 0.0)
    W = (x - x.T) ** 2 + 0.5 * N - 0.5 * (np.ones((l, l)) - np.eye(l))
    E = project_edm(W, tol=FIT_TOL).E
    others = np.vstack([E[rng.integers(l)] + 0.01 * rng.standard_normal(l) for _ in range(50)])
    return E, np.vstack([E, others]), np.arange(l), FIT_TOL


def test_round_off_of_a_stopped_projection_is_not_an_axis():
    E, D, lm, tol = _one_dimensional_block_projected_loosely()
    V = np.eye(lm.size) - 1.0 / lm.size
    vals = np.sort(np.linalg.eigvalsh(-0.5 * V @ E @ V))[::-1]
    assert vals[1] > 0.01 * vals[0] and 1e-12 * vals[0] < vals[2] < 1e-9 * vals[0]  # the bar must stay above
    with pytest.raises(DimensionError, match="only 2 positive"):
        landmark_mds(E, D, lm, 3, rtol=10 * tol)
    out = landmark_mds(E, D, lm, 3, deficient="floor", rtol=10 * tol)
    assert out.n_supported == 2
    # counted as an axis, the round-off stretched the third axis to hundreds while the others stay near 1
    spread = np.abs(out.embedding).max(axis=0)
    assert spread[2] <= spread[:2].max()
    stretched = landmark_mds(E, D, lm, 3, rtol=1e-12).embedding
    assert np.abs(stretched[:, 2]).max() > 100 * spread[:2].max()


def test_rtol_is_checked():
    E, D, lm, _ = _one_dimensional_block_projected_loosely()
    with pytest.raises(ValueError, match=r"rtol must be in \[0, 1\), got 2"):
        landmark_mds(E, D, lm, 1, rtol=2)
