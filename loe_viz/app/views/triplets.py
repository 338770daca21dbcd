"""The "Your triplets" mode: embed a triplet file with LOE and the baselines, judged on held-out triplets."""

from __future__ import annotations

import io
import math

import holoviews as hv
import numpy as np
import pandas as pd
import panel as pn
import param
from panel.viewable import Viewer

from .. import plots
from ..colors import quantized
from ..serving import take_upload, upload_box, upload_receipt
from ..session import session_dispatcher
from ..text import md as _md, md_name, md_quoting, plain
from ..uploads import SKIP_BAD_ROWS, in_app_terms
from ...describe import method_advice, reading_note
from ...loe import AUTO_MAX_LANDMARKS
from ..triplets_state import LABELS_DRAWN_MAX, METHOD_LABELS, SAMPLES, TRIPLET_METHODS, TripletsState
from .base import FOCUS_CSS, WholeNumberInput, alert, explanation, fmt, hvpane

__all__ = ["TripletsView"]

_TEXT = (
    """
Bring triplets you collected (or pick a bundled sample): one row per answer, in any layout
`loe_viz.io.read_triplets` reads: list-order rows *head, closer, farther*; crowd answers
*head, left, right, winner* naming items by id or label; cblearn's *X, y*; `.npy` / `.npz`
arrays. Items named by text get labels, which the plot shows.

Real data has no ground truth, so every method is **fitted on a random part of the triplets and
judged on the rest**: the held-out accuracy is the fraction of unseen answers the embedding
agrees with (50 % is chance; noisy answers cap it well below 100 %).

**LOE** only uses the triplets headed by its landmarks, the items that head the most triplets.
By default it picks them as `LOE().fit` does: every head when they are about evenly covered (up
to {auto_max}), else as many of the busiest as best predict a held-out tenth of the training triplets;
on collected data, where every item heads a few triplets, that is far more than the paper's
*d* + 3. It is fast but spends its answers less efficiently than **STE**, which fits all
coordinates to all triplets.
**LOE-STE** starts STE from LOE's embedding.
""".format(auto_max=AUTO_MAX_LANDMARKS),  # the most "auto" takes, as the landmarks box's placeholder says
)

_EMPTY_PLOT_TITLE = "The embedding (press “Run”)"
#: Width and height in pixels of the embedding's frame: the capitals' names need the room (in a square
#: of 480 px, 16 of the 44 ran into another one; of 560 px, 6 in the densest corner of the map).  Names
#: are wide, so the frame takes the page's width beside the sidebar at 1280 px; it fits an 800 px screen.
_MAP = (720, 600)
#: Font size in points of the items' names on the embedding (14.7 px: the hall's 14 px and more).
_NAME_PT = 11

W = pn.widgets


