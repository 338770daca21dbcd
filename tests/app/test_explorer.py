"""The Explorer object in-process (no server): every step draws, downloads work, close frees."""

from __future__ import annotations

import io

import numpy as np
import pytest

pn = pytest.importorskip("panel")

from loe_viz.app import Explorer  # noqa: E402
from loe_viz.app.state import STEPS  # noqa: E402
from loe_viz.app.text import md_quoting  # noqa: E402


@pytest.fixture(scope="module")
def explorer():
    e = Explorer(n=300, seed=2)
    assert e.state.wait(120)
    assert e.state.error == "" and e.state.model is not None
    yield e
    e.close()


def test_every_step_draws(explorer):
    for k, view in enumerate(explorer._views):
        explorer.state.step = k
        view.refresh(force=True)
        alerts = [o for o in view._body.objects if isinstance(o, pn.pane.Alert) and o.alert_type == "danger"]
        assert not alerts, (STEPS[k], [a.object for a in alerts])
        assert len(view._body.objects) >= 2, STEPS[k]
        pn.panel(view).get_root()  # bokeh models can be built


def test_edm_step_prints_eigenvalues_below_the_projection_tolerance_as_zero(explorer):
    # with l = 5 and d = 2 the projected block has two exact zeros among its eigenvalues; the
    # projection stops at FIT_TOL, so they come out as rounding residues (about 1e-7) unless cleaned
    import re

    k = STEPS.index("EDM")
    explorer.state.step = k
    view = explorer._views[k]
    view.refresh(force=True)
    text = " ".join(str(getattr(o, "object", "")) for o in view._body.objects)
    found = re.search(r"Leading eigenvalues of −½VEV: ([^(]*)\(", text)
    assert found, text
    values = [float(v) for v in found[1].replace("e", "E").split(", ")]
    assert values[0] > 0 and all(v == 0.0 or abs(v) > 1e-6 * values[0] for v in values), values


def test_navigation(explorer):
    explorer.state.step = 0
    explorer.go(+1)
    assert explorer.state.step == 1 and explorer.tabs.active == 1
    explorer.go(-5)
    assert explorer.state.step == 0 and explorer.b_prev.disabled
    explorer.tabs.active = 6
    assert explorer.state.step == 6 and explorer.b_next.disabled


def test_the_step_ends_with_its_own_previous_and_next_buttons(explorer):
    # each step is two or three screens tall at 800 px: the Next button at the top was out of sight
    assert explorer.main.objects[-1] is explorer.nav_bottom
    explorer.state.step = 2
    assert explorer.b_next_bottom.label == "Next: Shifts ▶" and not explorer.b_prev_bottom.disabled
    explorer.b_next_bottom.clicks += 1
    assert explorer.state.step == 3 and explorer.tabs.active == 3
    explorer.b_prev_bottom.clicks += 1
    assert explorer.state.step == 2
    explorer.state.step = len(STEPS) - 1
    assert explorer.b_next_bottom.disabled and explorer.b_next.disabled
    explorer.state.step = 0
    assert explorer.b_prev_bottom.disabled


def test_outside_a_server_the_navigation_row_wraps(explorer):
    # a notebook's output beside JupyterLab's file browser is about 850 px at 1280 px: the row of
    # Previous, step, explanations and Next (about 760 px) ran off the right edge of the explorer
    assert isinstance(explorer.nav, pn.FlexBox) and explorer.nav.flex_wrap == "wrap"
    assert list(explorer.nav.objects) == [explorer.b_prev, explorer.step_label, explorer.w_explain,
                                          explorer.b_next]


def test_downloads(explorer):
    import pandas as pd

    text = explorer._embedding_csv().read()
    # read as anyone would: there was a '# LOE embedding …' line, which pandas took for the header
    for table in (pd.read_csv(io.StringIO(text)), pd.read_csv(io.StringIO(text), comment="#")):
        assert list(table.columns[:4]) == ["item", "landmark", "y1", "y2"] and len(table) == explorer.state.n
        assert table["landmark"].sum() == len(explorer.state.model.landmarks_)
        assert table["color"].str.match(r"#[0-9a-fA-F]{6}$").all()  # the colours were cut off as comments
        np.testing.assert_allclose(table[["y1", "y2"]], explorer.state.model.embedding_, rtol=1e-7, atol=1e-12)
    cfg = explorer.state.config_used
    run = (f"{cfg['kind']}_n{cfg['n']}_d{cfg['d']}_seed{cfg['seed']}_T{cfg['temperature']:g}_c{cfg['budget']:g}"
           f"_l{cfg['n_landmarks']}{cfg['landmark_selection']}_lambda2")
    assert explorer.dl_csv.filename == f"loe_embedding_{run}.csv"
    explorer.state.step = STEPS.index("Embedding")
    explorer._views[explorer.state.step].refresh(force=True)
    html = explorer._plots_html().read()
    assert "<html" in html.lower() and "Bokeh" in html
    assert explorer.dl_html.filename == f"loe_embedding_{run}.html"
    # the page says the run it shows: two variants of a lesson downloaded side by side are told apart
    m = explorer.state.metrics
    assert f"noise temperature T = {cfg['temperature']:g}" in html and f"Procrustes error {m['procrustes']:.4f}" in html
    # it opens without internet: no stylesheet of it is linked (Panel's were linked at cdn.holoviz.org)
    import re

    assert '"name":"ImportedStyleSheet"' not in html and not re.findall(r"https://cdn[^\"' ]*\.css", html)
    assert not re.findall(r"<link[^>]+stylesheet[^>]+https?://", html), re.findall(r"<link[^>]+>", html)


def test_large_n_is_decimated_or_rasterised():
    import holoviews as hv

    from loe_viz.app import plots
    n = plots.DECIMATE_ABOVE + 10
    xy = np.random.default_rng(0).normal(size=(n, 2))
    hl = np.column_stack([np.linspace(0, 1, n), np.full(n, 0.5)])
    el = plots.scatter(xy, ["#000000"] * n, hue_lightness=hl, title="big")
    assert isinstance(el, hv.Points) and len(el) == plots.DECIMATE_ABOVE
    live = plots.LiveEmbedding()
    live.update(xy, xy + 0.01, hl, None, landmarks=[3, n - 1])
    data = live.pipe.data
    assert plots.DECIMATE_ABOVE <= len(data["df"]) <= plots.DECIMATE_ABOVE + 2 and len(data["lm"]) == 2
    assert {3, n - 1} <= set(data["df"]["item"])
    if plots._datashader() is not None:
        m = plots.RASTER_ABOVE + 10
        xy = np.random.default_rng(1).normal(size=(m, 2))
        hl = np.column_stack([np.linspace(0, 1, m), np.full(m, 0.5)])
        assert isinstance(plots.scatter(xy, ["#000000"] * m, hue_lightness=hl), hv.DynamicMap)


