#!/usr/bin/env bash
# ctest driver for hip_ref (hip_ref/CMakeLists.txt). Modes:
#   pipeline MATCORE COLLECT          hip_ref/collect end to end with stand-in devices: sample ->
#                                     device -> validate, on a CDNA3 fp8 MFMA and NVIDIA
#                                     instructions (2000 samples each), a device that corrupts
#                                     one sample, a device without a GPU, and usage errors
#   program VENDOR BIN SKIP           a collector program: --list, --self-test (exit 0 with a GPU,
#                                     3 without), bad usage (exit 2); skipped (77) when not built
#   codegen-amd DEF OBJDUMP SKIP ARCH=OBJ...   every MFMA of each target's family is in its code
#   codegen-nv DEF SKIP ARCH=PTX...            every instruction each target has is in its PTX
# Exit 77 = skipped (the reason is printed).
set -uo pipefail

fail=0
check() {  # check DESCRIPTION CONDITION...
  local what=$1; shift
  if "$@"; then echo "ok   $what"; else echo "FAIL $what"; fail=1; fi
}
skip() { echo "SKIPPED: $*"; exit 77; }

mode=${1:?mode}; shift
case "$mode" in
# ------------------------------------------------------------------------------ pipeline
pipeline)
  matcore=${1:?matcore}; collect=${2:?collect}
  tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
  run() {  # run NAME ARGS...: collect's stdout, stderr and status into $tmp/NAME.{out,err,rc}
    local nm=$1; shift
    "$collect" --matcore "$matcore" "$@" > "$tmp/$nm.out" 2> "$tmp/$nm.err"
    echo $? > "$tmp/$nm.rc"
  }
  rc() { cat "$tmp/$1.rc"; }
  out() { cat "$tmp/$1.out"; }

  # 1. CDNA3 fp8 (FNUZ, mixed e4m3/e5m2) MFMA, matcore run as the device.
  run fp8 --arch mi300x --instr v_mfma_f32_16x16x32_fp8_bf8 --n 2000 --stand-in --dir "$tmp/fp8"
  check "mi300x fp8 MFMA: 2000 samples, 0 mismatches" \
    test "$(rc fp8)" = 0 -a "$(out fp8 | cut -d' ' -f1-2)" = "samples=2000 mismatches=0"
  check "d.txt carries a provenance header" grep -q '^# matcore hip_ref/collect stand-in:' "$tmp/fp8/d.txt"
  check "run folder complete" test -s "$tmp/fp8/a.txt" -a -s "$tmp/fp8/verdict.txt" -a -s "$tmp/fp8/run.txt"
  check "K = the instruction's k (32)" test "$(grep -v '^#' "$tmp/fp8/a.txt" | head -1 | wc -w)" = 32

  # 2. NVIDIA fp8 mma.sync with f16 accumulators (variant mma.sync, c rounded, d widened).
  run nv16 --arch h100 --instr mma.m16n8k32.f32.e4m3.e5m2 --out fp16 --n 2000 --stand-in --dir "$tmp/nv16"
  check "h100 mma.m16n8k32 e4m3.e5m2, f16 out: 2000 samples, 0 mismatches" \
    test "$(rc nv16)" = 0 -a "$(out nv16 | cut -d' ' -f1-2)" = "samples=2000 mismatches=0"
  check "f16 form named with the .f16. dtype" grep -q 'instr=mma.m16n8k32.f16.e4m3.e5m2' "$tmp/nv16/d.txt"

  # 3. NVIDIA wgmma bf16 (fp32 out).
  run wg --arch h100 --instr wgmma.m64n256k16.f32.bf16 --n 2000 --stand-in --dir "$tmp/wg"
  check "h100 wgmma bf16: 2000 samples, 0 mismatches" \
    test "$(rc wg)" = 0 -a "$(out wg | cut -d' ' -f1-2)" = "samples=2000 mismatches=0"

  # 4. --inputs and --device-cmd: a "device" that gets sample 5 wrong is caught.
  cat > "$tmp/bad_device" <<EOF
