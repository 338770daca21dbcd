"""Settings of the served explorer that protect the server (used by ``apps/explorer.py``).

* :func:`require_websocket_origin`: Bokeh checks a websocket's ``Origin``
  against ``--allow-websocket-origin``, but Tornado only runs that check when
  the header is present, so a client that sends no ``Origin`` (a script, not a
  browser) would be given a session.  After this call such a connection is
  refused with 403.
* :data:`MAX_UPLOAD_BYTES` and :func:`upload_box`: the upload boxes are
  :class:`panel.widgets.FileDropper` widgets whose browser side refuses a file
  over the limit with a message before sending anything, and which send a file
  in chunks far below Bokeh's websocket message limit (20 MiB by default,
  ``--websocket-max-message-size``), so an upload never closes the connection.
  The server side drops a file that grows past the limit anyway (a client
  other than the page), and :func:`take_upload` hands the handler the file
  just received and lets the box forget it.  The reader of that file (see
  :class:`loe_viz.app.uploads.ReadsUploads`) tells the box what became of it:
  a refused file leaves the box (no "Upload complete" beside the refusal),
  and removing a file that was taken (FilePond's ×) undoes the upload; a file
  put in its place undoes nothing until it is taken (a refused one leaves the
  previous upload in use).
* :func:`warn_if_exposed`: logs a warning when ``panel serve`` was started
  without ``--address`` (it then listens on every interface).
* :func:`quiet_closed_page_writes`: a tab closed while the server wrote to it
  (a run sending its progress) is one line in the log, not two tracebacks.
* :func:`drop_messages_of_released_pages`: a message a page sent just before its
  connection went, handled after Bokeh released its session, is dropped with one
  line in the log, not an assertion's traceback.
* :func:`read_links_safely`: a link whose query Panel cannot read (``?n=²``, a
  number of 5,000 digits) opens the explorer, which names the setting it
  ignored, instead of ending the page's script with a traceback.
* :func:`readable_request_arguments`: a query value that is not UTF-8
  (``?theme=%FF``) is read with a replacement character, not a 500 error.
* :func:`serve_stylesheets_locally`: every stylesheet of Panel's components is
  loaded from the server itself, never from Panel's CDN (a lecture hall may
  have no internet).
* :func:`refuse_values_no_widget_takes`: a value a page sends that its widget
  cannot take (a crafted option, 25 digits typed in a whole-number box) is
  refused with one line in the log, and the page is sent the value in use.
* :func:`quiet_known_references`: a button's first click in a tab drawn after the page
  opened is not logged as a Bokeh warning (Bokeh recovers from it; nothing is lost).
* :func:`lighten_pages`: a page is sent in a quarter of its bytes: without
  Bokeh's MathJax bundle, which nothing on the explorer's pages uses, and
  compressed for browsers that accept gzip.
* :data:`MAX_PAGES_PER_ADDRESS` and :func:`admit_page`: an opt-in limit on the
  pages one client address may have open at once (``LOE_VIZ_MAX_PAGES_PER_ADDRESS``;
  off by default, since a class behind one NAT address shares one address).
  A page over the limit is a short message, not an explorer.
"""

from __future__ import annotations

import asyncio
import html
import logging
import sys
import threading
import time
import weakref
from typing import Callable

from .limits import _env_value

__all__ = ["MAX_UPLOAD_BYTES", "MAX_UPLOAD_TEXT", "UPLOAD_CHUNK_BYTES", "upload_box", "take_upload", "upload_receipt",
           "require_websocket_origin", "warn_if_exposed", "quiet_closed_page_writes",
           "drop_messages_of_released_pages", "read_links_safely", "readable_request_arguments", "harden",
           "answer_refusals_with_status", "REFUSED_STATUS", "lighten_pages", "GZIP_LEVEL", "inline_stylesheets",
           "refuse_values_no_widget_takes",
           "serve_stylesheets_locally", "MAX_PAGES_PER_ADDRESS", "admit_page", "open_pages", "too_many_pages_text"]

log = logging.getLogger(__name__)

#: Largest upload accepted (the upload boxes refuse larger files before sending them).
#: Decimal megabytes, as the browser side (FilePond) counts them and says them.
MAX_UPLOAD_BYTES = 10_000_000
#: The same limit as :class:`panel.widgets.FileDropper` takes it (and FilePond shows it).
MAX_UPLOAD_TEXT = f"{MAX_UPLOAD_BYTES // 1_000_000}MB"
#: Size of one websocket message of an upload.
UPLOAD_CHUNK_BYTES = 1_000_000

#: What the upload boxes send the page as their ``previews``: a name of no FilePond preview plugin.
NO_PREVIEW = "none"

_patched = False


def require_websocket_origin() -> None:
    """Refuse websocket connections that carry no ``Origin`` header (idempotent)."""
    global _patched
    if _patched:
        return
    from bokeh.server.views.ws import WSHandler

    original = WSHandler.get

    async def get(self, *args, **kwargs):
        headers = self.request.headers
        if "Origin" not in headers and "Sec-Websocket-Origin" not in headers:
            log.warning("Refusing a websocket connection without an Origin header from %s",
                        self.request.remote_ip)
            self.set_status(403)
            self.finish("websocket connections must send an Origin header")
            return None
        return await original(self, *args, **kwargs)

    get.__wrapped__ = original
    WSHandler.get = get
    _patched = True


def warn_if_exposed() -> None:
    """Warn once when ``panel serve`` listens on every interface (no ``--address``)."""
    argv = sys.argv
    if "serve" in argv and not any(a == "--address" or a.startswith("--address=") for a in argv):
        log.warning("The explorer listens on every network interface. To keep it on this machine use "
                    "`panel serve apps/explorer.py --address 127.0.0.1`; to share it on a network, "
                    "name the address and the page's host with --address and --allow-websocket-origin.")


