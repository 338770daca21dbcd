"""EDM projection (LOE step 5) against a NumPy Dykstra reference and the projection's optimality."""

import dataclasses

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from loe_viz.edm import EDMResult, project_edm
from loe_viz.points import make_points


def sq_dists(X):
    return cdist(X, X, "sqeuclidean")


def centring(l):
    return np.eye(l) - np.ones((l, l)) / l


def reference_dykstra(W, tol=1e-10, max_iter=1000):
    """Dykstra between symmetric hollow matrices and {X : V X V <= 0}, correction on the cone only."""
    l = W.shape[0]
    V = centring(l)

    def hollow(A):
        S = 0.5 * (A + A.T)
        np.fill_diagonal(S, 0.0)
        return S

    def cone(A):
        B = V @ A @ V
        w, Q = np.linalg.eigh(0.5 * (B + B.T))
        return A - (Q * np.maximum(w, 0.0)) @ Q.T

    X = hollow(W)
    P = np.zeros_like(X)
    res = []
    for _ in range(max_iter):
        T = X + P
        Y = cone(T)
        P = T - Y
        X = hollow(Y)
        res.append(np.abs(Y - X).max() / np.abs(Y).max())
        if res[-1] <= tol:
            break
    return X, np.array(res)


def random_symmetric(l, seed, scale=1.0):
    A = np.random.default_rng(seed).standard_normal((l, l)) * scale
    return A + A.T


def noisy_edm(l, d, seed, noise):
    D = sq_dists(make_points("gaussian", l, d=d, random_state=seed))
    N = noise * np.random.default_rng(seed + 500).standard_normal((l, l))
    W = D + N + N.T
    np.fill_diagonal(W, 0.0)
    return W


def assert_edm(E, rtol=1e-8):
    l = E.shape[0]
    scale = max(np.abs(E).max(), 1.0)
    np.testing.assert_array_equal(E, E.T)
    np.testing.assert_array_equal(np.diag(E), 0.0)
    V = centring(l)
    assert np.linalg.eigvalsh(V @ E @ V).max() <= rtol * scale


def frob(A):
    return np.linalg.norm(A)


@pytest.mark.parametrize(
    "W",
    [random_symmetric(5, 0), random_symmetric(9, 1, 3.0), noisy_edm(8, 2, 2, 0.3), noisy_edm(14, 4, 3, 0.05)],
    ids=["rand5", "rand9", "noisy8", "noisy14"],
)
def test_matches_numpy_dykstra(W):
    res = project_edm(W)
    E_ref, r_ref = reference_dykstra(W)
    scale = np.abs(W).max()
    np.testing.assert_allclose(res.E, E_ref, atol=1e-9 * scale)
    assert abs(res.n_iter - r_ref.size) <= 2
    k = min(res.n_iter, r_ref.size, 20)
    np.testing.assert_allclose(res.residuals[:k], r_ref[:k], rtol=1e-6, atol=1e-13)
    assert_edm(res.E)


@pytest.mark.parametrize("l, d", [(4, 1), (5, 2), (8, 3), (20, 2), (30, 6)])
def test_edm_is_a_fixed_point(l, d):
    D = sq_dists(make_points("uniform", l, d=d, random_state=l + d))
    res = project_edm(D)
    np.testing.assert_allclose(res.E, D, atol=1e-12 * np.abs(D).max())
    assert res.converged and res.n_iter <= 2


@pytest.mark.parametrize("seed", range(4))
def test_projection_is_no_farther_than_feasible_edms(seed):
    l = 7 + seed
    W = random_symmetric(l, seed, scale=2.0)
    E = project_edm(W).E
    assert_edm(E)
    dist = frob(W - E)
    rng = np.random.default_rng(1000 + seed)
    candidates = [np.zeros((l, l))]
    for d in (1, 2, 3, l - 1):
        for s in (0.5, 1.0, 2.0):
            candidates.append(sq_dists(s * rng.standard_normal((l, d))))
    # convex combinations with E stay in the cone: a local check of optimality
    candidates += [(1 - a) * E + a * C for C in candidates[1:4] for a in (1e-3, 0.1)]
    for C in candidates:
        assert dist <= frob(W - C) + 1e-9


@pytest.mark.parametrize("seed", range(3))
def test_projection_optimality_conditions(seed):
    # projection onto a convex cone: <W - E, E> = 0 and <W - E, Z> <= 0 for every EDM Z
    l = 10
    W = noisy_edm(l, 2, seed, noise=0.5) if seed else random_symmetric(l, 7)
    E = project_edm(W).E
    G = W - E
    scale = frob(W) ** 2
    assert abs(np.sum(G * E)) <= 1e-8 * scale
    rng = np.random.default_rng(seed + 40)
    for d in (1, 2, 5):
        Z = sq_dists(rng.standard_normal((l, d)))
        assert np.sum(G * Z) <= 1e-8 * scale * max(1.0, frob(Z) / frob(W))


