"""State-level behaviour the lessons rely on (no Panel): budget units and ranges, the
paper-only switch, one triplet-error definition, Compare's protocol, lessons and sweeps."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest

from loe_viz.app import scoring
from loe_viz.app.compare_state import CompareState
from loe_viz.app.lessons import BASE, LESSONS, lesson, lesson_config, lesson_keys
from loe_viz.app.pipeline import convert_budget, per_landmark_of
from loe_viz.app.state import STEPS, ExplorerState
from loe_viz.app.sweep import SweepState, loglog_slope, run_point, summarize

SMALL = dict(n=300, d=2, seed=3)


# ------------------------------------------------------------------ budget
def test_unit_switch_converts_the_number_and_keeps_the_run():
    s = ExplorerState(**SMALL)
    m0, v0 = s.metrics["n_triplets"], s.version
    s.set_budget_unit("per_landmark")
    expected = math.floor(100 * 300 * math.log(300)) // 5
    assert s.budget == expected and s.budget_unit == "per_landmark" and s.error == ""
    assert s.metrics["n_triplets"] == m0 == 5 * expected  # the same run (cached), not 100 per landmark
    s.set_budget_unit("total_c")
    assert s.budget == pytest.approx(100.0, rel=1e-3) and s.error == ""
    assert s.metrics["n_triplets"] == m0
    # a typed value in the new unit is used
    s.set_budget_unit("per_landmark")
    s.budget = 400.0
    assert s.error == "" and s.metrics["n_triplets"] == 5 * 400 and s.version > v0


def test_convert_budget_round_trip():
    for n, l, c in ((1000, 5, 100.0), (2000, 12, 3.7), (50, 6, 40.0)):
        per = convert_budget(n, l, c, "total_c", "per_landmark")
        assert per == per_landmark_of(n, l, "total_c", c)
        assert convert_budget(n, l, per, "per_landmark", "total_c") == pytest.approx(c, rel=2e-3)


@pytest.mark.parametrize("bad", [0, -5, 1e9])
def test_bad_budget_names_the_range_and_keeps_the_results(bad):
    s = ExplorerState(**SMALL)
    v, shown = s.version, dict(s.config_used)
    s.budget = bad
    assert s.error.startswith("Budget") and "between" in s.error and f"(got {bad:g})" in s.error
    assert s.version == v and s.config_used == shown


def test_half_a_comparison_per_landmark_is_refused():
    s = ExplorerState(budget_unit="per_landmark", budget=400.0, **SMALL)
    v = s.version
    s.budget = 0.5
    assert "between 150 and" in s.error and "comparisons per landmark" in s.error and s.version == v


def test_identical_points_are_refused_in_words_and_the_configuration_stays():
    s = ExplorerState(**SMALL)
    v = s.version
    ok = s.load_file("\n".join(["1.5,2.5"] * 100), "same.csv")
    assert not ok and "same.csv" in s.error and "same point" in s.error
    assert s.kind == "gaussian" and s.n == 300 and s.version == v


def test_empty_upload_names_its_file():
    s = ExplorerState(**SMALL)
    assert not s.load_file(b"", "second.csv") and "second.csv" in s.error and "empty" in s.error


# ------------------------------------------------------------------ paper only
def test_paper_only_switch_turns_the_polish_off():
    s = ExplorerState(temperature=0.0, **SMALL)
    assert s.model.refine == "auto" and s.model.stages_.refine is not None  # noiseless: polished
    polished = s.metrics["procrustes"]
    s.paper_only = True
    assert s.error == "" and s.model.refine is None and s.model.stages_.refine is None
    assert s.config_used["paper_only"] is True
    # the rank-like distortion of noiseless answers: the paper's algorithm alone is worse
    assert s.metrics["procrustes"] > 2 * polished
    assert "paper_only" in s.to_query()


# ------------------------------------------------------------------ one triplet error
def test_one_triplet_error_across_status_and_compare():
    from loe_viz.app.warmup import warm_up

    warm_up()  # else the walk-through's fit compiled the kernels and Compare times LOE again
    s = ExplorerState(**SMALL)
    c = CompareState(s, methods=["LOE"])
    c.start(background=False)
    (rec,) = [r for r in c.records if r.final]
    # One definition, one test sample, one embedding: Compare's LOE row is the walk-through's fit
    # (two definitions differed by 35 test triplets, 10.08 % against 9.73 %; a refit on the
    # recorded triplets stopped a fraction of a standard error away and differed in the last digit)
    assert rec.triplet_error == s.metrics["triplet_error"] and rec.procrustes == s.metrics["procrustes"]
    tl = s.model.stages_.timings
    assert rec.seconds == pytest.approx(tl["total"] - tl["sampling"])  # its comparisons' drawing left out
    Z = np.asarray(s.model.embedding_)
    assert scoring.triplet_error(s.points, Z, SMALL["seed"]) == s.metrics["triplet_error"]


def test_compare_default_is_the_papers_protocol_and_ste_beats_loe():
    s = ExplorerState(n=400, seed=1)
    c = CompareState(s, methods=["LOE", "STE"], max_seconds=60)
    assert c.protocol == "uniform"
    c.start(background=False)
    final = {r.method: r for r in c.records if r.final}
    assert final["STE"].procrustes < final["LOE"].procrustes
    # on LOE's own landmark triplets the baselines are poorly constrained
    d = CompareState(s, methods=["STE"], protocol="landmark", max_seconds=60)
    d.start(background=False)
    (ste_lm,) = [r for r in d.records if r.final]
    assert ste_lm.procrustes > final["STE"].procrustes


# ------------------------------------------------------------------ lessons
def test_lessons_are_complete_and_valid():
    assert len(LESSONS) >= 6 and len(set(lesson_keys())) == len(LESSONS)
    params = set(ExplorerState.param)
    for x in LESSONS:
        assert x.narrative and x.question.endswith(("?", ".")) and x.title
        assert x.look_at in STEPS + ("Sweep", "Your triplets"), x.key
        assert set(x.config) <= params, x.key
        for _, change in x.contrast:
            assert set(change) <= params, x.key
        if x.look_at == "Sweep":
            sw = SweepState(**x.sweep)
            assert sw.check() == "", (x.key, sw.check())
        if x.look_at == "Your triplets":
            from loe_viz.app.triplets_state import SAMPLES
            assert x.sample in SAMPLES
    assert set(BASE) <= params
    with pytest.raises(KeyError, match="budget"):
        lesson("no-such-lesson")


def test_bad_landmark_lesson_shows_what_it_says():
    """The lesson blamed landmarks "close together": its five lie almost on a line (their closest pair is farther
    apart than in a quarter of random draws), and it said "ten times a good draw" where MaxMin's is 64x smaller."""
    x = lesson("landmarks")
    cfg = lesson_config(x)
    s = ExplorerState(**{k: v for k, v in cfg.items()})
    bad = s.metrics["procrustes"]
    P = s.points[np.asarray(s.model.landmarks_)]
    spread = np.linalg.eigvalsh(np.cov((P - P.mean(axis=0)).T))
    assert spread[0] < 0.02 * spread[1]  # almost on a line
    lam = np.sort(s.model.stages_.lmds.eigenvalues)[::-1]
    assert lam[1] < 2 * lam[2]  # "the second eigenvalue is barely above the third"
    assert "almost on a line" in x.narrative and "close together" not in x.narrative
    typical = []
    for seed in range(6):  # "over ten times that of a typical random draw"
        s.seed = seed
        typical.append(s.metrics["procrustes"])
    assert bad > 10 * np.median(typical), (bad, typical)
    s.param.update(seed=cfg["seed"], **dict(x.contrast[0][1]))
    assert s.landmark_selection == "maxmin" and s.metrics["procrustes"] < bad / 50  # "more than fifty times"