def quiet_closed_page_writes(loop: asyncio.AbstractEventLoop | None = None) -> bool:
    """Log a message lost to a closed page as one line, not as "Task exception was never retrieved".

    Panel (1.9) writes the parts of a message to a page's websocket one after the
    other (``panel.io.document.dispatch_tornado``). When the tab closes in between,
    a later write raises at once and the tasks of the earlier writes are dropped
    unawaited; each then fails with ``WebSocketClosedError``, which asyncio reported
    with two tracebacks when the task was collected. Nothing is lost (the page is
    gone, its runs are cancelled). Every other error of the loop is reported as before.

    Parameters
    ----------
    loop : asyncio event loop, optional
        Default: the running one (the server's, while a session's script runs).

    Returns
    -------
    bool
        True when the loop has the handler (installed now or before), False without a loop.
    """
    if loop is None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return False
    previous = loop.get_exception_handler()
    if getattr(previous, "quiets_closed_page_writes", False):
        return True
    from tornado.websocket import WebSocketClosedError

    def handler(loop, context):
        if (isinstance(context.get("exception"), WebSocketClosedError)
                and "never retrieved" in str(context.get("message", ""))):
            log.info("A page closed while a message was being sent to it (its session is released later)")
            return
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    handler.quiets_closed_page_writes = True
    loop.set_exception_handler(handler)
    return True


_detached_patched = False


def drop_messages_of_released_pages() -> None:
    """Drop what a page sends after its session was released, instead of logging Bokeh's assertion (idempotent).

    When the connection of a page goes (a closed tab, a dropped network) while earlier messages
    of that page are still being handled, Bokeh (3.9) may release the connection's session
    first: each message handled after that, and the connection's own close, asserted that the
    session was still there, which the server's log showed as "error handling message ...
    AssertionError" and "Uncaught exception GET /explorer/ws" with their tracebacks. Nothing is
    lost (the page is gone, its runs are cancelled when its session is destroyed); the close
    still hands the connection back to the application, and every other message is handled
    as before.
    """
    global _detached_patched
    if _detached_patched:
        return
    from bokeh.server.protocol_handler import ProtocolHandler
    from bokeh.server.views.ws import WSHandler

    handle, on_close = ProtocolHandler.handle, WSHandler.on_close

    async def handle_while_attached(self, message, connection):
        if getattr(connection, "_session", True) is None:
            log.info("Dropped a %s message of a page whose session was released", message.msgtype)
            return None
        return await handle(self, message, connection)

    def close_released(self):
        connection = getattr(self, "connection", None)
        if connection is not None and getattr(connection, "_session", True) is None:
            log.info("WebSocket connection closed after its session was released")
            self.application.client_lost(connection)
            return
        on_close(self)

    handle_while_attached.__wrapped__, close_released.__wrapped__ = handle, on_close
    ProtocolHandler.handle, WSHandler.on_close = handle_while_attached, close_released
    _detached_patched = True


_values_patched = False


def refuse_values_no_widget_takes() -> None:
    """Refuse, with one line in the log, a value a page sends that its widget cannot take (idempotent).

    A page's widget may send what its widget on the server cannot hold: a number typed with 25 digits
    arrives as a float (``1e+25``) at a whole-number box and its slider, whose bounds the page also
    stretches to it; a crafted message names an option no select offers or a button past the end of a
    toggle group. Panel (1.9) logged two tracebacks for each, and the box showed the value while the
    results kept the old one. Now a whole number sent as a float is taken as the whole number (the
    explorer then says why it refuses a value out of range), and anything else a widget cannot take is
    refused before it is applied: one line in the log, and the page is sent the widget's value in use.
    Errors of the explorer's own callbacks still propagate.
    """
    global _values_patched
    if _values_patched:
        return
    import param
    from panel.reactive import Syncable
    from panel.widgets.select import SingleSelectBase

    original = Syncable._process_events

    def _process_events(self, events):
        try:
            events = dict(events)
            for key, value in events.items():
                target = self.param[key] if key in self.param else None
                if (isinstance(target, param.Integer) and isinstance(value, float) and value.is_integer()):
                    events[key] = int(value)  # sent as a float (25 digits): the widget says why it is refused
            params = self._process_property_change(dict(events))
            for key, value in params.items():
                if "." not in key and key in self.param:
                    self.param[key]._validate(value)
                    # a group of buttons sent with none pressed (active=null): a choice the explorer cannot make
                    if key == "value" and value is None and self.value is not None and hasattr(self, "options"):
                        raise ValueError(f"no option chosen; one of {len(self.options)} must be")
                    # a select's value that none of its options has ('Show' before any result: no option at all)
                    if key == "value" and isinstance(self, SingleSelectBase) and value not in self.values:
                        raise ValueError(f"{value!r:.60} is none of its {len(self.values)} option(s)")
        except Exception as exc:  # noqa: BLE001 - what the page sent cannot be applied: refused
            log.warning("Refused what a page sent to %s %r (%s): %s", type(self).__name__, self.name,
                        ", ".join(map(str, events)), exc)
            _send_back(self, events)
            return None
        return original(self, events)

    _process_events.__wrapped__ = original
    Syncable._process_events = _process_events
    _values_patched = True


def _send_back(widget, events) -> None:
    """Set the page's models of ``widget`` back to the widget's values of the properties in ``events``."""
    names = [k for k in widget.param if (widget._rename.get(k, k) or k) in events]
    try:
        props = widget._process_param_change({k: getattr(widget, k) for k in names})
    except Exception:  # noqa: BLE001 - nothing to send back
        return
    for model, _ in list(getattr(widget, "_models", {}).values()):
        model.update(**{k: v for k, v in props.items() if k in events and model.lookup(k, raises=False) is not None})


