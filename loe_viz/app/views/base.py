"""Base class of the explorer's step views and small display helpers."""

from __future__ import annotations

import html
import math
from typing import ClassVar

import numpy as np
import panel as pn
import param
from bokeh.models import Tooltip
from panel.custom import JSComponent
from panel.viewable import Viewer

try:  # Panel's widgets with a description tooltip (a private module: without it the tooltips stay one line)
    from panel.widgets._mixin import TooltipMixin
except ImportError:  # pragma: no cover
    TooltipMixin = None

from ..state import ExplorerState
from ..text import md

__all__ = ["StepView", "KeysStayInBoxes", "explanation", "summary", "swatch", "fmt", "hvpane", "plot_row",
           "WrappingRow", "WholeNumberInput", "WholeNumberSlider", "ReleasedFloatEditSlider", "stretch_only_to_finite",
           "use_local_katex_fonts", "readable", "alert", "ALERT_CSS", "WIDGET_FONT", "FOCUS_CSS", "WRAP_TABS_CSS",
           "TOOLTIP_CSS", "CODE_CSS", "SUBSCRIPT_CSS", "FOCUS_STEP_JS"]

#: Buttons and boxes have font sizes of their own (12.8 and 13.3 px), and the chosen items of a
#: multiple choice 12 px: each widget takes the explorer's instead (``--font-size``, 15 px).  The "×"
#: that removes a chosen item was an 8 px picture on a 13.3 px button, faint (75 % opaque): it is
#: drawn at 0.8 em of that size, fully opaque.
#: Where the keyboard is, seen from the back of a hall: Bokeh's ring is a faint 1 px dotted line (tab headers) or
#: the browser's thin default. Every widget (in :data:`WIDGET_FONT`) and the explorer's tabs take this one.
FOCUS_CSS = (":focus-visible { outline: 3px solid #1f5fbf !important; outline-offset: 2px; } "
             ".bk-tab:focus-visible { outline-offset: -4px; }")  # inside: the tab bar clips what lies outside
#: A tab bar narrower than its tabs (a window at 150 % zoom) puts the rest on a second line: Bokeh hid them
#: beyond the right edge, with no sign that they were there.
WRAP_TABS_CSS = ".bk-headers-wrapper { flex-wrap: wrap; }"
#: A display formula wider than its column (a window at 150 % zoom) scrolls on its own line instead of
#: widening the page, which then scrolled sideways as a whole.
FORMULA_CSS = ".katex-display { overflow-x: auto; overflow-y: hidden; padding: 2px 0; }"
WIDGET_FONT = (".bk-btn, .bk-input, select, input, .choices__input, .choices__list--multiple .choices__item, "
               ".choices__list--dropdown .choices__item, .choices__list[aria-expanded] .choices__item "
               "{ font-size: var(--font-size); } "
               ".choices[data-type*=select-multiple] .choices__button { font-size: var(--font-size); "
               "background-size: 0.8em; width: 0.8em; padding-left: 1em; opacity: 1; } " + FOCUS_CSS)


#: Code in explanations (a function's name, a file's extension) dark on a light tint: Panel's code style
#: (#82aaff on white, about 2.3:1) could not be read from the back of a hall.
CODE_CSS = ":host code { color: #1d3f66; background: #eef3f8; padding: 1px 5px; }"
#: Sub- and superscripts in text (D<sub>ij</sub>, s<sup>LS</sup>): the browser's "smaller" drew them
#: at 13.1 px; at 0.9 em and never under 14 px they read like the text around them, nested ones too.
SUBSCRIPT_CSS = ":host sub, :host sup { font-size: max(14px, 0.9em); line-height: 0; }"


#: The tooltip of a button or a button group (its ``description``) was one line as long as its text: 2,150 px
#: for the Compare step's protocol, cut off at 1280 px and covering the Methods box. It wraps at 340 px (Panel
#: wraps the tooltips of other widgets at 300), in the explorer's font size: Bokeh's 13 px is small in a hall.
TOOLTIP_CSS = ":host { white-space: initial; max-width: 340px; } .bk-tooltip-content { font-size: 15px; }"


