"""The LOE explorer: a Panel app walking through Landmark Ordinal Embedding.

``Explorer()`` renders inline in Jupyter (after ``pn.extension()``) and, when
served with ``panel serve``, inside a template with its configuration synced to
the URL (a shared link reopens the same configuration).  All state lives in an
:class:`~loe_viz.app.state.ExplorerState`; the pipeline runs on a worker thread
and hands its results back to the session's event loop.
"""

from __future__ import annotations

import csv
import io
import logging
import os
import urllib.parse
import weakref

import numpy as np
import panel as pn
import param
from bokeh.models import CustomJS
from panel.io.state import set_curdoc
from panel.viewable import Viewer

from .serving import harden, serve_stylesheets_locally, take_upload, upload_box, upload_receipt
from .limits import MAX_D, MAX_N, quote_count
from .link import DeferredLink, quote_link_value, refused_link_settings, repeated_settings
from .session import connection_count, in_server_session, release_links, session_dispatcher
from .text import file_stem, md, md_name, md_quoting
from .state import BUDGET_UNITS, OFFSET_RULES, STEPS, URL_PARAMS, ExplorerState
from .views import VIEW_CLASSES
from .views.base import (FOCUS_CSS, TWO_LINES, WRAP_TABS_CSS, KeysStayInBoxes, ReleasedFloatEditSlider,
                         WholeNumberInput, WholeNumberSlider, address_without_history, alert, keyboard_and_connection,
                         readable, stretch_only_to_finite)
from .views.lessons import LessonsView
from .views.triplets import TripletsView
from .._blas import pin_blas_single_thread
from .warmup import start_warm_up

__all__ = ["Explorer", "TITLE"]

log = logging.getLogger(__name__)

#: Title of the page (the served app's template and the notebook header).
TITLE = "Landmark Ordinal Embedding — explorer"

#: The explorer's top-level modes (tabs above the steps).
MODES = ("Walk-through", "Your triplets", "Lessons")

_ACCENT = "#2b6cb0"

#: Seconds after which a first result that has not arrived is reported in the page.
FIRST_RESULT_TIMEOUT = 60.0
#: Seconds a served run goes on before the page shows it as running ("computing…", the
#: spinner, Cancel). A seed change at n = 2000 takes about 0.2 s: shown at once, the busy
#: state flickered and made the page lay itself out again while the server fitted, on the
#: cores the fit needed.
BUSY_DELAY = 0.3


def _remove_doc_callback(ref_doc, cb) -> None:
    """Remove a timeout or periodic callback from the document ``ref_doc()`` refers to, if it still can."""
    d = ref_doc()
    # a destroyed document (a discarded session: session_context None) has dropped its
    # callbacks already; removing one would raise inside bokeh's patch_curdoc, which then
    # keeps its entry in bokeh.io.doc._PATCHED_CURDOCS for good
    if d is not None and d.session_context is not None:
        try:
            d.remove_timeout_callback(cb) if hasattr(cb, "timeout") else d.remove_periodic_callback(cb)
        except Exception:  # already fired, or removed with the document being destroyed
            pass


#: Font size of the explorer's text in pixels (Panel's and bokeh's 12 px): explanations, summaries,
#: labels and tabs scale with it, so they read from the back of a lecture hall (15.75 px paragraphs).
BASE_FONT_PX = 15
#: Styles that set it for everything inside a component (the variable is inherited into shadow roots).
BASE_FONT = {"--bokeh-font-size": f"{BASE_FONT_PX}px"}

#: The sidebar's two-option button groups mark the chosen option with a solid fill (the default marked it
#: with a faint inset shadow, invisible on a projector), as the Compare step's choice does.
TOGGLE_STYLE = {"color": "primary", "variant": "outline"}

#: One line of text without the paragraph's margins (the step header, "Step 2 of 7: Sample", and the
#: sliders' ranges): the same height from the page's first drawing on.
ONE_LINE_CSS = ":host p { margin: 0; }"

#: Below this window width (CSS pixels) the served page folds the template's sidebar: the steps need about 890 px
#: (Ranking's and EDM's plots side by side), and beside the 350 px sidebar they ran off the right edge at 125 %
#: or 150 % zoom (1024 or 853 px of a 1280 px projector). The menu button still opens it.
WIDE_ENOUGH_PX = 1240

#: Run when the served page is ready: the page folds the template's sidebar when it enters "Your triplets" (its
#: settings belong to the walk-through, and the mode's results take the width) and when the window becomes
#: narrower than WIDE_ENOUGH_PX (or is at load), and opens it again when it leaves that mode, or the window
#: becomes wide, if the page folded it; a sidebar the reader opened or closed by hand stays as the reader left
#: it. Through the template's own menu button, so that its state and the button's stay one. Bootstrap ignores
#: the button while the sidebar still folds or unfolds, so only the latest wish is kept and applied once that
#: ends (two wishes waiting side by side could end in either state). Nothing happens where there is no such
#: sidebar (a notebook).
_SIDEBAR_JS = """
if (!window.__loeVizSidebar) {
  const bar = document.getElementById("sidebar"), button = document.getElementById("sidebar-toggle");
  if (bar !== null && button !== null) {
    let open = bar.classList.contains("show");  // where the sidebar is or is going (Bootstrap's events)
    let away = !open;  // the template folds it for a page opened in "Your triplets"
    let folded = away;  // folded by the page, not by the reader
    let want = null, timer = null, ours = false;
    // a fold or unfold by hand is the reader's choice from then on; in "Your triplets" the fold stays the
    // mode's (a look at the sidebar there, closed again, does not keep it closed in the other modes)
    bar.addEventListener("show.bs.collapse", () => { open = true; if (!ours && !away) { folded = false; } });
    bar.addEventListener("hide.bs.collapse", () => { open = false; if (!ours && !away) { folded = false; } });
    const apply = () => {
      timer = null;
      if (bar.classList.contains("collapsing")) { timer = setTimeout(apply, 50); return; }
      if (want !== null && open !== want) { ours = true; button.click(); ours = false; }
      want = null;
    };
    const wish = (shown) => { want = shown; if (timer === null) { apply(); } };
    const fold = () => { if (open || want === true) { folded = true; wish(false); } };
    const unfold = () => { if (folded) { folded = false; wish(true); } };
    const narrow = () => window.innerWidth < WIDE;
    window.__loeVizSidebar = (isAway) => {
      if (isAway === away) { return; }
      away = isAway;
      if (away) { fold(); } else if (!narrow()) { unfold(); }
    };
    let wasNarrow = narrow();
    window.addEventListener("resize", () => {
      if (narrow() === wasNarrow) { return; }
      wasNarrow = narrow();
      if (wasNarrow) { fold(); } else if (!away) { unfold(); }
    });
    if (wasNarrow) { fold(); }
  }
}
""".replace("WIDE", str(WIDE_ENOUGH_PX))

