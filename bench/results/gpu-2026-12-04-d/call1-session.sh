#!/usr/bin/env bash
# Session 2026-12-04 (eleventh), call 1: IBP_SHORT_WARP_TILES=1 (warp-level tiles in the short-rows
# kernel: each warp loads and decodes batches of ng 32-row blocks of its own, starting at their
# anchors; no block barrier but at a chunk's end) with ng = 4, 2, 1 against the default, on the
# bf16 KV entries, interleaved three times. Then the GPU tests with the switch: gpu_decode whole,
# the lean/corrupt/real-data tests with 2 blocks per launch (each warp several batches), and
# synccheck and racecheck on the lean test with 2 blocks per launch.
set -u
[ -f .devrun/data/cora-features-f32.npy.gz ] && gunzip -f .devrun/data/cora-features-f32.npy.gz
R=${OUT:-/tmp/out}; rm -rf /tmp/ab /tmp/san; mkdir -p /tmp/ab /tmp/san "$R"
T0=$(date +%s)
left() { echo $((580 - ($(date +%s) - T0))); }
W="-DIBP_SHORT_WARP_TILES=1"
for i in 1 2 3; do
    OUT=$R IBP_BENCH_TIMEOUT=90 bash tools/gpu-ab.sh base$i "" .devrun/ibp-gpu-bench --only bf16 | tee -a /tmp/ab/summary.txt
    OUT=$R IBP_BENCH_TIMEOUT=90 bash tools/gpu-ab.sh w4_$i "$W" .devrun/ibp-gpu-bench --only bf16 | tee -a /tmp/ab/summary.txt
    OUT=$R IBP_BENCH_TIMEOUT=90 bash tools/gpu-ab.sh w2_$i "$W -DIBP_SHORT_WARP_GROUPS=2" .devrun/ibp-gpu-bench --only bf16 | tee -a /tmp/ab/summary.txt
    OUT=$R IBP_BENCH_TIMEOUT=90 bash tools/gpu-ab.sh w1_$i "$W -DIBP_SHORT_WARP_GROUPS=1" .devrun/ibp-gpu-bench --only bf16 | tee -a /tmp/ab/summary.txt
done
args=""; for i in 1 2 3; do for n in base w4_ w2_ w1_; do m=${n%_}; args="$args $m$i=/tmp/ab/$n$i/bench.log"; done; done
python3 tools/ab_compare.py $args --what decode > /tmp/ab/compare.txt 2>&1
tar czf "$R/ab.tgz" -C /tmp ab
cat /tmp/ab/summary.txt /tmp/ab/compare.txt
s=$(date +%s); IBP_KERNEL_DEFINES="$W" timeout $(( $(left) < 150 ? $(left) : 150 )) .devrun/tests/gpu_decode --test-threads=1 > /tmp/san/gpu_decode-warp.log 2>&1
echo "gpu_decode (warp tiles) rc $? $(($(date +%s) - s)) s"; tail -n 3 /tmp/san/gpu_decode-warp.log
export IBP_TILE_MAX_BLOCKS=2
TESTS="rows_through_the_lean_tile_kernel corrupt_records_rejected_like_cpu real_data_matches_cpu_decoder"
s=$(date +%s); IBP_KERNEL_DEFINES="$W" timeout $(( $(left) < 120 ? $(left) : 120 )) .devrun/tests/gpu_decode --test-threads=1 $TESTS > /tmp/san/gpu_decode-warp-2blocks.log 2>&1
echo "gpu_decode (warp tiles, 2 blocks) rc $? $(($(date +%s) - s)) s"; tail -n 3 /tmp/san/gpu_decode-warp-2blocks.log
tar czf "$R/san.tgz" -C /tmp san
for tool in synccheck racecheck; do
    s=$(date +%s); IBP_KERNEL_DEFINES="$W" timeout $(( $(left) < 160 ? $(left) : 160 )) compute-sanitizer --tool $tool --error-exitcode 9 \
        .devrun/tests/gpu_decode --test-threads=1 rows_through_the_lean_tile_kernel > /tmp/san/$tool-warp.log 2>&1
    echo "$tool (warp tiles, 2 blocks) rc $? $(($(date +%s) - s)) s"; tail -n 3 /tmp/san/$tool-warp.log; tar czf "$R/san.tgz" -C /tmp san
done