_links_patched = False


def read_links_safely() -> None:
    """Read every page's query with :func:`loe_viz.app.link.parse_link_query` (idempotent).

    Panel (1.9) parses the query each time a page's location is created or changes
    (``Location.query_params``); its parser raised for ``?n=²`` (a digit ``int`` cannot
    read) and for a number of more than 4,300 digits, and the page's script ended there:
    a traceback in the server's log and no explorer. The replacement reads the same
    values the same way and keeps a value it cannot read as text.
    """
    global _links_patched
    if _links_patched:
        return
    import panel.io.location as location

    from .link import parse_link_query

    parse_link_query.__wrapped__ = location.parse_query
    location.parse_query = parse_link_query
    _links_patched = True


def readable_request_arguments(doc=None) -> int:
    """Make every query value of this session's request valid UTF-8; returns how many were not.

    Panel decodes some of them strictly while it builds the page: ``?theme=%FF`` (a byte
    that is no UTF-8) raised ``UnicodeDecodeError`` in ``pn.config.theme``, in the page's
    script and again in the HTML handler, which answered 500 with two tracebacks in the
    log. Such a value is replaced by its reading with U+FFFD (Panel then ignores an
    unknown theme, and the explorer names a setting it cannot read).

    Parameters
    ----------
    doc : bokeh.document.Document, optional
        Default: the current document (``pn.state.curdoc``); outside a server nothing is done.
    """
    if doc is None:
        import panel as pn
        doc = pn.state.curdoc
    request = getattr(getattr(doc, "session_context", None), "request", None)
    args = getattr(request, "arguments", None)
    if not isinstance(args, dict):
        return 0
    fixed = 0
    for key, values in list(args.items()):
        if not isinstance(values, list):
            continue
        for i, v in enumerate(values):
            if isinstance(v, bytes):
                try:
                    v.decode("utf-8")
                except UnicodeDecodeError:
                    values[i] = v.decode("utf-8", "replace").encode("utf-8")
                    fixed += 1
    if fixed:
        log.info("read %d query value(s) that were not UTF-8 with a replacement character", fixed)
    return fixed


# ---------------------------------------------------------------------------- page weight

#: zlib level of the compressed responses: 3 sends the page's scripts and stylesheets (3.2 MB) as
#: 0.95 MB in 0.10 s of the server's time; Tornado's default, 6, as 0.84 MB in 0.37 s (each page's
#: first visit; browsers keep the versioned files).
GZIP_LEVEL = 3
_mathjax_patched = False


def _uses_mathjax(model) -> bool:
    """Whether a Panel HTML model shows MathJax markup: its math is enabled and its text holds TeX delimiters."""
    from bokeh.embed.util import contains_tex_string

    return not getattr(model, "disable_math", True) and isinstance(model.text, str) and contains_tex_string(
        html.unescape(model.text))


def lighten_pages() -> None:
    """Send the explorer's pages in about a quarter of their bytes (idempotent; :func:`harden` calls it).

    A lecture hall's network carries every student's first page load at once: 6.2 MB each before this.

    * **No MathJax bundle where no text needs it.** Panel adds Bokeh's MathJax bundle (1.8 MB, the
      largest file of a page) to every page that holds an HTML or Markdown pane, in case a text holds
      ``$$...$$``. The explorer typesets its formulas with KaTeX and escapes ``$`` in every text it
      shows, so here the bundle goes only to a page with a pane whose math is enabled and whose text
      holds TeX delimiters: the rule Bokeh applies to its own models. Without the bundle Bokeh shows
      such text as it is; it never fetches MathJax from the internet.
    * **Compressed answers** (gzip at :data:`GZIP_LEVEL`) for browsers that accept them, as Tornado's
      ``compress_response`` setting, which ``panel serve`` has no option for, would. The application is
      found from the page handler that is building this page, so compression starts with the first
      page that is served (with ``--warm`` too).
    """
    global _mathjax_patched
    if not _mathjax_patched:
        import panel.io.resources as resources
        from panel.models.markup import HTML as PanelHTML

        original = resources._panel_use_mathjax

        def _panel_use_mathjax(roots) -> bool:  # every model of the page (Panel's rule looks at its roots only)
            docs = {id(r.document): r.document for r in roots if r.document is not None}
            models = [m for d in docs.values() for m in d.models]
            models += [m for r in roots if r.document is None for m in r.references()]
            return any(isinstance(m, PanelHTML) and _uses_mathjax(m) for m in models)

        _panel_use_mathjax.__wrapped__ = original
        resources._panel_use_mathjax = _panel_use_mathjax
        _mathjax_patched = True
    application = _serving_application()
    if application is None:
        return
    from tornado.web import GZipContentEncoding

    if not any(issubclass(t, GZipContentEncoding) for t in application.transforms):
        application.transforms.append(type("Gzip", (GZipContentEncoding,), {"GZIP_LEVEL": GZIP_LEVEL}))


def _serving_application():
    """The Tornado application whose request handler is building this page (the caller's stack), or None."""
    from tornado.web import RequestHandler

    frame = sys._getframe(1)
    while frame is not None:
        handler = frame.f_locals.get("self")
        if isinstance(handler, RequestHandler):
            return handler.application
        frame = frame.f_back
    return None


_hardened = False

#: Longest text of one log record, and of its traceback: Bokeh logs a message it cannot apply with the message
#: itself (``%r``), and a page may send megabytes (a slider's value set to a 5 MB string: 150 MB of log in 9 s).
LOG_RECORD_CHARS = 2000


