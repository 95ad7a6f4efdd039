#!/usr/bin/env bash
# Session 2026-12-04 (eleventh), call 4: racecheck on the tile-kernel tests of 59c70c0 (default grid):
# the lean kernels' test, then the general and pairs kernels' test.
set -u
R=${OUT:-/tmp/out}; mkdir -p /tmp/san "$R"
for t in rows_through_the_lean_tile_kernel mixed_word_widths; do
    s=$(date +%s); timeout 260 compute-sanitizer --tool racecheck --error-exitcode 9 \
        .devrun/tests/gpu_decode --test-threads=1 $t > /tmp/san/racecheck-$t.log 2>&1
    echo "racecheck $t rc $? $(($(date +%s) - s)) s"; tail -n 3 /tmp/san/racecheck-$t.log; tar czf "$R/san.tgz" -C /tmp san
done
