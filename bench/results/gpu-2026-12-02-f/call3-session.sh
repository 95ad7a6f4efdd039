#!/usr/bin/env bash
# Session 2026-12-02 (fourth), call 3: whole-entry decode with short rows decoded in slices
# (slice_tile_rows): default (rows of <= 16 words, a lane per 64 output bytes: one per MiniLM V row),
# 32 and 16 bytes per lane, rows of <= 32 words at 16 bytes per lane, and off.
set -u
bash tools/gpu-ab.sh d1 ""
bash tools/gpu-ab.sh v32 "-DIBP_LEAN_LANE_BYTES=32"
bash tools/gpu-ab.sh v16 "-DIBP_LEAN_LANE_BYTES=16"
bash tools/gpu-ab.sh w32 "-DIBP_LEAN_THREAD_ROWS=32 -DIBP_LEAN_LANE_BYTES=16"
bash tools/gpu-ab.sh off "-DIBP_LEAN_THREAD_ROWS=0"
bash tools/gpu-ab.sh d2 ""
bash tools/gpu-ab.sh w32b "-DIBP_LEAN_THREAD_ROWS=32 -DIBP_LEAN_LANE_BYTES=16"
bash tools/gpu-ab.sh v32b "-DIBP_LEAN_LANE_BYTES=32"
