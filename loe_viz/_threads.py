"""Two halves of one pass side by side, on the calling thread and a helper thread.

A numba kernel's first call in a process compiles it (or loads it from numba's
cache) for the types it is given; two threads doing that at once for the same
kernel stalled once with an empty cache. So a pass runs as two threads only once
its *kind* (the kernel and the types of its arrays, :func:`kind`) has completed a
call in this process: until then both halves run on the calling thread.
"""

from __future__ import annotations

import threading

import numpy as np

__all__ = ["kind", "side_by_side"]

_WARM: set = set()  # kinds that have completed a call in this process


def kind(name: str, *arrays) -> tuple:
    """The key of a kernel's compiled version: its name and what numba types its array arguments by."""
    return (name,) + tuple((a.dtype.str, a.ndim, a.flags.c_contiguous, a.flags.writeable)
                           for a in arrays if isinstance(a, np.ndarray))


def side_by_side(key: tuple, first, second, parallel: bool = True, pool=None) -> tuple:
    """``(first(), second())``, the second on a helper thread when ``parallel`` and ``key`` is warm.

    ``pool``: an executor for the helper (a ranking makes many such calls); by default a
    thread started for this call. An exception of either half propagates once both have ended.
    """
    if not (parallel and key in _WARM):
        out = first(), second()
        _WARM.add(key)
        return out
    if pool is not None:
        fut = pool.submit(second)
        try:
            a = first()
        finally:
            b = fut.result()
        return a, b
    box = {}

    def run():
        try:
            box["value"] = second()
        except BaseException as exc:  # re-raised on the calling thread
            box["error"] = exc

    helper = threading.Thread(target=run, name="loe-half", daemon=True)
    helper.start()
    try:
        a = first()
    finally:
        helper.join()
    if "error" in box:
        raise box["error"]
    return a, box["value"]
