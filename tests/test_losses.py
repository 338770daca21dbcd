"""The baseline loss kernels against slow NumPy references and finite differences."""

import numpy as np
import pytest

from loe_viz.kernels import losses as L

KINDS = ["ste", "tste", "soe", "gnmds", "ckl"]
PARAM = {"ste": 0.0, "tste": 1.0, "soe": 0.1, "gnmds": 0.0, "ckl": 0.05}


def random_triplets(n, m, rng, dtype=np.int32):
    """Uniform triplets of distinct items (no answers: any order is a valid input)."""
    T = np.empty((m, 3), dtype=dtype)
    for t in range(m):
        T[t] = rng.choice(n, size=3, replace=False)
    return T


def reference(kind, X, T, param, reg=0.0):
    """Mean loss and gradient straight from the formulas (no kernel tricks)."""
    i, j, k = T[:, 0], T[:, 1], T[:, 2]
    u = X[i] - X[j]
    v = X[i] - X[k]
    dij = (u**2).sum(1)
    dik = (v**2).sum(1)
    gi = np.zeros_like(u)
    gj = np.zeros_like(u)
    gk = np.zeros_like(u)
    if kind == "soe":
        rij, rik = np.sqrt(dij), np.sqrt(dik)
        h = param + rij - rik
        loss = np.maximum(h, 0.0) ** 2
        c = 2 * np.maximum(h, 0.0)
        eu = u / rij[:, None]
        ev = v / rik[:, None]
        gi = c[:, None] * (eu - ev)
        gj = -c[:, None] * eu
        gk = c[:, None] * ev
    else:
        if kind == "ste":
            p = np.exp(-dij) / (np.exp(-dij) + np.exp(-dik))
            loss = -np.log(p)
            a = 1 - p  # dloss/dD_ij
            b = -(1 - p)  # dloss/dD_ik
        elif kind == "tste":
            al = param
            q = lambda D: (1 + D / al) ** (-(al + 1) / 2)  # noqa: E731
            dq = lambda D: -(al + 1) / (2 * al) * (1 + D / al) ** (-(al + 1) / 2 - 1)  # noqa: E731
            qij, qik = q(dij), q(dik)
            loss = -np.log(qij / (qij + qik))
            a = -dq(dij) / qij + dq(dij) / (qij + qik)
            b = dq(dik) / (qij + qik)
        elif kind == "gnmds":
            h = 1 + dij - dik
            loss = np.maximum(h, 0.0)
            a = (h > 0).astype(float)
            b = -a
        else:  # ckl
            mu = param
            loss = -np.log((mu + dik) / (2 * mu + dij + dik))
            a = 1 / (2 * mu + dij + dik)
            b = 1 / (2 * mu + dij + dik) - 1 / (mu + dik)
        gi = 2 * a[:, None] * u + 2 * b[:, None] * v
        gj = -2 * a[:, None] * u
        gk = -2 * b[:, None] * v
    G = np.zeros_like(X)
    np.add.at(G, i, gi)
    np.add.at(G, j, gj)
    np.add.at(G, k, gk)
    m = len(T)
    return loss.mean() + reg * (X**2).sum(), G / m + 2 * reg * X


def kernel(kind, X, T, param, reg=0.0, n_threads=1):
    return L.triplet_loss_grad(X, T, L.KINDS[kind], param, reg, n_threads)


