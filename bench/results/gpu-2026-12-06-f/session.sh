#!/usr/bin/env bash
# Thirty-first session (2026-12-06): the vector-lanes kernel's tiles fill the shared memory that keeps
# 4 of its blocks on an SM (device::vec_tiles_fill_smem: 45 KiB of guard, records and offsets, not
# records within 40 KiB with 4 KiB set aside for 1024 rows' offsets; Fashion-MNIST's tiles hold
# about 86 rows, not 77); files encoded with positions of at most two (else three) runs of free bits
# where that costs at most 0.1 % of a chunk's bytes (EncodeOptions::fewer_runs_within: the
# vector-lanes kernel then decodes Fashion-MNIST's words with two runs' work, not four; the default
# since the H100 A/B of part vf at 13:35, where r was that option and v the smallest masks); and the
# H200 run the thirtieth session could not get.
# Here: `bash tools/gpu-run.sh --prepare`; on the device (carry .devrun), one call per part:
#   bash bench/results/gpu-2026-12-06-f/session.sh h200   # the full run (every GPU test, vector,
#       sanitizer and the bench: tools/gpu-full-run.sh, full.tgz), then Fashion-MNIST's whole-entry
#       decode interleaved twice: the default (v), entry 82's tiles (f: IBP_VEC_TILE_FILL=0), the
#       files encoded with the smallest masks (s: IBP_BENCH_FEWER_RUNS=off), and twice more with the
#       twenty-ninth session's kernel (o: both entry-82 switches 0, tiles by records only at twice
#       the rows, 40 KiB) (decode.tgz)
#   bash bench/results/gpu-2026-12-06-f/session.sh ab     # that decode A/B alone
#   bash bench/results/gpu-2026-12-06-f/session.sh full   # the full run alone
#   bash bench/results/gpu-2026-12-06-f/session.sh vf     # v, f and s alone (no o), for an H100
#   bash bench/results/gpu-2026-12-06-f/session.sh first  # vf, then the full run (a call cut short by
#       the session's device budget still returns the A/B)
# Ran: part vf on an H100 at 13:35 (decode-h100.tgz), with r (IBP_BENCH_FEWER_RUNS=0.001) in place
# of s while v was the smallest masks. Parts h200, first and vf on the H200 and full and first on
# an H100 found no machine from 12:47 to 15:08 UTC (GPU_NOTES entry 83).
set -u
part=${1:-ab}
. tools/gpu-ab-lib.sh
run_ab() {
    # (v, f and s first, reported, then o: a call cut short by the device budget still returns the
    # first part.)
    rm -rf /tmp/ab; mkdir -p /tmp/ab
    for i in 1 2; do
        ab v_$i "" $B --only fashion
        IBP_VEC_TILE_FILL=0 ab f_$i "" $B --only fashion
        IBP_BENCH_FEWER_RUNS=off ab s_$i "" $B --only fashion
    done
    report "compare decode f v" "compare decode s v"
    cp "$R/ab.tgz" "$R/decode.tgz"
    [ "${1:-}" = vf ] && return
    for i in 1 2; do
        IBP_BENCH_FEWER_RUNS=off IBP_VEC_TILE_FILL=0 IBP_TILE_RECORDS_GAIN=200 ab o_$i "-DIBP_VL_BALANCED=0 -DIBP_VL_DEFER_CHECKS=0" $B --only fashion
    done
    report "compare decode f v" "compare decode s v" "compare decode o v"
    mv "$R/ab.tgz" "$R/decode.tgz"
}
nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1
case "$part" in
h200) timeout 280 bash tools/gpu-full-run.sh; run_ab ;;
ab) run_ab ;;
vf) run_ab vf ;;
first) run_ab vf; timeout 280 bash tools/gpu-full-run.sh ;;
full) timeout 280 bash tools/gpu-full-run.sh ;;
*) echo "unknown part $part" >&2; exit 2 ;;
esac
