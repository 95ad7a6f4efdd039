#!/usr/bin/env bash
# CI: builds every fuzz target and runs each for a bounded time (FUZZ_SECONDS, default 30), as many
# at a time as there are CPUs (FUZZ_JOBS);
# fails if any target finds a crash (the crash is left in fuzz/artifacts/TARGET/ and its path is
# printed; minimise it with `tools/fuzz.sh --minimize TARGET FILE` and commit it, and
# tests/fuzz_replay.rs replays it on every `cargo test` after).
#
# Needs only cargo and a C++ compiler (libfuzzer-sys builds libFuzzer from source); no cargo-fuzz,
# no nightly. Installs g++ with apt-get if no C++ compiler is found.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
secs=${FUZZ_SECONDS:-30}
targets=(parse decode gather roundtrip differential no_leak kernels tensor_files)
if [[ $# -gt 0 ]]; then targets=("$@"); fi

if ! command -v c++ >/dev/null 2>&1; then
    echo "ci-fuzz: no C++ compiler, installing g++" >&2
    (apt-get update -qq && apt-get install -y -qq g++) >&2
fi

tools/fuzz.sh --build "${targets[@]}"

# The targets run FUZZ_JOBS at a time (default: the number of CPUs; each libFuzzer run is one
# process on one CPU), each for the full ${secs}s, in its own corpus-work and artifacts folders
# (tools/fuzz.sh). Each target's report is printed whole (under a lock) when it ends, on stderr if
# it failed (tools/job-pool.sh).
source tools/job-pool.sh
pool_init "${FUZZ_JOBS:-$(nproc)}"
fuzz_one() {
    local t=$1 log="$POOL_DIR/$t.log"
    local before after
    before=$({ find "fuzz/artifacts/$t" -type f 2>/dev/null || true; } | sort)
    echo "== fuzz $t for ${secs}s"
    if FUZZ_LOG="$log" tools/fuzz.sh "$t" "$secs" >/dev/null 2>&1; then
        grep -E '^#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units' "$log" || true
    else
        echo "!! $t FAILED" >&2
        tail -n 60 "$log" >&2 || true
        after=$({ find "fuzz/artifacts/$t" -type f 2>/dev/null || true; } | sort)
        comm -13 <(echo "$before") <(echo "$after") | sed 's/^/!! new crash file: /' >&2
        return 1
    fi
}
for t in "${targets[@]}"; do
    pool_run "$t" fuzz_one "$t"
done
if ! pool_wait; then
    echo "ci-fuzz: crashes in: ${POOL_FAILED[*]}" >&2
    exit 1
fi
echo "ci-fuzz: ${#targets[@]} targets ran ${secs}s each without a crash"
