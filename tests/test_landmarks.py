"""Landmark choice (MaxMin on pilots), landmark-block comparisons, n_landmarks="auto", cancellation."""

from __future__ import annotations

import threading
import warnings
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import loe_viz._landmark_tasks as tasks
from loe_viz import LOE, LOEWarning, TripletOracle, make_points, procrustes_error
from loe_viz.kernels import btl
from loe_viz.ranking import RankingCancelled, rank_column


def _min_gap(X, lms):
    P = X[lms]
    D = np.sqrt(((P[:, None] - P[None]) ** 2).sum(-1))
    return D[np.triu_indices(len(lms), 1)].min()


# ------------------------------------------------------------------ MaxMin
def test_maxmin_landmarks_are_spread_where_the_old_rule_clustered():
    # n = 2000, c = 200, 10 landmarks: MaxMin on raw BTL scores put six landmarks near the
    # centre (closest pair 0.025 apart); on rank quantiles they are spread out.
    n, l = 2000, 10
    X = make_points("gaussian", n, random_state=3)
    per = int(200 * n * np.log(n)) // l
    for seed in (3, 4):
        maxmin = LOE(n_landmarks=l, random_state=seed).fit_oracle(TripletOracle(X, random_state=seed), per)
        rnd = [_min_gap(X, np.random.default_rng(100 * seed + r).choice(n, l, replace=False)) for r in range(5)]
        assert _min_gap(X, maxmin.landmarks_) >= np.max(rnd)


def test_maxmin_choice_ignores_a_constant_added_to_any_column():
    X = make_points("gaussian", 500, random_state=0)
    D = ((X[:, None] - X[None]) ** 2).sum(-1)
    noise = np.random.default_rng(1).normal(0, 0.05, D.shape)
    R = D + noise
    shifts = np.random.default_rng(2).normal(0, 10, 500)
    cand = np.arange(500)
    plain = tasks.maxmin_select(7, cand, 8, lambda h: R[:, h])
    shifted = tasks.maxmin_select(7, cand, 8, lambda h: R[:, h] + shifts[h])
    np.testing.assert_array_equal(plain, shifted)
    assert len(set(plain.tolist())) == 8
    # and the landmarks are spread: the smallest gap beats random draws of the same size
    assert _min_gap(X, plain) > np.median([_min_gap(X, np.random.default_rng(r).choice(500, 8, replace=False))
                                           for r in range(20)])


def test_pilots_and_parallel_rankings_equal_the_serial_result():
    X = make_points("blobs", 600, random_state=0)

    def fit(**kw):
        return LOE(n_landmarks=6, random_state=5, **kw).fit_oracle(TripletOracle(X, random_state=1), 20_000)

    serial = fit()
    for other in (fit(n_jobs=2), fit(n_jobs=3)):
        np.testing.assert_array_equal(other.landmarks_, serial.landmarks_)
        np.testing.assert_array_equal(other.embedding_, serial.embedding_)
    with ThreadPoolExecutor(2) as ex:
        np.testing.assert_array_equal(fit(executor=ex).embedding_, serial.embedding_)
    # every landmark spent exactly its budget, the pilot's comparisons included
    np.testing.assert_array_equal(serial.triplets_per_landmark_, np.full(6, 20_000))


def test_a_ranking_reuses_its_pilots_win_counts_exactly():
    # MaxMin's pilot parts count their wins where they are drawn; the landmark's ranking adds
    # those counts to the rest's instead of counting every comparison again.
    n, head = 400, 7
    oracle = TripletOracle(make_points("gaussian", n, random_state=0), random_state=1)
    parts = [tasks.pilot_oracle(oracle, head, 3000, seed) for seed in (11, 12)]
    for near, far, counts in parts:  # against NumPy: (won, took part in); the farther item wins
        np.testing.assert_array_equal(counts[:, 0], np.bincount(far, minlength=n))
        np.testing.assert_array_equal(counts[:, 1], np.bincount(near, minlength=n) + np.bincount(far, minlength=n))
    kw = dict(block=np.array([50, 120, 300]), block_count=400, block_seed=14)
    pilot = [p[:2] for p in parts]
    summed = parts[0][2] + parts[1][2]
    reused = tasks.rank_oracle(oracle, head, 20_000, 13, tasks.RankSettings(), pilot, summed, **kw)[0]
    counted = tasks.rank_oracle(oracle, head, 20_000, 13, tasks.RankSettings(), pilot, None, **kw)[0]
    np.testing.assert_array_equal(reused.scores, counted.scores)
    assert reused.n_comparisons == 20_000 and reused.converged


