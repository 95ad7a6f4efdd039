#!/usr/bin/env bash
# Forty-first session (2026-12-07): the full run alone (tools/gpu-full-run.sh: every GPU test, the
# vectors, memcheck/initcheck, the bench; $OUT/full.tgz) on whichever card comes, for the last of
# the session's device time. Carry .devrun (trimmed as ../gpu-2026-12-07-f/README.md says).
set -u
nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1
timeout 330 bash tools/gpu-full-run.sh
ls -la "${OUT:-/tmp/out}"
