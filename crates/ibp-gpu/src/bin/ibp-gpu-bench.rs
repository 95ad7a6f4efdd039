//! GPU benchmark: random gathers from compressed rows in pinned host memory (zero-copy) and in
//! device memory, against baselines measured in the same run. Prints markdown tables.
//!
//! Usage: ibp-gpu-bench [--target-mib N] [--reps N] [--batches 1024,4096,...] [--data-dir DIR]
//!                      [--only NAME-SUBSTRING|NAME$] [--row-bytes N] [--align-log2 N] [--quick]
//!                      [--no-gathers] [--no-real-data] [--no-synthetic] [--word-width BITS]
//!                      [--chunk-rows N] [--exception-stats]
//!        ibp-gpu-bench --fill-kernel-cache SM
//!
//! `--fill-kernel-cache 90` compiles every kernel module for sm_90 (with `IBP_KERNEL_DEFINES`) into
//! the kernel cache the environment names (`ibp_gpu::kernel_cache`) and exits; it needs NVRTC, no
//! GPU, so device runs can carry cubins compiled beforehand instead of spending their time on NVRTC.
//! `--no-gathers` measures only the whole-entry decode from device memory (and its D2D copy);
//! `--no-real-data` / `--no-synthetic` keep only the synthetic / real datasets; `--align-log2`
//! keeps one alignment; `--word-width` makes the encoder use that word width (8/16/32/64) instead of
//! the analysis' choice; `--chunk-rows` encodes chunks of N rows instead of about 8 MiB each (many
//! small chunks: gathers that look up rows among thousands of chunks). `--exception-stats` encodes
//! the datasets as the bench does and prints, per dataset, what `ibp_gather_sparse` decodes per row
//! (marked positions, words that do not participate, exceptions, passes), counted on the CPU with
//! no GPU (`bench_exceptions`).
//!
//! Datasets named `NAME+gpu` are encoded with `EncodeOptions::for_gpu()` (A = 16, chunks stored raw
//! where coding does not make records cheaper to read; `ibp compress --gpu`), the others with the
//! default analysis at the alignment shown. Rows named `NAME@relaid` are the default-encoded file
//! loaded with `ChunkForm::FOR_GPU_READS` (chunks no cheaper to read coded kept raw by the loader),
//! gathered in the same interleaved timing as `NAME`; they appear where the loader re-lays a chunk.
//!
//! Throughput is always uncompressed bytes delivered per second (rows * row_bytes / time).
//! - `IBP zc`: IBP gather, compressed payload in pinned host memory, decoded by the kernel (zero-copy).
//! - `raw zc`: uncompressed rows in pinned host memory, same rows gathered by a 16-byte-load kernel.
//! - `CPU+memcpy`: CPU threads gather uncompressed rows into a pinned buffer, then one H2D copy.
//! - `ideal`: only the compressed records moved with the same access pattern (a zero-copy copy
//!   kernel over the records, no decode), reported in uncompressed bytes/s.
//! - `IBP dev`: IBP gather with the compressed payload in device memory; `D2D`: a device-to-device
//!   copy of the output size.
//!
//! Diagnostic runs: `IBP_BENCH_UNCHECKED=1` skips the output checks (for diagnostic kernel builds);
//! `IBP_BENCH_TIMELINE=1` with the kernels built with `-DIBP_GATHER_TIMELINE=1` (and
//! `IBP_BENCH_UNCHECKED=1`) adds a `timeline batch N` line per batch: when, within one launch, the
//! IBP gather's warps start, finish their lookups, have their record staged and finish its decode,
//! beside the ideal copy's start, span load and copy (`bench_timeline`).

mod bench_common;
mod bench_exceptions;
mod bench_timeline;

use bench_common::{median, npy_datasets, RepeatedChunks, Usage};
use cudarc::driver::{sys, CudaSlice, CudaStream};
use ibp_codec::EncodeOptions;
use ibp_gpu::baselines::{copy_records, raw_gather, Source};
use ibp_gpu::testdata::{float_rows, sparse_rows, Rng};
use ibp_gpu::{
    ChunkForm, GpuDevice, GpuEntry, HostEntry, LeanShape, PayloadHome, PendingDecode, PinnedBuffer, TileKernel,
};
use std::sync::Arc;
use std::time::Instant;

struct Args {
    target_mib: usize,
    reps: usize,
    batches: Vec<usize>,
    data_dir: Option<String>,
    only: Option<String>,
    row_bytes: Option<usize>,
    align_log2: Option<u8>,
    word_width: Option<ibp_format::WordWidth>,
    chunk_rows: Option<usize>,
    quick: bool,
    no_gathers: bool,
    no_real_data: bool,
    no_synthetic: bool,
    exception_stats: bool,
}

/// The usage text (the module doc's first lines).
const USAGE: Usage = Usage {
    name: "ibp-gpu-bench",
    text: "usage: ibp-gpu-bench [--target-mib N] [--reps N] [--batches 1024,4096,...] [--data-dir DIR]
                     [--only NAME-SUBSTRING|NAME$] [--row-bytes N] [--align-log2 N] [--quick]
                     [--no-gathers] [--no-real-data] [--no-synthetic] [--word-width 8|16|32|64]
                     [--chunk-rows N] [--exception-stats]
       ibp-gpu-bench --fill-kernel-cache SM",
};

/// `--fill-kernel-cache SM`: every kernel module compiled for `sm_SM` into the environment's kernel
/// cache (see the module docs).
fn fill_kernel_cache(sm: &str) {
    let sm: i32 = USAGE.parsed("--fill-kernel-cache", sm);
    let Some(dir) = ibp_gpu::kernel_cache::cache_dir_from_env() else {
        USAGE.error("--fill-kernel-cache: no kernel cache directory (set IBP_KERNEL_CACHE)");
    };
    for module in &ibp_gpu::kernels::ALL_MODULES {
        let started = Instant::now();
        match ibp_gpu::kernels::compile_cached(module, sm / 10, sm % 10, Some(&dir)) {
            Ok((_, hit)) => println!(
                "{} sm_{sm}: {} in {:.1} s ({})",
                module.file,
                if hit { "already cached" } else { "compiled" },
                started.elapsed().as_secs_f64(),
                dir.display()
            ),
            Err(e) => {
                eprintln!("ibp-gpu-bench: {e}");
                std::process::exit(1);
            }
        }
    }
}

