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


@pytest.fixture
def panel_writes(monkeypatch):
    """Panel's queue of patches waiting for a socket write, with its task starter recorded."""
    from panel.io import document as pdoc

    started = []
    monkeypatch.setattr(pdoc, "_WRITE_MSGS", {})
    monkeypatch.setattr(pdoc, "_WRITE_BLOCK", {})
    monkeypatch.setattr(pdoc, "_dispatch_write_task", lambda doc, func, *args: started.append((doc, func, args)))
    return pdoc, started


def test_a_patch_panel_queued_and_then_forgot_is_sent(panel_writes):
    # Panel queues the patches made during a socket write and clears the document's "blocked" mark
    # when that write ends; the task meant to send the queued ones gives up without the mark.
    from loe_viz.app.session import _resend_stranded

    pdoc, started = panel_writes
    doc = Document()
    assert _resend_stranded(doc) is False and started == []  # nothing in flight: nothing to do
    pdoc._WRITE_MSGS[doc] = {"connection": ["PATCH-DOC"]}
    pdoc._WRITE_BLOCK[doc] = True
    assert _resend_stranded(doc) is True and started == []  # a write in flight will send it
    del pdoc._WRITE_BLOCK[doc]  # the stray: queued, and nobody left to send it
    assert _resend_stranded(doc) is True
    assert started == [(doc, pdoc._dispatch_msgs, (doc,))] and pdoc._WRITE_BLOCK[doc] is True


def test_after_an_update_the_dispatcher_sends_what_panel_stranded(monkeypatch, panel_writes):
    pdoc, started = panel_writes
    doc = Document()
    context = _Context()
    doc._session_context = lambda: context
    monkeypatch.setattr(doc, "add_next_tick_callback", lambda callback: callback())
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="event-loop", daemon=True)
    thread.start()

    def update():  # a job's last update, whose patch Panel queued while an earlier one was being written
        pdoc._WRITE_MSGS[doc] = {"connection": ["PATCH-DOC: Done."]}
    try:
        run = asyncio.run_coroutine_threadsafe(_dispatcher_of(doc), loop).result(10)
        run(update)
        for _ in range(100):
            if started:
                break
            threading.Event().wait(0.05)
        assert started and started[0][1] is pdoc._dispatch_msgs
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def test_without_a_server_a_running_event_loop_gets_the_jobs_results_as_a_kernel_needs():
    # In a Jupyter kernel a cell runs while the kernel's event loop runs, on the thread that
    # handles the page's messages; results applied from the job's thread interleaved with them
    # (garbled notebook pages). They must run on the loop's thread, in order, and a cell that
    # waits for the job must see them applied when wait() returns.
    from loe_viz.app.jobs import JobRunner
    from loe_viz.app.session import LoopDispatcher

    applied = []

    async def cell():
        run = session_dispatcher()
        assert isinstance(run, LoopDispatcher)
        runner = JobRunner(name="loe-viz-test-job", dispatch=run)

        def job(token):
            for k in range(3):
                runner.publish(lambda k=k: applied.append((k, threading.current_thread().name)))
        runner.submit(job)
        assert runner.wait(30)  # blocks the loop, as a cell does; the queued results are applied
        seen_in_cell = list(applied)
        runner.submit(job)
        while runner.busy:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)  # the loop runs the queue when the cell yields
        return seen_in_cell

    seen = asyncio.run(cell(), debug=False)
    main = threading.current_thread().name
    assert seen == [(k, main) for k in range(3)]
    assert applied == [(k, main) for k in range(3)] * 2


def test_without_a_server_or_a_running_loop_results_are_applied_at_once():
    from loe_viz.app.jobs import direct_dispatch
    assert session_dispatcher() is direct_dispatch  # a script: nothing else would ever run them
