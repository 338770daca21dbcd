"""A text progress bar for long LOE runs, usable as the ``progress`` callback.

:meth:`loe_viz.LOE.fit` and :meth:`loe_viz.LOE.fit_oracle` call
``progress(stage, done, total)`` on the calling thread after each landmark
ranking (``stage="ranking"``, ``done`` = landmarks finished of ``total``) and
after each later stage (``"shifts"``, ``"edm"``, ``"lmds"`` with
``done = total = 1``). :class:`TextProgress` turns these calls into a progress
line: on a terminal (and in Jupyter, whose output areas honour carriage returns)
one line on standard error rewritten in place; elsewhere (a log file, a pipe)
one plain line per update.
"""

from __future__ import annotations

import sys
import time

from .resources import ResourceEstimate, format_seconds

__all__ = ["TextProgress"]


def _in_notebook() -> bool:
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    try:
        ip = shell.get_ipython()
    except Exception:  # pragma: no cover - an odd IPython
        return False
    return ip is not None and type(ip).__name__ == "ZMQInteractiveShell"


class TextProgress:
    """Progress bar callback: ``LOE(...).fit_oracle(oracle, m, progress=TextProgress())``.

    Parameters
    ----------
    file : file-like, optional
        Where to write (default: ``sys.stderr`` at the time of each call).
    width : int, default 30
        Characters of the bar.
    estimate : ResourceEstimate, optional
        Printed first (peak memory and expected time), e.g.
        ``LOE(...).estimate_resources(n, m)``.
    inplace : bool, optional
        Rewrite one line with carriage returns. Default: when ``file`` is a
        terminal or the code runs in a Jupyter kernel.
    min_interval : float, default 0.1
        Seconds between two redraws of the same stage (the last update of a
        stage is always drawn).

    Notes
    -----
    The clock starts when the bar is created (or at :meth:`reset`), so create
    it right before the fit; the remaining time of the rankings is extrapolated
    from the landmarks done so far.
    """

    def __init__(self, file=None, width: int = 30, estimate: ResourceEstimate | None = None,
                 inplace: bool | None = None, min_interval: float = 0.1):
        if not isinstance(width, int) or isinstance(width, bool) or width < 1:
            raise ValueError(f"width must be a positive int, got {width!r}")
        if estimate is not None and not isinstance(estimate, ResourceEstimate):
            raise ValueError(f"estimate must be a ResourceEstimate, got {type(estimate).__name__}")
        self.file = file
        self.width = width
        self.estimate = estimate
        self.inplace = inplace
        self.min_interval = float(min_interval)
        self.calls: list[tuple[str, int, int]] = []
        self.reset()

    def reset(self) -> None:
        """Restart the clock and forget the stages seen (to reuse the bar for another fit)."""
        self.t0 = time.perf_counter()
        self._stage = None
        self._stage_t0 = self.t0
        self._last_draw = 0.0
        self._open_line = False
        self._announced = False
        self.calls = []

    # ------------------------------------------------------------------ drawing
    @property
    def _out(self):
        return self.file if self.file is not None else sys.stderr

    def _is_inplace(self) -> bool:
        if self.inplace is not None:
            return bool(self.inplace)
        out = self._out
        try:
            tty = out.isatty()
        except Exception:
            tty = False
        return tty or _in_notebook()

    def format(self, stage: str, done: int, total: int) -> str:
        """The text of one update (without line control characters)."""
        now = time.perf_counter()
        total = max(int(total), 1)
        done = min(max(int(done), 0), total)
        filled = int(round(self.width * done / total))
        bar = "#" * filled + "." * (self.width - filled)
        elapsed = now - self.t0
        text = f"{stage:<8} [{bar}] {done}/{total}"
        if stage == "ranking":
            text += " landmarks"
            spent = now - self._stage_t0
            if 0 < done < total:
                text += f"  eta {format_seconds(spent / done * (total - done))}"
        return text + f"  elapsed {format_seconds(elapsed)}"

    def _write(self, text: str) -> None:
        out = self._out
        out.write(text)
        try:
            out.flush()
        except Exception:  # pragma: no cover
            pass

    def __call__(self, stage: str, done: int, total: int) -> None:
        """Record and draw one update (the LOE ``progress`` callback)."""
        self.calls.append((stage, int(done), int(total)))
        inplace = self._is_inplace()
        if not self._announced:
            self._announced = True
            if self.estimate is not None:
                self._write(f"LOE estimate: {self.estimate.summary()}\n")
        now = time.perf_counter()
        new_stage = stage != self._stage
        if new_stage:
            if self._open_line:
                self._write("\n")
                self._open_line = False
            if self._stage is not None:
                self._stage_t0 = now
            self._stage = stage
        final = done >= total
        if not (new_stage or final or now - self._last_draw >= self.min_interval):
            return
        self._last_draw = now
        text = self.format(stage, done, total)
        if inplace:
            self._write("\r" + text)
            self._open_line = True
            if final and stage == "lmds":
                self._write("\n")
                self._open_line = False
        else:
            self._write(text + "\n")

    def close(self) -> None:
        """End an open progress line."""
        if self._open_line:
            self._write("\n")
            self._open_line = False
