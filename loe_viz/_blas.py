"""Keep L-BFGS-B's small BLAS calls on one thread (shared by the baselines and the ordinal polish)."""

from __future__ import annotations

import contextlib
import threading

try:  # optional: without threadpoolctl the limit is not applied
    from threadpoolctl import threadpool_limits as _threadpool_limits
except ImportError:  # pragma: no cover - depends on the environment
    _threadpool_limits = None

__all__ = ["blas_single_thread", "pin_blas_single_thread"]

_blas_lock = threading.Lock()
_blas_owner = None  # the limiter of the fit that set the one-thread limit, while it runs
_pinned = None  # the limiter of pin_blas_single_thread, kept for the life of the process


def pin_blas_single_thread() -> bool:
    """Keep BLAS on one thread for the rest of the process; later fits change nothing.

    For a server that runs several sessions' fits at once: there,
    :func:`blas_single_thread` would switch the process-wide thread count of OpenBLAS
    around every fit while other sessions' threads are inside BLAS calls. Pinned,
    nothing switches, and every fit runs its BLAS calls on one thread as it would
    anyway. Returns True when the limit is (or already was) in place, False without
    ``threadpoolctl``.
    """
    global _pinned
    if _threadpool_limits is None:
        return False
    with _blas_lock:
        if _pinned is None:
            _pinned = _threadpool_limits(limits=1, user_api="blas")
    return True


@contextlib.contextmanager
def blas_single_thread():
    """Limit BLAS to one thread while L-BFGS-B runs.

    L-BFGS-B calls BLAS/LAPACK on vectors of length ``n d`` and matrices of
    size ~10; a multi-threaded OpenBLAS wakes and synchronises its threads
    for each of those calls, which on a busy 2-core machine made one
    iteration ~40x slower than the whole loss evaluation at n = 40 (and
    doubled the run time at n = 1000). Uses ``threadpoolctl`` when it is
    installed; otherwise does nothing.

    The limit is process-wide, and threadpoolctl lets only the thread that set
    an OpenBLAS limit change it again. So the fit that finds no limit in place
    sets it and, on its own thread, restores it when it ends; fits that overlap
    it leave BLAS alone (after it ends they run with the original setting).
    Nothing changes after :func:`pin_blas_single_thread`.
    """
    global _blas_owner
    if _threadpool_limits is None or _pinned is not None:
        yield
        return
    mine = None
    with _blas_lock:
        if _blas_owner is None:
            mine = _blas_owner = _threadpool_limits(limits=1, user_api="blas")
    try:
        yield
    finally:
        if mine is not None:
            with _blas_lock:
                mine.restore_original_limits()
                _blas_owner = None