def test_a_live_embedding_is_freed_once_nothing_uses_it():
    """HoloViews keeps every element's options, hooks included, in a process-wide store until the element is
    collected: the plots' hooks held the LiveEmbedding, which holds the elements, so every closed page that had
    shown its Embedding step left its plots, their data and a Bokeh data source in the server (30 pages: 30 of
    each, 11 MB of data at n = 1000)."""
    import gc
    import weakref

    import holoviews as hv
    from bokeh.document import Document

    from loe_viz.app import plots

    live = plots.LiveEmbedding()
    xy = np.random.default_rng(3).normal(size=(80, 2))
    live.update(xy, xy + 0.05, np.column_stack([np.linspace(0, 1, 80), np.full(80, 0.5)]), None, landmarks=[1, 2])
    # each in a document of its own, as on a page (the process-wide current document would keep them all)
    figs = [hv.renderer("bokeh").get_plot(el, doc=Document()).state for el in (live.left, live.right)]
    assert all(f.renderers for f in figs)  # drawn: the hooks ran
    assert len(live._plots["points"]) == 2  # and reach the object while it lives
    gone = weakref.ref(live)
    del live, figs
    gc.collect()
    assert gone() is None


def test_the_overlay_tells_truth_from_estimate_by_shape_not_only_colour():
    """Truth and estimate were both dots; for a colour-blind reader the pale estimates took the truth's grey."""
    import holoviews as hv

    from loe_viz.app import plots

    live = plots.LiveEmbedding()
    xy = np.random.default_rng(2).normal(size=(60, 2))
    live.update(xy, xy + 0.05, np.column_stack([np.linspace(0, 1, 60), np.full(60, 0.5)]), None, landmarks=[1, 2])
    fig = hv.renderer("bokeh").get_plot(live.overlay).state
    markers = {r.glyph.marker for r in fig.renderers if type(r.glyph).__name__ == "Scatter"}
    assert {plots.TRUTH_MARKER, "circle", "star"} <= markers and plots.TRUTH_MARKER != "circle"
    assert fig.title.text == plots.OVERLAY_TITLE and "■" in fig.title.text


def test_a_slider_drag_in_a_notebook_refits_once_on_release(monkeypatch):
    # a notebook's pn.extension() without throttled=True: every step of a drag was a new n, and a new fit
    monkeypatch.setattr(pn.config, "throttled", False)
    e = Explorer(n=100)
    seen = []
    e.state.param.watch(lambda ev: seen.append(ev.new), "n")
    slider = e.w_n._slider
    for v in (110, 150, 200):  # the browser's messages while the handle moves
        slider._process_events({"value": v})
    assert seen == [] and e.state.n == 100
    slider._process_events({"value_throttled": 200, "value": 200})  # released
    assert seen == [200]
    e.close()


def test_close_frees_results():
    e = Explorer(n=100)
    assert e.state.wait(120)
    assert e.state.points is not None
    e.close()
    assert e.state.points is None and e.state.model is None and e.state.triplets is None


def test_noiseless_answers_say_the_embedding_was_polished():
    e = Explorer(n=200, seed=3, temperature=0.0, budget_unit="per_landmark", budget=100_000,
                 landmark_selection="maxmin")
    try:
        assert e.state.wait(120)
        assert e.state.error == "" and e.state.model.stages_.refine is not None
        assert e.state.metrics["procrustes"] < 0.01  # the paper's pipeline alone: ~0.05 here
        k = STEPS.index("Embedding")
        e.state.step = k
        view = e._views[k]
        view.refresh(force=True)
        assert "ordinal polish" in view._note.object
    finally:
        e.close()


def _live_sources(doc):
    """The data sources drawn by the glyphs in ``doc``, by their columns."""
    from bokeh.models import GlyphRenderer

    return {tuple(sorted(m.data_source.data)): m.data_source for m in doc.models if isinstance(m, GlyphRenderer)}


def test_live_embedding_patches_the_rendered_plots_in_place():
    """New results replace the data and ranges of the plots on the page without building a bokeh
    model; a page rendered afterwards shows the newest results too (HoloViews' memo is not stale)."""
    from bokeh.document import Document
    from panel.io.state import set_curdoc

    from loe_viz.app import plots

    rng = np.random.default_rng(0)
    n = 300
    hl = np.column_stack([rng.random(n), np.full(n, 0.5)])
    X1, X2 = rng.normal(size=(n, 2)), 3.0 * rng.normal(size=(n, 2)) + 10.0
    Z2 = X2 - 0.2
    err2 = rng.random(n)
    live = plots.LiveEmbedding()
    live.update(X1, X1 + 0.1, hl, rng.random(n), [1, 5, 7, 9, 11])

    pages = []  # the layouts stay alive, as the explorer's views keep theirs

    def render():
        doc = Document()
        with set_curdoc(doc):
            pages.append(pn.Column(*(pn.pane.HoloViews(o) for o in (live.left, live.right, live.overlay))))
            doc.add_root(pages[-1].get_root(doc))
        return doc

    def check(doc):
        src = _live_sources(doc)
        pts = src[tuple(sorted(plots.LiveEmbedding.ROLES["points"]))]
        order = np.argsort(np.asarray(pts.data["item"]))
        np.testing.assert_allclose(np.asarray(pts.data["ex"])[order], Z2[:, 0], rtol=1e-6)
        np.testing.assert_allclose(np.asarray(pts.data["y"])[order], X2[:, 1], rtol=1e-6)
        np.testing.assert_allclose(np.asarray(pts.data["error"])[order], err2, rtol=1e-6)
        stars = src[tuple(sorted(plots.LiveEmbedding.ROLES["stars"]))]
        assert sorted(stars.data["item"]) == [0, 2, 4, 6, 8, 10]
        lim = plots.square(X2, Z2)
        ranges = {(r.start, r.end) for r in doc.models if type(r).__name__ == "Range1d"}
        assert tuple(lim["xlim"]) in {tuple(np.round(x, 9)) for x in ranges} or any(
            np.allclose(x, lim["xlim"]) for x in ranges), (ranges, lim["xlim"])

    def axis_labels(doc):
        return {(ax.axis_label,) for ax in doc.models if type(ax).__name__ == "LinearAxis"}

    doc = render()
    assert axis_labels(doc) == {("x₁",), ("x₂",)}
    ids = {m.id for m in doc.models}
    with set_curdoc(doc):  # 3-D points: their principal plane is drawn, and the axes say so
        live.update(X2, Z2, hl, err2, [0, 2, 4, 6, 8, 10], seed=1, axes=("principal axis 1 of 3",
                                                                          "principal axis 2 of 3"))
    assert {m.id for m in doc.models} == ids  # patched, not rebuilt
    check(doc)
    later = render()  # a page opened later
    check(later)
    for page in (doc, later):
        assert axis_labels(page) == {("principal axis 1 of 3",), ("principal axis 2 of 3",)}, axis_labels(page)


