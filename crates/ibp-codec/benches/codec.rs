//! Chunk codec throughput on synthetic data, next to a memcpy of the same bytes in the same run.
//!
//! `cargo bench -p ibp-codec --bench codec` (optionally `-- --quick` for a smaller data set).
//! Prints, per data set: the compressed size, and for encode, fast decode (BMI2 when available and
//! portable) and oracle decode the throughput in GB/s of raw (decoded) bytes, single thread and on
//! all cores, with its ratio to a memcpy of the same bytes on as many threads.

use ibp_codec::{
    decode_chunk, encode_chunk, encode_chunk_with_plan, plan_chunk, DecoderKind, EncodeOptions, EncodedChunk,
    RowDecoder,
};
use ibp_format::WordWidth;
use rayon::prelude::*;
use std::hint::black_box;
use std::time::Instant;

/// splitmix64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// f32 activations/weights: sign random, exponents concentrated (most in 2^-7..2^-3, a few
/// outliers), random mantissas.
fn dense_f32(bytes: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng(seed);
    let mut out = Vec::with_capacity(bytes);
    while out.len() < bytes {
        let r = rng.next();
        let exp = match r % 64 {
            0 => 100 + (r >> 8) as u32 % 27,
            _ => 120 + (r >> 8) as u32 % 5,
        };
        let bits = ((r >> 63) as u32) << 31 | exp << 23 | (r >> 20) as u32 & 0x7F_FFFF;
        out.extend_from_slice(&bits.to_le_bytes());
    }
    out
}

