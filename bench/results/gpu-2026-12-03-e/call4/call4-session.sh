#!/usr/bin/env bash
# Session 2026-12-03 (fifth), call 4 (GPU_NOTES entry 51): whole-entry decode of the MiniLM KV entries,
# three kernel builds interleaved twice: raw0 = raw records of the thread path decoded word by word
# (IBP_SLICE_RAW_VECS=0, the kernels before), vec = raw records copied with 16-byte vectors (default),
# anya = that plus the thread path at every alignment (IBP_LEAN_THREAD_ANY_A=1: K bf16 at A = 16).
set -u
cd "$(dirname "$0")/.."
gunzip -f .devrun/data/cora-features-f32.npy.gz
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -e "$dir/libnvrtc.so.13" ] || [ -e "$dir/libnvrtc.so" ] && { export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; break; }
done
[ -d /usr/local/nvidia/lib64 ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/nvidia/lib64"
export IBP_REQUIRE_GPU=1 IBP_REQUIRE_NVRTC=1
mkdir -p /tmp/c4; s0=$(date +%s)
for rep in 1 2; do
    for v in raw0 vec anya; do
        case $v in raw0) d="-DIBP_SLICE_RAW_VECS=0";; vec) d="";; anya) d="-DIBP_LEAN_THREAD_ANY_A=1";; esac
        IBP_KERNEL_DEFINES="$d" timeout 100 .devrun/ibp-gpu-bench --data-dir .devrun/data --target-mib 256 --reps 9 \
            --no-gathers --only minilm-kv > /tmp/c4/$v-$rep.log 2>&1
        echo "$v-$rep exit $? at $(( $(date +%s) - s0 )) s" | tee -a /tmp/c4/steps.txt
        tar czf $OUT/c4.tgz -C /tmp c4
    done
done
