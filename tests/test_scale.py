"""Scale (issue 6): executors, the memory estimate and limit, progress reporting."""

from __future__ import annotations

import io
import math
import multiprocessing
import os
import warnings
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import pytest

from loe_viz import LOE, TripletOracle, make_points
from loe_viz._landmark_tasks import StoredTriplets
from loe_viz.progress import TextProgress
from loe_viz.resources import (
    ResourceEstimate,
    available_memory,
    estimate_resources,
    format_bytes,
    format_seconds,
    resolve_memory_limit,
)

N = 300
PER = 6000
LANDMARKS = [3, 40, 77, 150, 201, 260]


@pytest.fixture(scope="module")
def X():
    return make_points("gaussian", N, random_state=0)


@pytest.fixture(scope="module")
def triplets(X):
    return TripletOracle(X, random_state=1).landmark_triplets(LANDMARKS, PER)


@pytest.fixture(scope="module")
def stored(triplets, tmp_path_factory):
    path = tmp_path_factory.mktemp("stored") / "triplets.npy"
    np.save(path, triplets)
    return path


def fit_oracle(X, **kw):
    return LOE(n_landmarks=6, random_state=2, **kw).fit_oracle(TripletOracle(X, random_state=1), PER).embedding_


def fit_triplets(T, **kw):
    return LOE(n_landmarks=6, **kw).fit_transform(T, n_items=N)


@pytest.fixture(scope="module")
def serial(X, triplets):
    return fit_oracle(X), fit_triplets(triplets)


@pytest.fixture(scope="module")
def process_pool():
    # spawn, not fork: other tests may leave threads running, and forking them can deadlock
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        yield pool


# ------------------------------------------------------------------ executors
def test_thread_pool_equals_serial(X, triplets, serial):
    np.testing.assert_array_equal(fit_oracle(X, n_jobs=2), serial[0])
    np.testing.assert_array_equal(fit_triplets(triplets, n_jobs=2), serial[1])
    np.testing.assert_array_equal(fit_triplets(triplets, n_jobs=-1), serial[1])


def test_thread_executor_equals_serial(X, triplets, serial):
    with ThreadPoolExecutor(3) as ex:
        np.testing.assert_array_equal(fit_oracle(X, executor=ex), serial[0])
        np.testing.assert_array_equal(fit_triplets(triplets, executor=ex), serial[1])


def test_process_executor_equals_serial(X, triplets, stored, serial, process_pool):
    # the oracle's points travel, the comparisons are re-drawn from the seeds in the workers
    np.testing.assert_array_equal(fit_oracle(X, executor=process_pool), serial[0])
    # in-memory triplets: the caller cuts and sends each landmark's share
    np.testing.assert_array_equal(fit_triplets(triplets, executor=process_pool), serial[1])
    # memory-mapped triplets: each worker re-opens the file and reads its share
    mm = np.load(stored, mmap_mode="r")
    assert StoredTriplets.from_array(mm, np.ascontiguousarray(mm)) is not None
    np.testing.assert_array_equal(fit_triplets(mm, executor=process_pool), serial[1])


def test_shares_pulled_in_one_pass_equal_numpy_and_give_way_to_a_tight_memory_limit(triplets, serial):
    from loe_viz._landmark_tasks import landmark_shares
    from loe_viz._validation import comparison_dtype

    counts = np.bincount(triplets[:, 0], minlength=N)
    heads = np.array(LANDMARKS[::-1])
    for (near, far), h in zip(landmark_shares(np.ascontiguousarray(triplets), heads, counts, N), heads):
        assert near.dtype == far.dtype == comparison_dtype(N) == np.uint16  # N items fit in 16 bits
        rows = triplets[triplets[:, 0] == h]  # in row order
        np.testing.assert_array_equal(near, rows[:, 1])
        np.testing.assert_array_equal(far, rows[:, 2])
    # in this process the shares come out in one pass, and the estimate holds their buffer
    one = LOE(n_landmarks=6).fit(triplets, n_items=N)
    # a limit just under that: each task pulls its own share instead, with the same result
    tight = LOE(n_landmarks=6, memory_limit=one.resource_estimate_.peak_bytes - 1).fit(triplets, n_items=N)
    buffer = 2 * 6 * PER * 2  # uint16 near and far of every landmark's share, plus the allocator slack
    assert one.resource_estimate_.peak_bytes - tight.resource_estimate_.peak_bytes == pytest.approx(buffer * 1.10, abs=2)
    np.testing.assert_array_equal(tight.embedding_, serial[1])
    np.testing.assert_array_equal(one.embedding_, serial[1])


