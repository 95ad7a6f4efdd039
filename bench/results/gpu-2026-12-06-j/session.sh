#!/usr/bin/env bash
# Thirty-fourth session (2026-12-06), second call: ibp_gather_split_pairs (paired passes: a grid of
# one wave, each group of two warps two requests a pass, both records requested before either is
# decoded) against ibp_gather_split's two waves, on the host gathers of the decode-bound entries
# (Cora, f32 at 5 % non-zero) at 3K and 4K-row batches, where the auto policy takes 2 warps a row
# in two waves; interleaved twice (c/s: Cora / sparse; 0: IBP_SPLIT_PAIRS=0, 1: =1). Then the full run.
# Ran on an H100 (part ab, pairs-h100.tgz): paired passes lost 10-20 % and were taken out again
# (GPU_NOTES entry 87; the kernel in tried-split-pairs.diff, which this script needs applied).
# Here: `bash tools/gpu-run.sh --prepare`; on the device (carry .devrun):
#   bash bench/results/gpu-2026-12-06-j/session.sh first   # the A/B (pairs.tgz), then the full run
#   bash bench/results/gpu-2026-12-06-j/session.sh ab      # the A/B alone
set -u
. tools/gpu-ab-lib.sh
run_ab() {
    rm -rf /tmp/ab; mkdir -p /tmp/ab
    export GAB_BATCHES=3072,4096
    for i in 1 2; do
        for p in 0 1; do
            IBP_SPLIT_PAIRS=$p gab c${p}_$i "" --only cora --no-synthetic
            IBP_SPLIT_PAIRS=$p gab s${p}_$i "" --only f32-sparse --no-real-data
        done
    done
    report "compare gathers c0 c1" "compare gathers s0 s1"
    mv "$R/ab.tgz" "$R/pairs.tgz"
}
session_part "${1:-ab}" run_ab
