#!/usr/bin/env bash
# The main job: every public hardware result and every paper test vector, through the CLI.
# Usage: scripts/reproduce.sh [path/to/matcore] [path/to/shared]
set -uo pipefail
M=${1:-build/matcore}
S=${2:-../shared}
H="$S/hwdata/nvidia"
here=$(cd "$(dirname "$0")/.." && pwd)
fail=0
printf '%-8s %-5s %-5s %-8s %-9s %s\n' GPU input out preset options result
row() {  # gpu folder type out arch [extra...]
  local gpu=$1 fmt=$2 type=$3 out=$4 arch=$5; shift 5
  local d="$H/$gpu/$fmt"
  local r
  r=$("$M" validate --arch "$arch" --type "$type" --out "$out" "$@" --a "$d/a_${gpu}_$fmt.txt" \
      --b "$d/b_${gpu}_$fmt.txt" --c "$d/c_${gpu}_fp32.txt" --d "$d/d_${gpu}_$out.txt" --show 0 | tail -1)
  local st=$?
  [ "$st" -eq 0 ] || fail=1
  printf '%-8s %-5s %-5s %-8s %-9s %s\n' "$gpu" "$fmt" "$out" "$arch" "${*:-}" "$r"
}
row V100 fp16 fp16 fp32 v100
row V100 fp16 fp16 fp16 v100
for g in A100:a100 Ada:l40s H100:h100 B200:b200; do
  gpu=${g%:*}; arch=${g#*:}
  row "$gpu" fp16 fp16 fp32 "$arch"
  row "$gpu" fp16 fp16 fp16 "$arch"
  row "$gpu" bf16 bf16 fp32 "$arch"
  row "$gpu" tf32 tf32 fp32 "$arch"
done
for g in Ada:l40s H100:h100 B200:b200; do
  gpu=${g%:*}; arch=${g#*:}
  for f in E4M3 E5M2; do
    t=$(echo "$f" | tr 'A-Z' 'a-z')
    if [ "$gpu" = H100 ]; then row "$gpu" "$f" "$t" fp32 "$arch" --zero-c; else row "$gpu" "$f" "$t" fp32 "$arch"; fi
    row "$gpu" "$f" "$t" fp16 "$arch"
  done
done
echo
echo "Paper test vectors (sections 4.1-4.3), every CDNA preset:"
for t in "$here"/tb/vectors/paper_cdna*.pvt; do
  printf '  %-18s %s\n' "$(basename "$t")" "$("$M" check-table "$t" | tail -1)"
done
exit $fail
