"""The Embedding step's 90 % ellipses: LOE's per-item uncertainty, aligned to the truth and drawn."""

from __future__ import annotations

import warnings

import numpy as np

from ..loe import LOEWarning
from ..uncertainty import CALIBRATED_COMPARISONS, SIGNAL_MIN

__all__ = ["aligned_covariances", "ellipse_outlines", "ellipse_plot", "ellipse_summary", "uncertainty_panes"]


def aligned_covariances(X: np.ndarray, Z: np.ndarray, cov: np.ndarray):
    """The embedding and its covariances moved onto the truth by the best similarity map.

    The same map as :func:`loe_viz.metrics.align` (translation, rotation/reflection,
    scale); covariances transform as ``scale^2 R^T C R``. An embedding in fewer
    dimensions than the truth is padded with zero columns (and zero variance).

    Returns
    -------
    Za : ndarray (n, D)
    C : ndarray (n, D, D)
    """
    X = np.asarray(X, dtype=np.float64)
    Z = np.asarray(Z, dtype=np.float64)
    cov = np.asarray(cov, dtype=np.float64)
    n, D = X.shape
    d = Z.shape[1]
    if d < D:
        Z = np.hstack([Z, np.zeros((n, D - d))])
        padded = np.zeros((n, D, D))
        padded[:, :d, :d] = cov
        cov = padded
    Xc = X - X.mean(axis=0)
    Zc = Z[:, :D] - Z[:, :D].mean(axis=0)
    U, sv, Vt = np.linalg.svd(Xc.T @ Zc)
    R = (U @ Vt).T
    scale = sv.sum() / max(float(np.sum(Zc * Zc)), 1e-300)
    Za = scale * Zc @ R + X.mean(axis=0)
    C = scale**2 * np.einsum("ji,njk,kl->nil", R, cov[:, :D, :D], R)
    return Za, C


def ellipse_outlines(xy: np.ndarray, cov2: np.ndarray, level: float = 0.9, n_vertices: int = 40) -> list:
    """Closed outlines of the ``level`` ellipses of 2-D Gaussians, as (n_vertices + 1, 2) arrays."""
    from loe_viz.uncertainty import ellipse_axes

    a, b, angle = ellipse_axes(cov2, level)
    t = np.linspace(0.0, 2.0 * np.pi, n_vertices + 1)
    out = []
    for (x, y), ai, bi, th in zip(np.asarray(xy), a, b, angle):
        c, s = np.cos(th), np.sin(th)
        ex, ey = ai * np.cos(t), bi * np.sin(t)
        out.append(np.column_stack([x + c * ex - s * ey, y + s * ex + c * ey]))
    return out


def ellipse_summary(X, Z, cov, level: float = 0.9) -> dict:
    """Coverage of the ``level`` ellipsoids (after alignment) and their median size."""
    from scipy.stats import chi2

    Za, C = aligned_covariances(X, Z, cov)
    d = np.asarray(Z).shape[1]
    diff = (np.asarray(X, dtype=np.float64) - Za)[:, :d]
    Cd = C[:, :d, :d]
    m2 = np.einsum("ni,nij,nj->n", diff, np.linalg.pinv(Cd, hermitian=True), diff)
    q = chi2.ppf(level, d)
    size = np.sqrt(q) * np.maximum(np.linalg.det(Cd), 0.0) ** (1.0 / (2 * d))
    return {"coverage": float(np.mean(m2 <= q)), "median_size": float(np.median(size)), "level": level}


