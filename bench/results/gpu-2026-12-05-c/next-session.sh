#!/usr/bin/env bash
# Written in the session of 2026-12-05 (nineteenth), when no device was lent (GPU_NOTES entry 70).
# For the next session with a GPU, here: on a fresh checkout `pip install -q -r
# tools/requirements-data.txt && python3 tools/datasets.py --gpu-pack` (the real-data slices); then
# `bash tools/gpu-run.sh --prepare` and `gzip -f .devrun/data/cora-features-f32.npy` (the carry
# limit is 64 MiB); then on the device (carry .devrun), one call per part:
#   bash bench/results/gpu-2026-12-05-c/next-session.sh ab     # Fashion-MNIST decode A/B (~5-6 min)
#   bash bench/results/gpu-2026-12-05-c/next-session.sh full   # every GPU test and the bench with the
#                                                              # candidate on (~8-9 min)
#   bash bench/results/gpu-2026-12-05-c/next-session.sh profile  # Nsight Compute on the long-rows kernel,
#                                                              # default and candidate, stall reasons (~3 min)
#   bash bench/results/gpu-2026-12-05-c/next-session.sh gathers  # host-gather A/B of IBP_GATHER_PIPELINE
#                                                              # (added in the twentieth session, entry 71; ~4-5 min)
# and, where a host of 2 GPUs is lent (kind nvidia-h200-x2; never so far):
#   bash bench/results/gpu-2026-12-04-i/next-session.sh multi
# ab: whole-entry decode of Fashion-MNIST (256 MiB entries: whole rows a lane apiece; 8 MiB entries:
# rows in segments), each variant interleaved twice:
#   base:   the default build (the long-rows kernel's flat path for every 16-byte vector);
#   lean1:  -DIBP_LONG_LEAN_VECS=1: vectors with no position of 3+ runs (43 of 49 per row) through
#           lean_vector (118 SASS instructions per vector of 16-bit words against the flat path's 342);
#   lean2:  -DIBP_LONG_LEAN_VECS=2: the 6 vectors with such positions too (a uniform branch per word
#           around deposit_runs);
#   lean2t: lean2 with -DIBP_LONG_LEAN_TABLE=1: sh1 and F kept apart in the table (tinfo .y, tmask .w),
#           no shift and mask per word (99 SASS instructions per vector of 16-bit words, 118 without);
#   lean2tw: lean2t with -DIBP_LONG_LEAN_WINDOW=1: each lane's stream through a window in registers
#           (one predicated load per read instead of two scattered ones: 20 shared loads per vector
#           instead of 24, about 9 wavefronts of stream reads instead of 28, for 132 instructions
#           instead of 99): a probe of whether the instructions or the L1's data path bind;
#   lean2tr: lean2t with tiles sized by records for the long kernel too (IBP_TILE_RECORDS_GAIN=100:
#           188 rows per tile, 6 decoding warps per block instead of 4; entry 63 lost 7 % with it
#           when the per-word code was the limit).
# gathers: host zero-copy gathers (IBP / ideal, batches of 1K-64K rows) of the rows the decode bounds
# (Cora, f32 at 5 % non-zero, 4 KiB) and of dense 1 KiB rows (q4 at A = 16/1/128: the control), each
# variant interleaved twice:
#   gbase:  the default build (ibp_gather issues row k+1's record loads after row k is decoded);
#   gpipe:  -DIBP_GATHER_PIPELINE=1 -DIBP_PREFETCH_VECS=1: row k+1's first 512 B per warp issued
#           before row k is decoded (4 bytes of spills);
#   gvec1:  -DIBP_PREFETCH_VECS=1 alone (the control for the smaller prefetch);
#   gpipe2: -DIBP_GATHER_PIPELINE=1 with 1 KiB per warp (48 bytes of spills, some of the prefetched
#           vectors stored to local memory, which waits for them).
# Batches of <= 1K rows (and 4K of Cora and sparse rows) go through ibp_gather_split, one step per
# group, which the switch does not change: expect the gain, if any, from 16K-row batches (each warp
# of ibp_gather then takes 5-21 rows). Adopt IBP_GATHER_PIPELINE (with IBP_PREFETCH_VECS 1 if gpipe
# wins over gpipe2) only if it wins on the decode-bound entries in both runs and the dense control
# does not lose.
# Adopt (IBP_LONG_LEAN_VECS default 1 or 2, IBP_LONG_LEAN_TABLE 1) only what wins in both runs; the
# full part runs every GPU test with the candidate on (CANDIDATE="..." to change it, CANDIDATE= for
# the default build). After setting the defaults here, `BASE_DEFINES="<the measured switches>"
# tools/sass-equal.sh` (HEAD built with them against the working tree's new defaults) shows the same
# SASS, or run `full` again.
set -u
. tools/gpu-ab-lib.sh  # ab, compare, report; R and B
CANDIDATE=${CANDIDATE--DIBP_LONG_LEAN_VECS=2 -DIBP_LONG_LEAN_TABLE=1}  # (set and empty: the default build)
case "${1:-ab}" in
ab)
    rm -rf /tmp/ab; mkdir -p /tmp/ab
    for i in 1 2; do
        ab base_$i "" $B --only fashion
        ab lean1_$i "-DIBP_LONG_LEAN_VECS=1" $B --only fashion
        ab lean2_$i "-DIBP_LONG_LEAN_VECS=2" $B --only fashion
        ab lean2t_$i "-DIBP_LONG_LEAN_VECS=2 -DIBP_LONG_LEAN_TABLE=1" $B --only fashion
        ab lean2tw_$i "-DIBP_LONG_LEAN_VECS=2 -DIBP_LONG_LEAN_TABLE=1 -DIBP_LONG_LEAN_WINDOW=1" $B --only fashion
        IBP_TILE_RECORDS_GAIN=100 ab lean2tr_$i "-DIBP_LONG_LEAN_VECS=2 -DIBP_LONG_LEAN_TABLE=1" $B --only fashion
        ab base8_$i "" $B --only fashion --target-mib 8
        ab lean2t8_$i "-DIBP_LONG_LEAN_VECS=2 -DIBP_LONG_LEAN_TABLE=1" $B --only fashion --target-mib 8
    done
    report "compare decode base lean1" "compare decode base lean2" "compare decode lean2 lean2t" \
        "compare decode lean2t lean2tw" "compare decode lean2t lean2tr" "compare decode base8 lean2t8"
    ;;
