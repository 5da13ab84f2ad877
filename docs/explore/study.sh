#!/bin/sh
# The study of docs/explore.md: regenerates docs/explore/*.csv, *.txt and docs/img/explore-*.png.
# Run from the repository root after `make build` (about 5 minutes on 2 cores; the cost sweep
# needs yosys). MATCORE=path/to/matcore to use another build.
set -eu
M=${MATCORE:-build/matcore}
out=docs/explore
img=docs/img

# 1. error vs k for every preset family, normal inputs
$M explore --dist normal --k 16,64,256,1024,4096,16384 --n 4000 \
  --dp mi100/fp16 --dp mi250/fp16 --dp mi300x/fp16 --dp mi300x/bf16 --dp mi300x/e4m3fnuz \
  --dp v100/fp16 --dp a100/fp16 --dp h100/fp16 --dp h100/bf16 --dp h100/e4m3 --dp b200/fp16 \
  --csv $out/families.csv --png $img/explore-families > $out/families.txt

# 2. the drift of the NVIDIA datapaths toward zero at large k: the rounding of each group's
#    result (out_round) against the truncation of the aligned products (prod_align)
$M explore --dist normal --k 16,256,4096,16384 --n 4000 --dp h100/fp16 \
  --sweep out_round=rtz,rne --sweep prod_align=truncate,rne \
  --csv $out/drift.csv --png $img/explore-drift > $out/drift.txt
$M explore --dist normal --k 4096 --n 4000 --dp h100/fp16 --sweep frac_bits=25,28,32,40 \
  --csv $out/drift-f.csv > $out/drift-f.txt

# 3. alignment bits F of MI300X fp16, with the cost of each design (yosys, matcore cost)
$M explore --dist normal --k 16,256,4096 --n 4000 --dp mi300x/fp16 --sweep frac_bits=20..32:2 --cost \
  --csv $out/align.csv --png $img/explore-align > $out/align.txt
