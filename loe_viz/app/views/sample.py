"""Step 2, Sample: the comparisons LOE asks for, in words and counts."""

from __future__ import annotations

import holoviews as hv
import numpy as np
import pandas as pd
import panel as pn
import param

from .. import plots
from ..colors import plane_axes, principal_plane, project
from ..._format import format_bytes as _fmt_bytes, format_seconds as _fmt_seconds
from ..truth import flipped_answers
from .base import StepView, fmt, swatch, hvpane


class SampleView(StepView):
    """A few answered triplets in words, the counts, and what the next run will cost."""

    title = "Sample"
    text = (
        """
LOE only asks questions **about landmarks**: *ℓ* items (at least *d* + 3) drawn at random, or
spread out by MaxMin (each next landmark an item far from the landmarks already chosen, judged
only from the answers collected so far).  For landmark *i* it draws pairs {*j*, *k*} of other items uniformly at random
and asks which is closer; 2 % of its pairs are pairs of other landmarks (none with "The paper's algorithm only"),
because the Shifts step estimates from those entries of the rankings, which uniform pairs leave to a few hundred
answers each.  The answers are noisy, with the logistic (Bradley–Terry) model
""",
        r"$$P(\text{“}j\text{ is closer to }i\text{ than }k\text{”}) = \sigma\!\left(\frac{D_{ik} - D_{ij}}{T}\right),\qquad \sigma(t) = \frac{1}{1+e^{-t}},$$",
        """
where *T* is the temperature (*T* = 1 is the paper's model, *T* = 0 answers without noise).
A triplet is stored as a row (*i*, *j*, *k*): "*i* is closer to *j* than to *k*".  The budget is
either a count per landmark or the paper's total
""",
        r"$$m = \lfloor c \, n \ln n \rfloor \ \text{comparisons, split evenly over the } \ell \text{ landmarks.}$$",
    )

    n_examples = param.Integer(default=6, bounds=(1, 20))

    def __init__(self, **params):
        super().__init__(**params)
        self._draw = pn.widgets.Button(label="Show other examples", variant="outline")
        self._draw.on_click(lambda e: self.refresh(force=True))
        self._example_seed = 0

    def controls(self):
        """Widgets shown above this step's plots."""
        return []

    def _render(self):
        s = self.state
        X, T, cfg, m = s.points, s.triplets, s.config_used, s.metrics
        n, l = X.shape[0], cfg["n_landmarks"]
        landmarks = np.asarray(s.model.landmarks_)
        # noise: answers that contradict the true distances
        flipped = flipped_answers(X, T)
        rng = np.random.default_rng(self._example_seed)
        self._example_seed += 1
        pick = rng.choice(T.shape[0], min(self.n_examples, T.shape[0]), replace=False)
        cols = s.colors
        lines = []
        for r in pick:
            i, j, k = (int(v) for v in T[r])
            verdict = ("<span style='color:#b00020'>✗ the noise flipped this one: in truth "
                       f"{k} is closer</span>") if flipped[r] else "<span style='color:#1b7f3b'>✓ true</span>"
            lines.append(f"<li style='margin:0.3em 0'>{swatch(cols[i], f'item {i}')} is closer to "
                         f"{swatch(cols[j], str(j))} than to {swatch(cols[k], str(k))} &nbsp; {verdict}</li>")
        words = pn.pane.HTML("<ul style='font-size:1.25em;line-height:1.6'>" + "".join(lines) + "</ul>",
                             sizing_mode="stretch_width")
        if cfg["budget_unit"] == "per_landmark":
            budget = f"{cfg['per_landmark']:,} comparisons per landmark (the unit chosen)"
        else:
            budget = (f"c = {fmt(cfg['budget'])}: ⌊c·n·ln n⌋ = {int(np.floor(cfg['budget'] * n * np.log(n))):,} "
                      f"in total → {cfg['per_landmark']:,} per landmark")
        est = s.estimate
        est_txt = (f"about **{_fmt_seconds(est.seconds)}** and **{_fmt_bytes(est.bytes)}**"
                   if est is not None else "—")
        sel = "spread out by MaxMin" if cfg["landmark_selection"] == "maxmin" else "drawn at random"
        counts = pn.pane.Markdown(
            f"""
| | |
|---|---|
| items *n* | {n:,} |
| landmarks *ℓ* ({sel}) | {l} : items {', '.join(str(int(v)) for v in landmarks[:12])}{' …' if l > 12 else ''} |
| budget | {budget} |
| comparisons used | **{m['n_triplets']:,}** (of {n * (n - 1) * (n - 2) // 2:,} possible triplets) |
| answers flipped by noise (T = {fmt(cfg['temperature'])}) | {flipped.mean():.1%} |
| this run | sampling and fitting took {_fmt_seconds(m['fit_seconds'])} (the fit alone \
{_fmt_seconds(m['loe_seconds'])}); estimate was {est_txt} |
""", styles={"font-size": "1.1em"}, sizing_mode="stretch_width")
        # picture: the examples drawn on the ground truth
        mean, basis = principal_plane(X)
        P = project(X, mean, basis)
        xl, yl = plane_axes(X.shape[1])
        base = plots.scatter(P, cols, hue_lightness=s.hue_lightness, title="The examples on the ground truth",
                             xlabel=xl, ylabel=yl, alpha=0.35)
        i_, j_, k_ = T[pick, 0], T[pick, 1], T[pick, 2]
        near = hv.Segments(pd.DataFrame({"x0": P[i_, 0], "y0": P[i_, 1], "x1": P[j_, 0], "y1": P[j_, 1]}),
                           label="answered closer").opts(color="#1b7f3b", line_width=4)
        far = hv.Segments(pd.DataFrame({"x0": P[i_, 0], "y0": P[i_, 1], "x1": P[k_, 0], "y1": P[k_, 1]}),
                          label="answered farther").opts(color="#b00020", line_width=3, line_dash="10 5")
        # every item the examples name, and every landmark, labelled by its item number (the
        # sentences above use them), each label beside its point on the side with room: the
        # landmarks first, then the other items of the examples
        ends = np.setdiff1d(np.unique(np.concatenate([i_, j_, k_])), landmarks)
        marked = np.concatenate([landmarks, ends]).astype(int)
        radius = np.concatenate([np.full(landmarks.size, plots.STAR_SIZE / 2),
                                 np.full(ends.size, plots.marker_size(n) / 2 + 1)])
        drawn = np.column_stack([np.repeat(P[i_], 2, axis=0), np.column_stack([P[j_], P[k_]]).reshape(-1, 2)])
        labels = plots.point_labels(P[marked], [str(v) for v in marked], geo=plots.square(P), radius=radius,
                                    font_size=14, lines=drawn)
        # the legend below the picture, not over its points; the plot grows by the legend's
        # height so that the frame stays square (distances undistorted)
        picture = (base * near * far * plots.landmark_marks(P[landmarks], labels=landmarks, text=False)
                   * labels).opts(legend_position="bottom", height=plots.SQUARE + 95 + plots.LEGEND_BELOW,
                                  hooks=[plots.legend_items_apart])
        return [
            pn.Row(pn.pane.Markdown("### Some of the answers", margin=(0, 10)), self._draw),
            words, counts,
            hvpane(picture),
        ]
