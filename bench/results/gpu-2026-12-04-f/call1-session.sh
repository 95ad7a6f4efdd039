#!/usr/bin/env bash
# Session 2026-12-04 (thirteenth), call 1: the long-rows kernel of entry 61 with one lane per row
# (K = 1, -DIBP_LONG_LANE_BYTES=4096) on Fashion-MNIST, at tiles of ~73 rows (default), ~122 rows and
# 256 rows (IBP_TILE_BYTES; TILE_BYTES_MAX raised to 200 KiB for this run), against the pairs kernel.
set -u
[ -f .devrun/data/cora-features-f32.npy.gz ] && gunzip -f .devrun/data/cora-features-f32.npy.gz
R=${OUT:-/tmp/out}; rm -rf /tmp/ab; mkdir -p /tmp/ab "$R"
for i in 1 2; do
    IBP_LEAN_LONG=0 OUT=$R IBP_BENCH_TIMEOUT=70 bash tools/gpu-ab.sh pairs$i "" .devrun/ibp-gpu-bench --only fashion | tee -a /tmp/ab/summary.txt
    OUT=$R IBP_BENCH_TIMEOUT=70 bash tools/gpu-ab.sh k1t73_$i "-DIBP_LONG_LANE_BYTES=4096" .devrun/ibp-gpu-bench --only fashion | tee -a /tmp/ab/summary.txt
    IBP_TILE_BYTES=96000 OUT=$R IBP_BENCH_TIMEOUT=70 bash tools/gpu-ab.sh k1t122_$i "-DIBP_LONG_LANE_BYTES=4096" .devrun/ibp-gpu-bench --only fashion | tee -a /tmp/ab/summary.txt
    IBP_TILE_BYTES=201000 OUT=$R IBP_BENCH_TIMEOUT=70 bash tools/gpu-ab.sh k1t256_$i "-DIBP_LONG_LANE_BYTES=4096" .devrun/ibp-gpu-bench --only fashion | tee -a /tmp/ab/summary.txt
    IBP_TILE_BYTES=201000 OUT=$R IBP_BENCH_TIMEOUT=70 bash tools/gpu-ab.sh k2t256_$i "-DIBP_LONG_LANE_BYTES=512" .devrun/ibp-gpu-bench --only fashion | tee -a /tmp/ab/summary.txt
done
args=""; for i in 1 2; do for v in pairs k1t73_ k1t122_ k1t256_ k2t256_; do args="$args ${v%_}.$i=/tmp/ab/$v$i/bench.log"; done; done
python3 tools/ab_compare.py $args --what decode > /tmp/ab/compare.txt 2>&1
cat /tmp/ab/summary.txt /tmp/ab/compare.txt
grep -h "decode\|Error\|error\|mismatch" /tmp/ab/*/bench.log | head -20
tar czf "$R/ab.tgz" -C /tmp ab
