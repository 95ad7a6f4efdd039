//! Per-chunk analysis: chooses the word width, the threshold, Mask/Bitval and (optionally) row
//! groups by the real size the format produces.
//!
//! The real size of a chunk is its 48-byte header, its metadata (spec 5.2: masks, bitvals, group
//! ids and row lengths, whose field width depends on the spread of the record lengths) and its row
//! records (spec 6: each the shorter of the aligned coded record and the aligned raw record).
//!
//! Bit counts are width-independent: bit `b` of word `j` is bit `b mod 8` of row byte
//! `j*W/8 + b/8` (bytes past the row, in a partial last word, are zero), so one counting pass over
//! the (sampled) rows serves every width and threshold. Each width then needs one more pass that
//! sizes every row under the whole threshold sweep at once (the sweep's masks are nested), unless
//! a lower bound shows the width cannot win. A raw chunk (spec 5.5) competes too.
//!
//! Memory: about 200 bytes per row byte at most (bit counters and per-position tables), whatever
//! the row count; a chunk of at most two rows is written raw without analysis, since masks cost
//! as much as two rows.

use crate::options::EncodeOptions;
use ibp_format::{ChunkMeta, WordWidth, CHUNK_HEADER_LEN};
use rayon::prelude::*;

/// What the encoder will write for one chunk: word width, Mask/Bitval per group and group ids.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkPlan {
    /// Word width `W`.
    pub word_width: WordWidth,
    /// `Mask[g][j]` at `g * n + j` (low `W` bits used).
    pub masks: Vec<u64>,
    /// `Bitval[g][j]` at `g * n + j`; always a subset of the mask.
    pub bitvals: Vec<u64>,
    /// Number of groups `G`.
    pub group_count: u32,
    /// Group of each row of the chunk; empty when `G == 1`.
    pub group_ids: Vec<u8>,
    /// The threshold the masks were derived with (1.0 = exact; [`POSITION_OPTIMUM`] = chosen per
    /// word position by [`crate::position_masks`]).
    pub threshold: f64,
    /// Estimated chunk size in bytes (header, metadata and payload; exact when every row was
    /// analysed, scaled from the sample otherwise; padding before the payload not counted).
    pub estimated_bytes: u64,
}

impl ChunkPlan {
    /// A one-group plan with the given masks and bitvals (`bitval` is cut to the mask).
    pub fn single_group(word_width: WordWidth, masks: Vec<u64>, bitvals: Vec<u64>) -> ChunkPlan {
        let full = word_width.full_mask();
        let masks: Vec<u64> = masks.into_iter().map(|m| m & full).collect();
        let bitvals = bitvals.iter().zip(&masks).map(|(b, m)| b & m).collect();
        ChunkPlan {
            word_width,
            masks,
            bitvals,
            group_count: 1,
            group_ids: Vec::new(),
            threshold: 1.0,
            estimated_bytes: 0,
        }
    }

    /// A raw-chunk plan (spec 5.5: `G = 0`, no masks, every row stored raw) for `row_count` rows,
    /// with its exact size as the estimate.
    pub fn raw_chunk(word_width: WordWidth, row_count: u64, row_bytes: usize, align: u64) -> ChunkPlan {
        let n = crate::row::words_per_row(row_bytes, word_width) as u64;
        let meta = ChunkMeta::meta_len_for(word_width, 0, n, row_count, 1).unwrap_or(u64::MAX);
        let payload = crate::row::raw_padded(row_bytes as u64, align).saturating_mul(row_count);
        ChunkPlan {
            word_width,
            masks: Vec::new(),
            bitvals: Vec::new(),
            group_count: 0,
            group_ids: Vec::new(),
            threshold: 1.0,
            estimated_bytes: CHUNK_HEADER_LEN.saturating_add(meta).saturating_add(payload),
        }
    }

    /// Whether this plans a raw chunk (`G = 0`).
    pub fn is_raw_chunk(&self) -> bool {
        self.group_count == 0
    }

    /// Group of row `i` (0 when `G <= 1`).
    pub fn group_of(&self, row: usize) -> usize {
        if self.group_count <= 1 {
            0
        } else {
            self.group_ids[row] as usize
        }
    }
}

