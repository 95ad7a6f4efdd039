#!/usr/bin/env bash
# Fortieth session (2026-12-07): one device call that does what the card it lands on is for.
# On an H200 (the card issue 3's targets are defined on): the full run (every GPU test, the vectors,
# memcheck/initcheck, the bench; tools/gpu-full-run.sh, $OUT/full.tgz). On an H100: the timeline, then
# the A/B, of session.sh here ($OUT/variants.tgz), whose ratios hold on either card.
# Here: `bash tools/gpu-run.sh --prepare`, then .devrun trimmed to fit the carry (README there).
set -u
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
echo "$gpu"
case "$gpu" in
*H200*) bash bench/results/gpu-2026-12-07-d/session.sh full ;;
*) bash bench/results/gpu-2026-12-07-f/session.sh tab ;;
esac
