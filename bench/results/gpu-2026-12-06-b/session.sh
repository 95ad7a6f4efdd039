#!/usr/bin/env bash
# Twenty-seventh session (2026-12-06): vector lanes, layout 3 (flat: a tile's rows as one run of
# 16-byte vectors, a warp's lanes on its next 32; kernels/ibp_gather/vector_lanes.cuh,
# vector_flat_rows; GPU_NOTES entry 79). Here: `bash tools/gpu-run.sh --prepare`; on the device
# (carry .devrun), one call per part:
#   bash bench/results/gpu-2026-12-06-b/session.sh first  # the card's name, then parts flat and lite
#   DEFINES=... bash bench/results/gpu-2026-12-06-b/session.sh lite  # gpu_decode's tests with DEFINES
#       (default -DIBP_LONG_VECTOR_LANES=4), then memcheck on its tile and corrupt-record tests
#   bash bench/results/gpu-2026-12-06-b/session.sh flat   # whole-entry decode / D2D of Fashion-MNIST's
#       256 MiB entries, interleaved twice: default (lane per row) against layout 3 at 2 blocks per
#       SM (84 KiB tiles) and layout 4 (two consecutive vectors a lane) at 2; every decode checked
#       byte for byte by the bench (~4 min)
#   DEFINES="-DIBP_LONG_VECTOR_LANES=3" bash bench/results/gpu-2026-12-06-b/session.sh tests
#       # every GPU test, vector and sanitizer with the switch on (tools/gpu-full-run.sh)
#   DEFINES=... TILE=... bash bench/results/gpu-2026-12-06-b/session.sh prof  # Nsight Compute, long-fashion
# Ran (2026-12-06, an H100: H200 and H100 tries from 03:45 to 04:45 UTC failed): part first at 04:51
# (ab-flat.tgz, lite-*-layout4.log); then, on the warm machine, DEFINES=-DIBP_LONG_VECTOR_LANES=3
# part lite (lite-*-layout3.log) and one more interleave inline: the default, layout 3 at 3 blocks
# per SM (IBP_TILE_BYTES=53248 -DIBP_LEAN_LONG_MIN_BLOCKS=3) and layout 3 (ab-f3.tgz; its report
# step looked for second runs that were not made: compare with tools/ab_compare.py d=d_1/bench.log
# f3=f3_1/bench.log f=f_1/bench.log --what decode). Part prof was not run. Results: GPU_NOTES entry 79.
set -u
part=${1:-first}
. tools/gpu-ab-lib.sh
run_flat() {
    rm -rf /tmp/ab; mkdir -p /tmp/ab
    for i in 1 2; do
        ab d_$i "" $B --only fashion
        ab f_$i "-DIBP_LONG_VECTOR_LANES=3" $B --only fashion
        ab p_$i "-DIBP_LONG_VECTOR_LANES=4" $B --only fashion
        tar czf "$R/ab-flat.tgz" -C /tmp ab  # (what has run, should the call end early)
    done
    report "compare decode d f" "compare decode d p"
    mv "$R/ab.tgz" "$R/ab-flat.tgz"
}
# The GPU decode tests with DEFINES (default layout 4) in the time a call has left: gpu_decode whole,
# then memcheck on its tile and corrupt-record tests (a short form of part tests).
run_lite() {
    local defs=${DEFINES:--DIBP_LONG_VECTOR_LANES=4}
    IBP_REQUIRE_GPU=1 IBP_REQUIRE_NVRTC=1 IBP_KERNEL_DEFINES="$defs" timeout 150 .devrun/tests/gpu_decode --test-threads=1 \
        > "$R/lite-tests.log" 2>&1
    echo "gpu_decode ($defs) exit $?"; grep "test result" "$R/lite-tests.log"
    IBP_REQUIRE_GPU=1 IBP_REQUIRE_NVRTC=1 IBP_KERNEL_DEFINES="$defs" timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 \
        .devrun/tests/gpu_decode --test-threads=1 corrupt_records tile long_rows image > "$R/lite-memcheck.log" 2>&1
    echo "memcheck ($defs) exit $?"; grep "test result\|ERROR SUMMARY" "$R/lite-memcheck.log"
}
case "$part" in
first)
    nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1
    run_flat
    run_lite
    ;;
lite) run_lite ;;
flat) run_flat ;;
tests)
    IBP_KERNEL_DEFINES="${DEFINES:-}" timeout 560 bash tools/gpu-full-run.sh
    ;;
prof)
    ${TILE:+env IBP_TILE_BYTES=$TILE} IBP_KERNEL_DEFINES="${DEFINES:-}" IBP_PROFILE_STALLS=2 IBP_PROFILE_ONLY=long-fashion bash tools/gpu-profile.sh
    ;;
*)
    echo "unknown part $part" >&2
    exit 2
    ;;
esac