def test_memory_mapped_triplets_equal_in_memory(stored, serial):
    mm = np.load(stored, mmap_mode="r")
    np.testing.assert_array_equal(fit_triplets(mm), serial[1])
    np.testing.assert_array_equal(fit_triplets(mm, n_jobs=2), serial[1])


def test_stored_triplets_handle_only_for_whole_file_maps(stored):
    mm = np.load(stored, mmap_mode="r")
    handle = StoredTriplets.from_array(mm, np.ascontiguousarray(mm))
    np.testing.assert_array_equal(handle.open(), mm)
    assert "triplets.npy" in repr(handle)
    view = mm[10:]
    assert StoredTriplets.from_array(view, np.ascontiguousarray(view)) is None  # a view's offset is not exact
    assert StoredTriplets.from_array(np.asarray(mm), np.asarray(mm)) is None
    assert StoredTriplets.from_array(mm, np.ascontiguousarray(mm, dtype=np.int64)) is None  # converted: a copy


@pytest.mark.slow  # starts a local dask cluster
def test_dask_local_cluster_equals_serial(X, triplets, stored, serial):
    distributed = pytest.importorskip("distributed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(
            n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None, silence_logs=50,
        )
        try:
            with distributed.Client(cluster) as client:
                ex = client.get_executor()
                np.testing.assert_array_equal(fit_oracle(X, executor=ex), serial[0])
                np.testing.assert_array_equal(fit_triplets(triplets, executor=ex), serial[1])
                np.testing.assert_array_equal(fit_triplets(np.load(stored, mmap_mode="r"), executor=ex), serial[1])
        finally:
            cluster.close()


# -------------------------------------------------------------------- progress
def _distinct(calls):
    """The progress calls without the heartbeats (repeats of the previous call)."""
    return [c for i, c in enumerate(calls) if i == 0 or c != calls[i - 1]]


@pytest.mark.parametrize("kw", [{}, {"n_jobs": 2}, {"executor": "threads"}])
def test_progress_once_per_landmark_and_stage(X, triplets, kw):
    expected = [("ranking", i, 6) for i in range(1, 7)] + [("shifts", 1, 1), ("edm", 1, 1), ("lmds", 1, 1)]
    pilots = [("landmarks", i, 6) for i in range(1, 7)]
    with ThreadPoolExecutor(2) as ex:
        if kw.get("executor") == "threads":
            kw = {"executor": ex}
        calls = []
        LOE(n_landmarks=6, landmark_selection="random", random_state=2, **kw).fit_oracle(
            TripletOracle(X, random_state=1), PER, progress=lambda *a: calls.append(a))
        assert _distinct(calls) == expected
        calls = []
        LOE(n_landmarks=6, **kw).fit(triplets, n_items=N, progress=lambda *a: calls.append(a))
        assert _distinct(calls) == expected
        calls = []
        LOE(n_landmarks=6, random_state=2, **kw).fit_oracle(
            TripletOracle(X, random_state=1), PER, progress=lambda *a: calls.append(a))
        assert _distinct(calls) == pilots + expected


def test_text_progress_draws_tqdm_bars(X):
    # TextProgress is now the tqdm-drawn TqdmProgress (tests/test_progress.py covers it).
    out = io.StringIO()
    bar = TextProgress(file=out, min_interval=0.0, estimate=LOE(n_landmarks=6).estimate_resources(N, PER))
    LOE(n_landmarks=6, landmark_selection="random", random_state=2).fit_oracle(
        TripletOracle(X, random_state=1), PER, progress=bar)
    text = out.getvalue()
    assert text.startswith("estimate: peak memory ~")
    assert "ranking: 100%" in text and "6/6" in text and "lmds: 100%" in text
    with pytest.raises(ValueError, match=r"^estimate must be a ResourceEstimate"):
        TextProgress(estimate=3)


