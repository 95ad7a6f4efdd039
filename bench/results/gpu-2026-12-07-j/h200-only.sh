#!/usr/bin/env bash
# Forty-fourth session (2026-12-07, from 22:58 UTC): the full run (tools/gpu-full-run.sh, $OUT/full.tgz)
# on an H200 only, the figures of record; on any other card it stops at once (an H100 full run of
# the same SASS is ../gpu-2026-12-07-i's call 2). Setup: README.md; on the device (carry .devrun):
#   bash bench/results/gpu-2026-12-07-j/h200-only.sh
set -u
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
echo "$gpu"
case "$gpu" in
*H200*)
    # T (default 400) s for the run; if it is cut, the logs it left are still packed into $OUT.
    timeout "${T:-400}" bash tools/gpu-full-run.sh 2>&1 | tail -c 6000
    [ -f "${OUT:-/tmp/out}/full.tgz" ] || { tar czf "${OUT:-/tmp/out}/full.tgz" -C /tmp full; echo "cut: partial logs packed"; }
    ;;
*) echo "not an H200: nothing run" ;;
esac
