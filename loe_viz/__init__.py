"""loe_viz: Landmark Ordinal Embedding with numba kernels.

The library (``import loe_viz``) needs only numpy, scipy and numba; the
interactive explorer lives in :mod:`loe_viz.app` and is imported on demand.
Every name below is imported on first use (numba alone takes a fifth of a
second, the baselines pull in ``scipy.optimize``), which keeps ``import
loe_viz`` and the ``loe-viz`` command's start quick: ``loe-viz --help`` and a
Ctrl-C just after starting it need none of them.
"""

from importlib import import_module as _import_module


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
    "LOE": "loe", "LOEStages": "loe", "LOEWarning": "loe", "DimensionError": "lmds",
    "TripletOracle": "oracle", "total_budget": "oracle",
    "POINT_KINDS": "points", "load_points": "points", "make_points": "points",
    "align": "metrics", "procrustes_error": "metrics", "triplet_accuracy": "metrics", "triplet_error": "metrics",
    "STE": "baselines", "TSTE": "baselines", "SOE": "baselines", "GNMDS": "baselines", "CKL": "baselines",
    "FitHistory": "baselines",
    "LOESTE": "loeste",
    "read_triplets": "io", "write_triplets": "io", "TripletData": "io",
    "train_test_split_triplets": "evaluation", "heldout_accuracy": "evaluation",
    "cross_validate_triplets": "evaluation", "embedding_agreement": "evaluation",
    "select_dimension": "evaluation", "DimensionSelection": "evaluation", "clone_estimator": "evaluation",
    "TextProgress": "progress",
    "estimate_resources": "resources",
    "NotFittedError": "_params",
}

__all__ = [*_LAZY]


def __getattr__(name):
    if name in _LAZY:
        value = getattr(_import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    # a public submodule as an attribute (``lv.metrics.sample_rows``), as before the names became lazy; not the
    # explorer (``loe_viz.app``), which imports Panel: a tool that probes attributes must not pull it in
    if name.isidentifier() and not name.startswith("_") and name != "app":
        from importlib.util import find_spec

        if find_spec(f"{__name__}.{name}") is not None:
            return _import_module(f".{name}", __name__)  # the import sets it as an attribute too
    raise AttributeError(f"module 'loe_viz' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
