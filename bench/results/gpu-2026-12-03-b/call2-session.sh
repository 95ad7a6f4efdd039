#!/usr/bin/env bash
# Session 2026-12-03 (second), call 2: every GPU test, the conformance vectors and compute-sanitizer
# on the session's last commit (ChunkForm's validation before re-laying; no kernel change since call 1).
set -u
R=$OUT
s=$(date +%s)
OUT=$R IBP_SKIP_BENCH=1 IBP_SANITIZER_TIMEOUT=120 bash tools/gpu-run.sh > $R/run.log 2>&1
echo "tests rc $? $(( $(date +%s) - s )) s"
tail -6 $R/run.log
cd $R && tar czf logs.tgz run.log tests.log replay-*.log memcheck.log 2>/dev/null; ls
