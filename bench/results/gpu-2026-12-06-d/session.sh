#!/usr/bin/env bash
# Twenty-ninth session (2026-12-06): the H200 run the twenty-eighth could not start, and the A/B of
# the padding check on aligned words (IBP_VL_PAD_WORDS=1, CPU-tested, never timed on a GPU).
# Here: `bash tools/gpu-run.sh --prepare`; on the device (carry .devrun), one call per part:
#   bash bench/results/gpu-2026-12-06-d/session.sh h200   # the card's name; the full run (every GPU
#       test, vector, sanitizer and the bench: tools/gpu-full-run.sh, full.tgz); then part pad
#   bash bench/results/gpu-2026-12-06-d/session.sh pad    # whole-entry decode / D2D of Fashion-MNIST's
#       256 MiB entries, interleaved twice: the long-rows kernel (IBP_LEAN_VEC=0), the vector-lanes
#       kernel as built by default (IBP_VL_PAD_WORDS=0) and with the padding check on aligned words
#       (-DIBP_VL_PAD_WORDS=1); every decode checked byte for byte by the bench (pad.tgz)
#   bash bench/results/gpu-2026-12-06-d/session.sh sums   # host zero-copy gathers of 1K and 4K rows
#       (ibp_gather_split's batches) of Cora and of 4 KiB f32 rows at 5 % non-zero, interleaved twice:
#       the default against -DIBP_SPLIT_SEGMENT_SUMS=1 (each warp sums its own segment's fields, the
#       group exchanges the sums); every gather checked by the bench (sums.tgz)
#   bash bench/results/gpu-2026-12-06-d/session.sh padtests  # gpu_decode's tests with
#       -DIBP_VL_PAD_WORDS=1, then memcheck on its vector-lane and corrupt-record tests
# Ran (2026-12-06): part h200 at 08:07 and 08:24 UTC (needs_h200) found no machine; on an H100
# (nvidia-h100-x1), part sums at 08:26 (sums.tgz) and parts pad and padtests at 08:29 (pad.tgz,
# pad-tests.log, pad-memcheck.log). Part h200 on an H200 at 08:37 on 73b1b51 (full.tgz:
# bench/GPU_RESULTS.md and conformance/results/gpu-h200.txt; pad-h200.tgz), then on the same
# machine the vector-lanes kernel's tiles (h200-tiles.tgz):
#   . tools/gpu-ab-lib.sh; rm -rf /tmp/ab; mkdir -p /tmp/ab; for i in 1 2; do ab v_$i "" $B --only fashion;
#   IBP_TILE_BYTES=43008 ab f_$i "" $B --only fashion; IBP_TILE_BYTES=32768 ab g_$i
#   "-DIBP_LEAN_VEC_MIN_BLOCKS=5" $B --only fashion; IBP_TILE_BYTES=57344 ab t_$i
#   "-DIBP_LEAN_VEC_MIN_BLOCKS=3" $B --only fashion; done; report "compare decode v f" "compare decode v g"
#   "compare decode v t"
# On an H100 at 09:07, blocks per launch of the vector-lanes kernel (blocks.tgz, blocks2.tgz):
#   . tools/gpu-ab-lib.sh; rm -rf /tmp/ab; mkdir -p /tmp/ab; for i in 1 2; do ab v_$i "" $B --only fashion;
#   IBP_TILE_MAX_BLOCKS=2112 ab h_$i "" $B --only fashion; IBP_TILE_MAX_BLOCKS=1056 ab e_$i "" $B --only
#   fashion; done; report "compare decode v h" "compare decode v e"
#   (blocks2.tgz: the same with IBP_TILE_MAX_BLOCKS=8448 (s) and 1000000 (o))
# Results: GPU_NOTES entry 81. Part sums times a switch since removed: apply
# tried-split-segment-sums.diff to run it again.
set -u
part=${1:-h200}
. tools/gpu-ab-lib.sh
run_pad() {
    rm -rf /tmp/ab; mkdir -p /tmp/ab
    for i in 1 2; do
        IBP_LEAN_VEC=0 ab d_$i "" $B --only fashion
        ab v_$i "" $B --only fashion
        ab p_$i "-DIBP_VL_PAD_WORDS=1" $B --only fashion
    done
    report "compare decode d v" "compare decode v p"
    mv "$R/ab.tgz" "$R/pad.tgz"
}
run_sums() {
    rm -rf /tmp/ab; mkdir -p /tmp/ab
    for i in 1 2; do
        GAB_BATCHES=1024,4096 gab c_$i "" --only cora
        GAB_BATCHES=1024,4096 gab s_$i "-DIBP_SPLIT_SEGMENT_SUMS=1" --only cora
        GAB_BATCHES=1024,4096 gab cf_$i "" --only f32-sparse --row-bytes 4096
        GAB_BATCHES=1024,4096 gab sf_$i "-DIBP_SPLIT_SEGMENT_SUMS=1" --only f32-sparse --row-bytes 4096
    done
    report "compare gathers c s" "compare gathers cf sf"
    mv "$R/ab.tgz" "$R/sums.tgz"
}
run_padtests() {
    IBP_KERNEL_DEFINES="-DIBP_VL_PAD_WORDS=1" IBP_REQUIRE_GPU=1 IBP_REQUIRE_NVRTC=1 timeout 200 \
        .devrun/tests/gpu_decode --test-threads=1 > "$R/pad-tests.log" 2>&1
    echo "gpu_decode (IBP_VL_PAD_WORDS=1) exit $?"; grep "test result\|FAILED\|panicked" "$R/pad-tests.log"
    IBP_KERNEL_DEFINES="-DIBP_VL_PAD_WORDS=1" IBP_REQUIRE_GPU=1 IBP_REQUIRE_NVRTC=1 timeout 150 \
        compute-sanitizer --tool memcheck --error-exitcode 9 \
        .devrun/tests/gpu_decode --test-threads=1 vector_lane corrupt_records > "$R/pad-memcheck.log" 2>&1
    echo "memcheck exit $?"; grep "test result\|ERROR SUMMARY" "$R/pad-memcheck.log"
}
case "$part" in
h200)
    nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1
    timeout 260 bash tools/gpu-full-run.sh
    run_pad
    ;;
pad)
    nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1
    run_pad
    ;;
sums)
    nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1
    run_sums
    ;;
padtests) run_padtests ;;
*)
    echo "unknown part $part" >&2
    exit 2
    ;;
esac