def test_asymmetric_input_projects_its_symmetric_part():
    rng = np.random.default_rng(3)
    W = noisy_edm(8, 2, 3, 0.2) + 0.3 * rng.standard_normal((8, 8))
    a = project_edm(W).E
    b = project_edm(0.5 * (W + W.T)).E
    np.testing.assert_allclose(a, b, atol=1e-9)


def test_positive_scaling_commutes_with_projection():
    W = random_symmetric(9, 5)
    np.testing.assert_allclose(project_edm(7.5 * W).E, 7.5 * project_edm(W).E, atol=1e-8)


def test_convergence_flag_and_residual_history():
    W = random_symmetric(10, 2)
    res = project_edm(W)
    assert isinstance(res, EDMResult)
    assert res.converged
    assert res.residuals.shape == (res.n_iter,)
    assert np.all(res.residuals >= 0)
    assert res.residuals[-1] <= 1e-10 < res.residuals[:-1].min()
    assert res.residuals[-1] < res.residuals[0]

    short = project_edm(W, max_iter=3)
    assert not short.converged and short.n_iter == 3 and short.residuals.shape == (3,)
    np.testing.assert_allclose(short.residuals, res.residuals[:3], rtol=1e-12)
    # even when stopped early the output is exactly symmetric and hollow
    np.testing.assert_array_equal(short.E, short.E.T)
    np.testing.assert_array_equal(np.diag(short.E), 0.0)

    loose = project_edm(W, tol=1e-3)
    assert loose.converged and loose.n_iter < res.n_iter and loose.residuals[-1] <= 1e-3


def test_input_is_kept_and_not_modified():
    W = noisy_edm(6, 2, 1, 0.4)
    W0 = W.copy()
    res = project_edm(W)
    np.testing.assert_array_equal(W, W0)
    np.testing.assert_array_equal(res.input, W0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.converged = False


def test_projection_denoises_a_noisy_edm():
    D = sq_dists(make_points("gaussian", 12, d=2, random_state=8))
    W = noisy_edm(12, 2, 8, noise=0.05)
    E = project_edm(W).E
    assert frob(E - D) < frob(W - D)


@pytest.mark.parametrize("l, seed", [(8, 3), (30, 4), (60, 5)])
def test_a_start_from_a_nearby_projection_gives_the_same_projection_in_fewer_iterations(l, seed):
    """The warm start of the uncertainty's block derivatives: Dykstra's iterate and correction of ``W0`` start the
    projection of ``W1`` (nonsymmetric, as the shifted landmark block is) and end at the projection from scratch."""
    W0 = noisy_edm(l, 2, seed, 0.3)
    W0 = W0 + np.triu(np.random.default_rng(seed + 1).normal(0.0, 0.1, (l, l)), 1)  # not symmetric
    W1 = W0 + 1e-4 * np.abs(W0).max() * np.random.default_rng(seed + 2).choice((-1.0, 1.0), (l, l))
    base = project_edm(W0, keep_correction=True)
    cold, warm = project_edm(W1), project_edm(W1, start=base)
    assert cold.correction is None and warm.correction is None  # kept only when asked for
    E_ref, r_ref = reference_dykstra(W1)
    assert cold.converged and warm.converged
    np.testing.assert_allclose(warm.E, E_ref, atol=1e-8 * np.abs(W1).max())
    np.testing.assert_allclose(warm.E, cold.E, atol=1e-8 * np.abs(W1).max())
    assert warm.n_iter < cold.n_iter
    assert_edm(warm.E)
    np.testing.assert_array_equal(warm.input, W1)
    np.testing.assert_array_equal(base.correction, project_edm(W0, keep_correction=True).correction)  # not modified
    # the start's matrix does not matter beyond the iteration count: a start from an unrelated matrix
    far = project_edm(W1, start=project_edm(random_symmetric(l, seed + 9, 5.0), keep_correction=True))
    np.testing.assert_allclose(far.E, E_ref, atol=1e-8 * np.abs(W1).max())


def test_a_start_of_another_size_or_without_its_correction_is_refused():
    start = project_edm(noisy_edm(6, 2, 1, 0.1), keep_correction=True)
    with pytest.raises(ValueError, match=r"^start must be the projection of a 7 x 7 matrix, got one of shape \(6, 6\)$"):
        project_edm(noisy_edm(7, 2, 1, 0.1), start=start)
    with pytest.raises(ValueError, match=r"^start must have kept its correction: project it with keep_correction=True$"):
        project_edm(noisy_edm(6, 2, 2, 0.1), start=project_edm(noisy_edm(6, 2, 1, 0.1)))
