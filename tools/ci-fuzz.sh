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
# (tools/fuzz.sh). Each target's report is printed whole (under a lock) when it ends.
njobs=${FUZZ_JOBS:-$(nproc)}
reports=$(mktemp -d)
trap 'rm -rf "$reports"' EXIT
fuzz_one() {
    local t=$1 log="$reports/$t.log" out="$reports/$t.out" rc=0
    local before after
    before=$({ find "fuzz/artifacts/$t" -type f 2>/dev/null || true; } | sort)
    {
        echo "== fuzz $t for ${secs}s"
        if FUZZ_LOG="$log" tools/fuzz.sh "$t" "$secs" >/dev/null 2>&1; then
            grep -E '^#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units' "$log" || true
        else
            rc=1
            echo "!! $t FAILED" >&2
            tail -n 60 "$log" >&2 || true
            after=$({ find "fuzz/artifacts/$t" -type f 2>/dev/null || true; } | sort)
            comm -13 <(echo "$before") <(echo "$after") | sed 's/^/!! new crash file: /' >&2
        fi
    } >"$out" 2>&1
    {
        flock 9
        if [[ $rc -eq 0 ]]; then cat "$out"; else cat "$out" >&2; fi
    } 9>"$reports/lock"
    echo "$rc" >"$reports/$t.rc"
}
for t in "${targets[@]}"; do
    while [[ $(jobs -rp | wc -l) -ge $njobs ]]; do wait -n || true; done
    fuzz_one "$t" &
done
wait
failed=()
for t in "${targets[@]}"; do
    [[ $(cat "$reports/$t.rc" 2>/dev/null) == 0 ]] || failed+=("$t")
done

if [[ ${#failed[@]} -gt 0 ]]; then
    echo "ci-fuzz: crashes in: ${failed[*]}" >&2
    exit 1
fi
echo "ci-fuzz: ${#targets[@]} targets ran ${secs}s each without a crash"
