"""Readability of the explorer's plots on a projector: labels beside (not on) their markers and
inside the frame, whole-number iteration ticks, one font size for every plot, and titles that
fit their plot (a long uploaded file name is shortened in the middle, as plain text)."""

from __future__ import annotations

import numpy as np
import pytest

pn = pytest.importorskip("panel")
hv = pytest.importorskip("holoviews")

from bokeh.models import ColorBar, GlyphRenderer, Text  # noqa: E402

from loe_viz.app import plots  # noqa: E402
from loe_viz.app.state import STEPS  # noqa: E402
from test_explorer import explorer  # noqa: E402,F401  (the module-scoped explorer of n = 300)


def _figure(obj):
    """The bokeh figure HoloViews builds for ``obj``."""
    return hv.renderer("bokeh").get_plot(obj).state


def _texts(models):
    """The text glyph renderers among bokeh ``models``."""
    return [m for m in models if isinstance(m, GlyphRenderer) and isinstance(m.glyph, Text)]


def _column(renderer, spec):
    """The values of a glyph property: its data column, or the one value for every row."""
    field = getattr(spec, "field", None)
    n = len(next(iter(renderer.data_source.data.values())))
    if field is not None:
        return list(renderer.data_source.data[field])
    return [getattr(spec, "value", spec)] * n


def _step_models(explorer, name):
    k = STEPS.index(name)
    explorer.state.step = k
    view = explorer._views[k]
    view.refresh(force=True)
    alerts = [o.object for o in view._body.objects if isinstance(o, pn.pane.Alert)]
    assert not alerts, alerts
    root = pn.panel(view).get_root()
    return list(root.references())


# --- 1. landmark and item labels sit beside their markers ------------------------------------

def test_landmark_labels_are_offset_from_their_stars():
    xy = np.array([[0.0, 0.0], [1.0, 1.0], [-1.0, 0.5], [0.5, -1.0]])
    fig = _figure(plots.landmark_marks(xy, geo=plots.square(xy)))
    texts = _texts(fig.renderers)
    assert texts
    for r in texts:
        # bokeh's text padding puts the label's box this many screen pixels off its point
        assert r.glyph.padding >= plots.LABEL_GAP > 0
        aligns = _column(r, r.glyph.text_align)
        bases = _column(r, r.glyph.text_baseline)
        # never centred on the point: each label takes a corner beside it
        assert set(aligns) <= {"left", "right"} and set(bases) <= {"top", "bottom"}, (aligns, bases)


def test_labels_of_coincident_points_take_different_corners():
    xy = np.array([[0.0, 0.0], [0.001, 0.001], [0.0, 0.002], [2.0, 2.0], [-2.0, -2.0]])
    geo = plots.square(xy)
    align, base = plots.label_layout(xy, ["847", "269", "510", "a", "b"], xlim=geo["xlim"], ylim=geo["ylim"],
                                     frame=plots.frame_px(geo), radius=10)
    corners = list(zip(align, base))[:3]
    assert len(set(corners)) == 3, corners


def test_a_label_at_the_right_edge_goes_left_of_its_point():
    xy = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, 1.0], [0.5, -1.0]])
    geo = plots.square(xy)
    align, base = plots.label_layout(xy, ["left end", "a long label at the right edge", "top", "bottom"],
                                     xlim=geo["xlim"], ylim=geo["ylim"], frame=plots.frame_px(geo))
    assert align[1] == "right" and align[0] == "left"
    assert base[2] == "top" and base[3] == "bottom"  # inside the frame at its top and bottom too


def test_labels_in_a_crowd_go_out_on_leader_lines_and_stay_apart():
    # three stars within 20 px and their neighbours (the Sample step at l = 12): "40" and "506" beside one
    # cluster named either star, "91" lay on the marker of 712
    rng = np.random.default_rng(3)
    xy = np.vstack([[0.0, 0.0], [0.02, 0.01], [0.01, -0.02], rng.normal(scale=0.3, size=(20, 2))])
    texts = [str(v) for v in rng.integers(10, 999, size=len(xy))]
    geo = plots.framed(xy, frame=(450, 450))
    align, base, shift, unclear = plots.label_layout(xy, texts, xlim=geo["xlim"], ylim=geo["ylim"],
                                                     frame=(450, 450), radius=10, leaders=True)
    assert not unclear.any()
    assert np.hypot(*shift.T).max() > 0  # some label went out
    # the boxes as placed (bokeh's padding LABEL_GAP off each anchor) do not touch
    font = plots.LABEL_PT * 4 / 3
    sx = (xy[:, 0] - geo["xlim"][0]) / np.ptp(geo["xlim"]) * 450 + shift[:, 0]
    sy = (geo["ylim"][1] - xy[:, 1]) / np.ptp(geo["ylim"]) * 450 + shift[:, 1]
    boxes = []
    for x, y, t, a, b in zip(sx, sy, texts, align, base):
        w, h = plots.text_width_px(t, font), 1.15 * font
        left = x + plots.LABEL_GAP if a == "left" else x - plots.LABEL_GAP - w
        top = y + plots.LABEL_GAP if b == "top" else y - plots.LABEL_GAP - h if b == "bottom" else y - h / 2
        boxes.append((left, top, left + w, top + h))
    for i, p in enumerate(boxes):
        for q in boxes[i + 1:]:
            assert max(q[0] - p[2], p[0] - q[2], q[1] - p[3], p[1] - q[3]) >= 0, (p, q)
    # drawn: a leader line from each such label's point, and the labelled points in the labels' data
    fig = _figure(plots.point_labels(xy, texts, geo=geo, radius=10, frame=(450, 450)).opts(
        **plots.base_opts(title="t", **geo)))
    (text,) = [r for r in _texts(fig.renderers) if (r.glyph.text_color or "") != "white"]
    assert np.allclose(text.data_source.data["px"], xy[:, 0]) and np.allclose(text.data_source.data["py"], xy[:, 1])
    leaders = [r for r in fig.renderers if isinstance(r, GlyphRenderer) and type(r.glyph).__name__ == "Segment"]
    assert len(leaders) == 1 and len(leaders[0].data_source.data["x0"]) == int((np.hypot(*shift.T) > 0).sum())