def away_from_kinks(kind, X, T, param):
    """True when no hinge sits within 1e-3 of its kink (finite differences are then exact)."""
    i, j, k = T.T
    dij = ((X[i] - X[j]) ** 2).sum(1)
    dik = ((X[i] - X[k]) ** 2).sum(1)
    if kind == "soe":
        h = param + np.sqrt(dij) - np.sqrt(dik)
    elif kind == "gnmds":
        h = 1 + dij - dik
    else:
        return True
    return np.abs(h).min() > 1e-3


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("d", [1, 2, 3])
def test_matches_numpy_reference(kind, d):
    rng = np.random.default_rng(10 + d)
    X = rng.normal(scale=0.8, size=(9, d))
    T = random_triplets(9, 60, rng)
    param = PARAM[kind]
    f, g = kernel(kind, X, T, param)
    f_ref, g_ref = reference(kind, X, T, param)
    assert f == pytest.approx(f_ref, rel=1e-12, abs=1e-14)
    np.testing.assert_allclose(g, g_ref, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("d", [2, 3])
def test_finite_difference_gradient(kind, d):
    rng = np.random.default_rng(20 + d)
    param = PARAM[kind]
    for _ in range(20):
        X = rng.normal(scale=0.8, size=(8, d))
        T = random_triplets(8, 40, rng)
        if away_from_kinks(kind, X, T, param):
            break
    _, g = kernel(kind, X, T, param)
    eps = 1e-6
    fd = np.zeros_like(X)
    for a in range(X.shape[0]):
        for c in range(d):
            Xp = X.copy()
            Xm = X.copy()
            Xp[a, c] += eps
            Xm[a, c] -= eps
            fd[a, c] = (kernel(kind, Xp, T, param)[0] - kernel(kind, Xm, T, param)[0]) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("alpha", [0.5, 2.0, 3.0, 4.5])
def test_tste_other_degrees_of_freedom(alpha):
    # alpha = 2 and 3 take the sqrt / square shortcuts; 0.5 and 4.5 the general power
    rng = np.random.default_rng(3)
    X = rng.normal(size=(10, 4))
    T = random_triplets(10, 80, rng)
    f, g = kernel("tste", X, T, alpha)
    f_ref, g_ref = reference("tste", X, T, alpha)
    assert f == pytest.approx(f_ref, rel=1e-12)
    np.testing.assert_allclose(g, g_ref, rtol=1e-10, atol=1e-13)


def test_gnmds_regularization():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(12, 2))
    T = random_triplets(12, 50, rng)
    f, g = kernel("gnmds", X, T, 0.0, reg=0.3)
    f_ref, g_ref = reference("gnmds", X, T, 0.0, reg=0.3)
    assert f == pytest.approx(f_ref, rel=1e-12)
    np.testing.assert_allclose(g, g_ref, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("kind", KINDS)
def test_long_input_flushes_log_product(kind):
    # thousands of log-arguments near 2 overflow a plain running product:
    # the kernel must flush it into the sum and stay exact
    rng = np.random.default_rng(6)
    X = rng.normal(scale=1e-3, size=(50, 2))
    T = random_triplets(50, 6000, rng)
    param = PARAM[kind]
    f, g = kernel(kind, X, T, param)
    f_ref, g_ref = reference(kind, X, T, param)
    assert np.isfinite(f)
    assert f == pytest.approx(f_ref, rel=1e-11)
    np.testing.assert_allclose(g, g_ref, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n_threads", [2, 3])
def test_parallel_equals_serial(kind, n_threads):
    rng = np.random.default_rng(7)
    X = rng.normal(size=(40, 2))
    T = random_triplets(40, 2001, rng)
    f1, g1 = kernel(kind, X, T, PARAM[kind], 0.0, 1)
    f2, g2 = kernel(kind, X, T, PARAM[kind], 0.0, n_threads)
    assert f2 == pytest.approx(f1, rel=1e-12)
    np.testing.assert_allclose(g2, g1, rtol=1e-10, atol=1e-14)


@pytest.mark.slow  # compiles the int64 and general-d specialisations
@pytest.mark.parametrize("kind", KINDS)
def test_int64_triplets_and_general_dimension(kind):
    rng = np.random.default_rng(8)
    X = rng.normal(size=(20, 5))
    T = random_triplets(20, 300, rng)
    f32, g32 = kernel(kind, X, T, PARAM[kind])
    f64, g64 = kernel(kind, X, T.astype(np.int64), PARAM[kind])
    assert f32 == f64
    np.testing.assert_array_equal(g32, g64)


def test_extreme_values_stay_finite():
    X = np.array([[0.0, 0.0], [100.0, 0.0], [0.0, 1e-3], [0.0, 0.0]])
    T = np.array([[0, 1, 2], [0, 2, 1], [0, 3, 1], [0, 1, 3]], dtype=np.int32)  # item 3 coincides with 0
    for kind in KINDS:
        for param in ([0.0, 1.0] if kind in ("ckl", "tste") else [PARAM[kind]]):
            if kind == "tste" and param == 0.0:
                continue
            f, g = kernel(kind, X, T, param)
            assert np.isfinite(f), kind
            assert np.isfinite(g).all(), kind
    # STE: a violated triplet by a margin of 10^4 costs exactly that margin
    f, _ = kernel("ste", X, T[:1], 0.0)
    f_swapped, _ = kernel("ste", X, T[:1][:, [0, 2, 1]], 0.0)
    assert f == pytest.approx(1e4 - 1e-6, rel=1e-12)
    assert f_swapped == pytest.approx(np.log1p(np.exp(-(1e4 - 1e-6))), abs=1e-300)


def test_no_n_by_n_memory():
    # n = 200k items with d = 2: an n x n float matrix would need 320 GB
    n = 200_000
    rng = np.random.default_rng(9)
    X = rng.normal(size=(n, 2))
    T = np.stack([rng.integers(0, n, 1000), rng.integers(0, n, 1000), rng.integers(0, n, 1000)], 1)
    T = T[(T[:, 0] != T[:, 1]) & (T[:, 0] != T[:, 2]) & (T[:, 1] != T[:, 2])].astype(np.int32)
    f, g = kernel("ste", X, T, 0.0)
    assert np.isfinite(f) and g.shape == (n, 2)


@pytest.mark.slow
def test_parallel_kernel_compiled_in_another_process_loads_from_the_cache(tmp_path):
    # A cached numba function that called the parallel _range_chunked crashed (SIGSEGV) when
    # loaded from the cache if _range_chunked had been compiled and cached by another process
    # first: the parallel step is called from Python now. Three processes, one fresh cache.
    import os
    import subprocess
    import sys

    setup = ("import numpy as np; from loe_viz.kernels import losses as L; rng = np.random.default_rng(0); "
             "X = rng.random((50, 2)); T = rng.integers(0, 50, (400, 3)).astype(np.int32); ")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    calls = ["print(L._range_chunked(0, X, T, 1.0, 2)[0])"] + ["print(L.triplet_loss_grad(X, T, 0, 1.0, 0.0, 2)[0])"] * 2
    out = []
    for call in calls:
        run = subprocess.run([sys.executable, "-c", setup + call], env=env, capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, f"{call}: exit {run.returncode}\n{run.stderr[-2000:]}"
        out.append(float(run.stdout))
    assert out[1] == out[2] == pytest.approx(out[0] / 400)


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("kind", ["ste", "soe"])
def test_a_pass_in_blocks_equals_one_pass_and_can_be_stopped_between_blocks(kind, n_threads, monkeypatch):
    rng = np.random.default_rng(9)
    X = rng.normal(size=(50, 2))
    T = random_triplets(50, 2_500, rng)
    want = L.triplet_loss_grad(X, T, L.KINDS[kind], PARAM[kind], 0.01, n_threads)
    monkeypatch.setattr(L, "EVAL_BLOCK", 600)
    calls = []
    got = L.triplet_loss_grad(X, T, L.KINDS[kind], PARAM[kind], 0.01, n_threads, lambda: calls.append(1))
    assert len(calls) == 4  # 2,500 triplets: five blocks, a call between each two
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-10, atol=1e-14)
    # without ``between`` the pass is one block whatever EVAL_BLOCK says
    assert L.triplet_loss_grad(X, T, L.KINDS[kind], PARAM[kind], 0.01, n_threads)[0] == want[0]

    class Stop(Exception):
        pass

    def stop():
        raise Stop

    with pytest.raises(Stop):
        L.triplet_loss_grad(X, T, L.KINDS[kind], PARAM[kind], 0.01, n_threads, stop)