def test_tick_decimals_cover_the_ticks_of_a_range():
    from loe_viz.app.plots import tick_decimals

    assert [tick_decimals(-r, r) for r in (3.5, 0.4, 40.0, 0.004, 500.0)] == [1, 2, 0, 4, 0]
    assert tick_decimals(0.0, 0.0) == 1 and tick_decimals(0.0, float("nan")) == 1
    # bokeh's ticks over a span s are 1, 2 or 5 x 10^k, at least about s / 6 apart
    for span in (0.013, 0.7, 1.0, 6.5, 9.99, 42.0):
        smallest = min(m * 10.0**k for m in (1, 2, 5) for k in range(-5, 5) if m * 10.0**k >= span / 6 / 1.5)
        assert round(smallest, tick_decimals(0.0, span)) == pytest.approx(smallest), span


def test_live_embedding_tick_labels_keep_their_width_across_results_of_one_scale(monkeypatch):
    """A new result of the same scale changes no axis: bokeh lays a plot out again whenever an
    axis's labels change width (~0.1 s of the page's time per seed change at n = 2000)."""
    import contextlib

    import panel.io
    from bokeh.document import Document
    from bokeh.models import Axis, CustomJSTickFormatter
    from panel.io.state import set_curdoc

    from loe_viz.app import plots

    rng = np.random.default_rng(0)
    n = 300
    hl = np.column_stack([rng.random(n), np.full(n, 0.5)])
    live = plots.LiveEmbedding()
    X = rng.normal(size=(n, 2))
    live.update(X, X + 0.1, hl, None, [1, 5, 7, 9, 11])
    doc = Document()
    with set_curdoc(doc):
        page = pn.Column(*(pn.pane.HoloViews(o) for o in (live.left, live.right, live.overlay)))
        doc.add_root(page.get_root(doc))

    def formatters():
        return [a.formatter for a in doc.models if isinstance(a, Axis)]

    assert len(formatters()) == 6
    assert all(isinstance(f, CustomJSTickFormatter) and f.args == {"base": 1} for f in formatters())
    events = []
    doc.on_change(events.append)
    monkeypatch.setattr(panel.io, "hold", lambda doc=None, **kw: contextlib.nullcontext())  # every event reaches on_change
    with set_curdoc(doc):
        for seed in (1, 2):
            Y = np.random.default_rng(seed).normal(size=(n, 2))
            live.update(Y, Y - 0.1, hl, None, [0, 2, 4, 6, 8], seed=seed)
    changed = {type(getattr(e, "model", None)).__name__ for e in events}
    assert events and not changed & {"CustomJSTickFormatter", "LinearAxis"}, changed
    with set_curdoc(doc):
        live.update(100 * X, 100 * X + 5, hl, None, [1, 5, 7, 9, 11], seed=3)
    assert all(f.args == {"base": 0} for f in formatters())  # a span of hundreds: integers


def test_the_served_template_has_no_busy_indicator_of_its_own():
    """Panel's header indicator spun for every event the server handled: two more messages and
    a layout of the page at the start of each fit. The sidebar's spinner says when a run goes on."""
    e = Explorer(n=100)
    try:
        t = e.servable_template()
        assert t.busy_indicator is None
        assert isinstance(e.spinner, pn.indicators.LoadingSpinner)
    finally:
        e.close()


def test_no_deprecated_panel_spelling():
    """Every widget uses Panel 1.9's names (label=, color=, variant=), so building warns of nothing."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", PendingDeprecationWarning)
        warnings.simplefilter("error", DeprecationWarning)
        e = Explorer(n=60, seed=1)
        try:
            # the first fit runs on a worker thread: rendering while its result lands raced the
            # views' refresh (a flaky AttributeError inside holoviews under load)
            assert e.state.wait(120)
            for k, view in enumerate(e._views):
                e.state.step = k
                view.refresh(force=True)
                pn.panel(view).get_root()
        finally:
            e.close()


def _opened_by(monkeypatch, search: str):
    """The session's location as a page opened on the link ``search`` has it (returned)."""
    from panel.io.location import Location

    where = Location(search=search)
    monkeypatch.setattr(type(pn.state), "location", property(lambda self: where))
    return where


@pytest.fixture
def first_run():
    """An explorer (n = 60) whose first run has ended, closed afterwards (a lesson's sweep cancelled)."""
    e = Explorer(n=60)
    try:
        assert e.state.wait(120)
        yield e
    finally:
        e._lessons.sweep.cancel()
        e.close()


def _open_link(monkeypatch, e, search: str):
    """(the lesson opened, the location) of the explorer ``e`` opened on the link ``search``."""
    where = _opened_by(monkeypatch, search)
    return e._open_lesson_from_url(), where


def test_an_unknown_lesson_in_the_link_is_said_beside_the_first_result(monkeypatch, first_run):
    """?lesson=landmark (a typo) opened the walk-through without a word: the first result cleared the error."""
    from loe_viz.app.lessons import lesson_keys

    e = first_run
    _, where = _open_link(monkeypatch, e, "?n=60&lesson=<img src=x onerror=alert(1)>")
    assert where.search == "?n=60"  # out of the address: a copied link repeated the error
    want = ("Ignored lesson='<img src=x onerror=alert(1)>' in the link: no such lesson (the lessons are "
            f"{', '.join(lesson_keys())})")
    assert e.state.error == want and e.state._link_problem == want  # kept through the first run
    assert e.modes.active == 0
    e.state.run()  # the first result shows it; a problem of the link reported after that is added to it
    assert e.state.wait(120) and e.state.error == want
    e.state.report_link_problem("Ignored settings in the link that do not parse: n='x'")
    assert e.state.error == want + " Ignored settings in the link that do not parse: n='x'"
    e.state.report_link_problem("Ignored settings in the link that do not parse: n='x'")  # the link again
    assert e.state.error == want + " Ignored settings in the link that do not parse: n='x'"


