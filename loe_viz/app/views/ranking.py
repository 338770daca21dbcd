"""Step 3, Ranking: one Bradley–Terry fit per landmark column."""

from __future__ import annotations

import numpy as np
import panel as pn

from .. import plots
from ..colors import plane_axes, principal_plane, project
from ...ranking import DECREMENT_PER_TOL
from ..truth import true_scores
from .base import StepView, fmt, hvpane, plot_row, summary


def _steps(col) -> str:
    """The Newton steps a ranking took, and the last direction when it was not taken."""
    if col is None:
        return "0 Newton steps"
    taken = max(len(getattr(col, "grad_history", ())) - 1, 0)
    text = f"{taken} Newton step{'s' if taken != 1 else ''}"
    if getattr(col, "n_iter", taken) > taken:
        text += " (the next one promised too little to be worth taking)"
    return text


class RankingView(StepView):
    """Estimated scores of a chosen landmark against the true distances."""

    title = "Ranking"
    text = (
        """
**Each landmark column is a ranking problem.**  In a comparison (*i*; *j*, *k*) about landmark *i*,
the item *farther* from *i* "wins".  LOE fits one score *w* per item by ℓ2-regularised maximum
likelihood of the Bradley–Terry model, with the scores summing to zero:
""",
        r"$$\hat w = \arg\max_{w}\; \sum_{(i;\,\text{near},\,\text{far})} \log \sigma\big(w_{\text{far}} - w_{\text{near}}\big) \;-\; \frac{\lambda}{2}\lVert w\rVert^2 \quad \text{with } \textstyle\sum_a w_a = 0 .$$",
        """
The scores estimate the distance column up to an unknown shift *s<sub>i</sub>* (and in units of
the temperature *T*); the error of each entry shrinks like √(n log n / m):
""",
        r"$$R_{a i} = \hat w_a \;\approx\; \frac{D_{a i}}{T} - s_i \qquad (a \ne i).$$",
        """
Below: the scores of the chosen landmark against the truth (D minus its mean, divided by T) —
points on the dashed identity line are perfect; the solver's convergence for every landmark;
and where the landmarks are.  Items that never appeared in a landmark's comparisons carry no
information and keep score 0.
""",
    )

    def __init__(self, **params):
        super().__init__(**params)
        self._select = pn.widgets.Select(label="Landmark", options={}, width=260)
        self._syncing = False
        self._select.param.watch(self._on_select, "value")

    def _on_select(self, event):
        if not self._syncing:
            self.refresh(force=True)

    def controls(self):
        """Widgets shown above this step's plots."""
        return [self._select]

    def _render(self):
        s = self.state  # the colours of the points
        X, cfg, model, landmarks = self._results()
        rk = model.stages_.ranking
        l = landmarks.size
        opts = {f"L{c}: item {int(lm)}": c for c, lm in enumerate(landmarks)}
        if self._select.options != opts:
            self._syncing = True
            try:
                keep = self._select.value in opts.values()
                self._select.param.update(options=opts, value=self._select.value if keep else 0)
            finally:
                self._syncing = False
        c = int(self._select.value or 0)
        c = min(c, l - 1)
        head = int(landmarks[c])
        R = np.asarray(rk.R)
        est = R[:, c]
        truth = true_scores(X, head, cfg["temperature"])
        mask = np.ones(X.shape[0], bool)
        mask[head] = False
        lo = float(min(truth[mask].min(), est[mask].min()))
        hi = float(max(truth[mask].max(), est[mask].max()))
        xy = np.column_stack([truth[mask], est[mask]])
        T = cfg["temperature"]
        xl = "true (D − mean) / T" if T > 0 else "true D − mean"
        sc = plots.scatter(xy, np.asarray(s.colors)[mask], hue_lightness=s.hue_lightness[mask],
                           title=f"L{c} (item {head}): estimate vs truth", xlabel=xl,
                           ylabel="estimated score R", equal=False)
        fit_plot = (sc * plots.identity_line(lo, hi)).opts(show_legend=False, responsive=False,
                                                           width=plots.HALF_WIDTH, height=470)
        cols = getattr(rk, "columns", ())
        hist = {f"L{k}": getattr(col, "grad_history", np.array([])) for k, col in enumerate(cols)}
        conv = plots.convergence(hist, "Solver convergence (Newton, projected gradient norm)",
                                 "‖gradient‖")
        mean, basis = principal_plane(X)
        P = project(X, mean, basis)
        xl, yl = plane_axes(X.shape[1])
        where = (plots.scatter(P, s.colors, hue_lightness=s.hue_lightness, title="Landmarks ★ (chosen: yellow)",
                               xlabel=xl, ylabel=yl, alpha=0.5, square_size=plots.HALF_WIDTH - 75)
                 * plots.landmark_marks(P[landmarks], labels=landmarks, highlight=c,
                                        geo=plots.square(P, size=plots.HALF_WIDTH - 75)))
        col = cols[c] if c < len(cols) else None
        unranked = len(getattr(col, "unranked", ())) if col is not None else 0
        corr = float(np.corrcoef(truth[mask], est[mask])[0, 1]) if mask.sum() > 2 else float("nan")
        rmse = float(np.sqrt(np.mean((truth[mask] - est[mask]) ** 2)))
        info = summary(
            f"**L{c}** (item {head}): {getattr(col, 'n_comparisons', 0):,} comparisons, "
            f"{_steps(col)}, "
            f"{'converged' if getattr(col, 'converged', False) else '**not converged**'}, "
            f"final gradient norm {fmt(getattr(col, 'grad_norm', float('nan')))}{_from(col)}; "
            f"correlation with the truth **{corr:.3f}**, RMS error {fmt(rmse)}; "
            f"{unranked} item{'s' if unranked != 1 else ''} never compared "
            f"(regularisation λ = {fmt(getattr(rk, 'regularization', float('nan')))}).")
        gain = DECREMENT_PER_TOL * float(getattr(model, "tol", 1e-5)) / 2  # log-likelihood per item
        rule = pn.pane.Markdown(
            f"**When a ranking stops.** Not when the gradient is near 0, but when a Newton step is expected to "
            f"gain less than {fmt(gain)} of log-likelihood per item: the scores' own noise is worth about ½ per "
            "item, so more steps would only fit the noise. The rule is relative to the noise, not an absolute "
            "bound on the gradient, so a final gradient norm of a few units, far below where it started, "
            "means converged.",
            styles={"font-size": "1.05em"}, sizing_mode="stretch_width", css_classes=["loe-stop-rule"])
        return [info, plot_row(fit_plot, where), rule, _convergence_note(cols), hvpane(conv)]


