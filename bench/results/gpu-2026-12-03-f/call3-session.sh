#!/usr/bin/env bash
# Session 2026-12-03 (sixth), call 3: whole-entry decode of every bench entry, the tile kernels'
# per-tile work shortened (IBP_TILE_CHUNK_CACHE: no chunk search while a block's tiles stay in one
# chunk; IBP_TILE_LEN_UNROLL: a thread's stored lengths loaded together) against the kernels before
# (both 0), interleaved twice; and the lean kernel at 3 blocks per SM with 64 KiB tiles on top (call 2:
# +2-6 % on the bf16 KV entries; IBP_TILE_BYTES sets every tile kernel's tile, so only lean rows count).
set -u
[ -f .devrun/data/cora-features-f32.npy.gz ] && gunzip -f .devrun/data/cora-features-f32.npy.gz
R=${OUT:-/tmp/out}; rm -rf /tmp/ab; mkdir -p /tmp/ab "$R"
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current,clocks.sm,clocks.mem --format=csv,noheader > "$R/device.txt" 2>&1
run() {  # name defines [env...]
    local name=$1 defines=$2; shift 2
    local s=$(date +%s)
    env "$@" OUT=/tmp/ab/$name IBP_SKIP_TESTS=1 IBP_RUN_MEMCHECK=0 IBP_BENCH_TIMEOUT=150 IBP_KERNEL_DEFINES="$defines" \
        bash tools/gpu-run.sh --target-mib 256 --reps 9 --no-gathers > "/tmp/ab/$name.run.log" 2>&1
    echo "$name rc $? $(($(date +%s) - s)) s" | tee -a /tmp/ab/summary.txt
    tar czf "$R/ab.tgz" -C /tmp ab
}
run old1 "-DIBP_TILE_CHUNK_CACHE=0 -DIBP_TILE_LEN_UNROLL=0"
run new1 ""
run new3t64 "-DIBP_LEAN_MIN_BLOCKS=3" IBP_TILE_BYTES=65536
run old2 "-DIBP_TILE_CHUNK_CACHE=0 -DIBP_TILE_LEN_UNROLL=0"
run new2 ""
run new3t64b "-DIBP_LEAN_MIN_BLOCKS=3" IBP_TILE_BYTES=65536
python3 tools/ab_compare.py old1=/tmp/ab/old1/bench.log new1=/tmp/ab/new1/bench.log old2=/tmp/ab/old2/bench.log \
    new2=/tmp/ab/new2/bench.log l3=/tmp/ab/new3t64/bench.log l3b=/tmp/ab/new3t64b/bench.log --what decode | tee "$R/compare.txt"
