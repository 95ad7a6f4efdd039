#!/usr/bin/env bash
# Helpers the per-session device scripts (bench/results/gpu-*/*.sh) source for their A/Bs, run on the
# device (carry .devrun) after `bash tools/gpu-run.sh --prepare` here:
#   ab NAME DEFINES BENCH_BIN [BENCH ARGS...]  one decode-only run (tools/gpu-ab.sh) into /tmp/ab/NAME,
#                                              its status line appended to /tmp/ab/summary.txt
#   gab NAME DEFINES [BENCH ARGS...]           one run of the bench's host gathers and decode (tools/gpu-run.sh,
#                                              no tests) into /tmp/ab/NAME, batches $GAB_BATCHES
#                                              (default 1024,4096,16384), its status line appended
#                                              to /tmp/ab/summary.txt, /tmp/ab packed into $OUT/ab.tgz
#   compare WHAT A B                           runs A_1 B_1 A_2 B_2 (under /tmp/ab) side by side
#                                              (tools/ab_compare.py; WHAT: decode or gathers)
#   compare_rounds WHAT SET ROUNDS VARIANT...   runs SET{VARIANT}_{I} (under /tmp/ab) for I in 1..ROUNDS,
#                                              each round's variants side by side (tools/ab_compare.py)
#   report CMD...                              each command's output into /tmp/ab/compare.txt,
#                                              printed; /tmp/ab packed into $OUT/ab.tgz
#   interleave RUNNER ROUNDS [BENCH ARGS...] -- VARIANT...
#                                              a fresh /tmp/ab, then ROUNDS rounds of one RUNNER run
#                                              (ab: decode only, on $B; gab: gathers and decode) per
#                                              VARIANT, in order; VARIANT is NAME|ENV|DEFINES (ENV:
#                                              space-separated VAR=VALUE for the run, may be empty);
#                                              run I of NAME lands in /tmp/ab/NAME_I
#   ab_begin                                   a fresh /tmp/ab, batches of 1K-64K rows for gab
#   ab_pack NAME                               every run's batch and whole-entry lines into
#                                              /tmp/ab/rows.txt, /tmp/ab packed into $OUT/NAME.tgz
#                                              (in place of $OUT/ab.tgz)
#   session_part PART AB_FUNCTION              a session script's dispatch: ab runs AB_FUNCTION,
#                                              first runs it and then the full run (tools/gpu-full-run.sh),
#                                              full runs the full run alone; prints the GPU's name first
# Sourcing it sets R (the folder that comes back: $OUT) and B (the bench binary). (The data
# slices --prepare gzipped are unpacked by tools/gpu-run.sh, which every run here goes through.)
R=${OUT:-/tmp/out}; mkdir -p "$R"
B=.devrun/ibp-gpu-bench
ab() { OUT=$R IBP_BENCH_TIMEOUT=${IBP_BENCH_TIMEOUT:-150} bash tools/gpu-ab.sh "$@" | tee -a /tmp/ab/summary.txt; }
gab() {
    local name=$1 defines=$2
    shift 2
    local s=$(date +%s)
    OUT=/tmp/ab/$name IBP_SKIP_TESTS=1 IBP_RUN_MEMCHECK=0 IBP_BENCH_TIMEOUT=150 IBP_KERNEL_DEFINES="$defines" \
        bash tools/gpu-run.sh --target-mib 256 --reps 9 --batches "${GAB_BATCHES:-1024,4096,16384}" "$@" \
        >"/tmp/ab/$name.run.log" 2>&1
    echo "$name rc $? $(($(date +%s) - s)) s" | tee -a /tmp/ab/summary.txt
    tar czf "$R/ab.tgz" -C /tmp ab
}
compare() {
    python3 tools/ab_compare.py "$2.1=/tmp/ab/$2_1/bench.log" "$3.1=/tmp/ab/$3_1/bench.log" \
        "$2.2=/tmp/ab/$2_2/bench.log" "$3.2=/tmp/ab/$3_2/bench.log" --what "$1"
}
compare_rounds() {
    local what=$1 set=$2 rounds=$3 i v
    shift 3
    local args=()
    for i in $(seq 1 "$rounds"); do
        for v in "$@"; do args+=("$v.$i=/tmp/ab/$set${v}_$i/bench.log"); done
    done
    python3 tools/ab_compare.py "${args[@]}" --what "$what"
}
report() {
    for c in "$@"; do $c; done > /tmp/ab/compare.txt 2>&1
    cat /tmp/ab/compare.txt
    tar czf "$R/ab.tgz" -C /tmp ab
}
interleave() {
    local runner=$1 rounds=$2 spec name envs defines i
    shift 2
    local args=()
    [ "$runner" = ab ] && args=("$B")
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do args+=("$1"); shift; done
    [ $# -gt 0 ] || { echo "interleave: no -- before the variants" >&2; return 2; }
    shift
    rm -rf /tmp/ab; mkdir -p /tmp/ab
    for i in $(seq 1 "$rounds"); do
        for spec in "$@"; do
            IFS='|' read -r name envs defines <<<"$spec"
            # shellcheck disable=SC2086 # ENV is a list of VAR=VALUE words
            (for kv in $envs; do export "${kv?}"; done; "$runner" "${name}_$i" "$defines" "${args[@]}")
        done
    done
}
ab_begin() {
    rm -rf /tmp/ab; mkdir -p /tmp/ab
    export GAB_BATCHES=1024,4096,16384,65536
}
ab_pack() {
    grep -h -E "^(## |batch |whole entry)" /tmp/ab/*/bench.log > /tmp/ab/rows.txt
    tar czf "$R/$1.tgz" -C /tmp ab
    [ "$1" = ab ] || rm -f "$R/ab.tgz"  # (what gab and report packed on the way)
}
session_part() {
    nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1
    case "$1" in
    ab) "$2" ;;
    first) "$2"; timeout 280 bash tools/gpu-full-run.sh ;;
    full) timeout 280 bash tools/gpu-full-run.sh ;;
    *) echo "unknown part $1 (ab, first or full)" >&2; return 2 ;;
    esac
}
