"""The interactive LOE explorer (Panel).

``from loe_viz.app import Explorer`` imports Panel; the states do not, and
``import loe_viz`` imports neither.  Importing this package starts no thread and
changes no global warning filter beyond the explorer's own fits.

Modules
-------
state
    :class:`ExplorerState`: the walk-through's configuration and results.
pipeline
    The walk-through's computation (a plain function of a configuration).
limits
    What a run may cost (bounds and memory, checked before allocating).
compare_state
    :class:`CompareState`: LOE against the baselines (the Compare step).
triplets_state
    :class:`TripletsState`: the "Your triplets" mode.
truth
    Ground-truth quantities the steps draw beside the estimates.
jobs
    :class:`JobRunner`: the one background-job mechanism (latest wins, cancellation).
session
    The Panel session's dispatcher (where background results are published).
warmup
    Compiling the kernels once per process.
explorer, views, plots, colors
    The Panel layer.
"""

from __future__ import annotations

__all__ = ["Explorer", "ExplorerState", "CompareState", "TripletsState", "STEPS", "warm_up"]

_LAZY = {
    "Explorer": ".explorer",
    "ExplorerState": ".state",
    "STEPS": ".state",
    "CompareState": ".compare_state",
    "TripletsState": ".triplets_state",
    "warm_up": ".warmup",
}


def __getattr__(name):
    # Lazy, so that the states can be used without importing Panel.
    if name in _LAZY:
        import importlib
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module 'loe_viz.app' has no attribute {name!r}")
