"""The explorer's state classes, without Panel or a server."""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
import time
from types import SimpleNamespace

import numpy as np
import pytest

from loe_viz.points import POINT_KINDS
from loe_viz.app.compare_state import CompareState
from loe_viz.app.jobs import Cancelled, JobRunner, direct_dispatch
from loe_viz.app.limits import estimate_run
from loe_viz.app.state import CONFIG_PARAMS, STEPS, URL_PARAMS, ExplorerState
from loe_viz.app.warmup import warm_up
from serverlab import DispatchQueue, cancel_at_first_long_pass

SMALL = dict(n=200, seed=1)


@pytest.fixture(scope="module")
def fitted():
    s = ExplorerState(**SMALL)
    assert s.error == ""
    return s


def test_state_module_imports_no_panel():
    code = ("import sys, loe_viz, loe_viz.app, loe_viz.app.state; "
            "bad = [m for m in ('panel', 'holoviews', 'bokeh') if m in sys.modules]; "
            "print(bad); sys.exit(1 if bad else 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr


def test_defaults():
    s = ExplorerState(auto_update=False)
    assert s.kind == "gaussian" and s.d == 2 and s.n_landmarks is None
    assert s.n_landmarks_effective == s.d + 3
    assert set(POINT_KINDS) | {"uploaded"} == set(s.param.kind.objects)
    assert s.budget_unit == "total_c" and s.landmark_selection == "random" and s.offset == "lambda2"
    assert s.step == 0 and len(STEPS) == 7
    assert s.points is None and s.model is None and s.error == "" and s.version == 0
    s.d = 4
    assert s.n_landmarks_effective == 7


def test_pipeline_produces_stages(fitted):
    s = fitted
    st = s.model.stages_
    l = s.metrics["n_landmarks"]
    assert l == s.d + 3
    assert st.ranking.R.shape == (s.n, l)
    assert st.shifts.W.shape == (l, l) and st.shifts.s.shape == (l,)
    assert st.edm.E.shape == (l, l)
    assert st.lmds.embedding.shape == (s.n, 2)
    assert s.points.shape == (s.n, 2) and s.aligned.shape == (s.n, 2)
    assert len(s.colors) == s.n and all(c.startswith("#") and len(c) == 7 for c in s.colors[:10])
    # the recorded triplets are the ones LOE used: heads are the landmarks
    assert s.triplets.shape == (s.metrics["n_triplets"], 3)
    assert set(np.unique(s.triplets[:, 0])) == set(np.asarray(s.model.landmarks_).tolist())
    assert s.metrics["n_triplets"] == s.model.n_triplets_used_
    assert 0 <= s.metrics["procrustes"] < 0.5
    assert 0 <= s.metrics["triplet_error"] < 0.4
    assert s.version == 1 and "LOE fitted" in s.status


def test_maxmin_and_offset_variant():
    s = ExplorerState(landmark_selection="maxmin", offset="mean", n_landmarks=7, **SMALL)
    assert s.error == ""
    assert s.model.landmark_selection == "maxmin" and s.model.offset == "mean"
    assert len(s.model.landmarks_) == 7


def test_recorded_triplets_are_built_on_demand_and_score_like_the_array(fitted):
    """The (m, 3) array is 18 MB at n = 2000: the walk-through builds it only for the steps that
    show triplets, and scores the training answers from the record kept by head."""
    from loe_viz.metrics import triplet_accuracy

    s = ExplorerState(n=300, seed=5)
    assert s.error == ""
    rec = s.recorded
    assert rec._array is None  # nothing has asked for the array yet
    T = s.triplets
    assert T is s.triplets  # built once, then shared
    assert T.shape == (len(rec), 3) and len(rec) == s.metrics["n_triplets"]
    assert s.metrics["train_accuracy"] == pytest.approx(triplet_accuracy(s.model.embedding_, T), abs=1e-12)
    s.close()
    assert s.triplets is None


def test_a_record_keeps_whole_triplets_and_a_callers_buffers_as_they_were_answered():
    from loe_viz.app.pipeline import RecordedTriplets, RecordingOracle
    from loe_viz.metrics import triplet_accuracy
    from loe_viz.oracle import TripletOracle

    X = np.random.default_rng(0).normal(size=(50, 2))
    rec = RecordingOracle(TripletOracle(X, random_state=1))
    uniform = rec.uniform_triplets(300)  # whole triplets, recorded first
    near, far = np.empty(400, np.int32), np.empty(400, np.int32)
    rec.comparisons(7, 400, 11, out=(near, far))
    answered = np.column_stack([np.full(400, 7), near, far])
    near[:] = 0  # the caller reuses its buffers: the record is unchanged
    own = rec.comparisons(3, 200, 12)  # arrays the oracle allocated
    record = rec.record()
    assert rec.blocks == [] and isinstance(record, RecordedTriplets)
    want = np.vstack([uniform, np.column_stack([np.full(200, 3), *own]), answered])  # by head: 3 before 7
    assert np.array_equal(record.array(), want)
    Z = np.random.default_rng(2).normal(size=(50, 2))
    assert record.agreement(Z) == pytest.approx(triplet_accuracy(Z, want), abs=1e-12)
    assert np.isnan(RecordedTriplets().agreement(Z)) and RecordedTriplets().array().shape == (0, 3)


@pytest.mark.parametrize("selection", ["random", "maxmin"])
def test_recorded_triplets_do_not_depend_on_which_thread_finished_first(monkeypatch, selection):
    """LOE answers its landmarks on two threads; the triplets the Sample and Compare steps use
    come back in one order, whichever landmark finished first."""
    from loe_viz.oracle import TripletOracle

    answer = TripletOracle.comparisons
    runs = []
    for slow_parity in (0, 1):  # the even or the odd heads finish last
        def slow(self, head, *args, _parity=slow_parity, **kwargs):
            if head % 2 == _parity:
                time.sleep(0.05)
            return answer(self, head, *args, **kwargs)

        monkeypatch.setattr(TripletOracle, "comparisons", slow)
        s = ExplorerState(n=400, seed=3, n_jobs=2, landmark_selection=selection)
        assert not s.error, s.error
        runs.append(np.asarray(s.triplets).copy())
        s.close()
    assert runs[0].shape == runs[1].shape and runs[0].shape[0] > 0
    assert np.array_equal(runs[0], runs[1])
    heads = runs[0][:, 0]
    assert np.all(np.diff(heads) >= 0)  # grouped by head


def test_per_landmark_budget_unit():
    s = ExplorerState(budget_unit="per_landmark", budget=500, **SMALL)
    assert s.error == ""
    assert s.metrics["per_landmark"] == 500
    assert s.metrics["n_triplets"] == 500 * 5


@pytest.mark.parametrize("change, starts", [
    ({"n": 4}, "n "),
    ({"n": 0}, "n "),
    ({"budget": 0}, "Budget"),
    ({"budget": -3.0}, "Budget"),
    ({"budget_unit": "per_landmark", "budget": 3}, "Budget"),
    ({"n_landmarks": 3}, "Landmarks ℓ"),
    ({"seed": -5}, "Seed"),
    ({"n_landmarks": 500}, "n "),
    ({"temperature": -1.0}, "temperature"),
    ({"kind": "swiss_roll"}, "d "),
    ({"d": 0}, "d "),
    ({"kind": "uploaded"}, "Ground truth “uploaded” needs a point file"),
])
def test_bad_input_sets_error_and_keeps_results(change, starts, caplog):
    s = ExplorerState(**SMALL)
    before = (s.version, s.points, s.model, s.metrics)
    with caplog.at_level(logging.DEBUG):
        s.param.update(**change)  # must not raise
    assert s.error.startswith(starts), s.error
    assert (s.version, s.points, s.model, s.metrics) == before
    assert not [r for r in caplog.records if r.exc_info and r.levelno >= logging.WARNING]
    # fixing the input clears the message and computes again
    s.param.update(**{k: ExplorerState.param[k].default for k in change})
    assert s.error == "" and s.version == before[0] + 1


def test_too_few_landmarks_and_a_negative_seed_are_said_in_the_sidebar_words():
    # typed 2 in "Landmarks ℓ": the message named the code's n_landmarks; a seed of -5 was not refused
    s = ExplorerState(**SMALL)
    v = s.version
    s.n_landmarks = 2
    assert s.error == "Landmarks ℓ must be at least d + 3 = 5 (got 2)"
    s.n_landmarks = 1  # the message follows each value typed
    assert s.error == "Landmarks ℓ must be at least d + 3 = 5 (got 1)"
    s.n_landmarks = None
    assert s.error == "" and s.version == v + 1
    s.seed = -5
    assert s.error == "Seed must be 0 or more (got -5)"
    assert s.config_used["seed"] == 1 and s.version == v + 1  # the results shown are still seed 1's
    s.param.update(seed=1, n_landmarks=9, n=10)
    assert s.error == "n must be at least ℓ + 2 = 11 (ℓ = 9 landmarks for d = 2), got 10"


def _npy_header(shape) -> bytes:
    import io

    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f8", "fortran_order": False, "shape": shape})
    return buf.getvalue()


@pytest.mark.parametrize("content, name", [
    (b"x,y\n1,2\nnan,3\n4,5\n5,6\n", "nan.csv"),
    (b"hello, world\nthis is, not a table\n", "words.csv"),
    (bytes(range(256)) * 4, "binary.csv"),
    (b"", "empty.csv"),
    (b"1,2\n3\n4,5\n", "ragged.csv"),
    (b"\x93NUMPY junk", "bad.npy"),
    (_npy_header((10**11, 2)) + bytes(64), "huge.npy"),  # declares 1.6 TB: refused before NumPy allocates
])
def test_bad_upload_sets_error_and_keeps_results(content, name):
    s = ExplorerState(**SMALL)
    before = (s.version, s.points, s.kind, s.n)
    assert s.load_file(content, name) is False
    assert s.error.startswith("Upload rejected") and name in s.error
    assert (s.version, s.points, s.kind, s.n) == before
    if name == "huge.npy":
        assert s.error.endswith("(its header declares shape (100000000000, 2), 1,600,000,000,000 bytes, but only 64 "
                                "follow)")


@pytest.mark.parametrize("content, message", [
    (b"x,y\n" + b"1,1\n" * 200_001, "all 200,001 points are the same point, so every distance is 0 and "
                                    "there is nothing to compare: upload points at different positions"),
    (b"x,y\n" + b"1,1\n2,2\n3,1\n" * 70_001, "only 3 different points among the 210,003 rows; an "
                                              "embedding needs at least 7 (5 landmarks and more items)"),
])
def test_an_upload_of_too_few_different_points_is_refused_at_any_row_count(content, message):
    """Over 200,000 rows the different points went uncounted: 200,001 copies of one point were taken, and
    the page said "X and Z must each contain more than one distinct point" after the whole fit."""
    s = ExplorerState(**SMALL)
    before = (s.version, s.kind, s.n)
    assert s.load_file(content, "same.csv") is False
    assert s.error == f"Upload rejected: same.csv: {message}", s.error
    assert (s.version, s.kind, s.n) == before
    s.close()


def test_a_points_upload_with_more_columns_than_the_explorer_takes_is_refused_before_any_run():
    """A 10 MB table of 60 rows and 83,000 columns was taken: its run then tried to allocate 51.3 GiB
    (the Procrustes alignment's D x D matrix) and took the server's memory, or failed with MemoryError."""
    import io

    rng = np.random.default_rng(0)
    X = rng.integers(0, 10, size=(10, 1_001))
    text = "\n".join(",".join(map(str, row)) for row in X).encode()
    buf = io.BytesIO()
    np.save(buf, X.astype(float))
    for content, name in ((text, "wide.csv"), (buf.getvalue(), "wide.npy")):
        s = ExplorerState(**SMALL)
        before = (s.version, s.kind, s.n)
        assert s.load_file(content, name) is False
        assert s.error == (f"Upload rejected: {name} has 1,001 columns, one per coordinate; this explorer takes "
                           "points with at most 1,000 coordinates"), s.error
        assert (s.version, s.kind, s.n) == before
        s.close()
    # as many as it takes: read, and run
    s = ExplorerState(**SMALL)
    assert s.load_file("\n".join(",".join(map(str, row[:1_000])) for row in X).encode(), "wide_ok.csv")
    assert s.error == "" and s.points.shape == (10, 1_000)
    s.close()


def test_an_uploaded_point_far_beyond_the_others_is_named_with_the_result():
    # a coordinate of 1e200 among points near 1: Procrustes 0.9999, coin-flip answers, and not a word why
    rng = np.random.default_rng(4)
    X = rng.normal(size=(120, 2))
    X[7, 1] = 1e200
    text = "x,y\n" + "\n".join(f"{a!r},{b!r}" for a, b in X.tolist())
    s = ExplorerState(n=60, seed=1)
    try:
        assert s.load_file(text.encode(), "far.csv") is True
        assert s.error == "" and s.status.endswith(
            "(item 7 lies 1e+200 times farther from the centre than the median item: its distances set the scale of "
            "all the others, which then look like one point, and the answers about them are noise; remove it or "
            "rescale)"), s.status
        X[7, 1] = 1e3  # far, but the others keep a scale of their own
        assert s.load_file(("x,y\n" + "\n".join(f"{a!r},{b!r}" for a, b in X.tolist())).encode(), "near.csv") is True
        assert s.error == "" and "farther" not in s.status
    finally:
        s.close()


def test_an_upload_over_the_explorers_limit_uses_a_subsample_and_says_so(monkeypatch):
    """A 10^6-row upload set n = 10^6, then the run was refused, leaving the page half switched."""
    from loe_viz.app import limits

    monkeypatch.setattr(limits, "MAX_N", 100)
    rng = np.random.default_rng(4)
    text = "x,y\n" + "\n".join(f"{a:.6f},{b:.6f}" for a, b in rng.normal(size=(150, 2)))
    s = ExplorerState(n=60, seed=1)
    assert s.load_file(text.encode(), "pts.csv") is True
    assert s.error == "" and s.kind == "uploaded" and s.n == 100 and s.points.shape == (100, 2)
    assert s.status.endswith("(pts.csv has 150 points; a random 100 of them are used, the most this explorer takes)")
    s.seed = 2
    assert s.error == "" and "pts.csv has" not in s.status
    s.close()


_POINTS = ("x,y\n" + "".join(f"{i % 7},{(i * i) % 11}\n" for i in range(60))).encode()


def _blocking_points_reader(monkeypatch):
    """Make the points reader wait for ``release``; ``started`` is set when a read begins (on which thread)."""
    import loe_viz.app.state as state_module

    started, release = threading.Event(), threading.Event()
    threads = []
    real = state_module.read_points_upload

    def slow(content, name):
        threads.append(threading.current_thread().name)
        started.set()
        assert release.wait(60)
        return real(content, name)

    monkeypatch.setattr(state_module, "read_points_upload", slow)
    return started, release, threads


def test_a_background_points_upload_is_read_on_a_worker_thread_and_applied_through_dispatch(monkeypatch):
    """The walk-through's points upload was parsed on the server's event loop, stalling every visitor."""
    started, release, threads = _blocking_points_reader(monkeypatch)
    s = ExplorerState(**SMALL)
    q = DispatchQueue()
    s.dispatch = q
    try:
        assert s.load_file(_POINTS, "mine.csv", background=True)  # returns at once: the read waits
        assert started.wait(60) and threads == ["loe-viz-upload"]
        assert s.reading == "mine.csv" and s.kind == "gaussian" and s.n == 200  # the old results still there
        release.set()
        assert s.wait(60)
        assert s.kind == "gaussian" and s.uploaded_name == ""  # nothing touched from the worker thread
        q.run()  # the UI thread's turn: the upload is taken and its run applied
        assert s.reading == "" and s.kind == "uploaded" and s.n == 60 and s.error == ""
        assert s.config_used["uploaded_name"] == "mine.csv" and s.points.shape == (60, 2)
    finally:
        release.set()
        s.close()


def test_a_newer_points_upload_another_ground_truth_or_closing_supersedes_a_read(monkeypatch):
    started, release, _ = _blocking_points_reader(monkeypatch)
    s = ExplorerState(**SMALL)
    q = DispatchQueue()
    s.dispatch = q
    try:
        s.load_file(_POINTS, "first.csv", background=True)
        assert started.wait(60)
        s.load_file(_POINTS + b"3,5\n", "second.csv", background=True)
        assert s.reading == "second.csv"
        release.set()
        assert s.wait(60)
        q.run()
        assert s.uploaded_name == "second.csv" and s.n == 61  # the first read's result was dropped
        # another ground truth chosen while a file is read wins
        release.clear(); started.clear()
        s.load_file(_POINTS, "third.csv", background=True)
        assert started.wait(60)
        s.kind = "gaussian"
        assert s.reading == ""
        release.set()
        assert s.wait(60)
        q.run()
        assert s.kind == "gaussian" and s.uploaded_name == "second.csv"
        # a closed session takes nothing
        release.clear(); started.clear()
        s.load_file(_POINTS, "fourth.csv", background=True)
        assert started.wait(60)
        s.close()
        release.set()
        assert s.wait(60)
        q.run()
        assert s.uploaded_name == "second.csv" and s._uploaded is None
    finally:
        release.set()
        s.close()


def test_a_rejected_background_points_upload_sets_the_error_on_the_ui_thread():
    s = ExplorerState(**SMALL)
    q = DispatchQueue()
    s.dispatch = q
    before = (s.version, s.kind, s.n)
    assert s.load_file(b"x,y\n1,2\n", "bad.csv", background=True)
    assert s.wait(60) and s.error == ""
    q.run()
    assert s.error == "Upload rejected: bad.csv must have at least 3 points, got 1" and s.reading == ""
    assert (s.version, s.kind, s.n) == before
    s.close()


def test_upload_good_table_then_d_too_large():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 3))
    text = "a,b,c\n" + "\n".join(",".join(f"{v:.6f}" for v in row) for row in X)
    s = ExplorerState(**SMALL)
    assert s.load_file(text.encode(), "pts.csv") is True
    # d becomes the points' dimension (3-D points at d = 2 scored 0.34 with nothing saying why)
    assert s.error == "" and s.kind == "uploaded" and s.n == 60 and s.d == 3
    np.testing.assert_allclose(s.points, X, atol=1e-6)
    assert s.config_used["uploaded_name"] == "pts.csv"
    v = s.version
    s.d = 4  # more than the 3 columns
    assert s.error.startswith("d must be <= 3") and s.version == v
    s.d = 3  # back from the refused 4
    assert s.error == "" and s.aligned.shape == (60, 3)
    s.n = 40  # a seeded subsample of the rows
    assert s.error == "" and s.points.shape == (40, 3)
    s.n = 61
    assert s.error.startswith("n must be <= 60")


