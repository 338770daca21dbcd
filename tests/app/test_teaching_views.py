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
