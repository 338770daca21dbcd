"""The "Lessons" mode: curated scenarios, each a preset, a short story, where to look and a question."""

from __future__ import annotations

from typing import Callable

import panel as pn
import param
from panel.viewable import Viewer

from ..lessons import LESSONS, Lesson, lesson, lesson_config
from ..state import ExplorerState
from ..sweep import SweepState
from ..text import md_quoting
from .base import FOCUS_STEP_JS, SUBSCRIPT_CSS, alert, readable
from .sweep import SweepView

__all__ = ["LessonsView"]

# Names to type (``?lesson=<name>``) in a dark, large face: Panel's code style (light blue
# #82aaff, 12 px, about 2.3:1 on white) could not be read from the back of a hall.
_CODE_CSS = ":host code { color: #1d3f66; background: #eef3f8; font-size: 15px; padding: 1px 5px; }"
# The lesson's heading at one size: Panel gives a pane added after the page loaded its design's
# stylesheet (h2 at about 32 px at 1280 px) but not one built with the page (18 px).
_TITLE_CSS = ":host h2 { font-size: 28px; font-weight: 600; line-height: 1.25; margin: 0.3em 0; }"
_TEXT_CSS = ":host p { margin: 0 0 0.8em 0; }"  # the same spacing either way, for the same reason

# What a sweep lesson sets (the rest of a previous sweep lesson must not carry over).
_SWEEP_SETTINGS = ("variable", "values", "seeds", "kind", "n", "d", "temperature", "budget", "n_landmarks",
                   "landmark_selection", "repeats")


