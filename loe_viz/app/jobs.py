"""The explorer's one background-job mechanism: a latest-wins runner with cancellation.

Every long computation of the explorer (the walk-through's pipeline, the Compare
step, "Your triplets") runs through a :class:`JobRunner`:

* a job is a callable ``job(token)``; the runner runs one job at a time on a
  daemon thread that exists only while there is work (no thread at import, none
  left behind by an idle session);
* submitting a job replaces a job that has not started yet and, by default,
  cancels the running one ("latest wins": a changed configuration stops the run
  of the previous one);
* a job learns that it was cancelled through its :class:`Token`:
  ``token.cancelled``, ``token.check()`` (raises :class:`Cancelled`), or the
  token used as a ``progress(stage, done, total)`` callback of
  :meth:`loe_viz.LOE.fit` (LOE stops when its progress callback raises) and as
  the ``callback`` of the baselines (they stop when it returns True);
* results go to the UI through :meth:`JobRunner.publish`, which hands a function
  to ``dispatch`` (the Panel session's event loop, or a direct call) unless the
  runner was closed; :meth:`JobRunner.publish_update` merges frequent updates
  into the one still waiting for the UI, so a job that reports faster than the
  UI redraws never queues stale frames;
* a job that fails is logged at WARNING with its traceback.

No Panel import: the dispatcher comes from :mod:`loe_viz.app.session`.
"""

from __future__ import annotations

import logging
import threading
import warnings
from typing import Callable

from ..loe import LOEWarning

__all__ = ["Cancelled", "Token", "JobRunner", "RunsJobs", "direct_dispatch", "log_failure"]

log = logging.getLogger(__name__)

# The explorer reports unranked items and non-convergence itself (from ``stages_``).
# LOE attributes its warnings to the caller of ``fit`` (``stacklevel``), so this
# filter hides only the warnings of the explorer's own fits (called from
# ``loe_viz.app.*``): a user's ``LOE().fit`` in the same process still warns.
# (``warnings.catch_warnings`` is not thread-safe, so it cannot scope a fit that
# runs on a worker thread.)
warnings.filterwarnings("ignore", category=LOEWarning, module=r"loe_viz\.app(\.|$)")


def log_failure(logger: logging.Logger, what: str, exc: BaseException) -> None:
    """Log that the background work ``what`` failed with ``exc``: a warning with its traceback, unless
    the process is stopping.

    A server stopped while a run starts (Ctrl-C, SIGTERM) refuses the run's thread pool work with
    ``RuntimeError: cannot schedule new futures after (interpreter) shutdown``: that is one line at
    INFO, not a traceback that reads like a defect.
    """
    if isinstance(exc, RuntimeError) and ("after shutdown" in str(exc) or "after interpreter shutdown" in str(exc)):
        logger.info("%s stopped: the process is shutting down", what)
    else:
        logger.warning("%s failed", what, exc_info=exc)


def direct_dispatch(fn: Callable[[], None]) -> None:
    """Run ``fn`` at once (scripts, tests, notebooks without a server)."""
    fn()


class Cancelled(Exception):
    """Raised inside a job (by :meth:`Token.check`) when the job was cancelled."""


class Token:
    """Cancellation token of one job.

    Calling the token as ``token(stage, done, total)`` makes it an LOE
    ``progress`` callback that raises :class:`Cancelled` once the job is
    cancelled; ``token.stop(iteration, embedding)`` is a baseline ``callback``
    that returns True then.
    """

    __slots__ = ("_event", "seq", "_runner")

    def __init__(self, seq: int = 0, runner: "JobRunner | None" = None):
        self._event = threading.Event()
        self.seq = seq
        self._runner = runner

    def cancel(self) -> None:
        """Ask the job to stop."""
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    @property
    def superseded(self) -> bool:
        """A newer job was submitted to the same runner after this one."""
        return self._runner is not None and self._runner._seq != self.seq

    def check(self) -> None:
        """Raise :class:`Cancelled` if the job was cancelled."""
        if self._event.is_set():
            raise Cancelled()

    def __call__(self, stage=None, done=None, total=None) -> None:
        self.check()

    def stop(self, *args) -> bool:
        """Baseline ``callback(iteration, embedding)``: True once cancelled."""
        return self._event.is_set()


