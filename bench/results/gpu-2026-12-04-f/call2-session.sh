#!/usr/bin/env bash
# Session 2026-12-04 (thirteenth), call 2: the long-rows kernel with one lane per row (K = 1) reading
# its records from global memory (-DIBP_LONG_DIRECT=1, tiles of IBP_LONG_DIRECT_ROWS rows, no tile
# buffer) at 3 and 4 blocks per SM, against the pairs kernel and the staged K = 1 kernel (122 rows).
set -u
[ -f .devrun/data/cora-features-f32.npy.gz ] && gunzip -f .devrun/data/cora-features-f32.npy.gz
R=${OUT:-/tmp/out}; rm -rf /tmp/ab; mkdir -p /tmp/ab "$R"
D="-DIBP_LONG_LANE_BYTES=4096 -DIBP_LONG_DIRECT=1"
for i in 1 2; do
    IBP_LEAN_LONG=0 OUT=$R IBP_BENCH_TIMEOUT=80 bash tools/gpu-ab.sh pairs$i "" .devrun/ibp-gpu-bench --only fashion | tee -a /tmp/ab/summary.txt
    IBP_TILE_BYTES=96000 OUT=$R IBP_BENCH_TIMEOUT=80 bash tools/gpu-ab.sh k1t122_$i "-DIBP_LONG_LANE_BYTES=4096" .devrun/ibp-gpu-bench --only fashion | tee -a /tmp/ab/summary.txt
    IBP_LONG_DIRECT_ROWS=256 OUT=$R IBP_BENCH_TIMEOUT=80 bash tools/gpu-ab.sh d256b3_$i "$D" .devrun/ibp-gpu-bench --only fashion | tee -a /tmp/ab/summary.txt
    IBP_LONG_DIRECT_ROWS=256 OUT=$R IBP_BENCH_TIMEOUT=80 bash tools/gpu-ab.sh d256b4_$i "$D -DIBP_LEAN_LONG_MIN_BLOCKS=4" .devrun/ibp-gpu-bench --only fashion | tee -a /tmp/ab/summary.txt
    IBP_LONG_DIRECT_ROWS=512 OUT=$R IBP_BENCH_TIMEOUT=80 bash tools/gpu-ab.sh d512b3_$i "$D" .devrun/ibp-gpu-bench --only fashion | tee -a /tmp/ab/summary.txt
done
args=""; for i in 1 2; do for v in pairs k1t122_ d256b3_ d256b4_ d512b3_; do args="$args ${v%_}.$i=/tmp/ab/$v$i/bench.log"; done; done
python3 tools/ab_compare.py $args --what decode > /tmp/ab/compare.txt 2>&1
cat /tmp/ab/compare.txt
grep -h "kernel ibp_decode_tiles_lean_long\|rror\|ismatch\|panick" /tmp/ab/*/bench.log /tmp/ab/*.run.log | sort | uniq -c | head -20
tar czf "$R/ab.tgz" -C /tmp ab
