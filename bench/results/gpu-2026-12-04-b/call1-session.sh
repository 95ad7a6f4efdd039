#!/usr/bin/env bash
# Session 2026-12-04 (ninth), call 1: the short-rows lean kernel (ibp_decode_tiles_lean_short: the
# thread path alone, 3 blocks per SM, 64 KiB tiles; picked for entries coded with rows of <= 16 words
# or <= 32 words of <= 64 B) against the lean kernel for any shape (IBP_LEAN_SHORT=0, same build),
# whole-entry decode of every bench entry, interleaved twice; then compute-sanitizer racecheck and
# synccheck on the lean tile kernels' GPU test (which now takes the short kernel for such entries).
set -u
[ -f .devrun/data/cora-features-f32.npy.gz ] && gunzip -f .devrun/data/cora-features-f32.npy.gz
R=${OUT:-/tmp/out}; rm -rf /tmp/ab /tmp/san; mkdir -p /tmp/ab /tmp/san "$R"
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current,clocks.sm,clocks.mem --format=csv,noheader > "$R/device.txt" 2>&1
run() {  # name [env...]
    local name=$1; shift
    local s=$(date +%s)
    env "$@" OUT=/tmp/ab/$name IBP_SKIP_TESTS=1 IBP_RUN_MEMCHECK=0 IBP_BENCH_TIMEOUT=120 \
        bash tools/gpu-run.sh --target-mib 256 --reps 9 --no-gathers > "/tmp/ab/$name.run.log" 2>&1
    echo "$name rc $? $(($(date +%s) - s)) s" | tee -a /tmp/ab/summary.txt
    tar czf "$R/ab.tgz" -C /tmp ab
}
run short1
run any1 IBP_LEAN_SHORT=0
run short2
run any2 IBP_LEAN_SHORT=0
python3 tools/ab_compare.py any1=/tmp/ab/any1/bench.log short1=/tmp/ab/short1/bench.log \
    any2=/tmp/ab/any2/bench.log short2=/tmp/ab/short2/bench.log --what decode > /tmp/ab/compare.txt 2>&1
tar czf "$R/ab.tgz" -C /tmp ab
cat /tmp/ab/compare.txt
s=$(date +%s)
OUT=/tmp/san IBP_SKIP_TESTS=1 IBP_SKIP_BENCH=1 IBP_RUN_MEMCHECK=0 IBP_RUN_RACECHECK=1 \
    IBP_RACECHECK_TESTS=rows_through_the_lean_tile_kernel IBP_RACECHECK_TIMEOUT=200 bash tools/gpu-run.sh > /tmp/san/run.log 2>&1
echo "sanitizers rc $? $(($(date +%s) - s)) s"; tar czf "$R/san.tgz" -C /tmp san; tail -n 3 /tmp/san/racecheck.log /tmp/san/synccheck.log
