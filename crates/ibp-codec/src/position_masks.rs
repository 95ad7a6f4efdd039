//! Per-position optimal masks: for each word position, the Mask/Bitval that minimises that
//! position's coded bits over the analysed rows, among the nested masks "the `k` bits on which rows
//! agree most" (`k = 0..=W`).
//!
//! The threshold sweep gives one rule to every position; a position whose bits agree in, say, 70 %
//! of rows is best served by a mask of those bits only if `matches * k` beats the `W` bits every
//! non-matching word costs, which a global threshold cannot weigh per position. For every
//! position `j`, order its bits by how many rows hold the majority value there (ties: lower bit
//! first); a word matches the mask of the first `k` bits iff the lowest rank among the bits where it
//! differs from the majority is `>= k`. One pass over the rows builds, per position, the histogram
//! of that lowest rank; then `matches(k)` is a suffix sum and the coded bits of the position are
//! `N*W - matches(k) * k` (plus one participation bit per row, the same for every `k`).
//!
//! The result is one more candidate for the analysis, which compares it with the sweep by the real
//! size the format produces (record rounding, raw rows and metadata included).

use ibp_format::WordWidth;
use rayon::prelude::*;

/// Largest `row_bytes` for which the candidate is computed (its tables take 256 bytes per row
/// byte, its histograms `4 * (W + 1)` bytes per word per task).
pub const MAX_ROW_BYTES: usize = 64 << 10;

/// Per position: the majority word and, for each byte of the word, the lowest rank among the bits
/// of each possible byte value (`table[(j * W/8 + p) * 256 + v]`).
struct RankTables {
    majority: Vec<u64>,
    order: Vec<[u8; 64]>,
    lowest_rank: Vec<u8>,
}

fn rank_tables(counts: &[u32], n_rows: u64, w: WordWidth, n: usize) -> RankTables {
    let bits = w.bits() as usize;
    let wb = w.bytes();
    let mut majority = vec![0u64; n];
    let mut order = vec![[0u8; 64]; n];
    let mut lowest_rank = vec![0u8; n * wb * 256];
    majority
        .par_iter_mut()
        .zip(order.par_iter_mut())
        .zip(lowest_rank.par_chunks_mut(wb * 256))
        .enumerate()
        .for_each(|(j, ((maj, ord), table))| {
            // Bits past the row (partial last word) are zero in every row: full agreement.
            let count = |b: usize| counts.get(j * bits + b).copied().unwrap_or(0) as u64;
            let mut agree = [(0u64, 0u8); 64];
            for (b, slot) in agree.iter_mut().enumerate().take(bits) {
                let c = count(b);
                if 2 * c > n_rows {
                    *maj |= 1 << b;
                }
                *slot = (c.max(n_rows - c), b as u8);
            }
            agree[..bits].sort_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
            let mut rank = [0u8; 64];
            for (r, &(_, b)) in agree[..bits].iter().enumerate() {
                rank[b as usize] = r as u8;
                ord[r] = b;
            }
            for p in 0..wb {
                // table[v] = lowest rank among the set bits of v, built from v without its lowest bit.
                table[p * 256] = bits as u8;
                for v in 1..256usize {
                    let low = v.trailing_zeros() as usize;
                    table[p * 256 + v] = table[p * 256 + (v & (v - 1))].min(rank[p * 8 + low]);
                }
            }
        });
    RankTables {
        majority,
        order,
        lowest_rank,
    }
}