def _convergence_note(cols) -> pn.pane.Markdown:
    """What the convergence plot below shows: with one Newton step per landmark, a straight line each."""
    taken = [max(len(getattr(c, "grad_history", ())) - 1, 0) for c in cols]
    if not taken:
        text = "No ranking recorded its convergence."
    elif max(taken) == 1 and all(getattr(c, "converged", False) for c in cols):
        who = "the landmark" if len(taken) == 1 else f"every landmark (all {len(taken)})"
        text = (f"**One Newton step reached the tolerance for {who}**, so each line below only joins the "
                "gradient norm at the start (iteration 0) to the final one (iteration 1): the drop between "
                "them is all there is to read. With less noise the rankings need more steps (at T = 0, "
                "noiseless answers, over a dozen).")
    else:
        lo, hi = min(taken), max(taken)
        steps = f"{lo} Newton step{'s' if lo != 1 else ''}" if lo == hi else f"from {lo} to {hi} Newton steps"
        text = f"The rankings of the {len(taken)} landmarks took {steps}: one line each below."
    return pn.pane.Markdown(text, styles={"font-size": "1.05em"}, sizing_mode="stretch_width",
                            css_classes=["loe-convergence-note"])


def _from(col) -> str:
    """", down from …" : the gradient norm the ranking started from (the rule is relative, not absolute)."""
    h = np.asarray(getattr(col, "grad_history", ()), dtype=float)
    return f", down from {fmt(h[0])}" if h.size > 1 and np.isfinite(h[0]) else ""