class _BoundedRecords(logging.Filter):
    """Cut a log record's text and its traceback to :data:`LOG_RECORD_CHARS` characters each."""

    @staticmethod
    def _cut(text: str) -> str:
        half = LOG_RECORD_CHARS // 2  # a traceback's last line names the error: both ends are kept
        return f"{text[:half]} ... ({len(text):,} characters in all) ... {text[-half:]}"

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "loe_bounded", False):  # cut by another handler's filter already
            return True
        record.loe_bounded = True
        try:
            text = record.getMessage()
        except Exception:  # a record that does not format: the handler reports it as it would
            return True
        if len(text) > LOG_RECORD_CHARS:
            record.msg, record.args = self._cut(text), None
        if record.exc_info and not record.exc_text:
            trace = logging.Formatter().formatException(record.exc_info)
            if len(trace) > LOG_RECORD_CHARS:
                record.exc_text = self._cut(trace)
        return True


_BOUNDED = _BoundedRecords()


def bound_log_records() -> None:
    """Put :class:`_BoundedRecords` on the handlers that write the server's log (idempotent): the root logger's
    and Bokeh's, Panel's and Tornado's own, where they have any."""
    for name in (None, "bokeh", "panel", "tornado"):
        for handler in logging.getLogger(name).handlers:
            if _BOUNDED not in handler.filters:
                handler.addFilter(_BOUNDED)


def quiet_known_references() -> None:
    """Do not log Bokeh's "reference already known" warning (idempotent).

    The first click on a button of a tab drawn since the page opened (a lesson's, in
    "Lessons") comes with the button's whole definition, not its reference: Bokeh finds the
    button it knows and uses it. It reports this with a ``BokehUserWarning``, a recoverable
    case that Bokeh turned from an error into a warning (bokeh/bokeh#12915) and that Panel
    already silences in VS Code. Nothing is lost; the teacher's terminal stays quiet.
    """
    import warnings

    from bokeh.util.warnings import BokehUserWarning

    warnings.filterwarnings("ignore", message="reference already known", category=BokehUserWarning)


def harden() -> None:
    """Everything above and :func:`answer_refusals_with_status`, once per process (the handler: once per
    event loop; the request's values: once per session); :func:`serve_explorer_page` calls it."""
    global _hardened
    require_websocket_origin()
    drop_messages_of_released_pages()
    answer_refusals_with_status()
    guard_page_requests()  # after the status patch: its wrapper runs first, before the session exists
    ignore_absolute_url()
    read_links_safely()
    readable_request_arguments()
    quiet_closed_page_writes()
    refuse_values_no_widget_takes()
    lighten_pages()
    quiet_known_references()
    bound_log_records()
    if not _hardened:
        _hardened = True
        warn_if_exposed()


# ---------------------------------------------------------------------------- pages per address

#: Most pages of the explorer one client address may have open at once; 0 (the default): no limit.
#: Read from ``LOE_VIZ_MAX_PAGES_PER_ADDRESS`` when this module is imported (a whole number above 0).
#: Every page builds a full explorer (about half a second of the server's event loop, and its memory
#: until the page is closed and discarded), so one client opening pages in a loop slows every other visitor.
#: It is off by default because a class behind one NAT address shows the server one address.
MAX_PAGES_PER_ADDRESS = _env_value("LOE_VIZ_MAX_PAGES_PER_ADDRESS", 0)

_pages: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # document -> _Page, for admitted pages
_pages_lock = threading.Lock()
_refusals: dict[str, float] = {}  # address -> when its last refusal was logged as a warning
_REFUSAL_LOG_SECONDS = 60.0
_refused_docs: weakref.WeakSet = weakref.WeakSet()  # documents of refused pages, answered with REFUSED_STATUS
#: The HTTP status of a refused page (its body is still the page that says why): "Too Many Requests", so that a
#: script or a proxy's log sees the refusal, with ``Retry-After`` in seconds.
REFUSED_STATUS, REFUSED_RETRY_AFTER = 429, 60
_status_patched = False


#: Request arguments and header with which a client chooses its session (Bokeh's ids are unsigned unless the server
#: is given a secret key): whoever writes a link with one shares the session, uploads included, with everyone who
#: opens the link. A browser asking for the page sends none of them.
CHOSEN_SESSION_ARGUMENTS, CHOSEN_SESSION_HEADER = ("bokeh-session-id", "bokeh-token"), "Bokeh-Session-Id"
CHOSEN_SESSION_TEXT = ("This address names a session of its own (bokeh-session-id or bokeh-token), which would show "
                       "one explorer, and any file uploaded in it, to everyone who opens the address. Open the "
                       "address without it.")
#: ``?bokeh-absolute-url=`` is for a page that embeds the explorer with autoload.js; on the page itself Panel wrote
#: it, unescaped, before the address of every script and stylesheet (a link could run its own script in the page).
ABSOLUTE_URL = "bokeh-absolute-url"


def chooses_session(arguments, headers=None) -> bool:
    """Whether a page request names its own session (see :data:`CHOSEN_SESSION_ARGUMENTS`)."""
    return (any(k in (arguments or {}) for k in CHOSEN_SESSION_ARGUMENTS)
            or CHOSEN_SESSION_HEADER in (headers or {}))


