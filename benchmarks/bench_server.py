"""The served explorer measured as a server: memory over many sessions, concurrent sessions, cancel-to-idle.

The explorer (``apps/explorer.py``) is served in this process
(``tests/app/serverlab.py``) and driven by headless Chromium, so the script can
read the server's RSS and CPU time and count the explorer's live objects::

    python benchmarks/bench_server.py                    # all three parts
    python benchmarks/bench_server.py --parts memory --sessions 50
    python benchmarks/bench_server.py --parts cancel --json results.json
    python benchmarks/bench_server.py --parts flood --flood-cap 4

Parts
-----
memory
    Server RSS after a warm-up, after ``--sessions`` sessions opened (each until
    its first result, on each step of the walk-through in turn, 1.5 s for its plots)
    and closed, and after the server discarded them and a ``gc.collect()``; and the
    explorer objects (Explorer, ExplorerState, CompareState, TripletsState, the
    Embedding step's LiveEmbedding) and Bokeh models of closed sessions still alive.
    Targets: RSS back within 100 MB of the warm-up level, no explorer object alive,
    fewer Bokeh models left than sessions (none a session).
concurrent
    8 sessions opened at once with different n and seed; each must show its own
    result.
cancel
    For every mode (the walk-through's LOE at n = 20,000 with 9.5 * 10^7 comparisons; Compare with STE and
    LOE-STE at n = 5,000 and c = 400; a "Your triplets" run of all seven methods on a
    generated file of 2,000 items and 650,000 triplets; a lesson's sweep up to
    n = 100,000) a long run is started, then Cancel is pressed (the button's click, on
    the session's event loop) or, separately, the tab is closed.  Measured: the
    seconds until the worker thread has ended and until the process's CPU is idle
    (less than 5 % of one core over the next 0.5 s).  Target: idle within 2 s.

flood
    One client address requests ``--flood-pages`` pages, ``--flood-at-once`` at a
    time (HTTP GETs of the page, as a script sends them: each builds a page's
    session, which is never shown and is discarded after Bokeh's default 15 s),
    once without a per-address cap and once with ``LOE_VIZ_MAX_PAGES_PER_ADDRESS``
    at ``--flood-cap``, each in a fresh server process, one after the other.
    Measured: the seconds the server's event loop was busy during the flood (the
    sum of its callbacks' durations), the load time of another visitor's page
    (HTTP GET from 127.0.0.2, every second during the flood) against its time on
    the idle server, pages built and refused, and the RSS once every session was
    discarded (after ``gc.collect()``, and after ``malloc_trim``) against the RSS
    after a warm-up.  No target: the figures compare the two settings.

Timings depend on the machine's load: the script prints ``uptime``'s load
average beside them.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import sys
import threading
import time
import weakref
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "app"))

from serverlab import InProcessServer, cpu_seconds, job_threads, launch_chromium, live, rss_bytes  # noqa: E402

# LiveEmbedding: the Embedding step's plots with their data (what HoloViews' option store kept of every closed page)
STATE_CLASSES = ("Explorer", "ExplorerState", "CompareState", "TripletsState", "LiveEmbedding")
#: The steps the sessions of the memory part open on, in turn (each draws its own plots).
STEPS = ("configure", "sample", "ranking", "shifts", "edm", "embedding")
MB = 2**20


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def wait_for(cond, timeout: float, step: float = 0.05) -> bool:
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        if cond():
            return True
        time.sleep(step)
    return bool(cond())


def malloc_trim() -> None:
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:
        pass


def explorers() -> list:
    from loe_viz.app.explorer import Explorer
    return [o for o in gc.get_objects() if isinstance(o, Explorer) and not o._closed]


def bokeh_models() -> int:
    """Bokeh models alive after a garbage collection."""
    from bokeh.model import Model

    gc.collect()
    return sum(isinstance(o, Model) for o in gc.get_objects())


def open_page(browser, url: str, wait_result: bool = True):
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    page = ctx.new_page()
    page.goto(url, timeout=180_000)
    if wait_result:
        page.get_by_text("Procrustes error").first.wait_for(timeout=180_000)
    return ctx, page


def open_explorer(browser, url: str):
    """A page and the server-side Explorer of its session (held weakly)."""
    before = {id(e) for e in explorers()}
    ctx, page = open_page(browser, url)
    new = [e for e in explorers() if id(e) not in before]
    assert len(new) == 1, f"{len(new)} new explorers"
    return ctx, page, weakref.ref(new[0])


def on_session(explorer, fn, timeout: float = 60.0):
    """Run ``fn()`` on the explorer's session event loop (as a browser event would) and wait for it."""
    done = threading.Event()
    box = {}

    def call():
        try:
            box["result"] = fn()
        except Exception as exc:  # reported by the caller
            box["error"] = exc
        finally:
            done.set()
    explorer.state.dispatch(call)
    if not done.wait(timeout):
        raise TimeoutError("the session did not run the call")
    if "error" in box:
        raise box["error"]
    return box.get("result")


