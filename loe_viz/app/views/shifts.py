"""Step 4, Shifts: make the landmark block symmetric, then fix the common offset."""

from __future__ import annotations

import holoviews as hv
import numpy as np
import pandas as pd
import panel as pn

from .. import plots
from ..truth import landmark_truth
from .base import StepView, fmt, hvpane


class ShiftsView(StepView):
    """W before and after the shifts, the shifts against the truth, and the eigenvalue spectrum."""

    title = "Shifts"
    text = (
        """
Take the *l × l* block **W** of the scores at the landmarks (zero diagonal).  Column *c* is the
true distance column minus an unknown shift *s<sub>c</sub>*.  Because the true block is
symmetric, every pair of landmarks gives an equation; with the gauge Σ*s* = −ΣW/(l − 1)
the least-squares solution is
""",
        r"$$s_c^{\mathrm{LS}} = \frac{1}{l}\sum_{r}\big(W_{cr} - W_{rc}\big) - \frac{\sum W}{l\,(l-1)} .$$",
        """
Symmetry cannot see a shift common to all columns.  LOE finds it from the spectrum: with
J = 11ᵀ − I and C = sym(W + J diag(s<sup>LS</sup>)), a common offset σ changes C by σJ, whose
eigenvalues are l − 1 (once) and −1.  A true (centred) distance matrix has at most one
positive eigenvalue and a null space of dimension ≥ l − 1 − d ≥ 2, so the offset is the
**second-largest signed eigenvalue**:
""",
        r"$$s = s^{\mathrm{LS}} + \lambda_2(C)\,\mathbf 1, \qquad \text{exact without noise when } l \ge d + 3 .$$",
        """
With noise λ₂ is the largest of several noisy copies of the offset (biased upward); the
variant "mean" averages λ₂ … λ<sub>l−d−1</sub>.
""",
    )

    def _render(self):
        s = self.state
        X, cfg, model = s.points, s.config_used, s.model
        sh = model.stages_.shifts
        landmarks = np.asarray(model.landmarks_)
        l = landmarks.size
        DL, s_true = landmark_truth(X, landmarks, cfg["temperature"])
        W = np.asarray(sh.W)
        after = W + np.asarray(sh.s)[None, :]
        np.fill_diagonal(after, 0.0)
        lim = (float(min(np.nanmin(after), DL.min(), 0.0)), float(max(np.nanmax(after), DL.max())))
        h_before = plots.heatmap(W, "W, before the shifts", cmap="RdBu_r", symmetric=True)
        h_after = plots.heatmap(after, "W + J diag(s), after", clim=lim)
        h_true = plots.heatmap(DL, "true D" + (" / T" if cfg["temperature"] > 0 else ""),
                               clim=lim)
        rows = []
        for c in range(l):
            rows += [(f"L{c}", "least squares", float(sh.s_ls[c])),
                     (f"L{c}", "final (LS + offset)", float(sh.s[c])),
                     (f"L{c}", "true", float(s_true[c]))]
        df = pd.DataFrame(rows, columns=["landmark", "estimate", "shift"])
        bars = hv.Bars(df, ["landmark", "estimate"], "shift").opts(
            **plots.base_opts(title="Shifts per landmark", cmap=["#9aa7b4", "#2b6cb0", "#e07b00"],
                              color="estimate", multi_level=True, xrotation=0, tools=["hover", "save"],
                              show_legend=True, legend_position="top_right", xlabel=""))
        ev = np.asarray(sh.eigenvalues, dtype=float)
        used = set(int(i) for i in getattr(sh, "offset_indices", (1,)))
        edf = pd.DataFrame({"k": np.arange(1, ev.size + 1), "eigenvalue": ev,
                            "role": ["used for the offset" if i in used else "other" for i in range(ev.size)]})
        spec = hv.Scatter(edf, "k", ["eigenvalue", "role"]).opts(
            color="role", cmap={"used for the offset": "#d62728", "other": "#4c78a8"}, size=14,
            tools=["hover"], show_legend=True)
        stems = hv.Spikes(edf, "k", "eigenvalue").opts(color="#999999", line_width=2)
        off = hv.HLine(float(sh.offset)).opts(color="#d62728", line_dash="dashed", line_width=2)
        zero = hv.HLine(0.0).opts(color="#333333", line_width=1)
        lam2 = hv.Text(2, float(ev[1]) if ev.size > 1 else 0.0, "  λ₂", halign="left", valign="bottom",
                       fontsize=16)
        spectrum = (stems * spec * off * zero * lam2).opts(
            **plots.base_opts(title="Eigenvalues of C = sym(W + J diag(s_LS)), descending",
                              xlabel="k", ylabel="λₖ", legend_position="top_right"))
        offset_true = float(np.mean(s_true - np.asarray(sh.s_ls)))
        err_ls = float(np.sqrt(np.mean((np.asarray(sh.s_ls) - s_true) ** 2)))
        err_fin = float(np.sqrt(np.mean((np.asarray(sh.s) - s_true) ** 2)))
        info = pn.pane.Markdown(
            f"Offset rule **{sh.method}**: offset = {fmt(sh.offset)} (the true common offset here is "
            f"{fmt(offset_true)}).  RMS error of the shifts: least squares {fmt(err_ls)} → final {fmt(err_fin)}.",
            styles={"font-size": "1.1em"}, sizing_mode="stretch_width")
        return [
            info,
            pn.Row(hvpane(h_before), hvpane(h_after), hvpane(h_true), sizing_mode="stretch_width"),
            pn.Row(hvpane(bars),
                   hvpane(spectrum),
                   sizing_mode="stretch_width"),
        ]
