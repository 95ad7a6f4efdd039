#!/usr/bin/env python3
"""nvCOMP + CuPy baseline for host-to-GPU delivery of real datasets (issue 7).

Two sub-commands:

``prepare`` (here, no GPU): cut small subsets of the datasets in ``bench/data`` (made by
``tools/datasets.py``) into ``.devrun/data/<name>.npy`` plus ``.devrun/data/manifest.json``, small
enough to travel to the GPU machine (default 2 MiB a dataset). ``--layout spread`` (default) takes
64 KiB slabs of rows spread evenly over the dataset; ``--layout first`` takes the first rows (what the
committed results of 2026-11-29 used: unrepresentative for MiniLM word embeddings, whose first ~1000
rows are ``[unused]`` word pieces).

``run`` (on the GPU machine, with CuPy and the nvCOMP 6 Python wheels): for every subset

* tile it (repeat the subset) to ``--tile-mib`` MiB, keep the tile in pinned host memory;
* references, uncompressed: one pinned ``cudaMemcpyAsync`` of the whole tile; a zero-copy gather
  kernel that reads random rows straight from pinned host memory; a CPU gather (numpy ``take`` into a
  pinned staging buffer) followed by one ``cudaMemcpyAsync``;
* for each nvCOMP codec (ANS, Bitcomp, Cascaded, LZ4): compress the tile on the GPU in independent
  64 KiB chunks (``BitstreamKind.RAW``, one batch), pack the compressed chunks back to back (16-byte
  aligned) into pinned host memory, then time
    - whole tile: one ``cudaMemcpyAsync`` of all compressed bytes + batched decode of every chunk;
    - random mini-batches of B rows: a zero-copy kernel fetches the compressed chunks the batch
      touches from pinned host memory, a batched decode of those chunks, and a kernel that gathers
      the B rows from the decoded chunks into the caller's order.
  Transfer and decode are timed together (CUDA events on one stream); the host-side planning of a
  batch (which chunks, offset tables) is timed separately and reported as ``plan_ms``.

Throughput is always GB/s (1e9 bytes/s) of *uncompressed, useful* bytes delivered: the tile for the
whole-tile case, ``B * row_bytes`` for a batch. Every decoded output is checked against the original.

Usage::

    python3 tools/gpu_eval_nvcomp.py prepare [--max-mib 2]
    python3 tools/gpu_eval_nvcomp.py run --data .devrun/data --out "$OUT" [--tile-mib 64]
"""

from __future__ import annotations

import argparse
import ctypes
import json
import math
import os
import statistics
import sys
import time
import traceback
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
CHUNK = 64 * 1024
PACK_ALIGN = 16
BATCHES = (1024, 8192, 65536)
CODECS = ("ANS", "Bitcomp", "Cascaded", "LZ4")

# Datasets of the evaluation (issue 7); names as tools/datasets.py writes them.
GPU_SET = (
    "cora-features-f32",
    "glove-6b-50d-f32",
    "minilm-word-emb-f32",
    "minilm-ffn-up-f32",
    "minilm-kv-k-f32",
    "minilm-kv-k-bf16",
    "minilm-kv-v-bf16",
    "spacy-fi-floret-f32",
    "fashion-mnist-test",
)


# ------------------------------------------------------------------------------------------------
# prepare (no GPU)
# ------------------------------------------------------------------------------------------------