class TripletsView(Viewer):
    """Upload or pick triplets, see how they were read, embed them, compare the methods, download.

    Parameters
    ----------
    state : TripletsState, optional
        The mode's state (a new one by default).
    dispatch : callable, optional
        Runs a function on the session's event loop (the explorer passes its own);
        by default the current session's.
    """

    state = param.ClassSelector(class_=TripletsState, doc="Data, settings and results of the mode.")

    def __init__(self, state: TripletsState | None = None, dispatch=None, **params):
        super().__init__(state=state or TripletsState(), **params)
        s = self.state
        s.dispatch = dispatch or session_dispatcher()
        self._activated = False
        self._quiet = False  # set while the view itself changes a widget
        # -- source -------------------------------------------------------------------------
        opts = {"— choose a sample —": ""}
        opts.update({spec.title: name for name, spec in SAMPLES.items() if TripletsState.sample_available(name)})
        # as wide as its longest title at 15 px (at 420 px the capitals' was cut after "answ"); the upload
        # box beside it goes under it where the row has no room
        self.w_sample = W.Select(label="Bundled sample", options=opts, value="", width=570,
                                 css_classes=["loe-tr-sample"])
        self.w_sample.param.watch(self._on_sample, "value")
        # refuses a file over the size limit in the browser, before sending it
        self.w_upload = upload_box("…or upload a triplet file", accept=".csv,.tsv,.txt,.npy,.npz", width=380,
                                   css_classes=["loe-tr-upload"])
        self.w_upload.param.watch(self._on_upload, "value")
        # a file with a few broken rows is read without them (the summary counts them), instead of refused
        self.w_skip = W.Checkbox(label=SKIP_BAD_ROWS, value=s.skip_bad_rows, css_classes=["loe-tr-skip"])
        self.w_skip.link(s, value="skip_bad_rows", bidirectional=True)
        # while an upload is read (on a worker thread: the server goes on answering everyone)
        self.reading_spinner = pn.indicators.LoadingSpinner(value=True, size=22, visible=False, margin=(12, 4, 0, 10))
        self.reading_note = pn.pane.Markdown("", visible=False, styles={"font-size": "1.05em"},
                                             css_classes=["loe-tr-reading"])
        self.alert = alert("", "danger", visible=False, sizing_mode="stretch_width",
                           css_classes=["loe-tr-error"])
        # -- how it was read ------------------------------------------------------------------
        self.sentence = pn.pane.Markdown("", sizing_mode="stretch_width", styles={"font-size": "1.1em"},
                                         css_classes=["loe-tr-sentence"])
        self.summary_table = pn.pane.Markdown("", width=500, styles={"font-size": "1.05em"},
                                              css_classes=["loe-tr-summary"])
        self.heads_plot = hvpane(self._heads_figure())
        self.notes = pn.pane.Markdown("", sizing_mode="stretch_width", styles={"color": "#555"})
        # -- run ------------------------------------------------------------------------------
        self.w_methods = W.MultiChoice(label="Methods", options={METHOD_LABELS[m]: m for m in TRIPLET_METHODS},
                                       value=list(s.methods), width=420, css_classes=["loe-tr-methods"])
        self.w_methods.link(s, value="methods", bidirectional=True)
        self.w_d = self._box(W.IntInput, "n_components", width=110)
        self.w_l = self._box(W.IntInput, "n_landmarks", placeholder=f"auto (≤ {AUTO_MAX_LANDMARKS})", width=150)
        self.w_test = self._box(W.FloatInput, "test_fraction", step=0.05, width=140)
        self.w_seed = self._box(W.IntInput, "seed", width=100)
        self.w_limit = self._box(W.FloatInput, "max_seconds", width=190)
        self.setting_alert = alert("", "danger", visible=False, sizing_mode="stretch_width",
                                   css_classes=["loe-tr-setting-error"])
        self.b_run = W.Button(label="Run", color="primary", width=140, css_classes=["loe-tr-run"],
                              description="Split the triplets, fit every chosen method, score it on the held-out part")
        self.b_run.on_click(lambda e: self.state.run(background=True))
        self.b_cancel = W.Button(label="Cancel", color="danger", variant="outline", width=110, disabled=True)
        self.b_cancel.on_click(lambda e: self.state.cancel())
        self.progress = pn.indicators.Progress(value=0, max=100, width=300, bar_color="primary", visible=False)
        self.message = pn.pane.Markdown("", styles={"font-size": "1.1em"}, css_classes=["loe-tr-message"])
        self.coverage = pn.pane.Markdown("", styles={"color": "#555"}, sizing_mode="stretch_width")
        # -- results --------------------------------------------------------------------------
        self.results_intro = pn.pane.Markdown("", sizing_mode="stretch_width", styles={"font-size": "1.05em"})
        self.results_table = pn.pane.Markdown("", sizing_mode="stretch_width", styles={"font-size": "1.1em"},
                                              css_classes=["loe-tr-results"])
        self.w_shown = W.Select(label="Show", options={}, width=220, css_classes=["loe-tr-show"])
        self.w_shown.param.watch(self._on_shown, "value")
        self.plot = hvpane(self._embedding_figure(), name="triplets_embedding")
        self.plot_note = pn.pane.Markdown("", sizing_mode="stretch_width", styles={"color": "#555"},
                                          css_classes=["loe-tr-plot-note"])
        self.download = W.FileDownload(callback=self._csv, filename="embedding.csv", label="Embedding (CSV)",
                                       variant="outline", width=220, disabled=True,
                                       css_classes=["loe-tr-download"])
        self._layout = pn.Column(
            pn.Card(explanation(_TEXT), title="What happens in “Your triplets”", collapsed=False,
                    sizing_mode="stretch_width", header_background="#eef3f8", margin=(5, 5, 10, 5),
                    stylesheets=[FOCUS_CSS]),
            pn.pane.Markdown("### 1. Triplets"),
            plots.wrap(self.w_sample, pn.Column(self.w_upload, self.w_skip, margin=0),
                       pn.Row(self.reading_spinner, self.reading_note, margin=0)),
            self.alert,
            pn.pane.Markdown("### 2. How they were read"),
            self.sentence,
            plots.wrap(self.summary_table, self.heads_plot),
            self.notes,
            pn.pane.Markdown("### 3. Embed"),
            plots.wrap(self.w_methods, self.w_d, self.w_l, self.w_test, self.w_seed, self.w_limit),
            self.setting_alert,
            self.coverage,
            plots.wrap(self.b_run, self.b_cancel, self.progress, self.message),
            pn.pane.Markdown("### 4. Results"),
            self.results_intro, self.results_table,
            pn.Row(self.w_shown, self.download),
            self.plot_note,
            pn.Column(self.plot, scroll="x-auto", styles={"max-width": "100%"}, margin=0),
            sizing_mode="stretch_width", name="Your triplets",
        )
        s.param.watch(self._on_data, ["data_version"])
        s.param.watch(self._on_error, ["error", "setting_error"])
        s.param.watch(self._on_status, ["running", "progress", "message", "reading"])
        s.param.watch(self._on_results, ["version", "shown"])
        s.param.watch(self._on_coverage, ["n_components", "n_landmarks"])
        self._on_data()
        self._on_error()
        self._on_status()
        self._on_results()

    def __panel__(self):
        return self._layout

    # ------------------------------------------------------------------ actions
    def activate(self) -> None:
        """Called when the mode is first shown: read the first sample if nothing is loaded yet."""
        if self._activated:
            return
        self._activated = True
        if self.state.data is None:
            first = next((v for v in self.w_sample.options.values() if v), "")
            if first:
                self.w_sample.value = first  # loads it

    def close(self) -> None:
        """Stop a running fit."""
        self.state.close()

    # ------------------------------------------------------------------ callbacks
    def _on_sample(self, event):
        if self._quiet or not event.new:
            return
        self._activated = True
        self.state.load_sample(event.new)

    def _on_upload(self, event):
        got = take_upload(self.w_upload)
        if got is None:
            return
        self._activated = True
        name, content = got
        # read on a worker thread: a large file takes seconds, and the server's event loop serves every page
        self.state.load_upload(content, name or "triplets.csv", background=True, box=upload_receipt(self.w_upload))

    def _box(self, cls, name, **kw):
        """A box for a run setting, without bounds of its own: a value out of range reaches the state, which
        refuses it with the range (a bounded box dropped it silently, or sent 0).

        A refused value stays in the box beside the message saying which value stays in use, so that typing
        that value back is a change the page sends: every value typed reaches the state, and an accepted one
        (the current one too) takes the message away. (A box reset to the kept value showed the value the
        user would type back, and the page sends nothing for an unchanged box: the message stayed.)
        """
        s = self.state
        if cls is W.IntInput:
            cls = WholeNumberInput
        w = cls(label=s.SETTINGS[name], value=getattr(s, name), **kw)

        def to_state(event):
            s.set_setting(name, event.new)

        w.param.watch(to_state, "value")
        # the state's own changes (a sample's dimension) reach the box
        s.param.watch(lambda e: None if w.value == e.new else setattr(w, "value", e.new), name)
        return w

    def _on_error(self, *events):
        """The state's two errors, each in its red box (hidden while empty); a quoted file name stays one unit."""
        s = self.state
        for alert, e in ((self.alert, s.error), (self.setting_alert, s.setting_error)):
            alert.object = md_quoting(e, s.source, s.last_upload) if e else ""
            alert.visible = bool(e)

    def _on_status(self, *events):
        s = self.state
        self.progress.value = int(s.progress)
        self.progress.visible = bool(s.running)
        self.message.object = _md(s.message)
        self.b_run.disabled = bool(s.running or s.reading)
        self.reading_note.object = f"Reading {md_name(s.reading)}…" if s.reading else ""
        self.reading_note.visible = self.reading_spinner.visible = bool(s.reading)
        self.b_cancel.disabled = not s.running
        # a run on the previous data ends without results: "No results yet" comes back once it has stopped
        self.results_intro.object = self._results_intro()

    def _on_data(self, *events):
        s = self.state
        if self.w_sample.value != s.sample and (not s.sample or s.sample in self.w_sample.options.values()):
            self._quiet = True
            try:
                self.w_sample.value = s.sample
            finally:
                self._quiet = False
        sm = s.summary
        if not sm:
            self.sentence.object = "Nothing read yet: choose a sample or upload a file."
            self.summary_table.object = ""
            self.notes.object = ""
        else:
            desc = SAMPLES[s.sample].description if s.sample in SAMPLES else ""
            if desc and s.truth is not None:
                desc += (f" Its true positions are {s.truth.shape[1]}-dimensional, so “Dimension d” was set to "
                         f"{s.truth.shape[1]} (you can change it under “3. Embed”).")
            self.sentence.object = md_quoting(sm["sentence"], s.source) + (f"  \n*{_md(desc)}*" if desc else "")
            self.summary_table.object = self._summary_markdown(sm)
            notes = list(sm["notes"])
            said = [md_quoting(in_app_terms(reading_note(n, sm["labels"] == "text")), s.source) for n in notes]
            self.notes.object = "How the file was read: " + "; ".join(said) + "." if notes else ""
        self.heads_plot.object = self._heads_figure()
        self._on_coverage()
        self._on_results()

    def _on_coverage(self, *events):
        s = self.state
        sm = s.summary
        if not sm or not sm["n_heads"]:
            self.coverage.object = ""
            return
        d = s.n_components
        l, search, used = s.loe_landmarks()
        if l < d + 3:
            self.coverage.object = (f"⚠ LOE needs at least d + 3 = {d + 3} landmarks at d = {d}, not {l}: "
                                    "raise “LOE landmarks” or clear it (auto).")
            return
        if sm["n_heads"] < l:
            self.coverage.object = (
                f"⚠ LOE with {l} landmarks needs triplets headed by at least {l} items (d + 3 = {d + 3} at d = {d}); "
                f"these triplets have {sm['n_heads']} head(s): LOE and LOE-STE will report why they cannot run.")
            return
        share = f"{used:,} of the {sm['n_triplets']:,} triplets ({used / max(sm['n_triplets'], 1):.0%})"
        advice = f" {method_advice(sm, d)}."  # as `loe-viz info` says it
        if search:
            self.coverage.object = (
                f"LOE with d = {d} (auto): the heads are unevenly covered, so it tries the busiest {d + 3}, "
                f"{2 * (d + 3)}, … up to {l} as landmarks and keeps the number (and ranking penalty) that best "
                f"predicts a held-out tenth of the training triplets. The {l} busiest head {share}. "
                f"The paper's minimum is d + 3 = {d + 3}.{advice}")
            return
        self.coverage.object = (
            f"LOE with d = {d} uses the {l} busiest heads as landmarks"
            f"{' (auto)' if s.n_landmarks is None else ''}: they head {share}; a bit fewer after the held-out "
            f"part is removed. The paper's minimum is d + 3 = {d + 3}.{advice}")

    def _on_shown(self, event):
        if self._quiet or not event.new:
            return
        if event.new != self.state.shown:
            self.state.shown = event.new

    def _on_results(self, *events):
        s = self.state
        ok = [m for m in TRIPLET_METHODS if m in s.results and s.results[m].ok]
        shown = s.shown if s.shown in ok else (s.best_method() if ok else None)
        self._quiet = True
        try:
            # options and value in one change, and never an empty list: the browser answered a select
            # left without options with the value None, which Panel refuses ("None not in list"), and in
            # a notebook that refusal left the page's document unheld, dropping every later update
            if ok:
                self.w_shown.param.update(options={METHOD_LABELS[m]: m for m in ok}, value=shown, disabled=False)
            else:
                self.w_shown.disabled = True
        finally:
            self._quiet = False
        self.results_intro.object = self._results_intro()
        self.results_table.object = self._results_markdown()
        self.plot.object = self._embedding_figure(shown)
        self.plot_note.object = self._plot_note() if ok else ""
        self.download.disabled = not ok
        if ok:
            self.download.filename = s.csv_filename(shown)

    # ------------------------------------------------------------------ pieces
    @staticmethod
    def _summary_markdown(sm) -> str:
        ph = sm["per_head"]
        labels = {"text": "text labels (e.g. " + ", ".join(_md(plain(x)) for x in sm["label_examples"][:3]) + ")",
                  "ids": "integer ids (kept as labels)", "none": "none: items are 0..n-1"}[sm["labels"]]
        rows = [
            ("items", f"**{sm['n_items']:,}**"),
            ("triplets", f"**{sm['n_triplets']:,}**"),
            ("heads (items heading a triplet)", f"{sm['n_heads']:,}"),
            ("triplets per head: min / median / max",
             f"{ph['min']:,} / {ph['median']:,.0f} / {ph['max']:,}" if ph else "—"),
            ("labels", labels),
            ("layout (file format)", f"{sm['layout']} ({sm['format']})"),
        ]
        if sm["unused_items"]:
            rows.append(("items in no triplet", f"{sm['unused_items']:,}"))
        if sm["n_skipped"]:
            rows.append(("rows skipped", f"{sm['n_skipped']:,}"))
        if sm.get("n_repeated"):  # copies in both shares raise a held-out accuracy
            rows.append(("rows that repeat an earlier row", f"{sm['n_repeated']:,}"))
        if sm.get("n_groups", 1) > 1:  # the sentence says why it matters
            rows.append(("groups of items that no triplet relates", f"**{sm['n_groups']:,}**"))
        return "| | |\n|---|---|\n" + "\n".join(f"| {a} | {b} |" for a, b in rows)

    def _heads_figure(self):
        sm = self.state.summary
        counts = np.asarray(sm.get("head_counts", np.zeros(0)))
        # the fonts of every other plot (at a font scale of its own its ticks were 12.1 px)
        opts = plots.base_opts(title="Triplets per head, busiest first", responsive=False, width=460, height=280,
                               xlabel="head rank", ylabel="triplets", tools=["hover", "save"])
        if counts.size == 0:
            return hv.Curve([], "head rank", "triplets").opts(**opts)
        logy = counts[0] > 20 * max(counts[-1], 1)
        df = pd.DataFrame({"head rank": np.arange(1, counts.size + 1), "triplets": counts})
        return hv.Area(df, "head rank", "triplets").opts(color="#2b6cb0", alpha=0.5, line_color="#2b6cb0",
                                                          logy=bool(logy), **opts)

    def _results_intro(self) -> str:
        s = self.state
        info = s.run_info
        if not s.results and not s.running:
            return "No results yet: choose the methods and press **Run**." if s.data is not None else ""
        if not info:
            return ""
        m = info["n_train"] + info["n_test"]
        text = (f"Fitted on **{info['n_train']:,}** triplets, held out **{info['n_test']:,}** "
                f"({info['n_test'] / m:.0%}, seed {info['seed']}); d = {info['n_components']}. ")
        if info["unseen_test"] > 0:
            text += (f"{info['unseen_test']:.1%} of the held-out triplets name an item that appears in no "
                     "training triplet (no method can place it). ")
        a = info.get("agreement_loe_ste", float("nan"))
        if a == a:  # not NaN
            text += f"LOE's map and STE's differ by a Procrustes error of **{a:.3f}** (0: identical shapes). "
        text += "Chance is 50\u00a0%."
        return text

    def _results_markdown(self) -> str:
        s = self.state
        res = [s.results[m] for m in TRIPLET_METHODS if m in s.results]
        if not res:
            return ""
        truth = s.truth is not None
        best = s.best_method()
        head = "| method | held-out accuracy | training accuracy | Procrustes error vs STE |"
        sep = "|---|---|---|---|"
        if truth:
            head += " Procrustes error vs truth |"
            sep += "---|"
        head += " time | how it went |"
        sep += "---|---|"
        lines = [head, sep]
        for r in res:
            if r.ok:
                acc = f"{100 * r.test_accuracy:.1f} %"
                acc = f"**{acc}**" if r.method == best else acc
                row = (f"| {r.label} | {acc} | {100 * r.train_accuracy:.1f} % | "
                       f"{'—' if math.isnan(r.agreement_with_ste) else f'{r.agreement_with_ste:.3f}'} |")
                if truth:
                    row += f" {fmt(r.procrustes)} |"
                row += f" {fmt(r.seconds)}\u00a0s | {_md(plain(r.detail))} |"
            else:
                row = f"| {r.label} | — | — | — |" + (" — |" if truth else "")
                row += f" {fmt(r.seconds)}\u00a0s | ⚠ could not run: {_md(plain(r.error))} |"
            lines.append(row)
        lines.append("")
        lines.append("*Held-out accuracy*: the share of the held-out answers the map agrees with (100 % minus the "
                     "walk-through's triplet error, measured on answers instead of the truth); *training accuracy*: "
                     "the same on the answers it was fitted to (the Embedding step's “training triplets "
                     "satisfied”); *Procrustes error vs STE*: the walk-through's Procrustes error with STE's map in "
                     "place of the truth (0: the same shape).")
        if truth:
            lines.append("")
            lines.append("*This sample's true positions are known, so the Procrustes error against them is "
                         "shown too; your own data has only the held-out accuracy.*")
        return "\n".join(lines)

    def _plot_note(self) -> str:
        """How the shown embedding is turned and coloured (an embedding's rotation and reflection are arbitrary)."""
        s = self.state
        if s.aligned_to_truth:
            D = s.truth.shape[1]
            view = f" It is a flat view of {D}-D positions, along their two principal axes." if D > 2 else ""
            return ("Drawn aligned to the sample's true positions (the best shift, rotation or mirror image and "
                    "scale: Procrustes), so it reads like the truth; colours are the items' true positions." + view)
        return ("An embedding's rotation and mirror image are arbitrary: each method is drawn aligned to the best "
                "one's (Procrustes), so switching methods does not turn the picture.")

    def _embedding_figure(self, method: str | None = None):
        s = self.state
        if not method or method not in s.results or not s.results[method].ok:
            return hv.Points([], ["x", "y"]).opts(**plots.base_opts(
                title=_EMPTY_PLOT_TITLE, **plots.framed(np.array([[-1.0, -1.0], [1.0, 1.0]]), frame=_MAP)))
        xy, hl = s.display_coordinates(method)
        n = xy.shape[0]
        labels = s.display_labels()
        counts = np.bincount(np.asarray(s.data.triplets)[:, 0], minlength=n)
        cidx, palette = quantized(hl)
        df = pd.DataFrame({"x": xy[:, 0], "y": xy[:, 1], "label": labels, "item": np.arange(n),
                           "heads": counts, "cidx": cidx})
        res = s.results[method]
        title = f"{res.label}: held-out accuracy {100 * res.test_accuracy:.1f} %"
        if n > plots.DECIMATE_ABOVE:
            df = df.iloc[plots.subsample(n, plots.DECIMATE_ABOVE)]
            title += f" (showing {len(df):,} of {n:,})"
        size = float(np.clip(16 - 2.2 * np.log10(max(n, 1)), 3, 12))
        d = res.embedding.shape[1] if not s.aligned_to_truth else s.truth.shape[1]
        xl, yl = ("y₁", "y₂") if d <= 2 else ("principal axis 1", "principal axis 2")
        if s.aligned_to_truth and d <= 2:  # in the truth's own coordinates (the caption says so)
            unit = f", {s.truth_unit}" if s.truth_unit else ""
            xl, yl = f"x₁ (true axes{unit})", f"x₂ (true axes{unit})"
        pts = hv.Points(df, [hv.Dimension("x", label=xl), hv.Dimension("y", label=yl)],
                        ["label", "item", "heads", "cidx"]).opts(
            color="cidx", cmap=palette, clim=(-0.5, len(palette) - 0.5), colorbar=False, size=size,
            line_color="#333333", line_width=0.5, alpha=0.9,
            hover_tooltips=[("label", "@label"), ("item", "@item"), ("triplets headed", "@heads")])
        out = pts
        geo = plots.framed(xy, frame=_MAP)
        if n <= LABELS_DRAWN_MAX:
            # each name beside its point on the side with room (all above right of their points, 28 of the
            # capitals' 44 names ran into another one), or a little further out with a leader line
            # a name that no place makes clear is left to the hover tooltip (the title counts them):
            # t-STE's map of the capitals packs the Balkans within a few pixels
            names, hidden = plots.point_labels(df[["x", "y"]].to_numpy(), df["label"], geo=geo, radius=size / 2 + 1,
                                               font_size=_NAME_PT, color="#222222", frame=_MAP, thin=True)
            out = pts * names
            if hidden.size:
                title += f" ({hidden.size} {'name' if hidden.size == 1 else 'names'} on hover only)"
        return out.opts(**plots.base_opts(title=title, show_legend=False, tools=["hover", "save"], **geo))

    def _csv(self):
        s = self.state
        return io.StringIO(s.embedding_csv(s.shown or s.best_method()))