def test_uploaded_points_set_d_to_their_dimension_where_the_sidebar_offers_it():
    """3-D points were embedded at the sidebar's d = 2: a Procrustes error of 0.34 and no hint why
    ("Your triplets" fits its 3-D sample at d = 3)."""
    X = np.random.default_rng(4).normal(size=(50, 12))
    s = ExplorerState(**SMALL)
    wide = "\n".join(",".join(f"{v:.5f}" for v in row) for row in X).encode()
    assert s.load_file(wide, "wide.csv") and s.d == 2  # 12-D: more than the sidebar's 10, d stays
    assert s.load_file(wide.replace(b",", b"\t"), "wide.tsv") and s.d == 2
    narrow = "\n".join(",".join(f"{v:.5f}" for v in row[:5]) for row in X).encode()
    assert s.load_file(narrow, "five.csv") and s.d == 5 and s.error == "" and s.aligned.shape == (50, 5)
    s.close()


def test_leaving_an_upload_brings_back_the_ground_truth_before_it():
    """Removing the points file from its box emptied the box only: the upload stayed in use (n = 200)."""
    s = ExplorerState(**{**SMALL, "seed": 3, "temperature": 0.5})
    before = (s.kind, s.n, s.d)
    points = np.random.default_rng(5).normal(size=(60, 3))
    text = "\n".join(",".join(f"{v:.5f}" for v in row) for row in points).encode()
    assert s.load_file(text, "first.csv") and (s.kind, s.n, s.d) == ("uploaded", 60, 3)
    undo_first = s._upload_undo()
    assert s.load_file(text[: text.rfind(b"\n")], "second.csv") and s.n == 59
    undo_first()  # the first file's removal: the second is in use, nothing changes
    assert s.kind == "uploaded" and s.uploaded_name == "second.csv" and s.n == 59
    v = s.version
    s._upload_undo()()  # the second file's removal: the truth before both uploads, recomputed
    assert (s.kind, s.n, s.d) == before and s.uploaded_name == "" and s._uploaded is None
    assert s.version > v and s.error == "" and s.points.shape == (before[1], before[2])
    assert (s.seed, s.temperature) == (3, 0.5)  # nothing else changes
    # an upload left after another ground truth was chosen: that one stays, the upload is no longer offered
    assert s.load_file(text, "third.csv") and s.kind == "uploaded"
    undo = s._upload_undo()
    s.kind = "moons"
    v = s.version
    undo()
    assert s.kind == "moons" and s.uploaded_name == "" and s._uploaded is None and s.version == v
    s.close()


