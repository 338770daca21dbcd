"""Step 6, Embedding: landmark MDS, aligned to the ground truth."""

from __future__ import annotations

import numpy as np
import panel as pn

from .. import plots
from ..colors import plane_axes, principal_plane, project
from ..uncertainty_plot import uncertainty_panes
from .base import TWO_LINES, StepView, WrappingRow, fmt, hvpane


class EmbeddingView(StepView):
    """Recovered points beside and over the ground truth, with the errors."""

    title = "Embedding"
    text = (
        """
**Landmark MDS** (de Silva & Tenenbaum, 2004) places the landmarks by classical MDS of E and
every other item by triangulation from its (shifted) distances to the landmarks, F<sub>a</sub>:
""",
        r"$$A = -\tfrac12 V E V = Q \Lambda Q^\top,\qquad Y_L = Q_d \Lambda_d^{1/2},\qquad y_a = -\tfrac12\, \Lambda_d^{-1/2} Q_d^\top \big(F_a - \mu\big),$$",
        """
where μ holds the column means of E and only the *d* largest (positive) eigenvalues are used.
An embedding is only defined up to translation, rotation/reflection and scale, so it is
compared with the truth after the best such map (Procrustes).  Errors:

* **Procrustes error**: standardised disparity Σ‖x − ŷ‖² / Σ‖x − x̄‖² after alignment (0 is perfect);
* **triplet error**: fraction of 10⁴ random noiseless triplets of the truth the embedding gets wrong.

Select points (box or lasso) in one of the two plots side by side, the ground truth or the
recovered points: the same items light up in the other.
""",
    )

    def __init__(self, **params):
        super().__init__(**params)
        self._live = None
        self._live_panes = None
        # Fixed widths with room for the widest value each shows ("100.00 %", "100.0 %", three
        # significant digits of seconds), and no line breaks in them: a figure whose text changed
        # width or wrapped resized its box, and the page laid every plot out again (~20 ms).
        big = dict(font_size="32pt", title_size="14pt", styles={"white-space": "nowrap"})
        self._numbers = [
            pn.indicators.Number(label="Procrustes error", value=0, format="{value}", width=165, **big),
            pn.indicators.Number(label="Triplet error", value=0, format="{value} %", width=215, **big),
            pn.indicators.Number(label="Training triplets satisfied", value=0, format="{value} %", width=245,
                                 **big),
            pn.indicators.Number(label="Fit time", value=0, format="{value} s", width=175, **big),
        ]
        self._metrics = plots.wrap(*self._numbers)
        self._counts = pn.pane.Markdown(
            "**Training triplets satisfied** counts the answers LOE was given (noisy: at T > 0 some "
            "contradict the truth, so even the true points do not satisfy all of them); **triplet "
            "error** counts mistakes on fresh, noiseless triplets of the ground truth; **fit time** is LOE's fit "
            "of the comparisons, without drawing them from the oracle (the status line gives both; the Compare "
            "step quotes the same fit time).",
            styles={"font-size": "1.05em"}, sizing_mode="stretch_width", css_classes=["loe-counts"])
        self._note = pn.pane.Markdown("", styles={"font-size": "1.05em", "min-height": TWO_LINES},
                                      sizing_mode="stretch_width")
        self._ellipses = pn.widgets.Checkbox(label="Show the 90 % uncertainty ellipses", value=False,
                                             css_classes=["loe-ellipses-toggle"])
        self._ellipses.param.watch(self._on_ellipses, "value")
        # the ellipses go directly under their checkbox, above the other plots: appended below the
        # long overlay plot they were drawn about 1000 px down the page, and ticking seemed to do nothing
        self._ellipse_box = pn.Column(sizing_mode="stretch_width", css_classes=["loe-ellipses"])

    def _updated_panes(self):
        return [self._note]

    def _render(self):
        s = self.state
        X, Z, cfg, m = s.points, s.aligned, s.config_used, s.metrics
        mean, basis = principal_plane(X)
        P = project(X, mean, basis)
        Q = project(Z, mean, basis)
        landmarks = np.asarray(s.model.landmarks_)
        perr = np.asarray(s.point_error)
        # long-lived plots whose data are patched (fast); above plots.DECIMATE_ABOVE items
        # they show a seeded subsample (landmarks always included)
        if self._live is None:
            self._live = plots.LiveEmbedding()
            self._live_panes = [WrappingRow(hvpane(self._live.left, name="embedding_truth"),
                                            hvpane(self._live.right, name="embedding_estimate")),
                                hvpane(self._live.overlay, name="embedding_overlay")]
        self._live.update(P, Q, s.hue_lightness, perr, landmarks, seed=cfg["seed"], axes=plane_axes(X.shape[1]))
        plot_objs = list(self._live_panes)
        if P.shape[0] > plots.DECIMATE_ABOVE:
            plot_objs.insert(0, pn.pane.Markdown(
                f"Showing a random {plots.DECIMATE_ABOVE:,} of the {P.shape[0]:,} items (all landmarks included); "
                "the errors above use every item.", styles={"color": "#555"}))
        values = (round(m["procrustes"], 4), round(100 * m["triplet_error"], 2),
                  round(100 * m["train_accuracy"], 1), float(f"{m['loe_seconds']:.3g}"))
        for ind, v in zip(self._numbers, values):
            ind.value = v
        worst = np.argsort(perr)[::-1][:5]
        self._note.object = (
            f"n = {m['n']:,}, d = {m['d']}, {m['n_triplets']:,} comparisons on {m['n_landmarks']} landmarks.  "
            f"Median distance of an item to its truth {fmt(np.median(perr))}; the worst items: "
            + ", ".join(f"{int(i)} ({fmt(perr[i])})" for i in worst) + "."
            + _polish_note(getattr(s.model, "stages_", None)))
        self._fill_ellipses()
        return [self._metrics, self._counts, self._note, self._ellipses, self._ellipse_box] + list(plot_objs)

    def _fill_ellipses(self) -> None:
        """Put the ellipses of the results shown in their box (empty when the checkbox is off)."""
        s = self.state
        if not self._ellipses.value or s.model is None or s.points is None:
            self._ellipse_box.objects = []
            return
        mean, basis = principal_plane(s.points)
        self._ellipse_box.objects = uncertainty_panes(s.model, s.points, mean, basis, seed=s.config_used["seed"])

    def _on_ellipses(self, event) -> None:
        """Draw or drop the ellipses; a served page shows the box busy while they are computed."""
        doc = pn.state.curdoc
        if not event.new or doc is None or doc.session_context is None:
            self._fill_ellipses()
            return
        self._ellipse_box.objects = [pn.pane.Markdown("Drawing the 90 % ellipses…", styles={"font-size": "1.05em"})]
        self._ellipse_box.loading = True

        def draw():  # on the next tick: the busy box has reached the page by then
            from panel.io.state import set_curdoc

            with set_curdoc(doc):
                try:
                    self._fill_ellipses()
                finally:
                    self._ellipse_box.loading = False

        doc.add_next_tick_callback(draw)


def _polish_note(stages) -> str:
    """A sentence on the ordinal polish when LOE ran it (noiseless answers), else ''."""
    ref = getattr(stages, "refine", None)
    if ref is None:
        return ""
    return (f"  The answers are noiseless, so the BTL scores are rank-like: landmark MDS gave a "
            f"distorted layout, and LOE fitted it to the order of the scores instead (ordinal polish, "
            f"{ref.n_iter} iterations, rank correlation with the orders {ref.order_agreement:.3f}).")
