"""The "Your triplets" state without Panel or a server: samples, uploads, runs, CSV."""

from __future__ import annotations

import csv
import io
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

from loe_viz.app.triplets_state import (
    SAMPLE_DIR, SAMPLES, TRIPLET_METHODS, MethodResult, TripletsState, loe_landmark_plan,
    embed_triplets,
)
from loe_viz.io import read_triplets
from serverlab import DispatchQueue, cancel_at_first_long_pass

CAPITALS = "european_capitals_crowd.csv"


@pytest.fixture(autouse=True)
def _quiet_loe():
    # LOE warns about items missing from a landmark's comparisons; the state reports them itself
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _capitals_state() -> TripletsState:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = TripletsState(methods=["LOE", "STE", "LOESTE"])
        assert s.load_sample(CAPITALS), s.error
        assert s.run() is True
    return s


@pytest.fixture(scope="module")
def capitals_run():
    """A finished run on the capitals sample (read-only: tests that change it make their own)."""
    return _capitals_state()


def test_module_imports_no_panel():
    code = ("import sys, loe_viz.app.triplets_state; "
            "bad = [m for m in ('panel', 'holoviews', 'bokeh') if m in sys.modules]; "
            "print(bad); sys.exit(1 if bad else 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_every_bundled_sample_loads(name):
    s = TripletsState()
    assert s.load_sample(name), s.error
    ref = read_triplets(SAMPLE_DIR / name)
    sm = s.summary
    assert s.error == "" and s.source == name and s.sample == name and s.data_version == 1
    assert sm["n_items"] == ref.n_items and sm["n_triplets"] == ref.n_triplets
    heads = np.bincount(ref.triplets[:, 0], minlength=ref.n_items)
    assert sm["n_heads"] == int((heads > 0).sum())
    assert sm["per_head"]["max"] == heads.max() and sm["per_head"]["min"] == heads[heads > 0].min()
    assert sm["head_counts"].sum() == ref.n_triplets and np.all(np.diff(sm["head_counts"]) <= 0)
    assert sm["layout"] == ref.layout and sm["format"] == ref.format
    assert f"Read {ref.n_triplets:,} triplets over {ref.n_items:,} items from {name}" in sm["sentence"]
    assert s.truth is not None and s.truth.shape[0] == ref.n_items
    if name == CAPITALS:
        assert sm["labels"] == "text" and sm["label_examples"][:2] == ["Amsterdam", "Andorra la Vella"]
        assert sm["layout"] == "crowd"
    else:
        assert sm["labels"] == "none"


def test_a_sample_with_known_positions_sets_the_dimension_to_theirs():
    # the nearly noiseless 3-D sample was embedded at d = 2: 72 to 84 % held out instead of 95 %
    s = TripletsState()
    assert s.load_sample("gaussian_3d_triplets.npz") and s.n_components == 3
    s.n_components = 4  # the box can change it afterwards
    assert s.n_components == 4
    assert s.load_sample(CAPITALS) and s.n_components == 2
    assert s.load_sample("gaussian_3d_triplets.npz") and s.n_components == 3
    assert s.load_upload(b"0,1,2\n1,2,0\n2,0,1\n0,2,1\n", "mine.csv") and s.n_components == 3  # unknown: kept


def test_unknown_sample_is_an_error_and_keeps_data():
    s = TripletsState()
    assert s.load_sample(CAPITALS)
    data = s.data
    assert not s.load_sample("nope.csv")
    assert s.error.startswith("Unknown sample 'nope.csv'")
    assert s.data is data and s.source == CAPITALS


def test_malformed_upload_gives_the_message_and_keeps_data_and_results():
    s = _capitals_state()
    data, summary, results, info = s.data, s.summary, s.results, s.run_info
    version, data_version = s.version, s.data_version
    bad = b"head,winner,loser\n0,1,2\n0,1\n"
    assert s.load_upload(bad, "bad.csv") is False
    # the reader's advice (errors='skip') in the page's terms: the checkbox that does it
    assert s.error == ("Upload rejected: bad.csv: line 3: expected 3 fields (head, near, far), got 2; tick “Skip "
                       "rows with problems” and upload it again to read it without them")
    assert s.data is data and s.summary is summary and s.results is results and s.run_info is info
    assert s.version == version and s.data_version == data_version and s.source == CAPITALS
    assert s.embedding_csv().count("\n") == 1 + 44
    # other rejections say what is wrong, and still keep everything
    assert s.load_upload(b"", "empty.csv") is False
    assert s.error == "Upload rejected: empty.csv: the file is empty"
    assert s.load_upload(b"x,y\n1,2\n", "points.csv") is False
    assert s.error.startswith("Upload rejected: points.csv: line 1: is not a triplet file: its first line ['x', 'y']")
    assert s.load_upload(b"not a zip", "t.npz") is False
    assert s.error == "Upload rejected: t.npz: has the extension .npz but is not a NumPy .npz file"
    assert s.data is data and s.results is results


def test_good_upload_replaces_the_data_and_clears_results():
    s = TripletsState(methods=["STE"])
    assert s.load_sample(CAPITALS) and s.run()
    assert "STE" in s.results
    text = "Center,Left,Right,Answer\nParis,Rome,Oslo,Rome\nOslo,Paris,Rome,Paris\nRome,Oslo,Paris,Paris\n"
    assert s.load_upload(text.encode("utf-8"), "my answers.csv"), s.error
    assert s.error == "" and s.source == "my answers.csv" and s.sample == ""
    assert s.results == {} and s.run_info == {} and s.shown == ""
    assert s.summary["n_items"] == 3 and s.summary["n_triplets"] == 3 and s.summary["labels"] == "text"
    assert s.item_labels() == ["Oslo", "Paris", "Rome"]
    # a .npy upload (bytes), integer ids that are not 0..n-1 keep their ids as labels
    buf = io.BytesIO()
    np.save(buf, np.array([[10, 20, 30], [20, 30, 40], [30, 10, 40]], dtype=np.int64))
    assert s.load_upload(buf.getvalue(), "t.npy"), s.error
    assert s.summary["format"] == "npy" and s.summary["labels"] == "ids" and s.item_labels() == ["10", "20", "30", "40"]
    # an error after a good upload leaves the new data alone
    assert not s.load_upload(b"1,2\n", "short.csv")
    assert s.source == "t.npy"


def test_run_gives_accuracies_for_every_method(capitals_run):
    s = capitals_run
    assert s.error == "" and not s.running and s.progress == 100
    assert s.message.startswith("Done in")
    assert list(s.results) == ["LOE", "STE", "LOESTE"]
    for name, r in s.results.items():
        assert isinstance(r, MethodResult) and r.ok, (name, r.error)
        assert 0.0 <= r.test_accuracy <= 1.0 and 0.0 <= r.train_accuracy <= 1.0
        assert r.embedding.shape == (44, 2) and np.all(np.isfinite(r.embedding))
        assert r.seconds >= 0 and r.detail
        assert 0.0 <= r.procrustes < 1.0  # the sample's truth is known
    ste, warm, loe = s.results["STE"], s.results["LOESTE"], s.results["LOE"]
    assert ste.test_accuracy > 0.9 and loe.test_accuracy > 0.6
    assert warm.test_accuracy >= ste.test_accuracy - 0.02
    assert warm.label == "LOE-STE"
    info = s.run_info
    assert info["n_train"] + info["n_test"] == 4000 and info["n_test"] == 800
    assert info["n_landmarks"] == 44 and info["loe_triplets"] == info["n_train"]  # every head, evenly covered
    assert loe.landmarks.size == 44 and warm.landmarks.size == 20 and ste.landmarks is None  # 4 (d + 3) for its start
    assert re.match(r"LOE \(20 landmarks: the busiest heads, at most 4 × \(d \+ 3\) = 20, without LOE's held-out "
                    r"search, as it only gives STE its start\) on [\d,]+ landmark triplets, then STE on all 3,200: "
                    r"converged in \d+ iterations$", warm.detail), warm.detail
    assert re.fullmatch(r"converged in \d+ iterations", ste.detail), ste.detail
    assert 0.0 <= info["agreement_loe_ste"] <= 1.0
    assert ste.agreement_with_ste == 0.0 and 0.0 <= warm.agreement_with_ste < 0.05
    assert s.shown == s.best_method() and s.shown in ("STE", "LOESTE")
    xy, hl = s.display_coordinates("LOE")
    assert xy.shape == (44, 2) and hl.shape == (44, 2)


def test_capitals_are_drawn_aligned_to_their_true_map(capitals_run):
    # the recovered map was drawn turned and mirrored (Nicosia at the top) although the positions are known
    from loe_viz import metrics as M

    s = capitals_run
    truth = s.truth
    assert s.aligned_to_truth
    for method in ("LOE", "STE", "LOESTE"):
        xy, hl = s.display_coordinates(method)
        # the truth's own axes, about its centre
        np.testing.assert_allclose(xy, M.align(truth, s.results[method].embedding)[0] - truth.mean(axis=0))
        for k in range(2):  # east and north are east and north
            assert np.corrcoef(xy[:, k], truth[:, k])[0, 1] > 0.8, method
    nicosia, oslo = s.item_labels().index("Nicosia"), s.item_labels().index("Oslo")
    xy, _ = s.display_coordinates("STE")
    assert xy[nicosia, 1] < xy[oslo, 1] and xy[nicosia, 0] > xy[oslo, 0]  # south-east of Oslo
    assert "synthetic" in SAMPLES[CAPITALS].title and "not given by people" in SAMPLES[CAPITALS].description


def test_csv_has_labels_and_coordinates(capitals_run):
    s = capitals_run
    text = s.embedding_csv("LOESTE")
    lines = text.splitlines()
    rows = list(csv.reader(lines))
    assert rows[0] == ["item", "label", "x1", "x2"]
    assert [r[1] for r in rows[1:]] == [str(v) for v in s.data.labels]
    assert rows[1][1] == "Amsterdam" and len(rows) == 1 + 44
    Z = np.array([[float(v) for v in r[2:]] for r in rows[1:]])
    np.testing.assert_allclose(Z, s.results["LOESTE"].embedding, rtol=1e-7, atol=1e-9)
    assert s.csv_filename("LOESTE") == "european_capitals_crowd_loe-ste_embedding.csv"


def test_run_problems_are_reported_not_raised():
    s = TripletsState()
    assert s.run() is False and s.error.startswith("Nothing to embed yet")
    assert s.load_sample("gaussian_2d_landmark_triplets.csv")  # 10 heads only
    s.param.update(methods=["LOE", "STE"], n_components=8)  # LOE needs d + 3 = 11 heads
    assert s.run()
    assert s.results["LOE"].error.startswith("triplets have only 10 distinct head item(s)")
    assert not s.results["LOE"].ok and s.results["STE"].ok
    assert "Could not run: LOE" in s.message
    s.methods = []
    assert s.run() is False and s.error == "Choose at least one method."


def test_background_run_can_be_cancelled():
    s = TripletsState(methods=["STE", "TSTE", "SOE"])
    assert s.load_sample("gaussian_2d_crowd.csv")
    assert s.run(background=True)
    s.cancel()
    s.wait(60)
    assert not s.running
    assert s.message.startswith("Cancelled") and s.run_info["cancelled"] is True
    assert len(s.results) < 3


@pytest.mark.parametrize("method", ["STE", "LOESTE"])
def test_cancel_stops_a_baseline_inside_its_pass_over_the_triplets(monkeypatch, method):
    """A cancel is heard between blocks of a pass over the triplets (here 500), not only between
    iterations: no pass ends after it. The method that finished before keeps its result."""
    s = TripletsState(methods=["LOE", method])
    assert s.load_sample(CAPITALS), s.error
    seen = cancel_at_first_long_pass(monkeypatch, s.cancel, min_rows=2_000, block=500)  # the training share
    assert s.run(background=True)
    s.wait(120)
    assert seen["cancelled"] and seen["passes_after_cancel"] == 0
    assert not s.running and s.run_info["cancelled"] is True and s.message == "Cancelled."
    assert list(s.results) == ["LOE"] and s.results["LOE"].ok


def test_background_run_publishes_through_dispatch():
    s = TripletsState(methods=["LOE", "STE"])
    calls = []

    def dispatch(fn):
        calls.append(fn)
        fn()
    s.dispatch = dispatch
    assert s.load_sample("gaussian_3d_triplets.npz")
    s.n_components = 3
    assert s.run(background=True)
    s.wait(120)
    assert calls and not s.running and set(s.results) == {"LOE", "STE"}
    assert s.results["STE"].embedding.shape == (100, 3)
    assert s.display_coordinates()[0].shape == (100, 2)


def test_embed_triplets_directly():
    T = read_triplets(SAMPLE_DIR / "gaussian_2d_crowd.csv")
    seen = []
    results, info = embed_triplets(T.triplets, T.n_items, ["STE", "LOESTE"], test_fraction=0.25, seed=3,
                                   on_result=lambda r, f: seen.append((r.method, f)))
    assert seen == [("STE", 0.5), ("LOESTE", 1.0)]
    assert info["n_test"] == 2000 and not info["cancelled"]
    assert all(0.5 < r.test_accuracy <= 1.0 for r in results.values())
    with pytest.raises(ValueError, match="methods must name at least one"):
        embed_triplets(T.triplets, T.n_items, ["nope"])


def test_loe_landmark_plan_is_the_library_rule():
    # evenly covered heads: every one; a setting is taken as it is; too few heads: d + 3 (LOE says why)
    assert loe_landmark_plan(np.full(10, 100), 40, 2) == (10, False, 1000)
    assert loe_landmark_plan(np.full(10, 100), 40, 2, 7) == (7, False, 700)
    assert loe_landmark_plan([100, 90], 40, 2) == (5, False, 190)
    # Zipf-covered heads: the held-out search, among at most the 200 busiest
    counts = (20_000 / np.arange(1, 401)).astype(int)
    l, search, covered = loe_landmark_plan(counts[::-1], 1000, 2)
    assert search and l == 200 and covered == counts[:200].sum()
    # uniformly random heads: Poisson counts of 18 to 52 (all above n / 10) are even coverage, every one of them
    counts = np.random.default_rng(0).poisson(32, 150)
    assert counts.min() < 0.5 * counts.max() and loe_landmark_plan(counts, 150, 2) == (150, False, counts.sum())
    assert set(TRIPLET_METHODS) == {"LOE", "STE", "LOESTE", "TSTE", "SOE", "GNMDS", "CKL"}


# ---------------------------------------------------------------- uploads read off the event loop
_SMALL = b"0,1,2\n1,2,3\n2,3,0\n3,0,1\n0,2,3\n"


def _blocking_reader(monkeypatch):
    """Make the upload reader wait for ``release``; ``started`` is set when a read begins."""
    import threading

    import loe_viz.app.triplets_state as ts

    started, release = threading.Event(), threading.Event()
    real = ts._read_triplet_upload

    def slow(content, name, skip=False):
        started.set()
        assert release.wait(60)
        return real(content, name, skip)

    monkeypatch.setattr(ts, "_read_triplet_upload", slow)
    return started, release


def test_a_background_upload_is_read_on_a_worker_thread_and_applied_through_dispatch(monkeypatch):
    started, release = _blocking_reader(monkeypatch)
    s = TripletsState()
    q = DispatchQueue()
    s.dispatch = q
    assert s.load_sample(CAPITALS)
    try:
        assert s.load_upload(_SMALL, "mine.csv", background=True)  # returns at once: the read waits
        assert started.wait(60)
        assert s.reading == "mine.csv" and s.source == CAPITALS  # busy, the old data still there
        release.set()
        assert s._reads.wait(60)
        assert s.source == CAPITALS  # nothing touched from the worker thread
        q.run()  # the UI thread's turn
        assert s.reading == "" and s.source == "mine.csv" and s.summary["n_triplets"] == 5
    finally:
        release.set()
        s.close()


def test_a_newer_upload_a_sample_or_closing_supersedes_an_upload_being_read(monkeypatch):
    started, release = _blocking_reader(monkeypatch)
    s = TripletsState()
    q = DispatchQueue()
    s.dispatch = q
    try:
        s.load_upload(_SMALL, "first.csv", background=True)
        assert started.wait(60)
        s.load_upload(_SMALL + b"1,0,3\n", "second.csv", background=True)
        assert s.reading == "second.csv"
        release.set()
        assert s.wait(60)
        q.run()
        assert s.source == "second.csv" and s.summary["n_triplets"] == 6  # the first read's result was dropped
        # a sample chosen while an upload is read wins
        release.clear(); started.clear()
        s.load_upload(_SMALL, "third.csv", background=True)
        assert started.wait(60)
        assert s.load_sample(CAPITALS) and s.reading == ""
        release.set()
        assert s.wait(60)
        q.run()
        assert s.source == CAPITALS
        # a closed session takes nothing
        release.clear(); started.clear()
        s.load_upload(_SMALL, "fourth.csv", background=True)
        assert started.wait(60)
        s.close()
        release.set()
        assert s._reads.wait(60)
        q.run()
        assert s.data is None and s.source == CAPITALS
    finally:
        release.set()
        s.close()


def test_a_rejected_background_upload_sets_the_error_on_the_ui_thread():
    s = TripletsState()
    q = DispatchQueue()
    s.dispatch = q
    assert s.load_sample(CAPITALS)
    assert s.load_upload(b"0,1\n", "bad.csv", background=True)
    assert s.wait(60) and s.error == ""
    q.run()
    assert s.error.startswith("Upload rejected: bad.csv: line 1:") and s.source == CAPITALS and s.reading == ""
    s.close()


def test_skip_bad_rows_reads_a_file_without_its_broken_rows():
    s = TripletsState()
    bad = b"0,1,2\n1,2,3\n2,3\n3,0,1\n0,2,3\n"
    assert not s.load_upload(bad, "bad.csv")
    assert "“Skip rows with problems”" in s.error and "errors=" not in s.error
    s.skip_bad_rows = True
    assert s.load_upload(bad, "bad.csv"), s.error
    assert s.summary["n_triplets"] == 4 and s.summary["n_skipped"] == 1 and s.error == ""


@pytest.mark.parametrize("message, shown", [
    ("a.csv: is UTF-16 text; pass encoding='utf-16' or save it as UTF-8", "a.csv: is UTF-16 text; save it as UTF-8"),
    ("a.csv: line 2: mixed types: head item '5' is a number, but the file's ids are text labels; pass "
     "item_type='str' to read numbers as labels too",
     "a.csv: line 2: mixed types: head item '5' is a number, but the file's ids are text labels"),
    ("a.npy: the array needs 3,000 bytes, over the limit of 1,000 bytes (raise it with read_triplets(..., "
     "limits={'array_bytes': ...}) or loe_viz.io.MAX_ARRAY_BYTES)",
     "a.npy: the array needs 3,000 bytes, over the limit of 1,000 bytes"),
    ("a.csv: line 1: 4 columns without a header: name them (head,left,right,winner for crowd answers, or "
     "head,j,k,y) or pass layout=",
     "a.csv: line 1: 4 columns without a header: name them (head,left,right,winner for crowd answers, or head,j,k,y)"),
])
def test_the_readers_advice_is_given_in_the_pages_terms(message, shown):
    from loe_viz.app.uploads import in_app_terms
    assert in_app_terms(message) == shown


def test_real_rejections_carry_no_library_advice():
    s = TripletsState()
    for name, content in [("u16.csv", "0,1,2\n1,2,0\n".encode("utf-16")),
                          ("four.csv", b"0,1,2,1\n1,2,0,0\n"),  # (mixed ids are read as labels)
                          ("bad.csv", b"0,1,2\n0,1\n")]:
        assert not s.load_upload(content, name)
        assert s.error.startswith(f"Upload rejected: {name}: ")
        for advice in ("pass ", "encoding=", "item_type", "errors=", "limits=", "read_triplets", "MAX_"):
            assert advice not in s.error, s.error


# ---------------------------------------------------------------- names and labels from users
def test_a_file_name_with_line_breaks_writes_no_row_into_the_csv():
    s = TripletsState(methods=["STE"])
    name = "data\n=1+2,=cmd|' -C calc'!A0\n.csv"
    rows = "".join(f"{i % 7},{(i + 1) % 7},{(i + 3) % 7}\n" for i in range(60)).encode()
    assert s.load_upload(rows, name), s.error
    assert s.source == "data\ufffd=1+2,=cmd|' -C calc'!A0\ufffd.csv"
    assert s.run()
    text = s.embedding_csv()
    lines = text.splitlines()
    assert lines[0] == "item,label,x1,x2" and len(lines) == 1 + s.data.n_items
    assert not any(l.startswith("=") for l in lines)
    assert "/" not in s.csv_filename() and "\n" not in s.csv_filename()


def test_the_csv_reads_back_whole_with_pandas_labels_with_a_hash_too():
    """It began with a '# … embedding of …' line: pandas.read_csv took it for the header (a table of the wrong
    shape, no error), and with comment='#' the unquoted labels '#ff0000' emptied their rows."""
    import pandas as pd

    s = TripletsState(methods=["STE"])
    names = ["#ff0000", "#00ff00", "#0000ff", "white", "rock #1", "=1+1", "a,b", 'say "hi"']
    upload = io.StringIO()
    csv.writer(upload, lineterminator="\n", quoting=csv.QUOTE_ALL).writerows(
        [["head", "winner", "loser"]] + [[names[i % 8], names[(i + 1) % 8], names[(i + 3) % 8]] for i in range(120)])
    assert s.load_upload(upload.getvalue().encode(), "colours.csv"), s.error
    assert s.run() and s.results["STE"].ok
    text = s.embedding_csv("STE")
    for table in (pd.read_csv(io.StringIO(text)), pd.read_csv(io.StringIO(text), comment="#")):
        assert list(table.columns) == ["item", "label", "x1", "x2"] and len(table) == 8
        assert table["label"].tolist() == [("'" + v if v.startswith("=") else v) for v in s.item_labels()]
        np.testing.assert_array_equal(table[["x1", "x2"]].to_numpy(), s.results["STE"].embedding)  # exact


def test_a_name_is_kept_as_given_and_bidi_overrides_are_removed():
    s = TripletsState()
    assert s.load_upload(_SMALL, "http://example.org/data.csv"), s.error
    assert s.source == "http://example.org/data.csv"  # not cut to "data.csv"
    assert s.csv_filename("STE") == "http_example.org_data_ste_embedding.csv"
    assert s.load_upload(_SMALL, "x\u202egnp.csv"), s.error
    assert s.source == "xgnp.csv"
    labels = "a\u202eb,c\u2066d,e\n" * 2 + "c\u2066d,e,a\u202eb\n"
    assert s.load_upload(labels.encode(), "l.csv"), s.error
    assert sorted(s.display_labels()) == ["ab", "cd", "e"]


# ---------------------------------------------------------------- integer settings
def test_a_whole_number_out_of_range_is_quoted_as_typed():
    """One past the largest seed was quoted as "got 4.29497e+09", beside the range written out in full."""
    s = TripletsState()
    assert not s.set_setting("seed", 2**32)
    assert s.setting_error == "Seed must be from 0 to 4,294,967,295; got 4,294,967,296. It stays 0."
    assert not s.set_setting("seed", 4294967296.0)  # as the page may send it
    assert s.setting_error == "Seed must be from 0 to 4,294,967,295; got 4,294,967,296. It stays 0."
    assert not s.set_setting("n_landmarks", 123456)  # each box's refusal, in the boxes' order
    assert s.setting_error == ("LOE landmarks must be from 4 to 500 (empty: auto); got 123456. It stays auto. "
                               "Seed must be from 0 to 4,294,967,295; got 4,294,967,296. It stays 0.")


def test_a_number_too_long_for_an_integer_box_is_refused_with_a_message():
    s = TripletsState()
    assert not s.set_setting("seed", 1e23)
    assert s.seed == 0 and s.setting_error == "Seed must be from 0 to 4,294,967,295; got 1e+23. It stays 0."
    assert s.set_setting("seed", 0) and s.setting_error == ""
    assert not s.set_setting("n_components", 2.5)
    assert s.setting_error == "Dimension d must be a whole number from 1 to 10; got 2.5. It stays 2."
    assert s.set_setting("n_components", 3.0) and s.n_components == 3 and s.setting_error == ""
    assert not s.set_setting("n_landmarks", float("inf")) and s.n_landmarks is None


@pytest.mark.parametrize("rows,first_problem", [
    ("Nan,Bob,Alice\nBob,Nan,Alice\nAlice,Bob,Nan\n", "line 2: non-integer item index 'Nan' in the head column"),
    ("Dune,1984,Emma\nEmma,Dune,1984\n1984,Emma,Dune\n",
     "line 2: mixed types: closer item '1984' is a number, but the file's ids are text labels"),
    ("1984,Dune,Emma\nEmma,Dune,1984\nDune,1984,Emma\n",
     "line 2: mixed types: closer item 'Dune' is not an integer, but the file's ids are integers"),
])
def test_labels_that_look_like_numbers_are_read_as_labels_with_a_note(rows, first_problem):
    """The reader's advice, item_type='str', has no box on the page and was cut from its message: a file of
    book titles with '1984', or of people with one called 'Nan', was refused (or, with rows skipped, lost
    those rows). It is now read as that advice says, and a note says why."""
    s = TripletsState()
    assert s.load_upload(f"head,winner,loser\n{rows}".encode(), "books.csv"), s.error
    assert sorted(s.item_labels()) == sorted({x for r in rows.split() for x in r.split(",")})
    assert s.data.n_triplets == 3 and s.data.n_skipped == 0
    assert s.summary["notes"][-1] == f"every id was read as a text label ({first_problem})"
    s.skip_bad_rows = True  # labels read, not rows skipped
    assert s.load_upload(f"head,winner,loser\n{rows}".encode(), "books.csv"), s.error
    assert s.data.n_triplets == 3 and s.data.n_skipped == 0
    assert s.summary["notes"][-1].startswith("every id was read as a text label, which skips 0 row(s) instead of ")


def test_a_typo_among_integer_ids_stays_a_row_with_a_problem():
    """Read as labels, integer ids with one typo ('1O', 'nan') became text: '7' and '7.0' two items, '1O' one more,
    the box's request to skip rows with problems overridden."""
    rows = "".join(f"{i % 30},{(i + 1) % 30},{(i + 3) % 30}\n" for i in range(300))
    rows += "".join(f"{i % 30}.0,{(i + 1) % 30}.0,{(i + 3) % 30}.0\n" for i in range(300))
    for typo in ("5,7,1O", "5,7,nan"):
        s = TripletsState()
        text = f"i,j,k\n{rows}{typo}\n".encode()
        assert not s.load_upload(text, "ids.csv")
        assert s.error.startswith("Upload rejected: ids.csv: line 602: ") and "tick “Skip rows" in s.error, s.error
        s.skip_bad_rows = True  # the box asks for rows with problems to be dropped: the typo's row is one
        assert s.load_upload(text, "ids.csv"), s.error
        assert s.data.n_skipped == 1 and s.data.labels.dtype.kind == "i" and s.data.n_items == 30


def test_a_file_refused_both_ways_names_what_is_wrong_once_ids_are_labels():
    """It named '1984' (which the page reads as a label), not the row that keeps the file from being read."""
    s = TripletsState()
    text = (b"head,closer,farther\nDune,Emma,1984\nEmma,Dune,Ulysses\nUlysses,Dune,Emma\n1984,Dune,Emma\n"
            b"Emma,Emma,Dune\n")
    assert not s.load_upload(text, "books.csv")
    assert s.error.startswith("Upload rejected: books.csv: line 6: the row repeats an item ('Emma', 'Emma', 'Dune')")


def test_films_named_by_years_and_words_are_labels_and_ids_such_as_halves_lead_somewhere():
    """The first guard against typos (text labels at least half the items) refused films named mostly by years
    ('1984', '2001', 'Alien'): ticking the box then dropped a third of the rows; ids such as '0.5' ended, box
    ticked, at 'no valid rows'. A typo is rare in the rows; these labels are not."""
    films = "".join(f"{r}\n" for r in ["1984,2001,Alien", "1917,300,1984", "2001,1917,300", "Alien,Heat,1984",
                                        "300,2012,1941", "1941,1776,2012"] * 30)
    halves = "".join(f"{r}\n" for r in ["0.5,1.5,2.5", "1.5,2.5,3.5", "2.5,0.5,3.5", "3.5,0.5,1.5"] * 20)
    for skip in (False, True):
        s = TripletsState(skip_bad_rows=skip)
        assert s.load_upload(f"head,near,far\n{films}".encode(), "films.csv"), s.error
        assert s.data.n_triplets == 180 and sorted(s.item_labels()) == sorted(
            ["1984", "2001", "Alien", "1917", "300", "Heat", "2012", "1941", "1776"])
        assert s.summary["notes"][-1].startswith("every id was read as a text label")
    s = TripletsState()
    assert not s.load_upload(f"head,near,far\n{halves}".encode(), "halves.csv")
    assert "tick “Skip rows with problems”" in s.error
    s.skip_bad_rows = True  # as the message advises: read, as labels
    assert s.load_upload(f"head,near,far\n{halves}".encode(), "halves.csv"), s.error
    assert s.data.n_triplets == 80 and sorted(s.item_labels()) == ["0.5", "1.5", "2.5", "3.5"]


def test_a_baseline_s_ending_is_said_in_words():
    """"then STE on all 2,400: 1000 iterations, max_iter" gave the attribute's value for a student to decode."""
    from types import SimpleNamespace

    from loe_viz.app.triplets_state import _stopped
    from loe_viz.baselines import STOP_REASONS

    said = {why: _stopped(SimpleNamespace(n_iter_=1000, stop_reason_=why)) for why in STOP_REASONS}
    assert said == {"converged": "converged in 1,000 iterations",
                    "max_iter": "stopped at its limit of 1,000 iterations, not converged",
                    "callback": "stopped after 1,000 iterations",
                    "time_budget": "stopped by the time limit after 1,000 iterations, not converged",
                    "line_search": "stopped after 1,000 iterations: no step lowered the loss further"}
    assert _stopped(SimpleNamespace(n_iter_=1, stop_reason_="converged")) == "converged in 1 iteration"
