#!/usr/bin/env bash
# Session 2026-12-03 (third), call 2 (commit 812bf71: TransferCost::GPU weighs a coded record as one
# sector): 256 B synthetic rows and GloVe, every batch size, twice each; the q4 256 B entries
# (208-byte records, one sector saved) are now `@relaid` under ChunkForm::FOR_GPU_READS and raw in
# the `+gpu` file. Then the GPU test of re-laid entries (its mixed entries now mix sparse chunks).
set -u
R=$OUT
T0=$(date +%s)
mkdir -p /tmp/c2
one() {
    local name=$1; shift
    local s=$(date +%s)
    OUT=/tmp/c2/$name IBP_SKIP_TESTS=1 IBP_RUN_MEMCHECK=0 IBP_BENCH_TIMEOUT=100 \
        bash tools/gpu-run.sh --target-mib 256 --reps 9 "$@" > /tmp/c2/$name.run.log 2>&1
    echo "$name rc $? $(( $(date +%s) - s )) s"
    (cd /tmp/c2 && tar czf $R/ab.tgz */bench.log)
}
one syn256 --no-real-data --row-bytes 256
one glove --only glove --no-synthetic
one syn256b --no-real-data --row-bytes 256
one gloveb --only glove --no-synthetic
.devrun/tests/gpu_decode entries_relaid --nocapture > $R/relaid-test.log 2>&1
echo "relaid test rc $?"; tail -3 $R/relaid-test.log
echo "total $(( $(date +%s) - T0 )) s"