/// Chooses the plan for one chunk of `rows.len() / row_bytes` rows.
///
/// Tries every candidate width and threshold of `opts` and keeps the smallest real size (ties:
/// the widest width, then the highest threshold, whose Mask is the smallest: at A = 128 padding
/// often makes several thresholds tie, and a lower one's extra Mask bits split free bits into more
/// runs, which the GPU kernels decode slower, bench/GPU_NOTES.md entry 26). A width is skipped without sizing its rows when
/// even rows whose every word matched could not beat the best size found so far. With one group,
/// a raw chunk (spec 5.5, `G = 0`) is chosen instead when it is no larger (incompressible or tiny
/// data). With one group and `opts.fewer_runs_within`, positions of more than two runs of free bits
/// are then merged where that costs at most that share of the size ([`crate::free_runs`]). With
/// `opts.groups = k > 1` the rows are then split into exactly `k` groups (see [`plan_groups`]);
/// `opts.groups = 0` gives a raw chunk without analysis.
///
/// # Panics
/// If `row_bytes` is 0 or does not divide `rows.len()`, or there are no rows, or `opts` is not
/// valid for `row_bytes` ([`EncodeOptions::validate`]).
pub fn plan_chunk(rows: &[u8], row_bytes: usize, opts: &EncodeOptions) -> ChunkPlan {
    assert!(row_bytes > 0 && rows.len().is_multiple_of(row_bytes) && !rows.is_empty());
    opts.validate(row_bytes as u64).expect("plan_chunk needs valid options");
    let row_count = rows.len() / row_bytes;
    if opts.groups == 0 {
        // Raw chunks asked for: nothing to analyse.
        let w = opts.word_width.unwrap_or(WordWidth::W8);
        return ChunkPlan::raw_chunk(w, row_count as u64, row_bytes, 1u64 << opts.align_log2);
    }
    let align = 1u64 << opts.align_log2;
    let raw = ChunkPlan::raw_chunk(
        opts.word_width.unwrap_or(WordWidth::W8),
        row_count as u64,
        row_bytes,
        align,
    );
    if opts.groups == 1 && coded_lower_bound(row_count as u64, row_bytes, align) >= raw.estimated_bytes {
        // Too few rows for masks to pay for themselves (they cost about two rows): no analysis.
        return raw;
    }
    let sample = sample_rows(row_count, opts.sample_fraction);
    let counts = count_bits(rows, row_bytes, &sample);
    let thresholds = opts.candidate_thresholds();

    // The per-position optimum is estimated from at most OPT_SAMPLE_ROWS evenly strided analysed
    // rows (its masks are then sized on every analysed row like the sweep's).
    let opt_sample = (opts.threshold.is_none() && sample.len() > OPT_SAMPLE_ROWS).then(|| {
        let sub: Vec<usize> = (0..OPT_SAMPLE_ROWS)
            .map(|i| sample[i * sample.len() / OPT_SAMPLE_ROWS])
            .collect();
        let sub_counts = count_bits(rows, row_bytes, &sub);
        (sub, sub_counts)
    });
    let mut best: Option<ChunkPlan> = None;
    // The smallest 64-bit plan, for `opts.prefer_wide_words` (64-bit words are sized first).
    let mut best_wide: Option<ChunkPlan> = None;
    // Widest first: wide words are the cheapest to size, and the size they reach often proves,
    // by a lower bound alone, that narrower words cannot win.
    for w in opts.candidate_widths().into_iter().rev() {
        let candidates: Vec<(Vec<u64>, Vec<u64>)> = thresholds
            .iter()
            .map(|&t| masks_from_counts(&counts, sample.len() as u64, w, t))
            .collect();
        // With the threshold left to the analysis, the per-position optimum competes too.
        let optimal = if opts.threshold.is_none() {
            match &opt_sample {
                Some((sub, sub_counts)) => crate::position_masks::optimal_masks(rows, row_bytes, sub, sub_counts, w),
                None => crate::position_masks::optimal_masks(rows, row_bytes, &sample, &counts, w),
            }
        } else {
            None
        };
        if let Some(b) = &best {
            let mut bound = size_lower_bound(&candidates, row_count as u64, w, row_bytes, align);
            if let Some(opt) = &optimal {
                let opt_bound = size_lower_bound(std::slice::from_ref(opt), row_count as u64, w, row_bytes, align);
                bound = bound.min(opt_bound);
            }
            if bound >= b.estimated_bytes {
                continue;
            }
        }
        let mut pairs = candidates;
        let mut labels = thresholds.clone();
        if let Some(opt) = optimal {
            pairs.push(opt);
            labels.push(POSITION_OPTIMUM);
        }
        // One pass for every candidate where the byte tables take them all; otherwise the sweep
        // (nested) and the optimum are sized in separate passes.
        let sizes = if ByteMatchSizing::takes(pairs.len(), row_bytes) {
            size_candidates(rows, row_bytes, &sample, w, align, &pairs)
        } else {
            let split = thresholds.len().min(pairs.len());
            let mut sizes = size_candidates(rows, row_bytes, &sample, w, align, &pairs[..split]);
            if split < pairs.len() {
                sizes.extend(size_candidates(rows, row_bytes, &sample, w, align, &pairs[split..]));
            }
            sizes
        };
        for ((size, threshold), (masks, bitvals)) in sizes.into_iter().zip(labels).zip(pairs) {
            let bytes = size.estimate(row_count as u64, 1, w, row_bytes, align);
            // Ties within one width go to the higher threshold (its Mask is a subset of a lower
            // one's, so its free bits form fewer, longer runs; the per-position optimum never
            // wins a tie).
            let better = |b: &ChunkPlan| {
                bytes < b.estimated_bytes
                    || (bytes == b.estimated_bytes
                        && b.word_width == w
                        && threshold != POSITION_OPTIMUM
                        && threshold > b.threshold)
            };
            if best.as_ref().is_none_or(better) {
                best = Some(ChunkPlan {
                    word_width: w,
                    masks,
                    bitvals,
                    group_count: 1,
                    group_ids: Vec::new(),
                    threshold,
                    estimated_bytes: bytes,
                });
            }
        }
        if w == WordWidth::W64 {
            best_wide = best.clone();
        }
    }
    let mut best = best.expect("there is at least one candidate width");
    if let (Some(within), Some(wide)) = (opts.prefer_wide_words, best_wide) {
        // 64-bit words unless they cost more than `within` of the raw bytes.
        let slack = (within * rows.len() as f64) as u64;
        if wide.estimated_bytes <= best.estimated_bytes.saturating_add(slack) {
            best = wide;
        }
    }
    if opts.groups > 1 {
        return plan_groups(rows, row_bytes, &sample, best, opts.groups, align, &thresholds);
    }
    if let Some(within) = opts.fewer_runs_within {
        best = fewer_runs(rows, row_bytes, &sample, best, within, align);
    }
    // A raw chunk (spec 5.5: no masks, every row raw) when the masks cost more than they save.
    let raw = ChunkPlan::raw_chunk(best.word_width, row_count as u64, row_bytes, align);
    if raw.estimated_bytes <= best.estimated_bytes {
        raw
    } else {
        best
    }
}

/// `plan` (one group) with every position's free bits merged into at most two runs, else at most
/// three ([`crate::free_runs::merge_free_runs`]), where that makes its estimated size at most
/// `within` times larger; otherwise `plan` itself. (The estimate comes from the analysed rows, as the
/// plan's own does.)
fn fewer_runs(rows: &[u8], row_bytes: usize, sample: &[usize], plan: ChunkPlan, within: f64, align: u64) -> ChunkPlan {
    let w = plan.word_width;
    let most = crate::free_runs::most_free_runs(&plan.masks, w);
    let row_count = (rows.len() / row_bytes) as u64;
    let limit = plan
        .estimated_bytes
        .saturating_add((within * plan.estimated_bytes as f64) as u64);
    for runs in [2, 3] {
        if most <= runs {
            break;
        }
        let merged: (Vec<u64>, Vec<u64>) = plan
            .masks
            .iter()
            .zip(&plan.bitvals)
            .map(|(&m, &b)| crate::free_runs::merge_free_runs(m, b, w, runs))
            .unzip();
        let candidates = [merged];
        let bytes = size_candidates(rows, row_bytes, sample, w, align, &candidates)[0]
            .estimate(row_count, 1, w, row_bytes, align);
        if bytes <= limit {
            let [(masks, bitvals)] = candidates;
            return ChunkPlan {
                masks,
                bitvals,
                estimated_bytes: bytes,
                ..plan
            };
        }
    }
    plan
}

/// Most rows the per-position optimum is estimated from (a strided subset of the analysed rows).
const OPT_SAMPLE_ROWS: usize = 4_096;

/// [`ChunkPlan::threshold`] of a plan whose masks are the per-position optimum
/// ([`crate::position_masks`]) rather than one threshold's.
pub const POSITION_OPTIMUM: f64 = 0.0;

/// The rows the analysis looks at: all rows, or `max(ceil(f*N), min(N, 64))` evenly strided rows.
pub fn sample_rows(row_count: usize, fraction: Option<f64>) -> Vec<usize> {
    let wanted = match fraction {
        None => row_count,
        Some(f) => ((f * row_count as f64).ceil() as usize)
            .max(row_count.min(64))
            .min(row_count),
    };
    if wanted >= row_count {
        return (0..row_count).collect();
    }
    (0..wanted)
        .map(|i| (i as u128 * row_count as u128 / wanted as u128) as usize)
        .collect()
}

