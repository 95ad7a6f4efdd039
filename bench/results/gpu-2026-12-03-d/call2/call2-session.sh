#!/usr/bin/env bash
# Session 2026-12-03 (fourth), call 2 (GPU_NOTES entry 47): the full run (every GPU test, the
# conformance vectors, compute-sanitizer, the benchmark) on the status block with a host-visible
# failure flag (wait() reads the flag in host memory, copies the status word only after a failure);
# then gathers of 1K-4K-row batches timed by call 1's bench binary (de5e555, .devrun/old: wait()
# copies the status word D2H after every decode) and by this one, back to back, same call.
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
for v in old new; do
    left=$(( 540 - ($(date +%s) - T0) ))
    if [ $left -lt 60 ]; then echo "skip $v: $left s left"; continue; fi
    mkdir -p $R/$v
    bin=.devrun/ibp-gpu-bench; [ $v = old ] && bin=.devrun/old/ibp-gpu-bench
    s=$(date +%s)
    OUT=$R/$v IBP_BENCH_BIN=$bin IBP_SKIP_TESTS=1 IBP_RUN_MEMCHECK=0 IBP_BENCH_TIMEOUT=$(( left < 110 ? left - 10 : 100 )) \
        bash tools/gpu-run.sh --target-mib 256 --reps 9 --batches 1024,4096 > $R/$v/run.log 2>&1
    echo "$v rc $? $(( $(date +%s) - s )) s"
done
(cd $R && tar czf ab.tgz old/bench.log new/bench.log old/run.log new/run.log 2>/dev/null)
rm -rf $R/old $R/new $R/tests.log
ls $R
echo "total $(( $(date +%s) - T0 )) s"
