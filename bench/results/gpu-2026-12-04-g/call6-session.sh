#!/usr/bin/env bash
# Session 2026-12-04 (fourteenth), call 6, on fec5357: lean tile kernels at up to 32 blocks per SM
# (the new default) against 8 for every tile kernel (IBP_TILE_MAX_BLOCKS=1056, as before), whole-entry
# decode of every bench entry, interleaved twice; then the full GPU run.
set -u
[ -f .devrun/data/cora-features-f32.npy.gz ] && gunzip -f .devrun/data/cora-features-f32.npy.gz
R=${OUT:-/tmp/out}; rm -rf /tmp/ab; mkdir -p /tmp/ab "$R"
for i in 1 2; do
    IBP_TILE_MAX_BLOCKS=1056 OUT=$R IBP_BENCH_TIMEOUT=100 bash tools/gpu-ab.sh old_$i "" .devrun/ibp-gpu-bench | tee -a /tmp/ab/summary.txt
    OUT=$R IBP_BENCH_TIMEOUT=100 bash tools/gpu-ab.sh new_$i "" .devrun/ibp-gpu-bench | tee -a /tmp/ab/summary.txt
done
python3 tools/ab_compare.py old.1=/tmp/ab/old_1/bench.log new.1=/tmp/ab/new_1/bench.log old.2=/tmp/ab/old_2/bench.log \
    new.2=/tmp/ab/new_2/bench.log --what decode > /tmp/ab/compare.txt 2>&1
cat /tmp/ab/compare.txt
tar czf "$R/ab.tgz" -C /tmp ab
bash tools/gpu-full-run.sh
