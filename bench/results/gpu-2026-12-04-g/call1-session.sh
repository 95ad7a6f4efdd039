#!/usr/bin/env bash
# Session 2026-12-04 (fourteenth), call 1: tiles sized by the records an entry stores
# (IBP_TILE_RECORDS, a bit per tile class; default 8 = the long-rows kernel only) against tiles sized
# by raw rows (0), and every class so sized (15), whole-entry decode of every bench entry, interleaved
# twice.
set -u
[ -f .devrun/data/cora-features-f32.npy.gz ] && gunzip -f .devrun/data/cora-features-f32.npy.gz
R=${OUT:-/tmp/out}; rm -rf /tmp/ab; mkdir -p /tmp/ab "$R"
for i in 1 2; do
    for v in 0 8 15; do
        IBP_TILE_RECORDS=$v OUT=$R IBP_BENCH_TIMEOUT=100 bash tools/gpu-ab.sh rec${v}_$i "" .devrun/ibp-gpu-bench | tee -a /tmp/ab/summary.txt
    done
done
args=""; for i in 1 2; do for v in 0 8 15; do args="$args rec$v.$i=/tmp/ab/rec${v}_$i/bench.log"; done; done
python3 tools/ab_compare.py $args --what decode > /tmp/ab/compare.txt 2>&1
cat /tmp/ab/compare.txt
grep -h "kernel ibp_decode_tiles\|tile rows\|rror\|differs\|panick" /tmp/ab/*/bench.log /tmp/ab/*.run.log | sort | uniq -c | head -30
tar czf "$R/ab.tgz" -C /tmp ab
