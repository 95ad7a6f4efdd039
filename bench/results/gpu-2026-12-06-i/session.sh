#!/usr/bin/env bash
# Thirty-fourth session (2026-12-06): the same run as gpu-2026-12-06-h/session.sh (which no device
# started for), written with tools/gpu-ab-lib.sh's interleave and session_part: Fashion-MNIST's
# whole-entry decode interleaved twice, the default (v), entry 82's 40 KiB tiles
# (f: IBP_VEC_TILE_FILL=0) and vector-lanes layout 4 (l: -DIBP_LONG_VECTOR_LANES=4), then the full
# run (every GPU test, vector, sanitizer and the bench).
# Here: `bash tools/gpu-run.sh --prepare`; on the device (carry .devrun), one call:
#   bash bench/results/gpu-2026-12-06-i/session.sh first  # the A/B (decode.tgz), then the full run
#   bash bench/results/gpu-2026-12-06-i/session.sh ab     # the A/B alone
#   bash bench/results/gpu-2026-12-06-i/session.sh full   # the full run alone
set -u
. tools/gpu-ab-lib.sh
run_ab() {
    interleave ab 2 --only fashion -- "v||" "f|IBP_VEC_TILE_FILL=0|" "l||-DIBP_LONG_VECTOR_LANES=4"
    report "compare decode f v" "compare decode l v"
    mv "$R/ab.tgz" "$R/decode.tgz"
}
session_part "${1:-ab}" run_ab