fn parse_args() -> Args {
    let mut a = Args {
        target_mib: 512,
        reps: 15,
        batches: vec![1024, 4096, 16384, 65536],
        data_dir: None,
        only: None,
        row_bytes: None,
        align_log2: None,
        word_width: None,
        chunk_rows: None,
        quick: false,
        no_gathers: false,
        no_real_data: false,
        no_synthetic: false,
        exception_stats: false,
    };
    USAGE.for_each_flag(|flag, val| {
        match flag {
            "--target-mib" => a.target_mib = USAGE.parsed(flag, &val()),
            "--reps" => a.reps = USAGE.parsed(flag, &val()),
            "--batches" => a.batches = val().split(',').map(|s| USAGE.parsed(flag, s)).collect(),
            "--data-dir" => a.data_dir = Some(val()),
            "--only" => a.only = Some(val()),
            "--row-bytes" => a.row_bytes = Some(USAGE.parsed(flag, &val())),
            "--align-log2" => a.align_log2 = Some(USAGE.parsed(flag, &val())),
            "--word-width" => {
                let bits: u32 = USAGE.parsed(flag, &val());
                a.word_width = Some(
                    ibp_format::WordWidth::from_bits(bits)
                        .unwrap_or_else(|_| USAGE.error("--word-width must be 8, 16, 32 or 64")),
                );
            }
            "--chunk-rows" => a.chunk_rows = Some(USAGE.parsed(flag, &val())),
            "--quick" => a.quick = true,
            "--no-gathers" => a.no_gathers = true,
            "--no-real-data" => a.no_real_data = true,
            "--no-synthetic" => a.no_synthetic = true,
            "--exception-stats" => a.exception_stats = true,
            _ => return false,
        }
        true
    });
    if a.reps == 0 || a.target_mib == 0 || a.batches.contains(&0) || a.chunk_rows == Some(0) {
        USAGE.error("--reps, --target-mib, --chunk-rows and every batch must be at least 1");
    }
    if a.quick {
        a.target_mib = a.target_mib.min(64);
        a.reps = a.reps.min(5);
        a.batches = vec![4096];
    }
    a
}

struct Dataset {
    name: String,
    row_bytes: usize,
    base: Vec<u8>,
    align_log2: u8,
    /// Encoded with `EncodeOptions::for_gpu()` (the name ends in `+gpu`).
    gpu: bool,
}

impl Dataset {
    fn new(name: &str, row_bytes: usize, base: Vec<u8>, align_log2: u8) -> Dataset {
        Dataset {
            name: name.into(),
            row_bytes,
            base,
            align_log2,
            gpu: false,
        }
    }

    /// The same rows encoded with the GPU options.
    fn for_gpu(&self) -> Dataset {
        Dataset {
            name: format!("{}+gpu", self.name),
            row_bytes: self.row_bytes,
            base: self.base.clone(),
            align_log2: EncodeOptions::for_gpu().align_log2,
            gpu: true,
        }
    }
}

/// The options a dataset is encoded with: its preset (`+gpu` or default) at its alignment, the
/// analysis on 5 % of the rows, `--word-width`, and `IBP_BENCH_FEWER_RUNS` where given.
fn encode_options(ds: &Dataset, args: &Args, fewer_runs: Option<Option<f64>>) -> EncodeOptions {
    let preset = if ds.gpu {
        EncodeOptions::for_gpu()
    } else {
        EncodeOptions::default()
    };
    EncodeOptions {
        align_log2: ds.align_log2,
        sample_fraction: Some(0.05),
        word_width: args.word_width,
        fewer_runs_within: fewer_runs.unwrap_or(preset.fewer_runs_within),
        ..preset
    }
}

/// Rows per chunk for rows of `row_bytes`: `--chunk-rows`, else about 8 MiB of rows (at most 2^20).
fn chunk_rows(args: &Args, row_bytes: usize) -> usize {
    args.chunk_rows
        .unwrap_or(((8usize << 20) / row_bytes).clamp(1, 1 << 20))
        .min(1 << 20)
}

/// `--exception-stats`: each dataset encoded as the timed runs encode it (its base block, without
/// the repeats), and the exceptions `ibp_gather_sparse` decodes per row counted on the CPU.
fn print_exception_stats(args: &Args) {
    println!("What ibp_gather_sparse decodes per row, counted on the CPU (bench_exceptions)\n");
    println!("{}", bench_exceptions::TABLE_HEADER);
    let mut dense = Vec::new();
    for ds in datasets(args) {
        let opts = encode_options(&ds, args, None);
        let rows = chunk_rows(args, ds.row_bytes);
        let chunks = RepeatedChunks::encode(&ds.base, ds.row_bytes, &opts, rows, 0);
        let mut stats = bench_exceptions::ExceptionStats::default();
        let mut at = 0;
        for meta in &chunks.metas {
            let len = meta.row_count as usize * ds.row_bytes;
            stats.add_chunk(meta, &ds.base[at..at + len]);
            at += len;
        }
        let name = format!("{} {} B A={}", ds.name, ds.row_bytes, 1u32 << ds.align_log2);
        if stats.sparse_rows == 0 {
            dense.push(name);
        } else {
            println!("{}", stats.table_row(&name));
        }
    }
    println!("\nNo chunk the loader gives a sparse table: {}", dense.join(", "));
}

