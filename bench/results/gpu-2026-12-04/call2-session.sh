#!/usr/bin/env bash
# Session 2026-12-04, call 2: compute-sanitizer racecheck and synccheck on the lean tile kernel of
# entry 54 (the only kernel whose SASS differs from 562591e's, where call 3 of 2026-12-03 ran them),
# through its gpu_decode test; then the stream window for every word width (IBP_SLICE_BITBUF=1, the
# default) against the window for words of <= 32 bits only (=2: V bf16's 64-bit words read per
# field again), on the bf16 KV entries, interleaved twice.
set -u
[ -f .devrun/data/cora-features-f32.npy.gz ] && gunzip -f .devrun/data/cora-features-f32.npy.gz
R=${OUT:-/tmp/out}; rm -rf /tmp/ab /tmp/san; mkdir -p /tmp/san "$R"
OUT=/tmp/san IBP_SKIP_TESTS=1 IBP_SKIP_BENCH=1 IBP_RUN_MEMCHECK=0 IBP_RUN_RACECHECK=1 \
    IBP_RACECHECK_TESTS=rows_through_the_lean_tile_kernel IBP_RACECHECK_TIMEOUT=240 bash tools/gpu-run.sh > /tmp/san/run.log 2>&1
echo "sanitizers rc $?"; tar czf "$R/san.tgz" -C /tmp san; tail -n 3 /tmp/san/racecheck.log /tmp/san/synccheck.log
OUT=$R IBP_BENCH_TIMEOUT=60 bash tools/gpu-ab-pair.sh all "" narrow "-DIBP_SLICE_BITBUF=2" .devrun/ibp-gpu-bench --only bf16