# ---------------------------------------------------------------------------- memory
def bench_memory(browser, sessions: int) -> dict:
    srv = InProcessServer(unused_ms=1000)
    try:
        base_objects = live(*STATE_CLASSES)
        for seed in range(3):  # warm-up: imports, compiled kernels, Bokeh's first documents
            ctx, _ = open_page(browser, f"{srv.url}?n=300&seed={100 + seed}")
            ctx.close()
        wait_for(lambda: srv.session_count() == 0, 60)
        gc.collect()
        malloc_trim()
        warm = rss_bytes()
        t0 = time.perf_counter()
        models = bokeh_models()
        for k in range(sessions):
            ctx, _ = open_page(browser, f"{srv.url}?n=300&seed={k}&step={STEPS[k % len(STEPS)]}")
            time.sleep(1.5)  # the step's plots drawn
            ctx.close()
        seconds = time.perf_counter() - t0
        after = rss_bytes()
        wait_for(lambda: srv.session_count() == 0, 60)
        objects = live(*STATE_CLASSES)
        models = bokeh_models() - models
        after_gc = rss_bytes()
        malloc_trim()
        after_trim = rss_bytes()
        leaked = {k: objects[k] - base_objects[k] for k in STATE_CLASSES}
        out = dict(sessions=sessions, seconds=round(seconds, 1), rss_warm_mb=round(warm / MB),
                   rss_after_mb=round(after / MB), rss_after_gc_mb=round(after_gc / MB),
                   rss_after_trim_mb=round(after_trim / MB), growth_after_gc_mb=round((after_gc - warm) / MB),
                   objects_of_closed_sessions=leaked, bokeh_models_of_closed_sessions=models,
                   job_threads=job_threads(), load=load())
        out["ok"] = out["growth_after_gc_mb"] <= 100 and not any(leaked.values()) and models < sessions
        return out
    finally:
        srv.stop()


# ---------------------------------------------------------------------------- concurrent
def bench_concurrent(browser, count: int = 8) -> dict:
    import re

    srv = InProcessServer(unused_ms=1000)
    try:
        configs = [(200 + 40 * k, k) for k in range(count)]
        pages = []
        t0 = time.perf_counter()
        for n, seed in configs:  # all requested before any is waited for
            ctx = browser.new_context(viewport={"width": 1400, "height": 900})
            page = ctx.new_page()
            page.goto(f"{srv.url}?n={n}&seed={seed}", wait_until="commit", timeout=180_000)
            pages.append((ctx, page))
        shown = []
        for (ctx, page), (n, seed) in zip(pages, configs):
            loc = page.get_by_text(re.compile(rf"n = {n:,}, d = 2")).first
            loc.wait_for(timeout=300_000)
            shown.append(n)
        seconds = time.perf_counter() - t0
        states = sorted((e.state.config_used.get("n"), e.state.config_used.get("seed")) for e in explorers())
        for ctx, _ in pages:
            ctx.close()
        out = dict(sessions=count, seconds_until_all_shown=round(seconds, 1), shown_n=shown,
                   server_configs=states, load=load())
        out["ok"] = states == sorted(configs) and shown == [n for n, _ in configs]
        return out
    finally:
        srv.stop()


# ---------------------------------------------------------------------------- flood
def loop_busy_meter(loop):
    """A function returning the seconds ``loop`` (on another thread) spent running callbacks since this call.

    Every callback of an asyncio loop, Tornado's included, runs through ``Handle._run``; the wrapper
    times the calls made on the loop's thread and lets every other thread's through untouched.
    """
    import asyncio.events
    import queue

    q = queue.Queue()
    loop.call_soon_threadsafe(lambda: q.put(threading.get_ident()))
    tid = q.get(timeout=30)
    original = asyncio.events.Handle._run
    busy = [0.0]

    def _run(self):
        if threading.get_ident() != tid:
            return original(self)
        t0 = time.perf_counter()
        try:
            return original(self)
        finally:
            busy[0] += time.perf_counter() - t0

    asyncio.events.Handle._run = _run
    start = busy[0]
    return lambda: busy[0] - start


