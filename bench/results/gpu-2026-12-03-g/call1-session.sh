#!/usr/bin/env bash
# Session 2026-12-03 (seventh), call 1: IBP_TILE_EARLY_NEXT=1 (no barrier ending each tile; GPU_NOTES
# entry 52) against the default, whole-entry decode of every bench entry, interleaved twice; Fashion-MNIST
# encoded with 8/32/64-bit words (decode speed per word width); then racecheck and synccheck on the
# tile-kernel tests and the whole gpu_decode test binary with the switch on.
set -u
[ -f .devrun/data/cora-features-f32.npy.gz ] && gunzip -f .devrun/data/cora-features-f32.npy.gz
R=${OUT:-/tmp/out}; rm -rf /tmp/ab; mkdir -p /tmp/ab "$R"
[ -d /usr/local/nvidia/lib64 ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/nvidia/lib64"
ab() { OUT=$R IBP_BENCH_TIMEOUT=110 bash tools/gpu-ab.sh "$@" | tee -a /tmp/ab/summary.txt; }
ab base1 ""
ab early1 "-DIBP_TILE_EARLY_NEXT=1"
ab base2 ""
ab early2 "-DIBP_TILE_EARLY_NEXT=1"
for w in 8 32 64; do IBP_BENCH_TIMEOUT=40 ab fashion-w$w "" .devrun/ibp-gpu-bench --only fashion --word-width $w; done
python3 tools/ab_compare.py base1=/tmp/ab/base1/bench.log early1=/tmp/ab/early1/bench.log base2=/tmp/ab/base2/bench.log \
    early2=/tmp/ab/early2/bench.log --what decode > /tmp/ab/compare.txt 2>&1
tar czf "$R/ab.tgz" -C /tmp ab
export IBP_KERNEL_DEFINES=-DIBP_TILE_EARLY_NEXT=1 IBP_REQUIRE_GPU=1 IBP_REQUIRE_NVRTC=1 IBP_DATA_DIR=.devrun/data
s=$(date +%s); timeout 100 .devrun/tests/gpu_decode --test-threads=1 > /tmp/ab/early-gpu_decode.log 2>&1
echo "early gpu_decode rc $? $(($(date +%s) - s)) s" | tee -a /tmp/ab/summary.txt
for tool in racecheck synccheck; do
    s=$(date +%s); timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 .devrun/tests/gpu_decode --test-threads=1 \
        rows_through_the_lean_tile_kernel uniform_field_lengths mixed_word_widths > /tmp/ab/early-$tool.log 2>&1
    echo "early $tool rc $? $(($(date +%s) - s)) s" | tee -a /tmp/ab/summary.txt
done
tar czf "$R/ab.tgz" -C /tmp ab
cat /tmp/ab/summary.txt; tail -n 60 /tmp/ab/compare.txt
