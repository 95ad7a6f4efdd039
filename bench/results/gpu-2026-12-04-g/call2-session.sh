#!/usr/bin/env bash
# Session 2026-12-04 (fourteenth), call 2, on 5ac74c4: tiles sized by records where they hold at
# least twice the raw rows (IBP_TILE_RECORDS default 15) against raw-row tiles (0), whole-entry decode
# of every bench entry, interleaved twice; then the full GPU run.
set -u
[ -f .devrun/data/cora-features-f32.npy.gz ] && gunzip -f .devrun/data/cora-features-f32.npy.gz
R=${OUT:-/tmp/out}; rm -rf /tmp/ab; mkdir -p /tmp/ab "$R"
for i in 1 2; do
    for v in 0 15; do
        IBP_TILE_RECORDS=$v OUT=$R IBP_BENCH_TIMEOUT=100 bash tools/gpu-ab.sh rec${v}_$i "" .devrun/ibp-gpu-bench | tee -a /tmp/ab/summary.txt
    done
done
args=""; for i in 1 2; do for v in 0 15; do args="$args rec$v.$i=/tmp/ab/rec${v}_$i/bench.log"; done; done
python3 tools/ab_compare.py $args --what decode > /tmp/ab/compare.txt 2>&1
cat /tmp/ab/compare.txt
tar czf "$R/ab.tgz" -C /tmp ab
bash tools/gpu-full-run.sh
