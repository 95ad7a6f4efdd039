#!/usr/bin/env bash
# The device tool copies the working tree (tracked files included) with the carried paths, 64 MiB in
# all; bench/results (about 20 MiB of earlier runs' logs) is not needed on the device. Before a
# device call that carries a full .devrun:
#   bash tools/devcall-park.sh park [KEEP_DIR...]   # moves bench/results, but KEEP_DIRs (e.g.
#                                                   # bench/results/gpu-2026-12-07-h), to /tmp/ibp-parked
#   bash tools/devcall-park.sh restore              # puts them back (run it before any commit)
set -euo pipefail
P=/tmp/ibp-parked
case "${1:-}" in
park)
    shift
    [ -e "$P" ] && { echo "$P exists: restore first"; exit 1; }
    mkdir -p "$P"
    mv bench/results "$P/results"
    mkdir -p bench/results
    for keep in "$@"; do
        rel=${keep#bench/results/}
        mkdir -p "bench/results/$(dirname "$rel")"
        cp -a "$P/results/$rel" "bench/results/$rel"
    done
    echo "parked bench/results in $P (kept: $*)"
    ;;
restore)
    [ -d "$P/results" ] || { echo "nothing parked"; exit 1; }
    cp -a bench/results/. "$P/results/"  # (what was written to the kept folders meanwhile)
    rm -rf bench/results
    mv "$P/results" bench/results
    rmdir "$P"
    echo "restored bench/results"
    ;;
*) echo "usage: $0 park [KEEP_DIR...] | restore"; exit 2 ;;
esac
