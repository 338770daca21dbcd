"""The served explorer answers over HTTP (a real ``panel serve`` subprocess)."""

from __future__ import annotations

import gzip
import re
import time
import urllib.request
from pathlib import Path

import bokeh
import pytest

pytestmark = pytest.mark.slow  # each test starts panel serve


def test_panel_serve_explorer_page(server_factory, app_title):
    TITLE = app_title
    srv = server_factory()
    try:
        listen = srv.wait_listening()
        t0 = time.perf_counter()
        status, html = srv.get()
        first = time.perf_counter() - t0
        assert status == 200
        assert TITLE in html
        assert "<title>" in html
        t0 = time.perf_counter()
        status, html = srv.get()  # a second session of the same server
        second = time.perf_counter() - t0
        assert status == 200 and TITLE in html
        print(f"listening after {listen:.1f} s; first page {first:.1f} s; second page {second:.1f} s")
        # the page travels light: no MathJax bundle (nothing on it needs MathJax; 1.8 MB), and the
        # scripts compressed for a browser that accepts gzip, as they are without gzip for one that does not
        assert "bokeh.min.js" in html and "bokeh-mathjax" not in html
        bokeh_js = Path(bokeh.__file__).parent / "server" / "static" / "js" / "bokeh.min.js"
        plain = bokeh_js.read_bytes()
        for accept, encoding in (("gzip, deflate", "gzip"), ("identity", None)):
            req = urllib.request.Request(f"http://localhost:{srv.port}/static/js/bokeh.min.js",
                                         headers={"Accept-Encoding": accept})
            with urllib.request.urlopen(req, timeout=60) as r:
                body = r.read()
                assert r.headers.get("Content-Encoding") == encoding
            if encoding:
                assert len(body) < len(plain) / 3
                body = gzip.decompress(body)
            assert body == plain
    finally:
        srv.stop()
    assert srv.proc.returncode is not None
    log = srv.log()
    assert "Traceback" not in log, log


def test_panel_serve_notebook(server_factory, app_title):
    """``panel serve apps/explorer.ipynb`` (Panel needs nbconvert for notebooks)."""
    import pytest
    pytest.importorskip("nbconvert", reason="panel serve of a notebook needs nbconvert")
    from pathlib import Path

    from conftest import raw_websocket
    nb = Path(__file__).resolve().parents[2] / "apps" / "explorer.ipynb"
    srv = server_factory(app=nb)
    try:
        srv.wait_listening()
        status, html = srv.get()
        assert status == 200 and app_title in html
        # hardened as `panel serve apps/explorer.py` is: the page's script builds the explorer, which
        # hardens the server (without, a client sending no Origin was given a session)
        path = f"/{nb.stem}/ws?bokeh-protocol-version=1.0&bokeh-session-id=x"
        reply = raw_websocket(srv.port, path, origin=None).decode("latin-1")
        assert reply.startswith("HTTP/1.1 403"), reply
    finally:
        srv.stop()
    assert "Traceback" not in srv.log(), srv.log()
    assert "Refusing a websocket connection without an Origin header" in srv.log()


def test_mathjax_goes_only_to_a_page_whose_text_needs_it():
    """Panel sends Bokeh's MathJax bundle (1.8 MB) to every page with an HTML or Markdown pane; after
    lighten_pages, only to one with a pane whose math is enabled and whose text holds TeX delimiters."""
    import panel as pn
    import panel.io.resources as resources
    from bokeh.document import Document

    from loe_viz.app.serving import lighten_pages

    lighten_pages()
    lighten_pages()  # idempotent
    assert resources._panel_use_mathjax.__wrapped__.__name__ == "_panel_use_mathjax"

    def needs_mathjax(pane) -> bool:  # a pane inside a column inside a row: not a root of the page
        doc = Document()
        doc.add_root(pn.Row(pn.Column(pn.pane.Markdown("Words."), pane)).get_root(doc))
        detached = pn.Row(pn.Column(pane)).get_root(Document())  # outside any document: its references are read
        assert detached.document is None
        assert resources._panel_use_mathjax([detached]) == resources._panel_use_mathjax(doc.roots)
        return resources._panel_use_mathjax(doc.roots)

    assert needs_mathjax(pn.pane.Markdown("The distance $$D_{ij}$$ squared."))
    assert needs_mathjax(pn.pane.Markdown(r"inline \\(x^2\\) math"))
    assert not needs_mathjax(pn.pane.Markdown("It costs $5, or $6 with a drink."))
    assert not needs_mathjax(pn.pane.HTML("<b>$$D_{ij}$$</b>"))  # an HTML pane's math is off by default
    assert not needs_mathjax(pn.pane.Markdown("Plain words."))


