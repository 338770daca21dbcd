"""HoloViews plot builders shared by the explorer's steps.

Every function takes plain numpy arrays and returns a HoloViews object styled
for a projector (large fonts, thick marks).  Point plots keep each point's
position colour (:mod:`loe_viz.app.colors`).  Above :data:`RASTER_ABOVE`
points a scatter is rasterised with datashader (the colours are binned into a
few dozen hue/lightness classes and blended per pixel), and plots that draw a
mark per point (segments, labels) are decimated to a seeded subsample.
"""

from __future__ import annotations

import weakref

import numpy as np
import holoviews as hv
import pandas as pd
from bokeh.palettes import Category10

from .colors import hsl_to_rgb, quantized, rgb_to_hex

# Register the bokeh backend (without notebook side effects) so options can be set.
import holoviews.plotting.bokeh  # noqa: E402,F401

if hv.Store.current_backend != "bokeh":  # pragma: no cover - only if another backend was chosen
    hv.Store.set_current_backend("bokeh")

__all__ = [
    "RASTER_ABOVE", "SEGMENTS_MAX", "FONTSCALE", "scatter", "landmark_marks", "identity_line",
    "heatmap", "convergence", "subsample", "linked_embedding", "wrap", "HALF_WIDTH",
    "point_labels", "label_layout", "framed", "short_text", "fit_title", "index_ticks", "HEATMAP_WIDTH",
]

#: Point plots with more points than this show a seeded subsample of this many points
#: (fast, and every shown point keeps its own colour and stays selectable).
DECIMATE_ABOVE = 20_000
#: Point plots with more points than this are rasterised with datashader when it is
#: installed (its first use compiles kernels for seconds, so smaller n are decimated).
RASTER_ABOVE = 200_000
#: At most this many true-to-estimate segments are drawn.
SEGMENTS_MAX = 3_000
#: Font scale of every plot (readable on a projector).
FONTSCALE = 1.35
#: Side in pixels of the square frames of point plots.
SQUARE = 480
#: Side of the frames of the side-by-side embedding plots (two fit beside the sidebar at 1280 px).
SQUARE_PAIR = 335
#: Pixels a one-row legend below a plot takes (plots with one add them to their height).
LEGEND_BELOW = 45
#: Width of a plot shown two to a row (fits beside the sidebar at 1280 px).
HALF_WIDTH = 410
#: Colour of landmarks (dark, so they stand out from the light/mid point colours).
LANDMARK_COLOR = "#111111"
#: Font size in points of the labels written beside points (landmarks, the Sample step's items).
LABEL_PT = 13
#: Screen pixels between a labelled point and the near corner of its label (bokeh's text padding):
#: the label sits diagonally off the point, clear of a star's arms, whichever corner it takes.
LABEL_GAP = 6
#: Titles longer than this many characters are shortened in the middle when the plot's width
#: is not known (responsive plots); fixed-width plots fit their title to their width.
TITLE_MAX = 90

#: Plot option drawing with the 2-D canvas rather than HoloViews' default WebGL: a few thousand
#: marks draw in milliseconds either way, but WebGL without a GPU (software rendering, as in
#: many lecture-hall machines and headless browsers) copies every frame back to the page
#: (about 0.5 s per redraw of the embedding at n = 2000).
CANVAS = {"plot.output_backend": "canvas"}

_TOOLS = ["hover", "box_zoom", "wheel_zoom", "pan", "reset", "save"]

_DS = None


def _datashader():
    """``(datashader, datashade, dynspread)``, imported on first use (the import takes
    seconds, and only plots above :data:`RASTER_ABOVE` points need it); None when missing."""
    global _DS
    if _DS is None:
        try:
            import datashader
            from holoviews.operation.datashader import datashade, dynspread
            _DS = (datashader, datashade, dynspread)
        except Exception:  # pragma: no cover - depends on the environment
            _DS = False
    return _DS or None


def base_opts(**kw) -> dict:
    """Plot options common to every figure (fonts, tools, size).

    A ``title`` too long for the plot is shortened in the middle (:func:`fit_title`; it stays
    plain text: bokeh draws titles on the canvas), and text labels that would run past the
    right edge of a fixed frame are turned to end at their point (:func:`_labels_inside`).
    """
    # toolbar on the right: above the plot it shares the title's row and covers long titles.
    # The wheel zooms only once its tool is picked: active by default (HoloViews'), a mouse wheel or a
    # trackpad scrolling the page through a step zoomed whichever plot came under the pointer instead.
    opts = dict(fontscale=FONTSCALE, tools=["save"], toolbar="right", responsive=True,
                height=420, default_tools=["pan", "wheel_zoom", "box_zoom", "reset"], active_tools=["pan"])
    opts.update(kw)
    if not opts.get("responsive", True):
        opts.pop("responsive", None)
    if isinstance(opts.get("title"), str):
        opts["title"] = fit_title(opts["title"], opts.get("width") if "responsive" not in opts else None)
    opts["hooks"] = [*(opts.get("hooks") or ()), _labels_inside, legend_items_apart, plain_log_ticks]
    return opts


#: Labels of a log axis's ticks as plain text at the ticks' font: 1, 10, 100 and 0.01 as such, beyond
#: that 1e−7 or 5e+6 (bokeh writes 10 with a superscript exponent at 0.7 of the font: 10.4 px).
_LOG_TICK_JS = """
if (tick === 0) return "0";
const a = Math.abs(tick);
if (a >= 1e-3 && a < 1e5) return String(parseFloat(tick.toPrecision(6)));
const e = Math.floor(Math.log10(a) + 1e-9), m = parseFloat((tick / Math.pow(10, e)).toPrecision(3));
return m + "e" + (e < 0 ? "\u2212" : "+") + Math.abs(e);
"""


def plain_log_ticks(plot, element) -> None:
    """Plot hook (every figure, :func:`base_opts`): log axes label their ticks in plain text
    (:data:`_LOG_TICK_JS`), never with bokeh's small superscript exponents."""
    from bokeh.models import CustomJSTickFormatter, LogTickFormatter

    fig = plot.handles.get("plot")
    for axis in [*getattr(fig, "xaxis", ()), *getattr(fig, "yaxis", ())]:
        if isinstance(axis.formatter, LogTickFormatter):
            axis.formatter = CustomJSTickFormatter(code=_LOG_TICK_JS)


#: Pixels between two items of a legend in a row: at bokeh's 3 px a label ran into the next item's
#: line ("Dykstra- - stopping tolerance", "E (projected)- - identity").
LEGEND_SPACING = 20
#: Pixels of a fixed-width plot left of a legend below it: the y axis (it starts under the frame), 50 to
#: 71 px in Chromium.  The legend's items are counted at :func:`text_width_px`'s bold widths, about its
#: padding and margin more than the regular ones drawn.
_LEGEND_LEFT = 70.0


def _font_px(size, default: float = 12 * FONTSCALE) -> float:
    """A bokeh font size ("14.85px", "13pt") in pixels."""
    text = str(getattr(size, "value", size) or "")
    try:
        if text.endswith("px"):
            return float(text[:-2])
        if text.endswith("pt"):
            return float(text[:-2]) * 4 / 3
    except ValueError:
        pass
    return default


def legend_items_apart(plot, element) -> None:
    """Plot hook: the items of a legend in a row (a legend below its plot) :data:`LEGEND_SPACING`
    apart, in two rows when one row would run past the plot's right edge (where it is cut off)."""
    fig = plot.handles.get("plot")
    for legend in getattr(fig, "legend", None) or ():
        if legend.orientation != "horizontal" or not legend.items:
            continue
        legend.spacing = max(int(legend.spacing), LEGEND_SPACING)
        if not getattr(fig, "width", None):
            continue
        font = _font_px(legend.label_text_font_size)
        labels = [str(getattr(item.label, "value", item.label) or "") for item in legend.items]
        row = (sum(legend.glyph_width + legend.label_standoff + text_width_px(t, font) for t in labels)
               + legend.spacing * (len(labels) - 1) + _LEGEND_LEFT)
        if row > fig.width and len(labels) > 1:
            legend.ncols = (len(labels) + 1) // 2


def short_text(text: str, limit: int = 40) -> str:
    """``text`` with its middle replaced by "…" when it is longer than ``limit`` characters.

    For names the user chose (an uploaded file's), shown in titles: the start and the end
    (the extension) stay readable.  Plain text in, plain text out: nothing is escaped or
    interpreted, so it must be shown as text (bokeh titles are).
    """
    text = str(text)
    limit = max(int(limit), 3)
    if len(text) <= limit:
        return text
    keep = limit - 1  # characters kept around the ellipsis
    head = (keep + 1) // 2
    return text[:head] + "…" + text[len(text) - (keep - head):]


#: Pixel size of plot titles at :data:`FONTSCALE` (HoloViews' 12 pt title, scaled).
_TITLE_FONT_PX = 12 * FONTSCALE * 4 / 3
#: Pixels of a fixed-width plot's width that its title cannot use (it starts above the frame,
#: right of the y axis, and may run to the plot's right edge), measured in Chromium.
_TITLE_INSET = 65
#: Advance widths in em of Liberation Sans Bold (metric twin of Arial/Helvetica, bokeh's
#: "helvetica" on Linux); characters not listed count 1 em (wide symbols, other scripts).
_EM = {}
for _chars, _w in ((" ,.'|ijlI", 0.278), (":;!-ft()[]/\\", 0.333), ("r{}*`", 0.389), ('z"^', 0.5),
                   ("acekvsxy0123456789$_?#J", 0.556), ("+<>=~", 0.584), ("bdghnopquLTFZ", 0.611),
                   ("SEPVXY", 0.667), ("ABCDHNRUK&", 0.722), ("GOQw", 0.778), ("M", 0.833),
                   ("m%", 0.889), ("W", 0.944), ("@", 0.975)):
    _EM.update(dict.fromkeys(_chars, _w))


