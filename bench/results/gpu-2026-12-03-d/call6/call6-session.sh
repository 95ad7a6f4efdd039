#!/usr/bin/env bash
# Session 2026-12-03 (fourth), call 6: the benchmark alone (device time left did not cover a full run)
# on 25959eb: an entry's re-laid form timed in a rotation of its own with the raw gather (GPU_NOTES
# entry 49). Library code as call 2's full run (40a40e5) but for a rename; its tests, vectors and
# sanitizer logs stand for this code.
set -u
R=$OUT
gunzip .devrun/data/cora-features-f32.npy.gz  # shipped compressed (the 64 MiB carry limit)
s=$(date +%s)
OUT=$R IBP_SKIP_TESTS=1 IBP_RUN_MEMCHECK=0 IBP_BENCH_TIMEOUT=190 \
    bash tools/gpu-run.sh --target-mib 256 --reps 9 > $R/run.log 2>&1
echo "bench rc $? $(( $(date +%s) - s )) s"
tail -2 $R/run.log
ls $R
