"""Regenerate every bundled sample file from the library, reproducibly.

The files are package data of ``loe_viz`` (``loe_viz/data/``, so that an
installed wheel carries them and :mod:`importlib.resources` finds them); this
folder keeps the script, the README and a symbolic link to each file.

Usage (from the repository root)::

    python sample_data/make_sample_data.py            # rewrite loe_viz/data/
    python sample_data/make_sample_data.py --check    # regenerate in a temporary
                                                      # directory and compare bytes

Every random draw is seeded, so the files come out byte-for-byte identical as
long as :func:`loe_viz.make_points`, :class:`loe_viz.TripletOracle` and
:func:`loe_viz.io.write_triplets` do not change. See ``README.md`` beside this
script for what each file holds.
"""

from __future__ import annotations

import argparse
import csv
import filecmp
import io
import math
import os
import sys
import tempfile

import numpy as np

from loe_viz.io import write_triplets
from loe_viz.oracle import TripletOracle
from loe_viz.points import make_points

HERE = os.path.dirname(os.path.abspath(__file__))
# The package-data folder the files are written to (the links beside this script point there).
DATA = os.path.join(os.path.dirname(HERE), "loe_viz", "data")
EARTH_RADIUS_KM = 6371.0

# European capitals, approximate coordinates of the city centres in decimal degrees
# (WGS84, rounded to 0.01 degree), compiled for this project from general
# geographic knowledge. Geographic facts: public domain.
CAPITALS = [
    ("Amsterdam", "Netherlands", 52.37, 4.90),
    ("Andorra la Vella", "Andorra", 42.51, 1.52),
    ("Athens", "Greece", 37.98, 23.73),
    ("Belgrade", "Serbia", 44.79, 20.45),
    ("Berlin", "Germany", 52.52, 13.40),
    ("Bern", "Switzerland", 46.95, 7.45),
    ("Bratislava", "Slovakia", 48.15, 17.11),
    ("Brussels", "Belgium", 50.85, 4.35),
    ("Bucharest", "Romania", 44.43, 26.10),
    ("Budapest", "Hungary", 47.50, 19.04),
    ("Chișinău", "Moldova", 47.01, 28.86),
    ("Copenhagen", "Denmark", 55.68, 12.57),
    ("Dublin", "Ireland", 53.35, -6.26),
    ("Helsinki", "Finland", 60.17, 24.94),
    ("Kyiv", "Ukraine", 50.45, 30.52),
    ("Lisbon", "Portugal", 38.72, -9.14),
    ("Ljubljana", "Slovenia", 46.06, 14.51),
    ("London", "United Kingdom", 51.51, -0.13),
    ("Luxembourg", "Luxembourg", 49.61, 6.13),
    ("Madrid", "Spain", 40.42, -3.70),
    ("Minsk", "Belarus", 53.90, 27.57),
    ("Monaco", "Monaco", 43.74, 7.42),
    ("Moscow", "Russia", 55.76, 37.62),
    ("Nicosia", "Cyprus", 35.17, 33.36),
    ("Oslo", "Norway", 59.91, 10.75),
    ("Paris", "France", 48.86, 2.35),
    ("Podgorica", "Montenegro", 42.44, 19.26),
    ("Prague", "Czechia", 50.08, 14.44),
    ("Reykjavík", "Iceland", 64.15, -21.94),
    ("Riga", "Latvia", 56.95, 24.11),
    ("Rome", "Italy", 41.90, 12.50),
    ("San Marino", "San Marino", 43.94, 12.45),
    ("Sarajevo", "Bosnia and Herzegovina", 43.86, 18.41),
    ("Skopje", "North Macedonia", 42.00, 21.43),
    ("Sofia", "Bulgaria", 42.70, 23.32),
    ("Stockholm", "Sweden", 59.33, 18.07),
    ("Tallinn", "Estonia", 59.44, 24.75),
    ("Tirana", "Albania", 41.33, 19.82),
    ("Vaduz", "Liechtenstein", 47.14, 9.52),
    ("Valletta", "Malta", 35.90, 14.51),
    ("Vienna", "Austria", 48.21, 16.37),
    ("Vilnius", "Lithuania", 54.69, 25.28),
    ("Warsaw", "Poland", 52.23, 21.01),
    ("Zagreb", "Croatia", 45.81, 15.98),
]


