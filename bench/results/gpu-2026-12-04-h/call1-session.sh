#!/usr/bin/env bash
# Session 2026-12-04 (fifteenth), call 1, on 2f4053a: the long-rows kernel with a tile's rows cut into
# segments (new) against whole rows a lane (old: -DIBP_LONG_SEGMENTS=1, IBP_LONG_TILES_PER_SM=0), Fashion-MNIST
# whole-entry decode interleaved twice: 256 MiB entries (the bench's), 32-row tiles everywhere
# (IBP_LONG_TILES_PER_SM=100), and 8 MiB entries (small ranges: old, segments alone, segments and
# small-range tiles); then the full GPU run.
set -u
[ -f .devrun/data/cora-features-f32.npy.gz ] && gunzip -f .devrun/data/cora-features-f32.npy.gz
R=${OUT:-/tmp/out}; rm -rf /tmp/ab; mkdir -p /tmp/ab "$R"
B=.devrun/ibp-gpu-bench
ab() { OUT=$R IBP_BENCH_TIMEOUT=150 bash tools/gpu-ab.sh "$@" | tee -a /tmp/ab/summary.txt; }
for i in 1 2; do
    IBP_LONG_TILES_PER_SM=0 ab old_$i "-DIBP_LONG_SEGMENTS=1" $B --only fashion
    ab new_$i "" $B --only fashion
    IBP_LONG_TILES_PER_SM=100 ab tiles32_$i "" $B --only fashion
    IBP_LONG_TILES_PER_SM=0 ab old8_$i "-DIBP_LONG_SEGMENTS=1" $B --only fashion --target-mib 8
    IBP_LONG_TILES_PER_SM=0 ab seg8_$i "" $B --only fashion --target-mib 8
    ab new8_$i "" $B --only fashion --target-mib 8
done
python3 tools/ab_compare.py old.1=/tmp/ab/old_1/bench.log new.1=/tmp/ab/new_1/bench.log t32.1=/tmp/ab/tiles32_1/bench.log \
    old.2=/tmp/ab/old_2/bench.log new.2=/tmp/ab/new_2/bench.log t32.2=/tmp/ab/tiles32_2/bench.log --what decode > /tmp/ab/compare.txt 2>&1
python3 tools/ab_compare.py old8.1=/tmp/ab/old8_1/bench.log seg8.1=/tmp/ab/seg8_1/bench.log new8.1=/tmp/ab/new8_1/bench.log \
    old8.2=/tmp/ab/old8_2/bench.log seg8.2=/tmp/ab/seg8_2/bench.log new8.2=/tmp/ab/new8_2/bench.log --what decode >> /tmp/ab/compare.txt 2>&1
cat /tmp/ab/compare.txt
tar czf "$R/ab.tgz" -C /tmp ab
timeout 300 bash tools/gpu-full-run.sh
