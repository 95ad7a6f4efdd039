#!/usr/bin/env bash
# Session 2026-12-04 (fourteenth), call 5: larger tile-kernel grids (IBP_TILE_MAX_BLOCKS: 8 blocks per
# SM by default = 1056; 16, 32 and 64 per SM), whole-entry decode of the MiniLM KV bf16, Fashion-MNIST,
# Cora and GloVe entries, interleaved twice.
set -u
[ -f .devrun/data/cora-features-f32.npy.gz ] && gunzip -f .devrun/data/cora-features-f32.npy.gz
R=${OUT:-/tmp/out}; rm -rf /tmp/ab; mkdir -p /tmp/ab "$R"
ab() { OUT=$R IBP_BENCH_TIMEOUT=90 bash tools/gpu-ab.sh "$@" | tee -a /tmp/ab/summary.txt; }
for i in 1 2; do
    for b in 1056 2112 4224 8448; do
        for only in bf16 fashion cora glove; do
            IBP_TILE_MAX_BLOCKS=$b ab ${only}_b${b}_$i "" .devrun/ibp-gpu-bench --only $only
        done
    done
done
for only in bf16 fashion cora glove; do
    args=""; for i in 1 2; do for b in 1056 2112 4224 8448; do args="$args b$b.$i=/tmp/ab/${only}_b${b}_$i/bench.log"; done; done
    python3 tools/ab_compare.py $args --what decode >> /tmp/ab/compare.txt 2>&1
done
cat /tmp/ab/compare.txt
tar czf "$R/ab.tgz" -C /tmp ab
