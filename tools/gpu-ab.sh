#!/usr/bin/env bash
# One decode-only run of an A/B on the GPU machine (after tools/gpu-run.sh --prepare here; carry
# .devrun): whole-entry decode of every bench entry with the kernels built with DEFINES, logs under
# /tmp/ab/NAME, and everything under /tmp/ab packed into $OUT/ab.tgz after each run (so a later run
# that times out leaves the earlier ones). Compare runs with tools/ab_compare.py.
#
#   bash tools/gpu-ab.sh NAME "DEFINES" [BENCH_BIN]     # e.g. bash tools/gpu-ab.sh off "-DIBP_LEAN_RAW_BATCH=0"
set -u
name=$1 defines=${2:-} bin=${3:-.devrun/ibp-gpu-bench}
R=${OUT:-/tmp/ibp-gpu-out}
mkdir -p /tmp/ab "$R"
s=$(date +%s)
OUT=/tmp/ab/$name IBP_SKIP_TESTS=1 IBP_RUN_MEMCHECK=0 IBP_BENCH_TIMEOUT=100 IBP_KERNEL_DEFINES="$defines" \
    IBP_BENCH_BIN="$bin" bash tools/gpu-run.sh --target-mib 256 --reps 9 --no-gathers >"/tmp/ab/$name.run.log" 2>&1
echo "$name rc $? $(($(date +%s) - s)) s"
tar czf "$R/ab.tgz" -C /tmp ab
