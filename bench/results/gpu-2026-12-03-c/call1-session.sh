#!/usr/bin/env bash
# Session 2026-12-03 (third), call 1: every GPU test, the conformance vectors and compute-sanitizer
# on 28d1b82 (the decode-bound split rule), then the rule's own A/B: auto against one warp per row
# (IBP_GATHER_SPLIT=0, the previous policy at 4K+ rows) on synthetic 4 KiB / 1 KiB rows and Cora,
# batches 4K and 16K, alternated.
set -u
R=$OUT
T0=$(date +%s)
OUT=$R/tests IBP_SKIP_BENCH=1 IBP_SANITIZER_TIMEOUT=120 bash tools/gpu-run.sh > $R/run.log 2>&1
echo "tests rc $? $(( $(date +%s) - T0 )) s"
tail -6 $R/run.log
(cd $R/tests && tar czf $R/logs.tgz ../run.log tests.log replay-*.log memcheck.log conformance-gpu.txt 2>/dev/null)
mkdir -p /tmp/c4
one() {
    local name=$1 env=$2; shift 2
    if [ $(( $(date +%s) - T0 )) -gt 520 ]; then echo "$name skipped (time)"; return; fi
    local s=$(date +%s)
    env $env OUT=/tmp/c4/$name IBP_SKIP_TESTS=1 IBP_RUN_MEMCHECK=0 IBP_BENCH_TIMEOUT=60 \
        bash tools/gpu-run.sh --target-mib 256 --reps 9 --batches 4096,16384 "$@" > /tmp/c4/$name.run.log 2>&1
    echo "$name rc $? $(( $(date +%s) - s )) s"
    (cd /tmp/c4 && tar czf $R/ab.tgz */bench.log)
}
one auto-cora IBP_CALL=1 --only cora --no-synthetic
one off-cora IBP_GATHER_SPLIT=0 --only cora --no-synthetic
one auto-syn IBP_CALL=1 --no-real-data --row-bytes 4096
one off-syn IBP_GATHER_SPLIT=0 --no-real-data --row-bytes 4096
one auto2-cora IBP_CALL=1 --only cora --no-synthetic
one off2-cora IBP_GATHER_SPLIT=0 --only cora --no-synthetic
one auto-syn1k IBP_CALL=1 --no-real-data --row-bytes 1024
one off-syn1k IBP_GATHER_SPLIT=0 --no-real-data --row-bytes 1024
one auto2-syn IBP_CALL=1 --no-real-data --row-bytes 4096
one off2-syn IBP_GATHER_SPLIT=0 --no-real-data --row-bytes 4096
echo "total $(( $(date +%s) - T0 )) s"
ls $R
