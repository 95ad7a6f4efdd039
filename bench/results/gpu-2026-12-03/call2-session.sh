#!/usr/bin/env bash
# Session 2026-12-03, call 2: host and device gathers of 1K-4K-row batches with ibp_gather_split
# (several warps per long row for batches that do not fill the GPU; IBP_GATHER_SPLIT=0 turns it
# off) against one warp per row, and against the previous commit's bench binary (bench-old); then
# the full run (every GPU test, conformance vectors, the benchmark, compute-sanitizer).
set -u
R=$OUT
mkdir -p /tmp/c2
ab() {
    local name=$1; shift
    local s=$(date +%s)
    env "$@" OUT=/tmp/c2/$name IBP_SKIP_TESTS=1 IBP_RUN_MEMCHECK=0 IBP_BENCH_TIMEOUT=100 \
        bash tools/gpu-run.sh --target-mib 256 --reps 9 --batches 1024,2048,4096 > /tmp/c2/$name.run.log 2>&1
    echo "$name rc $? $(( $(date +%s) - s )) s"
    cp /tmp/c2/$name/bench.log $R/ab-$name.log 2>/dev/null
}
ab off IBP_GATHER_SPLIT=0
ab auto IBP_CALL=2
ab old IBP_BENCH_BIN=.devrun/ibp-gpu-bench-old
ab auto2 IBP_CALL=2
s=$(date +%s)
OUT=$R IBP_BENCH_TIMEOUT=300 IBP_SANITIZER_TIMEOUT=120 bash tools/gpu-run.sh --target-mib 256 --reps 9 > $R/run.log 2>&1
echo "full rc $? $(( $(date +%s) - s )) s"
tail -5 $R/run.log
