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

__all__ = ["SAMPLE_FILES", "SAMPLE_DESCRIPTIONS", "sample_dir", "sample_path"]

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

#: What each bundled file holds, in a line (``loe-viz samples`` lists them).
SAMPLE_DESCRIPTIONS = {
    "european_capitals.csv": "the 44 capitals: name, country, latitude, longitude",
    "european_capitals_crowd.csv": "4,000 crowd answers on the capitals, by city name",
    "european_capitals_map_km.csv": "the capitals' true map in km (east_km,north_km)",
    "gaussian_2d_crowd.csv": "8,000 crowd answers on 200 Gaussian points",
    "gaussian_2d_landmark_triplets.csv": "25,000 list-order triplets headed by 10 landmarks (LOE's design)",
    "gaussian_2d_points.csv": "the 200 points of both gaussian_2d files (x,y)",
    "gaussian_3d_points.csv": "100 Gaussian points in 3-D (x,y,z)",
    "gaussian_3d_triplets.npz": "6,000 nearly noiseless triplets on those 100 points",
}


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
