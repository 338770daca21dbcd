"""The page's address as a link to the walk-through's settings (DeferredLink), without a server."""

from __future__ import annotations

import pytest
from panel.io.location import Location

from loe_viz.app.link import DeferredLink
from loe_viz.app.state import URL_PARAMS, ExplorerState


@pytest.fixture
def state():
    s = ExplorerState(auto_update=False)
    yield s
    s.close()


def test_a_link_is_applied_to_the_state_at_once(state):
    loc = Location(search="?n=500&seed=4&step=2&kind=circle")
    problems = []
    DeferredLink(state, URL_PARAMS, loc, on_error=problems.append)
    assert (state.n, state.seed, state.step, state.kind, problems) == (500, 4, 2, "circle", [])
    # the address now names every setting, the defaults included
    assert loc.query_params["d"] == 2 and loc.query_params["n"] == 500
    loc.search = "?n=500&seed=12&step=2&kind=circle"  # the page goes to another link
    assert state.seed == 12


def test_a_run_writes_the_address_with_its_results_and_other_changes_go_at_once(state):
    loc = Location(search="?seed=4")
    DeferredLink(state, URL_PARAMS, loc)
    state.busy = True  # a run is in progress (ExplorerState.run sets it before the run starts)
    state.seed = 9
    state.n = 700
    assert (loc.query_params["seed"], loc.query_params["n"]) == (4, 1000)
    state.busy = False  # its results (or its error) are published
    assert (loc.query_params["seed"], loc.query_params["n"]) == (9, 700)
    state.step = 3  # starts no run
    assert loc.query_params["step"] == 3


def test_a_setting_the_link_cannot_hold_goes_to_on_error(state):
    loc = Location(search="?n=abc&seed=4")
    problems = []
    DeferredLink(state, URL_PARAMS, loc, on_error=problems.append)
    assert problems and problems[0].get("n") == "abc"
    assert state.n == 1000  # unchanged


def test_a_link_with_bad_settings_applies_the_good_ones_and_names_the_bad():
    """A link is applied as one update, refused whole when one setting is bad: the step of
    ``?n=<img …>&seed=<script>…&step=5`` was dropped with them, and named among the bad ones."""
    from loe_viz.app.explorer import Explorer

    s = ExplorerState(auto_update=False)
    e = Explorer(state=s, sync_url=False)
    try:
        loc = Location(search="?n=%3Cimg%20src%3Dx%3E&seed=%3Cscript%3E&step=5&kind=circle")
        DeferredLink(s, URL_PARAMS, loc, on_error=e._on_url_error)
        assert (s.step, s.kind, s.n, s.seed) == (5, "circle", 1000, 0)
        assert s.error.startswith("Ignored settings in the link that do not parse: "), s.error
        assert "n='<img src=x>'" in s.error and "seed='<script>'" in s.error and "step" not in s.error
        loc2 = Location(search="?step=Compare&n=oops")  # a step by name, beside a bad setting
        DeferredLink(s, URL_PARAMS, loc2, on_error=e._on_url_error)
        assert s.step == 6 and "n='oops'" in s.error
    finally:
        e.close()