def test_maxmin_on_stored_triplets_equals_serial_and_spreads():
    X = make_points("uniform", 300, random_state=0)
    T = TripletOracle(X, random_state=1).landmark_triplets(np.arange(0, 300, 10), 3000)  # 30 candidate heads
    serial = LOE(n_landmarks=6, landmark_selection="maxmin").fit(T, n_items=300)
    threads = LOE(n_landmarks=6, landmark_selection="maxmin", n_jobs=2).fit(T, n_items=300)
    np.testing.assert_array_equal(serial.landmarks_, threads.landmarks_)
    np.testing.assert_array_equal(serial.embedding_, threads.embedding_)
    busiest = LOE(n_landmarks=6, landmark_selection="random").fit(T, n_items=300)
    assert _min_gap(X, serial.landmarks_) > _min_gap(X, busiest.landmarks_)


# ------------------------------------------------------ landmark-block comparisons
def test_block_comparisons_are_among_the_other_landmarks_and_follow_the_model():
    X = make_points("gaussian", 50, random_state=0)
    oracle = TripletOracle(X, random_state=1)
    others = np.array([3, 9, 20, 41])
    near, far = oracle.block_comparisons(0, others, 40_000, seed=5)
    assert set(np.unique(near)) <= set(others) and set(np.unique(far)) <= set(others)
    assert np.all(near != far)
    a, b = 3, 41
    D0 = ((X - X[0]) ** 2).sum(1)
    pair = ((near == a) & (far == b)) | ((near == b) & (far == a))
    p_a_closer = np.mean(near[pair] == a)
    expected = 1 / (1 + np.exp(-(D0[b] - D0[a])))
    assert abs(p_a_closer - expected) < 4 * np.sqrt(expected * (1 - expected) / pair.sum())
    n2, f2 = oracle.block_comparisons(0, others, 40_000, seed=5)
    np.testing.assert_array_equal(near, n2)


def test_landmark_share_sharpens_the_landmark_block():
    # The shifts come from the l x l block; with 2% of each landmark's budget spent on the other
    # landmarks, its entries' error drops well below that of single items' scores.
    X = make_points("gaussian", 3000, random_state=0)
    errs = {}
    for share in (0.0, 0.02):
        e = []
        for seed in range(3):
            est = LOE(landmark_selection="random", landmark_share=share, random_state=seed).fit_oracle(
                TripletOracle(X, random_state=10 + seed), 60_000)
            lm = est.landmarks_
            D = ((X[lm][:, None] - X[lm][None]) ** 2).sum(-1)
            W = est.stages_.W
            # compare within-column differences (the column shift cancels)
            e.append(np.sqrt(np.mean([(np.subtract.outer(W[:, c], W[:, c]) - np.subtract.outer(D[:, c], D[:, c]))[
                np.ix_(np.arange(len(lm)) != c, np.arange(len(lm)) != c)] ** 2 for c in range(len(lm))])))
        errs[share] = np.mean(e)
    assert errs[0.02] < errs[0.0] / 2


# ------------------------------------------------------------ n_landmarks="auto"
def _zipf_set(seed=0):
    n = 200
    X = make_points("gaussian", n, random_state=seed)
    oracle = TripletOracle(X, random_state=seed + 1)
    heads = np.random.default_rng(seed + 2).permutation(n)[:60]
    counts = (40_000 / np.arange(1, 61) ** 0.5).astype(int)  # Zipf: the k-th busiest head has 1/sqrt(k) of the first's
    T = np.vstack([oracle.landmark_triplets([h], int(c)) for h, c in zip(heads, counts)])
    return X, oracle, T