gathers)
    rm -rf /tmp/ab; mkdir -p /tmp/ab
    gab() {
        local name=$1 defines=$2
        shift 2
        local s=$(date +%s)
        OUT=/tmp/ab/$name IBP_SKIP_TESTS=1 IBP_RUN_MEMCHECK=0 IBP_BENCH_TIMEOUT=150 IBP_KERNEL_DEFINES="$defines" \
            bash tools/gpu-run.sh --target-mib 256 --reps 9 --batches 1024,4096,16384,65536 "$@" \
            >"/tmp/ab/$name.run.log" 2>&1
        echo "$name rc $? $(($(date +%s) - s)) s" | tee -a /tmp/ab/summary.txt
        tar czf "$R/ab.tgz" -C /tmp ab
    }
    P1="-DIBP_GATHER_PIPELINE=1 -DIBP_PREFETCH_VECS=1"
    for i in 1 2; do
        for v in "gbase:" "gpipe:$P1" "gvec1:-DIBP_PREFETCH_VECS=1" "gpipe2:-DIBP_GATHER_PIPELINE=1"; do
            n=${v%%:*} d=${v#*:}
            gab ${n}_$i "$d" --only cora
            gab s${n}_$i "$d" --only f32-sparse --row-bytes 4096
            gab d${n}_$i "$d" --only f32-normal-q4 --row-bytes 1024
        done
    done
    report "compare gathers gbase gpipe" "compare gathers gbase gvec1" "compare gathers gpipe gpipe2" \
        "compare gathers sgbase sgpipe" "compare gathers sgbase sgvec1" "compare gathers sgpipe sgpipe2" \
        "compare gathers dgbase dgpipe" "compare gathers dgbase dgvec1"
    ;;
profile)
    # Where each build of the long-rows kernel waits (tools/gpu-profile.sh, case long-fashion: shared
    # loads and their bank conflicts, the L1's wavefronts, the stall reasons per instruction):
    # $OUT/profile-base and $OUT/profile-candidate.
    for v in base candidate; do
        d=""; [ $v = candidate ] && d=$CANDIDATE
        mkdir -p "$R/profile-$v"
        IBP_KERNEL_DEFINES="$d" IBP_PROFILE_ONLY=long-fashion IBP_PROFILE_STALLS=1 OUT="$R/profile-$v" \
            bash tools/gpu-profile.sh
    done
    ;;
full)
    # Every GPU test (bit-exact against the CPU decoder, corrupt inputs rejected), the conformance
    # vectors, memcheck/initcheck and the bench, with the candidate switch on (CANDIDATE= for the
    # default build).
    IBP_KERNEL_DEFINES="$CANDIDATE" timeout 540 bash tools/gpu-full-run.sh
    ;;
esac