def test_a_value_no_widget_takes_is_refused_with_one_line_and_the_page_gets_the_value_in_use(caplog):
    """A crafted message naming an option the select does not offer, or a button past the end of a toggle
    group, logged two tracebacks each (Panel's "Callback failed" and Bokeh's), and the page kept showing it."""
    import logging

    import panel as pn
    from bokeh.document import Document

    from loe_viz.app.explorer import Explorer
    from loe_viz.app.serving import refuse_values_no_widget_takes
    from loe_viz.app.state import ExplorerState

    refuse_values_no_widget_takes()
    refuse_values_no_widget_takes()  # idempotent
    s = ExplorerState(n=300)
    e = Explorer(state=s)
    try:
        doc = Document()
        doc.add_root(pn.panel(e).get_root(doc))
        with caplog.at_level(logging.INFO):
            for widget, prop, sent in ((e.w_kind, "value", "evil<b>x</b>"), (e.w_unit, "active", 7),
                                       (e.w_sel, "active", 9), (e.w_unit, "active", None), (e.w_sel, "active", None),
                                       (e._triplets.w_shown, "value", 99999)):  # 'Show' before any result
                (model, _), = widget._models.values() or [(None, None)]
                before = model.lookup(prop).get_value(model) if model is not None else None
                if model is not None:
                    with caplog.at_level(logging.CRITICAL):  # as the page's change reaches the server's model
                        model.update(**{prop: sent})
                caplog.clear()
                widget._process_events({prop: sent})
                lines = [r for r in caplog.records if r.name.startswith(("loe_viz", "panel", "bokeh"))]
                assert len(lines) == 1 and lines[0].levelname == "WARNING", [r.getMessage() for r in lines]
                assert lines[0].getMessage().startswith(f"Refused what a page sent to {type(widget).__name__}")
                assert not any(r.exc_info for r in caplog.records)
                if model is not None:  # the page is sent the value in use
                    assert model.lookup(prop).get_value(model) == before
        assert (s.kind, s.budget_unit, s.landmark_selection, s.n) == ("gaussian", "total_c", "random", 300)
        # the n box takes any number (its page box once dropped the "e" of 1e5), and the explorer says in the page
        # why it refuses one, with no line in the log
        caplog.clear()
        e.w_n._value_edit._process_events({"value": float("inf")})
        assert s.error == "Items n must be a whole number (got inf); it stays 300." and e.w_n._value_edit.value == 300
        assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
        # a whole number sent as a float (25 digits typed) is taken as the number: the explorer says why not
        e.w_n._value_edit._process_events({"value": 1e25})
        assert s.error == "Items n must be at most 200,000 (got about 1e+25); it stays 300."
        e.w_n._slider._process_events({"end": 1e25})  # the page stretched the slider to it
        assert e.w_n._slider.end == int(1e25) and s.n == 300
    finally:
        s.close()