def test_auto_landmarks_on_zipf_heads_pick_more_and_predict_better():
    X, oracle, T = _zipf_set()
    auto = LOE(random_state=0).fit(T, n_items=200)
    fixed = LOE(n_landmarks=5, random_state=0).fit(T, n_items=200)
    assert auto.landmarks_.size > 5
    assert auto.auto_search_["chosen"] == auto.landmarks_.size
    held = oracle.uniform_triplets(20_000)  # fresh triplets, none used in fitting
    from loe_viz.kernels.sampling import triplet_agreement
    acc_auto = triplet_agreement(auto.embedding_, held)
    acc_fixed = triplet_agreement(fixed.embedding_, held)
    assert acc_auto > acc_fixed + 0.01
    assert procrustes_error(X, auto.embedding_) < procrustes_error(X, fixed.embedding_)


@pytest.mark.filterwarnings("ignore::loe_viz.LOEWarning")
def test_auto_uses_sparse_heads_instead_of_only_d_plus_3():
    # crowd-style answers: every item heads 100 triplets, far below "well covered" (5 n = 300)
    n = 60
    X = make_points("gaussian", n, random_state=0)
    oracle = TripletOracle(X, random_state=1)
    T = oracle.landmark_triplets(np.arange(n), 100)
    auto = LOE(random_state=0).fit(T, n_items=n)
    fixed = LOE(n_landmarks=5, random_state=0).fit(T, n_items=n)
    assert auto.landmarks_.size == n and auto.auto_search_ is None  # evenly covered: all of them
    # unevenly: the busiest 20 heads keep their 100 triplets, the others 15: a held-out choice
    T2 = np.vstack([T[T[:, 0] < 20], T[(T[:, 0] >= 20) & (np.arange(len(T)) % 100 < 15)]])
    uneven = LOE(random_state=0).fit(T2, n_items=n)
    assert uneven.auto_search_ is not None and uneven.auto_search_["n_landmarks"][0] == 5
    assert uneven.landmarks_.size > 5
    held = oracle.uniform_triplets(20_000)
    from loe_viz.kernels.sampling import triplet_agreement
    assert triplet_agreement(auto.embedding_, held) > triplet_agreement(fixed.embedding_, held) + 0.05
    assert procrustes_error(X, auto.embedding_) < procrustes_error(X, fixed.embedding_)


@pytest.mark.filterwarnings("ignore::loe_viz.LOEWarning")
def test_auto_on_uniformly_headed_crowd_answers_uses_far_more_than_the_poisson_lucky_heads(monkeypatch):
    # crowd answers with uniformly random heads: about 32 triplets each at n = 200 (0.16 per item, as in
    # the bundled gaussian_2d_crowd.csv). With the old sparse threshold (n / 5 = 40) only the ~20 heads
    # that Poisson noise lifted above 40 were candidates, and they looked evenly covered
    import loe_viz.loe as loe_module

    n = 200
    X = make_points("gaussian", n, random_state=0)
    oracle = TripletOracle(X, random_state=1)
    counts = np.random.default_rng(2).poisson(32, n)
    T = np.vstack([oracle.landmark_triplets([h], int(c)) for h, c in enumerate(counts) if c > 0])
    now = LOE(random_state=0).fit(T, n_items=n)
    monkeypatch.setattr(loe_module, "SPARSE_COVERED", 0.2)
    before = LOE(random_state=0).fit(T, n_items=n)
    assert before.landmarks_.size < 40 and now.landmarks_.size >= 80
    held = oracle.uniform_triplets(20_000)
    from loe_viz.kernels.sampling import triplet_agreement
    assert triplet_agreement(now.embedding_, held) > triplet_agreement(before.embedding_, held) + 0.03  # 0.566, 0.505
    assert procrustes_error(X, now.embedding_) < 0.75 * procrustes_error(X, before.embedding_)  # 0.54, 0.92