# ------------------------------------------------------------------ sweeps
def test_loglog_slope_recovers_a_power_law():
    x = np.array([1.0, 2, 4, 8, 16])
    assert loglog_slope(x, 3 * x ** -0.5) == pytest.approx(-0.5)
    assert math.isnan(loglog_slope([2, 2], [1, 3]))


def test_budget_sweep_error_falls_like_one_over_c():
    s = SweepState(variable="budget", values=[50, 100, 200, 400], seeds=2, n=300)
    assert s.start(background=False)
    assert len(s.points) == 8 and s.message.startswith("Done")
    assert -1.5 < s.slope("procrustes") < -0.6
    assert -0.8 < s.slope("triplet_error") < -0.25
    rows = summarize(s.points)
    assert [r["value"] for r in rows] == [50, 100, 200, 400] and all(r["count"] == 2 for r in rows)
    # the points as a teacher downloads them: one row per fit, the fixed settings beside
    import pandas as pd

    table = pd.read_csv(io.StringIO(s.to_csv()))
    assert list(table.columns[:6]) == ["budget", "seed", "procrustes", "triplet_error", "seconds", "n_triplets"]
    assert table["budget"].tolist() == [p.value for p in s.points]
    assert table["seed"].tolist() == [p.seed for p in s.points]
    assert table["procrustes"].tolist() == [p.procrustes for p in s.points]  # exactly
    assert (table["n"] == 300).all() and (table["temperature"] == 1.0).all() and "budget" not in table.columns[6:]
    assert s.file_name() == "loe_sweep_budget_gaussian_n300.csv"