/// Per-bit set counts: `counts[byte * 8 + bit]` is the number of analysed rows whose byte `byte`
/// has bit `bit` set.
pub fn count_bits(rows: &[u8], row_bytes: usize, which: &[usize]) -> Vec<u32> {
    /// Rows wider than this are counted in column stripes (one counter array in all, 32 bytes
    /// per row byte); narrower ones in runs of rows, each run with its own counters.
    const WIDE: usize = 64 << 10;
    /// Bytes per column stripe.
    const STRIPE: usize = 8 << 10;
    if row_bytes > WIDE {
        let mut counts = vec![0u32; row_bytes * 8];
        counts
            .par_chunks_mut(STRIPE * 8)
            .enumerate()
            .for_each(|(stripe, counts)| {
                let start = stripe * STRIPE;
                let end = (start + STRIPE).min(row_bytes);
                count_bits_into(counts, rows, row_bytes, which, start..end);
            });
        return counts;
    }
    // Narrow rows: runs of rows per task, each with its own (small) counters, summed.
    let rows_per_task = ((1usize << 18) / row_bytes).max(1);
    which
        .par_chunks(rows_per_task)
        .map(|part| {
            let mut counts = vec![0u32; row_bytes * 8];
            count_bits_into(&mut counts, rows, row_bytes, part, 0..row_bytes);
            counts
        })
        .reduce_with(|mut a, b| {
            a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
            a
        })
        .unwrap_or_else(|| vec![0u32; row_bytes * 8])
}

/// Adds the bit counts of bytes `cols` of the rows `which` into `counts` (indexed from
/// `cols.start`), eight byte lanes per `u64` (each lane counts one bit of one byte position,
/// flushed every 255 rows).
fn count_bits_into(counts: &mut [u32], rows: &[u8], row_bytes: usize, which: &[usize], cols: std::ops::Range<usize>) {
    const LANES: u64 = 0x0101_0101_0101_0101;
    let width = cols.len();
    let blocks = width.div_ceil(8);
    let mut acc = vec![0u64; blocks * 8];
    let flush = |acc: &mut [u64], counts: &mut [u32]| {
        for blk in 0..blocks {
            for b in 0..8 {
                let lanes = acc[blk * 8 + b];
                for lane in 0..8 {
                    let byte = blk * 8 + lane;
                    if byte < width {
                        counts[byte * 8 + b] += ((lanes >> (8 * lane)) & 0xFF) as u32;
                    }
                }
            }
        }
        acc.fill(0);
    };
    for (done, &r) in which.iter().enumerate() {
        let row = &rows[r * row_bytes + cols.start..r * row_bytes + cols.end];
        let mut chunks = row.chunks_exact(8);
        for (blk, c) in chunks.by_ref().enumerate() {
            let x = u64::from_le_bytes(c.try_into().expect("8 bytes"));
            let a = &mut acc[blk * 8..blk * 8 + 8];
            for (b, slot) in a.iter_mut().enumerate() {
                *slot += (x >> b) & LANES;
            }
        }
        let tail = chunks.remainder();
        if !tail.is_empty() {
            let blk = width / 8;
            let x = crate::row::read_word_le(tail);
            for b in 0..8 {
                acc[blk * 8 + b] += (x >> b) & LANES;
            }
        }
        if done % 255 == 254 {
            flush(&mut acc, counts);
        }
    }
    flush(&mut acc, counts);
}

/// Mask/Bitval for `w`-bit words from bit counts over `n_rows` rows at threshold `t`: a bit is
/// invariant-1 if set in more than `t * n_rows` rows, invariant-0 if set in fewer than
/// `(1 - t) * n_rows`; `t >= 1` means exact (set in all rows / in none). No rows: Mask 0.
pub fn masks_from_counts(counts: &[u32], n_rows: u64, w: WordWidth, t: f64) -> (Vec<u64>, Vec<u64>) {
    let bits = w.bits() as usize;
    let row_bytes = counts.len() / 8;
    let n = crate::row::words_per_row(row_bytes, w);
    let mut masks = vec![0u64; n];
    let mut bitvals = vec![0u64; n];
    if n_rows == 0 {
        return (masks, bitvals);
    }
    // For whole counts `c`: `c > x` iff `c >= floor(x) + 1`, and `c < y` iff `c < ceil(y)`.
    let rows = n_rows as f64;
    let (one_from, zero_below) = if t >= 1.0 {
        (n_rows, 1)
    } else {
        ((t * rows).floor() as u64 + 1, ((1.0 - t) * rows).ceil() as u64)
    };
    // Bit `b` of word `j` is bit `b % 8` of row byte `j * W/8 + b / 8`: count `j * W + b`.
    masks
        .par_chunks_mut(4096)
        .zip(bitvals.par_chunks_mut(4096))
        .enumerate()
        .for_each(|(block, (masks, bitvals))| {
            for (i, (mask, bitval)) in masks.iter_mut().zip(bitvals.iter_mut()).enumerate() {
                let first = (block * 4096 + i) * bits;
                let word_counts = &counts[first.min(counts.len())..(first + bits).min(counts.len())];
                let (mut m, mut v) = (0u64, 0u64);
                for (b, &c) in word_counts.iter().enumerate() {
                    let one = c as u64 >= one_from;
                    let zero = (c as u64) < zero_below;
                    m |= ((one | zero) as u64) << b;
                    v |= (one as u64) << b;
                }
                // Bytes past the row (a partial last word, spec 2.4) are always zero: invariant-0.
                for b in word_counts.len()..bits {
                    m |= ((0 < zero_below) as u64) << b;
                }
                *mask = m;
                *bitval = v;
            }
        });
    (masks, bitvals)
}

/// Sizes of the analysed rows under one candidate: payload bytes and the record-length range
/// (which decides the row-length field width).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SizeTally {
    rows: u64,
    payload: u64,
    min_len: u64,
    max_len: u64,
}

impl SizeTally {
    fn new() -> SizeTally {
        SizeTally {
            rows: 0,
            payload: 0,
            min_len: u64::MAX,
            max_len: 0,
        }
    }

    fn add(&mut self, len: u64) {
        self.rows += 1;
        self.payload += len;
        self.min_len = self.min_len.min(len);
        self.max_len = self.max_len.max(len);
    }

    fn merge(mut self, o: SizeTally) -> SizeTally {
        self.rows += o.rows;
        self.payload += o.payload;
        self.min_len = self.min_len.min(o.min_len);
        self.max_len = self.max_len.max(o.max_len);
        self
    }

