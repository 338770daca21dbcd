"""Per-item uncertainty of the LOE embedding, propagated from the BTL Fisher information.

Each landmark ranking's Newton solver ends at the BTL Fisher information of its
scores; :func:`loe_viz.kernels.uncertainty.score_variance` turns it into the
sampling variance of every score (:attr:`loe_viz.ranking.ColumnRanking.score_variance`).
This module carries those variances through the rest of the algorithm to a
``d x d`` covariance of every item's embedded position (:func:`item_covariance`,
exposed as ``LOE.uncertainty_``).

The model (first-order error propagation, i.e. the delta method):

* **Columns are independent.** Each landmark's comparisons are its own, so the
  scores of different columns have independent errors; within a column the
  covariance of two items' scores is of order ``1 / n`` of their variances and
  is dropped.
* **The item's own row.** A non-landmark item is placed by the landmark-MDS
  triangulation ``y_a = -1/2 L (F_a - mu)`` with ``L = Lambda^(-1/2) Q^T``. Its
  row ``F_a`` carries the errors of its own scores, so it contributes
  ``1/4 L diag(var_a) L^T``.
* **The landmark block.** The shifts, the EDM projection, ``Q``, ``Lambda`` and
  ``mu`` all come from the ``l x l`` landmark block ``W``, whose entries are
  scores too. An error in the block moves every item at once, by
  ``delta y_a = G phi_a`` with ``phi_a = (1, mean(F_a - mu), y_a)`` (to first
  order ``F_a - mu`` lies in the span of ``1`` and ``Q``). ``G`` is linear in the
  block's errors; its derivative with respect to each block entry is taken by
  central differences through the estimator's own steps
  (:func:`loe_viz.shifts.estimate_shifts`, :func:`loe_viz.edm.project_edm`, the
  eigen-decomposition of landmark MDS), so the offset rule and the EDM
  projection are linearised as they are.
* **The bias.** Maximum-likelihood BTL scores are biased away from their mean
  (an item that wins most of its comparisons is overestimated), by about
  ``1 / (comparisons per item)`` relative to their spread: at ``c = 20`` this
  shifted outer items by a sizeable fraction of their standard error in the same
  (outward) direction in every column, and the covariance alone covered 75-87 %
  instead of 90 % on the items with well-placed landmarks. Each ranking also
  returns the first-order (Cox & Snell) bias of its scores
  (:func:`loe_viz.kernels.uncertainty.score_moments`); it is carried through the
  same linear maps (items' rows and block) and enters as ``b b^T``, so the
  matrices are mean squared errors rather than covariances. The bias is not
  subtracted from the embedding: its estimate is unstable for nearly separated
  items, where adding it to the error budget is harmless but subtracting it is not.
* **The gauge.** An embedding from comparisons is only defined up to a
  similarity transform (translation, rotation/reflection, scale): it is compared
  with anything after the best such alignment. The part of a block error that
  is itself a similarity transform of the whole embedding (the least-squares fit
  of ``t + (sigma I + Omega) y_a`` to ``G phi_a`` over all items) is removed by
  that alignment, so it is projected out. The covariances are those of the
  error left after alignment, in the frame of ``embedding_``; after aligning the
  embedding to a reference by ``z -> s z R + t``, use ``s^2 R^T Sigma R``.

Calibration, measured by ``benchmarks/bench_uncertainty.py`` (d = 2, T = 1, the default
landmark choice): the nominal 90 % ellipses, after Procrustes alignment, contain 88.9-90.6 %
of the true positions at n = 10^3, 10^4 and 10^5 for c = 20, 50 and 200. With the paper's random
landmarks, fits whose few landmarks fall close together (Procrustes error above ~0.25) are
far outside the linear regime and cover much less (0.5-0.8); the others stay in band.

Cost: ``O(n l d^2)`` for the item terms, ``O(n d^4)`` for the block term (a
fixed quadratic form per item) and, for the derivatives, ``2 l (l - 1)`` runs of
the ``O(l^3)`` block steps up to 23 landmarks; from 24 on, ``2 BLOCK_PROBES``
runs, the block term then estimated from derivatives along random sign
combinations of the entries (item covariances within a few per cent of the
per-entry ones: ``tests/test_uncertainty.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._blas import blas_single_thread
from .edm import EDMResult, project_edm
from .shifts import estimate_shifts

__all__ = [
    "BlockSolution", "ItemUncertainty", "block_solution", "item_covariance", "score_variances", "ellipse_axes",
    "coverage", "BLOCK_PROBES", "DERIVATIVE_TOL", "CALIBRATED_COMPARISONS", "SIGNAL_MIN", "mostly_noise",
]

#: Comparisons per item and landmark below which the 90 % regions are not calibrated. On
#: simulated answers at temperature 1 (``benchmarks/bench_uncertainty_sparse.py``, n = 300,
#: 3 seeds, 5 and 20 landmarks) they covered 86-92 % of the true positions with 10 comparisons
#: per item, 85-94 % with 20 and 88-92 % with 40, but 62-93 % with 5 and 62-99 % with 2, where
#: a few barely compared items' Fisher variances dominate (the predicted rms error 2.4 to 9
#: times the measured one). Collected triplets often hold fewer: the capitals file 1.7.
CALIBRATED_COMPARISONS = 10.0

#: The rankings' :attr:`~loe_viz.ranking.RankingResult.signal` (their score variance beyond noise, summed over the
#: landmarks; about 0 for coin flips) below which LOE's embedding is mostly noise and the 90 % regions, which leave
#: out the bias of such scores, far too small. On simulated answers (``benchmarks/bench_separation.py``: n = 1000,
#: c = 20 to 200, temperature 1 to 30 and coin flips, d + 3 landmarks) a signal below 1.5 went with Procrustes
#: errors of 0.87 to 1.0 and regions covering 0 to 25 % of the true positions; from 1.5 to 15, 0.16 to 0.79 and 28
#: to 86 %, where the regions are not all calibrated either, but no rule of this kind tells those fits apart from
#: poor ones that score higher (clustered points, d = 5: Procrustes 0.83 at 3.9) or fair ones that score lower
#: (points on a line at temperature 2: 0.2 to 0.4 at 2.5 to 4.9). Only the answers near coin flips are detected.
SIGNAL_MIN = 1.5


def mostly_noise(ranking) -> bool:
    """Whether the rankings (a :class:`~loe_viz.ranking.RankingResult`) hold enough comparisons per item to judge
    (:data:`CALIBRATED_COMPARISONS`) and barely tell the items apart (:data:`SIGNAL_MIN`): LOE's embedding is then
    mostly noise. Fewer comparisons are judged by their count alone."""
    return ranking.comparisons_per_item >= CALIBRATED_COMPARISONS and ranking.signal < SIGNAL_MIN

#: Derivatives the block term is estimated from once the landmark block has more than twice
#: as many off-diagonal entries (from l = 24 landmarks on). Each costs two runs of the block
#: steps (O(l^3)); every entry on its own took 2 l (l - 1) runs: 6 s at l = 44 and about
#: 25 minutes at l = 200 (the bundled crowd sample with its default landmarks).
BLOCK_PROBES = 256


#: Tolerance of the EDM projections of the perturbed blocks whose central differences are the block
#: derivatives (steps of 1e-4 of the largest entry), each started from the unperturbed block's projection
#: (:func:`loe_viz.edm.project_edm`'s ``start``): 8 -> 4 Dykstra iterations with 200 landmarks, and the
#: covariances within 2e-6 of those from cold starts to 1e-10 (``bench_uncertainty.py --block-cost``).
DERIVATIVE_TOL = 1e-8


@dataclass(frozen=True)
class BlockSolution:
    """The landmark-block quantities that place every item.

    Attributes
    ----------
    s : ndarray (l,)
        Final shifts.
    mu : ndarray (l,)
        Column means of the projected block ``E``.
    Q : ndarray (l, d)
        Top eigenvectors of ``-1/2 V E V`` (signs as landmark MDS fixes them).
    root : ndarray (d,)
        Square roots of their eigenvalues.
    edm : EDMResult
        The block's EDM projection; without a ``reference``, with its correction kept (the
        warm start of a nearby block's).
    """

    s: np.ndarray
    mu: np.ndarray
    Q: np.ndarray
    root: np.ndarray
    edm: EDMResult | None = field(default=None, repr=False)

    @property
    def L(self) -> np.ndarray:
        """``Lambda^(-1/2) Q^T`` (d, l): the triangulation matrix."""
        return (self.Q / self.root).T

    @property
    def landmark_coords(self) -> np.ndarray:
        """``Q Lambda^(1/2)`` (l, d): the landmarks' own coordinates."""
        return self.Q * self.root


