"""The lessons', Compare's and the sweep's widgets without a browser: the variant applied is
marked, the lessons' links are explained as shown, a progress bar appears only once a run starts."""

from __future__ import annotations

import pytest

pn = pytest.importorskip("panel")

from loe_viz.app.lessons import LESSONS, lesson  # noqa: E402
from loe_viz.app.state import ExplorerState  # noqa: E402
from loe_viz.app.views.compare import CompareView  # noqa: E402
from loe_viz.app.views.lessons import LessonsView  # noqa: E402
from loe_viz.app.views.sweep import SweepView, sweep_figure  # noqa: E402


def _variants(view):
    return [(b.label, b.variant) for b, _ in view._variants]


def test_the_variant_applied_is_the_one_marked():
    s = ExplorerState(n=300)
    v = LessonsView(state=s)
    try:
        v.open("noise")  # its preset is T = 0.25, its first variant
        assert _variants(v) == [("T = 0.25", "solid"), ("T = 1 (the paper)", "outline"), ("T = 2", "outline")]
        buttons = [b for b, _ in v._variants]
        buttons[2].clicks += 1  # "T = 2"
        assert s.temperature == 2.0
        assert [m for _, m in _variants(v)] == ["outline", "outline", "solid"]
        s.temperature = 0.5  # from the sidebar: none of the variants is applied any more
        assert [m for _, m in _variants(v)] == ["outline"] * 3
        s.temperature = 1.0
        assert [m for _, m in _variants(v)] == ["outline", "solid", "outline"]
        v.open("noiseless")
        assert _variants(v) == [("Paper's algorithm only", "solid"), ("With the ordinal polish", "outline")]
        v._variants[1][0].clicks += 1
        assert s.paper_only is False and [m for _, m in _variants(v)] == ["outline", "solid"]
        # every lesson with variants opens with exactly the variant its preset is marked, if one is
        for x in LESSONS:
            if x.contrast:
                v.open(x.key)
                assert [m for _, m in _variants(v)].count("solid") == 1, (x.key, _variants(v))
    finally:
        v.close()
        s.close()


def test_the_link_names_are_explained_where_they_are_shown():
    s = ExplorerState(n=300)
    v = LessonsView(state=s)
    try:
        assert "brackets" not in v._intro.object and "row below" in v._intro.object
        for x in LESSONS:
            assert f"`{x.key}`" in v._keys.object
        # dark on light and large enough for a hall (Panel's code style was #82aaff at 12 px)
        css = " ".join(v._keys.stylesheets + v._intro.stylesheets)
        assert "#82aaff" not in css and "#1d3f66" in css and "font-size: 15px" in css
        assert v._keys.styles["font-size"] == "15px"
    finally:
        v.close()
        s.close()


def test_a_timing_sweep_waits_for_the_walk_through():
    s = ExplorerState(n=300)
    v = LessonsView(state=s)
    try:
        assert v.sweep.wait_while is not None and v.sweep.wait_while() is False
        s.busy = True
        assert v.sweep.wait_while() is True
        s.busy = False
        v.open("cost")
        v.sweep.wait(120)
        assert v.sweep.repeats == lesson("cost").sweep["repeats"] > 1 and v.sweep.message.startswith("Done")
        v.open("budget")  # another sweep lesson does not inherit the repeats
        assert v.sweep.repeats == 1
        v.sweep.cancel()
        v.sweep.wait(120)
    finally:
        v.close()
        s.close()


def test_compares_progress_bar_appears_only_once_a_run_starts():
    s = ExplorerState(n=300)
    view = CompareView(state=s)
    c = view.compare
    try:
        assert view._progress.visible is False  # an empty bar said nothing before any run
        c.methods = ["LOE"]
        c.start(background=False)
        assert c.progress == 100 and view._progress.visible is True
    finally:
        view.close()
        s.close()


