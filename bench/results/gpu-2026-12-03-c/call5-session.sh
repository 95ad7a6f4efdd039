#!/usr/bin/env bash
# Session 2026-12-03 (third), call 5 (commit see bench.log header: the bench's new timing protocol,
# entry 46): the whole benchmark with each timed host gather after its own untimed launch on other
# rows and an L2 flush (the new default), then the whole benchmark timed back to back as before
# (IBP_BENCH_WARM=0), same binary, same call. No library code changed since call 3's full run (812bf71).
set -u
R=$OUT
T0=$(date +%s)
s=$(date +%s)
mkdir -p $R/new
OUT=$R/new IBP_SKIP_TESTS=1 IBP_RUN_MEMCHECK=0 IBP_BENCH_TIMEOUT=150 \
    bash tools/gpu-run.sh --target-mib 256 --reps 9 > $R/new/run.log 2>&1
echo "new rc $? $(( $(date +%s) - s )) s"
(cd $R && tar czf $R/bench.tgz new/bench.log new/device.txt new/run.log)
if [ $(( $(date +%s) - T0 )) -lt 110 ]; then
    s=$(date +%s)
    mkdir -p $R/old
    OUT=$R/old IBP_BENCH_WARM=0 IBP_SKIP_TESTS=1 IBP_RUN_MEMCHECK=0 IBP_BENCH_TIMEOUT=$(( 200 - ($(date +%s) - T0) )) \
        bash tools/gpu-run.sh --target-mib 256 --reps 9 > $R/old/run.log 2>&1
    echo "old rc $? $(( $(date +%s) - s )) s"
    (cd $R && tar czf $R/bench.tgz new/bench.log new/device.txt new/run.log old/bench.log)
fi
rm -rf $R/new $R/old
echo "total $(( $(date +%s) - T0 )) s"