def _em(c: str) -> float:
    w = _EM.get(c)
    if w is not None:
        return w
    o = ord(c)
    if 0x370 <= o <= 0x3FF or 0xC0 <= o <= 0x24F:  # Greek, accented Latin
        return 0.667
    if 0x2070 <= o <= 0x209F:  # super- and subscripts
        return 0.5
    return 1.0


def text_width_px(text: str, font_px: float) -> float:
    """Estimated width in pixels of ``text`` drawn at ``font_px`` in bokeh's sans-serif (bold
    widths, so regular text is a little overestimated: a label's box, a title's room)."""
    return float(sum(_em(c) for c in str(text))) * font_px + 2.0


def fit_title(title: str, width: int | None = None) -> str:
    """``title`` shortened in the middle (:func:`short_text`) to fit a plot ``width`` pixels wide.

    Without a width (a responsive plot) titles are kept up to :data:`TITLE_MAX` characters.
    A fitted title keeps at least 24 characters.
    """
    title = str(title)
    if width is None:
        return short_text(title, TITLE_MAX)
    room = float(width) - _TITLE_INSET
    limit = len(title)
    out = title
    while limit > 24 and text_width_px(out, _TITLE_FONT_PX) > room:
        limit -= 1
        out = short_text(title, limit)
    return out


#: Pixels of a fixed-size plot's width and height outside its data frame: the axes, the title and
#: the toolbar on the right (measured in Chromium).
_FRAME_INSET = (100.0, 95.0)


def frame_px(geo: dict) -> tuple[float, float]:
    """Approximate pixel width and height of the data frame of a plot sized by :func:`square`.

    The plot's width and height include the axes, the title and the toolbar (:data:`_FRAME_INSET`).
    """
    return float(geo["width"]) - _FRAME_INSET[0], float(geo["height"]) - _FRAME_INSET[1]


#: Where a label can go around its point: (text_align, text_baseline, sign of x, sign of y on
#: screen), in order of preference (above right first: the label reads from its point).  The two
#: sides (a label level with its point, ``gap`` pixels right or left of its centre) only serve
#: markers whose radius is within the gap: a star's arms would run into them.
_CORNERS = (("left", "bottom", 1, -1), ("right", "bottom", -1, -1), ("left", "top", 1, 1), ("right", "top", -1, 1))
_SIDES = (("left", "middle", 1, 0), ("right", "middle", -1, 0))
#: Pixels kept free around each label: two labels closer than this read as one ("267 305").
LABEL_MARGIN = 4.0
#: Passes of :func:`label_layout` that place every label again, now that all the others are placed.
_LAYOUT_PASSES = 6
#: Pixels by which a label is nearer its own point (or the end of its leader line) than any other
#: point at the least: closer than this, a reader at the back of a hall may take it for the other's.
LABEL_CLEAR = 4.0
#: Cost of taking a label away from its point (and 6 per pixel of its leader line), against 40 per
#: square pixel on another label (kept LABEL_MARGIN apart), 100 per square pixel on another marker,
#: 600 per leader line crossed, 400 per eighth of its line passing over another marker,
#: and 60 per square pixel that another point comes nearer than the label's own point plus
#: :data:`LABEL_CLEAR` and 3 px to spare (a label 8.2 px from Monaco and 8.5 px from its own point,
#: Andorra la Vella, cost 30 per pixel before, less than any leader line).
_LEADER_COST = 150.0
#: Lengths in pixels of the leader lines tried (to the label's anchor, from the point's centre),
#: shortest first: a label goes only as far out as it must.
_LEADER_LENGTHS = (13.0, 18.0, 24.0, 31.0, 39.0, 48.0)
#: Pixels of a leader line shown at the least, beyond its marker's edge (a star's label on a line
#: 13 px from its centre had 2 px of line: none to see).
_LEADER_SHOWN = 5.0
#: Cost of each 3 px of a drawn line (``lines`` of :func:`label_layout`) under a label: a label on the
#: Sample step's example lines hid which item each line ends at; less than a short leader line.
_ON_LINE_COST = 25.0
#: Layouts :func:`point_labels` tries with ``thin``, each without the labels the last one left unclear.
_THIN_ROUNDS = 4
#: Directions of the leader lines tried: every 22.5 degrees around the point.
_LEADER_ANGLES = np.arange(16) * np.pi / 8


def _far_anchors(radius: float):
    """Places further out for a label that has no room beside its point, joined to it by a leader
    line: (text_align, text_baseline, x, y) with the label's anchor x, y pixels from the point,
    the label on the far side of its anchor (its line does not run under it).  ``radius`` is the
    point's marker's: the line starts a pixel off its edge and shows at least :data:`_LEADER_SHOWN`."""
    out = []
    for a in [a for a in _LEADER_LENGTHS if a >= radius + 1 + _LEADER_SHOWN]:
        for t in _LEADER_ANGLES:
            c, s = float(np.cos(t)), float(np.sin(t))  # s > 0: down on screen
            tb = "bottom" if s < -0.3 else "top" if s > 0.3 else "middle"
            aligns = ("left",) if c > 0.3 else ("right",) if c < -0.3 else ("left", "right")
            for ta in aligns:
                out.append((ta, tb, round(c * a, 3), round(s * a, 3)))
    return out


