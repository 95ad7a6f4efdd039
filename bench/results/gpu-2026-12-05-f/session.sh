#!/usr/bin/env bash
# Twenty-second session (2026-12-05): IBP_LONG_VEC_TABLE=1 (the long-rows kernel's packed table:
# 6 16-byte shared loads per vector of 16-bit words instead of 24 table loads, 113-118 SASS
# instructions instead of 118; GPU_NOTES entry 74) timed against the default on Fashion-MNIST, and
# the full run for bench/GPU_RESULTS.md.
# Here: `bash tools/gpu-run.sh --prepare`; then on the device (carry .devrun), one call per part:
#   bash bench/results/gpu-2026-12-05-f/session.sh ab    # base / vt / room, 256 MiB and 8 MiB, each
#       interleaved twice (~4 min); room = the default kernel with the packed table's room taken from
#       the tile (116 rows instead of 122), the control for the smaller tile; vtr = vt with tiles sized
#       by records (entry 72: -16 % without the packed table, its shared loads the suspect). Where vt wins (below),
#       every GPU test with it (~2 min) and /tmp/ibp-candidate written for part full.
#   bash bench/results/gpu-2026-12-05-f/session.sh full  # every GPU test and the bench (~9 min), the
#       default build (see below)
# Ran on an H100 (no H200 could be started): ab (ab-vt.tgz: vt +1.5-2 %, the same as room: no gain
# of its own; vtr -13 %); then two sweeps of IBP_TILE_BYTES on the default (ab-tiles.tgz,
# ab-tiles2.tgz, commands in GPU_NOTES entry 74); pick and pick2 on H100s too (tests-84k.tgz with
# the 96 KiB A/B; ab-balanced.tgz), then full on the same H100 (full-h100.tgz,
# bench/GPU_RESULTS_H100.md). The sweeps, for the record (each run of the default build):
#   for i in 1 2; do ab b_$i "" $B --only fashion; for t in 90112 86016 81920 73728 65536; do
#       IBP_TILE_BYTES=$t ab t${t}_$i "" $B --only fashion; done; done
#   (and 77824 81920 86016 with --target-mib 8 beside the 256 MiB entries)
# vt wins if on every 256 MiB Fashion-MNIST entry both its runs beat both base runs, and its 8 MiB
# entries average no worse than base's minus 0.01.
set -u
. tools/gpu-ab-lib.sh
VT="-DIBP_LONG_VEC_TABLE=1"
case "${1:-ab}" in
ab)
    rm -rf /tmp/ab /tmp/ibp-candidate; mkdir -p /tmp/ab
    for i in 1 2; do
        ab base_$i "" $B --only fashion
        IBP_LONG_VEC_TABLE=1 ab vt_$i "$VT" $B --only fashion
        IBP_LONG_VEC_TABLE=1 ab room_$i "" $B --only fashion
        IBP_LONG_VEC_TABLE=1 IBP_TILE_RECORDS_GAIN=100 ab vtr_$i "$VT" $B --only fashion
        ab base8_$i "" $B --only fashion --target-mib 8
        IBP_LONG_VEC_TABLE=1 ab vt8_$i "$VT" $B --only fashion --target-mib 8
    done
    report "compare decode base vt" "compare decode base room" "compare decode vt vtr" "compare decode base8 vt8"
    python3 - <<'PY' | tee -a /tmp/ab/compare.txt
import sys
sys.path.insert(0, "tools")
from ab_compare import parse
d = lambda n: parse(f"/tmp/ab/{n}/bench.log")[1]
b1, b2, v1, v2 = d("base_1"), d("base_2"), d("vt_1"), d("vt_2")
keys = [k for k in b1 if k in b2 and k in v1 and k in v2]
wins = bool(keys) and all(min(v1[k], v2[k]) > max(b1[k], b2[k]) for k in keys)
s = lambda *r: [x for m in r for x in m.values()]
b8, v8 = s(d("base8_1"), d("base8_2")), s(d("vt8_1"), d("vt8_2"))
ok8 = bool(b8) and bool(v8) and sum(v8) / len(v8) >= sum(b8) / len(b8) - 0.01
print(f"decision: {len(keys)} entries, 256 MiB wins {wins}, 8 MiB ok {ok8}")
if wins and ok8:
    open("/tmp/ibp-candidate", "w").write("vt\n")
