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


def test_the_step_goes_into_the_address_while_a_run_is_in_progress(state):
    """The step waited for the run in progress like the settings: during a page's first run, Next moved to
    Compare and the address went on naming Embedding until the run ended (over 10 s on a busy machine)."""
    from loe_viz.app.state import STEPS

    loc = Location(search="?seed=4&step=embedding")
    DeferredLink(state, URL_PARAMS, loc, spelled={"step": STEPS}, at_once=["step"])
    state.busy = True
    state.param.update(step=STEPS.index("Compare"), seed=9)
    assert (loc.query_params["step"], loc.query_params["seed"]) == ("compare", 4)  # the seed: with its results
    state.busy = False
    assert (loc.query_params["step"], loc.query_params["seed"]) == ("compare", 9)


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
    from loe_viz.app.state import STEPS

    s = ExplorerState(auto_update=False)
    e = Explorer(state=s, sync_url=False)
    try:
        loc = Location(search="?n=%3Cimg%20src%3Dx%3E&seed=%3Cscript%3E&step=5&kind=circle")
        DeferredLink(s, URL_PARAMS, loc, on_error=e._on_url_error, spelled={"step": STEPS})
        assert (s.step, s.kind, s.n, s.seed) == (5, "circle", 1000, 0)
        assert s.error.startswith("Ignored settings in the link that do not parse: "), s.error
        assert "n='<img src=x>'" in s.error and "seed='<script>'" in s.error and "step" not in s.error
        loc2 = Location(search="?step=Compare&n=oops")  # a step by name, beside a bad setting
        DeferredLink(s, URL_PARAMS, loc2, on_error=e._on_url_error, spelled={"step": STEPS})
        assert s.step == 6 and "n='oops'" in s.error
    finally:
        e.close()


def test_the_address_names_the_step_and_old_links_by_index_still_open_it():
    """``?step=5`` opened "Step 6 of 7: Embedding", and a teacher who typed ?step=6 from the header
    got Compare: the address now spells the step (``?step=embedding``), and reads the links of before."""
    from loe_viz.app.explorer import Explorer
    from loe_viz.app.state import STEPS

    s = ExplorerState(auto_update=False)
    e = Explorer(state=s, sync_url=False)
    try:
        for raw, want in (("embedding", 5), ("Compare", 6), ("5", 5), ("0", 0), ("ranking", 2)):
            loc = Location(search=f"?n=500&step={raw}&seed=4")
            s.param.update(step=1, n=1000, seed=0)
            s.error = ""
            DeferredLink(s, URL_PARAMS, loc, on_error=e._on_url_error, spelled={"step": STEPS})
            assert (s.step, s.n, s.seed, s.error) == (want, 500, 4, ""), raw
            assert loc.query_params["step"] == STEPS[want].lower(), (raw, loc.query_params)
        s.step = 3  # a step changed on the page is written by name
        assert loc.query_params["step"] == "shifts"
        for raw, shown in (("7", "7"), ("Nowhere", "'Nowhere'"), ("Step 6", "'Step 6'")):
            loc = Location(search=f"?step={raw}&seed=6")
            s.step = 2
            s._link_problem = s.error = ""  # as a new page's state (a link's messages add up on one page)
            DeferredLink(s, URL_PARAMS, loc, on_error=e._on_url_error, spelled={"step": STEPS})
            assert s.step == 2 and s.seed == 6, raw
            assert s.error == (f"Ignored settings in the link that do not parse: step={shown} (a step is one of "
                               "configure, sample, ranking, shifts, edm, embedding, compare)"), s.error
            assert loc.query_params["step"] == "ranking"  # the step in use
    finally:
        e.close()


@pytest.mark.parametrize("bad, shown", [
    ("%C2%B2", "n='²'"),  # a superscript digit: str.isdigit() says yes, int() says no
    ("9" * 5000, "(5,000 characters)"),  # beyond the 4,300 digits int() reads
])
def test_a_link_panel_could_not_parse_names_the_setting_and_applies_the_others(bad, shown):
    """Panel's own query parser raised for these values, and the page's script ended with a traceback."""
    from loe_viz.app.explorer import Explorer
    from loe_viz.app.serving import read_links_safely

    read_links_safely()
    s = ExplorerState(auto_update=False)
    e = Explorer(state=s, sync_url=False)
    try:
        loc = Location(search=f"?n={bad}&seed=3&kind=circle")
        DeferredLink(s, URL_PARAMS, loc, on_error=e._on_url_error)
        assert (s.n, s.seed, s.kind) == (1000, 3, "circle")
        assert s.error.startswith("Ignored settings in the link that do not parse: n=") and shown in s.error
        assert len(s.error) < 200, len(s.error)  # the value is quoted cut, its length said
    finally:
        e.close()


