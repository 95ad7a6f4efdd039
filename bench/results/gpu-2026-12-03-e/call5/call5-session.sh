#!/usr/bin/env bash
# Session 2026-12-03 (fifth), call 5 (GPU_NOTES entries 50-51): the full run (every GPU test, the
# conformance vectors, compute-sanitizer, the benchmark) on e5841c9 (row spans; the thread path at every alignment with raw records copied by vectors).
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
rm -f $R/tests.log
ls $R
echo "total $(( $(date +%s) - T0 )) s"
