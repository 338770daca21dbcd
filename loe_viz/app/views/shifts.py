"""Step 4, Shifts: make the landmark block symmetric, then fix the common offset."""

from __future__ import annotations

import holoviews as hv
import numpy as np
import pandas as pd
import panel as pn

from .. import plots
from ..truth import landmark_truth
from .base import StepView, fmt, hvpane, summary


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
J = 11ᵀ − I and C = sym(W + J diag(s<sup>LS</sup>)), what is left is one common offset σ:
C = D<sub>LL</sub> − σJ with the true landmark distances D<sub>LL</sub>, so
C − σI = D<sub>LL</sub> − σ11ᵀ.  An EDM of *l* points in ℝ<sup>d</sup> has rank at most
*d* + 2 (its columns lie in the span of 1, the squared norms and the *d* coordinates), so
C − σI has rank at most *d* + 2 and **σ is an eigenvalue of C with multiplicity at least
*l* − *d* − 2** (at least 1 at the default *l* = *d* + 3).  D<sub>LL</sub> − σ11ᵀ is negative
semidefinite on the vectors orthogonal to 1, so it has at most one positive eigenvalue, and
the offset is the **second-largest signed eigenvalue**:
""",
        r"$$s = s^{\mathrm{LS}} + \lambda_2(C)\,\mathbf 1, \qquad \text{exact without noise when } l \ge d + 3 .$$",
        """
With noise λ₂ is the largest of *l* − *d* − 2 noisy copies of the offset (biased upward); the
variant "mean" averages them, λ₂ … λ<sub>l−d−1</sub>.  At *l* = *d* + 3 there is only one copy,
so "mean" **equals** λ₂: add landmarks to see the two rules differ.  On the spectrum below the
red dashed line is the offset LOE used and the broad orange line the true offset.
""",
    )

    def _render(self):
        X, cfg, model, landmarks = self._results()
        sh = model.stages_.shifts
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
        # grouped bars labelled by landmark only: the three estimates are told apart by colour
        # and the legend below the plot (3 l rotated tick labels overlapped into a smear)
        bars = hv.Bars(df, ["landmark", "estimate"], "shift").opts(
            **plots.base_opts(title="Shifts per landmark", cmap=["#9aa7b4", "#2b6cb0", "#e07b00"],
                              color="estimate", multi_level=True, xrotation=0, tools=["hover", "save"],
                              show_legend=True, legend_position="bottom", xlabel="", line_color=None,
                              hooks=[_group_labels_only],
                              responsive=False, width=plots.HALF_WIDTH, height=440))
        ev = np.asarray(sh.eigenvalues, dtype=float)
        used = set(int(i) for i in getattr(sh, "offset_indices", (1,)))
        edf = pd.DataFrame({"k": np.arange(1, ev.size + 1), "eigenvalue": ev,
                            "role": ["used for the offset" if i in used else "other" for i in range(ev.size)]})
        spec = hv.Scatter(edf, "k", ["eigenvalue", "role"]).opts(
            color="role", cmap={"used for the offset": "#d62728", "other": "#4c78a8"}, size=14,
            tools=["hover"], show_legend=False)
        stems = hv.Spikes(edf, "k", "eigenvalue").opts(color="#999999", line_width=2)
        offset_true = float(np.mean(s_true - np.asarray(sh.s_ls)))
        span = (0.6, ev.size + 0.4)
        est_line = hv.Curve([(span[0], float(sh.offset)), (span[1], float(sh.offset))],
                            label=f"offset used ({sh.method})").opts(color="#d62728", line_dash="dashed",
                                                                      line_width=2.5)
        true_line = hv.Curve([(span[0], offset_true), (span[1], offset_true)], label="true offset").opts(
            color="#e07b00", line_width=7, alpha=0.55)
        zero = hv.HLine(0.0).opts(color="#333333", line_width=1)
        lam2 = hv.Text(2, float(ev[1]) if ev.size > 1 else 0.0, "  λ₂", halign="left", valign="bottom",
                       fontsize=16)
        spectrum = (true_line * stems * spec * zero * est_line * lam2).opts(
            **plots.base_opts(title="Eigenvalues λₖ of C, descending", xlabel="k", ylabel="λₖ",
                              legend_position="bottom", show_legend=True, xlim=span,
                              responsive=False, width=plots.HALF_WIDTH, height=440))
        err_ls = float(np.sqrt(np.mean((np.asarray(sh.s_ls) - s_true) ** 2)))
        err_fin = float(np.sqrt(np.mean((np.asarray(sh.s) - s_true) ** 2)))
        d = int(cfg["d"])
        mult = l - d - 2
        same = ("; at l = d + 3 the “mean” rule averages this one eigenvalue, so it equals λ₂"
                if mult == 1 else f"; the “mean” rule averages λ₂ … λ{_sub(l - d - 1)} ({mult} eigenvalues)")
        info = summary(
            f"Offset rule **{sh.method}**: offset = {fmt(sh.offset)}, the true common offset here is "
            f"**{fmt(offset_true)}**.  With l = {l} and d = {d} the offset is an eigenvalue of C of "
            f"multiplicity at least l − d − 2 = {mult} without noise{same}.  "
            f"RMS error of the shifts: least squares {fmt(err_ls)} → final {fmt(err_fin)}.")
        return [
            info,
            plots.wrap(hvpane(h_before), hvpane(h_after), hvpane(h_true)),
            plots.wrap(hvpane(bars), hvpane(spectrum)),
        ]


def _sub(k: int) -> str:
    """``k`` in Unicode subscript digits."""
    return str(k).translate(str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉"))


def _group_labels_only(plot, element):
    """Bokeh hook: on a nested categorical x axis show the groups (landmarks), not the inner factors."""
    for ax in plot.state.xaxis:
        ax.major_label_text_font_size = "0px"
        ax.group_text_font_size = "15px"
        ax.group_text_color = "#222222"
