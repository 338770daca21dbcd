"""The ``loe-viz`` command, run as ``python -m loe_viz.cli`` in a subprocess (this checkout's code),
and the bundled samples found as package data."""

from __future__ import annotations

import base64
import csv
import fnmatch
import importlib.resources
import io
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
import tomllib
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from loe_viz.cli import websocket_origins
from loe_viz.data import SAMPLE_FILES, sample_dir, sample_path
from loe_viz.io import read_triplets
from loe_viz.metrics import procrustes_error
from loe_viz.oracle import total_budget
from loe_viz.points import load_points

pytestmark = pytest.mark.slow  # every test starts the command in a new Python process

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def run(*args, cwd, timeout=600):
    return subprocess.run([sys.executable, "-m", "loe_viz.cli", *map(str, args)], cwd=cwd, env=ENV,
                          capture_output=True, text=True, timeout=timeout)


def one_line_error(proc, code: int, prefix: str) -> str:
    assert proc.returncode == code, (proc.stdout, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert lines[0].startswith(prefix), lines[0]
    return lines[0]


def read_embedding(path: Path):
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    return rows[0], [r[1] for r in rows[1:]], np.array([[float(v) for v in r[2:]] for r in rows[1:]])


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    """``loe-viz simulate`` once: 60 Gaussian points, nearly noiseless triplets."""
    d = tmp_path_factory.mktemp("sim")
    proc = run("simulate", "gaussian", "-n", 60, "--temperature", 0.02, "--budget", 30, "--seed", 4,
               "-o", "t.csv", cwd=d)
    assert proc.returncode == 0, proc.stderr
    # LOE's design: triplets headed by 8 landmarks (LOE needs more items, and some noise, to do well)
    lm = run("simulate", "gaussian", "-n", 200, "--temperature", 0.2, "--budget", 30, "--seed", 4,
             "--landmarks", 8, "-o", "l.csv", cwd=d)
    assert lm.returncode == 0, lm.stderr
    return d, proc


# --------------------------------------------------------------------- help
def test_help_texts(tmp_path):
    top = run("--help", cwd=tmp_path)
    assert top.returncode == 0 and top.stderr == ""
    for cmd in ("explore", "embed", "simulate", "info", "samples"):
        assert cmd in top.stdout
    expected = {
        "explore": ["--port", "--address", "--allow-websocket-origin", "--warm", "--show", "127.0.0.1"],
        "embed": ["FILE", "--method", "loeste", "--landmarks N|auto", "--heldout", "--seed", "-o OUT",
                  "item,label,x1..xd", ".npz", "--force", "--skip-bad-rows"],
        "simulate": ["KIND", "swiss_roll", "-n N", "--temperature", "--budget", "_points.csv"],
        "info": ["FILE", "--layout"],
        "samples": ["NAME", "-o OUT", "--force", "current directory"],
    }
    for cmd, words in expected.items():
        proc = run(cmd, "--help", cwd=tmp_path)
        assert proc.returncode == 0 and proc.stdout.startswith(f"usage: loe-viz {cmd}"), proc.stderr
        for w in words:
            assert w in proc.stdout, (cmd, w)
    version = run("--version", cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.startswith("loe-viz ")


def test_usage_errors_exit_2_on_one_line(tmp_path):
    assert one_line_error(run(cwd=tmp_path), 2, "loe-viz: error: name a command")
    line = one_line_error(run("embed", cwd=tmp_path), 2, "loe-viz embed: error: ")
    assert "FILE" in line and line.endswith("(see loe-viz embed --help)")
    line = one_line_error(run("embed", "x.csv", "--method", "umap", cwd=tmp_path), 2, "loe-viz embed: error: ")
    assert "invalid choice: 'umap'" in line
    line = one_line_error(run("embed", "x.csv", "--heldout", "1.5", cwd=tmp_path), 2, "loe-viz embed: error: ")
    assert "expected a fraction in [0, 1), got '1.5'" in line
    line = one_line_error(run("embed", "x.csv", "--landmarks", "many", cwd=tmp_path), 2, "loe-viz embed: error: ")
    assert "expected a positive integer or 'auto', got 'many'" in line
    line = one_line_error(run("simulate", "gaussian", "-n", 2, cwd=tmp_path), 2, "loe-viz simulate: error: ")
    assert "-n must be at least 3" in line
    one_line_error(run("simulate", "hexagon", "-n", 20, cwd=tmp_path), 2, "loe-viz simulate: error: ")
    one_line_error(run("explore", "--port", "http", cwd=tmp_path), 2, "loe-viz explore: error: ")
    # settings in the command's own terms, refused before the file is read (x.csv does not exist)
    for args, message in [
        (("embed", "x.csv", "--landmarks", 3), "--landmarks 3 is too few for -d 2: LOE needs at least d + 3 = 5"),
        (("embed", "x.csv", "--seed", -1), "argument --seed: expected a non-negative integer, got '-1'"),
        (("embed", "x.csv", "--max-seconds", 0), "argument --max-seconds: expected a finite number > 0, got '0'"),
        (("embed", "x.csv", "--max-seconds", -1), "argument --max-seconds: expected a finite number > 0, got '-1'"),
        (("info", "x.csv", "--limit", "size=9"), "argument --limit: expected KEY=VALUE with KEY one of array_bytes, "
                                                 "compression_ratio, label_bytes (e.g. array_bytes=4GiB), got "
                                                 "'size=9'"),
        (("simulate", "gaussian", "-n", 10, "--budget", 0.001),
         "--budget 0.001 asks for 0.001 n ln n = 0 triplets at -n 10; raise --budget"),
        (("simulate", "swiss_roll", "-n", 10, "-d", 2), "-d 2 is too small for swiss_roll points: they need -d 3"),
        (("simulate", "gaussian", "-n", 10, "-o", "-"), "-o - (standard output) cannot take both files"),
        (("simulate", "gaussian", "-n", 10, "-o", "/dev/null"), "-o /dev/null is not a regular file, and simulate "
                                                                 "writes the points beside the triplets"),
    ]:
        assert message in one_line_error(run(*args, cwd=tmp_path), 2, f"loe-viz {args[0]}: error: ")
    assert os.listdir(tmp_path) == []


# ------------------------------------------------------------------ simulate
def test_simulate_writes_triplets_and_points(simulated):
    d, proc = simulated
    data = read_triplets(d / "t.csv")
    X = load_points(d / "t_points.csv")
    assert X.shape == (60, 2) and data.n_items == 60
    assert data.n_triplets == total_budget(60, 30) and data.layout == "list-order"
    assert "the true points satisfy" in proc.stdout
    # nearly noiseless answers: the true points satisfy almost all of them
    truth = float(proc.stdout.split("the true points satisfy ")[1].split()[0])
    assert truth > 0.97


def test_simulate_landmark_design_and_crowd_layout(tmp_path):
    proc = run("simulate", "moons", "-n", 50, "--landmarks", 5, "--budget", 10, "--layout", "crowd",
               "-o", "m.csv", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = read_triplets(tmp_path / "m.csv")
    assert data.layout == "crowd" and np.unique(data.triplets[:, 0]).size == 5
    assert "headed by 5 landmarks" in proc.stdout


def test_simulate_refuses_what_memory_or_disk_cannot_hold_before_drawing(tmp_path, monkeypatch, capsys):
    """-n 10^9 allocated 10 GB of points before anything was checked (the triplets would take 22.7 TiB)."""
    t0 = time.perf_counter()
    line = one_line_error(run("simulate", "gaussian", "-n", 10**9, cwd=tmp_path), 2, "loe-viz simulate: error: ")
    assert time.perf_counter() - t0 < 60, "refused only after drawing"
    assert line.startswith("loe-viz simulate: error: -n 1,000,000,000 with --budget 100 draws 2,072,326,583,694 "
                           "triplets (c n ln n), which need about 22.7 TiB of memory, more than this run may use (")
    assert line.endswith("); lower -n or --budget (see loe-viz simulate --help)")
    # the disk: 690,775 triplets of ids below 1000 take up to 7.9 MiB as CSV, checked before the draw
    import shutil
    import types

    from loe_viz import cli

    monkeypatch.setattr(shutil, "disk_usage", lambda path: types.SimpleNamespace(total=10**9, used=10**9, free=1000))
    before = [signal.getsignal(sig) for sig in cli._ENDING_SIGNALS]
    assert cli.main(["simulate", "gaussian", "-n", "1000", "-o", str(tmp_path / "t.csv")]) == 1
    # main() called from Python leaves the process's own handling as it was (the defaults, or what a shell ignores
    # for a job in the background: SIGQUIT)
    assert [signal.getsignal(sig) for sig in cli._ENDING_SIGNALS] == before and len(cli._ENDING_SIGNALS) >= 1
    assert capsys.readouterr().err == (f"loe-viz simulate: error: cannot write {tmp_path / 't.csv'}: the 690,775 "
                                       "triplets and the points take up to 7.9 MiB and its folder has 1000 B free; "
                                       "lower -n or --budget, or write .npz\n")
    assert os.listdir(tmp_path) == []


def test_simulate_names_what_fills_the_memory_in_a_line_one_can_read(tmp_path, capsys):
    """--budget 1e300 printed a 303-digit count and a 295-digit size; -d 10^7 blamed the triplets and said to lower
    -n or --budget."""
    from loe_viz import cli

    assert cli.main(["simulate", "gaussian", "-n", "100", "--budget", "1e300", "-o", str(tmp_path / "t.csv")]) == 2
    assert re.match(r"^loe-viz simulate: error: -n 100 with --budget 1e\+300 draws 4\.61e\+302 triplets \(c n ln n\), "
                    r"which need about 5\.03e\+291 TiB of memory, more than this run may use \(.*\); lower -n or "
                    r"--budget \(see loe-viz simulate --help\)\n$", capsys.readouterr().err)
    assert cli.main(["simulate", "gaussian", "-n", "100", "-d", "100000000", "-o", str(tmp_path / "t.csv")]) == 2
    assert re.match(r"^loe-viz simulate: error: -n 100 points in -d 100,000,000 dimensions, which need about 223\.6 GiB "
                    r"of memory, more than this run may use \(.*\); lower -n or -d \(see loe-viz simulate --help\)\n$",
                    capsys.readouterr().err)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGHUP", "SIGQUIT"])
def test_an_ending_signal_mid_write_leaves_no_file_behind(tmp_path, signame):
    """``kill`` or ``timeout`` (SIGTERM), a closed terminal or ssh session (SIGHUP) and Ctrl-\\ (SIGQUIT) used to end
    the command at once, leaving the hidden temporary file of a write (700 MB once); they now unwind like Ctrl-C.
    The triplet write here stalls after its first byte."""
    if not hasattr(signal, signame):
        pytest.skip(f"no {signame} on this platform")
    sig = getattr(signal, signame)
    child = ("import sys, time, loe_viz.io as lio\n"
             "from loe_viz.io.writing import write_file\n"
             "lio.write_triplets = lambda path, *a, **k: write_file(path, lambda fh: (fh.write(b'x'), fh.flush(), "
             "time.sleep(120)))\n"
             "from loe_viz.cli import main\n"
             "sys.exit(main(['simulate', 'gaussian', '-n', '50', '-o', 't.csv']))\n")
    # as from a terminal: a shell ignores SIGQUIT (and SIGINT) in a job it starts in the background, and the child
    # inherits that (the command then rightly leaves a signal its caller ignores alone)
    proc = subprocess.Popen([sys.executable, "-c", child], cwd=tmp_path, env=ENV, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(sig, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 120
        while not any(f.startswith(".tmp-") for f in os.listdir(tmp_path)):
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.poll() else "slow"
            time.sleep(0.02)
        proc.send_signal(sig)
        assert proc.wait(timeout=30) == 128 + sig
    finally:
        proc.kill()
    assert os.listdir(tmp_path) == []


# --------------------------------------------------------------------- embed
@pytest.mark.parametrize("method,file,extra", [("ste", "t.csv", []), ("loe", "l.csv", ["--landmarks", "8"])])
def test_embed_simulated_triplets(simulated, method, file, extra):
    d, _ = simulated
    out = d / f"emb_{method}.csv"
    proc = run("embed", file, "--method", method, *extra, "-o", out.name, cwd=d)
    assert proc.returncode == 0, proc.stderr
    acc = float(proc.stdout.split("held-out accuracy ")[1].split()[0])
    assert acc > {"ste": 0.9, "loe": 0.8}[method], proc.stdout  # the truth: 0.98 and 0.87
    assert "fit " in proc.stdout and f"to {out.name}" in proc.stdout
    header, labels, Z = read_embedding(out)
    X = load_points(d / file.replace(".csv", "_points.csv"))
    assert header == ["item", "label", "x1", "x2"] and labels == [str(i) for i in range(len(X))]
    assert procrustes_error(Z, X) < 0.1, procrustes_error(Z, X)


def test_embed_bundled_sample_keeps_labels(tmp_path):
    proc = run("embed", sample_path("european_capitals_crowd.csv"), "--method", "ste", "-d", 2, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    acc = float(proc.stdout.split("held-out accuracy ")[1].split()[0])
    assert acc > 0.85
    assert "warning: only" not in proc.stderr  # 800 held out
    header, labels, Z = read_embedding(tmp_path / "european_capitals_crowd_ste.csv")  # the default name
    names = [r.split(",")[0] for r in sample_path("european_capitals.csv").read_text("utf-8").splitlines()[1:]]
    assert header[:2] == ["item", "label"] and labels == names
    truth = load_points(sample_path("european_capitals_map_km.csv"))
    assert procrustes_error(Z, truth) < 0.1


def test_a_held_out_accuracy_of_a_few_triplets_is_called_a_rough_estimate(tmp_path):
    # two triplets in a file of blank lines: "held-out accuracy 0.0000" of the one held out, said as a measurement
    (tmp_path / "two.csv").write_text("head,winner,loser\n0,1,2\n\n\n1,2,0\n\n")
    proc = run("embed", "two.csv", "--method", "ste", "-o", "-", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "STE: held-out accuracy 0.0000 (training 1.0000)" in proc.stderr, proc.stderr
    assert ("loe-viz: warning: only 1 triplet held out: the held-out accuracy is a rough estimate (its standard error "
            "can reach 0.5 / sqrt(1) = 0.50); a larger --heldout, or more triplets, makes it a measurement"
            ) in proc.stderr.splitlines(), proc.stderr


def test_embed_loeste_starts_from_its_own_default_landmarks(tmp_path):
    # --landmarks auto (the default) leaves LOE-STE its start (4 (d + 3) busy heads), not LOE's held-out search
    proc = run("embed", sample_path("european_capitals_crowd.csv"), "--method", "loeste", "-o", "-", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert ", 20 landmarks, " in proc.stderr, proc.stderr
    assert float(proc.stderr.split("held-out accuracy ")[1].split()[0]) > 0.85
    proc = run("embed", sample_path("european_capitals_crowd.csv"), "--method", "loeste", "--landmarks", 8,
               "-o", "-", cwd=tmp_path)
    assert proc.returncode == 0 and ", 8 landmarks, " in proc.stderr, proc.stderr


def test_embed_heldout_zero_and_progress(simulated):
    d, _ = simulated
    proc = run("embed", "t.csv", "--method", "loe", "--landmarks", "auto", "--heldout", 0, "--progress",
               "-o", "-", cwd=d)
    assert proc.returncode == 0, proc.stderr
    # -o -: the CSV alone on standard output, the messages and the tqdm bars on standard error
    assert proc.stdout.startswith("item,label,x1,x2\n0,0,") and len(proc.stdout.splitlines()) == 61
    assert "training accuracy" in proc.stderr and "nothing held out" in proc.stderr
    assert "ranking: 100%" in proc.stderr


def test_readers_advice_names_this_commands_options(tmp_path):
    (tmp_path / "u16.csv").write_text("head,winner,loser\n0,1,2\n1,2,0\n2,0,1\n", encoding="utf-16")
    (tmp_path / "four.csv").write_text("0,1,2,2\n1,2,0,0\n2,0,1,1\n", encoding="utf-8")
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<i8", "fortran_order": False, "shape": (10**8, 3)})
    (tmp_path / "huge.npy").write_bytes(header.getvalue() + bytes(100))  # declares 2.4 GB, holds 100 bytes
    for name, advice, fixed in [("u16.csv", "pass --encoding utf-16 or save it as UTF-8", ["--encoding", "utf-16"]),
                                ("four.csv", "or pass --layout", ["--layout", "crowd"]),
                                ("huge.npy", "(raise it with --limit array_bytes=...)", None)]:
        assert one_line_error(run("info", name, cwd=tmp_path), 1, "loe-viz info: error: ").endswith(advice)
        if fixed:
            assert run("info", name, *fixed, cwd=tmp_path).returncode == 0
    line = one_line_error(run("info", "huge.npy", "--limit", "array_bytes=1e10", cwd=tmp_path), 1, "loe-viz info: ")
    assert line.endswith("its header declares shape (100000000, 3), 2,400,000,000 bytes, but only 100 follow)")
    line = one_line_error(run("info", "huge.npy", "--limit", "array_bytes=1e9", cwd=tmp_path), 1, "loe-viz info: ")
    assert "above the limit of 1,000,000,000 bytes (raise it" in line, line  # as given, not 1,000,000,000.0
    line = one_line_error(run("info", "huge.npy", "--limit", "array_bytes=1GiB", cwd=tmp_path), 1, "loe-viz info: ")
    assert "above the limit of 1,073,741,824" in line, line  # a size with a unit, as the explorer's limits take


def test_limit_defaults_in_the_help_are_values_the_option_takes(tmp_path):
    # the help said "default 2**30", and --limit array_bytes=2**40 was refused; it called every value a whole
    # number, never said which members the ratio bounds, and took compression_ratio=0.5, which refuses them all
    from loe_viz.cli import _limit
    from loe_viz.io import MAX_ARRAY_BYTES, MAX_COMPRESSION_RATIO, MAX_LABEL_BYTES

    text = " ".join(run("info", "--help", cwd=tmp_path).stdout.split())
    assert ("array_bytes (one array of a .npy/.npz, default 1073741824 = 1GiB), compression_ratio (the largest "
            "uncompressed / compressed size of an .npz member above 16MiB, a number >= 1: 32), label_bytes (the total "
            "length of the distinct text labels, counted in characters: 268435456 = 256MiB); sizes are whole numbers, "
            "e.g. array_bytes=4e9 or array_bytes=4GiB; repeatable") in text
    for written, expected in [("array_bytes=1073741824", MAX_ARRAY_BYTES), ("array_bytes=1GiB", MAX_ARRAY_BYTES),
                              ("label_bytes=268435456", MAX_LABEL_BYTES), ("label_bytes=256MiB", MAX_LABEL_BYTES),
                              ("compression_ratio=32", MAX_COMPRESSION_RATIO), ("array_bytes=4e9", 4 * 10**9),
                              ("compression_ratio=2.5", 2.5), ("compression_ratio=1", 1),
                              ("array_bytes=8TB", 8 * 2**40)]:
        assert _limit(written) == (written.partition("=")[0], expected)
    whole = "array_bytes=N with N a whole number of bytes > 0 (e.g. 4e9 or 4GiB)"
    for written, expected in [("array_bytes=2**40", whole),
                              # a fraction of a byte: 0.5 was refused as no KEY=VALUE, 1.5 was read as 1
                              ("array_bytes=0.5", whole), ("array_bytes=1.5", whole),
                              ("label_bytes=1.5", "label_bytes=N with N a whole number of characters > 0 (e.g. 1e9 or "
                                                  "1GiB)"),
                              *((f"compression_ratio={v}", "compression_ratio=N with N a number >= 1 (e.g. 64; below 1 "
                                 "every .npz member above 16MiB is refused)") for v in ("0", "0.5", "inf")),
                              ("array_bytes", "KEY=VALUE with KEY one of array_bytes, compression_ratio, label_bytes "
                                              "(e.g. array_bytes=4GiB)")]:
        line = one_line_error(run("info", "x.csv", "--limit", written, cwd=tmp_path), 2, "loe-viz info: ")
        assert line == (f"loe-viz info: error: argument --limit: expected {expected}, got {written!r} (see loe-viz "
                        "info --help)")
    assert _limit("array_bytes=1.5KiB") == ("array_bytes", 1536)


def test_embed_bad_data_exits_1_with_the_readers_message(tmp_path):
    (tmp_path / "bad.csv").write_text("head,winner,loser\n1,2,3\n4,5,x\n", encoding="utf-8")
    line = one_line_error(run("embed", "bad.csv", cwd=tmp_path), 1, "loe-viz embed: error: ")
    assert line.startswith("loe-viz embed: error: bad.csv: line 3: ") and "'x'" in line
    assert line.endswith("pass --item-type str to read every id as a text label; --skip-bad-rows drops the rows "
                         "with problems")  # advice in CLI terms
    ok = run("info", "bad.csv", "--item-type", "str", cwd=tmp_path)
    assert ok.returncode == 0 and "items      6: text labels" in ok.stdout
    assert not list(tmp_path.glob("bad_*.csv"))  # nothing written
    line = one_line_error(run("embed", "missing.csv", cwd=tmp_path), 1, "loe-viz embed: error: ")
    assert line == "loe-viz embed: error: missing.csv: No such file or directory"
    line = one_line_error(run("info", ".", cwd=tmp_path), 1, "loe-viz info: error: ")
    assert line == "loe-viz info: error: . is a directory, not a triplet file"


def test_a_heldout_share_that_leaves_nothing_to_fit_names_heldout(tmp_path):
    """--heldout 0.99999 of 4,000 triplets ended in the library's 'test_size must leave at least one triplet on each
    side', an argument this command does not have."""
    crowd = sample_path("european_capitals_crowd.csv")
    proc = run("embed", crowd, "--heldout", 0.99999, "-o", "e.csv", cwd=tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines()[-1] == (
        "loe-viz embed: error: --heldout 0.99999 holds out 4,000 of the 4,000 triplets and leaves none to fit on; "
        "lower --heldout (0.2 holds out 800), or pass --heldout 0 to fit on all")
    # one triplet left: too few heads, said in words that agree with the count
    line = run("embed", crowd, "--heldout", 0.99975, "-o", "e.csv", cwd=tmp_path).stderr.splitlines()[-1]
    assert "but the 1 training triplet has only 1 distinct head item(s)" in line, line
    assert os.listdir(tmp_path) == []


def test_embed_unusable_settings_exit_1(simulated):
    d, _ = simulated
    line = one_line_error(run("embed", "t.csv", "-d", 80, cwd=d), 1, "loe-viz embed: error: ")
    assert line == "loe-viz embed: error: -d 80 needs more than 80 items; t.csv has 60"
    line = one_line_error(run("embed", "t.csv", "--landmarks", 70, cwd=d), 1, "loe-viz embed: error: ")
    assert line == ("loe-viz embed: error: --landmarks 70 is larger than the number of items (60); use --landmarks 60 "
                    "or less")


def test_embed_output_is_checked_before_the_fit_and_never_replaces_the_input(simulated, tmp_path):
    d, _ = simulated
    proc = run("embed", d / "t.csv", "--method", "ste", "-o", "no/such/dir/e.csv", cwd=tmp_path)
    assert one_line_error(proc, 1, "loe-viz embed: error: ") == (
        "loe-viz embed: error: cannot write no/such/dir/e.csv: the folder no/such/dir does not exist")
    assert proc.stdout == ""  # refused before reading and fitting
    copy = tmp_path / "copy.csv"
    copy.write_bytes((d / "t.csv").read_bytes())
    alias = tmp_path / "alias.csv"
    alias.symlink_to(copy.name)
    for out in ("copy.csv", "alias.csv", "./copy.csv"):
        line = one_line_error(run("embed", "copy.csv", "-o", out, cwd=tmp_path), 2, "loe-viz embed: error: ")
        assert f"-o {out} is the input file; writing there would replace the triplets" in line
    assert copy.read_bytes() == (d / "t.csv").read_bytes()
    # a pipe is written in place (as /dev/null or /dev/stdout would be), not swapped for a regular file
    fifo, got = tmp_path / "out.csv", []
    os.mkfifo(fifo)
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    proc = run("embed", "copy.csv", "--method", "ste", "-o", fifo.name, cwd=tmp_path)
    reader.join(30)
    assert proc.returncode == 0, proc.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and got[0].startswith("item,label,x1,x2\n0,0,")
    assert got[0].count("\n") == 61


# ---------------------------------------------------------------------- info
def test_info_describes_the_file(tmp_path):
    proc = run("info", sample_path("european_capitals_crowd.csv"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "crowd layout, csv file" in out
    assert "items      44: text labels (e.g. Amsterdam, Andorra la Vella, Athens)" in out
    assert "triplets   4,000" in out and "44 item(s) head a triplet" in out
    assert "groups " not in out  # every item is related to every other through some chain of triplets


def test_info_and_embed_say_when_no_triplet_relates_two_groups_of_items(tmp_path):
    """Two groups never compared: each is embedded well, their placement relative to each other is the seed's, and
    a held-out accuracy cannot show it (its triplets never mix the groups either)."""
    (tmp_path / "two.csv").write_text("0,1,2\n1,2,0\n2,0,1\n3,4,5\n4,5,3\n5,3,4\n6,3,4\n")
    note = ("the triplets split the items into 2 groups that no triplet relates (of 4 and 3 items; [3, 0] are in "
            "different groups): where the groups lie relative to one another (position, rotation, scale) is "
            "arbitrary in the embedding; triplets that mix the groups would fix it")
    proc = run("info", "two.csv", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert f"groups     {note}\n" in proc.stdout
    proc = run("embed", "two.csv", "--method", "ste", "--heldout", "0", "-o", "out.csv", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert f"loe-viz: warning: {note}\n" in proc.stderr
    # ids that are not 0..n-1: named by them, in info and in embed alike (embed named indices)
    (tmp_path / "ids.csv").write_text("10,11,12\n11,12,10\n12,10,11\n30,31,32\n31,32,30\n32,30,31\n")
    said = "[0, 3] are in different groups"
    for command in (["info", "ids.csv"], ["embed", "ids.csv", "--method", "ste", "--heldout", "0", "-o", "ids_out.csv"]):
        proc = run(*command, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert "10, 30 are in different groups" in proc.stdout + proc.stderr and said not in proc.stdout + proc.stderr


def test_cli_imports_no_panel():
    # 'info' describes a file: no plotting stack, and neither the explorer's state (param) nor the
    # baselines' SciPy optimisers, which took 1.2 of its 2.6 s
    heavy = ("panel", "bokeh", "holoviews", "param", "scipy.optimize", "loe_viz.app")
    code = (f"import sys, loe_viz.cli as c; c.main(['info', sys.argv[1]]); "
            f"print([m for m in {heavy!r} if m in sys.modules])")
    proc = subprocess.run([sys.executable, "-c", code, str(sample_path("gaussian_3d_triplets.npz"))], cwd=ROOT,
                          env=ENV, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "[]"


# ------------------------------------------------------------------- explore
def test_websocket_origins():
    local = websocket_origins("127.0.0.1", 5006)
    assert local == ["127.0.0.1:5006", "localhost:5006"]
    wide = websocket_origins("0.0.0.0", 8000, ["lecture.example.org:8000"])
    assert f"{socket.gethostname()}:8000" in wide and "localhost:8000" in wide
    assert wide[-1] == "lecture.example.org:8000" and "0.0.0.0:8000" not in wide


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_explore_refuses_an_address_or_port_it_cannot_listen_on_before_saying_serving(tmp_path):
    proc = run("explore", "--address", "999.1.1.1", "--port", free_port(), cwd=tmp_path)
    assert one_line_error(proc, 1, "loe-viz explore: error: cannot listen on 999.1.1.1:")
    assert proc.stdout == ""
    # with --port 0 it named a port it had picked on another address, which the user never gave
    proc = run("explore", "--address", "999.1.1.1", "--port", 0, cwd=tmp_path)
    assert one_line_error(proc, 1, "loe-viz explore: error: cannot listen on 999.1.1.1:0: ")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        proc = run("explore", "--port", busy.getsockname()[1], cwd=tmp_path)
    assert one_line_error(proc, 1, "loe-viz explore: error: cannot listen on 127.0.0.1:").endswith(
        ": Address already in use") and proc.stdout == ""
    # an origin browsers never send was Bokeh's "Invalid host value" after "serving ..."; a port out of range
    # or an empty value was taken without a word
    for bad in ("http://x.org:80", "x.org:99999", "", "x.org:", "a b"):
        proc = run("explore", "--port", free_port(), f"--allow-websocket-origin={bad}", cwd=tmp_path)
        assert one_line_error(proc, 2, "loe-viz explore: error: argument --allow-websocket-origin: expected "
                                       "HOST[:PORT] such as lecture.example.org:5006").endswith(
            f"got {bad!r} (see loe-viz explore --help)") and proc.stdout == ""
    # an empty address listened on every network interface without a word (Tornado's reading of '')
    for bad in ("", " ", "127.0.0.1 "):
        proc = run("explore", "--port", free_port(), f"--address={bad}", cwd=tmp_path)
        assert one_line_error(proc, 2, "loe-viz explore: error: ") == (
            "loe-viz explore: error: argument --address: expected an address to listen on, such as 127.0.0.1 (this "
            f"machine only) or 0.0.0.0 (every network interface), got {bad!r} (see loe-viz explore --help)")
        assert proc.stdout == ""
    from loe_viz.cli import _origin

    for good in ("lecture.example.org:5006", "lecture-pc", "192.168.1.5:8080", "[::1]:5006", "*.example.org"):
        assert _origin(good) == good


def test_explore_refuses_a_limit_it_cannot_read_before_serving(tmp_path):
    # each bad value was served with its default without a word (the page cap off, 2 GiB per run)
    env = {**ENV, "LOE_VIZ_MAX_PAGES_PER_ADDRESS": "abc", "LOE_VIZ_MAX_BYTES": "4XB", "LOE_VIZ_MAX_N": "-5"}
    proc = subprocess.run([sys.executable, "-m", "loe_viz.cli", "explore", "--port", str(free_port())],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert one_line_error(proc, 2, "") == (
        "loe-viz explore: error: LOE_VIZ_MAX_N='-5': expected a whole number >= 1; LOE_VIZ_MAX_BYTES='4XB': "
        "expected a size in bytes above 0, such as 4GiB or 4e9; LOE_VIZ_MAX_PAGES_PER_ADDRESS='abc': expected a "
        "whole number >= 0 (see loe-viz explore --help)") and proc.stdout == ""
    # the forms an admin may well type are read (a value that is whole; bytes with TB or an exponent)
    good = {"LOE_VIZ_MAX_BYTES": "8TB", "LOE_VIZ_MAX_N": "1e6", "LOE_VIZ_MAX_PAGES_PER_ADDRESS": "4.0"}
    probe = subprocess.run([sys.executable, "-c", "from loe_viz.app import limits, serving; "
                            "print(limits.MAX_BYTES, limits.MAX_N, serving.MAX_PAGES_PER_ADDRESS)"],
                           cwd=tmp_path, env={**ENV, **good}, capture_output=True, text=True, timeout=120)
    assert probe.stdout.split() == [str(8 * 2**40), "1000000", "4"] and probe.stderr == "", probe.stderr


def test_explore_show_says_when_no_browser_can_open_the_page(tmp_path):
    # --show on a machine without a browser (a server, a terminal over ssh) opened nothing and said nothing
    env = {k: v for k, v in ENV.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER")}
    env["PATH"] = os.path.dirname(sys.executable)  # no console browser (lynx, w3m) either
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "loe_viz.cli", "explore", "--port", str(port), "--show"],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None:  # until the server answers
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=60):
                    break
            except OSError:
                time.sleep(0.5)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    lines = out.splitlines(keepends=True)
    assert lines[0].startswith("serving the LOE explorer on 127.0.0.1:"), lines
    assert lines[1] == ("loe-viz explore: --show: no web browser found on this machine; open the address above in "
                        "one\n"), lines


def test_explore_show_opens_on_this_machine_the_address_it_prints(tmp_path):
    # listening everywhere, --show opened http://0.0.0.0:port/ while the message named the host's own name
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\necho "$1" > {opened}\n')
    browser.chmod(0o755)
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "loe_viz.cli", "explore", "--address", "0.0.0.0", "--port",
                             str(port), "--show"], cwd=tmp_path, env={**ENV, "BROWSER": str(browser)},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None and not opened.exists():
            time.sleep(0.5)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    here = f"http://localhost:{port}/"
    assert opened.read_text().strip() == here, out
    assert out.splitlines()[0] == (f"serving the LOE explorer on 0.0.0.0:{port}: open http://{socket.gethostname()}:"
                                   f"{port}/ (on this machine: {here}) (Ctrl-C stops it)")


def test_explore_serves_the_page(tmp_path):
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "loe_viz.cli", "explore", "--port", str(port)], cwd=tmp_path,
                            env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        status, page = None, ""
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=60) as r:
                    status, page = r.status, r.read().decode("utf-8", "replace")
                break
            except OSError:
                time.sleep(0.5)
        assert status == 200, proc.poll()
        # the page apps/explorer.py serves: the explorer in its template (header bar, collapsible sidebar)
        from loe_viz.app.explorer import TITLE

        assert f"<title>{TITLE}</title>" in page and "bootstraptemplate" in page and 'id="sidebar"' in page
        # hardened as apps/explorer.py is: a websocket without an Origin header (a script, not a
        # browser) is refused, and a query value that is not UTF-8 is no server error
        key = base64.b64encode(os.urandom(16)).decode()
        request = (f"GET /ws?bokeh-protocol-version=1.0&bokeh-session-id=x HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                   f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                   "Sec-WebSocket-Version: 13\r\n\r\n")
        with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
            s.sendall(request.encode())
            reply = s.recv(4096).decode("latin-1")
        assert reply.startswith("HTTP/1.1 403"), reply
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/?theme=%FF", timeout=60) as r:
            assert r.status == 200
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # the group of the one server process started here
        out, _ = proc.communicate(timeout=30)
    assert f"serving the LOE explorer on 127.0.0.1:{port}" in out


# --------------------------------------------------------------- package data
def test_samples_are_package_data_found_by_importlib_resources():
    from loe_viz.app.triplets_state import SAMPLE_DIR, SAMPLES

    folder = importlib.resources.files("loe_viz.data")
    assert Path(str(folder)) == sample_dir() == SAMPLE_DIR
    import loe_viz

    assert sample_dir().parent == Path(loe_viz.__file__).parent  # inside the package, wherever it is installed
    for name in SAMPLE_FILES:
        assert (folder / name).is_file(), name
    for name, sample in SAMPLES.items():
        assert name in SAMPLE_FILES and (sample.truth is None or sample.truth in SAMPLE_FILES)
    # the wheel's package-data patterns take every bundled file, and nothing else is there
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]["package-data"]
    patterns = patterns["loe_viz.data"]
    data_files = {p.name for p in sample_dir().iterdir() if p.is_file() and p.suffix != ".py"}
    assert data_files == set(SAMPLE_FILES)
    assert all(any(fnmatch.fnmatch(n, p) for p in patterns) for n in SAMPLE_FILES)
    with pytest.raises(ValueError, match=r"^no bundled sample named 'x.csv'; the samples are: european_capitals.csv"):
        sample_path("x.csv")


# ------------------------------------------------------------- what a researcher at a terminal meets
def test_control_characters_of_a_file_name_never_reach_the_terminal(tmp_path):
    """A name carrying an escape sequence or a line break was printed raw by info's file line, embed's read and
    wrote lines and the "output exists" error (others showed it as '?'): it could recolour the terminal or fake a
    line of output."""
    name = "e\x1b[31mvil\nline.csv"
    (tmp_path / name).write_text("head,near,far\n" + "".join(f"{i},{(i + 1) % 9},{(i + 2) % 9}\n" for i in range(40)),
                                 encoding="utf-8")
    info = run("info", name, cwd=tmp_path)
    embed = run("embed", name, "--method", "ste", "--heldout", "0", cwd=tmp_path)
    again = run("embed", name, "--method", "ste", "--heldout", "0", cwd=tmp_path)  # its output exists now
    assert info.returncode == 0 and embed.returncode == 0, (info.stderr, embed.stderr)
    one_line_error(again, 2, "loe-viz embed: error: the output")
    for proc in (info, embed, again):
        out = proc.stdout + proc.stderr
        assert "\x1b" not in out and "e?[31mvil?line" in out, out
    assert any(line.startswith("file ") and line.endswith("e?[31mvil?line.csv") for line in info.stdout.splitlines())


def test_outputs_that_exist_are_replaced_only_with_force(simulated, tmp_path):
    """simulate's default -o triplets.csv and embed's default FILE_METHOD.csv replaced a file of that name
    without a word; the user's own triplets.csv was gone."""
    d, _ = simulated
    (tmp_path / "triplets.csv").write_text("mine\n")
    line = one_line_error(run("simulate", "gaussian", "-n", 20, cwd=tmp_path), 2, "loe-viz simulate: error: ")
    assert line == ("loe-viz simulate: error: the output triplets.csv exists; pass --force to replace it, or -o to "
                    "name another file (see loe-viz simulate --help)")  # was "-o triplets.csv", never typed
    line = one_line_error(run("simulate", "gaussian", "-n", 20, "-o", "triplets.csv", cwd=tmp_path), 2,
                          "loe-viz simulate: error: ")
    assert line.startswith("loe-viz simulate: error: -o triplets.csv exists; pass --force")
    (tmp_path / "new_points.csv").write_text("mine too\n")
    line = one_line_error(run("simulate", "gaussian", "-n", 20, "-o", "new.csv", cwd=tmp_path), 2,
                          "loe-viz simulate: error: ")
    assert "the points file new_points.csv exists; pass --force" in line
    assert (tmp_path / "triplets.csv").read_text() == "mine\n" and not (tmp_path / "new.csv").exists()
    assert run("simulate", "gaussian", "-n", 20, "-o", "new.csv", "--force", cwd=tmp_path).returncode == 0
    assert (tmp_path / "new_points.csv").read_text().startswith("x1,x2\n")
    (tmp_path / "t_ste.csv").write_text("mine\n")
    line = one_line_error(run("embed", d / "t.csv", "--method", "ste", cwd=tmp_path), 2, "loe-viz embed: error: ")
    assert line.startswith("loe-viz embed: error: the output t_ste.csv exists; pass --force to replace it")
    assert (tmp_path / "t_ste.csv").read_text() == "mine\n"
    assert run("embed", d / "t.csv", "--method", "ste", "-f", cwd=tmp_path).returncode == 0
    assert (tmp_path / "t_ste.csv").read_text().startswith("item,label,x1,x2\n")
    assert run("embed", d / "t.csv", "--method", "ste", "-o", os.devnull, cwd=tmp_path).returncode == 0  # a device


def test_skip_bad_rows_reads_what_the_library_can_skip(tmp_path):
    rows = [f"{i % 9},{(i + 1) % 9},{(i + 2) % 9}" for i in range(60)]
    rows[3], rows[-1] = "3,4", "7,7,1"  # lines 5 and 62: a field missing, an item twice
    (tmp_path / "m.csv").write_text("head,winner,loser\n" + "\n".join(rows) + "\n", encoding="utf-8")
    line = one_line_error(run("info", "m.csv", cwd=tmp_path), 1, "loe-viz info: error: ")
    assert line == ("loe-viz info: error: m.csv: line 5: expected 3 fields (head, near, far), got 2; "
                    "--skip-bad-rows drops the rows with problems")
    proc = run("info", "m.csv", "--skip-bad-rows", cwd=tmp_path)
    assert proc.returncode == 0 and "skipped    2 row(s)" in proc.stdout
    assert "line 61: the row repeats an item" in proc.stdout
    proc = run("embed", "m.csv", "--skip-bad-rows", "--method", "ste", "-o", "-", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "read 58 triplets over 9 items" in proc.stderr and "skipped 2 row(s) with problems" in proc.stderr


@pytest.mark.parametrize("ext", [".tsv", ".npy", ".npz"])
def test_embed_writes_the_format_its_output_name_says(ext, tmp_path):
    """-o emb.npy wrote CSV text into a file named .npy, and .tsv was comma-separated."""
    src = sample_path("european_capitals_crowd.csv")
    proc = run("embed", src, "--method", "ste", "-o", f"emb{ext}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    path, Z = tmp_path / f"emb{ext}", None
    if ext == ".tsv":
        rows = [r.split("\t") for r in path.read_text(encoding="utf-8").splitlines()]
        assert rows[0] == ["item", "label", "x1", "x2"] and rows[1][1] == "Amsterdam" and len(rows) == 45
        Z = np.array([[float(v) for v in r[2:]] for r in rows[1:]])
    elif ext == ".npy":
        Z = np.load(path)
        # text labels: a .npy of rows alone said nothing of which row is which item
        assert ("wrote the 44 x 2 embedding (row k is the item of index k, in the sorted order of the file's ids; a "
                ".npy holds no labels: write .npz or .csv to keep them) to emb.npy") in proc.stderr + proc.stdout
        (tmp_path / "ids.csv").write_text("0,1,2\n1,2,3\n2,3,0\n3,0,1\n0,2,3\n")
        proc = run("embed", "ids.csv", "--method", "ste", "--heldout", 0, "-o", "ids.npy", cwd=tmp_path)
        assert "wrote the 4 x 2 embedding to ids.npy" in proc.stdout, proc.stdout  # ids 0..3: row k is item k
    else:
        with np.load(path) as z:
            Z, labels = z["embedding"], z["labels"]
        assert labels.dtype.kind == "U" and labels[0] == "Amsterdam" and labels.size == 44
    assert Z.shape == (44, 2) and np.isfinite(Z).all()


def test_options_a_method_would_ignore_are_refused(simulated):
    d, _ = simulated
    line = one_line_error(run("embed", "t.csv", "--method", "ste", "--landmarks", 8, cwd=d), 2,
                          "loe-viz embed: error: ")
    assert line.startswith("loe-viz embed: error: --landmarks applies to --method loe and loeste; ste fits every "
                           "triplet")
    line = one_line_error(run("embed", "t.csv", "--max-seconds", 1, cwd=d), 2, "loe-viz embed: error: ")
    assert line.startswith("loe-viz embed: error: --max-seconds applies to the iterative methods")
    line = one_line_error(run("embed", "t.csv", "--bogus", cwd=d), 2, "loe-viz embed: error: ")
    assert line == "loe-viz embed: error: unrecognized arguments: --bogus (see loe-viz embed --help)"


def test_a_run_stopped_by_its_time_limit_says_so(simulated):
    d, _ = simulated
    proc = run("embed", "t.csv", "--method", "ste", "--max-seconds", 1e-9, "-o", "-", cwd=d)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r", 1 iteration \(stopped by --max-seconds 1e-09\)\n", proc.stderr), proc.stderr


def test_reader_setting_errors_are_usage_errors_in_option_terms(simulated):
    d, _ = simulated
    line = one_line_error(run("info", "t.csv", "--columns", "head,near", cwd=d), 2, "loe-viz info: error: ")
    assert line == "loe-viz info: error: --columns has no farther (loser) column (see loe-viz info --help)"
    for enc in ("foo", "base64", "rot13"):  # no codec; codecs of bytes to bytes (a LookupError traceback)
        line = one_line_error(run("info", "t.csv", "--encoding", enc, cwd=d), 2, "loe-viz info: error: ")
        assert line == (f"loe-viz info: error: --encoding must name a text encoding such as utf-8, latin-1 or utf-16, "
                        f"got '{enc}' (see loe-viz info --help)")
    line = one_line_error(run("info", "t.csv", "--layout", "crowd", cwd=d), 1, "loe-viz info: error: ")
    assert line == ("loe-viz info: error: t.csv: --layout crowd was asked for but the columns describe a list-order "
                    "layout")
    line = one_line_error(run("info", "t.csv", "--no-header", cwd=d), 1, "loe-viz info: error: ")
    assert "line 1: --no-header, but this line ['head', 'winner', 'loser'] is text above a line of numbers" in line
    assert "drop --no-header to read it as the header, or pass --item-type str if" in line
    # a crowd header over labels: it said "without a header: name them (head,left,right,winner ...)"
    (d / "crowd.csv").write_text("head,left,right,winner\nhand,leg,eye,leg\n")
    line = one_line_error(run("info", "crowd.csv", "--no-header", "--item-type", "str", cwd=d), 1,
                          "loe-viz info: error: ")
    assert line == ("loe-viz info: error: crowd.csv: line 1: 4 columns and --no-header: pass --layout (crowd, "
                    "list-boolean or list-count); this line names the columns of a crowd file: drop --no-header to "
                    "read it as the header")
    # an unknown role, named: the library's "or None; got 'nearr' in ('head', 'nearr', None, 'far')" in the terms of
    # the text given
    line = one_line_error(run("info", "t.csv", "--columns", "head,nearr,,far", cwd=d), 2, "loe-viz info: error: ")
    assert line == ("loe-viz info: error: --columns entries must be one of head, near, far, left, right, answer, "
                    "response or empty (a column to ignore); got 'nearr' in 'head,nearr,,far' (see loe-viz info --help)")


def test_simulate_refuses_a_layout_its_format_cannot_hold_before_drawing(tmp_path):
    line = one_line_error(run("simulate", "gaussian", "-n", 10**5, "--layout", "crowd", "-o", "c.npz",
                              cwd=tmp_path), 2, "loe-viz simulate: error: ")
    assert line.startswith("loe-viz simulate: error: --layout crowd cannot be stored in .npz; use a text format")
    assert os.listdir(tmp_path) == []


def test_an_output_under_a_file_or_on_a_read_only_mount_is_named_so(tmp_path, monkeypatch, capsys):
    """'-o cap.csv/t.csv', cap.csv a file, said 'the folder cap.csv does not exist'; a read-only mount said
    'permission denied'."""
    import types

    from loe_viz import cli

    (tmp_path / "cap.csv").write_text("x\n")
    out = str(tmp_path / "cap.csv" / "t.csv")
    assert cli.main(["simulate", "gaussian", "-n", "20", "-o", out]) == 1
    assert capsys.readouterr().err == f"loe-viz simulate: error: cannot write {out}: {tmp_path / 'cap.csv'} is a " \
                                      "file, not a folder\n"
    if not hasattr(os, "ST_RDONLY"):
        return
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    monkeypatch.setattr(os, "statvfs", lambda path: types.SimpleNamespace(f_flag=os.ST_RDONLY))
    out = str(tmp_path / "t.csv")
    assert cli.main(["simulate", "gaussian", "-n", "20", "-o", out]) == 1
    assert capsys.readouterr().err == f"loe-viz simulate: error: cannot write {out}: {tmp_path} is on a read-only " \
                                      "file system\n"
    assert os.listdir(tmp_path) == ["cap.csv"]


@pytest.mark.skipif(not hasattr(os, "symlink") or sys.platform == "win32", reason="symbolic links")
def test_simulate_refuses_two_outputs_that_a_link_makes_one_file(tmp_path):
    """With r_points.csv a link to r.csv, 'simulate -o r.csv -f' wrote the points over the triplets and said it
    had written both (exit 0)."""
    (tmp_path / "r.csv").write_text("x\n")
    os.symlink("r.csv", tmp_path / "r_points.csv")
    (tmp_path / "t_points.csv").write_text("y\n")
    os.symlink("t_points.csv", tmp_path / "t.csv")
    for out, points in (("r.csv", "r_points.csv"), ("t.csv", "t_points.csv")):
        line = one_line_error(run("simulate", "gaussian", "-n", "50", "-o", out, "-f", cwd=tmp_path), 2,
                              "loe-viz simulate: error: ")
        assert line == (f"loe-viz simulate: error: -o {out} and the points file {points} are one file (a link joins "
                        "them); name another file (see loe-viz simulate --help)")
    assert (tmp_path / "r.csv").read_text() == "x\n" and (tmp_path / "t_points.csv").read_text() == "y\n"
    assert sorted(os.listdir(tmp_path)) == ["r.csv", "r_points.csv", "t.csv", "t_points.csv"]


def test_a_reader_that_stops_reading_is_no_error(tmp_path):
    """'loe-viz simulate ... | head -1' printed '[Errno 32] Broken pipe' and exited 1 after writing both files."""
    proc = subprocess.run(f"{sys.executable} -m loe_viz.cli simulate gaussian -n 200 -o p.csv | head -c 1",
                          shell=True, cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=600,
                          executable="/bin/bash")
    assert proc.stderr == "" and proc.stdout == "d"
    assert (tmp_path / "p_points.csv").read_text().count("\n") == 201


def shell(command: str, cwd):
    return subprocess.run(f"{sys.executable} -m loe_viz.cli {command}", shell=True, cwd=cwd, env=ENV,
                          capture_output=True, text=True, timeout=600, executable="/bin/bash")


def test_a_closed_or_full_standard_output_is_one_line_and_harms_no_file(tmp_path):
    """Started with '>&-', 'samples NAME -o /dev/stdout' wrote the copy over the bundled sample itself (the copy's
    source took descriptor 1), 'info' exited 0 having printed nothing and 'embed -o -' ended in a TypeError; on a full
    disk (/dev/full) the error did not say it was standard output that could not be written."""
    sample = sample_path("european_capitals.csv")
    before = sample.read_bytes()
    crowd = sample_path("european_capitals_crowd.csv")
    for command in ("samples european_capitals.csv -o /dev/stdout", f"info {crowd}", f"embed {crowd} -o -",
                    "samples"):
        proc = shell(f"{command} >&-", tmp_path)
        line = one_line_error(proc, 1, f"loe-viz {command.split()[0]}: error: ")
        assert line.endswith("error: standard output is closed; redirect it to a file or to /dev/null"), line
    assert sample.read_bytes() == before and os.listdir(tmp_path) == []
    if os.path.exists("/dev/full"):
        for command in (f"info {crowd}", f"embed {crowd} -o -", "samples"):
            proc = shell(f"{command} > /dev/full", tmp_path)
            assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
            assert proc.stderr.splitlines()[-1] == (f"loe-viz {command.split()[0]}: error: cannot write to standard "
                                                    "output: No space left on device"), proc.stderr
    assert os.listdir(tmp_path) == []
    if os.path.exists("/dev/full"):  # --help and --version printed argparse's traceback
        for command in ("--help", "--version", "embed --help"):
            proc = shell(f"{command} > /dev/full", tmp_path)
            assert one_line_error(proc, 1, "loe-viz: error: ") == ("loe-viz: error: cannot write to standard output: "
                                                                  "No space left on device")


def test_a_kill_whose_exit_a_compiler_swallowed_still_stops_the_run_and_keeps_the_output(tmp_path, monkeypatch,
                                                                                        capsys):
    """A SIGTERM or SIGHUP landing while numba compiled (an llvmlite ctypes callback) was printed as "Exception
    ignored": the run went on, replaced the existing output and exited 0 (4 of 40 SIGHUPs 0.6 to 1.3 s in)."""
    from loe_viz import cli, loe

    crowd = str(sample_path("european_capitals_crowd.csv"))
    out = tmp_path / "out.csv"
    out.write_text("sentinel\n")
    fit = loe.LOE.fit

    def fit_through_a_swallowed_signal(self, *a, **k):
        try:
            cli._terminated(signal.SIGHUP, None)  # as the handler runs inside a callback that ignores exceptions
        except SystemExit:
            pass
        return fit(self, *a, **k)

    monkeypatch.setattr(loe.LOE, "fit", fit_through_a_swallowed_signal)
    with pytest.raises(SystemExit) as stopped:  # at the output's commit, as the lost exit would have
        cli.main(["embed", crowd, "-f", "-o", str(out), "--method", "loe"])
    assert stopped.value.code == 128 + signal.SIGHUP
    assert out.read_text() == "sentinel\n" and os.listdir(tmp_path) == ["out.csv"]
    monkeypatch.setattr(loe.LOE, "fit", fit)
    assert cli.main(["embed", crowd, "-f", "-o", str(out), "--method", "loe"]) == 0  # the next run is not stopped
    assert out.read_text().startswith("item,label,x1,x2")


def test_two_runs_given_the_same_output_never_replace_each_other_without_force(tmp_path, monkeypatch, capsys):
    """Two 'embed -o same.csv' started together both passed the check at start-up, and the second silently
    replaced the first's result."""
    from loe_viz import cli, loe

    crowd = str(sample_path("european_capitals_crowd.csv"))
    out = tmp_path / "same.csv"
    fit = loe.LOE.fit

    def another_run_writes_meanwhile(self, *a, **k):
        out.write_text("the other run's result\n")
        return fit(self, *a, **k)

    monkeypatch.setattr(loe.LOE, "fit", another_run_writes_meanwhile)
    assert cli.main(["embed", crowd, "-o", str(out), "--method", "loe"]) == 1
    err = capsys.readouterr().err.splitlines()[-1]
    assert err == (f"loe-viz embed: error: cannot write {out}: another process created it while this run worked "
                   "(another run given the same -o?); it is kept as it is: pass --force to replace it, or -o to name "
                   "another file")
    assert out.read_text() == "the other run's result\n" and os.listdir(tmp_path) == ["same.csv"]
    out.unlink()
    assert cli.main(["embed", crowd, "-f", "-o", str(out), "--method", "loe"]) == 0  # -f: replaced, as asked
    assert out.read_text().startswith("item,label,x1,x2")
    out.unlink()
    points = tmp_path / "sim_points.csv"  # simulate writes both files or neither
    make_points = cli.__dict__.get("make_points")
    assert make_points is None  # imported inside the command: patch where it is looked up
    import loe_viz.points as points_module

    made = points_module.make_points

    def points_file_appears(*a, **k):
        points.write_text("the other run's points\n")
        return made(*a, **k)

    monkeypatch.setattr(points_module, "make_points", points_file_appears)
    assert cli.main(["simulate", "gaussian", "-n", "30", "-o", str(tmp_path / "sim.csv")]) == 1
    assert "cannot write " + str(points) in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == ["sim_points.csv"] and points.read_text() == "the other run's points\n"


def test_standard_output_in_any_locale_gets_utf8_and_a_closed_standard_error_harms_no_run(tmp_path, monkeypatch,
                                                                                        capsys):
    """'embed -o -' through an ASCII or Latin-1 standard output stopped at the first label such as 'Chișinău' with
    "'ascii' codec can't encode", 10 of 45 lines written; with standard error closed (cron), 'embed' exited 1 having
    written nothing; every CSV written left an unclosed file behind (a ResourceWarning under -X dev)."""
    crowd = sample_path("european_capitals_crowd.csv")
    by_file = run("embed", crowd, "--method", "ste", "-o", "file.csv", cwd=tmp_path)
    assert by_file.returncode == 0, by_file.stderr
    expected = (tmp_path / "file.csv").read_bytes()
    assert "Chișinău".encode() in expected  # not Latin-1 either
    for encoding in ("ascii", "latin-1"):
        proc = subprocess.run([sys.executable, "-X", "dev", "-W", "error::ResourceWarning", "-m", "loe_viz.cli",
                               "embed", str(crowd), "--method", "ste", "-o", "-"], cwd=tmp_path,
                              env={**ENV, "PYTHONIOENCODING": encoding}, capture_output=True, timeout=600)
        assert proc.returncode == 0 and proc.stdout == expected, proc.stderr[-2000:]
        assert b"ResourceWarning" not in proc.stderr and b"Traceback" not in proc.stderr
    proc = subprocess.run([sys.executable, "-X", "dev", "-W", "error::ResourceWarning", "-m", "loe_viz.cli", "embed",
                           str(crowd), "--method", "ste", "-o", "dev.csv"], cwd=tmp_path, env=ENV,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and "ResourceWarning" not in proc.stderr, proc.stderr
    from loe_viz import cli

    monkeypatch.setattr(sys, "stderr", None)
    assert cli.main(["embed", str(crowd), "--method", "ste", "-o", str(tmp_path / "cron.csv")]) == 0
    assert (tmp_path / "cron.csv").read_bytes() == expected
    assert sys.stderr is None
    # to standard output, the table alone: the messages went there (print(file=None)), inside the CSV
    proc = shell(f"embed {crowd} --method ste -o - 2>&-", tmp_path)
    assert proc.returncode == 0 and proc.stdout.encode() == expected, proc.stdout[:500]
    # a text stream of Python's own (a notebook's output, io.StringIO) has no bytes underneath: its text
    import contextlib
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        assert cli.main(["embed", str(crowd), "--method", "ste", "-o", "-"]) == 0
    assert text.getvalue().encode() == expected


def test_warnings_name_items_by_the_files_labels(tmp_path):
    proc = run("embed", sample_path("european_capitals_crowd.csv"), "-o", "-", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    warned = [ln for ln in proc.stderr.splitlines() if "took part in no comparison" in ln]
    assert warned and re.search(r"\(e\.g\. '[A-Z][a-z]+[^']*', '", warned[0]), warned


def test_loe_on_uniformly_headed_triplets_points_to_the_methods_that_fit_them(tmp_path):
    """'simulate' draws uniformly random triplets by default; at n = 10^5 'embed' with LOE then held out 0.500 and
    advised more comparisons per landmark, where --method loeste reached 0.674 on the same file."""
    assert run("simulate", "gaussian", "-n", 400, "--budget", 3, "-o", "u.csv", cwd=tmp_path).returncode == 0
    proc = run("embed", "u.csv", "-o", "-", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    warned = [ln for ln in proc.stderr.splitlines() if "took part in no comparison" in ln]
    assert warned and warned[0].endswith("; LOE places each item from its landmarks' own comparisons, so with triplets "
                                         "spread over many heads --method loeste (LOE's embedding refined on every "
                                         "triplet) or --method ste, which fit all of them, place the items better")
    proc = run("embed", "u.csv", "--method", "loeste", "-o", "-", cwd=tmp_path)
    warned = [ln for ln in proc.stderr.splitlines() if "took part in no comparison" in ln]
    assert warned and all(ln.startswith("loe-viz: warning: LOE-STE's start (LOE): ") and "--method" not in ln
                          for ln in warned)


def test_a_dimension_that_needs_more_landmarks_than_items_names_the_dimension(simulated):
    d, _ = simulated
    line = one_line_error(run("embed", "t.csv", "-d", 58, cwd=d), 1, "loe-viz embed: error: ")
    assert line == ("loe-viz embed: error: -d 58 needs at least d + 3 = 61 landmarks, but there are only 60 items; "
                    "use -d 57 or less")
    line = one_line_error(run("embed", "t.csv", "-d", 58, "--method", "loeste", cwd=d), 1, "loe-viz embed: error: ")
    assert line == ("loe-viz embed: error: -d 58: LOE-STE's start (LOE) needs at least d + 3 = 61 landmarks, but "
                    "there are only 60 items; use -d 57 or less, or --method ste")  # was: --landmarks 61 is larger ...


def test_too_few_heads_are_named_with_a_dimension_or_method_that_works(tmp_path):
    """LOE and LOE-STE's own start need d + 3 landmarks heading training triplets: the message said --landmarks
    (never passed) for LOE-STE, and for LOE suggested -d 1, which failed next on the heads."""
    (tmp_path / "big.csv").write_text("head,winner,loser\n0,1,2\n1,2,2000000000\n2,0,1\n", encoding="utf-8")
    heads = ("landmarks, items that head training triplets, but the 2 training triplets have only 2 distinct head "
             "item(s); no -d works with 2 head(s): use --method ste, which fits every triplet")
    for extra, who in [((), "-d 2"), (("-d", 1), "-d 1"), (("--method", "loeste"), "-d 2: LOE-STE's start (LOE)"),
                       (("--method", "loeste", "-d", 1), "-d 1: LOE-STE's start (LOE)"),
                       (("-d", "auto"), "-d auto: LOE")]:
        d = 1 if "1" in map(str, extra) or "auto" in extra else 2
        line = one_line_error(run("embed", "big.csv", *extra, "-o", "e.csv", cwd=tmp_path), 1, "loe-viz embed: error: ")
        assert line == f"loe-viz embed: error: {who} needs at least d + 3 = {d + 3} {heads}", extra
    # a landmark design with 6 heads: -d 3 or less, and -d auto tries only those
    proc = run("simulate", "gaussian", "-n", 60, "--budget", 30, "--landmarks", 6, "-o", "l6.csv", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for method, who in [("loe", "-d 4"), ("loeste", "-d 4: LOE-STE's start (LOE)")]:
        line = one_line_error(run("embed", "l6.csv", "-d", 4, "--method", method, "-o", "e.csv", cwd=tmp_path), 1,
                              "loe-viz embed: error: ")
        assert line == (f"loe-viz embed: error: {who} needs at least d + 3 = 7 landmarks, items that head training "
                        "triplets, but the 5,894 training triplets have only 6 distinct head item(s); use -d 3 or "
                        "less, or --method ste")
    proc = run("embed", "l6.csv", "-d", "auto", "-o", "-", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "choosing d among 1, 2, 3 (6 items head training triplets: d <= 3): LOE on 3 folds" in proc.stderr


def test_repeated_rows_are_counted_and_their_effect_on_the_held_out_accuracy_said(tmp_path):
    """500 random triplets written four times held out 0.64 (0.52 once) with STE and no word of the copies, which
    land in both shares; a few repeats, as draws with replacement make (4.8 % of the capitals file), say nothing."""
    rng = np.random.default_rng(1)
    rows = [",".join(map(str, rng.choice(30, size=3, replace=False))) for _ in range(500)]
    (tmp_path / "four.csv").write_text("head,winner,loser\n" + "\n".join(rows * 4) + "\n")
    from loe_viz.describe import repeated_rows

    r = repeated_rows(np.array([list(map(int, x.split(","))) for x in rows * 4]), 30)
    info = run("info", "four.csv", cwd=tmp_path)
    assert f"repeats    {r:,} row(s) repeat an earlier row (the same head, closer and farther item)\n" in info.stdout
    proc = run("embed", "four.csv", "--method", "ste", "-o", "e.csv", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (f"note: {r:,} of the 2,000 rows repeat an earlier row: a held-out row with a copy in the training share "
            "is scored on an answer the fit has seen, which raises the held-out accuracy; if they are copies of one "
            "answer rather than answers of several people, remove them\n") in proc.stdout
    assert "repeat an earlier row" not in run("embed", "four.csv", "--method", "ste", "--heldout", 0, "-o", "f.csv",
                                              cwd=tmp_path).stdout  # nothing held out: nothing to raise
    crowd = run("embed", sample_path("european_capitals_crowd.csv"), "--method", "ste", "-o", "c.csv", cwd=tmp_path)
    assert crowd.returncode == 0 and "repeat an earlier row" not in crowd.stdout
    assert "repeats    191 row(s)" in run("info", sample_path("european_capitals_crowd.csv"), cwd=tmp_path).stdout


def test_a_long_label_never_makes_a_line_of_its_length(tmp_path):
    """A 60,000-character label went whole into 'info' (a line of 60,042 characters) and into embed's notes and
    warnings; it is shown by its start and its length, as the reader's errors show a long cell."""
    long = "=A" * 30000  # also a label written with a leading ' (a formula to spreadsheets)
    rows = [f"{long},b{i},c{i}\nb{i},c{i},{long}\nc{i},b{i},{long}\n" for i in range(30)]
    (tmp_path / "long.csv").write_text("head,winner,loser\n" + "".join(rows), encoding="utf-8")
    info = run("info", "long.csv", cwd=tmp_path)
    assert info.returncode == 0 and max(map(len, info.stdout.splitlines())) < 400, info.stdout[:300]
    assert "(e.g. =A=A=A=A=A=A=A=A=A=A=A=A=A=A=A=A=A=A=A=A...(60,000 characters), b0, b1)" in info.stdout
    proc = run("embed", "long.csv", "--uncertainty", "--landmarks", 8, "-o", "e.csv", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-500:]
    assert max(map(len, proc.stderr.splitlines() + proc.stdout.splitlines())) < 600
    assert "(e.g. '=A=A=A=A=A=A=A=A=A=A=A=A=A=A=A=A=A=A=A=A...(60,000 characters)' as \"'=A=A" in proc.stdout
    assert read_embedding(tmp_path / "e.csv")[1][0] == "'" + long  # the file itself keeps the whole label


def test_labels_written_with_a_quote_are_counted_in_a_note(tmp_path):
    """'=1+1' was written as "'=1+1" (spreadsheet_safe) without a word: a join on the labels missed it."""
    (tmp_path / "lab.csv").write_text("head,winner,loser\n=1+1,b,c\nb,c,d\nc,d,=1+1\nd,=1+1,b\n@x,c,d\n",
                                      encoding="utf-8")
    proc = run("embed", "lab.csv", "--method", "ste", "--heldout", 0, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    notes = [ln for ln in proc.stdout.splitlines() if ln.startswith("note: ")]
    assert notes == ["note: 2 labels are written with a leading ' so that spreadsheets do not run them as a formula "
                     "(e.g. '=1+1' as \"'=1+1\")"]
    assert read_embedding(tmp_path / "lab_ste.csv")[1] == ["'=1+1", "'@x", "b", "c", "d"]
    proc = run("embed", "lab.csv", "--method", "ste", "-o", "lab.npz", cwd=tmp_path)  # kept as read: no note
    assert proc.returncode == 0 and "note: " not in proc.stdout, proc.stdout
    (tmp_path / "one.csv").write_text("head,winner,loser\n+a,b,c\nb,c,d\nc,d,+a\n", encoding="utf-8")
    proc = run("embed", "one.csv", "--method", "ste", "--heldout", 0, cwd=tmp_path)
    assert "note: 1 label is written with a leading ' so that spreadsheets do not run it as a formula (e.g. '+a' as " \
           "\"'+a\")" in proc.stdout.splitlines(), proc.stdout


def test_wording_of_counts_ids_and_budgets(tmp_path):
    # "holds 1 triplet(s): too few to embed" said neither the number nor what is needed
    (tmp_path / "one.csv").write_text("head,winner,loser\n0,1,2\n", encoding="utf-8")
    line = one_line_error(run("embed", "one.csv", cwd=tmp_path), 1, "loe-viz embed: error: ")
    assert line == "loe-viz embed: error: one.csv holds 1 triplet: too few to embed (at least 2 are needed)"
    # a crowd file of integer ids: its answers name the chosen item by its id ("by its label" beside "no labels")
    info = run("info", sample_path("gaussian_2d_crowd.csv"), cwd=tmp_path).stdout.splitlines()
    assert "items      200: numbered 0..n-1, no labels" in info
    assert "note       answers name the chosen item by its id" in info
    # --budget 1e6 was printed "c = 1e+06"
    proc = run("simulate", "gaussian", "-n", 3, "--budget", "1e6", "-o", "t.npz", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("drew 3 gaussian points in d = 2 (seed 0) and 3,295,836 uniformly random triplets "
                                  "(c = 1,000,000, noise T = 1) in ")
    from loe_viz.cli import _number

    assert [_number(x) for x in (1e6, 100.0, 0.5, 2.5e16)] == ["1,000,000", "100", "0.5", "2.5e+16"]


def test_embed_says_how_it_read_the_file(tmp_path):
    """embed read a 0/1 'response' beside left and right columns as the index of the chosen item (0: left) without
    a word, while the file's 1 meant "the left item is the closer": every triplet reversed, a held-out accuracy of
    0.53 where 0.74 was there to find. Its notes (the ones info prints) now follow the read line, in option terms."""
    X = np.random.default_rng(0).normal(size=(40, 2))
    rng, rows = np.random.default_rng(1), ["worker,head,left,right,response"]
    for _ in range(1500):
        h, a, b = rng.choice(40, 3, replace=False)
        near_left = np.sum((X[h] - X[a]) ** 2) < np.sum((X[h] - X[b]) ** 2)
        rows.append(f"w{rng.integers(3)},{h},{a},{b},{int(near_left)}")  # 1: the left item is the closer
    (tmp_path / "answers.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    proc = run("embed", "answers.csv", "--method", "ste", "-o", "-", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert lines[1] == "note: ignored column(s): worker"
    assert lines[2] == ("note: answers are 0/1 (0 = left item chosen, 1 = right item chosen); if 1 means the left "
                        "item, pass --columns naming them head, near, far, response")
    assert float(proc.stderr.split("held-out accuracy ")[1].split()[0]) < 0.75  # every answer read reversed
    proc = run("embed", "answers.csv", "--method", "ste", "-o", "-", "--columns", ",head,near,far,response",
               cwd=tmp_path)
    assert proc.returncode == 0 and "note: answers are 0/1" not in proc.stderr, proc.stderr
    assert float(proc.stderr.split("held-out accuracy ")[1].split()[0]) > 0.9
    # info's notes in this command's terms too: the library's 'header=True' is --header here, 'header=False'
    # --no-header (a layout's own header is the header even where its names are items of the file)
    (tmp_path / "h.csv").write_text("head,near,far\nnear,head,far\nfar,head,near\n", encoding="utf-8")
    proc = run("info", "h.csv", cwd=tmp_path)
    assert proc.returncode == 0 and "pass --header if it names the columns" in proc.stdout, proc.stdout
    (tmp_path / "h.csv").write_text("head,winner,loser\nwinner,head,loser\nloser,head,winner\n", encoding="utf-8")
    proc = run("info", "h.csv", cwd=tmp_path)
    assert proc.returncode == 0 and "triplets   2\n" in proc.stdout, proc.stdout
    assert ("the first line 'head,winner,loser' was read as the header, though some of its cells are items of the "
            "file; pass --no-header if it is a triplet") in proc.stdout, proc.stdout


def test_an_output_extension_that_names_no_format_is_refused_before_reading(tmp_path):
    """-o map.json (or .parquet, .xlsx) wrote CSV text under that name, and simulate did the same with its triplets."""
    for args in [("embed", "x.csv", "-o", "map.json"), ("embed", "x.csv", "--method", "ste", "-o", "emb.parquet"),
                 ("simulate", "gaussian", "-n", 20, "-o", "t.xlsx")]:
        ext = os.path.splitext(args[-1])[1]
        line = one_line_error(run(*args, cwd=tmp_path), 2, f"loe-viz {args[0]}: error: ")
        assert line.startswith(f"loe-viz {args[0]}: error: -o {args[-1]}: the extension {ext} names no format this "
                               "command writes; use .csv, .tsv, .npy or .npz (or no extension, for CSV)"), line
    assert os.listdir(tmp_path) == []  # refused before x.csv was looked for, nothing written
    src = sample_path("european_capitals_crowd.csv")
    for name in ("emb.txt", "emb"):  # CSV by another name, as before
        proc = run("embed", src, "--method", "ste", "-o", name, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert (tmp_path / name).read_text(encoding="utf-8").startswith("item,label,x1,x2\n0,Amsterdam,")


def test_standard_input_and_pipes_are_refused_in_one_line(tmp_path):
    """FILE - read as a file named '-' ('No such file or directory'); /dev/stdin fed by a pipe ended in
    '[Errno 29] Illegal seek'."""
    line = one_line_error(run("embed", "-", cwd=tmp_path), 2, "loe-viz embed: error: ")
    assert line == ("loe-viz embed: error: FILE - (standard input) cannot be read: the reader goes back to the start "
                    "of a file after sniffing it; save the triplets to a file and name it (see loe-viz embed --help)")
    proc = subprocess.run([sys.executable, "-m", "loe_viz.cli", "info", "/dev/stdin"], cwd=tmp_path, env=ENV,
                          input="head,winner,loser\n0,1,2\n1,2,0\n", capture_output=True, text=True, timeout=600)
    line = one_line_error(proc, 1, "loe-viz info: error: ")
    assert line.startswith("loe-viz info: error: /dev/stdin: is a pipe or terminal, not a file"), line
    assert os.listdir(tmp_path) == []


def test_samples_lists_and_copies_the_bundled_files(tmp_path):
    """The docs' session copied the capitals crowd file 'here' with no command for it: from a terminal the bundled
    files were out of reach (only Python's loe_viz.data.sample_path found them)."""
    proc = run("samples", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"bundled samples (in {sample_dir()}):"
    assert [ln.split()[0] for ln in lines[1:-1]] == list(SAMPLE_FILES)
    assert "4,000 crowd answers on the capitals" in proc.stdout
    assert lines[-1] == "'loe-viz samples NAME' copies one to the current directory; -o names the copy"
    assert os.listdir(tmp_path) == []
    proc = run("samples", "european_capitals_crowd.csv", "-o", "capitals_crowd.csv", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == "copied european_capitals_crowd.csv to capitals_crowd.csv\n"
    assert (tmp_path / "capitals_crowd.csv").read_bytes() == sample_path("european_capitals_crowd.csv").read_bytes()
    assert run("samples", "gaussian_3d_triplets.npz", cwd=tmp_path).returncode == 0  # default: its own name, here
    assert read_triplets(tmp_path / "gaussian_3d_triplets.npz").n_triplets == 6000
    assert sorted(os.listdir(tmp_path)) == ["capitals_crowd.csv", "gaussian_3d_triplets.npz"]
    for args, code, message in [
        (("european_capitals_crowd.csv", "-o", "capitals_crowd.csv"), 2,
         "-o capitals_crowd.csv exists; pass --force to replace it"),
        (("gaussian_3d_triplets.npz",), 2, "the copy gaussian_3d_triplets.npz exists; pass --force"),
        (("capitals.csv",), 2, "no bundled sample named 'capitals.csv'; the samples are: european_capitals.csv, "),
        (("gaussian_3d_triplets.npz", "-o", "t.csv"), 2,
         "-o t.csv: a copy of gaussian_3d_triplets.npz keeps its format; name it with .npz"),
        (("-o", "x.csv"), 2, "-o names the copy of a sample; name the sample too"),
        (("gaussian_2d_points.csv", "-o", "no/x.csv"), 1, "cannot write no/x.csv: the folder no does not exist"),
    ]:
        line = one_line_error(run("samples", *args, cwd=tmp_path), code, "loe-viz samples: error: ")
        assert line.startswith(f"loe-viz samples: error: {message}"), line
    assert sorted(os.listdir(tmp_path)) == ["capitals_crowd.csv", "gaussian_3d_triplets.npz"]
    (tmp_path / "capitals_crowd.csv").write_text("mine\n")
    assert run("samples", "european_capitals_crowd.csv", "-o", "capitals_crowd.csv", "-f", cwd=tmp_path).returncode == 0
    assert (tmp_path / "capitals_crowd.csv").read_bytes() == sample_path("european_capitals_crowd.csv").read_bytes()


def test_samples_copied_to_standard_output_are_the_file_alone(tmp_path):
    """'samples NAME -o /dev/stdout' wrote 'copied NAME to /dev/stdout' into the data it printed; a copy onto the
    sample itself was refused as if it would "replace the triplets" of a table of cities."""
    src = sample_path("european_capitals.csv")
    proc = shell("samples european_capitals.csv -o /dev/stdout", tmp_path)
    assert proc.returncode == 0 and proc.stdout == src.read_text(encoding="utf-8"), proc.stdout[-200:]
    assert proc.stderr == "copied european_capitals.csv to /dev/stdout\n"
    line = one_line_error(run("samples", "european_capitals.csv", "-o", src, "-f", cwd=tmp_path), 2,
                          "loe-viz samples: error: ")
    assert line == (f"loe-viz samples: error: -o {src} is the bundled sample itself; name another file to copy it to "
                    "(see loe-viz samples --help)")
    assert os.listdir(tmp_path) == []


def test_ctrl_c_mid_fit_stops_with_one_line_and_no_output(tmp_path):
    """Ctrl-C (SIGINT) while the method fits: exit status 130, 'interrupted' on one line, no traceback, no output
    file and no temporary file; an existing file of the output's name (with --force) is left as it was."""
    child = ("import sys, time, loe_viz\n"
             "def fit(self, *a, **k):\n"
             "    time.sleep(120)\n"
             "loe_viz.STE.fit = fit\n"
             "from loe_viz.cli import main\n"
             "sys.exit(main(sys.argv[1:]))\n")
    src = sample_path("european_capitals_crowd.csv")
    for existing in (False, True):
        if existing:
            (tmp_path / "map.csv").write_text("mine\n")
        args = ["embed", str(src), "--method", "ste", "-o", "map.csv"] + ["--force"] * existing
        proc = subprocess.Popen([sys.executable, "-c", child, *args], cwd=tmp_path, env=ENV, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            assert proc.stdout.readline().startswith("read 4,000 triplets")
            assert proc.stdout.readline() == "note: answers name the chosen item by its label\n"
            assert proc.stdout.readline().startswith("fitting STE")
            time.sleep(0.5)
            proc.send_signal(signal.SIGINT)
            assert proc.wait(timeout=60) == 130
        finally:
            proc.kill()
        assert proc.stderr.read() == "loe-viz embed: interrupted\n"
        assert os.listdir(tmp_path) == (["map.csv"] if existing else [])
    assert (tmp_path / "map.csv").read_text() == "mine\n"


def test_embed_writes_loes_per_item_uncertainty(simulated, tmp_path):
    """The per-item covariances were library-only: a researcher with a terminal could not read them."""
    import warnings

    from loe_viz import LOE
    from loe_viz.evaluation import train_test_split_triplets

    d, _ = simulated
    proc = run("embed", "l.csv", "--uncertainty", "-o", tmp_path / "u.csv", cwd=d)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"^uncertainty: the 90 % regions' longest half-axis is [0-9.e+-]+ for the median item, "
                     r"[0-9.e+-]+ at most \(\d+\); the items lie [0-9.e+-]+ from their centre \(rms\)$",
                     proc.stdout, re.M), proc.stdout
    with open(tmp_path / "u.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["item", "label", "x1", "x2", "cov_x1_x1", "cov_x1_x2", "cov_x2_x2"]
    values = np.array([[float(v) for v in r[2:]] for r in rows[1:]])
    # the same fit in this process: the command's split and seed
    data = read_triplets(d / "l.csv")
    train, _ = train_test_split_triplets(data.triplets, test_size=0.2, random_state=0)
    model = LOE(n_components=2, n_landmarks="auto", random_state=0).fit(train, n_items=data.n_items)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        C = model.uncertainty_
    np.testing.assert_array_equal(values[:, :2], model.embedding_)
    np.testing.assert_array_equal(values[:, 2:], C[:, [0, 0, 1], [0, 1, 1]])
    assert np.all(values[:, 2] > 0) and np.all(values[:, 4] > 0)

    proc = run("embed", "l.csv", "--uncertainty", "-o", tmp_path / "u.npz", cwd=d)
    assert proc.returncode == 0, proc.stderr
    assert "(arrays 'embedding', 'labels', 'uncertainty')" in proc.stdout
    with np.load(tmp_path / "u.npz") as z:
        np.testing.assert_array_equal(z["uncertainty"], C)


def test_uncertainty_is_refused_where_it_cannot_be_given_or_written(simulated):
    d, _ = simulated
    line = one_line_error(run("embed", "l.csv", "--uncertainty", "--method", "ste", cwd=d), 2, "loe-viz embed: error: ")
    assert line == ("loe-viz embed: error: --uncertainty applies to --method loe; ste gives no per-item uncertainty "
                    "(see loe-viz embed --help)")
    line = one_line_error(run("embed", "l.csv", "--uncertainty", "-o", "x.npy", cwd=d), 2, "loe-viz embed: error: ")
    assert line == ("loe-viz embed: error: --uncertainty needs an output that holds more than one array: x.npy is "
                    ".npy; use .csv, .tsv or .npz (see loe-viz embed --help)")
    assert not (d / "x.npy").exists()


def test_uncertainty_on_too_few_comparisons_per_item_is_said_to_be_uncalibrated(tmp_path):
    proc = run("embed", sample_path("european_capitals_crowd.csv"), "--uncertainty", "-o", "-", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"^loe-viz: warning: the uncertainty rests on 1\.\d+ comparisons per item and landmark; below 10 "
                     r"its 90 % regions are not calibrated", proc.stderr, re.M), proc.stderr
    assert proc.stdout.splitlines()[0] == "item,label,x1,x2,cov_x1_x1,cov_x1_x2,cov_x2_x2"


def test_starting_needs_no_numba_and_ctrl_c_while_starting_is_one_line(tmp_path):
    """'import loe_viz' imported numba and the estimators (0.4 s): '--help' took 0.5 s, and a Ctrl-C in that time
    printed a traceback from inside an import."""
    code = ("import sys, loe_viz.cli as c\n"
            "try:\n    c.main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print([m for m in ('numba', 'scipy', 'loe_viz.loe', 'loe_viz.kernels') if m in sys.modules])\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=ENV, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "[]"
    code = ("import sys, loe_viz.cli as c\n"
            "def interrupted(*a, **k):\n    raise KeyboardInterrupt\n"
            "c.build_parser = interrupted\nsys.exit(c.main(['embed', 'x.csv']))\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=ENV, capture_output=True, text=True,
                          timeout=120)
    assert (proc.returncode, proc.stderr) == (130, "loe-viz: interrupted\n")


def test_dimension_auto_chooses_by_cross_validation_on_the_training_triplets(tmp_path):
    """A researcher had to run -d 1, 2, 3 ... by hand and compare; the library's select_dimension was Python-only."""
    sim = run("simulate", "gaussian", "-n", 120, "-d", 3, "--temperature", 0.1, "--budget", 30, "--seed", 2,
              "-o", "g3.csv", cwd=tmp_path)
    assert sim.returncode == 0, sim.stderr
    proc = run("embed", "g3.csv", "--method", "ste", "-d", "auto", "-o", "g3_ste.csv", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith("choosing d among 1, 2, 3, 4, 5: STE on 3 folds"))
    rows = [re.fullmatch(r"  d = (\d): held-out error (0\.\d+) \+- (0\.\d+)(  <- chosen: .*)?", ln)
            for ln in lines[at + 1:at + 6]]
    assert all(rows), lines
    errors = {int(r[1]): float(r[2]) for r in rows}
    assert [int(r[1]) for r in rows if r[4]] == [3] and errors[3] < errors[2] < errors[1]  # the truth's dimension
    assert "fitting STE in d = 3 on" in proc.stdout
    header, _, Z = read_embedding(tmp_path / "g3_ste.csv")
    assert header == ["item", "label", "x1", "x2", "x3"] and Z.shape == (120, 3)
    proc = run("embed", "g3.csv", "-d", "auto", "--landmarks", 5, "-o", "-", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "choosing d among 1, 2 (--landmarks 5 allows d <= 2): LOE on 3 folds" in proc.stderr


def test_dimension_auto_is_refused_where_no_dimension_can_be_tried(tmp_path):
    (tmp_path / "t.csv").write_text("0,1,2\n1,2,0\n2,0,1\n")
    line = one_line_error(run("embed", "t.csv", "-d", "auto", "--landmarks", 3, cwd=tmp_path), 2,
                          "loe-viz embed: error: ")
    assert line == ("loe-viz embed: error: --landmarks 3 is too few for any -d: LOE needs at least d + 3 = 4 "
                    "(see loe-viz embed --help)")
    line = one_line_error(run("embed", "t.csv", "-d", "two", cwd=tmp_path), 2, "loe-viz embed: error: ")
    assert line == ("loe-viz embed: error: argument -d/--dimensions: expected a positive integer or 'auto', "
                    "got 'two' (see loe-viz embed --help)")
    line = one_line_error(run("embed", "t.csv", "-d", "auto", "--method", "ste", cwd=tmp_path), 1,
                          "loe-viz embed: error: ")
    assert line == "loe-viz embed: error: -d auto needs at least 30 training triplets to cross-validate; there are 2"


def test_an_output_path_ending_with_a_slash_names_a_folder_never_a_file(tmp_path):
    """embed -o z/ and samples -o y/, for a folder z or y that did not exist, wrote a file named z or y and said
    'wrote ... to z/'; simulate named its points file instead of -o."""
    src = sample_path("gaussian_2d_crowd.csv")
    (tmp_path / "f").write_text("mine\n")
    for args in [("embed", src, "--method", "ste", "-o", "z/"), ("samples", "gaussian_2d_points.csv", "-o", "z/"),
                 ("simulate", "gaussian", "-n", 20, "-o", "z/")]:
        proc = run(*args, cwd=tmp_path)
        assert one_line_error(proc, 1, "") == f"loe-viz {args[0]}: error: cannot write z/: the folder z does not exist"
        assert proc.stdout == ""  # refused before reading, fitting or drawing
        line = one_line_error(run(*args[:-1], "f/", cwd=tmp_path), 2, "")
        assert line == (f"loe-viz {args[0]}: error: -o f/ ends with /, which names a folder, but f is not one; name a "
                        f"file (see loe-viz {args[0]} --help)")
    assert os.listdir(tmp_path) == ["f"] and (tmp_path / "f").read_text() == "mine\n"


def test_an_empty_output_name_is_a_usage_error_before_any_work(tmp_path):
    """-o '' (a variable left unset): embed read and fitted, then said 'cannot write : Is a directory'; samples said
    the same; simulate wrote triplets.csv as if -o had not been given."""
    src = sample_path("gaussian_2d_crowd.csv")
    for args in [("embed", src, "--method", "ste"), ("samples", "gaussian_2d_points.csv"),
                 ("simulate", "gaussian", "-n", 20)]:
        proc = run(*args, "-o", "", cwd=tmp_path)
        assert one_line_error(proc, 2, "") == (f"loe-viz {args[0]}: error: -o '' is an empty name; name a file, or "
                                               f"leave -o out for the default name (see loe-viz {args[0]} --help)")
        assert proc.stdout == ""
    assert os.listdir(tmp_path) == []


def test_an_empty_input_name_is_a_usage_error(tmp_path):
    # FILE '' (a variable left unset) said "error: : No such file or directory"
    for command in ("info", "embed"):
        assert one_line_error(run(command, "", cwd=tmp_path), 2, "") == (
            f"loe-viz {command}: error: FILE '' is an empty name; name the triplet file to read (see loe-viz {command} "
            "--help)")


def test_ctrl_c_mid_simulate_leaves_no_new_file_and_old_ones_whole(tmp_path):
    """Ctrl-C while simulate wrote its points left the triplet file it had written, so that a rerun refused it as
    existing; with --force the old triplets were already replaced. The points' write stalls here."""
    child = ("import sys, time, numpy\n"
             "numpy.savetxt = lambda *a, **k: time.sleep(120)\n"
             "from loe_viz.cli import main\n"
             "sys.exit(main(sys.argv[1:]))\n")
    for existing in (False, True):
        if existing:
            (tmp_path / "t.csv").write_text("mine\n")
            (tmp_path / "t_points.csv").write_text("my points\n")
        args = ["simulate", "gaussian", "-n", "50", "-o", "t.csv"] + ["--force"] * existing
        proc = subprocess.Popen([sys.executable, "-c", child, *args], cwd=tmp_path, env=ENV, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 120
            while not any(f.startswith(".tmp-") and f.endswith("points.csv") for f in os.listdir(tmp_path)):
                assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.poll() else ""
                time.sleep(0.02)
            proc.send_signal(signal.SIGINT)
            assert proc.wait(timeout=60) == 130
        finally:
            proc.kill()
        assert (proc.stdout.read(), proc.stderr.read()) == ("", "loe-viz simulate: interrupted\n")
        assert sorted(os.listdir(tmp_path)) == (["t.csv", "t_points.csv"] if existing else [])
    assert (tmp_path / "t.csv").read_text() == "mine\n" and (tmp_path / "t_points.csv").read_text() == "my points\n"


def test_renumbered_ids_are_explained_without_the_librarys_keywords(tmp_path):
    """The note on ids that are not 0..n-1 told the command's users to 'pass n_items=6' or 'pass its labels=',
    keywords of the Python function that no option of this command takes."""
    (tmp_path / "ids.csv").write_text("1,2,3\n3,2,5\n")
    note = ("item ids were not the contiguous range 0..3: the 4 distinct ids (1..5) were mapped to 0..3 in "
            "increasing order; each item keeps its id as its label")
    proc = run("info", "ids.csv", cwd=tmp_path)
    assert proc.returncode == 0 and f"\nnote       {note}\n" in proc.stdout, proc.stdout
    proc = run("embed", "ids.csv", "--method", "ste", "--heldout", 0, cwd=tmp_path)
    assert proc.returncode == 0 and f"\nnote: {note}\n" in proc.stdout, proc.stdout
    assert "n_items" not in proc.stdout + proc.stderr and "labels=" not in proc.stdout + proc.stderr


def test_columns_read_by_their_header_names_are_not_called_an_option(tmp_path):
    """A header in another order was noted as '--columns taken by their header names', naming an option the user
    never passed."""
    (tmp_path / "reord.csv").write_text("loser,winner,head\n0,1,2\n1,2,3\n")
    proc = run("info", "reord.csv", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "\nnote       columns taken by their header names (loser, winner, head)\n" in proc.stdout, proc.stdout
    line = one_line_error(run("info", "reord.csv", "--columns", "head,near,near", cwd=tmp_path), 2, "")
    assert line == "loe-viz info: error: --columns names the role 'near' more than once (see loe-viz info --help)"


def test_text_only_reading_options_on_numpy_files_are_named_as_options(tmp_path):
    """--header/--no-header on an .npz was called 'header=' (the library's keyword), and a .npy file, which holds
    one unnamed array, was said to name its arrays."""
    npz = sample_path("gaussian_3d_triplets.npz")
    np.save(tmp_path / "t.npy", np.array([[0, 1, 2], [1, 2, 0]]))
    npz_says = "a .npz file names its arrays (triplets, or X and y)"
    npy_says = "a .npy file holds one unnamed array, of list-order triplets"
    for file, option, says in [(npz, ["--no-header"], npz_says), (npz, ["--header"], npz_says),
                               (npz, ["--columns", "head,near,far"], npz_says), ("t.npy", ["--header"], npy_says),
                               ("t.npy", ["--columns", "head,near,far"], npy_says)]:
        line = one_line_error(run("info", file, *option, cwd=tmp_path), 1, "")
        assert line == f"loe-viz info: error: {file}: {option[0]} applies to text files; {says}"


def test_landmarks_that_too_few_items_head_are_refused_before_the_fit_with_a_number_that_works(tmp_path):
    """--landmarks 11 on triplets headed by 10 items said 'LOE needs --landmarks 11' after 'fitting LOE ...', with
    no number that works; --landmarks 500 named the 200 items, not the 10 heads that bind."""
    src = sample_path("gaussian_2d_landmark_triplets.csv")
    short = ("the 20,000 training triplets have only 10 distinct head item(s) (a landmark of LOE must head "
             "triplets); use --landmarks 10")
    for extra, says in [(["--landmarks", 11], f"--landmarks 11: {short} or less"),
                        (["--landmarks", 500], f"--landmarks 500: {short} or less"),
                        (["--landmarks", 11, "--method", "loeste"], f"--landmarks 11: {short} or less"),
                        (["--landmarks", 11, "-d", "auto"], f"--landmarks 11: {short} or less"),
                        (["--landmarks", 11, "-d", 8], f"--landmarks 11: {short} with -d 7 or less, or --method ste")]:
        proc = run("embed", src, *extra, cwd=tmp_path)
        assert one_line_error(proc, 1, "") == f"loe-viz embed: error: {says}"
        assert "fitting" not in proc.stdout and "choosing" not in proc.stdout, proc.stdout
    assert os.listdir(tmp_path) == []


def test_embed_names_the_items_in_no_triplet_whose_coordinates_nothing_determines(tmp_path):
    """An .npz with 105 labels whose triplets use 100 items: embed wrote coordinates for the other 5 without a word
    (with --method loeste all five the same point), while info counted them as unused."""
    rng = np.random.default_rng(0)
    triplets = np.array([rng.choice(100, 3, replace=False) for _ in range(2000)])
    np.savez(tmp_path / "u.npz", triplets=triplets, labels=np.array([f"it{i}" for i in range(105)]))
    proc = run("embed", "u.npz", "--method", "ste", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[1] == ("note: 5 item(s) appear in no triplet (e.g. 'it100', 'it101', 'it102', "
                                           "...): their coordinates in the output are not determined by the data")
    proc = run("embed", sample_path("gaussian_2d_crowd.csv"), "--method", "ste", cwd=tmp_path)
    assert proc.returncode == 0 and "appear in no triplet" not in proc.stdout, proc.stdout


def test_a_file_that_cannot_be_read_is_named_with_the_problem(tmp_path):
    """info /proc/self/status said '[Errno 22] Invalid argument': neither the file nor the problem in words."""
    line = one_line_error(run("info", "/proc/self/status", cwd=tmp_path), 1, "")
    assert line == "loe-viz info: error: cannot read /proc/self/status: Invalid argument"
    line = one_line_error(run("info", "none.csv", cwd=tmp_path), 1, "")
    assert line == "loe-viz info: error: none.csv: No such file or directory"


def test_a_thread_count_numba_cannot_use_is_named_before_any_work(tmp_path):
    """NUMBA_NUM_THREADS=0 stopped embed after reading with 'Number of threads specified must be > 0.', naming no
    variable; 2.0 printed numba's traceback and was ignored."""
    src = sample_path("gaussian_2d_crowd.csv")
    for value in ("0", "2.0", "two"):
        proc = subprocess.run([sys.executable, "-m", "loe_viz.cli", "embed", str(src), "--method", "ste"], cwd=tmp_path,
                              env={**ENV, "NUMBA_NUM_THREADS": value}, capture_output=True, text=True, timeout=600)
        assert one_line_error(proc, 2, "") == (f"loe-viz embed: error: NUMBA_NUM_THREADS={value!r}: expected a whole "
                                               "number of threads above 0, such as 2 (or leave it unset: one thread "
                                               "per core) (see loe-viz embed --help)")
        assert proc.stdout == ""
    assert os.listdir(tmp_path) == []
