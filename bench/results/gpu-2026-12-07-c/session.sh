#!/usr/bin/env bash
# Thirty-eighth session (2026-12-07), at code ad91cf0 (the switch is gone since): the metadata prefetch of the host gathers
# (IBP_GATHER_META_PREFETCH, gather_rows.cuh; GPU_NOTES entry 92): while a staged row's record is
# in flight over PCIe, ibp_gather / ibp_gather_sparse ask for the lines of its group's metadata
# that the decode will read (decode table entries, Mask/Bitval words; for a row with a sparse
# table, its marked positions' and last word's), into L1 (p1) or L2 (p2), against the default (d:
# none). Entry 91 put the sparse decode's cost at 1K-row batches at ~15 points of ideal; the bench
# flushes L2 before each timed gather, so those loads are HBM misses after the record arrives.
# Datasets: c Cora, s f32 rows at 5 % non-zero (256 B-4 KiB), n f32-normal (256 B-4 KiB), f
# fashion-mnist (784 B), m minilm-ffn-up (1536 B); batches of 1K-64K rows; the builds in turn, twice.
# Here: `bash tools/gpu-run.sh --prepare`; on the device (carry .devrun):
#   bash bench/results/gpu-2026-12-07-c/session.sh ab      # the A/B alone (prefetch.tgz)
#   bash bench/results/gpu-2026-12-07-c/session.sh first   # the A/B, then the full run
#   bash bench/results/gpu-2026-12-07-c/session.sh full    # the full run alone
# ROUNDS (default 2), VARIANTS (default "d p1 p2") and SETS (default "c s n f m") cut it down.
set -u
. tools/gpu-ab-lib.sh
run_ab() {
    ab_begin
    for i in $(seq 1 "${ROUNDS:-2}"); do
        for v in ${VARIANTS:-d p1 p2}; do
            case $v in
            d) def="" ;;
            p1) def="-DIBP_GATHER_META_PREFETCH=1" ;;
            p2) def="-DIBP_GATHER_META_PREFETCH=2" ;;
            esac
            for s in ${SETS:-c s n f m}; do
                case $s in
                c) gab c${v}_$i "$def" --only cora --no-synthetic ;;
                s) gab s${v}_$i "$def" --only f32-sparse --no-real-data ;;
                n) gab n${v}_$i "$def" --only 'f32-normal$' --no-real-data ;;
                f) gab f${v}_$i "$def" --only fashion-mnist --no-synthetic ;;
                m) gab m${v}_$i "$def" --only minilm-ffn-up --no-synthetic ;;
                esac
            done
        done
    done
    if [ "${ROUNDS:-2}" -ge 2 ]; then
        cmds=()
        for s in ${SETS:-c s n f m}; do
            for v in ${VARIANTS:-d p1 p2}; do [ "$v" = d ] || cmds+=("compare gathers ${s}d ${s}$v"); done
        done
        report "${cmds[@]}"
    fi
    ab_pack prefetch
}
session_part "${1:-ab}" run_ab
