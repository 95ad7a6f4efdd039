//! `ibp bench`: CPU encode and decode throughput and the ratio for one file, next to a memcpy of
//! the same bytes in the same run (speeds are reported as MiB/s and as a fraction of memcpy).

use crate::cli::BenchArgs;
use crate::commands::open_container;
use crate::error::{CliError, CliResult};
use crate::inputs;
use crate::layout;
use crate::progress::Ui;
use ibp_codec::Limits;
use ibp_codec::{ContainerReader, ContainerWriter, DecoderKind, EncodeOptions};
use ibp_format::Dtype;
use serde::Serialize;
use std::hint::black_box;
use std::io::Cursor;
use std::path::Path;
use std::time::{Duration, Instant};

/// One measured operation.
#[derive(Debug, Clone, Serialize)]
pub struct Measurement {
    /// `memcpy`, `encode`, `decode fast`, `decode oracle`.
    pub op: String,
    /// Median seconds per run.
    pub seconds: f64,
    /// Tensor bytes per second, in MiB/s.
    pub mib_per_s: f64,
    /// Throughput / memcpy throughput.
    pub vs_memcpy: f64,
    /// Timed runs.
    pub runs: u32,
}

/// The bench result.
#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    /// The file measured.
    pub file: String,
    /// Entries (tensors).
    pub entries: usize,
    /// Tensor bytes.
    pub raw_bytes: u64,
    /// Encoded container bytes (default options).
    pub encoded_bytes: u64,
    /// raw / encoded.
    pub ratio: f64,
    /// rayon threads used.
    pub threads: usize,
    /// Every measurement, memcpy first.
    pub measurements: Vec<Measurement>,
}

struct Tensor {
    name: String,
    dtype: Dtype,
    shape: Vec<u64>,
    row_bytes: u64,
    data: Vec<u8>,
}

/// Loads the tensors of `path` into memory: decoded from a `.ibp` (keeping its row split), or read
/// from `.npy`/safetensors/a folder (rows by the default `--row-dim` rule).
fn load(path: &Path, limits: Limits) -> CliResult<Vec<Tensor>> {
    let is_ibp = path.extension().and_then(|e| e.to_str()) == Some("ibp") || starts_with_ibp_magic(path);
    if is_ibp {
        let mut r = open_container(path, limits)?;
        let entries = r.entries().to_vec();
        let data = r.decode_all(DecoderKind::Fast).map_err(|e| CliError::format(path, e))?;
        return Ok(entries
            .into_iter()
            .zip(data)
            .map(|(e, data)| Tensor {
                name: e.name,
                dtype: e.dtype,
                shape: e.shape,
                row_bytes: e.row_bytes,
                data,
            })
            .collect());
    }
    let inputs = inputs::collect(path)?;
    inputs
        .tensors
        .iter()
        .map(|t| {
            let l = layout::choose(t.dtype, &t.shape, None)
                .map_err(|m| CliError::bad_input(&inputs.files[t.file].0, "E_SHAPE", m))?;
            Ok(Tensor {
                name: t.name.clone(),
                dtype: t.dtype,
                shape: t.shape.clone(),
                row_bytes: l.row_bytes,
                data: inputs.data(t).to_vec(),
            })
        })
        .collect()
}

fn starts_with_ibp_magic(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 8];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok()
        && head == ibp_format::MAGIC
}

fn encode(tensors: &[Tensor], opts: &EncodeOptions, capacity: usize) -> ibp_format::Result<Vec<u8>> {
    let mut w = ContainerWriter::new(Vec::with_capacity(capacity), opts.clone())?;
    for t in tensors {
        w.write_entry(&t.name, t.dtype, &t.shape, t.row_bytes, &t.data)?;
    }
    w.finish()
}

fn decode(bytes: &[u8], kind: DecoderKind) -> ibp_format::Result<Vec<Vec<u8>>> {
    ContainerReader::open(Cursor::new(bytes))?.decode_all(kind)
}

/// Times `f`: one untimed warm-up, then `iters` runs (default: about one second's worth, 1..=20);
/// returns the median.
fn time<T>(iters: Option<u32>, mut f: impl FnMut() -> T) -> (Duration, u32) {
    let t0 = Instant::now();
    black_box(f());
    let warm = t0.elapsed();
    let runs = iters.unwrap_or_else(|| (1.0 / warm.as_secs_f64().max(1e-6)).clamp(1.0, 20.0) as u32);
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            black_box(f());
            t.elapsed()
        })
        .collect();
    times.sort();
    (times[times.len() / 2], runs)
}

