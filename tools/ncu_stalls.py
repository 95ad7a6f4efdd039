#!/usr/bin/env python3
"""Summarise an Nsight Compute source page (SASS, CSV) written by `tools/gpu-profile.sh` with
IBP_PROFILE_STALLS=1: the instructions with the most warp stall samples and their main stall
reasons, then the samples per reason.

    python3 tools/ncu_stalls.py OUT/ncu-tiles-1k-sass.csv [--top 40]
"""
import collections
import csv
import sys


def num(x: str) -> float:
    try:
        return float(x.replace(",", ""))
    except ValueError:
        return 0.0


def read_source_page(path: str) -> tuple[list[str], dict[str, int], list[list[str]]]:
    """An ncu source page (CSV): its header, each column's index, and the rows of SASS instructions."""
    rows = list(csv.reader(open(path, newline="")))
    # Row 0 names the kernel; row 1 is the header.
    header, data = rows[1], rows[2:]
    return header, {h: i for i, h in enumerate(header)}, data


def main() -> int:
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    top_n = int(args[args.index("--top") + 1]) if "--top" in args else 40
    header, col, data = read_source_page(args[0])
    samples = col["Warp Stall Sampling (All Samples)"]
    reasons = [h for h in header if h.startswith("stall_") and "Not Issued" not in h]
    total = sum(num(r[samples]) for r in data) or 1.0
    print(f"{len(data)} SASS instructions, {total:.0f} stall samples")
    for r in sorted(data, key=lambda r: -num(r[samples]))[:top_n]:
        s = num(r[samples])
        why = sorted(((num(r[col[h]]), h[6:]) for h in reasons), reverse=True)[:2]
        why_text = ", ".join(f"{name} {n:.0f}" for n, name in why if n > 0)
        executed = r[col["Instructions Executed"]]
        print(f"{100 * s / total:5.1f}%  executed {executed:>10}  {r[col['Source']].strip()[:64]:64}  {why_text}")
    by_reason = collections.Counter()
    for r in data:
        for h in reasons:
            by_reason[h[6:]] += num(r[col[h]])
    print("\nsamples per reason:")
    for name, n in by_reason.most_common():
        if n:
            print(f"  {name:18} {100 * n / total:5.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
