#!/usr/bin/env python3
"""Renders the evaluation results page and its plots (issue 7).

Inputs (any missing one is reported on the page, not fatal except the CPU results):
  bench/results/cpu.json          written by `ibp-eval-cpu` (crates/ibp-eval)
  bench/results/gpu_nvcomp.json   written on the H200 by tools/gpu_eval_nvcomp.py
  bench/GPU_RESULTS.md            the IBP GPU decoder's benchmark page (crates/ibp-gpu), merged as is

Outputs:
  bench/results/cpu_throughput_vs_saved.png   decode throughput (1 thread) vs space saved, per dataset
  bench/results/gpu_throughput_vs_saved.png   H200 host-to-GPU delivery vs space saved (nvCOMP, raw)
  bench/RESULTS.md

Usage: python3 tools/plot_results.py [--results bench/results] [--page bench/RESULTS.md]
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent

# Colour per method (CPU), one entry per method name the bench writes.
METHOD_STYLE = {
    "none": ("#000000", "s"),
    "IBP auto": ("#d62728", "*"),
    "IBP sample 1%": ("#ff7f0e", "*"),
    "IBP sample 5%": ("#e377c2", "*"),
    "IBP sample 10%": ("#bcbd22", "*"),
    "zstd-1": ("#1f77b4", "o"),
    "zstd-1 64 KiB blocks": ("#1f77b4", "^"),
    "zstd-3": ("#17becf", "o"),
    "zstd-3 64 KiB blocks": ("#17becf", "^"),
    "zstd-19": ("#9467bd", "o"),
    "zstd-19 64 KiB blocks": ("#9467bd", "^"),
    "lz4": ("#2ca02c", "o"),
    "lz4 64 KiB blocks": ("#2ca02c", "^"),
}


def fnum(v, digits=2, dash="–"):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return dash
    return f"{v:.{digits}f}"


def method(ds: dict, name: str) -> dict | None:
    return next((m for m in ds["methods"] if m["method"] == name), None)


def saved(ds: dict, name: str) -> float | None:
    m = method(ds, name)
    return None if m is None or m.get("error") else m["saved_pct"]


# ------------------------------------------------------------------------------------------------
# plots
# ------------------------------------------------------------------------------------------------


def plot_cpu(cpu: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sets = cpu["datasets"]
    cols = 4
    rows = math.ceil(len(sets) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.4 * rows), squeeze=False)
    handles = {}
    for ax, ds in zip(axes.flat, sets):
        for m in ds["methods"]:
            if m.get("error") or m.get("decode_gbps_1t") is None:
                continue
            colour, marker = METHOD_STYLE.get(m["method"], ("#7f7f7f", "x"))
            h = ax.scatter(m["saved_pct"], m["decode_gbps_1t"], c=colour, marker=marker,
                           s=90 if marker == "*" else 40, edgecolors="none" if marker != "x" else None,
                           alpha=0.9, zorder=3 if m["family"] == "ibp" else 2)
            handles.setdefault(m["method"], h)
        pub = ds.get("published")
        if pub:
            ax.axvline(pub["saved_pct"], color="#d62728", ls=":", lw=1)
            if pub.get("alt_saved_pct"):
                ax.axvline(pub["alt_saved_pct"], color="#d62728", ls="--", lw=0.8)
        ax.set_yscale("log")
        ax.set_title(f"{ds['name']} ({ds['row_bytes']} B rows)", fontsize=9)
        ax.grid(True, which="both", lw=0.3, alpha=0.5)
        ax.tick_params(labelsize=7)
        ax.set_xlabel("space saved, % (every overhead counted)", fontsize=7)
        ax.set_ylabel("decode GB/s, 1 thread (log)", fontsize=7)
    for ax in list(axes.flat)[len(sets):]:
        ax.axis("off")
    order = [k for k in METHOD_STYLE if k in handles] + [k for k in handles if k not in METHOD_STYLE]
    fig.legend([handles[k] for k in order], order, loc="lower center", ncol=7, fontsize=8, frameon=False)
    fig.suptitle(f"CPU decode throughput vs space saved — {cpu['cpu_model']}, {cpu['logical_cores']} cores "
                 "(dotted red: published IBP figure; dashed: same coding with 16-bit words)", fontsize=10)
    fig.tight_layout(rect=(0, 0.06, 1, 0.96))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_gpu(gpu: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    res = [r for r in gpu["results"] if not r.get("error") and r.get("gbps")]
    names = list(dict.fromkeys(r["dataset"] for r in res))
    colours = {"nvCOMP ANS": "#1f77b4", "nvCOMP Bitcomp": "#ff7f0e", "nvCOMP Cascaded": "#2ca02c",
               "nvCOMP LZ4": "#9467bd"}
    fig, axes = plt.subplots(1, 2, figsize=(13, 5))
    for ax, (mode, batch, title) in zip(axes, [("whole", None, "whole 64 MiB tile"),
                                               ("random", 8192, "random gather of 8192 rows")]):
        handles = {}
        for i, name in enumerate(names):
            rs = [r for r in res if r["dataset"] == name and r["mode"] == mode
                  and (batch is None or r.get("batch_rows") == batch)]
            raw = next((r for r in rs if r["method"].startswith("raw")), None)
            for r in rs:
                if r["method"] in colours:
                    h = ax.scatter(r["saved_pct"], r["gbps"], c=colours[r["method"]], s=30)
                    handles.setdefault(r["method"], h)
                    ax.annotate(name.replace("-f32", "").replace("minilm-", "m-"), (r["saved_pct"], r["gbps"]),
                                fontsize=5, alpha=0.6)
            if raw is not None:
                h = ax.scatter(0, raw["gbps"], c="k", marker="s", s=20)
                handles.setdefault(raw["method"], h)
        ax.set_yscale("log")
        ax.set_xlabel("space saved, % (nvCOMP: compressed chunk bytes vs raw)")
        ax.set_ylabel("GB/s of uncompressed bytes delivered to the GPU (log)")
        ax.set_title(f"H200, data in pinned host memory: {title}", fontsize=10)
        ax.grid(True, which="both", lw=0.3, alpha=0.5)
        ax.legend(list(handles.values()), list(handles.keys()), fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ------------------------------------------------------------------------------------------------
# page
# ------------------------------------------------------------------------------------------------


def pt(d: float) -> str:
    return f"{d:+.2f}" if abs(d) >= 0.01 else f"{d:+.3f}"


def beats(ours: float | None, pub: dict | None) -> str:
    if ours is None or not pub:
        return "–"
    target = pub["saved_pct"]
    s = f"yes ({pt(ours - target)} pt)" if ours >= target else f"**no ({pt(ours - target)} pt)**"
    alt = pub.get("alt_saved_pct")
    if alt is not None:
        s += f"; vs {alt:.1f}: " + (f"yes ({pt(ours - alt)})" if ours >= alt else f"**no ({pt(ours - alt)})**")
    return s


def space_table(cpu: dict) -> list[str]:
    out = [
        "| dataset | rows × row bytes | IBP auto | IBP 1 % sample | published | beats published? | zstd-3 64 KiB blocks | "
        "zstd-3 stream | zstd-19 64 KiB blocks ¹ | lz4 64 KiB blocks | IBP auto − zstd-3 blocks |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for ds in cpu["datasets"]:
        pub = ds.get("published")
        ibp = saved(ds, "IBP auto")
        z3b = saved(ds, "zstd-3 64 KiB blocks")
        pub_s = "–"
        if pub:
            pub_s = f"{pub['saved_pct']:.1f}" + (f" ({pub['alt_saved_pct']:.1f} W16)" if pub.get("alt_saved_pct") else "")
        diff = "–" if ibp is None or z3b is None else f"{ibp - z3b:+.1f} pt"
        out.append(
            f"| {ds['name']} | {ds['rows']} × {ds['row_bytes']} | **{fnum(ibp, 2)}** | {fnum(saved(ds, 'IBP sample 1%'), 1)} | "
            f"{pub_s} | {beats(ibp, pub)} | {fnum(z3b, 1)} | {fnum(saved(ds, 'zstd-3'), 1)} | "
            f"{fnum(saved(ds, 'zstd-19 64 KiB blocks'), 1)} | {fnum(saved(ds, 'lz4 64 KiB blocks'), 1)} | {diff} |"
        )
    return out


def ratio(a, b):
    return a / b if a is not None and b else None


def row_us(m: dict) -> str:
    s = fnum(m.get("row_access_us"), 2)
    if m.get("row_access_prepared_us") is not None:
        s += f" ({fnum(m['row_access_prepared_us'], 2)})"
    return s


def speed_table(cpu: dict) -> list[str]:
    names = ["IBP auto", "IBP sample 1%", "zstd-1 64 KiB blocks", "zstd-3 64 KiB blocks", "lz4 64 KiB blocks", "none"]
    out = [
        "| dataset | method | saved % | encode GB/s 1 thr / all | decode GB/s 1 thr / all | decode ÷ memcpy, 1 thr | 1 random row, µs ² |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for ds in cpu["datasets"]:
        for n in names:
            m = method(ds, n)
            if m is None:
                continue
            if m.get("error"):
                out.append(f"| {ds['name']} | {n} | error: {m['error']} | | | | |")
                continue
            label = "none (memcpy)" if n == "none" else n
            out.append(
                f"| {ds['name']} | {label} | {fnum(m['saved_pct'], 1)} | {fnum(m.get('encode_gbps_1t'), 3)} / "
                f"{fnum(m.get('encode_gbps_all'), 3)} | {fnum(m.get('decode_gbps_1t'), 3)} / {fnum(m.get('decode_gbps_all'), 3)} | "
                f"{fnum(ratio(m.get('decode_gbps_1t'), ds['memcpy_gbps_1t']), 3)} | {row_us(m)} |"
            )
    return out


def full_tables(cpu: dict) -> list[str]:
    out = []
    for ds in cpu["datasets"]:
        out += [
            f"<details><summary>{ds['name']}: all methods ({ds['raw_bytes'] / 1e6:.1f} MB, {ds['seconds']:.0f} s)</summary>",
            "",
            f"{ds.get('description', '')}. memcpy of the whole dataset: {ds['memcpy_gbps_1t']:.2f} GB/s (1 thread), "
            f"{ds['memcpy_gbps_all']:.2f} GB/s (all cores).",
            "",
            "| method | random access | measured on | stored bytes | saved % | enc GB/s 1 thr | enc GB/s all | dec GB/s 1 thr | "
            "dec GB/s all | row µs | chosen / notes |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for m in ds["methods"]:
            on = f"{m['measured_bytes'] / 1e6:.1f} MB" + (" (prefix)" if m.get("subset") else "")
            note = m.get("error") and f"error: {m['error']}" or (m.get("detail") or "")
            out.append(
                f"| {m['method']} | {'yes' if m['random_access'] else 'no'} | {on} | {m['stored_bytes']} | "
                f"{fnum(m['saved_pct'], 2)} | {fnum(m.get('encode_gbps_1t'), 3)} | {fnum(m.get('encode_gbps_all'), 3)} | "
                f"{fnum(m.get('decode_gbps_1t'), 3)} | {fnum(m.get('decode_gbps_all'), 3)} | {row_us(m)} | {note} |"
            )
        out += ["", "</details>", ""]
    return out


def findings(cpu: dict) -> list[str]:
    """Plain statements computed from the numbers: where IBP wins and loses."""
    wins, losses, misses = [], [], []
    for ds in cpu["datasets"]:
        ibp = method(ds, "IBP auto")
        if ibp is None or ibp.get("error"):
            losses.append(f"{ds['name']}: IBP auto failed ({ibp and ibp.get('error')})")
            continue
        pub = ds.get("published")
        if pub and ibp["saved_pct"] < pub["saved_pct"]:
            misses.append(f"{ds['name']}: {ibp['saved_pct']:.2f} % vs published {pub['saved_pct']:.1f} % "
                          f"(short by {pt(pub['saved_pct'] - ibp['saved_pct'])[1:]} pt)")
        elif pub and pub.get("alt_saved_pct") and ibp["saved_pct"] < pub["alt_saved_pct"]:
            misses.append(f"{ds['name']}: {ibp['saved_pct']:.2f} % beats the published {pub['saved_pct']:.1f} % but not "
                          f"the {pub['alt_saved_pct']:.1f} % of the same coding with 16-bit words "
                          f"(short by {pt(pub['alt_saved_pct'] - ibp['saved_pct'])[1:]} pt)")
        ra = [m for m in ds["methods"] if m["random_access"] and m["family"] not in ("ibp", "none")
              and not m.get("error") and not m.get("subset")]
        best = max(ra, key=lambda m: m["saved_pct"], default=None)
        if best is not None:
            d = ibp["saved_pct"] - best["saved_pct"]
            s = f"{ds['name']}: IBP {ibp['saved_pct']:.1f} % vs best general-purpose random-access {best['method']} {best['saved_pct']:.1f} % ({d:+.1f} pt)"
            (wins if d >= 0 else losses).append(s)
    out = ["Space, IBP auto against the best of zstd-1/zstd-3/lz4 in 64 KiB blocks (random access, full data):", ""]
    out += [f"- wins: {w}" for w in wins] + [f"- loses: {w}" for w in losses]
    out += ["", "Published figures not reached:" if misses else "Every published figure is matched or beaten.", ""]
    out += [f"- {m}" for m in misses]
    return out


def groups_table(grp: dict) -> list[str]:
    out = [
        "| dataset | variant | saved % | published | encode GB/s 1 thr | decode GB/s 1 thr | 1 random row, µs |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for ds in grp["datasets"]:
        pub = ds.get("published")
        for m in ds["methods"]:
            if m["family"] != "ibp":
                continue
            if m.get("error"):
                out.append(f"| {ds['name']} | {m['method']} | error: {m['error']} | | | | |")
                continue
            out.append(
                f"| {ds['name']} | {m['method']} | {fnum(m['saved_pct'], 2)} | {fnum(pub and pub['saved_pct'], 1)} | "
                f"{fnum(m.get('encode_gbps_1t'), 3)} | {fnum(m.get('decode_gbps_1t'), 3)} | {fnum(m.get('row_access_us'), 2)} |"
            )
    return out


def subset_caveat(res: list[dict]) -> str:
    """Runs before the 'subset' field existed took each dataset's first rows."""
    layouts = {r.get("subset", "rows [0,") for r in res if r.get("dataset")}
    if any(l.startswith("rows [0,") for l in layouts):
        return ("Caveat: the subsets are each dataset's *first* rows; for MiniLM word embeddings those are mostly "
                "`[unused]` word pieces (about half the typical magnitude), so nvCOMP's ratios there overstate what "
                "it saves on the full table (compare the CPU table above, which uses all rows). The other subsets "
                "match their full datasets in zero fraction and mean magnitude.")
    return "Subsets: 64 KiB slabs of rows spread evenly over each dataset."


