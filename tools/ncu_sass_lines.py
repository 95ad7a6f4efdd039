#!/usr/bin/env python3
"""Warp instructions executed per row, by source line, from an Nsight Compute SASS source page
(`ncu-<case>-sass.csv`, written by `tools/gpu-profile.sh` with IBP_PROFILE_STALLS=1) and the same
kernel disassembled here with line numbers (no device time):

    eval "$(bash tools/ci-nvrtc.sh)"
    python3 tools/nvrtc_report.py --cubin /tmp/cubin     # same NVRTC and options as the device
    nvdisasm -g -c /tmp/cubin/ibp_gather.cu.cubin > /tmp/sass.txt   # PyPI wheel nvidia-cuda-nvdisasm
    python3 tools/ncu_sass_lines.py /tmp/sass.txt OUT/ncu-tiles-256-sass.csv ROWS [--kernel NAME] [--top N]

ROWS is the number of rows the profiled launch decoded (64 MiB of 256 B rows: 262144). The SASS
addresses of the report are taken relative to the kernel's first instruction; the script checks that
every opcode matches the local disassembly (a mismatch means the cubin differs from the device's).
Lines are named file:line (kernels/ibp_gather.cu and its parts, ibp_gather/*.cuh; inlined helpers\ncount on their own lines).
"""
import collections
import re
import sys
from pathlib import Path

from ncu_stalls import num, read_source_page


def main() -> int:
    args = sys.argv[1:]
    if len(args) < 3:
        sys.exit(__doc__)
    sass_txt, csv_path, rows = args[0], args[1], float(args[2])
    kernel = args[args.index("--kernel") + 1] if "--kernel" in args else "ibp_decode_tiles"
    top = int(args[args.index("--top") + 1]) if "--top" in args else 40
    insn, line, inside = {}, None, False
    for text in open(sass_txt):
        if text.startswith(".text."):
            inside = text.strip() == f".text.{kernel}:"
            continue
        if not inside:
            continue
        m = re.search(r'File "([^"]*)", line (\d+)', text)
        if m and "//##" in text:
            name, part = m.group(1), m.group(1).rfind("ibp_gather/")
            line = f"{name[part:] if part >= 0 else Path(name).name}:{m.group(2)}"
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s*(.*?);", text)
        if m:
            insn[int(m.group(1), 16)] = (line, m.group(2).strip())
    _, col, data = read_source_page(csv_path)
    base = min(int(r[col["Address"]], 16) for r in data)
    executed, samples = collections.Counter(), collections.Counter()
    mismatched = 0
    for r in data:
        at = int(r[col["Address"]], 16) - base
        src_line, text = insn.get(at, (None, ""))
        if text.split()[:1] != r[col["Source"]].strip().split()[:1]:
            mismatched += 1
        executed[src_line] += num(r[col["Instructions Executed"]])
        samples[src_line] += num(r[col["Warp Stall Sampling (All Samples)"]])
    total, total_samples = sum(executed.values()), sum(samples.values()) or 1.0
    print(f"{total / rows:.1f} warp instructions per row; {mismatched} of {len(data)} opcodes differ from {sass_txt}")
    for src_line, e in executed.most_common(top):
        print(f"{src_line}: {e / rows:7.2f} per row, {100 * samples[src_line] / total_samples:5.1f} % of stall samples")
    return 0


if __name__ == "__main__":
    sys.exit(main())
