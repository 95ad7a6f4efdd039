#!/usr/bin/env bash
# Call 1 (2026-12-03 fifth session): GPU tests of the row spans, then A/B of row spans and table
# prefetch on gathers (IBP_BENCH_AB_SPANS=1: "raw zc" column = IBP gather without spans).
set -u
cd "$(dirname "$0")/.."
gunzip -f .devrun/data/cora-features-f32.npy.gz
R=$OUT; mkdir -p /tmp/c1
s0=$(date +%s)
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -e "$dir/libnvrtc.so.13" ] || [ -e "$dir/libnvrtc.so" ] && { export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; break; }
done
[ -d /usr/local/nvidia/lib64 ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/nvidia/lib64"
export IBP_REQUIRE_GPU=1 IBP_REQUIRE_NVRTC=1 IBP_DATA_DIR=.devrun/data
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current,clocks.sm,clocks.mem --format=csv > /tmp/c1/device.txt 2>&1
date -u >> /tmp/c1/device.txt
timeout 150 .devrun/tests/gpu_decode --test-threads=1 > /tmp/c1/gpu_decode.log 2>&1; echo "gpu_decode exit $? at $(( $(date +%s) - s0 )) s" | tee -a /tmp/c1/steps.txt
pack() { tar czf "$R/c1.tgz" -C /tmp c1; }
pack
run() {  # name defines
    local name=$1 defines=$2
    IBP_BENCH_AB_SPANS=1 IBP_KERNEL_DEFINES="$defines" timeout 140 .devrun/ibp-gpu-bench --data-dir .devrun/data \
        --target-mib 256 --reps 9 --batches 1024,4096,16384 > /tmp/c1/$name.log 2>&1
    echo "$name exit $? at $(( $(date +%s) - s0 )) s" | tee -a /tmp/c1/steps.txt
    pack
}
run spans-a ""
run pf1 "-DIBP_GATHER_PREFETCH=1"
run pf2 "-DIBP_GATHER_PREFETCH=2"
run spans-b ""
