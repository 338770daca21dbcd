"""Keep L-BFGS-B's small BLAS calls on one thread (shared by the baselines and the ordinal polish)."""

from __future__ import annotations

import contextlib
import threading

try:  # optional: without threadpoolctl the limit is not applied
    from threadpoolctl import threadpool_limits as _threadpool_limits
except ImportError:  # pragma: no cover - depends on the environment
    _threadpool_limits = None

__all__ = ["blas_single_thread"]

_blas_lock = threading.Lock()
_blas_users = 0
_blas_limiter = None


@contextlib.contextmanager
def blas_single_thread():
    """Limit BLAS to one thread while L-BFGS-B runs.

    L-BFGS-B calls BLAS/LAPACK on vectors of length ``n d`` and matrices of
    size ~10; a multi-threaded OpenBLAS wakes and synchronises its threads
    for each of those calls, which on a busy 2-core machine made one
    iteration ~40x slower than the whole loss evaluation at n = 40 (and
    doubled the run time at n = 1000). Uses ``threadpoolctl`` when it is
    installed; otherwise does nothing. The limit is process-wide, so it is
    reference-counted: overlapping fits in several threads set it once and
    the last one to finish restores the original setting.
    """
    global _blas_users, _blas_limiter
    if _threadpool_limits is None:
        yield
        return
    with _blas_lock:
        if _blas_users == 0:
            _blas_limiter = _threadpool_limits(limits=1, user_api="blas")
        _blas_users += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_users -= 1
            if _blas_users == 0 and _blas_limiter is not None:
                _blas_limiter.restore_original_limits()
                _blas_limiter = None
