#!/usr/bin/env bash
# The benchmark, one command: `make bench` (or bench/run.sh BUILD_DIR).
#  1. matcore sample + matcore validate of 10^7 samples, k = 16, fp16, mi300x: REPS runs (3 by
#     default), each in a fresh directory; the d file is written beforehand by `matcore run`, the
#     model standing in for a device (not timed). Every run is reported, and the median.
#  2. dot products per second per core for every preset beside a native binary32 dot product.
# Results go to stdout in Markdown; docs/performance.md holds the last recorded run.
set -euo pipefail
B=${1:-build}
M="$B/matcore"
N=${N:-10000000}
REPS=${REPS:-3}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
now() { date +%s.%N; }
echo "## sample + validate, $N samples, k=16 fp16, mi300x ($(nproc) cores, $(df -T "$W" | awk 'NR==2{print $2}') in $W)"
echo
echo "| run | sample s | validate s | sample + validate s | (run: d by the model, not counted) s |"
echo "|---|---|---|---|---|"
TOTALS=()
for r in $(seq 1 "$REPS"); do
  D="$W/run$r"
  t0=$(now)
  "$M" sample --arch mi300x --type fp16 --n "$N" --out "$D" >/dev/null
  t1=$(now)
  "$M" run --arch mi300x --type fp16 --a "$D/a.txt" --b "$D/b.txt" --c "$D/c.txt" --d "$D/d.txt" 2>/dev/null
  t2=$(now)
  LAST=$("$M" validate --arch mi300x --type fp16 --a "$D/a.txt" --b "$D/b.txt" --c "$D/c.txt" --d "$D/d.txt" | tail -1)
  t3=$(now)
  row=$(python3 -c "
import sys
t0, t1, t2, t3 = map(float, sys.argv[1:])
print(f'{t1-t0:.2f} {t3-t2:.2f} {t1-t0+t3-t2:.2f} {t2-t1:.2f}')" "$t0" "$t1" "$t2" "$t3")
  set -- $row
  echo "| $r | $1 | $2 | **$3** | $4 |"
  TOTALS+=("$3")
  rm -rf "$D"
done
python3 -c "
import statistics, sys
v = sorted(map(float, sys.argv[1:]))
print(f'\nmedian sample + validate: {statistics.median(v):.2f} s (min {v[0]:.2f}, max {v[-1]:.2f})')" "${TOTALS[@]}"
echo "validate's last line: $LAST"
echo
echo "## dot products per second per core (one thread)"
echo
"$B/bench_dot" "${BENCH_SECS:-0.54}"
