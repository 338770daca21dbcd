"""The "Your triplets" view in-process (no server): it opens on a sample, runs, draws, downloads."""

from __future__ import annotations

import warnings

import pytest

pn = pytest.importorskip("panel")

from loe_viz.app import Explorer  # noqa: E402
from loe_viz.app.explorer import MODES  # noqa: E402
from loe_viz.app.views.triplets import TripletsView, _md  # noqa: E402
from serverlab import drop_file  # noqa: E402


@pytest.fixture(autouse=True)
def _quiet_loe():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def test_explorer_has_the_mode_and_opens_it_on_a_sample():
    e = Explorer(n=100)
    try:
        assert e.state.wait(120)
        assert [e.modes._names[i] for i in range(len(e.modes))] == list(MODES)
        view = e._triplets
        assert view.state.data is None  # nothing is read before the mode is shown
        e.modes.active = 1
        assert view.state.data is not None and view.state.source == view.w_sample.value
        assert view.sentence.object.startswith("Read")
        # the walk-through's sidebar is hidden in this mode, and back in its own
        others = [o for o in e.sidebar.objects if o is not e._mode_note]
        assert e._mode_note.visible and not any(o.visible for o in others)
        # in a notebook the sidebar's column goes too, so that the results take its 330 px
        row = e.__panel__()
        assert row.objects[0] is e._sidebar_column and not e._sidebar_column.visible
        e.modes.active = 2  # the lessons set the walk-through's settings
        assert e._sidebar_column.visible and not e._mode_note.visible
        e.modes.active = 0
        assert not e._mode_note.visible and all(o.visible for o in others) and e._sidebar_column.visible
        pn.panel(e).get_root()
    finally:
        e.close()


def test_view_runs_draws_and_downloads():
    pn.extension("filedropper")  # the upload box is then the served one (FileDropper)
    view = TripletsView(dispatch=lambda fn: fn())
    assert isinstance(view.w_upload, pn.widgets.FileDropper)
    s = view.state
    view.w_sample.value = "european_capitals_crowd.csv"
    assert s.summary["n_items"] == 44 and "Amsterdam" in view.summary_table.object
    assert "| rows that repeat an earlier row | 191 |" in view.summary_table.object  # draws with replacement
    assert "44 busiest heads" in view.coverage.object
    assert view.coverage.object.endswith(  # and what each number counts
        "Too few triplets for LOE alone: LOE ranks every item from its landmarks' own triplets, and the 5th busiest "
        "head (d + 3 = 5 landmarks at the least) has 2.35 triplets per item, where LOE's rankings need about 5; "
        "LOE-STE or STE, which fit every triplet, place these items better.")  # as they do
    s.methods = ["LOE", "STE", "LOESTE"]
    assert s.run()
    acc = {m: s.results[m].test_accuracy for m in ("LOE", "STE", "LOESTE")}
    assert min(acc["STE"], acc["LOESTE"]) > acc["LOE"] + 0.05, acc
    table = view.results_table.object
    assert r"the busiest heads, at most 4 × \(d \+ 3\) \= 20," in table  # "at most 4 (d + 3) = 20" read as two claims
    # the walk-through's names for the same measures: one glossary line under the table
    assert "| Procrustes error vs STE |" in table and "disparity" not in table
    assert "100 % minus the walk-through's triplet error" in table and "training triplets satisfied" in table
    for name in ("| LOE |", "| STE |", "| LOE-STE |", "Procrustes error vs truth"):
        assert name in table, table
    assert view.w_shown.value == s.best_method() and not view.download.disabled
    csv = view._csv().read()
    assert "item,label,x1,x2" in csv and "Amsterdam" in csv
    view.w_shown.value = "LOE"
    assert s.shown == "LOE" and view.download.filename == "european_capitals_crowd_loe_embedding.csv"
    import holoviews as hv
    plot = view.plot.object  # 44 items: points with their labels written beside them
    assert isinstance(plot, hv.Overlay) and any(isinstance(el, hv.Labels) for el in plot)
    labels = next(el for el in plot if isinstance(el, hv.Labels))
    assert "Amsterdam" in set(labels.dframe()["label"])
    points = next(el for el in plot if isinstance(el, hv.Points))  # the map's coordinates are kilometres
    assert [k.label for k in points.kdims] == ["x₁ (true axes, km)", "x₂ (true axes, km)"]
    pn.panel(view).get_root()
    # a bad upload shows the message (escaped for Markdown) and keeps the results
    drop_file(view.w_upload, "bad_file.csv", b"head,winner,loser\n0,1\n")
    assert s.wait(60)
    # the file name quoted in the message is isolated (U+2068 ... U+2069): its own text direction stays inside
    assert view.alert.visible and view.alert.object == _md(s.error.replace("bad_file.csv", "\u2068bad_file.csv\u2069"))
    assert s.error == ("Upload rejected: bad_file.csv: line 2: expected 3 fields (head, near, far), got 2; tick "
                       "“Skip rows with problems” and upload it again to read it without them")
    assert "| LOE-STE |" in view.results_table.object and s.source == "european_capitals_crowd.csv"
    # a good upload clears the sample picker and the results
    drop_file(view.w_upload, "mine.csv", b"0,1,2\n1,2,3\n2,3,0\n3,0,1\n0,2,3\n")
    assert s.wait(60)
    assert s.source == "mine.csv" and view.w_sample.value == "" and view.results_table.object == ""
    assert not view.alert.visible


