#!/usr/bin/env bash
# Forty-first session (2026-12-07): one device call. First the full run (tools/gpu-full-run.sh: every
# GPU test, the vectors, memcheck/initcheck, the bench; $OUT/full.tgz), on whichever card comes: on an
# H200 it is the run issue 3's targets are read from, on an H100 it updates bench/GPU_RESULTS_H100.md.
# Then, in what is left of the call, the timeline build on the host gathers of Cora and f32 rows
# (../gpu-2026-12-07-f/session.sh timeline; $OUT/timeline.tgz), which has run only on an H100.
# Here: `bash tools/gpu-run.sh --prepare`, then .devrun trimmed as ../gpu-2026-12-07-f/README.md says.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1
timeout 300 bash tools/gpu-full-run.sh
timeout "${TIMELINE_S:-220}" bash bench/results/gpu-2026-12-07-f/session.sh timeline
ls -la "${OUT:-/tmp/out}"