def label_layout(xy: np.ndarray, texts, *, xlim, ylim, frame, font_px: float = LABEL_PT * 4 / 3,
                 radius=5.0, gap: float = LABEL_GAP, leaders: bool = False, shown=None, lines=None):
    """Choose a corner for each point's label: clear of the markers, of the other labels,
    nearer its own point than any other labelled point, and inside the plot's frame.

    Each label goes to the corner (above/below, right/left of its point, ``gap`` pixels off
    it; or level with a small point, on its right or left) with the least cost: area outside
    the frame, then area on the other labels (each kept :data:`LABEL_MARGIN` pixels free) and
    on the other markers, then closeness to another labelled point (a label halfway between
    two points names either).  With ``leaders``, a label with no room beside its point may go
    further out (a leader line joins them).  The labels are placed greedily in the order given
    (put the most important first), then each is placed again among all the others a few times;
    the same from the most crowded label on, and the layout of the lower total cost is kept.

    Parameters
    ----------
    xy : ndarray of shape (k, 2)
        The labelled points, in data coordinates.
    texts : sequence of str
    xlim, ylim : (float, float)
        The plot's ranges.
    frame : (float, float)
        Width and height of the plot's frame in pixels (:func:`frame_px`).
    radius : float or sequence of float
        Radius in pixels of each point's marker (an obstacle for every label).
    leaders : bool
        Also return how far out each label's anchor is, and which labels are unclear.
    shown : ndarray of bool of shape (k,), optional
        The points whose labels are placed; the others are obstacles only (their markers, and
        their nearness: a label must be clearly nearer its own point than theirs). Default: all.
    lines : ndarray of shape (s, 4), optional
        Segments ``x0, y0, x1, y1`` drawn on the plot (data coordinates): a label avoids lying on them.

    Returns
    -------
    align, baseline : list of str
        Bokeh ``text_align`` and ``text_baseline`` of each label (its box then sits ``gap``
        pixels from its anchor, on the chosen side, with bokeh's text ``padding=gap``).
    shift : ndarray of shape (k, 2)
        Only with ``leaders``: each label's anchor in screen pixels from its point (x right,
        y down; zero for a label beside its point).
    unclear : ndarray of bool of shape (k,)
        Only with ``leaders``: the placed labels a reader could misread, as placed: less than
        :data:`LABEL_CLEAR` pixels nearer their own point (or the end of their leader line)
        than another point, on another marker, within a pixel of a label placed before them
        (in the order given), or with a leader line over another marker.
    """
    xy = np.asarray(xy, dtype=float).reshape(-1, 2)
    k = xy.shape[0]
    if k == 0:
        return ([], [], np.zeros((0, 2)), np.zeros(0, bool)) if leaders else ([], [])
    shown = np.ones(k, bool) if shown is None else np.asarray(shown, bool)
    W, H = (float(v) for v in frame)
    x0, x1 = (float(v) for v in xlim)
    y0, y1 = (float(v) for v in ylim)
    sx = (xy[:, 0] - x0) / ((x1 - x0) or 1.0) * W
    sy = (y1 - xy[:, 1]) / ((y1 - y0) or 1.0) * H
    r = np.broadcast_to(np.asarray(radius, dtype=float), (k,))
    h = 1.15 * font_px
    m = LABEL_MARGIN
    on_lines = np.zeros((0, 2))  # points every 3 px or so along the lines drawn, in screen pixels
    if lines is not None and len(lines):
        seg = np.asarray(lines, dtype=float).reshape(-1, 4)
        a = np.column_stack([(seg[:, 0] - x0) / ((x1 - x0) or 1.0) * W, (y1 - seg[:, 1]) / ((y1 - y0) or 1.0) * H])
        b = np.column_stack([(seg[:, 2] - x0) / ((x1 - x0) or 1.0) * W, (y1 - seg[:, 3]) / ((y1 - y0) or 1.0) * H])
        steps = int(np.clip(np.hypot(*(b - a).T).max() / 3.0, 2, 200))
        t = np.linspace(0.0, 1.0, steps)[None, :, None]
        on_lines = (a[:, None, :] + t * (b - a)[:, None, :]).reshape(-1, 2)
    # every candidate place of every label: its box, its cost alone (outside the frame, closeness
    # to another labelled point, the leader's length), points along its leader line and its ends
    cand_meta, cand_box, cand_base, cand_line, cand_ends = [], [], [], [], []
    for i in range(k):
        w = text_width_px(texts[i], font_px)
        near_ones = [(ta, tb, 0.0, 0.0) for ta, tb, _, _ in _CORNERS + (_SIDES if r[i] <= gap + 1 else ())]
        meta = near_ones + (_far_anchors(r[i]) if leaders else [])
        ax = np.array([c[2] for c in meta])
        ay = np.array([c[3] for c in meta])
        cx, cy = sx[i] + ax, sy[i] + ay  # the anchors
        left = np.where([c[0] == "left" for c in meta], cx + gap, cx - gap - w)
        top = np.select([[c[1] == "top" for c in meta], [c[1] == "bottom" for c in meta]],
                        [cy + gap, cy - gap - h], cy - h / 2)
        box = np.column_stack([left, top, left + w, top + h])
        inside = (np.clip(np.minimum(box[:, 2], W - 2) - np.maximum(box[:, 0], 2), 0, None)
                  * np.clip(np.minimum(box[:, 3], H - 2) - np.maximum(box[:, 1], 2), 0, None))
        length = np.hypot(ax, ay)
        # the label's distance to every labelled point; a label taken out is read from the end of its line
        dx = np.maximum(np.maximum(box[:, 0, None] - sx, sx - box[:, 2, None]), 0.0)
        dy = np.maximum(np.maximum(box[:, 1, None] - sy, sy - box[:, 3, None]), 0.0)
        dist = np.hypot(dx, dy)
        to_anchor = np.hypot(np.maximum(np.maximum(box[:, 0] - cx, cx - box[:, 2]), 0.0),
                             np.maximum(np.maximum(box[:, 1] - cy, cy - box[:, 3]), 0.0))
        own = np.where(length > 0, to_anchor, dist[:, i])
        dist[:, i] = np.inf
        ambiguous = (np.clip(own + LABEL_CLEAR + 3.0 - dist.min(axis=1), 0, None) if k > 1
                     else np.zeros(len(meta)))
        crossed = ((on_lines[:, None, 0] > box[:, 0]) & (on_lines[:, None, 0] < box[:, 2])
                   & (on_lines[:, None, 1] > box[:, 1]) & (on_lines[:, None, 1] < box[:, 3])).sum(axis=0)
        base = (1e3 * (w * h - inside) + 60.0 * ambiguous ** 2 + 0.01 * np.arange(len(meta))
                + np.where(length > 0, _LEADER_COST + 6.0 * length, 0.0) + _ON_LINE_COST * crossed)
        # points along the leader line from the marker's edge, NaN where there is no line
        t = np.linspace(0.0, 1.0, 8)[None, :]
        t0 = np.minimum(1.0, (r[i] + 1) / np.where(length > 0, length, 1.0))[:, None]
        tt = t0 + (1 - t0) * t
        line = np.stack([sx[i] + tt * ax[:, None], sy[i] + tt * ay[:, None]], axis=-1)
        line[length == 0] = np.nan
        ends = np.column_stack([np.full(len(meta), sx[i]), np.full(len(meta), sy[i]), cx, cy])
        ends[length == 0] = np.nan
        cand_meta.append(meta)
        cand_box.append(box)
        cand_base.append(base)
        cand_line.append(line)
        cand_ends.append(ends)
    # markers whole (a label anywhere on another marker hides it), and a little wider for leader lines
    # (a line passing this close to another marker seems to start there)
    discs = np.column_stack([sx - r - 1, sy - r - 1, sx + r + 1, sy + r + 1])
    wide = discs + np.array([-3.0, -3.0, 3.0, 3.0])

    def overlap(boxes, others, margin=0.0):
        """Area of each of ``boxes`` (C, 4) on the boxes ``others`` (P, 4), kept ``margin`` apart."""
        w = np.clip(np.minimum(boxes[:, None, 2] + margin, others[None, :, 2])
                    - np.maximum(boxes[:, None, 0] - margin, others[None, :, 0]), 0, None)
        v = np.clip(np.minimum(boxes[:, None, 3] + margin, others[None, :, 3])
                    - np.maximum(boxes[:, None, 1] - margin, others[None, :, 1]), 0, None)
        return np.nansum(w * v, axis=1)

    def inside(points, boxes):
        """How many of ``points`` (..., 2) fall in any of ``boxes`` (P, 4), per leading index."""
        p = points[..., None, :]
        hit = ((p[..., 0] > boxes[:, 0]) & (p[..., 0] < boxes[:, 2]) & (p[..., 1] > boxes[:, 1])
               & (p[..., 1] < boxes[:, 3]))
        return hit.reshape(hit.shape[0], -1).sum(axis=1)

    def crossing(ends, segs):
        """How many of the segments ``segs`` (S, 4) each of ``ends`` (C, 4) crosses."""
        def side(a, b, p):
            return np.sign((b[..., 0] - a[..., 0]) * (p[..., 1] - a[..., 1])
                           - (b[..., 1] - a[..., 1]) * (p[..., 0] - a[..., 0]))

        e, q = ends[:, None, :], segs[None, :, :]
        d1 = side(q[..., 0:2], q[..., 2:4], e[..., 0:2])
        d2 = side(q[..., 0:2], q[..., 2:4], e[..., 2:4])
        d3 = side(e[..., 0:2], e[..., 2:4], q[..., 0:2])
        d4 = side(e[..., 0:2], e[..., 2:4], q[..., 2:4])
        return ((d1 * d2 < 0) & (d3 * d4 < 0)).sum(axis=1)

    sel = np.full(k, -1)
    chosen_box = np.full((k, 4), np.nan)
    chosen_line = np.full((k, 8, 2), np.nan)
    chosen_ends = np.full((k, 4), np.nan)
    everyone = np.arange(k)

    def covered(points, boxes):
        """How many of ``points`` (Q, 2) each of ``boxes`` (C, 4) covers."""
        p = points[:, None, :]
        return ((p[..., 0] > boxes[:, 0]) & (p[..., 0] < boxes[:, 2]) & (p[..., 1] > boxes[:, 1])
                & (p[..., 1] < boxes[:, 3])).sum(axis=0)

    def costs(i):
        """The cost of each place of label ``i`` among the other labels as placed now."""
        rest = (everyone != i) & (sel >= 0)
        placed, lines, segs = chosen_box[rest], chosen_line[rest].reshape(-1, 2), chosen_ends[rest]
        segs = segs[~np.isnan(segs[:, 0])]
        lines = lines[~np.isnan(lines[:, 0])]
        box, line, mine = cand_box[i], cand_line[i], everyone != i
        return (cand_base[i] + 40.0 * overlap(box, placed, m) + 100.0 * overlap(box, discs[mine])
                + 600.0 * crossing(cand_ends[i], segs) + 60.0 * inside(line, placed)
                + 400.0 * inside(line, wide[mine])
                + 60.0 * covered(lines, box))

    def place(i):
        c = int(np.argmin(costs(i)))
        sel[i] = c
        chosen_box[i], chosen_line[i], chosen_ends[i] = cand_box[i][c], cand_line[i][c], cand_ends[i][c]

    # greedily in the order given, then in the order of the most crowded first; each label then placed
    # again among all the others a few times; the layout of the lower total cost is kept
    crowd = np.hypot(sx[:, None] - sx[None, :], sy[:, None] - sy[None, :]) < 4 * h
    best = None
    for order in (everyone[shown], np.argsort(-crowd.sum(axis=1), kind="stable")):
        order = order[shown[order]]
        sel[:] = -1
        chosen_box[:], chosen_line[:], chosen_ends[:] = np.nan, np.nan, np.nan
        for _ in range(1 + (_LAYOUT_PASSES if k > 1 else 0)):
            before = sel.copy()
            for i in order:
                place(i)
            if (sel == before).all():
                break
        total = sum(float(costs(i)[sel[i]]) for i in order)
        if best is None or total < best[0]:
            best = (total, sel.copy())
        if k < 3:
            break
    picked = [cand_meta[i][max(c, 0)] for i, c in enumerate(best[1])]
    align, baseline = [c[0] for c in picked], [c[1] for c in picked]
    if not leaders:
        return align, baseline
    unclear = np.zeros(k, bool)
    boxes = np.array([cand_box[i][max(c, 0)] for i, c in enumerate(best[1])])
    for i in np.flatnonzero(shown):
        b, (ax, ay) = boxes[i], picked[i][2:]
        dist = np.hypot(np.maximum(np.maximum(b[0] - sx, sx - b[2]), 0),
                        np.maximum(np.maximum(b[1] - sy, sy - b[3]), 0))
        cx, cy = sx[i] + ax, sy[i] + ay
        own = np.hypot(max(b[0] - cx, cx - b[2], 0), max(b[1] - cy, cy - b[3], 0))
        dist[i] = np.inf
        before = boxes[np.flatnonzero(shown[:i])]
        apart = np.maximum.reduce([before[:, 0] - b[2], b[0] - before[:, 2], before[:, 1] - b[3], b[1] - before[:, 3]])
        unclear[i] = (dist < own + LABEL_CLEAR).any() or (dist < r + 1).any() or (apart < 1).any()
        if ax or ay:  # its leader line, from a pixel off its marker's edge to its anchor
            length = np.hypot(ax, ay)
            p0 = np.array([sx[i], sy[i]]) + np.array([ax, ay]) * (r[i] + 1) / length
            seg, q = np.array([cx, cy]) - p0, np.column_stack([sx, sy]) - p0
            t = np.clip(q @ seg / (seg @ seg), 0, 1)
            near = np.hypot(*(q - t[:, None] * seg).T)
            near[i] = np.inf
            unclear[i] |= (near < r).any()
    return align, baseline, np.array([[c[2], c[3]] for c in picked], dtype=float), unclear


