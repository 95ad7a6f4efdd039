#!/usr/bin/env bash
# (Decode A/B runs through tools/gpu-ab.sh, the helper these scripts first wrote inline.)
# Session 2026-12-02 (third), call 4: whole-entry decode with the lean kernel's raw rows copied several per pass
# (IBP_LEAN_RAW_BATCH=1, default) and one per warp step (=0), twice each, interleaved.
set -u
bash tools/gpu-ab.sh on1 ""
bash tools/gpu-ab.sh off1 "-DIBP_LEAN_RAW_BATCH=0"
bash tools/gpu-ab.sh on2 ""
bash tools/gpu-ab.sh off2 "-DIBP_LEAN_RAW_BATCH=0"
