#!/usr/bin/env bash
# Session 2026-12-03 (fourth), call 4 (GPU_NOTES idea 10): the MiniLM KV entries at 4K and 16K-row
# batches, each timed launch after its own untimed one (default) and back to back (IBP_BENCH_WARM=0),
# alternated twice, same binary (dc04d19's bench), same call: does the re-laid rows' 4K-row gap to
# their own "ideal" follow the timing protocol?
set -u
R=$OUT
T0=$(date +%s)
for v in new old new2 old2; do
    left=$(( 400 - ($(date +%s) - T0) ))
    if [ $left -lt 40 ]; then echo "skip $v: $left s left"; continue; fi
    mkdir -p $R/$v
    warm=1; case $v in old*) warm=0;; esac
    s=$(date +%s)
    OUT=$R/$v IBP_BENCH_WARM=$warm IBP_SKIP_TESTS=1 IBP_RUN_MEMCHECK=0 IBP_BENCH_TIMEOUT=$(( left < 110 ? left - 10 : 100 )) \
        bash tools/gpu-run.sh --target-mib 256 --reps 9 --batches 4096,16384 --only minilm-kv --no-synthetic > $R/$v/run.log 2>&1
    echo "$v rc $? $(( $(date +%s) - s )) s"
done
(cd $R && tar czf ab.tgz */bench.log */run.log 2>/dev/null)
rm -rf $R/new $R/old $R/new2 $R/old2
echo "total $(( $(date +%s) - T0 )) s"
