#!/usr/bin/env bash
# Runs crates/ibp-gpu/tests/host_kernels.rs: every decoder kernel compiled for the CPU and checked
# against the CPU decoder (feature host-kernels). With AddressSanitizer in the kernels when the C++
# compiler has its runtime (the CPU counterpart of compute-sanitizer memcheck: an access outside a
# buffer the kernels were given aborts the test with a report); without it, says so and runs plain.
#
#   bash tools/host-kernels-test.sh [test-name-filter]
#   IBP_HOST_KERNELS_DEFINES="-DNAME=VALUE ..." bash tools/host-kernels-test.sh   # with A/B switches set
set -euo pipefail
cd "$(dirname "$0")/.."
libasan=$("${CXX:-g++}" -print-file-name=libasan.so 2>/dev/null || true)
if [[ $libasan == /* && -e $libasan ]]; then
    export IBP_HOST_KERNELS_ASAN=1
    bin=$(cargo test -q -p ibp-gpu --features host-kernels --test host_kernels --no-run --message-format=json 2>/dev/null |
        python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "host_kernels":
        print(m["executable"])')
    echo "host kernels with AddressSanitizer ($libasan)"
    LD_PRELOAD=$libasan ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 "$bin" --nocapture "$@"
else
    echo "no AddressSanitizer runtime for ${CXX:-g++}: host kernels without it"
    cargo test -q -p ibp-gpu --features host-kernels --test host_kernels -- --nocapture "$@"
fi
