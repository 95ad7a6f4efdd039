#!/usr/bin/env bash
# Session 2026-12-04 (twelfth), call 3: the GPU tests on d67cee8+ (kernels as 59c70c0; new test
# image_like_rows_match_cpu_decoder), with IBP_REQUIRE_GPU=1 so none can skip.
set -u
R=${OUT:-/tmp/out}; mkdir -p "$R"
export IBP_REQUIRE_GPU=1
for t in gpu_decode ibp_gpu; do
    s=$(date +%s); timeout 200 .devrun/tests/$t --test-threads=1 > "$R/$t.log" 2>&1
    echo "$t rc $? $(($(date +%s) - s)) s"; grep -E "^test |test result" "$R/$t.log" | tail -40
done