def test_upload_box_takes_a_file_and_bounds_what_it_buffers():
    """The upload boxes: FileDropper with the size limit; the server drops a file past it anyway."""
    import panel as pn

    from loe_viz.app.serving import MAX_UPLOAD_BYTES, take_upload, upload_box
    from serverlab import drop_file

    pn.extension("filedropper")
    box = upload_box("Upload", accept=".csv", css_classes=["x"])
    assert isinstance(box, pn.widgets.FileDropper)
    assert box.max_file_size == "10MB" and MAX_UPLOAD_BYTES == 10_000_000 and not box.multiple
    assert "up to 10 MB" in box.label
    seen = []  # what the handler took (emptying the box calls it once more, with nothing)
    box.param.watch(lambda e: seen.append(take_upload(box)), "value")
    # a text file arrives decoded, in several chunks, and the box forgets it once taken
    text = "x,y\n" + "1.5,2.5\n" * 300_000  # 2.4 MB
    drop_file(box, "points.csv", text.encode())
    assert [s for s in seen if s] == [("points.csv", text)] and box.value == {} and box._file_buffer == {}
    # the same file again is seen again; binary content stays bytes
    drop_file(box, "points.npy", b"\x93NUMPY\x00\xff", mime="application/octet-stream")
    drop_file(box, "points.npy", b"\x93NUMPY\x00\xff", mime="application/octet-stream")
    assert [s for s in seen if s][-2:] == [("points.npy", b"\x93NUMPY\x00\xff")] * 2
    # past the limit (a client other than the page, which refuses such a file itself): dropped,
    # nothing kept, and the next file is read
    n_seen = len([s for s in seen if s])
    drop_file(box, "huge.csv", b"1,2\n" * (MAX_UPLOAD_BYTES // 4 + 1))
    assert len([s for s in seen if s]) == n_seen and box.value == {} and box._file_buffer == {}
    # chunks of a file whose first chunk never came are ignored
    from panel.models.file_dropper import UploadEvent
    box._process_event(UploadEvent(model=None, data={"chunk": 2, "total_chunks": 3, "name": "x.csv",
                                                     "type": "text/csv", "data": b"1,2\n"}))
    assert box._file_buffer == {}
    drop_file(box, "small.csv", b"0,1\n")
    assert [s for s in seen if s][-1] == ("small.csv", "0,1\n")


def test_a_page_closed_while_a_message_is_written_leaves_no_traceback_in_the_log(caplog):
    """A tab closed while a run sent its progress logged "Task exception was never retrieved ...
    WebSocketClosedError" with two tracebacks: Panel (1.9) writes a message's parts one after the other,
    and when the socket closes in between, the later write raises and the earlier writes' tasks are lost."""
    import asyncio
    import gc
    import logging
    from types import SimpleNamespace

    from panel.io.document import dispatch_tornado
    from tornado.websocket import WebSocketClosedError

    from loe_viz.app.serving import quiet_closed_page_writes

    class ClosingConnection:
        """A websocket connection whose stream closes while a message is written."""
        writes = 0

        def is_closing(self):
            return False

        def write_message(self, message, binary=False):
            self.writes += 1
            if self.writes > 1:
                raise WebSocketClosedError()

            async def fails():
                await asyncio.sleep(0)
                raise WebSocketClosedError()
            return asyncio.ensure_future(fails())

    msg = SimpleNamespace(header_json="{}", metadata_json="{}", content_json="{}", _buffers=[])
    conn = SimpleNamespace(_socket=SimpleNamespace(ws_connection=ClosingConnection()))

    async def page_closes_mid_write():
        assert quiet_closed_page_writes()
        assert quiet_closed_page_writes()  # once per loop
        with pytest.raises(WebSocketClosedError):
            dispatch_tornado(conn, msg=msg)
        await asyncio.sleep(0.05)  # the first part's write fails; nobody awaits it
        gc.collect()
        await asyncio.sleep(0.05)

    loop = asyncio.new_event_loop()
    try:
        with caplog.at_level(logging.INFO):
            loop.run_until_complete(page_closes_mid_write())
    finally:
        loop.close()
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info], caplog.text
    assert "closed while a message was being sent to it" in caplog.text
    # any other error of the loop is still reported as before
    loop = asyncio.new_event_loop()
    try:
        async def other_error():
            quiet_closed_page_writes()

            async def boom():
                raise RuntimeError("a real bug")
            asyncio.ensure_future(boom())
            await asyncio.sleep(0.05)
            gc.collect()
            await asyncio.sleep(0.05)
        with caplog.at_level(logging.INFO):
            loop.run_until_complete(other_error())
    finally:
        loop.close()
    assert "a real bug" in caplog.text and "Task exception was never retrieved" in caplog.text


def test_a_message_of_a_page_whose_session_was_released_is_dropped_with_one_line(caplog):
    """A page's connection that went while its messages were being handled: Bokeh released the session, then
    handled those messages and closed the connection, each asserting the session was there; the server's log
    showed "error handling message ... AssertionError" and "Uncaught exception GET /explorer/ws"."""
    import asyncio
    import logging
    from types import SimpleNamespace

    from bokeh.protocol import Protocol
    from bokeh.server.connection import ServerConnection
    from bokeh.server.protocol_handler import ProtocolHandler
    from bokeh.server.views.ws import WSHandler

    from loe_viz.app.serving import drop_messages_of_released_pages

    drop_messages_of_released_pages()
    drop_messages_of_released_pages()  # once per process: not wrapped twice
    assert not hasattr(WSHandler.on_close.__wrapped__, "__wrapped__")
    session = SimpleNamespace(subscribe=lambda c: None, unsubscribe=lambda c: None,
                              notify_connection_lost=lambda: None)
    lost = []
    connection = ServerConnection(Protocol(), socket=None, application_context=None, session=session)
    page = SimpleNamespace(close_code=None, close_reason=None, connection=connection,
                           application=SimpleNamespace(client_lost=lost.append))
    message = SimpleNamespace(msgtype="PATCH-DOC", header={"msgid": "1"})
    connection.detach_session()  # released while the page's messages are still being handled
    with pytest.raises(AssertionError):  # what Bokeh does on its own
        WSHandler.on_close.__wrapped__(page)
    with caplog.at_level(logging.INFO):
        assert asyncio.run(ProtocolHandler().handle(message, connection)) is None
        WSHandler.on_close(page)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info], caplog.text
    assert "Dropped a PATCH-DOC message of a page whose session was released" in caplog.text
    assert lost == [connection]  # the application still forgets the connection
    # a page with its session: closed as before (the session hears of it, then the application)
    heard = []
    attached = ServerConnection(Protocol(), socket=None, application_context=None,
                                session=SimpleNamespace(subscribe=lambda c: None, unsubscribe=lambda c: None,
                                                        notify_connection_lost=lambda: heard.append(1)))
    WSHandler.on_close(SimpleNamespace(close_code=1001, close_reason=None, connection=attached,
                                       application=SimpleNamespace(client_lost=lost.append)))
    assert heard == [1] and lost == [connection, attached]


