//! Data for tests and benchmarks: a small deterministic RNG, synthetic row generators, a
//! `.npy` reader and a helper that encodes rows into chunks with the CPU encoder.
#![forbid(unsafe_code)]

use ibp_codec::prng::SplitMix64;
use ibp_codec::{encode_chunk, EncodeOptions};
use ibp_format::{ChunkMeta, ErrorCode, FormatError, Result};

/// The shared SplitMix64 ([`ibp_codec::prng::SplitMix64`]), seeded as the GPU tests always were.
#[derive(Debug, Clone)]
pub struct Rng(SplitMix64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(SplitMix64::new(seed ^ 0x9E37_79B9_7F4A_7C15))
    }

    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.0.below(n)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        self.0.unit()
    }

    /// Approximately standard normal (sum of 4 uniforms, rescaled).
    pub fn normal(&mut self) -> f64 {
        let s: f64 = (0..4).map(|_| self.unit()).sum();
        (s - 2.0) * (3.0f64).sqrt()
    }
}

/// The low `bits` bits set (all 64 from 64 on).
fn low_bits(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Rows of `f32` values drawn from a normal distribution of standard deviation `sigma`, with the
/// low `drop_mantissa_bits` mantissa bits cleared (like weights stored at reduced precision).
/// `row_bytes` must be a multiple of 4.
pub fn float_rows(rng: &mut Rng, rows: usize, row_bytes: usize, sigma: f64, drop_mantissa_bits: u32) -> Vec<u8> {
    let keep = !((1u32 << drop_mantissa_bits) - 1);
    let mut out = Vec::with_capacity(rows * row_bytes);
    for _ in 0..rows * row_bytes / 4 {
        let v = (rng.normal() * sigma) as f32;
        out.extend_from_slice(&(v.to_bits() & keep).to_le_bytes());
    }
    out
}

/// Rows of image-like bytes: a border that is always zero (3/8 of the row at each end, as
/// Fashion-MNIST's dark frame: most positions fully invariant), and inside it pixels zero half the
/// time, else any byte (positions with several runs of free bits in a 16-bit word, words that do
/// not participate); every `raw_every`-th row random bytes (stored raw).
pub fn pixel_rows(rng: &mut Rng, rows: usize, row_bytes: usize, raw_every: usize) -> Vec<u8> {
    let border = row_bytes * 3 / 8;
    let mut out = vec![0u8; rows * row_bytes];
    for (r, row) in out.chunks_exact_mut(row_bytes).enumerate() {
        for (i, b) in row.iter_mut().enumerate() {
            let inside = i >= border && i + border < row_bytes;
            *b = if r % raw_every == raw_every - 1 {
                rng.next_u64() as u8
            } else if inside && rng.below(2) == 0 {
                1 + rng.below(255) as u8
            } else {
                0
            };
        }
    }
    out
}

/// Entries of image-like rows of more than 64 words of 8 or 16 bits, every chunk coded (as
/// Fashion-MNIST: 392 words of 16 bits, positions with 3-4 runs of free bits, half the words not
/// participating): rows of whole 16-byte vectors and rows that are not, 1-3 groups, A = 1, 16 and
/// 128, [`pixel_rows`] with every 7th row raw.
pub fn image_row_entries(rng: &mut Rng) -> Vec<TestEntry> {
    use ibp_format::WordWidth::{W16, W8};
    [
        (W16, 784usize, 1u32, 4u8),
        (W16, 784, 2, 0),
        (W16, 130, 3, 0),
        (W8, 300, 1, 4),
        (W8, 1024, 1, 7),
        (W16, 2048, 1, 4),
    ]
    .into_iter()
    .map(|(w, row_bytes, groups, align_log2)| {
        let data = pixel_rows(rng, 160, row_bytes, 7);
        let label = format!("image rows W{} {row_bytes} B G{groups} A{}", w.bits(), 1 << align_log2);
        let entry = TestEntry::new(&data, row_bytes, &fixed_width(w, groups, align_log2), 64, label);
        assert!(
            entry.metas.iter().all(|m| m.group_count > 0),
            "{}: a raw chunk",
            entry.label
        );
        entry
    })
    .collect()
}

/// Sparse `f32` rows: each value is non-zero with probability `density` (then 1.0 or a random
/// small float).
pub fn sparse_rows(rng: &mut Rng, rows: usize, row_bytes: usize, density: f64) -> Vec<u8> {
    let mut out = Vec::with_capacity(rows * row_bytes);
    for _ in 0..rows * row_bytes / 4 {
        let v: f32 = if rng.unit() < density {
            if rng.unit() < 0.5 {
                1.0
            } else {
                rng.normal() as f32
            }
        } else {
            0.0
        };
        out.extend_from_slice(&v.to_bits().to_le_bytes());
    }
    out
}

/// Rows of `word_bytes`-byte words with per-position structure: each word position has a base
/// value and a number of free low bits; a row's word is the base with random free bits (with
/// probability `1 - noise`) or a fully random word. A fraction `raw_rows` of rows is fully random.
pub fn patterned_rows(
    rng: &mut Rng,
    rows: usize,
    row_bytes: usize,
    word_bytes: usize,
    noise: f64,
    raw_rows: f64,
) -> Vec<u8> {
    let n = row_bytes / word_bytes;
    let bits = word_bytes as u32 * 8;
    let wmask = low_bits(bits);
    let bases: Vec<u64> = (0..n).map(|_| rng.next_u64() & wmask).collect();
    let frees: Vec<u64> = (0..n)
        .map(|_| {
            let f = rng.below(bits as u64 + 1) as u32;
            let low = low_bits(f);
            // Sometimes a split run of free bits (exercises multi-run deposits).
            if rng.unit() < 0.3 {
                (low | (rng.next_u64() & (rng.next_u64() | rng.next_u64()))) & wmask
            } else {
                low & wmask
            }
        })
        .collect();
    let mut out = Vec::with_capacity(rows * row_bytes);
    for _ in 0..rows {
        let random_row = rng.unit() < raw_rows;
        for j in 0..n {
            let w = if random_row || rng.unit() < noise {
                rng.next_u64() & wmask
            } else {
                (bases[j] & !frees[j]) | (rng.next_u64() & frees[j])
            };
            out.extend_from_slice(&w.to_le_bytes()[..word_bytes]);
        }
    }
    out
}

/// Whether the word positions of [`uniform_rows`] have invariant bits of their own or share them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InvariantBits {
    /// Each position its own random invariant bits: one Mask everywhere, a Bitval per position.
    PerPosition,
    /// Every position the same invariant bits, as KV-cache rows whose head dimensions are alike:
    /// one Mask and one Bitval everywhere ([`one_table_entry`]).
    Shared,
}

