#!/usr/bin/env bash
# Thirty-seventh session (2026-12-07): ibp_gather_sparse at 8 blocks per SM
# (IBP_GATHER_SPARSE_MIN_BLOCKS; default 6, as ibp_gather) against the default, on the host gathers
# of the entries that take it (Cora, f32 rows at 5 % non-zero), batches of 1K-64K rows, the three
# builds in turn, twice (c/s: Cora / f32 sparse; d: default, b8). At 6 blocks a 4K-row batch's
# 4,096 requests start in two waves on 132 SMs (792 blocks of 4 warps resident), at 8 in one.
# Variant g: the default with IBP_GATHER_DIAG=2 (each staged record not decoded, one byte of its
# row written; the sparse rows are still zeroed, so this is their gather without the exceptions'
# decode; IBP_BENCH_UNCHECKED=1): what the sparse decode costs at each batch size.
# Here: `bash tools/gpu-run.sh --prepare`; on the device (carry .devrun):
#   bash bench/results/gpu-2026-12-07-b/session.sh ab      # the A/B alone (blocks.tgz)
#   bash bench/results/gpu-2026-12-07-b/session.sh first   # the A/B, then the full run
#   bash bench/results/gpu-2026-12-07-b/session.sh full    # the full run alone
# ROUNDS (default 2) and VARIANTS (default "d b8 g") cut the A/B down when device time is short.
set -u
. tools/gpu-ab-lib.sh
run_ab() {
    ab_begin
    for i in $(seq 1 "${ROUNDS:-2}"); do
        for v in ${VARIANTS:-d b8 g}; do
            unchecked=0
            case $v in
            d) def="" ;;
            b8) def="-DIBP_GATHER_SPARSE_MIN_BLOCKS=8" ;;
            g) def="-DIBP_GATHER_DIAG=2" unchecked=1 ;;
            esac
            IBP_BENCH_UNCHECKED=$unchecked gab c${v}_$i "$def" --only cora --no-synthetic
            IBP_BENCH_UNCHECKED=$unchecked gab s${v}_$i "$def" --only f32-sparse --no-real-data
        done
    done
    if [ "${ROUNDS:-2}" -ge 2 ]; then
        report "compare gathers cd cb8" "compare gathers sd sb8" "compare gathers cd cg" "compare gathers sd sg"
    fi
    ab_pack blocks
}
session_part "${1:-ab}" run_ab
