#!/usr/bin/env bash
# NOT RUN (session 2026-12-04, fifteenth: the device was taken back during the call, then none was lent).
# For a later session: apply untried-wide-reads.diff (IBP_LONG_WIDE_READS, default 1), run
# tools/gpu-run.sh --prepare here, then this script on the device (carry .devrun).
# Session 2026-12-04 (fifteenth), call 3, on d84285b (kernels as 7edcf46, same SASS): Fashion-MNIST whole-entry decode, interleaved twice: old = one
# stream read per word (-DIBP_LONG_WIDE_READS=0, the kernel of call 2's noskip), new = one read per two
# 16-bit words; 256 MiB entries (whole rows) and 8 MiB entries (segments); then the full GPU run.
set -u
[ -f .devrun/data/cora-features-f32.npy.gz ] && gunzip -f .devrun/data/cora-features-f32.npy.gz
R=${OUT:-/tmp/out}; rm -rf /tmp/ab; mkdir -p /tmp/ab "$R"
B=.devrun/ibp-gpu-bench
OLD="-DIBP_LONG_WIDE_READS=0"
ab() { OUT=$R IBP_BENCH_TIMEOUT=150 bash tools/gpu-ab.sh "$@" | tee -a /tmp/ab/summary.txt; }
for i in 1 2; do
    ab old_$i "$OLD" $B --only fashion
    ab new_$i "" $B --only fashion
    ab old8_$i "$OLD" $B --only fashion --target-mib 8
    ab new8_$i "" $B --only fashion --target-mib 8
done
python3 tools/ab_compare.py old.1=/tmp/ab/old_1/bench.log new.1=/tmp/ab/new_1/bench.log \
    old.2=/tmp/ab/old_2/bench.log new.2=/tmp/ab/new_2/bench.log --what decode > /tmp/ab/compare.txt 2>&1
python3 tools/ab_compare.py old8.1=/tmp/ab/old8_1/bench.log new8.1=/tmp/ab/new8_1/bench.log \
    old8.2=/tmp/ab/old8_2/bench.log new8.2=/tmp/ab/new8_2/bench.log --what decode >> /tmp/ab/compare.txt 2>&1
cat /tmp/ab/compare.txt
tar czf "$R/ab.tgz" -C /tmp ab
timeout 300 bash tools/gpu-full-run.sh