def block_solution(W: np.ndarray, n_components: int, offset: str = "lambda2", reference=None) -> BlockSolution:
    """Shifts, EDM projection and landmark-MDS eigenpairs of a landmark block.

    Parameters
    ----------
    W : ndarray (l, l)
        Landmark block of the rankings (zero diagonal).
    n_components : int
    offset : {"lambda2", "mean"}
    reference : BlockSolution, optional
        When given, eigenvector signs are matched to ``reference.Q`` (for
        derivatives) instead of landmark MDS's largest-entry rule, and the EDM
        projection starts from ``reference.edm`` and stops at :data:`DERIVATIVE_TOL`.

    Returns
    -------
    BlockSolution
    """
    d = int(n_components)
    shifts = estimate_shifts(W, d, offset)
    edm = (project_edm(shifts.shifted, keep_correction=True) if reference is None
           else project_edm(shifts.shifted, start=reference.edm, tol=DERIVATIVE_TOL))
    E = edm.E
    l = E.shape[0]
    V = np.eye(l) - 1.0 / l
    A = -0.5 * V @ E @ V
    A = 0.5 * (A + A.T)
    vals, vecs = np.linalg.eigh(A)
    top = vals[::-1][:d]
    Q = vecs[:, ::-1][:, :d].copy()
    for c in range(d):
        if reference is not None:
            flip = float(Q[:, c] @ reference.Q[:, c]) < 0
        else:
            k = np.argmax(np.abs(Q[:, c]))
            flip = Q[k, c] < 0
        if flip:
            Q[:, c] = -Q[:, c]
    root = np.sqrt(np.maximum(top, 1e-300))
    return BlockSolution(s=shifts.s, mu=E.mean(axis=0), Q=Q, root=root, edm=edm)


