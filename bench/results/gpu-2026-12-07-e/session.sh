#!/usr/bin/env bash
# Thirty-ninth session (2026-12-07), GPU_NOTES entry 93: three switches of the host gathers against
# the build before them (069f8f2, its bench binary kept as .devrun/ibp-gpu-bench-069f8f2):
#   c    IBP_SPARSE_COMPACT=1: a sparse row's exceptions decoded one per lane, 32 a pass, in stream
#        order, instead of each lane walking its own window's exceptions in two loops;
#   l    IBP_GATHER_LATE_DESCRIBE=1: a row's group id and table offset loaded after its record's
#        loads are issued (bench/results/gpu-2026-12-07-d/tried-late-describe.diff);
#   p    IBP_SPARSE_PIPELINE=1: ibp_gather_sparse issues the next row's record loads before it
#        decodes this one;
#   clp  all three; h the build before (069f8f2).
# On Cora and f32 rows at 5 % non-zero (ibp_gather_sparse) every variant, on f32-normal rows (dense,
# ibp_gather, where only l changes the code) h and l; batches of 1K-16K rows, the builds in turn,
# ROUNDS (default 3) times.
# Ran at 8af2b34 (bench/results/gpu-2026-12-07-e/README.md); since 6c77d9e only c is in the code.
# Here: `bash tools/gpu-run.sh --prepare`, then cp the 069f8f2 bench binary to
# .devrun/ibp-gpu-bench-069f8f2 (and leave .devrun/tests out: the carry limit); on the device
# (carry .devrun):
#   bash bench/results/gpu-2026-12-07-e/session.sh ab      # the A/B (switches.tgz)
#   bash bench/results/gpu-2026-12-07-e/session.sh full    # the full run alone
set -u
. tools/gpu-ab-lib.sh
SPARSE_VARIANTS=${VARIANTS:-h c l p clp}
DENSE_VARIANTS=${DENSE_VARIANTS:-h l}
defines_of() {
    case $1 in
    h) echo "" ;;
    c) echo "-DIBP_SPARSE_COMPACT=1" ;;
    l) echo "-DIBP_GATHER_LATE_DESCRIBE=1" ;;
    p) echo "-DIBP_SPARSE_PIPELINE=1" ;;
    clp) echo "-DIBP_SPARSE_COMPACT=1 -DIBP_GATHER_LATE_DESCRIBE=1 -DIBP_SPARSE_PIPELINE=1" ;;
    esac
}
bin_of() { if [ "$1" = h ]; then echo .devrun/ibp-gpu-bench-069f8f2; else echo "$B"; fi; }
run_ab() {
    ab_begin
    export GAB_BATCHES=1024,4096,16384
    for i in $(seq 1 "${ROUNDS:-3}"); do
        for v in $SPARSE_VARIANTS; do
            IBP_BENCH_BIN=$(bin_of "$v") gab c${v}_$i "$(defines_of "$v")" --only cora --no-synthetic
            IBP_BENCH_BIN=$(bin_of "$v") gab s${v}_$i "$(defines_of "$v")" --only f32-sparse --no-real-data
        done
        for v in $DENSE_VARIANTS; do
            IBP_BENCH_BIN=$(bin_of "$v") gab n${v}_$i "$(defines_of "$v")" --only "f32-normal$" --no-real-data
        done
    done
    # shellcheck disable=SC2086 # the variants are lists
    {
        compare_rounds gathers c "${ROUNDS:-3}" $SPARSE_VARIANTS
        compare_rounds gathers s "${ROUNDS:-3}" $SPARSE_VARIANTS
        compare_rounds gathers n "${ROUNDS:-3}" $DENSE_VARIANTS
    } > /tmp/ab/compare.txt 2>&1
    cat /tmp/ab/compare.txt
    ab_pack switches
}
session_part "${1:-ab}" run_ab
