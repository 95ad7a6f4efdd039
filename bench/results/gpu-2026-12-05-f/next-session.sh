#!/usr/bin/env bash
# For the next device session (written 2026-12-05, twenty-second; nothing here has run): GPU_NOTES
# idea 11, tiles filled to the waves of resident blocks (`IBP_TILE_FILL`, a bit per tile class, host
# only: the kernels do not change), against the default, on the entries of the general kernels
# (class 0: Cora, the synthetic 1 and 4 KiB rows, MiniLM and floret through the pairs kernel) and
# on every class (15), 256 MiB and 8 MiB, each interleaved twice. The bench now prints each whole
# entry's tiles ("whole entry's tiles: ..."), so the logs show the rows per tile and tile counts.
# Here: `bash tools/gpu-run.sh --prepare`; on the device (carry .devrun):
#   bash bench/results/gpu-2026-12-05-f/next-session.sh     # ~4-5 min
# Adopt (default bits on) only for a class that gains on its entries in both runs and loses on none.
set -u
. tools/gpu-ab-lib.sh
rm -rf /tmp/ab; mkdir -p /tmp/ab
for i in 1 2; do
    ab base_$i "" $B
    IBP_TILE_FILL=1 ab fill1_$i "" $B
    IBP_TILE_FILL=15 ab fill15_$i "" $B
    ab base8_$i "" $B --target-mib 8
    IBP_TILE_FILL=15 ab fill8_$i "" $B --target-mib 8
done
report "compare decode base fill1" "compare decode base fill15" "compare decode base8 fill8"
grep -h "^## \|whole entry's tiles" /tmp/ab/base_1/bench.log /tmp/ab/fill15_1/bench.log > /tmp/ab/tiles.txt
tar czf "$R/ab.tgz" -C /tmp ab