def test_a_lesson_s_link_names_its_ignored_settings_on_the_lessons_tab_too(monkeypatch, first_run):
    """?lesson=noise&n=abc opened the Lessons tab, and only the walk-through's tab said that n=abc was ignored."""
    e = first_run
    x, _ = _open_link(monkeypatch, e, "?lesson=noise")  # the lesson's preset first, then the link's settings on top
    e.state.from_query({"n": "<b>abc</b>"})
    e._say_link_on_lessons(x, "?lesson=noise&n=%3Cb%3Eabc%3C/b%3E")
    note = e._lessons._link_note
    assert e.modes.active == 2 and note.visible
    assert note.object.startswith("Ignored settings in the link that do not parse")
    assert "<b>" not in note.object and "&lt;b&gt;abc" in note.object  # escaped, as on the walk-through
    e.state.wait(120)
    e._lessons.open("budget")  # another lesson, picked on the page: the note spoke of the link's
    assert not note.visible


def test_a_sweep_lesson_s_link_says_its_settings_set_the_walk_through_only(monkeypatch, first_run):
    """?lesson=budget&n=300 ran the walk-through at n = 300 and the sweep at its own n = 500, without a word."""
    e = first_run
    link = "?lesson=budget&n=300&temperature=2&step=sample"
    x, _ = _open_link(monkeypatch, e, link)
    e._lessons.sweep.cancel()
    e._say_link_on_lessons(x, link)
    note = e._lessons._link_note
    assert note.visible
    assert note.object == md_quoting("This lesson runs a sweep with its own settings (shown with the sweep "
                                     "below): the link's n, temperature set the walk-through only.")
    x = e._lessons.open("noise")  # a lesson of the walk-through: the link's settings are its own
    e._say_link_on_lessons(x, link)
    assert not note.visible


def test_a_lesson_opened_by_a_click_puts_its_question_above_the_walk_through():
    """Only a lesson opened from the address did; one clicked after it left the first lesson's question there."""
    from loe_viz.app.lessons import lesson

    e = Explorer(n=60)
    try:
        assert e.state.wait(120)
        assert not e._lesson_banner.visible
        e._lessons.open("landmarks")  # as the lesson's button does
        assert e._lesson_banner.visible and lesson("landmarks").question in e._lesson_banner.object
        e._lessons.open("noise")
        assert lesson("noise").question in e._lesson_banner.object
        assert lesson("landmarks").question not in e._lesson_banner.object
        e.state.wait(120)
    finally:
        e.close()


def test_run_all_opens_the_embedding_unless_a_step_was_picked_while_it_ran(monkeypatch):
    import time

    import loe_viz.loe as loe_module

    rank = loe_module.rank_oracle

    def slow(*args, **kwargs):  # each landmark waits 0.1 s: the run is surely going when a step is picked
        time.sleep(0.1)
        return rank(*args, **kwargs)

    e = Explorer(n=200, seed=3)
    try:
        assert e.state.wait(120)
        monkeypatch.setattr(loe_module, "rank_oracle", slow)
        e.state.step = STEPS.index("Sample")
        e.run_all()
        assert e.state.wait(120) and e.state.error == ""
        assert e.state.step == STEPS.index("Embedding") and e.tabs.active == STEPS.index("Embedding")
        e.state.step = STEPS.index("Sample")
        e.run_all()
        e.state.step = STEPS.index("Ranking")  # picked while the run goes on: the student's choice stays
        assert e.state.busy
        assert e.state.wait(120) and e.state.error == ""
        assert e.state.step == STEPS.index("Ranking") and e.tabs.active == STEPS.index("Ranking")
        assert e._run_all_from is None
    finally:
        e.close()


def test_the_ellipses_are_drawn_under_their_checkbox_above_the_other_plots(explorer):
    # appended after the long overlay plot they came about 1000 px below the checkbox, and ticking it
    # seemed to do nothing; their caption named the code's LOE.uncertainty_
    k = STEPS.index("Embedding")
    explorer.state.step = k
    view = explorer._views[k]
    view.refresh(force=True)
    try:
        view._ellipses.value = True
        body = list(view._body.objects)
        at = next(i for i, o in enumerate(body) if o is view._ellipses)
        box = body[at + 1]
        panes = [o for o in box.objects if isinstance(o, pn.pane.HoloViews)]
        assert [p.name for p in panes] == ["embedding_ellipses"]
        assert not any(isinstance(o, pn.pane.HoloViews) for o in body[:at + 1])  # nothing to scroll past
        caption = " ".join(str(o.object) for o in box.objects if isinstance(o, pn.pane.Markdown))
        assert "90 % ellipse" in caption and "uncertainty_" not in caption and "`" not in caption
        view._ellipses.value = False
        assert box.objects == []
    finally:
        view._ellipses.value = False


def test_the_walk_through_quotes_the_fit_time_that_compare_quotes(explorer):
    # the status line and "Fit time" said 0.044 s (drawing the comparisons and fitting them) for the fit
    # that the Compare table quoted at 0.0259 s (the fit alone)
    from loe_viz._format import format_seconds

    s = explorer.state
    tl = s.model.stages_.timings
    fit = tl["total"] - tl["sampling"]
    assert s.metrics["loe_seconds"] == pytest.approx(fit) and s.metrics["fit_seconds"] > fit
    assert f"in {format_seconds(fit)} ({format_seconds(s.metrics['fit_seconds'])} with drawing them" in s.status
    k = STEPS.index("Embedding")
    s.step = k
    view = explorer._views[k]
    view.refresh(force=True)
    shown = {n.name: n.value for n in view._numbers}
    assert shown["Fit time"] == float(f"{fit:.3g}")
    assert "without drawing them" in view._counts.object