def prepare(args: argparse.Namespace) -> int:
    manifest_path = REPO_ROOT / "bench" / "data" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    by_name = {d["name"]: d for d in manifest["datasets"]}
    out_dir = REPO_ROOT / ".devrun" / "data"
    out_dir.mkdir(parents=True, exist_ok=True)
    budget = int(args.max_mib * 1024 * 1024)
    entries = []
    for name in args.only or GPU_SET:
        d = by_name.get(name)
        if d is None:
            print(f"skip {name}: not in {manifest_path}", file=sys.stderr)
            continue
        arr = np.load(REPO_ROOT / d["path"], mmap_mode="r")
        row_bytes = int(d["row_bytes"])
        rows = max(1, min(arr.shape[0], budget // row_bytes))
        if args.layout == "first" or rows == arr.shape[0]:
            sub = np.ascontiguousarray(arr[:rows])
            how = f"rows [0, {rows})"
        else:
            slab = max(1, min(rows, CHUNK // row_bytes))
            slabs = max(1, rows // slab)
            last = arr.shape[0] - slab
            starts = [i * last // max(1, slabs - 1) for i in range(slabs)]
            sub = np.ascontiguousarray(np.concatenate([arr[s0:s0 + slab] for s0 in starts]))
            rows = sub.shape[0]
            how = f"{slabs} slabs of {slab} rows spread evenly over all {arr.shape[0]} rows"
        path = out_dir / f"{name}.npy"
        np.save(path, sub)
        entries.append({
            "name": name,
            "file": path.name,
            "dtype": d["dtype"],
            "npy_dtype": d["npy_dtype"],
            "rows": rows,
            "row_bytes": row_bytes,
            "full_rows": int(d["rows"]),
            "subset": f"{how} of {d['path']} (sha256 {d['sha256'][:16]}...)",
        })
        print(f"{name}: {rows} of {d['rows']} rows, {rows * row_bytes / 1e6:.2f} MB -> {path}")
    (out_dir / "manifest.json").write_text(json.dumps({"datasets": entries}, indent=2) + "\n")
    return 0


# ------------------------------------------------------------------------------------------------
# run (GPU)
# ------------------------------------------------------------------------------------------------

KERNELS = r"""
// One warp per row: copy row r from src + src_off[r] (bytes) to dst + r * row_bytes.
// T is the widest word that divides row_bytes and every offset.
#define GATHER(NAME, T)                                                                            \
extern "C" __global__ void NAME(const unsigned long long src, const long long* __restrict__ src_off, \
                                T* __restrict__ dst, const long long words, const long long rows) { \
    long long warp = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;                       \
    int lane = threadIdx.x & 31;                                                                    \
    if (warp >= rows) return;                                                                       \
    const T* s = (const T*)(src + (unsigned long long)src_off[warp]);                               \
    T* d = dst + warp * words;                                                                      \
    for (long long i = lane; i < words; i += 32) d[i] = s[i];                                       \
}
GATHER(gather_u8, unsigned char)
GATHER(gather_u32, unsigned int)
GATHER(gather_u64, unsigned long long)
GATHER(gather_u128, uint4)

// One block per compressed chunk: copy n16[c] 16-byte words from src + src_off[c] to dst + dst_off[c].
extern "C" __global__ void fetch_chunks(const unsigned long long src, const long long* __restrict__ src_off,
                                        const long long* __restrict__ dst_off, const int* __restrict__ n16,
                                        uint4* __restrict__ dst_base) {
    int c = blockIdx.x;
    const uint4* s = (const uint4*)(src + (unsigned long long)src_off[c]);
    uint4* d = (uint4*)((char*)dst_base + dst_off[c]);
    for (int i = threadIdx.x; i < n16[c]; i += blockDim.x) d[i] = s[i];
}
"""


def now_utc() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class Gpu:
    """CuPy state shared by the measurements: one stream, the kernels, pinned allocations."""

    def __init__(self):
        import cupy as cp

        self.cp = cp
        # A blocking stream: it orders itself with CuPy work on the legacy default stream.
        self.stream = cp.cuda.Stream(non_blocking=False)
        mod = cp.RawModule(code=KERNELS, options=("-std=c++17",))
        self.gather = {1: mod.get_function("gather_u8"), 4: mod.get_function("gather_u32"),
                       8: mod.get_function("gather_u64"), 16: mod.get_function("gather_u128")}
        self.fetch = mod.get_function("fetch_chunks")
        self._keep = []

    def pinned(self, nbytes: int) -> tuple[np.ndarray, int]:
        """A numpy view of pinned (page-locked, device-mapped) host memory and its address."""
        cp = self.cp
        nbytes = max(nbytes, 1)
        try:
            # cudaHostAllocPortable | cudaHostAllocMapped
            mem = cp.cuda.PinnedMemory(nbytes, 3)
            ptr = cp.cuda.PinnedMemoryPointer(mem, 0)
        except Exception:  # older CuPy: pool allocation (still mapped under unified addressing)
            ptr = cp.cuda.alloc_pinned_memory(nbytes)
        self._keep.append(ptr)
        try:
            arr = np.frombuffer(ptr, dtype=np.uint8, count=nbytes)
        except TypeError:  # no buffer protocol: view the host address directly
            arr = np.ctypeslib.as_array((ctypes.c_uint8 * nbytes).from_address(int(ptr.ptr)))
        return arr, int(ptr.ptr)

    def h2d(self, dst_ptr: int, src_ptr: int, nbytes: int) -> None:
        self.cp.cuda.runtime.memcpyAsync(dst_ptr, src_ptr, nbytes, 1, self.stream.ptr)

    def gather_rows(self, src_ptr: int, src_off_dev, dst, row_bytes: int, rows: int) -> None:
        word = next(w for w in (16, 8, 4, 1) if row_bytes % w == 0)
        threads = 256
        blocks = (rows * 32 + threads - 1) // threads
        with self.stream:
            self.gather[word]((blocks,), (threads,),
                              (np.uint64(src_ptr), src_off_dev, dst, np.int64(row_bytes // word), np.int64(rows)))

    def time_events(self, fn, reps: int, warm: int = 2, prep=None) -> tuple[list[float], list[float]]:
        """Per-rep seconds by CUDA events on the stream, and by wall clock (enqueue to sync)."""
        cp = self.cp
        ev, wall = [], []
        for i in range(warm + reps):
            state = prep(i) if prep else None
            self.stream.synchronize()
            e0, e1 = cp.cuda.Event(), cp.cuda.Event()
            t0 = time.perf_counter()
            e0.record(self.stream)
            fn(state) if prep else fn()
            e1.record(self.stream)
            e1.synchronize()
            t1 = time.perf_counter()
            if i >= warm:
                ev.append(cp.cuda.get_elapsed_time(e0, e1) / 1e3)
                wall.append(t1 - t0)
        return ev, wall


def gbps(nbytes: float, secs: float) -> float:
    return nbytes / secs / 1e9 if secs > 0 else float("nan")


def codec_options(name: str, elem_bytes: int) -> list[dict]:
    """Options to try in order (the first that compresses and round-trips is kept)."""
    int_type = {1: "|u1", 2: "<u2", 4: "<u4"}.get(elem_bytes, "|u1")
    if name in ("Bitcomp", "Cascaded"):
        return [{"data_type": int_type}, {}]
    if name == "ANS" and elem_bytes == 4:
        return [{}, {"data_type": "<f4"}]
    return [{}]


def run_dataset(gpu: Gpu, nvcomp, meta: dict, data_dir: Path, args, rng) -> list[dict]:
    cp = gpu.cp
    name, R = meta["name"], int(meta["row_bytes"])
    elem = np.dtype(meta["npy_dtype"]).itemsize
    sub = np.load(data_dir / meta["file"])
    sub_bytes = np.ascontiguousarray(sub).view(np.uint8).reshape(-1)
    rows = max(1, (args.tile_mib * 1024 * 1024) // R)
    T = rows * R
    h_raw, h_raw_ptr = gpu.pinned(T)
    reps_needed = math.ceil(T / sub_bytes.size)
    h_raw[:] = np.tile(sub_bytes, reps_needed)[:T]
    h_raw2d = h_raw.reshape(rows, R)
    d_raw = cp.asarray(h_raw)
    cp.cuda.Device().synchronize()
    base = {"dataset": name, "row_bytes": R, "subset_rows": int(sub.shape[0]), "subset": meta.get("subset", ""),
            "tile_rows": rows, "tile_bytes": T}
    out: list[dict] = []

    def rec(**kw):
        r = dict(base)
        r.update(kw)
        out.append(r)
        keys = ("method", "mode", "batch_rows", "gbps", "saved_pct", "error")
        print("  " + ", ".join(f"{k}={r[k]:.3f}" if isinstance(r.get(k), float) else f"{k}={r.get(k)}"
                               for k in keys if k in r), flush=True)

    # --- references (uncompressed) ---
    d_tmp = cp.empty(T, dtype=cp.uint8)
    ev, wall = gpu.time_events(lambda: gpu.h2d(d_tmp.data.ptr, h_raw_ptr, T), args.reps)
    rec(method="raw pinned cudaMemcpy", mode="whole", batch_rows=rows, seconds=statistics.median(ev),
        gbps=gbps(T, statistics.median(ev)), wall_gbps=gbps(T, statistics.median(wall)), saved_pct=0.0)
    del d_tmp

    batch_sets = {}
    for B in BATCHES:
        if B * R > T:
            rec(method="(all)", mode="random", batch_rows=B, error=f"skipped: batch of {B * R} B exceeds tile")
            continue
        batch_sets[B] = [np.sort(rng.integers(0, rows, B)) if args.sorted_batches else rng.integers(0, rows, B)
                         for _ in range(args.reps + 2)]
        d_out = cp.empty((B, R), dtype=cp.uint8)
        ref_rows = d_raw.reshape(rows, R)

        # zero-copy gather of raw rows from pinned host memory
        def prep_zc(i, B=B):
            return cp.asarray(batch_sets[B][i].astype(np.int64) * R)

        def run_zc(off, B=B, d_out=d_out):
            gpu.gather_rows(h_raw_ptr, off, d_out, R, B)

        ev, wall = gpu.time_events(run_zc, args.reps, prep=prep_zc)
        ok = bool(cp.array_equal(d_out, ref_rows[cp.asarray(batch_sets[B][args.reps + 1])]))
        rec(method="raw zero-copy gather", mode="random", batch_rows=B, seconds=statistics.median(ev),
            gbps=gbps(B * R, statistics.median(ev)), wall_gbps=gbps(B * R, statistics.median(wall)),
            saved_pct=0.0, verified=ok)

        # CPU gather into pinned staging, then one cudaMemcpyAsync (wall clock: the CPU work is the cost)
        h_stage, h_stage_ptr = gpu.pinned(B * R)
        h_stage2d = h_stage.reshape(B, R)
        walls = []
        for i in range(args.reps + 2):
            idx = batch_sets[B][i]
            gpu.stream.synchronize()
            t0 = time.perf_counter()
            np.take(h_raw2d, idx, axis=0, out=h_stage2d)
            gpu.h2d(d_out.data.ptr, h_stage_ptr, B * R)
            gpu.stream.synchronize()
            if i >= 2:
                walls.append(time.perf_counter() - t0)
        ok = bool(cp.array_equal(d_out, ref_rows[cp.asarray(batch_sets[B][args.reps + 1])]))
        rec(method="CPU gather + cudaMemcpy", mode="random", batch_rows=B, seconds=statistics.median(walls),
            gbps=gbps(B * R, statistics.median(walls)), saved_pct=0.0, verified=ok,
            note="1 CPU thread (numpy take), wall clock")
        del d_out

    # --- nvCOMP codecs ---
    nchunks = math.ceil(T / CHUNK)
    chunk_off = [c * CHUNK for c in range(nchunks)]
    chunk_len = [min(CHUNK, T - c * CHUNK) for c in range(nchunks)]
    for codec_name in CODECS:
        if time.monotonic() > args.deadline:
            rec(method=f"nvCOMP {codec_name}", mode="whole", error="skipped: time budget")
            continue
        try:
            out.extend(run_codec(gpu, nvcomp, codec_name, elem, d_raw, h_raw_ptr, T, R, rows,
                                 chunk_off, chunk_len, batch_sets, args, base, rec))
        except Exception as e:  # keep going: one codec's failure must not lose the others
            traceback.print_exc()
            rec(method=f"nvCOMP {codec_name}", mode="whole", error=f"{type(e).__name__}: {e}"[:300])
        cp.get_default_memory_pool().free_all_blocks()
    gpu._keep.clear()  # pinned buffers die with their last numpy view
    return out


def run_codec(gpu, nvcomp, codec_name, elem, d_raw, h_raw_ptr, T, R, rows, chunk_off, chunk_len,
              batch_sets, args, base, rec) -> list[dict]:
    cp = gpu.cp
    sp = gpu.stream.ptr
    nchunks = len(chunk_off)
    last_err = None
    for opts in codec_options(codec_name, elem):
        try:
            codec = nvcomp.Codec(algorithm=codec_name, uncomp_chunk_size=CHUNK, cuda_stream=sp,
                                 bitstream_kind=nvcomp.BitstreamKind.RAW, **opts)
            t0 = time.perf_counter()
            comp = codec.encode(nvcomp.as_arrays(d_raw, chunk_off, chunk_len, sp))
            sizes = [int(s) for s in comp.buffer_sizes]
            enc_s = time.perf_counter() - t0
            break
        except Exception as e:
            last_err = e
            print(f"  {codec_name} {opts}: {type(e).__name__}: {e}", flush=True)
    else:
        raise RuntimeError(f"no option set worked: {last_err}")
    opt_desc = ",".join(f"{k}={v}" for k, v in opts.items()) or "default"

    # Pack compressed chunks back to back, PACK_ALIGN-aligned, on the device, then to pinned host.
    pack_off, pos = [], 0
    for s in sizes:
        pack_off.append(pos)
        pos += (s + PACK_ALIGN - 1) // PACK_ALIGN * PACK_ALIGN
    packed_len = pos
    d_packed = cp.zeros(packed_len, dtype=cp.uint8)
    for c in range(nchunks):
        d_packed[pack_off[c]:pack_off[c] + sizes[c]] = cp.asarray(comp[c]).view(cp.uint8).reshape(-1)
    gpu.stream.synchronize()
    h_comp, h_comp_ptr = gpu.pinned(packed_len)
    d_packed.get(out=h_comp)
    gpu.stream.synchronize()
    del comp
    comp_total = sum(sizes)
    saved_pct = 100.0 * (1.0 - comp_total / T)
    saved_pack_pct = 100.0 * (1.0 - packed_len / T)

    d_stage = cp.empty(packed_len, dtype=cp.uint8)
    d_dec = cp.zeros(T, dtype=cp.uint8)

    def make_cfg(lens):
        try:
            return codec.decompression_config(codec.compression_config(list(lens)))
        except Exception as e:
            print(f"  {codec_name}: no sync-free config ({type(e).__name__}: {e}); decode will configure itself")
            return None

    # whole tile: one copy of every compressed byte + batched decode of all chunks
    in_all = nvcomp.as_arrays(d_stage, pack_off, sizes, sp)
    out_all = nvcomp.as_arrays(d_dec, chunk_off, chunk_len, sp)
    cfg_all = make_cfg(chunk_len)

    def decode(src, dst, cfg):
        if cfg is not None:
            codec.decode(src, out=dst, decompression_config=cfg)
        else:
            codec.decode(src, out=dst)

    def run_whole():
        gpu.h2d(d_stage.data.ptr, h_comp_ptr, packed_len)
        decode(in_all, out_all, cfg_all)

    # first run checks the config path; fall back to self-configuring decode if it fails
    try:
        run_whole()
        gpu.stream.synchronize()
        ok = bool(cp.array_equal(d_dec, d_raw))
    except Exception as e:
        print(f"  {codec_name}: decode with config failed ({type(e).__name__}: {e}); retrying without")
        ok = False
    if not ok and cfg_all is not None:
        cfg_all = None
        d_dec.fill(0)
        run_whole()
        gpu.stream.synchronize()
        ok = bool(cp.array_equal(d_dec, d_raw))
    ev, wall = gpu.time_events(run_whole, args.reps)
    method = f"nvCOMP {codec_name}"
    common = {"codec_options": opt_desc, "saved_pct": saved_pct, "saved_packed_pct": saved_pack_pct,
              "compressed_bytes": comp_total, "gpu_encode_gbps": gbps(T, enc_s)}
    rec(method=method, mode="whole", batch_rows=rows, seconds=statistics.median(ev),
        gbps=gbps(T, statistics.median(ev)), wall_gbps=gbps(T, statistics.median(wall)),
        verified=ok, sync_free=cfg_all is not None, **common)

    # decode alone (compressed bytes already on the device), for the split of the cost
    def run_dec_only():
        decode(in_all, out_all, cfg_all)

    ev, _ = gpu.time_events(run_dec_only, args.reps)
    rec(method=method, mode="whole, decode only (data on GPU)", batch_rows=rows,
        seconds=statistics.median(ev), gbps=gbps(T, statistics.median(ev)), **common)

    # random batches: fetch touched chunks zero-copy, decode them, gather rows
    pack_off_np = np.asarray(pack_off, dtype=np.int64)
    sizes_np = np.asarray(sizes, dtype=np.int64)
    chunk_len_np = np.asarray(chunk_len, dtype=np.int64)
    for B, sets in batch_sets.items():
        d_rows = cp.empty((B, R), dtype=cp.uint8)
        plan_times = []
        use_cfg = cfg_all is not None

        def prep(i, B=B, sets=sets):
            t0 = time.perf_counter()
            idx = sets[i].astype(np.int64)
            first = (idx * R) // CHUNK
            last = (idx * R + R - 1) // CHUNK
            touched = np.unique(np.concatenate([first, last]))
            n16 = ((sizes_np[touched] + 15) // 16).astype(np.int32)
            # staged compressed chunks keep their packed offsets (the stage is as large as the pack)
            src = pack_off_np[touched]
            st = {
                "touched": touched,
                "src_off": cp.asarray(src),
                "n16": cp.asarray(n16),
                "row_off": cp.asarray(idx * R),
                "in": nvcomp.as_arrays(d_stage, src.tolist(), sizes_np[touched].tolist(), sp),
                "out": nvcomp.as_arrays(d_dec, (touched * CHUNK).tolist(), chunk_len_np[touched].tolist(), sp),
                "cfg": make_cfg(chunk_len_np[touched].tolist()) if use_cfg else None,
            }
            gpu.stream.synchronize()
            plan_times.append(time.perf_counter() - t0)
            return st

        def run_batch(st, B=B, d_rows=d_rows):
            with gpu.stream:
                gpu.fetch((len(st["touched"]),), (256,),
                          (np.uint64(h_comp_ptr), st["src_off"], st["src_off"], st["n16"], d_stage))
            decode(st["in"], st["out"], st["cfg"])
            gpu.gather_rows(d_dec.data.ptr, st["row_off"], d_rows, R, B)

        d_dec.fill(0)
        ev, wall = gpu.time_events(run_batch, args.reps, prep=prep)
        check = cp.asarray(sets[args.reps + 1])
        ok = bool(cp.array_equal(d_rows, d_raw.reshape(rows, R)[check]))
        touched_n = len(np.unique((sets[args.reps + 1].astype(np.int64) * R) // CHUNK))
        rec(method=method, mode="random", batch_rows=B, seconds=statistics.median(ev),
            gbps=gbps(B * R, statistics.median(ev)), wall_gbps=gbps(B * R, statistics.median(wall)),
            verified=ok, chunks_touched=touched_n, chunks_total=nchunks,
            plan_ms=1e3 * statistics.median(plan_times), **common)
        del d_rows
    return []


def run(args: argparse.Namespace) -> int:
    t_start = time.monotonic()
    args.deadline = t_start + args.budget_s
    data_dir = Path(args.data)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    import cupy as cp
    from nvidia import nvcomp

    gpu = Gpu()
    props = cp.cuda.runtime.getDeviceProperties(0)
    env = {
        "date_utc": now_utc(),
        "gpu": props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"]),
        "driver": cp.cuda.runtime.driverGetVersion(),
        "runtime": cp.cuda.runtime.runtimeGetVersion(),
        "cupy": cp.__version__,
        "nvcomp": getattr(nvcomp, "__version__", "?"),
        "chunk_bytes": CHUNK,
        "tile_mib": args.tile_mib,
        "reps": args.reps,
        "timing": "median of reps after 2 warm-ups; CUDA events on one stream around transfer + decode",
    }
    print(json.dumps(env), flush=True)
    manifest = json.loads((data_dir / "manifest.json").read_text())
    rng = np.random.default_rng(7)
    results: list[dict] = []
    for meta in manifest["datasets"]:
        if args.only and meta["name"] not in args.only:
            continue
        if time.monotonic() > args.deadline:
            results.append({"dataset": meta["name"], "error": "skipped: time budget"})
            continue
        print(f"== {meta['name']} ({meta['rows']} rows x {meta['row_bytes']} B subset)", flush=True)
        try:
            results.extend(run_dataset(gpu, nvcomp, meta, data_dir, args, rng))
        except Exception as e:
            traceback.print_exc()
            results.append({"dataset": meta["name"], "error": f"{type(e).__name__}: {e}"[:300]})
        cp.get_default_memory_pool().free_all_blocks()
        write_results(out_dir, env, results, time.monotonic() - t_start)
    write_results(out_dir, env, results, time.monotonic() - t_start)
    return 0


def write_results(out_dir: Path, env: dict, results: list[dict], elapsed: float) -> None:
    doc = {"env": dict(env, elapsed_s=round(elapsed, 1)), "results": results}
    (out_dir / "nvcomp_results.json").write_text(json.dumps(doc, indent=1) + "\n")
    cols = ["dataset", "method", "mode", "batch_rows", "gbps", "wall_gbps", "saved_pct", "verified",
            "chunks_touched", "chunks_total", "plan_ms", "codec_options", "error"]
    lines = [",".join(cols)]
    for r in results:
        vals = []
        for c in cols:
            v = r.get(c, "")
            if isinstance(v, float):
                v = f"{v:.4g}"
            vals.append(str(v).replace(",", ";"))
        lines.append(",".join(vals))
    (out_dir / "nvcomp_results.csv").write_text("\n".join(lines) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare", help="cut dataset subsets into .devrun/data (no GPU)")
    p.add_argument("--max-mib", type=float, default=2.0)
    p.add_argument("--layout", choices=("spread", "first"), default="spread")
    p.add_argument("--only", nargs="*")
    r = sub.add_parser("run", help="measure on the GPU")
    r.add_argument("--data", default=".devrun/data")
    r.add_argument("--out", default=os.environ.get("OUT", "bench/results"))
    r.add_argument("--tile-mib", type=int, default=64)
    r.add_argument("--reps", type=int, default=10)
    r.add_argument("--budget-s", type=float, default=270.0, help="stop starting new work after this")
    r.add_argument("--sorted-batches", action="store_true", help="sort batch indices (default: caller order)")
    r.add_argument("--only", nargs="*")
    args = ap.parse_args()
    return prepare(args) if args.cmd == "prepare" else run(args)


if __name__ == "__main__":
    sys.exit(main())