def get_page(port: int, source: str, timeout: float = 300.0) -> tuple[float, bool]:
    """Seconds to receive a new page of the explorer requested from local address ``source``, and
    whether it was refused (the per-address cap's page)."""
    import http.client

    t0 = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout, source_address=(source, 0))
    try:
        conn.request("GET", "/explorer", headers={"Host": f"127.0.0.1:{port}"})
        r = conn.getresponse()
        body = r.read()
    finally:
        conn.close()
    refused = b"too many pages open" in body
    if r.status != (429 if refused else 200):  # a refused page is answered "429 Too Many Requests"
        raise RuntimeError(f"HTTP {r.status}")
    return time.perf_counter() - t0, refused


def bench_flood_one(cap: int, pages: int, at_once: int, unused_ms: int = 15_000) -> dict:
    """One flood on a fresh server in this process (see the module's docstring), with the cap at ``cap`` (0: off)."""
    from concurrent.futures import ThreadPoolExecutor

    import loe_viz.app.serving as serving

    serving.MAX_PAGES_PER_ADDRESS = cap
    srv = InProcessServer(unused_ms=unused_ms)
    try:
        for _ in range(2):  # warm-up from a third address: imports, Bokeh's first documents, the kernels
            get_page(srv.port, "127.0.0.3")
        wait_for(lambda: not any(t.name == "loe-viz-warm-up" for t in threading.enumerate()), 300)
        wait_for(lambda: srv.session_count() == 0, 120)
        gc.collect()
        malloc_trim()
        warm = rss_bytes()
        idle = sorted(get_page(srv.port, "127.0.0.2")[0] for _ in range(3))
        wait_for(lambda: srv.session_count() == 0, 120)
        meter = loop_busy_meter(srv.bokeh_server.io_loop.asyncio_loop)
        c0 = cpu_seconds()
        done = threading.Event()
        visitor = []

        def visit():
            while not done.is_set():
                visitor.append(get_page(srv.port, "127.0.0.2")[0])
                done.wait(1.0)

        probe = threading.Thread(target=visit, daemon=True)
        t0 = time.perf_counter()
        probe.start()
        with ThreadPoolExecutor(at_once) as pool:
            results = list(pool.map(lambda _: get_page(srv.port, "127.0.0.1"), range(pages)))
        seconds = time.perf_counter() - t0
        busy = meter()
        cpu = cpu_seconds() - c0
        done.set()
        probe.join(300)
        peak = rss_bytes()
        wait_for(lambda: srv.session_count() == 0, unused_ms / 1000 * 3 + 60)
        gc.collect()
        after_gc = rss_bytes()
        malloc_trim()
        after_trim = rss_bytes()
        flood_times = sorted(t for t, _ in results)
        out = dict(
            cap=cap or "off", pages=pages, at_once=at_once, unused_session_ms=unused_ms,
            built=sum(not refused for _, refused in results), refused=sum(refused for _, refused in results),
            flood_seconds=round(seconds, 1), event_loop_busy_s=round(busy, 1), server_cpu_s=round(cpu, 1),
            flood_page_median_s=round(flood_times[len(flood_times) // 2], 2), flood_page_max_s=round(flood_times[-1], 2),
            visitor_idle_median_s=round(idle[1], 2), visitor_pages=len(visitor),
            visitor_median_s=round(sorted(visitor)[len(visitor) // 2], 2) if visitor else None,
            visitor_max_s=round(max(visitor), 2) if visitor else None,
            rss_warm_mb=round(warm / MB), rss_peak_mb=round(peak / MB), rss_after_gc_mb=round(after_gc / MB),
            rss_after_trim_mb=round(after_trim / MB), growth_after_gc_mb=round((after_gc - warm) / MB),
            growth_after_trim_mb=round((after_trim - warm) / MB), sessions_left=srv.session_count(), load=load())
        return out
    finally:
        srv.stop()


def bench_flood(cap: int, pages: int, at_once: int, orders=("off", "cap")) -> list[dict]:
    """:func:`bench_flood_one` without and with the cap, each in a fresh process of this script."""
    import subprocess

    rows = []
    for which in orders:
        cmd = [sys.executable, __file__, "--parts", "flood-one", "--flood-cap", str(cap if which == "cap" else 0),
               "--flood-pages", str(pages), "--flood-at-once", str(at_once)]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("flood-one: ")]
        if proc.returncode != 0 or not lines:
            raise RuntimeError(f"the flood with {which} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        row = json.loads(lines[-1][len("flood-one: "):])
        print("flood:", json.dumps(row), flush=True)
        rows.append(row)
    return rows


# ---------------------------------------------------------------------------- cancel
def _triplet_file(n: int = 2000, m: int = 650_000, seed: int = 1) -> bytes:
    import numpy as np
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    T = rng.integers(0, n, size=(m, 3))
    T = T[(T[:, 0] != T[:, 1]) & (T[:, 0] != T[:, 2]) & (T[:, 1] != T[:, 2])]
    d1 = ((X[T[:, 0]] - X[T[:, 1]]) ** 2).sum(1)
    d2 = ((X[T[:, 0]] - X[T[:, 2]]) ** 2).sum(1)
    T[d1 > d2] = T[d1 > d2][:, [0, 2, 1]]
    return "".join(f"{a},{b},{c}\n" for a, b, c in T.tolist()).encode()


def _busy(e, mode: str) -> bool:
    if mode == "walk-through":
        return e.state.jobs.busy
    if mode == "compare":
        return e._compare.jobs.busy
    if mode == "your-triplets":
        return e._triplets.state.jobs.busy
    return e._lessons.sweep.running


def _worker_alive(mode: str) -> bool:
    names = {"walk-through": "loe-viz-pipeline", "compare": "loe-viz-compare", "your-triplets": "loe-viz-triplets",
             "sweep": "loe-viz-sweep"}
    alive = job_threads()
    return any(t.startswith(names[mode]) for t in alive) or any(
        t.name.startswith("ThreadPoolExecutor") for t in threading.enumerate())


def _start(e, mode: str, triplets: bytes) -> None:
    if mode == "walk-through":
        def go():
            e.state.param.update(n=20_000, d=2, n_landmarks=50, budget_unit="per_landmark", budget=1_900_000.0)
            e.state.run(force=True)
    elif mode == "compare":
        def go():
            cmp = e._compare
            cmp.param.update(methods=["STE", "LOESTE"], max_seconds=600.0)
            e._views[-1]._start.clicks += 1
    elif mode == "your-triplets":
        def go():
            t = e._triplets.state
            assert t.load_upload(triplets, "generated.csv"), t.error
            t.param.update(methods=["LOE", "STE", "TSTE", "SOE", "GNMDS", "CKL", "LOESTE"], max_seconds=600.0)
            e._triplets.b_run.clicks += 1
    else:
        def go():
            sw = e._lessons.sweep
            sw.param.update(variable="n", values=[50_000, 100_000], seeds=3, budget=50.0, n_landmarks=20)
            e._lessons._sweep_view._run.clicks += 1
    on_session(e, go)


def _cancel_button(e, mode: str):
    return {"walk-through": lambda: e.b_cancel, "compare": lambda: e._views[-1]._cancel,
            "your-triplets": lambda: e._triplets.b_cancel, "sweep": lambda: e._lessons._sweep_view._stop}[mode]()


def _idle_after(samples: list[tuple[float, float]], window: float = 0.5, share: float = 0.05) -> float | None:
    """First time after which the CPU used in the next ``window`` seconds is below ``share`` of a core."""
    for i, (t, c) in enumerate(samples):
        later = [(t2, c2) for t2, c2 in samples[i:] if t2 >= t + window]
        if not later:
            return None
        t2, c2 = later[0]
        if (c2 - c) / (t2 - t) < share:
            return t
    return None


def bench_cancel(browser, modes, how=("cancel", "close"), settle: float = 3.0) -> list[dict]:
    srv = InProcessServer(unused_ms=5000)
    triplets = _triplet_file()
    rows = []
    try:
        for mode in modes:
            for action in how:
                url = f"{srv.url}?{'n=5000&budget=400' if mode == 'compare' else 'n=300'}"
                ctx, page, ref = open_explorer(browser, url)
                e = ref()
                wait_for(lambda: not e.state.jobs.busy, 120)
                time.sleep(1.0)
                c0, t0 = cpu_seconds(), time.perf_counter()
                time.sleep(2.0)
                idle_share = (cpu_seconds() - c0) / (time.perf_counter() - t0)
                _start(e, mode, triplets)
                started = wait_for(lambda: _busy(e, mode), 30)
                time.sleep(settle / 2 if mode == "walk-through" else settle)  # well inside the run (LOE: 4 s)
                running = _busy(e, mode)
                busy_share_c, busy_share_t = cpu_seconds(), time.perf_counter()
                time.sleep(0.5)
                busy_share = (cpu_seconds() - busy_share_c) / (time.perf_counter() - busy_share_t)
                t0 = time.perf_counter()
                if action == "cancel":
                    button = _cancel_button(e, mode)
                    on_session(e, lambda: setattr(button, "clicks", button.clicks + 1))
                else:
                    ctx.close()
                del e
                samples = []
                thread_end = None
                while time.perf_counter() - t0 < 8.0:
                    now = time.perf_counter() - t0
                    samples.append((now, cpu_seconds()))
                    if thread_end is None and not _worker_alive(mode):
                        thread_end = now
                    time.sleep(0.05)
                idle = _idle_after(samples)
                row = dict(mode=mode, action=action, running_when_stopped=bool(started and running),
                           cpu_share_idle_before=round(idle_share, 2), cpu_share_running=round(busy_share, 2),
                           worker_ended_s=None if thread_end is None else round(thread_end, 2),
                           cpu_idle_after_s=None if idle is None else round(idle, 2), load=load())
                row["ok"] = row["running_when_stopped"] and idle is not None and idle <= 2.0
                rows.append(row)
                print(json.dumps(row), flush=True)
                if action == "cancel":
                    ctx.close()
                wait_for(lambda: not job_threads(), 60)
        return rows
    finally:
        srv.stop()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parts", default="memory,concurrent,cancel", help="any of memory, concurrent, cancel, flood")
    ap.add_argument("--sessions", type=int, default=50)
    ap.add_argument("--modes", default="walk-through,compare,your-triplets,sweep")
    ap.add_argument("--json", default=None, help="also write the results to this file")
    ap.add_argument("--flood-cap", type=int, default=4, help="LOE_VIZ_MAX_PAGES_PER_ADDRESS of the capped flood")
    ap.add_argument("--flood-pages", type=int, default=100)
    ap.add_argument("--flood-at-once", type=int, default=20)
    args = ap.parse_args(argv)
    import logging
    logging.basicConfig(level=logging.WARNING)
    # Tornado reports a write to a tab that has just closed as "Task exception was never retrieved"
    # (WebSocketClosedError); expected here, where tabs close while their session pushes updates
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    from playwright.sync_api import sync_playwright

    from _runinfo import code_version

    parts = args.parts.split(",")
    if parts == ["flood-one"]:  # one side of the flood part, in a process of its own
        print("flood-one:", json.dumps(bench_flood_one(args.flood_cap, args.flood_pages, args.flood_at_once)),
              flush=True)
        return 0
    out = {"code": code_version(), "load_at_start": load()}
    if "flood" in parts:
        out["flood"] = bench_flood(args.flood_cap, args.flood_pages, args.flood_at_once)
        parts = [x for x in parts if x != "flood"]
    print(f"load average at start: {out['load_at_start']}", flush=True)
    with sync_playwright() as p:
        browser = launch_chromium(p) if parts else None
        try:
            if "memory" in parts:
                out["memory"] = bench_memory(browser, args.sessions)
                print("memory:", json.dumps(out["memory"]), flush=True)
            if "concurrent" in parts:
                out["concurrent"] = bench_concurrent(browser)
                print("concurrent:", json.dumps(out["concurrent"]), flush=True)
            if "cancel" in parts:
                out["cancel"] = bench_cancel(browser, args.modes.split(","))
        finally:
            if browser is not None:
                browser.close()
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    ok = all(v.get("ok", True) for k, v in out.items() if isinstance(v, dict)) and all(
        r["ok"] for r in out.get("cancel", []))
    print("all targets met" if ok else "SOME TARGETS MISSED", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
