"""Wall time of ``loe-viz embed`` on a 300k-triplet CSV, and what it spends besides the fit.

    python benchmarks/bench_cli.py            # 5 runs of the installed command
    python benchmarks/bench_cli.py --runs 9

Writes a list-order CSV of 30 heads x 10,000 noiseless triplets over n = 3,000 points
drawn from N(0, I) in 2-D (``numpy.random.default_rng(1)``) into a temporary folder, runs
``python -m loe_viz embed FILE -o OUT`` from that folder (the first run, which may
compile or load the numba cache, is not counted), and prints for each run the wall
time, the fit time the command reports, and their difference. Then the fixed costs,
each the median of the same number of fresh interpreters: starting Python, importing
``loe_viz.cli``, and importing pandas. Run it from an installed wheel in a fresh
environment to see what a user sees; a checkout works the same way.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np


def make_file(path: str, n: int = 3000, heads: int = 30, per_head: int = 10_000, seed: int = 1) -> None:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    rows = []
    for h in rng.choice(n, heads, replace=False):
        jk = rng.integers(0, n, size=(per_head + per_head // 5, 2))
        jk = jk[(jk[:, 0] != jk[:, 1]) & (jk[:, 0] != h) & (jk[:, 1] != h)][:per_head]
        far = ((X[jk[:, 0]] - X[h]) ** 2).sum(1) > ((X[jk[:, 1]] - X[h]) ** 2).sum(1)
        jk[far] = jk[far][:, ::-1]  # list order: the head is closer to the second column
        rows.append(np.column_stack([np.full(len(jk), h), jk]))
    np.savetxt(path, np.vstack(rows), fmt="%d", delimiter=",")


def timed(cmd, cwd) -> tuple[float, str]:
    t0 = time.perf_counter()
    out = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=True)
    return time.perf_counter() - t0, out.stdout + out.stderr


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        make_file(os.path.join(tmp, "big.csv"))
        cmd = [py, "-m", "loe_viz", "embed", "big.csv", "-o", "out.csv"]
        timed(cmd, tmp)  # the first run may load or compile the kernels' cache
        rows = []
        for _ in range(args.runs):
            wall, text = timed(cmd, tmp)
            m = re.search(r"fit ([0-9.]+) (ms|s|min)", text)
            fit = float(m.group(1)) * {"ms": 1e-3, "s": 1.0, "min": 60.0}[m.group(2)]
            rows.append((wall, fit))
            print(f"embed: {wall:.2f} s wall, fit {fit:.2f} s, everything else {wall - fit:.2f} s", flush=True)
        rest = [w - f for w, f in rows]
        print(f"median: everything but the fit {statistics.median(rest):.2f} s "
              f"(min {min(rest):.2f}, max {max(rest):.2f}) over {args.runs} runs")
        for label, code in (("python -c pass", "pass"), ("import loe_viz.cli", "import loe_viz.cli"),
                            ("import pandas", "import pandas")):
            t = statistics.median(timed([py, "-c", code], tmp)[0] for _ in range(args.runs))
            print(f"{label}: {t:.2f} s (median of {args.runs} fresh interpreters)")
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
