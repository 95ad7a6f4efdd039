#!/usr/bin/env bash
# Installs NVRTC from PyPI (no GPU or driver needed) so CI can compile every kernel for sm_90
# (test `nvrtc_compiles_for_sm90` in crates/ibp-gpu). Prints the line to export afterwards:
#   eval "$(tools/ci-nvrtc.sh)"   # then: IBP_REQUIRE_NVRTC=1 cargo test -p ibp-gpu --test nvrtc_compile
# Pinned to CUDA 13.0 to match the device driver (PTX/cubin from a newer NVRTC can fail on it).
set -euo pipefail
dest="${IBP_NVRTC_DIR:-${TMPDIR:-/tmp}/ibp-nvrtc}"
python3 -m pip install --quiet --disable-pip-version-check --target "$dest" "nvidia-cuda-nvrtc==13.0.88" >&2
lib="$(dirname "$(find "$dest" -name 'libnvrtc.so.13' | head -n 1)")"
if [ ! -e "$lib/libnvrtc.so.13" ]; then
    echo "ci-nvrtc: libnvrtc.so.13 not found under $dest" >&2
    exit 1
fi
echo "export LD_LIBRARY_PATH=\"$lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}\""
