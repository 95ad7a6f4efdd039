#!/usr/bin/env bash
# Session 2026-12-04 (tenth), call 3: two tile buffers in the short-rows kernel (IBP_SHORT_DOUBLE=1:
# tiles of half the bytes, the next tile loaded while one decodes) against one buffer (the default),
# same build, on the bf16 KV entries (the only bench entries of that kernel), interleaved three times.
# Then, with two buffers and 4 KiB tiles (so a block runs several tiles of short rows): the
# gpu_decode tests, and racecheck and synccheck on the lean tile kernels' test.
set -u
[ -f .devrun/data/cora-features-f32.npy.gz ] && gunzip -f .devrun/data/cora-features-f32.npy.gz
R=${OUT:-/tmp/out}; rm -rf /tmp/ab /tmp/san; mkdir -p /tmp/ab /tmp/san "$R"
T0=$(date +%s)
for i in 1 2 3; do
    OUT=$R IBP_BENCH_TIMEOUT=90 bash tools/gpu-ab.sh one$i "" .devrun/ibp-gpu-bench --only bf16 | tee -a /tmp/ab/summary.txt
    IBP_SHORT_DOUBLE=1 OUT=$R IBP_BENCH_TIMEOUT=90 bash tools/gpu-ab.sh two$i "" .devrun/ibp-gpu-bench --only bf16 | tee -a /tmp/ab/summary.txt
done
args=""; for i in 1 2 3; do for n in one two; do args="$args $n$i=/tmp/ab/$n$i/bench.log"; done; done
python3 tools/ab_compare.py $args --what decode > /tmp/ab/compare.txt 2>&1
tar czf "$R/ab.tgz" -C /tmp ab
cat /tmp/ab/summary.txt /tmp/ab/compare.txt
export IBP_SHORT_DOUBLE=1 IBP_TILE_BYTES=4096
left() { echo $((570 - ($(date +%s) - T0))); }
s=$(date +%s); timeout $(( $(left) < 120 ? $(left) : 120 )) .devrun/tests/gpu_decode --test-threads=1 > /tmp/san/gpu_decode.log 2>&1
echo "gpu_decode (two buffers, 4 KiB tiles) rc $? $(($(date +%s) - s)) s"; tail -n 3 /tmp/san/gpu_decode.log; tar czf "$R/san.tgz" -C /tmp san
for tool in synccheck racecheck; do
    s=$(date +%s); timeout $(( $(left) < 220 ? $(left) : 220 )) compute-sanitizer --tool $tool --error-exitcode 9 \
        .devrun/tests/gpu_decode --test-threads=1 rows_through_the_lean_tile_kernel > /tmp/san/$tool.log 2>&1
    echo "$tool (two buffers, 4 KiB tiles) rc $? $(($(date +%s) - s)) s"; tail -n 3 /tmp/san/$tool.log; tar czf "$R/san.tgz" -C /tmp san
done
