#!/usr/bin/env bash
# Session 2026-12-02 (fourth), call 1: every GPU test (no sanitizers), then whole-entry decode with
# rows of <= 32 words decoded one per thread (IBP_LEAN_THREAD_ROWS=32, default), only rows of <= 16
# words (=16) and off (=0).
set -u
R=$OUT
s=$(date +%s)
OUT=$R IBP_SKIP_BENCH=1 IBP_RUN_MEMCHECK=0 bash tools/gpu-run.sh > /tmp/tests-run.log 2>&1
echo "tests rc $? $(( $(date +%s) - s )) s"
grep -E "test result|FAILED|panicked" $R/tests.log | head -20
cp /tmp/tests-run.log $R/ 2>/dev/null
bash tools/gpu-ab.sh on1 ""
bash tools/gpu-ab.sh off1 "-DIBP_LEAN_THREAD_ROWS=0"
bash tools/gpu-ab.sh t16 "-DIBP_LEAN_THREAD_ROWS=16"
bash tools/gpu-ab.sh on2 ""
bash tools/gpu-ab.sh off2 "-DIBP_LEAN_THREAD_ROWS=0"