def ignore_absolute_url(doc=None) -> bool:
    """Drop ``?bokeh-absolute-url=`` from this session's page request, and the prefix Panel made of it (the first
    request to a server that has not yet patched its page handler; :func:`guard_page_requests` does the others).
    Returns whether it was there."""
    import panel as pn

    doc = pn.state.curdoc if doc is None else doc
    request = getattr(getattr(doc, "session_context", None), "request", None)
    args = getattr(request, "arguments", None)
    if not isinstance(args, dict) or ABSOLUTE_URL not in args:
        return False
    del args[ABSOLUTE_URL]
    app_path = getattr(request, "app_path", None) or doc.session_context.server_context.application_context.url
    pn.state.rel_path = "/".join([".."] * app_path.strip("/").count("/"))  # Panel's own, without the argument
    log.info("ignored a page request's %s (it is for autoload.js)", ABSOLUTE_URL)
    return True


_guarded = False


def guard_page_requests() -> None:
    """Answer a page request that chooses its session with 403, and drop its ``bokeh-absolute-url`` (idempotent).

    Both are request arguments that Bokeh and Panel read before the app script runs; the script's own checks
    (:func:`chooses_session`, :func:`ignore_absolute_url`) cover the first request, made before this patch.
    """
    global _guarded
    if _guarded:
        return
    from panel.io.server import DocHandler
    from tornado.web import HTTPError

    original = DocHandler.get_session

    async def get_session(self, *args, **kwargs):
        request = self.request
        if chooses_session(request.arguments, request.headers):
            raise HTTPError(403, reason="a page request may not choose its session")
        for table in (request.arguments, request.query_arguments):
            table.pop(ABSOLUTE_URL, None)
        return await original(self, *args, **kwargs)

    get_session.__wrapped__ = original
    DocHandler.get_session = get_session
    _guarded = True


def answer_refusals_with_status() -> None:
    """Send a page that :func:`admit_page` refused with :data:`REFUSED_STATUS`, not 200 (idempotent).

    Panel's page handler builds the session's document (the app script runs, and the refusal is
    decided there) before it writes anything, so the status can still be set once the session exists.
    Tornado logs every answer of status 400 or more as a warning; :func:`admit_page` already logs
    refusals (one warning a minute per address), so the access log leaves these out.
    """
    global _status_patched
    if _status_patched:
        return
    from panel.io.server import DocHandler

    logging.getLogger("tornado.access").addFilter(
        lambda record: not (record.args and isinstance(record.args, tuple) and record.args[0] == REFUSED_STATUS))

    original = DocHandler.get_session

    async def get_session(self, *args, **kwargs):
        session = await original(self, *args, **kwargs)
        if session is not None and session.document in _refused_docs:
            self.set_status(REFUSED_STATUS)
            self.set_header("Retry-After", str(REFUSED_RETRY_AFTER))
        return session

    get_session.__wrapped__ = original
    DocHandler.get_session = get_session
    _status_patched = True


class _Page:
    """An admitted page: its client's address, and whether its browser ever showed it (``onload``)."""

    __slots__ = ("address", "shown")

    def __init__(self, address: str):
        self.address, self.shown = address, False


def _holds_slot(doc, page: _Page) -> bool:
    """An admitted page counts until its tab is closed: built but not yet shown (or fetched by a client
    that never opens the page: then until the server discards the session), or shown and connected."""
    session = getattr(getattr(doc, "session_context", None), "_session", None)
    if session is not None and session.destroyed:
        return False
    if not page.shown:
        return True
    return session is not None and session.connection_count > 0


def open_pages(address: str) -> int:
    """Pages of the explorer that ``address`` holds open now (see :func:`admit_page`)."""
    with _pages_lock:
        items = list(_pages.items())
    return sum(1 for doc, page in items if page.address == address and _holds_slot(doc, page))


def _client_address(doc) -> str | None:
    request = getattr(getattr(doc, "session_context", None), "request", None)
    try:
        address = getattr(request, "remote_ip", None)
    except Exception:
        return None
    return str(address) if address else None


def too_many_pages_text(address: str, limit: int) -> str:
    """What a page over the limit says (plain text)."""
    return (f"Too many pages of this explorer are open from your address ({address}): at most {limit} at once. "
            "Close one of them, then reload this page.")


def admit_page(doc=None, limit: int | None = None):
    """Let this session's page take one of its address's :data:`MAX_PAGES_PER_ADDRESS` slots, or say why not.

    Call it in the app script before anything of the explorer is built. Returns None when the page
    may be built (it then holds a slot until its tab is closed or its session is discarded), or a
    small :class:`panel.pane.HTML` saying that too many pages are open from this address; serve
    that instead of the explorer. With no limit (the default), outside a server, or for a request
    without an address, it returns None and counts nothing.

    The address is the client's as the server sees it (Tornado's ``remote_ip``): behind a reverse
    proxy start ``panel serve`` with ``--use-xheaders``, or every visitor has the proxy's address.

    Parameters
    ----------
    doc : bokeh.document.Document, optional
        Default: the current document (``pn.state.curdoc``).
    limit : int, optional
        Default: :data:`MAX_PAGES_PER_ADDRESS`.
    """
    import panel as pn

    limit = MAX_PAGES_PER_ADDRESS if limit is None else int(limit)
    if doc is None:
        doc = pn.state.curdoc
    if limit <= 0 or doc is None or doc.session_context is None:
        return None
    address = _client_address(doc)
    if address is None:
        return None
    held = open_pages(address)
    if held < limit:
        page = _Page(address)
        with _pages_lock:
            _pages[doc] = page

        def shown():
            page.shown = True

        def discarded(session_context):
            with _pages_lock:
                _pages.pop(doc, None)

        pn.state.onload(shown)
        doc.on_session_destroyed(discarded)
        return None
    now = time.monotonic()
    if len(_refusals) > 1000:  # forget addresses not refused for a minute
        for a, t in list(_refusals.items()):
            if now - t >= _REFUSAL_LOG_SECONDS:
                _refusals.pop(a, None)
    if now - _refusals.get(address, -_REFUSAL_LOG_SECONDS) >= _REFUSAL_LOG_SECONDS:
        _refusals[address] = now
        log.warning("Refusing pages from %s: %d are open, LOE_VIZ_MAX_PAGES_PER_ADDRESS = %d (the server's "
                    "setting); further refusals of this address in the next minute are logged at INFO",
                    address, held, limit)
    else:
        log.info("Refused a page from %s: %d are open (LOE_VIZ_MAX_PAGES_PER_ADDRESS = %d)", address, held, limit)
    _refused_docs.add(doc)
    text = html.escape(too_many_pages_text(address, limit))
    return pn.pane.HTML(f'<p role="alert">{text}</p>', styles={"font-size": "1.25em", "max-width": "40em"},
                        margin=(20, 20), css_classes=["loe-too-many-pages"])


