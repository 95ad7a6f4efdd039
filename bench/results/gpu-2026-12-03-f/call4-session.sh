#!/usr/bin/env bash
# Session 2026-12-03 (sixth), call 4 (GPU_NOTES entry 52): the full run (every GPU test, the
# conformance vectors, compute-sanitizer, the benchmark) on 562591e (the tile kernels' chunk search
# once per chunk, a tile's record lengths loaded together).
set -u
R=$OUT
T0=$(date +%s)
[ -f .devrun/data/cora-features-f32.npy.gz ] && gunzip -f .devrun/data/cora-features-f32.npy.gz  # shipped compressed (the 64 MiB carry limit)
s=$(date +%s)
OUT=$R IBP_BENCH_TIMEOUT=330 IBP_SANITIZER_TIMEOUT=120 \
    bash tools/gpu-run.sh --target-mib 256 --reps 9 > $R/run.log 2>&1
echo "full rc $? $(( $(date +%s) - s )) s"
tail -4 $R/run.log
(cd $R && tar czf logs.tgz run.log device.txt tests.log conformance-gpu.txt replay-*.log memcheck.log bench.log 2>/dev/null)
rm -f $R/tests.log
ls $R
echo "total $(( $(date +%s) - T0 )) s"
