"""When and how finely passes over comparisons are grouped in cache-sized tiles.

A landmark's comparisons touch the per-item vectors (points, scores, gradients) at
random. Once those vectors outgrow the CPU's caches, every access waits on memory
further out; grouping the comparisons by tiles of ``2**shift`` x ``2**shift`` items
keeps the vectors of two item blocks in cache while a tile is processed. The
price is paid once, when the comparisons are drawn (the sampler draws its stream
twice, the second time writing each comparison into its tile) or regrouped.

Measured on a 2-core x86-64 machine with a 2 MiB L2 cache per core, whole fits
(``LOE.fit_oracle``, c = 50, 5 landmarks, 2 threads, random and MaxMin landmarks,
alternated in one run): at n = 6 * 10^4 tiles of 2^14 took 5 to 11 % less time than
arrival order, at 7 * 10^4 7 to 8 %, at 10^5 16 to 20 % (a gradient pass 110 ->
62 ms: its score and gradient vectors, 24 bytes per item, no longer fit in L2), at
2 * 10^5 15 % less than tiles of 2^15, at 3 * 10^5 and 4.5 * 10^5 0 to 6 % less;
at n = 5 * 10^4 tiling gained nothing in the passes and doubled the sampling. At
n = 10^6 tiles of 2^15 and 2^16 were within 3 % (35.6 / 35.7 s, 31.9 / 34.0 s).
"""

from __future__ import annotations

__all__ = ["tile_shift"]

_MIN_ITEMS = 55_000


def tile_shift(n_items: int) -> int | None:
    """``log2`` of the tile side for ``n_items`` items, or None when tiling does not pay."""
    if n_items <= _MIN_ITEMS:
        return None
    return 16 if n_items >= 1 << 19 else 14