# ----------------------------------------------------------- memory estimate
def test_tiny_memory_limit_refuses_with_the_estimate(X, triplets):
    oracle = TripletOracle(X, random_state=1)
    with pytest.raises(ValueError, match=r"^memory_limit exceeded: this run needs an estimated peak memory ~[\d.]+ MiB "
                                         r"\(1 landmark task\(s\) at once .*time ~.*more than the limit of 1\.0 KiB"):
        LOE(n_landmarks=6, memory_limit=1024).fit_oracle(oracle, PER)
    with pytest.raises(ValueError, match=r"^memory_limit exceeded: .*\(2 landmark task\(s\) at once"):
        LOE(n_landmarks=6, n_jobs=2, memory_limit="1KiB").fit(triplets, n_items=N)
    with pytest.raises(ValueError, match=r"^memory_limit exceeded"):
        LOE(n_landmarks=6, memory_limit="0.0001%").fit(triplets, n_items=N)
    # below the fixed working memory of any fit, fewer comparisons or jobs cannot help: the advice says so
    with pytest.raises(ValueError, match=r"more than the limit of 47\.7 MiB \(memory_limit='50MB'\)\. Any fit needs "
                                         r"64\.0 MiB beside its arrays \(numba's and NumPy's working memory\): raise "
                                         r"memory_limit to at least [\d.]+ MiB \(float\('inf'\) turns the check off\)\.$"):
        LOE(n_landmarks=6, memory_limit="50MB").fit(triplets, n_items=N)
    with pytest.raises(ValueError, match=r"Use fewer comparisons per landmark, fewer parallel jobs \(n_jobs\), or a "
                                         r"higher memory_limit \(float"):
        LOE(memory_limit="1GiB").fit_oracle(oracle, 2**40)
    # the estimate is kept; generous limits pass
    model = LOE(n_landmarks=6, memory_limit="1GiB", random_state=2).fit_oracle(oracle, PER)
    assert isinstance(model.resource_estimate_, ResourceEstimate)
    LOE(n_landmarks=6, memory_limit=math.inf).fit(triplets, n_items=N)


def test_estimate_model():
    base = estimate_resources(10**6, 5, 10**8)
    # per landmark task: int32 near/far + float32 curvature = 16 bytes per comparison
    assert base.task_bytes == 16 * 10**8 + 112 * 10**6
    assert 1.6e9 < base.peak_bytes < 2.2e9 and base.concurrent_tasks == 1
    two = estimate_resources(10**6, 5, 10**8, n_jobs=2)
    assert two.peak_bytes > 1.9 * base.peak_bytes - 1e8 and two.seconds < base.seconds
    assert two.details["rounds"] == 3 and base.details["rounds"] == 5
    big = estimate_resources(2**31, 5, 10**6)  # int64 indices beyond int32
    assert big.details["bytes_per_comparison"] == 24
    stored = estimate_resources(10**5, 5, [10**6] * 5, source="triplets", n_triplets=10**9)
    copied = estimate_resources(10**5, 5, [10**6] * 5, source="triplets", n_triplets=10**9, held_bytes=12 * 10**9)
    assert copied.peak_bytes - stored.peak_bytes >= 12 * 10**9  # a converted copy of the input is held
    assert stored.ranking_seconds > estimate_resources(10**5, 5, [10**6] * 5, source="triplets").ranking_seconds
    remote = estimate_resources(10**6, 5, 10**8, n_jobs=2, remote=True)
    assert remote.worker_bytes > remote.peak_bytes and remote.concurrent_tasks == 0
    assert "on each executor worker" in remote.summary()
    assert base.seconds > 0 and base.ranking_seconds > base.sampling_seconds > 0
    assert estimate_resources(10**5, 5, 10**7).seconds < base.seconds
    with pytest.raises(ValueError, match=r"^per_landmark must be one count or 5 counts"):
        estimate_resources(100, 5, [1, 2])
    with pytest.raises(ValueError, match=r"^source must be"):
        estimate_resources(100, 5, 10, source="disk")



