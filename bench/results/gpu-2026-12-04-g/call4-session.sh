#!/usr/bin/env bash
# Session 2026-12-04 (fourteenth), call 4: the tile kernels' grid (IBP_TILE_MAX_BLOCKS; default 8
# blocks per SM, where the long-rows kernel keeps 2 resident and the short-rows kernel 3) and, on
# Fashion-MNIST, record-sized tiles for the long-rows kernel (IBP_TILE_RECORDS_GAIN=100) with each
# grid; whole-entry decode, interleaved twice.
set -u
[ -f .devrun/data/cora-features-f32.npy.gz ] && gunzip -f .devrun/data/cora-features-f32.npy.gz
R=${OUT:-/tmp/out}; rm -rf /tmp/ab; mkdir -p /tmp/ab "$R"
ab() { OUT=$R IBP_BENCH_TIMEOUT=60 bash tools/gpu-ab.sh "$@" | tee -a /tmp/ab/summary.txt; }
for i in 1 2; do
    ab base_$i "" .devrun/ibp-gpu-bench --only fashion
    IBP_TILE_MAX_BLOCKS=264 ab g2_$i "" .devrun/ibp-gpu-bench --only fashion
    IBP_TILE_MAX_BLOCKS=528 ab g4_$i "" .devrun/ibp-gpu-bench --only fashion
    IBP_TILE_RECORDS_GAIN=100 ab rec_$i "" .devrun/ibp-gpu-bench --only fashion
    IBP_TILE_RECORDS_GAIN=100 IBP_TILE_MAX_BLOCKS=264 ab recg2_$i "" .devrun/ibp-gpu-bench --only fashion
    IBP_TILE_RECORDS_GAIN=100 IBP_TILE_MAX_BLOCKS=528 ab recg4_$i "" .devrun/ibp-gpu-bench --only fashion
    ab kbase_$i "" .devrun/ibp-gpu-bench --only bf16
    IBP_TILE_MAX_BLOCKS=396 ab kg3_$i "" .devrun/ibp-gpu-bench --only bf16
    IBP_TILE_MAX_BLOCKS=792 ab kg6_$i "" .devrun/ibp-gpu-bench --only bf16
done
args=""; for i in 1 2; do for v in base g2 g4 rec recg2 recg4; do args="$args $v.$i=/tmp/ab/${v}_$i/bench.log"; done; done
python3 tools/ab_compare.py $args --what decode > /tmp/ab/compare.txt 2>&1
args=""; for i in 1 2; do for v in kbase kg3 kg6; do args="$args $v.$i=/tmp/ab/${v}_$i/bench.log"; done; done
python3 tools/ab_compare.py $args --what decode >> /tmp/ab/compare.txt 2>&1
cat /tmp/ab/compare.txt
tar czf "$R/ab.tgz" -C /tmp ab
