#!/usr/bin/env bash
# Session 2026-12-04 (tenth), call 4: IBP_SHORT_EARLY_NEXT=1 (no barrier at a tile's end in the
# short-rows kernel: a warp done with its rows reads the next tile's lengths while the others decode;
# entry 53's switch, which spilled at 64 registers, in the kernel of 80) against the default, on the
# bf16 KV entries, interleaved three times. Then the GPU tests of the tile kernels with 2 blocks per
# launch and 4 KiB tiles (each block runs several tiles of a chunk: the carried start, and the early
# next tile), under racecheck and synccheck: the default kernels, then with IBP_SHORT_EARLY_NEXT=1.
set -u
[ -f .devrun/data/cora-features-f32.npy.gz ] && gunzip -f .devrun/data/cora-features-f32.npy.gz
R=${OUT:-/tmp/out}; rm -rf /tmp/ab /tmp/san; mkdir -p /tmp/ab /tmp/san "$R"
T0=$(date +%s)
for i in 1 2 3; do
    OUT=$R IBP_BENCH_TIMEOUT=90 bash tools/gpu-ab.sh base$i "" .devrun/ibp-gpu-bench --only bf16 | tee -a /tmp/ab/summary.txt
    OUT=$R IBP_BENCH_TIMEOUT=90 bash tools/gpu-ab.sh early$i "-DIBP_SHORT_EARLY_NEXT=1" .devrun/ibp-gpu-bench --only bf16 | tee -a /tmp/ab/summary.txt
done
args=""; for i in 1 2 3; do for n in base early; do args="$args $n$i=/tmp/ab/$n$i/bench.log"; done; done
python3 tools/ab_compare.py $args --what decode > /tmp/ab/compare.txt 2>&1
tar czf "$R/ab.tgz" -C /tmp ab
cat /tmp/ab/summary.txt /tmp/ab/compare.txt
export IBP_TILE_MAX_BLOCKS=2 IBP_TILE_BYTES=4096
left() { echo $((575 - ($(date +%s) - T0))); }
TESTS="rows_through_the_lean_tile_kernel uniform_field_lengths mixed_word_widths"
for defs in "" "-DIBP_SHORT_EARLY_NEXT=1"; do
    tag=${defs:+early}; tag=${tag:-default}
    s=$(date +%s); IBP_KERNEL_DEFINES="$defs" timeout $(( $(left) < 90 ? $(left) : 90 )) .devrun/tests/gpu_decode --test-threads=1 > /tmp/san/gpu_decode-$tag.log 2>&1
    echo "gpu_decode ($tag, 2 blocks, 4 KiB tiles) rc $? $(($(date +%s) - s)) s"; tail -n 2 /tmp/san/gpu_decode-$tag.log
    for tool in synccheck racecheck; do
        s=$(date +%s); IBP_KERNEL_DEFINES="$defs" timeout $(( $(left) < 150 ? $(left) : 150 )) compute-sanitizer --tool $tool --error-exitcode 9 \
            .devrun/tests/gpu_decode --test-threads=1 $([ $tool = racecheck ] && echo rows_through_the_lean_tile_kernel mixed_word_widths || echo $TESTS) > /tmp/san/$tool-$tag.log 2>&1
        echo "$tool ($tag, 2 blocks, 4 KiB tiles) rc $? $(($(date +%s) - s)) s"; tail -n 2 /tmp/san/$tool-$tag.log; tar czf "$R/san.tgz" -C /tmp san
    done
done
