#!/usr/bin/env bash
# Thirty-fifth session (2026-12-07): ibp_gather_sparse (rows of chunks with sparse tables decoded as
# their exceptions over zeros, GPU_NOTES entry 88) against the kernels that decode every
# word (ibp_gather, ibp_gather_split) on the same entries, interleaved in each run
# (IBP_BENCH_AB_SPARSE=1: the "raw zc" column is the gather without sparse tables, so IBP/raw zc is
# sparse / every word), on Cora and the f32 rows at 5 % non-zero, batches of 1K-64K rows, twice;
# then the full run (tests, vectors, sanitizers, the results page).
# Here: `bash tools/gpu-run.sh --prepare`; on the device (carry .devrun):
#   bash bench/results/gpu-2026-12-07/session.sh first   # the A/B (sparse.tgz), then the full run
#   bash bench/results/gpu-2026-12-07/session.sh ab      # the A/B alone
#   bash bench/results/gpu-2026-12-07/session.sh full    # the full run alone (thirty-sixth session:
#                                                        # sparse gathers the default from 1 KiB rows)
set -u
. tools/gpu-ab-lib.sh
run_ab() {
    rm -rf /tmp/ab; mkdir -p /tmp/ab
    export GAB_BATCHES=1024,4096,16384,65536
    for i in 1 2; do
        IBP_BENCH_AB_SPARSE=1 gab c_$i "" --only cora --no-synthetic
        IBP_BENCH_AB_SPARSE=1 gab s_$i "" --only f32-sparse --no-real-data
    done
    grep -h -E "^(## |batch )" /tmp/ab/*/bench.log > /tmp/ab/rows.txt
    tar czf "$R/sparse.tgz" -C /tmp ab
}
session_part "${1:-ab}" run_ab
