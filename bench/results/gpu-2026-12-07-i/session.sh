#!/usr/bin/env bash
# Forty-third session (2026-12-07; no device was lent, so prepared for the next): one call that
# does what the card it lands on is for.
# - On an H200: first the full run (tools/gpu-full-run.sh: every GPU test, the vectors,
#   memcheck/initcheck, the bench; $OUT/full.tgz), the figures of record at this code; then
#   ROUNDS (default 2) rounds of the A/B below.
# - Elsewhere: ROUNDS (default 3) rounds of the A/B alone, then the timeline builds.
# The A/B: host gathers of Cora (prefix c) and f32 rows at 5 % non-zero (prefix s), 1K-64K rows,
# through
#   d   the defaults (since GPU_NOTES entry 97b the last word is not an exception);
#   l   -DIBP_SPARSE_LAST_WORD=1: the last word an exception in every row, as before entry 97b;
#   q   -DIBP_SPARSE_PAIRS=1: two ranks a lane, 64 exceptions a pass (entry 96e).
# Expected from the CPU counts (`ibp-gpu-bench --exception-stats`, entry 97): Cora 1.43 passes a
# row with l, 1.32 with d, 1.00 with q; f32 rows of 4 KiB at 5 % 2.02 with d, 1.03 with q.
# Here (about 46 s of NVRTC a build on 2 cores, five builds):
#   L=-DIBP_SPARSE_LAST_WORD=1 Q=-DIBP_SPARSE_PAIRS=1 T=-DIBP_GATHER_TIMELINE=1
#   IBP_PREPARE_KERNEL_DEFINES=";$L;$Q;$T;$Q $T" bash tools/gpu-run.sh --prepare
# then .devrun trimmed (../gpu-2026-12-07-h/README.md) and
# `bash tools/devcall-park.sh park bench/results/gpu-2026-12-07-i`; on the device (carry .devrun):
#   bash bench/results/gpu-2026-12-07-i/session.sh
# and `bash tools/devcall-park.sh restore` here after it.
set -u
. tools/gpu-ab-lib.sh
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
echo "$gpu"
L="-DIBP_SPARSE_LAST_WORD=1"
Q="-DIBP_SPARSE_PAIRS=1"
case "$gpu" in
*H200*)
    timeout 330 bash tools/gpu-full-run.sh
    rounds=${ROUNDS:-2}
    ;;
*) rounds=${ROUNDS:-3} ;;
esac
ab_begin
for i in $(seq 1 "$rounds"); do
    gab "cd_$i" "" --only cora --no-synthetic
    gab "cl_$i" "$L" --only cora --no-synthetic
    gab "cq_$i" "$Q" --only cora --no-synthetic
    gab "sd_$i" "" --only f32-sparse --no-real-data
    gab "sl_$i" "$L" --only f32-sparse --no-real-data
    gab "sq_$i" "$Q" --only f32-sparse --no-real-data
done
{
    compare_rounds gathers c "$rounds" d l q
    compare_rounds gathers s "$rounds" d l q
} > /tmp/ab/compare.txt 2>&1
cat /tmp/ab/compare.txt
case "$gpu" in *H200*) ab_pack ab; exit 0 ;; esac
(
    export IBP_BENCH_UNCHECKED=1 IBP_BENCH_TIMELINE=1
    gab tcd_1 "-DIBP_GATHER_TIMELINE=1" --only cora --no-synthetic
    gab tcq_1 "$Q -DIBP_GATHER_TIMELINE=1" --only cora --no-synthetic
)
for t in tcd_1 tcq_1; do echo "== $t"; grep -h -E "^(## |batch |timeline )" "/tmp/ab/$t/bench.log"; done > /tmp/ab/timeline.txt 2>&1
cat /tmp/ab/timeline.txt
ab_pack ab
