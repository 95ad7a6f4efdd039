#!/usr/bin/env bash
# Fortieth session (2026-12-07), GPU_NOTES entry 94: the host gathers of Cora and of f32 rows at 5 %
# non-zero (batches of 1K-64K rows, ROUNDS times, default 3) through ibp_gather_sparse's variants, in turn:
#   d     the defaults;
#   g     a grid of at most 5 blocks per SM (IBP_SPARSE_BLOCKS_PER_SM=5: the resident ones, so warps
#         loop over 1-2 rows at 4K-row batches instead of waiting as a second wave of blocks);
#   gp    that grid with the next row's record issued before this row's decode (IBP_SPARSE_PIPELINE=1);
#   p     the pipeline with the default grid (acts from ~17K-row batches).
# Then (part `timeline`) the same gathers and f32-normal rows once through the timeline build
# (-DIBP_GATHER_TIMELINE=1, IBP_BENCH_TIMELINE=1): when, within a launch, warps start, finish their
# lookups, have their record and finish its decode, beside the ideal copy's (t*_1/bench.log).
# Each define set's first run compiles its kernels (about 65 s on an H100): budget about 450 s.
# Here: `bash tools/gpu-run.sh --prepare`; on the device (carry .devrun, trimmed as the README of
# ../gpu-2026-12-07-e says):
#   bash bench/results/gpu-2026-12-07-f/session.sh ab        # the A/B, then the timeline ($OUT/variants.tgz)
#   bash bench/results/gpu-2026-12-07-f/session.sh timeline  # the timeline alone ($OUT/timeline.tgz)
#   bash bench/results/gpu-2026-12-07-f/session.sh tab       # the timeline, then the A/B
set -u
. tools/gpu-ab-lib.sh
run_ab() {
    ab_begin
    run_ab_rounds
    run_timeline
    ab_pack variants
}
run_ab_rounds() {
    local rounds=${ROUNDS:-3}
    for i in $(seq 1 "$rounds"); do
        for v in ${VARIANTS:-d g gp p}; do
            per_sm="" def=""
            case $v in
            g) per_sm=5 ;;
            gp) per_sm=5 def="-DIBP_SPARSE_PIPELINE=1" ;;
            p) def="-DIBP_SPARSE_PIPELINE=1" ;;
            esac
            (
                [ -n "$per_sm" ] && export IBP_SPARSE_BLOCKS_PER_SM=$per_sm
                gab "c${v}_$i" "$def" --only cora --no-synthetic
                gab "s${v}_$i" "$def" --only f32-sparse --no-real-data
            )
        done
    done
    # shellcheck disable=SC2086 # VARIANTS is a list
    for d in c s; do compare_rounds gathers $d "$rounds" ${VARIANTS:-d g gp p}; done > /tmp/ab/compare.txt 2>&1
    cat /tmp/ab/compare.txt
}
run_timeline() {
    local s
    (
        export IBP_BENCH_UNCHECKED=1 IBP_BENCH_TIMELINE=1
        gab tc_1 "-DIBP_GATHER_TIMELINE=1" --only cora --no-synthetic
        gab ts_1 "-DIBP_GATHER_TIMELINE=1" --only f32-sparse --no-real-data
        gab tn_1 "-DIBP_GATHER_TIMELINE=1" --only 'f32-normal$' --no-real-data
    )
    for s in tc_1 ts_1 tn_1; do grep -h -E "^(## |batch |timeline )" "/tmp/ab/$s/bench.log"; done > /tmp/ab/timeline.txt 2>&1
    cat /tmp/ab/timeline.txt
}
run_tab() {  # the timeline first, then the A/B (a call cut short keeps what ran: $OUT/ab.tgz)
    nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1
    ab_begin
    run_timeline
    tar czf "$R/ab.tgz" -C /tmp ab
    run_ab_rounds
    ab_pack variants
}
case "${1:-ab}" in
timeline) nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1; ab_begin; run_timeline; ab_pack timeline ;;
tab) run_tab ;;
*) session_part "${1:-ab}" run_ab ;;
esac
