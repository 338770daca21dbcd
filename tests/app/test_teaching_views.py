"""Compare's and the sweep's widgets without a browser: a progress bar appears only once a run
starts, and the sweep's text stays inside its row."""

from __future__ import annotations

import pytest

pn = pytest.importorskip("panel")

from loe_viz.app.state import ExplorerState  # noqa: E402
from loe_viz.app.views.compare import CompareView  # noqa: E402
from loe_viz.app.views.sweep import SweepView, sweep_figure  # noqa: E402


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
