"""Compile (or load from numba's on-disk cache) the kernels the explorer uses, once per process.

:func:`warm_up` runs a tiny walk-through synchronously; :func:`start_warm_up`
runs it once on a daemon thread.  Nothing happens at import: the explorer
starts the warm-up when its first session is built (``panel serve --warm``
builds one before the first visitor).
"""

from __future__ import annotations

import logging
import threading
import time

from .jobs import log_failure

__all__ = ["warm_up", "start_warm_up", "warming_up", "wait_warm_up", "kernels_ready"]

log = logging.getLogger(__name__)

_warm_lock = threading.Lock()
_start_lock = threading.Lock()  # not _warm_lock: a second session must not wait for the warm-up to end
_warm_seconds: float | None = None
_warm_thread: threading.Thread | None = None


def warm_up() -> float:
    """Compile the numba kernels with a tiny fit.

    Safe to call from many threads and many times: the work happens once per
    process.  Returns the seconds the first call took.
    """
    global _warm_seconds
    with _warm_lock:
        if _warm_seconds is not None:
            return _warm_seconds
        t0 = time.perf_counter()
        try:
            from .state import ExplorerState
            for selection in ("random", "maxmin"):
                s = ExplorerState(n=40, d=2, budget_unit="per_landmark", budget=200.0,
                                  landmark_selection=selection)
                s.close()
            _warm_compare_and_triplets()
        except Exception as exc:  # warm-up is best effort
            log_failure(log, "warm-up", exc)
        _warm_seconds = time.perf_counter() - t0
        return _warm_seconds


def _warm_compare_and_triplets() -> None:
    """Every method of Compare (both protocols) and of "Your triplets", on a tiny problem."""
    import numpy as np

    from .compare_state import BASELINE_METHODS, COMPARE_PROTOCOLS, CompareState
    from .state import ExplorerState
    from .triplets_state import TRIPLET_METHODS, embed_triplets

    # 400 comparisons per landmark: every item takes part in each landmark's share of the training
    # split of "Your triplets" (with 200 one did not, and `panel serve --warm` printed LOE's warning)
    s = ExplorerState(n=40, d=2, budget_unit="per_landmark", budget=400.0)
    for protocol in COMPARE_PROTOCOLS.values():
        c = CompareState(s, methods=list(BASELINE_METHODS), protocol=protocol, max_seconds=5.0)
        c.start(background=False)
        c.close()
    triplets = np.asarray(s.triplets)
    s.close()
    embed_triplets(triplets, 40, list(TRIPLET_METHODS), max_seconds=5.0)


def _load_numba_runtime() -> None:
    """Let numba import its compiler's modules here, on the calling thread, before any other starts.

    numba imports them on its first compile or cache load. Two threads doing that first
    load at once (the warm-up and a session's first run) can meet in numba's circular
    imports; the import that loses is dropped from ``sys.modules``, and the first page
    then fails with a ``KeyError`` in Panel's module bookkeeping (an HTTP 500).
    """
    import numpy as np

    from .._validation import check_triplets

    check_triplets(np.array([[0, 1, 2]]))  # one cached kernel: numba's one-time set-up


def start_warm_up() -> threading.Thread | None:
    """Start :func:`warm_up` on a daemon thread the first time; later calls do nothing."""
    global _warm_thread
    with _start_lock:
        if _warm_thread is not None or _warm_seconds is not None:
            return _warm_thread
        _load_numba_runtime()
        _warm_thread = threading.Thread(target=warm_up, name="loe-viz-warm-up", daemon=True)
        _warm_thread.start()
        return _warm_thread


def kernels_ready() -> bool:
    """Whether the warm-up has ended: a fit that starts now times no compilation of the kernels."""
    return _warm_seconds is not None


def warming_up() -> bool:
    """Whether the warm-up thread is compiling (or loading) the kernels right now.

    False on the warm-up thread itself: its own runs have nothing to wait for.
    """
    t = _warm_thread
    return t is not None and t is not threading.current_thread() and t.is_alive()


def wait_warm_up(check=None, poll: float = 0.25) -> None:
    """Block until a running warm-up ends (at once when none runs).

    A timed run (Compare's baselines stop at their time budget) that starts while the
    kernels still compile would spend its budget on compilation and report a worse
    embedding. ``check()`` is called every ``poll`` seconds and may raise to stop waiting
    (a cancelled job).
    """
    t = _warm_thread
    while warming_up():
        if check is not None:
            check()
        t.join(poll)
