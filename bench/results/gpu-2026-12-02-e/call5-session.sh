#!/usr/bin/env bash
# Session 2026-12-02 (third), call 5: the full run on the final kernels (every GPU test, the
# conformance vectors, the sanitizers, the bench), then whole-entry decode with lean phase B walking
# rows by ballot bits (IBP_LEAN_TODO_LOOP=1, default) and in order (=0), once each.
set -u
R=$OUT
s=$(date +%s)
IBP_BENCH_TIMEOUT=300 IBP_SANITIZER_TIMEOUT=80 bash tools/gpu-run.sh --target-mib 256 --reps 9 > /tmp/full-run.log 2>&1
echo "full rc $? $(( $(date +%s) - s )) s"
tail -8 /tmp/full-run.log
mkdir -p /tmp/ab
run() {  # name defines
  s=$(date +%s)
  OUT=/tmp/ab/$1 IBP_SKIP_TESTS=1 IBP_RUN_MEMCHECK=0 IBP_BENCH_TIMEOUT=100 IBP_KERNEL_DEFINES="$2" \
    bash tools/gpu-run.sh --target-mib 256 --reps 9 --no-gathers > /tmp/ab/$1.run.log 2>&1
  echo "$1 rc $? $(( $(date +%s) - s )) s"
  tar czf $R/ab.tgz -C /tmp ab
}
run todo ""
run inorder "-DIBP_LEAN_TODO_LOOP=0"