def test_upload_box_asks_the_page_for_no_preview_plugin():
    """``previews=[]`` was never sent (it is the model's Python default): the page fell back to FilePond's image
    and pdf previews, and the pdf plugin (1.0.2, bundled with Panel) threw "Cannot read properties of null
    (reading 'file')" in the page whenever a box that had taken a file was drawn again."""
    import panel as pn
    from bokeh.core.serialization import Serializer
    from bokeh.document import Document

    from loe_viz.app.serving import upload_box

    pn.extension("filedropper")
    box = upload_box("Upload", accept=".csv")
    doc = Document()
    model = box.get_root(doc)
    doc.add_root(model)
    sent = Serializer().encode(model)["attributes"]
    assert "previews" in sent, "the page would use its own default: image and pdf previews"
    assert not {"image", "pdf"} & set(sent["previews"]), sent["previews"]
    assert box.previews == []  # the widget's own value is unchanged


def test_an_upload_box_empties_itself_for_a_refused_file_and_a_removed_file_undoes_its_upload():
    """A refused file stayed in the box on its green "Upload complete" band beside the red "Upload
    rejected", and removing a taken file (FilePond's ×) emptied the box only: its data stayed in use."""
    import panel as pn
    from bokeh.document import Document
    from panel.models.file_dropper import DeleteEvent

    from loe_viz.app.serving import take_upload, upload_box, upload_receipt
    from loe_viz.app.uploads import ReadsUploads
    from serverlab import drop_file, remove_file

    class Reader(ReadsUploads):  # a state that reads each file its box hands over, and can undo it
        def __init__(self):
            self.error = self.reading = ""
            self._closed, self.dispatch, self.undone = False, lambda fn: fn(), []
            self._init_reads()

        def read(self, content, name, box=None):
            def parse():
                if "bad" in name:
                    raise ValueError(f"{name}: line 1: not a table")
                return content
            return self._start_read(parse, name, lambda got: True, box=box)

        def _upload_undo(self):
            return lambda: self.undone.append(self.taken_name)

    pn.extension("filedropper")
    box, reader = upload_box("Upload", accept=".csv"), Reader()
    doc = Document()
    model = box.get_root(doc)
    doc.add_root(model)

    def on_file(event):
        got = take_upload(box)
        if got is not None:
            reader.taken_name = got[0]
            reader.read(got[1], got[0], upload_receipt(box))

    box.param.watch(on_file, "value")
    clears = model.tags
    drop_file(box, "bad.csv", b"0,1\n")
    assert reader.error == "Upload rejected: bad.csv: line 1: not a table"
    # the page is told to empty its list (a change of the model's tags runs a script there)
    assert box.clears == 1 and model.tags != clears and model.js_property_callbacks.get("change:tags")
    assert "removeFiles" in model.js_property_callbacks["change:tags"][0].code
    # a taken file stays in the box; removing it undoes its upload, once
    drop_file(box, "good.csv", b"0,1\n")
    assert box.clears == 1 and reader.undone == []
    box._process_event(DeleteEvent(model=None, data={"name": "other.csv"}))
    assert reader.undone == []
    remove_file(box, "good.csv")
    remove_file(box, "good.csv")
    assert reader.undone == ["good.csv"] and box.clears == 1
    # what becomes of a file said when a newer one is in the box leaves the newer one there
    other = upload_box("Upload", accept=".csv")
    drop_file(other, "late.csv", b"0,1\n")
    assert take_upload(other) == ("late.csv", "0,1\n")
    handed = upload_receipt(other)
    assert handed is not None and upload_receipt(other) is None  # handed on once
    drop_file(other, "next.csv", b"0,1\n")
    handed.refused()
    handed.taken(lambda: None)
    assert other.clears == 0 and other._held is None and other.value == {"next.csv": "0,1\n"}
    # data that did not come from the box (a sample, a notebook call) claim nothing of it
    reader.read("0,1\n", "bad_sample.csv")
    assert box.clears == 1 and reader.error.startswith("Upload rejected: bad_sample.csv")
    reader._close_reads()


