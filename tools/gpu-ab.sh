#!/usr/bin/env bash
# One decode-only run of an A/B on the GPU machine (after tools/gpu-run.sh --prepare here; carry
# .devrun): whole-entry decode of every bench entry with the kernels built with DEFINES, logs under
# /tmp/ab/NAME, and everything under /tmp/ab packed into $OUT/ab.tgz after each run (so a later run
# that times out leaves the earlier ones). Arguments after BENCH_BIN go to the bench (e.g. --only
# bf16); the environment reaches it too (e.g. IBP_TILE_BYTES). Compare runs with tools/ab_compare.py
# (old1=/tmp/ab/old1/bench.log new1=... --what decode).
#
#   bash tools/gpu-ab.sh NAME "DEFINES" [BENCH_BIN [BENCH ARGS...]]
#   bash tools/gpu-ab.sh off "-DIBP_LEAN_RAW_BATCH=0"
#   IBP_TILE_BYTES=65536 bash tools/gpu-ab.sh b3 "-DIBP_LEAN_MIN_BLOCKS=3" .devrun/ibp-gpu-bench --only bf16
set -u
name=$1 defines=${2:-} bin=${3:-.devrun/ibp-gpu-bench}
shift $(($# < 3 ? $# : 3))
R=${OUT:-/tmp/ibp-gpu-out}
mkdir -p /tmp/ab "$R"
s=$(date +%s)
OUT=/tmp/ab/$name IBP_SKIP_TESTS=1 IBP_RUN_MEMCHECK=0 IBP_BENCH_TIMEOUT=${IBP_BENCH_TIMEOUT:-100} IBP_KERNEL_DEFINES="$defines" \
    IBP_BENCH_BIN="$bin" bash tools/gpu-run.sh --target-mib 256 --reps 9 --no-gathers "$@" >"/tmp/ab/$name.run.log" 2>&1
echo "$name rc $? $(($(date +%s) - s)) s"
tar czf "$R/ab.tgz" -C /tmp ab
