"""When and how finely passes over comparisons are grouped in cache-sized tiles.

A landmark's comparisons touch the per-item vectors (points, scores, gradients) at
random. Once those vectors outgrow the CPU's caches, every access waits on main
memory; grouping the comparisons by tiles of ``2**shift`` x ``2**shift`` items
keeps the vectors of two item blocks in cache while a tile is processed.
Measured on a 2-core x86-64 machine with a 1 MiB L2 cache per core (a gradient
pass plus two Hessian-vector passes, per comparison): n = 3 * 10^5, 131 ns in
arrival order, 44 ns in tiles of 2^15; n = 10^6, 348 ns against 70 ns (2^15)
and 53 ns (2^16). Below about 1.3 * 10^5 items tiling does not pay.
"""

from __future__ import annotations

__all__ = ["tile_shift"]

_MIN_ITEMS = 1 << 17


def tile_shift(n_items: int) -> int | None:
    """``log2`` of the tile side for ``n_items`` items, or None when tiling does not pay."""
    if n_items <= _MIN_ITEMS:
        return None
    return 16 if n_items >= 1 << 19 else 15