/// The per-position optimal Mask/Bitval for `w`-bit words of the rows `which` (`counts` from
/// [`crate::analysis::count_bits`] over the same rows). `None` if the rows are too wide for the
/// tables ([`MAX_ROW_BYTES`]) or no rows are given.
pub fn optimal_masks(
    rows: &[u8],
    row_bytes: usize,
    which: &[usize],
    counts: &[u32],
    w: WordWidth,
) -> Option<(Vec<u64>, Vec<u64>)> {
    if row_bytes > MAX_ROW_BYTES || which.is_empty() {
        return None;
    }
    let n_rows = which.len() as u64;
    let n = crate::row::words_per_row(row_bytes, w);
    let bits = w.bits() as usize;
    let wb = w.bytes();
    let tables = rank_tables(counts, n_rows, w, n);
    let rows_per_task = ((1usize << 18) / row_bytes).max(1);
    let hist = which
        .par_chunks(rows_per_task)
        .map(|part| {
            let mut hist = vec![0u32; n * (bits + 1)];
            let mut words = Vec::with_capacity(n);
            for &r in part {
                crate::analysis::load_words(&rows[r * row_bytes..(r + 1) * row_bytes], w, &mut words);
                for (j, &v) in words.iter().enumerate() {
                    let d = v ^ tables.majority[j];
                    let table = &tables.lowest_rank[j * wb * 256..(j + 1) * wb * 256];
                    let mut lowest = bits as u8;
                    for p in 0..wb {
                        let byte = (d >> (8 * p)) as u8;
                        if byte != 0 {
                            lowest = lowest.min(table[p * 256 + byte as usize]);
                        }
                    }
                    hist[j * (bits + 1) + lowest as usize] += 1;
                }
            }
            hist
        })
        .reduce_with(|mut a, b| {
            a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
            a
        })?;
    let mut masks = vec![0u64; n];
    let mut bitvals = vec![0u64; n];
    for j in 0..n {
        let h = &hist[j * (bits + 1)..(j + 1) * (bits + 1)];
        // matches(k) = rows whose lowest differing rank is >= k; saved bits = matches(k) * k.
        let mut matches = n_rows;
        let (mut best_k, mut best_saved) = (0usize, 0u64);
        for k in 1..=bits {
            matches -= h[k - 1] as u64;
            let saved = matches * k as u64;
            if saved > best_saved {
                best_saved = saved;
                best_k = k;
            }
        }
        let mask = tables.order[j][..best_k].iter().fold(0u64, |m, &b| m | 1 << b);
        masks[j] = mask;
        bitvals[j] = tables.majority[j] & mask;
    }
    Some((masks, bitvals))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Coded bits of one position under a mask, by brute force.
    fn bits_of(col: &[u64], mask: u64, bitval: u64, w: u32) -> u64 {
        col.iter()
            .map(|&v| {
                if v & mask == bitval {
                    (w - mask.count_ones()) as u64
                } else {
                    w as u64
                }
            })
            .sum()
    }

    #[test]
    fn optimum_is_no_worse_than_any_threshold_mask() {
        // 16-bit words, two positions: one with a 70 %-agreeing exponent-like high byte, one noisy.
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut rows = Vec::new();
        for i in 0..500u64 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let hi: u16 = if i % 10 < 7 {
                0x3F00
            } else {
                (state >> 40) as u16 & 0xFF00
            };
            let w0 = hi | (state >> 20) as u16 & 0x00FF;
            let w1 = (state >> 3) as u16;
            rows.extend_from_slice(&w0.to_le_bytes());
            rows.extend_from_slice(&w1.to_le_bytes());
        }
        let which: Vec<usize> = (0..500).collect();
        let counts = crate::analysis::count_bits(&rows, 4, &which);
        let (m, b) = optimal_masks(&rows, 4, &which, &counts, WordWidth::W16).unwrap();
        for j in 0..2 {
            let col: Vec<u64> = (0..500)
                .map(|r| u16::from_le_bytes([rows[r * 4 + 2 * j], rows[r * 4 + 2 * j + 1]]) as u64)
                .collect();
            let best = bits_of(&col, m[j], b[j], 16);
            for t in [0.5001, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0] {
                let (tm, tb) = crate::analysis::masks_from_counts(&counts, 500, WordWidth::W16, t);
                assert!(best <= bits_of(&col, tm[j], tb[j], 16), "position {j} threshold {t}");
            }
            assert_eq!(b[j] & !m[j], 0);
        }
    }
}
