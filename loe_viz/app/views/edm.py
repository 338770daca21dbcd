"""Step 5, EDM: project the shifted landmark block onto the Euclidean distance matrices."""

from __future__ import annotations

import holoviews as hv
import numpy as np
import pandas as pd

from .. import plots
from .base import StepView, fmt, plot_row, summary
from ...edm import FIT_TOL
from ..truth import landmark_truth


class EDMView(StepView):
    """Estimated against true landmark distance matrix, and Dykstra's convergence."""

    title = "EDM"
    text = (
        """
The shifted block W + J diag(s) is symmetric-ish but, with noise, not a Euclidean distance
matrix (EDM).  LOE projects it onto the cone of EDMs by **Dykstra's alternating projections**
between the symmetric matrices with zero diagonal and the matrices whose doubly centred
version is negative semidefinite (V = I − 11ᵀ/ℓ; the cone step clips the positive eigenvalues):
""",
        r"$$E = \Pi_{\mathrm{EDM}}\big(W + J\,\mathrm{diag}(s)\big),\qquad \mathrm{EDM} = \{X = X^\top,\ \mathrm{diag}(X) = 0,\ V X V \preceq 0\}.$$",
        """
It stops when ‖Y − X‖∞ / ‖Y‖∞ ≤ 10⁻⁷ or after 1000 iterations.  The other rows are only
shifted, F = R<sub>rest</sub> + 1 sᵀ, not projected: the work stays O(ℓ³), never O(n²).
""",
    )

    def _render(self):
        X, cfg, model, landmarks = self._results()
        edm = model.stages_.edm
        DL, _ = landmark_truth(X, landmarks, cfg["temperature"])
        E = np.asarray(edm.E)
        lim = (0.0, float(max(E.max(), DL.max())))
        suffix = " / T" if cfg["temperature"] > 0 else ""
        # two to a row here: each as wide as the plots below it, every landmark's row labelled at l = 12
        h_est = plots.heatmap(E, "E (projected)", clim=lim, label=f"estimated distance{suffix}",
                              width=plots.HALF_WIDTH)
        h_true = plots.heatmap(DL, f"true D{suffix}", clim=lim, label=f"distance{suffix}", width=plots.HALF_WIDTH)
        iu = np.triu_indices(landmarks.size, 1)
        inp = np.asarray(edm.input)
        df = pd.DataFrame({"true": DL[iu], "projected E": E[iu], "before projection": inp[iu]})
        lo, hi = float(min(df.min().min(), 0)), float(df.max().max())
        pts_in = hv.Scatter(df, "true", "before projection", label="before projection").opts(
            color="#9aa7b4", size=10, marker="square")
        pts_e = hv.Scatter(df, "true", "projected E", label="E (projected)").opts(color="#2b6cb0", size=11)
        sc = (pts_in * pts_e * plots.identity_line(lo, hi)).opts(
            **plots.base_opts(title="Landmark pairs: estimate vs truth", xlabel=f"true D{suffix}",
                              ylabel="estimate", legend_position="bottom", responsive=False, width=420,
                              height=400 + plots.LEGEND_BELOW))
        res = np.asarray(edm.residuals, dtype=float)
        # the tolerance line goes in with the curve, so the plot keeps convergence()'s options
        # (the fonts of every other plot, whole-number iteration ticks)
        # a named line (an HLine has no legend entry): the red dashed line is the stopping tolerance
        # residual k is that of iteration k + 1 (there is none before the first): x runs from 1 to n_iter
        tol_line = hv.Curve([(1, FIT_TOL), (max(res.size, 2), FIT_TOL)], "iteration", "‖Y − X‖∞ / ‖Y‖∞",
                            label=f"stopping tolerance {_power_of_ten(FIT_TOL)}").opts(
            color="#d62728", line_dash="dashed", line_width=2.5)
        conv = plots.convergence(
            {"Dykstra": res}, "Dykstra convergence (log scale)", "‖Y − X‖∞ / ‖Y‖∞",
            lines=[tol_line], first=1, show_legend=True, legend_position="bottom",
            responsive=False, width=430, height=400 + plots.LEGEND_BELOW)
        rel = float(np.linalg.norm(E - DL) / max(np.linalg.norm(DL), 1e-12))
        rel_in = float(np.linalg.norm(inp - DL) / max(np.linalg.norm(DL), 1e-12))
        ev = np.asarray(model.stages_.lmds.eigenvalues, dtype=float)  # of −½VEV, descending (LOE's own)
        # below the projection's tolerance an eigenvalue is zero: print "0", not a rounding residue
        ev = np.where(np.abs(ev) <= FIT_TOL * max(float(np.abs(ev).max(initial=0.0)), 1e-300), 0.0, ev)
        info = summary(
            f"Dykstra {'converged' if edm.converged else '**did not converge**'} after {edm.n_iter} iterations.  "
            f"Relative error of the landmark distances: {fmt(rel_in)} before → **{fmt(rel)}** after projection.  "
            f"Leading eigenvalues of −½VEV: {', '.join(fmt(v) for v in ev[:min(5, ev.size)])} "
            f"(d = {cfg['d']} of them are used by landmark MDS).")
        return [info, plot_row(h_est, h_true), plot_row(sc, conv)]


def _power_of_ten(x: float) -> str:
    """``1e-07`` as "10⁻⁷" (other numbers as ``fmt`` writes them)."""
    e = np.log10(x)
    if x > 0 and float(e).is_integer():
        return "10" + str(int(e)).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return fmt(x)
