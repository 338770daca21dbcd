"""The sweep view: error against one setting over several seeds, as small multiples."""

from __future__ import annotations

import io
from functools import partial

import holoviews as hv
import numpy as np
import panel as pn
import param
from panel.viewable import Viewer

from .. import plots
from ..text import md
from ..sweep import METRICS, SWEEP_VARIABLES, THEORY_SLOPES, SweepState, loglog_slope, summarize
from .base import WholeNumberInput, WrappingRow, hvpane

__all__ = ["SweepView", "sweep_figure"]


def sweep_figure(points, variable: str, metric: str, running: bool = False):
    """One small multiple: every fit (dots), the mean over seeds with its spread, the fitted slope.

    Without points its title says what to do, or (``running``) that the points are coming.
    """
    xlabel = SWEEP_VARIABLES[variable]
    ylabel = METRICS[metric]
    short = {"procrustes": "Procrustes", "triplet_error": "Triplet error", "seconds": "Fit time"}[metric]
    pts = [(p.value, getattr(p, metric)) for p in points if np.isfinite(getattr(p, metric))]
    if not pts:
        return hv.Curve([], xlabel, ylabel).opts(**plots.base_opts(
            title=f"{short}: running…" if running else f"{short} (press “Run sweep”)", responsive=False,
            width=plots.HALF_WIDTH, height=380))
    x = np.array([a for a, _ in pts])
    y = np.array([b for _, b in pts])
    summ = summarize(points, metric)
    xs = np.array([r["value"] for r in summ])
    mean = np.array([r["mean"] for r in summ])
    lo = np.array([r["mean"] - r["min"] for r in summ])
    hi = np.array([r["max"] - r["mean"] for r in summ])
    slope = loglog_slope(x, y)
    theory = THEORY_SLOPES.get((variable, metric))
    logx = bool(np.all(x > 0) and x.max() / max(x.min(), 1e-300) > 3)
    logy = bool(np.all(y > 0))
    layers = [
        hv.Scatter((x, y), xlabel, ylabel, label="each seed").opts(color="#9aa7b4", size=8, alpha=0.8),
        hv.ErrorBars((xs, mean, lo, hi), xlabel, [ylabel, "lo", "hi"]).opts(color="#2b6cb0", line_width=2),
        hv.Curve((xs, mean), xlabel, ylabel, label="mean").opts(color="#2b6cb0", line_width=3),
    ]
    title = short
    if np.isfinite(slope) and logx and logy:
        # the fitted power law through all points, drawn over the swept range
        b = float(np.mean(np.log(y)) - slope * np.mean(np.log(x)))
        xx = np.geomspace(x.min(), x.max(), 20)
        layers.append(hv.Curve((xx, np.exp(b) * xx ** slope), xlabel, ylabel, label="fit")
                      .opts(color="#d62728", line_dash="dashed", line_width=2.5))
        title += f", slope {slope:.2f}"
        if theory is not None:
            title += f" ({theory:g})"
    extra = {}
    if logy:
        ticks = plots.log_ticks(y)
        if ticks:
            extra = dict(yticks=ticks, ylim=(float(y.min()) / 1.3, float(y.max()) * 1.3))
    if logx:
        xt = plots.log_ticks(x)
        if xt:
            extra["xticks"] = xt
    return hv.Overlay(layers).opts(**plots.base_opts(
        title=title, logx=logx, logy=logy, legend_position="bottom", show_legend=True,
        responsive=False, width=plots.HALF_WIDTH, height=420, **extra))


