#!/usr/bin/env bash
# Twenty-first session (2026-12-05): the H200 confirmation of IBP_LONG_LEAN_VECS=1 (GPU_NOTES entry 72
# found +1-4 % on Fashion-MNIST on an H100), then the full run with whatever won.
# Here: `bash tools/gpu-run.sh --prepare` (which now gzips the data slices: the carry limit); then on the
# device (carry .devrun), one call per part:
#   bash bench/results/gpu-2026-12-05-e/session.sh ab     # base vs lean1, 256 MiB and 8 MiB entries,
#                                                         # each interleaved twice (~3 min)
#     lean1s: lean1 with IBP_LONG_TILES_PER_SM=24, which makes the host cut the 256 MiB entries' rows
#     into segments with the same 122-row tiles (more than 2,807 tiles wanted on 132 SMs): all 8
#     warps of a block decode instead of 4 (entry 65 lost 7 % so with the per-word code of then);
#     lean1s3: lean1s at 3 blocks per SM (80 registers, 58 B of spill stores) with 56 KiB tiles
#     (73 rows, 3 row groups in 2 segments: 6 warps of each block decode, 18 per SM instead of 8)
#   bash bench/results/gpu-2026-12-05-e/session.sh gathers  # ibp_gather at 7 and 8 blocks per SM (~5 min)
#   bash bench/results/gpu-2026-12-05-e/session.sh full  # every GPU test and the bench (~8-9 min; for
#                                                         # bench/GPU_RESULTS.md on an H200: not run yet)
# (base: the flat path, the default when this ran, now -DIBP_LONG_LEAN_VECS=0.)
# Ran on an H100 (no H200 could be started; GPU_NOTES entry 73): ab (ab-fashion.tgz), gathers
# (ab-gathers.tgz), then with IBP_LONG_LEAN_VECS=1 every GPU test (`IBP_SKIP_BENCH=1 gpu-run.sh`,
# tests-lean1.tgz) and the decode of the synthetic and Cora entries base/lean1 (ab-decode-all.tgz);
# lean1 adopted, segments and 7-8 blocks per SM lost. full did not run (device time).
# Adopt IBP_LONG_LEAN_VECS=1 as the default only if it wins on the 256 MiB entries in both runs and
# does not lose on the 8 MiB ones.
set -u
for f in .devrun/data/*.npy.gz; do [ -f "$f" ] && gunzip -f "$f"; done  # (gzipped to fit the carry limit)
. tools/gpu-ab-lib.sh
# (full: the default build since IBP_LONG_LEAN_VECS=1 became the default, bed10dd; the ab above
# compared -DIBP_LONG_LEAN_VECS=1 against the default of then, the flat path, which is now
# -DIBP_LONG_LEAN_VECS=0.)
CANDIDATE=${CANDIDATE-}
case "${1:-ab}" in
ab)
    rm -rf /tmp/ab; mkdir -p /tmp/ab
    for i in 1 2; do
        ab base_$i "-DIBP_LONG_LEAN_VECS=0" $B --only fashion
        ab lean1_$i "-DIBP_LONG_LEAN_VECS=1" $B --only fashion
        IBP_LONG_TILES_PER_SM=24 ab lean1s_$i "-DIBP_LONG_LEAN_VECS=1" $B --only fashion
        IBP_TILE_BYTES=57344 IBP_LONG_TILES_PER_SM=40 ab lean1s3_$i "-DIBP_LONG_LEAN_VECS=1 -DIBP_LEAN_LONG_MIN_BLOCKS=3" $B --only fashion
        ab base8_$i "-DIBP_LONG_LEAN_VECS=0" $B --only fashion --target-mib 8
        ab lean18_$i "-DIBP_LONG_LEAN_VECS=1" $B --only fashion --target-mib 8
    done
    report "compare decode base lean1" "compare decode lean1 lean1s" "compare decode lean1 lean1s3" "compare decode base8 lean18"
    ;;
gathers)
    # Host zero-copy gathers with more resident warps for ibp_gather (IBP_GATHER_MIN_BLOCKS: the
    # blocks of 4 warps __launch_bounds__ asks ptxas to fit per SM; 6 = 80 registers, 40 B of spill
    # stores; 7 = 72 registers, 88 B; 8 = 64 registers, 556 B stored, 158 B reloaded): the Cora
    # profile (entry 72) has the rows of 16K-row batches latency-bound at 33 % occupancy. Batches of
    # 16K and 64K rows go through ibp_gather (4K of Cora through ibp_gather_split: the control).
    rm -rf /tmp/ab; mkdir -p /tmp/ab
    export GAB_BATCHES=4096,16384,65536
    for i in 1 2; do
        for v in "gbase:" "gmb7:-DIBP_GATHER_MIN_BLOCKS=7" "gmb8:-DIBP_GATHER_MIN_BLOCKS=8"; do
            n=${v%%:*} d=${v#*:}
            gab c${n}_$i "$d" --only cora
            gab d${n}_$i "$d" --only f32-normal-q4 --row-bytes 1024
        done
    done
    report "compare gathers cgbase cgmb7" "compare gathers cgbase cgmb8" \
        "compare gathers dgbase dgmb7" "compare gathers dgbase dgmb8"
    ;;
full)
    IBP_KERNEL_DEFINES="$CANDIDATE" timeout 540 bash tools/gpu-full-run.sh
    ;;
esac
