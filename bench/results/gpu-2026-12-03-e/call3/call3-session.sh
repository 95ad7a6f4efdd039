#!/usr/bin/env bash
# Session 2026-12-03 (fifth), call 3: the bench of 09d0682 (whole-entry decode timed and checked by
# one helper) on two datasets with re-laid loads, quick.
set -u
gunzip -f .devrun/data/cora-features-f32.npy.gz
OUT=$OUT IBP_SKIP_TESTS=1 IBP_RUN_MEMCHECK=0 IBP_BENCH_TIMEOUT=200 bash tools/gpu-run.sh --quick --reps 3 --only minilm-kv-v-bf16 --batches 1024 > $OUT/run.log 2>&1
echo "rc $?"; grep -E "whole entry|re-laid at load|decode/D2D|relaid" $OUT/bench.log | head -20