def test_link_values_are_read_as_panel_reads_them_and_never_raise():
    from loe_viz.app.link import parse_link_query

    q = parse_link_query("?n=500&t=1.5&b=NaN&c=true&l=[1,2]&k=moons&x=[1,&y=%C2%B2&z=" + "7" * 41)
    assert q["n"] == 500 and q["t"] == 1.5 and q["b"] != q["b"] and q["c"] is True and q["l"] == [1, 2]
    assert (q["k"], q["x"], q["y"], q["z"]) == ("moons", "[1,", "²", "7" * 41)  # text the state refuses by name
    assert parse_link_query("?n=5&n=7") == {"n": 7}  # the last one, as in Panel
    assert parse_link_query("?seed=-2")["seed"] == -2 and isinstance(parse_link_query("?s=-2")["s"], int)


def test_a_setting_given_twice_in_the_link_is_said():
    from loe_viz.app.explorer import Explorer

    s = ExplorerState(auto_update=False)
    e = Explorer(state=s, sync_url=False)
    try:
        link = "?n=500&seed=2&n=700"
        DeferredLink(s, URL_PARAMS, Location(search=link), on_error=e._on_url_error)
        e._say_repeated_settings(link)
        assert s.n == 700
        assert s.error == "The link gives n 2 times ('500', '700'); the last one is used.", s.error
    finally:
        e.close()


def test_a_budget_beyond_the_floats_is_refused_with_a_message_and_no_traceback(caplog):
    s = ExplorerState(auto_update=False, n=200)
    try:
        s.from_query({"budget": "1" * 400})  # read as an int of 400 digits: float() overflowed
        assert s.budget == 100.0  # ignored, as a link's value that cannot run
        assert s.error.startswith("Ignored settings in the link that cannot be used: budget='111"), s.error
        assert "(400 characters) (must be a finite number above 0)" in s.error, s.error
        s.budget = int("1" * 400)  # typed in the sidebar: the run says it
        s.run(force=True)
        # the first run says the link's ignored setting too, then its own refusal
        assert s.error.endswith("(must be a finite number above 0) budget must be finite, got an integer of about "
                                "400 digits"), s.error
        assert "Traceback" not in caplog.text and "OverflowError" not in caplog.text
    finally:
        s.close()


@pytest.fixture
def explorer():
    from loe_viz.app.explorer import Explorer

    s = ExplorerState(auto_update=False)
    e = Explorer(state=s, sync_url=False)
    yield e
    e.close()


def _open(e, link: str) -> Location:
    """The explorer opening ``link`` as the served page does: the link applied, then the first run."""
    from loe_viz.app.serving import read_links_safely

    read_links_safely()
    loc = Location(search=link)
    DeferredLink(e.state, URL_PARAMS, loc, on_error=e._on_url_error)
    e.state.run()
    assert e.state.wait(120)
    return loc


@pytest.mark.parametrize("link, named, kept", [
    # an n above the limit stopped the run; its message alone was shown, the bad d never named
    ("?n=99999999&d=**PWNSTAR**&seed=3", ["n=99999999 (must be at most 200,000)", "d='**PWNSTAR**'"],
     dict(n=1000, d=2, seed=3)),
    # numbers that parse but cannot run: only the first the run met was said (the temperature)
    ("?temperature=nan&budget=inf&seed=4&kind=circle", ["temperature=nan (must be a number of 0 or more)",
                                                         "budget=inf (must be a finite number above 0)"],
     dict(temperature=1.0, budget=100.0, seed=4, kind="circle")),
    ("?n=400&d=30&n_landmarks=3&temperature=-1&seed=-2",
     ["d=30 (must be between 1 and 20)", "n_landmarks=3 (must be at least d + 3 = 5", "temperature=-1",
      "seed=-2 (must be a whole number from 0 to 4,294,967,295)"], dict(n=400, d=2, n_landmarks=None, seed=0)),
    ("?kind=uploaded&budget=0.001&d=3", ["kind='uploaded' (no points were uploaded in this page)",
                                         "budget=0.001 (must be between "], dict(kind="gaussian", d=3, budget=100.0)),
    # landmarks that fit the link's n, which is refused: they were taken at the n in use, and nothing ran
    ("?n=200000&d=20&n_landmarks=199998", ["n=200000 (no budget can run with ℓ = 199,998 landmarks",
                                           "n_landmarks=199998 (must be at most n - 2 = 998, and n stays 1,000)"],
     dict(n=1000, d=20, n_landmarks=None)),
])
def test_every_setting_a_link_cannot_run_with_is_named_and_the_others_apply_and_run(explorer, link, named, kept):
    s = explorer.state
    loc = _open(explorer, link)
    assert {k: getattr(s, k) for k in kept} == kept  # a refused setting keeps the value in use: the default
    assert s.error.startswith("Ignored settings in the link "), s.error
    for name in named:
        assert name in s.error, (name, s.error)
    assert s.version == 1 and s.metrics["n"] == s.n  # a result, computed with what was kept
    for k, v in kept.items():  # the address names the values in use, never a refused one
        assert loc.query_params.get(k) == ("null" if v is None else v), (k, loc.query_params)


