#!/usr/bin/env bash
# Sourced on the GPU machine by tools/gpu-run.sh and tools/gpu-profile.sh (D: the .devrun folder):
# unpacks what `tools/gpu-run.sh --prepare` packed to fit the 64 MiB a device call carries:
# - the data slices ($D/data/*.npy.gz);
# - $D/kernel-cache.txz, cubins compiled here for sm_90 (IBP_PREPARE_KERNEL_DEFINES), into the
#   kernel cache the processes will read (crates/ibp-gpu/src/kernel_cache.rs: IBP_KERNEL_CACHE, else
#   $XDG_CACHE_HOME/ibp/kernels, else $HOME/.cache/ibp/kernels; IBP_KERNEL_CACHE=off: none), so
#   the runs load them instead of spending device time on NVRTC. A cubin whose key does not match
#   (another NVRTC version, other sources) is ignored and compiled there as before. (Unpacked by
#   Python's tarfile: the machine may lack the xz program.)
for f in "$D"/data/*.npy.gz; do [ -f "$f" ] && gunzip -f "$f"; done
if [ -f "$D/kernel-cache.txz" ] && [ "${IBP_KERNEL_CACHE-unset}" != off ] && [ "${IBP_KERNEL_CACHE-unset}" != "" ]; then
    kc=${IBP_KERNEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ibp/kernels}
    mkdir -p "$kc" && python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
        "$D/kernel-cache.txz" "$kc" && rm -f "$D/kernel-cache.txz" &&
        echo "kernel cache: $(ls "$kc" | wc -l) cubins in $kc"
fi