#: The modes' tabs tell the sidebar script which mode is shown (``away``: "Your triplets").
_SIDEBAR_FOR_MODE = "if (window.__loeVizSidebar) { window.__loeVizSidebar(cb_obj.active === away); }"

#: Pixels the notebook layout needs for its widest steps (Ranking, EDM: two fixed-size plots beside the sidebar).
NOTEBOOK_MIN_WIDTH = 1210


def run_stem(cfg: dict) -> str:
    """A file name's part that gives the run ``cfg`` (a ``config_used``): the points, n, d, seed, the noise, the
    budget, the landmarks and the offset rule, e.g. ``gaussian_n1000_d2_seed0_T0.25_c100_l5random_lambda2``, then
    ``_paper`` for the paper's algorithm alone. Two variants of a lesson downloaded side by side get two names."""
    stem = file_stem(cfg.get("uploaded_name") or cfg.get("kind"), "points", limit=60)
    unit = "c" if cfg.get("budget_unit") == "total_c" else "m"  # c·n·ln n in total, or m per landmark
    return (f"{stem}_n{cfg.get('n')}_d{cfg.get('d')}_seed{cfg.get('seed', 0)}_T{cfg.get('temperature'):g}"
            f"_{unit}{cfg.get('budget'):g}_l{cfg.get('n_landmarks')}{cfg.get('landmark_selection')}"
            + ("_lambda2" if cfg.get("offset") == "lambda2" else f"_{cfg.get('offset')}")
            + ("_paper" if cfg.get("paper_only") else ""))


def run_summary(cfg: dict, metrics: dict) -> str:
    """One sentence of the run ``cfg`` (a ``config_used``) and its ``metrics``, for a downloaded page."""
    points = f"uploaded points {cfg['uploaded_name']!r}" if cfg.get("uploaded_name") else f"{cfg.get('kind')} points"
    budget = (f"budget c = {cfg.get('budget'):g} (c·n·ln n comparisons in total)" if cfg.get("budget_unit") ==
              "total_c" else f"{cfg.get('budget'):,.0f} comparisons per landmark")
    offset = next((label for label, rule in OFFSET_RULES.items() if rule == cfg.get("offset")), cfg.get("offset"))
    out = (f"Run: {points}, n = {cfg.get('n'):,} in d = {cfg.get('d')}, seed {cfg.get('seed', 0)}; noise temperature "
           f"T = {cfg.get('temperature'):g}; {budget}; ℓ = {cfg.get('n_landmarks')} {cfg.get('landmark_selection')} "
           f"landmarks; offset {offset}; " + ("the paper's algorithm only (uniform pairs, no ordinal polish)"
                                               if cfg.get("paper_only") else "LOE's defaults"))
    if metrics:
        out += (f". Procrustes error {metrics['procrustes']:.4f}, triplet error "
                f"{100 * metrics['triplet_error']:.2f} % over {metrics['n_triplets']:,} comparisons.")
    return out