    /// Estimated chunk bytes for `row_count` rows (the payload scaled from the analysed rows).
    fn estimate(&self, row_count: u64, groups: u64, w: WordWidth, row_bytes: usize, align: u64) -> u64 {
        if self.rows == 0 {
            return u64::MAX;
        }
        let payload =
            ((self.payload as u128 * row_count as u128).div_ceil(self.rows as u128)).min(u64::MAX as u128) as u64;
        let length_bytes = length_field_bytes((self.max_len - self.min_len.min(self.max_len)) / align);
        let n = crate::row::words_per_row(row_bytes, w) as u64;
        let meta = ChunkMeta::meta_len_for(w, groups, n, row_count, length_bytes).unwrap_or(u64::MAX);
        CHUNK_HEADER_LEN.saturating_add(meta).saturating_add(payload)
    }
}

/// A lower bound of the chunk size under every candidate of one width: each row costs at least
/// `T_min = n + sum_j (W - popcount(Mask[j]))` bits (all words matching), so at least
/// `min(align_up(ceil(T_min / 8), A), raw)` bytes, and the row-length fields at least 1 byte.
fn size_lower_bound(
    candidates: &[(Vec<u64>, Vec<u64>)],
    row_count: u64,
    w: WordWidth,
    row_bytes: usize,
    align: u64,
) -> u64 {
    let n = crate::row::words_per_row(row_bytes, w) as u64;
    let raw = crate::row::raw_padded(row_bytes as u64, align);
    let meta = ChunkMeta::meta_len_for(w, 1, n, row_count, 1).unwrap_or(u64::MAX);
    candidates
        .iter()
        .map(|(masks, _)| {
            let t_min: u64 = n + masks.iter().map(|m| (w.bits() - m.count_ones()) as u64).sum::<u64>();
            let row = crate::row::coded_len(t_min, align).min(raw);
            CHUNK_HEADER_LEN
                .saturating_add(meta)
                .saturating_add(row.saturating_mul(row_count))
        })
        .min()
        .unwrap_or(0)
}

/// A lower bound of any chunk with masks (`G >= 1`) for `row_count` rows: its Mask and Bitval
/// words take at least `2 * row_bytes` bytes, and every coded row at least one participation bit
/// per 64-bit word.
fn coded_lower_bound(row_count: u64, row_bytes: usize, align: u64) -> u64 {
    let fewest_words = row_bytes.div_ceil(8) as u64;
    let row = crate::row::coded_len(fewest_words, align).min(crate::row::raw_padded(row_bytes as u64, align));
    CHUNK_HEADER_LEN
        .saturating_add(2 * row_bytes as u64)
        .saturating_add(row_count)
        .saturating_add(row.saturating_mul(row_count))
}

/// Width of a row-length field for record lengths spread over `span` units of `A`.
fn length_field_bytes(span: u64) -> u64 {
    if span <= u8::MAX as u64 {
        1
    } else if span <= u16::MAX as u64 {
        2
    } else {
        4
    }
}

/// One group's Mask/Bitval prepared for sizing rows: per position the mask, the bitval and the
/// free-bit count.
pub(crate) struct SizingTable {
    masks: Vec<u64>,
    bitvals: Vec<u64>,
    free: Vec<u8>,
    w: WordWidth,
    raw: u64,
    align: u64,
}

impl SizingTable {
    pub(crate) fn new(masks: &[u64], bitvals: &[u64], w: WordWidth, row_bytes: usize, align: u64) -> Self {
        let full = w.full_mask();
        SizingTable {
            masks: masks.iter().map(|m| m & full).collect(),
            bitvals: bitvals.iter().zip(masks).map(|(b, m)| b & m & full).collect(),
            free: masks
                .iter()
                .map(|m| (w.bits() - (m & full).count_ones()) as u8)
                .collect(),
            w,
            raw: crate::row::raw_padded(row_bytes as u64, align),
            align,
        }
    }

    /// Record length of a row given as words.
    pub(crate) fn record_len_of_words(&self, words: &[u64]) -> u64 {
        self.size_of_words(words).0
    }

    /// Record length and coded bits `T` of a row given as words.
    pub(crate) fn size_of_words(&self, words: &[u64]) -> (u64, u64) {
        let wbits = self.w.bits() as u64;
        let mut t = words.len() as u64;
        for (j, &v) in words.iter().enumerate() {
            t += if v & self.masks[j] == self.bitvals[j] {
                self.free[j] as u64
            } else {
                wbits
            };
        }
        let coded = crate::row::coded_len(t, self.align);
        (coded.min(self.raw), t)
    }
}

/// Fills `words` with the words of `row`.
pub(crate) fn load_words(row: &[u8], w: WordWidth, words: &mut Vec<u64>) {
    words.clear();
    let whole = row.len() / w.bytes() * w.bytes();
    match w {
        WordWidth::W8 => words.extend(row.iter().map(|&b| b as u64)),
        WordWidth::W16 => words.extend(
            row[..whole]
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]) as u64),
        ),
        WordWidth::W32 => words.extend(
            row[..whole]
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")) as u64),
        ),
        WordWidth::W64 => words.extend(
            row[..whole]
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))),
        ),
    }
    if whole < row.len() {
        // A partial last word (spec 2.4), zero-extended.
        words.push(crate::row::read_word_le(&row[whole..]));
    }
}

/// Most candidates [`NestedSizing`] sizes in one pass (the default sweep has 7).
const MAX_NESTED: usize = 7;

/// Per word position: what [`NestedSizing`] needs, packed together.
#[derive(Debug, Clone, Copy)]
struct NestedPosition {
    /// `Mask[0][j]` and `Bitval[0][j]` of the first (largest) candidate.
    mask: u64,
    bitval: u64,
    /// Bit planes of each mask bit's level: bit `b` of `levels[i]` is bit `i` of the number of
    /// candidates whose mask contains bit `b`.
    levels: [u64; 3],
    /// `popcount(Mask[k][j])` in 16-bit lane `k`.
    saved: u128,
}

/// Sizes rows under up to 7 nested candidates at once.
///
/// The sweep's masks are nested: a bit invariant at a higher threshold is invariant, with the
/// same value, at every lower one (`c > t'N` implies `c > tN` for `t' > t`, and likewise for
/// invariant-0). So a word matches candidate `k` iff every bit where it differs from Bitval[0]
/// lies in fewer than `k + 1` masks: the first candidate it matches is the largest "level" among
/// its differing bits, found with three bit-plane tests. It then saves `popcount(Mask[k][j])` bits
/// in every candidate `k` from there on: one masked add of eight 16-bit lanes.
struct NestedSizing {
    n: u64,
    wbits: u64,
    raw: u64,
    align: u64,
    positions: Vec<NestedPosition>,
}

/// `LANES_FROM[k]`: all ones in the 16-bit lanes `k..8`.
const LANES_FROM: [u128; 8] = {
    let mut t = [0u128; 8];
    let mut k = 0;
    while k < 8 {
        t[k] = u128::MAX << (16 * k);
        k += 1;
    }
    t
};

