"""Durations and sizes in words, one format for the whole package.

The library's progress text (:class:`loe_viz.progress.TextProgress`,
:meth:`loe_viz.resources.ResourceEstimate.summary`) and the explorer print
times and memory with these two functions, so 150 s reads "2 min 30 s"
everywhere.
"""

from __future__ import annotations

import math

__all__ = ["format_seconds", "format_bytes"]


def format_seconds(s: float) -> str:
    """A duration in words.

    Examples
    --------
    >>> format_seconds(0.0472), format_seconds(0.25), format_seconds(4.2), format_seconds(42), format_seconds(150)
    ('0.047 s', '0.25 s', '4.2 s', '42 s', '2 min 30 s')
    >>> format_seconds(0.0004)
    '0.4 ms'

    A fit of 0.047 s read "0.0 s" in one place and "0.0472 s" in another.
    >>> format_seconds(7260)
    '2 h 01 min'

    What a run of absurd size would take, in a line one can read:
    >>> format_seconds(1e12)
    '2.78e+08 h'
    """
    s = float(s)
    if not math.isfinite(s):
        return "?"
    if s < 0.00995:
        return f"{s * 1000:.1g} ms" if s < 0.00095 else f"{s * 1000:.1f} ms"
    if s < 0.995:
        return f"{s:.2g} s"
    if s < 9.95:
        return f"{s:.1f} s"
    if s < 59.5:
        return f"{s:.0f} s"
    if s < 3600 - 0.5:
        whole = int(round(s))
        return f"{whole // 60} min {whole % 60:02d} s"
    if s >= 3.6e9:  # a million hours: its minutes say nothing
        return f"{s / 3600:.3g} h"
    minutes = int(round(s / 60))
    return f"{minutes // 60} h {minutes % 60:02d} min"


def format_bytes(b: float) -> str:
    """A size in binary units.

    Examples
    --------
    >>> format_bytes(512), format_bytes(1536), format_bytes(3 * 2**30)
    ('512 B', '1.5 KiB', '3.0 GiB')
    >>> format_bytes(2**90)
    '1.13e+15 TiB'
    """
    b = float(b)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(b) < 1024 or unit == "TiB":
            return f"{b:.0f} {unit}" if unit == "B" else f"{b:.1f} {unit}" if abs(b) < 1e6 else f"{b:.3g} {unit}"
        b /= 1024
    return f"{b:.1f} TiB"  # pragma: no cover