def score_variances(columns, n_items: int, attribute: str = "score_variance") -> np.ndarray:
    """Stack the columns' score variances (or ``attribute="score_bias"``) into an (n, l) array.

    Columns that lack them give NaN.
    """
    out = np.full((int(n_items), len(columns)), np.nan)
    for c, col in enumerate(columns):
        if getattr(col, attribute, None) is not None:
            out[:, c] = getattr(col, attribute)
    return out


def _similarity_basis(d: int) -> list:
    """Similarity perturbations ``t + (sigma I + Omega) y`` as d x (d + 2) maps of ``phi``."""
    basis = []
    for i in range(d):  # translations
        B = np.zeros((d, d + 2))
        B[i, 0] = 1.0
        basis.append(B)
    B = np.zeros((d, d + 2))  # scale
    B[:, 2:] = np.eye(d)
    basis.append(B)
    for i in range(d):  # rotations
        for j in range(i + 1, d):
            B = np.zeros((d, d + 2))
            B[i, 2 + j] = 1.0
            B[j, 2 + i] = -1.0
            basis.append(B)
    return basis


def _gauge_projector(phi: np.ndarray, d: int) -> np.ndarray:
    """``I - P`` on vec(G) (row-major), ``P`` the least-squares projection onto similarity maps.

    The inner product is ``<G, G'> = sum_a (G phi_a) . (G' phi_a)``, i.e. the fit over
    all items that a Procrustes alignment performs.
    """
    M = phi.T @ phi / phi.shape[0]
    basis = _similarity_basis(d)
    Bv = np.array([B.ravel() for B in basis])  # (k, d(d+2))
    # <G, G'> = vec(G)^T (I_d kron M) vec(G') for row-major vec
    K = np.kron(np.eye(d), M)
    gram = Bv @ K @ Bv.T
    P = Bv.T @ np.linalg.solve(gram, Bv @ K)
    return np.eye(d * (d + 2)) - P