fn datasets(args: &Args) -> Vec<Dataset> {
    let mut rng = Rng::new(42);
    let base_bytes = if args.quick { 8 << 20 } else { 32 << 20 };
    let mut out = Vec::new();
    for rb in [256usize, 1024, 4096] {
        let rows = base_bytes / rb;
        let dense = float_rows(&mut rng, rows, rb, 0.02, 4);
        let q4 = Dataset::new("f32-normal-q4", rb, dense, 4);
        let q4_others = [0u8, 7].map(|a| Dataset::new("f32-normal-q4", rb, q4.base.clone(), a));
        let normal = Dataset::new("f32-normal", rb, float_rows(&mut rng, rows, rb, 0.02, 0), 4);
        let gpu = (rb == 256).then(|| [q4.for_gpu(), normal.for_gpu()]); // small rows that save little
        out.push(q4);
        out.extend(q4_others);
        out.extend(gpu.into_iter().flatten());
        out.push(normal);
        out.push(Dataset::new(
            "f32-sparse-5%",
            rb,
            sparse_rows(&mut rng, rows, rb, 0.05),
            4,
        ));
    }
    if args.no_synthetic {
        out.clear();
    }
    let dir = args.data_dir.clone().unwrap_or_else(|| "bench/data/gpu-pack".into());
    if args.no_real_data {
        println!("real datasets skipped (--no-real-data)");
    } else {
        for npy in npy_datasets(&dir, base_bytes) {
            let base = Dataset::new(&npy.name, npy.row_bytes, npy.rows, 4);
            out.push(base.for_gpu());
            out.push(Dataset::new(&npy.name, npy.row_bytes, base.base.clone(), 0));
            out.push(base);
        }
    }
    if let Some(only) = &args.only {
        // A trailing `$` asks for the whole name ("f32-normal$" but not "f32-normal-q4").
        match only.strip_suffix('$') {
            Some(name) => out.retain(|d| d.name == name),
            None => out.retain(|d| d.name.contains(only.as_str())),
        }
    }
    if let Some(rb) = args.row_bytes {
        out.retain(|d| d.row_bytes == rb);
    }
    if let Some(a) = args.align_log2 {
        out.retain(|d| d.align_log2 == a);
    }
    out
}

/// Median seconds of `reps` runs of `f` (after 3 warm-ups), timed with events on `stream`.
fn time_gpu<'a>(stream: &Arc<CudaStream>, reps: usize, f: impl FnMut() -> Option<PendingDecode<'a>>) -> f64 {
    time_launch(stream, reps, None, f).gpu
}

/// Medians of a launch timed `reps` times: `gpu`, seconds between events recorded before and after
/// the call (host-side cost of the call included when the stream was idle), and `host`, seconds
/// the call took on the host.
struct LaunchTime {
    gpu: f64,
    host: f64,
}

/// Times `f` like [`time_gpu`]; with `spin = Some((device, ns))` each run first enqueues `ns`
/// nanoseconds of GPU work, so the call's host-side cost overlaps it and the events time the GPU's
/// part alone (what a caller sees when it enqueues batches ahead).
fn time_launch<'a>(
    stream: &Arc<CudaStream>,
    reps: usize,
    spin: Option<(&GpuDevice, u64)>,
    mut f: impl FnMut() -> Option<PendingDecode<'a>>,
) -> LaunchTime {
    time_interleaved(stream, reps, spin, 1, None, |_, _| f()).remove(0)
}

/// What runs, untimed, before each timed launch of [`time_interleaved`]: `flush` (a write over more
/// device memory than the L2 holds), then the same method on other rows (`f(m, true)`). Every
/// launch then starts in the state a stream of gathers leaves it in (that method's metadata in the
/// L2 and its buffer's translations warm, as after the previous batch) and none reads rows another
/// method (or an earlier repetition) just brought into the L2 or the TLBs: methods reading the same
/// buffer would otherwise favour the one that follows the other in the rotation (bench/GPU_NOTES.md
/// entry 46; flushing after the untimed launch instead also evicts the metadata, which a loop of
/// gathers keeps in the L2).
type Prepare<'f> = &'f mut dyn FnMut();

/// Times `methods` launches side by side: each repetition runs every method once (`f(m)` for `m` in
/// `0..methods`), in an order that rotates from one repetition to the next, so that a drift of the
/// link or the clocks during the measurement reaches every method alike and a ratio of two medians
/// compares launches made under the same conditions. With `prepare` (see [`Prepare`]) each timed
/// launch follows an L2 flush and its own untimed run on other rows. 3 warm-up repetitions;
/// medians of `reps`.
fn time_interleaved<'a>(
    stream: &Arc<CudaStream>,
    reps: usize,
    spin: Option<(&GpuDevice, u64)>,
    methods: usize,
    mut prepare: Option<Prepare<'_>>,
    mut f: impl FnMut(usize, bool) -> Option<PendingDecode<'a>>,
) -> Vec<LaunchTime> {
    let ctx = stream.context();
    let mut gpu = vec![Vec::with_capacity(reps); methods];
    let mut host = vec![Vec::with_capacity(reps); methods];
    for i in 0..reps + 3 {
        for step in 0..methods {
            let m = (i + step) % methods;
            let start = ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT)).unwrap();
            let end = ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT)).unwrap();
            if let Some(flush) = prepare.as_mut() {
                flush();
                if let Some(p) = f(m, true) {
                    p.wait().expect("decode failed during the benchmark");
                }
                stream.synchronize().unwrap();
            }
            if let Some((dev, ns)) = spin {
                ibp_gpu::baselines::spin(dev, stream, ns).unwrap();
            }
            start.record(stream).unwrap();
            let t = Instant::now();
            let pending = f(m, false);
            let h = t.elapsed().as_secs_f64();
            end.record(stream).unwrap();
            end.synchronize().unwrap();
            if let Some(p) = pending {
                p.wait().expect("decode failed during the benchmark");
            }
            if i >= 3 {
                gpu[m].push(start.elapsed_ms(&end).unwrap() as f64 / 1e3);
                host[m].push(h);
            }
        }
    }
    gpu.into_iter()
        .zip(host)
        .map(|(g, h)| LaunchTime {
            gpu: median(g),
            host: median(h),
        })
        .collect()
}

/// Median seconds of `reps` whole-entry decodes of `entry` into `all`, then the output's first
/// rows checked against `base` (`what` names the decode in the failure).
fn timed_checked_decode(
    stream: &Arc<CudaStream>,
    reps: usize,
    entry: &GpuEntry,
    all: &mut CudaSlice<u8>,
    base: &[u8],
    what: &str,
) -> f64 {
    let t = time_gpu(stream, reps, || Some(entry.decode_all(all, stream).unwrap()));
    let got = stream.clone_dtoh(&all.slice(..base.len().min(all.len()))).unwrap();
    check_decoded(&got, &base[..got.len()], what);
    t
}

/// Whether `IBP_BENCH_UNCHECKED=1` asks for a run without output checks: for diagnostic kernel
/// builds (`-DIBP_LONG_DIAG=N`, kernels/ibp_gather/short_rows.cuh; `-DIBP_GATHER_DIAG=N`,
/// kernels/ibp_gather/copies.cuh) that time parts of a kernel and never decode correctly. The
/// bench then says so in its log.
fn unchecked_run() -> bool {
    std::env::var("IBP_BENCH_UNCHECKED").is_ok_and(|v| v == "1")
}

