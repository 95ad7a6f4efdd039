#!/usr/bin/env bash
# Thirty-eighth session (2026-12-07), GPU_NOTES entry 92: where a 1K-row host gather of Cora rows
# (ibp_gather_sparse) spends the time that separates it from the "ideal" record copy. Nsight Compute
# on one launch of each, with the caches as the bench's previous launches left them (none: code
# and metadata warm, as the bench's untimed launch on other rows leaves them) and flushed (all:
# cold code and metadata), stall samples per SASS instruction for the first.
# Here: `bash tools/gpu-run.sh --prepare`; on the device (carry .devrun):
#   bash bench/results/gpu-2026-12-07-c/profile.sh        # $OUT/none/*, $OUT/all/*
set -u
R=${OUT:-/tmp/out}
nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1
only="gather-cora-1k-sparse copy-cora-1k"
OUT=$R/none IBP_PROFILE_CACHE=none IBP_PROFILE_STALLS=1 IBP_PROFILE_ONLY="$only" bash tools/gpu-profile.sh
OUT=$R/all IBP_PROFILE_CACHE=all IBP_PROFILE_ONLY="$only" bash tools/gpu-profile.sh
for f in "$R"/none/ncu-*-sass.csv; do
    echo "== $f"; python3 tools/ncu_stalls.py "$f" --top 40 | tee "${f%.csv}-top.txt" | head -n 70
done