def test_uploaded_is_offered_once_there_is_an_upload():
    # "uploaded" in the Ground truth list only produced an error while nothing was uploaded
    e = Explorer(n=100, seed=1)
    try:
        assert e.state.wait(120)
        assert "uploaded" not in e.w_kind.options and "gaussian" in e.w_kind.options
        assert e.state.load_file(b"x,y\n" + b"\n".join(f"{i % 7},{i % 11}".encode() for i in range(60)), "pts.csv")
        assert e.state.wait(120)
        assert e.w_kind.options[-1] == "uploaded" and e.w_kind.value == "uploaded"
        e.w_kind.value = "gaussian"  # the upload stays on offer
        assert e.state.kind == "gaussian" and "uploaded" in e.w_kind.options
    finally:
        e.close()


def test_the_points_box_empties_for_a_refused_file_and_removing_a_taken_file_brings_back_the_truth():
    """A refused file stayed on the box's green "Upload complete" band beside "Upload rejected"; removing
    a taken one (the box's ×) emptied the box only: "uploaded" and n = 200 stayed."""
    import io
    from pathlib import Path

    from serverlab import drop_file, remove_file

    huge = io.BytesIO()  # a .npy header declaring 2.4 TB, and 64 bytes
    np.lib.format.write_array_header_1_0(huge, {"descr": "<f8", "fortran_order": False, "shape": (10**11, 3)})
    pn.extension("filedropper")  # the upload box is then the served one (FileDropper)
    e = Explorer(n=300, seed=4, temperature=0.5)
    try:
        s, box = e.state, e.w_upload
        assert s.wait(120) and isinstance(box, pn.widgets.FileDropper)
        drop_file(box, "huge.npy", huge.getvalue() + bytes(64), mime="application/octet-stream")
        assert s.wait(120) and s.error.startswith("Upload rejected: huge.npy") and e.alert.visible
        assert box.clears == 1 and s.kind == "gaussian"
        sample = Path(__file__).resolve().parents[2] / "sample_data" / "gaussian_2d_points.csv"
        drop_file(box, "gaussian_2d_points.csv", sample.read_bytes())
        assert s.wait(120) and s.kind == "uploaded" and s.metrics["n"] == 200 and box.clears == 1
        remove_file(box, "gaussian_2d_points.csv")
        assert s.wait(120) and s.error == ""
        assert (s.kind, s.n, s.d, s.seed, s.temperature) == ("gaussian", 300, 2, 4, 0.5)
        assert s.metrics["n"] == 300 and s.config_used["kind"] == "gaussian"
        assert e.w_kind.value == "gaussian" and "uploaded" not in e.w_kind.options
    finally:
        e.close()


def test_a_refused_file_put_in_place_of_a_taken_one_leaves_that_upload_in_use():
    """Dropping a malformed file on the points box in place of a taken one said "Upload rejected" and, at
    the same time, brought back the gaussian ground truth with n = 1,000: the box had reported the
    previous file removed before the new one arrived, and its upload was undone at once."""
    from panel.models.file_dropper import DeleteEvent

    from serverlab import drop_file, remove_file

    good = b"x,y\n" + b"\n".join(f"{i % 7},{i % 11}".encode() for i in range(60))
    pn.extension("filedropper")  # the upload box is then the served one (FileDropper)
    e = Explorer(n=1000, seed=4)
    try:
        s, box = e.state, e.w_upload
        assert s.wait(120)
        drop_file(box, "good.csv", good)
        assert s.wait(120) and (s.kind, s.metrics["n"]) == ("uploaded", 60)
        # another file in its place: the box reports the taken one removed, then sends the new one
        box._process_event(DeleteEvent(model=None, data={"name": "good.csv"}))
        assert s.wait(120) and s.kind == "uploaded"  # nothing undone yet: the replacement may be refused
        drop_file(box, "bad.csv", b"x,y\n1,2\n3\n")
        assert s.wait(120)
        assert s.error == "Upload rejected: bad.csv: line 3 has 1 columns, expected 2; the previous upload stays"
        assert (s.kind, s.n, s.metrics["n"], s.uploaded_name) == ("uploaded", 60, 60, "good.csv")
        assert e.w_kind.value == "uploaded" and "uploaded" in e.w_kind.options and box.clears == 1
        # a replacement that is taken needs no undo; removing it then (×) brings back the ground truth before
        drop_file(box, "good.csv", good)
        assert s.wait(120) and s.kind == "uploaded" and s.error == ""
        box._process_event(DeleteEvent(model=None, data={"name": "good.csv"}))
        drop_file(box, "other.csv", good.replace(b"x,y", b"u,v"))
        assert s.wait(120) and (s.kind, s.uploaded_name, s.error) == ("uploaded", "other.csv", "")
        remove_file(box, "other.csv")
        assert s.wait(120) and (s.kind, s.n, s.metrics["n"]) == ("gaussian", 1000, 1000)
        assert "uploaded" not in e.w_kind.options and s.error == ""
    finally:
        e.close()


def test_3d_points_are_embedded_in_3_d_and_their_plot_says_so_in_words_that_fit():
    """3-D points kept the sidebar's d = 2 (Procrustes error 0.339, no hint), and the plot's title
    "Ground truth: gaussian…ipal axes of 3-D data)" was cut in its middle at 1280 px."""
    from pathlib import Path

    from loe_viz.app import plots
    from loe_viz.app.views.configure import ConfigureView

    e = Explorer(n=300, seed=0)
    try:
        s = e.state
        assert s.wait(120)
        sample = Path(__file__).resolve().parents[2] / "sample_data" / "gaussian_3d_points.csv"
        assert s.load_file(sample.read_bytes(), "gaussian_3d_points.csv") and s.wait(120)
        assert s.d == 3 and e.w_d.value == 3 and s.metrics["d"] == 3 and s.metrics["procrustes"] < 0.2
        view = ConfigureView(state=s)
        summary, pane = view._render()
        title = pane.object.opts.get().kwargs["title"]
        assert title == "Ground truth: gaussian_3d_points.csv, n = 100", title
        assert plots.fit_title(title, plots.SQUARE + 75) == title  # whole at the plot's width
        assert pane.object.kdims[0].label == "principal axis 1 of 3"
        assert "set" not in summary.object
        s.d = 2  # lower than the data's: the summary says so, and what to set
        assert s.wait(120)
        summary, _ = view._render()
        assert "The points are **3-D**: set *Dimension d* to **3** in the sidebar" in summary.object
    finally:
        e.close()


