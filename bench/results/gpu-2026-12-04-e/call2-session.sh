#!/usr/bin/env bash
# Session 2026-12-04 (twelfth), call 2: the long-rows kernel's slices against the rows per tile:
# tiles of 64 rows (IBP_TILE_BYTES=50224) so that K = 4 (256 B per lane) and K = 8 (128 B) keep
# every warp busy, against the pairs kernel, twice.
set -u
R=${OUT:-/tmp/out}; rm -rf /tmp/ab; mkdir -p /tmp/ab "$R"
for i in 1 2; do
    IBP_LEAN_LONG=0 OUT=$R IBP_BENCH_TIMEOUT=60 bash tools/gpu-ab.sh pairs$i "" .devrun/ibp-gpu-bench --only fashion | tee -a /tmp/ab/summary.txt
    for lb in 128 256 512; do
        IBP_TILE_BYTES=50224 OUT=$R IBP_BENCH_TIMEOUT=70 bash tools/gpu-ab.sh t64_${lb}_$i "-DIBP_LONG_LANE_BYTES=$lb" .devrun/ibp-gpu-bench --only fashion | tee -a /tmp/ab/summary.txt
    done
done
args=""; for i in 1 2; do args="$args pairs$i=/tmp/ab/pairs$i/bench.log"; for lb in 128 256 512; do args="$args t64.$lb.$i=/tmp/ab/t64_${lb}_$i/bench.log"; done; done
python3 tools/ab_compare.py $args --what decode > /tmp/ab/compare.txt 2>&1
cat /tmp/ab/summary.txt /tmp/ab/compare.txt
grep -h "tile\|rows per" /tmp/ab/t64_256_2/bench.log | head -5
tar czf "$R/ab.tgz" -C /tmp ab
