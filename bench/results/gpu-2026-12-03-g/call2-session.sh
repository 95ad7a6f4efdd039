#!/usr/bin/env bash
# Session 2026-12-03 (seventh), call 2: IBP_SLICE_COMPACT (a lane per row: a warp's raw rows and its
# coded rows each packed into full warp steps; MiniLM K bf16 A=16 has 64 % raw records) against the
# rows in order (=0), whole-entry decode of every bench entry, interleaved twice; then IBP_SLICE_UNROLL=4
# (a slice's vector loop unrolled) on the bf16 KV entries beside a default run.
set -u
[ -f .devrun/data/cora-features-f32.npy.gz ] && gunzip -f .devrun/data/cora-features-f32.npy.gz
R=${OUT:-/tmp/out}; rm -rf /tmp/ab; mkdir -p /tmp/ab "$R"
[ -d /usr/local/nvidia/lib64 ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/nvidia/lib64"
ab() { OUT=$R IBP_BENCH_TIMEOUT=110 bash tools/gpu-ab.sh "$@" | tee -a /tmp/ab/summary.txt; }
ab off1 "-DIBP_SLICE_COMPACT=0"
ab on1 ""
ab off2 "-DIBP_SLICE_COMPACT=0"
ab on2 ""
ab u4 "-DIBP_SLICE_UNROLL=4" .devrun/ibp-gpu-bench --only bf16
ab on3 "" .devrun/ibp-gpu-bench --only bf16
ab u4b "-DIBP_SLICE_UNROLL=4" .devrun/ibp-gpu-bench --only bf16
python3 tools/ab_compare.py off1=/tmp/ab/off1/bench.log on1=/tmp/ab/on1/bench.log off2=/tmp/ab/off2/bench.log \
    on2=/tmp/ab/on2/bench.log --what decode > /tmp/ab/compare.txt 2>&1
python3 tools/ab_compare.py on3=/tmp/ab/on3/bench.log u4=/tmp/ab/u4/bench.log u4b=/tmp/ab/u4b/bench.log --what decode > /tmp/ab/compare-u4.txt 2>&1
tar czf "$R/ab.tgz" -C /tmp ab
cat /tmp/ab/summary.txt; cat /tmp/ab/compare.txt /tmp/ab/compare-u4.txt
