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

A link is anyone's text.  :func:`refused_link_settings` says which of its settings
the explorer cannot run with (``n`` above :data:`~loe_viz.app.limits.MAX_N`, a
temperature of ``nan``, a budget out of range, ...): those are ignored as the
settings that do not parse are, keeping the value in use (the default on a page
just opened), and the others are applied, so the page computes a result and one
message names every ignored setting.
"""

from __future__ import annotations

import copy
import json
import logging
import math
import numbers
import urllib.parse
from typing import Callable, Iterable

import param

__all__ = ["DeferredLink", "parse_link_query", "repeated_settings", "quote_link_value", "refused_link_settings"]

log = logging.getLogger(__name__)

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
        from .limits import quote_count

        return quote_count(raw)  # never printed whole
    text = raw if isinstance(raw, str) else repr(raw)
    if len(text) <= QUOTED_CHARS:
        return repr(raw)
    return f"{text[:QUOTED_CHARS]!r}… ({len(text):,} characters)"


def _whole(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _real(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _finite(v) -> bool:
    """A real number other than nan and ±inf (an int beyond the floats is not finite either)."""
    try:
        return _real(v) and math.isfinite(float(v))
    except OverflowError:
        return False


def _fmt(x: float) -> str:
    return f"{x:,.6g}" if abs(x) < 1e6 else f"{x:,.0f}"


def refused_link_settings(values: dict, state, unparsed=()) -> dict[str, str]:
    """The settings of a link among ``values`` that the explorer cannot run with, each with why.

    ``unparsed`` names the link's settings that do not parse (left out of ``values``): a budget
    among them takes the unit given with it along.

    ``values`` are of the state's parameter types (``n`` an int, ...); each is checked on its
    own and against the settings it depends on, the values in use (``state``'s) standing for
    those the link does not give or that are refused themselves. What is left can be applied
    together, and a run of it starts (a combination the checks do not cover, such as an upload
    with fewer rows than ``n``, is still refused by the run, with its message).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> s = SimpleNamespace(kind="gaussian", n=1000, d=2, n_landmarks=None, temperature=1.0,
    ...                     budget_unit="total_c", budget=100.0, uploaded_name="")
    >>> refused_link_settings({"n": 10**8, "d": 3, "temperature": float("nan")}, s)
    {'n': 'must be at most 200,000', 'temperature': 'must be a number of 0 or more'}
    """
    from . import limits
    from ..points import POINT_KINDS, min_dimensions

    use = {p: getattr(state, p, None) for p in ("kind", "n", "d", "n_landmarks", "budget_unit", "budget",
                                                 "landmark_selection")}
    uploaded = getattr(state, "_uploaded", None)  # an upload's coordinates price the run as the run does
    use["D"] = uploaded.shape[1] if getattr(uploaded, "ndim", 0) == 2 else None
    if values.get("landmark_selection") in ("random", "maxmin"):
        use["landmark_selection"] = values["landmark_selection"]
    n_jobs = getattr(state, "n_jobs", 1)  # the run's threads: the memory it may take depends on them
    refused: dict[str, str] = {}

    def check(name, problem: str | None) -> None:
        if problem:
            refused[name] = problem
        else:
            use[name] = values[name]

    if "d" in values:
        d, kind = values["d"], use["kind"]
        need = min_dimensions(kind) if "kind" not in values and kind in POINT_KINDS else 1
        check("d", None if _whole(d) and need <= d <= limits.MAX_D else
              f"must be between {need} and {limits.MAX_D}" + (f" for kind={kind!r}" if need > 1 else ""))
    if "kind" in values:
        kind, d = values["kind"], use["d"]
        if kind == "uploaded":
            check("kind", None if getattr(state, "uploaded_name", "") else "no points were uploaded in this page")
        else:
            need = min_dimensions(kind) if kind in POINT_KINDS else 1
            check("kind", None if not _whole(d) or d >= need else f"needs d >= {need}, d is {d}")
    d = use["d"] if _whole(use["d"]) else None
    fewest = d + 3 if d is not None else 4  # landmarks
    # the link's n, when it can run with the fewest landmarks, bounds the link's landmarks (not the n in use:
    # ?n=5000&n_landmarks=300000 refused n for the landmarks' sake, and said "at most 998" of them)
    n_link = values.get("n")
    n_fits = "n" in values and _whole(n_link) and fewest + 2 <= n_link <= limits.MAX_N
    if "n_landmarks" in values and values["n_landmarks"] is not None and d is not None:
        l, n = values["n_landmarks"], n_link if n_fits else use["n"]
        most = n - 2 if _whole(n) and ("n" not in values or n_fits) else None
        ok = _whole(l) and l >= d + 3 and (most is None or l <= most)
        check("n_landmarks", None if ok else f"must be at least d + 3 = {d + 3}" + (f" and at most n - 2 = {most:,}"
                                                                             if most is not None else ""))
    if "n" in values:
        n = values["n"]
        l = use["n_landmarks"] if _whole(use["n_landmarks"]) else fewest
        if _whole(n) and n > limits.MAX_N:  # said first: ?n=1e308 was told "at least ℓ + 2"
            check("n", f"must be at most {limits.MAX_N:,}")
        else:
            check("n", None if _whole(n) and n >= l + 2 else f"must be at least ℓ + 2 = {l + 2}, for ℓ = {l} landmarks")
    if "seed" in values:
        seed = values["seed"]
        check("seed", None if _whole(seed) and 0 <= seed <= limits.MAX_SEED else
              f"must be a whole number from 0 to {limits.MAX_SEED:,}")
    if "temperature" in values:
        t = values["temperature"]
        check("temperature", None if _finite(t) and t >= 0 else "must be a number of 0 or more")
    if "budget_unit" in values:  # a budget given that does not parse: the unit goes with it, as with one refused
        check("budget_unit", "it goes with the ignored budget" if "budget" in unparsed and values["budget_unit"] !=
              getattr(state, "budget_unit", None) else None)
    if "budget" in values:
        b = values["budget"]
        # a budget of 0 or less is said with the range too, where there is one (the sidebar's box takes any number)
        check("budget", (_budget_problem(float(b), use, n_jobs) if _finite(b) else None) or
              (None if _finite(b) and b > 0 else "must be a finite number above 0"))
    if "budget" in refused and "budget_unit" in values and values["budget_unit"] != getattr(state, "budget_unit",
                                                                                            None):
        # the budget in use is in the unit in use: with the other unit it would mean another budget
        refused["budget_unit"] = "it goes with the ignored budget"
        use["budget_unit"] = getattr(state, "budget_unit", None)
    if ("budget" not in values or "budget" in refused) and _finite(use["budget"]) and use["budget"] > 0:
        # the budget in use (the link's own refused, too: ?n=200000&budget=30 left n = 200,000 with a budget of
        # 100, which the run refused) must still run with the items, dimension and landmarks taken (else the run
        # refuses it, and nothing is shown): taken one at a time, one that leaves it outside its range is refused
        budget, taken = float(use["budget"]), [p for p in ("d", "n_landmarks", "n") if p in values and p not in refused]
        for name in taken:
            use[name] = getattr(state, name, None)
        for name in taken:
            use[name] = values[name]
            why = _budget_problem(budget, use, n_jobs)
            if why:
                refused[name] = (why if not why.startswith("must be ") else
                                 f"needs a budget {why.removeprefix('must be ')}; the budget is {_fmt(budget)}")
                use[name] = getattr(state, name, None)
    if "n" in refused and "n_landmarks" in values and "n_landmarks" not in refused:
        # ℓ was checked against the link's n: with that n refused, it must fit the n in use (?n=200000&
        # n_landmarks=199998 left ℓ = 199,998 landmarks at n = 1,000, and no result)
        l, n = use["n_landmarks"], use["n"]
        if _whole(l) and _whole(n) and l > n - 2:
            refused["n_landmarks"] = f"must be at most n - 2 = {n - 2:,}, and n stays {n:,}"
            use["n_landmarks"] = getattr(state, "n_landmarks", None)
    return refused


def _budget_problem(budget: float, use: dict, n_jobs: int = 1) -> str | None:
    """Why ``budget`` cannot run with the settings ``use`` (None: it can, or the run will say)."""
    from ..points import POINT_KINDS
    from .pipeline import budget_range, per_landmark_of

    n, d, l, unit = use["n"], use["d"], use["n_landmarks"], use["budget_unit"]
    l = d + 3 if l is None and _whole(d) else l
    D = d if use["kind"] in POINT_KINDS else use.get("D") if use["kind"] == "uploaded" else None
    if D is None or not all(_whole(v) for v in (n, d, l)) or not 3 <= n <= 10**7:
        return None  # no upload yet, or settings the run refuses with their own message
    try:
        lo, hi = budget_range(n, D, d, l, unit, landmark_selection=use.get("landmark_selection") or "random",
                              n_jobs=n_jobs)
    except Exception:  # the run says what is wrong with these settings
        return None
    if lo > hi:  # the run says how many landmarks can
        return f"no budget can run with ℓ = {l:,} landmarks at n = {n:,}: they are too many"
    if lo <= budget <= hi and per_landmark_of(n, l, unit, budget) >= n // 2:
        return None
    what = "comparisons per landmark" if unit == "per_landmark" else "c"
    return f"must be between {_fmt(lo)} and {_fmt(hi)} {what} for n = {n:,} and ℓ = {l:,}"


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
    spelled : dict of str to sequence of str, optional
        Parameters that the state holds as an index into a list of names and the address spells
        by name, in lower case (``{"step": STEPS}``: ``?step=embedding``, not ``?step=5``, which
        reads as the header's "Step 6 of 7" would not). Anything else there goes to ``on_error``.
    at_once : iterable of str, optional
        Parameters that no run depends on (the step shown): written into the address as they
        change, even while a run is in progress. The others wait for the run's results.
    """

    def __init__(self, state: param.Parameterized, names: Iterable[str], location,
                 on_error: Callable[[dict], None] | None = None, spelled: dict | None = None,
                 at_once: Iterable[str] = ()):
        self._state = state
        self._names = tuple(names)
        self._at_once = tuple(set(self._names) & set(at_once))
        self._on_error = on_error
        self._location = location
        self._copying = False
        self._spelled = {p: tuple(str(w).lower() for w in words) for p, words in (spelled or {}).items()}
        # the same parameter definitions: the link's text is read and written as the state's would be
        params = {p: copy.deepcopy(type(state).param[p]) for p in self._names}
        for p, words in self._spelled.items():
            params[p] = param.Selector(objects=list(words), default=words[getattr(state, p)])
        cls = param.parameterized_class("ExplorerLink", params)
        self.mirror = cls(**{p: self._word(p, getattr(state, p)) for p in self._names})
        # after the location's own watcher: a refused value it writes into the address is then replaced
        self.mirror.param.watch(self._to_state, list(self._names), precedence=1)
        state.param.watch(self._from_state, list(self._names) + ["busy"])
        location.sync(self.mirror, {p: p for p in self._names}, on_error=self._not_applied)

    def _word(self, name: str, value):
        """The address's spelling of the state's ``value`` of parameter ``name``."""
        return self._spelled[name][value] if name in self._spelled else value

    def _to_state(self, *events) -> None:
        """The address changed (a link opened): apply it to the state, but the settings it cannot run with."""
        if self._copying:
            return
        values = {e.name: self._spelled[e.name].index(e.new) if e.name in self._spelled else e.new for e in events}
        refused = refused_link_settings(values, self._state)
        if refused and self._on_error is not None:
            self._not_applied(values)  # one message names them all, with those that do not parse
            return
        if refused:
            log.info("ignored settings of the link: %s", ", ".join(refused))
        good = {k: v for k, v in values.items() if k not in refused}
        try:
            self._state.param.update(**good)
        except Exception:
            if self._on_error is None:
                raise
            self._not_applied(values)
            return
        if refused:
            self._write_back(refused)

    def _not_applied(self, values: dict) -> None:
        """Some of the link's ``values`` cannot be used: ``on_error`` applies the others and says why.

        A spelled parameter given another way (a name in capitals, or the index that links held
        before it was spelled) reaches ``on_error`` as the state's index; an unknown one as given.
        """
        if self._on_error is not None:
            self._on_error({p: self._index(p, v) for p, v in values.items()})
        self._write_back(values)

    def _index(self, name: str, raw):
        """The state's value of spelled parameter ``name`` for the link's ``raw`` (see :meth:`_not_applied`)."""
        words = self._spelled.get(name)
        if words is None or isinstance(raw, bool):
            return raw
        text = raw.strip() if isinstance(raw, str) else None
        if text is not None and text.isascii() and text.isdigit():
            return int(text)  # an index: the state checks its range
        if text is not None and text.lower() in words:
            return words.index(text.lower())
        return raw

    def _write_back(self, names: Iterable[str]) -> None:
        """The address and the widgets show the values in use, never a refused one of the link.

        The settings ``names`` are written even where the copy already holds the value in use
        (a value that does not parse never reached it): the page's address still had ``d=**x**``.
        """
        if getattr(self._state, "busy", False):
            return  # written with the results of the run in progress
        self.flush()
        query = {}
        for p in names:
            v = self.mirror.param[p].serialize(getattr(self.mirror, p))
            query[p] = v if isinstance(v, str) else json.dumps(v)
        self._location.update_query(**query)

    def _from_state(self, *events) -> None:
        if getattr(self._state, "busy", False):
            self.flush(self._at_once)  # the others with the results (or the error) of the run in progress
            return
        self.flush()

    def flush(self, names: Iterable[str] | None = None) -> None:
        """Write the state's current values of ``names`` (default: all of them) into the address."""
        now = {p: self._word(p, getattr(self._state, p)) for p in (self._names if names is None else names)}
        changed = {p: v for p, v in now.items() if v != getattr(self.mirror, p)}
        if not changed:
            return
        self._copying = True
        try:
            self.mirror.param.update(**changed)
        finally:
            self._copying = False
