#!/usr/bin/env bash
# Session 2026-12-03, call 3: ibp_gather_split with warps of at least 64 words (default, segments
# rounded to 64) against at least 32 (IBP_SPLIT_WORDS=32: 4 warps for rows of 128-255 words, e.g.
# 1.2-1.5 KiB rows of 64-bit words), 1K and 2K-row batches, interleaved twice; then the full run
# (every GPU test, conformance vectors, the benchmark, compute-sanitizer) with the better one.
set -u
R=$OUT
mkdir -p /tmp/c3
ab() {
    local name=$1; shift
    local s=$(date +%s)
    env "$@" OUT=/tmp/c3/$name IBP_SKIP_TESTS=1 IBP_RUN_MEMCHECK=0 IBP_BENCH_TIMEOUT=100 \
        bash tools/gpu-run.sh --target-mib 256 --reps 9 --batches 1024,2048 > /tmp/c3/$name.run.log 2>&1
    echo "$name rc $? $(( $(date +%s) - s )) s"
    cp /tmp/c3/$name/bench.log $R/ab-$name.log 2>/dev/null
}
ab w64a IBP_SPLIT_WORDS=64
ab w32a IBP_SPLIT_WORDS=32
ab w64b IBP_SPLIT_WORDS=64
ab w32b IBP_SPLIT_WORDS=32
pick=$(python3 - <<'PY'
import sys
sys.path.insert(0, "tools")
from ab_compare import parse
def v(names):
    xs = []
    for n in names:
        g = parse(f"/tmp/c3/{n}/bench.log")[0]
        xs += [r[1] for (name, b), r in g.items() if int(name.split()[1]) >= 784]
    return sum(xs) / max(len(xs), 1)
a, b = v(["w64a", "w64b"]), v(["w32a", "w32b"])
print(f"w64 {a:.4f} w32 {b:.4f}", file=sys.stderr)
print(32 if b > a + 0.003 else 64)
PY
)
echo "pick: $pick"
echo "$pick" > $R/pick.txt
s=$(date +%s)
OUT=$R IBP_SPLIT_WORDS=$pick IBP_BENCH_TIMEOUT=300 IBP_SANITIZER_TIMEOUT=120 \
    bash tools/gpu-run.sh --target-mib 256 --reps 9 > $R/run.log 2>&1
echo "full rc $? $(( $(date +%s) - s )) s"
tail -4 $R/run.log
cd $R && tar czf logs.tgz run.log tests.log replay-*.log 2>/dev/null; ls
