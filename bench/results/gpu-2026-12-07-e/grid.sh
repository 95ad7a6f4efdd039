#!/usr/bin/env bash
# Prepared in the thirty-ninth session (2026-12-07), not run yet (GPU_NOTES entry 93): entry 93's
# pipeline (IBP_SPARSE_PIPELINE=1: ibp_gather_sparse issues the next row's record before it decodes
# this one) had nothing to act on, because the default grid gives every request of a batch of up to
# ~17K rows a warp of its own. Here the sparse gathers of Cora and f32 rows at 5 % run, in turn:
#   d     the defaults;
#   g     a grid of at most 5 blocks per SM (IBP_SPARSE_BLOCKS_PER_SM=5: the resident ones, so
#         warps loop over 1-2 rows at 4K-row batches instead of a second wave of blocks);
#   gp    that grid with the pipeline;
#   p     the pipeline with the default grid (acts at 64K rows only);
# batches of 1K-64K rows, ROUNDS (default 2) times. Each build's first run compiles its kernels
# (about 65 s on an H100), so budget about 300 s for the whole call.
# Here: `bash tools/gpu-run.sh --prepare`; on the device (carry .devrun, trimmed as README says):
#   bash bench/results/gpu-2026-12-07-e/grid.sh ab      # the A/B ($OUT/grid.tgz)
set -u
. tools/gpu-ab-lib.sh
run_ab() {
    ab_begin
    for i in $(seq 1 "${ROUNDS:-2}"); do
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
    for d in c s; do compare_rounds gathers $d "${ROUNDS:-2}" ${VARIANTS:-d g gp p}; done > /tmp/ab/compare.txt 2>&1
    cat /tmp/ab/compare.txt
    ab_pack grid
}
session_part "${1:-ab}" run_ab
