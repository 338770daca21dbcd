"""Step 1, Configure: the hidden ground truth and its colours."""

from __future__ import annotations

import panel as pn

from .. import plots
from ..colors import principal_plane, project
from .base import StepView, fmt, hvpane


class ConfigureView(StepView):
    """The ground-truth points, coloured by position (hue by angle, lightness by radius)."""

    title = "Configure"
    text = (
        """
Ordinal embedding recovers points x₁, …, xₙ in ℝᵈ from **comparisons only**:
"is item *j* closer to item *i* than item *k*?".  Here we pick the hidden ground truth, so that
every later step can be checked against it.  Each point keeps its colour in every plot:
**hue = angle** around the centre, **lightness = radius** (light inside, dark at the rim).
All distances below are *squared*:
""",
        r"$$D_{ij} = \lVert x_i - x_j \rVert^2 .$$",
        """
Choose the configuration, the number of items *n*, the dimension *d* and the seed in the
sidebar, or upload a CSV table of points (one row per item, numeric columns).
""",
    )

    def _render(self):
        s = self.state
        X, cfg = s.points, s.config_used
        mean, basis = principal_plane(X)
        P = project(X, mean, basis)
        name = plots.short_text(cfg.get("uploaded_name") or cfg.get("kind", ""))  # a file name the user chose
        sub = "" if X.shape[1] <= 2 else f" (first two principal axes of {X.shape[1]}-D data)"
        plot = plots.scatter(P, s.colors, hue_lightness=s.hue_lightness,
                             title=f"Ground truth: {name}, n = {X.shape[0]:,}{sub}",
                             xlabel="x₁", ylabel="x₂")
        D = X.shape[1]
        summary = pn.pane.Markdown(
            f"**{X.shape[0]:,} items** in **{D}** dimension{'s' if D > 1 else ''}; "
            f"embedding dimension **d = {cfg['d']}**; mean squared distance "
            f"≈ {fmt(2 * X.var(axis=0).sum())}.",
            styles={"font-size": "1.1em"})
        return [summary, hvpane(plot, name="configure_plot")]
