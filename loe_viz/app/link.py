"""The page's address as a link to what it shows, written once a run is over.

Panel's ``Location.sync`` writes a parameter into the address the moment it
changes.  The page then sends its new address back, and the server handles
that echo while LOE ranks on the same two cores: at n = 2000 a seed change's
ranking took 63 instead of 43 ms (the echo's Python work holds the GIL the
ranking threads need between their compiled passes).  :class:`DeferredLink`
syncs a copy of the state's link parameters instead, and copies the state into
it when no run is in progress: at once for a change that starts no run (the
step), with the results for one that does.  A link the page opens is applied
to the state at once, as before.  No Panel import here: it takes the location.
"""

from __future__ import annotations

import copy
from typing import Callable, Iterable

import param

__all__ = ["DeferredLink"]


class DeferredLink:
    """Keeps ``location``'s query in step with ``state``'s parameters ``names``, between runs.

    Parameters
    ----------
    state : param.Parameterized
        Has the parameters ``names`` and a Boolean ``busy`` (True while a run is in progress).
    names : iterable of str
        The parameters written into the address, under their own names.
    location : panel.io.location.Location
        The session's location (``pn.state.location``).
    on_error : callable, optional
        Called with the link's values that could not be applied, as by ``Location.sync``.
    """

    def __init__(self, state: param.Parameterized, names: Iterable[str], location,
                 on_error: Callable[[dict], None] | None = None):
        self._state = state
        self._names = tuple(names)
        self._on_error = on_error
        self._copying = False
        # the same parameter definitions: the link's text is read and written as the state's would be
        cls = param.parameterized_class("ExplorerLink", {p: copy.deepcopy(type(state).param[p]) for p in self._names})
        self.mirror = cls(**{p: getattr(state, p) for p in self._names})
        self.mirror.param.watch(self._to_state, list(self._names))
        state.param.watch(self._from_state, list(self._names) + ["busy"])
        location.sync(self.mirror, {p: p for p in self._names}, on_error=on_error)

    def _to_state(self, *events) -> None:
        """The address changed (a link opened): apply it to the state."""
        if self._copying:
            return
        values = {e.name: e.new for e in events}
        try:
            self._state.param.update(**values)
        except Exception:
            if self._on_error is None:
                raise
            self._on_error(values)

    def _from_state(self, *events) -> None:
        if getattr(self._state, "busy", False):
            return  # written with the results (or the error) of the run in progress
        self.flush()

    def flush(self) -> None:
        """Write the state's current values into the address."""
        changed = {p: getattr(self._state, p) for p in self._names
                   if getattr(self._state, p) != getattr(self.mirror, p)}
        if not changed:
            return
        self._copying = True
        try:
            self.mirror.param.update(**changed)
        finally:
            self._copying = False