def _wrap_tooltip(w) -> None:
    """Give the tooltip Panel makes of a button's or a button group's ``description`` :data:`TOOLTIP_CSS`.

    Panel makes a new tooltip for each page that shows the widget (one model is in one document only),
    so its making is wrapped, once per widget.
    """
    if TooltipMixin is None or not isinstance(w, TooltipMixin) or getattr(w, "_wraps_tooltip", False):
        return
    make = w._process_param_change

    def process_param_change(params):
        props = make(params)
        tip = props.get("tooltip")
        if isinstance(tip, Tooltip) and TOOLTIP_CSS not in tip.stylesheets:
            tip.stylesheets = [*tip.stylesheets, TOOLTIP_CSS]
        return props

    w._process_param_change = process_param_change
    w._wraps_tooltip = True
    if getattr(w, "_models", None) and w.description:
        w.param.trigger("description")  # a page shows it already: its tooltip is made again


#: Text colours of the alert boxes, darker than the theme's: its info (#087990 on #cff4fc, 4.3:1) and warning
#: (#997404 on #fff3cd, 3.9:1) texts are below WCAG AA's 4.5:1, on the boxes a class most needs to read (the
#: lessons' questions, the notice before a large run). These are Bootstrap 5.3's emphasis colours, 7 to 9:1.
ALERT_CSS = (":host(.alert-info) { color: #055160; } :host(.alert-warning) { color: #664d03; } "
             ":host(.alert-danger) { color: #58151c; } :host(.alert-success) { color: #0a3622; }")


def alert(text: str, alert_type: str, **params) -> pn.pane.Alert:
    """A :class:`panel.pane.Alert` whose text reaches WCAG AA contrast (:data:`ALERT_CSS`)."""
    return pn.pane.Alert(text, alert_type=alert_type, stylesheets=[*params.pop("stylesheets", []), ALERT_CSS],
                         **params)


def readable(*objs) -> None:
    """Give every widget in ``objs`` (layouts and views searched) the explorer's font size, and a tooltip
    that wraps (see :data:`TOOLTIP_CSS`), once.

    For widgets shown after the page was built (a step's controls, a lesson's buttons): the
    explorer's own pass over its layout at start-up never saw them.
    """
    for obj in objs:
        if isinstance(obj, Viewer):
            obj = obj.__panel__()
        for w in obj.select(pn.widgets.Widget) if hasattr(obj, "select") else ():
            if WIDGET_FONT not in w.stylesheets:
                w.stylesheets = [*w.stylesheets, WIDGET_FONT]
            _wrap_tooltip(w)


def hvpane(obj, **kw) -> pn.pane.HoloViews:
    """A HoloViews pane sized by its plot (responsive plots stretch, square ones keep their size)."""
    return pn.pane.HoloViews(obj, margin=(5, 10), **kw)


class WholeNumberInput(pn.widgets.IntInput):
    """An :class:`~panel.widgets.IntInput` that takes whatever number is typed, for its owner to judge.

    IntInput's box in the page drops each keystroke that leaves no integer: "1e5" became 15, "1e-9"
    19, and ran with no word. This box takes any number the page's float boxes take and sends it.
    A whole number too long for the page (99999999999999999999999) comes as the float 1e+23, which
    IntInput's integer ``value`` refused inside Panel (a traceback in the server's log, nothing on
    the page). Here every number reaches the owner, which takes a whole float as the int it is and
    refuses anything else with a message (:meth:`TripletsState.set_setting`, the explorer's boxes).
    """

    value = param.Number(default=0, allow_None=True, doc="The number in the box.")
    value_throttled = param.Number(default=None, constant=True, doc="The number, on <enter> or leaving the box.")
    mode = param.String(default="float", constant=True, doc="The page's box takes any number (1e5, 2.5).")


class _TakesValueOnRelease:
    """A slider whose value changes when its handle is released, whatever ``pn.config.throttled`` says: a
    notebook's plain ``pn.extension()`` started a fit at every step of a drag (a dozen for one move of "Items n").
    The global switch would change the user's other sliders too."""

    def _process_property_change(self, props):
        props = {k: v for k, v in props.items() if k != "value"}
        if "value_throttled" in props:
            props["value"] = props["value_throttled"]
        return super()._process_property_change(props)


class ReleasedIntSlider(_TakesValueOnRelease, pn.widgets.IntSlider):
    """An :class:`~panel.widgets.IntSlider` that takes its value on release (:class:`_TakesValueOnRelease`)."""


class ReleasedFloatSlider(_TakesValueOnRelease, pn.widgets.FloatSlider):
    """A :class:`~panel.widgets.FloatSlider` that takes its value on release (:class:`_TakesValueOnRelease`)."""


class ReleasedFloatEditSlider(pn.widgets.EditableFloatSlider):
    """An :class:`~panel.widgets.EditableFloatSlider` whose slider refits on release (:class:`ReleasedIntSlider`)."""

    _slider_widget = ReleasedFloatSlider


