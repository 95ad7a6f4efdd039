#!/usr/bin/env bash
# Session 2026-12-02 (fifth), call 2: whole-entry decode A/B of pair rows decoded in slices
# (IBP_PAIR_SERIAL=1, 8 and 4 pairs per lane), short rows of <= 32 words and <= 64 B at A = 1 on the
# thread path (IBP_LEAN_THREAD_A1_BYTES=64, no unroll), and the thread path's words through one
# select instead of two paths (IBP_LEAN_THREAD_SELECT=1).
set -u
bash tools/gpu-ab.sh base1 ""
bash tools/gpu-ab.sh ps8a "-DIBP_PAIR_SERIAL=1"
bash tools/gpu-ab.sh ps4a "-DIBP_PAIR_SERIAL=1 -DIBP_PAIR_SLICE=4"
bash tools/gpu-ab.sh a1sel "-DIBP_LEAN_THREAD_A1_BYTES=64 -DIBP_LEAN_THREAD_SELECT=1"
bash tools/gpu-ab.sh a1 "-DIBP_LEAN_THREAD_A1_BYTES=64"
bash tools/gpu-ab.sh base2 ""
bash tools/gpu-ab.sh ps8b "-DIBP_PAIR_SERIAL=1"
bash tools/gpu-ab.sh sel "-DIBP_LEAN_THREAD_SELECT=1"
bash tools/gpu-ab.sh ps4b "-DIBP_PAIR_SERIAL=1 -DIBP_PAIR_SLICE=4"