def gpu_tables(gpu: dict) -> list[str]:
    env = gpu["env"]
    res = gpu["results"]
    names = list(dict.fromkeys(r["dataset"] for r in res))
    codecs = ["nvCOMP ANS", "nvCOMP Bitcomp", "nvCOMP Cascaded", "nvCOMP LZ4"]
    out = [
        f"Measured {env['date_utc']} on {env['gpu']} (CUDA driver {env['driver']}, runtime {env['runtime']}, "
        f"CuPy {env['cupy']}, nvCOMP {env['nvcomp']}); a ~2 MiB subset of each dataset tiled to a "
        f"{env['tile_mib']} MiB array in pinned host memory; 64 KiB chunks; {env['timing']}. "
        "GB/s are uncompressed bytes delivered to GPU memory per second (transfer + decode together). "
        "Every decoded result was checked against the original. " + subset_caveat(res),
        "",
        "Whole tile (one copy of all compressed chunks + batched decode; raw = one pinned cudaMemcpy):",
        "",
        "| dataset | raw cudaMemcpy | " + " | ".join(f"{c[7:]} GB/s (saved %)" for c in codecs) + " |",
        "| --- | --- | " + " | ".join("---" for _ in codecs) + " |",
    ]
    for n in names:
        rs = [r for r in res if r["dataset"] == n]
        raw = next((r for r in rs if r.get("method") == "raw pinned cudaMemcpy"), None)
        cells = []
        for c in codecs:
            r = next((r for r in rs if r.get("method") == c and r.get("mode") == "whole"), None)
            cells.append("–" if r is None or r.get("error") else f"{r['gbps']:.1f} ({r['saved_pct']:.1f})")
        out.append(f"| {n} | {fnum(raw and raw['gbps'], 1)} | " + " | ".join(cells) + " |")
    batches = sorted({r["batch_rows"] for r in res if r.get("mode") == "random" and not r.get("error")})
    out += [
        "",
        "Random mini-batches of B rows in the caller's order (GB/s of the B rows delivered). nvCOMP: zero-copy fetch of "
        "the compressed 64 KiB chunks the batch touches + batched decode + row gather on the GPU; raw zero-copy: "
        "a warp per row reads it from pinned host memory; CPU gather: numpy take into pinned staging + one cudaMemcpy:",
        "",
        "| dataset | B | chunks touched | raw zero-copy | CPU gather + memcpy | " + " | ".join(c[7:] for c in codecs) + " |",
        "| --- | --- | --- | --- | --- | " + " | ".join("---" for _ in codecs) + " |",
    ]
    for n in names:
        for b in batches:
            rs = [r for r in res if r["dataset"] == n and r.get("mode") == "random" and r.get("batch_rows") == b]
            if not rs or all(r.get("error") for r in rs):
                continue
            get = lambda m: next((r for r in rs if r.get("method") == m and not r.get("error")), None)  # noqa: E731
            zc, cpu_g = get("raw zero-copy gather"), get("CPU gather + cudaMemcpy")
            touched = next((f"{r['chunks_touched']}/{r['chunks_total']}" for r in rs if r.get("chunks_touched")), "–")
            cells = [fnum(get(c) and get(c)["gbps"], 2) for c in codecs]
            out.append(f"| {n} | {b} | {touched} | {fnum(zc and zc['gbps'], 1)} | {fnum(cpu_g and cpu_g['gbps'], 2)} | "
                       + " | ".join(cells) + " |")
    return out