def _crowd():
    rng = np.random.default_rng(3)
    xy = np.vstack([[0.0, 0.0], [0.02, 0.01], [0.01, -0.02], rng.normal(scale=0.3, size=(20, 2))])
    return xy, [str(v) for v in rng.integers(10, 999, size=len(xy))], plots.framed(xy, frame=(450, 450))


def test_thinned_labels_leave_out_only_what_no_place_makes_clear():
    # twelve names within about 12 px of a centre (the Balkans on t-STE's map of the capitals) have no
    # place each that is clearly nearer its own point than the others': some go unnamed on the map
    # (the caller names them elsewhere); the four points far from them keep their labels, and the
    # labels drawn are clear of every point, named or not
    import holoviews as hv
    import pandas as pd

    frame, rng = (400.0, 400.0), np.random.default_rng(5)
    xy = np.vstack([0.5 + rng.normal(scale=0.03, size=(12, 2)), [[0.1, 0.9], [0.9, 0.1], [0.2, 0.2], [0.8, 0.8]]])
    texts = [f"Place{i}" for i in range(12)] + ["Reykjavik", "Nicosia", "Lisbon", "Helsinki"]
    geo = {"xlim": (0.0, 1.0), "ylim": (0.0, 1.0), "width": 400 + 95 + 45, "height": 400 + 40 + 60}
    *_, unclear = plots.label_layout(xy, texts, xlim=geo["xlim"], ylim=geo["ylim"], frame=frame, radius=5,
                                     leaders=True)
    assert unclear[:12].any() and not unclear[12:].any()
    names, hidden = plots.point_labels(xy, texts, geo=geo, radius=5, frame=frame, thin=True)
    assert hidden.size and hidden.max() < 12
    pts = hv.Points(pd.DataFrame({"x": xy[:, 0], "y": xy[:, 1], "label": texts}), ["x", "y"], ["label"]).opts(size=8, tools=["hover"])
    fig = _figure((pts * names).opts(**plots.base_opts(title="t", **geo)))
    assert not _map_troubles(fig, frame)
    (text,) = [r for r in _texts(fig.renderers) if (r.glyph.text_color or "") != "white"]
    assert list(text.data_source.data["label"]) == [t for i, t in enumerate(texts) if i not in hidden]
    # without thin, every label is drawn and nothing is returned beside them
    assert not isinstance(plots.point_labels(xy, texts, geo=geo, radius=5, frame=frame), tuple)


def test_labels_keep_off_the_lines_drawn_on_the_plot():
    # the Sample step's labels lay on its example lines ("12" and "746" on a closer and a farther line):
    # a line leaving a point up and to the right, its label's first choice, sends the label elsewhere
    xy = np.array([[0.5, 0.5], [0.2, 0.8], [0.8, 0.2]])
    texts = ["123", "456", "789"]
    frame, line = (400.0, 400.0), np.array([[0.5, 0.5, 0.7, 0.7]])

    def box(align, base):  # the first label's box in screen pixels, as bokeh draws it
        w, h, g = plots.text_width_px("123", plots.LABEL_PT * 4 / 3), 1.15 * plots.LABEL_PT * 4 / 3, plots.LABEL_GAP
        left = 200 + g if align == "left" else 200 - g - w
        top = 200 - g - h if base == "bottom" else 200 + g if base == "top" else 200 - h / 2
        return left, top, left + w, top + h

    on_line = np.linspace(0, 1, 200)[:, None] * np.array([80.0, -80.0]) + 200  # the line in screen pixels

    def crossed(b):
        return int(((on_line[:, 0] > b[0]) & (on_line[:, 0] < b[2]) & (on_line[:, 1] > b[1])
                    & (on_line[:, 1] < b[3])).sum())

    a, b = plots.label_layout(xy, texts, xlim=(0, 1), ylim=(0, 1), frame=frame, radius=5)
    assert crossed(box(a[0], b[0])) > 0  # without the line, the label takes the corner it runs through
    a, b = plots.label_layout(xy, texts, xlim=(0, 1), ylim=(0, 1), frame=frame, radius=5, lines=line)
    assert crossed(box(a[0], b[0])) == 0


