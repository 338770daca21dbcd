"""loe_viz: Landmark Ordinal Embedding with numba kernels.

The library (``import loe_viz``) needs only numpy, scipy and numba; the
interactive explorer lives in :mod:`loe_viz.app` and is imported on demand.
"""

from .loe import LOE, LOEStages, LOEWarning
from .lmds import DimensionError
from .metrics import align, procrustes_error, triplet_accuracy, triplet_error
from .oracle import TripletOracle, total_budget
from .points import POINT_KINDS, load_points, make_points

__version__ = "0.1.0"

__all__ = [
    "LOE",
    "LOEStages",
    "LOEWarning",
    "DimensionError",
    "TripletOracle",
    "total_budget",
    "make_points",
    "load_points",
    "POINT_KINDS",
    "procrustes_error",
    "triplet_error",
    "triplet_accuracy",
    "align",
]
