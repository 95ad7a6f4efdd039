#!/usr/bin/env bash
# Session 2026-12-02 (fourth), call 2: the NVRTC compile tests, then whole-entry decode (real data
# this time) with rows of <= 32 words decoded one per thread (IBP_LEAN_THREAD_ROWS=32), rows of <= 16
# words (=16) and off (=0).
set -u
R=$OUT
.devrun/tests/nvrtc_compile > $R/nvrtc-tests.log 2>&1; echo "nvrtc_compile rc $?"
grep -E "test result|FAILED|panicked" $R/nvrtc-tests.log | head
bash tools/gpu-ab.sh t16a "-DIBP_LEAN_THREAD_ROWS=16"
bash tools/gpu-ab.sh offa "-DIBP_LEAN_THREAD_ROWS=0"
bash tools/gpu-ab.sh t32a ""
bash tools/gpu-ab.sh t16b "-DIBP_LEAN_THREAD_ROWS=16"
bash tools/gpu-ab.sh offb "-DIBP_LEAN_THREAD_ROWS=0"