/// A 0/1 f32 feature matrix with about 1.3 % ones (Cora-like).
fn sparse_01(bytes: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng(seed);
    let mut out = Vec::with_capacity(bytes);
    while out.len() < bytes {
        let v: f32 = if rng.next().is_multiple_of(77) { 1.0 } else { 0.0 };
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

/// Seconds on this thread's CPU (from `/proc/thread-self/schedstat`), if the system reports it.
fn thread_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}

/// Best time of `runs` runs, in seconds: this thread's CPU time when `cpu` (single-thread runs,
/// which then do not count time the shared machine gave to other processes), else wall time.
fn best_of(cpu: bool, runs: usize, mut f: impl FnMut()) -> f64 {
    (0..runs)
        .map(|_| {
            let c = thread_cpu_seconds().filter(|_| cpu);
            let t = Instant::now();
            f();
            match (c, thread_cpu_seconds()) {
                // The CPU clock ticks coarsely: short runs fall back to wall time.
                (Some(c0), Some(c1)) if c1 - c0 > 0.02 => c1 - c0,
                _ => t.elapsed().as_secs_f64(),
            }
        })
        .fold(f64::INFINITY, f64::min)
}

fn encode_all(data: &[u8], row_bytes: usize, opts: &EncodeOptions) -> Vec<EncodedChunk> {
    let chunk_bytes = opts.rows_per_chunk(row_bytes as u64) as usize * row_bytes;
    data.chunks(chunk_bytes)
        .map(|c| encode_chunk(c, row_bytes, opts))
        .collect()
}

fn decode_all(chunks: &[EncodedChunk], out: &mut [u8], kind: DecoderKind) {
    let mut pos = 0;
    for c in chunks {
        let len = c.meta.row_count as usize * c.meta.row_bytes() as usize;
        decode_chunk(&c.meta, &c.payload, kind, &mut out[pos..pos + len]).expect("decodes");
        pos += len;
    }
}

/// Decodes every row with the portable (non-BMI2) fast decoder, rows spread over the pool.
fn decode_all_portable(chunks: &[EncodedChunk], out: &mut [u8]) {
    let mut pos = 0;
    for c in chunks {
        let m = &c.meta;
        let rb = m.row_bytes() as usize;
        let decoders: Vec<RowDecoder> = (0..m.group_count as usize)
            .map(|g| {
                RowDecoder::new(m.mask(g), m.bitval(g), m.word_width, rb, m.align())
                    .unwrap()
                    .force_portable()
            })
            .collect();
        let len = m.row_count as usize * rb;
        out[pos..pos + len].par_chunks_mut(rb).enumerate().for_each(|(r, dst)| {
            decoders[m.group_of(r)]
                .decode(&c.payload[m.record_range(r)], dst)
                .expect("decodes")
        });
        pos += len;
    }
}

fn memcpy(src: &[u8], dst: &mut [u8]) {
    dst.par_chunks_mut(1 << 20)
        .zip(src.par_chunks(1 << 20))
        .for_each(|(d, s)| d.copy_from_slice(s));
}

struct Line {
    what: String,
    threads: usize,
    secs: f64,
    memcpy_secs: f64,
    bytes: usize,
}

fn report(lines: &[Line]) {
    println!(
        "  {:<34} {:>7} {:>10} {:>12} {:>10}",
        "operation", "threads", "GB/s", "memcpy GB/s", "vs memcpy"
    );
    for l in lines {
        let gbs = l.bytes as f64 / l.secs / 1e9;
        let mgbs = l.bytes as f64 / l.memcpy_secs / 1e9;
        println!(
            "  {:<34} {:>7} {:>10.3} {:>12.2} {:>10.4}",
            l.what,
            l.threads,
            gbs,
            mgbs,
            l.memcpy_secs / l.secs
        );
    }
}

fn run_set(name: &str, data: &[u8], row_bytes: usize, opts: &EncodeOptions, quick: bool) {
    // `IBP_BENCH_ONLY=sparse` (a substring of the set's name) runs one set, e.g. for profiling.
    if let Ok(only) = std::env::var("IBP_BENCH_ONLY") {
        if !name.contains(&only) {
            return;
        }
    }
    let all = rayon::current_num_threads();
    let single = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let every = rayon::ThreadPoolBuilder::new().num_threads(all).build().unwrap();
    let mut out = vec![0u8; data.len()];
    let runs = if quick { 1 } else { 3 };
    let mut lines = Vec::new();

    let mut chunks = Vec::new();
    for (threads, pool) in [(1, &single), (all, &every)] {
        let in_pool = |f: &mut (dyn FnMut() + Send)| pool.install(f);
        let mut memcpy_secs = 0.0;
        in_pool(&mut || memcpy_secs = best_of(false, 10, || memcpy(black_box(data), &mut out)));
        let mut secs = 0.0;
        in_pool(&mut || {
            secs = best_of(threads == 1, 1, || {
                chunks = encode_all(black_box(data), row_bytes, opts)
            });
        });
        lines.push(Line {
            what: "encode (analysis + rows)".into(),
            threads,
            secs,
            memcpy_secs,
            bytes: data.len(),
        });
        let chunk_bytes = opts.rows_per_chunk(row_bytes as u64) as usize * row_bytes;
        let mut plans = Vec::new();
        in_pool(&mut || {
            secs = best_of(threads == 1, 1, || {
                plans = data
                    .chunks(chunk_bytes)
                    .map(|c| plan_chunk(c, row_bytes, opts))
                    .collect();
            })
        });
        lines.push(Line {
            what: "  of which analysis".into(),
            threads,
            secs,
            memcpy_secs,
            bytes: data.len(),
        });
        in_pool(&mut || {
            secs = best_of(threads == 1, runs, || {
                black_box(
                    data.chunks(chunk_bytes)
                        .zip(&plans)
                        .map(|(c, p)| encode_chunk_with_plan(c, row_bytes, p, opts.align_log2))
                        .collect::<Vec<_>>(),
                );
            })
        });
        lines.push(Line {
            what: "  of which rows (plan given)".into(),
            threads,
            secs,
            memcpy_secs,
            bytes: data.len(),
        });
        in_pool(&mut || secs = best_of(threads == 1, runs, || decode_all(&chunks, &mut out, DecoderKind::Fast)));
        assert_eq!(out, data);
        lines.push(Line {
            what: "decode fast".into(),
            threads,
            secs,
            memcpy_secs,
            bytes: data.len(),
        });
        in_pool(&mut || secs = best_of(threads == 1, runs, || decode_all_portable(&chunks, &mut out)));
        assert_eq!(out, data);
        lines.push(Line {
            what: "decode fast, portable pdep".into(),
            threads,
            secs,
            memcpy_secs,
            bytes: data.len(),
        });
        if threads == 1 {
            // The oracle is bit by bit: time it on the first chunk only.
            let first = &chunks[..1];
            let len = first[0].meta.row_count as usize * row_bytes;
            let mut m = 0.0;
            in_pool(&mut || m = best_of(false, 10, || memcpy(black_box(&data[..len]), &mut out[..len])));
            in_pool(&mut || {
                secs = best_of(threads == 1, 1, || {
                    decode_all(first, &mut out[..len], DecoderKind::Oracle)
                })
            });
            assert_eq!(out[..len], data[..len]);
            lines.push(Line {
                what: "decode oracle (first chunk)".into(),
                threads,
                secs,
                memcpy_secs: m,
                bytes: len,
            });
        }
    }

    let stored: u64 = chunks
        .iter()
        .map(|c| c.meta.to_bytes(32).len() as u64 + c.payload.len() as u64)
        .sum();
    let widths: Vec<WordWidth> = chunks.iter().map(|c| c.meta.word_width).collect();
    let raw_rows: usize = chunks
        .iter()
        .map(|c| (0..c.meta.row_count as usize).filter(|&r| c.meta.is_raw(r)).count())
        .sum();
    println!(
        "{name}: {:.1} MiB, {} B rows, {} chunks, W {:?}, stored {:.2} % of raw ({:.2} % saved), {raw_rows} raw rows",
        data.len() as f64 / (1 << 20) as f64,
        row_bytes,
        chunks.len(),
        widths.first(),
        100.0 * stored as f64 / data.len() as f64,
        100.0 - 100.0 * stored as f64 / data.len() as f64,
    );
    report(&lines);
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let mib = if quick { 16 } else { 64 };
    let bmi2 = RowDecoder::new(&[0], &[0], WordWidth::W8, 1, 1).unwrap().uses_bmi2();
    println!(
        "ibp-codec bench: {} rayon threads, BMI2 pdep/pext {}; 1-thread times are thread CPU time (memcpy: wall, best of 10), \
         all-thread times wall time; best of 3 (1 with --quick) except encode (1 run)",
        rayon::current_num_threads(),
        if bmi2 { "in use" } else { "not available" }
    );
    let dense = dense_f32(mib << 20, 1);
    run_set("dense f32 (full sweep)", &dense, 1024, &EncodeOptions::default(), quick);
    let sampled = EncodeOptions {
        sample_fraction: Some(0.05),
        ..EncodeOptions::default()
    };
    run_set("dense f32 (5 % sample)", &dense, 1024, &sampled, quick);
    let sparse_rows = (mib << 20) / 5732;
    let sparse = sparse_01(sparse_rows * 5732, 2);
    run_set(
        "sparse 0/1 f32 (full sweep)",
        &sparse,
        5732,
        &EncodeOptions::default(),
        quick,
    );
}
