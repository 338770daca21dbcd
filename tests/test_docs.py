"""The examples people copy run as written: docstring examples, the README's Python blocks and the command-line
session of docs/cli.md."""

from __future__ import annotations

import doctest
import importlib
import os
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


def _console_session(path: Path):
    """The ``$ command`` lines of a Markdown file's console blocks, each with the lines it printed and the exit
    status the session shows after it (``[exit status N]``, else 0)."""
    steps = []
    for block in re.findall(r"```console\n(.*?)```", path.read_text(encoding="utf-8"), re.S):
        for line in block.splitlines():
            if line.startswith("$ "):
                steps.append([line[2:], [], 0])
            elif m := re.fullmatch(r"\[exit status (\d+)\]", line):
                steps[-1][2] = int(m[1])
            else:
                steps[-1][1].append(line)
    return steps


def _shape(line: str) -> str:
    """A printed line without what changes from run to run or machine to machine: times, measured figures and
    coordinates (decimal numbers), and the folder the samples are installed in."""
    return re.sub(r"-?\d+\.\d+(e[+-]?\d+)?", "#", line)


@pytest.mark.slow
def test_cli_session_runs_as_written(tmp_path):
    """docs/cli.md's session, command by command, from an empty directory: every command works as shown, prints
    the lines shown (up to times and decimals) and exits with the status shown. It copied a sample 'here' with no
    command for it."""
    import subprocess
    import sys

    bin_dir, work = tmp_path / "bin", tmp_path / "session"
    bin_dir.mkdir(), work.mkdir()
    (bin_dir / "loe-viz").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m loe_viz "$@"\n')
    (bin_dir / "loe-viz").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "COLUMNS": "80",
           "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    steps = _console_session(ROOT / "docs" / "cli.md")
    assert len(steps) >= 12
    for command, shown, status in steps:
        if command.startswith("loe-viz explore"):
            continue  # a server: tests/test_cli.py serves the page
        if (m := re.fullmatch(r"cat (\S+)", command)) and not (work / m[1]).exists():
            (work / m[1]).write_text("\n".join(shown) + "\n", encoding="utf-8")  # the file the session shows
        proc = subprocess.run(command, shell=True, cwd=work, env=env, capture_output=True, text=True, timeout=900)
        printed = (proc.stdout + proc.stderr).splitlines()
        assert proc.returncode == status, (command, proc.stdout, proc.stderr)
        assert [_shape(x) for x in printed] == [_shape(x) for x in shown], command


def test_readme_command_lines_are_valid_loe_viz_commands():
    """The README's loe-viz lines name sub-commands and options that exist (their files are the reader's own)."""
    import shlex

    from loe_viz.cli import build_parser

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = [ln.split("  #")[0].strip() for block in re.findall(r"```bash\n(.*?)```", text, re.S)
             for ln in block.splitlines() if ln.startswith("loe-viz ")]
    assert len(lines) >= 5 and any(ln.startswith("loe-viz samples") for ln in lines)
    for line in lines:
        args, unknown = build_parser().parse_known_args(shlex.split(line)[1:])
        assert args.command and not unknown, line


def test_readme_command_lines_can_be_run_one_after_another():
    """A README line that writes an output an earlier line wrote passes -f: '... -d auto' after '... -d 2' stopped at
    'the output mydata_ste.csv exists'."""
    import shlex

    from loe_viz.cli import build_parser

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = [ln.split("  #")[0].strip() for block in re.findall(r"```bash\n(.*?)```", text, re.S)
             for ln in block.splitlines() if ln.startswith("loe-viz ")]
    written = set()
    for line in lines:
        args = build_parser().parse_known_args(shlex.split(line)[1:])[0]
        if args.command not in ("embed", "simulate"):
            continue
        out = args.output or (f"{Path(args.file).stem}_{args.method}.csv" if args.command == "embed" else
                              "triplets.csv")
        assert out not in written or args.force, f"{line}: {out} was written by an earlier line; pass -f"
        written.add(out)


def test_readme_options_of_loe_are_its_constructors_and_progress_is_the_calls():
    """The README's "Also optional" sentence lists LOE(...) settings: each is a constructor parameter. It listed
    ``progress=True``, which is an argument of ``fit``/``fit_oracle``/``fit_transform`` (LOE(progress=True) is a
    TypeError)."""
    import inspect

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    para = re.search(r"\nAlso optional:(.*?)\n\n", text, re.S)[1]
    ctor, _, call = para.partition("Progress is an argument of the call")
    named = set(re.findall(r"`(\w+)(?:=[^`]*)?`", ctor)) - {"lv", "dask"}
    settings = set(loe_viz.LOE().get_params())
    assert {"offset", "n_jobs", "executor", "memory_limit"} <= named
    assert named - {"estimate_resources"} <= settings, named - settings
    assert "progress" in call and "progress" not in settings
    for cls in (loe_viz.LOE, loe_viz.LOESTE):
        for method in ("fit", "fit_oracle", "fit_transform"):
            assert "progress" in inspect.signature(getattr(cls, method)).parameters, (cls, method)
    for cls in (loe_viz.STE, loe_viz.TSTE, loe_viz.SOE, loe_viz.GNMDS, loe_viz.CKL):
        assert "progress" in inspect.signature(cls.fit_transform).parameters, cls
