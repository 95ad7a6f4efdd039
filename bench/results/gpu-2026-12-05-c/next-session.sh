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
#   bash bench/results/gpu-2026-12-05-c/next-session.sh gathers  # host-gather A/B of IBP_GATHER_PIPELINE and
#                                                              # IBP_GATHER_EARLY_TABLE (added in the twentieth
#                                                              # session, entry 71; ~6 min)
# Ran in the twentieth session on an H100 (GPU_NOTES entry 72, bench/results/gpu-2026-12-05-d): ab
# and gathers; nothing adopted; IBP_LONG_LEAN_VECS=1 gained 2-4 % on Fashion-MNIST there, so it is
# now the CANDIDATE of full (run ab on an H200 first to confirm it there). The twenty-first session
# removed IBP_LONG_LEAN_VECS=2, IBP_LONG_LEAN_TABLE and IBP_LONG_LEAN_WINDOW from the kernels (its
# script: bench/results/gpu-2026-12-05-e/session.sh), so lean2* here now build as lean1 or base.
# Order within the 30 minutes of device time: ab, gathers, then full with the switches that won
# (CANDIDATE="..."; every test, the vectors, the sanitizers and the whole bench on them), then
# `python3 tools/gpu_results.py` on its output for bench/GPU_RESULTS.md; profile only if time is left.
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
# gathers: host zero-copy gathers (IBP / ideal, batches of 1K-64K rows), each variant interleaved
# twice (entry 71):
#   gbase:  the default build;
#   gpipe:  -DIBP_GATHER_PIPELINE=1 -DIBP_PREFETCH_VECS=1: ibp_gather issues row k+1's first 512 B
#           per warp before it decodes row k (1 KiB with 2 vectors per lane spills the loaded
#           vectors to local memory, which waits for them: not timed);
#   gvec1:  -DIBP_PREFETCH_VECS=1 alone (the control for the smaller prefetch);
#   gearly: -DIBP_GATHER_EARLY_TABLE=1: the lookup loads a chunk's table offset beside its
#           descriptor, not after it (its check stood between the descriptor and the record's
#           first PCIe read: one dependent device-memory load less for chunks with tables).
# on the rows the decode bounds (Cora, f32 at 5 % non-zero 4 KiB: no tables; gbase/gpipe/gvec1),
# dense 1 KiB q4 rows (A = 16/1/128: the control for gpipe, the target of gearly), and GloVe and
# MiniLM word embeddings (gbase/gearly: 1K-row batches of table chunks). Batches of <= 1K rows (and
# 4K of Cora and sparse rows) go through ibp_gather_split, one step per group, which the pipeline
# does not change: its gain, if any, is from 16K-row batches (each warp of ibp_gather then takes
# 5-21 rows); gearly acts in both kernels. Adopt IBP_GATHER_PIPELINE (with IBP_PREFETCH_VECS 1) if
# it wins on Cora and the sparse rows in both runs and the dense control does not lose, and
# IBP_GATHER_EARLY_TABLE if it wins at 1K rows in both runs.
# Adopt (IBP_LONG_LEAN_VECS default 1 or 2, IBP_LONG_LEAN_TABLE 1) only what wins in both runs; the
# full part runs every GPU test with the candidate on (CANDIDATE="..." to change it, CANDIDATE= for
# the default build). After setting the defaults here, `BASE_DEFINES="<the measured switches>"
# tools/sass-equal.sh` (HEAD built with them against the working tree's new defaults) shows the same
# SASS, or run `full` again.
set -u
. tools/gpu-ab-lib.sh  # ab, gab, compare, report; R and B
CANDIDATE=${CANDIDATE--DIBP_LONG_LEAN_VECS=1}  # (set and empty: the default build)
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
    # (Ran in the twentieth session, entry 72; both switches were then dropped from the kernels: to
    # run this again, `git apply bench/results/gpu-2026-12-05-d/tried-gather-pipeline-early-table.diff`
    # and --prepare first.)
    rm -rf /tmp/ab; mkdir -p /tmp/ab
    export GAB_BATCHES=1024,4096,16384,65536
    PIPE="-DIBP_GATHER_PIPELINE=1 -DIBP_PREFETCH_VECS=1" VEC1="-DIBP_PREFETCH_VECS=1" EARLY="-DIBP_GATHER_EARLY_TABLE=1"
    for i in 1 2; do
        for v in "gbase:" "gpipe:$PIPE" "gvec1:$VEC1"; do
            n=${v%%:*} d=${v#*:}
            gab c${n}_$i "$d" --only cora
            gab s${n}_$i "$d" --only f32-sparse --row-bytes 4096
        done
        for v in "gbase:" "gpipe:$PIPE" "gvec1:$VEC1" "gearly:$EARLY"; do
            n=${v%%:*} d=${v#*:}
            gab d${n}_$i "$d" --only f32-normal-q4 --row-bytes 1024
        done
        for v in "gbase:" "gearly:$EARLY"; do
            n=${v%%:*} d=${v#*:}
            gab g${n}_$i "$d" --only glove
            gab w${n}_$i "$d" --only minilm-word-emb
        done
    done
    report "compare gathers cgbase cgpipe" "compare gathers cgbase cgvec1" \
        "compare gathers sgbase sgpipe" "compare gathers sgbase sgvec1" \
        "compare gathers dgbase dgpipe" "compare gathers dgbase dgvec1" "compare gathers dgbase dgearly" \
        "compare gathers ggbase ggearly" "compare gathers wgbase wgearly"
    ;;
profile)
    # Where each build of the long-rows kernel waits (tools/gpu-profile.sh, case long-fashion: shared
    # loads and their bank conflicts, the L1's wavefronts, the stall reasons per instruction):
    # $OUT/profile-base and $OUT/profile-candidate; then the host gathers of Cora rows (1K rows through
    # ibp_gather_split, 16K through ibp_gather; the default build): $OUT/profile-cora.
    mkdir -p "$R/profile-cora"
    IBP_PROFILE_ONLY="gather-cora-1k gather-cora-16k" IBP_PROFILE_STALLS=1 OUT="$R/profile-cora" \
        bash tools/gpu-profile.sh
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