def test_leader_lines_go_no_further_than_they_must():
    # leaders were 22.6 px long at the least and up to 50 px (to the label's anchor) in this crowd
    xy, texts, geo = _crowd()
    _, _, shift, _ = plots.label_layout(xy, texts, xlim=geo["xlim"], ylim=geo["ylim"], frame=(450, 450),
                                        radius=10, leaders=True)
    length = np.hypot(*shift.T)
    length = length[length > 0]
    assert length.size and length.min() < 20 and length.max() <= 48, np.round(length, 1)
    assert (length - 10 - 1).min() >= 5, "a line of 2 px from a star's edge: none to see"


def _dash_pattern(value) -> list[int]:
    """A bokeh ``line_dash`` as on/off lengths in pixels (named patterns as BokehJS draws them)."""
    named = {"solid": [], "dashed": [6], "dotted": [2, 4], "dotdash": [2, 4, 6, 4], "dashdot": [6, 4, 2, 4]}
    if isinstance(value, str):
        return named[value] if value in named else [int(x) for x in value.split()]
    return [int(x) for x in value]


def test_leader_lines_are_unlike_the_example_lines_of_the_sample_step(explorer):
    # the leaders were solid grey lines 1.5 px wide, beside the examples' solid green and dashed red ones
    xy, texts, geo = _crowd()
    fig = _figure(plots.point_labels(xy, texts, geo=geo, radius=10, frame=(450, 450)).opts(
        **plots.base_opts(title="t", **geo)))
    (leader,) = [r for r in fig.renderers if isinstance(r, GlyphRenderer) and type(r.glyph).__name__ == "Segment"]
    figs = [m for m in _step_models(explorer, "Sample")
            if type(m).__name__ == "figure" and m.title is not None and m.title.text.startswith("The examples")]
    (sample,) = figs
    examples = [r for r in sample.renderers if isinstance(r, GlyphRenderer)
                and type(r.glyph).__name__ == "Segment" and r.name != plots.LEADER_NAME]
    assert len(examples) == 2  # closer and farther
    g = leader.glyph
    assert list(g.line_dash), "a dotted or dashed leader: a solid one reads as data"
    for r in examples:
        e = r.glyph
        assert list(g.line_dash) != list(e.line_dash) and g.line_color != e.line_color, (g.line_dash, e.line_dash)
        assert g.line_width <= 0.5 * e.line_width
        # a dashed example line's dashes are at least three times as long as the line is wide:
        # bokeh's "dashed" (6 px on, 6 px off) at 3 px wide read as dots, like the leaders
        dashes = _dash_pattern(e.line_dash)
        assert not dashes or min(dashes[::2]) >= 3 * e.line_width, (e.line_dash, e.line_width)
    assert leader.name == plots.LEADER_NAME  # found by the checks in the browser


def test_sample_step_labels_every_marked_item_once_beside_its_marker(explorer):
    texts = _texts(_step_models(explorer, "Sample"))
    assert texts
    s = explorer.state
    landmarks = {str(int(v)) for v in s.model.landmarks_}
    for r in texts:
        assert r.glyph.padding >= plots.LABEL_GAP
        assert set(_column(r, r.glyph.text_align)) <= {"left", "right"}
    shown = [list(r.data_source.data[r.glyph.text.field if hasattr(r.glyph.text, "field") else r.glyph.text])
             for r in texts if (r.glyph.text_color or "") != "white"]
    labels = [t for ts in shown for t in ts]
    assert len(labels) == len(set(labels)), labels  # a landmark's number is written once, not twice
    assert landmarks <= set(labels)


@pytest.mark.parametrize("step", ["Ranking"])
def test_landmark_labels_of_the_ranking_step_are_placed(explorer, step):
    texts = _texts(_step_models(explorer, step))
    assert texts
    for r in texts:
        assert r.glyph.padding >= plots.LABEL_GAP
        assert getattr(r.glyph.text_align, "field", None), "per-label alignment from the layout"


