"""Step 6, Embedding: landmark MDS, aligned to the ground truth."""

from __future__ import annotations

import numpy as np
import panel as pn

from .. import plots
from ..colors import principal_plane, project
from .base import StepView, fmt, hvpane


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

Select points (box or lasso) in one of the two plots on the left: the same items light up in
the other.
""",
    )

    def _render(self):
        s = self.state
        X, Z, cfg, m = s.points, s.aligned, s.config_used, s.metrics
        mean, basis = principal_plane(X)
        P = project(X, mean, basis)
        Q = project(Z, mean, basis)
        landmarks = np.asarray(s.model.landmarks_)
        left, right, overlay = plots.linked_embedding(P, Q, s.colors, point_error=s.point_error,
                                               hue_lightness=s.hue_lightness, landmarks=landmarks,
                                               seed=cfg["seed"])
        perr = np.asarray(s.point_error)
        metrics = pn.Row(
            pn.indicators.Number(name="Procrustes error", value=round(m["procrustes"], 4), format="{value}",
                                 font_size="34pt", title_size="14pt"),
            pn.indicators.Number(name="Triplet error", value=round(100 * m["triplet_error"], 2),
                                 format="{value} %", font_size="34pt", title_size="14pt"),
            pn.indicators.Number(name="Training triplets satisfied", value=round(100 * m["train_accuracy"], 1),
                                 format="{value} %", font_size="34pt", title_size="14pt"),
            pn.indicators.Number(name="Fit time", value=round(m["fit_seconds"], 3), format="{value} s",
                                 font_size="34pt", title_size="14pt"),
            sizing_mode="stretch_width",
        )
        worst = np.argsort(perr)[::-1][:5]
        note = pn.pane.Markdown(
            f"n = {m['n']:,}, d = {m['d']}, {m['n_triplets']:,} comparisons on {m['n_landmarks']} landmarks.  "
            f"Median distance of an item to its truth {fmt(np.median(perr))}; the worst items: "
            + ", ".join(f"{int(i)} ({fmt(perr[i])})" for i in worst) + ".",
            styles={"font-size": "1.05em"}, sizing_mode="stretch_width")
        return [
            metrics, note,
            pn.Row(hvpane(left, name="embedding_truth"), hvpane(right, name="embedding_estimate")),
            hvpane(overlay, name="embedding_overlay"),
        ]