class WholeNumberSlider(pn.widgets.EditableIntSlider):
    """An :class:`~panel.widgets.EditableIntSlider` whose box is a :class:`WholeNumberInput`.

    A whole number typed as 1e5 is taken as 100000; any other number is handed to ``refuse_number``
    (the owner says why in the page), and the box is set back to the slider's value. Its slider
    changes the value when its handle is released (:class:`ReleasedIntSlider`).
    """

    _input_widget = WholeNumberInput
    _slider_widget = ReleasedIntSlider

    def __init__(self, refuse_number=None, **params):
        self._refuse_number = refuse_number
        super().__init__(**params)

    def _sync_value(self, event):
        v = event.new
        if isinstance(v, float) and event.obj is self._value_edit:
            if math.isfinite(v) and v.is_integer():
                v = int(v)
            else:
                if event.name == "value" and self._refuse_number is not None:
                    self._refuse_number(v)
                self._value_edit.value = self.value
                return
        with param.edit_constant(self):
            self.param.update(**{event.name: v})


def stretch_only_to_finite(slider) -> None:
    """Let the page stretch an editable slider to a number typed in its box only when the number is finite.

    Panel's editable sliders stretch their range in the page to a value typed beyond it; typed as 1e400,
    that value is Infinity, and the slider (noUiSlider) then threw "'range' value isn't numeric" at every
    later update: its handle stayed put whatever value was typed or run.
    """
    from panel.links import Callback

    for cb in Callback.registry.get(slider._value_edit, []):
        code = cb.code.get("value", "")
        if "slider.end = cb_obj.value" in code and "isFinite" not in code:
            cb.code = {**cb.code, "value": "if (!Number.isFinite(cb_obj.value)) { return; }\n" + code}


class WrappingRow(pn.Row):
    """A Row whose items go onto the next line where the page is too narrow for them side by side.

    A Row of fixed-size plots asks for the sum of their widths as its minimum, so on a narrow page
    (a projector's 1280 px at 150 % zoom is 853 px) it ran past the window's edge; this one asks for
    its widest item's. Bokeh lays the plots out as in any Row (in a FlexBox their frames collapsed to
    0 x 0 px once their tab was shown).
    """

    def __init__(self, *objects, **params):
        params["stylesheets"] = [*params.get("stylesheets", []), ":host { flex-wrap: wrap; }"]
        super().__init__(*objects, **params)

    def _compute_sizing_mode(self, children, props):
        out = super()._compute_sizing_mode(children, props)
        if "min_width" in out:  # Panel's is the sum of the items' widths and margins: take the widest instead
            margin = props.get("margin", self.margin) or 0
            margin = (margin,) * 4 if isinstance(margin, int) else margin * 2 if len(margin) == 2 else margin
            fixed = [c.width if c.sizing_mode in (None, "fixed") and c.width else c.min_width for c in children]
            out["min_width"] = max((w + margin[1] + margin[3] for w in fixed if w), default=out["min_width"])
        return out


def plot_row(*plots) -> WrappingRow:
    """HoloViews plots side by side, each in its :func:`hvpane`, across the page; where the page is too
    narrow for them side by side, one below the other."""
    return WrappingRow(*(hvpane(p) for p in plots), sizing_mode="stretch_width")


def _katex_font_faces() -> str:
    """``@font-face`` rules for KaTeX's fonts as data URIs (page level: rules inside a shadow root are ignored)."""
    from ._katex_fonts import FONTS

    return "\n".join(
        f'@font-face{{font-family:{_FONT_PREFIX}{fam};font-style:{style};font-weight:{weight};'
        f'src:url(data:font/woff2;base64,{b64}) format("woff2")}}'
        for fam, style, weight, b64 in FONTS)


def _katex_stylesheet() -> str:
    """KaTeX's stylesheet (bundled with Panel) without its font rules, for the formulas' shadow roots."""
    global _KATEX_CSS
    if _KATEX_CSS is None:
        import re
        from pathlib import Path

        css = ""
        for path in sorted((Path(pn.__file__).parent / "dist" / "bundled" / "katex").glob("katex@*/dist/katex.min.css")):
            css = path.read_text(encoding="utf-8")
        # the fonts come from _katex_font_faces(), under names of their own: Panel's page-level
        # copy of this stylesheet declares KaTeX_* fonts at URLs that Panel does not ship
        _KATEX_CSS = re.sub(r"@font-face\{[^}]*\}", "", css).replace("KaTeX_", _FONT_PREFIX + "KaTeX_")
    return _KATEX_CSS


