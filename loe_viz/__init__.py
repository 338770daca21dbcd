"""loe_viz: Landmark Ordinal Embedding with numba kernels.

The library (``import loe_viz``) needs only numpy, scipy and numba; the
interactive explorer lives in :mod:`loe_viz.app` and is imported on demand.
"""

from .baselines import CKL, GNMDS, SOE, STE, TSTE, FitHistory
from .evaluation import (
    DimensionSelection,
    clone_estimator,
    cross_validate_triplets,
    embedding_agreement,
    heldout_accuracy,
    select_dimension,
    train_test_split_triplets,
)
from .io import TripletData, read_triplets, write_triplets
from .lmds import DimensionError
from .loe import LOE, LOEStages, LOEWarning
from .loeste import LOESTE
from .metrics import align, procrustes_error, triplet_accuracy, triplet_error
from .oracle import TripletOracle, total_budget
from .points import POINT_KINDS, load_points, make_points
from .progress import TextProgress
from .resources import estimate_resources

__version__ = "0.1.0"

__all__ = [
    "LOE",
    "LOEStages",
    "LOEWarning",
    "LOESTE",
    "STE",
    "TSTE",
    "SOE",
    "GNMDS",
    "CKL",
    "FitHistory",
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
    "read_triplets",
    "write_triplets",
    "TripletData",
    "train_test_split_triplets",
    "heldout_accuracy",
    "cross_validate_triplets",
    "embedding_agreement",
    "select_dimension",
    "DimensionSelection",
    "clone_estimator",
    "TextProgress",
    "estimate_resources",
]