class JobRunner:
    """Runs submitted jobs one at a time, on a thread that lives while there is work.

    Parameters
    ----------
    name : str
        Name of the worker thread.
    background : bool, default True
        Run jobs on the worker thread; ``False`` runs each job at once in
        :meth:`submit` (scripts and tests).
    dispatch : callable, optional
        ``dispatch(fn)`` runs ``fn`` where the UI may be touched; default: at once.
    """

    def __init__(self, name: str = "loe-viz-job", background: bool = True,
                 dispatch: Callable[[Callable[[], None]], None] | None = None):
        self.name = name
        self.background = bool(background)
        self.dispatch = dispatch or direct_dispatch
        self._lock = threading.Lock()
        self._idle = threading.Event()
        self._idle.set()
        self._pending: tuple[Callable[[Token], None], Token] | None = None
        self._running: Token | None = None
        self._thread: threading.Thread | None = None
        self._closed = False
        self._seq = 0
        self._queued: dict | None = None  # the merged update waiting for dispatch (publish_update)

    # ------------------------------------------------------------------ public
    def submit(self, job: Callable[[Token], None], cancel_running: bool = True,
               background: bool | None = None) -> Token:
        """Queue ``job(token)``, replacing a waiting job and (by default) cancelling the running one.

        ``background`` overrides the runner's setting for this job (``False``:
        run it now, on the calling thread).  Returns the job's :class:`Token`
        (already cancelled when the runner is closed).
        """
        background = self.background if background is None else bool(background)
        with self._lock:
            self._seq += 1
            token = Token(self._seq, self)
            if self._closed:
                token.cancel()
                return token
            if self._pending is not None:
                self._pending[1].cancel()
            if cancel_running and self._running is not None:
                self._running.cancel()
            if not background:
                self._running = token
            else:
                self._pending = (job, token)
                self._idle.clear()
                if self._thread is None:
                    self._thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
                    self._thread.start()
                return token
        try:  # synchronous
            self._call(job, token)
        finally:
            with self._lock:
                if self._running is token:
                    self._running = None
        return token

    def cancel(self) -> None:
        """Cancel the running job and a waiting one.

        A cancelled waiting job still runs, so that it can report the
        cancellation (its token is cancelled from the start).
        """
        with self._lock:
            if self._pending is not None:
                self._pending[1].cancel()
            if self._running is not None:
                self._running.cancel()

    @property
    def busy(self) -> bool:
        """True while a job runs or waits."""
        return not self._idle.is_set() or self._running is not None

    def wait(self, timeout: float | None = None) -> bool:
        """Block until no job runs or waits; False on time-out.

        A dispatcher that queues the jobs' results for an event loop this call
        blocks (a notebook cell's: :class:`loe_viz.app.session.LoopDispatcher`)
        has them applied before this returns.
        """
        done = self._idle.wait(timeout)
        drain = getattr(self.dispatch, "drain", None)
        if drain is not None:
            drain()
        return done

    @property
    def thread(self) -> threading.Thread | None:
        """The worker thread while it exists."""
        return self._thread

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Cancel everything; nothing is published afterwards (the UI may be gone)."""
        with self._lock:
            self._closed = True
            self._pending = None
        self.cancel()
        self.dispatch = direct_dispatch  # drop the reference to the session's document

    def publish(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` through ``dispatch`` unless the runner was closed (failures are logged)."""
        if self._closed:
            return

        def guarded():
            if not self._closed:
                fn()
        self._dispatch(guarded)

    def _dispatch(self, fn: Callable[[], None]) -> bool:
        """Hand ``fn`` to ``dispatch``; False (logged) when it could not be (e.g. the document went away)."""
        try:
            self.dispatch(fn)
            return True
        except Exception:
            log.warning("%s: could not publish a result", self.name, exc_info=True)
            return False

    def publish_update(self, apply: Callable[..., None], **updates) -> None:
        """Publish ``apply(**updates)``, merged into an update that still waits for the UI.

        A job that reports four times a second while the UI needs longer than that to
        redraw (a plot rebuilt on a busy server) would otherwise queue one redraw per
        report, and its last message would reach the screen long after the job ended.
        Here at most one update waits: later keys override earlier ones, and the UI
        applies the newest state once. Use one ``apply`` per runner.
        """
        if self._closed:
            return
        with self._lock:
            if self._queued is not None:
                self._queued.update(updates)
                return
            self._queued = dict(updates)

        def flush():
            with self._lock:
                merged, self._queued = self._queued, None
            if merged is not None and not self._closed:
                apply(**merged)
        if not self._dispatch(flush):
            with self._lock:
                self._queued = None

    # ---------------------------------------------------------------- internals
    def _call(self, job, token) -> None:
        try:
            job(token)
        except Cancelled:
            pass
        except Exception:  # a job must never kill the worker; say what happened
            log.warning("%s: background job failed", self.name, exc_info=True)

    def _loop(self) -> None:
        while True:
            with self._lock:
                item, self._pending = self._pending, None
                if item is None or self._closed:
                    self._pending = None
                    self._running = None
                    self._thread = None
                    self._idle.set()
                    return
                self._running = item[1]
            self._call(*item)
            with self._lock:
                self._running = None


class RunsJobs:
    """For states whose work runs on a :class:`JobRunner` kept in ``self._jobs``."""

    _jobs: JobRunner
    #: Parameter whose presence in a reported update also increments ``version`` (see :meth:`_report`).
    _bumps_version: str = ""

    @property
    def dispatch(self) -> Callable[[Callable[[], None]], None]:
        """Runs a callable where results may be published (the UI thread)."""
        return self._jobs.dispatch

    @dispatch.setter
    def dispatch(self, fn: Callable[[Callable[[], None]], None]) -> None:
        self._jobs.dispatch = fn

    @property
    def jobs(self) -> JobRunner:
        """The runner of this state's work (its thread exists only while a run is in progress)."""
        return self._jobs

    def _report(self, **updates) -> None:
        """From a job: set parameters on the UI thread, merged with an update still waiting there.

        See :meth:`JobRunner.publish_update`. An update that sets ``_bumps_version``
        also increments ``version``, counted on the UI thread.
        """
        self._jobs.publish_update(self._apply_report, **updates)

    def _apply_report(self, **updates) -> None:
        if self._bumps_version in updates:
            updates["version"] = self.version + 1
        self.param.update(**updates)

    def cancel(self) -> None:
        """Ask the running work to stop (LOE at its next landmark, the other methods at their next iteration).

        A state with ``running`` and ``message`` parameters says so in
        ``message`` while it stops; one that shows it otherwise overrides this.
        """
        self._jobs.cancel()
        if self.running:
            self.message = "Cancelling…"

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for background work to end; False on time-out."""
        return self._jobs.wait(timeout)