/// Panics naming `what` unless the decoded bytes `got` equal `want`, or the run is unchecked
/// ([`unchecked_run`]).
fn check_decoded(got: &[u8], want: &[u8], what: &str) {
    if !unchecked_run() {
        assert_eq!(got, want, "{what} differs");
    }
}

/// What the "raw zc" column times instead of the raw gather in an A/B run: the IBP gather without
/// its flat row index (IBP_BENCH_AB_SPANS=1) or without its sparse tables (IBP_BENCH_AB_SPARSE=1).
#[derive(Clone, Copy, PartialEq, Debug)]
enum AbColumn {
    Spans,
    Sparse,
}

/// `entry`'s gather of `rows` without what `ab` names, which is back on after (the sparse A/B turns
/// sparse gathers on for every entry at load, so "back on" is each entry's state there).
fn gather_ab<'a>(
    entry: &'a GpuEntry,
    rows: &CudaSlice<u64>,
    out: &mut CudaSlice<u8>,
    stream: &Arc<CudaStream>,
    ab: AbColumn,
) -> PendingDecode<'a> {
    let set = |on| match ab {
        AbColumn::Spans => entry.set_row_spans(on),
        AbColumn::Sparse => entry.set_sparse_rows(on),
    };
    set(false);
    let pending = entry.gather_device_rows(rows, out, stream).unwrap();
    set(true);
    pending
}

fn gbps(bytes: usize, secs: f64) -> f64 {
    bytes as f64 / secs / 1e9
}

/// CPU gather of `rows` from `src` into `staging`, then one H2D copy into `out`; median wall seconds.
fn time_cpu_gather(
    stream: &Arc<CudaStream>,
    reps: usize,
    src: &[u8],
    rb: usize,
    rows: &[u64],
    staging: &mut PinnedBuffer,
    out: &mut CudaSlice<u8>,
) -> f64 {
    let n = rows.len() * rb;
    let threads = if n >= 4 << 20 { 8 } else { 1 };
    let mut times = Vec::new();
    for i in 0..reps + 3 {
        let t = Instant::now();
        let dst = &mut staging.as_mut_slice()[..n];
        if threads == 1 {
            for (d, &r) in dst.chunks_exact_mut(rb).zip(rows) {
                d.copy_from_slice(&src[r as usize * rb..(r as usize + 1) * rb]);
            }
        } else {
            let per = rows.len().div_ceil(threads);
            std::thread::scope(|s| {
                for (dpart, rpart) in dst.chunks_mut(per * rb).zip(rows.chunks(per)) {
                    s.spawn(move || {
                        for (d, &r) in dpart.chunks_exact_mut(rb).zip(rpart) {
                            d.copy_from_slice(&src[r as usize * rb..(r as usize + 1) * rb]);
                        }
                    });
                }
            });
        }
        let mut view = out.slice_mut(..n);
        stream.memcpy_htod(&staging.as_slice()[..n], &mut view).unwrap();
        stream.synchronize().unwrap();
        if i >= 3 {
            times.push(t.elapsed().as_secs_f64());
        }
    }
    median(times)
}

/// Batches up to this size are also timed with GPU work queued ahead (launch-cost table).
const QUEUED_MAX_BATCH: usize = 4096;
/// GPU time queued ahead of those launches: longer than any launch's host-side calls.
const QUEUE_AHEAD_NS: u64 = 100_000;
/// Those batches are timed this many times `--reps` (each repetition takes tens of microseconds).
const SMALL_BATCH_REPS_FACTOR: usize = 3;

/// Per-call costs of one small gather, IBP zero-copy against the raw zero-copy gather.
struct LaunchRow {
    name: String,
    rb: usize,
    align: u32,
    batch: usize,
    ibp_host_us: f64,
    raw_host_us: f64,
    ibp_us: f64,
    raw_us: f64,
    ibp_queued_us: f64,
    raw_queued_us: f64,
}

#[derive(Clone)]
struct HostRow {
    name: String,
    rb: usize,
    align: u32,
    saved: f64,
    batch: usize,
    ibp: f64,
    raw: f64,
    cpu: f64,
    ideal: f64,
    dev: f64,
    d2d: f64,
}

