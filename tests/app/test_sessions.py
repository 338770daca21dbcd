"""Sessions of the served explorer are freed when their page closes; runs stop when cancelled.

The explorer is served in this process (``serverlab.InProcessServer``) so the test
can count the explorer's objects that are still alive after a garbage collection.
"""

from __future__ import annotations

import threading
import time

import pytest

from loe_viz.app.state import ExplorerState

from serverlab import CHROMIUM, InProcessServer, Tracker, cpu_seconds, job_threads, launch_chromium


# LiveEmbedding: the Embedding step's plots, their data and Bokeh source (kept by HoloViews' option store
# through their hooks, one per closed page, until the hooks held it weakly)
STATE_CLASSES = ("Explorer", "ExplorerState", "CompareState", "TripletsState", "LiveEmbedding")


@pytest.fixture
def tracker(monkeypatch):
    """The explorer's objects made during the test (:data:`STATE_CLASSES`), counted without scanning the heap."""
    from loe_viz.app.explorer import Explorer
    from loe_viz.app.plots import LiveEmbedding
    from loe_viz.app.compare_state import CompareState
    from loe_viz.app.triplets_state import TripletsState

    return Tracker(monkeypatch, Explorer, ExplorerState, CompareState, TripletsState, LiveEmbedding)


def _wait(cond, timeout: float, step: float = 0.2) -> bool:
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        if cond():
            return True
        time.sleep(step)
    return cond()


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium")
def test_closed_sessions_leave_nothing_alive(tracker):
    sync_api = pytest.importorskip("playwright.sync_api")
    from bokeh.io.doc import _PATCHED_CURDOCS

    before = tracker.live(*STATE_CLASSES)  # none: the tracker counts what this test makes
    patched = len(_PATCHED_CURDOCS)
    srv = InProcessServer(unused_ms=3000)
    try:
        with sync_api.sync_playwright() as p:
            b = launch_chromium(p)
            for seed in range(3):
                ctx = b.new_context()
                page = ctx.new_page()
                page.goto(f"{srv.url}?n=300&seed={seed}&step={'embedding' if seed else 'configure'}",
                          timeout=180_000)
                page.get_by_text("Procrustes error").first.wait_for(timeout=180_000)
                assert tracker.live("Explorer")["Explorer"] >= before["Explorer"] + 1
                if seed:  # the Embedding step drawn: its plots are alive while the page is
                    assert _wait(lambda: tracker.live("LiveEmbedding")["LiveEmbedding"] > before["LiveEmbedding"], 60)
                ctx.close()
                ctx.close()
            b.close()
        assert _wait(lambda: srv.session_count() == 0, 60), srv.session_count()
        counts = tracker.live(*STATE_CLASSES)
        assert counts == before, (counts, before)
        # closing a discarded session touches no destroyed document (bokeh's curdoc stack stays flat)
        assert len(_PATCHED_CURDOCS) == patched, len(_PATCHED_CURDOCS)
        assert job_threads() == []
    finally:
        srv.stop()


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium")
def test_eight_concurrent_sessions_each_show_their_own_result(tracker):
    import re

    sync_api = pytest.importorskip("playwright.sync_api")
    from loe_viz.app.explorer import Explorer

    def explorers():
        return [e for e in tracker.instances(Explorer) if not e._closed]

    earlier = {id(e) for e in explorers()}
    srv = InProcessServer(unused_ms=3000)
    configs = [(200 + 40 * k, k) for k in range(8)]
    try:
        with sync_api.sync_playwright() as p:
            b = launch_chromium(p)
            pages = []
            for n, seed in configs:  # every page requested before any result is awaited
                ctx = b.new_context()
                page = ctx.new_page()
                page.goto(f"{srv.url}?n={n}&seed={seed}", wait_until="commit", timeout=180_000)
                pages.append((ctx, page))
            shown = []
            for (ctx, page), (n, seed) in zip(pages, configs):
                page.get_by_text(re.compile(rf"n = {n:,}, d = 2")).first.wait_for(timeout=300_000)
                url = page.url
                shown.append((int(re.search(r"[?&]n=(\d+)", url).group(1)),
                              int(re.search(r"[?&]seed=(\d+)", url).group(1))))
            used = sorted((e.state.config_used["n"], e.state.config_used["seed"])
                          for e in explorers() if id(e) not in earlier)
            for ctx, _ in pages:
                ctx.close()
            b.close()
        assert shown == configs
        assert used == configs  # each session computed its own configuration, once
        assert _wait(lambda: srv.session_count() == 0, 60), srv.session_count()
    finally:
        srv.stop()


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium")
def test_closing_the_tab_stops_a_lesson_sweep_before_the_session_is_discarded(tracker):
    sync_api = pytest.importorskip("playwright.sync_api")

    from loe_viz.app.explorer import Explorer

    srv = InProcessServer(unused_ms=120_000)  # the session outlives the test: only the closed tab stops the sweep
    try:
        with sync_api.sync_playwright() as p:
            b = launch_chromium(p)
            earlier = {id(o) for o in tracker.instances(Explorer)}
            ctx = b.new_context()
            page = ctx.new_page()
            page.goto(f"{srv.url}?n=200", timeout=180_000)
            page.get_by_text("Procrustes error").first.wait_for(timeout=180_000)
            (e,) = [o for o in tracker.instances(Explorer) if id(o) not in earlier]
            sweep = e._lessons.sweep
            started = threading.Event()

            def start():
                sweep.param.update(variable="n", values=[10_000, 20_000], seeds=3, budget=20.0, n_landmarks=20)
                e._lessons._sweep_view._run.clicks += 1
                started.set()
            e.state.dispatch(start)
            assert started.wait(30) and _wait(lambda: sweep.running, 10)
            time.sleep(1.0)
            assert sweep.running
            ctx.close()
            assert _wait(lambda: not sweep.jobs.busy, 10), "the sweep went on"
            assert srv.session_count() == 1 and not e._closed  # stopped by the closed tab, not by the discard
            b.close()
    finally:
        srv.stop()


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium")
def test_tabs_closed_during_a_comparison_a_triplet_run_or_an_upload_stop_it_and_leave_nothing(monkeypatch, caplog,
                                                                                              tracker):
    """A tab closed mid-run: the run is cancelled at once, its thread ends, the session's objects are
    freed when it is discarded, and the server logs no traceback and no warning."""
    import logging

    sync_api = pytest.importorskip("playwright.sync_api")
    import loe_viz.app.state as state_module
    from loe_viz.app.explorer import Explorer

    reading, release = threading.Event(), threading.Event()
    real = state_module.read_points_upload

    def slow_read(content, name):
        reading.set()
        release.wait(60)
        return real(content, name)

    monkeypatch.setattr(state_module, "read_points_upload", slow_read)
    before = tracker.live(*STATE_CLASSES)
    srv = InProcessServer(unused_ms=3000)
    try:
        with caplog.at_level(logging.WARNING), sync_api.sync_playwright() as p:
            b = launch_chromium(p)

            def opened(url):
                earlier = {id(o) for o in tracker.instances(Explorer)}
                ctx = b.new_context(viewport={"width": 1280, "height": 800})
                page = ctx.new_page()
                page.goto(url, timeout=180_000)
                page.locator(".loe-status").get_by_text("Procrustes error").wait_for(timeout=180_000)
                (e,) = [o for o in tracker.instances(Explorer) if id(o) not in earlier]
                return ctx, page, e

            # a comparison of the baselines at n = 2000 (each method may take up to 30 s)
            ctx, page, e = opened(f"{srv.url}?n=2000&step=Compare")
            page.get_by_text("Run comparison").first.click()
            assert _wait(lambda: e._compare.running, 30)
            time.sleep(1.0)
            ctx.close()
            assert _wait(lambda: not e._compare.jobs.busy, 10), "the comparison went on"
            # a "Your triplets" run (LOE, STE, LOE-STE on 25,000 triplets)
            ctx, page, e = opened(f"{srv.url}?n=200")
            page.get_by_text("Your triplets", exact=True).first.click()
            page.locator(".loe-tr-sample select").select_option(label="Gaussian 2-D: 25,000 landmark triplets")
            page.get_by_text("Read 25,000 triplets").first.wait_for(timeout=60_000)
            page.locator(".loe-tr-run button").first.click()
            assert _wait(lambda: e._triplets.state.running, 30)
            ctx.close()
            assert _wait(lambda: not e._triplets.state.jobs.busy, 10), "the triplet run went on"
            # a points upload being read
            ctx, page, e = opened(f"{srv.url}?n=200")
            rows = "".join(f"{i % 7},{(i * i) % 11}\n" for i in range(60))
            page.locator(".loe-upload input[type=file]").set_input_files(
                {"name": "mine.csv", "mimeType": "text/csv", "buffer": f"x,y\n{rows}".encode()})
            assert reading.wait(60)
            ctx.close()
            assert _wait(lambda: e.state.reading == "", 10), "the read was not dropped"
            release.set()
            assert _wait(lambda: not e.state._reads.busy, 10)
            time.sleep(1.0)
            assert e.state.kind != "uploaded" and not e.state.jobs.busy  # nothing ran for the closed tab
            del e
            b.close()
            assert _wait(lambda: srv.session_count() == 0, 60), srv.session_count()
            assert _wait(lambda: job_threads() == [], 10), job_threads()
            assert tracker.live(*STATE_CLASSES) == before
        # Bokeh says in one line that a message could not reach a closed page; the Compare plot's log axis
        # warns about a first iterate alone (a plot's matter, not a server's): neither has a traceback
        expected = ("Failed sending message as connection was closed", "Logarithmic axis range")
        logged = [r for r in caplog.records if r.exc_info or (r.levelno >= logging.WARNING
                                                               and not r.getMessage().startswith(expected))]
        assert not logged, caplog.text
    finally:
        release.set()
        srv.stop()


