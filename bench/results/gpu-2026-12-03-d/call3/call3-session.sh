#!/usr/bin/env bash
# Session 2026-12-03 (fourth), call 3 (GPU_NOTES idea 9): the KV and 256 B entries at 16K-64K-row
# batches, the raw rows' pinned buffer allocated after the entry's payload (as always) and before it
# (IBP_BENCH_RAW_FIRST=1), alternated twice, same binary (commit after 5ccd38b), same call.
set -u
R=$OUT
T0=$(date +%s)
gunzip .devrun/data/cora-features-f32.npy.gz  # shipped compressed (the 64 MiB carry limit)
n=0
for v in after first after2 first2; do
    left=$(( 420 - ($(date +%s) - T0) ))
    if [ $left -lt 40 ]; then echo "skip $v: $left s left"; continue; fi
    mkdir -p $R/$v
    rf=0; case $v in first*) rf=1;; esac
    s=$(date +%s)
    OUT=$R/$v IBP_BENCH_RAW_FIRST=$rf IBP_SKIP_TESTS=1 IBP_RUN_MEMCHECK=0 IBP_BENCH_TIMEOUT=$(( left < 110 ? left - 10 : 100 )) \
        bash tools/gpu-run.sh --target-mib 256 --reps 9 --batches 1024,16384,65536 --only minilm-kv --no-synthetic > $R/$v/run.log 2>&1
    echo "$v rc $? $(( $(date +%s) - s )) s"
done
(cd $R && tar czf ab.tgz */bench.log */run.log 2>/dev/null)
rm -rf $R/after $R/first $R/after2 $R/first2
echo "total $(( $(date +%s) - T0 )) s"