#!/usr/bin/env bash
# the collectors' command line: --instr NAME --a A --b B --c C --d D
set -e
while [ \$# -gt 0 ]; do case "\$1" in --a) a=\$2;; --b) b=\$2;; --c) c=\$2;; --d) d=\$2;; esac; shift 2; done
"$matcore" run --arch mi300x --type e4m3fnuz,e5m2fnuz --a "\$a" --b "\$b" --c "\$c" --d "\$d.tmp" 2>/dev/null
{ echo "# fake device"; awk 'NR == 5 { \$0 = (\$0 == "00000000" ? "3f800000" : "00000000") } { print }' "\$d.tmp"; } > "\$d"
rm -f "\$d.tmp"
EOF
  chmod +x "$tmp/bad_device"
  run bad --arch mi300x --instr v_mfma_f32_16x16x32_fp8_bf8 --inputs "$tmp/fp8" --device-cmd "$tmp/bad_device" --dir "$tmp/bad"
  check "a wrong d is caught: exit 1, 1 mismatch" \
    test "$(rc bad)" = 1 -a "$(out bad | cut -d' ' -f1-2)" = "samples=2000 mismatches=1"
  check "--inputs reuses the given a/b/c" cmp -s "$tmp/fp8/a.txt" "$tmp/bad/a.txt"

  # 5. A device program on a machine without its GPU: exit 3, said clearly.
  printf '#!/bin/sh\necho "fake: no AMD GPU" >&2\nexit 3\n' > "$tmp/no_gpu"
  chmod +x "$tmp/no_gpu"
  run nogpu --arch mi300x --instr v_mfma_f32_16x16x32_fp8_bf8 --n 10 --device-cmd "$tmp/no_gpu" --dir "$tmp/nogpu"
  check "no GPU: exit 3 with a message" test "$(rc nogpu)" = 3 -a -n "$(grep 'no GPU' "$tmp/nogpu.err")"

  # 6. Block scales reach the device: NVFP4 (rtxpro6000, UE4M3 per 16) through a "device" that
  # insists on --sa/--sb (the collectors' block-scaled command line) and runs the model on them.
  cat > "$tmp/scaled_device" <<EOF
#!/usr/bin/env bash
set -e
while [ \$# -gt 0 ]; do case "\$1" in --a) a=\$2;; --b) b=\$2;; --c) c=\$2;; --d) d=\$2;; --sa) sa=\$2;; --sb) sb=\$2;; esac; shift 2; done
[ -n "\$sa" ] && [ -n "\$sb" ] || { echo "fake: no --sa/--sb" >&2; exit 2; }
"$matcore" run --arch rtxpro6000 --type nvfp4 --a "\$a" --b "\$b" --c "\$c" --sa "\$sa" --sb "\$sb" --d "\$d.tmp" 2>/dev/null
{ echo "# fake device"; cat "\$d.tmp"; } > "\$d"
rm -f "\$d.tmp"
EOF
  chmod +x "$tmp/scaled_device"
  run nvfp4 --arch rtxpro6000 --instr mma.m16n8k64.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.ue4m3 \
      --n 500 --device-cmd "$tmp/scaled_device" --dir "$tmp/nvfp4"
  check "nvfp4: scale files sampled and passed to the device, 0 mismatches" \
    test "$(rc nvfp4)" = 0 -a "$(out nvfp4 | cut -d' ' -f1-2)" = "samples=500 mismatches=0" -a -s "$tmp/nvfp4/sa.txt"

  # 7. Usage errors: exit 2 with a message naming the problem.
  run e1 --arch mi300x --instr v_mfma_nonsense --n 10 --stand-in --dir "$tmp/e1"
  check "unknown instruction: exit 2" test "$(rc e1)" = 2 -a -n "$(grep 'not an instruction of mi300x' "$tmp/e1.err")"
  run e2 --arch mi250 --instr v_mfma_f32_16x16x32_fp8_bf8 --n 10 --stand-in --dir "$tmp/e2"
  check "instruction not on the preset: exit 2" test "$(rc e2)" = 2
  run e3 --arch mi300x --instr v_mfma_f32_16x16x16f16 --out fp16 --n 10 --stand-in --dir "$tmp/e3"
  check "--out fp16 on AMD: exit 2" test "$(rc e3)" = 2
  run e4 --arch mi300x --instr v_mfma_f32_16x16x16f16 --inputs "$tmp/fp8" --stand-in --dir "$tmp/e4"
  check "inputs of the wrong K: exit 2" test "$(rc e4)" = 2
  ;;

# ------------------------------------------------------------------------------- program
program)
  vendor=${1:?vendor}; bin=${2-}; why=${3-}
  [ -n "$bin" ] || skip "the $vendor collector was not built: ${why:-unknown reason}"
  [ -x "$bin" ] || { echo "FAIL $bin missing (build the ALL target first)"; exit 1; }
  list=$("$bin" --list); st=$?
  check "--list works without a GPU" test $st = 0 -a "$(printf '%s\n' "$list" | wc -l)" -gt 10
  log=$(mktemp)
  "$bin" --self-test > "$log" 2>&1; st=$?
  if [ $st = 3 ]; then
    check "no $vendor GPU here: exit 3, said clearly" grep -q "no $vendor GPU" "$log"
  else
    cat "$log"
    check "self-test on this machine's GPU passes" test $st = 0
  fi
  rm -f "$log"
  "$bin" --instr no_such_instruction --a a --b b --c c --d d > /dev/null 2>&1; st=$?
  check "unknown instruction: exit 2" test $st = 2
  "$bin" --bogus > /dev/null 2>&1; st=$?
  check "unknown option: exit 2" test $st = 2
  msg=$("$bin" --instr x --a --b b 2>&1); st=$?
  check "an option as a value: exit 2, said clearly" test $st = 2 -a -n "$(printf '%s' "$msg" | grep 'needs a value')"
  msg=$("$bin" --instr x --a a --b b --c c --d a 2>&1); st=$?
  check "an output that is also an input: exit 2" test $st = 2 -a -n "$(printf '%s' "$msg" | grep 'is also an input')"
  "$bin" --help > /dev/null 2>&1; st=$?
  check "--help: exit 0" test $st = 0
  ;;

# --------------------------------------------------------------------------- codegen-amd
codegen-amd)
  def=${1:?def}; objdump=${2-}; why=${3-}; shift 3
  [ -z "$why" ] || skip "AMD code-generation check: $why"
  [ $# -gt 0 ] || skip "AMD code-generation check: no device code built"
  [ -n "$objdump" ] || skip "AMD code-generation check: llvm-objdump not found"
  for pair in "$@"; do
    arch=${pair%%=*}; obj=${pair#*=}
    case "$arch" in
      gfx908) fam=cdna1 ;; gfx90a) fam=cdna2 ;; gfx940|gfx941|gfx942) fam=cdna3 ;;
      *) echo "note: $arch has no matcore family; not checked"; continue ;;
    esac
    want=$(grep '^MFMA(' "$def" | grep -c "$fam")
    got=$("$objdump" -d --mcpu="$arch" "$obj" | grep -oE 'v_mfma_[a-z0-9_]+' | sort -u | wc -l)
    check "$arch: $got distinct v_mfma in the device code, $want instructions on $fam" test "$got" = "$want"
  done
  ;;

