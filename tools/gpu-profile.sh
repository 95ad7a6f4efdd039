#!/usr/bin/env bash
# Nsight Compute profiles of the decode kernels (run on the GPU machine after tools/gpu-run.sh
# --prepare here; carry .devrun). One profiled launch per case, clocks left alone.
#
#   bash tools/gpu-profile.sh            # writes $OUT/ncu-*.txt
#
# Cases: whole-entry tile decode (ibp_decode_tiles) of synthetic f32 rows of 256 B, 1 KiB and 4 KiB
# (A = 16; 1 KiB rows at A = 128 too), real GloVe rows, Fashion-MNIST and MiniLM rows (16/32-bit words, A = 1,
# through ibp_decode_tiles_pairs), the lean tile kernel (ibp_decode_tiles_lean) on 256 B
# rows (q4 and f32-normal), GloVe and MiniLM KV rows (f32 K, bf16 V), the host zero-copy gather (ibp_gather) of 1K rows of 1 KiB and of 256 B, and the
# raw zero-copy gather of the same 1K rows of 256 B (the baseline's stall profile); the long-rows
# kernel on Fashion-MNIST (ibp_decode_tiles_lean_long) with its shared-memory bank conflicts, and the
# vector-lanes kernel there (ibp_decode_tiles_lean_vec, vec-fashion); host
# gathers of Cora rows, 1K (ibp_gather_split) and 16K (ibp_gather) rows.
# IBP_PROFILE_ONLY="tiles-1k gather-256-1k" profiles those cases; IBP_PROFILE_STALLS=1 adds the stall reasons per issued
# instruction and, from a saved report, the SASS instructions with the most stall samples
# ($OUT/ncu-<case>-sass.csv, summarised by tools/ncu_stalls.py; tools/ncu_sass_lines.py counts its
# executed instructions per source line). IBP_PROFILE_CACHE=none profiles each launch with the caches
# as the launches before left them (ncu's --cache-control; default all: flushed first, code included).
set -uo pipefail
D=.devrun
OUT="${OUT:-/tmp/ibp-gpu-out}"
mkdir -p "$OUT"
. tools/devrun-unpack.sh  # the data slices and kernel cache gpu-run.sh --prepare packed
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -e "$dir/libnvrtc.so.13" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" && break
done
NCU="$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -n 1)"
[ -n "$NCU" ] || { echo "ncu not found"; exit 1; }
SECTIONS="--section SpeedOfLight --section Occupancy --section LaunchStats --section SchedulerStats --section WarpStateStats --section InstructionStats --section MemoryWorkloadAnalysis"
if [ "${IBP_PROFILE_STALLS:-0}" != 0 ]; then  # 2: source counters without the stall metrics
    SECTIONS="$SECTIONS --section SourceCounters"
    STALL_METRICS="--metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio"
    [ "$IBP_PROFILE_STALLS" = 1 ] && SECTIONS="$SECTIONS $STALL_METRICS"
