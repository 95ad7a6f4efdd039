#!/usr/bin/env bash
# Forty-first session (2026-12-07): one call that does what the card it lands on is for. On an H200
# (the card issue 3's targets are read from): the full run of this code (tools/gpu-full-run.sh,
# $OUT/full.tgz), then the spans A/B (spans.sh) in two rounds without its own tests. Elsewhere:
# spans.sh as it is (three rounds, the tests after the first).
set -u
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
echo "$gpu"
case "$gpu" in
*H200*)
    timeout 300 bash tools/gpu-full-run.sh
    SPANS_TESTS=0 ROUNDS=2 timeout 260 bash bench/results/gpu-2026-12-07-g/spans.sh
    ;;
*) timeout 580 bash bench/results/gpu-2026-12-07-g/spans.sh ;;
esac
ls -la "${OUT:-/tmp/out}"