def test_live_embedding_labels_are_placed_and_patched():
    from bokeh.document import Document
    from panel.io.state import set_curdoc

    rng = np.random.default_rng(0)
    n = 200
    hl = np.column_stack([rng.random(n), np.full(n, 0.5)])
    X = rng.normal(size=(n, 2))
    X[7] = [X[:, 0].max() + 1.0, 0.0]  # a landmark at the right edge
    live = plots.LiveEmbedding()
    live.update(X, X + 0.05, hl, rng.random(n), [1, 5, 7, 9, 11])
    doc = Document()
    with set_curdoc(doc):
        page = pn.Column(pn.pane.HoloViews(live.overlay))
        doc.add_root(page.get_root(doc))
    texts = _texts(doc.models)
    assert len(texts) == 2  # the labels and their halo
    for r in texts:
        assert r.glyph.padding >= plots.LABEL_GAP
        assert set(r.data_source.data) == set(plots.LiveEmbedding.ROLES["labels"])
        aligns = _column(r, r.glyph.text_align)
        assert aligns[2] == "right", aligns  # L2 (item 7) at the right edge: its label on its left
    ids = {m.id for m in doc.models}
    Y = X.copy()
    Y[7] = [X[:, 0].min() - 1.0, 0.0]  # now at the left edge
    with set_curdoc(doc):
        live.update(Y, Y + 0.05, hl, rng.random(n), [1, 5, 7, 9, 11])
    assert {m.id for m in doc.models} == ids  # patched in place, labels included
    for r in texts:
        assert _column(r, r.glyph.text_align)[2] == "left"


def test_left_aligned_labels_past_the_right_edge_are_turned():
    """Labels built elsewhere (one fixed left alignment) end at their point near the right edge."""
    xy = np.array([[0.0, 0.0], [1.0, 0.2], [0.5, 0.5]])
    import pandas as pd

    df = pd.DataFrame({"x": xy[:, 0], "y": xy[:, 1], "label": ["a", "<img src=x onerror=alert(1)>", "b"]})
    obj = hv.Points(df, ["x", "y"]) * hv.Labels(df, ["x", "y"], "label").opts(text_align="left",
                                                                              text_font_size="10pt")
    fig = _figure(obj.opts(**plots.base_opts(title="t", **plots.square(xy))))
    (r,) = _texts(fig.renderers)
    assert _column(r, r.glyph.text_align) == ["left", "right", "left"]


