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
    let mut next = || {
        s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z ^ (z >> 27)
    };
    let row_bytes = 5732;
    let rows = 12_000;
    let mut data = Vec::new();
    for _ in 0..rows * row_bytes / 4 {
        let v: f32 = if next().is_multiple_of(77) { 1.0 } else { 0.0 };
        data.extend_from_slice(&v.to_le_bytes());
    }
    let plan = plan_chunk(&data, row_bytes, &EncodeOptions::default());
    let mut enc = RowEncoder::new(&plan.masks, &plan.bitvals, plan.word_width, row_bytes, 1).unwrap();
    let dec = RowDecoder::new(&plan.masks, &plan.bitvals, plan.word_width, row_bytes, 1).unwrap();
    let mut payload = Vec::with_capacity(data.len() + 64);
    let mut lens = Vec::new();
    for _ in 0..3 {
        payload.clear();
        lens.clear();
        let t = now();
        for row in data.chunks_exact(row_bytes) {
            lens.push(enc.encode(row, &mut payload) as usize);
        }
        let e = now() - t;
        let mut out = vec![0u8; data.len()];
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
                black_box(&mut out).copy_from_slice(black_box(&data));
                t.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min);
        let gb = data.len() as f64 / 1e9;
        println!(
            "W{} {} words/row: encode {:.2} GB/s, decode {:.2} GB/s, memcpy {:.2} GB/s",
            plan.word_width,
            row_bytes * 8 / plan.word_width.bits() as usize,
            gb / e,
            gb / d,
            gb / m
        );
    }
}