def test_the_compare_plot_s_log_axis_keeps_to_the_errors_it_shows():
    """One error value (or an error of 0) left the range to HoloViews, which reached 0 on the log axis: a warning in
    the server's log at each draw."""
    import holoviews as hv
    from loe_viz.app.compare_state import CompareRecord

    s = ExplorerState(n=300, auto_update=False)
    view = CompareView(state=s)
    try:
        view.compare.records = [CompareRecord("STE", 0.5, 0.2, 0.1), CompareRecord("STE", 1.0, 0.2, 0.1, final=True),
                                CompareRecord("SOE", 0.7, 0.0, 0.0, final=True)]
        fig = view._figure()
        lo, hi = fig.opts.get().kwargs["ylim"]
        assert 0 < lo < 0.2 < hi
        assert {el.label for el in fig} == {"STE"}  # an error of 0 has no place on a log axis
        hv.render(fig)
    finally:
        view.close()
        s.close()


def test_the_sweeps_progress_bar_and_empty_plots_say_what_happens():
    v = SweepView()
    assert v._progress.visible is False
    assert v._message.sizing_mode == "stretch_width"  # wraps in the row instead of running off it
    title = sweep_figure([], "n", "seconds").opts.get().kwargs["title"]
    assert "press" in title
    assert sweep_figure([], "n", "seconds", running=True).opts.get().kwargs["title"] == "Fit time: running…"
    v.sweep.param.update(running=True, progress=10)
    assert v._progress.visible is True
    v.sweep.close()


def test_a_sweep_count_out_of_range_is_refused_in_words_not_set_back_silently():
    """The seeds and items boxes were bounded: the browser set 100 seeds back to 3 without a word, and the
    sweep ran with 3."""
    v = SweepView()
    sw = v.sweep
    try:
        sw.values = [25.0, 50.0]
        v._sync_controls()
        v._seeds.value = 100
        assert v.start() is None and not sw.running and sw.seeds == 3
        assert sw.message == "Seeds must be a whole number from 1 to 10; got 100. The sweep did not start."
        assert v._message.object == "Seeds must be a whole number from 1 to 10; got 100\\. The sweep did not start\\."
        v._seeds.value = None
        v.start()
        assert sw.message == "Seeds must be a whole number from 1 to 10; the box is empty. The sweep did not start."
        v._seeds.value = 2
        v._n.value = 1_000_000
        v.start()
        assert sw.message == ("Items n must be a whole number from 20 to 20,000; got 1,000,000. "
                              "The sweep did not start.")
        assert not sw.running and sw.n == 500
        v._n.value = 2.5
        v.start()
        assert sw.message == "Items n must be a whole number from 20 to 20,000; got 2.5. The sweep did not start."
        v._n.value = 300
        v.start()  # taken: the sweep runs with what the boxes say
        assert sw.seeds == 2 and sw.n == 300 and sw.wait(120) and not sw.message.startswith("Items n")
    finally:
        sw.close()


def test_the_sweeps_figures_are_drawn_one_per_turn_of_the_page_and_a_cancel_is_heard_between(monkeypatch):
    """A served page's updates run on the server's one event loop, one function a turn: both figures rebuilt in
    one turn held it for over a second (every page of the server waited), and a Cancel click waited behind
    the redraws until the sweep was done. Each turn builds one figure now; a Cancel between two stops the sweep
    with the cancelled message and the points fitted so far."""
    import queue
    import threading

    import loe_viz.app.sweep as sweep_module
    import loe_viz.app.views.sweep as view_module
    from serverlab import DispatchQueue

    built = []
    figure = view_module.sweep_figure
    monkeypatch.setattr(view_module, "sweep_figure", lambda *a, **k: (built.append(a[2]), figure(*a, **k))[1])
    asked, go = queue.Queue(), threading.Semaphore(0)

    def fake_point(config, variable, value, seed, token=None, repeats=1, min_seconds=0.0):
        asked.put((value, seed))
        assert go.acquire(timeout=60)
        token.check()  # LOE hears a cancel at its next landmark
        return sweep_module.SweepPoint(float(value), seed, 1.0 / value, 0.1, 0.01, 1)

    monkeypatch.setattr(sweep_module, "run_point", fake_point)
    monkeypatch.setattr(sweep_module.SweepState, "POINTS_SECONDS", 0.0, raising=False)  # points once the page drew
    v = SweepView()
    sw, page = v.sweep, DispatchQueue()
    sw.dispatch = page

    def turns():  # the page's turns until it has nothing left to do; the figures each built
        out = []
        while page.fns:
            del built[:]
            page.fns.pop(0)()
            out.append(len(built))
        return out

    try:
        sw.values = [25.0, 50.0, 100.0]
        v._sync_controls()
        v.start()
        assert sw.running and not v._stop.disabled
        assert asked.get(timeout=60) == (25.0, 0)
        go.release()
        assert asked.get(timeout=60) == (25.0, 1)  # the first point is published, the job waits in the next fit
        drawn = turns()
        assert max(drawn) == 1 and sum(drawn) == 4  # two redraws (the start's, the first point's), one figure a turn
        go.release()
        assert asked.get(timeout=60) == (25.0, 2)
        page.fns.pop(0)()  # the second point: its figures wait for turns of their own...
        assert len(page.fns) >= 2
        v._stop.clicks += 1  # ...and the Cancel click is handled before them
        assert sw.message == "Cancelling…"
        go.release()
        assert sw.wait(60)
        assert max(turns()) == 1
        # the fit under way stopped (LOE's next landmark): two points done, both kept
        assert sw.message == "Cancelled after 2 of 9 fits." and not sw.running and v._stop.disabled
        assert [(p.value, p.seed) for p in sw.points] == [(25, 0), (25, 1)]
        assert v._message.object.startswith("Cancelled after 2 of 9 fits")
    finally:
        go.release(10)
        sw.close()