def _label_glyph(plot, element) -> None:
    """Plot hook of :func:`point_labels`: the labels' boxes ``LABEL_GAP`` pixels off their points,
    aligned by the data columns ``text_align`` and ``text_baseline``.

    HoloViews turns a style column with one value into that value; the columns are put back
    so the labels' data always has the same columns (:class:`LiveEmbedding` patches them).
    """
    from bokeh.core.properties import field

    glyph = plot.handles.get("glyph")
    renderer = plot.handles.get("glyph_renderer")
    if glyph is None or not hasattr(glyph, "padding"):
        return
    glyph.padding = LABEL_GAP
    data = renderer.data_source.data if renderer is not None else None
    if not data:
        return
    n = len(next(iter(data.values())))
    for prop in ("text_align", "text_baseline"):
        spec = getattr(glyph, prop)
        if getattr(spec, "field", None) is None:  # one value for every label
            data[prop] = np.array([getattr(spec, "value", spec)] * n, dtype=object)
            setattr(glyph, prop, field(prop))
    # the labelled point of each label (the label's own x, y: its anchor, off the point when a
    # leader line joins them), for checks of the layout in the browser
    names = [d.name for d in element.vdims]
    if "px" in names and "py" in names and len(element) == n:
        data["px"] = np.asarray(element.dimension_values("px"), dtype=float)
        data["py"] = np.asarray(element.dimension_values("py"), dtype=float)


#: Style of the leader lines joining a label taken further out to its point: dotted, thin and in the
#: labels' near-black, unlike any line that shows data (the Sample step's examples are solid green and
#: dashed red, 3 to 4 px wide; a solid grey leader read as one more of them).
LEADER_COLOR = LANDMARK_COLOR
LEADER_DASH = "dotted"
LEADER_WIDTH = 1.5
#: Name of the bokeh renderer of a plot's leader lines (for checks of the plots).
LEADER_NAME = "leader_lines"


def _leader_renderer(plot, element) -> None:
    """Plot hook of the leader lines: their renderer named :data:`LEADER_NAME`."""
    renderer = plot.handles.get("glyph_renderer")
    if renderer is not None:
        renderer.name = LEADER_NAME


def point_labels(xy: np.ndarray, texts, *, geo: dict | None = None, radius=5.0, font_size: int = LABEL_PT,
                 color: str = LANDMARK_COLOR, hooks=(), frame: tuple[float, float] | None = None,
                 thin: bool = False, lines=None):
    """Labels beside points (never on them), placed by :func:`label_layout`.

    Each label sits off a corner of its point by :data:`LABEL_GAP` screen pixels (whatever
    the zoom), on the side with room: clear of the other markers and labels and inside the
    frame, so a point at the right edge gets its label on its left.  In a crowd, a label with
    no room beside its point goes a little further out, joined to it by a thin dotted leader line.
    A white halo keeps the labels legible over points and lines.

    Parameters
    ----------
    xy : ndarray of shape (k, 2)
    texts : sequence of str
        Plain text (drawn on the canvas, never interpreted).
    geo : dict, optional
        The plot's :func:`square` options (ranges and size); without them every label goes
        above right of its point.
    radius : float or sequence of float
        Marker radius of each point in pixels (half its ``size``).
    frame : (float, float), optional
        The frame's width and height in pixels, when known better than :func:`frame_px`'s estimate.
    thin : bool
        Leave out the labels that no place makes clear (see ``unclear`` of :func:`label_layout`),
        fewest first: the ones the last layout found unclear are dropped and the rest placed again,
        up to :data:`_THIN_ROUNDS` times. Returns ``(overlay, hidden)`` then, ``hidden`` the
        positions of the points left without a label (name them elsewhere: a hover tooltip).
    lines : ndarray of shape (s, 4), optional
        Segments drawn on the plot, which the labels avoid (see :func:`label_layout`).
    """
    xy = np.asarray(xy, dtype=float).reshape(-1, 2)
    texts = [str(t) for t in texts]
    font_px = font_size * 4 / 3
    k = len(texts)
    anchor, shown = xy.copy(), np.ones(k, bool)
    if geo is not None:
        frame = frame or frame_px(geo)
        for _ in range(_THIN_ROUNDS if thin else 1):
            align, baseline, shift, unclear = label_layout(xy, texts, xlim=geo["xlim"], ylim=geo["ylim"], frame=frame,
                                                           font_px=font_px, radius=radius, leaders=True, shown=shown,
                                                           lines=lines)
            if not thin or not unclear.any():
                break
            shown &= ~unclear
        # the anchors of labels taken further out, in data units (a leader line joins them to their point)
        per_px = np.array([(geo["xlim"][1] - geo["xlim"][0]) / frame[0], -(geo["ylim"][1] - geo["ylim"][0]) / frame[1]])
        anchor = xy + shift * per_px
    else:
        align, baseline, shift = ["left"] * k, ["bottom"] * k, np.zeros((k, 2))
    hidden = np.flatnonzero(~shown)
    if hidden.size:
        xy, anchor, shift, texts = xy[shown], anchor[shown], shift[shown], [t for t, v in zip(texts, shown) if v]
        align, baseline = [a for a, v in zip(align, shown) if v], [b for b, v in zip(baseline, shown) if v]
        radius = np.broadcast_to(np.asarray(radius, dtype=float), (k,))[shown]
        k = len(texts)
    df = pd.DataFrame({"x": anchor[:, 0], "y": anchor[:, 1], "label": texts, "ta": align, "tb": baseline,
                       "px": xy[:, 0], "py": xy[:, 1]})
    out = _haloed(hv.Labels(df, ["x", "y"], ["label", "ta", "tb", "px", "py"]), f"{font_size}pt", color,
                  list(hooks))
    far = np.hypot(shift[:, 0], shift[:, 1]) > 0
    if far.any():
        # from the edge of the point's marker to the label's anchor
        r = np.broadcast_to(np.asarray(radius, dtype=float), (k,))[far]
        length = np.hypot(shift[far, 0], shift[far, 1])
        start = xy[far] + shift[far] * ((r + 1) / length)[:, None] * per_px
        lines = pd.DataFrame({"x0": start[:, 0], "y0": start[:, 1], "x1": anchor[far, 0], "y1": anchor[far, 1]})
        out = hv.Segments(lines, ["x0", "y0", "x1", "y1"]).opts(
            color=LEADER_COLOR, line_width=LEADER_WIDTH, line_dash=LEADER_DASH, hooks=[_leader_renderer]) * out
    return (out, hidden) if thin else out


#: Style of point labels: alignment from the layout's columns, a white halo for legibility.
_LABEL_STYLE = dict(text_align="ta", text_baseline="tb")
#: The halo under labels: the same text in white with a broad white outline (an outline on the
#: label itself would be drawn over its letters).
_HALO_STYLE = dict(text_color="white", text_outline_color="white", text_outline_width=4, text_alpha=0.85)


def _haloed(labels, font_size: str, color: str, hooks=(), halo_hooks=()):
    """``labels`` drawn over a white halo of themselves (legible over points and lines)."""
    halo = labels.clone().opts(**_LABEL_STYLE, **_HALO_STYLE, text_font_size=font_size,
                               hooks=[_label_glyph, *halo_hooks])
    text = labels.opts(**_LABEL_STYLE, text_color=color, text_font_size=font_size, hooks=[_label_glyph, *hooks])
    return halo * text


def _labels_inside(plot, element) -> None:
    """Plot hook (every figure, :func:`base_opts`): left-aligned text labels that would run
    past the right edge of a fixed-size frame end at their point instead.

    Only labels with one fixed ``text_align="left"`` are touched (the ones of
    :func:`point_labels` are placed already), and only in figures with a fixed width and
    explicit x range (:func:`square`): that is where the frame's pixels are known.
    """
    fig = getattr(plot, "state", None)
    renderers = getattr(fig, "renderers", None)
    width = getattr(fig, "width", None)
    xr = getattr(fig, "x_range", None)
    start, end = getattr(xr, "start", None), getattr(xr, "end", None)
    if not renderers or not width or not all(isinstance(v, (int, float)) for v in (start, end)) or end <= start:
        return
    from bokeh.models import GlyphRenderer, Text

    frame_w = float(width) - _FRAME_INSET[0]
    for r in renderers:
        glyph = getattr(r, "glyph", None)
        if not isinstance(r, GlyphRenderer) or not isinstance(glyph, Text):
            continue
        if getattr(glyph.text_align, "value", glyph.text_align) != "left":  # a field: placed already
            continue
        data = r.data_source.data
        xf, tf = getattr(glyph.x, "field", glyph.x), getattr(glyph.text, "field", glyph.text)
        if not isinstance(xf, str) or not isinstance(tf, str) or xf not in data or tf not in data:
            continue
        size = str(getattr(glyph.text_font_size, "value", glyph.text_font_size) or "")
        try:
            font_px = float(size[:-2]) * (4 / 3 if size.endswith("pt") else 1.0) if size.endswith(("pt", "px")) else 16.0
        except ValueError:
            font_px = 16.0
        sx = (np.asarray(data[xf], dtype=float) - start) / (end - start) * frame_w
        widths = np.array([text_width_px(t, font_px) for t in data[tf]])
        over = sx + widths > frame_w - 2
        if over.any():
            from bokeh.core.properties import field

            data["text_align"] = np.where(over, "right", "left").astype(object)
            glyph.text_align = field("text_align")


def log_ticks(values) -> list:
    """Ticks at 1, 2 and 5 times every power of ten that the positive ``values`` span.

    Bokeh's log axis labels only the decades, so a range inside one decade (errors between
    0.04 and 0.5) shows one label or none; these ticks label every decade shown and the
    1-2-5 steps between.
    """
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    if v.size == 0:
        return []
    lo, hi = np.floor(np.log10(v.min())), np.ceil(np.log10(v.max()))
    ticks = [m * 10.0 ** e for e in range(int(lo), int(hi) + 1) for m in (1, 2, 5)]
    lo_v, hi_v = v.min() / 1.25, v.max() * 1.25
    inside = [t for t in ticks if lo_v <= t <= hi_v]
    return [(t, f"{t:g}") for t in inside]