def test_upload_box_outside_a_server_without_the_extension_is_a_file_input(monkeypatch):
    import panel as pn
    from panel.config import panel_extension

    from loe_viz.app.serving import take_upload, upload_box

    monkeypatch.setattr(panel_extension, "_loaded_extensions",
                        [e for e in panel_extension._loaded_extensions if e != "filedropper"])
    box = upload_box("Upload", accept=".csv")
    assert isinstance(box, pn.widgets.FileInput) and box.accept == ".csv"
    assert take_upload(box) is None
    box.param.update(filename="a.csv", value=b"0,1,2\n")
    assert take_upload(box) == ("a.csv", b"0,1,2\n")


LIMIT_ENV = "LOE_VIZ_MAX_PAGES_PER_ADDRESS"
TOO_MANY = "Too many pages of this explorer are open from your address (127.0.0.1): at most 2 at once."


def _title(srv, source: str = "127.0.0.1", status: int = 200) -> str:
    """The <title> of a new page of ``srv``, requested from the local address ``source``; the answer's HTTP
    status must be ``status`` (a refused page: 429 with a Retry-After)."""
    import http.client
    import re

    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=120, source_address=(source, 0))
    try:
        conn.request("GET", "/explorer", headers={"Host": f"127.0.0.1:{srv.port}"})
        r = conn.getresponse()
        body = r.read().decode("utf-8", "replace")
    finally:
        conn.close()
    assert r.status == status, (r.status, body[:500])
    if status == 429:
        assert r.getheader("Retry-After") == "60", r.getheaders()
    return re.search(r"<title>(.*?)</title>", body, re.S).group(1).strip()


