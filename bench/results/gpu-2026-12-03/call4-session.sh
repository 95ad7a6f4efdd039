#!/usr/bin/env bash
# Session 2026-12-03, call 4: whole-entry decode with rows of <= 32 words and <= 128 B in chunks of
# A = 1 on the thread path (IBP_LEAN_THREAD_A1_BYTES=128: MiniLM K f32 A=1) against the default
# (64), interleaved twice; then every GPU test, the conformance vectors and compute-sanitizer on
# this commit (no benchmark: call 3 timed the kernels this commit compiles to, but for a register
# renaming in ibp_gather_split's prologue, tools/sass-equal.sh).
set -u
R=$OUT
bash tools/gpu-ab.sh base1 ""
bash tools/gpu-ab.sh a128a "-DIBP_LEAN_THREAD_A1_BYTES=128"
bash tools/gpu-ab.sh base2 ""
bash tools/gpu-ab.sh a128b "-DIBP_LEAN_THREAD_A1_BYTES=128"
s=$(date +%s)
mkdir -p /tmp/c4
OUT=/tmp/c4 IBP_SKIP_BENCH=1 IBP_SANITIZER_TIMEOUT=120 timeout 420 bash tools/gpu-run.sh > /tmp/c4/run.log 2>&1
echo "tests rc $? $(( $(date +%s) - s )) s"
tail -8 /tmp/c4/run.log
tar czf $R/c4.tgz -C /tmp c4