def test_the_sidebar_never_shows_a_value_the_link_gave_and_the_explorer_refused(explorer):
    """``?n=99999999`` showed 99999999 in the n box (its slider pinned at the end) beside the refusal."""
    e = explorer
    _open(e, "?n=99999999&d=25&temperature=inf&budget=-5&seed=7")
    assert (e.w_n.value, e.w_d.value, e.w_temp.value, e.w_budget.value, e.w_seed.value) == (1000, 2, 1.0, 100.0, 7)
    assert "Procrustes error" in e.status.object


def test_a_link_opened_later_in_the_page_is_checked_the_same_way(explorer):
    s = explorer.state
    loc = _open(explorer, "?n=500&seed=2")
    loc.search = "?n=500&seed=9&n=250000&temperature=nan"  # the page goes to another link
    assert (s.n, s.seed, s.temperature) == (500, 9, 1.0)  # the values in use stay
    assert "n=250000 (must be at most 200,000)" in s.error and "temperature=nan" in s.error, s.error
    assert (loc.query_params["n"], loc.query_params["temperature"]) == (500, 1.0)


def test_no_refused_value_of_a_link_reaches_the_page_as_markup(explorer):
    e = explorer
    link = ("?n=99999999&d=%3Cb%3Ebold%3C%2Fb%3E&seed=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E"
            "&kind=%3Cscript%3Ealert(2)%3C%2Fscript%3E&offset=**x**&temperature=nan")
    _open(e, link)
    s = e.state
    for shown in ("d='<b>bold</b>'", "seed='<img src=x onerror=alert(1)>'", "kind='<script>alert(2)</script>'",
                  "offset='**x**'", "n=99999999", "temperature=nan"):
        assert shown in s.error, (shown, s.error)
    assert e.alert.visible
    shown = e.alert.object  # Markdown, which renders raw HTML: every character of the link's text escaped
    assert "<" not in shown and ">" not in shown and "**" not in shown, shown
    assert "&lt;b&gt;bold&lt;/b&gt;" in shown and "&lt;script&gt;alert\\(2\\)" in shown, shown


def test_a_whole_number_the_page_sends_as_a_float_reaches_the_state_from_the_number_boxes():
    """A seed of 99999999999999999999999 typed in the sidebar arrives as the float 1e+23: Panel's IntInput
    raised inside Panel (a traceback in the server's log) and the results stayed those of the old seed."""
    from loe_viz.app.explorer import Explorer

    s = ExplorerState(auto_update=False)
    e = Explorer(state=s, sync_url=False)
    try:
        e.w_seed._process_events({"value": 4e9})  # what Panel does with the page's message
        assert s.seed == 4_000_000_000 and s.error == ""
        # a seed of 2**64 showed as 18446744073709552000 in the box, and 1e30 ran as 1000000000000000019884624838656;
        # past 2**53 the float's digits are not the ones typed (1e23 was quoted as 99,999,999,999,999,991,611,392)
        for typed, got in ((1e23, "about 1e+23"), (float(2**64), "about 1.84e+19"), (1e300, "about 1e+300"),
                           (float("inf"), "inf")):
            e.w_seed._process_events({"value": typed})
            assert s.seed == 4_000_000_000 and e.w_seed.value == s.seed
            said = f"Seed must be a whole number from 0 to 4,294,967,295 (got {got}); it stays 4000000000."
            assert s.error == said, s.error
        e.w_l._process_events({"value": 7.0})
        e.w_l._process_events({"value": None})  # an emptied landmarks box: auto
        assert s.n_landmarks is None
        e.w_seed._process_events({"value": None})  # an emptied seed box: the seed stays, and the box shows it
        assert s.seed == 4_000_000_000 and "the box was empty" in s.error
        assert e.w_seed.value == s.seed
    finally:
        e.close()


