#!/usr/bin/env bash
# Two kernel builds A and B timed interleaved twice (A1 B1 A2 B2: tools/gpu-ab.sh each, whole-entry
# decode only) on the GPU machine, after tools/gpu-run.sh --prepare here (carry .devrun); writes
# /tmp/ab/summary.txt and /tmp/ab/compare.txt (tools/ab_compare.py, decode / D2D per run), packs
# /tmp/ab into $OUT/ab.tgz and prints the comparison. Arguments after B's defines go to the bench
# (default binary .devrun/ibp-gpu-bench, e.g. --only bf16); the environment reaches it too.
#
#   bash tools/gpu-ab-pair.sh NAME_A "DEFINES_A" NAME_B "DEFINES_B" [BENCH_BIN [BENCH ARGS...]]
#   bash tools/gpu-ab-pair.sh on "" off "-DIBP_SLICE_BITBUF=0" .devrun/ibp-gpu-bench --only bf16
set -u
[ $# -ge 4 ] || { sed -n '2,9p' "$0"; exit 2; }
a=$1 da=$2 b=$3 db=$4
shift 4
bin=${1:-.devrun/ibp-gpu-bench}
shift $(($# > 0 ? 1 : 0))
R=${OUT:-/tmp/ibp-gpu-out}
mkdir -p /tmp/ab "$R"
for i in 1 2; do
    OUT=$R bash tools/gpu-ab.sh "$a$i" "$da" "$bin" "$@" | tee -a /tmp/ab/summary.txt
    OUT=$R bash tools/gpu-ab.sh "$b$i" "$db" "$bin" "$@" | tee -a /tmp/ab/summary.txt
done
python3 tools/ab_compare.py "${a}1=/tmp/ab/${a}1/bench.log" "${b}1=/tmp/ab/${b}1/bench.log" \
    "${a}2=/tmp/ab/${a}2/bench.log" "${b}2=/tmp/ab/${b}2/bench.log" --what decode >/tmp/ab/compare.txt 2>&1
tar czf "$R/ab.tgz" -C /tmp ab
cat /tmp/ab/compare.txt