impl NestedSizing {
    /// `None` if the candidates are not nested (or too many).
    fn new(candidates: &[(Vec<u64>, Vec<u64>)], w: WordWidth, row_bytes: usize, align: u64) -> Option<Self> {
        let count = candidates.len();
        if count == 0 || count > MAX_NESTED {
            return None;
        }
        let n = crate::row::words_per_row(row_bytes, w);
        for pair in candidates.windows(2) {
            let ((ma, ba), (mb, bb)) = (&pair[0], &pair[1]);
            for j in 0..n {
                // Later masks must be subsets, with the same values.
                if mb[j] & !ma[j] != 0 || bb[j] != ba[j] & mb[j] {
                    return None;
                }
            }
        }
        let positions: Vec<NestedPosition> = (0..n)
            .into_par_iter()
            .map(|j| {
                let mut levels = [0u64; 3];
                let mut saved = 0u128;
                for (k, (m, _)) in candidates.iter().enumerate() {
                    saved |= (m[j].count_ones() as u128) << (16 * k);
                    // Bit-sliced increment of every bit's level where this mask has the bit
                    // (at most 7 candidates: three planes never overflow).
                    let carry0 = levels[0] & m[j];
                    levels[0] ^= m[j];
                    let carry1 = levels[1] & carry0;
                    levels[1] ^= carry0;
                    levels[2] ^= carry1;
                }
                NestedPosition {
                    mask: candidates[0].0[j],
                    bitval: candidates[0].1[j],
                    levels,
                    saved,
                }
            })
            .collect();
        Some(NestedSizing {
            n: n as u64,
            wbits: w.bits() as u64,
            raw: crate::row::raw_padded(row_bytes as u64, align),
            align,
            positions,
        })
    }

    /// The first candidate a word matches, from the bits where it differs from `Bitval[0]` inside
    /// `Mask[0]`: the largest level among them (three bit-plane tests).
    fn first_match(p: &NestedPosition, v: u64) -> usize {
        let mut diff = (v ^ p.bitval) & p.mask;
        let mut first_match = 0usize;
        for i in (0..3).rev() {
            let high = diff & p.levels[i];
            let hit = high != 0;
            first_match |= (hit as usize) << i;
            diff = if hit { high } else { diff };
        }
        first_match
    }

    /// Adds the record length of `words` under every candidate to `tallies`.
    fn add_row(&self, words: &[u64], tallies: &mut [SizeTally]) {
        let mut saved = [0u64; 8];
        for (part_words, part_pos) in words.chunks(1023).zip(self.positions.chunks(1023)) {
            // At most 1023 words of at most 64 saved bits: no 16-bit lane overflows.
            let mut lanes = 0u128;
            for (&v, p) in part_words.iter().zip(part_pos) {
                lanes += p.saved & LANES_FROM[Self::first_match(p, v)];
            }
            for (k, s) in saved.iter_mut().enumerate() {
                *s += ((lanes >> (16 * k)) & 0xFFFF) as u64;
            }
        }
        add_record_lengths(tallies, &saved, self.n * (1 + self.wbits), self.align, self.raw);
    }
}

/// Adds one row's record length under each candidate `k` to `tallies[k]`: `plain` bits (every
/// word unmatched) less the `saved[k]` bits of its matching words, coded (spec 6.2) and capped at
/// the raw length.
fn add_record_lengths(tallies: &mut [SizeTally], saved: &[u64; 8], plain: u64, align: u64, raw: u64) {
    for (tally, &s) in tallies.iter_mut().zip(saved) {
        tally.add(crate::row::coded_len(plain - s, align).min(raw));
    }
}

/// Most candidates [`ByteMatchSizing`] sizes in one pass (the sweep's 7 and the per-position optimum).
pub(crate) const MAX_BYTE_CANDIDATES: usize = 8;

/// Largest row [`ByteMatchSizing`] takes (its tables hold 256 bytes per byte of a row).
pub(crate) const MAX_BYTE_MATCH_ROW: usize = 4096;

/// `EXPAND[set]`: all ones in the 16-bit lanes `k` whose bit `k` is set in `set`.
const EXPAND: [u128; 256] = {
    let mut t = [0u128; 256];
    let mut set = 0;
    while set < 256 {
        let mut k = 0;
        while k < 8 {
            if set & (1 << k) != 0 {
                t[set] |= 0xFFFFu128 << (16 * k);
            }
            k += 1;
        }
        set += 1;
    }
    t
};

/// Sizes rows under up to 8 candidates at once, nested or not, through per-byte match tables:
/// byte `i` of a row with value `v` agrees with candidate `k` when `v` equals candidate `k`'s
/// Bitval on candidate `k`'s Mask bits of that byte. A word matches candidate `k` when every one of
/// its bytes does (an AND of the bytes' sets; a partial last word's missing bytes read as 0, as
/// spec 2.4 zero-extends), and then saves `popcount(Mask[k][j])` bits: one masked add of eight
/// 16-bit lanes per word.
struct ByteMatchSizing {
    n: usize,
    word_bytes: usize,
    wbits: u64,
    raw: u64,
    align: u64,
    /// `sets[i * 256 + v]` for byte `i` of a row (`i < n * W/8`: a partial last word's missing
    /// bytes included).
    sets: Vec<u8>,
    /// Per position: `popcount(Mask[k][j])` in 16-bit lane `k`.
    saved: Vec<u128>,
}

impl ByteMatchSizing {
    /// Whether the tables take `count` candidates over rows of `row_bytes` bytes.
    fn takes(count: usize, row_bytes: usize) -> bool {
        count <= MAX_BYTE_CANDIDATES && row_bytes <= MAX_BYTE_MATCH_ROW
    }

    /// `None` when there are more than [`MAX_BYTE_CANDIDATES`] candidates, none, or rows wider than
    /// [`MAX_BYTE_MATCH_ROW`].
    fn new(candidates: &[(Vec<u64>, Vec<u64>)], w: WordWidth, row_bytes: usize, align: u64) -> Option<Self> {
        if candidates.is_empty() || !Self::takes(candidates.len(), row_bytes) {
            return None;
        }
        let n = crate::row::words_per_row(row_bytes, w);
        let wb = w.bytes();
        let full = w.full_mask();
        let mut sets = vec![0u8; n * wb * 256];
        let mut saved = vec![0u128; n];
        for j in 0..n {
            for (k, (masks, bitvals)) in candidates.iter().enumerate() {
                let m = masks[j] & full;
                saved[j] |= (m.count_ones() as u128) << (16 * k);
                for b in 0..wb {
                    let mb = (m >> (8 * b)) as u8;
                    let bb = (bitvals[j] >> (8 * b)) as u8 & mb;
                    let table = &mut sets[(j * wb + b) * 256..(j * wb + b + 1) * 256];
                    for (v, set) in table.iter_mut().enumerate() {
                        if v as u8 & mb == bb {
                            *set |= 1 << k;
                        }
                    }
                }
            }
        }
        Some(ByteMatchSizing {
            n,
            word_bytes: wb,
            wbits: w.bits() as u64,
            raw: crate::row::raw_padded(row_bytes as u64, align),
            align,
            sets,
            saved,
        })
    }

