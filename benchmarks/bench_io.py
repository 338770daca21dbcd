"""Speed and memory of loe_viz.io.read_triplets on large triplet files.

    python benchmarks/bench_io.py                  # 300k-row files and a 10^7-row file
    python benchmarks/bench_io.py --big-rows 1e6   # a smaller big file
    python benchmarks/bench_io.py --no-loadtxt     # skip the np.loadtxt comparison
    python benchmarks/bench_io.py --against c73810b^   # this reader beside an older revision's


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

``--against REV`` extracts ``loe_viz/`` of git revision REV (``git archive``) to a
temporary directory and times its ``read_triplets`` beside the current one on the
same files in the same run: the two readers alternate, ``--rounds`` fresh
interpreters each, and the best time and the lowest peaks are compared (the
machine may be shared, so only ratios taken in one run mean anything).
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
ROOT = os.path.dirname(HERE)


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


def worker(path, mode, src):
    """Runs in a fresh interpreter on the ``loe_viz`` package under ``src``; prints one JSON line."""
    import io
    import tracemalloc

    sys.path.insert(0, src)
    from loe_viz.io import read_triplets

    assert os.path.samefile(sys.modules["loe_viz"].__path__[0], os.path.join(src, "loe_viz"))

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


def run_worker(path, mode, src=ROOT):
    res = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", path, mode, src],
                         capture_output=True, text=True, check=True, cwd=src)
    return json.loads(res.stdout.strip().splitlines()[-1])


def loadtxt_time(path):
    code = ("import numpy as np, time; t=time.perf_counter(); "
            f"a=np.loadtxt({path!r}, delimiter=',', skiprows=1, dtype=np.int64); "
            "print(time.perf_counter()-t)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(res.stdout.strip())


def measure(name, path, src=ROOT, show=True):
    rss = run_worker(path, "rss", src)
    trace = run_worker(path, "trace", src)
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
    if show:
        print(f"{name:<34} {row['rows']:>10,d} rows {row['file_MB']:7.1f} MB  read {row['read_s_best']:6.3f} s  "
              f"peak RSS +{row['peak_rss_delta_MB']:6.1f} MB ({row['peak_rss_over_array']:.2f}x array)  "
              f"tracemalloc {row['tracemalloc_peak_MB']:6.1f} MB ({row['tracemalloc_over_array']:.2f}x)", flush=True)
    return row


def extract(rev, dest):
    """``loe_viz/`` of git revision ``rev`` unpacked under ``dest`` (``rev`` may also be a directory holding one)."""
    if os.path.isdir(os.path.join(rev, "loe_viz")):
        shutil.copytree(os.path.join(rev, "loe_viz"), os.path.join(dest, "loe_viz"))
        return os.path.abspath(rev)
    archive = subprocess.run(["git", "-C", ROOT, "archive", rev, "loe_viz"], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", dest], input=archive, check=True)
    return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", rev], capture_output=True, text=True,
                          check=True).stdout.strip()


def compare(files, rev, rounds, tmp):
    """Rows of (current / rev) ratios: both readers measured alternately in fresh interpreters."""
    old_src = os.path.join(tmp, "old")
    os.makedirs(old_src)
    sha = extract(rev, old_src)
    keys = ("read_s_best", "peak_rss_delta_MB", "tracemalloc_peak_MB", "first_call_s")
    print(f"\ncurrent reader / {rev} ({sha}), best of {rounds} alternating rounds (3 reads each)", flush=True)
    print(f"{'file':<34} {'time':>7} {'peak RSS':>9} {'tracemalloc':>12} {'first call':>11}   new s / old s")
    out = []
    for name, path in files:
        runs = {"new": [], "old": []}
        for _ in range(rounds):
            for who, src in (("new", ROOT), ("old", old_src)):
                runs[who].append(measure(name, path, src, show=False))
        best = {who: {k: min(r[k] for r in rs) for k in keys} for who, rs in runs.items()}
        ratio = {k: best["new"][k] / best["old"][k] for k in keys}
        out.append({"file": name, "rows": runs["new"][0]["rows"], "new": best["new"], "old": best["old"],
                    "new_over_old": ratio, "load_average": os.getloadavg()})
        print(f"{name:<34} {ratio['read_s_best']:6.2f}x {ratio['peak_rss_delta_MB']:8.2f}x "
              f"{ratio['tracemalloc_peak_MB']:11.2f}x {ratio['first_call_s']:10.2f}x   "
              f"{best['new']['read_s_best']:.3f} / {best['old']['read_s_best']:.3f}", flush=True)
    return {"revision": rev, "commit": sha, "rounds": rounds, "files": out}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=3e5, help="rows of the medium files (default 3e5)")
    parser.add_argument("--big-rows", type=float, default=1e7, help="rows of the big file (default 1e7; 0 skips)")
    parser.add_argument("--no-loadtxt", action="store_true", help="skip the np.loadtxt comparison")
    parser.add_argument("--against", metavar="REV", help="also time the reader of git revision REV (or of a directory "
                                                          "holding loe_viz/), same run")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds per reader with --against")
    parser.add_argument("--out", default=os.path.join(HERE, "results", "io.json"))
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(*args.worker)
        return 0
    sys.path.insert(0, ROOT)
    from loe_viz.io import write_triplets
    m, big = int(args.rows), int(args.big_rows)
    tmp = tempfile.mkdtemp(prefix="bench_io_")
    rows, paths, against = [], [], None
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
            paths.append((name, os.path.join(tmp, fname)))
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
            paths.append((f"list-order CSV, {big:.0e} rows", os.path.join(tmp, "big.csv")))
            rows.append(measure(*paths[-1]))
            rows[-1]["write_s"] = write_s
        if args.against:
            against = compare(paths, args.against, args.rounds, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    result = {
        "command": " ".join(["python benchmarks/bench_io.py"] + list(argv if argv is not None else sys.argv[1:])),
        "machine": {"python": platform.python_version(), "numpy": np.__version__, "cpus": os.cpu_count(),
                    "platform": platform.platform(),
                    "load_average_at_end": os.getloadavg() if hasattr(os, "getloadavg") else None},
        "files": rows,
        "loadtxt_s": lt,
        "against": against,
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(result, fh, indent=2)
    print(f"saved {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
