#!/usr/bin/env bash
# RUN in the session of 2026-12-05 (parts ab, widths, gathers and full: bench/results/gpu-2026-12-05/,
# GPU_NOTES entry 68); part multi is still to run on a host of 2 GPUs. Written in the session of
# 2026-12-04 (sixteenth), when no device was lent. For the next session with a GPU,
# here: `pip install -q -r tools/requirements-data.txt && python3 tools/datasets.py --gpu-pack` (on
# a fresh checkout: the real-data slices), `bash tools/gpu-run.sh --prepare`, and
# `gzip -f .devrun/data/cora-features-f32.npy` (the carry limit is 64 MiB); then on the device
# (carry .devrun), one call per part:
#   bash bench/results/gpu-2026-12-04-i/next-session.sh ab       # decode A/Bs below (~6-8 min)
#   bash bench/results/gpu-2026-12-04-i/next-session.sh widths   # two encodings' decode below (~4-5 min)
#   bash bench/results/gpu-2026-12-04-i/next-session.sh gathers  # the gather A/B below (~4-6 min)
#   bash bench/results/gpu-2026-12-04-i/next-session.sh full     # tests, conformance, ibp verify --gpu, bench
# and, where a host of 2 GPUs is lent (kind nvidia-h200-x2; it never was so far), one call:
#   bash bench/results/gpu-2026-12-04-i/next-session.sh multi    # 2 GPUs on one pinned payload (~3-5 min)
# A/Bs of the three switches built but not timed (GPU_NOTES entry 66) and of two encodings (entry 67),
# each pair interleaved twice:
#   one:    -DIBP_SLICE_ONE_ENTRY=1 against the default, whole-entry decode of the KV-cache entries
#           (K/V bf16, K f32: every position one table entry; K bf16 is at 0.49 / 0.46 of the D2D copy);
#   wide:   -DIBP_LONG_WIDE_READS=1 against the default, whole-entry decode of Fashion-MNIST (256 MiB
#           entries: whole rows; 8 MiB entries: rows in segments);
#   fw32:   Fashion-MNIST encoded with 32-bit words (--word-width 32: 196 words per row instead of
#           392, 3.2 points less space saved, 33.7 % instead of 36.9 %; 41 of 196 positions with 3-5
#           runs of free bits) against the default 16-bit words, same build: the long-rows kernel's
#           cost follows the words per row, so half the words may outweigh the runs; if so, an encoder
#           option for GPU files (words per row against bytes) would follow;
#   kw64:   MiniLM K bf16 encoded with 64-bit words (8 words per 64 B row instead of 32 16-bit ones,
#           9.6 % saved instead of 10.6 %; every position one field of 44 bits) against the default,
#           same build: V bf16, decoded by 64-bit words, reads 0.51-0.53 where K bf16 reads 0.46-0.49;
#   ballot: -DIBP_ROUND_BALLOT_SCAN=1 against the default, host gathers of Cora and of f32 rows at 5 %
#           non-zero (IBP/ideal at 1K-16K-row batches: 0.65-0.96).
# Adopt a switch (default 1, drop the #else branch / the flag) only where it wins in both runs.
set -u
. tools/gpu-ab-lib.sh  # ab, gab, compare, report; R and B (the helpers this script defined, now shared)
case "${1:-ab}" in
ab)
    rm -rf /tmp/ab; mkdir -p /tmp/ab
    for i in 1 2; do
        ab base_$i "" $B --only minilm-kv
        ab one_$i "-DIBP_SLICE_ONE_ENTRY=1" $B --only minilm-kv
        ab fbase_$i "" $B --only fashion
        ab wide_$i "-DIBP_LONG_WIDE_READS=1" $B --only fashion
        ab fbase8_$i "" $B --only fashion --target-mib 8
        ab wide8_$i "-DIBP_LONG_WIDE_READS=1" $B --only fashion --target-mib 8
    done
    report "compare decode base one" "compare decode fbase wide" "compare decode fbase8 wide8"
    ;;
widths)
    # The same build, the files encoded with other word widths (whole-entry decode).
    rm -rf /tmp/ab; mkdir -p /tmp/ab
    for i in 1 2; do
        ab fbase_$i "" $B --only fashion
        ab fw32_$i "" $B --only fashion --word-width 32
        ab kbase_$i "" $B --only minilm-kv-k-bf16
        ab kw64_$i "" $B --only minilm-kv-k-bf16 --word-width 64
    done
    report "compare decode fbase fw32" "compare decode kbase kw64"
    ;;
gathers)
    rm -rf /tmp/ab; mkdir -p /tmp/ab
    for i in 1 2; do
        gab gbase_$i "" --only cora
        gab ballot_$i "-DIBP_ROUND_BALLOT_SCAN=1" --only cora
        gab sbase_$i "" --only f32-sparse --row-bytes 1024
        gab sballot_$i "-DIBP_ROUND_BALLOT_SCAN=1" --only f32-sparse --row-bytes 1024
    done
    report "compare gathers gbase ballot" "compare gathers sbase sballot"
    ;;
multi)
    # The shared-payload test on every GPU, `ibp verify --gpu` on the last one, and
    # ibp-gpu-multi-bench: 1 and 2 GPUs gathering at once from one pinned payload against the same
    # GPUs gathering the rows uncompressed (batches of 4K and 16K rows).
    OUT=$R IBP_SKIP_TESTS=1 IBP_SKIP_BENCH=1 IBP_RUN_MEMCHECK=0 IBP_RUN_MULTI=1 IBP_MULTI_TIMEOUT=420 \
        bash tools/gpu-run.sh
    ;;
full)
    # (With a switch adopted, rebuild here first; the full run times the default build.)
    timeout 540 bash tools/gpu-full-run.sh
    ;;
esac
