#!/usr/bin/env bash
# Forty-second session (2026-12-07): one call that does what the card it lands on is for.
# - On an H200: first the full run (tools/gpu-full-run.sh: every GPU test, the vectors,
#   memcheck/initcheck, the bench; $OUT/full.tgz), the figures of record at this code; then
#   ROUNDS (default 2) rounds of the A/B below.
# - Elsewhere: ROUNDS (default 3) rounds of the A/B alone.
# The A/B: host gathers of Cora (prefix c) and f32 rows at 5 % non-zero (prefix s), 1K-64K rows,
# through
#   d   the defaults;
#   s   -DIBP_SPARSE_SCATTER=1: each pass's exceptions found through a shared-memory scatter of
#       their positions instead of the binary search over the windows' first ranks + nth_set_bit;
#   p   -DIBP_SPARSE_PREFETCH=1: the marked positions' Mask/Bitval lines asked of the L1 while the
#       record is in flight;
#   b   both.
# Then, but on an H200, the timeline build (-DIBP_GATHER_TIMELINE=1) of d and b on Cora and f32 rows
# at 5 % ($OUT/ab.tgz: ab/compare.txt, ab/timeline.txt, ab/<run>/bench.log).
# Here: IBP_PREPARE_KERNEL_DEFINES as README.md says, `bash tools/gpu-run.sh --prepare`, .devrun
# trimmed as ../gpu-2026-12-07-f/README.md says; on the device (carry .devrun):
#   bash bench/results/gpu-2026-12-07-h/session.sh
set -u
. tools/gpu-ab-lib.sh
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
echo "$gpu"
S="-DIBP_SPARSE_SCATTER=1"
P="-DIBP_SPARSE_PREFETCH=1"
case "$gpu" in
*H200*)
    timeout 330 bash tools/gpu-full-run.sh
    rounds=${ROUNDS:-2}
    ;;
*) rounds=${ROUNDS:-3} ;;
esac
ab_begin
round() {
    local i=$1
    gab "cd_$i" "" --only cora --no-synthetic
    gab "cs_$i" "$S" --only cora --no-synthetic
    gab "cp_$i" "$P" --only cora --no-synthetic
    gab "cb_$i" "$S $P" --only cora --no-synthetic
    gab "sd_$i" "" --only f32-sparse --no-real-data
    gab "ss_$i" "$S" --only f32-sparse --no-real-data
    gab "sp_$i" "$P" --only f32-sparse --no-real-data
    gab "sb_$i" "$S $P" --only f32-sparse --no-real-data
}
for i in $(seq 1 "$rounds"); do round "$i"; done
{
    compare_rounds gathers c "$rounds" d s p b
    compare_rounds gathers s "$rounds" d s p b
} > /tmp/ab/compare.txt 2>&1
cat /tmp/ab/compare.txt
case "$gpu" in *H200*) ab_pack ab; exit 0 ;; esac
(
    export IBP_BENCH_UNCHECKED=1 IBP_BENCH_TIMELINE=1
    gab tcd_1 "-DIBP_GATHER_TIMELINE=1" --only cora --no-synthetic
    gab tcb_1 "$S $P -DIBP_GATHER_TIMELINE=1" --only cora --no-synthetic
    gab tsd_1 "-DIBP_GATHER_TIMELINE=1" --only f32-sparse --no-real-data
    gab tsb_1 "$S $P -DIBP_GATHER_TIMELINE=1" --only f32-sparse --no-real-data
)
for t in tcd_1 tcb_1 tsd_1 tsb_1; do echo "== $t"; grep -h -E "^(## |batch |timeline )" "/tmp/ab/$t/bench.log"; done > /tmp/ab/timeline.txt 2>&1
ab_pack ab