/// Like [`patterned_rows`], but every word position has the same `free_bits` free low bits, so an
/// encoder gives every position the same field length (the GPU's uniform-field paths); the other
/// bits per `invariant`. A fraction `noise` of words and `raw_rows` of rows are random bytes. Rows
/// may be any length: a last partial word keeps the row's bytes.
#[allow(clippy::too_many_arguments)]
pub fn uniform_rows(
    rng: &mut Rng,
    rows: usize,
    row_bytes: usize,
    word_bytes: usize,
    free_bits: u32,
    invariant: InvariantBits,
    noise: f64,
    raw_rows: f64,
) -> Vec<u8> {
    let n = row_bytes.div_ceil(word_bytes);
    let wmask = low_bits(8 * word_bytes as u32);
    let free = low_bits(free_bits) & wmask;
    let bases: Vec<u64> = match invariant {
        InvariantBits::PerPosition => (0..n).map(|_| rng.next_u64() & wmask).collect(),
        InvariantBits::Shared => vec![rng.next_u64() & wmask; n],
    };
    let mut out = Vec::with_capacity(rows * row_bytes);
    for _ in 0..rows {
        let random_row = rng.unit() < raw_rows;
        let mut row = Vec::with_capacity(n * word_bytes);
        for base in &bases {
            let w = if random_row || rng.unit() < noise {
                rng.next_u64() & wmask
            } else {
                (base & !free) | (rng.next_u64() & free)
            };
            row.extend_from_slice(&w.to_le_bytes()[..word_bytes]);
        }
        out.extend_from_slice(&row[..row_bytes]);
    }
    out
}

/// Rows of `n` words of `wb` bytes from `groups` templates: position j keeps its template's bits
/// except a run of free bits from bit 0 whose length (1 .. `max_run`) differs by position, and the
/// top bit at some positions, so free bits form at most two runs and field lengths differ. The
/// templates differ only in the two bits above each position's run (so a group that mixes them
/// still has two runs); 5 % of words and 3 % of rows are noise.
pub fn two_run_rows(rng: &mut Rng, rows: usize, n: usize, wb: usize, groups: usize, max_run: u32) -> Vec<u8> {
    let bits = 8 * wb as u32;
    let word_mask = low_bits(bits);
    let runs: Vec<u32> = (0..n)
        .map(|_| 1 + rng.below(max_run.min(bits - 3) as u64) as u32)
        .collect();
    let free: Vec<u64> = runs
        .iter()
        .map(|&run| ((1u64 << run) - 1) | if rng.below(2) == 0 { 1u64 << (bits - 1) } else { 0 })
        .collect();
    let base: Vec<u64> = (0..n).map(|_| rng.next_u64() & word_mask).collect();
    let mut out = Vec::with_capacity(rows * n * wb);
    for _ in 0..rows {
        let noise_row = rng.below(100) < 3;
        let g = rng.below(groups as u64);
        for j in 0..n {
            let template = base[j] ^ (g << runs[j]);
            let v = if noise_row || rng.below(100) < 5 {
                rng.next_u64()
            } else {
                (template & !free[j]) | (rng.next_u64() & free[j])
            };
            out.extend_from_slice(&(v & word_mask).to_le_bytes()[..wb]);
        }
    }
    out
}

/// Free bits of a `bits`-bit word (8 to 64) made of `runs` runs in each 32-bit half (one half for
/// words of at most 32 bits): 2 * `runs` distinct cut points per half, free from cut 2i to cut 2i+1.
/// `runs` must be at most half the bits of a half.
pub fn free_runs(rng: &mut Rng, bits: u32, runs: u32) -> u64 {
    let half = bits.min(32);
    let mut free = 0u64;
    for h in (0..bits).step_by(half as usize) {
        let mut cuts: Vec<u32> = Vec::with_capacity(2 * runs as usize);
        while cuts.len() < 2 * runs as usize {
            let c = rng.below(half as u64 + 1) as u32;
            if !cuts.contains(&c) {
                cuts.push(c);
            }
        }
        cuts.sort_unstable();
        for pair in cuts.chunks(2) {
            free |= ((1u64 << (pair[1] - pair[0])) - 1) << (h + pair[0]);
        }
    }
    free
}

