#!/usr/bin/env bash
# Session 2026-12-02 (fifth), call 3: the full run (every GPU test, conformance vectors, the
# benchmark, compute-sanitizer) of the kernels with rows of <= 32 words and <= 64 B at A = 1 decoded
# one per thread by default (IBP_LEAN_THREAD_A1_BYTES=64).
set -u
s=$(date +%s)
IBP_BENCH_TIMEOUT=300 IBP_SANITIZER_TIMEOUT=80 bash tools/gpu-run.sh --target-mib 256 --reps 9 > $OUT/run.log 2>&1
echo "full rc $? $(( $(date +%s) - s )) s"
tail -30 $OUT/run.log
