#!/usr/bin/env bash
# Session 2026-12-04 (ninth), call 2: the full run (tests, vectors, sanitizers, bench) on the kernels
# with the short-rows lean kernel adopted (call 1), its output packed into full.tgz.
set -u
[ -f .devrun/data/cora-features-f32.npy.gz ] && gunzip -f .devrun/data/cora-features-f32.npy.gz
R=${OUT:-/tmp/out}; rm -rf /tmp/full; mkdir -p /tmp/full "$R"
s=$(date +%s)
OUT=/tmp/full IBP_BENCH_TIMEOUT=330 IBP_SANITIZER_TIMEOUT=120 bash tools/gpu-run.sh --target-mib 256 --reps 9 > /tmp/full/run.log 2>&1
echo "full run rc $? $(($(date +%s) - s)) s"
tar czf "$R/full.tgz" -C /tmp full
tail -n 5 /tmp/full/run.log