def test_markdown_escape():
    assert _md("a_b*c|d<e>") == r"a\_b\*c\|d&lt;e&gt;"
    # rendered by Panel's Markdown pane: the payload is text, not an element
    html = pn.pane.Markdown(_md('<img src=x onerror="window.__pwned=1">')).get_root().text
    assert "<img" not in html and "&lt;img" not in html.replace("&amp;lt;img", "")


def test_a_setting_out_of_range_is_refused_next_to_its_box_and_typing_the_kept_value_clears_it():
    """The boxes were bounded: 100000 landmarks emptied the box silently, 3 sent 0 and a server error.
    A refused value then reset the box to the kept value, and typing that value back (nothing the page
    sends: the box had not changed) left the refusal on the page for good."""
    view = TripletsView()
    s = view.state
    try:
        view.w_l.value = 100000
        assert s.n_landmarks is None and view.w_l.value == 100000  # beside the message saying what stays
        assert view.setting_alert.visible
        assert s.setting_error == "LOE landmarks must be from 4 to 500 (empty: auto); got 100000. It stays auto."
        assert view.setting_alert.object == _md(s.setting_error)
        view.w_l.value = 12
        assert s.n_landmarks == 12 and not view.setting_alert.visible
        view.w_d.value = 0
        assert s.n_components == 2
        assert s.setting_error == "Dimension d must be from 1 to 10; got 0. It stays 2."
        view.w_d.value = 2  # the kept value typed back: taken, the message goes
        assert s.n_components == 2 and s.setting_error == "" and not view.setting_alert.visible
        view.w_test.value = 1e-300
        assert s.test_fraction == 0.2
        assert s.setting_error == "Held-out fraction must be from 0.05 to 0.5; got 1e-300. It stays 0.2."
        view.w_test.value = 0.2
        assert s.setting_error == "" and not view.setting_alert.visible
        view.w_test.value = 5.0
        assert s.test_fraction == 0.2 and s.setting_error.startswith("Held-out fraction must be from 0.05 to 0.5; got 5.")
        s.seed = 7  # the state's own changes reach the boxes
        assert view.w_seed.value == 7
        view.w_seed.value = 3  # a value taken in another box: the held-out fraction's refusal stays, 5 in its box
        assert s.seed == 3 and view.setting_alert.visible and s.setting_error.startswith("Held-out fraction")
        view.w_test.value = 0.25  # a value taken in that box clears its message
        assert s.test_fraction == 0.25 and not view.setting_alert.visible
    finally:
        s.close()


def test_the_show_select_never_loses_its_options_while_a_run_clears_the_results():
    # A select left without options made the browser answer with the value None, which Panel
    # refuses; in a notebook that refusal left the page's document unheld and froze the page.
    view = TripletsView(dispatch=lambda fn: fn())
    s = view.state
    assert view.w_shown.disabled  # nothing to show yet
    view.w_sample.value = "european_capitals_crowd.csv"
    s.methods = ["LOE", "STE"]
    assert s.run()
    first = dict(view.w_shown.options)
    assert set(first.values()) == {"LOE", "STE"} and not view.w_shown.disabled
    changes = []
    view.w_shown.param.watch(lambda e: changes.append((e.name, e.new)), ["options", "value"])
    s.methods = ["LOE"]
    s.param.update(results={}, version=s.version + 1)  # as a new run starts (TripletsState.run)
    assert view.w_shown.options == first and view.w_shown.disabled and view.w_shown.value in first.values()
    assert s.run()
    assert list(view.w_shown.options.values()) == ["LOE"] and view.w_shown.value == "LOE"
    assert not view.w_shown.disabled
    assert all(value not in (None, {}) for _, value in changes), changes