@pytest.fixture
def slow_rankings(monkeypatch):
    """Each landmark's task first waits 0.3 s: 50 landmarks on 2 threads take 7.5 s or more however
    fast the machine, so a run is surely still going when a test interrupts it."""
    import loe_viz.loe as loe_module

    rank = loe_module.rank_oracle

    def slow(*args, **kwargs):
        time.sleep(0.3)
        return rank(*args, **kwargs)

    monkeypatch.setattr(loe_module, "rank_oracle", slow)


def test_cancel_stops_the_worker_promptly(slow_rankings):
    s = ExplorerState(background=True, auto_update=False, n_jobs=2, n=20_000, d=2, n_landmarks=50,
                      budget_unit="per_landmark", budget=400_000.0)
    s.run(force=True)
    assert _wait(lambda: s.jobs.thread is not None, 5)
    time.sleep(2.0)  # well inside the rankings
    assert s.busy and s.version == 0
    t0 = time.perf_counter()
    s.cancel()
    assert s.wait(10), "the run did not stop"
    stopped = time.perf_counter() - t0
    assert s.jobs.thread is None and not s.busy and s.version == 0
    assert s.status.startswith("Cancelled"), s.status
    assert stopped < 5.0, stopped  # LOE stops at its next heartbeat (~0.25 s) or Newton iteration
    # no thread of the fit keeps computing: the process is idle again
    c0 = cpu_seconds()
    time.sleep(1.0)
    assert cpu_seconds() - c0 < 0.5
    assert not [t for t in threading.enumerate() if t.name.startswith("ThreadPoolExecutor")]
    s.close()


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium")
def test_a_long_run_shows_it_is_running_and_cancel_in_the_page_stops_it(slow_rankings):
    """The page shows a run as running only after ``BUSY_DELAY`` (quick runs do not flicker), so a
    long one must still get its "computing…" line and an enabled Cancel, and Cancel must stop it."""
    sync_api = pytest.importorskip("playwright.sync_api")

    srv = InProcessServer()
    try:
        with sync_api.sync_playwright() as p:
            b = launch_chromium(p)
            page = b.new_page(viewport={"width": 1280, "height": 800})
            page.goto(f"{srv.url}?n=300&n_landmarks=20&seed=1", timeout=180_000)
            status = page.locator(".loe-status")
            status.get_by_text("Procrustes error").wait_for(timeout=180_000)
            cancel = page.locator(".loe-cancel button")
            assert cancel.is_disabled()
            box = page.locator(".loe-seed input").first
            box.fill("2")
            box.press("Enter")  # 20 landmarks, each task 0.3 s longer: 3 s or more on 2 threads
            status.get_by_text("computing").wait_for(timeout=30_000)
            assert not cancel.is_disabled()
            cancel.click()
            page.get_by_text("Cancelled: the results shown are those of the previous run.").wait_for(timeout=30_000)
            assert cancel.is_disabled()
            b.close()
    finally:
        srv.stop()