/// Runs the measurements.
pub fn measure(args: &BenchArgs, ui: Ui, limits: Limits) -> CliResult<BenchReport> {
    let path = &args.input;
    let tensors = load(path, limits)?;
    let raw: u64 = tensors.iter().map(|t| t.data.len() as u64).sum();
    let opts = EncodeOptions::default();
    let bar = ui.items_bar(if args.no_oracle { 3 } else { 4 }, "bench");

    let src: Vec<u8> = tensors.iter().flat_map(|t| t.data.iter().copied()).collect();
    let mut dst = vec![0u8; src.len()];
    let (t_copy, n_copy) = time(args.iters, || {
        dst.copy_from_slice(black_box(&src));
        dst[0..0].len()
    });
    drop((src, dst));
    bar.inc(1);
    let encoded = encode(&tensors, &opts, raw as usize).map_err(|e| CliError::format(path, e))?;
    let (t_enc, n_enc) = time(args.iters, || encode(&tensors, &opts, raw as usize).map(|v| v.len()));
    bar.inc(1);
    // Check the round trip once, so the numbers are for a correct decoder.
    let back = decode(&encoded, DecoderKind::Fast).map_err(|e| CliError::format(path, e))?;
    if back.iter().zip(&tensors).any(|(b, t)| *b != t.data) {
        return Err(CliError::bad_input(
            path,
            "E_DECODER_MISMATCH",
            "decoded bytes differ from the input",
        ));
    }
    drop(back);
    let (t_fast, n_fast) = time(args.iters, || decode(&encoded, DecoderKind::Fast).map(|v| v.len()));
    bar.inc(1);
    let mut measured = vec![
        ("memcpy", t_copy, n_copy),
        ("encode", t_enc, n_enc),
        ("decode fast", t_fast, n_fast),
    ];
    if !args.no_oracle {
        let (t, n) = time(args.iters, || decode(&encoded, DecoderKind::Oracle).map(|v| v.len()));
        measured.push(("decode oracle", t, n));
        bar.inc(1);
    }
    bar.finish_and_clear();
    let mib = raw as f64 / (1024.0 * 1024.0);
    let copy_speed = mib / t_copy.as_secs_f64().max(1e-12);
    let measurements = measured
        .into_iter()
        .map(|(op, t, runs)| {
            let speed = mib / t.as_secs_f64().max(1e-12);
            Measurement {
                op: op.to_owned(),
                seconds: t.as_secs_f64(),
                mib_per_s: speed,
                vs_memcpy: speed / copy_speed,
                runs,
            }
        })
        .collect();
    Ok(BenchReport {
        file: path.display().to_string(),
        entries: tensors.len(),
        raw_bytes: raw,
        encoded_bytes: encoded.len() as u64,
        ratio: if encoded.is_empty() {
            0.0
        } else {
            raw as f64 / encoded.len() as f64
        },
        threads: rayon::current_num_threads(),
        measurements,
    })
}

/// Renders the report as a small table.
pub fn render_text(r: &BenchReport) -> String {
    let mut s = format!(
        "{}: {} entries, {} tensor bytes -> {} encoded bytes (ratio {:.4}), {} threads\n",
        r.file, r.entries, r.raw_bytes, r.encoded_bytes, r.ratio, r.threads
    );
    s.push_str(&format!(
        "{:<14} {:>12} {:>12} {:>10} {:>5}\n",
        "op", "MiB/s", "ms/run", "x memcpy", "runs"
    ));
    for m in &r.measurements {
        s.push_str(&format!(
            "{:<14} {:>12.1} {:>12.3} {:>10.4} {:>5}\n",
            m.op,
            m.mib_per_s,
            m.seconds * 1e3,
            m.vs_memcpy,
            m.runs
        ));
    }
    s
}

/// Runs `ibp bench`.
pub fn run(args: &BenchArgs, ui: Ui, limits: Limits) -> CliResult<()> {
    let r = measure(args, ui, limits)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&r).expect("report serialises"));
    } else {
        print!("{}", render_text(&r));
    }
    Ok(())
}
