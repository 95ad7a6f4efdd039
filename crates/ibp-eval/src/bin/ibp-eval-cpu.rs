//! CPU benchmark of issue 7: IBP against zstd, lz4 and no compression on the real datasets of
//! `bench/data`, in one run on the same bytes.
//!
//! `cargo run --release -p ibp-eval --bin ibp-eval-cpu -- bench/data`
#![forbid(unsafe_code)]

use clap::Parser;
use ibp_codec::EncodeOptions;
use ibp_eval::baselines::{Blocks, Codec, Decoder, Stream, BLOCK_BYTES};
use ibp_eval::datasets::{self, Dataset};
use ibp_eval::ibp_runner::{self, PreparedRows, RowAccess};
use ibp_eval::published;
use ibp_eval::report::{self, DatasetResult, MethodResult, Run};
use ibp_eval::timing::{best_of, gbps, pool, SplitMix64};
use rayon::prelude::*;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

#[derive(Parser, Debug)]
#[command(about = "IBP vs zstd / lz4 / no compression on real datasets (space saved, throughput, row access)")]
struct Args {
    /// Folder with manifest.json and the .npy files (tools/datasets.py).
    #[arg(default_value = "bench/data")]
    data_dir: PathBuf,
    /// JSON output (a .csv is written beside it).
    #[arg(long, default_value = "bench/results/cpu.json")]
    out: PathBuf,
    /// Only these datasets (comma-separated names).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// zstd level 19 is measured on this-many MiB of each dataset, in 64 KiB slabs spread evenly
    /// over it (it runs at a few MB/s).
    #[arg(long, default_value_t = 4)]
    zstd19_mib: u64,
    /// Random single-row reads per method.
    #[arg(long, default_value_t = 2000)]
    access_rows: usize,
    /// Each throughput is the fastest of up to --max-reps runs within this many milliseconds.
    #[arg(long, default_value_t = 400)]
    budget_ms: u64,
    /// Most runs per throughput figure.
    #[arg(long, default_value_t = 3)]
    max_reps: usize,
    /// Skip the sampled-analysis IBP variants (1 %, 5 %, 10 %).
    #[arg(long)]
    no_sampled: bool,
    /// Extra IBP variants with this many Mask/Bitval groups per chunk (comma-separated, e.g. 4,16).
    #[arg(long, value_delimiter = ',')]
    groups: Vec<u32>,
}

struct Ctx {
    args: Args,
    pool1: rayon::ThreadPool,
    pool_all: rayon::ThreadPool,
}

impl Ctx {
    fn budget(&self) -> Duration {
        Duration::from_millis(self.args.budget_ms)
    }

    /// Fastest seconds of `f` on one thread and on all cores.
    fn both<T: Send>(&self, f: impl Fn() -> T + Sync) -> (f64, f64, T) {
        let (s1, _) = self.pool1.install(|| best_of(self.budget(), self.args.max_reps, &f));
        let (sa, out) = self.pool_all.install(|| best_of(self.budget(), self.args.max_reps, &f));
        (s1, sa, out)
    }

    fn once_1t<T: Send>(&self, f: impl Fn() -> T + Sync) -> (f64, T) {
        self.pool1.install(|| best_of(self.budget(), self.args.max_reps, &f))
    }
}

fn saved(raw: u64, stored: u64) -> f64 {
    100.0 * (1.0 - stored as f64 / raw as f64)
}

fn random_rows(n: usize, rows: u64, seed: u64) -> Vec<u64> {
    let mut rng = SplitMix64::new(seed);
    (0..n).map(|_| rng.below(rows)).collect()
}

/// Mean microseconds per call of `fetch(row)` over `rows` (one thread); `fetch` checks the row.
fn access_us(rows: &[u64], mut fetch: impl FnMut(u64) -> Result<(), String>) -> Result<f64, String> {
    let t0 = Instant::now();
    for &r in rows {
        fetch(r)?;
    }
    Ok(t0.elapsed().as_secs_f64() * 1e6 / rows.len().max(1) as f64)
}

fn memcpy_rates(ctx: &Ctx, data: &[u8]) -> (f64, f64) {
    let mut dst = vec![0u8; data.len()];
    let (s1, _) = ctx
        .pool1
        .install(|| best_of(ctx.budget(), ctx.args.max_reps, || dst.copy_from_slice(data)));
    let (sa, _) = ctx.pool_all.install(|| {
        best_of(ctx.budget(), ctx.args.max_reps, || {
            dst.par_chunks_mut(1 << 20)
                .zip(data.par_chunks(1 << 20))
                .for_each(|(d, s)| d.copy_from_slice(s))
        })
    });
    let n = data.len() as u64;
    (gbps(n, s1), gbps(n, sa))
}

