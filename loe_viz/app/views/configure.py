"""Step 1, Configure: the hidden ground truth and its colours."""

from __future__ import annotations

import numpy as np
import panel as pn

from .. import plots
from ..colors import plane_axes, principal_plane, project
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
        D, d = X.shape[1], cfg["d"]
        # a file name the user chose, cut in its middle: the title's own words must stay whole at 1280 px
        name = plots.short_text(cfg.get("uploaded_name") or cfg.get("kind", ""), 26)
        # more than 2 dimensions: the axes say which plane is drawn (a title of 80 characters was cut mid-word)
        axes = plane_axes(D)
        plot = plots.scatter(P, s.colors, hue_lightness=s.hue_lightness,
                             title=f"Ground truth: {name}, n = {X.shape[0]:,}", xlabel=axes[0], ylabel=axes[1])
        lower = ""
        if isinstance(d, int) and d < D <= s.param.d.softbounds[1]:
            lower = (f" The points are **{D}-D**: set *Dimension d* to **{D}** in the sidebar to embed them in "
                     "their own dimension (in fewer, some of their distances cannot be kept).")
        with np.errstate(over="ignore", invalid="ignore"):  # coordinates near 1e200: "—", not a warning in the log
            msd = 2 * X.var(axis=0).sum()
        summary = pn.pane.Markdown(
            f"**{X.shape[0]:,} items** in **{D}** dimension{'s' if D > 1 else ''}; "
            f"embedding dimension **d = {d}**; mean squared distance "
            f"≈ {fmt(msd)}.{lower}",
            styles={"font-size": "1.1em"}, css_classes=["loe-configure-summary"])
        return [summary, hvpane(plot, name="configure_plot")]
