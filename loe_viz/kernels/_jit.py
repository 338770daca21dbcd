"""``njit`` whose on-disk cache is a convenience, never a condition of importing the kernels.

numba's ``cache=True`` stores compiled kernels in ``__pycache__`` beside the source,
else in the user's cache folder (``~/.cache/numba``, or ``NUMBA_CACHE_DIR``). When
neither can be written (a package installed by an administrator, used from an
account whose home is read-only, as on many clusters and in containers), numba
refuses at decoration time with ``RuntimeError: cannot cache function ...: no
locator available``, and ``import loe_viz`` failed. Such a kernel is compiled
without the cache instead: in every new process, as if ``cache=False``.
"""

from __future__ import annotations

import numba

__all__ = ["njit", "UNCACHED"]

#: Names of the kernels compiled without the cache in this process (none where numba can cache). The
#: command line says so once a run is done: every new process compiles them again (14 to 15 s for an LOE
#: fit where a cached one takes 0.14 s), and setting ``NUMBA_CACHE_DIR`` avoids it.
UNCACHED: list[str] = []


def njit(**options):
    """``numba.njit(**options)``; a kernel that cannot be cached (no writable folder) is compiled uncached."""
    jit = numba.njit(**options)

    def decorate(func):
        try:
            return jit(func)
        except RuntimeError as exc:
            if not options.get("cache") or "no locator available" not in str(exc):
                raise
            UNCACHED.append(func.__name__)
            return numba.njit(**{**options, "cache": False})(func)

    return decorate
