#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ (clang-15, ASan + UBSan) in a build folder of their own
# and runs each for FUZZ_SECONDS seconds. docs/fuzzing.md. Used by `make fuzz`.
#   FUZZ_SECONDS  seconds per target (default 30)
#   FUZZ_BUILD    build folder (default build-fuzz)
#   FUZZ_TARGETS  targets to run (default: all six)
#   JOBS          build jobs (default: nproc)
# Before fuzzing, every reproducer kept in fuzz/regressions/<target>/ is replayed (those of
# fixed bugs must pass; fuzz/regressions/<target>/open/ holds inputs of known, still open bugs
# and is not replayed). Crash artifacts go to $FUZZ_BUILD/artifacts/, new corpus entries to
# $FUZZ_BUILD/corpus/<target>/ (fuzz/corpus/ holds the seeds and is read only). Exits non-zero
# when any target crashed.
set -uo pipefail
cd "$(dirname "$0")/.."
SECS=${FUZZ_SECONDS:-30}
B=${FUZZ_BUILD:-build-fuzz}
JOBS=${JOBS:-$(nproc)}
TARGETS=${FUZZ_TARGETS:-"fuzz_ab_reader fuzz_stream fuzz_exact fuzz_table fuzz_cli fuzz_datapath fuzz_npy"}

CC=${CC:-clang-15} CXX=${CXX:-clang++-15} cmake -S . -B "$B" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMATCORE_FUZZ=ON -DMATCORE_TESTS=OFF -DMATCORE_CORE_ONLY=ON \
  -DMATCORE_LTO=OFF -DMATCORE_MPI=OFF >/dev/null || exit 1
cmake --build "$B" --target fuzz_all -j "$JOBS" || exit 1

mkdir -p "$B/artifacts" "$B/logs"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=()
for t in $TARGETS; do
  exe="$B/fuzz/$t"
  regs=()
  for f in fuzz/regressions/$t/*; do [ -f "$f" ] && regs+=("$f"); done
  if [ ${#regs[@]} -gt 0 ]; then
    echo "== $t: replaying ${#regs[@]} regression input(s)"
    if ! "$exe" "${regs[@]}" >"$B/logs/$t.regressions.log" 2>&1; then
      echo "!! $t: a regression input crashes again (log: $B/logs/$t.regressions.log)"
      failed+=("$t(regression)")
      continue
    fi
  fi
  mkdir -p "$B/corpus/$t"
  args=(-max_total_time="$SECS" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1
        -artifact_prefix="$B/artifacts/$t-")
  [ -f "fuzz/dict/$t.dict" ] && args+=(-dict="fuzz/dict/$t.dict")
  echo "== $t: fuzzing for $SECS s (log: $B/logs/$t.log)"
  if "$exe" "${args[@]}" "$B/corpus/$t" "fuzz/corpus/$t" >"$B/logs/$t.log" 2>&1; then
    grep -E '^stat::number_of_executed_units|^#[0-9]+.*DONE' "$B/logs/$t.log" | tail -2
  else
    echo "!! $t crashed; artifacts:"; ls "$B/artifacts" | grep "^$t-" || true
    grep -E 'ERROR|SUMMARY|terminate|what\(\)' "$B/logs/$t.log" | head -5
    failed+=("$t")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]}"
  exit 1
fi
echo "fuzz: no crash in $TARGETS ($SECS s each)"
