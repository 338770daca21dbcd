"""The interactive LOE explorer (Panel).

``from loe_viz.app import Explorer`` imports Panel; the state classes in
:mod:`loe_viz.app.state` do not, and ``import loe_viz`` imports neither.
"""

from __future__ import annotations

__all__ = ["Explorer", "ExplorerState"]


def __getattr__(name):
    # Lazy, so that loe_viz.app.state can be used without importing Panel.
    if name == "Explorer":
        from .explorer import Explorer
        return Explorer
    if name == "ExplorerState":
        from .state import ExplorerState
        return ExplorerState
    raise AttributeError(f"module 'loe_viz.app' has no attribute {name!r}")
