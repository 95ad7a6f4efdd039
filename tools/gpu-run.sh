#!/usr/bin/env bash
# Runs every GPU test and the GPU benchmark of crates/ibp-gpu, the conformance vectors on the GPU,
# and `ibp verify --gpu` (the CLI's GPU tests, then the real datasets compressed by `ibp compress`).
#
#   tools/gpu-run.sh --prepare            # here (has Rust): build release test binaries and the bench,
#                                         # copy them (stripped) and bench/data/gpu-pack into .devrun/
#   bash tools/gpu-run.sh [bench flags]   # on the GPU machine (no Rust): run them, logs under $OUT
#   (tools/gpu-ab.sh runs the decode-only part once with other kernel defines, for A/Bs;
#   tools/gpu-ab-pair.sh times two such builds interleaved twice and compares them)
#
# Environment on the GPU machine: IBP_RUN_MEMCHECK=0 skips compute-sanitizer's memcheck and initcheck;
# IBP_RUN_RACECHECK=1 adds its racecheck and synccheck on the tile-kernel tests (IBP_RACECHECK_TIMEOUT s each, 300;
# IBP_RACECHECK_TESTS: the gpu_decode test filters, default the three tile-kernel tests; it runs even with
# IBP_SKIP_TESTS=1, so IBP_SKIP_TESTS=1 IBP_SKIP_BENCH=1 IBP_RUN_RACECHECK=1 runs it alone); IBP_SKIP_BENCH=1 and
# IBP_SKIP_TESTS=1 skip those parts (the tests include the conformance vectors); IBP_BENCH_BIN runs another bench binary (an A/B baseline built
# from an older commit). Test binaries run with IBP_REQUIRE_GPU=1 and
# IBP_REQUIRE_NVRTC=1, so a missing driver or NVRTC fails instead of skipping. Test binaries named in
# IBP_DEVICE_SKIP_TESTS (default: nvrtc_compile, which compiles every kernel and A/B variant for sm_90
# through NVRTC alone, no GPU: CI runs it, and it took 134 s of each full run's device time; the GPU
# tests compile the kernels through the device's NVRTC as they load them) are listed in tests.log as
# not run here; IBP_DEVICE_SKIP_TESTS= runs them all. IBP_RUN_MULTI=1 adds the multi-GPU step (a host of
# 2+ GPUs: the shared-payload test, `ibp verify --gpu` on the last GPU, ibp-gpu-multi-bench with
# IBP_MULTI_FLAGS into multi-bench.log).
set -uo pipefail
D=.devrun

