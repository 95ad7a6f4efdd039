#!/usr/bin/env bash
# Session 2026-12-04 (twelfth), call 1: the long-rows kernel (ibp_decode_tiles_lean_long, a lane per
# slice of a row) on Fashion-MNIST: GPU tests first, then whole-entry decode with IBP_LEAN_LONG=0
# (the pairs kernel, as before) against the long kernel at 64/128/256/512 output bytes per lane
# (K = 16/8/4/2 slices per row), interleaved twice; then every dataset with IBP_LEAN_LONG=2 (the
# long kernel for rows of > 64 words of any width) against 0.
set -u
[ -f .devrun/data/cora-features-f32.npy.gz ] && gunzip -f .devrun/data/cora-features-f32.npy.gz
R=${OUT:-/tmp/out}; rm -rf /tmp/ab /tmp/san; mkdir -p /tmp/ab /tmp/san "$R"
T0=$(date +%s)
left() { echo $((570 - ($(date +%s) - T0))); }
s=$(date +%s); timeout 170 .devrun/tests/gpu_decode --test-threads=1 > /tmp/san/gpu_decode.log 2>&1
echo "gpu_decode rc $? $(($(date +%s) - s)) s"; grep -E "^test |test result" /tmp/san/gpu_decode.log | tail -20
tar czf "$R/san.tgz" -C /tmp san
for i in 1 2; do
    IBP_LEAN_LONG=0 OUT=$R IBP_BENCH_TIMEOUT=60 bash tools/gpu-ab.sh pairs$i "" .devrun/ibp-gpu-bench --only fashion | tee -a /tmp/ab/summary.txt
    for lb in 64 128 256 512; do
        OUT=$R IBP_BENCH_TIMEOUT=60 bash tools/gpu-ab.sh long${lb}_$i "-DIBP_LONG_LANE_BYTES=$lb" .devrun/ibp-gpu-bench --only fashion | tee -a /tmp/ab/summary.txt
    done
done
args=""; for i in 1 2; do args="$args pairs$i=/tmp/ab/pairs$i/bench.log"; for lb in 64 128 256 512; do args="$args l$lb.$i=/tmp/ab/long${lb}_$i/bench.log"; done; done
python3 tools/ab_compare.py $args --what decode > /tmp/ab/compare.txt 2>&1
cat /tmp/ab/summary.txt /tmp/ab/compare.txt
tar czf "$R/ab.tgz" -C /tmp ab
[ "$(left)" -gt 150 ] || exit 0
IBP_LEAN_LONG=0 OUT=$R IBP_BENCH_TIMEOUT=$(( $(left) / 2 - 10 )) bash tools/gpu-ab.sh all_off "" .devrun/ibp-gpu-bench --no-synthetic | tee -a /tmp/ab/summary.txt
IBP_LEAN_LONG=2 OUT=$R IBP_BENCH_TIMEOUT=$(( $(left) - 15 )) bash tools/gpu-ab.sh all_on "" .devrun/ibp-gpu-bench --no-synthetic | tee -a /tmp/ab/summary.txt
python3 tools/ab_compare.py off=/tmp/ab/all_off/bench.log on=/tmp/ab/all_on/bench.log --what decode > /tmp/ab/compare-all.txt 2>&1
cat /tmp/ab/compare-all.txt
tar czf "$R/ab.tgz" -C /tmp ab
