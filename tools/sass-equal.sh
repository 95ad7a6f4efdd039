#!/usr/bin/env bash
# Checks that the kernels of the working tree compile to the same machine code as those of a commit
# (no device time): both compiled here by NVRTC for sm_90 (tools/nvrtc_report.py --cubin), then
# disassembled (nvdisasm from the PyPI wheel nvidia-cuda-nvdisasm) with addresses, label numbers and
# the numbers of internal helper functions (which a new kernel shifts) removed. A kernel refactor
# that passes needs no new GPU run: the device executes the same code.
#
#   eval "$(bash tools/ci-nvrtc.sh)"; NVDISASM=/path/to/nvdisasm bash tools/sass-equal.sh [REV]   # REV: HEAD
#   WORK_DEFINES="-DIBP_LONG_LEAN_VECS=1" ... tools/sass-equal.sh   # the working tree built with A/B switches:
#                                                                 # which kernels a switch changes
#   BASE_DEFINES="..." (the same for REV's side): e.g. a switch made the default against the measured
#   build of it, or a refactor of code behind a switch against REV with the switch on
# Where a cubin differs, each kernel (function) is named same or differs.
set -euo pipefail
rev="${1:-HEAD}"
nvdisasm="${NVDISASM:-$(command -v nvdisasm || true)}"
[ -x "$nvdisasm" ] || { echo "nvdisasm not found: pip install nvidia-cuda-nvdisasm, set NVDISASM" >&2; exit 2; }
root="$(git rev-parse --show-toplevel)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
git -C "$root" worktree add -q --detach "$tmp/base" "$rev"
trap 'git -C "$root" worktree remove --force "$tmp/base"; rm -rf "$tmp"' EXIT
status=0
for side in base work; do
    dir="$root"; [ "$side" = base ] && dir="$tmp/base"
    defines=()
    if [ "$side" = work ]; then read -r -a defines <<<"${WORK_DEFINES:-}"; else read -r -a defines <<<"${BASE_DEFINES:-}"; fi
    (cd "$dir" && python3 tools/nvrtc_report.py "${defines[@]}" --cubin "$tmp/$side" >/dev/null)
done
for cubin in "$tmp"/work/*.cubin; do
    name="$(basename "$cubin")"
    for side in base work; do
        "$nvdisasm" -c "$tmp/$side/$name" | sed -E 's@/\*[0-9a-f]+\*/@@; s/\.L_x_[0-9]+/L/g; s/__internal_[0-9]+_/__internal_/g' | grep -v '^\s*$' >"$tmp/$side-$name.sass"
    done
    if cmp -s "$tmp/base-$name.sass" "$tmp/work-$name.sass"; then
        echo "$name: same SASS as $rev ($(wc -l <"$tmp/work-$name.sass") lines)"
    else
        echo "$name: SASS differs from $rev; per kernel:"
        python3 - "$tmp/base-$name.sass" "$tmp/work-$name.sass" <<'PY'
import re, sys
def kernels(path):
    out, cur = {}, None
    for line in open(path):
        m = re.match(r"\s*\.text\.(\S+):", line)
        if m:
            cur = out.setdefault(m.group(1), [])
        elif cur is not None:
            cur.append(line)
    return out
base, work = kernels(sys.argv[1]), kernels(sys.argv[2])
for k in sorted(set(base) | set(work)):
    same = base.get(k) == work.get(k)
    print(f"  {k}: {'same' if same else 'differs'} ({len(base.get(k, []))} -> {len(work.get(k, []))} lines)")
PY
        status=1
    fi
done
exit $status
