#!/usr/bin/env bash
# Runs crates/ibp-gpu/tests/host_kernels.rs: every decoder kernel compiled for the CPU and checked
# against the CPU decoder (feature host-kernels). With AddressSanitizer in the kernels when the C++
# compiler has its runtime (the CPU counterpart of compute-sanitizer memcheck: an access outside a
# buffer the kernels were given aborts the test with a report); without it, says so and runs plain.
#
#   bash tools/host-kernels-test.sh [test-name-filter]
#   IBP_HOST_KERNELS_DEFINES="-DNAME=VALUE ..." bash tools/host-kernels-test.sh   # with A/B switches set
#
# A process runs one kernel launch at a time (kernels/host/launch.cpp: the emulated shared memory is
# global), so more test threads would not help: without a filter, every test runs in a process of its
# own, HOST_KERNELS_JOBS of them at a time (default: the number of CPUs), and each test's output is
# printed whole when it ends (a failed test's on stderr). With a filter, one process runs the tests it
# matches.
set -euo pipefail
cd "$(dirname "$0")/.."
libasan=$("${CXX:-g++}" -print-file-name=libasan.so 2>/dev/null || true)
asan=
if [[ $libasan == /* && -e $libasan ]]; then
    asan=1
    export IBP_HOST_KERNELS_ASAN=1
fi
# (--workspace: the features of `cargo test --workspace`, so that this build reuses what it built.)
bin=$(cargo test -q --workspace --features ibp-gpu/host-kernels --test host_kernels --no-run --message-format=json |
    python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-message" and m["message"]["level"] == "error":
        print(m["message"]["rendered"], file=sys.stderr)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "host_kernels":
        print(m["executable"])')
if [[ -z $bin ]]; then
    echo "host kernels ERROR: the test binary did not build" >&2
    exit 1
fi
run() {
    if [[ -n $asan ]]; then
        LD_PRELOAD=$libasan ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 "$bin" "$@"
    else
        "$bin" "$@"
    fi
}
if [[ -n $asan ]]; then
    echo "host kernels with AddressSanitizer ($libasan)"
else
    echo "no AddressSanitizer runtime for ${CXX:-g++}: host kernels without it"
fi
if [[ $# -gt 0 ]]; then
    run --nocapture "$@"
    exit
fi

start=$SECONDS
mapfile -t listed < <(run --list --format terse | sed -n 's/: test$//p')
if [[ ${#listed[@]} -eq 0 ]]; then
    echo "host kernels ERROR: no tests listed" >&2
    exit 1
fi
# The longest tests first (a minute or more each under AddressSanitizer on a 2-CPU machine), so that
# none of them starts last; then the others in the harness's order.
long=(
    long_rows_of_many_vectors_match_cpu_decoder
    generated_cases_match_cpu_decoder_part_
    corrupt_records_rejected_like_cpu_part_
    kernels_stay_in_their_buffers_on_each_damaged_descriptor_field
)
tests=()
for prefix in "${long[@]}"; do
    for t in "${listed[@]}"; do
        if [[ $t == "$prefix"* ]]; then tests+=("$t"); fi
    done
done
for t in "${listed[@]}"; do
    if [[ " ${tests[*]} " != *" $t "* ]]; then tests+=("$t"); fi
done
njobs=${HOST_KERNELS_JOBS:-$(nproc)}
echo "host kernels: ${#tests[@]} tests, $njobs processes at a time"
# One test in a process of its own; its output is printed whole (under a lock) when it ends, on
# stdout when it passed, on stderr when it failed (tools/job-pool.sh), with a last line that says so.
source tools/job-pool.sh
pool_init "$njobs"
one_done() {
    if [[ $2 -eq 0 ]]; then
        echo "host kernels: $1 ok ($3 s)"
    else
        echo "host kernels ERROR: $1 failed (exit status $2, $3 s)"
    fi
}
POOL_TRAILER=one_done
for t in "${tests[@]}"; do
    pool_run "$t" run --exact "$t" --nocapture
done
if ! pool_wait; then
    echo "host kernels test result: FAILED. $((${#tests[@]} - ${#POOL_FAILED[@]})) passed; ${#POOL_FAILED[@]} failed: ${POOL_FAILED[*]}"
    exit 1
fi
echo "host kernels test result: ok. ${#tests[@]} passed in $((SECONDS - start)) s"