@pytest.mark.parametrize("content, message", [
    (b"x,y\n1,2\n\xfc,3\n4,5\n", "bad.csv: line 3: is not valid UTF-8 text (byte 0xfc); save it as UTF-8"),
    (",".join(["1"] * 10**6).encode(), "bad.csv: line 1: 1,000,000 fields on one line; a point table has one "
                                      "column per coordinate (at most 1,000 here): is this a point table?"),
    (b"\xff\xfex\x00,\x00", "bad.csv: is UTF-16 text; save it as UTF-8"),
    ("x,y\n1,2\n".encode("utf-16-le"), "bad.csv: is UTF-16 text (without a byte-order mark); save it as UTF-8"),
    (b"1,2\n3,4\n\x00\x01", "bad.csv: is not a point table: binary content (a NUL byte on line 3); supported: "
                             "CSV/TSV/whitespace text, .npy"),
])
def test_a_points_file_that_is_no_text_table_is_refused_with_its_line_and_byte(content, message):
    """The points box said "not a text file (it is not UTF-8)" where the triplets box named line and byte,
    and "must have at least 3 points, got 1" for a line of 1,000,000 fields."""
    s = ExplorerState(**SMALL)
    assert s.load_file(content, "bad.csv") is False
    assert s.error == f"Upload rejected: {message}"
    s.close()


def test_url_params_round_trip():
    a = ExplorerState(kind="moons", n=321, d=2, seed=7, temperature=0.25, budget_unit="per_landmark",
                      budget=900.0, n_landmarks=6, landmark_selection="maxmin", offset="mean", step=3,
                      auto_update=False)
    q = a.to_query()
    assert set(q) == set(URL_PARAMS) and all(isinstance(v, str) for v in q.values())
    b = ExplorerState(auto_update=False)
    b.from_query(q)
    assert b.error == ""
    for p in URL_PARAMS:
        assert getattr(b, p) == getattr(a, p), p
    assert isinstance(b.n, int) and isinstance(b.n_landmarks, int)
    # n_landmarks None (auto) is left out of the query and stays None
    c = ExplorerState(auto_update=False)
    assert "n_landmarks" not in c.to_query()