_KATEX_CSS: str | None = None
_FONT_PREFIX = "LoeViz"


def use_local_katex_fonts() -> None:
    """Declare KaTeX's fonts on the page (once), from the package itself: formulas look right offline."""
    css = _katex_font_faces()
    # global_css goes once into the page's head; raw_css would be copied into the
    # stylesheets of every component (~180 kB each, ~11 MB per page load)
    if css not in pn.config.global_css:
        pn.config.global_css = [*pn.config.global_css, css]


class KeysStayInBoxes(JSComponent):
    """An invisible piece that keeps the explorer's keys from a notebook's shortcuts.

    Panel draws widgets inside shadow roots, so JupyterLab sees a key pressed in a number box
    as pressed on the explorer's outer element, outside any text box, and takes Enter for its
    own shortcut (the typed number was not applied). Placed once in the explorer, this listens
    on the outermost element in the page and stops the notebook from seeing plain keys
    (no Ctrl, Alt or Meta) pressed in a text box, select or slider; the widgets, which
    handle them first, still do. Ctrl/Meta shortcuts (save, Ctrl+B) reach the notebook.
    """

    _esm = """
    const KEYS = ["keydown", "keypress", "keyup"]
    function stop(e) {
      const t = e.composedPath()[0]
      if (e.ctrlKey || e.metaKey || e.altKey || !t || !t.tagName) return
      if (["INPUT", "TEXTAREA", "SELECT"].includes(t.tagName) || t.isContentEditable
          || t.getAttribute("role") === "slider") e.stopPropagation()
    }
    export function render({ model, el }) {
      let host = null
      const detach = () => { if (host) for (const k of KEYS) host.removeEventListener(k, stop) }
      const attach = () => {
        let h = el
        while (h.getRootNode() instanceof ShadowRoot) h = h.getRootNode().host
        if (h === host || !h.isConnected) return
        detach()
        host = h
        for (const k of KEYS) host.addEventListener(k, stop)
      }
      model.on("after_render", attach)
      model.on("remove", detach)
    }
    """

    def __init__(self, **params):
        super().__init__(**{"width": 0, "height": 0, "margin": 0, **params})


#: Run in the page when its document is ready: see :func:`address_without_history`.
_REPLACE_HISTORY_JS = """
const h = window.history
if (!h.__loeVizReplaces) {
  const push = h.pushState.bind(h)
  h.pushState = function (state, title, url) {
    try {
      const to = new URL(url, window.location.href)
      if (to.origin === window.location.origin && to.pathname === window.location.pathname)
        return h.replaceState(state, title, url)
    } catch (e) {}
    return push(state, title, url)
  }
  h.__loeVizReplaces = true
}
"""


def address_without_history(doc) -> None:
    """Make the served page's address follow its settings without a history entry for each.

    Panel's location pushes a browser history entry for every change of the address's query (each
    setting, each step, and the correction of a link's refused settings at load), and the page does
    not follow the browser back: Back and Forward changed the address but not the page, so a link
    copied after going Back named a run that was not on the screen. Once the page's document is
    ready (before the location writes anything), changes of the query alone replace the current
    entry: the address stays the link of what is shown, and Back leaves the page. Other history
    entries are pushed as before.
    """
    from bokeh.models import CustomJS

    doc.js_on_event("document_ready", CustomJS(code=_REPLACE_HISTORY_JS))


