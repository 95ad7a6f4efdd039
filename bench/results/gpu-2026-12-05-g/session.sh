#!/usr/bin/env bash
# Twenty-third session (2026-12-05, evening). Here: `bash tools/gpu-run.sh --prepare`; on the device
# (carry .devrun), one call per part:
#   bash bench/results/gpu-2026-12-05-g/session.sh first   # H200: part full; another card: part fill
#   bash bench/results/gpu-2026-12-05-g/session.sh full    # every GPU test and the bench (~3-9 min):
#       then here python3 tools/gpu_results.py DIR/full --commit REV --wall-s S > bench/GPU_RESULTS.md
#   bash bench/results/gpu-2026-12-05-g/session.sh fill    # GPU_NOTES idea 11: IBP_TILE_FILL=1 and
#       =15 against the default, 256 MiB and 8 MiB entries, each interleaved twice (~5 min; the
#       script of bench/results/gpu-2026-12-05-f/next-session.sh)
#   bash bench/results/gpu-2026-12-05-g/session.sh fill2   # (after part fill ran on an H100: fill
#       gained wherever an entry's tiles were fewer than one wave of resident blocks and lost 1.5-6 %
#       on entries of several waves, so fill_tile_rows now fills one partial wave only, on by
#       default) the new default against IBP_TILE_FILL=0, 256 MiB and 8 MiB, each interleaved
#       twice, then every GPU test with the new default (~7 min)
#   bash bench/results/gpu-2026-12-05-g/session.sh waves   # IBP_TILE_FILL_WAVES=2 (fill the last of
#       up to 2 waves, not only a first partial one) against the default (1): the 256 MiB f32-sparse
#       entries (the only ones of 1-2 waves: 768-1,024 tiles on 528 blocks) and every 8 MiB entry,
#       each interleaved twice (~2 min)
#   bash bench/results/gpu-2026-12-05-g/session.sh prof    # Nsight Compute: the long-rows kernel on
#       Fashion-MNIST at 84 KiB tiles (the default) and at 96 KiB (why the smaller tile is faster,
#       GPU_NOTES entry 74), with stall samples per instruction (~2-3 min)
# Ran (2026-12-05 17:05-17:25 UTC): an H200 try failed; on an H100 (nvidia-h100-x1): first (= fill,
# ab-fill.tgz), fill2 (ab-fill2.tgz, with the tests), prof, then one call more for two profiles of the
# same case (tiles sized by records, and 96-row tiles):
#   for v in IBP_TILE_RECORDS_GAIN=100 IBP_TILE_BYTES=75264; do d=$OUT/prof-${v#*=}; mkdir -p $d; env $v \
#       OUT=$d IBP_PROFILE_STALLS=2 IBP_PROFILE_ONLY=long-fashion bash tools/gpu-profile.sh; done
# (prof-long.tgz holds the four profiles' text, without their SASS pages), then full twice on the same
# H100 (full-h100.tgz -> bench/GPU_RESULTS_H100.md; full-h100-2.tgz: a call naming nvidia-h200 ran on
# the held H100); then waves (ab-waves.tgz) and, with IBP_TILE_FILL_WAVES=2 the default (13ea728),
# every GPU test (tests-waves2.tgz):
#   mkdir -p $OUT/tests; OUT=$OUT/tests IBP_SKIP_BENCH=1 bash tools/gpu-run.sh > $OUT/tests.run.log 2>&1
# Results: GPU_NOTES entry 75.
set -u
part=${1:-first}
if [ "$part" = first ]; then
    g=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
    echo "$g"
    case "$g" in *H200*) part=full ;; *) part=fill ;; esac
fi
case "$part" in
full)
    timeout 560 bash tools/gpu-full-run.sh
    ;;
fill)
    bash bench/results/gpu-2026-12-05-f/next-session.sh
    ;;
fill2)
    . tools/gpu-ab-lib.sh
    rm -rf /tmp/ab; mkdir -p /tmp/ab
    for i in 1 2; do
        IBP_TILE_FILL=0 ab off_$i "" $B
        ab on_$i "" $B
        IBP_TILE_FILL=0 ab off8_$i "" $B --target-mib 8
        ab on8_$i "" $B --target-mib 8
    done
    report "compare decode off on" "compare decode off8 on8"
    s=$(date +%s)
    OUT=/tmp/ab/tests IBP_SKIP_BENCH=1 bash tools/gpu-run.sh > /tmp/ab/tests.run.log 2>&1
    echo "tests rc $? $(($(date +%s) - s)) s" | tee -a /tmp/ab/summary.txt
    tail -n 12 /tmp/ab/tests.run.log
    tar czf "$R/ab.tgz" -C /tmp ab
    ;;
waves)
    . tools/gpu-ab-lib.sh
    rm -rf /tmp/ab; mkdir -p /tmp/ab
    for i in 1 2; do
        ab on_$i "" $B --only f32-sparse
        IBP_TILE_FILL_WAVES=2 ab w2_$i "" $B --only f32-sparse
        ab on8_$i "" $B --target-mib 8
        IBP_TILE_FILL_WAVES=2 ab w28_$i "" $B --target-mib 8
    done
    report "compare decode on w2" "compare decode on8 w28"
    for r in on_1 w2_1 on8_1 w28_1; do echo "== $r"; grep -h "whole entry's tiles" /tmp/ab/$r/bench.log; done > /tmp/ab/tiles.txt
    tar czf "$R/ab.tgz" -C /tmp ab
    ;;
prof)
    R=${OUT:-/tmp/out}
    for t in 86016 98304; do
        mkdir -p "$R/prof-$t"
        OUT=$R/prof-$t IBP_TILE_BYTES=$t IBP_PROFILE_STALLS=2 IBP_PROFILE_ONLY="long-fashion" bash tools/gpu-profile.sh
    done
    ;;
esac
