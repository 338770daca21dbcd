"""What a walk-through run may cost, checked before anything is allocated.

A served explorer takes ``n``, ``d`` and the budget from any visitor (the URL
included), so every run is priced first: :func:`estimate_run` asks
:meth:`loe_viz.LOE.estimate_resources` (the library's memory and time model)
and adds the arrays the explorer itself keeps (points, colours, the recorded
triplets, the aligned embedding).  :func:`check_run` refuses a configuration
above the hard bounds or the memory limit with a message that names the limit;
above the confirmation thresholds a run waits for an explicit "Run".

The limits can be changed for a server with environment variables (read when
this module is imported): ``LOE_VIZ_MAX_N``, ``LOE_VIZ_MAX_D``,
``LOE_VIZ_MAX_COLUMNS`` and ``LOE_VIZ_MAX_BYTES`` (bytes, or e.g. ``4GiB``, ``1e9``);
``LOE_VIZ_MAX_PAGES_PER_ADDRESS`` (:mod:`loe_viz.app.serving`) caps the pages one
client address may have open. A value that is not a number (``abc``, ``4XB``, ``-5``)
is logged as a warning and the default used; :func:`environment_problems` names such
values (``loe-viz explore`` refuses to serve with one).
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass

from .._format import format_bytes, format_seconds

log = logging.getLogger(__name__)

__all__ = ["MAX_N", "MAX_D", "MAX_COLUMNS", "MAX_BYTES", "MAX_SEED", "CONFIRM_SECONDS", "CONFIRM_BYTES", "ENVIRONMENT",
           "environment_problems", "parse_amount", "RunEstimate", "estimate_run", "quote_count", "check_size",
           "check_columns", "check_run"]

#: The limits a server sets in its environment, and their defaults (0: no limit).
ENVIRONMENT = {"LOE_VIZ_MAX_N": 200_000, "LOE_VIZ_MAX_D": 20, "LOE_VIZ_MAX_COLUMNS": 1_000,
               "LOE_VIZ_MAX_BYTES": 2 * 2**30, "LOE_VIZ_MAX_PAGES_PER_ADDRESS": 0}
_SIZES = ("LOE_VIZ_MAX_BYTES",)
#: Binary units, whichever way they are written (``GB`` is read as ``GiB``, as before).
_UNITS = {"": 1, "b": 1, **{f"{p}{s}": 2 ** (10 * k) for k, p in enumerate("kmgtp", 1) for s in ("", "b", "ib")}}
_AMOUNT = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(?:e\+?(\d{1,3}))?([a-z]*)")


def parse_amount(text: str, size: bool = False, minimum: int = 1) -> int:
    """A whole number written as people write limits: ``200000``, ``200_000``, ``2e5``, ``4.0``; with ``size``, a
    number of bytes with an optional binary unit (``4GiB``, ``1.5 TB``, ``1e9``; KB, MB, GB, TB are read as KiB,
    MiB, GiB, TiB). ``ValueError`` saying what was expected if ``text`` is none of these, or is below ``minimum``.

    >>> parse_amount("2e5"), parse_amount("4.0"), parse_amount("8TB", size=True), parse_amount("1.5 KiB", size=True)
    (200000, 4, 8796093022208, 1536)
    """
    from decimal import Decimal

    expected = f"a size in bytes above {minimum - 1}, such as 4GiB or 4e9" if size else f"a whole number >= {minimum}"
    m = _AMOUNT.fullmatch(text.strip().lower().replace(" ", "").replace("_", ""))
    if not m or m[3] not in (_UNITS if size else ("",)):
        raise ValueError(f"expected {expected}")
    value = Decimal(m[1]) * 10 ** int(m[2] or 0) * _UNITS[m[3]]
    if value != value.to_integral_value():  # 1.5 bytes is no size; 1.5 KiB is 1536 bytes
        raise ValueError(f"expected {expected}" + ", a whole number of bytes" * size)
    if value < minimum or value >= 2**63:
        raise ValueError(f"expected {expected}" + ", below 2**63" * (value >= 2**63))
    return int(value)


def _env_problem(name: str, default: int) -> tuple[int, str | None]:
    """The value of ``name`` in force, and what is wrong with the value given (None: nothing, or not set)."""
    raw = os.environ.get(name, "")
    if not raw.strip():
        return default, None
    try:  # 0 is a value only where it is the default (no limit)
        return parse_amount(raw, size=name in _SIZES, minimum=0 if default == 0 else 1), None
    except ValueError as exc:
        return default, f"{name}={raw!r}: {exc}"


def environment_problems() -> list[str]:
    """What is wrong with the limits set in the environment (:data:`ENVIRONMENT`), one message per variable, read
    now; ``loe-viz explore`` refuses to serve with any. Importing this module uses the default in place of such
    a value, with a warning in the log."""
    return [p for p in (_env_problem(name, default)[1] for name, default in ENVIRONMENT.items()) if p]


def _env_value(name: str, default: int) -> int:
    value, problem = _env_problem(name, default)
    if problem is not None:  # the server runs on, with the limit it would have without the variable
        shown = (f"{value:,}" + (f" ({format_bytes(value)})" if name in _SIZES else "")) if value else "0 (no limit)"
        log.warning("%s; using the default, %s", problem, shown)
    return value


#: Largest number of items a walk-through run accepts.
MAX_N = _env_value("LOE_VIZ_MAX_N", ENVIRONMENT["LOE_VIZ_MAX_N"])
#: Largest dimension a walk-through run accepts.
MAX_D = _env_value("LOE_VIZ_MAX_D", ENVIRONMENT["LOE_VIZ_MAX_D"])
#: Most coordinates (columns) of an uploaded ground truth. A run aligns the embedding to the truth
#: through a D x D matrix: 83,000 columns (a 10 MB file of 60 rows) asked for 51 GiB; at 1,000 it is 8 MB.
MAX_COLUMNS = _env_value("LOE_VIZ_MAX_COLUMNS", ENVIRONMENT["LOE_VIZ_MAX_COLUMNS"])
#: Never start a run whose estimated peak memory is above this.
MAX_BYTES = _env_value("LOE_VIZ_MAX_BYTES", ENVIRONMENT["LOE_VIZ_MAX_BYTES"])
#: Largest seed of a walk-through run: NumPy's legacy generator takes no larger one, and the page's
#: number box (a JavaScript number) held 2**64 as 18446744073709552000, a seed never used.
MAX_SEED = 2**32 - 1
#: Above these estimates an automatic run waits for an explicit "Run".
CONFIRM_SECONDS = 8.0
CONFIRM_BYTES = min(512 * 2**20, MAX_BYTES)


@dataclass(frozen=True)
class RunEstimate:
    """What a walk-through run will cost, before it starts.

    Attributes
    ----------
    n_landmarks, per_landmark, n_comparisons : int
    seconds : float
        Expected wall time of the fit (the library's calibration).
    bytes : float
        Peak memory of the run: LOE's estimate plus the explorer's own arrays.
    """

    n_landmarks: int
    per_landmark: int
    n_comparisons: int
    seconds: float
    bytes: float

    @property
    def text(self) -> str:
        """The estimate in words (comparisons, time, memory)."""
        return (
            f"{self.n_comparisons:,} comparisons ({self.per_landmark:,} per landmark × "
            f"{self.n_landmarks} landmarks): about {format_seconds(self.seconds)} and "
            f"{format_bytes(self.bytes)}"
        )


def quote_count(n: int) -> str:
    """A whole number for a message: with thousands separators, or, from 10**18 on, as
    ``a number of about N digits`` (``n = 1e300`` printed 400 characters of digits)."""
    if abs(n) < 10**18:
        return f"{n:,}"
    bits = abs(n).bit_length()  # Python writes no int of more than 4,300 digits: those are counted from the bits
    return f"a number of about {len(str(abs(n))) if bits < 13_000 else int(bits * 0.30103):,} digits"


def check_size(n: int, d: int) -> None:
    """Refuse ``n`` or ``d`` above the explorer's hard bounds (``ValueError`` naming the bound).

    The message is for the page's visitor: it names the largest value allowed, not the
    server setting that raises it (that goes to the server's log).
    """
    if n > MAX_N:
        log.info("refused n = %d above LOE_VIZ_MAX_N = %d (the server's setting)", n, MAX_N)
        raise ValueError(f"n must be <= {MAX_N:,} in this explorer, got {quote_count(n)}")
    if d > MAX_D:
        log.info("refused d = %d above LOE_VIZ_MAX_D = %d (the server's setting)", d, MAX_D)
        raise ValueError(f"d must be <= {MAX_D} in this explorer, got {quote_count(d)}")


def check_columns(columns: int, name: str) -> None:
    """Refuse an uploaded ground truth ``name`` with more than :data:`MAX_COLUMNS` coordinates (``ValueError``)."""
    if columns > MAX_COLUMNS:
        log.info("refused %d columns above LOE_VIZ_MAX_COLUMNS = %d (the server's setting)", columns, MAX_COLUMNS)
        raise ValueError(f"{name} has {columns:,} columns, one per coordinate; this explorer takes points with at "
                         f"most {MAX_COLUMNS:,} coordinates")


def estimate_run(n: int, D: int, d: int, n_landmarks: int, per_landmark: int, *,
                 landmark_selection: str = "random", n_jobs: int = 1) -> RunEstimate:
    """Estimate time and peak memory of one walk-through run with :meth:`LOE.estimate_resources`.

    Parameters
    ----------
    n, D, d : int
        Items, dimension of the ground truth, embedding dimension.
    n_landmarks, per_landmark : int
        Landmarks and comparisons per landmark.
    landmark_selection : str
    n_jobs : int

    Returns
    -------
    RunEstimate
    """
    from .._validation import index_dtype
    from ..loe import LOE

    l, per = int(n_landmarks), int(per_landmark)
    model = LOE(n_components=d, n_landmarks=l, landmark_selection=landmark_selection, n_jobs=n_jobs)
    lib = model.estimate_resources(n, per)
    m = l * per
    itemsize = index_dtype(n).itemsize
    own = (
        5 * m * itemsize          # the recorded triplets: (near, far) by head, and the (m, 3) array once built
        + 6 * n * max(D, d) * 8   # points, padded embedding, aligned copy, per-point error
        + 120 * n                 # colours (hex strings) and hue/lightness
    )
    return RunEstimate(l, per, m, float(lib.seconds), float(lib.peak_bytes + own))


def check_run(est: RunEstimate) -> None:
    """Refuse a run whose estimated peak memory is above :data:`MAX_BYTES`.

    The caller says which budgets fit instead (:func:`loe_viz.app.pipeline.budget_message`):
    this message is not shown.
    """
    if est.n_comparisons >= 10**18 or est.bytes > MAX_BYTES:
        raise ValueError("the run needs more memory than this explorer allows per run")