@pytest.mark.filterwarnings("ignore::loe_viz.LOEWarning")
def test_auto_takes_every_uniformly_random_head_without_a_search(monkeypatch):
    """Poisson counts of about 32 triplets a head (16 to 49) looked uneven to "the quietest holds less than half
    the busiest one's", and at most 100 heads were taken: half of them left out."""
    import loe_viz.loe as loe_module

    n = 200
    X = make_points("gaussian", n, random_state=0)
    oracle = TripletOracle(X, random_state=1)
    counts = np.random.default_rng(2).poisson(32, n)
    T = np.vstack([oracle.landmark_triplets([h], int(c)) for h, c in enumerate(counts) if c >= 20])
    now = LOE(random_state=0).fit(T, n_items=n)
    assert now.auto_search_ is None and now.landmarks_.size == np.count_nonzero(counts >= 20) > 180
    monkeypatch.setattr(loe_module, "AUTO_MAX_LANDMARKS", 100)
    capped = LOE(random_state=0).fit(T, n_items=n)
    held = oracle.uniform_triplets(20_000)
    from loe_viz.kernels.sampling import triplet_agreement
    assert triplet_agreement(now.embedding_, held) > triplet_agreement(capped.embedding_, held) + 0.03
    assert procrustes_error(X, now.embedding_) < 0.8 * procrustes_error(X, capped.embedding_)


@pytest.mark.filterwarnings("ignore::loe_viz.LOEWarning")
def test_auto_takes_at_most_the_200_busiest_heads():
    n = 300
    X = make_points("gaussian", n, random_state=0)
    T = TripletOracle(X, random_state=1).landmark_triplets(np.arange(n), 80)  # every item heads 80 (>= n / 5)
    est = LOE(random_state=0).fit(T, n_items=n)
    assert est.landmarks_.size == 200 and est.auto_search_ is None
    assert np.isfinite(est.embedding_).all()


def test_auto_uses_every_evenly_covered_head_without_a_search():
    X = make_points("gaussian", 200, random_state=0)
    T = TripletOracle(X, random_state=1).landmark_triplets([1, 20, 50, 77, 120, 160, 190], 4000)
    est = LOE(random_state=0).fit(T, n_items=200)
    np.testing.assert_array_equal(np.sort(est.landmarks_), [1, 20, 50, 77, 120, 160, 190])
    assert est.auto_search_ is None


# ------------------------------------------------------------------ cancellation
def test_a_set_event_stops_a_ranking_at_a_newton_boundary():
    X = make_points("gaussian", 500, random_state=0)
    near, far = TripletOracle(X, random_state=1).comparisons(0, 20_000, seed=3)
    ev = threading.Event()
    ev.set()
    with pytest.raises(RankingCancelled, match="ranking of landmark 0 cancelled after 0 Newton"):
        rank_column(near, far, 0, 500, cancel=ev)


@pytest.mark.parametrize("selection", ["random", "maxmin"])
def test_progress_that_raises_stops_the_fit_and_its_threads(monkeypatch, selection):
    # n = 20000 with 50 landmarks: the first progress call raises; no new landmark task may
    # start, running rankings stop at their next Newton iteration, the error propagates.
    started, finished, cancelled = [], [], []
    real = tasks.rank_column

    def counting(*a, **kw):
        started.append(1)
        try:
            out = real(*a, **kw)
        except RankingCancelled:
            cancelled.append(1)
            raise
        finished.append(1)
        return out

    monkeypatch.setattr(tasks, "rank_column", counting)
    X = make_points("gaussian", 20_000, random_state=0)
    before = threading.active_count()

    class Stop(Exception):
        pass

    def progress(stage, done, total):
        raise Stop(f"{stage} {done}/{total}")

    t0 = time.perf_counter()
    with pytest.raises(Stop):
        LOE(n_landmarks=50, n_jobs=2, landmark_selection=selection, random_state=0).fit_oracle(
            TripletOracle(X, random_state=1), 400_000, progress=progress)
    elapsed = time.perf_counter() - t0
    assert threading.active_count() == before  # the worker threads have ended
    assert len(started) <= 2  # at most the tasks already running: no new one started
    assert len(finished) + len(cancelled) == len(started)
    assert len(finished) < 50
    print(f"returned {elapsed:.2f} s after the start; {len(started)} started, {len(cancelled)} cancelled")


