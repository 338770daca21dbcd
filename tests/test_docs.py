"""The examples people copy run as written: docstring examples and the README's Python blocks."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import re
import warnings
from pathlib import Path

import pytest

import loe_viz

ROOT = Path(__file__).resolve().parents[1]
#: Modules whose source holds a docstring example (``__main__`` runs the command when imported).
EXAMPLE_MODULES = sorted(
    m.name for m in pkgutil.walk_packages(loe_viz.__path__, "loe_viz.")
    if not m.name.endswith("__main__") and not m.ispkg
    and ">>>" in Path(importlib.util.find_spec(m.name).origin).read_text(encoding="utf-8")
) + ["loe_viz.data"]  # a package with an example


@pytest.mark.parametrize("name", EXAMPLE_MODULES)
def test_docstring_examples_run_as_written(name):
    module = importlib.import_module(name)
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(module, name) if t.examples]  # in the module's namespace, as pytest's doctests
    assert tests, f"{name} has no example"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", loe_viz.LOEWarning)  # some examples fit tiny data on purpose
        for t in tests:
            runner.run(t)
    assert runner.failures == 0, f"{runner.failures} example(s) of {name} failed (the report is above)"


def test_readme_python_blocks_run_in_order(tmp_path, monkeypatch):
    """The README's Python blocks, run one after another in one namespace, as a reader pastes them."""
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
    assert len(blocks) >= 3
    monkeypatch.chdir(tmp_path)  # whatever a block writes lands here
    namespace: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", loe_viz.LOEWarning)
        for i, code in enumerate(blocks):
            exec(compile(code, f"README.md python block {i + 1}", "exec"), namespace)
    assert namespace["Z"].shape == (namespace["data"].n_items, 2)
    assert namespace["ste"].embedding_.shape == (namespace["n"], 2)
