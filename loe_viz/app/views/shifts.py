"""Step 4, Shifts: make the landmark block symmetric, then fix the common offset."""

from __future__ import annotations

import holoviews as hv
import numpy as np
import pandas as pd

from .. import plots
from ..truth import landmark_truth
from .base import StepView, fmt, hvpane, summary


class ShiftsView(StepView):
    """W before and after the shifts, the shifts against the truth, and the eigenvalue spectrum."""

    title = "Shifts"
    text = (
        """
Take the *ℓ × ℓ* block **W** of the scores at the landmarks (zero diagonal).  Column *c* is the
true distance column minus an unknown shift *s<sub>c</sub>*.  Because the true block is
symmetric, every pair of landmarks gives an equation; with the gauge Σ*s* = −ΣW/(ℓ − 1)
the least-squares solution is
""",
        r"$$s_c^{\mathrm{LS}} = \frac{1}{\ell}\sum_{r}\big(W_{cr} - W_{rc}\big) - \frac{\sum W}{\ell\,(\ell-1)} .$$",
        """
Symmetry cannot see a shift common to all columns.  LOE finds it from the spectrum: with
J = 11ᵀ − I and C = sym(W + J diag(s<sup>LS</sup>)), what is left is one common offset σ (the paper's σ<sub>E*</sub>):
C = D<sub>LL</sub> − σJ with the true landmark distances D<sub>LL</sub>, so
C − σI = D<sub>LL</sub> − σ11ᵀ.  An EDM of *ℓ* points in ℝ<sup>d</sup> has rank at most
*d* + 2 (its columns lie in the span of 1, the squared norms and the *d* coordinates), so
C − σI has rank at most *d* + 2 and **σ is an eigenvalue of C with multiplicity at least
*ℓ* − *d* − 2** (at least 1 at the default *ℓ* = *d* + 3).  D<sub>LL</sub> − σ11ᵀ is negative
semidefinite on the vectors orthogonal to 1, so it has at most one positive eigenvalue, and
the offset is the **second-largest signed eigenvalue**:
""",
        r"$$s = s^{\mathrm{LS}} + \lambda_2(C)\,\mathbf 1, \qquad \text{exact without noise when } \ell \ge d + 3 .$$",
        """
With noise λ₂ is the largest of *ℓ* − *d* − 2 noisy copies of the offset (biased upward); the
variant "mean" averages them, λ₂ … λ<sub>ℓ−d−1</sub>.  At *ℓ* = *d* + 3 there is only one copy,
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
        h_before = plots.heatmap(W, "W, before the shifts", cmap="RdBu_r", symmetric=True, label="score")
        h_after = plots.heatmap(after, "W + J diag(s), after", clim=lim, label="shifted score")
        per_t = " / T" if cfg["temperature"] > 0 else ""
        h_true = plots.heatmap(DL, "true D" + per_t, clim=lim, label="distance" + per_t)
        bars = shift_bars(np.asarray(sh.s_ls), np.asarray(sh.s), np.asarray(s_true))
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
        rule = offset_name(sh.method, l, int(cfg["d"]))
        est_line = hv.Curve([(span[0], float(sh.offset)), (span[1], float(sh.offset))],
                            label=f"offset used ({rule})").opts(color="#d62728", line_dash="dashed", line_width=2.5)
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
        same = ("; at ℓ = d + 3 the “mean” rule averages this one eigenvalue, so it equals λ₂"
                if mult == 1 else f"; the “mean” rule averages λ₂ … λ{_sub(l - d - 1)} ({mult} eigenvalues)")
        info = summary(
            f"Offset rule **{rule}**: offset = {fmt(sh.offset)}, the true common offset here is "
            f"**{fmt(offset_true)}**.  With ℓ = {l} and d = {d} the offset is an eigenvalue of C of "
            f"multiplicity at least ℓ − d − 2 = {mult} without noise{same}.  "
            f"RMS error of the shifts: least squares {fmt(err_ls)} → final {fmt(err_fin)}.")
        return [
            info,
            plots.wrap(hvpane(h_before), hvpane(h_after), hvpane(h_true)),
            plots.wrap(hvpane(bars), hvpane(spectrum)),
        ]


def _sub(k: int) -> str:
    """``k`` in Unicode subscript digits."""
    return str(k).translate(str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉"))


#: The estimates of the shifts in the bar chart, left to right in each landmark's group (and in its legend).
SHIFT_BARS = (("least squares", "#9aa7b4"), ("final (LS + offset)", "#2b6cb0"), ("true", "#e07b00"))
#: Pixels of a tick label's room on the bar chart's axis ("L10" at the plots' font is about 30 px).
_TICK_ROOM = 42


def offset_name(method: str, l: int, d: int) -> str:
    """How an offset rule of ``LOE(offset=...)`` is written on screen ("λ₂", not the code's "lambda2")."""
    if method == "lambda2":
        return "λ₂"
    if method == "mean":
        return f"mean of λ₂ … λ{_sub(l - d - 1)}" if l - d - 1 > 2 else "mean of λ₂"
    return str(method)


def shift_bars(s_ls: np.ndarray, s_final: np.ndarray, s_true: np.ndarray, width: int = plots.HALF_WIDTH,
               height: int = 440):
    """The shifts of every landmark, grouped by landmark: least squares, final and true, in that order.

    Bars on a numeric axis with half a group of room at both ends (categorical bars cut the first
    and the last bar in half), and a label under every landmark while they have room, under every
    second, third, … one when they would run together ("L10L11").
    """
    l = int(np.size(s_true))
    w = 0.8 / len(SHIFT_BARS)
    layers = []
    for k, ((name, color), v) in enumerate(zip(SHIFT_BARS, (s_ls, s_final, s_true))):
        x0 = np.arange(l) - 0.4 + k * w
        df = pd.DataFrame({"x0": x0, "y0": 0.0, "x1": x0 + w, "y1": np.asarray(v, dtype=float),
                           "landmark": [f"L{c}" for c in range(l)], "estimate": name})
        layers.append(hv.Rectangles(df, ["x0", "y0", "x1", "y1"], ["landmark", "estimate"], label=name).opts(
            color=color, line_color=None, tools=["hover"],
            hover_tooltips=[("landmark", "@landmark"), ("estimate", "@estimate"), ("shift", "@y1{0.000}")]))
    frame = width - 100  # the axes and the toolbar take the rest
    every = max(1, int(np.ceil(l / max(frame // _TICK_ROOM, 1))))
    return hv.Overlay(layers).opts(**plots.base_opts(
        title="Shifts per landmark", xlabel="landmark", ylabel="shift", xlim=(-0.75, l - 0.25),
        xticks=[(c, f"L{c}") for c in range(0, l, every)], padding=(0, 0.06), show_legend=True,
        legend_position="bottom", tools=["save"], responsive=False, width=width, height=height))
