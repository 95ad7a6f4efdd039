//! Deterministic tensor contents for the vectors: little-endian byte helpers and data shaped like
//! what IBP meets in practice (rows that share most high bits, a few outlier rows).

use crate::prng::SplitMix64;

/// Little-endian bytes of `f32` values.
pub fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Little-endian bytes of `u16` bit patterns.
pub fn u16_bytes(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Little-endian bytes of `u32` bit patterns.
pub fn u32_bytes(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Little-endian bytes of `u64` bit patterns.
pub fn u64_bytes(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// `rows` rows of `row_bytes` bytes: a random base row with the low `noise_bits` of every byte
/// varied per row; the rows listed in `outliers` are fully random.
pub fn near_rows(rng: &mut SplitMix64, rows: usize, row_bytes: usize, noise_bits: u32, outliers: &[usize]) -> Vec<u8> {
    let base = rng.bytes(row_bytes);
    let noise_mask = ((1u16 << noise_bits) - 1) as u8;
    let mut out = Vec::with_capacity(rows * row_bytes);
    for r in 0..rows {
        if outliers.contains(&r) {
            out.extend(rng.bytes(row_bytes));
        } else {
            let noise = rng.bytes(row_bytes);
            out.extend(base.iter().zip(&noise).map(|(b, n)| b ^ (n & noise_mask)));
        }
    }
    out
}

/// Embedding-like `f32` rows (approximately normal values of scale `scale`), with the low
/// `drop_bits` mantissa bits cleared (0 keeps full precision); rows in `outliers` are random bits.
pub fn embedding_rows(
    rng: &mut SplitMix64,
    rows: usize,
    cols: usize,
    scale: f64,
    drop_bits: u32,
    outliers: &[usize],
) -> Vec<u8> {
    let keep = !((1u32 << drop_bits) - 1);
    let mut out = Vec::with_capacity(rows * cols * 4);
    for r in 0..rows {
        for _ in 0..cols {
            let bits = if outliers.contains(&r) {
                rng.next_u64() as u32
            } else {
                ((rng.normal() * scale) as f32).to_bits() & keep
            };
            out.extend_from_slice(&bits.to_le_bytes());
        }
    }
    out
}

/// Rounds an `f32` to bfloat16 (round to nearest even; NaN stays NaN).
pub fn bf16_from_f32(x: f32) -> u16 {
    let bits = x.to_bits();
    if x.is_nan() {
        return ((bits >> 16) as u16) | 0x40;
    }
    let round = 0x7FFF + ((bits >> 16) & 1);
    ((bits + round) >> 16) as u16
}

/// Embedding-like bf16 rows; rows in `outliers` are random bits.
pub fn bf16_rows(rng: &mut SplitMix64, rows: usize, cols: usize, scale: f64, outliers: &[usize]) -> Vec<u8> {
    let mut out = Vec::with_capacity(rows * cols * 2);
    for r in 0..rows {
        for _ in 0..cols {
            let v = if outliers.contains(&r) {
                rng.next_u64() as u16
            } else {
                bf16_from_f32((rng.normal() * scale) as f32)
            };
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    out
}
