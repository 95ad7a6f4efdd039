#!/usr/bin/env bash
# Thirty-second session (2026-12-06): the H200 run the thirtieth and thirty-first sessions could not
# get (the full run: every GPU test, vector, sanitizer and the bench with entry 82's kernel and
# entry 83's defaults), and Fashion-MNIST's whole-entry decode interleaved twice: the default (v),
# entry 82's 40 KiB tiles (f: IBP_VEC_TILE_FILL=0), the files encoded with the smallest masks (s:
# IBP_BENCH_FEWER_RUNS=off), and the next tile's stored lengths loaded and scanned during a tile's
# decode (n: -DIBP_TILE_NEXT_LENGTHS=1, GPU_NOTES idea 5a's lighter half).
# Here: `bash tools/gpu-run.sh --prepare`; on the device (carry .devrun), one call:
#   bash bench/results/gpu-2026-12-06-g/session.sh first  # the A/B (decode.tgz), then the full run
#       (full.tgz); a call cut short by the session's device budget still returns the A/B
#   bash bench/results/gpu-2026-12-06-g/session.sh ab     # the A/B alone
#   bash bench/results/gpu-2026-12-06-g/session.sh full   # the full run alone
#   bash bench/results/gpu-2026-12-06-g/session.sh h200   # v and f alone, then the full run (n lost on
#       the H100 and was removed: -DIBP_TILE_NEXT_LENGTHS=1 now changes nothing)
# Ran: part first on an H100 at 17:08 UTC (decode-h100.tgz, full-h100.tgz; GPU_NOTES entry 84).
set -u
part=${1:-ab}
. tools/gpu-ab-lib.sh
run_ab() {
    rm -rf /tmp/ab; mkdir -p /tmp/ab
    for i in 1 2; do
        ab v_$i "" $B --only fashion
        IBP_VEC_TILE_FILL=0 ab f_$i "" $B --only fashion
        [ "${1:-}" = vf ] && continue
        IBP_BENCH_FEWER_RUNS=off ab s_$i "" $B --only fashion
        ab n_$i "-DIBP_TILE_NEXT_LENGTHS=1" $B --only fashion
    done
    if [ "${1:-}" = vf ]; then report "compare decode f v"
    else report "compare decode f v" "compare decode s v" "compare decode n v"; fi
    mv "$R/ab.tgz" "$R/decode.tgz"
}
nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1
case "$part" in
ab) run_ab ;;
first) run_ab; timeout 280 bash tools/gpu-full-run.sh ;;
h200) run_ab vf; timeout 280 bash tools/gpu-full-run.sh ;;
full) timeout 280 bash tools/gpu-full-run.sh ;;
*) echo "unknown part $part" >&2; exit 2 ;;
esac
