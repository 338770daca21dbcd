"""Progress bars drawn by tqdm: loe_viz.progress.resolve_progress and the estimators' progress= argument."""

from __future__ import annotations

import io
import re
import subprocess
import sys

import numpy as np
import pytest
from tqdm import tqdm

from loe_viz import LOE, TripletOracle, make_points
from loe_viz.baselines import STE
from loe_viz.loeste import LOESTE
from loe_viz.progress import TextProgress, TqdmProgress, resolve_progress

N = 80
PER = 400


@pytest.fixture(scope="module")
def X():
    return make_points("gaussian", N, random_state=0)


@pytest.fixture(scope="module")
def triplets(X):
    return TripletOracle(X, random_state=1).uniform_triplets(3000)


def test_resolve_progress_arguments():
    assert resolve_progress(None) is None
    assert resolve_progress(False) is None

    def f(stage, done, total):
        return None

    assert resolve_progress(f) is f
    assert isinstance(resolve_progress(True), TqdmProgress)
    assert TextProgress is TqdmProgress  # the old name still imports
    with pytest.raises(ValueError, match=r"^progress must be None, True, a callable progress\(stage, done, total\) "
                                         r"or a tqdm bar, got int$"):
        resolve_progress(3)
    with pytest.raises(ValueError, match=r"^estimate must be a ResourceEstimate, got str$"):
        TqdmProgress(estimate="soon")
    for bad, message in [(None, "must be a real number, got None"), (float("nan"), "must be finite, got nan"),
                         (-1, "must be >= 0.0, got -1.0")]:
        with pytest.raises(ValueError, match=r"^min_interval " + re.escape(message) + "$"):
            TqdmProgress(min_interval=bad)


def test_one_bar_per_loe_stage_in_a_file(X):
    out = io.StringIO()
    bar = TqdmProgress(file=out, min_interval=0.0)
    LOE(n_landmarks=5, random_state=2).fit_oracle(TripletOracle(X, random_state=1), PER, progress=bar)
    text = out.getvalue()
    # every stage ends on its own finished bar, drawn by tqdm (its "|" bar and "n/total" counter)
    finals = [line.rsplit("\r", 1)[-1] for line in text.split("\n") if line]
    stages = [f.split(":")[0] for f in finals]
    main_stages = ["ranking", "shifts", "edm", "lmds"]
    assert [s for s in stages if s in main_stages] == main_stages  # in order, one finished bar each
    ranking = finals[stages.index("ranking")]
    assert ranking.startswith("ranking: 100%|") and " 5/5 " in ranking
    assert "\r" in text  # redrawn in place, by tqdm
    assert [c[0] for c in bar.calls].count("ranking") >= 5 and bar.calls[-1][1] == bar.calls[-1][2]
    assert bar._bar is None  # every bar closed at the end of its stage
    # a stage of a few quick steps shows no rate ("18978.75step/s"); the rankings show theirs
    assert all("/s" not in f for f, s in zip(finals, stages) if s in ("shifts", "edm", "lmds"))
    assert "landmark/s" in ranking


def test_without_ipywidgets_a_notebook_gets_text_bars_without_tqdm_s_warning(monkeypatch):
    # tqdm.auto in a kernel without ipywidgets warned "IProgress not found" at every bar, then drew text
    import importlib.util

    import tqdm

    from loe_viz.progress import _tqdm_class

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ipywidgets" else real(name, *a))
    assert _tqdm_class(auto=True) is tqdm.tqdm  # tqdm.auto's class is another (tqdm.asyncio's, or the widget)


def test_true_draws_on_stderr(X, capsys):
    LOE(n_landmarks=5, random_state=2).fit_oracle(TripletOracle(X, random_state=1), PER, progress=True)
    err = capsys.readouterr().err
    assert "ranking: 100%" in err and "lmds: 100%" in err


def test_a_tqdm_bar_of_ones_own_is_driven_through_the_stages(X):
    out = io.StringIO()
    with tqdm(total=1, file=out, mininterval=0.0) as bar:
        LOE(n_landmarks=5, random_state=2).fit_oracle(TripletOracle(X, random_state=1), PER, progress=bar)
        assert bar.desc.startswith("lmds") and bar.n == bar.total == 1
    assert "ranking" in out.getvalue() and "5/5" in out.getvalue()


def test_baseline_iterations_reported_and_finished(triplets):
    calls = []
    model = STE(random_state=3, max_iter=200).fit(triplets, n_items=N, progress=lambda *a: calls.append(a))
    it = model.n_iter_
    assert it >= 2
    assert calls[:-1] == [("iteration", i, 200) for i in range(1, it + 1)]
    assert calls[-1] == ("iteration", it, it)  # the last call closes the bar

    out = io.StringIO()
    STE(random_state=3, max_iter=200).fit(triplets, n_items=N, progress=TqdmProgress(file=out, min_interval=0.0))
    last = out.getvalue().rstrip("\n").rsplit("\r", 1)[-1]
    assert last.startswith("iteration: 100%|") and f" {it}/{it} " in last


def test_progress_that_raises_stops_a_baseline(triplets):
    class Stop(Exception):
        pass

    seen = []

    def cb(stage, done, total):
        seen.append(done)
        if done == 3:
            raise Stop

    with pytest.raises(Stop):
        STE(random_state=3, max_iter=200).fit(triplets, n_items=N, progress=cb)
    assert seen == [1, 2, 3]


@pytest.mark.filterwarnings("ignore:.*took part in no comparison")
def test_loeste_reports_loe_stages_then_ste_iterations(triplets):
    calls = []
    model = LOESTE(n_landmarks=5, random_state=2, ste_params={"max_iter": 30}).fit(
        triplets, n_items=N, progress=lambda *a: calls.append(a))
    stages = [c[0] for c in calls]
    first_it = stages.index("iteration")
    assert set(stages[:first_it]) >= {"ranking", "lmds"} and set(stages[first_it:]) == {"iteration"}
    assert calls[-1] == ("iteration", model.n_iter_, model.n_iter_)
    assert np.isfinite(model.embedding_).all()


def test_import_loe_viz_does_not_import_tqdm():
    code = "import sys, loe_viz, loe_viz.progress; print('tqdm' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
