#!/usr/bin/env bash
# Session 2026-12-03 (sixth), call 2: whole-entry decode of the bf16 KV entries (rows of <= 64 B that
# the lean kernel decodes a thread apiece) through the lean kernel built for those rows alone
# (IBP_LEAN_AS_SHORT=1: slice_tile_rows only, so its register allocation is its own) at 3 and 2
# blocks per SM (80 / 128 registers; 48 / 64 KiB tiles), and the whole lean kernel at 3 blocks, against the
# defaults, interleaved (call 1: 5 and 6 blocks lost 10-20 %, 4 blocks of the short kernel the same as the default).
set -u
[ -f .devrun/data/cora-features-f32.npy.gz ] && gunzip -f .devrun/data/cora-features-f32.npy.gz
R=${OUT:-/tmp/out}; mkdir -p /tmp/ab "$R"
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current,clocks.sm,clocks.mem --format=csv,noheader > "$R/device.txt" 2>&1
run() {  # name defines [env...]
    local name=$1 defines=$2; shift 2
    local s=$(date +%s)
    env "$@" OUT=/tmp/ab/$name IBP_SKIP_TESTS=1 IBP_RUN_MEMCHECK=0 IBP_BENCH_TIMEOUT=150 IBP_KERNEL_DEFINES="$defines" \
        bash tools/gpu-run.sh --target-mib 256 --reps 9 --no-gathers --only bf16 > "/tmp/ab/$name.run.log" 2>&1
    echo "$name rc $? $(($(date +%s) - s)) s" | tee -a /tmp/ab/summary.txt
    grep -h '^| minilm' /tmp/ab/$name/bench.log | grep -v '+gpu' | awk -F'|' -v n=$name '{print n, $2, $4, $8, $9}' | tee -a /tmp/ab/summary.txt
    tar czf "$R/ab.tgz" -C /tmp ab
}
run base1 ""
run short3t48 "-DIBP_LEAN_AS_SHORT=1 -DIBP_LEAN_MIN_BLOCKS=3"
run short3t64 "-DIBP_LEAN_AS_SHORT=1 -DIBP_LEAN_MIN_BLOCKS=3" IBP_TILE_BYTES=65536
run short2t64 "-DIBP_LEAN_AS_SHORT=1 -DIBP_LEAN_MIN_BLOCKS=2" IBP_TILE_BYTES=65536
run lean3t64 "-DIBP_LEAN_MIN_BLOCKS=3" IBP_TILE_BYTES=65536
run base2 ""
run short3t64b "-DIBP_LEAN_AS_SHORT=1 -DIBP_LEAN_MIN_BLOCKS=3" IBP_TILE_BYTES=65536
run short2t64b "-DIBP_LEAN_AS_SHORT=1 -DIBP_LEAN_MIN_BLOCKS=2" IBP_TILE_BYTES=65536
cp /tmp/ab/summary.txt "$R/summary.txt"