    /// Adds the record length of `row` under every candidate to `tallies`.
    fn add_row(&self, row: &[u8], tallies: &mut [SizeTally]) {
        let wb = self.word_bytes;
        let set_of = |i: usize, v: u8| self.sets[i * 256 + v as usize];
        let full_words = row.len() / wb;
        let mut saved = [0u64; 8];
        for start in (0..self.n).step_by(1023) {
            // At most 1023 words of at most 64 saved bits: no 16-bit lane overflows. Set bits of
            // candidates past `count` select lanes whose saved bits are 0.
            let mut lanes = 0u128;
            for j in start..(start + 1023).min(self.n) {
                let mut set = 0xFFu8;
                if j < full_words {
                    for (b, &v) in row[j * wb..(j + 1) * wb].iter().enumerate() {
                        set &= set_of(j * wb + b, v);
                    }
                } else {
                    for b in 0..wb {
                        set &= set_of(j * wb + b, row.get(j * wb + b).copied().unwrap_or(0));
                    }
                }
                lanes += self.saved[j] & EXPAND[set as usize];
            }
            for (k, s) in saved.iter_mut().enumerate() {
                *s += ((lanes >> (16 * k)) & 0xFFFF) as u64;
            }
        }
        add_record_lengths(tallies, &saved, self.n as u64 * (1 + self.wbits), self.align, self.raw);
    }
}

/// Sizes the analysed rows under every candidate Mask/Bitval of one width, in one pass.
fn size_candidates(
    rows: &[u8],
    row_bytes: usize,
    which: &[usize],
    w: WordWidth,
    align: u64,
    candidates: &[(Vec<u64>, Vec<u64>)],
) -> Vec<SizeTally> {
    // Small rows: per-byte match tables, any candidates. Otherwise the nested bit-plane path, and
    // one table per candidate when the candidates are not nested.
    let by_bytes = ByteMatchSizing::new(candidates, w, row_bytes, align);
    let nested = match by_bytes {
        Some(_) => None,
        None => NestedSizing::new(candidates, w, row_bytes, align),
    };
    let tables: Vec<SizingTable> = if nested.is_some() || by_bytes.is_some() {
        Vec::new()
    } else {
        candidates
            .iter()
            .map(|(m, b)| SizingTable::new(m, b, w, row_bytes, align))
            .collect()
    };
    let rows_per_task = ((1usize << 18) / row_bytes).max(1);
    which
        .par_chunks(rows_per_task)
        .map(|part| {
            let mut tallies = vec![SizeTally::new(); candidates.len()];
            let mut words = Vec::new();
            for &r in part {
                let row = &rows[r * row_bytes..(r + 1) * row_bytes];
                if let Some(bytes) = &by_bytes {
                    bytes.add_row(row, &mut tallies);
                    continue;
                }
                load_words(row, w, &mut words);
                match &nested {
                    Some(nested) => nested.add_row(&words, &mut tallies),
                    None => {
                        for (tally, table) in tallies.iter_mut().zip(&tables) {
                            tally.add(table.record_len_of_words(&words));
                        }
                    }
                }
            }
            tallies
        })
        .reduce_with(|a, b| a.into_iter().zip(b).map(|(x, y)| x.merge(y)).collect())
        .unwrap_or_else(|| vec![SizeTally::new(); candidates.len()])
}

/// Splits the rows into exactly `k` groups, Lloyd style, starting from `base` (the best one-group
/// plan, whose width and threshold are kept).
///
/// Initial groups: the analysed rows sorted by their coded size under `base` (ties by row index)
/// and cut into `k` equal runs. Then, a few times: masks per group from its rows' bit counts at the
/// threshold, and every analysed row moved to the group that codes it smallest (ties: lowest group).
/// With several `thresholds`, each group then keeps the one that codes its rows smallest (so
/// groups may use different thresholds; [`ChunkPlan::threshold`] reports `base`'s). Finally every
/// row of the chunk gets the group that codes it smallest. Groups left without rows get Mask 0
/// and Bitval 0.
pub fn plan_groups(
    rows: &[u8],
    row_bytes: usize,
    sample: &[usize],
    base: ChunkPlan,
    k: u32,
    align: u64,
    thresholds: &[f64],
) -> ChunkPlan {
    const ITERATIONS: usize = 6;
    let w = base.word_width;
    let t = base.threshold;
    let k = k as usize;
    let n = crate::row::words_per_row(row_bytes, w);
    let table = SizingTable::new(&base.masks, &base.bitvals, w, row_bytes, align);

    // Initial split by coded size.
    let mut words = Vec::new();
    let mut order: Vec<(u64, usize)> = sample
        .iter()
        .enumerate()
        .map(|(s, &r)| {
            load_words(&rows[r * row_bytes..(r + 1) * row_bytes], w, &mut words);
            (table.record_len_of_words(&words), s)
        })
        .collect();
    order.sort_unstable();
    let mut assign = vec![0usize; sample.len()];
    for (pos, &(_, s)) in order.iter().enumerate() {
        assign[s] = pos * k / order.len().max(1);
    }

    let mut masks = vec![0u64; k * n];
    let mut bitvals = vec![0u64; k * n];
    for _ in 0..ITERATIONS {
        // Masks per group from its rows.
        for g in 0..k {
            let members = members_of(sample, &assign, g);
            let (m, b) = group_masks(rows, row_bytes, &members, w, t);
            masks[g * n..(g + 1) * n].copy_from_slice(&m);
            bitvals[g * n..(g + 1) * n].copy_from_slice(&b);
        }
        let tables = group_tables(&masks, &bitvals, k, n, w, row_bytes, align);
        let next: Vec<usize> = sample
            .par_iter()
            .map_init(Vec::new, |words, &r| {
                load_words(&rows[r * row_bytes..(r + 1) * row_bytes], w, words);
                best_group(&tables, words).0
            })
            .collect();
        if next == assign {
            break;
        }
        assign = next;
    }

    // Each group then gets the threshold of the sweep that suits its own rows best; this can
    // only shrink the groups' payloads, and the final assignment below only shrinks them further.
    if thresholds.len() > 1 {
        for g in 0..k {
            let members = members_of(sample, &assign, g);
            if members.is_empty() {
                continue;
            }
            let (m, b) = best_group_threshold(rows, row_bytes, &members, w, align, thresholds);
            masks[g * n..(g + 1) * n].copy_from_slice(&m);
            bitvals[g * n..(g + 1) * n].copy_from_slice(&b);
        }
    }

    // Final assignment of every row with the final masks.
    let tables = group_tables(&masks, &bitvals, k, n, w, row_bytes, align);
    let row_count = rows.len() / row_bytes;
    let per_row: Vec<(usize, u64)> = (0..row_count)
        .into_par_iter()
        .map_init(Vec::new, |words, r| {
            load_words(&rows[r * row_bytes..(r + 1) * row_bytes], w, words);
            best_group(&tables, words)
        })
        .collect();
    let mut tally = SizeTally::new();
    for &(_, len) in &per_row {
        tally.add(len);
    }
    ChunkPlan {
        word_width: w,
        masks,
        bitvals,
        group_count: k as u32,
        group_ids: per_row.iter().map(|&(g, _)| g as u8).collect(),
        threshold: t,
        estimated_bytes: tally.estimate(row_count as u64, k as u64, w, row_bytes, align),
    }
}