def test_the_link_choice_polishes_the_chosen_fit_as_a_fit_with_refine_ordinal_would():
    # n_landmarks="auto" judges the ordinal link by polishing the chosen sub-fit itself rather than
    # fitting again with refine="ordinal": the same seed gives the same rankings, so the same polish
    from loe_viz.refine import polish

    X = make_points("gaussian", 300, random_state=1)
    spread = [X[:, 0].argmax(), X[:, 0].argmin(), X[:, 1].argmax(), X[:, 1].argmin(), (X ** 2).sum(1).argmin()]
    T = TripletOracle(X, temperature=0.0, random_state=2).landmark_triplets(np.sort(spread), 4000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LOEWarning)
        plain = LOE(refine=None, random_state=3).fit(T, n_items=300)
        ordinal = LOE(refine="ordinal", random_state=3).fit(T, n_items=300)
    st = plain.stages_
    again = polish(st.lmds.embedding, st.ranking.R, plain.landmarks_, 2, unranked=st.ranking.unranked, give_up=True)
    assert again is not None and ordinal.stages_.refine is not None
    np.testing.assert_array_equal(again.embedding, ordinal.embedding_)


def test_auto_link_choice_on_noisy_collected_heads_keeps_the_btl_link():
    X, oracle, T = _zipf_set(seed=4)
    auto = LOE(random_state=0).fit(T, n_items=200)
    link = auto.auto_search_["link_accuracy"]
    assert set(link) == {"btl", "ordinal"} and auto.auto_search_["refine"] in ("auto", "ordinal")
    assert (auto.auto_search_["refine"] == "ordinal") == (link["ordinal"] > link["btl"])


@pytest.mark.filterwarnings("ignore::loe_viz.LOEWarning")
def test_the_link_choice_does_not_polish_rankings_too_sparse_for_an_order(monkeypatch):
    """Zipf-headed triplets with fewer comparisons per head than items (as collected files have): the polish that
    judged the ordinal link was abandoned every time, after 40 to 50 % of the fit's time; it is no longer tried,
    and the fit is the same."""
    import loe_viz.loe as loe_module

    n = 500  # bench_collected.py's sets: 10 n ln n triplets, heads Zipf-distributed (s = 1), BTL answers
    X = make_points("gaussian", n, random_state=5)
    oracle = TripletOracle(X, temperature=1.0, random_state=6)
    rng = np.random.default_rng(7)
    w = 1.0 / (rng.permutation(n) + 1.0)
    counts = rng.multinomial(int(10 * n * np.log(n)), w / w.sum())
    T = np.vstack([oracle.landmark_triplets([h], int(c)) for h, c in enumerate(counts) if c > 0])
    calls = []
    real = loe_module.ordinal_polish
    monkeypatch.setattr(loe_module, "ordinal_polish", lambda *a, **k: calls.append(1) or real(*a, **k))
    now = LOE(random_state=0).fit(T, n_items=n)
    assert now.auto_search_ is not None and calls == [] and set(now.auto_search_["link_accuracy"]) == {"btl"}
    assert now.stages_.ranking.comparisons_per_item < loe_module.SPARSE_COMPARISONS
    monkeypatch.setattr(loe_module, "SPARSE_COMPARISONS", 0.0)  # as before: tried, and abandoned
    tried = LOE(random_state=0).fit(T, n_items=n)
    assert calls == [1] and tried.auto_search_["link_accuracy"]["ordinal"] == tried.auto_search_["link_accuracy"]["btl"]
    np.testing.assert_array_equal(now.embedding_, tried.embedding_)


