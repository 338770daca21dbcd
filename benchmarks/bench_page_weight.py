"""What a visitor's browser downloads to show the explorer, and how long that takes on a slow network.

Two ``panel serve apps/explorer.py`` servers run side by side: the explorer as it is served, and the
same with :func:`loe_viz.app.serving.lighten_pages` turned off (every page as Panel sends it: Bokeh's
MathJax bundle included, nothing compressed). Headless Chromium opens each page (a fresh browser
context each time, so nothing comes from its cache) and counts the bytes that crossed the network,
then opens it again with the network throttled to ``--kbps`` kilobits per second and 50 ms of latency
and times the page's ``load`` event and its first plot. The two servers alternate ``--repeats`` times::

    python benchmarks/bench_page_weight.py
    python benchmarks/bench_page_weight.py --kbps 500 --repeats 1 --json results/page_weight.json
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from _runinfo import code_version  # noqa: E402

CHROMIUM = os.environ.get("LOE_VIZ_CHROMIUM", "/usr/bin/chromium")
_SERVE = ("import sys, loe_viz.app.serving as s\n"
          "if sys.argv.pop(1) == 'heavy': s.lighten_pages = lambda: None\n"
          "from panel.command import main; main(['panel', *sys.argv[1:]])")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(kind: str):
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-c", _SERVE, kind, "serve", str(ROOT / "apps" / "explorer.py"),
                             "--port", str(port), "--address", "127.0.0.1"], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return proc, f"http://127.0.0.1:{port}/explorer"
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"panel serve ({kind}) did not listen")


def _weigh(browser, url: str) -> dict:
    """Bytes received (encoded, as they crossed the network) and decoded, by response."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    page = ctx.new_page()
    cdp = ctx.new_cdp_session(page)
    cdp.send("Network.enable")
    responses, sizes = {}, {}
    cdp.on("Network.responseReceived", lambda e: responses.__setitem__(e["requestId"], e["response"]))
    cdp.on("Network.loadingFinished", lambda e: sizes.__setitem__(e["requestId"], e["encodedDataLength"]))
    page.goto(url, wait_until="networkidle", timeout=300_000)
    page.wait_for_timeout(2000)
    ctx.close()
    files = {}
    for rid, resp in responses.items():
        name = resp["url"].split("?")[0].rsplit("/", 1)[-1] or "page"
        enc = {k.lower(): v for k, v in resp.get("headers", {}).items()}.get("content-encoding", "")
        files[name] = (files.get(name, (0, ""))[0] + sizes.get(rid, 0), enc)
    return {"bytes": sum(n for n, _ in files.values()), "requests": len(responses),
            "largest": sorted(((n, f, e) for f, (n, e) in files.items()), reverse=True)[:5]}


def _time(browser, url: str, kbps: int) -> tuple[float, float]:
    """Seconds to the page's load event and to its first plot, on a throttled network."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    page = ctx.new_page()
    cdp = ctx.new_cdp_session(page)
    cdp.send("Network.enable")
    rate = kbps * 1000 / 8
    cdp.send("Network.emulateNetworkConditions", {"offline": False, "latency": 50, "downloadThroughput": rate,
                                                   "uploadThroughput": rate})
    t0 = time.perf_counter()
    page.goto(url, wait_until="load", timeout=900_000)
    loaded = time.perf_counter() - t0
    page.wait_for_selector("canvas", timeout=900_000)
    plotted = time.perf_counter() - t0
    ctx.close()
    return loaded, plotted


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kbps", type=int, default=2000, help="throttled download and upload rate (default 2000)")
    ap.add_argument("--repeats", type=int, default=2, help="throttled loads of each server (default 2)")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    servers = {kind: _serve(kind) for kind in ("light", "heavy")}
    out = {"code": code_version(), "kbps": args.kbps, "load_average": os.getloadavg()}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=[
                "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
            for kind, (_, url) in servers.items():
                _weigh(browser, url)  # a first page: the server compiles and warms up
                out[kind] = _weigh(browser, url)
            for kind in servers:
                out[kind]["throttled"] = []
            for _ in range(args.repeats):
                for kind, (_, url) in servers.items():
                    out[kind]["throttled"].append(_time(browser, url, args.kbps))
            browser.close()
    finally:
        for proc, _ in servers.values():
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(15)
    label = {"light": "as served", "heavy": "as Panel sends it (lighten_pages off)"}
    for kind in servers:
        r = out[kind]
        loads, plots = zip(*r["throttled"]) if r["throttled"] else ((), ())
        print(f"{label[kind]}: {r['bytes'] / 1e6:.2f} MB in {r['requests']} requests; at {args.kbps} kbit/s "
              f"load {statistics.median(loads):.1f} s, first plot {statistics.median(plots):.1f} s (median of "
              f"{len(plots)})")
        for n, name, enc in r["largest"]:
            print(f"    {n / 1e3:8.1f} kB  {name}{'  (' + enc + ')' if enc else ''}")
    print(f"load average {out['load_average'][0]:.1f}; code {out['code']}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