fn ibp_method(ctx: &Ctx, ds: &Dataset, label: &str, opts: &EncodeOptions, rows: &[u64]) -> MethodResult {
    let raw = ds.data.len() as u64;
    let mut m = MethodResult {
        method: label.to_string(),
        family: "ibp".into(),
        random_access: true,
        measured_bytes: raw,
        ..Default::default()
    };
    let mut run = || -> Result<(), String> {
        let (e1, ea, file) = ctx.both(|| ibp_runner::encode(ds, opts));
        let file = file.map_err(|e| format!("encode: {e}"))?;
        m.stored_bytes = file.len() as u64;
        m.saved_pct = saved(raw, m.stored_bytes);
        m.encode_gbps_1t = Some(gbps(raw, e1));
        m.encode_gbps_all = Some(gbps(raw, ea));
        m.detail = ibp_runner::describe(&file).ok();
        let (d1, da, decoded) = ctx.both(|| ibp_runner::decode_parallel(&file));
        let decoded = decoded.map_err(|e| format!("decode: {e}"))?;
        if decoded != ds.data {
            return Err("decoded bytes differ from the input".into());
        }
        m.decode_gbps_1t = Some(gbps(raw, d1));
        m.decode_gbps_all = Some(gbps(raw, da));
        let mut access = RowAccess::open(&file).map_err(|e| e.to_string())?;
        let rb = ds.entry.row_bytes as usize;
        m.row_access_us = Some(access_us(rows, |r| {
            let got = access.row(r).map_err(|e| e.to_string())?;
            let want = &ds.data[r as usize * rb..(r as usize + 1) * rb];
            if got != want {
                return Err(format!("row {r} differs"));
            }
            Ok(())
        })?);
        let prepared = PreparedRows::open(&file).map_err(|e| e.to_string())?;
        let mut out = vec![0u8; rb];
        m.row_access_prepared_us = Some(access_us(rows, |r| {
            prepared.row_into(r, &mut out).map_err(|e| e.to_string())?;
            if out != ds.data[r as usize * rb..(r as usize + 1) * rb] {
                return Err(format!("row {r} differs (prepared decoders)"));
            }
            Ok(())
        })?);
        Ok(())
    };
    if let Err(e) = run() {
        m.error = Some(e);
    }
    m
}

fn stream_method(ctx: &Ctx, codec: Codec, data: &[u8], subset: bool) -> MethodResult {
    let raw = data.len() as u64;
    let mut m = MethodResult {
        method: codec.name(),
        family: codec.name().split('-').next().unwrap_or("").into(),
        random_access: false,
        measured_bytes: raw,
        subset,
        detail: Some("one stream: single-threaded by nature".into()),
        ..Default::default()
    };
    let (e1, s) = ctx.once_1t(|| Stream::encode(codec, data));
    m.stored_bytes = s.stored_bytes();
    m.saved_pct = saved(raw, m.stored_bytes);
    m.encode_gbps_1t = Some(gbps(raw, e1));
    let (d1, out) = ctx.once_1t(|| s.decode());
    match out {
        Ok(out) if out == data => m.decode_gbps_1t = Some(gbps(raw, d1)),
        Ok(_) => m.error = Some("decoded bytes differ".into()),
        Err(e) => m.error = Some(e),
    }
    m
}

