#!/usr/bin/env bash
# Session 2026-12-03 (second), call 3: host gathers of long rows at 4K-64K-row batches, one warp per
# row (ibp_gather, the policy's choice there: 6 blocks of 4 warps per SM, so 4K rows take two
# waves) against 2 and 4 warps per row forced (IBP_GATHER_SPLIT=1/2: ibp_gather_split, 8 blocks per
# SM), and a policy that minimises waves x words per warp (IBP_SPLIT_WAVES=1). Synthetic 4 KiB rows,
# Cora, MiniLM word-emb; auto twice for the spread.
set -u
R=$OUT
mkdir -p /tmp/c3
one() {
    local name=$1 env=$2; shift 2
    local s=$(date +%s)
    env $env OUT=/tmp/c3/$name IBP_SKIP_TESTS=1 IBP_RUN_MEMCHECK=0 IBP_BENCH_TIMEOUT=100 \
        bash tools/gpu-run.sh --target-mib 256 --reps 9 --batches 4096,16384,65536 "$@" > /tmp/c3/$name.run.log 2>&1
    echo "$name rc $? $(( $(date +%s) - s )) s"
}
variant() {
    local v=$1 env=$2
    one $v-4k "$env" --row-bytes 4096 --no-real-data
    one $v-cora "$env" --only cora --no-synthetic
    one $v-minilm "$env" --only minilm-word-emb --no-synthetic
    (cd /tmp/c3 && tar czf $R/ab.tgz */bench.log)
}
variant auto IBP_CALL=3
variant waves IBP_SPLIT_WAVES=1
variant s2 IBP_GATHER_SPLIT=1
variant s4 IBP_GATHER_SPLIT=2
variant auto2 IBP_CALL=3
ls $R
