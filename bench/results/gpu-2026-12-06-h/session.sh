#!/usr/bin/env bash
# Thirty-third session (2026-12-06): the H200 run that sessions thirty to thirty-two could not get
# (every GPU test, vector, sanitizer and the bench with entry 82's kernel and entry 83's defaults),
# and Fashion-MNIST's whole-entry decode interleaved twice: the default (v), entry 82's 40 KiB
# tiles (f: IBP_VEC_TILE_FILL=0) and vector-lanes layout 4 (l: -DIBP_LONG_VECTOR_LANES=4, two
# consecutive vectors a lane, the per-pass offsets, scan and carry shared by two vectors; 64
# registers, no spill; it lost to layout 3 in entry 79, before entry 82's balanced passes and
# deferred checks took per-pass work out of the loop).
# Here: `bash tools/gpu-run.sh --prepare`; on the device (carry .devrun), one call:
#   bash bench/results/gpu-2026-12-06-h/session.sh first  # the A/B (decode.tgz), then the full run
#       (full.tgz); a call cut short by the session's device budget still returns the A/B
#   bash bench/results/gpu-2026-12-06-h/session.sh ab     # the A/B alone
#   bash bench/results/gpu-2026-12-06-h/session.sh full   # the full run alone
set -u
part=${1:-ab}
. tools/gpu-ab-lib.sh
run_ab() {
    rm -rf /tmp/ab; mkdir -p /tmp/ab
    for i in 1 2; do
        ab v_$i "" $B --only fashion
        IBP_VEC_TILE_FILL=0 ab f_$i "" $B --only fashion
        ab l_$i "-DIBP_LONG_VECTOR_LANES=4" $B --only fashion
    done
    report "compare decode f v" "compare decode l v"
    mv "$R/ab.tgz" "$R/decode.tgz"
}
nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1
case "$part" in
ab) run_ab ;;
first) run_ab; timeout 280 bash tools/gpu-full-run.sh ;;
full) timeout 280 bash tools/gpu-full-run.sh ;;
*) echo "unknown part $part" >&2; exit 2 ;;
esac
