#!/usr/bin/env bash
# The benchmark, one command: `make bench` (or bench/run.sh BUILD_DIR).
#  1. matcore sample + matcore validate of 10^7 samples, k = 16, fp16, mi300x (the d file is
#     written beforehand by `matcore run`, the model standing in for a device; not timed);
#  2. dot products per second per core for every preset beside a native binary32 dot product.
# Results go to stdout in Markdown; docs/performance.md holds the last recorded run.
set -euo pipefail
B=${1:-build}
M="$B/matcore"
N=${N:-10000000}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
echo "## sample + validate, $N samples, k=16 fp16, mi300x ($(nproc) cores)"
t0=$(date +%s.%N)
"$M" sample --arch mi300x --type fp16 --n "$N" --out "$W" >/dev/null
t1=$(date +%s.%N)
"$M" run --arch mi300x --type fp16 --a "$W/a.txt" --b "$W/b.txt" --c "$W/c.txt" --d "$W/d.txt" 2>/dev/null
t2=$(date +%s.%N)
"$M" validate --arch mi300x --type fp16 --a "$W/a.txt" --b "$W/b.txt" --c "$W/c.txt" --d "$W/d.txt" | tail -1
t3=$(date +%s.%N)
python3 - "$t0" "$t1" "$t2" "$t3" <<'PY'
import sys
t0, t1, t2, t3 = map(float, sys.argv[1:])
print(f"| step | seconds |\n|---|---|\n| sample | {t1-t0:.2f} |\n| validate | {t3-t2:.2f} |\n| sample + validate | {t1-t0+t3-t2:.2f} |\n| (run: d by the model, not counted) | {t2-t1:.2f} |")
PY
echo
echo "## dot products per second per core (one thread)"
"$B/bench_dot" "${BENCH_SECS:-0.3}"