def serve_explorer_page() -> None:
    """Build one visitor's page, as ``panel serve apps/explorer.py`` and ``loe-viz explore`` both do.

    Hardens the server (:func:`harden`), asks :func:`admit_page` for a slot, and marks servable
    either the explorer in its template or the sentence that says too many pages are open.
    Outside a server (``--warm``) it builds one explorer and serves nothing.
    """
    import panel as pn

    from .explorer import Explorer

    harden()
    request = getattr(getattr(pn.state.curdoc, "session_context", None), "request", None)
    real = getattr(request, "_request", None)  # Bokeh's proxy leaves bokeh-session-id out of its arguments
    if real is not None and chooses_session(getattr(real, "arguments", None), getattr(real, "headers", None)):
        pn.pane.Alert(CHOSEN_SESSION_TEXT, alert_type="danger", styles={"font-size": "1.3em"}).servable(
            title="Landmark Ordinal Embedding")
        return
    refused = admit_page()  # None unless LOE_VIZ_MAX_PAGES_PER_ADDRESS is set and this address is at it
    if refused is not None:
        refused.servable(title="Landmark Ordinal Embedding: too many pages open")
        return
    pn.extension("katex", "filedropper", throttled=True, notifications=False)
    Explorer().servable()


# ---------------------------------------------------------------------------- stylesheets

_stylesheets_guarded = False


def _keep_local_stylesheets_local() -> None:
    """Never point a stylesheet of a locally served document at Panel's CDN (idempotent).

    Panel keeps one ``ImportedStyleSheet`` per URL and document (``loading.css``,
    ``markdown.css`` ...), shared by every component of the page, and points it at
    the document's ``dist_url`` each time a component's properties are computed.
    For a component whose model is not in any document it falls back to the CDN:
    a pane inside a hidden tab of a dynamic ``Tabs`` keeps its model (detached, so
    ``model.document`` is None) and its updates (the walk-through's status line while
    a lesson is shown) rewrite the shared stylesheets, and so every component's
    links, to cdn.holoviz.org. Here a stylesheet that belongs to a document served
    with local resources keeps that document's ``dist_url``.
    """
    global _stylesheets_guarded
    if _stylesheets_guarded:
        return
    import panel.io.resources as resources
    import panel.reactive as reactive
    from panel.io.state import state

    original = resources.patch_stylesheet
    cdn = resources.CDN_DIST

    def patch_stylesheet(stylesheet, dist_url):
        if dist_url == cdn:
            doc = getattr(stylesheet, "document", None) or state.curdoc
            local = doc._template_variables.get("dist_url") if doc is not None else None
            if local and local != cdn:
                dist_url = local
        return original(stylesheet, dist_url)

    patch_stylesheet.__wrapped__ = original
    # reactive.py imported the function by name; theme/base.py imports it from resources on each use
    resources.patch_stylesheet = reactive.patch_stylesheet = patch_stylesheet
    _stylesheets_guarded = True


def serve_stylesheets_locally(doc) -> None:
    """Load every stylesheet of a served page from the server itself, from the start.

    Panel links each component's stylesheets to its CDN unless the document names a
    local ``dist_url``, which it only sets when the HTML page is rendered, after the
    app script has built the components; it then rewrites the links of the models it
    finds. A model built in between keeps its CDN link, which a hall without internet
    cannot load. Setting the local path first, as ``panel.io.location`` does, leaves
    nothing to rewrite; :func:`_keep_local_stylesheets_local` covers the updates of
    components whose model is outside the document.

    Parameters
    ----------
    doc : bokeh.document.Document
        The session's document (``pn.state.curdoc`` while the app script runs).
    """
    import panel as pn
    from panel.io.resources import LOCAL_DIST, use_cdn

    if use_cdn():
        return
    if "dist_url" not in doc._template_variables:
        rel = pn.state.rel_path
        doc._template_variables["dist_url"] = f"{rel}/{LOCAL_DIST}" if rel else LOCAL_DIST
    _keep_local_stylesheets_local()


def inline_stylesheets(doc) -> None:
    """Put the text of Panel's stylesheets that ``doc``'s models link to its CDN into the models themselves.

    For a page saved to a file (the explorer's "This step's plots (HTML)"): bokeh's ``INLINE`` resources
    inline the scripts, but each component still links Panel's stylesheets (markdown.css, loading.css,
    the theme) at cdn.holoviz.org, which a hall without internet cannot load: the file then showed a stray
    anchor "¶" after each title. The stylesheets come from the installed Panel's own ``dist`` folder.
    """
    from pathlib import Path

    import panel as pn
    from bokeh.models import ImportedStyleSheet, InlineStyleSheet
    from panel.io.resources import CDN_DIST

    dist, inlined = Path(pn.__file__).parent / "dist", {}

    def inline(sheet):
        url = sheet.url if isinstance(sheet, ImportedStyleSheet) else sheet if isinstance(sheet, str) else None
        if url is None or not url.startswith(CDN_DIST):
            return sheet
        if url not in inlined:
            path = dist / url[len(CDN_DIST):].split("?", 1)[0]
            inlined[url] = InlineStyleSheet(css=path.read_text("utf-8")) if path.is_file() else sheet
        return inlined[url]

    for model in list(doc.models):
        sheets = getattr(model, "stylesheets", None)
        if sheets:
            model.stylesheets = [inline(s) for s in sheets]


