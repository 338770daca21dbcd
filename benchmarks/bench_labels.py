"""How readable the explorer's labelled plots are: labels on the Sample step's example lines, and the
names each map of the capitals leaves to its hover tooltip.

    python benchmarks/bench_labels.py              # seeds 0..5 of the walk-through, n = 1000
    python benchmarks/bench_labels.py --seeds 10

For the Sample step's picture ("The examples on the ground truth") it prints, per seed, how many
of its item labels lie on an example line (a box that any of the drawn lines runs through), with
the lines given to the layout as obstacles and without them, in the same run. For the "Your
triplets" maps of the bundled capitals file it prints, per method, the names drawn, those left to
the tooltip, and the seconds the map took to build.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import panel as pn
from bokeh.models import GlyphRenderer

from loe_viz.app import Explorer, plots
from loe_viz.app.state import STEPS


def _column(data, spec, n):
    field = getattr(spec, "field", None)
    return list(data[field]) if field is not None else [getattr(spec, "value", spec)] * n


def labels_on_lines(seed: int) -> tuple[int, int]:
    """(labels an example line runs through, labels) of the Sample step's picture at ``seed``."""
    e = Explorer(n=1000, seed=seed)
    try:
        e.state.wait(300)
        k = STEPS.index("Sample")
        e.state.step = k
        view = e._views[k]
        view.refresh(force=True)
        fig = next(m for m in pn.panel(view).get_root().references() if type(m).__name__ == "figure"
                   and m.title is not None and m.title.text.startswith("The examples"))
    finally:
        e.close()
    glyphs = [r for r in fig.renderers if isinstance(r, GlyphRenderer)]
    (names,) = [r for r in glyphs if type(r.glyph).__name__ == "Text" and (r.glyph.text_color or "") != "white"]
    lines = [r for r in glyphs if type(r.glyph).__name__ == "Segment" and r.glyph.line_width >= 3]
    W, H = fig.width - plots._FRAME_INSET[0], fig.height - plots._FRAME_INSET[1] - plots.LEGEND_BELOW
    (x0, x1), (y0, y1) = (fig.x_range.start, fig.x_range.end), (fig.y_range.start, fig.y_range.end)

    def screen(x, y):
        return np.column_stack([(np.asarray(x) - x0) / (x1 - x0) * W, (y1 - np.asarray(y)) / (y1 - y0) * H])

    t = np.linspace(0.0, 1.0, 400)[None, :, None]
    on = np.vstack([(a[:, None] + t * (b - a)[:, None]).reshape(-1, 2) for a, b in (
        (screen(r.data_source.data["x0"], r.data_source.data["y0"]),
         screen(r.data_source.data["x1"], r.data_source.data["y1"])) for r in lines)])
    d = names.data_source.data
    n = len(d["label"])
    anchor = screen(d["x"], d["y"])
    font = float(str(getattr(names.glyph.text_font_size, "value", names.glyph.text_font_size)).rstrip("pt")) * 4 / 3
    h, gap, hit = 1.15 * font, names.glyph.padding, 0
    for (x, y), text, align, base in zip(anchor, d["label"], _column(d, names.glyph.text_align, n),
                                         _column(d, names.glyph.text_baseline, n)):
        w = plots.text_width_px(text, font)
        left = x + gap if align == "left" else x - gap - w
        top = y + gap if base == "top" else y - gap - h if base == "bottom" else y - h / 2
        hit += bool(((on[:, 0] > left) & (on[:, 0] < left + w) & (on[:, 1] > top) & (on[:, 1] < top + h)).any())
    return hit, n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=6)
    args = ap.parse_args()
    original = plots.point_labels

    def without_lines(*a, **k):
        k.pop("lines", None)
        return original(*a, **k)

    print("Sample step, labels on an example line (of the labels drawn), per seed:")
    for name, fn in (("lines ignored", without_lines), ("lines avoided", original)):
        plots.point_labels = fn
        counts = [labels_on_lines(s) for s in range(args.seeds)]
        plots.point_labels = original
        print(f"  {name}: {' '.join(f'{a}/{b}' for a, b in counts)}  total {sum(a for a, _ in counts)}"
              f"/{sum(b for _, b in counts)}")

    from loe_viz.app.triplets_state import TRIPLET_METHODS
    from loe_viz.app.views.triplets import TripletsView

    view = TripletsView(dispatch=lambda fn: fn())
    view.w_sample.value = "european_capitals_crowd.csv"
    view.state.methods = list(TRIPLET_METHODS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        view.state.run()
    print("Capitals maps (44 names): drawn, on hover only, seconds to build")
    for m in TRIPLET_METHODS:
        t0 = time.perf_counter()
        fig = view._embedding_figure(m)
        seconds = time.perf_counter() - t0
        rendered = pn.panel(fig).get_root()
        texts = [r for r in rendered.references() if isinstance(r, GlyphRenderer)
                 and type(r.glyph).__name__ == "Text" and (r.glyph.text_color or "") != "white"]
        drawn = len(texts[0].data_source.data["label"]) if texts else 0
        print(f"  {m:7s} {drawn:3d} {44 - drawn:3d}  {seconds:.2f} s")


if __name__ == "__main__":
    main()