def _similarity_fit(field: np.ndarray, Y: np.ndarray, fit_rows: np.ndarray) -> np.ndarray:
    """``field`` (n, d) minus its least-squares similarity fit ``t + (sigma I + Omega) y`` over ``fit_rows``."""
    n, d = Y.shape
    cols = []
    for i in range(d):  # translations
        t = np.zeros((n, d))
        t[:, i] = 1.0
        cols.append(t)
    cols.append(Y)  # scale
    for i in range(d):
        for j in range(i + 1, d):
            rot = np.zeros((n, d))
            rot[:, i] = Y[:, j]
            rot[:, j] = -Y[:, i]
            cols.append(rot)
    A = np.stack([c.reshape(-1) for c in cols], axis=1)  # (n d, k)
    rows = np.repeat(fit_rows, d)
    coef, *_ = np.linalg.lstsq(A[rows], field.reshape(-1)[rows], rcond=None)
    return (field.reshape(-1) - A @ coef).reshape(n, d)


def item_covariance(
    W: np.ndarray,
    D_landmarks: np.ndarray,
    landmarks: np.ndarray,
    embedding: np.ndarray,
    variances: np.ndarray,
    offset: str = "lambda2",
    *,
    biases: np.ndarray | None = None,
    gauge: bool = True,
    block: bool = True,
    rel_step: float = 1e-4,
    block_probes: int = BLOCK_PROBES,
) -> np.ndarray:
    """Mean squared error matrix of every item's embedded position (see the module notes).

    The covariance of the propagated score errors, plus the outer product of the
    propagated first-order bias of the scores when ``biases`` are given.

    Parameters
    ----------
    W : ndarray (l, l)
        Landmark block of the rankings (zero diagonal).
    D_landmarks : ndarray (n, l)
        ``R + 1 s^T``: estimated squared distances to the landmarks (rows ``F_a``).
    landmarks : ndarray (l,)
        Item index of each landmark.
    embedding : ndarray (n, d)
        The landmark-MDS embedding these came from.
    variances : ndarray (n, l)
        Sampling variance of every score (:func:`score_variances`).
    offset : {"lambda2", "mean"}
        The offset rule the fit used.
    biases : ndarray (n, l), optional
        First-order bias of every score (:func:`score_variances` of
        ``score_bias``); omitted: covariance only.
    gauge : bool, default True
        Remove the similarity-transform part of the landmark-block error (what a
        Procrustes alignment absorbs).
    block : bool, default True
        Include the landmark-block term (False: the items' own rows only).
    rel_step : float, default 1e-4
        Central-difference step for the block derivatives, relative to the
        largest block entry.
    block_probes : int, default :data:`BLOCK_PROBES`
        With at most twice as many off-diagonal block entries, the derivative
        along each entry is taken (exact to first order). With more, the block
        term ``sum_k var_k g_k g_k^T`` is estimated from this many derivatives
        along random sign combinations ``sum_k z_k sqrt(var_k) e_k`` (an
        unbiased estimate with a fixed seed, so the result is reproducible):
        the cost no longer grows with ``l^2`` derivatives of ``O(l^3)`` steps.

    Returns
    -------
    ndarray (n, d, d)
        Symmetric positive semidefinite matrices in the coordinates of ``embedding``.
    """
    if isinstance(block_probes, bool) or not isinstance(block_probes, (int, np.integer)) or block_probes < 1:
        raise ValueError(f"block_probes must be a positive whole number, got {block_probes!r}")
    W = np.asarray(W, dtype=np.float64)
    Y = np.asarray(embedding, dtype=np.float64)
    n, d = Y.shape
    l = W.shape[0]
    landmarks = np.asarray(landmarks, dtype=np.int64)
    var = np.nan_to_num(np.asarray(variances, dtype=np.float64), nan=0.0)
    bias = None if biases is None else np.nan_to_num(np.asarray(biases, dtype=np.float64), nan=0.0)
    base = block_solution(W, d, offset)
    L = base.L  # (d, l)
    is_lm = np.zeros(n, dtype=bool)
    is_lm[landmarks] = True
    fit_rows = ~is_lm if (~is_lm).any() else np.ones(n, dtype=bool)

    # Item term: 1/4 L diag(var_a) L^T, for all rows at once (O(n l d^2)).
    cov = 0.25 * np.einsum("il,nl,jl->nij", L, var, L, optimize=True)
    cov[is_lm] = 0.0
    field = np.zeros((n, d))  # propagated bias of every position
    if bias is not None:
        field = -0.5 * bias @ L.T
        field[is_lm] = 0.0

    if block:
        # Block term: derivatives of (G, landmark coordinates) along directions in the block entries.
        F = np.asarray(D_landmarks, dtype=np.float64)
        alpha = (F - base.mu[None, :]).mean(axis=1)
        phi = np.column_stack([np.ones(n), alpha, Y])  # (n, d + 2)
        step = rel_step * max(float(np.abs(W).max()), 1e-12)
        rows, cols = np.nonzero(~np.eye(l, dtype=bool))  # the off-diagonal entries, row-major
        wvar = var[landmarks[rows], cols]
        wbias = np.zeros(rows.size) if bias is None else bias[landmarks[rows], cols]

        def along(direction):
            """Central-difference derivative of (G, landmark coordinates) along ``direction`` (per entry)."""
            D = np.zeros((l, l))
            D[rows, cols] = direction
            scale = float(np.abs(D).max())
            if scale == 0.0:
                return np.zeros((d, d + 2)), np.zeros((l, d))
            hi, lo = (block_solution(W + sign * (step / scale) * D, d, offset, reference=base)
                      for sign in (1.0, -1.0))
            h = 2 * step / scale
            dL = (hi.L - lo.L) / h
            dshift = ((hi.s - hi.mu) - (lo.s - lo.mu)) / h
            Gk = np.empty((d, d + 2))
            Gk[:, 0] = -0.5 * L @ dshift
            Gk[:, 1] = -0.5 * dL.sum(axis=1)
            Gk[:, 2:] = dL @ base.landmark_coords
            return Gk, (hi.landmark_coords - lo.landmark_coords) / h

        if rows.size <= 2 * block_probes:  # every entry on its own: exact to first order
            directions = np.eye(rows.size)
            weight = wvar
        else:  # sum_k wvar_k g_k g_k^T estimated from random sign combinations of the entries
            directions = np.random.default_rng(0).choice((-1.0, 1.0), size=(block_probes, rows.size)) * np.sqrt(wvar)
            weight = np.full(block_probes, 1.0 / block_probes)
        # l x l eigen-decompositions, a few per run: waking a second BLAS thread for each cost
        # 5x the time on a busy 2-core machine (59 s against 11 s at l = 200)
        with blas_single_thread():
            out = [along(direction) for direction in directions]
            Gb, dlmb = along(wbias)  # the bias, linear in the entries' biases: one direction
        G, dlm = np.array([g for g, _ in out]), np.array([m for _, m in out])
        # the bias the block passes on to every item (before the gauge, removed below with the rest)
        block_field = phi @ Gb.T
        block_field[is_lm] = dlmb
        field += block_field
        if gauge:
            T = _gauge_projector(phi[fit_rows], d)
            k = len(G)
            Gv = G.reshape(k, -1) @ T.T
            # what the same alignment does to the landmarks: remove the fitted similarity
            sim = (G.reshape(k, -1) - Gv).reshape(k, d, d + 2)
            dlm = dlm - np.einsum("kij,lj->kli", sim, phi[landmarks])
            G = Gv.reshape(k, d, d + 2)
        Gv = G.reshape(len(G), -1)
        S = (Gv * weight[:, None]).T @ Gv  # (d(d+2))^2: covariance of vec(G)
        S4 = S.reshape(d, d + 2, d, d + 2)
        cov_block = np.einsum("nj,ijkl,nl->nik", phi, S4, phi, optimize=True)
        cov_block[is_lm] = np.einsum("k,kli,klj->lij", weight, dlm, dlm)
        cov += cov_block
    if bias is not None:
        if gauge:
            field = _similarity_fit(field, Y, fit_rows)
        cov += field[:, :, None] * field[:, None, :]
    return 0.5 * (cov + cov.transpose(0, 2, 1))


