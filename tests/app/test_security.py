"""The served explorer against a hostile visitor: script injection, websockets without Origin.

A real ``panel serve apps/explorer.py`` subprocess (see ``conftest.py``) driven by
headless Chromium.  Each injection payload would set ``window.__pwned``; the tests
check that it stays undefined and that the payload is shown as text.
"""

from __future__ import annotations

import re
import time
import urllib.parse

import pytest

pytestmark = pytest.mark.browser

# Chromium, and the module's browser, as the other browser tests find them (skipped without either)
from conftest import raw_websocket  # noqa: E402
from test_browser import browser  # noqa: E402,F401

PAYLOAD = '<img src=x onerror="window.__pwned=1">'
NAME_PAYLOAD = "<img src=x onerror=window.__pwned=1>.csv"

# text of every Panel component, inside its shadow root
_ALL_TEXT_JS = """() => { const out = [];
  const walk = (root) => { for (const el of root.querySelectorAll('*')) {
      if (el.shadowRoot) walk(el.shadowRoot); }
    for (const el of root.querySelectorAll('p, div, span, li, td')) {
      if (el.childElementCount === 0 && el.textContent) out.push(el.textContent); } };
  walk(document); return out.join('\\n'); }"""

# elements created from the payload (an <img src=x> anywhere, shadow roots included)
_INJECTED_JS = """() => { let n = 0;
  const walk = (root) => { for (const el of root.querySelectorAll('*')) {
      if (el.shadowRoot) walk(el.shadowRoot);
      if (el.tagName === 'IMG' && (el.getAttribute('src') || '') === 'x') n += 1; } };
  walk(document); return n; }"""


def _open(browser, url):
    ctx = browser.new_context(viewport={"width": 1600, "height": 1000})
    page = ctx.new_page()
    page.goto(url, timeout=180_000)
    page.locator(".loe-modes").first.wait_for(timeout=180_000)
    return ctx, page


def _wait_text(page, pattern: str, timeout: float = 120) -> str:
    deadline = time.perf_counter() + timeout
    text = ""
    while time.perf_counter() < deadline:
        text = page.evaluate(_ALL_TEXT_JS)
        if re.search(pattern, text):
            return text
        time.sleep(0.25)
    raise AssertionError(f"the page never showed {pattern!r}; last text:\n{text[-3000:]}")


def _assert_not_run(page):
    time.sleep(1.0)  # an <img src=x> fails to load at once; give its onerror time to run
    assert page.evaluate("window.__pwned") is None
    assert page.evaluate(_INJECTED_JS) == 0


def test_url_values_are_shown_as_text(server, browser):
    q = urllib.parse.urlencode({"n": PAYLOAD, "kind": PAYLOAD})
    ctx, page = _open(browser, f"{server.url}?{q}")
    try:
        text = _wait_text(page, re.escape("onerror="))
        assert "<img src=x" in text  # the payload is visible, as text
        _assert_not_run(page)
    finally:
        ctx.close()


def test_points_upload_name_and_cells_are_shown_as_text(server, browser):
    ctx, page = _open(browser, server.url)
    try:
        page.locator(".loe-upload input[type=file]").set_input_files(
            {"name": NAME_PAYLOAD, "mimeType": "text/csv", "buffer": f"x,y\n1,{PAYLOAD}\n2,3\n".encode()})
        text = _wait_text(page, "Upload rejected")
        assert "<img src=x onerror=window.__pwned=1>.csv" in text
        _assert_not_run(page)
    finally:
        ctx.close()


def test_triplets_upload_name_and_cells_are_shown_as_text(server, browser):
    ctx, page = _open(browser, server.url)
    try:
        page.get_by_text("Your triplets", exact=True).first.click()
        page.locator(".loe-tr-upload input[type=file]").first.wait_for(state="attached", timeout=60_000)
        page.locator(".loe-tr-upload input[type=file]").set_input_files(
            {"name": NAME_PAYLOAD, "mimeType": "text/csv",
             # refused however its ids are read (a row repeats an item): read as labels, the markup would be a
             # label, shown as text in the table instead of a message
             "buffer": f"0,1,2\n1,{PAYLOAD},{PAYLOAD}\n".encode()})
        text = _wait_text(page, "Upload rejected")
        assert "<img src=x onerror=window.__pwned=1>.csv" in text
        _assert_not_run(page)
    finally:
        ctx.close()


def _npy_header(shape, descr) -> bytes:
    import io

    import numpy as np

    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": shape})
    return buf.getvalue()


