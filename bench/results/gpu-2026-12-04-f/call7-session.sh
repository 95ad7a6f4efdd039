#!/usr/bin/env bash
# Session 2026-12-04 (thirteenth), call 7: gpu_decode after the long-rows kernel's choice was limited
# to entries with at most half their positions free (and the kernel forced on every other entry it
# can decode, in check_case).
set -u
R=${OUT:-/tmp/out}; mkdir -p "$R"
IBP_REQUIRE_GPU=1 timeout 110 .devrun/tests/gpu_decode --test-threads=1 2>&1 | tee "$R/gpu_decode.log" | grep -E "^test |test result|panicked"
