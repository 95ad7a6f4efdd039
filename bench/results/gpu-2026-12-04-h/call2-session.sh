#!/usr/bin/env bash
# Session 2026-12-04 (fifteenth), call 2, on 927245f: Fashion-MNIST whole-entry decode, interleaved twice:
# old = the kernel of entry 64 (-DIBP_LONG_SEGMENTS=1 -DIBP_LONG_SKIP_INVARIANT=0, whole rows),
# noskip = segments code (whole rows on 256 MiB entries) without the invariant-read skip, new = both;
# on 256 MiB entries (the bench's) and 8 MiB entries (small ranges: segments); then the full GPU run.
set -u
[ -f .devrun/data/cora-features-f32.npy.gz ] && gunzip -f .devrun/data/cora-features-f32.npy.gz
R=${OUT:-/tmp/out}; rm -rf /tmp/ab; mkdir -p /tmp/ab "$R"
B=.devrun/ibp-gpu-bench
OLD="-DIBP_LONG_SEGMENTS=1 -DIBP_LONG_SKIP_INVARIANT=0"
ab() { OUT=$R IBP_BENCH_TIMEOUT=150 bash tools/gpu-ab.sh "$@" | tee -a /tmp/ab/summary.txt; }
for i in 1 2; do
    ab old_$i "$OLD" $B --only fashion
    ab noskip_$i "-DIBP_LONG_SKIP_INVARIANT=0" $B --only fashion
    ab new_$i "" $B --only fashion
    ab old8_$i "$OLD" $B --only fashion --target-mib 8
    ab new8_$i "" $B --only fashion --target-mib 8
done
python3 tools/ab_compare.py old.1=/tmp/ab/old_1/bench.log noskip.1=/tmp/ab/noskip_1/bench.log new.1=/tmp/ab/new_1/bench.log \
    old.2=/tmp/ab/old_2/bench.log noskip.2=/tmp/ab/noskip_2/bench.log new.2=/tmp/ab/new_2/bench.log --what decode > /tmp/ab/compare.txt 2>&1
python3 tools/ab_compare.py old8.1=/tmp/ab/old8_1/bench.log new8.1=/tmp/ab/new8_1/bench.log \
    old8.2=/tmp/ab/old8_2/bench.log new8.2=/tmp/ab/new8_2/bench.log --what decode >> /tmp/ab/compare.txt 2>&1
cat /tmp/ab/compare.txt
tar czf "$R/ab.tgz" -C /tmp ab
timeout 300 bash tools/gpu-full-run.sh