def test_url_garbage_sets_error():
    s = ExplorerState(auto_update=False)
    s.from_query({"n": "lots", "kind": "hexagons", "seed": "5"})
    assert "n='lots'" in s.error and "kind='hexagons'" in s.error
    assert s.seed == 5 and s.n == 1000 and s.kind == "gaussian"


def test_large_run_waits_for_confirmation_and_huge_is_refused():
    s = ExplorerState(**SMALL)
    v = s.version
    s.budget = 3.0e4  # ~ 3e7 comparisons: needs confirmation (and would take a while)
    assert s.notice.startswith("Large run") and s.version == v and s.error == ""
    assert s.estimate.n_comparisons > 10**7
    s.budget = 1.0e8  # more memory than allowed: refused even when forced
    s.run(force=True)
    assert s.error.startswith("Budget must be between 0.") and s.version == v
    # the allowed range in the sidebar's words, once: no bytes, no server setting, no second message
    assert "TiB" not in s.error and "LOE_VIZ" not in s.error and ";" not in s.error, s.error
    assert s.error.count("Budget") == 1 and "(got 1e+08)" in s.error, s.error


def test_a_confirmed_large_run_drops_the_notice_that_asked_for_it():
    s = ExplorerState(background=True, **SMALL)
    assert s.wait(60) and s.version == 1
    s.budget = 3.0e4  # ~ 3e7 comparisons: waits for "Run"
    assert s.wait(60) and s.notice.startswith("Large run") and s.version == 1, (s.notice, s.error)
    seen = []
    s.param.watch(lambda e: seen.append((s.busy, s.notice)), ["busy"])
    s.auto_update = False
    s.budget = 100.0
    s.run(force=True)
    assert seen[0] == (True, "")  # the run in progress is not shown with the old notice
    assert s.wait(60) and s.version == 2 and s.notice == ""
    s.close()


def test_estimate_run_uses_the_library_model():
    from loe_viz import LOE
    a = estimate_run(1000, 2, 2, 5, 1000)
    b = estimate_run(1000, 2, 2, 5, 100_000)
    assert b.n_comparisons == 100 * a.n_comparisons and b.seconds > a.seconds and b.bytes > a.bytes
    assert "comparisons" in b.text
    lib = LOE(n_components=2, n_landmarks=5).estimate_resources(1000, 100_000)
    assert b.seconds == lib.seconds and b.bytes > lib.peak_bytes  # plus the explorer's own arrays
    assert "min" in estimate_run(10_000, 2, 2, 5, 10**9).text  # one duration format: "... min .. s"


def test_duration_format_is_shared():
    # Terminal progress is tqdm's own bar; every duration the library and the app write in words
    # comes from one formatter.
    from loe_viz._format import format_seconds
    from loe_viz.resources import format_seconds as lib_format
    assert format_seconds(150) == lib_format(150) == "2 min 30 s"


def test_background_runs_and_dispatch():
    calls = []
    s = ExplorerState(background=True, auto_update=False, **SMALL)
    s.dispatch = lambda fn: (calls.append(threading.current_thread().name), fn())
    s.run()
    assert s.wait(60)
    assert s.version == 1 and not s.busy and s.error == ""
    s.auto_update = True
    for seed in (2, 3, 4):  # a burst: the latest wins, earlier waiting jobs are dropped
        s.seed = seed
    assert s.wait(60)
    assert s.config_used["seed"] == 4 and not s.busy
    assert calls and all(name == "loe-viz-pipeline" for name in calls)
    s.close()
    assert s.points is None and s.model is None
    assert s.jobs.thread is None  # no thread left behind


def test_runner_latest_wins_and_survives_errors(caplog):
    w = JobRunner()
    out = []
    gate = threading.Event()
    first = w.submit(lambda tok: (gate.wait(5), out.append(1)), cancel_running=False)
    time.sleep(0.05)
    w.submit(lambda tok: out.append(2), cancel_running=False)
    w.submit(lambda tok: 1 / 0, cancel_running=False)
    last = w.submit(lambda tok: out.append(3), cancel_running=False)
    assert first.superseded and not last.superseded
    with caplog.at_level(logging.WARNING):
        gate.set()
        assert w.wait(5)
    assert out == [1, 3]
    assert w.thread is None and not w.busy
    w.submit(lambda tok: 1 / 0, background=False)
    failures = [r for r in caplog.records if r.levelno == logging.WARNING and r.exc_info]
    assert failures and failures[-1].exc_info[0] is ZeroDivisionError  # logged with its traceback
    w.close()


def test_runner_cancels_the_running_job_when_a_new_one_comes():
    w = JobRunner()
    seen = []

    def long_job(tok):
        for _ in range(500):
            time.sleep(0.01)
            tok.check()
        seen.append("finished")

    a = w.submit(long_job)
    time.sleep(0.05)
    b = w.submit(lambda tok: seen.append("second"))
    assert w.wait(5)
    assert a.cancelled and not b.cancelled and seen == ["second"]
    # a token is an LOE progress callback: it raises once cancelled
    b.cancel()
    with pytest.raises(Cancelled):
        b("ranking", 1, 5)
    w.close()
    assert w.submit(lambda tok: seen.append("after close")).cancelled and seen == ["second"]


def test_closed_runner_publishes_nothing():
    published = []
    w = JobRunner(background=False, dispatch=lambda fn: (published.append(1), fn()))
    w.publish(lambda: None)
    w.close()
    w.publish(lambda: None)
    assert published == [1]


def test_updates_merge_while_the_ui_is_behind():
    """Reports that arrive faster than the UI applies them wait as one merged update."""
    queue = []
    w = JobRunner(background=False, dispatch=queue.append)  # the UI runs nothing until we say
    applied = []
    for i in range(50):
        w.publish_update(lambda **u: applied.append(u), progress=i, message=f"step {i}")
    w.publish_update(lambda **u: applied.append(u), running=False)
    assert len(queue) == 1 and not applied
    queue.pop()()
    assert applied == [{"progress": 49, "message": "step 49", "running": False}]
    w.publish_update(lambda **u: applied.append(u), progress=50)  # the next one is dispatched anew
    assert len(queue) == 1
    w.close()
    queue.pop()()  # dispatched before the close: dropped
    w.publish_update(lambda **u: applied.append(u), progress=51)
    assert not queue and len(applied) == 1


def test_compare_on_a_slow_ui_queues_one_update_and_ends_with_done(fitted):
    """A UI slower than the comparison's reports sees the end, not a backlog of old frames."""
    c = CompareState(fitted, methods=["STE", "LOESTE"], max_seconds=1.0)
    queue = []
    fitted.dispatch = queue.append
    try:
        c.start(background=False)
    finally:
        fitted.dispatch = direct_dispatch
    assert len(queue) == 1, len(queue)
    queue.pop()()
    assert c.message.startswith("Done.") and c.progress == 100 and not c.running and c.version == 1
    assert {r.method for r in c.records if r.final} == {"STE", "LOESTE"}


def test_compare_loe_and_cancel(fitted):
    c = CompareState(fitted, methods=["LOE"])
    c.start(background=False)
    assert not c.running and c.progress == 100
    finals = [r for r in c.records if r.final]
    assert [r.method for r in finals] == ["LOE"]
    assert finals[0].procrustes == fitted.metrics["procrustes"]  # the walk-through's own fit
    methods = ["STE", "TSTE", "SOE", "GNMDS", "CKL"]
    c2 = CompareState(fitted, methods=methods, max_seconds=60)
    c2.start(background=True)
    c2.cancel()  # at once: with compiled kernels the five fits on a small set take well under a second
    assert c2.wait(120)
    assert not c2.running and c2.message == "Cancelled."
    assert len([r for r in c2.records if r.final]) < len(methods)


