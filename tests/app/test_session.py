"""loe_viz.app.session: how a job's updates reach the page."""

import asyncio
import threading

import pytest

pytest.importorskip("panel")

from bokeh.document import Document  # noqa: E402
from panel.io.state import set_curdoc  # noqa: E402

from loe_viz.app.session import session_dispatcher  # noqa: E402


class _Context:
    """Stands for a served session's context: the dispatcher only asks whether there is one."""


async def _dispatcher_of(doc):
    with set_curdoc(doc):
        return session_dispatcher()


def test_a_job_threads_update_is_handed_to_the_document_on_the_event_loop_thread(monkeypatch):
    # Bokeh's add_next_tick_callback, called from a job thread while a UI update holds the
    # document, could lose the callback (its held-events list is emptied without a lock), and
    # the job's later updates with it. The dispatcher must call it on the loop thread only.
    doc = Document()
    context = _Context()
    doc._session_context = lambda: context
    callers, ran = [], threading.Event()

    def add_next_tick_callback(callback):
        callers.append(threading.current_thread().name)
        callback()

    monkeypatch.setattr(doc, "add_next_tick_callback", add_next_tick_callback)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="event-loop", daemon=True)
    thread.start()
    try:
        run = asyncio.run_coroutine_threadsafe(_dispatcher_of(doc), loop).result(10)
        job = threading.Thread(target=run, args=(ran.set,), name="job")
        job.start()
        job.join(10)
        assert ran.wait(10)
        assert callers == ["event-loop"]
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
    run(ran.set)  # the loop is closed with the server: the update is dropped, nothing raises
    assert callers == ["event-loop"]