def test_each_sweep_figure_spans_its_own_points_in_the_page():
    """Panel linked the axes of panes with the same dimensions: both figures and the placeholders before them
    shared one x range and one y range, which in the page took in the placeholder's and older points' spans (n
    from 0 in the cost lesson, 1,000 to 16,000 squeezed into the right third, its tick labels run together; a y
    range kept an earlier batch's top). Each figure now has ranges of its own, around its own points."""
    from bokeh.document import Document
    from bokeh.models import Plot
    from panel.io.state import set_curdoc

    import loe_viz.app.sweep as sweep_module

    v = SweepView(metrics=["seconds", "procrustes"])
    doc = Document()
    with set_curdoc(doc):
        doc.add_root(v.__panel__().get_root(doc))  # as in a page: the placeholders drawn first
        sw = v.sweep
        sw.variable = "n"
        values = [1000, 2000, 4000, 8000, 16000]
        for upto in (2, 5):  # two batches of points, as a sweep publishes them
            sw.points = [sweep_module.SweepPoint(float(x), seed, 3.0 / x ** 0.2 * (1 + seed), 1e-5 * x, 0.1, 1)
                         for x in values[:upto] for seed in (0, 1)]
            v._redraw(at_once=True)
    figures = [p for p in doc.select({"type": Plot}) if p.title is not None and "slope" in p.title.text]
    assert len(figures) == 2, [p.title.text for p in doc.select({"type": Plot})]
    assert figures[0].x_range is not figures[1].x_range and figures[0].y_range is not figures[1].y_range
    for fig in figures:
        assert 500 < fig.x_range.start < 1000 and 16_000 < fig.x_range.end < 30_000, fig.title.text


def test_compares_curves_differ_by_dash_and_marker_not_colour_alone():
    """The seven methods were solid lines with the same diamond, told apart by colour only: for a
    colour-blind reader SOE and GNMDS (ΔE 7) and STE and CKL could not be matched to the legend."""
    import holoviews as hv

    from loe_viz.methods import METHODS

    s = ExplorerState(n=200, seed=2)
    view = CompareView(state=s)
    c = view.compare
    try:
        c.methods = list(METHODS)
        c.time_limit = 1.0
        c.start(background=False)
        fig = hv.render(view._figure(), backend="bokeh")
        lines, points = {}, {}
        for r in fig.renderers:
            label = next((it.label["value"] for it in fig.legend[0].items if r in it.renderers), None)
            if type(r.glyph).__name__ == "Line":
                lines[label] = (tuple(r.glyph.line_dash), r.glyph.line_color)
            elif type(r.glyph).__name__ == "Scatter":
                points[label] = r.glyph.marker
        drawn = {m.label for m in METHODS.values()}
        assert set(points) == drawn and len(set(points.values())) == len(drawn), points
        assert len(lines) >= 5 and len({dash for dash, _ in lines.values()}) == len(lines), lines
        for m in METHODS.values():
            assert points[m.label] == m.marker
        # one legend entry per method, showing its line and its marker together
        assert sorted(it.label["value"] for it in fig.legend[0].items) == sorted(drawn)
    finally:
        view.close()
        s.close()