if [ "${1:-}" = "--prepare" ]; then
    set -e
    mkdir -p "$D/tests" "$D/data"
    rm -f "$D"/tests/*
    cargo test -p ibp-gpu --release --no-run --message-format=json 2>/dev/null \
        | python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["executable"])' \
        | while read -r exe; do
            name="$(basename "$exe" | sed 's/-[0-9a-f]*$//')"
            cp "$exe" "$D/tests/$name" && strip "$D/tests/$name"
        done
    # The CLI's tests, for `ibp verify --gpu` (run here with the filter `verify`: the others need
    # the repository's path of the build machine), and the `ibp` binary they run.
    cargo test -p ibp-cli --release --test cli --no-run --message-format=json 2>/dev/null \
        | python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"] and m["target"]["name"] == "cli":
        print(m["executable"])' \
        | while read -r exe; do cp "$exe" "$D/tests/ibp_cli" && strip "$D/tests/ibp_cli"; done
    cargo build -p ibp-cli --release
    cp target/release/ibp "$D/" && strip "$D/ibp"
    cargo build -p ibp-gpu --release --bins
    cp target/release/ibp-gpu-bench "$D/" && strip "$D/ibp-gpu-bench"
    cp target/release/ibp-gpu-multi-bench "$D/" && strip "$D/ibp-gpu-multi-bench"
    cargo build -p ibp-conformance --release --features gpu
    cp target/release/ibp-conformance "$D/" && strip "$D/ibp-conformance"
    # The data slices gzipped: the device tool carries at most 64 MiB with the working tree
    # (unpacked on the device below, for every run: gpu-ab.sh, gpu-ab-lib.sh and gpu-full-run.sh
    # come through here; gpu-profile.sh, which runs the bench itself, unpacks them too).
    if [ -d bench/data/gpu-pack ]; then cp bench/data/gpu-pack/*.npy "$D/data/" && gzip -f "$D"/data/*.npy; fi
    # IBP_PREPARE_KERNEL_DEFINES="SET;SET;..." (a SET: IBP_KERNEL_DEFINES for one build, an empty
    # SET the defaults; unset: nothing compiled here): every kernel module compiled for sm_90 (NVRTC from
    # tools/ci-nvrtc.sh, about 50 s a SET) into $D/kernel-cache.txz (1.2 MB a SET), which tools/devrun-unpack.sh
    # unpacks into the device's kernel cache (else each SET takes the device about 80 s of NVRTC).
    rm -f "$D/kernel-cache.txz"
    if [ "${IBP_PREPARE_KERNEL_DEFINES+set}" = set ]; then
        eval "$(bash tools/ci-nvrtc.sh 2>/dev/null)"
        kc=$(mktemp -d)
        IFS=';' read -r -a sets <<<"${IBP_PREPARE_KERNEL_DEFINES};"
        for defines in "${sets[@]}"; do
            IBP_KERNEL_CACHE=$kc IBP_KERNEL_DEFINES="$defines" "$D/ibp-gpu-bench" --fill-kernel-cache 90
        done
        tar cJf "$D/kernel-cache.txz" -C "$kc" . && rm -rf "$kc"
    fi
    ls -la "$D" "$D/tests" "$D/data"
    du -sh "$D"
    exit 0
fi

OUT="${OUT:-/tmp/ibp-gpu-out}"
mkdir -p "$OUT"
. tools/devrun-unpack.sh  # the data slices and kernel cache --prepare packed
# NVRTC: the CUDA toolkit's, else a pip wheel's.
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
    $(python3 -c 'import nvidia, os; print(" ".join(os.path.join(p, s, "lib") for p in nvidia.__path__ for s in ("cu13", "cuda_nvrtc")))' 2>/dev/null); do
    if [ -e "$dir/libnvrtc.so.13" ] || [ -e "$dir/libnvrtc.so" ]; then
        export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        break
    fi
done
[ -d /usr/local/nvidia/lib64 ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/nvidia/lib64"
export IBP_REQUIRE_GPU=1 IBP_REQUIRE_NVRTC=1 IBP_DATA_DIR="$D/data" CARGO_BIN_EXE_ibp="$PWD/$D/ibp"
{
    date -u
    nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current,clocks.sm,clocks.mem --format=csv
    echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH-}"
} 2>&1 | tee "$OUT/device.txt"

status=0
if [ "${IBP_SKIP_TESTS:-0}" != 1 ]; then
    for t in "$D"/tests/*; do
        if [[ " ${IBP_DEVICE_SKIP_TESTS-nvrtc_compile} " == *" $(basename "$t") "* ]]; then
            why="named in IBP_DEVICE_SKIP_TESTS"
            [ "$(basename "$t")" = nvrtc_compile ] && why="$why; NVRTC alone, no GPU: CI runs it"
            echo "=== not run here: $t ($why)" | tee -a "$OUT/tests.log"
            continue
        fi
        echo "=== $t" | tee -a "$OUT/tests.log"
        filter=()
        [ "$(basename "$t")" = ibp_cli ] && filter=(verify)
        timeout 150 "$t" --test-threads=1 --nocapture "${filter[@]}" 2>&1 | tee -a "$OUT/tests.log"
        rc=${PIPESTATUS[0]}
        echo "=== $t exit $rc" | tee -a "$OUT/tests.log"
        [ "$rc" = 0 ] || status=1
    done
fi
if [ "${IBP_SKIP_TESTS:-0}" != 1 ] && [ -x "$D/ibp-conformance" ]; then
    # Conformance vectors through the CPU oracle, the CPU fast decoder and the GPU decoder.
    "$D/ibp-conformance" run --gpu 2>&1 | tee "$OUT/conformance-gpu.txt" | tail -n 5
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
fi
if [ "${IBP_SKIP_TESTS:-0}" != 1 ] && [ -x "$D/ibp" ]; then
    # `ibp verify --gpu` on the real datasets, compressed by `ibp compress` as written for size and
    # with --gpu: every chunk decoded on the GPU (payload in device memory, then in pinned host
    # memory) must equal the CPU's bytes.
    tmp="$(mktemp -d)"
    for f in "$D"/data/*.npy; do
        for how in size gpu; do
            opt=(); [ "$how" = gpu ] && opt=(--gpu)
            name="$(basename "$f" .npy)-$how.ibp"
            if ! "$D/ibp" -q compress "$f" -o "$tmp/$name" "${opt[@]}" >>"$OUT/cli-verify-gpu.txt" 2>&1; then
                echo "FAILED: ibp compress $f ${opt[*]}" | tee -a "$OUT/cli-verify-gpu.txt"; status=1; continue
            fi
            for payload in device host; do
                "$D/ibp" verify --gpu --gpu-payload "$payload" "$tmp/$name" >>"$OUT/cli-verify-gpu.txt" 2>&1 \
                    || { echo "FAILED: ibp verify --gpu --gpu-payload $payload ($name)" | tee -a "$OUT/cli-verify-gpu.txt"; status=1; }
            done
        done
        rm -f "$tmp"/*.ibp
    done
    rm -rf "$tmp"
    echo "ibp verify --gpu: $(grep -c ': OK: ' "$OUT/cli-verify-gpu.txt") OK, $(grep -c FAILED "$OUT/cli-verify-gpu.txt") failed" | tee -a "$OUT/cli-verify-gpu.txt"
fi
if [ "${IBP_SKIP_BENCH:-0}" != 1 ]; then
    timeout "${IBP_BENCH_TIMEOUT:-300}" "${IBP_BENCH_BIN:-$D/ibp-gpu-bench}" --data-dir "$D/data" "$@" 2>&1 | tee "$OUT/bench.log"
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
fi
if [ "${IBP_RUN_MULTI:-0}" = 1 ]; then
    # Several GPUs on one payload: the test of every GPU gathering from one pinned payload, `ibp
    # verify --gpu` on the last GPU, and ibp-gpu-multi-bench (every GPU gathering at once against
    # the same GPUs gathering uncompressed rows). Meant for a host of 2+ GPUs.
    {
        echo "=== every_gpu_gathers_from_one_pinned_payload"
        timeout 150 "$D/tests/gpu_decode" --test-threads=1 --nocapture every_gpu
        echo "=== exit $?"
        last=$(( $(nvidia-smi -L | wc -l) - 1 ))
        f="$(ls "$D"/data/*.npy | head -n 1)"
        "$D/ibp" -q compress "$f" -o /tmp/multi-verify.ibp --gpu && \
            "$D/ibp" verify --gpu --device "$last" --gpu-payload host /tmp/multi-verify.ibp
        echo "=== ibp verify --gpu --device $last exit $?"
        rm -f /tmp/multi-verify.ibp
    } 2>&1 | tee "$OUT/multi-tests.log"
    grep -q '=== exit 0' "$OUT/multi-tests.log" && grep -q 'device [0-9]* exit 0' "$OUT/multi-tests.log" || status=1
    timeout "${IBP_MULTI_TIMEOUT:-300}" "$D/ibp-gpu-multi-bench" --data-dir "$D/data" ${IBP_MULTI_FLAGS:-} 2>&1 | tee "$OUT/multi-bench.log"
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
fi
if [ "${IBP_SKIP_TESTS:-0}" != 1 ] && [ "${IBP_RUN_MEMCHECK:-1}" = 1 ] && command -v compute-sanitizer >/dev/null; then
    timeout ${IBP_SANITIZER_TIMEOUT:-90} compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 \
        "$D/tests/gpu_decode" --test-threads=1 \
        corrupt_records bad_requests mixed_word_widths every_gpu partial_words container_entries small_and_large_batches entries_relaid 2>&1 | tee "$OUT/memcheck.log" | tail -n 30
    echo "memcheck exit ${PIPESTATUS[0]}" | tee -a "$OUT/memcheck.log"
    # Hostile input: every fuzz input and conformance vector, under memcheck and initcheck.
    for tool in memcheck initcheck; do
        IBP_REPLAY_STRIDE=${IBP_REPLAY_STRIDE:-8} timeout ${IBP_SANITIZER_TIMEOUT:-90} compute-sanitizer --tool $tool --error-exitcode 9 \
            "$D/tests/fuzz_replay_gpu" --test-threads=1 --nocapture 2>&1 | tee "$OUT/replay-$tool.log" | tail -n 8
        echo "$tool (fuzz replay) exit ${PIPESTATUS[0]}" | tee -a "$OUT/replay-$tool.log"
    done
fi
if [ "${IBP_RUN_RACECHECK:-0}" = 1 ] && command -v compute-sanitizer >/dev/null; then
    # Shared-memory hazards and barrier misuse in the tile kernels (with IBP_KERNEL_DEFINES as set, e.g.
    # an A/B switch that moves a barrier): racecheck and synccheck on the tile-kernel decode tests.
    # (racecheck takes about 200 s over these three tests on the H200, synccheck 35 s: GPU_NOTES entry 53.)
    for tool in racecheck synccheck; do
        timeout ${IBP_RACECHECK_TIMEOUT:-300} compute-sanitizer --tool $tool --error-exitcode 9 \
            "$D/tests/gpu_decode" --test-threads=1 \
            ${IBP_RACECHECK_TESTS:-rows_through_the_lean_tile_kernel uniform_field_lengths mixed_word_widths} \
            2>&1 | tee "$OUT/$tool.log" | tail -n 8
        rc=${PIPESTATUS[0]}
        echo "$tool exit $rc" | tee -a "$OUT/$tool.log"
        [ "$rc" = 0 ] || status=1
    done
fi
if [ "${IBP_RUN_NCU:-0}" = 1 ] && command -v ncu >/dev/null; then
    # Hardware counters of one launch of each decode kernel (clocks left as they are).
    for rb in 256 4096; do
        timeout 100 ncu --clock-control none -k regex:ibp_decode_tiles -c 1 --section SpeedOfLight \
            --section Occupancy --section WarpStateStats --section LaunchStats --section ComputeWorkloadAnalysis \
            --section InstructionStats "$D/ibp-gpu-bench" --quick --only f32-normal-q4 --row-bytes $rb \
            --batches 16384 >> "$OUT/ncu.txt" 2>&1
        echo "ncu ($rb B rows) exit $?" >> "$OUT/ncu.txt"
    done
fi
grep -E "^test result|SKIPPED|panicked|FAILED" "$OUT/tests.log" 2>/dev/null | sort | uniq -c
exit $status
