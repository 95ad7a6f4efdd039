#!/usr/bin/env bash
# Session 2026-12-02 (third), call 4: whole-entry decode with the lean kernel's raw rows copied several per pass
# (IBP_LEAN_RAW_BATCH=1, default) and one per warp step (=0), twice each, interleaved.
set -u
R=$OUT
mkdir -p /tmp/ab
run() {  # name defines
  s=$(date +%s)
  OUT=/tmp/ab/$1 IBP_SKIP_TESTS=1 IBP_RUN_MEMCHECK=0 IBP_BENCH_TIMEOUT=100 IBP_KERNEL_DEFINES="$2" \
    bash tools/gpu-run.sh --target-mib 256 --reps 9 --no-gathers > /tmp/ab/$1.run.log 2>&1
  echo "$1 rc $? $(( $(date +%s) - s )) s"
  tar czf $R/ab.tgz -C /tmp ab
}
run on1 ""
run off1 "-DIBP_LEAN_RAW_BATCH=0"
run on2 ""
run off2 "-DIBP_LEAN_RAW_BATCH=0"