def test_hostile_uploads_get_a_message_or_are_shown_as_text(server, browser):
    """Empty files, a tiny archive declaring a huge array, and names and labels carrying markup: each
    refusal names the problem, what is taken is shown as text, and nothing runs in the page."""
    import io
    import zipfile

    ctx, page = _open(browser, f"{server.url}?n=200")
    try:
        _wait_status(page, r"Procrustes error [0-9.]+.*n = 200,")
        points = page.locator(".loe-upload input[type=file]")
        points.set_input_files({"name": "empty.csv", "mimeType": "text/csv", "buffer": b""})
        _wait_text(page, "Upload rejected: \u2068empty.csv\u2069: the file is empty")
        _wait_box_empty(page, ".loe-upload")  # no green "Upload complete" beside the refusal
        rows = "".join(f"{i % 7},{(i * i) % 11}\n" for i in range(60))
        points.set_input_files({"name": NAME_PAYLOAD, "mimeType": "text/csv", "buffer": f"x,y\n{rows}".encode()})
        _wait_status(page, r"Procrustes error [0-9.]+.*n = 60,")
        page.get_by_text("Your triplets", exact=True).first.click()
        triplets = page.locator(".loe-tr-upload input[type=file]")
        triplets.first.wait_for(state="attached", timeout=60_000)
        triplets.set_input_files({"name": "empty.csv", "mimeType": "text/csv", "buffer": b""})
        _wait_text(page, "Upload rejected: \u2068empty.csv\u2069: the file is empty")
        _wait_box_empty(page, ".loe-tr-upload")
        archive = io.BytesIO()
        with zipfile.ZipFile(archive, "w") as z:  # 2.4 TB declared in a file of a few hundred bytes
            z.writestr("triplets.npy", _npy_header((10**11, 3), "<i8") + bytes(64))
        triplets.set_input_files({"name": "huge.npz", "mimeType": "application/zip", "buffer": archive.getvalue()})
        _wait_text(page, r"huge\.npz\u2069: triplets, declared with shape \(100000000000, 3\).*above the limit")
        link = "javascript:window.__pwned=1"
        labels = f"{PAYLOAD},{link},x\n{link},x,{PAYLOAD}\nx,{PAYLOAD},{link}\ny,{link},x\n"
        triplets.set_input_files({"name": "labels.csv", "mimeType": "text/csv", "buffer": labels.encode()})
        text = _wait_text(page, "Read 4 triplets over 4 items")
        assert PAYLOAD in text and link in text  # the first labels in sorted order, quoted as text
        assert page.locator("a[href^='javascript']").count() == 0
        _assert_not_run(page)
    finally:
        ctx.close()


def _wait_box_empty(page, box: str, timeout: float = 30) -> None:
    """Wait until the upload box ``box`` (a CSS selector) lists no file: a refused one left it on its
    green "Upload complete" band beside the red "Upload rejected"."""
    deadline = time.perf_counter() + timeout
    items = -1
    while time.perf_counter() < deadline:
        items = page.locator(f"{box} .filepond--item").count()
        if items == 0:
            return
        time.sleep(0.25)
    raise AssertionError(f"{box} still lists {items} file(s)")


def test_an_upload_box_drawn_again_after_an_upload_throws_nothing_in_the_page(server, browser):
    """FilePond's pdf preview (registered by the page although the boxes ask for no preview) threw
    "Cannot read properties of null (reading 'file')" when a box that had taken a file was drawn again."""
    ctx, page = _open(browser, server.url)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.get_by_text("Your triplets", exact=True).first.click()
        box = page.locator(".loe-tr-upload input[type=file]")
        box.first.wait_for(state="attached", timeout=60_000)
        box.set_input_files({"name": "mine.csv", "mimeType": "text/csv",
                             "buffer": b"0,1,2\n1,2,3\n2,3,0\n3,0,1\n"})
        _wait_text(page, "Read 4 triplets")
        page.get_by_text("Walk-through", exact=True).first.click()
        time.sleep(1.0)
        page.get_by_text("Your triplets", exact=True).first.click()  # the box is drawn again
        time.sleep(2.0)
        assert errors == []
        assert page.evaluate("typeof FilePond === 'undefined' || FilePond.getOptions().allowPdfPreview") is not True
    finally:
        ctx.close()


_STATUS_JS = """e => [...e.shadowRoot.children].filter(c => !['STYLE', 'LINK', 'SCRIPT'].includes(c.tagName))
    .map(c => c.innerText || '').join(' ')"""


