#!/usr/bin/env bash
# Forty-first session (2026-12-07): the last 265 s of device time, one call. On an H200: the host
# gathers of Cora and of f32 rows at 5 % (1K-64K rows) at this code, the first H200 figures of the
# sparse gather since 59ca9c9 ($OUT/ab.tgz). On an H100: Nsight Compute on one 1K-row Cora gather and
# the ideal copy of its records, with stall samples per SASS instruction (../gpu-2026-12-07-c/profile.sh
# at this code: where the decode's 1.5-1.7 us go; $OUT/none, $OUT/all).
# Here: `bash tools/gpu-run.sh --prepare`, .devrun trimmed as ../gpu-2026-12-07-f/README.md says.
set -u
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
echo "$gpu"
case "$gpu" in
*H200*)
    . tools/gpu-ab-lib.sh
    ab_begin
    gab cd_1 "" --only cora --no-synthetic
    gab sd_1 "" --only f32-sparse --no-real-data
    grep -h -E "^(## |batch )" /tmp/ab/*/bench.log
    ;;
*) bash bench/results/gpu-2026-12-07-c/profile.sh ;;
esac