def test_sweep_refuses_a_budget_too_small_and_cancels():
    s = SweepState(variable="budget", values=[0.1, 10], n=500)
    assert not s.start(background=False) and "c ≥" in s.message
    t = SweepState(variable="n", values=[200, 400, 800, 1600], seeds=3, budget=50.0)
    assert t.start(background=True)
    t.cancel()
    t.wait(120)
    assert not t.running and t.message.startswith("Cancelled") and len(t.points) < 12


def _quick_sweep(monkeypatch, seconds_per_fit=0.1, on_fit=None):
    """A budget sweep of 15 fits whose fits take no time but advance the sweep's clock by ``seconds_per_fit``;
    ``on_fit(k, state)`` is called by the k-th fit (1, 2, ...)."""
    import loe_viz.app.sweep as sweep_module

    now = {"t": 0.0}

    def fake_point(config, variable, value, seed, token=None, repeats=1, min_seconds=0.0):
        now["t"] += seconds_per_fit
        fits["n"] += 1
        if on_fit is not None:
            on_fit(fits["n"], s)
        return sweep_module.SweepPoint(float(value), seed, 1.0 / value, 0.1, 0.01, 1)

    fits = {"n": 0}
    monkeypatch.setattr(sweep_module, "run_point", fake_point)
    monkeypatch.setattr(sweep_module, "_now", lambda: now["t"], raising=False)
    s = SweepState(variable="budget", values=[25.0, 50.0, 100.0, 200.0, 400.0], seeds=3, n=500)
    return s


def test_a_sweep_redraws_its_points_about_once_a_second_not_after_every_fit(monkeypatch):
    """Each points update redraws the figures on the server's event loop, which every page shares: one a fit
    (15 in the budget lesson) held it for 10 s, and the sweep's Cancel click waited behind them."""
    s = _quick_sweep(monkeypatch, seconds_per_fit=0.125)
    published, messages = [], []
    s.param.watch(lambda e: published.append(len(e.new)), ["points"])
    s.param.watch(lambda e: messages.append(e.new), ["message"])
    assert s.start(background=False)
    # the page drew each at once here: new points after a second of fits (8), then the last ones with "Done"
    assert published == [8, 15] and len(s.points) == 15 and s.message == "Done: 15 fits."
    assert not s.running and s.progress == 100
    assert sum(m.endswith("of 15)…") for m in messages) == 8  # the progress is said every 0.25 s, not every fit


def test_a_sweep_publishes_no_new_points_before_the_page_drew_the_last_ones(monkeypatch):
    """A page whose event loop is busy gets no queue of redraws: while it has not drawn the points published
    last, however long the sweep has run, the next ones wait, and the last ones go with the end's message."""
    from serverlab import DispatchQueue

    s = _quick_sweep(monkeypatch, seconds_per_fit=0.5)
    queue = DispatchQueue()
    s.dispatch = queue
    published = []
    s.param.watch(lambda e: published.append(len(e.new)), ["points"])
    assert s.start(background=False)
    queue.run()  # the page's turn comes only now
    assert published == [2, 15] and s.message == "Done: 15 fits." and not s.running


def test_a_cancelled_sweep_stops_says_so_and_keeps_every_point_done(monkeypatch):
    """Cancel during a sweep: no further fit, the cancelled message, and all the points fitted before it, also
    those not yet shown."""
    s = _quick_sweep(monkeypatch, seconds_per_fit=0.1, on_fit=lambda k, s: k == 7 and s.cancel())
    published = []
    s.param.watch(lambda e: published.append(len(e.new)), ["points"])
    assert s.start(background=False)
    assert s.message == "Cancelled after 7 of 15 fits." and not s.running
    assert published[-1] == 7 and [(p.value, p.seed) for p in s.points] == [(25, 0), (25, 1), (25, 2), (50, 0),
                                                                          (50, 1), (50, 2), (100, 0)]


