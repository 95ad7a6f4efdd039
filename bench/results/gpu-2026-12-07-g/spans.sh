#!/usr/bin/env bash
# Forty-first session (2026-12-07), GPU_NOTES entry 95: the host gathers of Cora and of f32 rows at 5 %
# non-zero (batches of 1K-64K rows, ROUNDS times, default 3) in turn through:
#   d  the defaults: row spans also where chunks are found by binary search (the bench's Cora
#      entries: their repeated 2,708-row block is cut into chunks of 1,463 and 1,245 rows, so until
#      now they took the anchor + stored-length lookup), and ibp_gather_sparse loading a chunk's
#      table offset beside its descriptor (IBP_GATHER_EARLY_TABLE=1);
#   e  the table offset loaded after the record is located (-DIBP_GATHER_EARLY_TABLE=0);
#   o  that, without row spans (IBP_GATHER_SPANS=0 in the environment): Cora's lookups as before
#      (f32 rows: their anchor path, not their old default, so o runs on Cora only).
# After the first round (unless SPANS_TESTS=0): the GPU tests, vectors and `ibp verify --gpu` (no
# sanitizers, no bench; $OUT/tests.tgz); after the last: the timeline build on Cora and f32 rows ($OUT/ab.tgz has all).
# Here: `bash tools/gpu-run.sh --prepare`, .devrun trimmed as ../gpu-2026-12-07-f/README.md says;
# on the device (carry .devrun): bash bench/results/gpu-2026-12-07-g/spans.sh
set -u
. tools/gpu-ab-lib.sh
nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1
ab_begin
round() {
    local i=$1
    gab "cd_$i" "" --only cora --no-synthetic
    gab "ce_$i" "-DIBP_GATHER_EARLY_TABLE=0" --only cora --no-synthetic
    (export IBP_GATHER_SPANS=0; gab "co_$i" "-DIBP_GATHER_EARLY_TABLE=0" --only cora --no-synthetic)
    gab "sd_$i" "" --only f32-sparse --no-real-data
    gab "se_$i" "-DIBP_GATHER_EARLY_TABLE=0" --only f32-sparse --no-real-data
}
round 1
if [ "${SPANS_TESTS:-1}" = 1 ]; then
    mkdir -p /tmp/tests; s=$(date +%s)
    OUT=/tmp/tests IBP_SKIP_BENCH=1 IBP_RUN_MEMCHECK=0 timeout 200 bash tools/gpu-run.sh > /tmp/tests/run.log 2>&1
    echo "tests rc $? $(($(date +%s) - s)) s" | tee -a /tmp/ab/summary.txt
    tail -n 4 /tmp/tests/run.log
    tar czf "$R/tests.tgz" -C /tmp tests
fi
for i in $(seq 2 "${ROUNDS:-3}"); do round "$i"; done
{
    compare_rounds gathers c "${ROUNDS:-3}" d e o
    compare_rounds gathers s "${ROUNDS:-3}" d e
} > /tmp/ab/compare.txt 2>&1
cat /tmp/ab/compare.txt
(
    export IBP_BENCH_UNCHECKED=1 IBP_BENCH_TIMELINE=1
    gab tc_1 "-DIBP_GATHER_TIMELINE=1" --only cora --no-synthetic
    gab ts_1 "-DIBP_GATHER_TIMELINE=1" --only f32-sparse --no-real-data
)
for t in tc_1 ts_1; do grep -h -E "^(## |batch |timeline )" "/tmp/ab/$t/bench.log"; done > /tmp/ab/timeline.txt 2>&1
ab_pack spans