#[derive(Clone)]
struct WholeRow {
    name: String,
    rb: usize,
    align: u32,
    saved: f64,
    decode: f64,
    d2d: f64,
    /// The general tile kernel's decode where the entry uses the lean one (same run).
    general: Option<f64>,
    /// The lean kernel the entry uses (`None`: the general one).
    kernel: TileKernel,
    /// The same decoder built for rows of any shape, where the entry uses one built for its rows
    /// (the mid-row lean kernel, the pairs kernel; same run).
    any_shape: Option<f64>,
}

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    if argv.len() == 3 && argv[1] == "--fill-kernel-cache" {
        fill_kernel_cache(&argv[2]);
        return;
    }
    let args = parse_args();
    if args.exception_stats {
        print_exception_stats(&args);
        return;
    }
    let opened = std::time::Instant::now();
    let dev = match GpuDevice::new(0) {
        Ok(d) => d,
        Err(e) if e.is_no_gpu() => {
            println!("SKIPPED: {e}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let (maj, min) = dev.compute_capability();
    println!(
        "device 0: {} (sm_{maj}{min}, {} SMs), {} device(s); opened with its kernels in {:.1} s (kernel cache: {})",
        dev.name(),
        dev.sm_count(),
        ibp_gpu::device_count().unwrap(),
        opened.elapsed().as_secs_f64(),
        ibp_gpu::kernel_cache::cache_dir_from_env().map_or("off".into(), |d| d.display().to_string())
    );
    for (k, regs, local, smem) in dev.kernel_attributes() {
        println!("kernel {k}: {regs} registers, {local} B local memory, {smem} B static shared");
    }
    let stream = dev.new_stream().unwrap();
    // Host gathers: each timed launch follows a write over 128 MiB of device memory (2.5x the
    // H200's L2) and an untimed launch of the same method on other rows, see `Prepare`;
    // IBP_BENCH_WARM=0 times them back to back as before (entry 46's A/B).
    let prepare_launches = std::env::var("IBP_BENCH_WARM").map_or(true, |v| v != "0");
    let raw_first = std::env::var("IBP_BENCH_RAW_FIRST").is_ok_and(|v| v == "1");
    // An entry with a re-laid form is timed as two rotations of three methods (IBP, raw, ideal; then
    // re-laid IBP, raw, re-laid ideal), each ratio from its own rotation: one rotation of five
    // slowed the two methods that follow the coded file's at 4K-row batches (GPU_NOTES entry 49).
    // IBP_BENCH_GROUPS=0 keeps the rotation of five.
    let split_groups = std::env::var("IBP_BENCH_GROUPS").map_or(true, |v| v != "0");
    // IBP_BENCH_AB_SPANS=1: the "raw zc" column times the IBP gather without its flat row index
    // (GpuEntry::set_row_spans), interleaved with the one with it (GPU_NOTES entry 50; run it with
    // IBP_GATHER_SPANS=1 so that every entry has one).
    // IBP_BENCH_AB_SPARSE=1: the IBP column with sparse gathers on, the "raw zc" column the same
    // gather with them off (GpuEntry::set_sparse_rows: entries with sparse tables go through
    // ibp_gather_sparse or ibp_gather / ibp_gather_split; GPU_NOTES entry 88).
    let ab_column = if std::env::var("IBP_BENCH_AB_SPARSE").is_ok_and(|v| v == "1") {
        Some(AbColumn::Sparse)
    } else if std::env::var("IBP_BENCH_AB_SPANS").is_ok_and(|v| v == "1") {
        Some(AbColumn::Spans)
    } else {
        None
    };
    // IBP_BENCH_FEWER_RUNS=X (a fraction, or off): every dataset encoded with
    // `EncodeOptions::fewer_runs_within` X (A/B of positions merged to at most two or three runs of
    // free bits; off: the smallest masks).
    let fewer_runs: Option<Option<f64>> = std::env::var("IBP_BENCH_FEWER_RUNS").ok().and_then(|v| match v.trim() {
        "off" => Some(None),
        x => x.parse::<f64>().ok().map(Some),
    });
    if let Some(x) = fewer_runs {
        println!("A/B: every dataset encoded with fewer_runs_within {x:?} (IBP_BENCH_FEWER_RUNS)");
    }
    let checked = !unchecked_run();
    if !checked {
        println!("IBP_BENCH_UNCHECKED=1: decodes and gathers are timed but NOT checked (diagnostic kernel builds)");
    }
    let mut l2_flush: CudaSlice<u8> = stream.alloc_zeros(128 << 20).unwrap();
    println!(
        "host gathers timed {}",
        if prepare_launches {
            "each after an L2 flush and its own untimed launch on other rows"
        } else {
            "back to back (IBP_BENCH_WARM=0)"
        }
    );
    if raw_first {
        println!("raw rows' pinned buffer allocated before the entry's payload (IBP_BENCH_RAW_FIRST=1)");
    }
    if !split_groups {
        println!("re-laid entries timed in one rotation of five methods with the file as stored (IBP_BENCH_GROUPS=0)");
    }
    match ab_column {
        Some(AbColumn::Spans) => {
            println!("A/B: the \"raw zc\" column is the IBP zero-copy gather without row spans (IBP_BENCH_AB_SPANS=1)")
        }
        Some(AbColumn::Sparse) => println!(
            "A/B: the \"raw zc\" column is the IBP zero-copy gather without sparse tables (IBP_BENCH_AB_SPARSE=1)"
        ),
        None => {}
    }
    // Link check: one pinned 1 GiB H2D copy.
    {
        let len = if args.quick { 64 << 20 } else { 1 << 30 };
        let pinned = PinnedBuffer::new(dev.context(), len).unwrap();
        let mut d: CudaSlice<u8> = stream.alloc_zeros(len).unwrap();
        let t = time_gpu(&stream, 5, || {
            stream.memcpy_htod(pinned.as_slice(), &mut d).unwrap();
            None
        });
        println!("pinned H2D memcpy of {} MiB: {:.1} GB/s", len >> 20, gbps(len, t));
    }
    let mut host_rows = Vec::new();
    let mut launch_rows: Vec<LaunchRow> = Vec::new();
    let mut whole_rows = Vec::new();
    for ds in datasets(&args) {
        let rb = ds.row_bytes;
        let t0 = Instant::now();
        let opts = encode_options(&ds, &args, fewer_runs);
        let chunk_rows = chunk_rows(&args, rb);
        // Encode the base block once (parts of whole chunks in parallel), then repeat its chunks up
        // to the target size.
        let chunks = RepeatedChunks::encode(&ds.base, rb, &opts, chunk_rows, args.target_mib << 20);
        let (all_metas, all_payloads) = (chunks.all_metas(), chunks.all_payloads());
        let raw_len = chunks.raw_len();
        let total_rows = raw_len / rb;
        let saved = chunks.saved_percent();
        // The raw rows in a pinned buffer of their own, allocated after the entry's payload, or
        // before it with IBP_BENCH_RAW_FIRST=1 (GPU_NOTES idea 9: does a buffer's speed follow the
        // order of allocation?).
        let raw_rows = || {
            let mut raw = PinnedBuffer::new(dev.context(), raw_len).unwrap();
            for c in raw.as_mut_slice().chunks_mut(ds.base.len()) {
                c.copy_from_slice(&ds.base[..c.len()]);
            }
            raw
        };
        let early_raw = raw_first.then(raw_rows);
        // The entry as stored (the `@relaid` rows below are the loader's default form for host memory).
        let host = HostEntry::with_form(&dev, rb as u64, &all_metas, &all_payloads, ChunkForm::AsStored).unwrap();
        let raw = early_raw.unwrap_or_else(raw_rows);
        let ent_h = GpuEntry::from_host(&dev, &host, PayloadHome::HostMapped).unwrap();
        let ent_d = GpuEntry::from_host(&dev, &host, PayloadHome::Device).unwrap();
        if ab_column == Some(AbColumn::Sparse) {
            ent_h.set_sparse_rows(true);
            ent_d.set_sparse_rows(true);
        }
        // The same file loaded with the chunks no cheaper to read coded kept raw (files written for
        // size; `+gpu` files already store those chunks raw).
        let relaid = (!ds.gpu)
            .then(|| {
                HostEntry::with_form(&dev, rb as u64, &all_metas, &all_payloads, ChunkForm::FOR_GPU_READS).unwrap()
            })
            .filter(|h| h.relaid_chunks() > 0)
            .map(|h| {
                let zc = GpuEntry::from_host(&dev, &h, PayloadHome::HostMapped).unwrap();
                let dev_entry = GpuEntry::from_host(&dev, &h, PayloadHome::Device).unwrap();
                if ab_column == Some(AbColumn::Sparse) {
                    zc.set_sparse_rows(true);
                    dev_entry.set_sparse_rows(true);
                }
                let kept = h.layout().chunks.iter().map(|c| c.payload_len).sum::<u64>();
                let saved = 100.0 * (1.0 - kept as f64 / raw_len as f64);
                (h, zc, dev_entry, saved)
            });
        if let Some((h, _, _, saved)) = &relaid {
            println!(
                "loaded with ChunkForm::FOR_GPU_READS: {} of {} chunks re-laid raw, {saved:.1} % saved in host memory",
                h.relaid_chunks(),
                all_metas.len()
            );
        }
        let align = 1u32 << ds.align_log2;
        println!(
            "\n## {} {rb} B rows, A={align}: {total_rows} rows, {} MiB raw, {:.1} % saved, {} chunk(s) of W={:?} (prepared in {:.1} s)",
            ds.name,
            raw_len >> 20,
            saved,
            all_metas.len(),
            chunks.metas.iter().map(|m| m.word_width.bits()).collect::<std::collections::BTreeSet<_>>(),
            t0.elapsed().as_secs_f64()
        );
        let max_batch = *args.batches.iter().max().unwrap();
        let mut out: CudaSlice<u8> = stream.alloc_zeros(max_batch * rb).unwrap();
        // The ideal copy moves the 16-byte vectors covering each record: up to 30 bytes more.
        let stride = (ent_h
            .layout()
            .chunks
            .iter()
            .chain(relaid.iter().flat_map(|r| r.0.layout().chunks.iter()))
            .map(|c| c.raw_padded as usize)
            .max()
            .unwrap()
            + 31)
            & !15;
        let mut out_ideal: CudaSlice<u8> = stream.alloc_zeros(max_batch * stride).unwrap();
        let d2d_src: CudaSlice<u8> = stream.alloc_zeros(max_batch * rb).unwrap();
        let mut staging = PinnedBuffer::new(dev.context(), max_batch * rb).unwrap();
        let mut rng = Rng::new(7);
        // Correctness once per dataset: both homes against the original rows.
        {
            let rows: Vec<u64> = (0..4096.min(total_rows))
                .map(|_| rng.below(total_rows as u64))
                .collect();
            for ent in [&ent_h, &ent_d]
                .into_iter()
                .chain(relaid.iter().flat_map(|r| [&r.1, &r.2]))
            {
                let mut o: CudaSlice<u8> = stream.alloc_zeros(rows.len() * rb).unwrap();
                ent.gather(&rows, &mut o, &stream).unwrap().wait().unwrap();
                let got = stream.clone_dtoh(&o).unwrap();
                if checked {
                    for (k, &r) in rows.iter().enumerate() {
                        assert_eq!(
                            &got[k * rb..(k + 1) * rb],
                            &raw.as_slice()[r as usize * rb..(r as usize + 1) * rb],
                            "{} row {r}: GPU output differs",
                            ds.name
                        );
                    }
                }
            }
        }
        let batches: &[usize] = if args.no_gathers { &[] } else { &args.batches };
        for &batch in batches {
            let rows: Vec<u64> = (0..batch).map(|_| rng.below(total_rows as u64)).collect();
            let rows_d = stream.clone_htod(&rows).unwrap();
            // Other rows of the same batch size, for the untimed run before each timed one.
            let other_rows: Vec<u64> = (0..batch).map(|_| rng.below(total_rows as u64)).collect();
            let other_rows_d = stream.clone_htod(&other_rows).unwrap();
            // Each row's record (offset, length) in a layout's payload buffer, for the "ideal" copy.
            let spans_in = |layout: &ibp_gpu::EntryLayout, rows: &[u64]| {
                let spans: Vec<u64> = rows
                    .iter()
                    .flat_map(|&r| {
                        let (o, l) = layout.record_span(r).unwrap();
                        [o, l]
                    })
                    .collect();
                stream.clone_htod(&spans).unwrap()
            };
            let spans_d = [spans_in(ent_h.layout(), &rows), spans_in(ent_h.layout(), &other_rows)];
            let relaid_spans_d = relaid
                .as_ref()
                .map(|(h, ..)| [spans_in(h.layout(), &rows), spans_in(h.layout(), &other_rows)]);
            let bytes = batch * rb;
            // Small batches take microseconds: more repetitions cost nothing and steady the medians.
            let reps = if batch <= QUEUED_MAX_BATCH {
                args.reps * SMALL_BATCH_REPS_FACTOR
            } else {
                args.reps
            };
            // IBP zero-copy, raw zero-copy and ideal, interleaved (their ratios are the targets), and
            // the re-laid entry's gather and ideal where there is one.
            let mut zc = |m: usize, other: bool| {
                let rows_d = if other { &other_rows_d } else { &rows_d };
                let which = other as usize;
                match m {
                    0 => Some(ent_h.gather_device_rows(rows_d, &mut out, &stream).unwrap()),
                    1 if ab_column.is_some() => Some(gather_ab(&ent_h, rows_d, &mut out, &stream, ab_column.unwrap())),
                    1 => {
                        raw_gather(&dev, Source::Pinned(&raw), rb as u64, rows_d, &mut out, &stream).unwrap();
                        None
                    }
                    5 => Some(gather_ab(
                        &relaid.as_ref().unwrap().1,
                        rows_d,
                        &mut out,
                        &stream,
                        ab_column.unwrap(),
                    )),
                    3 => Some(
                        relaid
                            .as_ref()
                            .unwrap()
                            .1
                            .gather_device_rows(rows_d, &mut out, &stream)
                            .unwrap(),
                    ),
                    _ => {
                        let (pinned, spans) = match (m, &relaid, &relaid_spans_d) {
                            (4, Some((h, ..)), Some(s)) => (h.pinned(), &s[which]),
                            _ => (host.pinned(), &spans_d[which]),
                        };
                        copy_records(
                            &dev,
                            Source::Pinned(pinned),
                            spans,
                            &mut out_ideal,
                            stride as u64,
                            &stream,
                        )
                        .unwrap();
                        None
                    }
                }
            };
            let mut flush = || stream.memset_zeros(&mut l2_flush).unwrap();
            let (times, relaid_raw) = if split_groups && relaid.is_some() {
                let prepare = prepare_launches.then_some(&mut flush as Prepare<'_>);
                let mut times = time_interleaved(&stream, reps, None, 3, prepare, &mut zc);
                let prepare = prepare_launches.then_some(&mut flush as Prepare<'_>);
                let relaid_group = [3, if ab_column.is_some() { 5 } else { 1 }, 4];
                let mut b = time_interleaved(&stream, reps, None, 3, prepare, |m, other| zc(relaid_group[m], other))
                    .into_iter();
                let (ibp_b, raw_b, ideal_b) = (b.next().unwrap(), b.next().unwrap(), b.next().unwrap());
                times.push(ibp_b);
                times.push(ideal_b);
                (times, Some(raw_b.gpu))
            } else {
                let members = if relaid.is_some() { 5 } else { 3 };
                let prepare = prepare_launches.then_some(&mut flush as Prepare<'_>);
                (time_interleaved(&stream, reps, None, members, prepare, &mut zc), None)
            };
            let (ibp_l, raw_l, ideal) = (&times[0], &times[1], times[2].gpu);
            let (ibp, rawt) = (ibp_l.gpu, raw_l.gpu);
            if batch <= QUEUED_MAX_BATCH {
                // The same launches with GPU work queued ahead: the GPU's part alone.
                let spin = Some((dev.as_ref(), QUEUE_AHEAD_NS));
                let prepare = prepare_launches.then_some(&mut flush as Prepare<'_>);
                let queued = time_interleaved(&stream, reps, spin, 2, prepare, &mut zc);
                let (ibp_q, raw_q) = (&queued[0], &queued[1]);
                launch_rows.push(LaunchRow {
                    name: ds.name.clone(),
                    rb,
                    align,
                    batch,
                    ibp_host_us: ibp_l.host * 1e6,
                    raw_host_us: raw_l.host * 1e6,
                    ibp_us: ibp * 1e6,
                    raw_us: rawt * 1e6,
                    ibp_queued_us: ibp_q.gpu * 1e6,
                    raw_queued_us: raw_q.gpu * 1e6,
                });
            }
            if bench_timeline::wanted() {
                // One more IBP gather and ideal copy of these rows, each after an L2 flush and an
                // untimed run on other rows, through the timeline build (bench_timeline).
                for m in [0, 2] {
                    flush();
                    for other in [true, false] {
                        if let Some(p) = zc(m, other) {
                            p.wait().expect("gather failed in the timeline run");
                        }
                        stream.synchronize().unwrap();
                    }
                }
                let ibp_bytes = stream.clone_dtoh(&out.slice(..bytes)).unwrap();
                let ideal_bytes = stream.clone_dtoh(&out_ideal.slice(..batch * stride)).unwrap();
                println!(
                    "{}",
                    bench_timeline::report(batch, &ibp_bytes, rb, &ideal_bytes, stride)
                );
            }
            let cpu = time_cpu_gather(&stream, reps, raw.as_slice(), rb, &rows, &mut staging, &mut out);
            let devt = time_gpu(&stream, reps, || {
                Some(ent_d.gather_device_rows(&rows_d, &mut out, &stream).unwrap())
            });
            let d2d = time_gpu(&stream, reps, || {
                let mut o = out.slice_mut(..bytes);
                stream.memcpy_dtod(&d2d_src.slice(..bytes), &mut o).unwrap();
                None
            });
            let r = HostRow {
                name: ds.name.clone(),
                rb,
                align,
                saved,
                batch,
                ibp: gbps(bytes, ibp),
                raw: gbps(bytes, rawt),
                cpu: gbps(bytes, cpu),
                ideal: gbps(bytes, ideal),
                dev: gbps(bytes, devt),
                d2d: gbps(bytes, d2d),
            };
            println!(
                "batch {batch}: IBP zc {:.1} | raw zc {:.1} | CPU+memcpy {:.1} | ideal {:.1} | IBP dev {:.1} | D2D {:.1} GB/s",
                r.ibp, r.raw, r.cpu, r.ideal, r.dev, r.d2d
            );
            if let Some((_, _, dev_entry, saved)) = &relaid {
                let devt = time_gpu(&stream, reps, || {
                    Some(dev_entry.gather_device_rows(&rows_d, &mut out, &stream).unwrap())
                });
                let row = HostRow {
                    name: format!("{}@relaid", ds.name),
                    saved: *saved,
                    ibp: gbps(bytes, times[3].gpu),
                    raw: relaid_raw.map_or(r.raw, |t| gbps(bytes, t)),
                    ideal: gbps(bytes, times[4].gpu),
                    dev: gbps(bytes, devt),
                    ..r.clone()
                };
                println!(
                    "batch {batch}, re-laid at load: IBP zc {:.1} | raw zc {:.1} | ideal {:.1} | IBP dev {:.1} GB/s",
                    row.ibp, row.raw, row.ideal, row.dev
                );
                host_rows.push(r);
                host_rows.push(row);
            } else {
                host_rows.push(r);
            }
        }
        // Whole entry from device memory vs a D2D copy of the output size.
        {
            drop(out);
            drop(out_ideal);
            let mut all: CudaSlice<u8> = stream.alloc_zeros(raw_len).unwrap();
            let src: CudaSlice<u8> = stream.alloc_zeros(raw_len).unwrap();
            let reps = args.reps.min(7);
            let dec = time_gpu(&stream, reps, || Some(ent_d.decode_all(&mut all, &stream).unwrap()));
            let d2d = time_gpu(&stream, reps, || {
                stream.memcpy_dtod(&src, &mut all).unwrap();
                None
            });
            // (The D2D copy overwrote the output: decode once more to check it.)
            ent_d.decode_all(&mut all, &stream).unwrap().wait().unwrap();
            let got = stream.clone_dtoh(&all.slice(..ds.base.len().min(raw_len))).unwrap();
            check_decoded(&got, &ds.base[..got.len()], &format!("{}: whole-entry decode", ds.name));
            // Another tile kernel on the same entry, checked and timed.
            let mut other = |kernel: TileKernel| {
                ent_d.use_tile_kernel(kernel);
                let what = format!("{}: {kernel:?} tile kernel", ds.name);
                let t = timed_checked_decode(&stream, reps, &ent_d, &mut all, &ds.base, &what);
                ent_d.use_tile_kernel(TileKernel::Auto);
                gbps(raw_len, t)
            };
            // The general tile kernel, where the lean one is in use; the same decoder built for any
            // row shape, where the entry uses one built for its rows.
            let kernel = ent_d.tile_kernel();
            let general = ent_d.uses_lean_tiles().then(|| other(TileKernel::General));
            let any_shape = match kernel {
                TileKernel::Lean(LeanShape::Mid | LeanShape::Short) => Some(other(TileKernel::Lean(LeanShape::Any))),
                // (The long-rows kernel: against the general kernel built for pair tables, where it decodes them.)
                TileKernel::Lean(LeanShape::Long) if TileKernel::GeneralPairs.decodes(ent_d.layout()) => {
                    Some(other(TileKernel::GeneralPairs))
                }
                // (The vector-lanes kernel: against the long-rows kernel, the same vector lanes at 2
                // blocks per SM beside its other row decoders.)
                TileKernel::Lean(LeanShape::Vec) => Some(other(TileKernel::Lean(LeanShape::Long))),
                TileKernel::GeneralPairs => Some(other(TileKernel::General)),
                _ => None,
            };
            let w = WholeRow {
                name: ds.name.clone(),
                rb,
                align,
                saved,
                decode: gbps(raw_len, dec),
                d2d: gbps(raw_len, d2d),
                general,
                kernel,
                any_shape,
            };
            println!(
                "whole entry from device memory: decode {:.0} GB/s, D2D copy {:.0} GB/s",
                w.decode, w.d2d
            );
            if let Ok(Some(p)) = ent_d.tile_plan(0, ent_d.layout().row_count) {
                println!(
                    "whole entry's tiles: {:?} kernel, {} rows ({} B) per tile, {} tiles, {} blocks, {} segment(s) per row",
                    p.kernel, p.tile_rows, p.tile_bytes, p.tiles, p.blocks, p.row_segments
                );
            }
            // The same file loaded with ChunkForm::FOR_GPU_READS, against the same D2D copy.
            let relaid_row = relaid.as_ref().map(|(_, _, dev_entry, saved)| {
                let what = format!("{}@relaid: whole-entry decode", ds.name);
                let t = timed_checked_decode(&stream, reps, dev_entry, &mut all, &ds.base, &what);
                WholeRow {
                    name: format!("{}@relaid", ds.name),
                    saved: *saved,
                    decode: gbps(raw_len, t),
                    general: None,
                    kernel: dev_entry.tile_kernel(),
                    any_shape: None,
                    ..w.clone()
                }
            });
            whole_rows.push(w);
            if let Some(r) = relaid_row {
                println!("re-laid at load: decode {:.0} GB/s", r.decode);
                whole_rows.push(r);
            }
        }
    }
    println!("\n### Random gathers, compressed rows in pinned host memory (GB/s of uncompressed rows)\n");
    println!(
        "| dataset | row B | A | saved % | batch | IBP zc | raw zc | CPU+memcpy | ideal | IBP/ideal | IBP/raw zc |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for r in &host_rows {
        println!(
            "| {} | {} | {} | {:.1} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.2} | {:.2} |",
            r.name,
            r.rb,
            r.align,
            r.saved,
            r.batch,
            r.ibp,
            r.raw,
            r.cpu,
            r.ideal,
            r.ibp / r.ideal,
            r.ibp / r.raw
        );
    }
    println!("\n### Launch cost of small zero-copy gathers (microseconds per call)\n");
    println!("Host = time the call takes on the CPU; events = GPU time between events around the call on an idle stream (the");
    println!("call's host-side cost included, as in the tables above); queued = the same with GPU work enqueued before it.\n");
    println!("| dataset | row B | A | batch | IBP host | raw host | IBP events | raw events | IBP queued | raw queued | queued IBP/raw time |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for r in &launch_rows {
        println!(
            "| {} | {} | {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.2} |",
            r.name,
            r.rb,
            r.align,
            r.batch,
            r.ibp_host_us,
            r.raw_host_us,
            r.ibp_us,
            r.raw_us,
            r.ibp_queued_us,
            r.raw_queued_us,
            r.ibp_queued_us / r.raw_queued_us
        );
    }
    println!("\n### Random gathers, compressed rows in device memory (GB/s of uncompressed rows)\n");
    println!("| dataset | row B | A | batch | IBP dev | D2D copy of output size | IBP dev/D2D |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for r in &host_rows {
        println!(
            "| {} | {} | {} | {} | {:.0} | {:.0} | {:.2} |",
            r.name,
            r.rb,
            r.align,
            r.batch,
            r.dev,
            r.d2d,
            r.dev / r.d2d
        );
    }
    println!("\n### Whole-entry decode from device memory (GB/s of uncompressed rows)\n");
    println!(
        "| dataset | row B | A | saved % | IBP decode | D2D copy of output size | decode/D2D | kernel | general kernel/D2D | any-shape kernel/D2D |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    let ratio = |x: Option<f64>, d2d: f64| x.map_or("-".to_string(), |g| format!("{:.2}", g / d2d));
    for w in &whole_rows {
        let kernel = match w.kernel {
            TileKernel::Lean(LeanShape::Any) => "lean",
            TileKernel::Lean(LeanShape::Mid) => "lean mid",
            TileKernel::Lean(LeanShape::Short) => "lean short",
            TileKernel::Lean(LeanShape::Long) => "lean long",
            TileKernel::Lean(LeanShape::Vec) => "lean vec",
            TileKernel::GeneralPairs => "general pairs",
            TileKernel::General | TileKernel::Auto => "general",
        };
        let (general, any_shape) = (ratio(w.general, w.d2d), ratio(w.any_shape, w.d2d));
        println!(
            "| {} | {} | {} | {:.1} | {:.0} | {:.0} | {:.2} | {kernel} | {general} | {any_shape} |",
            w.name,
            w.rb,
            w.align,
            w.saved,
            w.decode,
            w.d2d,
            w.decode / w.d2d
        );
    }
}
