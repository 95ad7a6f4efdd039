#!/usr/bin/env bash
# Session 2026-12-04 (tenth), call 1: two per-tile switches of every tile kernel, whole-entry decode
# of every bench entry, interleaved twice against the default: IBP_TILE_CARRY_START=1 (a tile's first
# record offset carried from the tile before it in the block's run, no anchor chain), IBP_TILE_L2_NEXT=1
# (the next tile's bytes and stored lengths bulk-prefetched into the L2 while a tile decodes), and
# both. Then, with both on: the gpu_decode tests, the fuzz replay under memcheck, and racecheck and
# synccheck on the tile-kernel tests.
set -u
[ -f .devrun/data/cora-features-f32.npy.gz ] && gunzip -f .devrun/data/cora-features-f32.npy.gz
R=${OUT:-/tmp/out}; rm -rf /tmp/ab /tmp/san; mkdir -p /tmp/ab /tmp/san "$R"
T0=$(date +%s)
for i in 1 2; do
    OUT=$R IBP_BENCH_TIMEOUT=90 bash tools/gpu-ab.sh base$i "" | tee -a /tmp/ab/summary.txt
    OUT=$R IBP_BENCH_TIMEOUT=90 bash tools/gpu-ab.sh carry$i "-DIBP_TILE_CARRY_START=1" | tee -a /tmp/ab/summary.txt
    OUT=$R IBP_BENCH_TIMEOUT=90 bash tools/gpu-ab.sh l2$i "-DIBP_TILE_L2_NEXT=1" | tee -a /tmp/ab/summary.txt
    OUT=$R IBP_BENCH_TIMEOUT=90 bash tools/gpu-ab.sh both$i "-DIBP_TILE_CARRY_START=1 -DIBP_TILE_L2_NEXT=1" | tee -a /tmp/ab/summary.txt
done
args=""; for i in 1 2; do for n in base carry l2 both; do args="$args $n$i=/tmp/ab/$n$i/bench.log"; done; done
python3 tools/ab_compare.py $args --what decode > /tmp/ab/compare.txt 2>&1
tar czf "$R/ab.tgz" -C /tmp ab
cat /tmp/ab/summary.txt /tmp/ab/compare.txt
export IBP_KERNEL_DEFINES="-DIBP_TILE_CARRY_START=1 -DIBP_TILE_L2_NEXT=1"
left() { echo $((560 - ($(date +%s) - T0))); }
s=$(date +%s); timeout $(( $(left) < 120 ? $(left) : 120 )) .devrun/tests/gpu_decode --test-threads=1 > /tmp/san/gpu_decode.log 2>&1
echo "gpu_decode (both on) rc $? $(($(date +%s) - s)) s"; tail -n 3 /tmp/san/gpu_decode.log; tar czf "$R/san.tgz" -C /tmp san
s=$(date +%s); IBP_REPLAY_STRIDE=8 timeout $(( $(left) < 90 ? $(left) : 90 )) compute-sanitizer --tool memcheck --error-exitcode 9 \
    .devrun/tests/fuzz_replay_gpu --test-threads=1 > /tmp/san/replay-memcheck.log 2>&1
echo "fuzz replay memcheck (both on) rc $? $(($(date +%s) - s)) s"; tail -n 3 /tmp/san/replay-memcheck.log; tar czf "$R/san.tgz" -C /tmp san
for tool in racecheck synccheck; do
    s=$(date +%s); timeout $(( $(left) < 100 ? $(left) : 100 )) compute-sanitizer --tool $tool --error-exitcode 9 \
        .devrun/tests/gpu_decode --test-threads=1 rows_through_the_lean_tile_kernel uniform_field_lengths > /tmp/san/$tool.log 2>&1
    echo "$tool (both on) rc $? $(($(date +%s) - s)) s"; tail -n 3 /tmp/san/$tool.log; tar czf "$R/san.tgz" -C /tmp san
done
