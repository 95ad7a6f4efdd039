#!/usr/bin/env bash
# Session 2026-12-02 (fifth), call 1: whole-entry decode A/B of slice_tile_rows' output loop unrolled
# (IBP_LEAN_THREAD_UNROLL=1), with rows of <= 32 words and <= 64 B at A = 1 on the thread path too
# (IBP_LEAN_THREAD_A1_BYTES=64), and table_word unsplit (IBP_TABLE_WORD_SPLIT=0); then Nsight
# Compute stall profiles of MiniLM V bf16 (lean) and Fashion-MNIST (pairs kernel).
set -u
bash tools/gpu-ab.sh base1 ""
bash tools/gpu-ab.sh unroll1 "-DIBP_LEAN_THREAD_UNROLL=1"
bash tools/gpu-ab.sh unsplit1 "-DIBP_TABLE_WORD_SPLIT=0"
bash tools/gpu-ab.sh a1u "-DIBP_LEAN_THREAD_UNROLL=1 -DIBP_LEAN_THREAD_A1_BYTES=64"
bash tools/gpu-ab.sh base2 ""
bash tools/gpu-ab.sh unsplit2 "-DIBP_TABLE_WORD_SPLIT=0"
bash tools/gpu-ab.sh unroll2 "-DIBP_LEAN_THREAD_UNROLL=1"
s=$(date +%s)
IBP_PROFILE_ONLY="lean-kv-bf16 tiles-fashion" IBP_PROFILE_STALLS=1 IBP_PROFILE_TIMEOUT=100 bash tools/gpu-profile.sh
echo "profile $(( $(date +%s) - s )) s"