fn blocks_method(ctx: &Ctx, codec: Codec, data: &[u8], row_bytes: usize, rows: &[u64], subset: bool) -> MethodResult {
    let raw = data.len() as u64;
    let mut m = MethodResult {
        method: format!("{} 64 KiB blocks", codec.name()),
        family: codec.name().split('-').next().unwrap_or("").into(),
        random_access: true,
        measured_bytes: raw,
        subset,
        detail: Some(format!(
            "{} independent blocks + 8-byte offset index",
            data.len().div_ceil(BLOCK_BYTES)
        )),
        ..Default::default()
    };
    let (e1, ea, b) = ctx.both(|| Blocks::encode(codec, data));
    m.stored_bytes = b.stored_bytes();
    m.saved_pct = saved(raw, m.stored_bytes);
    m.encode_gbps_1t = Some(gbps(raw, e1));
    m.encode_gbps_all = Some(gbps(raw, ea));
    let mut out = vec![0u8; data.len()];
    let (d1, ok1) = ctx
        .pool1
        .install(|| best_of(ctx.budget(), ctx.args.max_reps, || b.decode_into(&mut out)));
    let (da, oka) = ctx
        .pool_all
        .install(|| best_of(ctx.budget(), ctx.args.max_reps, || b.decode_into(&mut out)));
    if let Err(e) = ok1.and(oka) {
        m.error = Some(e);
        return m;
    }
    if out != data {
        m.error = Some("decoded bytes differ".into());
        return m;
    }
    m.decode_gbps_1t = Some(gbps(raw, d1));
    m.decode_gbps_all = Some(gbps(raw, da));
    let mut dec = Decoder::new(codec);
    let mut scratch = Vec::with_capacity(BLOCK_BYTES);
    let mut row = vec![0u8; row_bytes];
    let n_rows = data.len() / row_bytes;
    let in_range: Vec<u64> = rows.iter().map(|&r| r % n_rows as u64).collect();
    match access_us(&in_range, |r| {
        let start = r as usize * row_bytes;
        b.read_range(&mut dec, start, &mut row, &mut scratch)?;
        if row != data[start..start + row_bytes] {
            return Err(format!("row {r} differs"));
        }
        Ok(())
    }) {
        Ok(us) => m.row_access_us = Some(us),
        Err(e) => m.error = Some(e),
    }
    m
}

fn none_method(ds: &Dataset, memcpy: (f64, f64), rows: &[u64]) -> MethodResult {
    let raw = ds.data.len() as u64;
    let rb = ds.entry.row_bytes as usize;
    let mut row = vec![0u8; rb];
    let mut checksum = 0u64;
    let us = access_us(rows, |r| {
        row.copy_from_slice(&ds.data[r as usize * rb..(r as usize + 1) * rb]);
        checksum = checksum.wrapping_add(row[0] as u64);
        Ok(())
    })
    .unwrap_or(f64::NAN);
    MethodResult {
        method: "none".into(),
        family: "none".into(),
        random_access: true,
        measured_bytes: raw,
        subset: false,
        stored_bytes: raw,
        saved_pct: 0.0,
        encode_gbps_1t: Some(memcpy.0),
        encode_gbps_all: Some(memcpy.1),
        decode_gbps_1t: Some(memcpy.0),
        decode_gbps_all: Some(memcpy.1),
        row_access_us: Some(us),
        row_access_prepared_us: None,
        detail: Some(format!("raw rows; encode/decode = memcpy (checksum {checksum})")),
        error: None,
    }
}

fn run_dataset(ctx: &Ctx, ds: &Dataset) -> DatasetResult {
    let t0 = Instant::now();
    let rb = ds.entry.row_bytes as usize;
    let rows = random_rows(ctx.args.access_rows, ds.rows(), 0x1B9_5EED);
    let memcpy = memcpy_rates(ctx, &ds.data);
    let mut methods = vec![none_method(ds, memcpy, &rows)];
    let report = |m: &MethodResult| {
        eprintln!(
            "  {:<24} saved {:>6.2}%  enc {:>7} / {:>7} GB/s  dec {:>7} / {:>7} GB/s  row {:>8} us ({}) {}",
            m.method,
            m.saved_pct,
            fmt(m.encode_gbps_1t),
            fmt(m.encode_gbps_all),
            fmt(m.decode_gbps_1t),
            fmt(m.decode_gbps_all),
            fmt(m.row_access_us),
            fmt(m.row_access_prepared_us),
            m.error.as_deref().unwrap_or("")
        )
    };
    let mut variants = vec![("IBP auto", EncodeOptions::default())];
    if !ctx.args.no_sampled {
        for (label, f) in [
            ("IBP sample 1%", 0.01),
            ("IBP sample 5%", 0.05),
            ("IBP sample 10%", 0.10),
        ] {
            variants.push((
                label,
                EncodeOptions {
                    sample_fraction: Some(f),
                    ..EncodeOptions::default()
                },
            ));
        }
    }
    let group_labels: Vec<String> = ctx.args.groups.iter().map(|g| format!("IBP groups {g}")).collect();
    for (g, label) in ctx.args.groups.iter().zip(&group_labels) {
        variants.push((
            label.as_str(),
            EncodeOptions {
                groups: *g,
                ..EncodeOptions::default()
            },
        ));
    }
    for (label, opts) in &variants {
        let m = ibp_method(ctx, ds, label, opts, &rows);
        report(&m);
        methods.push(m);
    }
    for codec in [Codec::Zstd(1), Codec::Zstd(3), Codec::Lz4] {
        for m in [
            stream_method(ctx, codec, &ds.data, false),
            blocks_method(ctx, codec, &ds.data, rb, &rows, false),
        ] {
            report(&m);
            methods.push(m);
        }
    }
    let sub = ds.spread_sample(ctx.args.zstd19_mib << 20);
    let subset = sub.len() < ds.data.len();
    for m in [
        stream_method(ctx, Codec::Zstd(19), &sub, subset),
        blocks_method(ctx, Codec::Zstd(19), &sub, rb, &rows, subset),
    ] {
        report(&m);
        methods.push(m);
    }
    DatasetResult {
        name: ds.entry.name.clone(),
        description: ds.entry.description.clone(),
        dtype: ds.entry.dtype.clone(),
        rows: ds.rows(),
        row_bytes: ds.entry.row_bytes,
        raw_bytes: ds.data.len() as u64,
        published: published::anchor(&ds.entry.name),
        memcpy_gbps_1t: memcpy.0,
        memcpy_gbps_all: memcpy.1,
        methods,
        seconds: t0.elapsed().as_secs_f64(),
    }
}