def test_the_first_screen_says_the_first_embedding_is_being_computed(monkeypatch):
    """A served page's first run starts once the page is there, and was shown BUSY_DELAY later still: through a slow
    hall network the status line stayed empty for seconds, under a box saying "the messages above say why"."""
    import panel as pn

    import loe_viz.app.explorer as explorer_module

    loaded = []
    monkeypatch.setattr(explorer_module, "in_server_session", lambda: True)
    monkeypatch.setattr(pn.state, "onload", loaded.append)
    monkeypatch.setattr(pn.state, "on_session_destroyed", lambda fn: None)
    e = explorer_module.Explorer(sync_url=False, n=300)
    try:
        assert e.status.object == "Computing the first embedding…" and loaded == [e._first_run]
        e.state.auto_update = False
        e.state.error = "bad"  # a first result that did not come says so instead
        assert e.status.object == "bad" or e.alert.visible
    finally:
        e.close()


def test_a_new_configuration_cancels_the_running_one(slow_rankings):
    s = ExplorerState(background=True, auto_update=False, n_jobs=2, n=20_000, d=2, n_landmarks=50,
                      budget_unit="per_landmark", budget=400_000.0)
    s.run(force=True)
    time.sleep(1.5)
    s.auto_update = True
    s.param.update(n=300, n_landmarks=None, budget=2000.0)  # small: runs at once
    assert s.wait(30)
    assert s.version == 1 and s.config_used["n"] == 300 and not s.busy
    s.close()


