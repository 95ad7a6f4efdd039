#!/usr/bin/env python3
"""Compare ibp-gpu-bench logs of several runs side by side (A/B of two builds or kernel options).

    python3 tools/ab_compare.py NAME=bench.log [NAME=bench.log ...] [--what gathers|queued|decode|all]
    (--what=X works too)

For each dataset header ("## name N B rows, A=.."): gathers = IBP zc / raw zc and IBP zc / ideal per
batch size (from the "batch N:" lines); queued = the launch-cost table's queued IBP time in us;
decode = whole-entry decode / D2D copy. One column per run, so run-to-run spread shows next to any
difference (give the same build twice, e.g. old, new, old2, new2).
"""
import re
import sys
from collections import OrderedDict


def parse(path):
    gathers, decode, queued = OrderedDict(), OrderedDict(), OrderedDict()
    name = None
    for line in open(path, encoding="utf-8", errors="replace"):
        m = re.match(r"## (\S+) (\d+) B rows, A=(\d+):", line)
        if m:
            name = f"{m.group(1)} {m.group(2)} B A={m.group(3)}"
            continue
        m = re.match(r"batch (\d+): IBP zc ([\d.]+) \| raw zc ([\d.]+) \| CPU\+memcpy ([\d.]+) \| ideal ([\d.]+)", line)
        if m and name:
            b, ibp, raw, _, ideal = m.groups()
            gathers[(name, int(b))] = (float(ibp) / float(raw), float(ibp) / float(ideal))
            continue
        m = re.match(r"whole entry from device memory: decode ([\d.]+) GB/s, D2D copy ([\d.]+) GB/s", line)
        if m and name:
            decode[name] = float(m.group(1)) / float(m.group(2))
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 11 and cells[3].isdigit() and re.match(r"[\d.]+$", cells[8]):
            queued[(f"{cells[0]} {cells[1]} B A={cells[2]}", int(cells[3]))] = (float(cells[8]), float(cells[9]))
    return gathers, decode, queued


WHATS = ("gathers", "queued", "decode", "all")


def parse_args(argv):
    """(runs as [(name, log path)], what) from NAME=bench.log arguments and --what=X or --what X."""
    runs, what = [], "all"
    i = 0
    while i < len(argv):
        a = argv[i]
        if a.startswith("--what="):
            what = a.split("=", 1)[1]
        elif a == "--what" and i + 1 < len(argv):
            what = argv[i + 1]
            i += 1
        elif "=" in a and not a.startswith("-"):
            name, path = a.split("=", 1)
            runs.append((name, path))
        else:
            raise ValueError(f"expected NAME=bench.log or --what X, got {a!r}")
        i += 1
    if what not in WHATS:
        raise ValueError(f"--what takes one of {', '.join(WHATS)}, got {what!r}")
    if not runs:
        raise ValueError("no NAME=bench.log given")
    return runs, what


def main():
    try:
        named, what = parse_args(sys.argv[1:])
    except ValueError as e:
        sys.exit(f"ab_compare: {e}")
    runs = [(name, parse(path)) for name, path in named]
    names = [n for n, _ in runs]
    if what in ("gathers", "all"):
        print("IBP zc / raw zc, then IBP zc / ideal, per run:", " ".join(names))
        for key in runs[0][1][0]:
            vals = [r[0].get(key) for _, r in runs]
            a = " ".join(f"{v[0]:.2f}" if v else "  - " for v in vals)
            b = " ".join(f"{v[1]:.2f}" if v else "  - " for v in vals)
            print(f"{key[0]:<38} {key[1]:>6}  {a}   | {b}")
    if what in ("queued", "all"):
        print("\nqueued GPU time of small gathers, IBP us (raw us), per run:", " ".join(names))
        for key in runs[0][1][2]:
            vals = [r[2].get(key) for _, r in runs]
            print(f"{key[0]:<38} {key[1]:>6}  " + " ".join(f"{v[0]:6.1f} ({v[1]:5.1f})" if v else "   -   " for v in vals))
    if what in ("decode", "all"):
        print("\nwhole-entry decode / D2D, per run:", " ".join(names))
        for key in runs[0][1][1]:
            vals = [r[1].get(key) for _, r in runs]
            print(f"{key:<38} " + " ".join(f"{v:.3f}" if v else "  -  " for v in vals))


if __name__ == "__main__":
    main()
