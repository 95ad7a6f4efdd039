#!/usr/bin/env bash
# Forty-second session (2026-12-07), the last call: on an H200 the full run (tools/gpu-full-run.sh,
# $OUT/full.tgz), the figures of record at this code; elsewhere Nsight Compute on one 1K-row Cora
# gather and the ideal copy of its records with stall samples per SASS instruction
# (../gpu-2026-12-07-c/profile.sh at this code: where the decode of the last rows goes; $OUT/none,
# $OUT/all).
# Here: IBP_PREPARE_KERNEL_DEFINES="" bash tools/gpu-run.sh --prepare, .devrun trimmed as
# README.md says, `bash tools/devcall-park.sh park bench/results/gpu-2026-12-07-h
# bench/results/gpu-2026-12-07-c`; on the device (carry .devrun):
#   bash bench/results/gpu-2026-12-07-h/last.sh
set -u
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
echo "$gpu"
case "$gpu" in
*H200*) timeout 330 bash tools/gpu-full-run.sh ;;
*) bash bench/results/gpu-2026-12-07-c/profile.sh ;;
esac
ls -la "${OUT:-/tmp/out}"