#: Run in the page when its document is ready: see :func:`keyboard_and_connection`.
_KEYS_JS = """
if (!window.__loeVizKeys) {
  window.__loeVizKeys = true
  document.addEventListener("keydown", (e) => {
    if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey) return
    const el = e.composedPath()[0]
    if (!(el instanceof HTMLElement)) return
    const press = e.key === "Enter" || e.key === " "
    if (e.key === "Tab" && !e.shiftKey && el.classList.contains("bk-tab")) {
      // Bokeh puts a tab bar after its content in the page's order (the grid draws it on top): Tab went from the
      // mode tabs out of the explorer, and reached a step's tabs only after its content. From a tab, Tab goes into
      // the open tab's content, a tab bar inside it before its content.
      const root = el.getRootNode()
      const header = el.closest(".bk-header")
      const shown = (x) => x.getClientRects().length > 0 && getComputedStyle(x).visibility !== "hidden"
      const focusable = (x) => x.matches("button, input, select, textarea, a[href], [tabindex]") && x.tabIndex >= 0
        && !x.disabled && shown(x)
      const first = (node) => {  // the first focusable element under node, in the order the page draws it
        const kids = Array.from(node.children || [])
        const bar = kids.find((k) => k.classList.contains("bk-header"))
        for (const k of bar ? [bar, ...kids.filter((k) => k !== bar)] : kids) {
          if (!(k instanceof HTMLElement) || (k.classList.contains("bk-header") && k === header) || !shown(k)) continue
          if (k.classList.contains("bk-tab")) { if (k.classList.contains("bk-active")) return k; continue }
          if (focusable(k)) return k
          const inner = (k.shadowRoot && first(k.shadowRoot)) || first(k)
          if (inner) return inner
        }
        return null
      }
      const to = header && root !== document ? first(root) : null
      if (to) { e.preventDefault(); to.focus(); return }
    }
    if (el.classList.contains("bk-tab") && el.parentElement) {
      const tabs = Array.from(el.parentElement.children).filter(
        (t) => t.classList.contains("bk-tab") && !t.classList.contains("bk-disabled"))
      const i = tabs.indexOf(el)
      const to = press ? el : e.key === "ArrowRight" ? tabs[(i + 1) % tabs.length]
        : e.key === "ArrowLeft" ? tabs[(i - 1 + tabs.length) % tabs.length]
        : e.key === "Home" ? tabs[0] : e.key === "End" ? tabs[tabs.length - 1] : null
      if (to) {
        e.preventDefault()
        to.focus()
        to.click()
        // The headers are drawn again when the server's content for the tab arrives (seconds for a slow step):
        // for 5 s, a focus lost to the page goes back to the header of that name. A later key replaces it.
        const root = to.getRootNode(), name = to.textContent, until = Date.now() + 5000
        clearInterval(window.__loeVizRefocus)
        window.__loeVizRefocus = setInterval(() => {
          if (Date.now() > until) { clearInterval(window.__loeVizRefocus); return }
          if (document.activeElement !== document.body && document.activeElement !== null) return
          const again = Array.from(root.querySelectorAll(".bk-tab")).find((t) => t.textContent === name)
          if (again) again.focus()
        }, 50)
      }
    } else if (press && el.tagName === "BUTTON") {
      const host = el.getRootNode().host  // Panel's FileDownload: its link, not the button, listens
      const link = host && host.classList.contains("bk-panel-models-widgets-FileDownload") ? el.querySelector("a") : null
      if (link) { e.preventDefault(); link.click() }
    }
  }, true)
}
"""

