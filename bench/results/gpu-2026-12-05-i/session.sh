#!/usr/bin/env bash
# Twenty-fifth session (2026-12-05, night): no device machine was lent, so this script waits for the
# next session. Here: `bash tools/gpu-run.sh --prepare`; on the device (carry .devrun), one call per
# part (diag and bulk: whole-entry decode / D2D of Fashion-MNIST's 256 MiB entries; every variant
# interleaved twice with the default; results: GPU_NOTES entry 77 says what each part answers):
#   bash bench/results/gpu-2026-12-05-i/session.sh first  # the card's name, then part diag
#   bash bench/results/gpu-2026-12-05-i/session.sh diag   # where the long-rows kernel's time goes
#       (IBP_LONG_DIAG, never correct output, so IBP_BENCH_UNCHECKED=1): 1 no stores (decode kept,
#       one store per row), 2 no decode (stores of made-up vectors), 3 neither (tile loads and
#       offsets); each also with rows in 2 segments (IBP_LONG_TILES_PER_SM=24: all 8 warps decode,
#       entry 73: -19 %) and with tiles sized by the records (IBP_TILE_RECORDS_GAIN=100: 6 decoding
#       warps a block, entry 72: -16 %), to see whether what more decoding warps lose is in the
#       stores (~6 min)
#   bash bench/results/gpu-2026-12-05-i/session.sh bulk   # IBP_LONG_BULK_STORES (vectors staged in
#       shared memory, each lane's K vectors written by one cp.async.bulk): K = 4; K = 2 with two
#       buffers; K = 8 on 96-row tiles (IBP_TILE_BYTES=75264, 3 staging warps) against the default
#       on the same tiles; output checked byte for byte by the bench (~4 min)
#   bash bench/results/gpu-2026-12-05-i/session.sh gdiag  # where the sparse rows' host gathers
#       lose to ideal (IBP_GATHER_DIAG, IBP_BENCH_UNCHECKED=1): 1 no decode (each coded row written
#       with a made-up value), 2 no decode and no row written; Cora and f32 at 5 % non-zero (1 and 4
#       KiB rows), 1K-64K-row batches, each interleaved twice with the default (~6-8 min)
#   bash bench/results/gpu-2026-12-05-i/session.sh prof   # Nsight Compute of the long-rows kernel:
#       default, IBP_LONG_DIAG=1 and IBP_LONG_BULK_STORES=4 (memory sections: L2 requests, xbar)
#   DEFINES="-DIBP_LONG_BULK_STORES=4" bash bench/results/gpu-2026-12-05-i/session.sh tests
#       # every GPU test, vector and sanitizer with a candidate's switch on (tools/gpu-full-run.sh)
# Ran (2026-12-05, 23:06-23:14 UTC, an H100: no H200 could be started), as three inline calls:
# part diag without its segment and record-tile pairs (ab-diag.tgz), part bulk without K = 8
# (ab-bulk.tgz), part gdiag on Cora only, twice (ab-gdiag.tgz). Results: GPU_NOTES entry 77. The
# bulk stores lost and were removed, so part bulk needs 612e942's kernels
# (tried-long-bulk-stores.diff).
set -u
part=${1:-first}
. tools/gpu-ab-lib.sh
run_diag() {
    rm -rf /tmp/ab; mkdir -p /tmp/ab
    for i in 1 2; do
        ab d_$i "" $B --only fashion
        for n in 1 2 3; do IBP_BENCH_UNCHECKED=1 ab n${n}_$i "-DIBP_LONG_DIAG=$n" $B --only fashion; done
        IBP_LONG_TILES_PER_SM=24 ab s_$i "" $B --only fashion
        IBP_LONG_TILES_PER_SM=24 IBP_BENCH_UNCHECKED=1 ab sn1_$i "-DIBP_LONG_DIAG=1" $B --only fashion
        IBP_TILE_RECORDS_GAIN=100 ab r_$i "" $B --only fashion
        IBP_TILE_RECORDS_GAIN=100 IBP_BENCH_UNCHECKED=1 ab rn1_$i "-DIBP_LONG_DIAG=1" $B --only fashion
    done
    report "compare decode d n1" "compare decode d n2" "compare decode d n3" "compare decode d s" \
        "compare decode s sn1" "compare decode d r" "compare decode r rn1"
    mv "$R/ab.tgz" "$R/ab-diag.tgz"
}
run_bulk() {
    rm -rf /tmp/ab; mkdir -p /tmp/ab
    for i in 1 2; do
        ab d_$i "" $B --only fashion
        ab b4_$i "-DIBP_LONG_BULK_STORES=4" $B --only fashion
        ab b22_$i "-DIBP_LONG_BULK_STORES=2 -DIBP_LONG_BULK_BUFFERS=2" $B --only fashion
        IBP_TILE_BYTES=75264 ab t96_$i "" $B --only fashion
        IBP_TILE_BYTES=75264 ab b8_$i "-DIBP_LONG_BULK_STORES=8 -DIBP_LONG_STAGE_WARPS=3" $B --only fashion
    done
    report "compare decode d b4" "compare decode d b22" "compare decode t96 b8"
    mv "$R/ab.tgz" "$R/ab-bulk.tgz"
}
run_gdiag() {
    rm -rf /tmp/ab; mkdir -p /tmp/ab
    export GAB_BATCHES=1024,4096,16384,65536
    for i in 1 2; do
        for v in "base:" "g1:-DIBP_GATHER_DIAG=1" "g2:-DIBP_GATHER_DIAG=2"; do
            n=${v%%:*} d=${v#*:}
            IBP_BENCH_UNCHECKED=1 gab c${n}_$i "$d" --only cora
            IBP_BENCH_UNCHECKED=1 gab s${n}_$i "$d" --only f32-sparse
        done
    done
    report "compare gathers cbase cg1" "compare gathers cbase cg2" "compare gathers sbase sg1" \
        "compare gathers sbase sg2"
    mv "$R/ab.tgz" "$R/ab-gdiag.tgz"
}
case "$part" in
first)
    nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1
    run_diag
    ;;
diag) run_diag ;;
gdiag) run_gdiag ;;
bulk) run_bulk ;;
prof)
    for v in "base:" "diag1:-DIBP_LONG_DIAG=1" "bulk4:-DIBP_LONG_BULK_STORES=4"; do
        n=${v%%:*} d=${v#*:}
        mkdir -p "$R/prof-$n"
        OUT=$R/prof-$n IBP_KERNEL_DEFINES="$d" IBP_BENCH_UNCHECKED=1 IBP_PROFILE_STALLS=2 \
            IBP_PROFILE_ONLY="long-fashion" bash tools/gpu-profile.sh
    done
    ;;
tests)
    IBP_KERNEL_DEFINES="${DEFINES:-}" timeout 560 bash tools/gpu-full-run.sh
    ;;
*)
    echo "unknown part $part" >&2
    exit 2
    ;;
esac