/// The analysed rows currently assigned to group `g`.
fn members_of(sample: &[usize], assign: &[usize], g: usize) -> Vec<usize> {
    sample
        .iter()
        .zip(assign)
        .filter(|(_, &a)| a == g)
        .map(|(&r, _)| r)
        .collect()
}

fn group_tables(
    masks: &[u64],
    bitvals: &[u64],
    k: usize,
    n: usize,
    w: WordWidth,
    row_bytes: usize,
    align: u64,
) -> Vec<SizingTable> {
    (0..k)
        .map(|g| {
            SizingTable::new(
                &masks[g * n..(g + 1) * n],
                &bitvals[g * n..(g + 1) * n],
                w,
                row_bytes,
                align,
            )
        })
        .collect()
}

/// The group that codes `words` smallest and that record length. Ties on the record length
/// (frequent with a large alignment) go to the fewest coded bits, then to the lowest group.
fn best_group(tables: &[SizingTable], words: &[u64]) -> (usize, u64) {
    let mut best = (0, (u64::MAX, u64::MAX));
    for (g, table) in tables.iter().enumerate() {
        let size = table.size_of_words(words);
        if size < best.1 {
            best = (g, size);
        }
    }
    (best.0, best.1 .0)
}

/// Mask/Bitval of one group from the bit counts of its `members` at threshold `t`.
fn group_masks(rows: &[u8], row_bytes: usize, members: &[usize], w: WordWidth, t: f64) -> (Vec<u64>, Vec<u64>) {
    let counts = count_bits(rows, row_bytes, members);
    if t == POSITION_OPTIMUM {
        if let Some(masks) = crate::position_masks::optimal_masks(rows, row_bytes, members, &counts, w) {
            return masks;
        }
    }
    // The per-position optimum needs rows; without any, the exact rule (Mask 0) applies.
    masks_from_counts(
        &counts,
        members.len() as u64,
        w,
        if t == POSITION_OPTIMUM { 1.0 } else { t },
    )
}

