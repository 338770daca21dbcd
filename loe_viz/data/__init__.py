"""The bundled sample files (package data), found through :mod:`importlib.resources`.

They are made by ``sample_data/make_sample_data.py`` of the source repository,
which also describes them (``sample_data/README.md``). Use :func:`sample_path`
rather than a path relative to the source tree: an installed wheel has no
``sample_data/`` folder, only this package.

>>> from loe_viz.data import sample_path
>>> sample_path("european_capitals_crowd.csv").name
'european_capitals_crowd.csv'
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["SAMPLE_FILES", "sample_dir", "sample_path"]

#: Every bundled file, by name.
SAMPLE_FILES = (
    "european_capitals.csv",
    "european_capitals_crowd.csv",
    "european_capitals_map_km.csv",
    "gaussian_2d_crowd.csv",
    "gaussian_2d_landmark_triplets.csv",
    "gaussian_2d_points.csv",
    "gaussian_3d_points.csv",
    "gaussian_3d_triplets.npz",
)


def sample_dir() -> Path:
    """The folder holding the bundled files (inside the installed package)."""
    return Path(str(resources.files(__name__)))


def sample_path(name: str) -> Path:
    """Path of one bundled file.

    Parameters
    ----------
    name : str
        One of :data:`SAMPLE_FILES`.

    Returns
    -------
    pathlib.Path
    """
    if name not in SAMPLE_FILES:
        raise ValueError(f"no bundled sample named {name!r}; the samples are: {', '.join(SAMPLE_FILES)}")
    return sample_dir() / name