class SweepView(Viewer):
    """Controls, progress and small multiples of a :class:`~loe_viz.app.sweep.SweepState`."""

    sweep = param.ClassSelector(class_=SweepState)
    metrics = param.List(default=["procrustes", "triplet_error"], doc="Metrics drawn, one plot each.")

    def __init__(self, **params):
        if "sweep" not in params:
            params["sweep"] = SweepState()
        super().__init__(**params)
        sw = self.sweep
        W = pn.widgets
        # the variable's name without the axis label's explanation ("budget c (c·n·ln n comparisons)"
        # ran under the box's arrow): the lesson's text and the plots' axes say it
        self._variable = W.Select(label="Vary", options={v.split(" (")[0]: k for k, v in SWEEP_VARIABLES.items()},
                                  value=sw.variable, width=250)
        self._values = W.TextInput(label="Values (comma-separated)", value=self._values_text(), width=280,
                                   css_classes=["loe-sweep-values"])
        # without bounds of their own: a value out of range reaches the sweep, which refuses it with the range
        self._seeds = WholeNumberInput(label="Seeds", value=sw.seeds, width=90)
        self._n = WholeNumberInput(label="Items n (unless varied)", value=sw.n, step=50, width=170)
        self._run = W.Button(label="Run sweep", color="primary", width=140, css_classes=["loe-sweep-run"])
        self._stop = W.Button(label="Cancel", color="danger", variant="outline", width=110, disabled=True,
                              css_classes=["loe-sweep-cancel"])
        self._progress = pn.indicators.Progress(value=0, max=100, width=240, bar_color="primary", visible=False,
                                                css_classes=["loe-sweep-progress"])
        # takes the rest of the row and wraps there: at 1280 px a long message ran to the window's edge
        self._message = pn.pane.Markdown("", styles={"font-size": "1.1em"}, sizing_mode="stretch_width",
                                         min_width=200, css_classes=["loe-sweep-message"])
        self._plots = WrappingRow(sizing_mode="stretch_width")  # one under the other on a narrow page
        self._slopes = pn.pane.Markdown("", styles={"font-size": "1.1em"}, sizing_mode="stretch_width",
                                        css_classes=["loe-sweep-slopes"])
        self._redraws = 0  # redraws asked for: the figures of an older one not drawn yet are left out
        # the sweep's own points (the sidebar's downloads are the walk-through's)
        self._download = W.FileDownload(callback=self._csv, filename=sw.file_name(), label="The sweep's points (CSV)",
                                        variant="outline", width=240, css_classes=["loe-sweep-download"])
        self._run.on_click(lambda e: self.start())
        self._stop.on_click(lambda e: self.sweep.cancel())
        sw.param.watch(self._on_points, ["version"])
        sw.param.watch(self._on_status, ["running", "progress", "message"])
        sw.param.watch(lambda *e: self._sync_controls(), ["variable", "values", "seeds", "n"])
        self._layout = pn.Column(
            # wraps: at 150 % zoom (853 px) the last box ran 17 px past the window
            pn.FlexBox(self._variable, self._values, self._seeds, self._n, flex_wrap="wrap",
                       sizing_mode="stretch_width"),
            pn.Row(self._run, self._stop, self._progress, self._message, sizing_mode="stretch_width"),
            self._plots, self._slopes, self._download, sizing_mode="stretch_width", css_classes=["loe-sweep"])
        self._redraw(at_once=True)

    def __panel__(self):
        return self._layout

    def _csv(self):
        self._download.filename = self.sweep.file_name()
        return io.StringIO(self.sweep.to_csv())

    def _values_text(self) -> str:
        return ", ".join(f"{v:g}" for v in self.sweep.values)

    def _sync_controls(self):
        sw = self.sweep
        self._variable.value = sw.variable
        self._values.value = self._values_text()
        self._seeds.value = sw.seeds
        self._n.value = sw.n

    def start(self) -> None:
        """Hand the controls to the sweep and start it in the background."""
        sw = self.sweep
        if sw.configure(self._variable.value, self._values.value, self._seeds.value, self._n.value):
            sw.start(background=True)

    def _on_status(self, *events):
        sw = self.sweep
        self._progress.value = int(sw.progress)
        self._progress.visible = bool(sw.running or sw.progress > 0)  # no empty bar before a run
        self._message.object = md(sw.message)  # it may quote what was typed in the values box: text, never markup
        self._run.disabled = sw.running
        self._stop.disabled = not sw.running
        if not sw.running and not sw.points:  # stopped before its first point: no longer "running…"
            self._on_points()

    def _on_points(self, *events):
        self._redraw()

    def _redraw(self, at_once: bool = False) -> None:
        """Draw the figures again, each in a turn of its own of the session's event loop (``at_once``: now).

        Building one figure takes about half a second of the loop, which every page of the server shares:
        a page's clicks (the sweep's Cancel) and other pages' updates are handled between two figures, and
        the messages and buttons set with the points reach the page before the figures are built.
        """
        sw = self.sweep
        self._redraws += 1
        for i in range(len(self.metrics)):
            if at_once:
                self._draw(self._redraws, i)
            else:
                sw.jobs.publish(partial(self._draw, self._redraws, i))
        parts, expected = [], False
        for m in self.metrics:
            slope = sw.slope(m)
            if np.isfinite(slope):
                theory = THEORY_SLOPES.get((sw.variable, m))
                expected |= theory is not None
                parts.append(f"{METRICS[m]}: fitted log-log slope **{slope:.2f}**"
                             + (f" (expected {theory:g})" if theory is not None else ""))
        self._slopes.object = (" · ".join(parts) + " — dots: each seed; line: mean, bars: min to max; "
                               "dashed: the fitted power law."
                               + (" Expected: if each ranking's error shrinks at the rate of the paper's O(1/√m) "
                                  "bound." if expected else "")) if parts else ""

    def _draw(self, redraw: int, i: int) -> None:
        """Draw figure ``i`` of redraw number ``redraw``, unless a newer redraw was asked for since."""
        sw = self.sweep
        if redraw != self._redraws or i >= len(self.metrics):
            return
        # axes not linked: Panel links panes with the same dimensions, and each figure took in the ranges of the
        # placeholder and of older points (n from 0 at the cost lesson, its points squeezed into a third)
        pane = hvpane(sweep_figure(sw.points, sw.variable, self.metrics[i], running=sw.running), linked_axes=False)
        objects = list(self._plots.objects)[:len(self.metrics)]
        if i < len(objects):
            objects[i] = pane  # the other figures' models stay as they are in the page
        else:
            objects.append(pane)
        self._plots.objects = objects
