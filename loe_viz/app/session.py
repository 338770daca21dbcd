"""The Panel session seen from the explorer's states: where results are published.

:func:`session_dispatcher` returns the ``dispatch`` callable the states and
their :class:`~loe_viz.app.jobs.JobRunner` use: served, it schedules a function
on the current session's event loop (with that session's document as
``curdoc``); in a Jupyter kernel, on the kernel's event loop (:class:`LoopDispatcher`);
in a script it runs the function at once.  Both the
walk-through (:mod:`loe_viz.app.explorer`) and "Your triplets"
(:mod:`loe_viz.app.views.triplets`) take it from here.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import threading
import weakref
from typing import Callable

from .jobs import direct_dispatch

__all__ = ["session_dispatcher", "LoopDispatcher", "in_server_session", "connection_count", "release_links", "UNHELD"]

log = logging.getLogger(__name__)


def in_server_session() -> bool:
    """True inside a served Panel session (a Bokeh document with a session context)."""
    import panel as pn
    doc = pn.state.curdoc
    return doc is not None and doc.session_context is not None


class LoopDispatcher:
    """Runs dispatched functions on the thread of an event loop, in order.

    In a Jupyter kernel the page's messages (clicks, typed values) are handled on
    the kernel's event loop, on the main thread; a result applied from a job's
    thread at the same moment interleaved with them, and Panel's messages to the
    notebook page lost references or came out garbled (a blank step after "Run
    all", a Compare plot without its curves). Functions dispatched from another
    thread are queued and run by the loop (``call_soon_threadsafe``); on the
    loop's own thread they run at once, after any queued before them.

    A cell blocks the loop while it runs, so the queue is also drained by
    :meth:`drain` on the loop's thread: :meth:`loe_viz.app.jobs.JobRunner.wait`
    calls it, and ``state.wait(); state.metrics`` in a cell reads the new results.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop):
        self._loop, self._owner = loop, threading.get_ident()
        self._queue: collections.deque = collections.deque()
        self._lock = threading.Lock()

    def __call__(self, fn: Callable[[], None]) -> None:
        with self._lock:
            self._queue.append(fn)
        if threading.get_ident() == self._owner:
            self.drain()
            return
        try:
            self._loop.call_soon_threadsafe(self.drain)
        except RuntimeError:  # the loop was closed: the kernel is shutting down
            pass

    def drain(self) -> None:
        """Run the queued functions now, when called on the loop's thread (elsewhere: nothing)."""
        while threading.get_ident() == self._owner:
            with self._lock:
                if not self._queue:
                    return
                fn = self._queue.popleft()
            try:
                fn()
            except Exception:  # never let a UI update kill the kernel's loop
                log.warning("UI update failed", exc_info=True)


def session_dispatcher() -> Callable[[Callable[[], None]], None]:
    """A callable that runs a function on this session's event loop (server), a kernel's, or at once.

    The dispatcher holds the session's document weakly: a closed session's
    document is not kept alive by a background job that still holds the
    dispatcher, and a function dispatched after the document went away is
    dropped.  Everything one function changes on the page goes to the browser
    in one message (the document is held while it runs): a new result changes
    the status line, the figures and the plots' data together, and the page
    lays itself out and draws once instead of once per change.

    The function is handed to the document on the session's event-loop thread
    (through the loop's thread-safe ``call_soon_threadsafe``), never from the
    calling thread: Bokeh's ``add_next_tick_callback`` announces the callback
    through the document's list of held events while a UI update holds the
    document, and the loop thread empties that list on release without a lock,
    so a callback added from a job thread at that moment was lost (and with it
    every later update of a job, merged into the one that never ran: the page
    stopped at "LOE done" while the run went on to the end).
    """
    import panel as pn
    doc = pn.state.curdoc
    if doc is None or doc.session_context is None:
        try:  # a Jupyter kernel runs cells while its event loop runs; a script has none
            return LoopDispatcher(asyncio.get_running_loop())
        except RuntimeError:
            return direct_dispatch
    from panel.io import hold
    from panel.io.state import set_curdoc

    ref = weakref.ref(doc)
    try:
        loop = asyncio.get_running_loop()  # the session's: its pages are built on it
    except RuntimeError:
        loop = None
    sweeping = False  # a sweep is scheduled

    def sweep(rounds: int = _SWEEP_ROUNDS) -> None:
        """While the document's writes are in flight, send on any patch Panel stranded (see _resend_stranded)."""
        nonlocal sweeping
        d = ref()
        sweeping = d is not None and not loop.is_closed() and _resend_stranded(d) and rounds > 0
        if sweeping:
            loop.call_later(_SWEEP_SECONDS, sweep, rounds - 1)

    def run(fn):
        d = ref()
        if d is None or d.session_context is None:
            return

        def wrapped():
            nonlocal sweeping
            d2 = ref()
            if d2 is None:
                return
            try:
                if getattr(fn, "unheld", False):  # see UNHELD
                    with set_curdoc(d2):
                        fn()
                else:
                    with set_curdoc(d2), hold(d2):
                        fn()
            except Exception:  # never let a UI update kill the session
                log.warning("UI update failed", exc_info=True)
            if loop is not None and not sweeping:
                sweeping = True
                loop.call_later(_SWEEP_SECONDS, sweep)

        def schedule():
            d2 = ref()
            if d2 is not None and d2.session_context is not None:
                d2.add_next_tick_callback(wrapped)

        if loop is None:
            schedule()
            return
        try:
            loop.call_soon_threadsafe(schedule)
        except RuntimeError:  # the loop was closed with the server: the session is gone
            pass
    return run


