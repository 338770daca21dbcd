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

__all__ = ["njit"]


def njit(**options):
    """``numba.njit(**options)``; a kernel that cannot be cached (no writable folder) is compiled uncached."""
    jit = numba.njit(**options)

    def decorate(func):
        try:
            return jit(func)
        except RuntimeError as exc:
            if not options.get("cache") or "no locator available" not in str(exc):
                raise
            return numba.njit(**{**options, "cache": False})(func)

    return decorate
