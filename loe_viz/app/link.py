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
import json
import urllib.parse
from typing import Callable, Iterable

import param

__all__ = ["DeferredLink", "parse_link_query", "repeated_settings", "quote_link_value"]

#: Longest value of a link read as a number or as JSON; a longer one stays text (the state names it).
MAX_PARSED_CHARS = 40
#: Characters of a refused value quoted in a message (the rest is counted, not shown).
QUOTED_CHARS = 60


def _link_value(v: str):
    """One value of a query as Panel's ``parse_query`` reads it (int, float, JSON, bool), or the text itself.

    Panel (1.9) turned every ``str.isdigit()`` value into an int, which raised for a superscript
    digit (``?n=²``) or a number of over 4,300 digits, and that error ended the page's script
    (a traceback in the server's log, no explorer). It also read ``[``/``{`` values with
    ``ast.literal_eval`` and dropped those it could not read without a word. Here a value that
    cannot be read, or is too long to be a setting, stays text: the state refuses it by name.
    """
    if len(v) > MAX_PARSED_CHARS or not v.isascii():
        return v
    if v.isdigit() or (v[:1] == "-" and v[1:].isdigit()):
        return int(v)  # "-2" too (Panel read it as -2.0, and a message quoted the seed as "-2.0")
    try:
        return float(v)  # "1.5", "1e400" (inf), "NaN": the state says a value is not finite
    except ValueError:
        pass
    if v.startswith(("[", "{")):
        try:
            return json.loads(v)
        except ValueError:
            return v
    if v.lower() in ("true", "false"):
        return v.lower() == "true"
    return v


def parse_link_query(search: str) -> dict:
    """The settings of a query string (``"?n=500&seed=3"``), read as Panel reads them, never raising.

    A key given more than once takes its last value, as in Panel (see :func:`repeated_settings`).

    Examples
    --------
    >>> parse_link_query("?n=500&kind=moons&n=%C2%B2")
    {'n': '²', 'kind': 'moons'}
    """
    query = search[1:] if search.startswith("?") else search
    return {k: _link_value(v) for k, v in urllib.parse.parse_qsl(query)}


def repeated_settings(search: str, names: Iterable[str]) -> dict[str, list[str]]:
    """The settings among ``names`` that a query string gives more than once, with every value given."""
    query = search[1:] if search.startswith("?") else search
    seen: dict[str, list[str]] = {}
    for k, v in urllib.parse.parse_qsl(query):
        seen.setdefault(k, []).append(v)
    wanted = set(names)
    return {k: vs for k, vs in seen.items() if k in wanted and len(vs) > 1}


def quote_link_value(raw) -> str:
    """``repr(raw)`` for a message, cut to :data:`QUOTED_CHARS` characters with the full length said."""
    if isinstance(raw, int) and not isinstance(raw, bool) and raw.bit_length() > 200:
        return f"a number of about {int(raw.bit_length() * 0.30103):,} digits"  # never printed whole
    text = raw if isinstance(raw, str) else repr(raw)
    if len(text) <= QUOTED_CHARS:
        return repr(raw)
    return f"{text[:QUOTED_CHARS]!r}… ({len(text):,} characters)"


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