def test_a_points_file_name_writes_no_row_into_the_download_and_reverses_no_sentence():
    """The points upload kept its name as sent: a line break in it started a row of the embedding CSV
    (the name is in its comment line), and a right-to-left override reversed the text after it."""
    e = Explorer(n=100, seed=1)
    try:
        assert e.state.wait(120)
        rows = b"x,y\n" + b"\n".join(f"{i % 7},{i % 11}".encode() for i in range(60))
        name = "mine\u202egnp.csv\n9,9,9"
        assert e.state.load_file(rows, name)
        assert e.state.wait(120) and e.state.error == ""
        assert e.state.uploaded_name == "minegnp.csv\ufffd9,9,9"
        lines = e._embedding_csv().read().splitlines()
        assert lines[0].startswith("item,landmark,y1,y2") and len(lines) == 1 + 60
        seed = e.state.config_used["seed"]  # no line break, no bidi override in the name
        assert e.dl_csv.filename == f"loe_embedding_minegnp_n60_d2_seed{seed}_T1_c100_l5random_lambda2.csv"
        e.state.step = STEPS.index("Embedding")
        e._views[e.state.step].refresh(force=True)
        html = e._plots_html().read()  # the run's sentence quotes the file's name: isolated, no override
        assert "uploaded points" in html and "minegnp" in html and "\u202e" not in html
        e.state.d = 5  # more than its 2 columns: the message quotes the name, isolated
        assert e.state.wait(120) and e.state.error.startswith("d must be <= 2, the columns of minegnp.csv")
        assert "\u2068minegnp\\.csv\ufffd9,9,9\u2069" in e.alert.object and "\u202e" not in e.alert.object
        # a rejected upload's name too
        assert e.state.load_file(b"", "x\u202e.csv") is False
        assert e.state.error == "Upload rejected: x.csv: the file is empty", e.state.error
    finally:
        e.close()


def test_the_budget_unit_buttons_have_a_caption(explorer):
    objs = list(explorer.sidebar.objects)
    at = objs.index(explorer.w_unit)
    assert objs[at - 1] is explorer.w_unit_caption and "Budget unit" in explorer.w_unit_caption.object


