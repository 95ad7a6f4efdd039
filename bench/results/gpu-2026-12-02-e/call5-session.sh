#!/usr/bin/env bash
# (Decode A/B runs through tools/gpu-ab.sh, the helper these scripts first wrote inline.)
# Session 2026-12-02 (third), call 5: the full run on the final kernels (every GPU test, the
# conformance vectors, the sanitizers, the bench), then whole-entry decode with lean phase B walking
# rows by ballot bits (IBP_LEAN_TODO_LOOP=1, default) and in order (=0), once each.
set -u
s=$(date +%s)
IBP_BENCH_TIMEOUT=300 IBP_SANITIZER_TIMEOUT=80 bash tools/gpu-run.sh --target-mib 256 --reps 9 > /tmp/full-run.log 2>&1
echo "full rc $? $(( $(date +%s) - s )) s"
tail -8 /tmp/full-run.log
bash tools/gpu-ab.sh todo ""
bash tools/gpu-ab.sh inorder "-DIBP_LEAN_TODO_LOOP=0"
