#!/usr/bin/env bash
# Session 2026-12-04 (thirteenth), call 6: the full GPU run on 0f617a9 (every GPU test, conformance
# vectors, sanitizers, the bench), then whole-entry decode of MiniLM's FFN-up weights in bf16 (768 B
# rows of 384 16-bit words: the long-rows kernel's rows other than pixels) with IBP_LEAN_LONG=0 (the
# pairs kernel) and 1 (the long-rows kernel), interleaved twice.
set -u
bash tools/gpu-full-run.sh
R=${OUT:-/tmp/out}; mkdir -p /tmp/bf16
for i in 1 2; do
    for l in 0 1; do
        IBP_LEAN_LONG=$l timeout 60 .devrun/ibp-gpu-bench --data-dir .devrun/data-bf16 --no-synthetic --no-gathers \
            --target-mib 256 --reps 9 > /tmp/bf16/long$l.$i.log 2>&1
        echo "bf16 long=$l run $i rc $?"
    done
done
python3 tools/ab_compare.py pairs.1=/tmp/bf16/long0.1.log long.1=/tmp/bf16/long1.1.log pairs.2=/tmp/bf16/long0.2.log \
    long.2=/tmp/bf16/long1.2.log --what decode 2>&1 | tee /tmp/bf16/compare.txt
tar czf "$R/bf16.tgz" -C /tmp bf16
