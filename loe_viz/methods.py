"""The embedding methods of loe_viz in one place: name, estimator, label, colour, line, marker, triplets.

The explorer and the benchmarks read this registry instead of keeping their
own name -> class tables, method lists and colour tables.

Examples
--------
>>> from loe_viz.methods import METHODS, get_method
>>> list(METHODS)
['LOE', 'STE', 'LOESTE', 'TSTE', 'SOE', 'GNMDS', 'CKL']
>>> get_method("TSTE").label
't-STE'
>>> get_method("t-STE").name
'TSTE'
>>> get_method("LOE").landmark_triplets
True
"""

from __future__ import annotations

from dataclasses import dataclass

from .baselines import CKL, GNMDS, SOE, STE, TSTE
from .loe import LOE
from .loeste import LOESTE

__all__ = ["Method", "METHODS", "BASELINES", "get_method", "method_colour"]


@dataclass(frozen=True)
class Method:
    """One embedding method.

    Attributes
    ----------
    name : str
        Registry key, the estimator's class name (``"TSTE"``, ``"LOESTE"``).
    estimator : type
        The estimator class.
    label : str
        How the method is written for readers (``"t-STE"``, ``"LOE-STE"``).
    colour : str
        Hex colour of the method in every plot (app and benchmark pages).
    dash : str
        Bokeh line dash of the method's curves, and ``marker`` the Bokeh marker of its points: every
        method has its own of each, so that curves are told apart without their colours (a third of
        the tab10 pairs here fall below ΔE 12 for a colour-blind reader, SOE and GNMDS at 7).
    marker : str
    landmark_triplets : bool
        True when ``fit_oracle`` asks landmark-headed comparisons (LOE, and
        LOE-STE for its first stage); False when the method is fitted on
        uniformly random triplets (``fit`` on ``oracle.uniform_triplets(m)``).
    """

    name: str
    estimator: type
    label: str
    colour: str
    dash: str
    marker: str
    landmark_triplets: bool

    def __call__(self, **params):
        """A new estimator of this method with the given parameters."""
        return self.estimator(**params)


#: Every method, in the order the app lists and fits them.
METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method("LOE", LOE, "LOE", "#000000", "solid", "circle", True),
        Method("STE", STE, "STE", "#1f77b4", "dashed", "square", False),
        Method("LOESTE", LOESTE, "LOE-STE", "#8c564b", "dotdash", "diamond", True),
        Method("TSTE", TSTE, "t-STE", "#ff7f0e", "dotted", "triangle", False),
        Method("SOE", SOE, "SOE", "#2ca02c", "dashdot", "inverted_triangle", False),
        Method("GNMDS", GNMDS, "GNMDS", "#d62728", "12 4", "hex", False),
        Method("CKL", CKL, "CKL", "#9467bd", "2 2 8 2", "star", False),
    )
}

#: The loss-minimising baselines (uniform triplets only), in registry order.
BASELINES: tuple[str, ...] = tuple(k for k, m in METHODS.items() if not m.landmark_triplets)

_BY_LABEL = {m.label: m for m in METHODS.values()}


def get_method(name: str) -> Method:
    """The method with this registry name or label (``"TSTE"`` or ``"t-STE"``).

    Raises
    ------
    ValueError
        For an unknown name, listing the known ones.
    """
    method = METHODS.get(name) or _BY_LABEL.get(name)
    if method is None:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {name!r}")
    return method


def method_colour(name: str, default: str = "#333333") -> str:
    """The colour of a method by name or label; ``default`` for any other series."""
    method = METHODS.get(name) or _BY_LABEL.get(name)
    return method.colour if method is not None else default
