#!/usr/bin/env python3
"""Assemble bench/GPU_RESULTS.md from the output folder of one `tools/gpu-run.sh` call.

    python3 tools/gpu_results.py OUT_DIR --commit REV [--wall-s S] > bench/GPU_RESULTS.md

OUT_DIR holds what gpu-run.sh wrote under $OUT: device.txt, tests.log (or its stdout as run.log), conformance-gpu.txt,
cli-verify-gpu.txt,
memcheck.log, replay-memcheck.log, replay-initcheck.log and bench.log (whose last part is the three
markdown tables printed by ibp-gpu-bench). Every figure on the page comes from those files; the
target summary is computed from the tables, not typed in.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path


def read(out: Path, name: str) -> str:
    p = out / name
    return p.read_text(errors="replace") if p.exists() else ""


def tables(bench: str) -> dict[str, list[dict]]:
    """The markdown tables after each '### ' heading of bench.log, as lists of row dicts."""
    result, title, header = {}, None, None
    for line in bench.splitlines():
        if line.startswith("### "):
            title, header = line[4:].strip(), None
            result[title] = []
        elif title and line.startswith("| ") and not line.startswith("| ---"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if header is None:
                header = cells
            else:
                result[title].append(dict(zip(header, cells)))
    return result


def span(values: list[float]) -> str:
    if not values:
        return "–"
    lo, hi = min(values), max(values)
    return f"{lo:.2f}" if abs(hi - lo) < 0.005 else f"{lo:.2f}-{hi:.2f}"


def ratio(r: dict, num: str, den: str) -> float:
    """A target's ratio from the row's two throughput columns, not from its ratio column (rounded to
    0.01: 990 / 1988 GB/s prints 0.50 but is below 0.50)."""
    return float(r[num]) / float(r[den])


def ideal_ratio(r: dict) -> float:
    return ratio(r, "IBP zc", "ideal")


def raw_ratio(r: dict) -> float:
    return ratio(r, "IBP zc", "raw zc")


def d2d_ratio(r: dict) -> float:
    return ratio(r, "IBP decode", "D2D copy of output size")


def summary(t: dict[str, list[dict]]) -> list[str]:
    host = next((v for k, v in t.items() if "pinned host memory" in k), [])
    whole = next((v for k, v in t.items() if k.startswith("Whole-entry")), [])
    synthetic = lambda r: r["dataset"].startswith("f32-")  # noqa: E731
    dense = lambda r: float(r["saved %"]) < 50  # noqa: E731
    lines = ["| target | measured in this run | met? |", "| --- | --- | --- |"]
    # 1. Host gathers of rows >= 1 KiB: IBP / ideal >= 0.95.
    big = [r for r in host if int(r["row B"]) >= 1024]
    batches = sorted({int(r["batch"]) for r in big})
    dense_big = [r for r in big if dense(r)]
    text = "; ".join(
        f"{b // 1024}K-row batches {span([ideal_ratio(r) for r in dense_big if int(r['batch']) == b])}"
        for b in batches)
    ok_batches = [b for b in batches if all(ideal_ratio(r) >= 0.95 for r in dense_big if int(r["batch"]) == b)]
    met = "yes" if len(ok_batches) == len(batches) else (
        f"partly: on dense rows (<= 50 % saved) from {ok_batches[0] // 1024}K-row batches on; not for smaller batches"
        if ok_batches else "no")
    sparse_text = "; ".join(
        f"{b // 1024}K {span([ideal_ratio(r) for r in big if not dense(r) and int(r['batch']) == b])}"
        for b in batches)
    lines.append(f"| host-memory gather, rows >= 1 KiB, >= 0.95 of ideal (IBP/ideal) | dense rows (<= 50 % saved): "
                 f"{text} (sparse rows, > 50 % saved: {sparse_text}) | {met} |")
    # Rows of a default-encoded file loaded with ChunkForm::FOR_GPU_READS ("@relaid", the host
    # loaders' default form) are reported on their own line; the targets' rows are the files'
    # chunks as stored (ChunkForm::AsStored), the strictest reading.
    relaid = [r for r in host if r["dataset"].endswith("@relaid")]
    host = [r for r in host if not r["dataset"].endswith("@relaid")]
    relaid_whole = [r for r in whole if r["dataset"].endswith("@relaid")]
    whole = [r for r in whole if not r["dataset"].endswith("@relaid")]
    # 2. Rows of 256 B: not slower than the uncompressed zero-copy gather (IBP / raw zc >= 1).
    small = [r for r in host if int(r["row B"]) <= 256]
    per_set = {}
    for r in small:
        per_set.setdefault((r["dataset"], r["row B"], r["A"]), []).append((int(r["batch"]), raw_ratio(r)))
    parts = []
    for (name, rb, align), v in per_set.items():
        v.sort()
        parts.append(f"{name} {rb} B A={align}: " + ", ".join(f"{b // 1024}K {x:.2f}" for b, x in v))
    slow = sorted({f"{r['dataset']} {r['row B']} B" for r in small if raw_ratio(r) < 1.0})
    lines.append(f"| rows of <= 256 B not slower than the uncompressed zero-copy gather (IBP/raw zc by batch) | "
                 f"{'; '.join(parts)} | {'yes' if not slow else 'no: slower somewhere on ' + ', '.join(slow)} |")
    # 3. Whole-entry decode from device memory >= 0.5 of the D2D copy.
    syn = [d2d_ratio(r) for r in whole if synthetic(r)]
    real = [d2d_ratio(r) for r in whole if not synthetic(r)]
    allv = syn + real
    reached = [f"{r['dataset']} {r['row B']} B A={r['A']}" for r in whole if d2d_ratio(r) >= 0.5]
    if allv and min(allv) >= 0.5:
        met = "yes"
    elif reached:
        met = "partly: on " + ", ".join(reached) + "; not on the others"
    else:
        met = "no"
    lines.append(f"| whole-entry decode from device memory >= 0.50 of the D2D copy of the output | synthetic "
                 f"{span(syn)}, real data {span(real)} | {met} |")
    # The same targets for the files encoded with the GPU options (`ibp compress --gpu`, "+gpu").
    gpu_small = [r for r in small if r["dataset"].endswith("+gpu")]
    if gpu_small:
        per_batch = {}
        for r in gpu_small:
            per_batch.setdefault(int(r["batch"]), []).append(raw_ratio(r))
        gpu_whole = [r for r in whole if r["dataset"].endswith("+gpu")]
        lines += ["", "Files encoded with `ibp compress --gpu` (`+gpu` rows: A = 16, a chunk stored raw where coding does not "
                  "make its records cheaper to read): rows of <= 256 B "
                  "IBP/raw zc " + "; ".join(f"{b // 1024}K-row batches {span(v)}" for b, v in sorted(per_batch.items()))
                  + "; whole-entry decode/D2D " + ", ".join(f"{r['dataset']} {r['decode/D2D']}" for r in gpu_whole) + "."]
    if relaid:
        # Each default-encoded dataset as a loader for GPU reads serves it: re-laid where the loader
        # re-lays a chunk, as stored elsewhere.
        relaid_keys = {(r["dataset"][: -len("@relaid")], r["row B"], r["A"]) for r in relaid}
        served = relaid + [r for r in small if not r["dataset"].endswith("+gpu")
                           and (r["dataset"], r["row B"], r["A"]) not in relaid_keys]
        per_batch = {}
        for r in relaid:
            per_batch.setdefault(int(r["batch"]), []).append(raw_ratio(r))
        slow_by_set = {}
        for r in sorted(served, key=lambda r: int(r["batch"])):
            if raw_ratio(r) < 1.0:
                slow_by_set.setdefault(f"{r['dataset']} {r['row B']} B A={r['A']}", []).append(
                    f"{int(r['batch']) // 1024}K {raw_ratio(r):.2f}")
        slow = [f"{k} ({', '.join(v)})" for k, v in sorted(slow_by_set.items())]
        lines += ["", "Files written for size, loaded with `ChunkForm::FOR_GPU_READS` (since 2026-12-07 the default of "
                  "the loaders that keep the payload in pinned host memory; `@relaid` rows: the loader keeps "
                  "raw the chunks whose coded records are no cheaper to read, "
                  + ", ".join(sorted({f"{r['dataset']} {r['row B']} B A={r['A']} ({float(r['saved %']):.1f} % saved)"
                                      for r in relaid if r["batch"] == relaid[0]["batch"]}))
                  + "): IBP/raw zc " + "; ".join(f"{b // 1024}K-row batches {span(v)}" for b, v in sorted(per_batch.items()))
                  + ". Rows of <= 256 B of default-encoded files so loaded, below the raw gather: "
                  + (", ".join(slow) if slow else "none") + "."
                  + ("" if not relaid_whole else " Whole-entry decode/D2D of those loads: "
                     + ", ".join(f"{r['dataset']} {r['row B']} B A={r['A']} {r['decode/D2D']}" for r in relaid_whole)
                     + ".")]
    # Where the compressed gather beats the uncompressed one (largest batch of the run).
    top = max((int(r["batch"]) for r in host), default=0)
    wins = {}
    for r in host:
        if int(r["batch"]) == top and raw_ratio(r) >= 1.0:
            wins.setdefault(r["dataset"], []).append(raw_ratio(r))
    if wins:
        lines += ["", f"IBP zero-copy gather faster than the uncompressed zero-copy gather at {top // 1024}K-row batches: "
                  + ", ".join(f"{d} {span(v)}x" for d, v in sorted(wins.items(), key=lambda kv: -max(kv[1]))) + "."]
    return lines


def grab(text: str, pattern: str, default: str = "not in this run", first: bool = False) -> str:
    m = re.findall(pattern, text)
    return (m[0] if first else m[-1]) if m else default


def test_summary(tests):
    """The lines that name each test binary's result in a tests.log of tools/gpu-run.sh."""
    results = [(m.group(1), m.group(2), int(m.group(3))) for m in re.finditer(
        r"=== \.devrun/tests/(\S+)\n(?:.*\n)*?test result: ((?:ok|FAILED)\. (\d+) passed; \d+ failed)", tests)]
    # Binaries with no test in this build (the CPU-run kernels' tests need the `host-kernels` feature
    # and run in CI; the bench binary's own test harness) are named apart, not counted as GPU tests.
    lines = [f"`{name}`: {text}" for name, text, passed in results if passed > 0 or "FAILED" in text]
    empty = [f"`{name}`" for name, text, passed in results if passed == 0 and "FAILED" not in text]
    if empty:
        lines.append("no tests in this build: " + ", ".join(empty))
    not_here = re.findall(r"=== not run here: \.devrun/tests/(\S+) \(([^)]*)\)", tests)
    if not_here:
        lines.append("not run on the device: " + ", ".join(f"`{name}` ({why})" for name, why in not_here))
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--commit", required=True, help="the commit the carried binaries were built from")
    ap.add_argument("--wall-s", default="?", help="command time the device tool reported")
    ap.add_argument("--checks-from", type=Path, help="read the tests, vectors and sanitizer logs from this earlier run "
                    "(a benchmark-only run of the same library code); the page says so")
    ap.add_argument("--checks-commit", default="?", help="the commit of the --checks-from run")
    a = ap.parse_args()
    checks = a.checks_from or a.out
    device, bench = read(a.out, "device.txt"), read(a.out, "bench.log")
    tests = read(checks, "tests.log") or read(checks, "run.log")
    checks_date = (read(checks, "device.txt").splitlines() or ["?"])[0]
    t = tables(bench)
    if not t:
        print(f"{a.out}/bench.log has no tables", file=sys.stderr)
        return 1
    dev_lines = device.strip().splitlines()
    test_lines = test_summary(tests)
    head = [l for l in bench.splitlines() if l.startswith(("device ", "kernel ", "pinned "))]
    card = next((c for c in ("H200", "H100") if len(dev_lines) > 2 and c in dev_lines[2]), "GPU")
    # The H200's page and conformance log are the committed record; another card's page stands beside it.
    page = "bench/GPU_RESULTS.md" if card == "H200" else f"bench/GPU_RESULTS_{card}.md"
    conformance_log = "`conformance/results/gpu-h200.txt`" if card == "H200" else "`conformance-gpu.txt` in the run's logs"
    out = [
        f"# GPU decoder results ({card})",
        "",
        f"- **Date**: {dev_lines[0] if dev_lines else '?'} (one `run` call of the device tool, {a.wall_s} s of command time).",
        f"- **Device**: {dev_lines[2] if len(dev_lines) > 2 else '?'} (name, driver, PCIe gen, width, SM/memory clocks at start). "
        "Kernels compiled at run time by NVRTC 13.0 for `sm_90` (cubin).",
        f"- **Code**: commit {a.commit} (kernels `kernels/ibp_gather.cu` and its parts `kernels/ibp_gather/*.cuh`, history in `bench/GPU_NOTES.md`).",
        *([f"- **Checks** (tests, vectors, sanitizers below): from an earlier full run, {checks_date}, "
           f"commit {a.checks_commit}; this run is the benchmark alone."] if a.checks_from else []),
        "- **Commands** (the device has no Rust: binaries are built here and carried):",
        "  ```",
        "  python3 tools/datasets.py && python3 tools/datasets.py --gpu-pack   # real-data slices, bench/data/gpu-pack",
        "  bash tools/gpu-run.sh --prepare      # release test binaries, ibp-gpu-bench, ibp-conformance --features gpu -> .devrun/",
        "  # device tool: run with carry [\".devrun\"]:",
        "  IBP_BENCH_TIMEOUT=330 IBP_SANITIZER_TIMEOUT=120 bash tools/gpu-run.sh --target-mib 256 --reps 9",
        f"  python3 tools/gpu_results.py OUT --commit {a.commit} > {page}   # this page",
        "  ```",
        "  Bench: 256 MiB of raw rows per dataset (a 32 MiB block encoded once, its chunks repeated; 5x the L2 of an H100 or H200),",
        "  uniform random row indices, batches of 1K/4K/16K/64K rows, median of 9 event-timed repetitions after warm-up",
        "  (27 for batches <= 4K rows); IBP zc, raw zc and ideal are timed interleaved (each repetition runs the three,",
        "  in an order rotating from one repetition to the next; an `@relaid` row's three in a rotation of their own),",
        "  as are the two queued launches of the launch-cost table;",
        "  each timed launch follows a 128 MiB device write that flushes the L2 and an untimed launch of the same method",
        "  on other rows, so no method reads rows another just brought into the L2 or TLBs (GPU_NOTES entries 46, 49).",
        "  Real data: `bench/data/gpu-pack` (Cora all rows, GloVe 16K rows, MiniLM KV K/V bf16 of 1,024 tokens per layer,",
        "  2 MiB of evenly spaced rows of the others), encoded with the default analysis (5 % sample) at A=16 and A=1,",
        "  and with the GPU options (`+gpu`: `EncodeOptions::for_gpu()`, `ibp compress --gpu`).",
        "  \"IBP zc\" = IBP gather reading compressed rows from pinned host memory (zero-copy); \"raw zc\" = the same rows",
        "  uncompressed, zero-copy, 16-byte loads; \"CPU+memcpy\" = CPU gather into a pinned buffer + one cudaMemcpy;",
        "  \"ideal\" = moving only the compressed records with the same access pattern; \"IBP dev\" = IBP gather from device",
        "  memory; D2D = device-to-device copy of the output size. Launch cost (batches <= 4K rows): host = time the call",
        "  takes on the CPU; events = GPU time between events around the call on an idle stream (as in the throughput",
        "  tables); queued = the same with 100 us of GPU work enqueued before the call (the GPU's part alone).",
        "  Whole-entry decode: kernel = the tile kernel the entry uses (lean = `ibp_decode_tiles_lean`, for entries whose",
        "  coded chunks have rows of <= 64 whole words; lean mid = `ibp_decode_tiles_lean_mid`, the same decoder built",
        "  for rows of 33-64 words alone, where every coded chunk has such rows; lean short = `ibp_decode_tiles_lean_short`,",
        "  the decoder's one-thread-per-row path alone at 3 blocks per SM with 64 KiB tiles, where every chunk is coded with",
        "  rows of <= 16 words or of <= 32 words and <= 64 B; lean long = `ibp_decode_tiles_lean_long`, rows of more than",
        "  64 words of <= 16 bits, mostly invariant, at 2 blocks per SM; lean vec = `ibp_decode_tiles_lean_vec`, the same",
        "  entries when every chunk is one group of 16-bit words in rows of whole 16-byte vectors (vector lanes alone, 4",
        "  blocks per SM); general = `ibp_decode_tiles`; general",
        "  pairs = `ibp_decode_tiles_pairs`, the general decoder built for chunks of 32-bit words decoded in pairs alone,",
        "  where every coded chunk is one); general kernel/D2D = the general kernel decoding the same lean entry in the",
        "  same run; any-shape kernel/D2D = the same decoder built for any shape (`ibp_decode_tiles_lean` for a lean mid",
        "  or lean short entry, `ibp_decode_tiles_lean_long` for a lean vec entry, `ibp_decode_tiles_pairs` for a lean long",
        "  entry, `ibp_decode_tiles` for a general pairs entry) in the same run (`GpuEntry::use_tile_kernel`).",
        "",
        "## Correctness in the same run",
        "",
        "- GPU test binaries (run with IBP_REQUIRE_GPU=1, so none can skip): " + "; ".join(test_lines) + ". `gpu_decode`",
        "  covers generated cases over W = 8/16/32/64, 1-100 words, G = 0/1/3, A = 1/4/16/128, partial last words and",
        "  both payload homes (whole entry, every chunk, ranges, gathers with duplicates), the real-data slices, and",
        "  corrupted single rows (identical bytes or the CPU's error code); every entry the lean tile kernel takes is",
        "  decoded by both tile kernels (same bytes, same first error), and the conformance runner does the same.",
        "- Fuzz replay through the GPU (every committed fuzz input as it is and CRC-fixed, sample containers and the",
        "  conformance vectors, from device memory and zero-copy; compared with the CPU): "
        + grab(tests, r"(GPU replay: [^\n]*)", first=True) + ". A case decodes on the GPU exactly when it decodes on the CPU,",
        "  to the same bytes; \"another code\" cases are files with several defects, where the GPU loader checks every",
        "  chunk's metadata before any row and so names a later chunk's defect (spec 11.3; the test checks each",
        "  such file has that later defect).",
        "- Conformance vectors through CPU oracle, CPU fast and GPU (`ibp-conformance run --gpu`): **"
        + grab(read(checks, "conformance-gpu.txt"), r"(\d+ passed, \d+ failed)") + f"** ({conformance_log}).",
        "- `ibp verify --gpu` on the real datasets (each compressed by `ibp compress` for size and with `--gpu`; every",
        "  chunk decoded on the GPU, payload in device and in pinned host memory, bytes equal to the CPU's): "
        + grab(read(checks, "cli-verify-gpu.txt"), r"ibp verify --gpu: ([^\n]*)") + ".",
        "- compute-sanitizer memcheck `--leak-check full` on the decode tests: "
        + grab(read(checks, "memcheck.log"), r"(LEAK SUMMARY: [^\n]*)") + "; "
        + grab(read(checks, "memcheck.log"), r"(ERROR SUMMARY: [^\n]*)") + ". memcheck on every 8th replay case: "
        + grab(read(checks, "replay-memcheck.log"), r"(ERROR SUMMARY: [^\n]*)") + "; initcheck on the same cases: "
        + grab(read(checks, "replay-initcheck.log"), r"(ERROR SUMMARY: [^\n]*)") + ".",
        "",
        "## Targets (ratios from this run)",
        "",
        *summary(t),
        "",
        "## Device and kernels",
        "",
        "```",
        *head,
        "```",
        "",
    ]
    for title, rows in t.items():
        out.append(f"## {title}")
        out.append("")
        if rows:
            keys = list(rows[0].keys())
            out.append("| " + " | ".join(keys) + " |")
            out.append("| " + " | ".join("---" for _ in keys) + " |")
            out.extend("| " + " | ".join(r[k] for k in keys) + " |" for r in rows)
        out.append("")
    print("\n".join(out).rstrip() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
