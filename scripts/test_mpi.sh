#!/usr/bin/env bash
# The MPI campaigns (docs/scale.md) against one process: `mpirun -n 2 matcore sample|run|validate|
# explore` must give byte-identical files and output. Run by ctest (mpi.campaigns) when matcore
# is built with MPI. Usage: scripts/test_mpi.sh MATCORE MPIRUN [RANKS]
set -euo pipefail
M=$1
MPIRUN=$2
R=${3:-2}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cd "$W"
# CI runs as root; two ranks on a two-core machine
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mp() { "$MPIRUN" -n "$R" "$M" "$@"; }
same() { cmp "$1" "$2" || { echo "FAIL: $1 and $2 differ"; exit 1; }; }
# an odd sample count: the ranks' shares differ in size
N=20011
for st in expmant bits; do
  "$M" sample --arch mi300x --type fp16 --n $N --strategy $st --out one_$st >/dev/null
  mp sample --arch mi300x --type fp16 --n $N --strategy $st --out mpi_$st >/dev/null
  for f in a b c; do same one_$st/$f.txt mpi_$st/$f.txt; done
done
"$M" sample --arch h100 --type e4m3 --n $N --out one_f8 >/dev/null
mp sample --arch h100 --type e4m3 --n $N --out mpi_f8 >/dev/null
for f in a b c; do same one_f8/$f.txt mpi_f8/$f.txt; done
# run: the d file; validate: the report (counts, the first mismatches, the bound) and the exit
# status, for a mismatching model (h100 against mi300x's d) and a matching one. Text files and
# the binary form (.npy). run_validate DIR EXT TAG
run_validate() {
  local in=(--a "$1/a.$2" --b "$1/b.$2" --c "$1/c.$2")
  "$M" run --arch mi300x --type fp16 "${in[@]}" --d "$3_d1.$2" 2>/dev/null
  mp run --arch mi300x --type fp16 "${in[@]}" --d "$3_d2.$2" 2>/dev/null
  same "$3_d1.$2" "$3_d2.$2"
  for arch in mi300x h100; do
    rc1=0; rc2=0
    "$M" validate --arch $arch --type fp16 "${in[@]}" --d "$3_d1.$2" --show 4 > "$3_v1_$arch.txt" || rc1=$?
    mp validate --arch $arch --type fp16 "${in[@]}" --d "$3_d1.$2" --show 4 > "$3_v2_$arch.txt" 2>/dev/null || rc2=$?
    same "$3_v1_$arch.txt" "$3_v2_$arch.txt"
    [ "$rc1" = "$rc2" ] || { echo "FAIL: $3: exit status $rc1 (one process) vs $rc2 (mpirun)"; exit 1; }
  done
  grep -q "mismatches=0 " "$3_v1_mi300x.txt" || { echo "FAIL: $3: mi300x validate"; cat "$3_v1_mi300x.txt"; exit 1; }
  grep -q "^mismatch sample" "$3_v1_h100.txt" || { echo "FAIL: $3: h100 validate found no mismatch"; exit 1; }
}
run_validate one_expmant txt text
cp text_d1.txt d1.txt
"$M" sample --arch mi300x --type fp16 --n $N --npy --out one_npy >/dev/null
run_validate one_npy npy npy
# a file of irregular lines (comment in the middle): rank 0 streams it alone, same report
{ head -3 one_expmant/a.txt; echo "# a comment"; tail -n +4 one_expmant/a.txt; } > a_irregular.txt
rc1=0; rc2=0
"$M" validate --arch h100 --type fp16 --a a_irregular.txt --b one_expmant/b.txt --c one_expmant/c.txt --d d1.txt --show 2 > g1.txt 2>&1 || rc1=$?
mp validate --arch h100 --type fp16 --a a_irregular.txt --b one_expmant/b.txt --c one_expmant/c.txt --d d1.txt --show 2 > g2.txt 2>/dev/null || rc2=$?
[ "$rc1" = "$rc2" ] || { echo "FAIL: irregular file: exit status $rc1 vs $rc2"; exit 1; }
grep -v '^note' g1.txt > g1s.txt || true
same g1s.txt g2.txt
# block-scaled .npy (nvfp4: sa.npy, sb.npy beside a.npy): the mismatch report keeps the scales
"$M" sample --arch b200 --type nvfp4 --n 2001 --npy --out one_fp4 >/dev/null
fp4=(--a one_fp4/a.npy --b one_fp4/b.npy --c one_fp4/c.npy --d f1.npy)
"$M" run --arch b200 --type nvfp4 "${fp4[@]:0:6}" --d f1.npy 2>/dev/null
rc1=0; rc2=0
"$M" validate --arch b200 --type nvfp4 --set frac_bits=12 "${fp4[@]}" --show 3 > s1.txt || rc1=$?
mp validate --arch b200 --type nvfp4 --set frac_bits=12 "${fp4[@]}" --show 3 > s2.txt 2>/dev/null || rc2=$?
same s1.txt s2.txt
[ "$rc1" = 1 ] && [ "$rc2" = 1 ] || { echo "FAIL: nvfp4 .npy: exit status $rc1 / $rc2 (1 expected)"; exit 1; }
grep -q "sa:" s1.txt || { echo "FAIL: nvfp4 .npy: the mismatch report shows no scales"; cat s1.txt; exit 1; }
# explore: the table and the CSV
"$M" explore --dp mi300x/fp16 --dp h100/e4m3 --k 16,100 --n 3001 --csv e1.csv > x1.txt
mp explore --dp mi300x/fp16 --dp h100/e4m3 --k 16,100 --n 3001 --csv e2.csv > x2.txt
same e1.csv e2.csv
sed 's/e[12]\.csv//' x1.txt > x1s.txt
sed 's/e[12]\.csv//' x2.txt > x2s.txt
same x1s.txt x2s.txt
# a bad input: exit status 2 under mpirun too
rc=0
mp validate --arch h100 --type fp16 --a missing.txt --b one_expmant/b.txt --c one_expmant/c.txt --d d1.txt >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || { echo "FAIL: a missing file gave exit status $rc under mpirun"; exit 1; }
echo "mpi: sample (3 sets), run, validate (2 models + an irregular file), the same on .npy arrays, explore: $R ranks = 1 process, byte for byte"