@pytest.mark.browser
def test_pages_per_address_limit_refuses_a_page_over_it_and_a_closed_page_frees_its_slot(server_factory, app_title):
    """With LOE_VIZ_MAX_PAGES_PER_ADDRESS=2, a third page from one address says so and builds no explorer; another
    address is not limited; closing one of the two pages lets a reload open the explorer (long before the closed
    page's session is discarded, 15 s later)."""
    sync_api = pytest.importorskip("playwright.sync_api")
    from serverlab import CHROMIUM, launch_chromium

    if CHROMIUM is None:
        pytest.skip("no Chromium")
    srv = server_factory(env={LIMIT_ENV: "2"})
    try:
        srv.wait_listening()
        with sync_api.sync_playwright() as p:
            b = launch_chromium(p)

            def explorer_page():
                ctx = b.new_context(viewport={"width": 1280, "height": 800})
                page = ctx.new_page()
                page.goto(f"{srv.url}?n=200", timeout=180_000)
                page.locator(".loe-status").get_by_text("Procrustes error").wait_for(timeout=180_000)
                return ctx, page

            first, _ = explorer_page()
            second, _ = explorer_page()
            ctx = b.new_context(viewport={"width": 1280, "height": 800})
            third = ctx.new_page()
            third.goto(f"{srv.url}?n=200", timeout=180_000)
            message = third.locator(".loe-too-many-pages").get_by_role("alert")
            message.wait_for(timeout=60_000)
            assert message.inner_text().startswith(TOO_MANY), message.inner_text()
            assert "Close one of them, then reload this page." in message.inner_text()
            assert third.locator(".loe-status").count() == 0  # no explorer on the page
            assert third.title() == f"{app_title}: too many pages open"
            # a script's request (no page shown) from this address is refused too; another address is not limited
            assert _title(srv, status=429) == f"{app_title}: too many pages open"
            other = _title(srv, source="127.0.0.2")
            assert app_title in other and "too many" not in other, other
            # closing a page frees its slot at once (the closed page's session is discarded only after 15 s)
            first.close()
            # the server learns of the close from the closed socket, a moment later: reload until it has
            deadline = time.monotonic() + 60
            while True:
                third.reload(timeout=180_000)
                third.locator(".loe-status, .loe-too-many-pages").first.wait_for(timeout=180_000)
                if third.locator(".loe-too-many-pages").count() == 0 or time.monotonic() > deadline:
                    break
                time.sleep(0.5)
            third.locator(".loe-status").get_by_text("Procrustes error").wait_for(timeout=180_000)
            assert third.get_by_text("Too many pages").count() == 0
            second.close()
            ctx.close()
            b.close()
    finally:
        srv.stop()
    log = srv.log()
    assert "Traceback" not in log, log
    assert "Refusing pages from 127.0.0.1: 2 are open, LOE_VIZ_MAX_PAGES_PER_ADDRESS = 2" in log, log
    assert "429 GET" not in log, log  # the refusals' own lines say it, once a minute per address


def test_without_the_setting_one_address_opens_any_number_of_pages(server_factory, app_title):
    """The limit is opt-in: unset (the default) or 0, every page from one address is the explorer."""
    for value in (None, "0"):
        srv = server_factory(env={LIMIT_ENV: value})
        try:
            srv.wait_listening()
            titles = [_title(srv) for _ in range(4)]
        finally:
            srv.stop()
        assert all(app_title in t and "too many" not in t for t in titles), (value, titles)
        assert "Traceback" not in srv.log() and "Refus" not in srv.log(), srv.log()


def test_a_huge_message_a_page_sends_takes_a_few_lines_of_log():
    """Bokeh logs a message it cannot apply with the message itself and its traceback: a slider's value set to a
    5 MB string grew the server's log by 150 MB in 9 s."""
    import io
    import logging

    from loe_viz.app.serving import LOG_RECORD_CHARS, bound_log_records

    out = io.StringIO()
    handler = logging.StreamHandler(out)
    logging.getLogger().addHandler(handler)
    try:
        bound_log_records()
        bound_log_records()  # once per handler
        assert handler.filters.count(handler.filters[0]) == 1 and len(handler.filters) == 1
        log = logging.getLogger("bokeh.server.protocol_handler")
        try:
            raise ValueError("failed to validate Slider(id='p1').value: expected a value of type Real, got " + "y" * 5_000_000)
        except ValueError as exc:
            log.error("error handling message\n message: %r \n error: %r", "x" * 5_000_000, exc, exc_info=True)
        log.error("a short record stays whole: %s", "ok")
    finally:
        logging.getLogger().removeHandler(handler)
    text = out.getvalue()
    assert len(text) < 3 * LOG_RECORD_CHARS, len(text)
    assert text.startswith("error handling message\n message: 'xxx")
    assert re.search(r" \.\.\. \(10,000,\d{3} characters in all\) \.\.\. ", text)  # where it was cut
    assert "Traceback (most recent call last)" in text and "characters in all" in text
    assert text.endswith("a short record stays whole: ok\n")