#: Names and states for assistive technology, which Bokeh's widgets leave out: a tab header is a plain div,
#: the words of a checkbox are a div beside it (not a label: clicking them did nothing), the explorer's
#: number boxes and sliders take their words from a text beside them, and a plot is two unnamed canvases.
#: Each sweep names what is not named yet and marks which tab and which toggle is chosen; it runs once the
#: page is drawn and after each change of the document or click or key (debounced), 4 to 10 ms each.
_NAMES_JS = r"""
if (!window.__loeVizNames) {
  window.__loeVizNames = () => {
    const textOf = (host) => {  // the visible words of a host, through its shadow root; not of its inputs
      if (!host) return ""
      const root = host.shadowRoot || host
      let out = ""
      for (const el of root.querySelectorAll("*")) {
        if (el.shadowRoot) out += " " + textOf(el)
        else if (!el.children.length && !["STYLE", "LINK", "SCRIPT"].includes(el.tagName)
                 && !el.closest("input,button,select,textarea,.bk-input-group")) out += " " + (el.textContent || "")
      }
      return out.replace(/\s+/g, " ").trim()
    }
    const nameNear = (el) => {  // the words beside a control: a sibling of its host, or of its host's host
      let host = el.shadowRoot ? el : el.getRootNode().host
      for (let level = 0; host && level < 3; level++) {
        const sibs = Array.from(host.parentNode ? host.parentNode.children : [])
        const i = sibs.indexOf(host)
        for (const s of [...sibs.slice(0, i).reverse(), ...sibs.slice(i + 1)]) {
          if (/bk-(Div|Row|panel-models-markup)\b/.test(s.className)) {
            const t = textOf(s)
            if (t) return t.replace(/:$/, "")
          }
        }
        host = host.getRootNode().host
      }
      return ""
    }
    const sweep = (root) => {
      for (const el of root.querySelectorAll("*")) {
        if (el.shadowRoot) sweep(el.shadowRoot)
        const cl = el.classList
        if (cl.contains("bk-tab")) {
          el.setAttribute("role", "tab")
          el.setAttribute("aria-selected", cl.contains("bk-active") ? "true" : "false")
          if (el.parentElement) el.parentElement.setAttribute("role", "tablist")
        } else if (el.tagName === "INPUT" && (el.type === "checkbox" || el.type === "text")
                   && !el.getAttribute("aria-label")) {
          const group = el.closest(".bk-input-group")
          const label = el.type === "checkbox"
            ? Array.from(el.parentNode.children).find((c) => c.classList.contains("bk-label"))
            : group && group.querySelector("label")
          const own = label ? label.textContent.trim() : ""
          const name = own || nameNear(el)
          if (name) el.setAttribute("aria-label", name)
        } else if ((cl.contains("noUi-handle") || el.getAttribute("role") === "switch")
                   && !el.getAttribute("aria-label")) {
          const name = nameNear(el)
          if (name) el.setAttribute("aria-label", name)
        } else if (cl.contains("bk-btn") && el.parentElement && el.parentElement.classList.contains("bk-btn-group")
                   && el.parentElement.children.length > 1) {
          el.setAttribute("aria-pressed", cl.contains("bk-active") ? "true" : "false")
        } else if (cl.contains("bk-btn") && el.getRootNode().host
                   && /\bloe-lesson-(pick|variant)\b/.test(el.getRootNode().host.className)) {
          // a lesson, or a lesson's variant: the open one is drawn filled ("solid"), the others outlined
          el.setAttribute("aria-pressed", /\bsolid\b/.test(el.getRootNode().host.className) ? "true" : "false")
        } else if (cl.contains("bk-tool-button") && el.title && !el.getAttribute("aria-label")) {
          el.setAttribute("role", "button")
          el.setAttribute("aria-label", el.title)
        }
      }
    }
    sweep(document)
    if (window.Bokeh) for (const v of Bokeh.index.all_views()) {
      const t = v.model && v.model.title
      if (t && typeof t === "object" && "text" in t && v.el && v.el.classList) {
        v.el.setAttribute("role", "figure")
        v.el.setAttribute("aria-label", "Plot: " + (t.text || "untitled"))
      }
    }
  }
  let pending = null
  const later = () => { clearTimeout(pending); pending = setTimeout(window.__loeVizNames, 200) }
  for (const d of (window.Bokeh ? Bokeh.documents : [])) d.on_change(later)
  document.addEventListener("click", (e) => {
    const el = e.composedPath()[0]
    if (el instanceof HTMLElement && el.classList.contains("bk-label") && el.parentNode) {
      const box = Array.from(el.parentNode.children).find((c) => c.tagName === "INPUT" && c.type === "checkbox")
      if (box && !box.disabled) box.click()  // the words of a checkbox tick it, as a label's would
    }
    later()
  }, true)
  document.addEventListener("keyup", later, true)
  window.__loeVizNames()
}
"""

#: The chosen tab of the tab bar whose host has the class ``host`` (``loe-modes``, ``loe-steps``), found through
#: the page's shadow roots; null when there is none.
_ACTIVE_TAB_JS = r"""
const activeTab = (root, host) => {
  for (const el of root.querySelectorAll("*")) {
    if (el.classList.contains(host) && el.shadowRoot) return el.shadowRoot.querySelector(".bk-tab.bk-active")
    if (el.shadowRoot) { const t = activeTab(el.shadowRoot, host); if (t) return t }
  }
  return null
}
"""

#: The click of a button that opens a step of the walk-through (a lesson's "Open “Embedding” ▶"): the button goes
#: away with its mode, and the keyboard's focus went to the page's start. For 20 s (a first walk-through is drawn
#: in seconds on a busy server), a focus lost to the page goes to the open step's tab (the steps' tab bar is the
#: host of class loe-steps).
FOCUS_STEP_JS = _ACTIVE_TAB_JS + r"""
const until = Date.now() + 20000
clearInterval(window.__loeVizRefocus)
// the tab bar may be drawn again as the step's content arrives, and the focus lost again: it is put back each time,
// until the time is up or the mouse is used
const timer = window.__loeVizRefocus = setInterval(() => {
  if (Date.now() > until) { clearInterval(timer); return }
  if (document.activeElement !== document.body && document.activeElement !== null) return
  const tab = activeTab(document, "loe-steps")
  if (tab && tab.getClientRects().length) tab.focus()
}, 50)
document.addEventListener("mousedown", () => clearInterval(timer), {once: true, capture: true})
"""

