#!/usr/bin/env bash
# Session 2026-12-02 (third), call 2: Nsight Compute profile with stall reasons and source counters
# of the Fashion-MNIST whole-entry decode through ibp_decode_tiles_pairs (16-bit pairs).
set -u
s=$(date +%s)
IBP_PROFILE_ONLY="tiles-fashion" IBP_PROFILE_STALLS=1 IBP_PROFILE_TIMEOUT=200 bash tools/gpu-profile.sh
echo "profile $(( $(date +%s) - s )) s"
ls -la $OUT
