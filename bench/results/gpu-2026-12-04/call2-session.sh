#!/usr/bin/env bash
# Session 2026-12-04, call 2: compute-sanitizer racecheck and synccheck on the lean tile kernel of
# entry 54 (the only kernel whose SASS differs from 562591e's, where call 3 of 2026-12-03 ran them),
# through the gpu_decode tests of that kernel; then the stream window for every word width
# (IBP_SLICE_BITBUF=1, the default) against the window for words of <= 32 bits only (=2: V bf16's
# 64-bit words read per field again), on the bf16 KV entries, interleaved twice.
set -u
[ -f .devrun/data/cora-features-f32.npy.gz ] && gunzip -f .devrun/data/cora-features-f32.npy.gz
R=${OUT:-/tmp/out}; rm -rf /tmp/ab; mkdir -p "$R/san" /tmp/ab
(
[ -d /usr/local/nvidia/lib64 ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/nvidia/lib64"
export IBP_REQUIRE_GPU=1 IBP_REQUIRE_NVRTC=1 IBP_DATA_DIR=.devrun/data
san() {  # tool test limit
    local s=$(date +%s)
    timeout $3 compute-sanitizer --tool $1 --error-exitcode 9 .devrun/tests/gpu_decode --test-threads=1 --exact $2 \
        > "$R/san/$1-$2.log" 2>&1
    echo "$1 $2 rc $? $(($(date +%s) - s)) s" | tee -a "$R/san/summary.txt"
    tail -n 4 "$R/san/$1-$2.log"
}
san synccheck rows_through_the_lean_tile_kernel_match_cpu_decoder 40
san racecheck rows_through_the_lean_tile_kernel_match_cpu_decoder 240
)
ab() { OUT=$R IBP_BENCH_TIMEOUT=60 bash tools/gpu-ab.sh "$@" .devrun/ibp-gpu-bench --only bf16 | tee -a /tmp/ab/summary.txt; }
ab all1 ""
ab narrow1 "-DIBP_SLICE_BITBUF=2"
ab all2 ""
ab narrow2 "-DIBP_SLICE_BITBUF=2"
python3 tools/ab_compare.py all1=/tmp/ab/all1/bench.log narrow1=/tmp/ab/narrow1/bench.log all2=/tmp/ab/all2/bench.log \
    narrow2=/tmp/ab/narrow2/bench.log --what decode > /tmp/ab/compare.txt 2>&1
tar czf "$R/ab.tgz" -C /tmp ab
cat /tmp/ab/compare.txt
