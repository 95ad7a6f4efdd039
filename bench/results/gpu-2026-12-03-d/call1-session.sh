#!/usr/bin/env bash
# Session 2026-12-03 (fourth), call 1: the full run (every GPU test, conformance vectors, the
# benchmark under the corrected timing protocol of entry 46 -- L2 flush, then an untimed launch of
# the same method on other rows, then the timed launch -- and compute-sanitizer) on de5e555.
set -u
R=$OUT
s=$(date +%s)
OUT=$R IBP_BENCH_TIMEOUT=330 IBP_SANITIZER_TIMEOUT=120 \
    bash tools/gpu-run.sh --target-mib 256 --reps 9 > $R/run.log 2>&1
echo "full rc $? $(( $(date +%s) - s )) s"
tail -4 $R/run.log
cd $R && tar czf logs.tgz run.log device.txt tests.log conformance-gpu.txt replay-*.log memcheck.log bench.log 2>/dev/null; ls
