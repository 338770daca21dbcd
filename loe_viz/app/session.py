"""The Panel session seen from the explorer's states: where results are published.

:func:`session_dispatcher` returns the ``dispatch`` callable the states and
their :class:`~loe_viz.app.jobs.JobRunner` use: served, it schedules a function
on the current session's event loop (with that session's document as
``curdoc``); in a notebook or a script it runs the function at once.  Both the
walk-through (:mod:`loe_viz.app.explorer`) and "Your triplets"
(:mod:`loe_viz.app.views.triplets`) take it from here.
"""

from __future__ import annotations

import logging
import weakref
from typing import Callable

from .jobs import direct_dispatch

__all__ = ["session_dispatcher", "in_server_session"]

log = logging.getLogger(__name__)


def in_server_session() -> bool:
    """True inside a served Panel session (a Bokeh document with a session context)."""
    import panel as pn
    doc = pn.state.curdoc
    return doc is not None and doc.session_context is not None


def session_dispatcher() -> Callable[[Callable[[], None]], None]:
    """A callable that runs a function on this session's event loop (server) or at once.

    The dispatcher holds the session's document weakly: a closed session's
    document is not kept alive by a background job that still holds the
    dispatcher, and a function dispatched after the document went away is
    dropped.
    """
    import panel as pn
    doc = pn.state.curdoc
    if doc is None or doc.session_context is None:
        return direct_dispatch
    from panel.io.state import set_curdoc

    ref = weakref.ref(doc)

    def run(fn):
        d = ref()
        if d is None or d.session_context is None:
            return

        def wrapped():
            d2 = ref()
            if d2 is None:
                return
            try:
                with set_curdoc(d2):
                    fn()
            except Exception:  # never let a UI update kill the session
                log.warning("UI update failed", exc_info=True)
        d.add_next_tick_callback(wrapped)
    return run