def test_a_cancel_reaches_the_ordinal_polish_of_loe():
    """The polish ran without a heartbeat: a "Your triplets" fit went on for seconds after Cancel."""
    import numpy as np

    from loe_viz import LOE

    rng = np.random.default_rng(3)
    n = 1500
    X = rng.normal(size=(n, 2))
    T = rng.integers(0, n, size=(200_000, 3))
    T = T[(T[:, 0] != T[:, 1]) & (T[:, 0] != T[:, 2]) & (T[:, 1] != T[:, 2])]
    far = ((X[T[:, 0]] - X[T[:, 1]]) ** 2).sum(1) > ((X[T[:, 0]] - X[T[:, 2]]) ** 2).sum(1)
    T[far] = T[far][:, [0, 2, 1]]

    class Stop(Exception):
        pass

    stages = []

    def progress(stage, done, total):
        stages.append((stage, done, total))
        if stage == "refine":
            raise Stop

    with pytest.raises(Stop):
        LOE(n_components=2, n_landmarks=40, refine="ordinal", random_state=0).fit(T, n_items=n, progress=progress)
    assert stages[-1] == ("refine", 0, 1)  # stopped by a heartbeat inside the polish, not after it
    assert not [t for t in threading.enumerate() if t.name.startswith("ThreadPoolExecutor")]


_PANE_JS = """e => [...(e.shadowRoot || e).children].filter(c => !['STYLE', 'LINK', 'SCRIPT'].includes(c.tagName))
    .map(c => c.innerText || '').join(' ')"""


def _pane_text(page, selector: str) -> str:
    return page.locator(selector).first.evaluate(_PANE_JS)