fi
profile() {  # name kernel skip bench-args...
    local name=$1 kernel=$2 skip=$3
    shift 3
    if [ -n "${IBP_PROFILE_ONLY:-}" ] && [[ " $IBP_PROFILE_ONLY " != *" $name "* ]]; then return; fi
    local save=()
    [ "${IBP_PROFILE_STALLS:-0}" != 0 ] && save=(-f -o "/tmp/ncu-$name")
    timeout "${IBP_PROFILE_TIMEOUT:-120}" "$NCU" --clock-control none --cache-control "${IBP_PROFILE_CACHE:-all}" -k "$kernel" -s "$skip" -c 1 $SECTIONS \
        "${save[@]}" "$D/ibp-gpu-bench" "$@" >"$OUT/ncu-$name.txt" 2>&1
    echo "ncu $name exit $?"
    if [ "${IBP_PROFILE_STALLS:-0}" != 0 ]; then
        "$NCU" -i "/tmp/ncu-$name.ncu-rep" --print-details all >>"$OUT/ncu-$name.txt" 2>&1
        "$NCU" -i "/tmp/ncu-$name.ncu-rep" --page source --print-source sass --csv >"$OUT/ncu-$name-sass.csv" 2>&1
        echo "ncu $name source page exit $?"
    fi
    grep -E "Duration|Registers Per|Achieved Occupancy|Issued Ipc Active|No Eligible|Warp Cycles Per Issued|Stall|L1/TEX Hit|Executed Instructions  " "$OUT/ncu-$name.txt" | head -n 30
}
common="--no-gathers --no-real-data --only f32-normal-q4 --align-log2 4 --target-mib 64 --reps 3"
profile tiles-256 ibp_decode_tiles 2 $common --row-bytes 256
profile tiles-1k ibp_decode_tiles 2 $common --row-bytes 1024
profile tiles-4k ibp_decode_tiles 2 $common --row-bytes 4096
profile tiles-1k-a128 ibp_decode_tiles 2 --no-gathers --no-real-data --only f32-normal-q4 --align-log2 7 --target-mib 64 --reps 3 --row-bytes 1024
real="--no-gathers --no-synthetic --data-dir $D/data --target-mib 64 --reps 3"
profile tiles-glove ibp_decode_tiles 2 $real --only glove-6b-50d-f32
# (Entries of 16/32-bit words decode through the pairs kernel, bench/GPU_NOTES.md entries 35 and 38.)
profile tiles-fashion ibp_decode_tiles_pairs 2 $real --only fashion-mnist-test
profile tiles-minilm-w32 ibp_decode_tiles_pairs 2 $real --only minilm-ffn-up-f32 --align-log2 0
profile lean-256 regex:^ibp_decode_tiles_lean 2 $common --row-bytes 256
profile lean-glove regex:^ibp_decode_tiles_lean 2 $real --only glove-6b-50d-f32
profile lean-kv-f32 regex:^ibp_decode_tiles_lean 2 $real --only minilm-kv-k-f32 --align-log2 4
profile lean-normal-256 regex:^ibp_decode_tiles_lean 2 --no-gathers --no-real-data --only 'f32-normal$' --align-log2 4 --target-mib 64 --reps 3 --row-bytes 256
profile lean-kv-bf16 regex:^ibp_decode_tiles_lean 2 $real --only minilm-kv-v-bf16 --align-log2 4
# The long-rows kernel on Fashion-MNIST, with its shared-memory loads' bank conflicts (GPU_NOTES entry 63).
# (ncu takes one --metrics: this case's replace the stall metrics of IBP_PROFILE_STALLS=1, whose
# source counters and stall samples per instruction it keeps.)
SECTIONS_SAVED=$SECTIONS
[ -n "${STALL_METRICS:-}" ] && SECTIONS="${SECTIONS/" $STALL_METRICS"/}"
SECTIONS="$SECTIONS --metrics smsp__inst_executed_op_shared_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed.sum"
profile long-fashion ibp_decode_tiles_lean_long 2 $real --only fashion-mnist-test
# The vector-lanes kernel on the same rows (their own kernel since GPU_NOTES entry 80).
profile vec-fashion ibp_decode_tiles_lean_vec 2 $real --only fashion-mnist-test
SECTIONS=$SECTIONS_SAVED
profile tiles-sparse-256 ibp_decode_tiles 2 --no-gathers --no-real-data --only f32-sparse --align-log2 4 --target-mib 64 --reps 3 --row-bytes 256
gather="--no-real-data --only f32-normal-q4 --align-log2 4 --target-mib 64 --reps 3 --batches 1024"
profile gather-1k-host ibp_gather 2 $gather --row-bytes 1024
profile gather-256-1k ibp_gather 2 $gather --row-bytes 256
profile raw-256-1k ibp_raw_gather 2 $gather --row-bytes 256
# Host gathers of Cora rows (96 % saved: bound by the decode, GPU_NOTES entries 44 and 71): 1K rows
# through ibp_gather_split (4 warps per row), 16K through ibp_gather (5-6 rows per warp). Since entry
# 89 Cora's gathers take ibp_gather_sparse, so these two profile a launch only with
# IBP_GATHER_SPARSE=0 in the environment.
cora="--no-synthetic --data-dir $D/data --only cora-features-f32$ --align-log2 4 --target-mib 64 --reps 3"
profile gather-cora-1k ibp_gather_split 2 $cora --batches 1024
# The same 1K rows through ibp_gather_sparse (the default for Cora since GPU_NOTES entry 89), and
# the "ideal" copy of their records (the bench's baseline) for its duration.
profile gather-cora-1k-sparse ibp_gather_sparse 2 $cora --batches 1024
profile copy-cora-1k ibp_copy_records 2 $cora --batches 1024
# The same at 4K rows, where 1,456 of ibp_gather_sparse's 2,640 resident warps take two rows
# (GPU_NOTES entry 93: 0.87-0.90 of ideal against the no-decode bound's 0.96-0.97).
profile gather-cora-4k-sparse ibp_gather_sparse 2 $cora --batches 4096
profile copy-cora-4k ibp_copy_records 2 $cora --batches 4096
profile gather-cora-16k ibp_gather 2 $cora --batches 16384
