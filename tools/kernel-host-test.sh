#!/usr/bin/env bash
# Compiles the tile kernel's row decoders (kernels/ibp_gather.cu) for the CPU with kernels/host/cuda_host.h
# and checks them against a decoder written from the spec, on generated records intact and corrupted
# (kernels/host/table_decoders.cpp says what is covered). No GPU, no CUDA: g++ (C++20) and threads.
#
#   bash tools/kernel-host-test.sh [CASES]      # default 600 cases (about 3 600 records per decoder)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out="${TMPDIR:-/tmp}/ibp-kernel-host-test"
mkdir -p "$out"
"${CXX:-g++}" -std=c++20 -O1 -Wall -Wextra -Wno-unknown-pragmas -Wno-unused-parameter -pthread \
    -o "$out/table_decoders" "$root/kernels/host/table_decoders.cpp"
"$out/table_decoders" "${1:-600}"