def test_estimate_resources_takes_n_jobs_and_n_landmarks_as_loe_does():
    """n_jobs=-1 (every core) is LOE's own setting, and a landmark is an item: the estimate follows both rules."""
    cores = os.cpu_count() or 1
    assert estimate_resources(10**5, 8, 10**6, n_jobs=-1).concurrent_tasks == min(cores, 8)
    with pytest.raises(ValueError, match=r"^n_jobs must be a positive number of threads or -1 \(every core\), got 0$"):
        estimate_resources(10**5, 8, 10**6, n_jobs=0)
    with pytest.raises(ValueError, match=r"^n_landmarks=11 is larger than the number of items \(10\)$"):
        estimate_resources(10, 11, 100)
    with pytest.raises(ValueError, match=r"^n_landmarks=11 is larger than the number of items \(10\)$"):
        LOE(n_landmarks=11).fit_oracle(TripletOracle(np.random.default_rng(0).normal(size=(10, 2)), random_state=1), 50)
    # fewer than d + 3 landmarks: no fit has them, so there is nothing to estimate (it used to give a figure)
    message = r"^n_landmarks must be >= n_components \+ 3 = 6 \(LOE needs l >= d \+ 3 to recover the shifts\), got 5$"
    with pytest.raises(ValueError, match=message):
        estimate_resources(10**5, 5, 10**6, n_components=3)
    with pytest.raises(ValueError, match=message):
        LOE(n_components=3, n_landmarks=5).estimate_resources(10**5, 10**6)
    with pytest.raises(ValueError, match=r"^n_triplets is the number of stored triplets, read only with "
                                         r"source='triplets'$"):  # it was ignored
        estimate_resources(10**5, 5, 10**6, n_triplets=10**9)


@pytest.mark.parametrize("per", [math.inf, 2.5, True, "many", [10, 10, 10, 10, math.nan]])
def test_estimate_resources_names_a_count_that_is_no_whole_number(per):
    with pytest.raises(ValueError, match=r"^per_landmark must hold whole numbers of comparisons, got "):
        estimate_resources(100, 5, per)


def test_a_count_beyond_int64_gives_a_huge_estimate_not_an_overflow():
    """10**30 comparisons raised OverflowError, and 2**62 wrapped around in int64 to a small estimate, after which
    the fit tried to allocate the arrays."""
    huge = estimate_resources(100, 5, 10**30)
    assert huge.peak_bytes > 10**30 and huge.seconds > 10**20
    assert estimate_resources(100, 5, [2**62] * 5).peak_bytes > 5 * 2**62


def test_memory_limit_settings():
    avail = available_memory()
    assert avail is None or avail > 0
    assert resolve_memory_limit("8GiB")[0] == 8 * 2**30
    assert resolve_memory_limit("500 MB")[0] == 500e6
    assert resolve_memory_limit(2.5e9)[0] == 2.5e9
    assert resolve_memory_limit(math.inf)[0] == math.inf
    if avail is not None:
        assert resolve_memory_limit(None)[0] == pytest.approx(0.8 * avail, rel=0.05)
        assert resolve_memory_limit("50%")[0] == pytest.approx(0.5 * avail, rel=0.05)
    for bad, msg in [("lots", "must be None, a number of bytes"), ("150%", "percentage must be in"),
                     (-1, "must be a positive number"), (True, "must be None"), ("0GiB", "must be positive")]:
        with pytest.raises(ValueError, match=r"^memory_limit " + msg):
            resolve_memory_limit(bad)
    with pytest.raises(ValueError, match=r"^memory_limit must be None"):
        LOE(memory_limit=[1]).fit_oracle(TripletOracle(np.random.default_rng(0).normal(size=(50, 2))), 1000)
    assert format_bytes(1536) == "1.5 KiB" and format_bytes(10) == "10 B"
    assert format_seconds(95) == "1 min 35 s" and format_seconds(3.21) == "3.2 s" and format_seconds(7300) == "2 h 02 min"
    assert format_seconds(119.6) == "2 min 00 s" and format_seconds(3599.9) == "1 h 00 min"
    assert format_seconds(0.0472) == "0.047 s" and format_seconds(0.0004) == "0.4 ms"  # not "0.0 s"