PY
    if [ -f /tmp/ibp-candidate ]; then
        s=$(date +%s)
        OUT=/tmp/ab/tests-vt IBP_SKIP_BENCH=1 IBP_LONG_VEC_TABLE=1 IBP_KERNEL_DEFINES="$VT" bash tools/gpu-run.sh \
            > /tmp/ab/tests-vt.run.log 2>&1
        echo "tests-vt rc $? $(($(date +%s) - s)) s" | tee -a /tmp/ab/summary.txt
        tail -n 8 /tmp/ab/tests-vt.run.log
    fi
    tar czf "$R/ab.tgz" -C /tmp ab
    ;;
full)
    # (After part ab ran: vt lost to its own smaller tile, and IBP_TILE_BYTES sweeps found 80-84 KiB
    # the best long-rows tile; 84 KiB became the default (0d8aa8e) and vt was removed. So full is
    # the default build of 0d8aa8e or later.)
    timeout 540 bash tools/gpu-full-run.sh
    ;;
esac
# Part pick (the call for the full run, which may get an H100): full on an H200; on an H100 every
# GPU test with the new default and the Fashion-MNIST decode at 96 KiB tiles against it, twice.
if [ "${1:-}" = pick ]; then
    g=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
    echo "$g"
    case "$g" in
    *H200*) bash "$0" full ;;
    *)
        rm -rf /tmp/ab; mkdir -p /tmp/ab
        s=$(date +%s)
        OUT=/tmp/ab/tests IBP_SKIP_BENCH=1 bash tools/gpu-run.sh > /tmp/ab/tests.run.log 2>&1
        echo "tests rc $? $(($(date +%s) - s)) s" | tee -a /tmp/ab/summary.txt
        tail -n 8 /tmp/ab/tests.run.log
        for i in 1 2; do
            IBP_TILE_BYTES=98304 ab t96_$i "" $B --only fashion
            ab t84_$i "" $B --only fashion
        done
        report "compare decode t96 t84"
        ;;
    esac
fi
# Part pick2 (after 84 KiB became the default): full on an H200; on an H100 IBP_LONG_BALANCED=1
# (a tile's rows spread evenly over its row groups: 28, 27, 27, 27 lanes at 109 rows) at 84 KiB
# and at 96 KiB tiles (31, 31, 30, 30), against the default, twice, 256 MiB and 8 MiB entries.
if [ "${1:-}" = pick2 ]; then
    g=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
    echo "$g"
    case "$g" in
    *H200*) bash "$0" full ;;
    *)
        rm -rf /tmp/ab; mkdir -p /tmp/ab
        BAL="-DIBP_LONG_BALANCED=1"
        for i in 1 2; do
            ab base_$i "" $B --only fashion
            ab bal_$i "$BAL" $B --only fashion
            IBP_TILE_BYTES=98304 ab bal96_$i "$BAL" $B --only fashion
            IBP_TILE_BYTES=98304 ab base96_$i "" $B --only fashion
            ab base8_$i "" $B --only fashion --target-mib 8
            ab bal8_$i "$BAL" $B --only fashion --target-mib 8
        done
        report "compare decode base bal" "compare decode base bal96" "compare decode base base96" "compare decode base8 bal8"
        ;;
    esac
fi
# Part gsweep (the device time left): the general tile kernel's 32 KiB tiles against 28 and 24 KiB
# (IBP_TILE_BYTES, which sets every class: only entries of the general kernels are compared), Cora and
# f32-normal-q4 4 KiB rows, twice.
if [ "${1:-}" = gsweep ]; then
    rm -rf /tmp/ab; mkdir -p /tmp/ab
    for i in 1 2; do
        for t in 0 28672 24576; do
            if [ $t = 0 ]; then unset IBP_TILE_BYTES; else export IBP_TILE_BYTES=$t; fi
            ab c${t}_$i "" $B --only cora
            ab q${t}_$i "" $B --only f32-normal-q4 --row-bytes 4096
        done
    done
    unset IBP_TILE_BYTES
    report "compare decode c0 c28672" "compare decode c0 c24576" "compare decode q0 q28672" "compare decode q0 q24576"
fi