def test_the_triplets_box_empties_itself_when_its_file_is_refused():
    """A refused triplet file stayed on the box's green "Upload complete" band beside "Upload rejected"."""
    pn.extension("filedropper")
    view = TripletsView(dispatch=lambda fn: fn())
    try:
        box, s = view.w_upload, view.state
        drop_file(box, "mine.csv", b"0,1,2\n1,2,3\n2,3,0\n3,0,1\n0,2,3\n")
        assert s.wait(60) and s.source == "mine.csv" and box.clears == 0  # a taken file stays in the box
        drop_file(box, "bad_file.csv", b"head,winner,loser\n0,1\n")
        assert s.wait(60) and view.alert.visible and s.error.startswith("Upload rejected: bad_file.csv")
        assert box.clears == 1 and box.value == {} and s.source == "mine.csv"
    finally:
        view.close()


def test_picking_the_3d_sample_sets_the_dimension_box_to_3():
    # the 3-D sample was fitted at d = 2 (72 to 84 % held out where d = 3 gives 95 %)
    view = TripletsView()
    try:
        view.w_sample.value = "gaussian_3d_triplets.npz"
        assert view.state.n_components == 3 and view.w_d.value == 3
        assert "“Dimension d” was set to 3" in view.sentence.object
        view.w_d.value = 2  # still the student's to change
        assert view.state.n_components == 2
        view.w_sample.value = "european_capitals_crowd.csv"
        assert view.w_d.value == 2 and "set to 2" in view.sentence.object
    finally:
        view.close()


def test_the_3d_sample_s_map_says_it_is_a_flat_view():
    # "Drawn aligned to the sample's true positions ... so it reads like the truth", of a 2-D view of 3-D points
    view = TripletsView(dispatch=lambda fn: fn())
    try:
        view.w_sample.value = "gaussian_3d_triplets.npz"
        view.state.methods = ["LOE"]
        assert view.state.run()
        assert view._plot_note().endswith(" It is a flat view of 3-D positions, along their two principal axes.")
        assert view.state.truth_unit == ""
    finally:
        view.close()


def test_a_number_too_long_for_an_integer_box_is_refused_in_the_page_not_in_the_server_log():
    """The browser sends 99999999999999999999999 as the float 1e+23: IntInput refused it inside Panel (a
    traceback in the server log, nothing on the page)."""
    view = TripletsView()
    s = view.state
    try:
        for box, name in ((view.w_seed, "seed"), (view.w_d, "n_components"), (view.w_l, "n_landmarks")):
            before = getattr(s, name)
            # as the page's message sets it: both values at once
            box._process_events({"value": 1e23, "value_throttled": 1e23})
            assert getattr(s, name) == before and view.setting_alert.visible
            assert s.setting_error.startswith(f"{s.SETTINGS[name]} must be from ") and "got 1e+23" in s.setting_error
            box._process_events({"value": before, "value_throttled": before})  # typed back: its message goes
            assert s.setting_error == ""
        view.w_seed._process_events({"value": 2.5, "value_throttled": 2.5})
        assert s.setting_error == "Seed must be a whole number from 0 to 4,294,967,295; got 2.5. It stays 0."
        view.w_seed._process_events({"value": 4.0, "value_throttled": 4.0})
        assert s.seed == 4 and s.setting_error == ""
    finally:
        s.close()


def test_the_results_say_none_yet_once_a_run_on_the_previous_file_has_stopped():
    """A file chosen while a run went on left "4. Results" with no line at all once that run had stopped."""
    view = TripletsView(dispatch=lambda fn: fn())
    s = view.state
    try:
        view.w_sample.value = "european_capitals_crowd.csv"
        assert view.results_intro.object == "No results yet: choose the methods and press **Run**."
        # a run in progress, started as TripletsState.run starts it
        s.param.update(running=True, results={}, run_info={}, message="Starting…", version=s.version + 1)
        assert view.results_intro.object == ""
        view.w_sample.value = "gaussian_2d_crowd.csv"  # another file meanwhile: the run is cancelled
        s.param.update(running=False, progress=0, message="")  # as the cancelled run reports it stopped
        assert view.results_intro.object == "No results yet: choose the methods and press **Run**."
    finally:
        view.close()