@pytest.mark.parametrize("regularization", [1e-3, 1.0])
def test_the_busiest_heads_rankings_out_of_a_larger_fit_place_the_items_as_a_smaller_fit(regularization):
    # n_landmarks="auto" ranks the busiest heads of its largest choice once per penalty and places the
    # items of each smaller choice from the subset of those rankings: the same as fitting it
    from loe_viz.loe import _place
    from loe_viz.ranking import RankingResult

    X, oracle, T = _collected_set(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LOEWarning)
        big = LOE(n_landmarks=40, refine=None, regularization=regularization, random_state=0).fit(T, n_items=400)
        small = LOE(n_landmarks=10, refine=None, regularization=regularization, random_state=5).fit(T, n_items=400)
    keep = np.isin(big.landmarks_, small.landmarks_)
    assert keep.sum() == 10
    ranking = RankingResult.from_columns([c for c, k in zip(big.stages_.ranking.columns, keep) if k], 400,
                                         regularization)
    shifts, edm, D, lmds = _place(ranking, 2, "lambda2")
    np.testing.assert_array_equal(ranking.landmarks, small.landmarks_)
    np.testing.assert_allclose(shifts.s, small.stages_.shifts.s, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(lmds.embedding, small.embedding_, rtol=1e-9, atol=1e-9)


def _collected_set(seed, n=400, m=25_000):
    """Crowd-style triplets: Zipf-distributed heads (most with a few triplets), BTL answers at T = 1."""
    rng = np.random.default_rng(seed)
    X = make_points("gaussian", n, random_state=seed)
    w = 1.0 / (rng.permutation(n) + 1.0)
    counts = rng.multinomial(m, w / w.sum())
    oracle = TripletOracle(X, random_state=seed + 1)
    T = np.vstack([oracle.landmark_triplets([h], int(c)) for h, c in enumerate(counts) if c > 0])
    return X, oracle, T[rng.permutation(T.shape[0])]


@pytest.mark.parametrize("seed", [0, 3])
def test_auto_search_on_collected_heads_picks_the_stronger_penalty_that_predicts_better(seed, monkeypatch):
    # a few triplets per item and head: the default penalty lets the scores of items that won or lost
    # all their few comparisons run off; the held-out search takes 1.0 instead, and the embedding is
    # closer to the truth and predicts fresh triplets better than the same search with the default only
    import loe_viz.loe as loe_module

    X, oracle, T = _collected_set(seed)
    held = oracle.uniform_triplets(20_000)  # fresh: none used in fitting
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LOEWarning)
        searched = LOE(random_state=0).fit(T, n_items=400)
        monkeypatch.setattr(loe_module, "AUTO_REGULARIZATION", ())
        fixed = LOE(random_state=0).fit(T, n_items=400)
    found = searched.auto_search_
    assert found["regularization"] == [1e-3, 1.0] and fixed.auto_search_["regularization"] == [1e-3]
    table = np.array(found["heldout_accuracy"])
    assert table.shape == (len(found["n_landmarks"]), 2)
    # the penalty: 1.0 beats the default's best by more than the held-out share's standard error;
    # the landmarks: the best number at that penalty
    default, strong = table[:, 0].max(), table[:, 1].max()
    assert strong > default + np.sqrt(default * (1 - default) / found["heldout_triplets"])
    assert (found["chosen"], found["chosen_regularization"]) == (found["n_landmarks"][table[:, 1].argmax()], 1.0)
    assert searched.stages_.ranking.regularization == 1.0 and searched.regularization == 1e-3  # the param stays
    from loe_viz.kernels.sampling import triplet_agreement
    assert triplet_agreement(searched.embedding_, held) > triplet_agreement(fixed.embedding_, held) + 0.02
    assert procrustes_error(X, searched.embedding_) < 0.75 * procrustes_error(X, fixed.embedding_)
