"""Progress bars for long fits, drawn by tqdm.

Every estimator's ``fit`` / ``fit_oracle`` takes ``progress=None | True |
callable``. A callable receives ``progress(stage, done, total)`` on the calling
thread: :class:`loe_viz.LOE` after each landmark ranking (``stage="ranking"``,
``done`` = landmarks finished of ``total``, plus a heartbeat with unchanged
counts while rankings run) and after each later stage (``"shifts"``, ``"edm"``,
``"lmds"``, ``"refine"`` with ``done = total = 1``); the baselines after each
iteration (``stage="iteration"``, ``total`` = ``max_iter``, plus a heartbeat with
unchanged counts every ``2**22`` triplets of a longer pass). If the callable
raises, the fit stops and the exception propagates.

:func:`resolve_progress` turns the argument into such a callable:
``True`` gives a :class:`TqdmProgress`, one ``tqdm.auto`` bar per stage (a
text bar in a terminal, a widget in Jupyter with ipywidgets installed); a ``tqdm`` bar of your own is
driven through the stages in turn.

>>> from loe_viz.progress import resolve_progress
>>> resolve_progress(None) is None
True
"""

from __future__ import annotations

import sys

__all__ = ["TqdmProgress", "TextProgress", "resolve_progress"]


def _tqdm_class(auto: bool):
    # tqdm is imported on first use (``import loe_viz`` stays free of it). tqdm.auto draws a widget in Jupyter
    # only with ipywidgets; without it, it warns "IProgress not found" at every bar and draws text anyway.
    import importlib.util

    if auto and importlib.util.find_spec("ipywidgets") is not None:
        from tqdm.auto import tqdm
    else:
        from tqdm import tqdm
    return tqdm


class TqdmProgress:
    """A ``progress(stage, done, total)`` callback drawing one tqdm bar per stage.

    Parameters
    ----------
    file : file-like, optional
        Where to draw. Default: ``tqdm.auto`` chooses (standard error in a
        terminal, a widget in a Jupyter notebook). With a file the plain text
        bar is drawn there.
    estimate : ResourceEstimate, optional
        Written once before the first bar (peak memory and expected time), e.g.
        ``LOE(...).estimate_resources(n, m)``.
    min_interval : float, default 0.1
        Seconds between two redraws of a bar (tqdm's ``mininterval``); the end
        of each stage is always drawn.
    leave : bool, default True
        Keep each finished bar on screen.
    **tqdm_kwargs
        Further arguments of every bar (``ncols``, ``disable``, ``ascii`` ...).

    Attributes
    ----------
    calls : list of (str, int, int)
        Every call received, in order.

    Examples
    --------
    >>> import io, loe_viz as lv
    >>> out = io.StringIO()
    >>> X = lv.make_points("gaussian", 60, random_state=0)
    >>> _ = lv.LOE(n_landmarks=5, random_state=1).fit_oracle(
    ...     lv.TripletOracle(X, random_state=2), 400, progress=TqdmProgress(file=out))
    >>> "ranking: 100%" in out.getvalue()
    True
    """

    def __init__(self, file=None, estimate=None, min_interval: float = 0.1, leave: bool = True, **tqdm_kwargs):
        from ._validation import check_float
        from .resources import ResourceEstimate

        if estimate is not None and not isinstance(estimate, ResourceEstimate):
            raise ValueError(f"estimate must be a ResourceEstimate, got {type(estimate).__name__}")
        self.file = file
        self.estimate = estimate
        self.min_interval = check_float(min_interval, "min_interval", minimum=0.0)
        self.leave = bool(leave)
        self.tqdm_kwargs = tqdm_kwargs
        self.calls: list[tuple[str, int, int]] = []
        self._bar = None
        self._stage = None
        self._announced = False

    def _open(self, stage: str, total: int):
        tqdm = _tqdm_class(auto=self.file is None)
        unit = "landmark" if stage == "ranking" else "it" if stage == "iteration" else "step"
        kw = dict(total=total, desc=stage, leave=self.leave, mininterval=self.min_interval, unit=unit)
        if unit == "step":  # a stage of one or a few quick steps: a rate such as "18978.75step/s" says nothing
            kw["bar_format"] = "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}]"
        if self.file is not None:
            kw["file"] = self.file
        kw.update(self.tqdm_kwargs)
        return tqdm(**kw)

    def __call__(self, stage: str, done: int, total: int) -> None:
        """Record one update and draw it."""
        done, total = int(done), int(total)
        self.calls.append((stage, done, total))
        if not self._announced:
            self._announced = True
            if self.estimate is not None:
                out = self.file if self.file is not None else sys.stderr
                out.write(f"estimate: {self.estimate.summary()}\n")
        if stage != self._stage:
            self.close()
            self._stage = stage
            self._bar = self._open(stage, total)
        bar = self._bar
        if bar is None:  # this stage already finished (a repeated final update)
            return
        if total != bar.total:
            bar.total = total
        step = done - bar.n
        if step > 0:
            bar.update(step)
        else:  # a heartbeat: redraw the elapsed time (at most every min_interval)
            bar.update(0)
        if done >= total:
            bar.close()
            self._bar = None

    def close(self) -> None:
        """Close the open bar, if any."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def reset(self) -> None:
        """Close the open bar and forget the stages seen (to reuse the callback for another fit)."""
        self.close()
        self._stage = None
        self._announced = False
        self.calls = []


#: The former hand-drawn text bar: now the tqdm one (same ``file``, ``estimate`` and
#: ``min_interval`` arguments).
TextProgress = TqdmProgress


class _TqdmAdapter:
    """Drive one tqdm bar of the caller's through the stages in turn (the bar stays open)."""

    def __init__(self, bar):
        self.bar = bar
        self._stage = None

    def __call__(self, stage: str, done: int, total: int) -> None:
        bar = self.bar
        if stage != self._stage:
            self._stage = stage
            bar.reset(total=int(total))
            bar.set_description(str(stage), refresh=False)
        step = int(done) - bar.n
        bar.update(step if step > 0 else 0)


def _is_tqdm(obj) -> bool:
    tqdm = sys.modules.get("tqdm")
    if tqdm is None:  # no tqdm bar can exist before tqdm is imported
        return False
    return isinstance(obj, tqdm.tqdm)


def resolve_progress(progress):
    """Turn an estimator's ``progress`` argument into a callback or None.

    Parameters
    ----------
    progress : None, bool, callable or tqdm bar
        None or False: no progress. True: a new :class:`TqdmProgress` (a
        ``tqdm.auto`` bar per stage). A callable is returned as it is (it gets
        ``progress(stage, done, total)``). A ``tqdm`` instance is driven
        through the stages (reset to each stage's total, described by its name).

    Returns
    -------
    callable or None

    Examples
    --------
    >>> f = lambda stage, done, total: None
    >>> resolve_progress(f) is f
    True
    >>> type(resolve_progress(True)).__name__
    'TqdmProgress'
    """
    if progress is None or progress is False:
        return None
    if progress is True:
        return TqdmProgress()
    if _is_tqdm(progress):
        return _TqdmAdapter(progress)
    if callable(progress):
        return progress
    raise ValueError(f"progress must be None, True, a callable progress(stage, done, total) or a tqdm bar, "
                     f"got {type(progress).__name__}")
