#!/usr/bin/env bash
# Session 2026-12-04 (eleventh), call 3: the full run (tests, vectors, sanitizers, bench) on main
# after the kernel source split into parts (same SASS as cb30440) and the split of entry.rs, then
# synccheck on the tile-kernel tests.
set -u
bash tools/gpu-full-run.sh
R=${OUT:-/tmp/out}; mkdir -p /tmp/san
s=$(date +%s); timeout 120 compute-sanitizer --tool synccheck --error-exitcode 9 \
    .devrun/tests/gpu_decode --test-threads=1 rows_through_the_lean_tile_kernel uniform_field_lengths mixed_word_widths > /tmp/san/synccheck.log 2>&1
echo "synccheck rc $? $(($(date +%s) - s)) s"; tail -n 3 /tmp/san/synccheck.log; tar czf "$R/san.tgz" -C /tmp san
