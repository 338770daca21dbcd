#!/usr/bin/env bash
# The installed package, not the checkout: build a wheel, install it into a fresh virtual
# environment outside the source tree, and run the loe-viz command from another directory.
#
#   .ci/smoke_installed.sh [PYTHON]
#
# PYTHON (default python3) builds the wheel and the environment. LOE_VIZ_SMOKE_PIP_ARGS is
# passed to the install (e.g. "--no-index --find-links DIR" offline). Exits non-zero on the first
# failure.
set -euo pipefail
SRC="${LOE_VIZ_SRC:-$(cd "$(dirname "$0")/.." && pwd)}"
PY="${1:-python3}"
WORK="$(mktemp -d)"
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
step() { printf '\n== %s (%ss)\n' "$*" "$SECONDS"; }

step "build the wheel"
# From a copy of the project's files: an in-tree build reuses build/lib, where a module removed
# since an earlier build would still be lying around and end up in the wheel.
mkdir "$WORK/src"
if git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1; then
  (cd "$SRC" && git ls-files -z --cached --others --exclude-standard \
     | xargs -0 sh -c 'for f; do [ -e "$f" ] || [ -L "$f" ] && printf "%s\0" "$f"; done' sh \
     | xargs -0 cp -P --parents -t "$WORK/src")
else
  cp -RP "$SRC/." "$WORK/src" && rm -rf "$WORK/src/build"
fi
"$PY" -m pip wheel --quiet --no-deps "$WORK/src" -w "$WORK/dist"
WHEEL="$(ls "$WORK"/dist/loe_viz-*.whl)"
echo "$WHEEL"
# the wheel carries the samples and the command
"$PY" - "$WHEEL" "$WORK/src" <<'EOF'
import sys, zipfile
from pathlib import Path
names = zipfile.ZipFile(sys.argv[1]).namelist()
src = {str(p.relative_to(sys.argv[2])) for p in Path(sys.argv[2], "loe_viz").rglob("*.py")}
wheel = {n for n in names if n.startswith("loe_viz/") and n.endswith(".py")}
assert wheel == src, f"wheel and source differ: {sorted(wheel ^ src)}"
data = sorted(n for n in names if n.startswith("loe_viz/data/") and not n.endswith(".py"))
assert "loe_viz/data/european_capitals_crowd.csv" in data and len(data) >= 8, data
ep = [n for n in names if n.endswith("entry_points.txt")]
assert ep and "loe-viz = loe_viz.cli:main" in zipfile.ZipFile(sys.argv[1]).read(ep[0]).decode(), ep
print(f"{len(data)} sample files and the loe-viz entry point in the wheel")
EOF

step "install it into a fresh environment"
"$PY" -m venv "$WORK/venv"
# shellcheck disable=SC2086
"$WORK/venv/bin/python" -m pip install --quiet --no-compile ${LOE_VIZ_SMOKE_PIP_ARGS:-} "$WHEEL"
BIN="$WORK/venv/bin"
mkdir "$WORK/run"
cd "$WORK/run"   # away from the source tree: only the installed package can be imported

step "the installed package, not the checkout"
"$BIN/python" - "$SRC" <<'EOF'
import sys
from pathlib import Path
import loe_viz
from loe_viz.app.triplets_state import SAMPLE_DIR, SAMPLES
src = Path(sys.argv[1]).resolve()
where = Path(loe_viz.__file__).resolve()
assert src not in where.parents, f"imported the checkout: {where}"
assert all((SAMPLE_DIR / s).is_file() for s in SAMPLES), SAMPLE_DIR
print(f"loe_viz {loe_viz.__version__} from {where.parent}; samples in {SAMPLE_DIR}")
EOF
"$BIN/loe-viz" --version
test "$("$BIN/python" -m loe_viz --version)" = "$("$BIN/loe-viz" --version)"  # python -m loe_viz: the same command

