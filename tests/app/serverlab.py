"""The explorer served in this process, for tests and measurements that look inside the server.

``InProcessServer`` runs ``apps/explorer.py`` with :func:`panel.serve` on a
thread of the current process, so a test can count the explorer's live objects
after a garbage collection, read the server's RSS and CPU time, and check that
its worker threads stopped.  Sessions whose tab closed are discarded after
``unused_ms`` (Bokeh's default is 15 s; shortened here).
"""

from __future__ import annotations

import gc
import os
import resource
import shutil
import socket
import threading
import time
import weakref
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "apps" / "explorer.py"
#: Chromium: $LOE_VIZ_CHROMIUM, ``chromium`` on the PATH, or Debian's /usr/bin/chromium (None: not found).
CHROMIUM = next((c for c in (os.environ.get("LOE_VIZ_CHROMIUM"), shutil.which("chromium"), "/usr/bin/chromium")
                 if c and os.path.exists(c)), None)
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-dev-shm-usage"]


def launch_chromium(playwright):
    """Headless :data:`CHROMIUM` through a running ``sync_playwright()``."""
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_bytes() -> int:
    """Resident memory of this process now."""
    with open(f"/proc/{os.getpid()}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def cpu_seconds() -> float:
    """CPU time (user + system) of this process so far, over all its threads."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def live(*names: str) -> dict[str, int]:
    """Objects alive after a full garbage collection, by class name.

    Only while no other thread of this process runs Python code: ``gc.get_objects`` hands out the
    tuples another thread is still building, and CPython then fails that thread with ``SystemError:
    bad argument to internal function`` (a test that polled it while the served explorer drew a plot
    broke the drawing). Tests use :class:`Tracker`."""
    gc.collect()
    gc.collect()
    counts = dict.fromkeys(names, 0)
    for obj in gc.get_objects():
        name = type(obj).__name__
        if name in counts:
            counts[name] += 1
    return counts


def _tracking_init(cls, original, made: weakref.WeakSet, lock: threading.Lock):
    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)
        if type(self) is cls:
            with lock:
                made.add(self)
    return __init__


class Tracker:
    """The instances of some classes made from now on, held weakly, to count after a garbage collection
    (``live``) or to find (``instances``) while other threads of this process run.

    It wraps each class's ``__init__`` (through ``monkeypatch``, so it is undone after the test) and
    counts an object under its own class only. It replaces a scan of ``gc.get_objects()``, which
    is unsafe while another thread runs (see :func:`live`), and in which ``isinstance`` also raised
    ``ReferenceError`` on weak proxies whose object was gone.
    """

    def __init__(self, monkeypatch, *classes):
        self._lock = threading.Lock()
        self._made = {}
        for cls in classes:
            made = self._made[cls.__name__] = weakref.WeakSet()
            monkeypatch.setattr(cls, "__init__", _tracking_init(cls, cls.__init__, made, self._lock))

    def instances(self, cls) -> list:
        """The live objects of ``cls`` made since the tracker started."""
        with self._lock:
            return list(self._made[cls.__name__])

    def live(self, *names: str) -> dict[str, int]:
        """How many objects of each class named, made since the tracker started, a full collection leaves."""
        gc.collect()
        gc.collect()
        with self._lock:
            return {name: len(self._made[name]) for name in names}


def job_threads() -> list[str]:
    """Names of the explorer's worker threads alive now."""
    return [t.name for t in threading.enumerate() if t.name.startswith("loe-viz-") and t.name != "loe-viz-warm-up"]


class InProcessServer:
    """``apps/explorer.py`` served by :func:`panel.serve` on a thread of this process."""

    def __init__(self, unused_ms: int = 1000, port: int | None = None, **kwargs):
        import panel as pn

        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}/explorer"
        self.server = pn.serve(
            {"explorer": str(APP)}, port=self.port, address="127.0.0.1", show=False, threaded=True,
            websocket_origin=[f"127.0.0.1:{self.port}", f"localhost:{self.port}"],
            unused_session_lifetime_milliseconds=unused_ms,
            check_unused_sessions_milliseconds=max(100, unused_ms // 2), **kwargs)
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.1)
        raise TimeoutError("the in-process server did not listen")

    @property
    def bokeh_server(self):
        import panel as pn
        return pn.state._servers[self.server.server_id][0]

    def session_count(self) -> int:
        """Sessions the server holds now (a closed tab's session is discarded after ``unused_ms``)."""
        tornado = self.bokeh_server._tornado
        return sum(len(ctx.sessions) for ctx in tornado._applications.values())

    def stop(self) -> None:
        try:
            self.server.stop()
        except Exception:
            pass


def drop_file(box, name: str, content: bytes, mime: str = "text/csv", chunk_bytes: int | None = None) -> None:
    """Send ``content`` to a FileDropper ``box`` as its browser side does: numbered chunks of bytes."""
    from panel.models.file_dropper import UploadEvent

    from loe_viz.app.serving import UPLOAD_CHUNK_BYTES

    size = chunk_bytes or UPLOAD_CHUNK_BYTES
    total = len(content) // size + 1  # as FileDropper's JavaScript: ceil((size + 1) / chunk)
    for i in range(total):
        box._process_event(UploadEvent(model=None, data={
            "chunk": i + 1, "total_chunks": total, "name": name, "type": mime,
            "data": content[i * size:(i + 1) * size]}))


def remove_file(box, name: str) -> None:
    """Remove file ``name`` from a FileDropper ``box`` as FilePond's × does: the box reports it removed, and
    then that it was left empty (see ``loe_viz.app.serving._REMOVED_JS``)."""
    from panel.models.file_dropper import DeleteEvent

    box._process_event(DeleteEvent(model=None, data={"name": name}))
    box._process_event(DeleteEvent(model=None, data={"name": name, "alone": True}))


class DispatchQueue:
    """A dispatcher that keeps the published functions until the test runs them (the UI thread's turn)."""

    def __init__(self):
        self.fns = []

    def __call__(self, fn):
        self.fns.append(fn)

    def run(self):
        while self.fns:  # what a function publishes (the run a new upload starts) runs too
            fns, self.fns = self.fns, []
            for fn in fns:
                fn()


def cancel_at_first_long_pass(monkeypatch, cancel, min_rows: int, block: int) -> dict:
    """Cancel a run from inside the first baseline pass over more than ``min_rows`` triplets.

    Passes run in blocks of ``block`` triplets (``losses.EVAL_BLOCK``). The returned dict says whether
    the cancel came (``cancelled``) and how many passes ended after it (``passes_after_cancel``;
    0 when the fit heard it between the blocks of that pass).
    """
    from loe_viz.kernels import losses

    monkeypatch.setattr(losses, "EVAL_BLOCK", block)
    original = losses.triplet_loss_grad
    seen = {"passes_after_cancel": 0, "cancelled": False}

    def watched(X, T, kind, param, reg, n_threads, between=None):
        if T.shape[0] > min_rows and not seen["cancelled"]:
            seen["cancelled"] = True
            cancel()
        out = original(X, T, kind, param, reg, n_threads, between)
        if seen["cancelled"]:
            seen["passes_after_cancel"] += 1
        return out

    monkeypatch.setattr(losses, "triplet_loss_grad", watched)
    return seen