def test_run_point_matches_the_walk_through():
    cfg = dict(kind="gaussian", n=300, d=2, temperature=1.0, budget=100.0, n_landmarks=None,
               landmark_selection="random")
    p = run_point(cfg, "budget", 100.0, 3)
    s = ExplorerState(**SMALL)
    assert p.procrustes == pytest.approx(s.metrics["procrustes"]) and p.n_triplets == s.metrics["n_triplets"]


# ------------------------------------------------------------------ timing sweeps (the cost lesson)
class _Clock:
    """A perf_counter whose successive fits last the given durations (no wall time involved)."""

    def __init__(self, durations):
        self.durations, self.now, self.starts = list(durations), 0.0, 0

    def __call__(self):
        # called twice per fit: at its start (advance by nothing) and at its end (by its duration)
        self.starts += 1
        if self.starts % 2 == 0:
            self.now += self.durations.pop(0)
        return self.now


def test_a_timed_point_keeps_the_shortest_of_its_fits_and_the_first_fits_errors(monkeypatch):
    import loe_viz.app.sweep as sweep_module

    cfg = dict(kind="gaussian", n=300, d=2, temperature=1.0, budget=100.0, n_landmarks=None,
               landmark_selection="random")
    once = run_point(cfg, "n", 300, 3)
    clock = _Clock([0.3, 0.1, 0.2])  # the first fit shared the machine: three times longer
    monkeypatch.setattr(sweep_module, "_clock", clock)
    p = run_point(cfg, "n", 300, 3, repeats=3)
    assert p.seconds == pytest.approx(0.1) and clock.starts == 6
    assert p.procrustes == once.procrustes and p.triplet_error == once.triplet_error
    # quick fits are repeated until their times add up to min_seconds (3 repeats asked, 5 made)
    clock = _Clock([0.05, 0.04, 0.05, 0.05, 0.05, 1.0])
    monkeypatch.setattr(sweep_module, "_clock", clock)
    assert run_point(cfg, "n", 300, 3, repeats=3, min_seconds=0.2).seconds == pytest.approx(0.04)
    assert clock.starts == 10


def test_a_timing_sweep_fits_once_untimed_and_waits_for_the_page_before_each_point(monkeypatch):
    import loe_viz.app.sweep as sweep_module

    log = []
    busy = {"left": 3}  # the walk-through is busy for the first three looks

    def fake_point(config, variable, value, seed, token=None, repeats=1, min_seconds=0.0):
        log.append(("fit", value, seed, repeats))
        return sweep_module.SweepPoint(float(value), seed, 0.1, 0.1, 0.01 * value, 1)

    def wait_while():
        busy["left"] -= 1
        log.append("busy" if busy["left"] >= 0 else "quiet")
        return busy["left"] >= 0

    monkeypatch.setattr(sweep_module, "run_point", fake_point)
    s = SweepState(variable="n", values=[400, 200], seeds=2, repeats=3, budget=50.0)
    s.dispatch = lambda fn: (log.append("drawn"), fn())
    s.wait_while = wait_while
    assert s.start(background=False) and s.message.startswith("Done")
    fits = [e for e in log if isinstance(e, tuple)]
    # one untimed fit first (the kernels' first call), then every point timed three times or more
    assert fits[0] == ("fit", 200, 0, 1)
    assert [f[1:] for f in fits[1:]] == [(200, 0, 3), (200, 1, 3), (400, 0, 3), (400, 1, 3)]
    # no fit while the page was busy, and every timed fit after the page applied what came before
    first_fit = log.index(fits[0])
    assert log[:first_fit].count("busy") == 3 and "quiet" in log[:first_fit]
    for f in fits[1:]:
        before = log[:log.index(f)]
        assert before[-1] == "drawn" and "quiet" in before[before.index(fits[0]) if f is fits[1] else 0:]
    assert [p.value for p in s.points] == [200, 200, 400, 400]