/// Rows of `n` words of `wb` bytes whose position j keeps a fixed template's bits except free bits
/// in `min_runs ..= max_runs` runs per 32-bit half (`free_runs`): the masks the analysis finds have
/// that many runs (bf16 pairs and 8/16-bit pixels give 3-4, decoded by `deposit_runs`; 5 and more
/// take the kernels' run-by-run loop). 5 % of words are noise.
pub fn few_run_rows(rng: &mut Rng, rows: usize, n: usize, wb: usize, min_runs: u32, max_runs: u32) -> Vec<u8> {
    let bits = 8 * wb as u32;
    let word_mask = low_bits(bits);
    let top = max_runs.min(bits.min(32) / 2);
    let free: Vec<u64> = (0..n)
        .map(|_| {
            let runs = min_runs.min(top) + rng.below((top - min_runs.min(top)) as u64 + 1) as u32;
            free_runs(rng, bits, runs)
        })
        .collect();
    let base: Vec<u64> = (0..n).map(|_| rng.next_u64() & word_mask).collect();
    let mut out = Vec::with_capacity(rows * n * wb);
    for _ in 0..rows {
        for j in 0..n {
            let v = if rng.below(100) < 5 {
                rng.next_u64()
            } else {
                (base[j] & !free[j]) | (rng.next_u64() & free[j])
            };
            out.extend_from_slice(&(v & word_mask).to_le_bytes()[..wb]);
        }
    }
    out
}

/// Flips `count` random bits of `payload` (a bit may be flipped twice) and fixes `meta`'s payload
/// CRC, so that the damage reaches the decoders instead of the checksum check.
pub fn flip_random_bits(rng: &mut Rng, meta: &mut ChunkMeta, payload: &mut [u8], count: u64) {
    for _ in 0..count {
        let bit = rng.below(payload.len() as u64 * 8);
        payload[(bit / 8) as usize] ^= 1 << (bit % 8);
    }
    meta.payload_crc = ibp_format::crc32(payload);
}

/// Whether any of `vars` is set in the environment, overriding a default a test checks: the test is
/// then skipped, and this prints that it was (a skipped check says so, it does not pass silently).
pub fn default_overridden(vars: &[&str]) -> bool {
    let set: Vec<&str> = vars.iter().copied().filter(|v| std::env::var_os(v).is_some()).collect();
    if !set.is_empty() {
        println!(
            "SKIPPED: {} set, overriding the default this test checks",
            set.join(" and ")
        );
    }
    !set.is_empty()
}

/// Checks a kernel's result `got` for rows the CPU oracle decoded to `cpu_bytes` with verdict `cpu`:
/// the same bytes where the CPU decodes them, the same error code where it rejects them; panics,
/// naming `what`, otherwise. Returns whether the rows were decoded (else rejected).
pub fn same_verdict(cpu: &Result<()>, cpu_bytes: &[u8], got: crate::GpuResult<Vec<u8>>, what: &str) -> bool {
    match (cpu, got) {
        (Ok(()), Ok(bytes)) => {
            assert_eq!(bytes, cpu_bytes, "{what}: bytes differ");
            true
        }
        (Err(c), Err(g)) => {
            assert_eq!(g.code(), Some(c.code), "{what}: CPU says {c}, kernels {g}");
            false
        }
        (c, g) => panic!("{what}: CPU {c:?}, kernels {:?}", g.map(|_| ())),
    }
}

/// `rows` rows of `words` 16-bit words for vector lanes: three positions in five fully invariant
/// (0x1234), the others of one to `most_runs` runs of free bits (`few_run_rows`).
pub fn vector_rows(rng: &mut Rng, rows: usize, words: usize, most_runs: u32) -> Vec<u8> {
    let mut data = few_run_rows(rng, rows, words, 2, 1, most_runs);
    for row in data.chunks_exact_mut(2 * words) {
        for (j, word) in row.chunks_exact_mut(2).enumerate() {
            if (j * 7) % 5 < 3 {
                word.copy_from_slice(&[0x34, 0x12]);
            }
        }
    }
    data
}

/// Entries the vector-lanes kernel takes (`ibp_decode_tiles_lean_vec`): rows of 264, 392 and 512
/// 16-bit words (33-64 output vectors) in one group, at A = 1 and A = 16, three positions in five
/// fully invariant (so the long-rows kernel's entries) and the others of one to two, three or four
/// runs of free bits (`few_run_rows`), `rows` rows in one chunk; with each, its label's parts.
pub fn vector_row_entries(rng: &mut Rng, rows: usize) -> Vec<TestEntry> {
    let mut out = Vec::new();
    for words in [264usize, 392, 512] {
        for align_log2 in [0u8, 4] {
            for most_runs in [2u32, 3, 4] {
                let row_bytes = 2 * words;
                let data = vector_rows(rng, rows, words, most_runs);
                let label = format!("W16 n{words} A{} runs 1-{most_runs}", 1 << align_log2);
                let opts = fixed_width(ibp_format::WordWidth::W16, 1, align_log2);
                out.push(TestEntry::new(&data, row_bytes, &opts, rows, label));
            }
        }
    }
    out
}

