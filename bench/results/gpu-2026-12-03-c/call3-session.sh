#!/usr/bin/env bash
# Session 2026-12-03 (third), call 3: the full run (every GPU test, conformance vectors, the
# benchmark, compute-sanitizer) on 812bf71 (the decode-bound split rule of entry 44 and the GPU
# cost's record weight of entry 45).
set -u
R=$OUT
s=$(date +%s)
OUT=$R IBP_BENCH_TIMEOUT=330 IBP_SANITIZER_TIMEOUT=120 \
    bash tools/gpu-run.sh --target-mib 256 --reps 9 > $R/run.log 2>&1
echo "full rc $? $(( $(date +%s) - s )) s"
tail -4 $R/run.log
cd $R && tar czf logs.tgz run.log tests.log replay-*.log memcheck.log bench.log 2>/dev/null; ls