def ellipse_axes(cov: np.ndarray, level: float = 0.9):
    """Half-axes and orientation of the ``level`` confidence ellipses of 2-D covariances.

    Parameters
    ----------
    cov : ndarray (n, 2, 2)
    level : float, default 0.9

    Returns
    -------
    a, b : ndarray (n,)
        Major and minor half-axis lengths (``sqrt(chi2_2(level) * eigenvalue)``).
    angle : ndarray (n,)
        Angle of the major axis from the first coordinate axis, radians.
    """
    cov = np.asarray(cov, dtype=np.float64)
    if cov.ndim != 3 or cov.shape[1:] != (2, 2):
        raise ValueError(f"ellipses need 2 x 2 covariances, got shape {cov.shape}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    q = -2.0 * np.log1p(-level)  # chi-square quantile with 2 degrees of freedom
    vals, vecs = np.linalg.eigh(cov)
    vals = np.maximum(vals, 0.0)
    a = np.sqrt(q * vals[:, 1])
    b = np.sqrt(q * vals[:, 0])
    angle = np.arctan2(vecs[:, 1, 1], vecs[:, 0, 1])
    return a, b, angle


def coverage(X, Z, cov, level: float = 0.9) -> float:
    """Fraction of true positions inside the ``level`` ellipsoids after Procrustes alignment.

    ``Z`` is aligned to ``X`` by the best translation, rotation/reflection and
    scale (:func:`loe_viz.metrics.align`); the covariances are rotated and scaled
    by the same transform.

    Parameters
    ----------
    X : ndarray (n, d)
        Ground truth.
    Z : ndarray (n, d)
        Embedding.
    cov : ndarray (n, d, d)
        Covariances in the frame of ``Z``.
    level : float, default 0.9

    Returns
    -------
    float
    """
    from scipy.stats import chi2

    X = np.asarray(X, dtype=np.float64)
    Z = np.asarray(Z, dtype=np.float64)
    cov = np.asarray(cov, dtype=np.float64)
    if X.shape != Z.shape or cov.shape != (Z.shape[0], Z.shape[1], Z.shape[1]):
        raise ValueError(f"shapes disagree: X {X.shape}, Z {Z.shape}, cov {cov.shape}")
    Xc = X - X.mean(axis=0)
    Zc = Z - Z.mean(axis=0)
    U, sv, Vt = np.linalg.svd(Xc.T @ Zc)
    R = (U @ Vt).T  # Z R ~ X
    scale = sv.sum() / float(np.sum(Zc * Zc))
    Za = scale * Zc @ R + X.mean(axis=0)
    C = scale**2 * np.einsum("ji,njk,kl->nil", R, cov, R)
    diff = X - Za
    m2 = np.einsum("ni,nij,nj->n", diff, np.linalg.pinv(C, hermitian=True), diff)
    return float(np.mean(m2 <= chi2.ppf(level, Z.shape[1])))


@dataclass(eq=False)
class ItemUncertainty:
    """Per-item covariance of an LOE embedding, computed on first use and kept.

    Built by :class:`loe_viz.LOE` at the end of every fit (``stages_.uncertainty``);
    the covariances themselves (:attr:`covariance`) cost ``2 l (l - 1)`` runs of
    the landmark-block steps (at most ``2 BLOCK_PROBES + 2``) plus ``O(n l d^2)``,
    which is computed only when asked for (``LOE.uncertainty_``, the explorer's
    ellipses).

    Parameters
    ----------
    W : ndarray (l, l)
    D_landmarks : ndarray (n, l)
    landmarks : ndarray (l,)
    embedding : ndarray (n, d)
        The landmark-MDS embedding (``stages_.lmds.embedding``).
    score_variance : ndarray (n, l)
    score_bias : ndarray (n, l) or None
    offset : str
    reason : str, optional
        Why the covariances do not describe the final embedding (e.g. the
        ordinal polish replaced it); None when they do.
    comparisons_per_item : float, default inf
        Comparisons per ranked item of the median landmark; below
        :data:`CALIBRATED_COMPARISONS` the 90 % regions are not calibrated
        (:attr:`calibrated`).
    signal : float, default inf
        The rankings' signal; below :data:`SIGNAL_MIN` the 90 % regions are
        not calibrated either.

    Attributes
    ----------
    score_variance : ndarray (n, l)
        Sampling variance of every ranking score (column ``c``: landmark ``c``).
    score_bias : ndarray (n, l) or None
        First-order bias of every ranking score.
    reason : str or None
    """

    W: np.ndarray
    D_landmarks: np.ndarray
    landmarks: np.ndarray
    embedding: np.ndarray
    score_variance: np.ndarray
    score_bias: np.ndarray | None = None
    offset: str = "lambda2"
    reason: str | None = None
    comparisons_per_item: float = float("inf")
    signal: float = float("inf")
    _covariance: np.ndarray | None = field(default=None, init=False, repr=False)

    @classmethod
    def from_stages(cls, ranking, shifts, D_landmarks, lmds, offset="lambda2", reason=None) -> "ItemUncertainty":
        """Collect what :func:`item_covariance` needs from the results of one fit."""
        d = lmds.embedding.shape[1]
        supported = getattr(lmds, "n_supported", d)
        if reason is None and 0 <= supported < d:
            reason = (f"the landmark block supports only {supported} of the {d} dimensions; the other axes are "
                      "placed by a fallback with no error model")
        return cls(
            # a copy: embedding_ is lmds.embedding, and an edit of it in place (Z -= Z.mean(0)) before the
            # covariances' first computation changed them (a shift by 5: by 2.3 times their largest value)
            W=shifts.W, D_landmarks=D_landmarks, landmarks=ranking.landmarks, embedding=lmds.embedding.copy(),
            score_variance=score_variances(ranking.columns, ranking.R.shape[0]),
            score_bias=score_variances(ranking.columns, ranking.R.shape[0], "score_bias"), offset=offset, reason=reason,
            comparisons_per_item=ranking.comparisons_per_item,
            signal=ranking.signal,
        )

    @property
    def calibrated(self) -> bool:
        """Whether the rankings hold enough comparisons per item (:data:`CALIBRATED_COMPARISONS`) and tell the items
        apart well enough (:data:`SIGNAL_MIN`) for calibrated regions."""
        return not self.not_calibrated

    @property
    def not_calibrated(self) -> str:
        """Why the 90 % regions are not calibrated, as the end of a sentence on what they rest on; empty where
        they are."""
        if self.comparisons_per_item < CALIBRATED_COMPARISONS:
            return (f"{self.comparisons_per_item:.3g} comparisons per item and landmark; below "
                    f"{CALIBRATED_COMPARISONS:g} its 90 % regions are not calibrated (on simulated answers with 2 to "
                    "5 they covered 62 to 99 % of the true positions)")
        if self.signal < SIGNAL_MIN:
            return (f"rankings that barely tell the items apart (their score variance beyond noise, summed over the "
                    f"landmarks, is {self.signal:.3g}; about 0 for coin flips): below {SIGNAL_MIN:g} its 90 % regions "
                    "are far too small (on simulated noisy answers they covered 0 to 25 % of the true positions)")
        return ""

    @property
    def covariance(self) -> np.ndarray:
        """``(n, d, d)`` covariances of the landmark-MDS embedding (see :func:`item_covariance`)."""
        if self._covariance is None:
            self._covariance = item_covariance(
                self.W, self.D_landmarks, self.landmarks, self.embedding, self.score_variance, self.offset,
                biases=self.score_bias,
            )
        return self._covariance

    def __repr__(self) -> str:
        n, d = self.embedding.shape
        state = "computed" if self._covariance is not None else "not yet computed"
        return f"ItemUncertainty(n_items={n}, n_components={d}, {state})"