/// Rows of `row_bytes` (a multiple of 4, at least 16) mostly at `density` non-zero floats
/// ([`sparse_rows`]) with a constant 1.0 in float 3 (positions with a non-zero Bitval word), one row
/// in 20 of random bytes (stored raw) and one in 20 at 40 % non-zero (many exceptions per 32 words):
/// entries whose chunks get sparse tables (`ibp_gather_sparse`).
pub fn mostly_sparse_rows(rng: &mut Rng, rows: usize, row_bytes: usize, density: f64) -> Vec<u8> {
    let mut data = sparse_rows(rng, rows, row_bytes, density);
    for (i, row) in data.chunks_exact_mut(row_bytes).enumerate() {
        row[12..16].copy_from_slice(&1.0f32.to_le_bytes());
        match i % 20 {
            7 => row.iter_mut().for_each(|b| *b = rng.next_u64() as u8),
            13 => row.copy_from_slice(&sparse_rows(rng, 1, row_bytes, 0.4)),
            _ => {}
        }
    }
    data
}

/// `(W, row bytes, groups, log2 A)` of the sparse-row tests ([`mostly_sparse_rows`] at 3 %): Cora's
/// shape (717 64-bit words, the last one partial) with one and three groups, and as 1,433 32-bit
/// words (45 windows of 32: two rounds of windows), 1 KiB rows of 32-bit words, a row of 17 words,
/// 16-bit words, 8-bit words in 35 windows, and 2,200 16-bit words with two groups (69 windows:
/// three rounds).
pub const SPARSE_SHAPES: [(ibp_format::WordWidth, usize, u32, u8); 9] = {
    use ibp_format::WordWidth::*;
    [
        (W64, 5732, 1, 4),
        (W64, 5732, 3, 0),
        (W32, 1024, 1, 4),
        (W32, 1024, 2, 7),
        (W32, 68, 1, 0),
        (W16, 204, 1, 4),
        (W8, 1100, 1, 0),
        (W32, 5732, 1, 4),
        (W16, 4400, 2, 0),
    ]
};

/// Shapes of the decoder tests' entries with several runs of free bits per position: (W, words per
/// row, fewest and most runs per 32-bit half). 3-4 runs go through `deposit_runs`, 5-8 through the
/// run-by-run loop; W = 64 with 25 words and W = 8/16 with 40 are lean rows, W = 32 with 40 words a
/// pair table (general kernel), 100 words long rows.
pub const FEW_RUN_SHAPES: [(ibp_format::WordWidth, usize, u32, u32); 8] = {
    use ibp_format::WordWidth::*;
    [
        (W64, 25, 3, 4),
        (W8, 40, 3, 4),
        (W16, 40, 3, 4),
        (W16, 100, 3, 4),
        (W32, 40, 3, 4),
        (W64, 100, 3, 4),
        (W64, 25, 5, 8),
        (W32, 40, 5, 8),
    ]
};

/// Entries of `rows` rows of 128 to 513 words, the rows `ibp_gather_split` decodes with 2 or 4 warps:
/// every word width, with groups, alignments and partial last words, positions with 3-4 runs of
/// free bits (chunks with decode tables) and without (Mask/Bitval words), chunks of 64 rows.
pub fn long_row_entries(rng: &mut Rng, rows: usize) -> Vec<TestEntry> {
    use ibp_format::WordWidth;
    // (W, A, G, words, runs of free bits, partial last word)
    let shapes = [
        (WordWidth::W8, 0u8, 1u32, 300usize, 0u32, false),
        (WordWidth::W16, 4, 2, 200, 0, true),
        (WordWidth::W32, 0, 1, 513, 0, false),
        (WordWidth::W32, 4, 1, 260, 3, false),
        (WordWidth::W64, 4, 3, 128, 0, true),
        (WordWidth::W64, 7, 1, 257, 3, false),
    ];
    let mut entries: Vec<TestEntry> = shapes
        .into_iter()
        .map(|(w, align_log2, groups, words, runs, partial)| {
            let wb = w.bytes();
            let row_bytes = words * wb - usize::from(partial);
            let data = if runs > 0 {
                few_run_rows(rng, rows, words, wb, runs, runs + 1)
            } else {
                patterned_rows(rng, rows, words * wb, wb, 0.1, 0.05)
            };
            let data: Vec<u8> = data.chunks(words * wb).flat_map(|r| r[..row_bytes].to_vec()).collect();
            let label = format!("W{} n{words} G{groups} A{}", w.bits(), 1 << align_log2);
            TestEntry::new(&data, row_bytes, &fixed_width(w, groups, align_log2), 64, label)
        })
        .collect();
    // Sparse rows (as Cora's): every position an invariant zero, so every field is 0 or W bits (the
    // gathers' ballot scan, IBP_ROUND_BALLOT_SCAN).
    let data = sparse_rows(rng, rows, 2048, 0.01);
    entries.push(TestEntry::new(
        &data,
        2048,
        &fixed_width(WordWidth::W64, 1, 4),
        64,
        "sparse W64 n256 G1 A16".into(),
    ));
    entries
}

/// Whether every position of a coded chunk is wholly invariant or wholly free (Mask all ones or
/// zero), so every field is 0 or W bits.
pub fn fields_none_or_whole(m: &ChunkMeta) -> bool {
    let bits = m.word_width.bits();
    let all = low_bits(bits);
    m.group_count > 0 && m.masks.iter().all(|&x| x & all == all || x & all == 0)
}

