"""Speed and memory of loe_viz.io.read_triplets on large triplet files.

    python benchmarks/bench_io.py                  # 300k-row files and a 10^7-row file
    python benchmarks/bench_io.py --big-rows 1e6   # a smaller big file
    python benchmarks/bench_io.py --no-loadtxt     # skip the np.loadtxt comparison

Writes the test files to a temporary directory (removed afterwards), then reads
each one in a fresh interpreter so that memory figures are not polluted by
earlier runs:

- time: best of 3 warm reads (pandas and the reader are imported first;
  the first call of a fresh process, which imports them, is reported separately);
- peak RSS above the resident size just before the read (Linux: VmHWM reset
  through /proc/self/clear_refs; elsewhere ru_maxrss, an upper bound);
- tracemalloc peak (NumPy allocations are traced) in a separate run;
- both as a multiple of the returned array's size.

Files: 300k list-order triplets (CSV, integer ids, n = 1000), the same in the
crowd layout (head,left,right,winner), the crowd layout with text labels, and a
10^7-row list-order CSV (n = 10^5). Results go to benchmarks/results/io.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from loe_viz.io import write_triplets  # noqa: E402


def random_triplets(n, m, seed):
    """``m`` random list-order rows over ``n`` items (three distinct items per row)."""
    rng = np.random.default_rng(seed)
    h = rng.integers(0, n, m)
    a = (h + rng.integers(1, n, m)) % n
    b = (h + rng.integers(1, n - 1, m)) % n
    b = np.where(b == a, (a + 1) % n, b)
    b = np.where(b == h, (h + n - 1) % n, b)
    b = np.where(b == a, (b + n - 1) % n, b)
    T = np.column_stack([h, a, b]).astype(np.int32)
    ok = (T[:, 0] != T[:, 1]) & (T[:, 0] != T[:, 2]) & (T[:, 1] != T[:, 2])
    return T[ok]


# ------------------------------------------------------------------------------- worker

def _rss_kb(field):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise OSError(field)


def worker(path, mode):
    """Runs in a fresh interpreter; prints one JSON line."""
    import io
    import tracemalloc

    from loe_viz.io import read_triplets

    t0 = time.perf_counter()
    read_triplets(io.StringIO("0,1,2\n1,2,0\n"))
    read_triplets(io.StringIO("head,left,right,winner\na,b,c,b\n"))
    first_call = time.perf_counter() - t0
    out = {"first_call_s": first_call}
    if mode == "trace":
        tracemalloc.start()
        data = read_triplets(path)
        out["tracemalloc_peak_bytes"] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    else:
        try:
            with open("/proc/self/clear_refs", "w") as fh:
                fh.write("5")  # reset the peak resident size to the current one
            before = _rss_kb("VmRSS")
            how = "VmHWM"
        except OSError:
            before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            before = before // 1024 if sys.platform == "darwin" else before
            how = "ru_maxrss"
        times = []
        for rep in range(3):
            t0 = time.perf_counter()
            data = read_triplets(path)
            times.append(time.perf_counter() - t0)
            if rep == 0:
                if how == "VmHWM":
                    peak = _rss_kb("VmHWM")
                else:
                    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                    peak = peak // 1024 if sys.platform == "darwin" else peak
                out["peak_rss_delta_bytes"] = (peak - before) * 1024
            del data
        data = read_triplets(path)
        out["times_s"] = times
        out["rss_method"] = how
    out.update(m=data.n_triplets, n_items=data.n_items, layout=data.layout,
               array_bytes=int(data.triplets.nbytes), file_bytes=os.path.getsize(path))
    print(json.dumps(out))


def run_worker(path, mode):
    res = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", path, mode],
                         capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def loadtxt_time(path):
    code = ("import numpy as np, time; t=time.perf_counter(); "
            f"a=np.loadtxt({path!r}, delimiter=',', skiprows=1, dtype=np.int64); "
            "print(time.perf_counter()-t)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(res.stdout.strip())


def measure(name, path):
    rss = run_worker(path, "rss")
    trace = run_worker(path, "trace")
    arr = rss["array_bytes"]
    row = {
        "file": name, "rows": rss["m"], "n_items": rss["n_items"], "layout": rss["layout"],
        "file_MB": rss["file_bytes"] / 2**20, "array_MB": arr / 2**20,
        "read_s_best": min(rss["times_s"]), "read_s_all": rss["times_s"],
        "first_call_s": rss["first_call_s"],
        "peak_rss_delta_MB": rss["peak_rss_delta_bytes"] / 2**20, "rss_method": rss["rss_method"],
        "peak_rss_over_array": rss["peak_rss_delta_bytes"] / arr,
        "tracemalloc_peak_MB": trace["tracemalloc_peak_bytes"] / 2**20,
        "tracemalloc_over_array": trace["tracemalloc_peak_bytes"] / arr,
    }
    print(f"{name:<34} {row['rows']:>10,d} rows {row['file_MB']:7.1f} MB  read {row['read_s_best']:6.3f} s  "
          f"peak RSS +{row['peak_rss_delta_MB']:6.1f} MB ({row['peak_rss_over_array']:.2f}x array)  "
          f"tracemalloc {row['tracemalloc_peak_MB']:6.1f} MB ({row['tracemalloc_over_array']:.2f}x)", flush=True)
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=3e5, help="rows of the medium files (default 3e5)")
    parser.add_argument("--big-rows", type=float, default=1e7, help="rows of the big file (default 1e7; 0 skips)")
    parser.add_argument("--no-loadtxt", action="store_true", help="skip the np.loadtxt comparison")
    parser.add_argument("--out", default=os.path.join(HERE, "results", "io.json"))
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(*args.worker)
        return 0
    m, big = int(args.rows), int(args.big_rows)
    tmp = tempfile.mkdtemp(prefix="bench_io_")
    rows = []
    try:
        T = random_triplets(1000, m, seed=0)
        files = {
            f"list-order CSV, {m // 1000}k": ("lo.csv", dict()),
            f"crowd CSV (ids), {m // 1000}k": ("crowd.csv", dict(layout="crowd")),
            f"crowd CSV (text labels), {m // 1000}k": (
                "crowd_labels.csv", dict(layout="crowd", labels=[f"item{i:04d}" for i in range(1000)])),
        }
        for name, (fname, kw) in files.items():
            write_triplets(os.path.join(tmp, fname), T, **kw)
            rows.append(measure(name, os.path.join(tmp, fname)))
        lt = None
        if not args.no_loadtxt:
            lt = loadtxt_time(os.path.join(tmp, "lo.csv"))
            print(f"{'np.loadtxt on the list-order CSV':<34} {lt:.3f} s "
                  f"({lt / rows[0]['read_s_best']:.0f}x read_triplets)", flush=True)
        if big:
            t0 = time.perf_counter()
            TB = random_triplets(100_000, big, seed=1)
            write_triplets(os.path.join(tmp, "big.csv"), TB)
            write_s = time.perf_counter() - t0
            del TB
            rows.append(measure(f"list-order CSV, {big:.0e} rows", os.path.join(tmp, "big.csv")))
            rows[-1]["write_s"] = write_s
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    result = {
        "command": " ".join(["python benchmarks/bench_io.py"] + list(argv if argv is not None else sys.argv[1:])),
        "machine": {"python": platform.python_version(), "numpy": np.__version__, "cpus": os.cpu_count(),
                    "platform": platform.platform(),
                    "load_average_at_end": os.getloadavg() if hasattr(os, "getloadavg") else None},
        "files": rows,
        "loadtxt_s": lt,
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(result, fh, indent=2)
    print(f"saved {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