#: Attribute that, set True on a dispatched function, applies it without holding the document. An
#: update holding new plot data, sent held (in one message) just after another visitor's page was
#: built, lost its binary buffers on the way (Panel 1.9): the page never applied it and stayed at
#: "Reading data.csv…". Sent unheld, each change goes through Bokeh's own send.
UNHELD = "unheld"

_SWEEP_SECONDS = 0.1  # between looks for a stranded patch while a document's writes are in flight
_SWEEP_ROUNDS = 100  # at most 10 s of looking after one update


def _resend_stranded(doc) -> bool:
    """Send a patch that Panel queued for ``doc`` and then forgot; True while writes are still in flight.

    Panel (1.9) queues the patches made while a socket write is in progress
    (``_WRITE_MSGS``) and starts a task that sends them, which gives up unless
    the document is marked as blocked (``_WRITE_BLOCK``). A task that is still
    sending earlier messages clears that mark when it ends, so the patches
    queued during its send were never sent: the last update of a run (its
    result, "Done.") could stay on the server, and the page showed the
    previous step for good (about one comparison in eight on the explorer's
    Compare step). Queued messages without the mark are such strays; mark the
    document and start the task again. A Panel without these internals is left
    alone.
    """
    try:
        from panel.io import document as pdoc
        queued, blocked = pdoc._WRITE_MSGS, pdoc._WRITE_BLOCK
        if queued.get(doc) and doc not in blocked:
            log.info("sending a patch Panel had queued and not sent")
            blocked[doc] = True
            pdoc._dispatch_write_task(doc, pdoc._dispatch_msgs, doc)
        return doc in queued or doc in blocked
    except (ImportError, AttributeError, TypeError):
        return False


def connection_count(doc=None) -> int | None:
    """Browser connections of a session's document (0 once its tab was closed); None outside a server.

    ``doc`` defaults to the current document.
    """
    if doc is None:
        import panel as pn
        doc = pn.state.curdoc
    ctx = getattr(doc, "session_context", None)
    session = getattr(ctx, "_session", None)
    if session is None:
        return None
    return int(session.connection_count)


def release_links(*roots) -> int:
    """Drop the entries of Panel's JS-callback registry that belong to the components under ``roots``.

    :class:`panel.links.Callback` keeps its callbacks in a ``WeakKeyDictionary``
    keyed by the source component, but each callback holds its source, so the
    entries never go away on their own (e.g. the ``jscallback`` inside
    :class:`~panel.widgets.EditableIntSlider`): a closed page would stay in
    memory.  Returns the number of entries dropped.
    """
    from panel.links import Callback

    seen: set[int] = set()
    found = []

    def walk(obj):
        if obj is None or id(obj) in seen:
            return
        seen.add(id(obj))
        found.append(obj)
        for child in getattr(obj, "objects", None) or ():
            walk(child)
        walk(getattr(obj, "_composite", None))
        for attr in ("_slider", "_value_edit", "_start_edit", "_end_edit", "_text"):
            walk(getattr(obj, attr, None))

    for root in roots:
        try:
            for obj in root.select():
                walk(obj)
        except Exception:
            walk(root)
    registry = Callback.registry
    dropped = 0
    for obj in found:
        try:
            if obj in registry:
                del registry[obj]
                dropped += 1
        except TypeError:  # not weak-referenceable: cannot be a key
            pass
    return dropped