#: A link before everything else on the page, shown only while it has the keyboard's focus: Enter moves the focus
#: to the chosen mode's tab (Walk-through, Your triplets, Lessons), past the sidebar's twenty-odd controls that
#: came first from the keyboard. The usual "skip to content" link of a page with a sidebar (WCAG 2.4.1).
_SKIP_JS = _ACTIVE_TAB_JS + r"""
if (!document.getElementById("loe-skip")) {
  const link = document.createElement("a")
  link.id = "loe-skip"
  link.href = "#main"
  link.textContent = "Skip to the modes and steps"
  Object.assign(link.style, {position: "fixed", top: "8px", left: "-10000px", zIndex: "100001", padding: "10px 18px",
    background: "#fff", color: "#1d3f66", fontSize: "1.1em", border: "3px solid #1f5fbf", borderRadius: "4px"})
  link.addEventListener("focus", () => { link.style.left = "8px" })
  link.addEventListener("blur", () => { link.style.left = "-10000px" })
  link.addEventListener("click", (e) => {
    e.preventDefault()
    const tab = activeTab(document, "loe-modes")  // the chosen mode's tab
    if (tab) { tab.setAttribute("tabindex", tab.getAttribute("tabindex") || "0"); tab.focus() }
  })
  document.body.insertBefore(link, document.body.firstChild)
}
"""

#: Run in the page when its connection to the server is lost (and when it is back).
_LOST_JS = """
let box = document.getElementById("loe-connection-lost")
if (!box) {
  box = document.createElement("div")
  box.id = "loe-connection-lost"
  box.setAttribute("role", "alert")
  box.textContent = "The connection to the server was lost: this page no longer updates, and changes made since " +
    "were not received. Reload the page to go on."
  Object.assign(box.style, {position: "fixed", top: "0", left: "0", right: "0", zIndex: "100000",
    padding: "14px 24px", background: "#9b1c1c", color: "#fff", fontSize: "1.25em", textAlign: "center"})
  document.body.appendChild(box)
}
"""
_BACK_JS = """
const box = document.getElementById("loe-connection-lost")
if (box) box.remove()
"""


def keyboard_and_connection(doc) -> None:
    """Make the served page usable from the keyboard, and say when its connection to the server is lost.

    Bokeh's tab headers take focus but listen for clicks only, and so do Panel's download links
    inside their buttons: from the keyboard the modes ("Your triplets", "Lessons") and the steps
    could not be switched and nothing could be downloaded. Enter or Space now activates a focused
    tab or download, and the arrow keys, Home and End move between tabs. Tabs, toggles, plots and
    the boxes and sliders that take their words from a text beside them get names and states for a
    screen reader, and the words of a checkbox tick it. The first Tab on the page shows a link that
    skips the sidebar's controls to the modes' tabs. When the connection
    drops (a hall's network), the page looked live while nothing reached the server; a banner now
    says so until the connection is back.
    """
    from bokeh.models import CustomJS

    if doc is None:  # not a served page
        return
    doc.js_on_event("document_ready", CustomJS(code=_KEYS_JS + _NAMES_JS + _SKIP_JS))
    doc.js_on_event("connection_lost", CustomJS(code=_LOST_JS))
    doc.js_on_event("client_reconnected", CustomJS(code=_BACK_JS))


def explanation(blocks) -> pn.Column:
    """Markdown paragraphs and display formulas (strings starting with ``$$``).

    Formulas are typeset with KaTeX (bundled with Panel, so the page needs no
    network); the rest is Markdown.
    """
    # per session: Panel keeps a served session's config apart from the process's
    use_local_katex_fonts()
    objs = []
    for b in blocks:
        b = b.strip("\n")
        if b.startswith("$$"):
            objs.append(pn.pane.LaTeX(b, renderer="katex", styles={"font-size": "1.15em"},
                                      margin=(0, 10), stylesheets=[_katex_stylesheet(), FORMULA_CSS]))
        else:
            objs.append(pn.pane.Markdown(b, margin=(0, 10), styles={"font-size": "1.05em"},
                                         disable_math=True, stylesheets=[CODE_CSS, SUBSCRIPT_CSS]))
    return pn.Column(*objs, sizing_mode="stretch_width")


#: ``min-height`` of a line of text above the plots that changes with each result (the status
#: line, a step's note): two lines of it at 1.05 to 1.1 em. A line that wrapped onto a second line
#: for some results moved every plot below it, and the page laid itself out again (~20 ms).
TWO_LINES = "52px"


