#!/usr/bin/env bash
# Session 2026-12-03 (seventh), call 3: compute-sanitizer racecheck (shared-memory hazards) and
# synccheck (barrier misuse) on the default tile kernels (0742e8b: the same SASS as 562591e, the
# commit bench/GPU_RESULTS.md measured), one gpu_decode tile test at a time, each with its own limit.
set -u
R=${OUT:-/tmp/out}; mkdir -p "$R/san"
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
san synccheck uniform_field_lengths_match_cpu_decoder 40
san synccheck mixed_word_widths_and_long_rows_match_cpu_decoder 40
san racecheck mixed_word_widths_and_long_rows_match_cpu_decoder 100
san racecheck uniform_field_lengths_match_cpu_decoder 100
san racecheck rows_through_the_lean_tile_kernel_match_cpu_decoder 190
cat "$R/san/summary.txt"