class LessonsView(Viewer):
    """Pick a lesson; it configures the walk-through (or a sweep, or "Your triplets") and says what to look at.

    Parameters
    ----------
    state : ExplorerState
        The walk-through's state, configured by the lesson.
    show : callable, optional
        ``show(where)`` opens a step of the walk-through (a name of ``STEPS``) or
        ``"Your triplets"`` (with the lesson's sample); the explorer passes its own.
    opened : callable, optional
        ``opened(lesson)`` is called each time a lesson opens, by a click or from the address
        (the explorer puts its question above the walk-through and its key in the address).
    """

    state = param.ClassSelector(class_=ExplorerState)
    current = param.String(default="", doc="Key of the lesson shown ('' before one is chosen).")

    def __init__(self, show: Callable[[Lesson], None] | None = None, opened: Callable[[Lesson], None] | None = None,
                 **params):
        super().__init__(**params)
        self._show = show or (lambda x: None)
        self._opened = opened or (lambda x: None)
        self.sweep = SweepState()
        self.sweep.dispatch = self.state.dispatch
        # a timing sweep waits while the walk-through fits and draws: they share the interpreter
        self.sweep.wait_while = lambda: self.state.busy
        self._sweep_view = SweepView(sweep=self.sweep)
        # one button per lesson, not a radio group: Bokeh's radio group marks its first
        # option as chosen when none is, and a click on it then opened nothing
        self._picks = {}
        for i, x in enumerate(LESSONS):
            b = pn.widgets.Button(label=f"{i + 1}. {x.title}", color="primary", variant="outline",
                                  sizing_mode="stretch_width", margin=(2, 10), css_classes=["loe-lesson-pick"])
            b.on_click(lambda e, key=x.key: key != self.current and self.open(key))
            self._picks[x.key] = b
        self._picker = pn.Column(*self._picks.values(), sizing_mode="stretch_width",
                                 css_classes=["loe-lesson-picker"])
        self._body = pn.Column(sizing_mode="stretch_width", css_classes=["loe-lesson"])
        self._intro = pn.pane.Markdown(
            "Each lesson sets up the walk-through (or a sweep, or a triplet file) to show one idea, "
            "says where to look, and ends with a question for the class.  Every lesson has its own "
            "link: add `?lesson=<name>` to the address, with a name from the row below.",
            styles={"font-size": "1.1em"}, stylesheets=[_CODE_CSS], sizing_mode="stretch_width",
            css_classes=["loe-lessons-intro"])
        self._keys = pn.pane.Markdown(
            "**Names, in the order of the lessons:** " + " · ".join(f"`{x.key}`" for x in LESSONS),
            styles={"color": "#222", "font-size": "15px"}, stylesheets=[_CODE_CSS], sizing_mode="stretch_width",
            css_classes=["loe-lesson-keys"])
        self._variants: list[tuple[pn.widgets.Button, dict]] = []  # the open lesson's, with their changes
        # the variant applied is marked, whoever changed the setting (a button or the sidebar)
        self.state.param.watch(lambda *e: self._mark_variants(),
                               sorted({k for x in LESSONS for _, ch in x.contrast for k in ch}))
        # the settings of the link that opened the lesson and could not be used (?lesson=noise&n=abc): said here too,
        # where the link opens, and not only on the walk-through's tab
        self._link_note = alert("", "warning", visible=False, sizing_mode="stretch_width",
                                css_classes=["loe-lesson-link-note"])
        self._layout = pn.Column(self._link_note, self._intro, self._keys, self._picker, self._body,
                                 sizing_mode="stretch_width")

    def __panel__(self):
        return self._layout

    def close(self) -> None:
        """Cancel a running sweep."""
        self.sweep.close()

    # ------------------------------------------------------------------
    def open(self, key: str) -> Lesson:
        """Show lesson ``key`` and apply its preset (raises ``KeyError`` for an unknown key)."""
        x = lesson(key)
        self.current = key
        self._link_note.visible = False  # it spoke of the link's lesson
        for k, b in self._picks.items():  # the open lesson is the one marked
            b.variant = "solid" if k == key else "outline"
        if x.sweep is None and x.sample is None:
            self._apply(x, None)
        self._body.objects = self._render(x)
        if x.sweep is not None:
            self.sweep.dispatch = self.state.dispatch
            self._sweep_view.metrics = list(x.sweep_metrics)
            if self.sweep.running:
                self.sweep.cancel()
                self.sweep.wait(30)
            fresh = {k: self.sweep.param[k].default for k in _SWEEP_SETTINGS}
            self.sweep.param.update(**{**fresh, **dict(x.sweep)})
            # once the page is there: a lesson opened from the address starts while the page is
            # still sent to the browser and before the walk-through's first run, which would
            # share the machine with the sweep's first fits (at once when the page is loaded)
            pn.state.onload(self._sweep_view.start)
        self._opened(x)
        return x

    def say_link_problem(self, message: str) -> None:
        """Show ``message`` (the link's settings that were not used) above the lesson the link opened."""
        self._link_note.object = md_quoting(message)
        self._link_note.visible = bool(message)

    def _apply(self, x: Lesson, variant) -> None:
        cfg = lesson_config(x, variant)
        changed = {k: v for k, v in cfg.items() if getattr(self.state, k) != v}
        if changed:
            self.state.param.update(**changed)  # one run
        self._mark_variants()

    def _mark_variants(self) -> None:
        """Fill the button of the variant whose settings the walk-through has (outline the others)."""
        for b, change in self._variants:
            b.variant = "solid" if all(getattr(self.state, k) == v for k, v in change.items()) else "outline"

    def _render(self, x: Lesson) -> list:
        objs = [
            # no anchor: its hidden ¶ wrapped onto a second line under a title that filled the width
            pn.pane.Markdown(f"## {x.title}", margin=(10, 10, 0, 10), stylesheets=[_TITLE_CSS],
                             disable_anchors=True, sizing_mode="stretch_width", css_classes=["loe-lesson-title"]),
            pn.pane.Markdown(x.narrative, styles={"font-size": "1.15em"}, sizing_mode="stretch_width",
                             stylesheets=[_TEXT_CSS, SUBSCRIPT_CSS], css_classes=["loe-lesson-narrative"]),
        ]
        if x.look_at == "Sweep":
            objs.append(pn.pane.Markdown("**Look at:** the sweep below (it runs in the background; "
                                         "Cancel stops it).", styles={"font-size": "1.1em"}))
            objs.append(self._sweep_view)
        else:
            go = pn.widgets.Button(label=f"Open “{x.look_at}” ▶", color="primary", width=260,
                                   css_classes=["loe-lesson-open"])
            go.on_click(lambda e: self._show(x))
            go.js_on_click(code=FOCUS_STEP_JS)  # from the keyboard: on to the step it opens
            objs.append(pn.Row(pn.pane.Markdown(f"**Look at:** {x.look_at}", styles={"font-size": "1.1em"}), go))
        self._variants = []
        if x.contrast:
            buttons = []
            for label, change in x.contrast:
                b = pn.widgets.Button(label=label, variant="outline", color="primary",
                                      css_classes=["loe-lesson-variant"])
                b.on_click(lambda e, ch=change: self._apply(x, ch))
                buttons.append(b)
                self._variants.append((b, dict(change)))
            self._mark_variants()
            objs.append(pn.Row(pn.pane.Markdown("**Compare:**", styles={"font-size": "1.1em"}), *buttons,
                               sizing_mode="stretch_width"))
        objs.append(alert(f"**Question for the class.** {x.question}", "info",
                          sizing_mode="stretch_width", css_classes=["loe-lesson-question"]))
        readable(*objs)
        return objs
