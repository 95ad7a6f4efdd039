#!/usr/bin/env bash
# For the next session (not run in the forty-second: no device time was left): the host gathers of
# Cora (prefix c) and f32 rows at 5 % non-zero (prefix s), 1K-64K rows, ROUNDS (default 3) rounds
# of d (the defaults) and q (-DIBP_SPARSE_PAIRS=1: two ranks a lane, GPU_NOTES entry 96e), then
# (unless PAIRS_TIMELINE=0) the timeline build of both on Cora ($OUT/pairs.tgz: ab/compare.txt,
# ab/timeline.txt).
# Here: Q=-DIBP_SPARSE_PAIRS=1 T=-DIBP_GATHER_TIMELINE=1
#   IBP_PREPARE_KERNEL_DEFINES=";$Q;$T;$Q $T" bash tools/gpu-run.sh --prepare
# .devrun trimmed as README.md says, `bash tools/devcall-park.sh park bench/results/gpu-2026-12-07-h`;
# on the device (carry .devrun): bash bench/results/gpu-2026-12-07-h/pairs.sh
set -u
. tools/gpu-ab-lib.sh
nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1
Q="-DIBP_SPARSE_PAIRS=1"
rounds=${ROUNDS:-3}
ab_begin
for i in $(seq 1 "$rounds"); do
    gab "cd_$i" "" --only cora --no-synthetic
    gab "cq_$i" "$Q" --only cora --no-synthetic
    gab "sd_$i" "" --only f32-sparse --no-real-data
    gab "sq_$i" "$Q" --only f32-sparse --no-real-data
done
{
    compare_rounds gathers c "$rounds" d q
    compare_rounds gathers s "$rounds" d q
} > /tmp/ab/compare.txt 2>&1
cat /tmp/ab/compare.txt
[ "${PAIRS_TIMELINE:-1}" = 1 ] || { ab_pack pairs; exit 0; }
(
    export IBP_BENCH_UNCHECKED=1 IBP_BENCH_TIMELINE=1
    gab tcd_1 "-DIBP_GATHER_TIMELINE=1" --only cora --no-synthetic
    gab tcq_1 "$Q -DIBP_GATHER_TIMELINE=1" --only cora --no-synthetic
)
for t in tcd_1 tcq_1; do echo "== $t"; grep -h -E "^(## |batch |timeline )" "/tmp/ab/$t/bench.log"; done > /tmp/ab/timeline.txt 2>&1
cat /tmp/ab/timeline.txt
ab_pack pairs
