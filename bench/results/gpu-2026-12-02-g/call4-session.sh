#!/usr/bin/env bash
# Session 2026-12-02 (fifth), call 4: whole-entry decode with more lean-kernel blocks per SM (short
# rows decoded a thread apiece are latency-bound at 43 % occupancy, entry 41): 5 blocks (48
# registers) with 36 KiB tiles, 6 blocks (40 registers) with 28 KiB tiles, and 36 KiB tiles at 4
# blocks, against the defaults (4 blocks, 48 KiB lean tiles). IBP_TILE_BYTES sets every tile kernel's
# tile; only the lean entries are compared.
set -u
bash tools/gpu-ab.sh base1 ""
IBP_TILE_BYTES=36864 bash tools/gpu-ab.sh mb5t36 "-DIBP_LEAN_MIN_BLOCKS=5"
IBP_TILE_BYTES=28672 bash tools/gpu-ab.sh mb6t28 "-DIBP_LEAN_MIN_BLOCKS=6"
IBP_TILE_BYTES=36864 bash tools/gpu-ab.sh t36 ""
bash tools/gpu-ab.sh base2 ""
