#!/usr/bin/env bash
# Session 2026-12-04 (ninth), call 3: two thread-path switches of the short-rows kernel on the bf16 KV
# entries, interleaved twice: IBP_SLICE_LOOKAHEAD=1 (the stream window loads one word ahead) and
# IBP_SLICE_RAW_MERGED=1 (raw and coded slices share one loop and one store per vector), each alone
# and both, against the default.
set -u
[ -f .devrun/data/cora-features-f32.npy.gz ] && gunzip -f .devrun/data/cora-features-f32.npy.gz
R=${OUT:-/tmp/out}; rm -rf /tmp/ab; mkdir -p /tmp/ab "$R"
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current,clocks.sm,clocks.mem --format=csv,noheader > "$R/device.txt" 2>&1
for i in 1 2; do
    OUT=$R IBP_BENCH_TIMEOUT=90 bash tools/gpu-ab.sh base$i "" .devrun/ibp-gpu-bench --only bf16 | tee -a /tmp/ab/summary.txt
    OUT=$R IBP_BENCH_TIMEOUT=90 bash tools/gpu-ab.sh la$i "-DIBP_SLICE_LOOKAHEAD=1" .devrun/ibp-gpu-bench --only bf16 | tee -a /tmp/ab/summary.txt
    OUT=$R IBP_BENCH_TIMEOUT=90 bash tools/gpu-ab.sh mg$i "-DIBP_SLICE_RAW_MERGED=1" .devrun/ibp-gpu-bench --only bf16 | tee -a /tmp/ab/summary.txt
    OUT=$R IBP_BENCH_TIMEOUT=90 bash tools/gpu-ab.sh both$i "-DIBP_SLICE_LOOKAHEAD=1 -DIBP_SLICE_RAW_MERGED=1" .devrun/ibp-gpu-bench --only bf16 | tee -a /tmp/ab/summary.txt
done
args=""; for i in 1 2; do for n in base la mg both; do args="$args $n$i=/tmp/ab/$n$i/bench.log"; done; done
python3 tools/ab_compare.py $args --what decode > /tmp/ab/compare.txt 2>&1
tar czf "$R/ab.tgz" -C /tmp ab
cat /tmp/ab/summary.txt /tmp/ab/compare.txt
