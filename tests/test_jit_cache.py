"""The kernels import, and run, where numba has no folder to cache them in."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: A child that empties numba's list of cache folders (the in-tree ``__pycache__``, the user's cache, a
#: ``NUMBA_CACHE_DIR``): as for a package installed read-only, used from an account whose home cannot be
#: written. Then every module of the library is imported and one kernel runs.
CHILD = """
import importlib, pkgutil
import numpy as np
import numba.core.caching as caching
for name in ("CacheImpl", "_CacheImpl"):  # numba >= 0.61, and before
    if hasattr(caching, name):
        getattr(caching, name)._locator_classes = []
import loe_viz
for m in pkgutil.walk_packages(loe_viz.__path__, "loe_viz."):
    if not m.name.startswith("loe_viz.app") and not m.name.endswith("__main__"):
        importlib.import_module(m.name)
from loe_viz.kernels.linalg import _project_hollow
out = np.empty((3, 3))
_project_hollow(np.arange(9.0).reshape(3, 3), out)
assert out[0, 1] == 2.0 and out[1, 1] == 0.0, out
assert type(_project_hollow._cache).__name__ == "NullCache"  # compiled, not cached
print("ok")
"""


def test_kernels_import_and_run_where_numba_cannot_cache(tmp_path):
    """numba raised 'RuntimeError: cannot cache function ...: no locator available' while decorating the first
    kernel, so ``import loe_viz`` (and every loe-viz command) ended in a traceback."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("NUMBA_CACHE_DIR", None)
    proc = subprocess.run([sys.executable, "-c", CHILD], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-3000:]


def test_the_command_line_says_when_every_run_compiles_the_kernels_again(tmp_path):
    """A read-only install and home compiled the kernels again in every run, silently: an LOE fit of 0.14 s took
    14 to 15 s, and nothing said why or that NUMBA_CACHE_DIR avoids it."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("NUMBA_CACHE_DIR", None)
    run = CHILD.split("import loe_viz\n")[0] + (
        "import sys\nfrom loe_viz.cli import main\n"
        "sys.exit(main(['simulate', 'gaussian', '-n', '40', '-o', 't.csv']))\n")
    proc = subprocess.run([sys.executable, "-c", run], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stderr.splitlines()[-1] == (
        "loe-viz simulate: note: numba found no folder it can write to cache the compiled kernels in (beside the "
        "installed package, or ~/.cache/numba), so every run compiles them again (about 15 s); set NUMBA_CACHE_DIR "
        "to a folder you can write to keep them"), proc.stderr
    proc = subprocess.run([sys.executable, "-m", "loe_viz.cli", "simulate", "gaussian", "-n", "40", "-o", "u.csv"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and "note: numba" not in proc.stderr, proc.stderr  # where it can cache: nothing
