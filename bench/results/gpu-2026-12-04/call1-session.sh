#!/usr/bin/env bash
# Session 2026-12-04, call 1: IBP_SLICE_BITBUF (a lane of the thread path reads its slice's fields
# from a window of its stream held in registers, not two shared-memory words per field) against
# the reads per field (=0) on the bf16 KV entries, interleaved twice; then the full run with it on
# (tests, vectors, sanitizers, bench), its output packed into full.tgz.
set -u
[ -f .devrun/data/cora-features-f32.npy.gz ] && gunzip -f .devrun/data/cora-features-f32.npy.gz
R=${OUT:-/tmp/out}; rm -rf /tmp/ab /tmp/full; mkdir -p /tmp/ab /tmp/full "$R"
ab() { OUT=$R IBP_BENCH_TIMEOUT=60 bash tools/gpu-ab.sh "$@" .devrun/ibp-gpu-bench --only bf16 | tee -a /tmp/ab/summary.txt; }
ab on1 ""
ab off1 "-DIBP_SLICE_BITBUF=0"
ab on2 ""
ab off2 "-DIBP_SLICE_BITBUF=0"
python3 tools/ab_compare.py off1=/tmp/ab/off1/bench.log on1=/tmp/ab/on1/bench.log off2=/tmp/ab/off2/bench.log \
    on2=/tmp/ab/on2/bench.log --what decode > /tmp/ab/compare.txt 2>&1
tar czf "$R/ab.tgz" -C /tmp ab
cat /tmp/ab/compare.txt
s=$(date +%s)
OUT=/tmp/full IBP_BENCH_TIMEOUT=330 IBP_SANITIZER_TIMEOUT=120 bash tools/gpu-run.sh --target-mib 256 --reps 9 > /tmp/full/run.log 2>&1
echo "full run rc $? $(($(date +%s) - s)) s" | tee -a /tmp/ab/summary.txt
tar czf "$R/full.tgz" -C /tmp full
tail -n 5 /tmp/full/run.log
