#!/usr/bin/env bash
# (Decode A/B runs through tools/gpu-ab.sh, the helper these scripts first wrote inline.)
# Session 2026-12-02 (third), call 1: every GPU test (no sanitizers), then whole-entry decode with
# 16-bit pairs on (default) and off (-DIBP_TILE_W16_PAIRS=0), twice each, interleaved.
set -u
R=$OUT
s=$(date +%s)
OUT=$R IBP_SKIP_BENCH=1 IBP_RUN_MEMCHECK=0 bash tools/gpu-run.sh > /tmp/tests-run.log 2>&1
echo "tests rc $? $(( $(date +%s) - s )) s"
grep -E "test result|FAILED|panicked" $R/tests.log | head -20
bash tools/gpu-ab.sh on1 ""
bash tools/gpu-ab.sh off1 "-DIBP_TILE_W16_PAIRS=0"
bash tools/gpu-ab.sh on2 ""
bash tools/gpu-ab.sh off2 "-DIBP_TILE_W16_PAIRS=0"
