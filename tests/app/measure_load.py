"""Measure the explorer's first page load and its control-change latency (not a test).

Usage (from the repository root)::

    python tests/app/measure_load.py            # plain `panel serve apps/explorer.py`
    python tests/app/measure_load.py --warm     # with panel serve's --warm
    python tests/app/measure_load.py --parts    # in-process breakdown of a seed change (no browser)

Starts a fresh server on a free port, opens two sessions one after the other in
headless Chromium and prints, for each, the seconds from navigation to: the HTML,
the controls, and the first LOE result in the status line.  Then, at n = 2000 on
the Embedding step, the seconds from pressing Enter in the seed box to the new
metrics being drawn (median of 5), with the part until the embedding's new data
reach the page and the part the page takes to draw them, and the CPU seconds the
browser and the server spent on each change (on one machine they share its cores:
what the page spends is taken from the fit).

``--parts`` times the server's share in-process instead (no server, no browser): at
n = 2000 on the Embedding step, for six seed changes, the pipeline (of which LOE's
sampling and ranking) and the refresh of the Embedding step (building or patching its
plots), and the size of what would be sent to the page.  Compare parts as ratios
within one run: the machine may be shared.  Chromium: $LOE_VIZ_CHROMIUM, ``chromium`` on
the PATH, or /usr/bin/chromium.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[2]
TEXT_JS = """e => { const r = e.shadowRoot; if (!r) return e.innerText || '';
    return [...r.children].filter(c => !['STYLE', 'LINK', 'SCRIPT'].includes(c.tagName))
        .map(c => c.innerText || '').join(' '); }"""

# Marks (performance.now) in window.__loe_marks: "start" when the seed box gets the Enter key (set
# now, then again by the key's own event: the automation's round trip to the page is not the
# page's time), "data" when the embedding's data source is given new columns (a listener on the
# source, not a polling loop: a loop of animation frames keeps the page drawing and takes CPU
# from the server on a shared machine), "drawn" two animation frames later.
WATCH_JS = """() => {
    const doc = Bokeh.documents[Bokeh.documents.length - 1];
    const src = [...doc.all_models].filter(m => (m.type || m.constructor.name) === 'GlyphRenderer')
        .map(r => r.data_source).find(s => s && s.data && 'ex' in s.data);
    const marks = window.__loe_marks = {start: performance.now(), data: null, drawn: null};
    if (!src) return;
    const seen = () => {
        if (marks.data !== null) return;
        marks.data = performance.now();
        requestAnimationFrame(() => requestAnimationFrame(() => { marks.drawn = performance.now(); }));
    };
    src.properties.data.change.connect(seen);
}"""
# Run on the seed box after WATCH_JS: the Enter key's own event sets "start".
KEY_JS = """box => box.addEventListener('keydown', e => {
    if (e.key === 'Enter' && window.__loe_marks) window.__loe_marks.start = performance.now(); }, {once: true})"""


def main(extra):
    chromium = next(c for c in (os.environ.get("LOE_VIZ_CHROMIUM"), shutil.which("chromium"), "/usr/bin/chromium")
                    if c and os.path.exists(c))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "panel", "serve", "apps/explorer.py", "--port", str(port), *extra],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        print(f"server listening after {time.perf_counter() - t0:.1f} s ({' '.join(extra) or 'no flags'})")
        url = f"http://localhost:{port}/explorer"
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
            for k in (1, 2):
                page = b.new_page(viewport={"width": 1600, "height": 1000})
                page.set_default_timeout(300_000)
                t1 = time.perf_counter()
                page.goto(url)
                t_html = time.perf_counter() - t1
                page.locator(".loe-next button").wait_for(timeout=120_000)
                t_ui = time.perf_counter() - t1
                while "Procrustes" not in page.locator(".loe-status").evaluate(TEXT_JS):
                    time.sleep(0.02)
                t_res = time.perf_counter() - t1
                print(f"session {k}: HTML {t_html:.1f} s, controls {t_ui:.1f} s, first result {t_res:.1f} s")
                page.close()
            page = b.new_page(viewport={"width": 1600, "height": 1000})
            page.set_default_timeout(300_000)
            page.goto(url + "?n=2000&step=5")
            status = page.locator(".loe-status")
            while "n = 2,000," not in status.evaluate(TEXT_JS):
                time.sleep(0.05)
            time.sleep(2)
            lat, fits, arrive, draw, cpu_page, cpu_server = [], [], [], [], [], []
            me, server = psutil.Process(), psutil.Process(proc.pid)

            def cpu():
                page_cpu = 0.0
                for c in me.children(recursive=True):
                    try:
                        if "chrom" in c.name().lower():
                            page_cpu += sum(c.cpu_times()[:2])
                    except psutil.Error:
                        pass
                return page_cpu, sum(server.cpu_times()[:2])

            for seed in range(1, 6):
                old = status.evaluate(TEXT_JS)
                box = page.locator(".loe-seed input").first
                box.fill(str(seed))
                page.evaluate(WATCH_JS)  # notes in the page when the embedding's data arrive and are drawn
                box.evaluate(KEY_JS)
                c0 = cpu()
                t1 = time.perf_counter()
                box.press("Enter")
                # Poll gently (every 0.1 s): the times come from the page's own marks, and a tight
                # polling loop would take CPU from the server and the page on a small machine.
                while True:
                    time.sleep(0.1)
                    marks = page.evaluate("() => window.__loe_marks")
                    txt = status.evaluate(TEXT_JS)
                    done = txt != old and "computing" not in txt and "Procrustes" in txt
                    if (done and marks.get("drawn") is not None) or time.perf_counter() - t1 > 60:
                        break
                if marks.get("drawn") is None:
                    print(f"seed {seed}: no new embedding data reached the page within 60 s")
                    continue
                c1 = cpu()
                cpu_page.append(c1[0] - c0[0])
                cpu_server.append(c1[1] - c0[1])
                lat.append((marks["drawn"] - marks["start"]) / 1000)
                arrive.append((marks["data"] - marks["start"]) / 1000)
                draw.append((marks["drawn"] - marks["data"]) / 1000)
                m = re.search(r"LOE fitted [0-9,]+ comparisons in ([0-9.]+) (ms|s|min)", txt)
                if m:
                    fits.append(float(m.group(1)) * {"ms": 1e-3, "s": 1.0, "min": 60.0}[m.group(2)])
                time.sleep(0.3)
            med = sorted(lat)[len(lat) // 2]
            print(f"seed change -> new embedding at n=2000: median {med:.2f} s, all {[round(x, 2) for x in lat]}")
            if fits:
                fmed = sorted(fits)[len(fits) // 2]
                rest = sorted(a - f for a, f in zip(lat, fits))[len(fits) // 2]
                print(f"  of which LOE's sampling and fit (fit_oracle): median {fmed:.2f} s; everything else "
                      f"(points, scores, publishing, building, sending and drawing the plots): median {rest:.2f} s")
            if arrive:
                print(f"  in the page: the embedding's new data arrive {sorted(arrive)[len(arrive) // 2]:.2f} s after "
                      f"Enter (median) and are drawn {sorted(draw)[len(draw) // 2]:.3f} s later (two animation "
                      "frames)")
            if cpu_page:
                print(f"  CPU per change (median, until drawn, polling included): browser {sorted(cpu_page)[len(cpu_page) // 2]:.2f} s, "
                      f"server {sorted(cpu_server)[len(cpu_server) // 2]:.2f} s")
            b.close()
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
    print(f"load average: {os.getloadavg()}")


def parts(n_changes: int = 6) -> None:
    """The server's share of a seed change at n = 2000, in-process (see the module's notes)."""
    import contextlib
    import warnings

    import numpy as np
    import panel.io
    from bokeh.document import Document
    from bokeh.protocol import Protocol
    from panel.io.state import set_curdoc

    sys.path.insert(0, str(ROOT))
    import loe_viz.app.state as S
    from loe_viz.app.explorer import Explorer
    from loe_viz.app.views.embedding import EmbeddingView
    from loe_viz.app.warmup import warm_up

    warnings.simplefilter("ignore")
    warm_up()
    spent = {}

    def timed(name, fn):
        def wrapper(*a, **k):
            t0 = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                spent[name] = spent.get(name, 0.0) + time.perf_counter() - t0
        return wrapper

    S.run_pipeline = timed("pipeline", S.run_pipeline)
    EmbeddingView.refresh = timed("refresh", EmbeddingView.refresh)
    panel.io.hold = lambda doc=None, **kw: contextlib.nullcontext()  # every event reaches on_change
    doc, events = Document(), []
    doc.on_change(events.append)
    rows = []
    with set_curdoc(doc):
        st = S.ExplorerState(n=2000, step=5, background=False, n_jobs=min(2, os.cpu_count() or 1))
        ex = Explorer(state=st, sync_url=False)
        doc.add_root(ex.__panel__().get_root(doc))
        for seed in range(1, n_changes + 2):
            spent.clear()
            events.clear()
            t0 = time.perf_counter()
            st.seed = seed
            total = time.perf_counter() - t0
            msg = Protocol().create("PATCH-DOC", list(events)) if events else None
            sent = sum(len(b.to_bytes()) for b in msg.buffers) if msg else 0
            tl = st.model.stages_.timings
            rows.append(dict(total=total, pipeline=spent.get("pipeline", 0.0), fit=st.metrics["fit_seconds"],
                             sampling=tl["sampling"], ranking=tl["ranking"], refresh=spent.get("refresh", 0.0),
                             kib=sent / 1024))
    ex.close()
    med = {k: float(np.median([r[k] for r in rows[1:]])) for k in rows[0]}  # the first change warms up
    print(f"seed change at n = 2000, in-process, median of {len(rows) - 1}: total {med['total']:.3f} s = "
          f"pipeline {med['pipeline']:.3f} s (LOE fit {med['fit']:.3f} s: sampling {med['sampling']:.3f}, "
          f"ranking {med['ranking']:.3f}) + Embedding step refresh {med['refresh']:.3f} s; "
          f"binary data for the page {med['kib']:.0f} KiB")
    print(f"load average: {os.getloadavg()}")


if __name__ == "__main__":
    if "--parts" in sys.argv[1:]:
        parts()
    else:
        main(sys.argv[1:])
