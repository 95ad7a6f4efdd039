#!/usr/bin/env bash
# Session 2026-12-04 (tenth), call 2: the full run (tests, vectors, sanitizers, bench) on the kernels
# with IBP_TILE_CARRY_START adopted (call 1), packed into full.tgz; then racecheck and synccheck on
# the lean tile-kernel test (the carried start is shared memory written by one thread).
set -u
bash tools/gpu-full-run.sh
R=${OUT:-/tmp/out}; mkdir -p /tmp/san
for tool in racecheck synccheck; do
    s=$(date +%s); timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 \
        .devrun/tests/gpu_decode --test-threads=1 rows_through_the_lean_tile_kernel > /tmp/san/$tool.log 2>&1
    echo "$tool rc $? $(($(date +%s) - s)) s"; tail -n 3 /tmp/san/$tool.log; tar czf "$R/san.tgz" -C /tmp san
done