def wrap(*objs, **kw):
    """Plots side by side that wrap onto the next line when the page is narrow (no clipping)."""
    import panel as pn  # plots are only built by the Panel views

    return pn.FlexBox(*objs, flex_wrap="wrap", align_items="flex-start", sizing_mode="stretch_width", **kw)


def square(*xys: np.ndarray, size: int = SQUARE) -> dict:
    """Options for a square frame whose x and y ranges have the same span (equal aspect).

    The ranges cover every array in ``xys`` with a 5 % margin; a fixed square frame
    keeps distances undistorted without bokeh's aspect matching.
    """
    pts = np.vstack([np.asarray(a, dtype=float).reshape(-1, 2) for a in xys if np.size(a)])
    lo, hi = np.nanmin(pts, axis=0), np.nanmax(pts, axis=0)
    c = (lo + hi) / 2
    half = 0.55 * float(max(hi - lo)) or 1.0
    # width/height include the axes and the title (bokeh's frame_width/frame_height break
    # inside Panel's stretching layouts); the extra pixels approximate those decorations
    return dict(responsive=False, width=size + 75, height=size + 95,
                xlim=(c[0] - half, c[0] + half), ylim=(c[1] - half, c[1] + half))


def framed(*xys: np.ndarray, frame: tuple[int, int], border: tuple[int, int, int, int] = (95, 45, 40, 60)) -> dict:
    """Options for a frame of exactly ``frame`` pixels (width, height) whose x and y ranges have
    the same scale (equal aspect), covering every array in ``xys`` with a 5 % margin.

    The plot keeps ``border`` pixels (left, right, top, bottom) for its axes, title and toolbar
    (bokeh's ``min_border_*``): as long as they need no more, the frame is ``frame`` exactly, so
    labels placed for it land where they were placed.  Pass ``frame`` to :func:`point_labels`.
    """
    pts = np.vstack([np.asarray(a, dtype=float).reshape(-1, 2) for a in xys if np.size(a)])
    lo, hi = np.nanmin(pts, axis=0), np.nanmax(pts, axis=0)
    c = (lo + hi) / 2
    fw, fh = (float(v) for v in frame)
    per_px = 1.1 * float(max((hi - lo)[0] / fw, (hi - lo)[1] / fh)) or 1.0 / fw
    left, right, top, bottom = border
    return dict(responsive=False, width=int(fw) + left + right, height=int(fh) + top + bottom,
                xlim=(c[0] - per_px * fw / 2, c[0] + per_px * fw / 2),
                ylim=(c[1] - per_px * fh / 2, c[1] + per_px * fh / 2),
                backend_opts={"plot.min_border_left": left, "plot.min_border_right": right,
                              "plot.min_border_top": top, "plot.min_border_bottom": bottom})


def tick_decimals(lo: float, hi: float) -> int:
    """The decimals that the ticks of a range ``[lo, hi]`` need at the least (one more than its order).

    Bokeh's ticks are 1, 2 or 5 times a power of ten, about a sixth of the span apart, so
    one decimal more than the span's order of magnitude shows them all. Labels of one
    width keep the axes' size when a new result of the same scale comes: bokeh lays a
    plot out again whenever an axis's labels change width (about 0.1 s of the page's
    time for the Embedding step's three plots, e.g. "2" after "2.5").
    """
    span = float(hi) - float(lo)
    if not np.isfinite(span) or span <= 0:
        return 1
    return max(0, 1 - int(np.floor(np.log10(span))))


# Labels with at least ``base`` decimals, and as many as the ticks' spacing needs once the
# plot is zoomed in (then a zoom, not a new result, changes their width).
_TICK_JS = """
const step = ticks.length > 1 ? Math.abs(ticks[1] - ticks[0]) : 1;
const need = step > 0 ? -Math.floor(Math.log10(step) + 1e-9) : 0;
// a minus sign, as bokeh's own tick labels have (an ASCII hyphen beside them looked like another style)
return tick.toFixed(Math.min(Math.max(base, need), 20)).replace("-", "\u2212");
"""


def _set_tick_decimals(fig, decimals: int) -> None:
    """Give the axes of a bokeh figure labels with at least ``decimals`` decimals (see :func:`tick_decimals`)."""
    from bokeh.models import CustomJSTickFormatter

    for axis in list(fig.xaxis) + list(fig.yaxis):
        f = axis.formatter
        if isinstance(f, CustomJSTickFormatter) and f.code == _TICK_JS:
            if f.args.get("base") != decimals:
                f.args = {"base": decimals}
        else:
            axis.formatter = CustomJSTickFormatter(code=_TICK_JS, args={"base": decimals})


def subsample(n: int, k: int, seed: int = 0) -> np.ndarray:
    """Sorted indices of a seeded subsample of ``k`` of ``n`` items (all when ``n <= k``)."""
    if n <= k:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, k, replace=False))


def _color_bins(hue_lightness: np.ndarray, n_hue: int = 16, n_light: int = 4):
    """Bin colours so datashader can blend them per pixel; returns (category strings, colour key)."""
    h = np.mod(hue_lightness[:, 0], 1.0)
    light = hue_lightness[:, 1]
    hb = np.floor(h * n_hue).astype(int) % n_hue
    lo, hi = 0.35, 0.78
    lb = np.clip(np.floor((light - lo) / (hi - lo + 1e-9) * n_light).astype(int), 0, n_light - 1)
    code = hb * n_light + lb
    hc = (np.arange(n_hue) + 0.5) / n_hue
    lc = lo + (np.arange(n_light) + 0.5) / n_light * (hi - lo)
    H, L = np.meshgrid(hc, lc, indexing="ij")
    hexes = rgb_to_hex(hsl_to_rgb(H.ravel(), 0.8, L.ravel()))
    names = [f"c{i:02d}" for i in range(n_hue * n_light)]
    cats = pd.Categorical([names[c] for c in code], categories=names)
    return cats, dict(zip(names, hexes))


def marker_size(n: int) -> float:
    """Default marker size of a scatter of ``n`` points (smaller for more points)."""
    return float(np.clip(14 - 2.2 * np.log10(max(n, 1)), 3, 10))


def scatter(xy: np.ndarray, colors, *, hue_lightness: np.ndarray | None = None, title: str = "",
            xlabel: str = "x", ylabel: str = "y", size: float | None = None, extra: dict | None = None,
            equal: bool = True, raster_above: int = RASTER_ABOVE, alpha: float = 0.9,
            square_size: int = SQUARE):
    """Points coloured by position, rasterised when there are many.

    Parameters
    ----------
    xy : ndarray of shape (n, 2)
    colors : sequence of str
        One hex colour per point.
    hue_lightness : ndarray of shape (n, 2), optional
        Needed to keep the colours when rasterising.
    title, xlabel, ylabel : str
    size : float, optional
        Marker size (default shrinks with n).
    extra : dict of str -> array, optional
        More columns for the hover tool.
    equal : bool
        Equal aspect (data_aspect=1).
    """
    n = xy.shape[0]
    df = pd.DataFrame({"x": xy[:, 0], "y": xy[:, 1], "color": np.asarray(colors, dtype=object),
                       "item": np.arange(n)})
    for k, v in (extra or {}).items():
        df[k] = v
    kd = [hv.Dimension("x", label=xlabel), hv.Dimension("y", label=ylabel)]
    ds_ops = _datashader() if n > raster_above and hue_lightness is not None else None
    if ds_ops is not None:
        dsh, datashade, dynspread = ds_ops
        cats, key = _color_bins(hue_lightness)
        df["cbin"] = cats
        pts = hv.Points(df, kd, ["cbin"])
        shaded = dynspread(datashade(pts, aggregator=dsh.by("cbin", dsh.count()), color_key=key,
                                     min_alpha=120), threshold=0.6, max_px=3)
        geo = square(xy) if equal else {}
        return shaded.opts(**base_opts(title=f"{title} (rasterised: {n:,} points)", **geo))
    if n > DECIMATE_ABOVE:  # decimate (also the fallback without datashader)
        idx = subsample(n, DECIMATE_ABOVE)
        df = df.iloc[idx]
        title = f"{title} (showing {len(idx):,} of {n:,})"
    if size is None:
        size = marker_size(n)
    if hue_lightness is not None:  # numeric colour index: much faster than colour strings
        cidx, palette = quantized(np.asarray(hue_lightness)[df.index.to_numpy()])
        df = df.drop(columns="color").assign(cidx=cidx)
        pts = hv.Points(df, kd, ["cidx", "item"] + list((extra or {}).keys()))
        opts = dict(title=title, color="cidx", cmap=palette, clim=(-0.5, len(palette) - 0.5), colorbar=False,
                    size=size, alpha=alpha, line_color=None,
                    tools=["hover", "save", "box_select", "lasso_select", "tap"])
    else:
        pts = hv.Points(df, kd, ["color", "item"] + list((extra or {}).keys()))
        opts = dict(title=title, color="color", size=size, alpha=alpha, line_color=None,
                    tools=["hover", "save", "box_select", "lasso_select", "tap"])
    if equal:
        opts.update(square(xy, size=square_size))
    return pts.opts(**base_opts(**opts))


#: Marker size of landmark stars (:func:`landmark_marks`).
STAR_SIZE = 20