# ---------------------------------------------------------------------------- uploads

_dropper_class = None


def _bounded_dropper():
    """:class:`panel.widgets.FileDropper` that drops a file growing past :data:`MAX_UPLOAD_BYTES`.

    The browser never sends such a file (FilePond refuses it first); this bounds what
    any other websocket client can make the server buffer: one file at a time (a new
    file's first chunk drops any unfinished one), at most the limit. It asks the page
    for no preview of the file (see :data:`NO_PREVIEW`).
    """
    global _dropper_class
    if _dropper_class is not None:
        return _dropper_class
    import param
    from panel.widgets import FileDropper

    class BoundedFileDropper(FileDropper):

        clears = param.Integer(default=0, precedence=-1, doc="""
            Counts the times the box was emptied from the server (:meth:`clear`); the page
            empties its list of files when it changes.""")

        # FilePond's list of files is the page's own (FileDropper never sends ``value`` to it): a change
        # of the model's tags, which nothing else of a widget uses, runs _CLEAR_JS there
        _rename = {**FileDropper._rename, "clears": "tags"}

        def __init__(self, **params):
            super().__init__(**params)
            self._received = 0
            self._refused: str | None = None
            self._files = 0  # files begun so far: which file the box shows (see _Handed)
            self._held: tuple[str, Callable[[], None]] | None = None  # a taken file, and what removing it undoes
            # a taken file that left the box, and its undo: run when the box is left empty (FilePond's ×), not
            # needed once a file that replaced it is taken, dropped when that file is refused (its data stay)
            self._leaving: tuple[str, Callable[[], None]] | None = None
            self._receipt = None  # of the file take_upload handed over last, until upload_receipt hands it on

        def _get_model(self, doc, root=None, parent=None, comm=None):
            model = super()._get_model(doc, root, parent, comm)
            from bokeh.models import CustomJS

            model.js_on_change("tags", CustomJS(code=_CLEAR_JS))
            model.js_on_event("delete_event", CustomJS(code=_REMOVED_JS))
            return model

        def clear(self) -> None:
            """Empty the box, in the page too (the file's name on its "Upload complete" band goes)."""
            self._held = self._leaving = None
            self.param.update(value={}, mime_type={}, clears=self.clears + 1)

        def _process_param_change(self, params):
            props = super()._process_param_change(params)
            if "tags" in props:
                props["tags"] = [f"loe-cleared-{props['tags']}"]
            if "previews" in props and not props["previews"]:
                # an empty list is the model's Python default, so it is never sent, and the page then uses
                # its own default: FilePond's image and pdf previews. The pdf one (1.0.2, bundled with Panel
                # 1.9) threw "Cannot read properties of null (reading 'file')" in the page each time a box
                # that had taken a file was drawn again. A list naming no preview turns both off.
                props["previews"] = [NO_PREVIEW]
            return props

        def _process_event(self, event):
            if event.event_name != "upload_event":
                data = event.data or {}
                if event.event_name == "delete_event" and data.get("alone"):  # see _REMOVED_JS
                    leaving, self._leaving = self._leaving, None
                    if leaving is not None and leaving[0] == data.get("name"):
                        leaving[1]()  # the box was left empty (FilePond's ×): the upload is undone
                    return
                held, name = self._held, data.get("name")
                super()._process_event(event)
                if event.event_name == "delete_event" and held is not None and held[0] == name:
                    # the taken file left the box: FilePond's ×, or another file put in its place, which
                    # FilePond removes first; the page says which (see _REMOVED_JS)
                    self._held, self._leaving = None, held
                return
            data = event.data or {}
            name, chunk, total = data.get("name"), data.get("chunk"), data.get("total_chunks")
            if chunk == 1:  # a new file: forget any unfinished one
                self._files += 1
                self._file_buffer.clear()
                self._received = 0
                self._refused = None
            elif self._refused == name or name not in self._file_buffer:
                if chunk == total:
                    self._refused = None
                return
            self._received += len(data.get("data") or b"")
            if self._received > MAX_UPLOAD_BYTES:
                self._file_buffer.clear()
                self._received = 0
                self._refused = None if chunk == total else name
                log.warning("Dropped an upload larger than %d bytes (the page refuses such files itself)",
                            MAX_UPLOAD_BYTES)
                return
            if chunk == total:
                self._received = 0
            return super()._process_event(event)

    _dropper_class = BoundedFileDropper
    return _dropper_class


def _dropper_renders() -> bool:
    """True where FileDropper's browser side (FilePond) is on the page.

    Served, the explorer loads Panel's ``filedropper`` extension itself (its files
    are bundled with Panel: nothing comes from the internet); in a notebook only
    when ``pn.extension("filedropper")`` was called.
    """
    import panel as pn
    from panel.config import panel_extension

    from .session import in_server_session

    if in_server_session():
        exts = pn.state._extensions
        if exts is None or "filedropper" not in exts:
            pn.extension("filedropper")
        return True
    return "filedropper" in panel_extension._loaded_extensions


