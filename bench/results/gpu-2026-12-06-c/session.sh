#!/usr/bin/env bash
# Twenty-eighth session (2026-12-06): the vector-lanes kernel of its own (ibp_decode_tiles_lean_vec:
# vector lanes alone, no per-position table, 3 blocks per SM, 56 KiB tiles; GPU_NOTES entry 80).
# Here: `bash tools/gpu-run.sh --prepare`; on the device (carry .devrun), one call per part:
#   bash bench/results/gpu-2026-12-06-c/session.sh first   # the card's name, then parts ab and lite
#   bash bench/results/gpu-2026-12-06-c/session.sh ab      # whole-entry decode / D2D of Fashion-MNIST's
#       256 MiB entries, interleaved three times: the long-rows kernel (IBP_LEAN_VEC=0, the default
#       before), the vector-lanes kernel (default: 3 blocks per SM, 56 KiB tiles), the same with 52 KiB
#       tiles, and built for 4 blocks per SM with 42 KiB tiles; then the bf16 entries with and without
#       IBP_LEAN_VEC=2 (the vector-lanes kernel wherever it takes every chunk), twice. Every decode is
#       checked byte for byte by the bench.
#   bash bench/results/gpu-2026-12-06-c/session.sh ab2     # after 4 blocks per SM with 40 KiB tiles became
#       the default: Fashion-MNIST, interleaved twice: the long-rows kernel, the default, 44 KiB tiles,
#       and 5 blocks per SM with 32 KiB tiles; then part lite
#   bash bench/results/gpu-2026-12-06-c/session.sh lite    # gpu_decode's tests (default build), then
#       memcheck on its vector-lane, image, tile and corrupt-record tests
#   bash bench/results/gpu-2026-12-06-c/session.sh tests   # every GPU test, vector, sanitizer and the
#       bench (tools/gpu-full-run.sh)
#   bash bench/results/gpu-2026-12-06-c/session.sh h200    # part tests; layout 4 in the vector-lanes
#       kernel at 4 and at 3 blocks per SM against the default and the long-rows kernel (Fashion-MNIST,
#       twice, ab3.tgz); then Nsight Compute on the vector-lanes kernel (Fashion-MNIST, stall reasons
#       and SASS: tools/gpu-profile.sh vec-fashion)
#   bash bench/results/gpu-2026-12-06-c/session.sh ab3     # part h200 less its full run
#   bash bench/results/gpu-2026-12-06-c/session.sh h200b   # part tests, then the padding check on
#       aligned words (IBP_VL_PAD_WORDS) against the one before and the long-rows kernel (ab4.tgz)
#   bash bench/results/gpu-2026-12-06-c/session.sh ab4     # that A/B, then part lite
# Ran (2026-12-06, an H100 each time, asked as nvidia-h200): part first at 06:16 (ab.tgz,
# lite-*-vec3.log: the kernel at 3 blocks per SM), part ab2 at 06:28 after 4 blocks with 40 KiB tiles
# became the default (ab2.tgz, lite-*.log), part tests at 06:31 (full.tgz: bench/GPU_RESULTS_H100.md).
# Part ab3 at 06:48 (ab3.tgz, ncu-vec-fashion.*). Four tries on an H200 (needs_h200, parts tests,
# h200, h200b) found no machine; parts h200b and ab4 (IBP_VL_PAD_WORDS) never ran: the device time
# left could not start another machine. Results: GPU_NOTES entry 80.
set -u
part=${1:-first}
. tools/gpu-ab-lib.sh
run_ab() {
    rm -rf /tmp/ab; mkdir -p /tmp/ab
    for i in 1 2 3; do
        IBP_LEAN_VEC=0 ab d_$i "" $B --only fashion
        ab v_$i "" $B --only fashion
        IBP_TILE_BYTES=53248 ab t_$i "" $B --only fashion
        IBP_TILE_BYTES=43008 ab f_$i "-DIBP_LEAN_VEC_MIN_BLOCKS=4" $B --only fashion
    done
    for i in 1 2; do
        ab k_$i "" $B --only bf16
        IBP_LEAN_VEC=2 ab e_$i "" $B --only bf16
    done
    report "compare decode d v" "compare decode v t" "compare decode v f" "compare decode k e" \
        "python3 tools/ab_compare.py d3=/tmp/ab/d_3/bench.log v3=/tmp/ab/v_3/bench.log t3=/tmp/ab/t_3/bench.log f3=/tmp/ab/f_3/bench.log --what decode"
}
run_ab2() {
    rm -rf /tmp/ab; mkdir -p /tmp/ab
    for i in 1 2; do
        IBP_LEAN_VEC=0 ab d_$i "" $B --only fashion
        ab v_$i "" $B --only fashion
        IBP_TILE_BYTES=45056 ab w_$i "" $B --only fashion
        IBP_TILE_BYTES=32768 ab g_$i "-DIBP_LEAN_VEC_MIN_BLOCKS=5" $B --only fashion
    done
    report "compare decode d v" "compare decode v w" "compare decode v g"
    mv "$R/ab.tgz" "$R/ab2.tgz"
}
# Layout 4 (two consecutive vectors a lane) in the vector-lanes kernel, at 4 blocks per SM (64
# registers, 4 bytes of spill) and at 3 with 56 KiB tiles (77 registers), against the default and
# the long-rows kernel; Fashion-MNIST, interleaved twice.
run_ab3() {
    rm -rf /tmp/ab; mkdir -p /tmp/ab
    for i in 1 2; do
        IBP_LEAN_VEC=0 ab d_$i "" $B --only fashion
        ab v_$i "" $B --only fashion
        ab p_$i "-DIBP_LONG_VECTOR_LANES=4" $B --only fashion
        IBP_TILE_BYTES=57344 ab q_$i "-DIBP_LONG_VECTOR_LANES=4 -DIBP_LEAN_VEC_MIN_BLOCKS=3" $B --only fashion
    done
    report "compare decode d v" "compare decode v p" "compare decode v q"
    mv "$R/ab.tgz" "$R/ab3.tgz"
}
# The padding check on aligned words (IBP_VL_PAD_WORDS, the default) against the one before (=0) and
# the long-rows kernel; Fashion-MNIST, interleaved twice.
run_ab4() {
    rm -rf /tmp/ab; mkdir -p /tmp/ab
    for i in 1 2; do
        IBP_LEAN_VEC=0 ab d_$i "" $B --only fashion
        ab v_$i "" $B --only fashion
        ab o_$i "-DIBP_VL_PAD_WORDS=0" $B --only fashion
    done
    report "compare decode d v" "compare decode o v"
    mv "$R/ab.tgz" "$R/ab4.tgz"
}
run_lite() {
    IBP_REQUIRE_GPU=1 IBP_REQUIRE_NVRTC=1 timeout 200 .devrun/tests/gpu_decode --test-threads=1 > "$R/lite-tests.log" 2>&1
    echo "gpu_decode exit $?"; grep "test result\|vector-lane\|image rows\|FAILED\|panicked" "$R/lite-tests.log"
    IBP_REQUIRE_GPU=1 IBP_REQUIRE_NVRTC=1 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 \
        .devrun/tests/gpu_decode --test-threads=1 vector_lane corrupt_records tile image > "$R/lite-memcheck.log" 2>&1
    echo "memcheck exit $?"; grep "test result\|ERROR SUMMARY" "$R/lite-memcheck.log"
}
case "$part" in
first)
    nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1
    run_ab
    run_lite
    ;;
ab) run_ab ;;
ab2)
    run_ab2
    run_lite
    ;;
lite) run_lite ;;
tests) timeout 570 bash tools/gpu-full-run.sh ;;
h200b)
    # The full run, then the padding-check A/B.
    nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1
    timeout 250 bash tools/gpu-full-run.sh
    run_ab4
    ;;
ab4)
    nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1
    run_ab4
    run_lite
    ;;
ab3)
    # Part h200 less its full run (for an H100 while no H200 comes).
    nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1
    run_ab3
    IBP_PROFILE_STALLS=1 IBP_PROFILE_ONLY=vec-fashion IBP_PROFILE_TIMEOUT=100 timeout 120 bash tools/gpu-profile.sh
    ;;
h200)
    # The full run, an A/B of layout 4 in the vector-lanes kernel, then Nsight Compute on it.
    nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1
    timeout 250 bash tools/gpu-full-run.sh
    run_ab3
    IBP_PROFILE_STALLS=1 IBP_PROFILE_ONLY=vec-fashion IBP_PROFILE_TIMEOUT=100 timeout 120 bash tools/gpu-profile.sh
    ;;
*)
    echo "unknown part $part" >&2
    exit 2
    ;;
esac