def landmark_marks(xy: np.ndarray, labels=None, *, highlight: int | None = None, size: float = STAR_SIZE,
                   geo: dict | None = None, text: bool = True):
    """Landmarks as black-rimmed stars with their name ("L0", "L1", …) written beside them.

    ``geo`` (the plot's :func:`square` options) lets the names go where they have room
    (:func:`point_labels`); ``text=False`` draws the stars only (the caller labels them).
    """
    xy = np.asarray(xy, dtype=float).reshape(-1, 2)
    l = xy.shape[0]
    labels = list(range(l)) if labels is None else list(labels)
    df = pd.DataFrame({"x": xy[:, 0], "y": xy[:, 1], "landmark": [f"L{c}" for c in range(l)],
                       "item": labels})
    stars = hv.Points(df, ["x", "y"], ["landmark", "item"]).opts(
        marker="star", size=size, color="white", line_color=LANDMARK_COLOR, line_width=2.5,
        tools=["hover"])
    radius = np.full(l, size / 2)  # each star's, an obstacle for the labels
    out = stars
    if highlight is not None and 0 <= highlight < l:
        radius[highlight] = size * 1.8 / 2
        # the chosen landmark: a larger yellow star drawn over the white ones (under them its
        # fill would be hidden), its label still on top
        chosen = hv.Points(df.iloc[[highlight]], ["x", "y"], ["landmark", "item"]).opts(
            marker="star", size=size * 1.8, color="#ffd400", line_color=LANDMARK_COLOR, line_width=3,
            tools=["hover"])
        out = out * chosen
    if text:
        out = out * point_labels(xy, df["landmark"], geo=geo, radius=radius)
    return out


def identity_line(lo: float, hi: float, label: str = "identity"):
    """The dashed y = x line over [lo, hi]."""
    return hv.Curve([(lo, lo), (hi, hi)], label=label).opts(color="#444444", line_dash="dashed",
                                                          line_width=2.5)


#: Pixel size of axis tick labels at :data:`FONTSCALE` (measured in Chromium: 14.85 px).
TICK_FONT_PX = 11 * FONTSCALE
#: Heatmaps three to a row fit beside the sidebar at 1280 px (the Shifts step) at this width.
HEATMAP_WIDTH = 275
#: Pixels of a heatmap's width and height outside its frame: the y axis and the toolbar beside it; the
#: title, the x axis and the colour bar below it (measured in Chromium).
_HEATMAP_INSET = (90.0, 175.0)
#: Pixels between two tick labels of a heatmap's axis (about a character), or between two lines.
_TICK_GAP = (8.0, 6.0)
#: Steps between labelled landmarks when not all of them have room: 1, 2, 5, 10, 20, 50, ...
_NICE_STEPS = (1, 2, 5)


