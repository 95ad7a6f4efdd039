#!/usr/bin/env bash
# Session 2026-12-03 (fourth), call 5 (GPU_NOTES idea 10): the MiniLM KV entries at 4K and 16K-row
# batches, entries with a re-laid form timed in one rotation of five methods (default) and in two
# rotations of three (IBP_BENCH_GROUPS=1), alternated twice, same binary (commit in the bench.log
# header), same call.
set -u
R=$OUT
T0=$(date +%s)
for v in five groups five2 groups2; do
    left=$(( 380 - ($(date +%s) - T0) ))
    if [ $left -lt 40 ]; then echo "skip $v: $left s left"; continue; fi
    mkdir -p $R/$v
    g=0; case $v in groups*) g=1;; esac
    s=$(date +%s)
    OUT=$R/$v IBP_BENCH_GROUPS=$g IBP_SKIP_TESTS=1 IBP_RUN_MEMCHECK=0 IBP_BENCH_TIMEOUT=$(( left < 110 ? left - 10 : 100 )) \
        bash tools/gpu-run.sh --target-mib 256 --reps 9 --batches 4096,16384 --only minilm-kv --no-synthetic > $R/$v/run.log 2>&1
    echo "$v rc $? $(( $(date +%s) - s )) s"
done
(cd $R && tar czf ab.tgz */bench.log */run.log 2>/dev/null)
rm -rf $R/five $R/groups $R/five2 $R/groups2
echo "total $(( $(date +%s) - T0 )) s"