/// Entries whose coded chunks are no cheaper to read than raw rows ([`crate::ChunkForm`]): float
/// rows with every mantissa bit (about 6 % saved) of 256 B at A = 16 and A = 1, 64 B KV-like rows at
/// A = 1, 128 B rows at A = 1; and entries mixing them with sparse 256 B rows (5 % of values
/// nonzero), whose chunks are cheaper to read coded. Chunks of 256 rows.
pub fn relayout_entries(rng: &mut Rng) -> Vec<TestEntry> {
    let mut out = Vec::new();
    for (row_bytes, align_log2) in [(256usize, 4u8), (256, 0), (64, 0), (128, 0)] {
        let data = float_rows(rng, 1024, row_bytes, 0.02, 0);
        let opts = EncodeOptions {
            align_log2,
            ..EncodeOptions::default()
        };
        let label = format!("saves little {row_bytes} B A{}", 1 << align_log2);
        out.push(TestEntry::new(&data, row_bytes, &opts, 256, label));
    }
    for align_log2 in [4u8, 0] {
        let mut data = sparse_rows(rng, 512, 256, 0.05);
        data.extend(float_rows(rng, 512, 256, 0.02, 0));
        data.extend(sparse_rows(rng, 256, 256, 0.05));
        let opts = EncodeOptions {
            align_log2,
            ..EncodeOptions::default()
        };
        let label = format!("mixed 256 B A{}", 1 << align_log2);
        out.push(TestEntry::new(&data, 256, &opts, 256, label));
    }
    out
}

/// An entry of `rows` [`few_run_rows`] of one of [`FEW_RUN_SHAPES`], one group, alignment
/// `2^align_log2`, chunks of `chunk_rows` rows (keep them large enough, ~100 rows, that no free bit
/// looks invariant by chance); panics unless its masks have `min_runs ..= max_runs` runs in some half.
pub fn few_run_entry(
    rng: &mut Rng,
    shape: (ibp_format::WordWidth, usize, u32, u32),
    rows: usize,
    align_log2: u8,
    chunk_rows: usize,
) -> TestEntry {
    let (w, words, min_runs, max_runs) = shape;
    let data = few_run_rows(rng, rows, words, w.bytes(), min_runs, max_runs);
    let label = format!(
        "{min_runs}-{max_runs} runs W{} n{words} A{}",
        w.bits(),
        1u32 << align_log2
    );
    let entry = TestEntry::new(
        &data,
        words * w.bytes(),
        &fixed_width(w, 1, align_log2),
        chunk_rows,
        label,
    );
    let most = max_free_runs(&entry.metas);
    assert!(
        (min_runs..=max_runs).contains(&most),
        "{}: masks with up to {most} runs of free bits",
        entry.label
    );
    entry
}

/// Entries whose chunks have uneven sizes (a short chunk in the middle, a long one last), so chunk
/// `c` does not start at `c` times one size and `ibp_gather` finds chunks by binary search instead
/// of the division it uses for the encoder's chunking ([`crate::EntryLayout::uniform_chunk_rows`]
/// is 0, checked here): coded W32 rows with 3 groups at A = 16, and W8 rows at A = 1.
pub fn uneven_chunk_entries(rng: &mut Rng) -> Vec<TestEntry> {
    use ibp_format::WordWidth::{W32, W8};
    let sizes = [40usize, 97, 33, 64, 130];
    let rows: usize = sizes.iter().sum();
    [(W32, 24usize, 3u32, 4u8), (W8, 40, 1, 0)]
        .into_iter()
        .map(|(w, words, groups, align_log2)| {
            let row_bytes = words * w.bytes();
            let data = patterned_rows(rng, rows, row_bytes, w.bytes(), 0.1, 0.05);
            let label = format!("uneven chunks W{} n{words} G{groups} A{}", w.bits(), 1 << align_log2);
            let entry =
                TestEntry::with_chunk_sizes(&data, row_bytes, &fixed_width(w, groups, align_log2), &sizes, label);
            let layout = crate::EntryLayout::new(row_bytes as u64, &entry.metas).expect("layout");
            assert_eq!(layout.uniform_chunk_rows(), 0, "{}", entry.label);
            assert_eq!(layout.chunks.len(), sizes.len(), "{}", entry.label);
            entry
        })
        .collect()
}

/// Entries of rows that save most of their bytes (sparse rows of 4 KiB, 5 % nonzero, and of 1 KiB,
/// 10 % nonzero; 700 rows in chunks of 300), whose records fill a 32 KiB tile with more than twice
/// the raw rows (checked here): the tile kernels size their tiles by these records
/// (`tiling::record_tile_rows`), several tiles per chunk, so range decodes start and end inside
/// such tiles.
pub fn record_tile_entries(rng: &mut Rng) -> Vec<TestEntry> {
    let opts = EncodeOptions {
        align_log2: 4,
        ..Default::default()
    };
    [(4096usize, 0.05), (1024, 0.1)]
        .into_iter()
        .map(|(row_bytes, density)| {
            let data = sparse_rows(rng, 700, row_bytes, density);
            let label = format!("sparse {row_bytes} B rows, {}% nonzero", density * 100.0);
            let entry = TestEntry::new(&data, row_bytes, &opts, 300, label);
            let layout = crate::EntryLayout::new(row_bytes as u64, &entry.metas).expect("layout");
            let raw_rows = (32 * 1024 / row_bytes) as u64;
            assert!(
                layout.window_record_bytes(2 * raw_rows) <= 32 * 1024 && layout.window_record_bytes(300) > 32 * 1024,
                "{}: records fill a 32 KiB tile with more than twice the raw rows, not the whole chunk",
                entry.label
            );
            entry
        })
        .collect()
}

