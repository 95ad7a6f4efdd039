#!/usr/bin/env bash
# Session 2026-12-03 (fifth), call 2 (GPU_NOTES entry 50): the full run (every GPU test, the
# conformance vectors, compute-sanitizer, the benchmark) on 7b97f8d (row spans for rows of >= 128 B);
# then, time allowing, the row-span A/B once more with the final binary (every entry given spans,
# "raw zc" column = the same gather without them), batches of 1K-4K rows.
set -u
R=$OUT
T0=$(date +%s)
gunzip .devrun/data/cora-features-f32.npy.gz  # shipped compressed (the 64 MiB carry limit)
s=$(date +%s)
OUT=$R IBP_BENCH_TIMEOUT=330 IBP_SANITIZER_TIMEOUT=120 \
    bash tools/gpu-run.sh --target-mib 256 --reps 9 > $R/run.log 2>&1
echo "full rc $? $(( $(date +%s) - s )) s"
tail -4 $R/run.log
(cd $R && tar czf logs.tgz run.log device.txt tests.log conformance-gpu.txt replay-*.log memcheck.log bench.log 2>/dev/null)
left=$(( 540 - ($(date +%s) - T0) ))
if [ $left -ge 70 ]; then
    mkdir -p $R/ab
    s=$(date +%s)
    OUT=$R/ab IBP_GATHER_SPANS=1 IBP_BENCH_AB_SPANS=1 IBP_SKIP_TESTS=1 IBP_RUN_MEMCHECK=0 \
        IBP_BENCH_TIMEOUT=$(( left < 110 ? left - 10 : 100 )) \
        bash tools/gpu-run.sh --target-mib 256 --reps 9 --batches 1024,4096 > $R/ab/run.log 2>&1
    echo "ab rc $? $(( $(date +%s) - s )) s"
    (cd $R && tar czf ab.tgz ab/bench.log ab/run.log 2>/dev/null)
    rm -rf $R/ab
else
    echo "skip ab: $left s left"
fi
rm -f $R/tests.log
ls $R
echo "total $(( $(date +%s) - T0 )) s"