def md_tables(text: str) -> dict[str, list[dict]]:
    """Markdown tables of a page, keyed by the heading above each: a list of {column: cell} rows."""
    tables: dict[str, list[dict]] = {}
    heading, header, rows = "", None, None
    for line in text.splitlines() + [""]:
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if header is None:
                header, rows = cells, []
            elif not all(set(c) <= set("-: ") for c in cells):
                rows.append(dict(zip(header, cells)))
        elif header is not None:
            tables[heading] = rows
            header, rows = None, None
    return tables


def num(cell: str | None) -> float | None:
    try:
        return float(cell)
    except (TypeError, ValueError):
        return None


def merged_gpu_tables(gpu: dict | None, gpu_page_text: str) -> list[str]:
    """IBP GPU figures (from bench/GPU_RESULTS.md) next to nvCOMP and the raw references (same H200)."""
    tables = md_tables(gpu_page_text)
    gathers = next((v for k, v in tables.items() if k.startswith("Random gathers, compressed rows in pinned host")), [])
    whole_dev = next((v for k, v in tables.items() if k.startswith("Whole-entry decode from device memory")), [])
    if not gathers:
        return ["(no random-gather table found in `bench/GPU_RESULTS.md`)"]
    res = gpu["results"] if gpu else []
    codecs = ["nvCOMP ANS", "nvCOMP Bitcomp", "nvCOMP Cascaded", "nvCOMP LZ4"]

    def nvcomp_best(name, mode, batch=None):
        rs = [r for r in res if r.get("dataset") == name and r.get("mode") == mode and r.get("method") in codecs
              and not r.get("error") and (batch is None or r.get("batch_rows") == batch)]
        return max(rs, key=lambda r: r["gbps"], default=None)

    out = [
        "Random gathers of B rows from pinned host memory, GB/s of uncompressed rows delivered (IBP: default analysis "
        "with 5 % sampling, A = 1 and A = 16; nvCOMP: the fastest of ANS/Bitcomp/Cascaded/LZ4 with 64 KiB chunks, "
        "from the table above, – where the batch was larger than its 64 MiB tile; both on the same H200 and on "
        "subsets of the same datasets, not in the same process, so ratios across the two are indicative):",
        "",
        "| dataset | row B | B | IBP saved % (A=1) | IBP zero-copy A=1 | IBP zero-copy A=16 | raw zero-copy | CPU gather + memcpy | "
        "best nvCOMP (saved %) | IBP A=1 ÷ raw zero-copy | IBP A=1 ÷ best nvCOMP |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    names = list(dict.fromkeys(r["dataset"] for r in gathers if not r["dataset"].startswith("f32-")))
    for name in names:
        for batch in ("1024", "65536"):
            rows = {r["A"]: r for r in gathers if r["dataset"] == name and r["batch"] == batch}
            a1, a16 = rows.get("1"), rows.get("16")
            if a1 is None:
                continue
            best = nvcomp_best(name, "random", int(batch))
            ibp = num(a1["IBP zc"])
            out.append(
                f"| {name} | {a1['row B']} | {batch} | {a1['saved %']} | **{a1['IBP zc']}** | {a16['IBP zc'] if a16 else '–'} | "
                f"{a1['raw zc']} | {a1['CPU+memcpy']} | "
                + (f"{best['gbps']:.2f} {best['method'][7:]} ({best['saved_pct']:.1f})" if best else "–")
                + f" | {fnum(ratio(ibp, num(a1['raw zc'])), 2)} | {fnum(ratio(ibp, best and best['gbps']), 1)} |"
            )
    if whole_dev:
        out += [
            "",
            "Whole-array decode with the compressed bytes already in device memory (GB/s of uncompressed bytes): IBP "
            "whole-entry decode vs nvCOMP's batched decode of all 64 KiB chunks (the transfer excluded on both sides):",
            "",
            "| dataset | IBP saved % (A=1) | IBP decode | D2D copy of output size | best nvCOMP decode (saved %) |",
            "| --- | --- | --- | --- | --- |",
        ]
        for r in whole_dev:
            if r["dataset"].startswith("f32-") or r.get("A") != "1":
                continue
            best = nvcomp_best(r["dataset"], "whole, decode only (data on GPU)")
            out.append(
                f"| {r['dataset']} | {r['saved %']} | {r['IBP decode']} | {r.get('D2D copy of output size', '–')} | "
                + (f"{best['gbps']:.0f} {best['method'][7:]} ({best['saved_pct']:.1f})" if best else "–") + " |"
            )
    return out


def render(results: Path, page: Path) -> None:
    cpu = json.loads((results / "cpu.json").read_text())
    gpu_path = results / "gpu_nvcomp.json"
    gpu = json.loads(gpu_path.read_text()) if gpu_path.exists() else None
    gpu_page = REPO_ROOT / "bench" / "GPU_RESULTS.md"
    grp_path = results / "cpu_groups.json"
    grp = json.loads(grp_path.read_text()) if grp_path.exists() else None

    plot_cpu(cpu, results / "cpu_throughput_vs_saved.png")
    if gpu:
        plot_gpu(gpu, results / "gpu_throughput_vs_saved.png")

    run_date = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(cpu["unix_time"]))
    rel = lambda p: p.relative_to(page.parent).as_posix() if p.is_relative_to(page.parent) else p.as_posix()  # noqa: E731
    lines = [
        "# IBP evaluation on real data",
        "",
        "Generated by `bash tools/eval.sh` (CPU benchmark `ibp-eval-cpu` in `crates/ibp-eval`, then "
        "`tools/plot_results.py`, which merges the latest GPU result files). Do not edit by hand.",
        "",
        f"- CPU run: {run_date}, {cpu['elapsed_s']:.0f} s, `{cpu['tool']}`",
        f"- Machine: {cpu['cpu_model'] or 'unknown CPU'}, **{cpu['logical_cores']} logical cores** "
        f"(\"all cores\" = {cpu['threads_all']} threads). The machine is shared with other jobs, so all-core figures "
        "are noisy and often no better than one thread.",
        "- Data: `bench/data/*.npy` from `tools/datasets.py` (provenance in `bench/data/manifest.json`).",
        f"- Raw results: [`cpu.json`]({rel(results / 'cpu.json')}), [`cpu.csv`]({rel(results / 'cpu.csv')})"
        + (f", [`gpu_nvcomp.json`]({rel(gpu_path)})" if gpu else ""),
        "",
        "## Space saved (every overhead counted) against the published figures",
        "",
        "IBP = size of the whole container file (header, chunk headers, masks, row-length index, directory, "
        "footer) vs the raw bytes. Blocks = independent 64 KiB blocks + an 8-byte offset each; stream = one "
        "zstd frame. ¹ zstd-19 only on a 4 MiB sample of each dataset (64 KiB slabs spread evenly over it; "
        "it runs at a few MB/s), so it is not on quite the same bytes. \"vs 20.7 / 23.6\": the same published coding with 16-bit words.",
        "",
        *space_table(cpu),
        "",
        *findings(cpu),
        "",
        *([
            "### Diagnostic: IBP with several Mask/Bitval groups per chunk",
            "",
            "Not the default (auto uses one group). Same run conditions, small datasets only "
            f"([`cpu_groups.json`]({rel(grp_path)})): how far groups move the ratio where one group falls short.",
            "",
            *groups_table(grp),
            "",
        ] if grp else []),
        "## Throughput and random row access (CPU)",
        "",
        "GB/s of raw bytes, wall clock, fastest of a few runs. Encode includes IBP's analysis. Decode checks "
        "CRCs and writes every byte; all-core IBP decode spreads chunks over the threads. Row access: mean time "
        "to return one random row (IBP: library gather of 1 row; blocks: decode the 64 KiB block(s) holding "
        "the row and slice). ² In parentheses for IBP: the same rows with chunk metadata and one fast row "
        "decoder per chunk group prepared once per file; the gap is the per-row decoder setup that "
        "`ContainerReader::gather` currently pays (it builds the decoder tables for every requested row).",
        "",
        *speed_table(cpu),
        "",
        f"![CPU decode throughput vs space saved]({rel(results / 'cpu_throughput_vs_saved.png')})",
        "",
        "### All methods per dataset",
        "",
        *full_tables(cpu),
        "## Host-to-GPU delivery on the H200",
        "",
        "### General-purpose GPU codecs (nvCOMP 6) and uncompressed references",
        "",
    ]
    if gpu:
        lines += gpu_tables(gpu)
        lines += ["", f"![H200 delivery vs space saved]({rel(results / 'gpu_throughput_vs_saved.png')})", ""]
    else:
        lines += ["No `bench/results/gpu_nvcomp.json` yet: run `tools/gpu_eval_nvcomp.py run` on the GPU machine.", ""]
    lines += ["### IBP GPU decoder", ""]
    if gpu_page.exists():
        text = gpu_page.read_text()
        meta, keep = [], False
        for l in text.splitlines():
            if l.startswith("- "):
                keep = l.startswith("- **Code**") or l.startswith("- **Date**") or l.startswith("- **Device**")
            elif not l.startswith("  "):
                keep = False
            if keep:
                meta.append(l)
        lines += [
            f"Merged from [`bench/GPU_RESULTS.md`]({rel(gpu_page)}) (crates/ibp-gpu benchmark; its targets, synthetic "
            "rows, device-memory gathers and notes are there). That run:",
            "",
            *meta,
            "",
            *merged_gpu_tables(gpu, text),
            "",
        ]
    else:
        lines += [
            "`bench/GPU_RESULTS.md` (IBP zero-copy gather vs uncompressed zero-copy gather vs CPU gather + "
            "cudaMemcpy, from the ibp-gpu benchmark) does not exist yet; once it does, rerunning "
            "`python3 tools/plot_results.py` merges it here.",
            "",
        ]
    lines += ["## How it was measured", ""] + [f"- {n}" for n in cpu["notes"]] + [""]
    page.write_text("\n".join(lines) + "\n")
    print(f"wrote {page}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", default=str(REPO_ROOT / "bench" / "results"))
    ap.add_argument("--page", default=str(REPO_ROOT / "bench" / "RESULTS.md"))
    a = ap.parse_args()
    render(Path(a.results), Path(a.page))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
