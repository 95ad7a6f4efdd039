#!/usr/bin/env bash
# Session 2026-12-04 (thirteenth), call 3: long rows a lane per row through lane_tile_rows (one
# position per warp, a three-word window loaded a word ahead; IBP_LONG_LANE_ROWS=1) at tiles of 122
# and 256 rows, 3 and 2 blocks' registers, against the pairs kernel and the K = 1 slices of call 1.
set -u
[ -f .devrun/data/cora-features-f32.npy.gz ] && gunzip -f .devrun/data/cora-features-f32.npy.gz
R=${OUT:-/tmp/out}; rm -rf /tmp/ab; mkdir -p /tmp/ab "$R"
for i in 1 2; do
    IBP_LEAN_LONG=0 OUT=$R IBP_BENCH_TIMEOUT=80 bash tools/gpu-ab.sh pairs$i "" .devrun/ibp-gpu-bench --only fashion | tee -a /tmp/ab/summary.txt
    IBP_TILE_BYTES=96000 OUT=$R IBP_BENCH_TIMEOUT=80 bash tools/gpu-ab.sh slice122_$i "-DIBP_LONG_LANE_ROWS=0 -DIBP_LONG_LANE_BYTES=4096" .devrun/ibp-gpu-bench --only fashion | tee -a /tmp/ab/summary.txt
    IBP_TILE_BYTES=96000 OUT=$R IBP_BENCH_TIMEOUT=80 bash tools/gpu-ab.sh lane122_$i "" .devrun/ibp-gpu-bench --only fashion | tee -a /tmp/ab/summary.txt
    IBP_TILE_BYTES=96000 OUT=$R IBP_BENCH_TIMEOUT=80 bash tools/gpu-ab.sh lane122r_$i "-DIBP_LEAN_LONG_MIN_BLOCKS=2" .devrun/ibp-gpu-bench --only fashion | tee -a /tmp/ab/summary.txt
    IBP_TILE_BYTES=201000 OUT=$R IBP_BENCH_TIMEOUT=80 bash tools/gpu-ab.sh lane256_$i "" .devrun/ibp-gpu-bench --only fashion | tee -a /tmp/ab/summary.txt
done
args=""; for i in 1 2; do for v in pairs slice122_ lane122_ lane122r_ lane256_; do args="$args ${v%_}.$i=/tmp/ab/$v$i/bench.log"; done; done
python3 tools/ab_compare.py $args --what decode > /tmp/ab/compare.txt 2>&1
cat /tmp/ab/compare.txt
grep -h "kernel ibp_decode_tiles_lean_long\|rror\|differs\|panick" /tmp/ab/*/bench.log /tmp/ab/*.run.log | sort | uniq -c | head -20
tar czf "$R/ab.tgz" -C /tmp ab
