"""Smoke test of benchmarks/bench_paper.py: every experiment's ``--quick`` mode writes sane JSON and HTML."""

import importlib.util
import json
import math
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # runs the paper benchmarks at a reduced size

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_paper.py"
BASELINES = ("STE", "TSTE", "SOE", "GNMDS", "CKL")


def _load_script():
    spec = importlib.util.spec_from_file_location("bench_paper", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """Run ``all --quick`` once into a temporary directory; returns (directory, module, results)."""
    out = tmp_path_factory.mktemp("paper")
    module = _load_script()
    # Bokeh keeps a process-wide stack of patched documents. The explorer sessions served in
    # this process by earlier tests (tests/app/test_sessions.py) leave entries for documents
    # that are gone or torn down (and one as the default document), and bokeh's file_html, which writes the benchmark pages, then
    # fails on them. This test runs in no served document: start from a fresh one.
    from bokeh.document import Document
    from bokeh.io import doc as bokeh_doc

    getattr(bokeh_doc, "_PATCHED_CURDOCS", []).clear()
    bokeh_doc.set_curdoc(Document())
    results = module.main(["all", "--quick", "--output-dir", str(out)])
    return out, module, results


def _read(out: Path, name: str) -> dict:
    page = out / f"paper_{name}.html"
    assert page.is_file() and page.stat().st_size > 2000
    assert "Bokeh" in page.read_text()
    data = json.loads((out / f"paper_{name}.json").read_text())
    assert data["experiment"] == name and data["quick"] is True
    assert data["command"].startswith("python benchmarks/bench_paper.py all --quick")
    assert str(out) not in data["command"]
    return data


def _unit(value):
    assert isinstance(value, float) and 0.0 <= value <= 1.0, value


def _curve_ok(curve):
    n = len(curve["elapsed"])
    assert n >= 2
    assert all(len(curve[k]) == n for k in ("iteration", "cpu", "procrustes", "triplet_error"))
    assert all(math.isfinite(t) for t in curve["elapsed"])
    assert curve["elapsed"] == sorted(curve["elapsed"])
    for key in ("procrustes", "triplet_error"):
        for v in curve[key]:
            _unit(v)


def test_fig2a(quick):
    out, _, _ = quick
    res = _read(out, "fig2a")["results"]
    loe = res["loe"]
    assert loe["time"] > 0 and loe["time_with_sampling"] >= loe["time"]
    _unit(loe["procrustes"])
    _unit(loe["triplet_error"])
    assert loe["comparisons"] <= res["protocol"]["total_comparisons"]
    assert set(res["methods"]) == {*BASELINES, "LOE-STE"}
    for name, r in res["methods"].items():
        assert r["time"] > 0
        _unit(r["procrustes"])
        _unit(r["triplet_error"])
        _curve_ok(r["curve"])
        if r["time_to_loe_procrustes"] is not None:
            assert r["ratio_to_loe_time"] == pytest.approx(r["time_to_loe_procrustes"] / loe["time"])
    assert res["methods"]["LOE-STE"]["landmark_comparisons"] + res["methods"]["LOE-STE"]["ste_triplets"] == \
        res["protocol"]["total_comparisons"]
    assert set(res["summary"]) >= {"fastest_baseline", "ratio"}


def test_fig2b(quick):
    out, module, _ = quick
    res = _read(out, "fig2b")["results"]
    cfg = module.QUICK["fig2b"]
    sizes = cfg["sizes"]
    assert [(r["trial"], r["n"]) for r in res["rows"]] == [(t, n) for t in range(cfg["trials"]) for n in sizes]
    assert res["rows"][0]["seeds"] != res["rows"][len(sizes)]["seeds"]
    for row in res["rows"]:
        assert row["loe"]["time"] > 0
        _unit(row["loe"]["procrustes"])
        assert set(row["methods"]) == set(BASELINES)
        for r in row["methods"].values():
            t = r["time_to_target"]
            if t is not None:  # a baseline that reached LOE's error stopped there
                assert 0 <= t <= r["time"]
                assert r["curve"]["procrustes"][-1] <= row["loe"]["procrustes"]
    summary = res["summary"]
    assert summary["n"] == sizes[-1]
    assert len(summary["trials"]) == cfg["trials"]
    assert summary["ratio"] is None or summary["ratio"] > 0
    assert [e["n"] for e in summary["per_n_median"]] == sizes


def test_warmstart(quick):
    out, _, _ = quick
    res = _read(out, "warmstart")["results"]
    assert [s["setting"]["d"] for s in res["settings"]] == [2, 10]
    for s in res["settings"]:
        assert s["seeds"]["truth"] != s["seeds"]["init"]
        _curve_ok(s["STE"]["curve"])
        lst = s["LOE-STE"]
        if "error" in lst:  # LOE can fail at d = 10 on tiny sizes; the record says why
            continue
        assert lst["loe_time"] > 0
        _curve_ok(lst["curve"])
        for key in ("procrustes", "triplet_error"):
            q = s[key]
            _unit(q["ste_final"])
            _unit(q["loe_ste_final"])
            assert q["common_level"] == max(q["ste_final"], q["loe_ste_final"])
            assert q["ratio_to_common"] is None or q["ratio_to_common"] > 0


def test_budget(quick):
    out, module, _ = quick
    data = _read(out, "budget")
    res = data["results"]
    cfg = module.QUICK["budget"]
    assert len(res["runs"]) == cfg["seeds"] * len(cfg["budgets"])
    for row in res["runs"]:
        assert row["LOE"]["time"] > 0
        for method in ("LOE", "STE"):
            _unit(row[method]["procrustes"])
            _unit(row[method]["triplet_error"])
        if "cblearn STE" in row:
            assert row["seed"] == 0 and row["c"] <= cfg["cblearn_max_c"]
            _unit(row["cblearn STE"]["procrustes"])
    for key in ("LOE_procrustes", "LOE_triplet_error", "STE_procrustes", "STE_triplet_error"):
        s = res["summary"][key]
        assert s["c"] == sorted(cfg["budgets"])
        assert s["slope_of_means"] is not None and math.isfinite(s["slope_of_means"])
    # more comparisons, smaller error: the fitted slopes are negative even at these sizes
    assert res["summary"]["LOE_procrustes"]["slope_of_means"] < 0
    assert res["summary"]["STE_procrustes"]["slope_of_means"] < 0


def test_seeds_are_distinct():
    module = _load_script()
    a, b = module.trial_seeds(0), module.trial_seeds(1)
    assert len(set(a.values())) == len(a)
    assert not set(a.values()) & set(b.values())


def test_plot_only_redraws_from_json(quick):
    out, module, _ = quick
    page = out / "paper_fig2b.html"
    page.unlink()
    module.main(["fig2b", "--plot-only", "--output-dir", str(out)])
    assert page.is_file() and page.stat().st_size > 2000
