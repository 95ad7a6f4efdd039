#!/usr/bin/env bash
# (Decode A/B runs through tools/gpu-ab.sh, the helper these scripts first wrote inline.)
# Session 2026-12-02 (third), call 3: whole-entry decode with every entry of a table that has 3-4
# run entries in that form (IBP_TILE_RUNS_FORM=1, default) and without (=0), twice each, interleaved.
set -u
bash tools/gpu-ab.sh on1 ""
bash tools/gpu-ab.sh off1 "-DIBP_TILE_RUNS_FORM=0"
bash tools/gpu-ab.sh on2 ""
bash tools/gpu-ab.sh off2 "-DIBP_TILE_RUNS_FORM=0"
