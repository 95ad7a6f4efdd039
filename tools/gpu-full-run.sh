#!/usr/bin/env bash
# The full GPU run in one device call (after tools/gpu-run.sh --prepare here; carry .devrun): every
# GPU test, the conformance vectors, memcheck/initcheck and the bench (tools/gpu-run.sh with the
# settings bench/GPU_RESULTS.md records), logs under /tmp/full packed into $OUT/full.tgz; prints the
# run's status, seconds and last lines. Then here: python3 tools/gpu_results.py DIR/full --commit REV
# --wall-s S > bench/GPU_RESULTS.md.
#
#   bash tools/gpu-full-run.sh
set -u
R=${OUT:-/tmp/out}; rm -rf /tmp/full; mkdir -p /tmp/full "$R"
s=$(date +%s)
OUT=/tmp/full IBP_BENCH_TIMEOUT=330 IBP_SANITIZER_TIMEOUT=120 bash tools/gpu-run.sh --target-mib 256 --reps 9 > /tmp/full/run.log 2>&1
echo "full run rc $? $(($(date +%s) - s)) s"
tar czf "$R/full.tgz" -C /tmp full
tail -n 5 /tmp/full/run.log
