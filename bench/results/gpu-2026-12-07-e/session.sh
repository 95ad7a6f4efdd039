#!/usr/bin/env bash
# Thirty-ninth session (2026-12-07), GPU_NOTES entry 93: two switches of the host gathers against the
# build before them (069f8f2, its bench binary kept as .devrun/ibp-gpu-bench-069f8f2):
#   c   IBP_SPARSE_COMPACT=1: a sparse row's exceptions decoded one per lane, 32 a pass, in stream
#       order, instead of each lane walking its own window's exceptions in two loops;
#   l   IBP_GATHER_LATE_DESCRIBE=1: a row's group id and table offset loaded after its record's
#       loads are issued (bench/results/gpu-2026-12-07-d/tried-late-describe.diff);
#   cl  both; h the build before (069f8f2).
# On Cora, f32 rows at 5 % non-zero and f32-normal rows (dense, ibp_gather), batches of 1K-16K rows,
# the four builds in turn, ROUNDS (default 3) times.
# Here: `bash tools/gpu-run.sh --prepare`, then cp the 069f8f2 bench binary to
# .devrun/ibp-gpu-bench-069f8f2; on the device (carry .devrun):
#   bash bench/results/gpu-2026-12-07-e/session.sh ab      # the A/B (switches.tgz)
#   bash bench/results/gpu-2026-12-07-e/session.sh full    # the full run alone
set -u
. tools/gpu-ab-lib.sh
run_ab() {
    ab_begin
    export GAB_BATCHES=1024,4096,16384
    local old=.devrun/ibp-gpu-bench-069f8f2
    for i in $(seq 1 "${ROUNDS:-3}"); do
        for v in ${VARIANTS:-h c l cl}; do
            bin=$B
            case $v in
            h) def="" bin=$old ;;
            c) def="-DIBP_SPARSE_COMPACT=1" ;;
            l) def="-DIBP_GATHER_LATE_DESCRIBE=1" ;;
            cl) def="-DIBP_SPARSE_COMPACT=1 -DIBP_GATHER_LATE_DESCRIBE=1" ;;
            esac
            IBP_BENCH_BIN=$bin gab c${v}_$i "$def" --only cora --no-synthetic
            IBP_BENCH_BIN=$bin gab s${v}_$i "$def" --only f32-sparse --no-real-data
            IBP_BENCH_BIN=$bin gab n${v}_$i "$def" --only "f32-normal$" --no-real-data
        done
    done
    for d in c s n; do
        args=()
        for i in $(seq 1 "${ROUNDS:-3}"); do
            for v in ${VARIANTS:-h c l cl}; do args+=("$v.$i=/tmp/ab/$d${v}_$i/bench.log"); done
        done
        python3 tools/ab_compare.py "${args[@]}" --what gathers
    done > /tmp/ab/compare.txt 2>&1
    cat /tmp/ab/compare.txt
    ab_pack switches
}
session_part "${1:-ab}" run_ab