def _wait_status(page, pattern: str, timeout: float = 120) -> str:
    deadline = time.perf_counter() + timeout
    text = ""
    while time.perf_counter() < deadline:
        text = page.locator(".loe-status").first.evaluate(_STATUS_JS)
        if re.search(pattern, text):
            return text
        time.sleep(0.25)
    raise AssertionError(f"the status never showed {pattern!r}; last: {text!r}")


def test_upload_over_the_limit_is_refused_in_the_page_and_the_session_lives(server, browser):
    from loe_viz.app.serving import MAX_UPLOAD_BYTES
    ctx, page = _open(browser, f"{server.url}?n=200")
    try:
        first = _wait_status(page, r"Procrustes error [0-9.]+.*n = 200,")
        box = page.locator(".loe-upload input[type=file]")
        big = b"1.5,2.5\n" * (12 * 10**6 // 8)  # 12 MB
        assert len(big) > MAX_UPLOAD_BYTES
        box.set_input_files({"name": "big_points.csv", "mimeType": "text/csv", "buffer": big})
        text = _wait_text(page, "File is too large")
        assert "Maximum file size is 10 MB" in text
        time.sleep(2.0)  # nothing was sent: the results stay and no error appears
        assert _wait_status(page, "Procrustes") == first
        assert "Upload rejected" not in page.evaluate(_ALL_TEXT_JS)
        # the websocket is still open: a small file replaces the refused one and is used
        rows = "".join(f"{i % 7},{(i * i) % 11}\n" for i in range(60))
        box.set_input_files({"name": "small_points.csv", "mimeType": "text/csv",
                             "buffer": f"x,y\n{rows}".encode()})
        _wait_status(page, r"Procrustes error [0-9.]+.*n = 60,")
        assert "WebSocketClosedError" not in server.log() and "Dropped an upload" not in server.log()
    finally:
        ctx.close()


def test_a_step_named_in_the_link_opens_on_first_load(server, browser):
    ctx, page = _open(browser, f"{server.url}?n=240&step=Embedding")
    try:
        _wait_status(page, r"Procrustes error [0-9.]+.*n = 240,")
        step = page.locator(".loe-step").first.evaluate(_STATUS_JS)
        assert "Step 6 of 7: Embedding" in step, step
        assert "could not be applied" not in page.evaluate(_ALL_TEXT_JS)
    finally:
        ctx.close()


def test_websocket_without_origin_is_refused(server):
    status, page = server.get()
    assert status == 200
    # the page carries the token of its session; a websocket to it must come from a browser
    token = re.search(r'"token":\s*"([^"]+)"', page) or re.search(r"token=([\w.\-]+)", page)
    assert token, page[:2000]
    path = "/explorer/ws?bokeh-protocol-version=1.0&bokeh-session-id=x"
    reply = raw_websocket(server.port, path, origin=None).decode("latin-1")
    assert reply.startswith("HTTP/1.1 403"), reply
    reply = raw_websocket(server.port, path, origin="http://evil.example").decode("latin-1")
    assert reply.startswith("HTTP/1.1 403"), reply
    # a browser's request from the page's own origin is upgraded
    ws_headers = f"Sec-WebSocket-Protocol: bokeh, {token.group(1)}"
    del ws_headers
    assert "Refusing a websocket connection without an Origin header" in server.log()


def test_links_panel_could_not_parse_open_the_explorer_and_name_the_setting(server, browser):
    """``?n=²`` and a number of 5,000 digits ended the page's script in Panel's query parser: a
    traceback in the server's log and no explorer. Now the other settings apply and the page names
    the ignored one; a setting given twice is said too."""
    for bad in ("%C2%B2", "9" * 5000):
        status, body = server.get(f"?n={bad}&seed=3")
        assert status == 200 and "Exceeds the limit" not in body and "invalid literal" not in body
    ctx, page = _open(browser, f"{server.url}?n=%C2%B2&seed=3&d=2&d=3&n_landmarks=7")
    try:
        _wait_status(page, r"Procrustes error [0-9.]+.*n = 1,000, d = 3, ℓ = 7")
        text = _wait_text(page, "Ignored settings in the link that do not parse: n='²'")
        assert "The link gives d 2 times ('2', '3'); the last one is used." in text
        _assert_not_run(page)
    finally:
        ctx.close()
    log = server.log()
    assert "Error running application handler" not in log and "Traceback" not in log, log[-3000:]


def test_values_typed_for_a_lesson_sweep_are_shown_as_text(server, browser):
    """The sweep's message quoted the values box as typed, into a Markdown pane that renders HTML."""
    ctx, page = _open(browser, f"{server.url}?n=200&lesson=budget")
    try:
        box = page.locator(".loe-sweep-values input").first
        box.wait_for(timeout=60_000)
        # the lesson starts its sweep once the page is loaded; a click that reached the server while
        # that sweep ran had its message replaced by the sweep's progress within a poll
        _wait_text(page, r"Done: \d+ fits")
        box.fill(PAYLOAD)
        box.press("Enter")
        page.locator(".loe-sweep-run button").first.click()
        text = _wait_text(page, "Values must be numbers separated by commas")
        assert "<img src=x" in text  # the payload is visible, as text
        _assert_not_run(page)
        box.fill("1" * 299 + "x")  # a long value is quoted cut, its length said
        box.press("Enter")
        page.locator(".loe-sweep-run button").first.click()
        text = _wait_text(page, r"\(300 characters\)")
        assert "1" * 100 not in text
    finally:
        ctx.close()


def test_a_query_value_that_is_not_utf8_gets_the_page_not_a_server_error(server):
    """``?theme=%FF`` made Panel's theme lookup raise UnicodeDecodeError: HTTP 500, two tracebacks in the log."""
    status, _ = server.get("?theme=%FF&n=300&kind=%FF")
    assert status == 200
    time.sleep(1.0)
    log = server.log()
    assert "Traceback" not in log and "Uncaught exception" not in log, log[-3000:]


def test_numbers_too_long_for_the_page_reach_the_state_from_the_seed_and_landmark_boxes(server, browser):
    """The page sends 99999999999999999999999 typed in an integer box as the float 1e+23, which Panel's
    IntInput refused with a traceback in the server's log while the box went on showing it: the results
    shown were not those of the seed in the box, and nothing said so."""
    ctx, page = _open(browser, f"{server.url}?n=200")
    try:
        _wait_status(page, r"Procrustes error [0-9.]+.*n = 200,")
        seed = page.locator(".loe-seed input").first
        seed.fill("99999999999999999999999")
        seed.press("Enter")
        time.sleep(3.0)
        assert "Traceback" not in server.log()
        box = page.locator(".loe-landmarks input").first
        box.fill("1" + "0" * 30)
        box.press("Enter")
        _wait_text(page, r"Landmarks ℓ must be at least d \+ 3 = 5 and at most n - 2 = 198 \(got about 1e\+30\); "
                         r"it stays auto")
    finally:
        ctx.close()
    log = server.log()
    assert "Traceback" not in log and "must be an integer" not in log, log[-3000:]


def _status(url: str, headers=None) -> tuple[int, str]:
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=120) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8", "replace")