fn fmt(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.3}")).unwrap_or_else(|| "-".into())
}

fn main() {
    let args = Args::parse();
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let entries = match datasets::manifest(&args.data_dir) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: {e}\n(run `python3 tools/datasets.py` first)");
            std::process::exit(2);
        }
    };
    let zstd19_mib = args.zstd19_mib;
    let access_rows = args.access_rows;
    let budget_ms = args.budget_ms;
    let max_reps = args.max_reps;
    let ctx = Ctx {
        pool1: pool(1),
        pool_all: pool(cores),
        args,
    };
    let started = Instant::now();
    let unix_time = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let mut results = Vec::new();
    for entry in &entries {
        if !ctx.args.only.is_empty() && !ctx.args.only.contains(&entry.name) {
            continue;
        }
        let ds = match datasets::load(&ctx.args.data_dir, entry) {
            Ok(ds) => ds,
            Err(e) => {
                eprintln!("skip {}: {e}", entry.name);
                continue;
            }
        };
        eprintln!(
            "== {} ({} rows x {} B, {:.1} MB)",
            entry.name,
            ds.rows(),
            entry.row_bytes,
            ds.data.len() as f64 / 1e6
        );
        let r = run_dataset(&ctx, &ds);
        eprintln!("   ({:.1} s)", r.seconds);
        results.push(r);
    }
    let run = Run {
        tool: format!("ibp-eval-cpu {}", env!("CARGO_PKG_VERSION")),
        cpu_model: report::cpu_model(),
        logical_cores: cores,
        threads_all: cores,
        unix_time,
        elapsed_s: started.elapsed().as_secs_f64(),
        notes: vec![
            format!("each throughput is the fastest of up to {max_reps} runs within {budget_ms} ms, wall clock, GB/s = 1e9 bytes/s of raw data"),
            format!("single thread = a 1-thread rayon pool; all cores = a {cores}-thread pool (this machine has {cores} logical cores)"),
            "IBP: whole container file (header, chunk headers and metadata, row index, directory, footer) vs raw bytes; decode checks every CRC and chunks run in parallel; encode includes the analysis".into(),
            "zstd/lz4 one stream: one frame (lz4: + 8 bytes for the length), single-threaded; 64 KiB blocks: independent blocks + an 8-byte offset per block".into(),
            format!("zstd-19 is measured on {zstd19_mib} MiB of each dataset (64 KiB slabs of whole rows spread evenly over it), marked subset"),
            format!("row access: mean over {access_rows} random rows, one thread: IBP gather of 1 row through ContainerReader::gather (metadata cached), and IBP with metadata and one RowDecoder per chunk group prepared once per file, vs decode of the 64 KiB block(s) holding the row + slice"),
            "every decoded output is compared with the input".into(),
        ],
        datasets: results,
    };
    if let Some(dir) = ctx.args.out.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let json = serde_json::to_string_pretty(&run).expect("serialising results");
    if let Err(e) = std::fs::write(&ctx.args.out, json + "\n") {
        eprintln!("error: writing {}: {e}", ctx.args.out.display());
        std::process::exit(1);
    }
    let csv_path = ctx.args.out.with_extension("csv");
    if let Err(e) = std::fs::write(&csv_path, report::to_csv(&run)) {
        eprintln!("error: writing {}: {e}", csv_path.display());
        std::process::exit(1);
    }
    eprintln!(
        "wrote {} and {} ({:.0} s)",
        ctx.args.out.display(),
        csv_path.display(),
        run.elapsed_s
    );
}
