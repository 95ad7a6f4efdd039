#!/usr/bin/env bash
# Thirty-eighth session (2026-12-07), GPU_NOTES entry 92: store_word's 4-byte aligned 64-bit words as
# two 32-bit stores (d: IBP_STORE_WORD_HALVES=1, the new default) against one store per byte (o: 0,
# as before). Cora's rows are 5,732 B (4 mod 8) of 64-bit words, so every other output row of a
# gather, and of a whole-entry decode, is 4-byte aligned only. Host gathers of 1K-64K rows and the
# whole-entry decode, the two builds in turn, twice.
# Here: `bash tools/gpu-run.sh --prepare`; on the device (carry .devrun):
#   bash bench/results/gpu-2026-12-07-d/halves.sh ab     # halves.tgz
set -u
. tools/gpu-ab-lib.sh
run_ab() {
    ab_begin
    for i in $(seq 1 "${ROUNDS:-2}"); do
        gab cd_$i "" --only cora --no-synthetic
        gab co_$i "-DIBP_STORE_WORD_HALVES=0" --only cora --no-synthetic
    done
    [ "${ROUNDS:-2}" -ge 2 ] && report "compare gathers cd co" "compare decode cd co"
    ab_pack halves
}
session_part "${1:-ab}" run_ab
