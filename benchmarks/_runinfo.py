"""What ran: the commit of the loe_viz a benchmark measured, saved with its results."""

from __future__ import annotations

import os
import subprocess

__all__ = ["code_version"]


def code_version() -> str:
    """The commit of the loe_viz that runs (and whether its tree differs from it)."""
    import loe_viz

    root = os.path.dirname(os.path.dirname(os.path.abspath(loe_viz.__file__)))
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                             check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "loe_viz"], cwd=root, capture_output=True,
                               text=True).stdout.strip()
        return rev + (" (with uncommitted changes)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
