"""The explorer's state classes, without Panel or a server."""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from loe_viz.points import POINT_KINDS
from loe_viz.app.state import (
    CONFIG_PARAMS, STEPS, URL_PARAMS, CompareState, ExplorerState, Worker, estimate_cost, warm_up,
)

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


def test_per_landmark_budget_unit():
    s = ExplorerState(budget_unit="per_landmark", budget=500, **SMALL)
    assert s.error == ""
    assert s.metrics["per_landmark"] == 500
    assert s.metrics["n_triplets"] == 500 * 5


@pytest.mark.parametrize("change, starts", [
    ({"n": 4}, "n "),
    ({"n": 0}, "n "),
    ({"budget": 0}, "budget"),
    ({"budget": -3.0}, "budget"),
    ({"budget_unit": "per_landmark", "budget": 3}, "budget"),
    ({"n_landmarks": 3}, "n_landmarks"),
    ({"n_landmarks": 500}, "n "),
    ({"temperature": -1.0}, "temperature"),
    ({"kind": "swiss_roll"}, "d "),
    ({"d": 0}, "d "),
    ({"kind": "uploaded"}, "kind"),
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


@pytest.mark.parametrize("content, name", [
    (b"x,y\n1,2\nnan,3\n4,5\n5,6\n", "nan.csv"),
    (b"hello, world\nthis is, not a table\n", "words.csv"),
    (bytes(range(256)) * 4, "binary.csv"),
    (b"", "empty.csv"),
    (b"1,2\n3\n4,5\n", "ragged.csv"),
    (b"\x93NUMPY junk", "bad.npy"),
])
def test_bad_upload_sets_error_and_keeps_results(content, name):
    s = ExplorerState(**SMALL)
    before = (s.version, s.points, s.kind, s.n)
    assert s.load_file(content, name) is False
    assert s.error.startswith("Upload rejected") and name in s.error
    assert (s.version, s.points, s.kind, s.n) == before


def test_upload_good_table_then_d_too_large():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 3))
    text = "a,b,c\n" + "\n".join(",".join(f"{v:.6f}" for v in row) for row in X)
    s = ExplorerState(**SMALL)
    assert s.load_file(text.encode(), "pts.csv") is True
    assert s.error == "" and s.kind == "uploaded" and s.n == 60 and s.d == 2
    np.testing.assert_allclose(s.points, X, atol=1e-6)
    assert s.config_used["uploaded_name"] == "pts.csv"
    v = s.version
    s.d = 4  # more than the 3 columns
    assert s.error.startswith("d must be <= 3") and s.version == v
    s.d = 3
    assert s.error == "" and s.aligned.shape == (60, 3)
    s.n = 40  # a seeded subsample of the rows
    assert s.error == "" and s.points.shape == (40, 3)
    s.n = 61
    assert s.error.startswith("n must be <= 60")


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
    s.budget = 1.0e5  # ~ 1e8 comparisons: needs confirmation (and would take minutes)
    assert s.notice.startswith("Large run") and s.version == v and s.error == ""
    assert s.estimate.n_comparisons > 10**7
    s.budget = 1.0e8  # more memory than allowed: refused even when forced
    s.run(force=True)
    assert s.error.startswith("budget needs about") and s.version == v


def test_estimate_cost_scales():
    a = estimate_cost(1000, 2, 2, 5, 1000)
    b = estimate_cost(1000, 2, 2, 5, 100_000)
    assert b.n_comparisons == 100 * a.n_comparisons and b.seconds > a.seconds and b.bytes > a.bytes
    assert "comparisons" in b.text


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


def test_worker_latest_wins_and_survives_errors():
    w = Worker()
    out = []
    gate = threading.Event()
    w.submit(lambda: (gate.wait(5), out.append(1)))
    time.sleep(0.05)
    w.submit(lambda: out.append(2))
    w.submit(lambda: 1 / 0)
    w.submit(lambda: out.append(3))
    gate.set()
    assert w.wait(5)
    assert out == [1, 3]
    w.close()


def test_compare_loe_and_cancel(fitted):
    c = CompareState(fitted, methods=["LOE"])
    c.start(background=False)
    assert not c.running and c.progress == 100
    finals = [r for r in c.records if r.final]
    assert [r.method for r in finals] == ["LOE"]
    assert abs(finals[0].procrustes - fitted.metrics["procrustes"]) < 1e-6
    methods = ["STE", "TSTE", "SOE", "GNMDS", "CKL"]
    c2 = CompareState(fitted, methods=methods, max_seconds=60)
    c2.start(background=True)
    time.sleep(0.3)
    c2.cancel()
    c2.wait(60)
    assert not c2.running and c2.message == "Cancelled."
    assert len([r for r in c2.records if r.final]) < len(methods)


def test_compare_baselines_report_progress(fitted):
    c = CompareState(fitted, methods=["STE", "SOE", "LOESTE"], max_seconds=1.5)
    c.start(background=False)
    finals = {r.method: r for r in c.records if r.final}
    assert set(finals) == {"STE", "SOE", "LOESTE"}
    assert all(np.isfinite(r.procrustes) for r in finals.values())
    assert c.message == "Done." and c.progress == 100


def test_warm_up_is_cached():
    t = warm_up()
    assert t >= 0 and warm_up() == t


def test_config_params_subset():
    assert set(CONFIG_PARAMS) < set(URL_PARAMS) and "step" not in CONFIG_PARAMS