def test_a_refused_per_landmark_budget_is_quoted_as_typed():
    """100,000,000 comparisons per landmark was quoted back as "1e+08" beside a range in full digits."""
    s = ExplorerState(n=20_000, n_landmarks=50, budget_unit="per_landmark", budget=1e8, auto_update=False)
    s.run(force=True)
    assert s.error.startswith("Budget must be between 10,000 and ") and "(got 100,000,000)" in s.error, s.error


def test_landmarks_too_many_for_any_budget_are_said_with_the_most_that_can_run():
    """ℓ = 199998 at n = 200,000 said "Budget must be between 8,192.56 and 8,192.5 c" (a range that does not
    exist: typing 8,192.56 was refused too), with ℓ written without separators."""
    from loe_viz.app.link import refused_link_settings
    from loe_viz.app.pipeline import budget_range, most_landmarks

    for l in (199_998, 100_000):
        s = ExplorerState(n=200_000, d=20, n_landmarks=l, auto_update=False)
        s.run(force=True)
        most = most_landmarks(200_000, 20, 20, "total_c")
        assert s.error == (f"Landmarks ℓ = {l:,} are too many for n = 200,000 items: each landmark needs at least "
                           "n/2 = 100,000 comparisons, and together they need more memory than this explorer "
                           f"allows, whatever the budget; at most ℓ = {most:,} landmarks can run at this n"), s.error
        assert s.model is None
        assert refused_link_settings({"budget": 100.0}, s) == {
            "budget": f"no budget can run with ℓ = {l:,} landmarks at n = 200,000: they are too many"}
        s.close()
    # the most that can run has a budget that runs, one more has none
    lo, hi = budget_range(200_000, 20, 20, most, "total_c")
    assert 23 <= most < 1000 and lo <= hi
    lo1, hi1 = budget_range(200_000, 20, 20, most + 1, "total_c")
    assert lo1 > hi1
    # a narrow range keeps its top at the bottom's decimals: both ends run
    for unit in ("total_c", "per_landmark"):
        for budget in budget_range(200_000, 20, 20, most, unit):
            t = ExplorerState(n=200_000, d=20, n_landmarks=most, budget_unit=unit, budget=budget, auto_update=False)
            t.run()  # priced only: a confirmation notice, no fit
            assert t.error == "" and t.notice.startswith("Large run"), (unit, budget, t.error)
            t.close()


@pytest.mark.parametrize("method", ["STE", "LOESTE"])
def test_compare_cancel_stops_a_baseline_inside_its_pass_over_the_triplets(fitted, monkeypatch, method):
    """At the largest allowed run one pass over the triplets takes seconds and an iteration several
    passes: a cancel heard only between iterations took up to 5.7 s. The fit now hears it between
    blocks of a pass (here blocks of 200 triplets), so no pass ends after the cancel."""
    c = CompareState(fitted, methods=[method], max_seconds=60)
    seen = cancel_at_first_long_pass(monkeypatch, c.cancel, min_rows=1_000, block=200)  # the baseline's pass
    c.start(background=True)
    assert c.wait(120)
    assert seen["cancelled"] and seen["passes_after_cancel"] == 0
    assert not c.running and c.message == "Cancelled." and not [r for r in c.records if r.final]


def test_compare_says_which_method_the_time_limit_stopped(fitted, monkeypatch):
    # t-STE stopped at the limit showed its unfinished error under a plain "Done."
    from loe_viz.app import compare_state

    monkeypatch.setattr(compare_state._Stopwatch, "__call__", lambda self: 1e6)  # every fit is past the limit
    c = CompareState(fitted, methods=["STE", "TSTE"], max_seconds=2.0)
    c.start(background=False)
    assert c.message == ("Done. STE stopped at the 2 s time limit before it converged: its error is that of an "
                         "unfinished fit. t-STE stopped at the 2 s time limit before it converged: its error is that "
                         "of an unfinished fit.")
    for reason in ("converged", "max_iter", "line_search"):  # no time-dependent run: only the limit is named
        assert compare_state._time_limit_note("STE", SimpleNamespace(stop_reason_=reason), 2.0) == ""


def test_compare_baselines_report_progress(fitted):
    c = CompareState(fitted, methods=["STE", "SOE", "LOESTE"], max_seconds=1.5)
    c.start(background=False)
    finals = {r.method: r for r in c.records if r.final}
    assert set(finals) == {"STE", "SOE", "LOESTE"}
    assert all(np.isfinite(r.procrustes) for r in finals.values())
    assert c.message.startswith("Done.") and c.progress == 100


def _watch_loeste_stages(monkeypatch):
    """Record what every STE fit and every LOE drawing its own comparisons get, and the LOESTE fitted."""
    from loe_viz import LOESTE
    from loe_viz.baselines import STE
    from loe_viz.loe import LOE

    seen = {"ste": [], "loe": [], "loeste": []}
    ste_fit, loe_fit, loeste_fit = STE._fit, LOE.fit_oracle, LOESTE.fit_oracle

    def ste(self, triplets, n_items, init, *a, **k):
        seen["ste"].append((len(triplets), None if init is None else np.array(init)))
        return ste_fit(self, triplets, n_items, init, *a, **k)

    def loe(self, oracle, per_landmark, *a, **k):
        out = loe_fit(self, oracle, per_landmark, *a, **k)
        seen["loe"].append(out)
        return out

    def loeste(self, *a, **k):
        seen["loeste"].append(self)
        return loeste_fit(self, *a, **k)

    monkeypatch.setattr(STE, "_fit", ste)
    monkeypatch.setattr(LOE, "fit_oracle", loe)
    monkeypatch.setattr(LOESTE, "fit_oracle", loeste)
    return seen