/// An entry of 256 B rows whose chunks have rows of two shapes, so range decodes take the lean
/// kernel for any shape ([`crate::LeanShape::Any`]): chunks of W64 (32 words) and of W32 (64 words)
/// rows, 1 and 3 groups, then a raw chunk (noise), at A = 16.
pub fn mixed_shape_entry(rng: &mut Rng) -> TestEntry {
    use ibp_format::WordWidth::{W32, W64};
    let row_bytes = 256;
    let mut data = patterned_rows(rng, 300, row_bytes, 4, 0.1, 0.05);
    data.extend((0..60 * row_bytes).map(|_| rng.next_u64() as u8));
    let parts = [
        (100, fixed_width(W64, 1, 4)),
        (120, fixed_width(W32, 3, 4)),
        (80, fixed_width(W32, 1, 4)),
        (60, fixed_width(W64, 1, 4)),
    ];
    let (mut metas, mut payloads, mut at) = (Vec::new(), Vec::new(), 0);
    for (rows, opts) in &parts {
        let c = encode_chunk(&data[at..at + rows * row_bytes], row_bytes, opts);
        at += rows * row_bytes;
        metas.push(c.meta);
        payloads.push(c.payload);
    }
    let entry = TestEntry::from_chunks(&data, row_bytes, metas, payloads, "mixed shapes 256 B A16".into());
    let words: Vec<(u32, u32)> = entry.metas.iter().map(|m| (m.words_per_row, m.group_count)).collect();
    assert!(
        words.contains(&(32, 1))
            && words.contains(&(64, 3))
            && words.contains(&(64, 1))
            && words.last().unwrap().1 == 0,
        "{}: chunks (words, groups) {words:?}",
        entry.label
    );
    entry
}

std::thread_local! {
    /// See [`shaped_kernel_counts`].
    static SHAPE_COUNTS: std::cell::Cell<[usize; 5]> = const { std::cell::Cell::new([0; 5]) };
}

/// What [`check_shaped_kernels`] has seen in this thread (each test runs in a thread of its own):
/// whole-entry decodes that the mid-row and short-row lean kernels and the pairs kernel rejected
/// with E_LAYOUT, entries whose own kernel is the pairs kernel, and entries the vector-lanes kernel
/// decoded and rejected.
pub fn shaped_kernel_counts() -> [usize; 5] {
    SHAPE_COUNTS.with(|c| c.get())
}

fn count_shaped(slot: usize) {
    SHAPE_COUNTS.with(|c| {
        let mut counts = c.get();
        counts[slot] += 1;
        c.set(counts)
    });
}

/// Each tile kernel built for rows of one shape (the lean kernels, the pairs kernel), forced on an
/// entry through `decode` (the whole entry with that kernel): where it takes the rows of every coded
/// chunk ([`crate::TileKernel::decodes`]) it gives `expected`, as the entry's own kernel `own`
/// does; else it reports E_LAYOUT (counted, see [`shaped_kernel_counts`]) or gives `expected`
/// (tiles whose records are all raw with no padding are copied before any shape check, by every
/// tile kernel). It never gives wrong bytes. `lean`: the entry allows a lean kernel at all (the
/// vector-lanes kernel included, which checks the chunks' Masks: `vector_rows_chunk`). The
/// long-rows kernel runs with whole rows and with segments ([`crate::RowSegments`]; `decode` takes
/// the mode, `Auto` for every other kernel).
pub fn check_shaped_kernels(
    layout: &crate::EntryLayout,
    own: crate::TileKernel,
    lean: bool,
    expected: &[u8],
    label: &str,
    mut decode: impl FnMut(crate::TileKernel, crate::RowSegments) -> crate::GpuResult<Vec<u8>>,
) {
    use crate::{LeanShape, RowSegments, TileKernel};
    if own == TileKernel::GeneralPairs {
        count_shaped(2);
    }
    let vector_lanes = TileKernel::Lean(LeanShape::Vec);
    for kernel in [
        TileKernel::Lean(LeanShape::Any),
        TileKernel::Lean(LeanShape::Mid),
        TileKernel::Lean(LeanShape::Short),
        TileKernel::GeneralPairs,
        vector_lanes,
    ] {
        // (A lean kernel applies only where the entry allows one.)
        if matches!(kernel, TileKernel::Lean(_)) && !lean {
            continue;
        }
        let got = decode(kernel, RowSegments::Auto);
        if kernel.decodes(layout) {
            assert_eq!(got.unwrap(), expected, "{label}: whole entry, {kernel:?} kernel");
            if kernel == vector_lanes {
                count_shaped(3);
            }
            continue;
        }
        assert_ne!(own, kernel, "{label}");
        match got {
            Ok(bytes) => assert_eq!(bytes, expected, "{label}: whole entry, {kernel:?} kernel"),
            Err(err) => {
                assert_eq!(err.code(), Some(ErrorCode::Layout), "{label}: {kernel:?}: {err}");
                count_shaped(match kernel {
                    TileKernel::GeneralPairs => 1,
                    k if k == vector_lanes => 4,
                    _ => 0,
                });
            }
        }
    }
    // The long-rows kernel wherever it can decode the entry (its own choice needs mostly invariant
    // positions: rows that are not, and grouped rows, are checked through it here).
    let long = TileKernel::Lean(LeanShape::Long);
    if long.decodes(layout) {
        for mode in [RowSegments::WholeRows, RowSegments::Segments] {
            assert_eq!(
                decode(long, mode).unwrap(),
                expected,
                "{label}: whole entry, long-rows kernel, {mode:?}"
            );
        }
    }
}