# LOE throughout: a fresh install compiles the numba kernels on first use (about half a minute
# per method on a quiet machine), so one method keeps the smoke test short.
step "loe-viz simulate"
"$BIN/loe-viz" simulate gaussian -n 300 --temperature 0.2 --budget 30 --landmarks 10 -o sim.csv
test -s sim.csv && test -s sim_points.csv

step "loe-viz embed on its output"
"$BIN/loe-viz" embed sim.csv --method loe --landmarks 10 -o sim_loe.csv | tee embed.log
grep -q "held-out accuracy 0\.[89]" embed.log
test "$(head -1 sim_loe.csv)" = "item,label,x1,x2"
test "$(wc -l < sim_loe.csv)" -eq 301

step "loe-viz embed on a bundled sample"
SAMPLE="$("$BIN/python" -c 'from loe_viz.data import sample_path; print(sample_path("gaussian_2d_landmark_triplets.csv"))')"
"$BIN/loe-viz" info "$SAMPLE"
"$BIN/loe-viz" embed "$SAMPLE" --method loe --landmarks 10 -o sample_loe.csv | tee sample.log
grep -q "held-out accuracy 0\.[789]" sample.log
test "$(wc -l < sample_loe.csv)" -eq 201

step "an existing output is never replaced without --force"
cp sim_loe.csv before.csv
set +e
"$BIN/loe-viz" embed sim.csv --method loe --landmarks 10 -o sim_loe.csv 2> exists.err
status=$?
set -e
cat exists.err
test "$status" -eq 2 && cmp -s sim_loe.csv before.csv && grep -q "exists; pass --force" exists.err

step "loe-viz samples: the bundled files from a terminal, and a baseline on one"
"$BIN/loe-viz" samples | tee samples.log
grep -q "^  european_capitals_crowd.csv " samples.log
"$BIN/loe-viz" samples european_capitals_crowd.csv -o capitals_crowd.csv
"$BIN/loe-viz" embed capitals_crowd.csv --method ste -o capitals_map.tsv | tee capitals.log
grep -q "held-out accuracy 0\.9" capitals.log
test "$(sed -n 2p capitals_map.tsv | cut -f2)" = "Amsterdam"

step "the README's Python blocks, in order, on the installed package"
"$BIN/python" - "$SRC/README.md" <<'EOF'
import re, sys, warnings
import loe_viz
blocks = re.findall(r"```python\n(.*?)```", open(sys.argv[1], encoding="utf-8").read(), re.S)
assert len(blocks) >= 3, len(blocks)
namespace = {}
with warnings.catch_warnings():
    warnings.simplefilter("ignore", loe_viz.LOEWarning)
    for i, code in enumerate(blocks):
        exec(compile(code, f"README.md python block {i + 1}", "exec"), namespace)
print(f"{len(blocks)} blocks ran; the capitals file read from {namespace['data'].source}")
EOF

step "a malformed file: one line, exit status 1"
printf 'head,winner,loser\n1,2,3\n4,5,x\n' > bad.csv
set +e
"$BIN/loe-viz" embed bad.csv 2> bad.err
status=$?
set -e
cat bad.err
test "$status" -eq 1 && test "$(wc -l < bad.err)" -eq 1 && grep -q "bad.csv: line 3" bad.err

step "loe-viz explore answers HTTP 200 with the page"
PORT="$("$BIN/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$BIN/loe-viz" explore --port "$PORT" > explore.log 2>&1 &
SERVER_PID=$!
ok=""
for _ in $(seq 1 180); do
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then break; fi
  if "$BIN/python" -c '
import sys, urllib.request
try:
    with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/", timeout=30) as r:
        page = r.read().decode("utf-8", "replace")
        ok = r.status == 200 and "<title>Landmark Ordinal Embedding" in page and "bootstraptemplate" in page
except OSError:
    ok = False
sys.exit(0 if ok else 1)' "$PORT"; then ok=1; break; fi
  sleep 1
done
cat explore.log
test -n "$ok" || { echo "loe-viz explore did not serve the page"; exit 1; }
kill "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null || true
SERVER_PID=""

step "installed-package smoke test passed"