def test_a_link_cannot_choose_the_address_of_the_page_s_scripts_nor_its_session(server_factory):
    """``?bokeh-absolute-url=`` went unescaped before every script's address (a link ran its own script in the
    page), and ``?bokeh-session-id=`` let whoever wrote a link share the session, uploads included, with everyone
    who opened it. A new server: its first page is built before the page handler is patched."""
    srv = server_factory()
    try:
        srv.wait_listening()
        hostile = urllib.parse.quote('"><script>window.__pwned=1</script>')
        for _ in range(2):  # the first request (the app script's own check), then the patched handler
            status, page = _status(f"{srv.url}?bokeh-absolute-url={hostile}")
            assert status == 200 and "window.__pwned" not in page
            status, page = _status(f"{srv.url}?bokeh-absolute-url=http://127.0.0.2:9/x")
            assert status == 200 and "127.0.0.2" not in page
        for query, headers in (("?bokeh-session-id=chosenSessionId0123456789abcdefghijklmnopqr", None),
                               ("?bokeh-token=abc", None), ("", {"Bokeh-Session-Id": "chosen"})):
            assert _status(srv.url + query, headers)[0] == 403
        assert _status(srv.url + "?n=300")[0] == 200
        time.sleep(1.0)
        assert "Traceback" not in srv.log()
    finally:
        srv.stop()


def test_a_first_page_that_chooses_its_session_builds_no_explorer(browser, server_factory):  # noqa: F811
    srv = server_factory()
    try:
        srv.wait_listening()
        ctx = browser.new_context(viewport={"width": 1280, "height": 800})
        page = ctx.new_page()
        page.goto(srv.url + "?bokeh-session-id=chosenSessionId0123456789abcdefghijklmnopqr", timeout=180_000)
        text = _wait_text(page, "This address names a session")
        assert "Open the address without it." in text and page.locator(".loe-modes").count() == 0
        ctx.close()
    finally:
        srv.stop()
