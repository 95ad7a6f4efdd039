#!/usr/bin/env bash
# Twenty-fourth session (2026-12-05, night). Here: `bash tools/gpu-run.sh --prepare`; on the device
# (carry .devrun), one call per part:
#   bash bench/results/gpu-2026-12-05-h/session.sh first   # H200: part full; another card: part waves
#   bash bench/results/gpu-2026-12-05-h/session.sh full    # every GPU test and the bench (~3-9 min):
#       then here python3 tools/gpu_results.py DIR/full --commit REV --wall-s S > bench/GPU_RESULTS.md
#   bash bench/results/gpu-2026-12-05-h/session.sh waves   # GPU_NOTES idea 11, grids of 3-6 waves:
#       IBP_TILE_FILL_WAVES=6 against the default (2) on 32 MiB entries (most entries need 2-12
#       waves there) and 64 MiB ones, each interleaved twice (~4 min); the bench's tile lines say
#       which entries the rule changed
set -u
part=${1:-first}
if [ "$part" = first ]; then
    g=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
    echo "$g"
    case "$g" in *H200*) part=full ;; *) part=waves ;; esac
fi
case "$part" in
full)
    timeout 560 bash tools/gpu-full-run.sh
    ;;
waves)
    . tools/gpu-ab-lib.sh
    rm -rf /tmp/ab; mkdir -p /tmp/ab
    for i in 1 2; do
        ab w2_$i "" $B --target-mib 32
        IBP_TILE_FILL_WAVES=6 ab w6_$i "" $B --target-mib 32
        ab v2_$i "" $B --target-mib 64
        IBP_TILE_FILL_WAVES=6 ab v6_$i "" $B --target-mib 64
    done
    report "compare decode w2 w6" "compare decode v2 v6"
    for r in w2_1 w6_1 v2_1 v6_1; do echo "== $r"; grep -h "whole entry's tiles" /tmp/ab/$r/bench.log; done > /tmp/ab/tiles.txt
    tar czf "$R/ab.tgz" -C /tmp ab
    ;;
*)
    echo "unknown part $part" >&2
    exit 2
    ;;
esac