def test_compare_loeste_splits_the_answers_the_others_get_as_the_paper_does(fitted, monkeypatch):
    """Under the paper's protocol LOE-STE got 2 m answers: STE's m uniform triplets, started from the
    walk-through's LOE, which had used m of its own. It now gets m, 30 % on LOE's landmarks, the rest for STE."""
    warm_up()
    seen = _watch_loeste_stages(monkeypatch)
    c = CompareState(fitted, methods=["STE", "LOESTE"], max_seconds=60)
    c.start(background=False)
    assert c.message.startswith("Done.") and {r.method for r in c.records if r.final} == {"STE", "LOESTE"}
    m, l = fitted.metrics["n_triplets"], len(fitted.model.landmarks_)
    ((m_ste, ste_init), (m_warm, warm_init)) = seen["ste"]
    assert m_ste == m and ste_init is None  # STE: m uniform triplets from a random start
    (loe,) = seen["loe"]  # LOE-STE's own LOE stage, on the walk-through's landmarks
    np.testing.assert_array_equal(loe.landmarks_, fitted.model.landmarks_)
    assert loe.n_triplets_used_ == l * (int(0.3 * m) // l)
    assert loe.n_triplets_used_ + m_warm == m  # the same total as the other methods
    np.testing.assert_array_equal(warm_init, loe.embedding_)  # STE's stage starts from that LOE stage


def test_compare_loeste_time_counts_both_stages_without_drawing_the_answers(fitted, monkeypatch):
    """LOE-STE's time was its STE stage's alone."""
    from loe_viz.app.compare_state import _fit_seconds

    warm_up()
    seen = _watch_loeste_stages(monkeypatch)
    c = CompareState(fitted, methods=["LOESTE"], max_seconds=60)
    c.start(background=False)
    (model,) = seen["loeste"]
    final = [r for r in c.records if r.final]
    live = [r.seconds for r in c.records if not r.final]
    loe_seconds = _fit_seconds(model.loe_)
    assert len(final) == 1 and 0 < loe_seconds < final[0].seconds
    # LOE's stage as the walk-through's LOE is timed, and STE's stage as STE is (after its triplets are drawn)
    assert final[0].seconds == pytest.approx(loe_seconds + model.timings_["ste"])
    # the live curve starts at the LOE stage's end, on the same clock
    assert live and live[0] >= loe_seconds and live == sorted(live)


@pytest.mark.parametrize("per_landmark, eps", [(150, (5 * 100 + 0.5) / 750), (100, None)])
def test_compare_loeste_at_a_small_budget_gives_its_landmarks_the_least_they_need(monkeypatch, per_landmark, eps):
    """30 % of the least budget leaves LOE fewer than the n/2 comparisons per landmark it needs."""
    from loe_viz.app.compare_state import _loeste_eps

    assert _loeste_eps(10_000, 200, 5) == (0.3, "")
    assert _loeste_eps(5 * per_landmark, 200, 5)[0] == eps
    warm_up()
    s = ExplorerState(n=200, seed=1, budget_unit="per_landmark", budget=per_landmark)
    assert s.error == "" and s.metrics["n_triplets"] == 5 * per_landmark
    seen = _watch_loeste_stages(monkeypatch)
    c = CompareState(s, methods=["LOESTE", "STE"], max_seconds=60)
    c.start(background=False)
    finals = {r.method: r for r in c.records if r.final}
    if eps is None:  # nothing would be left for STE's stage
        assert set(finals) == {"STE"} and not seen["loe"]
        assert c.message.startswith("Done. LOE-STE was not run: its LOE stage needs n/2 = 100 comparisons"), c.message
    else:
        assert set(finals) == {"LOESTE", "STE"} and seen["loe"][0].n_triplets_used_ == 5 * 100
        assert seen["ste"][0][0] == 750 - 500 and "needs n/2 = 100 comparisons per landmark: it got 67 %" in c.message
    s.close()


def test_compare_text_says_how_loeste_gets_its_answers():
    from loe_viz.app.views.compare import CompareView

    text = " ".join(CompareView.text)
    # the paper's split at d = 2 (it used 20 % at d = 10): "as in the paper" was true of d = 2 only
    assert ("LOE-STE splits the same number as the paper did at d = 2\n(it used 20 % at d = 10): 30 % are "
            "comparisons on LOE's landmarks") in text
    assert "LOE-STE fits both its stages on all of them" in text


def test_compare_waits_for_a_running_warm_up_before_its_clock_starts(fitted, monkeypatch):
    from loe_viz.app import warmup

    release = threading.Event()
    fake = threading.Thread(target=release.wait, daemon=True)  # a warm-up still compiling
    fake.start()
    monkeypatch.setattr(warmup, "_warm_thread", fake)
    c = CompareState(fitted, methods=["STE"], max_seconds=1.0)
    c.start(background=True)
    deadline = time.perf_counter() + 30
    while "Preparing the compiled kernels" not in c.message and time.perf_counter() < deadline:
        time.sleep(0.02)
    assert "Preparing the compiled kernels" in c.message
    time.sleep(1.5)  # longer than STE's budget: none of it is spent while waiting
    assert c.running and not c.records
    release.set()
    assert c.wait(60) and c.message.startswith("Done.")
    assert [r.method for r in c.records if r.final] == ["STE"]


def test_a_fit_that_compiled_the_kernels_says_so_and_compare_times_loe_again(monkeypatch):
    """A server's first fit also compiles the kernels (11 s against 0.04 s): Compare showed LOE as the
    slowest method on a fresh server. Its time is now measured again; the embedding stays the walk-through's."""
    from loe_viz.app import warmup

    monkeypatch.setattr(warmup, "_warm_seconds", None)  # no warm-up has ended: kernels may still compile
    s = ExplorerState(**dict(SMALL, seed=11))
    assert s.error == "" and s.config_used["kernels_ready"] is False
    assert s.status.endswith("(including compiling the kernels, which happens once)")
    from loe_viz.app import compare_state

    timed = []
    real = compare_state._loe_seconds
    monkeypatch.setattr(compare_state, "_loe_seconds", lambda *a: timed.append(real(*a)) or timed[-1])
    messages = []
    c = CompareState(s, methods=["LOE"])
    c.param.watch(lambda e: messages.append(e.new), "message")
    c.start(background=False)
    loe = [r for r in c.records if r.final and r.method == "LOE"]
    assert len(loe) == 1 and len(timed) == 1 and loe[0].seconds == timed[0] > 0  # a fit timed again
    assert loe[0].procrustes == s.metrics["procrustes"]
    assert any(m.startswith("Timing LOE again") for m in messages)
    monkeypatch.setattr(warmup, "_warm_seconds", 1.0)
    warm = ExplorerState(**dict(SMALL, seed=12))
    assert warm.config_used["kernels_ready"] is True and "compiling" not in warm.status
    s.close()
    warm.close()


def test_compare_results_are_dropped_when_the_walk_through_fits_another_configuration():
    """Seed 0's table stayed beside seed 7's status line, with nothing to say it was old."""
    s = ExplorerState(**SMALL)
    c = CompareState(s, methods=["LOE"])
    c.start(background=False)
    assert c.records and c.message.startswith("Done.")
    s.seed = 5
    assert s.wait(120) and s.config_used["seed"] == 5
    assert c.records == [] and c.message.startswith("The configuration changed since this comparison")
    c.start(background=False)  # and a comparison on the new fit is kept
    assert c.records and c.message.startswith("Done.")
    s.close()


def test_closing_compare_redraws_nothing():
    """close() ran the views' watchers on a page being torn down (an AttributeError in the log)."""
    s = ExplorerState(**SMALL)
    c = CompareState(s, methods=["LOE"])
    c.start(background=False)
    seen = []
    c.param.watch(lambda e: seen.append(e.name), ["records"])
    c.close()
    assert seen == [] and c.records == [] and c.source is None
    s.close()


def test_warm_up_is_cached():
    t = warm_up()
    assert t >= 0 and warm_up() == t


def test_warm_up_prints_nothing():
    """`panel serve --warm` runs it before the first visitor: a lecturer's terminal should not show
    an LOE warning about the warm-up's own tiny problem (it did: one item left out of a share)."""
    out = subprocess.run([sys.executable, "-W", "default", "-c",
                          "from loe_viz.app.warmup import warm_up; warm_up()"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0 and out.stderr.strip() == "" and out.stdout.strip() == "", out.stderr[-2000:]


def test_config_params_subset():
    assert set(CONFIG_PARAMS) < set(URL_PARAMS) and "step" not in CONFIG_PARAMS


def test_importing_the_app_starts_no_thread_and_keeps_user_warnings():
    code = (
        "import threading, warnings, numpy as np\n"
        "import loe_viz.app, loe_viz.app.state, loe_viz.app.explorer\n"
        "assert threading.active_count() == 1, [t.name for t in threading.enumerate()]\n"
        "from loe_viz import LOE, LOEWarning, TripletOracle, make_points\n"
        "import loe_viz.app.jobs\n"
        "X = make_points('gaussian', 60, 2, random_state=0)\n"
        "with warnings.catch_warnings(record=True) as w:\n"  # keeps the filters installed so far
        "    LOE(n_components=2, n_landmarks=5, random_state=0).fit_oracle(TripletOracle(X, random_state=0), 40)\n"
        "print(sum(issubclass(x.category, LOEWarning) for x in w))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert int(out.stdout.split()[-1]) >= 1, out.stdout + out.stderr  # the user's fit still warns


def test_app_fits_do_not_warn_but_a_users_fit_does():
    code = (
        "import warnings\n"
        "warnings.simplefilter('error', UserWarning)\n"
        "import loe_viz.app.jobs\n"  # installs the app's filter (scoped to its own modules)
        "from loe_viz.app.state import ExplorerState\n"
        "s = ExplorerState(n=60, seed=0, budget_unit='per_landmark', budget=40)\n"  # would warn: unranked items
        "assert s.error == '', s.error\n"
        "assert s.metrics['unranked'] > 0\n"
        "from loe_viz import LOE, LOEWarning, TripletOracle, make_points\n"
        "X = make_points('gaussian', 60, 2, random_state=0)\n"
        "try:\n"
        "    LOE(n_components=2, n_landmarks=5, random_state=0).fit_oracle(TripletOracle(X, random_state=0), 40)\n"
        "except LOEWarning:\n"
        "    print('user warned')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "user warned" in out.stdout


def test_huge_configuration_refused_before_any_allocation():
    import tracemalloc
    tracemalloc.start()
    try:
        s = ExplorerState(n=2_000_000, d=50)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert s.error.startswith("n must be <= ") and s.points is None and s.version == 0
    assert peak < 20 * 2**20, peak  # nothing of the points' size was allocated
    assert s._cache._slots == {}
    # within the bounds, the memory estimate refuses before generating the points
    t = ExplorerState(n=150_000, d=20, budget=300.0, auto_update=False)
    tracemalloc.start()
    try:
        t.run(force=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert t.error.startswith("Budget must be between") and "more memory than this explorer allows" in t.error
    assert peak < 20 * 2**20 and t._cache._slots == {}
    # a budget of 1e300 was said as "87577067.5 TiB (4,611,686,018,427,387,900 comparisons)", a capped count
    for unit in ("total_c", "per_landmark"):
        u = ExplorerState(budget_unit=unit, budget=1e300, auto_update=False)
        u.run(force=True)
        assert u.error.startswith("Budget must be between") and "(got 1e+300)" in u.error, u.error
        assert "10^18" not in u.error and "LOE_VIZ" not in u.error
        u.close()


def test_run_with_nothing_changed_says_so():
    # Run pressed with the same settings reused the fit and left the status line as it was: no sign
    # that anything happened
    s = ExplorerState(n=200, seed=1)
    first = s.status
    assert "LOE fitted" in first and "same as before" not in first
    s.run(force=True)
    assert s.status.startswith(first) and s.status.endswith("; the fit is the same as before, so its results are "
                                                            "shown again")
    s.seed = 2  # a new fit says nothing of the kind
    assert "LOE fitted" in s.status and "same as before" not in s.status


def test_url_values_beyond_the_bounds_are_refused():
    # the link's n is named and ignored; the value in use stays, and the run computes with it
    s = ExplorerState(auto_update=False)
    s.from_query({"n": "100000000", "d": "2"})
    assert s.n == 1000 and "cannot be used: n='100000000' (must be at most 200,000)" in s.error
    s.run()
    assert s.points is not None and s.points.shape == (1000, 2)


def test_truth_helpers():
    from loe_viz.app.truth import centre, flipped_answers, landmark_truth, true_scores
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    D = ((X[:, None] - X[None]) ** 2).sum(-1)
    sc = true_scores(X, 4, 0.5)
    mask = np.arange(30) != 4
    np.testing.assert_allclose(sc[mask], (D[mask, 4] - D[mask, 4].mean()) / 0.5)
    assert sc[4] == 0 and abs(sc[mask].sum()) < 1e-9
    L = np.array([1, 5, 9])
    DL, shifts = landmark_truth(X, L, 2.0)
    np.testing.assert_allclose(DL, D[np.ix_(L, L)] / 2.0)
    np.testing.assert_allclose(shifts, D[:, L].sum(0) / 29 / 2.0)
    C = centre(D[np.ix_(L, L)])
    np.testing.assert_allclose(C.sum(0), 0, atol=1e-12)
    T = np.array([[0, 1, 2], [0, 2, 1]])
    f = flipped_answers(X, T)
    assert f.tolist() == [D[0, 1] > D[0, 2], D[0, 2] > D[0, 1]]


def test_a_refused_link_setting_is_still_said_after_the_first_result():
    s = ExplorerState(auto_update=False, **SMALL)
    s.from_query({"n": "<img src=x onerror=alert(1)>", "seed": "3"})
    s.run()
    assert s.wait(120)
    assert s.seed == 3 and s.metrics  # the valid setting applied, the run done
    assert s.error.startswith("Ignored settings in the link that do not parse: n='<img src=x")
    s.run(force=True)  # the next run drops the note
    assert s.wait(120)
    assert s.error == ""


def test_sweep_runs_on_the_job_runner_and_a_restart_wins_over_the_cancelled_sweep():
    """The sweep uses the app's JobRunner (a worker thread only while it runs), and the late
    messages of a cancelled sweep do not overwrite the sweep started after it (as on a
    session's event loop, where published updates wait for their turn)."""
    from loe_viz.app.sweep import SweepState

    queued = []
    s = SweepState(variable="budget", values=[20.0, 40.0], seeds=2, n=200)
    s.dispatch = queued.append  # updates wait, as they do for a served session
    assert isinstance(s.jobs, JobRunner) and s.jobs.thread is None
    assert s.start(background=True)
    assert s.jobs.thread is not None and s.jobs.thread.name == "loe-viz-sweep"
    s.cancel()
    assert s.wait(120) and s.jobs.thread is None
    s.param.update(values=[30.0], seeds=1)
    assert s.start(background=True) and s.wait(120)
    for fn in queued:
        fn()
    assert not s.running and s.message == "Done: 1 fits." and [p.value for p in s.points] == [30.0]
    s.close()
    assert not s.start(background=False)  # closed: nothing starts


def test_a_cancelled_first_run_does_not_speak_of_previous_results(monkeypatch):
    from loe_viz.app import state as state_module

    def cancelled(*args, **kwargs):
        raise Cancelled

    monkeypatch.setattr(state_module, "run_pipeline", cancelled)
    s = ExplorerState(n=60, seed=3)
    assert s.model is None and s.status == "Cancelled: no results yet; press Run to start again."
    monkeypatch.undo()
    s.seed = 4
    assert s.model is not None
    monkeypatch.setattr(state_module, "run_pipeline", cancelled)
    s.seed = 5
    assert s.status == "Cancelled: the results shown are those of the previous run."
    s.close()


def test_size_limits_name_the_allowed_range_not_the_server_setting():
    from loe_viz.app.limits import MAX_D, MAX_N, check_size

    for n, d in ((MAX_N + 1, 2), (100, MAX_D + 1)):
        with pytest.raises(ValueError) as err:
            check_size(n, d)
        assert "LOE_VIZ_" not in str(err.value) and "<=" in str(err.value)


def test_a_sweep_beyond_the_explorers_limits_is_refused_before_anything_is_allocated():
    """A lesson's sweep takes values typed in the page: n = 2e7 drew 320 MB of points before LOE's own
    check (80 % of the machine's memory, not the explorer's 2 GiB per run) stopped it with a traceback
    in the log; c = 5,000 at n = 20,000 (21 GiB) went as far."""
    import tracemalloc

    from loe_viz.app.sweep import SweepState

    for params, said in [
        (dict(variable="n", values=[500.0, 2e7]), "items n = 2e+07: n must be <= 200,000 in this explorer"),
        (dict(variable="budget", values=[20.0, 5000.0], n=20_000),
         "budget c = 5000: one fit needs about 21.0 GiB, more than the 2.0 GiB this explorer allows per run"),
    ]:
        s = SweepState(seeds=1, **params)
        tracemalloc.start()
        try:
            assert s.start(background=True) is False
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert s.message.startswith(said), s.message
        assert not s.jobs.busy and s.jobs.thread is None and s.points == []
        assert peak < 5 * 2**20, peak
        s.close()
    # the lessons' own sweeps stay within the limits
    from loe_viz.app.lessons import LESSONS

    for lesson in LESSONS:
        if lesson.sweep is not None:
            assert SweepState(**dict(lesson.sweep)).check() == "", lesson.key


def test_a_sweep_value_of_1e308_is_refused_with_a_message_not_an_overflow():
    # c = 1e308 (or n = 1e308) made c·n·ln n infinite: the check raised OverflowError, nothing ran and nothing
    # was said, the previous message and plots stayed
    from loe_viz.app.sweep import SweepState

    for variable in ("budget", "n"):
        s = SweepState(variable=variable, values=[20.0 if variable == "budget" else 500.0, 1e308], seeds=1)
        assert s.start(background=False) is False
        assert not s.jobs.busy and s.points == []
        if variable == "budget":
            assert s.message == ("budget c = 1e+308: one fit asks for more than 10¹⁸ comparisons, beyond what this "
                                 "explorer allows per run; use smaller values."), s.message
        else:
            assert s.message.startswith("items n = 1e+308: n must be <= 200,000 in this explorer, got "), s.message
        s.close()


def test_a_sweep_of_n_1e300_quotes_the_value_shortly_not_in_300_digits():
    # the message ran to 20 lines of digits: "got 1,000,000,000,000,000,052,504,760,…"
    from loe_viz.app.sweep import SweepState

    for value, got in ((1e300, "a number of about 301 digits"), (2e7, "20,000,000")):
        s = SweepState(variable="n", values=[500.0, value], seeds=1)
        assert s.start(background=False) is False
        assert s.message == f"items n = {value:g}: n must be <= 200,000 in this explorer, got {got}.", s.message
        s.close()


def test_a_run_refused_because_the_server_is_stopping_is_one_line_not_a_traceback(caplog):
    # a server stopped (SIGTERM) while a comparison started logged "comparison failed" with a traceback
    import logging

    from loe_viz.app.jobs import log_failure

    log = logging.getLogger("loe_viz.app.compare_state")
    with caplog.at_level(logging.INFO, logger=log.name):
        for text in ("cannot schedule new futures after shutdown",
                     "cannot schedule new futures after interpreter shutdown"):
            log_failure(log, "comparison", RuntimeError(text))
        log_failure(log, "comparison", RuntimeError("something else"))
    said = [(r.levelname, r.getMessage(), r.exc_info is not None) for r in caplog.records]
    assert said == [("INFO", "comparison stopped: the process is shutting down", False)] * 2 + [
        ("WARNING", "comparison failed", True)], said


def test_a_refused_points_file_is_looked_at_again_without_a_list_of_its_lines():
    """After a refusal the text was split into a list of every line to find one with too many fields: 1.8 s and
    50 MB more for a 10 MB upload of short rows. Only lines long enough to hold that many fields are looked at."""
    import tracemalloc

    from loe_viz.app.uploads import _text_problem

    raw = b"12,3\n" * 200_000 + b"# " + b"1," * 1500 + b"\n" + b"1," * 1500 + b"1\n"
    tracemalloc.start()
    try:
        said = _text_problem(raw, "wide.csv")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert said == ("wide.csv: line 200002: 1,501 fields on one line; a point table has one column per coordinate "
                    "(at most 1,000 here): is this a point table?"), said  # the commented line is passed over
    assert peak < 5 * len(raw), peak / len(raw)  # the text and its copy without \r; a list of lines took 13x


def test_answers_near_coin_flips_are_said_in_the_status():
    """At temperature 30 the walk-through showed Procrustes 0.96 with no word of why (LOE's own warning is hidden
    from the page, which says what it finds itself)."""
    for temperature, kind, d, said in ((30.0, "gaussian", 2, True), (1.0, "gaussian", 2, False),
                                       (2.0, "uniform", 1, False)):  # Procrustes 0.33, not noise: was called so
        s = ExplorerState(background=False, auto_update=False, temperature=temperature, kind=kind, d=d)
        s.run(force=True)
        assert ("note: the answers are close to coin flips: the rankings barely tell the items apart, so the "
                "embedding is mostly noise" in s.status) is said, s.status


def test_the_papers_algorithm_only_asks_no_pairs_of_landmarks_and_the_sample_step_says_the_share():
    """With "The paper's algorithm only" on, 2 % of each landmark's pairs were still pairs of other landmarks (LOE's
    default share), hundreds of times the paper's uniform design, which made the Shifts and EDM steps look cleaner
    than the paper's algorithm is; the Sample step said every pair was uniform."""
    import inspect

    from loe_viz.app.views.sample import SampleView
    from loe_viz.loe import LOE

    shares = {}
    for paper_only in (False, True):
        s = ExplorerState(n=500, seed=3, paper_only=paper_only)
        try:
            T, L = s.triplets, s.model.landmarks_
            shares[paper_only] = float((np.isin(T[:, 1], L) & np.isin(T[:, 2], L)).mean())
            assert s.model.landmark_share == (0.0 if paper_only else LOE().landmark_share)
        finally:
            s.close()
    l = 5
    uniform = (l - 1) * (l - 2) / (499 * 498)  # chance that a uniform pair of other items is two landmarks, 5e-5
    assert shares[True] < 10 * uniform
    assert abs(shares[False] - LOE().landmark_share) < 0.005
    default = inspect.signature(LOE).parameters["landmark_share"].default
    text = " ".join(SampleView.text)
    assert f"{default:.0%}".replace("%", " %") + " of its pairs are pairs of other landmarks" in text
    assert "none with \"The paper's algorithm only\"" in text


def test_an_uploaded_file_whose_n_the_budget_cannot_run_gets_the_nearest_budget_that_can():
    """A 250,000-row points file at the default budget of 100 c: the sidebar took it (n = 200,000), the run refused
    the budget (n = 200,000 allows at most 29.6), and the page showed the old points beside the new settings."""
    import io

    from loe_viz.app.pipeline import budget_range

    rng = np.random.default_rng(5)
    buf = io.StringIO()
    np.savetxt(buf, rng.normal(size=(1500, 2)), delimiter=",", fmt="%.6f")
    # too small: each landmark needs n/2 = 750 comparisons
    s = ExplorerState(auto_update=True, budget_unit="per_landmark", budget=40.0)
    assert s.wait(120)
    assert s.load_file(buf.getvalue(), "pts.csv") and s.wait(120)
    assert (s.n, s.budget, s.error) == (1500, 750.0, ""), (s.n, s.budget, s.error)
    assert s.status.endswith("(the budget is 750 comparisons per landmark, the least n = 1,500 allows (it was 40))"), \
        s.status
    # too large: the most that fits the explorer's memory, and the run waits for "Run" as any large one does
    lo, hi = budget_range(1500, 2, 2, 5, "per_landmark")
    s = ExplorerState(auto_update=True, budget_unit="per_landmark", budget=1e12)
    s.load_file(buf.getvalue(), "pts.csv")
    assert s.wait(120)
    assert (s.n, s.budget, s.error) == (1500, hi, ""), (s.n, s.budget, s.error)
    assert s.notice.startswith("Large run"), s.notice


@pytest.mark.parametrize("query, kept, said", [
    # a valid n was refused for an invalid n_landmarks' sake, and the landmarks told "at most n - 2 = 998"
    ({"n": "5000", "n_landmarks": "300000"}, {"n": 5000, "n_landmarks": None},
     "n_landmarks='300000' (must be at least d + 3 = 5 and at most n - 2 = 4,998)"),
    # n above the limit was told "at least ℓ + 2" with two 309-digit numbers
    ({"n": "1e308"}, {"n": 1000}, "n='1e308' (must be at most 200,000)"),
    # a budget that does not parse left its unit to read the budget in use as another budget
    ({"budget": "abc", "budget_unit": "per_landmark"}, {"budget_unit": "total_c", "budget": 100.0},
     "budget_unit='per_landmark' (it goes with the ignored budget)"),
])
def test_a_link_s_refused_setting_takes_along_only_what_goes_with_it(query, kept, said):
    s = ExplorerState(n=1000, auto_update=False)
    try:
        s.from_query(query)
        assert {k: getattr(s, k) for k in kept} == kept
        assert said in s.link_problem, s.link_problem
    finally:
        s.close()