/// Whether every position of a coded chunk has the same field length F (free bits of its Mask).
pub fn one_field_length(m: &ChunkMeta) -> bool {
    let f = |x: &u64| m.word_width.bits() - x.count_ones();
    m.group_count > 0 && m.masks.iter().all(|x| f(x) == f(&m.masks[0]))
}

/// Whether every position of every group of a coded chunk has one Mask and one Bitval (the
/// short-rows kernel then holds that one table entry in registers).
pub fn one_table_entry(m: &ChunkMeta) -> bool {
    m.group_count > 0 && m.masks.iter().all(|x| *x == m.masks[0]) && m.bitvals.iter().all(|x| *x == m.bitvals[0])
}

/// The most runs of free bits (`!Mask`) in one 32-bit half of any Mask word of `metas`.
pub fn max_free_runs(metas: &[ChunkMeta]) -> u32 {
    let runs = |x: u32| (x & !(x << 1)).count_ones();
    metas
        .iter()
        .flat_map(|m| {
            let bits = m.word_width.bits();
            let wm = low_bits(bits);
            m.masks.iter().map(move |&mk| {
                let f = !mk & wm;
                runs(f as u32).max(runs((f >> 32) as u32))
            })
        })
        .max()
        .unwrap_or(0)
}

/// Encodes `data` (rows of `row_bytes`) into chunks of at most `chunk_rows` rows with the CPU
/// encoder. Returns each chunk's metadata and payload, in row order.
pub fn encode_rows(
    data: &[u8],
    row_bytes: usize,
    opts: &EncodeOptions,
    chunk_rows: usize,
) -> (Vec<ChunkMeta>, Vec<Vec<u8>>) {
    let rows = data.len() / row_bytes;
    let sizes: Vec<usize> = (0..rows.div_ceil(chunk_rows))
        .map(|c| chunk_rows.min(rows - c * chunk_rows))
        .collect();
    encode_rows_sized(data, row_bytes, opts, &sizes)
}

/// [`encode_rows`] with one thread per part of `data` (about 8 MiB, or one chunk where a chunk is
/// larger): the benchmarks' datasets of tens of MiB encode in seconds. Every part is a whole number
/// of chunks of `chunk_rows` rows, so the chunks are the ones `encode_rows` makes.
pub fn encode_rows_parallel(
    data: &[u8],
    row_bytes: usize,
    opts: &EncodeOptions,
    chunk_rows: usize,
) -> (Vec<ChunkMeta>, Vec<Vec<u8>>) {
    let chunk_rows = chunk_rows.max(1);
    let part_rows = ((8usize << 20) / row_bytes.max(1)).clamp(1, 1 << 20).max(chunk_rows) / chunk_rows * chunk_rows;
    std::thread::scope(|s| {
        let parts: Vec<_> = data
            .chunks(part_rows * row_bytes)
            .map(|p| s.spawn(move || encode_rows(p, row_bytes, opts, chunk_rows)))
            .collect();
        parts.into_iter().fold((Vec::new(), Vec::new()), |(mut m, mut p), h| {
            let (m2, p2) = h.join().expect("encoder thread panicked");
            m.extend(m2);
            p.extend(p2);
            (m, p)
        })
    })
}

/// Encodes `data` (rows of `row_bytes`) into chunks of `sizes[0]`, `sizes[1]`, ... rows (they must
/// add up to the rows of `data`). Returns each chunk's metadata and payload, in row order.
pub fn encode_rows_sized(
    data: &[u8],
    row_bytes: usize,
    opts: &EncodeOptions,
    sizes: &[usize],
) -> (Vec<ChunkMeta>, Vec<Vec<u8>>) {
    assert_eq!(sizes.iter().sum::<usize>() * row_bytes, data.len(), "chunk sizes");
    let mut metas = Vec::new();
    let mut payloads = Vec::new();
    let mut at = 0;
    for &rows in sizes {
        let c = encode_chunk(&data[at..at + rows * row_bytes], row_bytes, opts);
        at += rows * row_bytes;
        metas.push(c.meta);
        payloads.push(c.payload);
    }
    (metas, payloads)
}

/// A row matrix read from a `.npy` file (version 1 or 2, C order, little-endian or 1-byte dtype).
#[derive(Debug, Clone)]
pub struct NpyRows {
    /// The array's bytes.
    pub data: Vec<u8>,
    /// First dimension.
    pub rows: usize,
    /// Bytes of one row (product of the other dimensions times the item size).
    pub row_bytes: usize,
    /// The dtype descriptor (e.g. `<f4`).
    pub descr: String,
}