def _wait_pane(page, selector: str, text: str, timeout: float = 120) -> str:
    assert _wait(lambda: text in _pane_text(page, selector), timeout), (_pane_text(page, selector), _pane_text(page, ".loe-tr-error"), _pane_text(page, ".loe-tr-reading"))
    return _pane_text(page, selector)


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium")
def test_other_requests_are_served_while_an_upload_is_read(monkeypatch):
    """An upload was read on the server's event loop: a 10 MB file stalled every page, static files too,
    for as long as the read took (13 to 40 s). The read here lasts until another visitor's page and a
    static file have been served, or gives up (then the test fails)."""
    import urllib.request

    sync_api = pytest.importorskip("playwright.sync_api")
    import loe_viz.app.triplets_state as ts

    started, answered = threading.Event(), threading.Event()
    saw_answer = []
    real = ts._read_triplet_upload

    def slow_read(content, name, *args):
        started.set()
        saw_answer.append(answered.wait(60))  # a read on the event loop waits here in vain
        return real(content, name, *args)

    monkeypatch.setattr(ts, "_read_triplet_upload", slow_read)
    srv = InProcessServer(unused_ms=3000)
    try:
        with sync_api.sync_playwright() as p:
            b = launch_chromium(p)
            ctx = b.new_context()
            page = ctx.new_page()
            page.goto(srv.url, timeout=180_000)
            page.get_by_text("Your triplets", exact=True).first.click()
            _wait_pane(page, ".loe-tr-sentence", "Read 4,000 triplets")
            page.locator(".loe-tr-upload input[type=file]").set_input_files(
                {"name": "mine.csv", "mimeType": "text/csv", "buffer": b"0,1,2\n1,2,3\n2,3,0\n3,0,1\n0,2,3\n"})
            assert started.wait(120), "the upload never reached the reader"
            # while the read goes on: another visitor's page and a static file are served
            with urllib.request.urlopen(srv.url, timeout=120) as r:
                assert r.status == 200 and b"bokeh" in r.read()
            with urllib.request.urlopen(f"http://127.0.0.1:{srv.port}/static/js/bokeh.min.js", timeout=120) as r:
                assert r.status == 200
            answered.set()
            _wait_pane(page, ".loe-tr-sentence", "Read 5 triplets")
            ctx.close()
            b.close()
        assert saw_answer == [True], "the read blocked the server: nothing else was answered meanwhile"
    finally:
        answered.set()
        srv.stop()


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium")
def test_a_points_upload_is_read_while_other_requests_are_served_and_the_page_says_so(monkeypatch):
    """The walk-through's points upload was parsed on the server's event loop: every visitor's page
    waited for it. The read here lasts until another visitor's page has been served, or gives up."""
    import urllib.request

    sync_api = pytest.importorskip("playwright.sync_api")
    import loe_viz.app.state as state_module

    started, answered = threading.Event(), threading.Event()
    saw_answer = []
    real = state_module.read_points_upload

    def slow_read(content, name):
        started.set()
        saw_answer.append(answered.wait(60))  # a read on the event loop waits here in vain
        return real(content, name)

    monkeypatch.setattr(state_module, "read_points_upload", slow_read)
    srv = InProcessServer(unused_ms=3000)
    rows = "".join(f"{i % 7},{(i * i) % 11}\n" for i in range(60))
    try:
        with sync_api.sync_playwright() as p:
            b = launch_chromium(p)
            ctx = b.new_context(viewport={"width": 1280, "height": 800})
            page = ctx.new_page()
            page.goto(f"{srv.url}?n=200", timeout=180_000)
            page.locator(".loe-status").get_by_text("Procrustes error").wait_for(timeout=180_000)
            page.locator(".loe-upload input[type=file]").set_input_files(
                {"name": "mine.csv", "mimeType": "text/csv", "buffer": f"x,y\n{rows}".encode()})
            assert started.wait(120), "the upload never reached the reader"
            with urllib.request.urlopen(srv.url, timeout=120) as r:  # another visitor, meanwhile
                assert r.status == 200 and b"bokeh" in r.read()
            _wait_pane(page, ".loe-reading", "Reading \u2068mine.csv\u2069…")
            assert page.locator(".loe-run button").first.is_disabled()
            assert page.locator(".loe-run-all button").first.is_disabled()
            answered.set()
            page.locator(".loe-status").get_by_text("n = 60,").wait_for(timeout=120_000)
            assert not page.locator(".loe-reading").first.is_visible()
            assert not page.locator(".loe-run button").first.is_disabled()
            ctx.close()
            b.close()
        assert saw_answer == [True], "the read blocked the server: nothing else was answered meanwhile"
    finally:
        answered.set()
        srv.stop()


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium")
def test_the_page_shows_an_upload_is_being_read(monkeypatch):
    sync_api = pytest.importorskip("playwright.sync_api")
    import loe_viz.app.triplets_state as ts

    started, release = threading.Event(), threading.Event()
    real = ts._read_triplet_upload

    def slow_read(content, name, *args):
        started.set()
        release.wait(120)
        return real(content, name, *args)

    monkeypatch.setattr(ts, "_read_triplet_upload", slow_read)
    srv = InProcessServer(unused_ms=3000)
    try:
        with sync_api.sync_playwright() as p:
            b = launch_chromium(p)
            ctx = b.new_context(viewport={"width": 1280, "height": 800})
            page = ctx.new_page()
            page.goto(srv.url, timeout=180_000)
            page.get_by_text("Your triplets", exact=True).first.click()
            _wait_pane(page, ".loe-tr-sentence", "Read 4,000 triplets")
            page.locator(".loe-tr-upload input[type=file]").set_input_files(
                {"name": "mine.csv", "mimeType": "text/csv", "buffer": b"0,1,2\n1,2,3\n2,3,0\n3,0,1\n0,2,3\n"})
            assert started.wait(120)
            _wait_pane(page, ".loe-tr-reading", "Reading \u2068mine.csv\u2069…")
            assert page.locator(".loe-tr-run button").first.is_disabled()
            release.set()
            _wait_pane(page, ".loe-tr-sentence", "Read 5 triplets")
            assert not page.locator(".loe-tr-reading").first.is_visible()
            ctx.close()
            b.close()
    finally:
        release.set()
        srv.stop()


