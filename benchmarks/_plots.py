"""Bokeh helpers shared by the benchmark pages: error curves, tables and a standalone page.

Every page is one HTML file that loads BokehJS from its CDN, like
``benchmarks/results/scale.html``.
"""

from __future__ import annotations

import html
import math

from loe_viz.methods import method_colour

#: Colours of the series that are not loe_viz methods (those come from ``loe_viz.methods``).
COLOURS = {"cblearn STE": "#e377c2"}
_SPARE = ("#17becf", "#bcbd22", "#7f7f7f")

#: Values below this are drawn at this value on logarithmic axes (an error of exactly 0).
LOG_FLOOR = 1e-5


def colour(name: str, index: int = 0) -> str:
    """The colour of a method (by registry name or label), or a spare colour for other series."""
    return COLOURS.get(name) or method_colour(name, default=_SPARE[index % len(_SPARE)])


def _clean(values, log: bool):
    out = []
    for v in values:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            out.append(float("nan"))
        elif log:
            out.append(max(float(v), LOG_FLOOR))
        else:
            out.append(float(v))
    return out


def figure(title: str, x_label: str, y_label: str, *, x_log: bool = False, y_log: bool = False,
           width: int = 560, height: int = 400, x_ticks=None):
    """An empty Bokeh figure with a hover tool showing the series name and both values.

    Parameters
    ----------
    title, x_label, y_label : str
    x_log, y_log : bool, default False
        Logarithmic axes.
    width, height : int
        Size in pixels.
    x_ticks : sequence of float, optional
        Label exactly these x values (e.g. the sizes of a sweep on a log axis).

    Returns
    -------
    bokeh.plotting.figure
    """
    from bokeh.models import FixedTicker, HoverTool
    from bokeh.plotting import figure as bk_figure

    fig = bk_figure(title=title, x_axis_label=x_label, y_axis_label=y_label, width=width, height=height,
                    x_axis_type="log" if x_log else "linear", y_axis_type="log" if y_log else "linear")
    fig.add_tools(HoverTool(tooltips=[("", "@name"), ("x", "@x{0.000}"), ("y", "@y{0.0000}")]))
    if x_ticks is not None:
        fig.xaxis.ticker = FixedTicker(ticks=[float(t) for t in x_ticks])
    return fig


def _source(fig, name, x, y):
    from bokeh.models import ColumnDataSource, LogScale

    x_log, y_log = isinstance(fig.x_scale, LogScale), isinstance(fig.y_scale, LogScale)
    x, y = _clean(x, x_log), _clean(y, y_log)
    return ColumnDataSource({"x": x, "y": y, "name": [name] * len(x)})


def curve(fig, name: str, x, y, *, dash: str = "solid", markers: bool = True, index: int = 0, label: str | None = None):
    """Add a line (with markers) for one series; ``label`` defaults to ``name``."""
    src = _source(fig, name, x, y)
    col = colour(name, index)
    fig.line("x", "y", source=src, color=col, line_dash=dash, line_width=2, legend_label=label or name)
    if markers:
        fig.scatter("x", "y", source=src, color=col, size=4)


def point(fig, name: str, x: float, y: float, *, marker: str = "star", size: int = 16, label: str | None = None):
    """Add a single marked point (e.g. LOE's time and error)."""
    src = _source(fig, name, [x], [y])
    fig.scatter("x", "y", source=src, color=colour(name), marker=marker, size=size, legend_label=label or name)


def hline(fig, name: str, y: float, x_range: tuple[float, float], *, dash: str = "dashed", label: str | None = None):
    """A horizontal reference line from ``x_range[0]`` to ``x_range[1]`` (e.g. LOE's error)."""
    src = _source(fig, name, list(x_range), [y, y])
    fig.line("x", "y", source=src, color=colour(name), line_dash=dash, line_width=1.5, legend_label=label or name)


def finish(fig, location: str = "top_right"):
    """Legend placement and click-to-hide."""
    if fig.legend:
        fig.legend.location = location
        fig.legend.label_text_font_size = "8pt"
        fig.legend.click_policy = "hide"
    return fig


def fmt(value, spec: str = ".3g", none: str = "-") -> str:
    """Format a number for a table cell (``none`` for a missing value)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return none
    if isinstance(value, str):
        return value
    return format(value, spec)


def table(headers, rows) -> str:
    """An HTML table; cells are escaped strings (format numbers with :func:`fmt` first)."""
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>" for r in rows)
    return (f'<table border="1" cellspacing="0" cellpadding="3" style="font-size:12px; border-collapse:collapse">'
            f"<tr>{head}</tr>{body}</table>")


def write_page(path: str, title: str, blocks) -> None:
    """Write a standalone HTML page.

    Parameters
    ----------
    path : str
        Output file.
    title : str
        Page title.
    blocks : sequence
        Rows of the page, top to bottom: an HTML string, a Bokeh model, or a
        list of Bokeh models shown side by side.
    """
    from bokeh.embed import file_html
    from bokeh.layouts import column, row
    from bokeh.models import Div
    from bokeh.resources import CDN

    children = []
    for b in blocks:
        if isinstance(b, str):
            children.append(Div(text=b, width=1150))
        elif isinstance(b, (list, tuple)):
            children.append(row(*b))
        else:
            children.append(b)
    with open(path, "w") as fh:
        fh.write(file_html(column(*children), resources=CDN, title=title))