# ---------------------------------------------------------------------------- codegen-nv
codegen-nv)
  def=${1:?def}; why=${2-}; shift 2
  [ -z "$why" ] || skip "NVIDIA code-generation check: $why"
  [ $# -gt 0 ] || skip "NVIDIA code-generation check: no PTX built"
  for pair in "$@"; do
    arch=${pair%%=*}; ptx=${pair#*=}
    num=${arch%%[a-z]*}            # 90a -> 90
    cc=$((num * 10))
    # min_arch >= 1200: the kind:: forms, on the arch-specific sm_120a / sm_121a only
    feat=0; case "$arch" in 120a|121a) feat=1 ;; esac
    mma=$(awk -F, -v cc="$cc" -v feat="$feat" '/^NV_MMA\(/ { gsub(/ /, "", $7); v = $7 + 0; if (v <= cc && (v < 1200 || feat)) n++ } END { print n + 0 }' "$def")
    [ "$feat" = 1 ] && mma=$((mma + $(grep -c '^NV_MMA_BS(' "$def")))
    # PTX ISA < 9.1 (CUDA < 13.1): no mma.sync kind::mxf4nvf4 with ue8m0 per 16 (scale_vec::4X)
    ver=$(awk '/^\.version/ { print $2; exit }' "$ptx")
    if [ "$feat" = 1 ] && awk -v v="$ver" 'BEGIN { split(v, p, "."); exit !(p[1] < 9 || (p[1] == 9 && p[2] < 1)) }'; then
      mma=$((mma - $(grep -c '^NV_MMA_BS(.*scale_vec::4X.f32.e2m1.e2m1.ue8m0' "$def")))
    fi
    wg=0; tc=0
    [ "$arch" = 90a ] && wg=$(grep -c '^NV_WGMMA(' "$def")
    case "$arch" in 100a|103a|100f|103f) tc=$(grep -c '^NV_TC05\(_BS\)\?(' "$def") ;; esac
    check "sm_$arch: mma.sync $(grep -c 'mma.sync.aligned' "$ptx")/$mma" test "$(grep -c 'mma.sync.aligned' "$ptx")" = "$mma"
    check "sm_$arch: wgmma $(grep -c 'wgmma.mma_async' "$ptx")/$wg" test "$(grep -c 'wgmma.mma_async' "$ptx")" = "$wg"
    check "sm_$arch: tcgen05.mma $(grep -c 'tcgen05.mma.cta_group' "$ptx")/$tc" test "$(grep -c 'tcgen05.mma.cta_group' "$ptx")" = "$tc"
  done
  ;;
*) echo "test_collect.sh: unknown mode $mode" >&2; exit 2 ;;
esac
exit $fail
