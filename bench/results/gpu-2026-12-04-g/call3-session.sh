#!/usr/bin/env bash
# Session 2026-12-04 (fourteenth), call 3, on 5ac74c4: an Nsight Compute profile of the long-rows
# kernel on Fashion-MNIST with its shared-memory bank conflicts (tools/gpu-profile.sh, case long-fashion).
set -u
[ -f .devrun/data/cora-features-f32.npy.gz ] && gunzip -f .devrun/data/cora-features-f32.npy.gz
R=${OUT:-/tmp/out}; mkdir -p "$R"
IBP_PROFILE_ONLY="long-fashion" OUT=$R bash tools/gpu-profile.sh
grep -E "shared|Shared|Bank|bank|inst_executed" "$R/ncu-long-fashion.txt" | head -40
