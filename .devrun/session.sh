#!/usr/bin/env bash
# Session 2026-12-02 (fourth), call 4: whole-entry decode with slice_tile_rows reading through a
# stream window (IBP_LEAN_WINDOW=1) and through sbits32 (=0), then the full run (every GPU test,
# conformance vectors, the benchmark, compute-sanitizer) with the faster of the two on MiniLM V rows
# (the only entries this path takes), which the commit after this run makes the default.
set -u
R=$OUT
bash tools/gpu-ab.sh w1a "-DIBP_LEAN_WINDOW=1"
bash tools/gpu-ab.sh w0a "-DIBP_LEAN_WINDOW=0"
bash tools/gpu-ab.sh w1b "-DIBP_LEAN_WINDOW=1"
bash tools/gpu-ab.sh w0b "-DIBP_LEAN_WINDOW=0"
win=$(python3 - <<'PY'
def v(path):
    xs = []
    for l in open(path):
        c = [x.strip() for x in l.split("|")]
        if len(c) > 8 and c[1] == "minilm-kv-v-bf16" and c[8] in ("lean",):
            xs.append(float(c[7]))
    return sum(xs) / len(xs) if xs else 0.0
a = v("/tmp/ab/w1a/bench.log") + v("/tmp/ab/w1b/bench.log")
b = v("/tmp/ab/w0a/bench.log") + v("/tmp/ab/w0b/bench.log")
print(1 if a >= b else 0)
PY
)
echo "window: $win"
echo "$win" > $R/window-choice.txt
s=$(date +%s)
OUT=$R IBP_KERNEL_DEFINES="-DIBP_LEAN_WINDOW=$win" IBP_BENCH_TIMEOUT=300 IBP_SANITIZER_TIMEOUT=80 \
    bash tools/gpu-run.sh --target-mib 256 --reps 9 > $R/run.log 2>&1
echo "full rc $? $(( $(date +%s) - s )) s"
grep -E "test result|FAILED|panicked" $R/tests.log | head -20
tail -3 $R/conformance-gpu.txt
