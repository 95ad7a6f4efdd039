#!/usr/bin/env bash
# Session 2026-12-04 (eleventh), call 2: Nsight Compute profiles of the short-rows kernel
# (ibp_decode_tiles_lean_short) on MiniLM V and K bf16 rows (A = 16), default build and with
# warp-level tiles (IBP_SHORT_WARP_TILES=1, 2 blocks of 32 rows per batch): where the cycles go
# (all stall reasons per issued instruction) once the block barriers are gone.
set -u
R=${OUT:-/tmp/out}; mkdir -p "$R"
NCU="$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -n 1)"
SECTIONS="--section SpeedOfLight --section Occupancy --section LaunchStats --section SchedulerStats --section WarpStateStats --section InstructionStats --section MemoryWorkloadAnalysis"
METRICS="--metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio"
for tag in base warp2; do
    defs=""; [ $tag = warp2 ] && defs="-DIBP_SHORT_WARP_TILES=1 -DIBP_SHORT_WARP_GROUPS=2"
    for entry in minilm-kv-v-bf16 minilm-kv-k-bf16; do
        s=$(date +%s)
        IBP_KERNEL_DEFINES="$defs" timeout 120 "$NCU" --clock-control none -k ibp_decode_tiles_lean_short -s 2 -c 1 $SECTIONS $METRICS \
            .devrun/ibp-gpu-bench --no-gathers --no-synthetic --data-dir .devrun/data --target-mib 64 --reps 3 --only "$entry" --align-log2 4 \
            > "$R/ncu-$tag-$entry.txt" 2>&1
        echo "ncu $tag $entry rc $? $(($(date +%s) - s)) s"
        grep -E "Duration|Registers Per|Achieved Occupancy|Issued Ipc Active|No Eligible|Executed Instructions  |stalled_(barrier|long_scoreboard|short_scoreboard|wait|not_selected|math|mio|branch|no_instruction)" "$R/ncu-$tag-$entry.txt" | head -n 20
    done
done
