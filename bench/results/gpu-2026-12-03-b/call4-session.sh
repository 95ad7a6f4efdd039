#!/usr/bin/env bash
# Session 2026-12-03 (second), call 4: the decode-bound split rule as built (auto) against one warp
# per row at 4K+ batches (IBP_GATHER_SPLIT=0, the previous policy there), twice each: synthetic
# 1 KiB and 4 KiB rows, Cora; batches 4K and 16K.
set -u
R=$OUT
mkdir -p /tmp/c4
one() {
    local name=$1 env=$2; shift 2
    local s=$(date +%s)
    env $env OUT=/tmp/c4/$name IBP_SKIP_TESTS=1 IBP_RUN_MEMCHECK=0 IBP_BENCH_TIMEOUT=100 \
        bash tools/gpu-run.sh --target-mib 256 --reps 9 --batches 4096,16384 "$@" > /tmp/c4/$name.run.log 2>&1
    echo "$name rc $? $(( $(date +%s) - s )) s"
}
variant() {
    local v=$1 env=$2
    one $v-syn "$env" --no-real-data --row-bytes 4096
    one $v-syn1k "$env" --no-real-data --row-bytes 1024
    one $v-cora "$env" --only cora --no-synthetic
    (cd /tmp/c4 && tar czf $R/ab.tgz */bench.log)
}
variant auto IBP_CALL=4
variant off IBP_GATHER_SPLIT=0
variant auto2 IBP_CALL=4
variant off2 IBP_GATHER_SPLIT=0
ls $R
