# tools/job-pool.sh: a pool of background jobs, for bash scripts to source (tools/ci-fuzz.sh,
# tools/host-kernels-test.sh). Runs at most N jobs at a time; each job's output (stdout and stderr
# together) is kept in a file and printed whole when the job ends, under a lock (flock), so that the
# reports of jobs that end together never interleave: on stdout when the job's exit status is 0, on
# stderr when not. Safe under `set -euo pipefail`; needs bash 4.3 or later (wait -n) and flock.
#
#   source tools/job-pool.sh
#   pool_init [N]              N jobs at a time (default: the number of CPUs). Makes $POOL_DIR, a
#                              temporary folder removed on exit (sets the script's EXIT trap).
#   POOL_TRAILER=FUNCTION      optional: after a job's output, `FUNCTION NAME STATUS SECONDS` prints
#                              the last lines of its report (on the same stream as the output).
#   pool_run NAME CMD [ARG...] waits for a free slot, then runs CMD ARG... in the background as job
#                              NAME (a file name: its output goes to $POOL_DIR/NAME.out, its exit
#                              status to $POOL_DIR/NAME.rc). CMD may be a shell function.
#   pool_wait                  waits for every job; POOL_FAILED lists the jobs whose exit status was
#                              not 0 (or is unknown), in the order they were started. Returns 1 if
#                              any failed, 0 if none.
#   pool_print NAME STATUS SECONDS
#                              (used by pool_run) prints job NAME's report under the lock.
#
# The slots are counted with `jobs -r`: the calling script should have no other background jobs of
# its own while the pool runs.

pool_init() {
    POOL_JOBS=${1:-$(nproc)}
    POOL_DIR=$(mktemp -d)
    POOL_NAMES=()
    POOL_FAILED=()
    POOL_TRAILER=${POOL_TRAILER:-}
    trap 'rm -rf "$POOL_DIR"' EXIT
}

pool_print() {
    local name=$1 rc=$2 secs=$3
    {
        flock 9
        if [[ $rc -eq 0 ]]; then
            cat "$POOL_DIR/$name.out"
            if [[ -n $POOL_TRAILER ]]; then "$POOL_TRAILER" "$name" "$rc" "$secs"; fi
        else
            {
                cat "$POOL_DIR/$name.out"
                if [[ -n $POOL_TRAILER ]]; then "$POOL_TRAILER" "$name" "$rc" "$secs"; fi
            } >&2
        fi
    } 9>"$POOL_DIR/lock"
}

pool_run() {
    local name=$1
    shift
    while [[ $(jobs -rp | wc -l) -ge $POOL_JOBS ]]; do wait -n || true; done
    POOL_NAMES+=("$name")
    (
        rc=0 s=$SECONDS
        "$@" >"$POOL_DIR/$name.out" 2>&1 || rc=$?
        pool_print "$name" "$rc" "$((SECONDS - s))"
        echo "$rc" >"$POOL_DIR/$name.rc"
    ) &
}

pool_wait() {
    local name
    wait
    POOL_FAILED=()
    for name in "${POOL_NAMES[@]}"; do
        [[ $(cat "$POOL_DIR/$name.rc" 2>/dev/null) == 0 ]] || POOL_FAILED+=("$name")
    done
    [[ ${#POOL_FAILED[@]} -eq 0 ]]
}
