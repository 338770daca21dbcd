"""apps/explorer.ipynb runs top to bottom in a kernel of this interpreter."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # runs a Jupyter kernel

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOK = Path(__file__).resolve().parents[2] / "apps" / "explorer.ipynb"


@pytest.fixture
def kernel_name(tmp_path, monkeypatch):
    """A kernelspec running this very interpreter (no machine-wide kernel needed)."""
    name = "loe-viz-test"
    spec = tmp_path / "kernels" / name
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "loe_viz test", "language": "python",
    }))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))
    return name


def test_notebook_executes(kernel_name):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(nb, kernel_name=kernel_name, timeout=300,
                                     resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors, errors
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code"
                   for o in c.get("outputs", []) if o.get("output_type") == "stream")
    assert "procrustes" in text and "LOE fitted" in text
    # the explorer rendered inline (a Panel/bokeh output), not just a repr string
    mimes = {k for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
             for k in o.get("data", {})}
    assert any("bokeh" in m or "holoviews" in m or m == "text/html" for m in mimes), mimes
    # BokehJS and Panel's script are in the notebook itself (inline=True): a lecture hall without
    # internet gets the explorer, not an empty output
    outputs = json.dumps([o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])])
    assert "cdn.bokeh.org/bokeh/release" not in outputs and "/dist/panel.min.js" not in outputs
