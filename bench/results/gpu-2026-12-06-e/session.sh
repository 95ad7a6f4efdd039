#!/usr/bin/env bash
# Thirtieth session (2026-12-06): two switches of the vector-lanes kernel (Fashion-MNIST's decode,
# 0.41-0.44 of the D2D copy on the H200), built and checked on the CPU-run kernels, timed here:
#   IBP_VL_BALANCED=1      a tile's vectors shared among its warps in whole passes, not whole rows
#                          (52-row tiles: warps 0-6 ran 11 passes, warp 7 five; the end-of-tile
#                          barrier held 9 % of the kernel's stall samples, GPU_NOTES entry 80's profile)
#   IBP_VL_DEFER_CHECKS=1  each row's checks run after the warp's last pass, a lane per row, not in
#                          the pass where the row ends (one or two lanes of 32 at work)
# Here: `bash tools/gpu-run.sh --prepare`; on the device (carry .devrun), one call per part:
#   bash bench/results/gpu-2026-12-06-e/session.sh ab     # whole-entry decode / D2D of Fashion-MNIST's
#       256 MiB entries, interleaved twice: the default (v), each switch (b, c) and both (bc); every
#       decode checked byte for byte by the bench (ab.tgz)
#   bash bench/results/gpu-2026-12-06-e/session.sh tests  # gpu_decode's tests with both switches,
#       then memcheck on its vector-lane, padding and corrupt-record tests (tests.log, memcheck.log)
#   bash bench/results/gpu-2026-12-06-e/session.sh full   # tools/gpu-full-run.sh (full.tgz)
#   bash bench/results/gpu-2026-12-06-e/session.sh h200   # the card's name; the full run (every GPU
#       test, vector, sanitizer and the bench: tools/gpu-full-run.sh, full.tgz), then Fashion-MNIST's
#       decode interleaved twice: the default (v), the twenty-ninth session's (o: both switches 0,
#       tiles by records only at twice the rows) and 42 KiB tiles (t: IBP_TILE_BYTES=43008) (h200.tgz)
#   bash bench/results/gpu-2026-12-06-e/session.sh h200ab # the same decode A/B alone
#   bash bench/results/gpu-2026-12-06-e/session.sh more   # after both switches became the default:
#       the same decode, interleaved twice: the new default (v), the old one (o: both switches 0),
#       tiles sized by records wherever they hold more rows (g: IBP_TILE_RECORDS_GAIN=100) and
#       every block floor or ceil(tiles / blocks) tiles (e: -DIBP_TILE_EVEN_RUNS=1) (more.tgz)
# Ran (2026-12-06, an H100 each time): part ab at 10:31 (ab.tgz) and tests at 10:35 (tests.log,
# memcheck.log); part more at 10:38 (more.tgz); part full at 11:15 on 3035aa9 (full-h100.tgz,
# bench/GPU_RESULTS_H100.md). Parts h200 and h200ab (needs_h200) found no H200 in seven tries,
# 10:37-11:51 UTC. Results: GPU_NOTES entry 82.
set -u
part=${1:-ab}
. tools/gpu-ab-lib.sh
both="-DIBP_VL_BALANCED=1 -DIBP_VL_DEFER_CHECKS=1"
run_ab() {
    rm -rf /tmp/ab; mkdir -p /tmp/ab
    for i in 1 2; do
        ab v_$i "" $B --only fashion
        ab b_$i "-DIBP_VL_BALANCED=1" $B --only fashion
        ab c_$i "-DIBP_VL_DEFER_CHECKS=1" $B --only fashion
        ab bc_$i "$both" $B --only fashion
    done
    report "compare decode v b" "compare decode v c" "compare decode v bc"
}
run_tests() {
    IBP_KERNEL_DEFINES="$both" IBP_REQUIRE_GPU=1 IBP_REQUIRE_NVRTC=1 timeout 240 \
        .devrun/tests/gpu_decode --test-threads=1 > "$R/tests.log" 2>&1
    echo "gpu_decode ($both) exit $?"; grep "test result\|FAILED\|panicked" "$R/tests.log"
    IBP_KERNEL_DEFINES="$both" IBP_REQUIRE_GPU=1 IBP_REQUIRE_NVRTC=1 timeout 200 \
        compute-sanitizer --tool memcheck --error-exitcode 9 \
        .devrun/tests/gpu_decode --test-threads=1 vector_lane padding corrupt_records > "$R/memcheck.log" 2>&1
    echo "memcheck exit $?"; grep "test result\|ERROR SUMMARY" "$R/memcheck.log"
}
run_more() {
    rm -rf /tmp/ab; mkdir -p /tmp/ab
    for i in 1 2; do
        ab v_$i "" $B --only fashion
        ab o_$i "-DIBP_VL_BALANCED=0 -DIBP_VL_DEFER_CHECKS=0" $B --only fashion
        IBP_TILE_RECORDS_GAIN=100 ab g_$i "" $B --only fashion
        ab e_$i "-DIBP_TILE_EVEN_RUNS=1" $B --only fashion
    done
    report "compare decode o v" "compare decode v g" "compare decode v e"
    mv "$R/ab.tgz" "$R/more.tgz"
}
run_h200ab() {
    # (The default and 42 KiB tiles first, reported, then the old default: a call cut short by
    # the device budget still returns the first part.)
    rm -rf /tmp/ab; mkdir -p /tmp/ab
    for i in 1 2; do
        ab v_$i "" $B --only fashion
        IBP_TILE_BYTES=43008 ab t_$i "" $B --only fashion
    done
    report "compare decode v t"
    cp "$R/ab.tgz" "$R/h200.tgz"
    for i in 1 2; do
        IBP_TILE_RECORDS_GAIN=200 ab o_$i "-DIBP_VL_BALANCED=0 -DIBP_VL_DEFER_CHECKS=0" $B --only fashion
    done
    report "compare decode v t" "compare decode o v"
    mv "$R/ab.tgz" "$R/h200.tgz"
}
nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1
case "$part" in
h200) timeout 280 bash tools/gpu-full-run.sh; run_h200ab ;;
h200ab) run_h200ab ;;
ab) run_ab ;;
tests) run_tests ;;
abtests) run_ab; run_tests ;;
full) timeout 280 bash tools/gpu-full-run.sh ;;
more) run_more ;;
*) echo "unknown part $part" >&2; exit 2 ;;
esac
