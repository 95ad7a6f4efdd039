#!/usr/bin/env bash
# Twenty-sixth session (2026-12-06): vector lanes for the long-rows kernel (IBP_LONG_VECTOR_LANES,
# kernels/ibp_gather/vector_lanes.cuh; GPU_NOTES entry 78). Here: `bash tools/gpu-run.sh --prepare`;
# on the device (carry .devrun), one call per part:
#   bash bench/results/gpu-2026-12-06-a/session.sh first  # the card's name, then part vl
#   bash bench/results/gpu-2026-12-06-a/session.sh vl     # whole-entry decode / D2D of Fashion-MNIST's
#       256 MiB entries, interleaved twice: default (lane per row) against vector lanes, layout 1
#       (a lane's two vectors adjacent) and layout 2 (vectors l and l + 32: whole-line stores) at 2
#       blocks per SM (84 KiB tiles), and layout 2 at 3 (IBP_LEAN_LONG_MIN_BLOCKS=3, 52 KiB tiles);
#       every decode checked byte for byte by the bench (~4 min)
#   DEFINES="-DIBP_LONG_VECTOR_LANES=2" bash bench/results/gpu-2026-12-06-a/session.sh tests
#       # every GPU test, vector and sanitizer with the switch on (tools/gpu-full-run.sh)
# Ran (2026-12-06, an H100: the H200 and H100 tries from 00:45 to 01:55 UTC failed): part first
# (ab-vl.tgz); then, inline on the warm machine, the default against layout 2 at 3 and 4 blocks per
# SM and the lane-per-row kernel at 4 (ab-vl4.tgz: d, w3 with IBP_TILE_BYTES=53248, w4 and x4 with
# IBP_TILE_BYTES=36864 and -DIBP_LEAN_LONG_MIN_BLOCKS=4), and Nsight Compute of the default and of
# w3 (tools/gpu-profile.sh, IBP_PROFILE_ONLY=long-fashion IBP_PROFILE_STALLS=2; prof/). Part tests
# was not run. Results: GPU_NOTES entry 78.
set -u
part=${1:-first}
. tools/gpu-ab-lib.sh
run_vl() {
    rm -rf /tmp/ab; mkdir -p /tmp/ab
    for i in 1 2; do
        ab d_$i "" $B --only fashion
        ab w_$i "-DIBP_LONG_VECTOR_LANES=2" $B --only fashion
        IBP_TILE_BYTES=53248 ab w3_$i "-DIBP_LONG_VECTOR_LANES=2 -DIBP_LEAN_LONG_MIN_BLOCKS=3" $B --only fashion
        ab v_$i "-DIBP_LONG_VECTOR_LANES=1" $B --only fashion
        tar czf "$R/ab-vl.tgz" -C /tmp ab  # (what has run, should the call end early)
    done
    report "compare decode d w" "compare decode d w3" "compare decode d v"
    mv "$R/ab.tgz" "$R/ab-vl.tgz"
}
case "$part" in
first)
    nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1
    run_vl
    ;;
vl) run_vl ;;
tests)
    IBP_KERNEL_DEFINES="${DEFINES:-}" timeout 560 bash tools/gpu-full-run.sh
    ;;
*)
    echo "unknown part $part" >&2
    exit 2
    ;;
esac