/// Reads a `.npy` file as rows.
pub fn read_npy(path: &std::path::Path) -> Result<NpyRows> {
    let bytes = std::fs::read(path)?;
    let bad = |d: &str| FormatError::new(ErrorCode::InvalidArgument, format!("{}: {d}", path.display()));
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(bad("not a .npy file"));
    }
    let (hlen, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        _ if bytes.len() >= 12 => (u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize, 12),
        _ => return Err(bad("truncated header")),
    };
    let header = std::str::from_utf8(bytes.get(start..start + hlen).ok_or_else(|| bad("truncated header"))?)
        .map_err(|_| bad("header not UTF-8"))?;
    let field = |key: &str| -> Option<&str> {
        let at = header.find(&format!("'{key}':"))? + key.len() + 3;
        Some(header[at..].trim_start())
    };
    let descr = field("descr")
        .and_then(|s| s.split('\'').nth(1))
        .ok_or_else(|| bad("no descr"))?
        .to_string();
    if field("fortran_order").is_some_and(|s| s.starts_with("True")) {
        return Err(bad("Fortran order"));
    }
    let shape_text = field("shape").ok_or_else(|| bad("no shape"))?;
    let shape_text = &shape_text[1..shape_text.find(')').ok_or_else(|| bad("bad shape"))?];
    let shape: Vec<usize> = shape_text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().map_err(|_| bad("bad shape")))
        .collect::<Result<_>>()?;
    let item: usize = descr[2..].parse().map_err(|_| bad("bad descr"))?;
    let rows = *shape.first().ok_or_else(|| bad("rank 0"))?;
    let row_bytes = shape[1..].iter().product::<usize>() * item;
    let data = bytes[start + hlen..].to_vec();
    if data.len() != rows * row_bytes {
        return Err(bad("data size does not match the shape"));
    }
    Ok(NpyRows {
        data,
        rows,
        row_bytes,
        descr,
    })
}

/// Encoder options of the generated GPU test cases: word width `w`, invariance threshold 0.8,
/// `groups` groups and alignment `2^align_log2`.
pub fn fixed_width(w: ibp_format::WordWidth, groups: u32, align_log2: u8) -> EncodeOptions {
    EncodeOptions {
        word_width: Some(w),
        threshold: Some(0.8),
        groups,
        align_log2,
        ..Default::default()
    }
}

/// An entry for the decoder tests: rows encoded into chunks of `chunk_rows` rows, and the bytes they
/// must decode to (checked against the CPU decoder when made).
pub struct TestEntry {
    /// Bytes per row.
    pub row_bytes: usize,
    /// Each chunk's metadata.
    pub metas: Vec<ChunkMeta>,
    /// Each chunk's payload.
    pub payloads: Vec<Vec<u8>>,
    /// The rows, concatenated.
    pub expected: Vec<u8>,
    /// What the case is, for failure messages.
    pub label: String,
}

impl TestEntry {
    /// Encodes `data` (rows of `row_bytes`) with `opts`; panics if the CPU decoder does not give
    /// `data` back.
    pub fn new(data: &[u8], row_bytes: usize, opts: &EncodeOptions, chunk_rows: usize, label: String) -> TestEntry {
        let (metas, payloads) = encode_rows(data, row_bytes, opts, chunk_rows);
        Self::from_chunks(data, row_bytes, metas, payloads, label)
    }

    /// As [`TestEntry::new`], with chunks of `sizes[0]`, `sizes[1]`, ... rows (chunk `c` then need
    /// not start at a multiple of one chunk size: gathers find chunks by binary search).
    pub fn with_chunk_sizes(
        data: &[u8],
        row_bytes: usize,
        opts: &EncodeOptions,
        sizes: &[usize],
        label: String,
    ) -> TestEntry {
        let (metas, payloads) = encode_rows_sized(data, row_bytes, opts, sizes);
        Self::from_chunks(data, row_bytes, metas, payloads, label)
    }

    fn from_chunks(
        data: &[u8],
        row_bytes: usize,
        metas: Vec<ChunkMeta>,
        payloads: Vec<Vec<u8>>,
        label: String,
    ) -> TestEntry {
        let mut expected = vec![0u8; data.len()];
        let mut at = 0;
        for (m, p) in metas.iter().zip(&payloads) {
            let len = m.row_count as usize * row_bytes;
            ibp_codec::decode_chunk(m, p, ibp_codec::DecoderKind::Fast, &mut expected[at..at + len])
                .expect("CPU decode");
            at += len;
        }
        assert_eq!(expected, data, "{label}: CPU round trip");
        TestEntry {
            row_bytes,
            metas,
            payloads,
            expected,
            label,
        }
    }

    /// Rows in the entry.
    pub fn rows(&self) -> u64 {
        (self.expected.len() / self.row_bytes) as u64
    }

    /// The payloads as slices.
    pub fn payload_refs(&self) -> Vec<&[u8]> {
        self.payloads.iter().map(|p| p.as_slice()).collect()
    }

    /// The expected bytes of `rows`, in that order.
    pub fn expected_rows(&self, rows: &[u64]) -> Vec<u8> {
        let rb = self.row_bytes;
        rows.iter()
            .flat_map(|&r| self.expected[r as usize * rb..(r as usize + 1) * rb].iter().copied())
            .collect()
    }
}