def test_tick_labels_write_negative_numbers_with_a_minus_sign():
    # the Embedding step's axes said "-1.0" beside bokeh's "−1.5" on every other plot
    import json
    import shutil
    import subprocess

    from loe_viz.app.plots import _TICK_JS

    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        pytest.skip("no node to run the tick formatter")
    code = (f"const f = (tick, ticks, base) => {{ {_TICK_JS} }};\n"
            "console.log(JSON.stringify([f(-1, [-1, -0.5], 1), f(-0.5, [-1, -0.5], 1), f(1.5, [1, 1.5], 1), "
            "f(0, [0, 0.5], 1)]));")
    out = subprocess.run([node, "-e", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == ["−1.0", "−0.5", "1.5", "0.0"]


def _step_heatmaps(explorer, step):
    """The bokeh figures of the heatmaps a step draws."""
    import holoviews as hv

    k = STEPS.index(step)
    explorer.state.step = k
    view = explorer._views[k]
    view.refresh(force=True)
    maps = [p.object for p in view._body.select(pn.pane.HoloViews) if isinstance(p.object, hv.HeatMap)]
    return [hv.render(m) for m in maps]


@pytest.mark.parametrize("step, count", [("Shifts", 3), ("EDM", 2)])
def test_the_landmark_heatmaps_name_their_rows_and_columns_l0_to_l4(explorer, step, count):
    # their axes said 0 … 4, which a student reads as item numbers (the landmarks are items 269, 307, ...);
    # every other view names them L0 … L4
    from bokeh.models import HoverTool

    l = explorer.state.metrics["n_landmarks"]
    figs = _step_heatmaps(explorer, step)
    assert len(figs) == count
    for fig in figs:
        for axis in (fig.xaxis[0], fig.yaxis[0]):
            ticks = list(axis.ticker.ticks)
            assert ticks == list(range(l)), ticks
            assert axis.major_label_overrides == {c: f"L{c}" for c in ticks}, axis.major_label_overrides
        tips = [dict(t.tooltips) for t in fig.select(HoverTool)]
        assert tips and tips[0]["row"] == "L@{row}" and tips[0]["column"] == "L@{column}", tips


def test_landmark_heatmap_labels_thin_out_for_their_wider_labels():
    # "L10" is a character wider than "10": the columns keep every landmark only while "L…" has room
    import holoviews as hv

    from loe_viz.app import plots

    for width in (plots.HEATMAP_WIDTH, plots.HALF_WIDTH):
        for l in (5, 8, 12, 30, 60):
            fig = hv.render(plots.heatmap(np.ones((l, l)), "W", width=width))
            xs = list(fig.xaxis[0].ticker.ticks)
            step = xs[1] - xs[0] if len(xs) > 1 else l
            cell = (width - plots._HEATMAP_INSET[0]) / l
            room = plots.text_width_px(f"L{l - 1}", plots.TICK_FONT_PX) + plots._TICK_GAP[0]
            fewer = {2: 1, 5: 2, 10: 5, 20: 10}
            assert step * cell >= room and (step == 1 or fewer[step] * cell < room), (width, l, step)
            assert fig.xaxis[0].major_label_overrides == {c: f"L{c}" for c in xs}
            assert all(v.startswith("L") for v in fig.yaxis[0].major_label_overrides.values())


def test_the_ranking_step_says_when_one_newton_step_was_enough(explorer):
    # with the defaults every landmark took one Newton step: five straight lines from 0 to 1, unexplained
    from types import SimpleNamespace

    from loe_viz.app.views.ranking import _convergence_note

    one = [SimpleNamespace(grad_history=np.array([100.0, 2.0]), converged=True) for _ in range(5)]
    assert "One Newton step reached the tolerance for every landmark (all 5)" in _convergence_note(one).object
    more = one[:3] + [SimpleNamespace(grad_history=np.array([100.0, 9.0, 2.0]), converged=True)]
    text = _convergence_note(more).object
    assert "One Newton step" not in text and "from 1 to 2 Newton steps" in text, text
    # in the step itself, above the plot it explains
    k = STEPS.index("Ranking")
    explorer.state.step = k
    view = explorer._views[k]
    view.refresh(force=True)
    objs = list(view._body.objects)
    notes = [o for o in objs if "loe-convergence-note" in o.css_classes]
    assert len(notes) == 1
    cols = explorer.state.model.stages_.ranking.columns
    assert notes[0].object == _convergence_note(cols).object
    assert isinstance(objs[objs.index(notes[0]) + 1], pn.pane.HoloViews)



def test_the_sidebar_button_groups_fill_the_chosen_option_as_compare_does(explorer):
    # the chosen option was marked by a faint inset shadow only, invisible on a projector
    protocol = explorer._views[STEPS.index("Compare")]._protocol
    assert (protocol.color, protocol.variant) == ("primary", "outline")
    for group in (explorer.w_unit, explorer.w_sel):
        assert (group.color, group.variant) == (protocol.color, protocol.variant), group
    # and the landmark selection has its caption, as the budget unit has
    objs = list(explorer.sidebar.objects)
    at = objs.index(explorer.w_sel)
    assert objs[at - 1] is explorer.w_sel_caption and "Landmark selection" in explorer.w_sel_caption.object


def test_n_or_d_typed_beyond_what_the_explorer_runs_is_named_and_set_back():
    # the n box took 300,000 (MAX_N is 200,000) and kept showing it beside the refusal
    from loe_viz.app import limits
    from loe_viz.app.explorer import Explorer
    from loe_viz.app.state import ExplorerState

    s = ExplorerState(n=400, auto_update=False)
    e = Explorer(state=s, sync_url=False)
    try:
        for w, name, bad, why in ((e.w_n, "n", limits.MAX_N + 1, f"must be at most {limits.MAX_N:,}"),
                                  (e.w_n, "n", 3, "must be at least ℓ + 2 = 7, for ℓ = 5 landmarks"),
                                  (e.w_d, "d", limits.MAX_D + 5, f"must be between 1 and {limits.MAX_D}"),
                                  (e.w_d, "d", 0, f"must be between 1 and {limits.MAX_D}"),
                                  (e.w_n, "n", None, "the box was empty")):
            kept = getattr(s, name)
            s.error = ""
            w._value_edit._process_events({"value": bad})  # what Panel does with the page's message
            assert getattr(s, name) == kept and w.value == kept and w._value_edit.value == kept, (name, bad)
            assert why in s.error and f"it stays {kept:,}" in s.error, s.error
            assert s.error.startswith("Items n" if name == "n" else "Dimension d"), s.error
        # a value beyond the slider's end that the explorer runs with is taken
        e.w_n._value_edit._process_events({"value": 6000})
        e.w_d._value_edit._process_events({"value": 12})
        assert (s.n, s.d, e.w_n.value, e.w_d.value) == (6000, 12, 6000, 12)
        # and the line under each slider says what it covers and what the box takes
        assert e.w_n_hint.object == f"drag 20–5,000; type up to {limits.MAX_N:,}"
        assert e.w_d_hint.object == f"drag 1–10; type up to {limits.MAX_D}"
        objs = list(e.sidebar.objects)
        assert objs.index(e.w_n_hint) == objs.index(e.w_n) + 1 and objs.index(e.w_d_hint) == objs.index(e.w_d) + 1
    finally:
        e.close()


def test_the_status_line_and_the_landmarks_box_write_the_papers_ell(explorer):
    # "l = 5" in the sidebar's sans-serif font, projected in a lecture hall, read as "I = 5"
    s = explorer.state
    l = s.metrics["n_landmarks"]
    status, hint = explorer.status.object, explorer.l_hint.object
    assert f"d = {s.d}, ℓ = {l}, " in status and " l = " not in status, status
    assert hint == f"ℓ = {l} (at least d + 3 = {s.d + 3})", hint
    assert explorer.w_l.label == "Landmarks ℓ"


@pytest.fixture
def small_run():
    """An explorer of its own, its first run (n = 300) done, that runs on every change from then on."""
    from loe_viz.app.explorer import Explorer
    from loe_viz.app.state import ExplorerState

    s = ExplorerState(n=300, auto_update=False)
    e = Explorer(state=s, sync_url=False)
    try:
        s.run()
        assert s.wait(120) and s.error == ""
        s.auto_update = True
        yield s, e
    finally:
        e.close()


def test_a_refused_seed_or_temperature_is_named_and_set_back_so_later_changes_still_run(small_run):
    """A temperature of -1 (or a seed of -5) stayed in the box and in the state: every later run, of n or the
    seed, was refused with "temperature must be >= 0.0, got -1.0", the header kept the n = 1,000 results, and
    the address named settings never computed. They are now refused as n and d are."""
    s, e = small_run
    e.w_temp._value_edit._process_events({"value": -1.0})  # what Panel does with the page's message
    assert s.temperature == 1.0 and e.w_temp.value == 1.0
    assert s.error == "Noise temperature T must be a number of 0 or more (got -1.0); it stays 1.0.", s.error
    e.w_seed._process_events({"value": -5})
    assert s.seed == 0 and e.w_seed.value == 0
    assert s.error == "Seed must be a whole number from 0 to 4,294,967,295 (got -5); it stays 0.", s.error
    # 26 digits come as a float: quoted as about 1e+26, not as the float's 100,000,000,000,000,004,764,729,344
    e.w_seed._process_events({"value": 1e26})
    assert s.error == "Seed must be a whole number from 0 to 4,294,967,295 (got about 1e+26); it stays 0.", s.error
    e.w_n._value_edit._process_events({"value": 500})
    e.w_seed._process_events({"value": 3})
    assert s.wait(120) and s.error == "", s.error
    assert (s.metrics["n"], s.config_used["seed"], s.config_used["temperature"]) == (500, 3, 1.0)


def test_refused_landmarks_are_named_and_the_box_set_back_as_the_other_settings_are(small_run):
    """ℓ = 2 typed in the Landmarks box stayed there and in the settings beside the run's refusal (every later
    run was refused too), where n, d, the seed and the temperature are set back with "it stays …"."""
    s, e = small_run
    e.w_l._process_events({"value": 2})  # what Panel does with the page's message
    assert s.n_landmarks is None and e.w_l.value is None
    assert s.error == "Landmarks ℓ must be at least d + 3 = 5 and at most n - 2 = 298 (got 2); it stays auto " \
                      "(d + 3 = 5).", s.error
    e.w_l._process_events({"value": 7})
    assert s.wait(120) and s.error == "" and s.config_used["n_landmarks"] == 7
    e.w_l._process_events({"value": 299})
    assert s.n_landmarks == 7 and e.w_l.value == 7
    assert s.error == "Landmarks ℓ must be at least d + 3 = 5 and at most n - 2 = 298 (got 299); it stays 7.", \
        s.error
    e.w_l._process_events({"value": 2.5})
    assert s.n_landmarks == 7 and e.w_l.value == 7
    assert s.error == "Landmarks ℓ must be a whole number (got 2.5); it stays 7.", s.error
    e.w_l._process_events({"value": None})  # an emptied box: auto, d + 3
    e.w_n._value_edit._process_events({"value": 400})
    assert s.wait(120) and s.error == "", s.error
    assert (s.n_landmarks, s.metrics["n"], s.config_used["n_landmarks"]) == (None, 400, 5)


def test_a_refused_budget_is_named_and_set_back_so_later_changes_still_run(small_run):
    """A budget of -1 (or 0, or one below its range) stayed in the box, in the state and in the link: every later
    run, of n, the seed or T, was refused with the budget's range while the old results stayed on screen. It is
    now refused and set back, as n, d, ℓ, the seed and T are, with the range where there is one."""
    from loe_viz.app.pipeline import budget_range

    s, e = small_run
    kept = s.budget
    lo, hi = budget_range(300, 2, 2, 5, "total_c", n_jobs=s.n_jobs)
    within = f"must be between {lo:,.6g} and {hi:,.6g} c for n = 300 and ℓ = 5"
    for typed, why in ((-1.0, f"{within} (got -1)"), (0.0, f"{within} (got 0)"),
                       (None, "needs a value (the box was empty)")):
        e.w_budget._process_events({"value": typed})  # what Panel does with the page's message
        assert s.budget == kept and e.w_budget.value == kept
        assert s.error == f"Budget {why}; it stays {kept:,.6g}.", s.error
    e.w_budget._process_events({"value": 1e-6})
    assert s.budget == kept and e.w_budget.value == kept
    assert s.error == f"Budget {within} (got 1e-06); it stays {kept:,.6g}.", s.error
    e.w_seed._process_events({"value": 3})
    assert s.wait(120) and s.error == "", s.error
    assert (s.config_used["seed"], s.config_used["budget"]) == (3, kept)
    e.w_budget._process_events({"value": 50.0})
    assert s.wait(120) and s.error == "" and s.config_used["budget"] == 50.0


def test_a_budget_an_uploads_run_refuses_is_refused_in_the_box_with_the_uploads_range():
    """With uploaded points the box took any budget above 0, which the run then refused: it stayed in the box and
    blocked every later run, as it did for the generated points."""
    from loe_viz.app.explorer import Explorer
    from loe_viz.app.pipeline import budget_range
    from loe_viz.app.state import ExplorerState

    s = ExplorerState(auto_update=False)
    e = Explorer(state=s, sync_url=False)
    try:
        X = np.random.default_rng(5).normal(size=(400, 3))
        assert s.load_file("\n".join(",".join(f"{v:.4f}" for v in row) for row in X).encode(), "pts.csv"), s.error
        assert s.wait(120) and (s.kind, s.n, s.d) == ("uploaded", 400, 3)
        lo, hi = budget_range(400, 3, 3, 6, "total_c", n_jobs=s.n_jobs)
        e.w_budget._process_events({"value": 1e-6})
        assert s.budget == 100.0 and e.w_budget.value == 100.0
        assert s.error == (f"Budget must be between {lo:,.6g} and {hi:,.6g} c for n = 400 and ℓ = 6 (got 1e-06); "
                           "it stays 100."), s.error
    finally:
        e.close()


def test_your_triplets_is_built_when_first_shown_and_a_page_that_never_shows_it_closes_cleanly():
    """A page's build held the server's event loop for 0.38 s, 0.06 s of it the "Your triplets" view, which most
    pages of a lecture never open: a class opening the page at once waited for every page's. It is built when its
    tab is first shown, as readable as the rest."""
    from loe_viz.app.explorer import MODES
    from loe_viz.app.views.base import WIDGET_FONT
    from loe_viz.app.views.triplets import TripletsView

    e = Explorer(n=300, seed=2)
    try:
        assert e.state.wait(120) and e._triplets_view is None
        assert not e.modes.objects[MODES.index("Your triplets")].objects  # an empty tab until shown
        e.cancel()  # nothing to cancel there, nothing built for it
        assert e._triplets_view is None
        e.modes.active = MODES.index("Your triplets")
        view = e._triplets_view
        assert isinstance(view, TripletsView) and e.modes.objects[MODES.index("Your triplets")] is view.__panel__()
        widgets = view.__panel__().select(pn.widgets.Widget)
        assert widgets and all(WIDGET_FONT in w.stylesheets for w in widgets)
        assert e._triplets is view  # built once
    finally:
        e.close()
    closed = Explorer(n=300, seed=2)
    assert closed.state.wait(120)
    closed.close()  # never shown: closes without building it
    assert closed._triplets_view is None


def test_the_lesson_banner_ends_a_title_once():
    """"Lesson: Noise temperature: how much do noisy answers hurt?." ended a question with a full stop."""
    from loe_viz.app.lessons import LESSONS

    e = Explorer(n=60)
    try:
        for x in LESSONS:
            e.open_lesson(x.key)
            head = e._lesson_banner.object.split("**")[1]
            assert head == f"Lesson: {x.title}" + ("" if x.title.endswith("?") else "."), head
    finally:
        e.close()


def test_compare_s_time_limit_box_says_why_it_refuses_a_value(explorer):
    """-1, 0.001, 700 or 1e400 in "Time limit per method (s)" snapped back to 30 without a word (a bounded box)."""
    from loe_viz.app.views.compare import CompareView

    view = next(v for v in explorer._views if isinstance(v, CompareView))
    c, box = view.compare, view._limit
    for bad, got in ((-1.0, "got -1"), (700.0, "got 700"), (float("inf"), "got inf"), (None, "the box was empty")):
        box._process_events({"value": bad})
        assert c.message == f"Time limit per method must be from 1 to 600 s ({got}); it stays 30 s.", c.message
        assert c.max_seconds == 30.0 and box.value == 30.0
        assert view._message.object.startswith("Time limit per method must be from 1 to 600 s")
    box._process_events({"value": 12.5})
    assert c.max_seconds == 12.5 and c.message == ""