/// For one group: the threshold of `thresholds` whose masks code its `members` in the fewest
/// payload bytes (first on ties), and those masks.
fn best_group_threshold(
    rows: &[u8],
    row_bytes: usize,
    members: &[usize],
    w: WordWidth,
    align: u64,
    thresholds: &[f64],
) -> (Vec<u64>, Vec<u64>) {
    let counts = count_bits(rows, row_bytes, members);
    let candidates: Vec<(Vec<u64>, Vec<u64>)> = thresholds
        .iter()
        .map(|&t| masks_from_counts(&counts, members.len() as u64, w, t))
        .collect();
    let sizes = size_candidates(rows, row_bytes, members, w, align, &candidates);
    let best = (0..candidates.len())
        .min_by_key(|&k| (sizes[k].payload, k))
        .unwrap_or(0);
    candidates.into_iter().nth(best).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exact size ties between thresholds of one width go to the highest threshold (the smallest
    /// Mask, whose free bits form the fewest runs): at A = 128, float rows of 1 KiB code to the same
    /// padded size from several thresholds.
    #[test]
    fn size_ties_go_to_the_highest_threshold() {
        let mut rng = crate::prng::SplitMix64::new(42);
        let mut unit = || ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
        let (rows, row_bytes) = (1024usize, 1024usize);
        let mut data = Vec::with_capacity(rows * row_bytes);
        for _ in 0..rows * row_bytes / 4 {
            // N(0, 0.02) by Box-Muller, 4 low mantissa bits dropped.
            let v = 0.02 * (-2.0 * unit().ln()).sqrt() * (std::f64::consts::TAU * unit()).cos();
            data.extend_from_slice(&((v as f32).to_bits() & !15).to_le_bytes());
        }
        let opts = EncodeOptions {
            align_log2: 7,
            sample_fraction: Some(0.05),
            ..Default::default()
        };
        let best = plan_chunk(&data, row_bytes, &opts);
        let sizes: Vec<(f64, u64)> = crate::options::SWEEP_THRESHOLDS
            .iter()
            .map(|&t| {
                let fixed = EncodeOptions {
                    threshold: Some(t),
                    word_width: Some(best.word_width),
                    ..opts.clone()
                };
                (t, plan_chunk(&data, row_bytes, &fixed).estimated_bytes)
            })
            .collect();
        let smallest = sizes.iter().map(|s| s.1).min().unwrap();
        let tied: Vec<f64> = sizes.iter().filter(|s| s.1 == smallest).map(|s| s.0).collect();
        assert!(tied.len() >= 2, "no tie to break: {sizes:?}");
        assert!(best.estimated_bytes <= smallest);
        if best.threshold != POSITION_OPTIMUM {
            assert_eq!(best.threshold, *tied.last().unwrap(), "sizes {sizes:?}");
        }
    }

    /// `fewer_runs_within`: rows of 64 16-bit words, 60 positions of one run of free bits and 4 of
    /// four (one-bit gaps). Merging those four to three runs costs 4 bits a row, which the record's
    /// last byte holds (356 -> 360 bits, 45 bytes either way); to two runs 8 bits, a byte more (about
    /// 2 %). Within 0.1 % the plan takes three runs at no cost, within 5 % two; both encode
    /// losslessly.
    #[test]
    fn runs_are_merged_only_within_the_allowed_growth() {
        use crate::free_runs::most_free_runs;
        let mut rng = crate::prng::SplitMix64::new(3);
        let (rows, words) = (3000usize, 64usize);
        let mut data = Vec::with_capacity(rows * words * 2);
        for _ in 0..rows {
            for j in 0..words {
                let r = rng.next_u64() as u16;
                // Free: bits 0-3 (one run), or bits 0-2, 4-6, 8-10 and 12-15 (four runs; bits 3 and
                // 11 invariant 0, bit 7 invariant 1).
                let word = if j < 60 {
                    0x1230 | (r & 0xf)
                } else {
                    (r & 0xf777) | 0x0080
                };
                data.extend_from_slice(&word.to_le_bytes());
            }
        }
        let opts = |within: Option<f64>| EncodeOptions {
            word_width: Some(WordWidth::W16),
            threshold: Some(1.0),
            fewer_runs_within: within,
            ..Default::default()
        };
        let smallest = plan_chunk(&data, words * 2, &opts(None));
        assert_eq!(most_free_runs(&smallest.masks, WordWidth::W16), 4);
        let kept = plan_chunk(&data, words * 2, &opts(Some(0.001)));
        assert_eq!(most_free_runs(&kept.masks, WordWidth::W16), 3);
        assert_eq!(kept.estimated_bytes, smallest.estimated_bytes);
        assert_eq!(kept.masks[..60], smallest.masks[..60]);
        let merged = plan_chunk(&data, words * 2, &opts(Some(0.05)));
        assert_eq!(most_free_runs(&merged.masks, WordWidth::W16), 2);
        let growth = merged.estimated_bytes as f64 / smallest.estimated_bytes as f64 - 1.0;
        assert!((0.005..=0.05).contains(&growth), "{growth}");
        for plan in [&kept, &merged] {
            let chunk = crate::encode_chunk_with_plan(&data, words * 2, plan, 0);
            assert_eq!(chunk.meta.masks, plan.masks);
            let mut out = vec![0u8; data.len()];
            crate::decode_chunk(&chunk.meta, &chunk.payload, crate::DecoderKind::Oracle, &mut out).unwrap();
            assert!(out == data, "not lossless");
        }
    }

    #[test]
    fn sampling_is_deterministic_and_bounded() {
        assert_eq!(sample_rows(10, Some(0.01)), (0..10).collect::<Vec<_>>());
        let s = sample_rows(10_000, Some(0.01));
        assert_eq!(s.len(), 100);
        assert!(s.windows(2).all(|p| p[0] < p[1]));
        assert_eq!(s, sample_rows(10_000, Some(0.01)));
        assert_eq!(sample_rows(1000, Some(0.001)).len(), 64);
    }

    /// The threshold rule as the brief states it, bit by bit in floating point.
    #[test]
    fn masks_follow_the_threshold_rule() {
        let mut x = 12345u64;
        for n_rows in [1u64, 2, 7, 20, 100, 1000] {
            let row_bytes = 13; // partial last words for 16, 32 and 64 bits
            let counts: Vec<u32> = (0..row_bytes * 8)
                .map(|_| {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    match x >> 62 {
                        0 => 0,
                        1 => n_rows as u32,
                        _ => ((x >> 20) % (n_rows + 1)) as u32,
                    }
                })
                .collect();
            for w in WordWidth::ALL {
                for t in [0.55, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0] {
                    let (masks, bitvals) = masks_from_counts(&counts, n_rows, w, t);
                    for (j, (&m, &v)) in masks.iter().zip(&bitvals).enumerate() {
                        for b in 0..w.bits() as usize {
                            let c = counts.get(j * w.bits() as usize + b).map_or(0.0, |&c| c as f64);
                            let rows = n_rows as f64;
                            let (one, zero) = if t >= 1.0 {
                                (c == rows, c == 0.0)
                            } else {
                                (c > t * rows, c < (1.0 - t) * rows)
                            };
                            assert_eq!((m >> b) & 1 == 1, one || zero, "w {w} t {t} j {j} b {b} c {c}");
                            assert_eq!((v >> b) & 1 == 1, one, "w {w} t {t} j {j} b {b} c {c}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn byte_tables_size_rows_like_one_table_per_candidate() {
        // Float-like data with outliers; candidates from the sweep plus masks that are not nested
        // (the per-position optimum, a shifted mask); odd row sizes give partial last words.
        let mut rng = crate::prng::SplitMix64::new(11);
        for w in WordWidth::ALL {
            for row_bytes in [1usize, 7, 37, 64, 300] {
                let rows: Vec<u8> = (0..200 * row_bytes)
                    .map(|i| {
                        let r = rng.next_u64();
                        match i % 4 {
                            3 if !r.is_multiple_of(10) => 0x3C | (r as u8 & 1) << 7,
                            2 => 0x80 | (r as u8 & 0x3F),
                            _ => r as u8,
                        }
                    })
                    .collect();
                let which: Vec<usize> = (0..200).collect();
                let counts = count_bits(&rows, row_bytes, &which);
                let mut candidates: Vec<_> = [0.6, 0.8, 0.95, 1.0]
                    .iter()
                    .map(|&t| masks_from_counts(&counts, 200, w, t))
                    .collect();
                candidates.extend(crate::position_masks::optimal_masks(
                    &rows, row_bytes, &which, &counts, w,
                ));
                let (m, b) = candidates[0].clone();
                let shifted: Vec<u64> = m.iter().map(|x| x >> 1).collect();
                let bits: Vec<u64> = b.iter().zip(&shifted).map(|(b, m)| b & m).collect();
                candidates.push((shifted, bits));
                candidates.push((vec![0; m.len()], vec![0; m.len()]));
                let sizing = ByteMatchSizing::new(&candidates, w, row_bytes, 1).expect("small rows");
                let tables: Vec<SizingTable> = candidates
                    .iter()
                    .map(|(m, b)| SizingTable::new(m, b, w, row_bytes, 1))
                    .collect();
                let mut words = Vec::new();
                for r in 0..200 {
                    let row = &rows[r * row_bytes..(r + 1) * row_bytes];
                    let mut got = vec![SizeTally::new(); candidates.len()];
                    sizing.add_row(row, &mut got);
                    load_words(row, w, &mut words);
                    for (k, table) in tables.iter().enumerate() {
                        assert_eq!(
                            got[k].payload,
                            table.record_len_of_words(&words),
                            "{w:?} {row_bytes} B row {r} candidate {k}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn counts_match_naive_count() {
        for row_bytes in [13, (64 << 10) + 8 * 1024 + 5] {
            counts_match_naive_count_for(row_bytes);
        }
    }

    fn counts_match_naive_count_for(row_bytes: usize) {
        let rows: Vec<u8> = (0..row_bytes * 600).map(|i| (i * 37 % 251) as u8).collect();
        let which: Vec<usize> = (0..600).collect();
        let counts = count_bits(&rows, row_bytes, &which);
        for byte in 0..row_bytes {
            for bit in 0..8 {
                let naive = (0..600).filter(|r| rows[r * row_bytes + byte] >> bit & 1 == 1).count() as u32;
                assert_eq!(counts[byte * 8 + bit], naive);
            }
        }
    }
}
