"""loe_viz: Landmark Ordinal Embedding with numba kernels.

The library (``import loe_viz``) needs only numpy, scipy and numba; the
interactive explorer lives in :mod:`loe_viz.app` and is imported on demand.
The baselines, triplet I/O and evaluation helpers are imported on first use
(they pull in ``scipy.optimize`` and more numba kernels), which keeps
``import loe_viz`` quick for the explorer's server.
"""

from importlib import import_module as _import_module

from .lmds import DimensionError
from .loe import LOE, LOEStages, LOEWarning
from .metrics import align, procrustes_error, triplet_accuracy, triplet_error
from .oracle import TripletOracle, total_budget
from .points import POINT_KINDS, load_points, make_points


def _installed_version() -> str:
    # The version of the installed distribution (pyproject.toml's, through the package metadata).
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("loe-viz")
    except PackageNotFoundError:  # a source checkout on sys.path, never installed
        return "0+unknown"


__version__ = _installed_version()

# name -> submodule, resolved on first attribute access (PEP 562)
_LAZY = {
    "STE": "baselines", "TSTE": "baselines", "SOE": "baselines", "GNMDS": "baselines", "CKL": "baselines",
    "FitHistory": "baselines",
    "LOESTE": "loeste",
    "read_triplets": "io", "write_triplets": "io", "TripletData": "io",
    "train_test_split_triplets": "evaluation", "heldout_accuracy": "evaluation",
    "cross_validate_triplets": "evaluation", "embedding_agreement": "evaluation",
    "select_dimension": "evaluation", "DimensionSelection": "evaluation", "clone_estimator": "evaluation",
    "TextProgress": "progress",
    "estimate_resources": "resources",
}

__all__ = [
    "LOE", "LOEStages", "LOEWarning", "DimensionError", "TripletOracle", "total_budget", "make_points",
    "load_points", "POINT_KINDS", "procrustes_error", "triplet_error", "triplet_accuracy", "align",
    *_LAZY,
]


def __getattr__(name):
    if name in _LAZY:
        value = getattr(_import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'loe_viz' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
