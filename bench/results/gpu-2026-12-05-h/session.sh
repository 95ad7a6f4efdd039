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
#   bash bench/results/gpu-2026-12-05-h/session.sh staged  # IBP_LONG_STAGED_STORES (the long-rows
#       kernel's vectors stored row by row from a shared-memory stage): K = 2 against the default,
#       and K = 4 against the default stores, both with 96-row tiles (IBP_TILE_BYTES=75264: K = 4's
#       16 KiB of static shared memory does not fit two blocks per SM beside 84 KiB tiles),
#       Fashion-MNIST only, each interleaved twice (~3 min)
#   bash bench/results/gpu-2026-12-05-h/session.sh flat    # IBP_FLAT_ROUNDS (round pairs of 0/W-bit
#       fields without the scan and the deposit: Cora, f32 at 5 % non-zero) with and without
#       IBP_SPLIT_MIN_BLOCKS=8 (ibp_gather_split kept at 64 registers) against the default: host
#       gathers of Cora, f32-sparse and (control) dense 1 KiB q4 rows at 1K-64K-row batches, and
#       whole-entry decode of every entry, each interleaved twice (~5-8 min)
# Ran (2026-12-05, 19:05-19:32 UTC): part first on an H200 (= full, full-h200.tgz ->
# bench/GPU_RESULTS.md); the next call (waves) lost its machine before it finished; then on an H100
# (nvidia-h100-x1) staged (ab-staged.tgz; the switch's code: tried-long-staged-stores.diff) and
# waves (ab-waves.tgz), then flat (ab-flat.tgz; the switches' code: tried-flat-rounds.diff).
# Results: GPU_NOTES entry 76. The switches were removed afterwards, so part staged needs 6ee4d5b's
# kernels and part flat 14caa7b's.
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
staged)
    . tools/gpu-ab-lib.sh
    rm -rf /tmp/ab; mkdir -p /tmp/ab
    for i in 1 2; do
        ab d_$i "" $B --only fashion
        ab k2_$i "-DIBP_LONG_STAGED_STORES=2" $B --only fashion
        IBP_TILE_BYTES=75264 ab t96_$i "" $B --only fashion
        IBP_TILE_BYTES=75264 ab k4_$i "-DIBP_LONG_STAGED_STORES=4" $B --only fashion
    done
    report "compare decode d k2" "compare decode t96 k4" "compare decode d k4"
    ;;
flat)
    . tools/gpu-ab-lib.sh
    rm -rf /tmp/ab; mkdir -p /tmp/ab
    export GAB_BATCHES=1024,4096,16384,65536
    for i in 1 2; do
        for v in "base:" "flat:-DIBP_FLAT_ROUNDS=1" "flat8:-DIBP_FLAT_ROUNDS=1 -DIBP_SPLIT_MIN_BLOCKS=8"; do
            n=${v%%:*} d=${v#*:}
            gab c${n}_$i "$d" --only cora
            gab s${n}_$i "$d" --only f32-sparse
            gab q${n}_$i "$d" --only f32-normal-q4 --row-bytes 1024
            ab a${n}_$i "$d" $B
        done
    done
    report "compare gathers cbase cflat" "compare gathers cbase cflat8" "compare gathers sbase sflat" \
        "compare gathers sbase sflat8" "compare gathers qbase qflat8" "compare decode abase aflat" \
        "compare decode abase aflat8"
    ;;
*)
    echo "unknown part $part" >&2
    exit 2
    ;;
esac
