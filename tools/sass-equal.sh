#!/usr/bin/env bash
# Checks that the kernels of the working tree compile to the same machine code as those of a commit
# (no device time): both compiled here by NVRTC for sm_90 (tools/nvrtc_report.py --cubin), then
# disassembled (nvdisasm from the PyPI wheel nvidia-cuda-nvdisasm) with addresses and label numbers
# removed. A kernel refactor that passes needs no new GPU run: the device executes the same code.
#
#   eval "$(bash tools/ci-nvrtc.sh)"; NVDISASM=/path/to/nvdisasm bash tools/sass-equal.sh [REV]   # REV: HEAD
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
    (cd "$dir" && python3 tools/nvrtc_report.py --cubin "$tmp/$side" >/dev/null)
done
for cubin in "$tmp"/work/*.cubin; do
    name="$(basename "$cubin")"
    for side in base work; do
        "$nvdisasm" -c "$tmp/$side/$name" | sed -E 's@/\*[0-9a-f]+\*/@@; s/\.L_x_[0-9]+/L/g' | grep -v '^\s*$' >"$tmp/$side-$name.sass"
    done
    if cmp -s "$tmp/base-$name.sass" "$tmp/work-$name.sass"; then
        echo "$name: same SASS as $rev ($(wc -l <"$tmp/work-$name.sass") lines)"
    else
        echo "$name: SASS differs from $rev:"
        diff "$tmp/base-$name.sass" "$tmp/work-$name.sass" | head -n 20
        status=1
    fi
done
exit $status
