"""Step 7, Compare: LOE against the baselines on the same triplets, live."""

from __future__ import annotations

import math

import holoviews as hv
import numpy as np
import pandas as pd
import panel as pn

from ...methods import METHODS
from .. import plots
from ..compare_state import BASELINE_METHODS, COMPARE_PROTOCOLS, LOESTE_EPS, CompareState
from ..text import md
from .base import StepView, fmt, hvpane, summary


class CompareView(StepView):
    """Runs the methods in a background thread; error against time is drawn as they go."""

    title = "Compare"
    text = (
        f"""
The baselines fit all *n × d* coordinates at once by minimising a loss over the triplets
(i, j, k) ("i is closer to j than to k"), at O(m d) per pass:

* **STE**: maximise Σ log p<sub>ijk</sub>, p<sub>ijk</sub> = e<sup>−D<sub>ij</sub></sup> / (e<sup>−D<sub>ij</sub></sup> + e<sup>−D<sub>ik</sub></sup>);
* **t-STE**: the same with a Student-t kernel (1 + D/α)<sup>−(α+1)/2</sup>;
* **SOE**: Σ max(0, δ + ‖x<sub>i</sub> − x<sub>j</sub>‖ − ‖x<sub>i</sub> − x<sub>k</sub>‖)²;
* **GNMDS**: hinge max(0, 1 + D<sub>ij</sub> − D<sub>ik</sub>) plus regularisation;
* **CKL**: p<sub>ijk</sub> = (μ + D<sub>ik</sub>) / (2μ + D<sub>ij</sub> + D<sub>ik</sub>);
* **LOE-STE**: LOE's embedding as the warm start of STE.

By default the baselines follow **the paper's protocol**: they get as many comparisons as LOE
used, as *uniformly random* triplets answered by the same oracle (same points, same noise T).
LOE keeps its own landmark triplets.  LOE-STE splits the same number as the paper did at d = 2
(it used 20 % at d = 10): {100 * LOESTE_EPS:.0f} % are comparisons on LOE's landmarks (a fit of its own, on the walk-through's landmarks), the other
{100 - 100 * LOESTE_EPS:.0f} % uniform triplets for STE, started from that fit's embedding; its time is both stages'.
STE then ends more accurate than LOE; LOE's case is speed at large *n*.  LOE-STE usually ends between
the two, in a fraction of STE's time: its STE stage has {100 - 100 * LOESTE_EPS:.0f} % of STE's triplets.  LOE's row is
the walk-through's own fit (the embedding of the Embedding step).  Every time leaves out drawing
the answers from the oracle.

The option **“the same triplets LOE used”** gives the baselines LOE's landmark triplets instead
(LOE-STE fits both its stages on all of them).
Every triplet is then headed by one of the *ℓ* landmarks: each comparison says which of two items
is nearer to a landmark, and none is headed by any other item.  Every baseline then ends less
accurate than with as many uniform triplets.  From their random start, t-STE, SOE, GNMDS and CKL
usually end far from the truth, and STE usually with a distorted shape: a triplet error a few
points above LOE's, a Procrustes error several times LOE's.  LOE-STE, STE started from LOE's
embedding, ends more accurate than LOE on these very triplets: LOE supplies the global shape
that these comparisons hardly pin down from scratch, and STE refines it.
""",
    )

    def __init__(self, **params):
        super().__init__(**params)
        self.compare = CompareState(self.state)
        c = self.compare
        self._methods = pn.widgets.MultiChoice.from_param(c.param.methods, label="Methods", width=380,
                                                          options={METHODS[m].label: m for m in BASELINE_METHODS})
        self._protocol = pn.widgets.RadioButtonGroup.from_param(
            c.param.protocol, label="Baselines get", options=COMPARE_PROTOCOLS, orientation="vertical",
            color="primary", variant="outline", css_classes=["loe-protocol"])
        # no bounds of its own: a bounded box snapped -1 or 700 back to 30 without a word; the state says why
        self._limit = pn.widgets.FloatInput(label="Time limit per method (s)", value=c.max_seconds, width=200)
        self._limit.param.watch(self._on_limit, "value")
        self._start = pn.widgets.Button(label="Run comparison", color="primary", width=180)
        self._cancel = pn.widgets.Button(label="Cancel", color="danger", variant="outline",
                                         width=120, disabled=True)
        # hidden until a comparison starts: an empty bar before any run said nothing
        self._progress = pn.indicators.Progress(value=0, max=100, width=300, bar_color="primary", visible=False,
                                                css_classes=["loe-compare-progress"])
        self._message = pn.pane.Markdown("", styles={"font-size": "1.1em"}, css_classes=["loe-compare-message"])
        self._plot = hvpane(self._figure())
        self._table = pn.pane.Markdown("", sizing_mode="stretch_width", styles={"font-size": "1.1em"},
                                       css_classes=["loe-compare-table"])
        self._start.on_click(lambda e: self._on_start())
        self._cancel.on_click(lambda e: c.cancel())
        c.param.watch(self._on_records, ["version", "records"])
        c.param.watch(self._on_status, ["running", "progress", "message"])

    def _on_start(self):
        self.compare.start(background=True)

    def _on_limit(self, event):
        if event.new == self.compare.max_seconds:  # the box set back (or typed again): nothing to take or say
            return
        if not self.compare.set_max_seconds(event.new):
            self._limit.value = self.compare.max_seconds

    def _on_status(self, *events):
        c = self.compare
        self._progress.value = int(c.progress)
        self._progress.visible = bool(c.running or c.progress > 0)
        self._message.object = md(c.message)
        self._start.disabled = c.running
        self._cancel.disabled = not c.running

    def _on_records(self, *events):
        self._plot.object = self._figure()
        self._table.object = self._summary()

    def _figure(self):
        recs = list(self.compare.records)
        if not recs:
            return hv.Curve([], "seconds", "Procrustes error").opts(
                **plots.base_opts(title="Procrustes error against time (press “Run comparison”)"))
        df = pd.DataFrame([r.__dict__ for r in recs])
        df = df[np.isfinite(df["procrustes"]) & (df["procrustes"] > 0)]  # a log axis: a 0 has no place on it
        layers = []
        for name, g in df.groupby("method", sort=False):
            m = METHODS[name]  # colour, dash and marker: told apart without colour too
            g = g.sort_values("seconds")
            if len(g) > 1:
                layers.append(hv.Curve(g, "seconds", ["procrustes", "triplet_error"], label=m.label).opts(
                    color=m.colour, line_dash=m.dash, line_width=3, tools=["hover"]))
            fin = g[g["final"]]
            if len(fin):
                layers.append(hv.Scatter(fin, "seconds", ["procrustes", "triplet_error"], label=m.label).opts(
                    color=m.colour, size=16, marker=m.marker, tools=["hover"]))
        if not layers:
            return hv.Curve([], "seconds", "Procrustes error")
        y = df["procrustes"].to_numpy()
        ticks = plots.log_ticks(y)
        # the range always from the errors: left to HoloViews, one value's range reached 0 on the log axis (a warning
        # in the server's log at each draw)
        extra = dict(ylim=(float(y.min()) / 1.3, float(y.max()) * 1.3)) | (dict(yticks=ticks) if ticks else {})
        return hv.Overlay(layers).opts(
            **plots.base_opts(title="Procrustes error against time (large markers: final)", logy=True,
                              xlabel="seconds", ylabel="Procrustes error (log scale)",
                              legend_position="right", **extra))

    def _summary(self):
        recs = [r for r in self.compare.records if r.final]
        if not recs:
            return ""
        lines = ["| method | time | Procrustes error | triplet error |", "|---|---|---|---|"]
        for r in recs:
            lines.append(f"| {METHODS[r.method].label} | {fmt(r.seconds)}\u00a0s | {fmt(r.procrustes)} | "
                         f"{'—' if math.isnan(r.triplet_error) else f'{100 * r.triplet_error:.2f} %'} |")
        return "\n".join(lines)

    def controls(self):
        """Widgets shown above this step's plots."""
        return []

    def _render(self):
        cfg = self.state.config_used
        info = summary(
            f"Data: n = {cfg['n']:,}, d = {cfg['d']}; LOE used **{self.state.metrics['n_triplets']:,} "
            f"triplets** headed by its {cfg['n_landmarks']} landmarks. The baselines get as many comparisons "
            "(LOE-STE splits them between its LOE and STE stages).")
        return [
            info,
            pn.Row(pn.Column(pn.pane.Markdown("**The baselines get**", margin=(0, 10)), self._protocol),
                   pn.Column(self._methods, self._limit), sizing_mode="stretch_width"),
            pn.Row(self._start, self._cancel, self._progress, sizing_mode="stretch_width"),
            self._message,
            self._plot, self._table,
        ]

    def close(self):
        """Stop a running comparison."""
        self.compare.close()