def test_your_triplets_names_are_placed_beside_their_points_at_the_hall_size():
    # the capitals' names were all above right of their points at 13.3 px: 28 of 44 ran into another one
    import warnings

    from loe_viz.app.views.triplets import TripletsView

    view = TripletsView(dispatch=lambda fn: fn())
    view.w_sample.value = "european_capitals_crowd.csv"
    s = view.state
    s.methods = ["STE"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert s.run()
    fig = _figure(view._embedding_figure("STE"))
    texts = [r for r in _texts(fig.renderers) if (r.glyph.text_color or "") != "white"]
    (names,) = texts
    assert float(str(getattr(names.glyph.text_font_size, "value", names.glyph.text_font_size)).rstrip("pt")) * 4 / 3 >= 14
    assert names.glyph.padding >= plots.LABEL_GAP
    aligns, bases = _column(names, names.glyph.text_align), _column(names, names.glyph.text_baseline)
    assert len(set(zip(aligns, bases))) > 1, "every name in the same corner of its point"
    assert "Reykjavík" in list(names.data_source.data["label"])
    # the names' room: a larger frame than the walk-through's squares
    assert fig.width >= plots.SQUARE + 75 + 60



@pytest.fixture(scope="module")
def capitals_view():
    """"Your triplets" with the bundled capitals file, every method fitted."""
    import warnings

    from loe_viz.app.triplets_state import TRIPLET_METHODS
    from loe_viz.app.views.triplets import TripletsView

    view = TripletsView(dispatch=lambda fn: fn())
    view.w_sample.value = "european_capitals_crowd.csv"
    view.state.methods = list(TRIPLET_METHODS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert view.state.run()
    return view


def _map_troubles(fig, frame):
    """What a reader could misread on a map of labelled points: a label on another label or marker,
    nearer another point than its own (or than the end of its leader line) by less than
    ``plots.LABEL_CLEAR`` pixels, or a leader line over another marker."""
    (names,) = [r for r in _texts(fig.renderers) if (r.glyph.text_color or "") != "white"]
    (pts,) = [r for r in fig.renderers if isinstance(r, GlyphRenderer) and type(r.glyph).__name__ == "Scatter"]
    data = names.data_source.data
    W, H = frame
    (x0, x1), (y0, y1) = (fig.x_range.start, fig.x_range.end), (fig.y_range.start, fig.y_range.end)

    def screen(x, y):
        return (np.asarray(x, float) - x0) / (x1 - x0) * W, (y1 - np.asarray(y, float)) / (y1 - y0) * H

    ax, ay = screen(data["x"], data["y"])
    px, py = screen(data["px"], data["py"])  # the labelled points, in the labels' order
    qx, qy = screen(pts.data_source.data["x"], pts.data_source.data["y"])  # every point, labelled or not
    r = float(pts.glyph.size) / 2
    font = float(str(getattr(names.glyph.text_font_size, "value", names.glyph.text_font_size)).rstrip("pt")) * 4 / 3
    gap, h = names.glyph.padding, 1.15 * font
    boxes = []
    for x, y, t, a, b in zip(ax, ay, data["label"], _column(names, names.glyph.text_align),
                             _column(names, names.glyph.text_baseline)):
        w = plots.text_width_px(t, font)
        left = x + gap if a == "left" else x - gap - w
        top = y + gap if b == "top" else y - gap - h if b == "bottom" else y - h / 2
        boxes.append((left, top, left + w, top + h))
    boxes = np.array(boxes)

    def to_box(b, x, y):
        return np.hypot(np.maximum(np.maximum(b[0] - x, x - b[2]), 0), np.maximum(np.maximum(b[1] - y, y - b[3]), 0))

    names_ = list(data["label"])
    everyone = list(pts.data_source.data["label"])
    out = []
    for i, b in enumerate(boxes):
        own = float(to_box(b, ax[i], ay[i]))
        other = to_box(b, qx, qy)
        other[np.hypot(qx - px[i], qy - py[i]) < 1e-6] = np.inf  # its own point
        j = int(np.argmin(other))
        if other[j] < r + 1:
            out.append(f"{names_[i]} on the marker of {everyone[j]}")
        elif other[j] < own + plots.LABEL_CLEAR:
            out.append(f"{names_[i]}: {other[j]:.1f} px from {everyone[j]}, {own:.1f} px from its own point")
        for k in range(i + 1, len(boxes)):
            c = boxes[k]
            apart = max(c[0] - b[2], b[0] - c[2], c[1] - b[3], b[1] - c[3])
            if apart < 1:
                out.append(f"{names_[i]} and {names_[k]}: {apart:.1f} px apart")
        if (ax[i], ay[i]) != (px[i], py[i]):  # its leader line, from its marker's edge to its anchor
            d = np.array([ax[i] - px[i], ay[i] - py[i]])
            p0 = np.array([px[i], py[i]]) + d / np.hypot(*d) * (r + 1)
            seg = np.array([ax[i], ay[i]]) - p0
            q = np.column_stack([qx, qy]) - p0
            t = np.clip(q @ seg / (seg @ seg), 0, 1)
            near = np.hypot(*(q - t[:, None] * seg).T)
            near[np.hypot(qx - px[i], qy - py[i]) < 1e-6] = np.inf
            j = int(np.argmin(near))
            if near[j] < r:
                out.append(f"the leader line of {names_[i]} over the marker of {everyone[j]}")
    return out


#: Methods whose capitals' map packs the Balkans within a few pixels (Podgorica and Tirana 5.4 px
#: apart): some names there are left to the hover tooltip, and the title says how many.
_CROWDED_MAPS = {"TSTE", "CKL"}


@pytest.mark.parametrize("method", __import__("loe_viz.app.triplets_state", fromlist=["TRIPLET_METHODS"]).TRIPLET_METHODS)
def test_every_method_s_map_names_each_capital_clearly(capitals_view, method):
    # on LOE's map "Andorra la Vella" was 8.2 px from Monaco's point and 8.5 px from its own; the
    # check covered only STE's map, the one shown first. On t-STE's and CKL's, 11 names were nearer
    # another point than their own by less than 4 px, or their leader lines crossed other markers.
    from loe_viz.app.views.triplets import _MAP

    assert capitals_view.state.results[method].ok
    fig = _figure(capitals_view._embedding_figure(method))
    assert fig.width == _MAP[0] + 95 + 45 and fig.height == _MAP[1] + 40 + 60  # the frame is _MAP exactly
    troubles = _map_troubles(fig, _MAP)
    assert not troubles, f"{method}: {troubles}"
    # every capital is named, on the map or by the hover tooltip; the title counts those left to it
    (names,) = [r for r in _texts(fig.renderers) if (r.glyph.text_color or "") != "white"]
    (pts,) = [r for r in fig.renderers if isinstance(r, GlyphRenderer) and type(r.glyph).__name__ == "Scatter"]
    drawn, everyone = list(names.data_source.data["label"]), list(pts.data_source.data["label"])
    hidden = len(everyone) - len(drawn)
    assert set(drawn) <= set(everyone) and len(set(drawn)) == len(drawn) and len(everyone) == 44
    assert any(("label", "@{label}") in (t.tooltips or ()) for t in fig.tools if type(t).__name__ == "HoverTool")
    if method in _CROWDED_MAPS:
        assert 0 < hidden <= 12 and fig.title.text.endswith(f"({hidden} names on hover only)"), fig.title.text
    else:
        assert hidden == 0 and "hover" not in fig.title.text


# --- 2. iteration axes have whole-number ticks -----------------------------------------------

def test_convergence_iterations_have_integer_ticks():
    fig = _figure(plots.convergence({"L0": [100.0, 1.0], "L1": [80.0, 0.5]}, "one Newton step", "norm"))
    (axis,) = fig.xaxis
    assert axis.ticker.min_interval == 1
    assert axis.ticker.num_minor_ticks == 0  # no minor ticks at 0.2, 0.4, ...
    long = _figure(plots.convergence({"D": np.geomspace(1, 1e-7, 400)}, "long", "r"))
    assert long.xaxis[0].ticker.min_interval == 1


def test_convergence_curves_differ_by_dash_and_marker_not_colour_alone():
    """The landmarks' solver curves were solid lines told apart by colour only: at 12 landmarks L1 and L7
    were both red and L0 and L8 both blue, and for a colour-blind reader L2 and L11 were 3 ΔE apart."""
    hist = {f"L{k}": np.geomspace(10.0 + k, 1e-6, 6) for k in range(12)}
    fig = _figure(plots.convergence(hist, "twelve", "norm"))
    look = {}
    for r in fig.renderers:
        name = next(it.label["value"] for it in fig.legend[0].items if r in it.renderers)
        g = r.glyph
        if type(g).__name__ == "Line":
            look.setdefault(name, {}).update(colour=g.line_color, dash=tuple(g.line_dash))
        else:
            look.setdefault(name, {}).update(marker=g.marker, marker_colour=g.fill_color)
    assert sorted(look) == sorted(hist) and len(fig.legend[0].items) == 12
    styles = {(v["dash"], v["marker"]) for v in look.values()}
    assert len(styles) == 12  # no two alike without their colour
    assert all(v["colour"] == v["marker_colour"] for v in look.values())
    one = _figure(plots.convergence({"D": [1.0, 0.1]}, "one", "r"))  # one curve: a plain line, no legend
    assert [type(r.glyph).__name__ for r in one.renderers] == ["Line"] and not any(lg.items for lg in one.legend)


def test_ranking_and_edm_convergence_plots_have_integer_ticks(explorer):
    for step, title in (("Ranking", "Solver convergence"), ("EDM", "Dykstra convergence")):
        figs = [m for m in _step_models(explorer, step)
                if type(m).__name__ == "figure" and m.title is not None and (m.title.text or "").startswith(title)]
        assert figs, step
        for fig in figs:
            assert all(ax.ticker.min_interval == 1 for ax in fig.xaxis), step
        if step == "EDM":  # its caption's "converged after k iterations" is the curve's last x (it drew 0..k-1)
            (fig,) = figs
            n_iter = explorer.state.model.stages_.edm.n_iter
            xs = [list(r.data_source.data["iteration"]) for r in fig.renderers
                  if type(r.glyph).__name__ == "Line" and len(r.data_source.data["iteration"]) == n_iter]
            assert xs and xs[0][0] == 1 and xs[0][-1] == n_iter, (xs, n_iter)


def test_log_axes_write_their_ticks_at_the_tick_font(explorer):
    # bokeh wrote 10 with a superscript exponent at 0.7 of the font: "10²" with a 10.4 px "2"
    from bokeh.models import CustomJSTickFormatter, LogTickFormatter

    for step, title in (("Ranking", "Solver convergence"), ("EDM", "Dykstra convergence")):
        figs = [m for m in _step_models(explorer, step)
                if type(m).__name__ == "figure" and m.title is not None and (m.title.text or "").startswith(title)]
        assert figs, step
        for fig in figs:
            (axis,) = fig.yaxis
            assert type(axis.ticker).__name__ == "LogTicker", step
            assert isinstance(axis.formatter, CustomJSTickFormatter) and not isinstance(axis.formatter,
                                                                                          LogTickFormatter)
            assert "e" in axis.formatter.code and "sup" not in axis.formatter.code


# --- 3. the Dykstra plot's fonts are those of every other plot -------------------------------

def test_dykstra_plot_fonts_match_the_other_plots(explorer):
    figs = [m for m in _step_models(explorer, "EDM") if type(m).__name__ == "figure" and m.title is not None]
    by_title = {f.title.text: f for f in figs}
    dyk = next(f for t, f in by_title.items() if t.startswith("Dykstra"))
    pairs = next(f for t, f in by_title.items() if t.startswith("Landmark pairs"))

    def fonts(f):
        return (f.title.text_font_size, f.xaxis[0].axis_label_text_font_size,
                f.yaxis[0].axis_label_text_font_size, f.xaxis[0].major_label_text_font_size)

    assert fonts(dyk) == fonts(pairs), (fonts(dyk), fonts(pairs))
    # and those of a plot of another step (the projector's font scale)
    rk = [m for m in _step_models(explorer, "Ranking") if type(m).__name__ == "figure" and m.title is not None
          and (m.title.text or "").startswith("Solver convergence")]
    assert fonts(rk[0]) == fonts(dyk)


def test_the_triplets_per_head_plot_has_the_fonts_of_the_others(explorer):
    # "Your triplets" drew it at a font scale of its own: ticks at 12.1 px, below the 14 px of the rule
    from loe_viz.app.views.triplets import TripletsView

    view = TripletsView(dispatch=lambda fn: fn())
    view.w_sample.value = "european_capitals_crowd.csv"
    heads = _figure(view._heads_figure())
    assert heads.title.text.startswith("Triplets per head")
    rk = [m for m in _step_models(explorer, "Ranking") if type(m).__name__ == "figure" and m.title is not None
          and (m.title.text or "").startswith("Solver convergence")]
    for axis, other in ((heads.xaxis[0], rk[0].xaxis[0]), (heads.yaxis[0], rk[0].yaxis[0])):
        assert axis.major_label_text_font_size == other.major_label_text_font_size
        assert axis.axis_label_text_font_size == other.axis_label_text_font_size
    assert heads.title.text_font_size == rk[0].title.text_font_size


# --- 5. long titles are shortened in the middle, as plain text -------------------------------

def test_short_text_keeps_both_ends():
    assert plots.short_text("short.csv") == "short.csv"
    name = "a" * 100 + "b" * 96 + ".csv"
    s = plots.short_text(name, 40)
    assert len(s) == 40 and "…" in s and s.startswith("a" * 20) and s.endswith("b" * 15 + ".csv")


def test_a_200_character_file_name_is_shortened_in_the_ground_truth_title():
    name = "<b>x</b>_" + "very_long_name_" * 13 + "end.csv"
    assert len(name) >= 200
    xy = np.random.default_rng(0).normal(size=(50, 2))
    title = f"Ground truth: {name}, n = 50"
    fig = _figure(plots.scatter(xy, ["#336699"] * 50, title=title))
    shown = fig.title.text
    assert "…" in shown and len(shown) < 60, shown
    assert shown.startswith("Ground truth: <b>x") and shown.endswith("end.csv, n = 50"), shown
    # it fits the plot's width, and it is the plain text itself: nothing escaped or interpreted
    assert plots.text_width_px(shown, plots._TITLE_FONT_PX) <= fig.width - plots._TITLE_INSET
    assert type(fig.title).__name__ == "Title"


def test_titles_that_fit_are_kept():
    for t, w in (("L0 (item 269): estimate vs truth", plots.HALF_WIDTH),
                 (plots.OVERLAY_TITLE, 675),
                 ("Ground truth: gaussian, n = 1,000", plots.SQUARE + 75)):
        assert plots.fit_title(t, w) == t


# --- 6. the Shifts step's bars, legends and colour bars ---------------------------------------

def _shift_figures(explorer):
    figs = [m for m in _step_models(explorer, "Shifts") if type(m).__name__ == "figure" and m.title is not None]
    return {f.title.text: f for f in figs}


def test_shift_bars_are_whole_and_their_legend_reads_like_the_others(explorer):
    by_title = _shift_figures(explorer)
    bars, spectrum = by_title["Shifts per landmark"], by_title["Eigenvalues λₖ of C, descending"]
    # the first and the last bar were cut in half by the edges of a categorical range
    quads = [r for r in bars.renderers if isinstance(r, GlyphRenderer) and type(r.glyph).__name__ == "Quad"]
    lefts = np.concatenate([np.asarray(r.data_source.data["left"]) for r in quads])
    rights = np.concatenate([np.asarray(r.data_source.data["right"]) for r in quads])
    assert bars.x_range.start < lefts.min() and rights.max() < bars.x_range.end
    # the legend: the size of the spectrum's, in the order of the bars in each group
    (legend,), (other,) = bars.legend, spectrum.legend
    assert legend.label_text_font_size == other.label_text_font_size
    names = [item.label.value for item in legend.items]
    by_left = sorted(quads, key=lambda r: np.asarray(r.data_source.data["left"])[0])
    order = [r.data_source.data["estimate"][0] for r in by_left]
    assert names == order == ["least squares", "final (LS + offset)", "true"]
    # the offset rule in the step's words, never the code's key
    assert [i.label.value for i in other.items if "offset used" in i.label.value] == ["offset used (λ₂)"]
    view = explorer._views[STEPS.index("Shifts")]
    text = " ".join(str(getattr(o, "object", "")) for o in view._body.objects if isinstance(o, pn.pane.Markdown))
    assert "Offset rule **λ₂**" in text and "lambda2" not in text
    # the colour bars say what their colours are
    titles = [cb.title for f in by_title.values() for cb in f.select(type=ColorBar)]
    assert titles and "value" not in titles and "score" in titles, titles


def test_shift_bar_labels_thin_out_instead_of_running_together():
    from loe_viz.app.views.shifts import shift_bars

    for l in (5, 12, 30):
        s = np.linspace(0.0, 1.0, l)
        fig = _figure(shift_bars(s, s, s))
        ticks = fig.xaxis[0].ticker.ticks
        labels = fig.xaxis[0].major_label_overrides
        assert ticks[0] == 0 and [labels[t] for t in ticks[:2]][0] == "L0"
        # each label has at least 42 px of the ~310 px frame ("L10L11" at l = 12 before)
        assert len(ticks) <= (plots.HALF_WIDTH - 100) // 42, (l, ticks)
        assert fig.x_range.start < -0.4 and fig.x_range.end > l - 0.6
        if l == 5:
            assert list(ticks) == [0, 1, 2, 3, 4]


def test_heatmap_labels_thin_out_instead_of_running_together():
    # l = 12 on the Shifts step: "0 2 4 6 8 10" in a frame 80 px wide, "8" and "10" touching
    for width in (plots.HEATMAP_WIDTH, plots.HALF_WIDTH):
        for l in (5, 12, 30, 50, 200):
            fig = _figure(plots.heatmap(np.arange(l * l, dtype=float).reshape(l, l), "W", width=width))
            frame_w, frame_h = fig.width - plots._HEATMAP_INSET[0], fig.height - plots._HEATMAP_INSET[1]
            assert frame_w >= 0.6 * width and abs(frame_w - frame_h) < 1  # a square frame, the bar below it
            assert [cb.location for cb in fig.select(type=ColorBar)] and fig.below[-1].__class__ is ColorBar
            xs, ys = fig.xaxis[0].ticker.ticks, fig.yaxis[0].ticker.ticks
            assert xs[0] == ys[0] == 0 and all(float(t).is_integer() for t in [*xs, *ys])
            step_x = xs[1] - xs[0] if len(xs) > 1 else l
            step_y = ys[1] - ys[0] if len(ys) > 1 else l
            assert step_x in (1, 2, 5, 10, 20, 50, 100) and step_y in (1, 2, 5, 10, 20, 50, 100), (xs, ys)
            # two labels' centres are a label and a gap apart: never touching
            label = plots.text_width_px(f"L{xs[-1]}", plots.TICK_FONT_PX)  # landmarks are L0 … L(l − 1)
            assert step_x * frame_w / l >= label + 8, (width, l, xs)
            assert step_y * frame_h / l >= plots.TICK_FONT_PX + 4, (width, l, ys)
            if l == 5:
                assert list(xs) == list(ys) == [0, 1, 2, 3, 4]
    # every landmark's row labelled at l = 12 where two heatmaps share a row (the EDM step), every
    # 2nd column ("L10 L11" would touch)
    fig = _figure(plots.heatmap(np.ones((12, 12)), "E", width=plots.HALF_WIDTH))
    assert list(fig.yaxis[0].ticker.ticks) == list(range(12)) and list(fig.xaxis[0].ticker.ticks) == list(range(0, 12, 2))


def test_legends_below_their_plots_keep_their_items_apart_and_wrap_onto_two_rows(explorer):
    # bokeh's 3 px ran a label into the next item's line ("Dykstra- - stopping tolerance"), and the bars'
    # three items in one row ran past the plot's right edge, where they were cut off
    legends = {}
    for step in ("Sample", "Shifts", "EDM"):
        for f in _step_models(explorer, step):
            if type(f).__name__ == "figure" and f.title is not None:
                legends.update({f.title.text: (f, lg) for lg in f.legend if lg.orientation == "horizontal"})
    assert {"The examples on the ground truth", "Shifts per landmark", "Landmark pairs: estimate vs truth",
            "Dykstra convergence (log scale)"} <= set(legends), sorted(legends)
    for title, (fig, legend) in legends.items():
        assert legend.spacing >= 12, title
    # two to a row where one row would not fit the plot's width (the bars' and the EDM pairs' three)
    rows = {t: lg.ncols for t, (f, lg) in legends.items()}
    assert rows["Shifts per landmark"] == rows["Landmark pairs: estimate vs truth"] == 2, rows
    assert rows["Dykstra convergence (log scale)"] == "auto", rows


# --- 7. stopping rules said where their figures are --------------------------------------------

def test_ranking_states_its_relative_stopping_rule(explorer):
    # "converged, final gradient norm 2.36" beside a curve from ~100 read as not converged
    k = STEPS.index("Ranking")
    _step_models(explorer, "Ranking")
    view = explorer._views[k]
    text = " ".join(str(getattr(o, "object", "")) for o in view._body.objects if isinstance(o, pn.pane.Markdown))
    assert "When a ranking stops" in text and "gain less than 0.1 of log-likelihood per item" in text
    assert "down from" in text


def test_the_edm_tolerance_line_is_in_the_legend(explorer):
    figs = [m for m in _step_models(explorer, "EDM") if type(m).__name__ == "figure" and m.title is not None]
    dyk = next(f for f in figs if f.title.text.startswith("Dykstra"))
    (legend,) = dyk.legend
    assert [i.label.value for i in legend.items] == ["Dykstra", "stopping tolerance 10⁻⁷"]
