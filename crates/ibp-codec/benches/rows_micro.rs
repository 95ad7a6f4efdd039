//! Row-level encoder/decoder micro benchmark (no chunk machinery, one thread):
//! `cargo bench -p ibp-codec --bench rows_micro`.

use ibp_codec::{plan_chunk, EncodeOptions, RowDecoder, RowEncoder};
use std::hint::black_box;

/// Seconds on this thread's CPU (the build machine is shared: wall time would count other
/// processes' turns), from `/proc/thread-self/schedstat`; wall time where that is missing.
fn now() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map(|ns| ns as f64 / 1e9)
        .unwrap_or_else(|| {
            static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
            START.get_or_init(std::time::Instant::now).elapsed().as_secs_f64()
        })
}

fn main() {
    let mut s = 1u64;
    let mut next = move || {
        s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z ^ (z >> 27)
    };
    // Sparse 0/1 f32 rows (Cora-like), then dense f32 rows with concentrated exponents.
    let sparse_rows = 12_000 * 5732 / 4;
    let sparse: Vec<u8> = (0..sparse_rows)
        .flat_map(|_| (if next().is_multiple_of(77) { 1.0f32 } else { 0.0 }).to_le_bytes())
        .collect();
    run("sparse 0/1 f32", &sparse, 5732);
    let dense: Vec<u8> = (0..(64 << 20) / 4)
        .flat_map(|_| {
            let r = next();
            let bits = ((r >> 63) as u32) << 31 | (120 + (r >> 8) as u32 % 5) << 23 | (r >> 20) as u32 & 0x7F_FFFF;
            bits.to_le_bytes()
        })
        .collect();
    run("dense f32", &dense, 1024);
}

fn run(name: &str, data: &[u8], row_bytes: usize) {
    let plan = plan_chunk(
        &data[..(8 << 20) / row_bytes * row_bytes],
        row_bytes,
        &EncodeOptions::default(),
    );
    let mut enc = RowEncoder::new(&plan.masks, &plan.bitvals, plan.word_width, row_bytes, 1).unwrap();
    let dec = RowDecoder::new(&plan.masks, &plan.bitvals, plan.word_width, row_bytes, 1).unwrap();
    let mut payload = Vec::with_capacity(data.len() + 64);
    let mut lens = Vec::new();
    let mut out = vec![1u8; data.len()];
    for _ in 0..3 {
        payload.clear();
        lens.clear();
        let t = now();
        for row in data.chunks_exact(row_bytes) {
            lens.push(enc.encode(row, &mut payload) as usize);
        }
        let e = now() - t;
        let t = now();
        let mut pos = 0;
        for (dst, &l) in out.chunks_exact_mut(row_bytes).zip(&lens) {
            dec.decode_at(&payload, pos..pos + l, dst).unwrap();
            pos += l;
        }
        let d = now() - t;
        assert_eq!(out, data);
        // memcpy: wall time, best of 10 (too short for the CPU clock's resolution).
        let m = (0..10)
            .map(|_| {
                let t = std::time::Instant::now();
                black_box(&mut out).copy_from_slice(black_box(data));
                t.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min);
        let gb = data.len() as f64 / 1e9;
        println!(
            "{name}: W{} {} words/row, {:.1} % of raw: encode {:.2} GB/s, decode {:.2} GB/s, memcpy {:.2} GB/s",
            plan.word_width,
            row_bytes * 8 / plan.word_width.bits() as usize,
            100.0 * payload.len() as f64 / data.len() as f64,
            gb / e,
            gb / d,
            gb / m
        );
    }
}