def test_a_link_takes_the_budgets_the_run_takes_and_a_link_within_them_gives_a_result():
    """The link priced a budget with one thread, the served run with two: ``?budget=1e6`` said "between 0.362
    and 13,299.2 c", and ``?budget=12500`` was refused by the run (up to 11,909.6) with no result at all;
    ``?n=200000`` kept the budget of 100 that n allows only up to 29.6, and showed nothing but that error."""
    from loe_viz.app.explorer import Explorer
    from loe_viz.app.pipeline import budget_range

    lo, hi = budget_range(1000, 2, 2, 5, "total_c", n_jobs=2)
    lo_n, hi_n = budget_range(200_000, 2, 2, 5, "total_c", n_jobs=2)
    for link, said, kept in [
        ("?budget=1e6", f"budget=1000000.0 (must be between 0.362 and {hi:,} c for n = 1,000 and ℓ = 5)",
         dict(budget=100.0)),
        ("?budget=12500", f"budget=12500 (must be between 0.362 and {hi:,} c for n = 1,000 and ℓ = 5)",
         dict(budget=100.0)),
        ("?n=200000", f"n=200000 (needs a budget between {lo_n} and {hi_n} c for n = 200,000 and ℓ = 5; the budget "
                      "is 100)", dict(n=1000, budget=100.0)),
        (f"?budget={hi}", "", dict(budget=hi)),
        (f"?n=200000&budget={hi_n}", "", dict(n=200_000, budget=hi_n)),
        # a budget just above n's range was refused, and n taken with the budget in use, which n does not allow
        # either: the run refused it, its message replaced the link's, and nothing said budget=30 was ignored
        ("?n=200000&budget=30", f"budget=30 (must be between {lo_n} and {hi_n} c for n = 200,000 and ℓ = 5), "
                                f"n=200000 (needs a budget between {lo_n} and {hi_n} c for n = 200,000 and ℓ = 5; "
                                "the budget is 100)", dict(n=1000, budget=100.0)),
    ]:
        s = ExplorerState(auto_update=False, n_jobs=2)
        e = Explorer(state=s, sync_url=False)
        try:
            _open(e, link)
            assert s.error == (f"Ignored settings in the link that cannot be used: {said}" if said else ""), s.error
            assert {k: getattr(s, k) for k in kept} == kept
            assert s.version == 1 or s.notice.startswith("Large run"), (link, s.notice)  # a result, or its price
        finally:
            e.close()
    # the sidebar's n box takes the same bounds: 200,000 with a budget of 100 is named and set back
    s = ExplorerState(auto_update=False, n_jobs=2)
    e = Explorer(state=s, sync_url=False)
    try:
        e.w_n._value_edit._process_events({"value": 200_000})
        assert s.n == 1000 and e.w_n.value == 1000
        assert s.error == (f"Items n = 200,000 needs a budget between {lo_n} and {hi_n} c for n = 200,000 and ℓ = 5; "
                           "the budget is 100: change the budget first; it stays 1,000."), s.error
    finally:
        e.close()


def test_a_seed_above_2_to_the_32_is_refused_by_the_link_and_the_run():
    """``?seed=1e30`` ran with seed 1000000000000000019884624838656, written back into the page's number box
    with a warning about integer precision: a seed the page cannot hold, nor NumPy's legacy generator take."""
    from loe_viz.app.explorer import Explorer

    s = ExplorerState(auto_update=False)
    e = Explorer(state=s, sync_url=False)
    try:
        loc = _open(e, "?seed=1e30&n=300")
        assert s.error == ("Ignored settings in the link that cannot be used: seed=1e+30 (must be a whole number "
                           "from 0 to 4,294,967,295)"), s.error
        assert s.seed == 0 and s.metrics["n"] == 300 and loc.query_params["seed"] == 0
        _open(e, "?seed=4294967295&n=300")
        assert s.error == "" and s.config_used["seed"] == 2**32 - 1
    finally:
        e.close()
    t = ExplorerState(seed=2**32, auto_update=False)  # a script's setting: the run says it
    t.run()
    assert t.error == "Seed must be at most 4,294,967,295 (got 4,294,967,296)" and t.model is None, t.error
    t.close()


def test_a_run_refused_after_a_link_still_names_the_links_ignored_settings():
    """The run's refusal replaced the message naming the link's ignored settings: the visitor read about a value
    they never typed, and nothing said which of theirs had been ignored."""
    s = ExplorerState(auto_update=False, n_jobs=2)
    try:
        s.from_query({"seed": -1, "kind": "uploaded"})
        said = s.error
        assert said.startswith("Ignored settings in the link that cannot be used: ") and "seed=-1" in said, said
        s.n = 2  # a run the pipeline refuses with its own message
        s.run(force=True)
        assert s.wait(60)
        assert s.error.startswith(said + " ") and len(s.error) > len(said) + 10, s.error
    finally:
        s.close()
