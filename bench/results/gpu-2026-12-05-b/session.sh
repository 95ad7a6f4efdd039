#!/usr/bin/env bash
# RUN (part ab, call 1: the direct mode lost, 0.19 against 0.34 of the D2D copy; GPU_NOTES entry 69).
# The direct mode is not in the code now: to run this again, apply tried-long-direct.diff first.
# Device calls of the session of 2026-12-05 (eighteenth; GPU_NOTES entry 69): the long-rows kernel's
# direct mode (records read from the payload through a register window per lane, no tile staged in
# shared memory, 256-row tiles with every warp decoding) against the staged tiles. Here first:
# `bash tools/gpu-run.sh --prepare` and `gzip -f .devrun/data/cora-features-f32.npy`; then on the
# device (carry .devrun), one call per part:
#   bash bench/results/gpu-2026-12-05-b/session.sh ab     # Fashion-MNIST decode A/B (~6-8 min)
#   bash bench/results/gpu-2026-12-05-b/session.sh full   # tests, conformance, ibp verify --gpu, bench
# ab: whole-entry decode of Fashion-MNIST (256 MiB entries: 1,337 direct tiles; 8 MiB entries, which
# keep the segments of entry 65 in every variant), each variant interleaved twice:
#   staged:  IBP_LONG_DIRECT=0 (the tiles of entry 64, as before);
#   direct:  IBP_LONG_DIRECT=1 (the new default), 128 registers, 2 blocks (16 warps) per SM;
#   direct4: the same built with -DIBP_LEAN_LONG_MIN_BLOCKS=4: 64 registers (34 B of spills), 4 blocks
#            (32 warps) per SM (the staged tiles still fit 2 blocks per SM in shared memory).
set -u
. tools/gpu-ab-lib.sh  # compare, report; R and B (the helpers this script defined, now shared)
# ab NAME DIRECT DEFINES [BENCH ARGS...]: one decode-only run (tools/gpu-ab.sh) into /tmp/ab/NAME.
ab() {
    local name=$1 direct=$2 defines=$3
    shift 3
    env IBP_LONG_DIRECT="$direct" OUT="$R" IBP_BENCH_TIMEOUT=150 bash tools/gpu-ab.sh "$name" "$defines" $B "$@" |
        tee -a /tmp/ab/summary.txt
}
case "${1:-ab}" in
ab)
    rm -rf /tmp/ab; mkdir -p /tmp/ab
    for i in 1 2; do
        ab staged_$i 0 "" --only fashion
        ab direct_$i 1 "" --only fashion
        ab direct4_$i 1 "-DIBP_LEAN_LONG_MIN_BLOCKS=4" --only fashion
        ab staged8_$i 0 "" --only fashion --target-mib 8
        ab direct8_$i 1 "" --only fashion --target-mib 8
    done
    report "compare decode staged direct" "compare decode staged direct4" "compare decode direct direct4" \
        "compare decode staged8 direct8"
    ;;
full)
    timeout 560 bash tools/gpu-full-run.sh
    ;;
esac
