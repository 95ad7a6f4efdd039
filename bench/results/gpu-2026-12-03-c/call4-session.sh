#!/usr/bin/env bash
# Session 2026-12-03 (third), call 4: re-laid KV rows (flat raw chunks) gather at 0.65 of their own
# "ideal" copy at 16K-row batches while `+gpu` files of the same layout read 1.0-1.1. Hypothesis: the
# NUMA node of each pinned buffer. The host's topology; then the bench on the MiniLM KV entries with
# pinned buffers allocated on the GPU's node (default since this commit) and as before
# (IBP_PINNED_NUMA=0), alternated; then the GPU unit and decode tests on the default.
set -u
R=$OUT
T0=$(date +%s)
{
nvidia-smi topo -m
lscpu | grep -iE "numa|socket|model name"
ls /sys/devices/system/node/ | grep -E '^node'
for n in /sys/devices/system/node/node*/cpulist; do echo "$n $(cat $n)"; done
nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader
for d in /sys/bus/pci/devices/*; do [ "$(cat $d/class 2>/dev/null)" = 0x030200 ] && echo "$d numa $(cat $d/numa_node)"; done
} > $R/topo.txt 2>&1
mkdir -p /tmp/c4
one() {
    local name=$1 env=$2
    local s=$(date +%s)
    env $env OUT=/tmp/c4/$name IBP_SKIP_TESTS=1 IBP_RUN_MEMCHECK=0 IBP_BENCH_TIMEOUT=60 \
        bash tools/gpu-run.sh --target-mib 256 --reps 9 --only minilm-kv --no-synthetic --batches 4096,16384,65536 > /tmp/c4/$name.run.log 2>&1
    echo "$name rc $? $(( $(date +%s) - s )) s"
    (cd /tmp/c4 && tar czf $R/ab.tgz */bench.log *.run.log)
}
one numa IBP_CALL=4
one off IBP_PINNED_NUMA=0
one numa2 IBP_CALL=4
one off2 IBP_PINNED_NUMA=0
(.devrun/tests/ibp_gpu; .devrun/tests/gpu_decode) > $R/tests.log 2>&1
echo "tests rc $?"; grep "test result" $R/tests.log
cat $R/topo.txt | tail -12
echo "total $(( $(date +%s) - T0 )) s"
