#!/usr/bin/env bash
# Session 2026-12-02 (third), call 1: every GPU test (no sanitizers), then whole-entry decode with
# 16-bit pairs on (default) and off (-DIBP_TILE_W16_PAIRS=0), twice each, interleaved.
set -u
R=$OUT
s=$(date +%s)
OUT=$R IBP_SKIP_BENCH=1 IBP_RUN_MEMCHECK=0 bash tools/gpu-run.sh > /tmp/tests-run.log 2>&1
echo "tests rc $? $(( $(date +%s) - s )) s"
grep -E "test result|FAILED|panicked" $R/tests.log | head -20
mkdir -p /tmp/ab
run() {  # name defines
  s=$(date +%s)
  OUT=/tmp/ab/$1 IBP_SKIP_TESTS=1 IBP_RUN_MEMCHECK=0 IBP_BENCH_TIMEOUT=100 IBP_KERNEL_DEFINES="$2" \
    bash tools/gpu-run.sh --target-mib 256 --reps 9 --no-gathers > /tmp/ab/$1.run.log 2>&1
  echo "$1 rc $? $(( $(date +%s) - s )) s"
  tar czf $R/ab.tgz -C /tmp ab
}
run on1 ""
run off1 "-DIBP_TILE_W16_PAIRS=0"
run on2 ""
run off2 "-DIBP_TILE_W16_PAIRS=0"
