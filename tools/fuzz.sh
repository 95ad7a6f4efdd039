#!/usr/bin/env bash
# Runs one IBP fuzz target under libFuzzer on the stable toolchain.
#
#   tools/fuzz.sh TARGET [SECONDS] [extra libFuzzer flags...]   fuzz TARGET for SECONDS (default 60)
#   tools/fuzz.sh --build [TARGET...]                           only build (all targets by default)
#   tools/fuzz.sh --merge TARGET                                minimise the committed corpus of
#                                                               TARGET with everything found so far
#   tools/fuzz.sh --minimize TARGET CRASH_FILE                  minimise a crash into
#                                                               fuzz/artifacts/TARGET/
#
# Targets: parse decode gather roundtrip differential no_leak kernels tensor_files (fuzz/README.md says
# what each checks).
# Seeds: fuzz/corpus/TARGET (committed) and, for the container targets, conformance/vectors/*.ibp.
# New inputs go to fuzz/target/corpus-work/TARGET (not committed: `--merge` folds them in).
# Crashes go to fuzz/artifacts/TARGET/; the exit status is non-zero when one is found.
# Environment: FUZZ_MAX_LEN (default 16384), FUZZ_RSS_MB (default 2048), FUZZ_LOG (a log file),
# FUZZ_ASAN=1 (build with AddressSanitizer; needs a nightly toolchain installed).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
triple=$(rustc -vV | sed -n 's/^host: //p')
targets=(parse decode gather roundtrip differential no_leak kernels tensor_files)
bin_dir="$root/fuzz/target/$triple/release"
[[ -n ${FUZZ_ASAN:-} ]] && bin_dir="$root/fuzz/target/asan/$triple/release"

build() {
    # The flags `cargo fuzz build -s none` passes: SanitizerCoverage for libFuzzer, no sanitizer,
    # so stable rustc suffices. An explicit --target keeps them off build scripts and proc macros.
    local flags=(
        -Cpasses=sancov-module
        -Cllvm-args=-sanitizer-coverage-level=4
        -Cllvm-args=-sanitizer-coverage-inline-8bit-counters
        -Cllvm-args=-sanitizer-coverage-pc-table
        -Cllvm-args=-sanitizer-coverage-trace-compares
        --cfg fuzzing
        -Cdebug-assertions
        -Coverflow-checks
    )
    local bins=()
    for t in "$@"; do bins+=(--bin "$t"); done
    local toolchain=()
    if [[ -n ${FUZZ_ASAN:-} ]]; then
        # Optional: AddressSanitizer needs a nightly toolchain (-Zsanitizer); builds go to their own
        # target folder. The default build stays on stable.
        toolchain=(+nightly)
        flags+=(-Zsanitizer=address)
        export CARGO_TARGET_DIR="$root/fuzz/target/asan"
    fi
    RUSTFLAGS="${flags[*]}" cargo "${toolchain[@]}" build --manifest-path fuzz/Cargo.toml --release \
        --target "$triple" "${bins[@]}"
}

known() {
    local t
    for t in "${targets[@]}"; do [[ $t == "$1" ]] && return 0; done
    echo "unknown target '$1' (known: ${targets[*]})" >&2
    exit 2
}

seed_dirs() {
    local t=$1
    local dirs=("fuzz/corpus/$t")
    case $t in
        parse | decode | differential | no_leak | kernels)
            [[ -d conformance/vectors ]] && dirs+=(conformance/vectors)
            ;;
    esac
    echo "${dirs[@]}"
}

case "${1:-}" in
    "" | -h | --help)
        sed -n '2,/^set -euo/p' "$0" | grep '^#' | cut -c3-
        exit 0
        ;;
    --build)
        shift
        if [[ $# -eq 0 ]]; then set -- "${targets[@]}"; fi
        for t in "$@"; do known "$t"; done
        build "$@"
        exit 0
        ;;
    --merge)
        t=${2:?target}
        known "$t"
        build "$t"
        fresh=$(mktemp -d)
        mkdir -p "fuzz/target/corpus-work/$t"
        "$bin_dir/$t" -merge=1 "$fresh" "fuzz/corpus/$t" "fuzz/target/corpus-work/$t" \
            -max_len="${FUZZ_MAX_LEN:-16384}"
        # Keep the committed corpus small: the seeds, then the smallest merged inputs up to
        # FUZZ_CORPUS_KB (default 32) KiB. The full corpus regrows in minutes of fuzzing.
        keep=$(mktemp -d)
        cp "fuzz/corpus/$t"/seed-* "$keep/" 2>/dev/null || true
        budget=$((${FUZZ_CORPUS_KB:-32} * 1024))
        seed_sums=$(for f in "$keep"/seed-*; do if [[ -f $f ]]; then sha1sum "$f" | cut -d' ' -f1; fi; done)
        used=0
        while read -r size file; do
            [[ $((used + size)) -gt $budget ]] && break
            grep -qx "$(basename "$file")" <<<"$seed_sums" && continue # a seed, kept already
            cp "$file" "$keep/"
            used=$((used + size))
        done < <(find "$fresh" -type f -printf '%s %p\n' | sort -n)
        rm -rf "fuzz/corpus/$t" "$fresh"
        mv "$keep" "fuzz/corpus/$t"
        chmod 755 "fuzz/corpus/$t"
        echo "fuzz/corpus/$t: $(ls "fuzz/corpus/$t" | wc -l) files, $(du -sk --apparent-size "fuzz/corpus/$t" | cut -f1) KiB"
        exit 0
        ;;
    --minimize)
        t=${2:?target}
        crash=${3:?crash file}
        known "$t"
        build "$t"
        mkdir -p "fuzz/artifacts/$t"
        out="fuzz/artifacts/$t/minimized-$(sha1sum "$crash" | cut -c1-16)"
        "$bin_dir/$t" -minimize_crash=1 -runs=20000 -exact_artifact_path="$out" "$crash" || true
        echo "minimised crash: $out"
        exit 0
        ;;
esac

t=$1
secs=${2:-60}
shift
[[ $# -gt 0 ]] && shift
known "$t"
build "$t"
work="fuzz/target/corpus-work/$t"
mkdir -p "$work" "fuzz/artifacts/$t" "fuzz/corpus/$t"
# shellcheck disable=SC2046
set -- "$@" -max_total_time="$secs" -max_len="${FUZZ_MAX_LEN:-16384}" \
    -rss_limit_mb="${FUZZ_RSS_MB:-2048}" -timeout=20 -print_final_stats=1 \
    -artifact_prefix="fuzz/artifacts/$t/"
if [[ -n ${FUZZ_LOG:-} ]]; then
    "$bin_dir/$t" "$@" "$work" $(seed_dirs "$t") 2>&1 | tee "$FUZZ_LOG"
    exit "${PIPESTATUS[0]}"
fi
exec "$bin_dir/$t" "$@" "$work" $(seed_dirs "$t")