def ellipse_plot(X, Z, cov, mean, basis, *, landmarks=(), level: float = 0.9, max_items: int = 120,
                 seed: int = 0, size: int = 560):
    """Aligned estimates with their ``level`` ellipses and the true positions, in the plot plane.

    Parameters
    ----------
    X : ndarray (n, D)
        Truth.
    Z : ndarray (n, d)
        Embedding.
    cov : ndarray (n, d, d)
        ``LOE.uncertainty_``.
    mean, basis : ndarray
        The plot plane (:func:`loe_viz.app.colors.principal_plane` of ``X``).
    landmarks : sequence of int
        Always drawn.
    max_items : int
        Draw a seeded random subset of this many items (plus the landmarks), so the
        ellipses stay legible.

    Returns
    -------
    holoviews.Overlay
    """
    import holoviews as hv

    from .colors import plane_axes, project
    from .plots import base_opts, subsample

    Za, C = aligned_covariances(X, Z, cov)
    P = project(np.asarray(X, dtype=np.float64), mean, basis)
    Q = project(Za, mean, basis)
    C2 = np.einsum("ji,njk,kl->nil", basis, C, basis)
    show = np.union1d(subsample(P.shape[0], max_items, seed), np.asarray(landmarks, dtype=np.int64))
    outlines = ellipse_outlines(Q[show], C2[show], level)
    lo = np.minimum(P[show].min(axis=0), np.min([o.min(axis=0) for o in outlines], axis=0))
    hi = np.maximum(P[show].max(axis=0), np.max([o.max(axis=0) for o in outlines], axis=0))
    pad = 0.05 * float((hi - lo).max())
    half = 0.5 * float((hi - lo).max()) + pad
    mid = 0.5 * (lo + hi)
    xl, yl = plane_axes(np.shape(X)[1])
    xr = hv.Dimension("x", label=xl, range=(mid[0] - half, mid[0] + half))
    yr = hv.Dimension("y", label=yl, range=(mid[1] - half, mid[1] + half))
    paths = hv.Path([{"x": o[:, 0], "y": o[:, 1]} for o in outlines], [xr, yr]).opts(
        color="#3b6fb6", alpha=0.55, line_width=1.2)
    truth = hv.Points((P[show, 0], P[show, 1]), [xr, yr], label="truth").opts(
        marker="x", color="#222222", size=6, alpha=0.8)
    est = hv.Points((Q[show, 0], Q[show, 1]), [xr, yr], label="estimate").opts(
        color="#3b6fb6", size=4, line_color=None)
    title = f"{round(100 * level)} % ellipses (blue), truth ×"
    if show.size < P.shape[0]:  # the share inside, said above the plot, counts every item
        title += f" (showing {show.size:,} of {P.shape[0]:,})"
    return (paths * est * truth).opts(**base_opts(title=title, show_legend=False, responsive=False,
                                                  width=size + 75, height=size + 95))


def uncertainty_panes(model, X, mean, basis, *, seed: int = 0, level: float = 0.9) -> list:
    """What the Embedding step shows when its ellipse toggle is on: a sentence and the plot."""
    import html

    import panel as pn

    from .views.base import alert

    unc = getattr(getattr(model, "stages_", None), "uncertainty", None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LOEWarning)  # the page says it below
        cov = getattr(model, "uncertainty_", None)
    if cov is None:
        reason = getattr(unc, "reason", None) or "this fit has no per-item uncertainty"
        return [alert(f"No ellipses: {html.escape(reason)}.", "info")]
    Z = model.embedding_
    summ = ellipse_summary(X, Z, cov, level)
    note = pn.pane.Markdown(
        f"Each item's **{round(100 * level)} % ellipse** says how precisely the answers place it: how sharply "
        "they pin down its score in each landmark's ranking, carried through the shifts and the landmark "
        f"triangulation, then moved by the same Procrustes map as the points. Here **{100 * summ['coverage']:.1f} %** of the true positions lie inside "
        f"their ellipse (nominal {round(100 * level)} %); median ellipse size {summ['median_size']:.3g} "
        "(it shrinks like 1/√c with the budget)." + _not_calibrated(unc),
        styles={"font-size": "1.05em"}, sizing_mode="stretch_width")
    plot = ellipse_plot(X, Z, cov, mean, basis, landmarks=getattr(model, "landmarks_", ()), level=level, seed=seed)
    return [note, pn.pane.HoloViews(plot, margin=(5, 10), name="embedding_ellipses")]


def _not_calibrated(unc) -> str:
    """What the page says where the ellipses are not calibrated (:attr:`ItemUncertainty.not_calibrated`)."""
    if unc is None or unc.calibrated:
        return ""
    if unc.comparisons_per_item < CALIBRATED_COMPARISONS:
        return (f" **Too few comparisons for calibrated ellipses:** each ranking holds {unc.comparisons_per_item:.3g} "
                f"comparisons per item; below {CALIBRATED_COMPARISONS:g} the variances of a few barely compared items "
                "dominate, and the share inside says little.")
    return (f" **Answers too noisy for calibrated ellipses:** the rankings barely tell the items apart (their score "
            f"variance beyond noise, summed over the landmarks, is {unc.signal:.3g}; about 0 for coin flips, and below "
            f"{SIGNAL_MIN:g} the embedding is mostly noise): the ellipses are far too small, and the share inside says "
            "little.")