def index_ticks(n: int, frame: float, vertical: bool = False, prefix: str = "") -> list[int]:
    """Whole-number ticks of an axis of ``n`` cells (0 … n − 1) ``frame`` pixels long, every one
    while their labels (``prefix`` and the number) have room, else every 2nd, 5th, 10th, … (labels
    apart, never touching).
    """
    n = int(n)
    if n <= 0:
        return []
    label = TICK_FONT_PX * 1.2 if vertical else text_width_px(f"{prefix}{n - 1}", TICK_FONT_PX)
    room = label + _TICK_GAP[1 if vertical else 0]
    cell = max(float(frame), 1.0) / n
    k = 0
    step = 1
    while step * cell < room and step < n:
        k += 1
        step = _NICE_STEPS[k % 3] * 10 ** (k // 3)
    return list(range(0, n, step))


def _few_colorbar_ticks(plot, element) -> None:
    """Plot hook: about four ticks on a colour bar under a heatmap (at its width, eight ran together)."""
    from bokeh.models import BasicTicker, ColorBar

    fig = plot.handles.get("plot")
    for cb in fig.select(type=ColorBar) if fig is not None else ():
        if not isinstance(cb.ticker, BasicTicker):  # "auto": a ticker of its own
            cb.ticker = BasicTicker()
        cb.ticker.desired_num_ticks = 4


def heatmap(M: np.ndarray, title: str, *, cmap="viridis", symmetric: bool = False,
            clim: tuple | None = None, label: str = "value", width: int = HEATMAP_WIDTH, height: int | None = None,
            tick_prefix: str = "L"):
    """A matrix over the landmarks as an image with row 0 at the top and hover showing (row, column, value).

    ``label`` names the values: the colour bar's title and the hover's (say what they are,
    e.g. "score", "distance": a bar titled "value" told nothing).  The frame is square unless
    ``height`` is given, with the colour bar under it (beside it, the bar left the matrix a strip
    80 px wide at three heatmaps to a row).  The axes label whole rows and columns, every one
    while their labels have room, else every 2nd, 5th, 10th, … (:func:`index_ticks`), as
    ``tick_prefix`` and the index: L0 … L(l − 1), the landmarks' names in every view (a bare 0 …
    l − 1 read as item numbers); the hover names them so too.
    """
    M = np.asarray(M, dtype=np.float64)
    r, c = M.shape
    rows, cols = np.meshgrid(np.arange(r), np.arange(c), indexing="ij")
    df = pd.DataFrame({"column": cols.ravel(), "row": rows.ravel(), "value": M.ravel()})
    hm = hv.HeatMap(df, ["column", "row"], [hv.Dimension("value", label=str(label))])
    if clim is None:
        finite = M[np.isfinite(M)]
        if finite.size:
            if symmetric:
                m = float(np.max(np.abs(finite))) or 1.0
                clim = (-m, m)
            else:
                clim = (float(finite.min()), float(finite.max()))
    frame_w = width - _HEATMAP_INSET[0]
    if height is None:  # a square frame
        height = int(frame_w + _HEATMAP_INSET[1])
    frame_h = height - _HEATMAP_INSET[1]
    p = tick_prefix
    xticks = [(k, f"{p}{k}") for k in index_ticks(c, frame_w, prefix=p)]
    yticks = [(k, f"{p}{k}") for k in index_ticks(r, frame_h, vertical=True, prefix=p)]
    return hm.opts(**base_opts(title=title, cmap=cmap, colorbar=True, clim=clim, invert_yaxis=True,
                               colorbar_position="bottom", hooks=[_few_colorbar_ticks], xticks=xticks, yticks=yticks,
                               tools=["hover", "save"], xlabel="column (landmark)", ylabel="row (landmark)",
                               responsive=False, width=width, height=height),
                   hover_tooltips=[("column", f"{p}@{{column}}"), ("row", f"{p}@{{row}}"), (str(label), "@{value}")])


def integer_x_ticks(plot, element) -> None:
    """Plot hook: ticks of the x axis only at whole numbers (iterations: no "0.2" between 0 and 1)."""
    fig = plot.handles.get("plot")
    for axis in getattr(fig, "xaxis", ()):
        ticker = axis.ticker
        if hasattr(ticker, "min_interval"):
            ticker.min_interval = 1
            # minor ticks only where they fall on whole numbers too (major ticks 10 or more apart)
            span = None
            xr = plot.handles.get("x_range")
            if xr is not None and isinstance(getattr(xr, "start", None), (int, float)) \
                    and isinstance(getattr(xr, "end", None), (int, float)):
                span = abs(xr.end - xr.start)
            if hasattr(ticker, "num_minor_ticks") and (span is None or span < 60):
                ticker.num_minor_ticks = 0


#: Colours, dashes and markers of the curves of a convergence plot with several (one per landmark).
CURVE_COLOURS = tuple(Category10[10])
CURVE_DASHES = ("solid", "dashed", "dotted", "dotdash")
CURVE_MARKERS = ("circle", "square", "triangle", "diamond", "inverted_triangle", "hex", "star")


def convergence(histories: dict, title: str, ylabel: str, *, logy: bool = True, lines=(), first: int = 0,
                **opts):
    """One curve per entry of ``histories`` (name -> 1-D array), iteration on x from ``first``: 0 where a history
    starts with the value before the first iteration (a ranking's gradient norm), 1 where its first value is the
    first iteration's (Dykstra's residuals).

    ``lines`` are more elements drawn over the curves (a tolerance's ``hv.HLine``); ``opts``
    are more :func:`base_opts` (size, title's wording), so every convergence plot has the
    same fonts and whole-number iteration ticks.
    """
    curves = []
    several = sum(np.size(h) > 0 for h in histories.values()) > 1
    for i, (name, h) in enumerate(histories.items()):
        h = np.asarray(h, dtype=np.float64)
        if h.size == 0:
            continue
        y = np.where(h > 0, h, np.nan) if logy else h
        x = np.arange(first, first + h.size)
        curve = hv.Curve((x, y), "iteration", ylabel, label=str(name))
        if not several:
            curves.append(curve.opts(line_width=2.5, tools=["hover"]))
            continue
        # several curves: each its own dash and marker besides its colour, so that a colour-blind reader
        # can match them to the legend (4 dashes x 7 markers: no two of up to 28 curves alike)
        colour = CURVE_COLOURS[i % len(CURVE_COLOURS)]
        curves.append(curve.opts(color=colour, line_dash=CURVE_DASHES[i % len(CURVE_DASHES)], line_width=2.5,
                                 tools=["hover"]))
        curves.append(hv.Scatter((x, y), "iteration", ylabel, label=str(name)).opts(
            color=colour, marker=CURVE_MARKERS[i % len(CURVE_MARKERS)], size=9, tools=["hover"]))
    hooks = [integer_x_ticks, *opts.pop("hooks", ())]
    if not curves:
        return hv.Curve([], "iteration", ylabel).opts(**base_opts(title=f"{title} (no history)", hooks=hooks,
                                                                  **opts))
    ov = hv.Overlay(curves + list(lines))
    # a legend names the curves when there are several (one curve is named by the title)
    # x padded by 3 % of the iterations on each side: the first and last markers were cut in half by the frame
    kw = dict(title=title, logy=logy, legend_position="right", show_legend=several and len(histories) <= 12,
              padding=(0.03, 0.1))
    kw.update(opts)
    return ov.opts(**base_opts(hooks=hooks, **kw))


class _SharedSource:
    """Plot hook: the first plot rendered keeps its data source, later ones (same document) use it.

    Both elements carry every column (``x, y, ex, ey, ...``), so one
    ``ColumnDataSource`` serves both glyphs and its selection is shared.  The
    document is Panel's current one while the plots are built (their own is not
    set yet), so the same elements shown in another page (or exported) get a
    source of their own.
    """

    def __init__(self):
        self._sources = {}  # id(document) -> (weak reference to the document, source)

    def __call__(self, plot, element):
        renderer = plot.handles.get("glyph_renderer")
        if renderer is None:
            return
        doc = plot.document
        if doc is None:
            from panel.io.state import state  # the plots are built by Panel panes

            doc = state.curdoc
        for k in [k for k, (ref, _) in self._sources.items() if ref is not None and ref() is None]:
            del self._sources[k]  # documents that are gone
        key = id(doc) if doc is not None else None
        hit = self._sources.get(key)
        src = None if hit is None or (hit[0] is not None and hit[0]() is not doc) else hit[1]
        if src is None:
            self._sources[key] = (weakref.ref(doc) if doc is not None else None, renderer.data_source)
        elif src is not renderer.data_source and set(renderer.data_source.data) <= set(src.data):
            renderer.data_source = src


def linked_embedding(truth_xy: np.ndarray, est_xy: np.ndarray, colors, *, point_error=None,
                     hue_lightness=None, landmarks=None, seed: int = 0, raster_above: int = RASTER_ABOVE):
    """Ground truth beside the recovered embedding (linked selection), and both overlaid.

    Returns
    -------
    left, right : HoloViews elements
        Truth and estimate, to be shown in two panes side by side.  Below the
        rasterising threshold both come from one table and a plot hook makes the
        second plot use the first plot's bokeh data source, so a box/lasso
        selection in one selects the same items in the other, in the browser.
        (Two panes rather than an ``hv.Layout``: bokeh's grid plot collapsed to
        zero size inside Panel cards.)
    overlay : holoviews.Overlay
        Truth (faint) and estimate, with a segment from each true point to its estimate.
    """
    n = truth_xy.shape[0]
    err = np.zeros(n) if point_error is None else np.asarray(point_error)
    geo = square(truth_xy, est_xy, size=SQUARE_PAIR)
    if n > raster_above:
        left = scatter(truth_xy, colors, hue_lightness=hue_lightness, title="Ground truth")
        right = scatter(est_xy, colors, hue_lightness=hue_lightness, title="Recovered (aligned)")
    else:
        df = pd.DataFrame({
            "x": truth_xy[:, 0], "y": truth_xy[:, 1], "ex": est_xy[:, 0], "ey": est_xy[:, 1],
            "color": np.asarray(colors, dtype=object), "item": np.arange(n), "error": err,
        })
        size = float(np.clip(14 - 2.2 * np.log10(max(n, 1)), 3, 10))
        link = _SharedSource()
        common = dict(color="color", size=size, line_color=None, alpha=0.9,
                      nonselection_alpha=0.08, selection_line_color="black",
                      tools=["hover", "box_select", "lasso_select", "tap", "save"],
                      active_tools=["box_select"], hooks=[link])
        left = hv.Points(df, [hv.Dimension("x", label="x₁"), hv.Dimension("y", label="x₂")],
                         ["ex", "ey", "color", "item", "error"]).opts(
            **base_opts(title="Ground truth (select here…)", **common, **geo))
        right = hv.Points(df, [hv.Dimension("ex", label="x₁"), hv.Dimension("ey", label="x₂")],
                          ["x", "y", "color", "item", "error"]).opts(
            **base_opts(title="…recovered, Procrustes-aligned", **common, **geo))
    idx = subsample(n, SEGMENTS_MAX, seed)
    segs = hv.Segments(
        pd.DataFrame({"x0": truth_xy[idx, 0], "y0": truth_xy[idx, 1], "x1": est_xy[idx, 0],
                      "y1": est_xy[idx, 1], "color": np.asarray(colors, dtype=object)[idx]}),
        ["x0", "y0", "x1", "y1"], ["color"]).opts(color="color", alpha=0.55, line_width=1.5)
    faint = hv.Points((truth_xy[idx, 0], truth_xy[idx, 1]), label="truth").opts(
        color="#bbbbbb", size=5, marker=TRUTH_MARKER, line_color="#777777", alpha=0.6)
    est = hv.Points(pd.DataFrame({"x": est_xy[idx, 0], "y": est_xy[idx, 1],
                                  "color": np.asarray(colors, dtype=object)[idx]}),
                    ["x", "y"], ["color"], label="estimate").opts(color="color", size=6, line_color=None)
    title = TRUTH_TO_ESTIMATE
    if idx.size < n:
        title += f", {idx.size:,} of {n:,} items"
    overlay = segs * faint * est
    if landmarks is not None and len(landmarks):
        overlay = overlay * landmark_marks(est_xy[np.asarray(landmarks)], labels=landmarks, size=16,
                                           geo=square(truth_xy, est_xy, size=600))
    overlay = overlay.opts(**base_opts(title=title, show_legend=False, xlabel="x₁", ylabel="x₂",
                                       **square(truth_xy, est_xy, size=600)))
    return left, right, overlay


def _feed():
    """A ``Pipe`` whose data can also be replaced without redrawing (its plots were patched in place).

    Its memoization key is a version bumped by every change, so a plot rendered
    later (a new page, an HTML export) evaluates the DynamicMaps on the newest data.
    """
    from holoviews.streams import Pipe

    class Feed(Pipe):
        def __init__(self, data=None, **params):
            super().__init__(data=data, **params)
            self.version = 0

        @property
        def hashkey(self):
            return {"_memoize_key": self.version}

        def send(self, data):
            self.version += 1
            super().send(data)

        def put(self, data):
            """Replace the data without redrawing the plots that show it."""
            self.version += 1
            self.update(data=data)

    return Feed()


#: The true positions in the overlay of truth and estimate: grey squares beside the estimate's coloured dots. Both
#: were dots, and for a colour-blind reader (deuteranopia) the pale estimates near the centre took the truth's grey
#: (2.6 to 4.6 % of the points, ΔE about 2).
TRUTH_MARKER = "square"
TRUTH_TO_ESTIMATE = "Truth (grey ■) → estimate (coloured ●)"
OVERLAY_TITLE = f"{TRUTH_TO_ESTIMATE}, landmarks ★"


class LiveEmbedding:
    """The embedding plots, drawn once and then updated in place.

    The first results build HoloViews DynamicMaps fed by one ``Pipe``.  Later
    results replace the data of the bokeh ``ColumnDataSource``s and the axis
    ranges of every rendered plot directly (compact float32/uint8 columns, one
    batch of events per page): neither HoloViews nor bokeh builds a model, so the
    browser only redraws the glyphs.  Re-running the DynamicMaps instead costs
    about a second at n = 2000, most of it bokeh re-indexing every model of the
    page.  When a rendered plot does not have the expected columns (another
    HoloViews version), the update goes through the pipe as before.

    Parameters
    ----------
    size : int
        Side of the square side-by-side plots.
    """

    #: The glyph data sources of the plots, by role: role -> columns HoloViews gives it.
    ROLES = {
        "points": ("x", "y", "ex", "ey", "cidx", "item", "error", "msize", "color"),
        "segments": ("x", "y", "x1", "y1", "color"),
        "truth": ("x", "y"),
        "estimate": ("x1", "y1", "color"),
        "stars": ("x1", "y1", "landmark", "item"),
        "labels": ("x1", "y1", "landmark", "text_align", "text_baseline"),
        "halo": ("x1", "y1", "landmark", "text_align", "text_baseline"),
    }
    #: Width and height of the overlay plot (its frame's pixels place the landmarks' labels).
    OVERLAY_SIZE = (675, 695)
    #: Marker size of the overlay's landmark stars.
    STAR_SIZE = 18

    def __init__(self, size: int = SQUARE_PAIR):
        self.pipe = _feed()
        self._palette = None
        self._decimals = 1  # the fewest decimals of the axes' labels for the data shown (tick_decimals)
        #: role -> the HoloViews plots drawing it (one per page that shows the panes)
        self._plots = {role: weakref.WeakSet() for role in self.ROLES}
        link = _SharedSource()
        common = dict(color="cidx", size="msize", line_color=None, alpha=0.9, nonselection_alpha=0.08,
                      selection_line_color="black", tools=["hover", "box_select", "lasso_select", "tap", "save"],
                      active_tools=["box_select"], hooks=[link, self._keep("points")], framewise=True,
                      backend_opts=CANVAS)
        geo = dict(responsive=False, width=size + 75, height=size + 95)
        vd = ["cidx", "item", "error", "msize"]
        self.left = hv.DynamicMap(
            lambda data: hv.Points(data["df"], [hv.Dimension("x", label=data["axes"][0], range=data["xlim"]),
                                                hv.Dimension("y", label=data["axes"][1], range=data["ylim"])],
                                   ["ex", "ey"] + vd),
            streams=[self.pipe]).opts(**base_opts(title="Ground truth (select here…)", **common, **geo))
        self.right = hv.DynamicMap(
            lambda data: hv.Points(data["df"], [hv.Dimension("ex", label=data["axes"][0], range=data["xlim"]),
                                                hv.Dimension("ey", label=data["axes"][1], range=data["ylim"])],
                                   ["x", "y"] + vd),
            streams=[self.pipe]).opts(**base_opts(title="…recovered, Procrustes-aligned", **common, **geo))
        self.overlay = hv.DynamicMap(self._overlay, streams=[self.pipe]).opts(
            **base_opts(title=OVERLAY_TITLE, show_legend=False,
                        responsive=False, width=self.OVERLAY_SIZE[0], height=self.OVERLAY_SIZE[1],
                        framewise=True, backend_opts=CANVAS))

    def _keep(self, role: str):
        """Plot hook remembering the plot that draws ``role`` (called at every render).

        The figure's tick labels get the current :func:`tick_decimals` too, once per
        figure (from the role that has one figure to itself: the points of the two
        side-by-side plots, the segments of the overlay).

        The hook holds this object weakly. HoloViews keeps an element's options, hooks
        included, in a process-wide store until the element is collected; a hook holding
        ``self`` kept the elements (through ``self.left``...) and so itself alive, and every
        closed page that had shown its Embedding step left its plots' data behind.
        """
        me = weakref.ref(self)

        def hook(plot, element):
            self = me()
            if self is None:
                return
            if "glyph_renderer" in plot.handles:
                self._plots[role].add(plot)
            fig = plot.handles.get("plot")
            if fig is not None and role in ("points", "segments"):
                _set_tick_decimals(fig, self._decimals)
        hook.__name__ = f"keep_{role}"
        return hook

    def _overlay(self, data):
        seg, lm = data["seg"], data["lm"]
        xr = hv.Dimension("x", label=data["axes"][0], range=data["xlim"])
        yr = hv.Dimension("y", label=data["axes"][1], range=data["ylim"])
        cm = dict(cmap=data["palette"], clim=(-0.5, len(data["palette"]) - 0.5), colorbar=False)
        segs = hv.Segments(seg, [xr, yr, "x1", "y1"], ["cidx"]).opts(
            color="cidx", alpha=0.55, line_width=1.5, hooks=[self._keep("segments")], **cm)
        faint = hv.Points(seg, [xr, yr]).opts(color="#bbbbbb", size=5, marker=TRUTH_MARKER, line_color="#777777",
                                              alpha=0.6, hooks=[self._keep("truth")])
        est = hv.Points(seg, [hv.Dimension("x1", range=data["xlim"]), hv.Dimension("y1", range=data["ylim"])],
                        ["cidx"]).opts(color="cidx", size=6, line_color=None, hooks=[self._keep("estimate")], **cm)
        stars = hv.Points(lm, [hv.Dimension("x1", range=data["xlim"]), hv.Dimension("y1", range=data["ylim"])],
                          ["landmark", "item"]).opts(marker="star", size=self.STAR_SIZE, color="white",
                                                     line_color=LANDMARK_COLOR, line_width=2.5, tools=["hover"],
                                                     hooks=[self._keep("stars")])
        # beside the stars, on the side with room (placed in _data: see point_labels)
        text = _haloed(hv.Labels(lm, ["x1", "y1"], ["landmark", "ta", "tb"]), f"{LABEL_PT}pt", LANDMARK_COLOR,
                       hooks=[self._keep("labels")], halo_hooks=[self._keep("halo")])
        return segs * faint * est * stars * text

    def update(self, truth_xy, est_xy, hue_lightness, point_error, landmarks, seed: int = 0,
               axes: tuple[str, str] = ("x₁", "x₂")) -> None:
        """Show new results: patch the rendered plots in place, or send them through the pipe. ``axes`` label the
        plane drawn (:func:`loe_viz.app.colors.plane_axes`)."""
        data = self._data(truth_xy, est_xy, hue_lightness, point_error, landmarks, seed)
        data["axes"] = tuple(axes)
        self._decimals = tick_decimals(*data["xlim"])
        if self._patch(data):
            # for plots rendered later (another page, an HTML export): the ones on screen are up to date
            self.pipe.put(data)
            for dmap in (self.left, self.right, self.overlay):
                dmap.reset()  # drop the frame cached from the old data
        else:
            self.pipe.send(data)

    def _data(self, truth_xy, est_xy, hue_lightness, point_error, landmarks, seed):
        n_all = truth_xy.shape[0]
        show = np.union1d(subsample(n_all, DECIMATE_ABOVE, seed), np.asarray(landmarks))
        truth_xy, est_xy = truth_xy[show], est_xy[show]
        hue_lightness = np.asarray(hue_lightness)[show]
        point_error = None if point_error is None else np.asarray(point_error)[show]
        n = truth_xy.shape[0]
        colors, palette = quantized(hue_lightness)
        if self._palette is None:
            self._palette = palette
            cm = dict(cmap=palette, clim=(-0.5, len(palette) - 0.5), colorbar=False)
            self.left.opts(**cm)
            self.right.opts(**cm)
        msize = float(np.clip(14 - 2.2 * np.log10(max(n, 1)), 3, 10))
        sq = square(truth_xy, est_xy)
        df = pd.DataFrame({"x": truth_xy[:, 0], "y": truth_xy[:, 1], "ex": est_xy[:, 0], "ey": est_xy[:, 1],
                           "cidx": colors, "item": show, "msize": np.full(n, msize),
                           "error": np.zeros(n) if point_error is None else np.asarray(point_error)})
        idx = subsample(n, SEGMENTS_MAX, seed + 1)
        seg = pd.DataFrame({"x": truth_xy[idx, 0], "y": truth_xy[idx, 1], "x1": est_xy[idx, 0],
                            "y1": est_xy[idx, 1], "cidx": colors[idx]})
        lm = np.asarray(landmarks)
        pos = np.searchsorted(show, lm)  # landmarks are always among the shown items
        names = [f"L{c}" for c in range(lm.size)]
        w, h = self.OVERLAY_SIZE
        align, baseline = label_layout(est_xy[pos], names, xlim=sq["xlim"], ylim=sq["ylim"],
                                       frame=frame_px({"width": w, "height": h}), radius=self.STAR_SIZE / 2)
        lmdf = pd.DataFrame({"x1": est_xy[pos, 0], "y1": est_xy[pos, 1], "landmark": names, "item": lm,
                             "ta": align, "tb": baseline})
        return {"df": df, "seg": seg, "lm": lmdf, "xlim": sq["xlim"], "ylim": sq["ylim"], "palette": palette}

    @staticmethod
    def _columns(data) -> dict:
        """The new columns of every role's data source, compact (what is sent to the browser)."""
        f32 = lambda v: np.asarray(v, dtype=np.float32)  # noqa: E731
        df, seg, lm = data["df"], data["seg"], data["lm"]
        cidx = np.asarray(df["cidx"], dtype=np.uint8 if len(data["palette"]) <= 256 else np.int32)
        scid = np.asarray(seg["cidx"], dtype=cidx.dtype)
        labels = np.asarray(lm["landmark"], dtype=object)
        text = {"x1": f32(lm["x1"]), "y1": f32(lm["y1"]), "landmark": labels,  # the labels and their halo
                "text_align": np.asarray(lm["ta"], dtype=object), "text_baseline": np.asarray(lm["tb"], dtype=object)}
        return {
            "points": {"x": f32(df["x"]), "y": f32(df["y"]), "ex": f32(df["ex"]), "ey": f32(df["ey"]),
                       "cidx": cidx, "color": cidx, "item": np.asarray(df["item"], dtype=np.int32),
                       "error": f32(df["error"]), "msize": f32(df["msize"])},
            "segments": {"x": f32(seg["x"]), "y": f32(seg["y"]), "x1": f32(seg["x1"]), "y1": f32(seg["y1"]),
                         "color": scid},
            "truth": {"x": f32(seg["x"]), "y": f32(seg["y"])},
            "estimate": {"x1": f32(seg["x1"]), "y1": f32(seg["y1"]), "color": scid},
            "stars": {"x1": f32(lm["x1"]), "y1": f32(lm["y1"]), "landmark": labels,
                      "item": np.asarray(lm["item"], dtype=np.int32)},
            "labels": text,
            "halo": text,  # each source gets its own copy (_patch)
        }

    def _patch(self, data) -> bool:
        """Put ``data`` into the rendered plots' data sources and ranges; False if there is no
        rendered plot to patch or one does not have the expected columns."""
        plots = {role: [p for p in list(ps) if p.document is not None] for role, ps in self._plots.items()}
        if not plots["points"] or not plots["segments"]:
            return False
        sources, ranges, figures = {}, {}, {}
        for role, ps in plots.items():
            for p in ps:
                src = p.handles["glyph_renderer"].data_source  # (left and right share one)
                if set(src.data) != set(self.ROLES[role]):
                    return False
                sources[id(src)] = (role, src, p.document)
                fig = p.handles.get("plot")
                if fig is not None:
                    figures[id(fig)] = (fig, p.document)
                for axis in ("x_range", "y_range"):
                    r = p.handles.get(axis)
                    if r is not None:
                        ranges[id(r)] = (axis, r, p.document)
        from panel.io import hold

        cols = self._columns(data)
        docs = {id(doc): doc for _, _, doc in list(sources.values()) + list(ranges.values())}
        lims = {"x_range": data["xlim"], "y_range": data["ylim"]}
        for doc in docs.values():
            with hold(doc):  # one message per page
                for role, src, d in sources.values():
                    if d is doc:
                        src.data = dict(cols[role])
                for axis, r, d in ranges.values():
                    if d is doc:
                        lo, hi = lims[axis]
                        r.update(start=lo, end=hi, reset_start=lo, reset_end=hi)
                for fig, d in figures.values():
                    if d is doc:
                        _set_tick_decimals(fig, self._decimals)
                        for ax, label in zip((fig.xaxis, fig.yaxis), data["axes"]):
                            if ax and ax[0].axis_label != label:  # another dimension of the data: another plane
                                ax[0].axis_label = label
        return True