def test_a_page_over_the_per_address_limit_builds_no_explorer_and_a_discarded_session_frees_its_slot(monkeypatch,
                                                                                                       tracker):
    """LOE_VIZ_MAX_PAGES_PER_ADDRESS = 1: a second page from the address is the message alone (no Explorer, no
    state, no worker thread); a page requested but never shown (a script's GET) holds its slot until the server
    discards its session, then the next page is the explorer again."""
    import re
    import urllib.error
    import urllib.request

    import loe_viz.app.serving as serving

    monkeypatch.setattr(serving, "MAX_PAGES_PER_ADDRESS", 1)

    def title():
        try:
            with urllib.request.urlopen(srv.url, timeout=120) as r:
                status, body = r.status, r.read().decode()
        except urllib.error.HTTPError as e:  # a refused page: 429, its body the sentence that says why
            status, body = e.code, e.read().decode()
        found = re.search(r"<title>(.*?)</title>", body, re.S).group(1).strip()
        assert status == (429 if found.endswith(": too many pages open") else 200), (status, found)
        return found

    before = tracker.live(*STATE_CLASSES)
    srv = InProcessServer(unused_ms=8000)  # long enough for the requests below on a busy machine
    try:
        assert "too many" not in title()
        from loe_viz.app import warmup

        if warmup._warm_thread is not None:  # the first page of the process starts the warm-up, whose
            warmup._warm_thread.join(600)    # states would be collected during the count below
        built = tracker.live(*STATE_CLASSES)
        assert built["Explorer"] == before["Explorer"] + 1 and serving.open_pages("127.0.0.1") == 1
        for _ in range(3):
            assert title().endswith(": too many pages open")
        assert tracker.live(*STATE_CLASSES) == built  # the refused pages built nothing of the explorer
        assert srv.session_count() == 4
        assert _wait(lambda: serving.open_pages("127.0.0.1") == 0, 60)  # discarded after 8 s unused
        assert "too many" not in title()
        assert tracker.live("Explorer")["Explorer"] >= before["Explorer"] + 1
        assert serving.open_pages("127.0.0.1") == 1
    finally:
        srv.stop()
