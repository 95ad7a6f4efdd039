//! Test data generators shared by the integration tests.
#![allow(dead_code)]

use ibp_codec::EncodeOptions;
use ibp_format::WordWidth;
use proptest::prelude::*;

/// A tiny deterministic PRNG (splitmix64) for bulk test data.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// f32 rows with realistic exponents (values around N(0, 0.05)-ish magnitudes).
pub fn float_rows(rows: usize, floats_per_row: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng(seed);
    let mut out = Vec::with_capacity(rows * floats_per_row * 4);
    for _ in 0..rows * floats_per_row {
        let r = rng.next();
        let sign = (r >> 63) as u32;
        let exp = 118 + ((r >> 40) % 8) as u32; // 2^-9 .. 2^-2
        let mantissa = (r as u32) & 0x7F_FFFF;
        let bits = (sign << 31) | (exp << 23) | mantissa;
        out.extend_from_slice(&bits.to_le_bytes());
    }
    out
}

/// Sparse 0/1 f32 rows (about 5 % ones).
pub fn sparse_rows(rows: usize, floats_per_row: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng(seed);
    let mut out = Vec::with_capacity(rows * floats_per_row * 4);
    for _ in 0..rows * floats_per_row {
        let v: f32 = if rng.next().is_multiple_of(20) { 1.0 } else { 0.0 };
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

/// Kinds of row content the property tests mix.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// Uniformly random bytes (mostly raw rows).
    Random,
    /// f32-like words with few exponents.
    Floats,
    /// Mostly zero bytes (mostly packed rows).
    Sparse,
    /// One repeated row with rare bit flips.
    NearConstant,
    /// NaN payloads, -0.0, +0.0, infinities as f32 and f64 bit patterns.
    Specials,
    /// Half the rows one kind, half another (mixed raw and packed rows).
    Mixed,
}

fn fill(kind: Kind, rng: &mut Rng, row_bytes: usize, row_count: usize) -> Vec<u8> {
    let len = row_bytes * row_count;
    let mut out = Vec::with_capacity(len);
    match kind {
        Kind::Random => (0..len).for_each(|_| out.push(rng.next() as u8)),
        Kind::Floats => {
            while out.len() < len {
                let r = rng.next();
                let bits = ((r >> 63) as u32) << 31 | (120 + (r >> 40) as u32 % 6) << 23 | (r as u32 & 0x7F_FFFF);
                out.extend_from_slice(&bits.to_le_bytes());
            }
        }
        Kind::Sparse => (0..len).for_each(|_| {
            let r = rng.next();
            out.push(if r.is_multiple_of(13) { (r >> 8) as u8 } else { 0 })
        }),
        Kind::NearConstant => {
            let base: Vec<u8> = (0..row_bytes).map(|_| rng.next() as u8).collect();
            for _ in 0..row_count {
                for &b in &base {
                    let r = rng.next();
                    out.push(if r.is_multiple_of(50) {
                        b ^ (1 << ((r >> 8) % 8))
                    } else {
                        b
                    });
                }
            }
        }
        Kind::Specials => {
            const F32: [u32; 6] = [0x7FC0_0001, 0xFFC0_1234, 0x8000_0000, 0, 0x7F80_0000, 0x7FA5_5555];
            const F64: [u64; 4] = [
                0x7FF8_0000_0000_0001,
                0x8000_0000_0000_0000,
                0xFFF0_0000_0000_0000,
                0x7FF4_0000_DEAD_BEEF,
            ];
            while out.len() < len {
                let r = rng.next();
                if r.is_multiple_of(2) {
                    out.extend_from_slice(&F32[(r >> 8) as usize % 6].to_le_bytes());
                } else {
                    out.extend_from_slice(&F64[(r >> 8) as usize % 4].to_le_bytes());
                }
            }
        }
        Kind::Mixed => {
            let half = row_count / 2;
            out = fill(Kind::Sparse, rng, row_bytes, half);
            out.extend(fill(Kind::Random, rng, row_bytes, row_count - half));
        }
    }
    out.truncate(len);
    out
}

/// Row sizes the tests cover: 1 byte, sizes not a multiple of 8 or 32, and larger rows.
pub const ROW_SIZES: [usize; 14] = [1, 2, 3, 4, 6, 8, 12, 20, 24, 33, 40, 100, 136, 264];

/// (rows, row_bytes, options): random content kind, row count 1..80, options over every width
/// (partial last words included), 1..=4 groups, every alignment, optional threshold and sampling.
pub fn chunk_case() -> impl Strategy<Value = (Vec<u8>, usize, EncodeOptions)> {
    (
        0usize..ROW_SIZES.len(),
        1usize..80,
        0usize..6,
        any::<u64>(),
        (0usize..5, 1u32..=4, 0u8..=7),
        (proptest::option::of(0.55f64..=1.0), proptest::option::of(0.01f64..=1.0)),
    )
        .prop_map(
            |(size, row_count, kind, seed, (w, groups, align_log2), (threshold, sample))| {
                let row_bytes = ROW_SIZES[size];
                let kind = [
                    Kind::Random,
                    Kind::Floats,
                    Kind::Sparse,
                    Kind::NearConstant,
                    Kind::Specials,
                    Kind::Mixed,
                ][kind];
                let rows = fill(kind, &mut Rng(seed), row_bytes, row_count);
                // Widths that do not divide the row make its last word partial (spec 2.4).
                let word_width = if w == 4 { None } else { Some(WordWidth::ALL[w]) };
                let opts = EncodeOptions {
                    word_width,
                    threshold,
                    sample_fraction: sample,
                    groups,
                    align_log2,
                    chunk_rows: None,
                    // Some cases sized in GPU sectors, some preferring 64-bit words.
                    transfer_cost: (seed % 3 == 0).then_some(ibp_codec::options::TransferCost::GPU),
                    prefer_wide_words: (seed % 5 == 0).then_some(ibp_codec::options::GPU_WIDE_WORDS_WITHIN),
                    // Some with positions merged to fewer runs of free bits (at most 0.1 %, or
                    // nearly any merge).
                    fewer_runs_within: [None, Some(0.001), Some(0.5)][(seed / 7 % 3) as usize],
                };
                (rows, row_bytes, opts)
            },
        )
}
