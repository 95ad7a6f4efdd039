#!/usr/bin/env bash
# Thirty-eighth session (2026-12-07), GPU_NOTES entry 92: ibp_gather_sparse at 5 blocks per SM (the
# new default of IBP_GATHER_SPARSE_MIN_BLOCKS: 96 registers, no spills) against 6 (o6: 80
# registers, where ptxas spills the staged record's vectors right after their loads and the warp
# waits there for PCIe: 37 % of the stall samples of a 1K-row Cora gather, entry 92's profile), on
# the host gathers of Cora and of f32 rows at 5 % non-zero, batches of 1K-64K rows, in turn, twice.
# Here: `bash tools/gpu-run.sh --prepare`; on the device (carry .devrun):
#   bash bench/results/gpu-2026-12-07-d/session.sh ab      # the A/B alone (blocks5.tgz)
#   bash bench/results/gpu-2026-12-07-d/session.sh first   # the A/B, then the full run
#   bash bench/results/gpu-2026-12-07-d/session.sh full    # the full run alone
# ROUNDS (default 2) and VARIANTS (default "d o6") cut the A/B down when device time is short.
set -u
. tools/gpu-ab-lib.sh
run_ab() {
    ab_begin
    for i in $(seq 1 "${ROUNDS:-2}"); do
        for v in ${VARIANTS:-d o6}; do
            case $v in
            d) def="" ;;
            o6) def="-DIBP_GATHER_SPARSE_MIN_BLOCKS=6" ;;
            esac
            gab c${v}_$i "$def" --only cora --no-synthetic
            gab s${v}_$i "$def" --only f32-sparse --no-real-data
        done
    done
    if [ "${ROUNDS:-2}" -ge 2 ]; then
        report "compare gathers cd co6" "compare gathers sd so6"
    fi
    ab_pack blocks5
}
session_part "${1:-ab}" run_ab