class Explorer(Viewer):
    """Interactive walk-through of LOE: configure, sample, rank, shift, project, embed, compare.

    A second mode, "Your triplets" (:class:`~loe_viz.app.views.triplets.TripletsView`),
    embeds a triplet file (uploaded or a bundled sample) with LOE and the baselines and
    compares them on held-out triplets.

    Parameters
    ----------
    state : ExplorerState, optional
        The session's state (a new one, computing in the background, by default).
    sync_url : bool, default True
        When served, keep the configuration in the page's URL.
    **params
        Passed to :class:`ExplorerState` when ``state`` is not given (e.g. ``n=2000``).

    Examples
    --------
    In a notebook::

        import panel as pn
        pn.extension("katex", "filedropper", inline=True)
        from loe_viz.app import Explorer
        Explorer(n=500)
    """

    state = param.ClassSelector(class_=ExplorerState, doc="Configuration and results of the session.")

    def __init__(self, state: ExplorerState | None = None, sync_url: bool = True, **params):
        own = state is None
        self._served = in_server_session()
        if self._served:  # sessions' fits run side by side: no process-wide switching of BLAS threads
            pin_blas_single_thread()
            # before any component (Panel decodes ?theme= strictly) and the location (a query Panel cannot
            # parse ended this script); also where no serve_explorer_page ran: `panel serve explorer.ipynb`
            harden()
        # compile the kernels off the event loop (once per process) while the page is built
        start_warm_up()
        if own:
            state = ExplorerState(background=True, auto_update=False, n_jobs=min(2, os.cpu_count() or 1),
                                  **params)
        super().__init__(state=state)
        s = self.state
        s.dispatch = session_dispatcher()
        self._views = [cls(state=s) for cls in VIEW_CLASSES]
        self._compare = self._views[STEPS.index("Compare")].compare
        # "Your triplets" is built when it is first needed: a sixth of a page's build (0.06 of 0.38 s of the
        # server's event loop, which a class opening the page at once waits for, page after page)
        self._triplets_view = None
        self._lessons = LessonsView(state=s, show=self._show_lesson, opened=self._lesson_opened)
        self._run_all_from = None  # the step shown when "Run all" was pressed, until its results arrive
        self._build_controls()
        self._build_main()
        s.param.watch(self._on_results, ["version"])
        s.param.watch(self._on_status, ["busy", "error", "notice", "status", "metrics", "reading"])
        s.param.watch(self._on_step, ["step"])
        s.param.watch(self._on_config_shown, ["d", "n_landmarks"])
        self._busy_shown = False  # the page shows the run in progress (see BUSY_DELAY)
        self._busy_wait = None  # the document and the timeout callback that will show it
        self._closed = False
        self._first_late = ""
        self._first_waiting = False  # served: the first run starts when the page is there, and is shown as started
        self._doc_callbacks = []
        if self._served:
            # free the session's arrays and threads when its browser tab goes away
            pn.state.on_session_destroyed(self._on_session_destroyed)
            keyboard_and_connection(pn.state.curdoc)  # tabs and downloads from the keyboard; a lost connection said
            if pn.state.curdoc is not None:  # the template's sidebar folds in "Your triplets" and narrow windows
                pn.state.curdoc.js_on_event("document_ready", CustomJS(code=_SIDEBAR_JS))
            # the lesson's preset first, then the link's own settings on top of it: a link copied after choosing a
            # variant (?lesson=noise&temperature=2.0) opens that variant
            opened = (pn.state.location.search or "") if pn.state.location is not None else ""  # syncing rewrites it
            lesson_opened = self._open_lesson_from_url()
            if sync_url and pn.state.location is not None:
                # the address follows the settings without a history entry for each (Back did not follow it)
                address_without_history(pn.state.curdoc)
                # kept by its watchers; the address names the step (?step=embedding)
                DeferredLink(s, URL_PARAMS, pn.state.location, on_error=self._on_url_error, spelled={"step": STEPS},
                             at_once=["step"])
                self._say_repeated_settings(opened)
            if lesson_opened is not None:
                self._say_link_on_lessons(lesson_opened, opened)
        if own:
            s.auto_update = True
            if self._served:
                # start computing once the page is there (a request that never opens the
                # page costs no run), and report a first result that does not come
                pn.state.onload(self._first_run)
                self._first_waiting = True
            else:
                s.run()
        self._on_status()
        self._on_config_shown()
        self._refresh_active()

    # ------------------------------------------------------------------ layout
    def _build_controls(self):
        s = self.state
        W = pn.widgets
        # "uploaded" is offered once a point file was uploaded: before, choosing it only gave an error
        self.w_kind = W.Select(label="Ground truth", options=self._kind_options(), value=s.kind,
                               sizing_mode="stretch_width", css_classes=["loe-kind"])
        self.w_kind.param.watch(self._on_kind, "value")
        s.param.watch(self._show_kind, ["kind", "uploaded_name"])
        # the sliders cover the usual range; their boxes take any value the explorer runs with, and a
        # value it refuses is named in the page and set back (it never stays in the box)
        self.w_n = self._slider(WholeNumberSlider, "n", "Items n", start=20, end=5000, step=10,
                                css_classes=["loe-n"], refuse=self._refused)
        self.w_d = self._slider(WholeNumberSlider, "d", "Dimension d", start=1, end=10, step=1,
                                css_classes=["loe-d"], refuse=self._refused)
        self.w_n_hint = self._range_hint(self.w_n, MAX_N, "loe-n-hint")
        self.w_d_hint = self._range_hint(self.w_d, MAX_D, "loe-d-hint")
        # no bounds on the number boxes (seed, landmarks): the browser's box clamped a value below its
        # lower bound on its own (2 landmarks showed as 0, a seed of -5 was never sent), so the typed
        # value must reach the state, which refuses it with a message that names the allowed values
        # a seed or a temperature the explorer cannot run with is named and set back, as n and d are (it stayed
        # in the box and in the state, and refused every later run, of any other setting too)
        self.w_seed = self._whole_number_box("seed", "Seed", sizing_mode="stretch_width", css_classes=["loe-seed"],
                                             refuse=self._refused)
        self.w_temp = self._slider(ReleasedFloatEditSlider, "temperature", "Noise temperature T",
                                   start=0.0, end=2.0, step=0.05, css_classes=["loe-temperature"],
                                   refuse=self._refused)
        # switching the unit converts the number (c <-> comparisons per landmark)
        # a button group shows no label of its own: its caption is a line above it
        self.w_unit_caption = pn.pane.Markdown("Budget unit: what the number below counts",
                                               margin=(5, 10, -5, 10), css_classes=["loe-unit-caption"])
        self.w_unit = W.RadioButtonGroup(label="Budget unit", options=BUDGET_UNITS, value=s.budget_unit,
                                         sizing_mode="stretch_width", orientation="vertical",
                                         css_classes=["loe-unit"], **TOGGLE_STYLE)
        self.w_unit.param.watch(lambda e: self.state.set_budget_unit(e.new), "value")
        s.param.watch(lambda e: setattr(self.w_unit, "value", e.new), "budget_unit")
        self.w_paper = W.Switch(value=s.paper_only, css_classes=["loe-paper-only"], align="center")
        self.w_paper.link(s, value="paper_only", bidirectional=True)
        # no bounds on the box: a value out of range must reach the state, which says the range
        # (a bounded widget refused it silently and the old results stayed)
        self.w_budget = W.FloatInput(value=s.budget, label="Budget (c, or per landmark)",
                                     description="The allowed range depends on n and ℓ; a value outside it is "
                                                 "refused with the range.",
                                     sizing_mode="stretch_width", css_classes=["loe-budget"])
        self.w_budget.param.watch(self._budget_to_state, "value")
        s.param.watch(lambda e: setattr(self.w_budget, "value", e.new), "budget")
        # landmarks the explorer cannot run with are named and set back too (2 stayed in the box, refused by the run)
        self.w_l = self._whole_number_box("n_landmarks", "Landmarks ℓ", placeholder="auto: d + 3",
                                          sizing_mode="stretch_width", css_classes=["loe-landmarks"],
                                          refuse=self._refused)
        self.w_sel_caption = pn.pane.Markdown("Landmark selection: drawn at random, or spread out by MaxMin",
                                              margin=(5, 10, -5, 10), css_classes=["loe-sel-caption"])
        self.w_sel = W.RadioButtonGroup.from_param(s.param.landmark_selection, label="Landmark selection",
                                                   options={"random": "random", "MaxMin": "maxmin"},
                                                   sizing_mode="stretch_width", css_classes=["loe-sel"],
                                                   **TOGGLE_STYLE)
        # refuses a file over the size limit in the browser, before sending it
        self.w_upload = upload_box("Upload points (CSV)", accept=".csv,.tsv,.txt,.npy",
                                   sizing_mode="stretch_width", css_classes=["loe-upload"])
        self.w_upload.param.watch(self._on_upload, ["value", "filename"] if "filename" in self.w_upload.param
                                  else ["value"])
        # while a points upload is read (on a worker thread: the server goes on answering everyone)
        self.reading_spinner = pn.indicators.LoadingSpinner(value=True, size=22, visible=False, margin=(8, 4, 0, 10))
        self.reading_note = pn.pane.Markdown("", visible=False, css_classes=["loe-reading"])
        self.b_run = W.Button(label="Run", color="primary", css_classes=["loe-run"],
                              description="Sample and fit with the sidebar's settings now, on this step "
                                          "(a large run waits for this button)")
        self.b_run.on_click(lambda e: self.state.run(force=True))
        self.b_run_all = W.Button(label="Run all", color="success", css_classes=["loe-run-all"],
                                  description="Run, then draw every step and open the Embedding step")
        self.b_run_all.on_click(lambda e: self.run_all())
        self.b_cancel = W.Button(label="Cancel", color="danger", variant="outline", disabled=True,
                                 description="Stop the run in progress (the previous results stay)",
                                 css_classes=["loe-cancel"])
        self.b_cancel.on_click(lambda e: self.state.cancel())
        # Panel waits 50 ms for more changes before it applies a value from the page; these
        # boxes send one committed value (Enter, a click), so a rerun starts at once.
        for w in (self.w_kind, self.w_seed, self.w_unit, self.w_budget, self.w_l, self.w_sel, self.w_paper):
            w._debounce = 0
        self.status = pn.pane.Markdown("", sizing_mode="stretch_width",
                                       styles={"font-size": "1.1em", "min-height": TWO_LINES},
                                       css_classes=["loe-status"], margin=(0, 10))
        self.spinner = pn.indicators.LoadingSpinner(value=False, size=26, color="primary")
        self.alert = alert("", "danger", visible=False, sizing_mode="stretch_width",
                           css_classes=["loe-error"])
        self.notice = alert("", "warning", visible=False, sizing_mode="stretch_width",
                            css_classes=["loe-notice"])
        self.l_hint = pn.pane.Markdown("", styles={"color": "#555"}, margin=(-8, 10, 0, 10),
                                      css_classes=["loe-l-hint"])
        self.dl_csv = W.FileDownload(callback=self._embedding_csv, filename="loe_embedding.csv",
                                     label="Embedding (CSV)", variant="outline",
                                     sizing_mode="stretch_width")
        self.dl_html = W.FileDownload(callback=self._plots_html, filename="loe_step.html",
                                      label="This step's plots (HTML)", variant="outline",
                                      sizing_mode="stretch_width")
        self.w_offset = W.Select(label="Common offset of the shifts", options=dict(OFFSET_RULES),
                                 value=s.offset, sizing_mode="stretch_width", css_classes=["loe-offset"])
        self.w_offset.link(s, value="offset", bidirectional=True)
        self.sidebar = pn.Column(
            pn.Row(self.b_run, self.b_run_all, self.b_cancel, self.spinner),
            pn.pane.Markdown("### Ground truth"), self.w_kind, self.w_n, self.w_n_hint, self.w_d, self.w_d_hint,
            self.w_seed,
            self.w_upload, pn.Row(self.reading_spinner, self.reading_note, margin=0),
            pn.pane.Markdown("### Comparisons"), self.w_temp, self.w_unit_caption, self.w_unit, self.w_budget,
            pn.pane.Markdown("### Landmarks"), self.w_l, self.l_hint, self.w_sel_caption, self.w_sel,
            self.w_offset,
            pn.Row(self.w_paper, pn.pane.Markdown(
                "The paper's algorithm only (uniform pairs, no ordinal polish)", margin=(0, 5),
                sizing_mode="stretch_width"),
                   sizing_mode="stretch_width"),
            pn.pane.Markdown("### Downloads"), self.dl_csv, self.dl_html,
            pn.pane.Markdown("PNG: the save tool (a disk) in the toolbar beside each plot.", styles={"color": "#555"}),
            sizing_mode="stretch_width", styles=BASE_FONT,
        )

    def _kind_options(self) -> list:
        """The ground truths offered: the generators, and "uploaded" once there is an upload (or it is chosen)."""
        s = self.state
        kinds = [k for k in s.param.kind.objects if k != "uploaded"]
        return kinds + ["uploaded"] if s.uploaded_name or s.kind == "uploaded" else kinds

    def _show_kind(self, *events) -> None:
        options = self._kind_options()
        if list(self.w_kind.options) != options:
            self.w_kind.param.update(options=options, value=self.state.kind)
        elif self.w_kind.value != self.state.kind:
            self.w_kind.value = self.state.kind

    def _whole_number_box(self, name, label, refuse=None, **kw):
        """A number box for the state's integer ``name`` that hands it every number the page sends.

        The page sends a whole number too long for a JavaScript integer (a seed of
        99999999999999999999999) as the float 1e+23, which Panel's IntInput refused inside
        Panel: a traceback in the server's log, and the box showed a seed the results were not
        computed with. Here a whole float becomes the int it is, and anything else the state
        refuses is said in the page, the box set back to the value in use; so is a value that
        ``refuse(name, value)`` says why the explorer cannot run with (None: it can).
        """
        s = self.state
        w = WholeNumberInput(label=label, value=getattr(s, name), **kw)

        def kept() -> str:
            v = getattr(s, name)
            if v is None and name == "n_landmarks":  # an empty landmarks box: the fewest LOE allows
                return f"auto (d + 3 = {s.d + 3})" if isinstance(s.d, int) else "auto"
            return str(v)

        def to_state(event):
            v = event.new
            if isinstance(v, float) and v.is_integer():
                v = int(v)
            if v == getattr(s, name):
                return
            why = refuse(name, v) if refuse is not None and v is not None else None
            if why:
                sent = event.new  # past 2**53 the page sends a float: its digits beyond the 16th are not the typed ones
                got = (f"about {sent:.3g}" if isinstance(sent, float) and 2 ** 53 <= abs(sent) < float("inf") else
                       f"{v:g}" if isinstance(v, float) else repr(v) if not isinstance(v, int) else
                       f"{v:,}" if abs(v) < 10**30 else quote_count(v))  # an int as sent: in full, or in words
                s.error = f"{label} {why} (got {got}); it stays {kept()}."
                w.value = getattr(s, name)
                return
            try:
                setattr(s, name, v)
            except (ValueError, TypeError):
                got = "the box was empty" if v is None else f"got {v:g}" if isinstance(v, float) else f"got {v!r}"
                s.error = f"{label} must be a whole number ({got}); it stays {kept()}."
                w.value = getattr(s, name)

        w.param.watch(to_state, "value")
        s.param.watch(lambda e: None if w.value == e.new else setattr(w, "value", e.new), name)
        return w

    def _budget_to_state(self, event) -> None:
        """The budget typed in its box, or, when the explorer cannot run with it, its reason and the budget in use
        back in the box (a refused budget stayed there and in the link, and every later run, of any setting, was
        refused with the budget's range while the old results stayed on screen)."""
        s, v = self.state, event.new
        if v == s.budget:
            return
        why = self._refused("budget", v)
        if why:
            got = "" if v is None else f" (got {v:,.6g})"
            s.error = f"Budget {why}{got}; it stays {s.budget:,.6g}."
            self.w_budget.value = s.budget
            return
        s.budget = float(v)

    def _refused(self, name: str, value) -> str | None:
        """Why the explorer cannot run with ``value`` for ``state.<name>`` (n, d, the landmarks, the seed or the
        temperature), with the other settings in use."""
        if value is None:
            return "needs a value (the box was empty)"
        if name == "n_landmarks" and isinstance(value, float):  # a whole one came as an int
            return "must be a whole number"
        return refused_link_settings({name: value}, self.state).get(name)

    @staticmethod
    def _range_hint(slider, most: int, css_class: str) -> pn.pane.Markdown:
        """The line under an editable slider that says what its slider covers and what its box takes."""
        return pn.pane.Markdown(f"drag {slider.start:,}–{slider.end:,}; type up to {most:,}",
                                styles={"color": "#555"}, margin=(-4, 10, 8, 10), stylesheets=[ONE_LINE_CSS],
                                css_classes=[css_class])

    def _slider(self, cls, name, label, refuse=None, **kw):
        """A slider bound to ``state.<name>`` that updates the state on release only.

        ``refuse(name, value)`` says why a value cannot be used (None: it can): such a value,
        typed in the slider's box, is named in the page and the box set back to the value in use.
        """
        s = self.state
        if cls is WholeNumberSlider:  # its box takes 1e5 (100,000) and hands back 2.5 for a word
            kw["refuse_number"] = lambda v: setattr(
                s, "error", f"{label} must be a whole number (got {v:g}); it stays {getattr(s, name):,}.")
        w = cls(label=label, value=getattr(s, name), sizing_mode="stretch_width", **kw)
        stretch_only_to_finite(w)

        def to_state(event):
            v = event.new
            if getattr(s, name) == v:
                return
            why = refuse(name, v) if refuse is not None else None
            if why:
                kept = getattr(s, name)
                # a number past 2**53 came as a float: its digits beyond the 16th are not the ones typed
                got = "" if v is None else f" (got about {float(v):.3g})" if abs(v) >= 2 ** 53 else f" (got {v:,})"
                if why.startswith("needs a budget") and got:  # "...; the budget is 100 (got 200,000)" named the budget
                    s.error = f"{label} = {got[6:-1]} {why}: change the budget first; it stays {kept:,}."
                else:
                    s.error = f"{label} {why}{got}; it stays {kept:,}."
                w.value = kept
                # the page stretched the slider to the typed value on its own: back to its range (with the
                # value in use), sent again even where the server's copy never saw the stretch
                slider = w._slider
                slider.param.update(start=min(w.start, kept), end=max(w.end, kept))
                slider.param.trigger("start", "end")
                return
            setattr(s, name, v)

        def to_widget(event):
            if w.value != event.new:
                try:
                    w.value = event.new
                except Exception:  # a value the widget cannot show; the state reports it
                    pass
        # its slider changes the value on release (views.base.ReleasedIntSlider), served or in a notebook
        w.param.watch(to_state, "value")
        s.param.watch(to_widget, name)
        return w

    def _build_main(self):
        s = self.state
        self.tabs = pn.Tabs(*[(v.title, v) for v in self._views], active=s.step, dynamic=True,
                            sizing_mode="stretch_width", css_classes=["loe-steps"],
                            stylesheets=[FOCUS_CSS, WRAP_TABS_CSS])
        self.tabs.param.watch(lambda e: setattr(self.state, "step", e.new), "active")
        self.b_prev = pn.widgets.Button(label="◀ Previous", variant="outline", width=150, css_classes=["loe-prev"])
        self.b_next = pn.widgets.Button(label="Next ▶", color="primary", width=190, css_classes=["loe-next"])
        self.b_prev.on_click(lambda e: self.go(-1))
        self.b_next.on_click(lambda e: self.go(+1))
        # centred on the buttons, its paragraph without margins: the page's first drawing of a markdown pane
        # lacks the stylesheet that removes them, so step 1's header sat 18 px lower than every later one's
        self.step_label = pn.pane.Markdown("", styles={"font-size": "1.2em"}, margin=(0, 20), align="center",
                                           stylesheets=[ONE_LINE_CSS], css_classes=["loe-step"])
        self.w_explain = pn.widgets.Checkbox(label="Show the explanations", value=True, align="center",
                                             css_classes=["loe-explain"])
        self.w_explain.param.watch(self._on_explain, "value")
        if self._served:  # the two halves wrap, the second under the first, where the page is narrow
            self.nav = pn.FlexBox(pn.Row(self.b_prev, self.step_label), pn.Row(self.w_explain, self.b_next),
                                  flex_wrap="wrap", justify_content="space-between", align_items="center",
                                  sizing_mode="stretch_width")
        else:  # a notebook's output may be narrower than the row (JupyterLab's file browser open at 1280 px)
            self.nav = pn.FlexBox(self.b_prev, self.step_label, self.w_explain, self.b_next, flex_wrap="wrap",
                                  align_items="center", sizing_mode="stretch_width")
        # the same two buttons again under the step: each step is two or three screens tall at 800 px,
        # and the row at the top had scrolled out of sight by the time the step was read
        self.b_prev_bottom = pn.widgets.Button(label="◀ Previous", variant="outline", width=150,
                                               css_classes=["loe-prev-bottom"])
        self.b_next_bottom = pn.widgets.Button(label="Next ▶", color="primary", width=190,
                                               css_classes=["loe-next-bottom"])
        self.b_prev_bottom.on_click(lambda e: self.go(-1))
        self.b_next_bottom.on_click(lambda e: self.go(+1))
        # served, the page scrolls inside the template's main area: the next step starts at its top
        # (in a notebook the page is the notebook's, and stays where it is)
        to_top = "const m = document.getElementById('main'); if (m) m.scrollTo({top: 0});"
        for b in (self.b_prev_bottom, self.b_next_bottom):
            b.js_on_click(code=to_top)
        self.nav_bottom = pn.Row(self.b_prev_bottom, pn.HSpacer(), self.b_next_bottom, sizing_mode="stretch_width",
                                 margin=(10, 0, 20, 0), css_classes=["loe-nav-bottom"])
        self.main = pn.Column(self.nav, self.status, self.alert, self.notice, self.tabs, self.nav_bottom,
                              sizing_mode="stretch_width")
        self._update_nav()
        # top-level modes: the walk-through on synthetic data, and the user's own triplets
        self._lesson_banner = alert("", "info", visible=False, sizing_mode="stretch_width",
                                    css_classes=["loe-lesson-banner"])
        self.main.insert(1, self._lesson_banner)
        self.modes = pn.Tabs((MODES[0], self.main), (MODES[1], pn.Column()), (MODES[2], self._lessons),
                             dynamic=True, styles=BASE_FONT, stylesheets=[FOCUS_CSS, WRAP_TABS_CSS],
                             sizing_mode="stretch_width", css_classes=["loe-modes"])
        self.modes.param.watch(self._on_mode, "active")
        # Served, the template's sidebar holds only the walk-through's settings: "Your triplets" folds it away
        # and gives its results the page's whole width (a quarter more at 1280 px); the walk-through and the
        # lessons open it again. The menu button still opens it by hand.
        self.modes.jscallback(active=_SIDEBAR_FOR_MODE, args={"away": MODES.index("Your triplets")})
        self._mode_note = pn.pane.Markdown(
            "The settings in this sidebar belong to the walk-through; “Your triplets” has its own, "
            "beside its results.", visible=False, styles={"color": "#555"})
        self.sidebar.insert(0, self._mode_note)
        self._sidebar_column = pn.Column(self.sidebar, width=330)
        readable(self.sidebar, self.modes)  # the steps' own widgets are made readable as they are shown

    def __panel__(self):
        # The notebook layout (its sidebar column is hidden in "Your triplets", as the template folds its
        # own). Keys typed in the explorer's boxes stay there (JupyterLab took Enter for a
        # shortcut). The widest steps need NOTEBOOK_MIN_WIDTH: a narrower output (beside JupyterLab's file
        # browser) scrolls sideways instead of cutting the plots off at its edge.
        return pn.Row(self._sidebar_column, self.modes, KeysStayInBoxes(), sizing_mode="stretch_width",
                      styles={"min-width": f"{NOTEBOOK_MIN_WIDTH}px"})

    def servable_template(self):
        """The explorer inside a :class:`panel.template.BootstrapTemplate` (used when served).

        Bootstrap, unlike the Fast templates, loads no web font from the internet, so the
        page works offline (a lecture hall without network, or CI). The template's own busy
        indicator is left out: it spun for every event the server handled (two more
        messages and a layout of the page at the start of each fit); the sidebar's spinner
        and the status line say when a run is in progress.
        """
        return pn.template.BootstrapTemplate(
            title=TITLE, sidebar=[self.sidebar], main=[self.modes], header_background=_ACCENT,
            sidebar_width=350, busy_indicator=None,
            collapsed_sidebar=self.modes.active == MODES.index("Your triplets"))

    def servable(self, title: str | None = None, location: bool = True, area: str = "main", target=None):
        """Serve the explorer in a template (or mark it servable in a notebook)."""
        doc = pn.state.curdoc
        if doc is not None and doc.session_context is not None and target is None:
            serve_stylesheets_locally(doc)
            return self.servable_template().servable(title=title or TITLE)
        return super().servable(title=title or TITLE, location=location, area=area, target=target)

    # ------------------------------------------------------------------ actions
    def go(self, delta: int) -> None:
        """Move ``delta`` steps forward or back."""
        self.state.step = int(np.clip(self.state.step + delta, 0, len(STEPS) - 1))

    @property
    def _triplets(self) -> TripletsView:
        """The "Your triplets" view, built and put in its tab the first time it is needed."""
        if self._triplets_view is None:
            self._triplets_view = TripletsView(dispatch=self.state.dispatch)
            readable(self._triplets_view)  # as the page's widgets were made at its build
            self.modes[MODES.index("Your triplets")] = (MODES[1], self._triplets_view)
        return self._triplets_view

    def run_all(self) -> None:
        """Run the pipeline now (even a large run), then draw every step and open the embedding (unless another
        step was chosen while it ran)."""
        self._run_all_from = self.state.step
        self.state.run(force=True)

    def cancel(self) -> None:
        """Cancel every run of this page: the walk-through's, Compare's, "Your triplets"' and a lesson's sweep;
        drop the uploads being read."""
        mine = self._triplets_view.state if self._triplets_view is not None else None
        for part in (self.state, mine):
            if part is not None:
                part._forget_read()
        self.state.cancel()
        self._compare.cancel()
        if mine is not None:
            mine.cancel()
        self._lessons.sweep.cancel()

    def close(self) -> None:
        """Stop the session's work at once and drop its data and its links to the page."""
        if self._closed:
            return
        self._closed = True
        self._end_busy_wait()
        for ref_doc, cb in self._doc_callbacks:
            _remove_doc_callback(ref_doc, cb)
        self._doc_callbacks = []
        for part in (self._compare, self._triplets_view, self._lessons, self.state):
            if part is None:  # "Your triplets" never shown
                continue
            try:
                part.close()
            except Exception:
                log.warning("closing %s failed", type(part).__name__, exc_info=True)
        # Panel's registry of JS callbacks (e.g. the editable sliders') is keyed by the
        # widgets and keeps them, and through them this explorer, alive: drop our entries
        release_links(self.sidebar, self.modes)
        # drop the views' references to plots and data without touching their bokeh
        # models (the session's document is being torn down)
        for v in self._views:
            for attr in ("_live", "_live_panes"):
                if hasattr(v, attr):
                    setattr(v, attr, None)

    def _first_run(self):
        if self._closed:
            return
        self._first_waiting = False
        self.state.run()
        doc = pn.state.curdoc
        if doc is None:
            return
        # the document's callbacks hold this explorer only weakly: they never keep a
        # closed page alive, and close() removes them
        me = weakref.ref(self)
        ref_doc = weakref.ref(doc)

        def check_first():
            e = me()
            if e is not None:
                e._check_first_result()

        def watch():
            e = me()
            if e is not None:
                e._watch_connection(ref_doc())

        self._doc_callbacks = [
            (ref_doc, doc.add_timeout_callback(check_first, int(FIRST_RESULT_TIMEOUT * 1000))),
            # a closed tab (no connection left) cancels the runs at once; the session itself
            # is freed later, when the server discards it
            (ref_doc, doc.add_periodic_callback(watch, 500)),
        ]

    def _watch_connection(self, doc=None):
        if self._closed or connection_count(doc) != 0:
            return
        mine = self._triplets_view.state if self._triplets_view is not None else None
        if (self.state.jobs.busy or self._compare.jobs.busy or self._lessons.sweep.running or self.state.reading
                or (mine is not None and (mine.jobs.busy or mine.reading))):
            log.info("LOE explorer page closed during a run: cancelling it")
            self.cancel()

    def _check_first_result(self):
        s = self.state
        if self._closed or s.version > 0 or s.error or s.notice:
            return
        if s.jobs.busy:
            self._first_late = (f"The first embedding is still being computed after "
                                f"{FIRST_RESULT_TIMEOUT:.0f} s (the server may be busy). Wait, or press "
                                "Cancel and choose a smaller configuration.")
        else:
            log.warning("LOE explorer: no first result after %.0f s and no run in progress",
                        FIRST_RESULT_TIMEOUT)
            self._first_late = (f"No result arrived within {FIRST_RESULT_TIMEOUT:.0f} s. "
                                "Press “Run” to try again.")
        self._on_status()

    # ------------------------------------------------------------------ callbacks
    def _on_session_destroyed(self, session_context):
        self.close()
        log.info("LOE explorer session %s closed; its data were released",
                 getattr(session_context, "id", "?"))

    def _on_url_error(self, values):
        # The link's settings arrive in one update, refused as a whole when one is bad: apply
        # each setting that is valid and name the others (DeferredLink reads the step's spellings).
        self.state.from_query(dict(values))

    def _say_repeated_settings(self, search: str) -> None:
        """A setting given twice in the link (``?n=500&n=2000``) is used with its last value: say so."""
        for name, values in repeated_settings(search, URL_PARAMS + ("lesson",)).items():
            given = ", ".join(quote_link_value(v) for v in values[:5]) + (", …" if len(values) > 5 else "")
            self.state.report_link_problem(f"The link gives {name} {len(values)} times ({given}); the last one "
                                           "is used.")

    def _on_mode(self, event):
        """Show the walk-through's sidebar only in its mode; open "Your triplets" on a sample."""
        walk = event.new != MODES.index("Your triplets")  # lessons configure the walk-through too
        for obj in self.sidebar.objects:
            obj.visible = (obj is self._mode_note) != walk
        self._sidebar_column.visible = walk
        if not walk:
            self._triplets.activate()

    def _on_explain(self, event):
        for v in self._views:
            v._explain.collapsed = not event.new

    def _on_kind(self, event):
        """Choosing the 3-D Swiss roll raises d to 3 in the same update (one run, no error)."""
        s = self.state
        if event.new == s.kind:
            return
        if event.new == "swiss_roll" and isinstance(s.d, int) and s.d < 3:
            s.param.update(kind=event.new, d=3)
        else:
            s.kind = event.new

    def _on_upload(self, *events):
        got = take_upload(self.w_upload)
        if got is not None:
            name, content = got
            # read on a worker thread: a large file takes seconds, and the server's event loop serves every page
            self.state.load_file(content, name or "upload.csv", background=True, box=upload_receipt(self.w_upload))

    # ------------------------------------------------------------------ lessons
    def open_lesson(self, key: str):
        """Open lesson ``key`` in the "Lessons" mode (see :mod:`loe_viz.app.lessons`); returns the lesson."""
        x = self._lessons.open(key)
        self.modes.active = MODES.index("Lessons")
        return x

    def _lesson_opened(self, x) -> None:
        """Lesson ``x`` was opened, from the address or a click: the walk-through's banner asks its question, and
        the address names it (a link copied then opens this lesson, not the one the page was opened with)."""
        end = "" if x.title.endswith(("?", "!", ".")) else "."  # "how much do noisy answers hurt?." read twice
        self._lesson_banner.object = (f"**Lesson: {x.title}{end}** {x.question} "
                                      "(the “Lessons” tab has the story and the variants)")
        self._lesson_banner.visible = True
        where = pn.state.location if self._served else None
        if where is not None and (where.query_params or {}).get("lesson") != x.key:
            where.update_query(lesson=x.key)

    def _say_link_on_lessons(self, x, search: str) -> None:
        """Above lesson ``x``, opened by the link ``search`` (``?lesson=budget&n=300``): the link's settings that
        were not used, and those that set the walk-through only (a sweep, or "Your triplets", has its own)."""
        said = [self.state.link_problem] if self.state.link_problem else []
        query = urllib.parse.parse_qs(search.lstrip("?"), keep_blank_values=True)
        given = [p for p in URL_PARAMS if p in query and p != "step"]
        if given and (x.sweep is not None or x.sample is not None):
            what = "runs a sweep with its own settings (shown with the sweep below)" if x.sweep is not None else (
                "reads its own triplet file in “Your triplets”")
            said.append(f"This lesson {what}: the link's {', '.join(given)} "
                        f"{'sets' if len(given) == 1 else 'set'} the walk-through only.")
        self._lessons.say_link_problem(" ".join(said))

    def _show_lesson(self, x) -> None:
        """Open where lesson ``x`` looks: a step of the walk-through, or "Your triplets" with its sample."""
        if x.look_at == "Your triplets":
            self.modes.active = MODES.index("Your triplets")
            if x.sample:
                self._triplets.w_sample.value = x.sample
            return
        self.modes.active = MODES.index("Walk-through")
        if x.look_at in STEPS:
            self.state.step = STEPS.index(x.look_at)

    def _open_lesson_from_url(self):
        """Open the lesson the address names; returns it (None: none, or no such lesson, which is said)."""
        where = pn.state.location  # None where Panel serves the page without one (location=False)
        key = (where.query_params or {}).get("lesson") if where is not None else None
        if not key:
            return None
        try:
            return self.open_lesson(str(key))
        except KeyError:  # said beside the first result, which would clear a plain error at once
            from .lessons import lesson_keys

            self.state.report_link_problem(f"Ignored lesson={str(key)[:80]!r} in the link: no such lesson (the "
                                           f"lessons are {', '.join(lesson_keys())})")
            # out of the address too, as a refused setting is: a copied link repeated the error (served: once the
            # page has sent its own address, which would bring it back)
            def strip():
                pairs = [(k, v) for k, v in urllib.parse.parse_qsl((where.search or "").lstrip("?"),
                                                                   keep_blank_values=True) if k != "lesson"]
                where.search = "?" + urllib.parse.urlencode(pairs) if pairs else ""

            strip()
            if self._served:
                pn.state.onload(strip)

    def _on_results(self, *events):
        if self._run_all_from is not None:
            start, self._run_all_from = self._run_all_from, None
            for v in self._views:
                v.refresh()
            if self.state.step == start:  # the student did not pick a step meanwhile
                self.state.step = STEPS.index("Embedding")
        self._refresh_active()

    def _on_step(self, event):
        if self.tabs.active != event.new:
            self.tabs.active = event.new
        self._update_nav()
        self._refresh_active()

    def _refresh_active(self):
        self._views[self.state.step].refresh()

    def _update_nav(self):
        k = self.state.step
        for prev, nxt in ((self.b_prev, self.b_next), (self.b_prev_bottom, self.b_next_bottom)):
            prev.disabled = k == 0
            nxt.disabled = k == len(STEPS) - 1
            nxt.label = f"Next: {STEPS[k + 1]} ▶" if k < len(STEPS) - 1 else "Next ▶"
        self.step_label.object = f"**Step {k + 1} of {len(STEPS)}: {STEPS[k]}**"

    def _on_config_shown(self, *events):
        s = self.state
        l = s.n_landmarks_effective
        if not isinstance(s.d, int) or not isinstance(l, int):
            self.l_hint.object = ""
        elif l < s.d + 3:
            self.l_hint.object = f"ℓ = {l} is too few: at least d + 3 = {s.d + 3}"
        else:
            self.l_hint.object = f"ℓ = {l} (at least d + 3 = {s.d + 3})"

    def _on_status(self, *events):
        s = self.state
        if not s.busy:
            self._end_busy_wait()
        elif not self._busy_shown:
            # the first run has no results to keep on screen: it is shown at once, in the page's first document
            # (through a slow hall network the status line stayed empty for seconds under "the messages above")
            if not self._served or not s.metrics or self._start_busy_wait():
                self._busy_shown = True
            elif events and all(e.name == "busy" for e in events):
                return  # nothing to show until the run has lasted BUSY_DELAY
        # one message for the spinner, the buttons and the lines below (a change made in the
        # page is not held by Panel: each would be laid out and drawn on its own, during the fit)
        with pn.io.hold():
            self._show_status()

    def _start_busy_wait(self) -> bool:
        """Show the run in progress after :data:`BUSY_DELAY`; True when it must be shown now."""
        if self._busy_wait is not None:
            return False
        doc = pn.state.curdoc
        if doc is None or doc.session_context is None:
            return True
        me, ref_doc = weakref.ref(self), weakref.ref(doc)

        def show():
            e, d = me(), ref_doc()
            if e is None or d is None or e._closed or e._busy_wait is None:
                return
            e._busy_wait = None
            if e.state.busy:
                e._busy_shown = True
                with set_curdoc(d), pn.io.hold(d):
                    e._show_status()

        self._busy_wait = (ref_doc, doc.add_timeout_callback(show, int(BUSY_DELAY * 1000)))
        return False

    def _end_busy_wait(self) -> None:
        """The run ended (or the page closes): forget a pending :meth:`_start_busy_wait`."""
        self._busy_shown = False
        wait, self._busy_wait = self._busy_wait, None
        if wait is not None:
            _remove_doc_callback(*wait)

    def _show_status(self):
        s = self.state
        busy = bool(s.busy) and self._busy_shown
        self.spinner.value = busy
        self.b_cancel.disabled = not busy
        # a run now would use the data the upload being read is about to replace
        self.b_run.disabled = self.b_run_all.disabled = bool(s.reading)
        self.reading_note.object = f"Reading {md_name(s.reading)}…" if s.reading else ""
        self.reading_note.visible = self.reading_spinner.visible = bool(s.reading)
        self.alert.object = md_quoting(s.error, s.uploaded_name, s.last_upload)  # a quoted file name stays one unit
        self.alert.visible = bool(s.error)
        self.notice.object = md(s.notice)
        self.notice.visible = bool(s.notice)
        m = s.metrics
        if m:
            self.status.object = (
                f"{'computing… · ' if busy else ''}"
                f"**Procrustes error {m['procrustes']:.4f}** · triplet error {100 * m['triplet_error']:.2f} % · "
                f"n = {m['n']:,}, d = {m['d']}, ℓ = {m['n_landmarks']}, {m['n_triplets']:,} comparisons · "
                f"{md_quoting(s.status, s.uploaded_name)}")
        else:
            if self._first_late and not s.error:
                self.status.object = "⚠ " + md(self._first_late)
            elif busy or (self._first_waiting and not s.error and not s.notice):
                self.status.object = "Computing the first embedding…"
            else:
                self.status.object = md(s.status)

    # ------------------------------------------------------------------ downloads
    def _embedding_csv(self):
        """The walk-through's embedding as CSV: a header, then one row per item; the file name gives the run.

        No comment line above the header (``pandas.read_csv`` read it as the header, a wrongly shaped table without
        an error), and the colours are quoted (``comment="#"`` emptied them): the URL holds the whole configuration.
        """
        s = self.state
        buf = io.StringIO()
        if s.model is None:
            buf.write("no embedding yet\n")
            buf.seek(0)
            return buf
        X, Z, A = s.points, np.asarray(s.model.embedding_), s.aligned
        n = X.shape[0]
        is_lm = np.zeros(n, dtype=int)
        is_lm[np.asarray(s.model.landmarks_)] = 1
        cols = (["item", "landmark"] + [f"y{k + 1}" for k in range(Z.shape[1])]
                + [f"aligned{k + 1}" for k in range(A.shape[1])] + [f"x{k + 1}" for k in range(X.shape[1])]
                + ["point_error", "color"])
        csv.writer(buf, lineterminator="\n").writerow(cols)
        rows = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_NONNUMERIC)
        values = np.column_stack([Z, A, X, s.point_error]).tolist()
        for i, (lm, row, c) in enumerate(zip(is_lm.tolist(), values, s.colors)):
            rows.writerow([i, lm, *(float(f"{v:.8g}") for v in row), str(c)])
        self.dl_csv.filename = f"loe_embedding_{run_stem(s.config_used)}.csv"
        buf.seek(0)
        return buf

    def _plots_html(self):
        from bokeh.resources import INLINE
        view = self._views[self.state.step]
        panes = [o for o in view._body.select(pn.pane.HoloViews)]
        buf = io.StringIO()
        if not panes:
            buf.write("<html><body>Nothing drawn in this step yet.</body></html>")
        else:
            from bokeh.document import Document

            from panel.io.model import add_to_doc
            from panel.io.save import save

            from .serving import inline_stylesheets

            # the settings and the result: two variants of a lesson downloaded side by side are told apart
            col = pn.Column(pn.pane.Markdown(f"# {TITLE}: {view.title}"),
                            pn.pane.Markdown(md_quoting(run_summary(self.state.config_used, self.state.metrics),
                                                        self.state.config_used.get("uploaded_name", "")),
                                            styles={"font-size": "15px"}),
                            *[pn.pane.HoloViews(p.object, sizing_mode="stretch_width", min_height=420) for p in panes])
            # built under a document of its own: the file gets stylesheet objects of its own
            # (Panel shares them per document), whose text goes into the file (it opens without
            # internet), and the page's own stay as the server gave them
            doc = Document()
            with set_curdoc(doc):
                add_to_doc(col.get_root(doc), doc, True)
                inline_stylesheets(doc)
                save(doc, buf, resources=INLINE, title=f"LOE explorer: {view.title}")
        buf.seek(0)
        self.dl_html.filename = f"loe_{view.title.lower()}_{run_stem(self.state.config_used)}.html"
        return buf