#: FilePond writes a file's name and status at 11 px, and its size and "tap to undo" at 9 px, half
#: transparent on its green or red band: unreadable from the back of a lecture hall. Its item grows
#: with the text (FilePond measures it).
_FILEPOND_READABLE = """
.filepond--root .filepond--file-info .filepond--file-info-main,
.filepond--root .filepond--file-status .filepond--file-status-main { font-size: 14px; }
.filepond--root .filepond--file-info .filepond--file-info-sub,
.filepond--root .filepond--file-status .filepond--file-status-sub { font-size: 13px; opacity: 0.9 !important; }
"""


def upload_box(label: str, accept: str, **params):
    """An upload box that refuses files over :data:`MAX_UPLOAD_BYTES` before sending them.

    Served (and in a notebook that loaded ``pn.extension("filedropper")``) this is a
    :class:`panel.widgets.FileDropper`: a larger file gets FilePond's message in the
    box ("File is too large / Maximum file size is 10 MB") and nothing is sent.
    Elsewhere it is a :class:`panel.widgets.FileInput` (a notebook has no such
    websocket).  Read it with :func:`take_upload`, watching ``value``.

    Parameters
    ----------
    label : str
        The box's label; the size limit is added to it.
    accept : str
        File extensions offered by a FileInput's file dialog (e.g. ``".csv,.npy"``);
        FileDropper does not filter (browsers report CSV files under several
        types), the readers name a file they cannot read.
    **params
        Passed to the widget (``css_classes``, ``width``, ``sizing_mode`` ...).
    """
    import panel as pn

    label = f"{label} (up to {MAX_UPLOAD_BYTES / 1e6:g} MB)"
    if _dropper_renders():
        return _bounded_dropper()(label=label, multiple=False, max_file_size=MAX_UPLOAD_TEXT,
                                  chunk_size=UPLOAD_CHUNK_BYTES, previews=[], layout="compact",
                                  stylesheets=[_FILEPOND_READABLE], **params)
    params.pop("height", None)
    return pn.widgets.FileInput(label=label, accept=accept, multiple=False, **params)


def take_upload(box) -> tuple[str, bytes | str] | None:
    """The file an :func:`upload_box` just received, as ``(name, content)``, or None.

    ``content`` is bytes, or str for a text file FileDropper decoded as UTF-8 (the
    readers take both).  A FileDropper then forgets the file (its ``value`` is
    emptied: the widget keeps no copy, and the same file uploaded again is seen
    again).  The box stays with the file's reader, which gets its receipt
    (:func:`upload_receipt`) to say what became of the file: refused, the box is
    emptied; taken, removing it from the box undoes the upload.
    """
    value = box.value
    if isinstance(value, dict):
        if not value:
            return None
        name, content = list(value.items())[-1]
        box.value = {}
        box.mime_type = {}
        if hasattr(box, "_held"):  # the server's box (see _bounded_dropper)
            box._receipt = _Handed(box, str(name))
        return str(name), content if content is not None else b""
    # FileInput: value and filename arrive together (an empty file as a name with no value)
    if not box.filename and value is None:
        return None
    return box.filename or "upload", value or b""


#: Run in the page when a box's ``clears`` changes: FilePond's list empties (without telling the
#: server: a list emptied this way sends no removal).
_CLEAR_JS = """
const index = window.Bokeh && window.Bokeh.index
if (index && typeof index.find === "function") {
  for (const view of index.find(cb_obj)) {
    if (view._file_pond) view._file_pond.removeFiles()
  }
}
"""


#: Run in the page when a box tells the server a file left it: when the box is empty a moment later (FilePond's
#: ×, not a file put in the removed one's place, which FilePond lists before it removes the old one), the
#: page says so, and the server undoes the removed file's upload at once.
_REMOVED_JS = """
const removed = cb_obj
if (removed.data == null || removed.data.alone) return
const model = removed.origin
const index = window.Bokeh && window.Bokeh.index
if (model == null || !index || typeof index.find !== "function") return
const views = index.find(model).filter((view) => view._file_pond)
if (views.length === 0) return
setTimeout(() => {
  if (views.every((view) => view._file_pond == null || view._file_pond.getFiles().length === 0)) {
    model.trigger_event(new removed.constructor({name: removed.data.name, alone: true}))
  }
}, 100)
"""


class _Handed:
    """A file :func:`take_upload` handed over, and the box it came from (see :func:`upload_receipt`)."""

    def __init__(self, box, name: str):
        self._box = weakref.ref(box)
        self.name = name
        self._file = getattr(box, "_files", None)  # which file the box showed then

    def _shown(self):
        """The box, while it still shows this file (no newer file was dropped on it since)."""
        box = self._box()
        if box is None or getattr(box, "_files", None) != self._file:
            return None
        return box

    def refused(self) -> bool:
        """The reader refused the file (or other data replaced it before it was read): the box is emptied.

        Returns True when the file had replaced a taken one in the box: that upload stays in use
        (its undo is dropped).
        """
        box = self._shown()
        if box is None or not hasattr(box, "clear"):
            return False
        replaced = getattr(box, "_leaving", None) is not None
        box.clear()
        return replaced

    def taken(self, undo: Callable[[], None] | None) -> None:
        """The file's data are in use: removing the file from the box calls ``undo`` (the undo of a file
        it replaced is not needed)."""
        box = self._shown()
        if box is not None and hasattr(box, "_held"):
            box._held = (self.name, undo) if undo is not None else None
            box._leaving = None


def upload_receipt(box) -> _Handed | None:
    """The receipt of the file :func:`take_upload` just took from ``box`` (once), or None.

    Pass it to the reader (``load_file(..., box=...)``, ``load_upload(..., box=...)``): it says
    through it what became of the file, ``refused()`` or ``taken(undo)``.
    """
    receipt = getattr(box, "_receipt", None)
    if receipt is not None:
        box._receipt = None
    return receipt
