#!/usr/bin/env bash
# Session 2026-12-03 (second), call 1: the full run (every GPU test, conformance vectors, the
# benchmark with the `@relaid` rows of ChunkForm::FOR_GPU_READS, compute-sanitizer) on 6ae737c; then
# Fashion-MNIST decoded at W = 8 (its pixels are bytes), against W = 16 in the same call.
set -u
R=$OUT
s=$(date +%s)
OUT=$R IBP_BENCH_TIMEOUT=330 IBP_SANITIZER_TIMEOUT=120 \
    bash tools/gpu-run.sh --target-mib 256 --reps 9 > $R/run.log 2>&1
echo "full rc $? $(( $(date +%s) - s )) s"
tail -4 $R/run.log
mkdir -p /tmp/c1
one() {
    local name=$1; shift
    local s=$(date +%s)
    OUT=/tmp/c1/$name IBP_SKIP_TESTS=1 IBP_RUN_MEMCHECK=0 IBP_BENCH_TIMEOUT=60 \
        bash tools/gpu-run.sh --target-mib 256 --reps 9 "$@" > /tmp/c1/$name.run.log 2>&1
    echo "$name rc $? $(( $(date +%s) - s )) s"
    cp /tmp/c1/$name/bench.log $R/ab-$name.log 2>/dev/null
}
one fash-w8 --only fashion-mnist-test --no-gathers --word-width 8 --align-log2 4
one fash-w16 --only fashion-mnist-test --no-gathers --align-log2 4
cd $R && tar czf logs.tgz run.log tests.log replay-*.log memcheck.log ab-*.log 2>/dev/null; ls
