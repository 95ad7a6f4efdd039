#!/usr/bin/env bash
# Session 2026-12-03, call 1: whole-entry decode of Fashion-MNIST and MiniLM K bf16 encoded with
# other word widths (the bench's --word-width; defaults: the smallest size, W = 16 for both) to see
# what an encoder policy for GPU files could gain; Fashion-MNIST gathers at W = 32.
set -u
R=$OUT
one() {
    local name=$1; shift
    local s=$(date +%s)
    OUT=/tmp/c1/$name IBP_SKIP_TESTS=1 IBP_RUN_MEMCHECK=0 IBP_BENCH_TIMEOUT=120 \
        bash tools/gpu-run.sh --target-mib 256 --reps 9 "$@" > /tmp/c1/$name.run.log 2>&1
    echo "$name rc $? $(( $(date +%s) - s )) s"
    cp /tmp/c1/$name/bench.log $R/$name.log 2>/dev/null
}
mkdir -p /tmp/c1
one fash-w16a --only fashion-mnist-test --no-gathers
one fash-w32 --only fashion-mnist-test --no-gathers --word-width 32
one fash-w64 --only fashion-mnist-test --no-gathers --word-width 64
one kbf-w16 --only minilm-kv-k-bf16 --no-gathers
one kbf-w32 --only minilm-kv-k-bf16 --no-gathers --word-width 32
one kbf-w64 --only minilm-kv-k-bf16 --no-gathers --word-width 64
one fash-w16b --only fashion-mnist-test --no-gathers
one fash-w32g --only fashion-mnist-test --word-width 32 --align-log2 4
cp /tmp/c1/fash-w16a/device.txt $R/ 2>/dev/null