def test_the_cost_lesson_times_its_fits_where_the_n_log_n_part_dominates():
    x = lesson("cost")
    sw = SweepState(**x.sweep)
    assert sw.variable == "n" and sw.repeats >= 3 and sw.check() == ""
    # below n = 1000 a fit's fixed costs dominate its time (its slope measured 0.52 and 0.88 on 250 to 4000)
    assert min(sw.values) >= 1000 and max(sw.values) / min(sw.values) >= 16
    assert "near 1" in x.narrative and "a little above 1" not in x.narrative


def test_the_noise_lessons_figures_are_the_shares_the_sample_step_shows():
    """The Sample step counts the answers that contradict the true distances; the lesson quotes them."""
    from loe_viz.app.truth import flipped_answers

    x = lesson("noise")
    quoted = {0.25: ("one answer in eight", 1 / 8), 1.0: ("about 30 %", 0.30), 2.0: ("nearly 40 %", 0.40)}
    assert [change["temperature"] for _, change in x.contrast] == list(quoted)
    for _, change in x.contrast:
        words, figure = quoted[change["temperature"]]
        assert words in x.narrative
        s = ExplorerState(**lesson_config(x, change))
        share = float(flipped_answers(s.points, s.triplets).mean())  # as the Sample step computes it
        s.close()
        assert abs(share - figure) < 0.02, (change, share)
        if words.startswith("nearly"):
            assert share < figure


def test_on_loes_own_triplets_the_baselines_do_worse_and_loe_ste_still_improves_on_loe():
    """What Compare's text says of "the same triplets LOE used" (robust over the seeds, n and T tried)."""
    from loe_viz.app.views.compare import CompareView
    from loe_viz.app.warmup import warm_up

    warm_up()
    s = ExplorerState(n=500, seed=0)
    final = {}
    for protocol in ("uniform", "landmark"):
        c = CompareState(s, methods=["LOE", "STE", "LOESTE", "SOE"], protocol=protocol, max_seconds=60)
        c.start(background=False)
        final[protocol] = {r.method: r for r in c.records if r.final}
        c.close()
    s.close()
    uni, lm = final["uniform"], final["landmark"]
    for m in ("STE", "LOESTE", "SOE"):  # every baseline does worse on the landmark triplets
        assert lm[m].procrustes > uni[m].procrustes, m
    # the warm start from LOE's embedding: better than LOE on the very same triplets
    assert lm["LOESTE"].procrustes < lm["LOE"].procrustes
    assert lm["LOESTE"].triplet_error < lm["LOE"].triplet_error
    # STE from a random start: a distorted shape (Procrustes several times LOE's), a triplet error
    # a few points above LOE's
    assert lm["STE"].procrustes > 2 * lm["LOE"].procrustes
    assert 0 < lm["STE"].triplet_error - lm["LOE"].triplet_error < 0.08
    text = " ".join(CompareView.text)
    assert "by construction" not in text and "LOE-STE, STE started from LOE's" in text


def test_the_sweep_takes_its_forms_entries_itself_and_refuses_one_out_of_range_in_words():
    """The form's entries are read and checked by the sweep's state (no Panel): a value, a seed count or an item
    count it cannot take leaves every setting as it was, and the message says why the sweep did not start."""
    from loe_viz.app.sweep import SweepState

    sw = SweepState()
    before = (sw.variable, list(sw.values), sw.seeds, sw.n)
    for entries, message in [
            (("budget", "5, ten", 3, 500), "Values must be numbers separated by commas, got '5, ten'."),
            (("budget", "5, inf", 3, 500), "Values must be finite numbers."),
            (("budget", "5, 10", 100, 500), "Seeds must be a whole number from 1 to 10; got 100. The sweep did not "
                                            "start."),
            (("budget", "5, 10", 3, None), "Items n must be a whole number from 20 to 20,000; the box is empty. The "
                                           "sweep did not start."),
            (("budget", "5, 10", 2.5, 500), "Seeds must be a whole number from 1 to 10; got 2.5. The sweep did not "
                                            "start.")]:
        assert sw.configure(*entries) is False and sw.message == message, sw.message
        assert (sw.variable, list(sw.values), sw.seeds, sw.n) == before
    assert sw.configure("n", "100; 200", 2, 400.0) is True
    assert (sw.variable, sw.values, sw.seeds, sw.n) == ("n", [100.0, 200.0], 2, 400)