def summary(text: str) -> pn.pane.Markdown:
    """The paragraph of figures that sums up a step's results, above its plots."""
    return pn.pane.Markdown(text, styles={"font-size": "1.1em"}, sizing_mode="stretch_width")


def swatch(color: str, text: str) -> str:
    """HTML for ``text`` after a coloured disc (the point's colour)."""
    return (f'<span style="display:inline-block;width:0.9em;height:0.9em;border-radius:50%;'
            f'background:{html.escape(color)};border:1px solid #333;vertical-align:middle;'
            f'margin-right:0.25em"></span><b>{html.escape(text)}</b>')


def fmt(x, digits: int = 3) -> str:
    """A number for display (``—`` for None/NaN)."""
    if x is None:
        return "—"
    try:
        xf = float(x)
    except (TypeError, ValueError):
        return str(x)
    if not np.isfinite(xf):
        return "—"
    if xf != 0 and (abs(xf) >= 1e5 or abs(xf) < 10 ** (-digits)):
        return f"{xf:.{digits - 1}e}"
    return f"{xf:.{digits}g}" if abs(xf) < 1 else f"{xf:,.{digits}g}" if abs(xf) >= 1e4 else f"{xf:.{digits}g}"


class StepView(Viewer):
    """One step of the walk-through: an explanation and plots of the shared state.

    Subclasses set :attr:`title` and :attr:`text` and implement :meth:`_render`,
    which returns the objects shown under the explanation.  The explorer calls
    :meth:`refresh` when new results arrive and the step is visible, so hidden
    steps cost nothing.
    """

    state = param.ClassSelector(class_=ExplorerState, doc="The session's state.")

    title: ClassVar[str] = ""
    text: ClassVar[tuple] = ()

    def __init__(self, **params):
        super().__init__(**params)
        self._rendered_version = -1
        self._primed: set[int] = set()  # panes of _updated_panes() updated once after placement
        self._body = pn.Column(sizing_mode="stretch_width", min_height=200)
        self._explain = pn.Card(explanation(self.text), title=f"What happens in “{self.title}”",
                                collapsed=False, sizing_mode="stretch_width",
                                header_background="#eef3f8", margin=(5, 5, 10, 5), stylesheets=[FOCUS_CSS])
        self._layout = pn.Column(self._explain, self._body, sizing_mode="stretch_width",
                                 name=self.title)

    def __panel__(self):
        return self._layout

    # ------------------------------------------------------------------
    def controls(self) -> list:
        """Widgets of this step shown above its plots (none by default)."""
        return []

    def refresh(self, force: bool = False) -> None:
        """Re-render when the state's results changed since the last render."""
        if not force and self._rendered_version == self.state.version:
            return
        self._rendered_version = self.state.version
        if self.state.points is None or self.state.model is None:
            self._body.objects = [alert(
                "No results yet: the messages above say why (a run in progress, one waiting for “Run”, or an error).",
                alert_type="info")]
            return
        try:
            objs = self._render()
        except Exception as exc:  # a plot must never take the page down
            objs = [alert(f"This step could not be drawn: {type(exc).__name__}: {md(exc)}",
                                  alert_type="danger")]
        new = list(self.controls()) + list(objs)
        readable(*new)
        old = self._body.objects
        # the same long-lived panes (whose data were patched): reassigning them would make
        # Panel rebuild the layout and re-run every link of the document (seconds at n = 2000)
        if len(new) != len(old) or any(a is not b for a, b in zip(new, old)):
            self._body.objects = new
            # Panel 1.9 renders a template's markdown pane with part of the design's stylesheets and
            # sends the full list with the pane's first update: for a pane that changes with every
            # result, that came with the first new result after the page loaded, and the page laid
            # itself out and drew twice inside it (0.2 s). Updated once here, the stylesheets go with
            # the page's first drawing of the step.
            for pane in self._updated_panes():
                if id(pane) not in self._primed and any(pane is o for o in new):
                    self._primed.add(id(pane))
                    pane.param.trigger("object")

    def _updated_panes(self) -> list:
        """Long-lived text panes whose text changes with every result (see :meth:`refresh`)."""
        return []

    def _results(self) -> tuple:
        """``(points, config_used, model, landmarks)`` of the run shown (:meth:`refresh` renders only when they exist)."""
        s = self.state
        return s.points, s.config_used, s.model, np.asarray(s.model.landmarks_)

    def _render(self) -> list:  # pragma: no cover - abstract
        raise NotImplementedError
