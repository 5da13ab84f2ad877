#!/usr/bin/env bash
# MPI scaling on one machine (docs/scale.md): 1 rank x 1 thread against 2 ranks x 1 thread, and
# one process with 1 and 2 threads. Usage: bench/scale.sh [BUILD_DIR] (N=10000000 by default)
set -euo pipefail
B=${1:-build}
M=$(cd "$B" && pwd)/matcore
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT; cd "$W"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
N=${N:-10000000}
t() { local t0=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; local t1=$(date +%s.%N); python3 -c "print(f'{$t1-$t0:.2f}')"; }
best() { local b=999; for i in 1 2 3; do v=$("$@"); b=$(python3 -c "print(min($b,$v))"); done; echo $b; }
echo "| command | 1 process, 1 thread | mpirun -n 1, 1 thread | mpirun -n 2, 1 thread each | 1 process, 2 threads |"
echo "|---|---|---|---|---|"
s1=$(best t $M sample --arch mi300x --type fp16 --n $N --out s --threads 1)
m1=$(best t mpirun -n 1 $M sample --arch mi300x --type fp16 --n $N --out s --threads 1)
m2=$(best t mpirun -n 2 $M sample --arch mi300x --type fp16 --n $N --out s --threads 1)
p2=$(best t $M sample --arch mi300x --type fp16 --n $N --out s --threads 2)
echo "| sample 10^7 (fp16, k=16) | $s1 s | $m1 s | $m2 s | $p2 s |"
$M run --arch mi300x --type fp16 --a s/a.txt --b s/b.txt --c s/c.txt --d s/d.txt >/dev/null 2>&1
V="validate --arch mi300x --type fp16 --a s/a.txt --b s/b.txt --c s/c.txt --d s/d.txt"
s1=$(best t $M $V --threads 1); m1=$(best t mpirun -n 1 $M $V --threads 1); m2=$(best t mpirun -n 2 $M $V --threads 1); p2=$(best t $M $V --threads 2)
echo "| validate 10^7 (mi300x fp16) | $s1 s | $m1 s | $m2 s | $p2 s |"
R="run --arch h100 --type fp16 --a s/a.txt --b s/b.txt --c s/c.txt --d s/d2.txt"
s1=$(best t $M $R --threads 1); m1=$(best t mpirun -n 1 $M $R --threads 1); m2=$(best t mpirun -n 2 $M $R --threads 1); p2=$(best t $M $R --threads 2)
echo "| run 10^7 (h100 fp16, writes d) | $s1 s | $m1 s | $m2 s | $p2 s |"
E="explore --dp mi300x/fp16 --dp h100/fp16 --k 16,256 --n 200000 --no-monotonic"
s1=$(best t $M $E --threads 1); m1=$(best t mpirun -n 1 $M $E --threads 1); m2=$(best t mpirun -n 2 $M $E --threads 1); p2=$(best t $M $E --threads 2)
echo "| explore 2 datapaths x k 16,256 x 2·10^5 | $s1 s | $m1 s | $m2 s | $p2 s |"
$M validate --arch mi300x --type fp16 --a s/a.txt --b s/b.txt --c s/c.txt --d s/d.txt | tail -1
du -sb s | cut -f1