def _write_points(path, X, names, fmt="%.6f"):
    """Numeric CSV with a header (rows in item order), readable by loe_viz.load_points."""
    with open(path, "w", newline="\n", encoding="utf-8") as fh:
        fh.write(",".join(names) + "\n")
        for row in X:
            fh.write(",".join(fmt % v for v in row) + "\n")


def capitals_xyz_1000km():
    """Capitals as 3-D points on the Earth's sphere, in units of 1000 km.

    Straight-line (chord) distances between these points increase with the
    great-circle distance, so triplet answers on them are answers about travel
    distance "as the crow flies".
    """
    lat = np.radians([c[2] for c in CAPITALS])
    lon = np.radians([c[3] for c in CAPITALS])
    r = EARTH_RADIUS_KM / 1000.0
    return np.column_stack([r * np.cos(lat) * np.cos(lon), r * np.cos(lat) * np.sin(lon), r * np.sin(lat)])


def capitals_map_km():
    """An equirectangular map projection (km east / north of 50 N, 15 E), for plotting and Procrustes."""
    lat = np.array([c[2] for c in CAPITALS])
    lon = np.array([c[3] for c in CAPITALS])
    lat0, lon0 = 50.0, 15.0
    k = math.pi / 180.0 * EARTH_RADIUS_KM
    return np.column_stack([(lon - lon0) * k * math.cos(math.radians(lat0)), (lat - lat0) * k])


def generate(out_dir: str) -> list[str]:
    """Write every sample file into ``out_dir``; return their names."""
    written = []

    def path(name):
        written.append(name)
        return os.path.join(out_dir, name)

    # 1. Gaussian 2-D points (the paper's x ~ N(0, I/(2d))) with LOE-style and crowd triplets.
    X = make_points("gaussian", 200, d=2, random_state=20190)
    _write_points(path("gaussian_2d_points.csv"), X, ["x", "y"])
    oracle = TripletOracle(X, temperature=0.2, random_state=20191)
    landmarks = np.arange(10)
    T_lm = oracle.landmark_triplets(landmarks, per_landmark=2500)
    write_triplets(path("gaussian_2d_landmark_triplets.csv"), T_lm)
    T_uni = oracle.uniform_triplets(8000)
    write_triplets(path("gaussian_2d_crowd.csv"), T_uni, layout="crowd", random_state=20192)

    # 2. Gaussian 3-D points, nearly noiseless uniform triplets as .npz (for dimension selection).
    B = make_points("gaussian", 100, d=3, random_state=20193)
    _write_points(path("gaussian_3d_points.csv"), B, ["x", "y", "z"])
    T_b = TripletOracle(B, temperature=0.02, random_state=20194).uniform_triplets(6000)
    write_triplets(path("gaussian_3d_triplets.npz"), T_b)

    # 3. European capitals: a real point set, with answers named by city.
    names = [c[0] for c in CAPITALS]
    with open(path("european_capitals.csv"), "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["name", "country", "latitude", "longitude"])
        for name, country, lat, lon in CAPITALS:
            w.writerow([name, country, f"{lat:.2f}", f"{lon:.2f}"])
    _write_points(path("european_capitals_map_km.csv"), capitals_map_km(), ["east_km", "north_km"], fmt="%.1f")
    cap = TripletOracle(capitals_xyz_1000km(), temperature=0.1, random_state=20195)
    T_cap = cap.uniform_triplets(4000)
    buf = io.BytesIO()
    write_triplets(buf, T_cap, labels=names, layout="crowd", random_state=20196)
    text = buf.getvalue().decode("utf-8").replace("head,left,right,winner", "Center,Left,Right,Answer", 1)
    with open(path("european_capitals_crowd.csv"), "w", newline="", encoding="utf-8") as fh:
        fh.write(text)
    return written


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="regenerate in a temporary directory and compare")
    parser.add_argument("--out", default=DATA, help="output directory (default: loe_viz/data/)")
    args = parser.parse_args(argv)
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            names = generate(tmp)
            bad = [n for n in names if not os.path.exists(os.path.join(DATA, n))
                   or not filecmp.cmp(os.path.join(tmp, n), os.path.join(DATA, n), shallow=False)]
        if bad:
            print("differ from a fresh regeneration:", ", ".join(bad))
            return 1
        print(f"all {len(names)} sample files are reproduced byte for byte")
        return 0
    names = generate(args.out)
    for n in names:
        print(f"{os.path.getsize(os.path.join(args.out, n)):>8} bytes  {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