def test_how_the_file_was_read_names_items_by_id_where_they_have_no_text_labels():
    """Beside "labels: integer ids (kept as labels)" the page said the answers name the chosen item "by its
    label", and of renumbered ids it gave the reader's advice, cut into "(to keep the ids; ... pass its labels=)"."""
    view = TripletsView(dispatch=lambda fn: fn())
    s = view.state
    try:
        assert s.load_upload(b"head,left,right,winner\n5,7,9,7\n7,5,9,9\n9,5,7,5\n5,9,7,9\n", "ids.csv")
        assert view.notes.object == "How the file was read: " + "; ".join(_md(x) for x in (
            "answers name the chosen item by its id",
            "item ids were not the contiguous range 0..2: the 3 distinct ids (5..9) were mapped to 0..2 in "
            "increasing order; each item keeps its id as its label")) + "."
        view.w_sample.value = "gaussian_2d_crowd.csv"  # ids 0..n-1: no labels
        assert view.notes.object == "How the file was read: answers name the chosen item by its id."
        view.w_sample.value = "european_capitals_crowd.csv"  # city names
        assert view.notes.object == "How the file was read: answers name the chosen item by its label."
    finally:
        view.close()


def test_the_introduction_gives_the_same_most_landmarks_auto_takes_as_the_landmarks_box():
    """The introduction said "auto" takes every evenly covered head "(up to 100)" beside a landmarks box
    saying "auto (≤ 200)", the number LOE takes."""
    from loe_viz.loe import AUTO_MAX_LANDMARKS
    from loe_viz.app.views.triplets import _TEXT

    view = TripletsView()
    try:
        assert view.w_l.placeholder == f"auto (≤ {AUTO_MAX_LANDMARKS})"
        assert f"every head when they are about evenly covered (up\nto {AUTO_MAX_LANDMARKS})" in _TEXT[0]
    finally:
        view.close()


def test_each_box_left_holding_a_refused_value_keeps_its_own_message_until_a_value_typed_there_is_taken():
    """d = 0 and then a seed of -3 were both refused and left in their boxes, but the seed's message replaced
    the dimension's: the Dimension box showed 0 unexplained, and Run used d = 2 and seed 0 without a word."""
    view = TripletsView()
    s = view.state
    try:
        view.w_d.value = 0
        view.w_seed.value = -3
        view.w_test.value = 5.0
        assert (s.n_components, s.seed, s.test_fraction) == (2, 0, 0.2)
        assert (view.w_d.value, view.w_seed.value, view.w_test.value) == (0, -3, 5.0)
        assert s.setting_error == ("Dimension d must be from 1 to 10; got 0. It stays 2. "
                                   "Held-out fraction must be from 0.05 to 0.5; got 5. It stays 0.2. "
                                   "Seed must be from 0 to 4,294,967,295; got -3. It stays 0."), s.setting_error
        assert view.setting_alert.visible and view.setting_alert.object == _md(s.setting_error)
        view.w_seed.value = -4  # refused again: its message is replaced, the others stay
        assert s.setting_error.endswith("Seed must be from 0 to 4,294,967,295; got -4. It stays 0.")
        assert s.setting_error.startswith("Dimension d must be from 1 to 10; got 0. It stays 2. Held-out")
        view.w_d.value = 3
        assert s.n_components == 3 and not s.setting_error.startswith("Dimension")
        view.w_test.value = 0.2
        view.w_seed.value = 0
        assert s.setting_error == "" and not view.setting_alert.visible
    finally:
        view.close()


def test_groups_that_no_triplet_relates_are_shown_in_the_summary():
    view = TripletsView(dispatch=lambda fn: fn())
    text = "head,winner,loser\nOslo,Rome,Paris\nRome,Paris,Oslo\nKyiv,Riga,Vilnius\nRiga,Kyiv,<b>Vilnius</b>\n"
    assert view.state.load_upload(text.encode(), "two.csv"), view.state.error
    assert "| groups of items that no triplet relates | **2** |" in view.summary_table.object
    said = view.sentence.object.replace("\\", "")
    assert "Note: the triplets split the items into 2 groups that no triplet relates" in said
    assert "<b>" not in said and "Vilnius" in said  # the label is quoted, not markup
