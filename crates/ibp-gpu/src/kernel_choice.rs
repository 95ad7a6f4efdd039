//! How an entry's kernels and decode tables are chosen: the tile kernel of its range decodes
//! ([`TileKernel`], [`LeanShape`]), the warps per request of its gathers ([`gather_split_log2`]) and
//! their staging buffers ([`stage_bytes`]), whether a load uploads its flat row index
//! ([`row_spans_wanted`]), and which chunks get per-position decode tables ([`table_offsets`],
//! built on the device by [`build_tables`]).
#![forbid(unsafe_code)]

use crate::device::GpuDevice;
use crate::entry::layout_params;
use crate::error::{GpuError, GpuResult};
use crate::launch::{self, GatherParams};
use crate::layout::EntryLayout;
use cudarc::driver::{sys, CudaSlice, CudaStream, DevicePtr};
use std::sync::Arc;

/// Rows of at least this many bytes get a flat row index at load ([`EntryLayout::row_spans`]): its 8
/// bytes per row are then at most 1/16 of the decoded size. Shorter rows get one on request
/// ([`GpuEntry::add_row_spans`](crate::GpuEntry::add_row_spans)).
pub const ROW_SPANS_MIN_ROW_BYTES: u64 = 128;
/// Largest flat row index uploaded at load (64 Mi rows).
pub const ROW_SPANS_MAX_BYTES: u64 = 512 << 20;

/// Whether a load uploads the flat row index of `layout`: for rows of at least
/// [`ROW_SPANS_MIN_ROW_BYTES`] up to [`ROW_SPANS_MAX_BYTES`]; `IBP_GATHER_SPANS=0` / `=1` in the
/// environment: never / wherever the layout allows one (A/Bs).
pub(crate) fn row_spans_wanted(layout: &EntryLayout) -> bool {
    static FORCED: std::sync::OnceLock<Option<bool>> = std::sync::OnceLock::new();
    let forced = *FORCED.get_or_init(|| match std::env::var("IBP_GATHER_SPANS").as_deref().map(str::trim) {
        Ok("0") => Some(false),
        Ok("1") => Some(true),
        _ => None,
    });
    forced.unwrap_or_else(|| {
        layout.row_bytes >= ROW_SPANS_MIN_ROW_BYTES && layout.row_count.saturating_mul(8) <= ROW_SPANS_MAX_BYTES
    })
}

/// Warps per SM that `ibp_gather_split` has resident at once (8 blocks of 4 warps: 64 registers
/// per thread).
const SPLIT_RESIDENT_WARPS_PER_SM: u64 = 32;

/// The most words per row among `layout`'s coded chunks (0 when every chunk is raw).
pub(crate) fn coded_words(layout: &EntryLayout) -> u32 {
    layout
        .chunks
        .iter()
        .filter(|c| c.group_count > 0)
        .map(|c| c.words_per_row)
        .max()
        .unwrap_or(0)
}

/// Fewest words of a row each warp of `ibp_gather_split` decodes (a multiple of 32; a warp's
/// segment is a multiple of it): 64, or the environment variable `IBP_SPLIT_WORDS` for A/B runs
/// (read once per process).
pub(crate) fn split_words() -> u32 {
    static WORDS: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *WORDS.get_or_init(|| crate::device::env_u32("IBP_SPLIT_WORDS").map_or(64, |w| w.clamp(32, 1 << 16) & !31))
}

/// log2 of the warps `ibp_gather_split` gives each request of a gather of `count` rows whose
/// longest coded rows have `words` words, on a GPU of `sm_count` multiprocessors; 0: `ibp_gather`
/// (one warp per request). A batch too small to fill the GPU ends with the decode of its last
/// records, a warp each; the most warps per request (up to the block's) that keep every request's
/// warps resident at once and leave each at least [`split_words`] words shorten that tail
/// (bench/GPU_NOTES.md entry 42). Entries whose gathers the decode bounds (`decode_bound`:
/// [`decode_bound`]) also take 2 warps per request for batches of up to two waves of them, where
/// one warp per request needs two waves of `ibp_gather` (entry 44). The environment variable
/// `IBP_GATHER_SPLIT` overrides this for A/B runs: `0` never splits, `1`/`2` always take that value
/// (read once per process).
pub(crate) fn gather_split_log2(count: u64, words: u32, sm_count: u32, decode_bound: bool) -> u32 {
    static FORCED: std::sync::OnceLock<Option<u32>> = std::sync::OnceLock::new();
    let forced = *FORCED.get_or_init(|| {
        crate::device::env_u32("IBP_GATHER_SPLIT").map(|v| v.min(launch::WARPS_PER_BLOCK.trailing_zeros()))
    });
    forced.unwrap_or_else(|| auto_split_log2(count, words, sm_count, split_words(), decode_bound))
}

/// [`gather_split_log2`] without the override, for warps of at least `per_warp` words.
pub(crate) fn auto_split_log2(count: u64, words: u32, sm_count: u32, per_warp: u32, decode_bound: bool) -> u32 {
    let resident = sm_count as u64 * SPLIT_RESIDENT_WARPS_PER_SM;
    let fits = |log2: u32, waves: u64| {
        count.saturating_mul(1 << log2) <= waves * resident && words as u64 >= (per_warp as u64) << log2
    };
    match (1..=launch::WARPS_PER_BLOCK.trailing_zeros())
        .filter(|&log2| fits(log2, 1))
        .max()
    {
        Some(log2) => log2,
        None if decode_bound && fits(1, 2) => 1,
        None => 0,
    }
}

/// Whether gathers of `layout`'s rows are bound by their decode rather than by the bus: its
/// records take at most half the bytes of its rows (Cora, sparse rows). Those gain from more warps
/// per request at batches of a few thousand rows; rows that save less are bound by the link there
/// and do not (bench/GPU_NOTES.md entry 44).
pub(crate) fn decode_bound(layout: &EntryLayout) -> bool {
    let records: u64 = layout.chunks.iter().map(|c| c.payload_len).sum();
    records.saturating_mul(2) <= layout.row_count.saturating_mul(layout.row_bytes)
}

/// Blocks of an `ibp_gather_split` launch: one step of every group covers the requests, up to 32
/// blocks per SM (the kernel loops over the rest).
pub(crate) fn split_blocks(count: u64, split_log2: u32, sm_count: u32) -> u32 {
    let groups = (launch::WARPS_PER_BLOCK >> split_log2).max(1) as u64;
    count.div_ceil(groups).clamp(1, sm_count.max(1) as u64 * 32) as u32
}

/// One staging buffer per warp of `ibp_gather`: the 16-byte vectors covering the largest record (up
/// to 30 bytes more than it) plus a 16-byte tail, within the block's shared-memory budget
/// `smem_limit`; longer records are decoded straight from memory.
pub(crate) fn stage_bytes(layout: &EntryLayout, smem_limit: u32) -> u32 {
    let max_raw = layout.chunks.iter().map(|c| c.raw_padded as u64).max().unwrap_or(16);
    let budget = (smem_limit / launch::WARPS_PER_BLOCK) as u64 & !15;
    ((max_raw + 15) & !15).saturating_add(48).min(budget) as u32
}

/// A Mask or Bitval word read from its `1..=8` little-endian bytes of a chunk's metadata.
fn le_word(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    word[..bytes.len()].copy_from_slice(bytes);
    u64::from_le_bytes(word)
}

/// The bits of a word of `wb` bytes (`1..=8`).
fn word_bits_mask(wb: usize) -> u64 {
    if wb >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * wb)) - 1
    }
}

/// Whether at least half of a chunk's positions have free bits (`~Mask` within the word) that form
/// more than one run in a 32-bit half: there the table saves `ibp_gather` a deposit loop per word
/// (float data: sign bit and mantissa). Where free bits form single runs (sparse data, one-hot
/// features) the per-lane Mask/Bitval path is cheaper than 32 bytes of table per word (measured on
/// the H200: bench/GPU_NOTES.md, entry 14).
fn deposit_heavy(c: &crate::layout::ChunkDesc, meta: &[u8]) -> bool {
    let wb = c.word_bytes as usize;
    let entries = c.group_count as usize * c.words_per_row as usize;
    let start = c.masks_offset as usize;
    let Some(masks) = meta.get(start..start + entries * wb) else {
        return false;
    };
    let word_mask = word_bits_mask(wb);
    let several_runs = |half: u32| {
        let t = half >> half.trailing_zeros().min(31);
        half != 0 && (t & t.wrapping_add(1)) != 0
    };
    let multi = masks
        .chunks_exact(wb)
        .filter(|m| {
            let free = !le_word(m) & word_mask;
            several_runs(free as u32) || several_runs((free >> 32) as u32)
        })
        .count();
    2 * multi >= entries
}

/// The lean kernel that decodes ranges of `layout`, if any. A lean kernel may where the entry has
/// a coded chunk, and every coded chunk has `1 <= G * n <= TABLE_MAX_ENTRIES` (its positions' table fits the kernel's shared
/// memory) and rows of at most 64 whole words (`row_bytes == n * W/8`, `n <= 64`). The kernel checks
/// the same per tile and reports `E_LAYOUT` for a tile that breaks it, so a wrong answer here fails
/// loudly, never silently. Longer rows give a warp too few rows per tile for its one-thread-per-row
/// checks, each walking more words (on the H200, 1 KiB rows gained 0.03 of the D2D copy and rows
/// from 1.5 KiB on lost 0.05-0.10: bench/GPU_NOTES.md entry 19c), and entries of raw chunks only
/// copy at the same speed through either kernel. Of the lean kernels, the mid one is taken when
/// every coded chunk has rows of 33 to 64 words, the short one when every chunk is coded with rows
/// it takes ([`LeanShape::decodes_all`], unless `IBP_LEAN_SHORT=0`), else the one for any shape.
/// Entries of longer rows take the long-rows kernel where [`long_rows_wanted`] says so.
pub(crate) fn lean_shape(layout: &EntryLayout) -> Option<LeanShape> {
    let coded: Vec<_> = layout.chunks.iter().filter(|c| c.group_count > 0).collect();
    let tabled = |c: &&crate::layout::ChunkDesc| {
        let entries = c.group_count as u64 * c.words_per_row as u64;
        matches!(c.word_bytes, 1 | 2 | 4 | 8)
            && c.words_per_row as u64 * c.word_bytes as u64 == layout.row_bytes
            && entries <= crate::device::TABLE_MAX_ENTRIES as u64
    };
    let allowed = !coded.is_empty() && coded.iter().all(|c| tabled(c) && c.words_per_row <= 64);
    if !allowed {
        // (At least half the positions fully invariant, counted only for entries otherwise taken:
        // see long_rows_wanted.)
        let long = !coded.is_empty()
            && coded.len() == layout.chunks.len()
            && coded
                .iter()
                .all(|c| tabled(c) && long_rows_wanted(c.word_bytes as u32, c.words_per_row))
            && {
                let (invariant, positions) = layout.invariant_positions();
                2 * invariant >= positions
            };
        if long && crate::device::vector_lanes_kernel() >= 1 && LeanShape::Vec.decodes_all(layout) {
            return Some(LeanShape::Vec);
        }
        return long.then_some(LeanShape::Long);
    }
    if allowed && crate::device::vector_lanes_kernel() >= 2 && LeanShape::Vec.decodes_all(layout) {
        return Some(LeanShape::Vec);
    }
    allowed.then_some(if LeanShape::Mid.decodes_all(layout) {
        LeanShape::Mid
    } else if crate::device::short_rows_kernel() && LeanShape::Short.decodes_all(layout) {
        LeanShape::Short
    } else {
        LeanShape::Any
    })
}

/// Whether the vector-lanes kernel (`ibp_decode_tiles_lean_vec`) takes coded chunk `c` of rows of
/// `row_bytes`, as the kernel's own check (`vl_build` and the tile's): one group of `1 ..= 512` 16-bit
/// words making the whole row, rows of whole 16-byte vectors, and at most four runs of free bits
/// (`!Mask` within the word) in any position. `meta` is the entry's metadata buffer (the Mask words
/// at `c.masks_offset`); a chunk whose Masks lie outside it is not taken.
pub(crate) fn vector_rows_chunk(c: &crate::layout::ChunkDesc, row_bytes: u64, meta: &[u8]) -> bool {
    let n = c.words_per_row as usize;
    let start = c.masks_offset as usize;
    let shape = c.group_count == 1 && c.word_bytes == 2 && LeanShape::Vec.takes(c.words_per_row, row_bytes);
    let Some(masks) = start.checked_add(2 * n).and_then(|end| meta.get(start..end)) else {
        return false;
    };
    shape
        && masks.chunks_exact(2).all(|m| {
            let free = !u16::from_le_bytes([m[0], m[1]]);
            (free & !(free << 1)).count_ones() <= 4
        })
}

/// The most 16-bit words a row of the vector-lanes kernel has (`IBP_VL_POSITIONS`: rows of at most 1 KiB).
pub(crate) const VECTOR_LANES_MAX_WORDS: u32 = 512;

/// Whether coded rows of `words` words of `word_bytes` bytes, more than 64, go to the long-rows
/// kernel (every chunk of the entry coded, and at least half of its positions fully invariant:
/// [`EntryLayout::invariant_positions`]): words of at most 16 bits (`IBP_LEAN_LONG` unset or 1),
/// words of any width (`IBP_LEAN_LONG=2`, for A/B runs) or none (`IBP_LEAN_LONG=0`). A lane per
/// row spares image rows the pairs kernel's divergence between invariant and free positions and
/// participating and other words (Fashion-MNIST, 290 of 392 positions invariant: 0.23 -> 0.31 of
/// the D2D copy), but decodes rows of free positions slower (MiniLM FFN weights in bf16, none
/// invariant: 0.35 -> 0.28; bench/GPU_NOTES.md entry 62).
pub(crate) fn long_rows_wanted(word_bytes: u32, words: u32) -> bool {
    words > 64
        && match crate::device::long_rows_kernel() {
            0 => false,
            1 => word_bytes <= 2,
            _ => true,
        }
}

/// Which of the lean tile kernels decodes ranges of an entry. All are the same decoder; the one
/// for rows of 33 to 64 words is built for them alone, so that its row loop gets its own register
/// allocation and code layout (on the H200, 256 B rows of 32-bit words decode 20-25 % faster
/// through it: bench/GPU_NOTES.md entry 35), and the one for short rows (one thread per row, as
/// the bf16 KV rows: at most 16 words, or at most 32 words of at most 64 bytes) holds nothing but
/// that path, built for 3 blocks per SM and launched with 64 KiB tiles (GPU_NOTES entries 52 and
/// 55). The any and mid kernels decode raw chunks; the mid kernel reports `E_LAYOUT` for a tile of
/// coded rows of another shape, the short one for any tile that is not all raw records
/// ([`TileKernel::decodes`]). The long-rows kernel takes entries of coded chunks only, of rows of
/// whole words of any length, a lane per row (rows of whole 16-byte vectors of words of up to 32
/// bits; other rows a slice per row, as the short-rows kernel's thread path), with tiles of about
/// four warps' 32 rows and 2 blocks per SM (GPU_NOTES entry 62).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeanShape {
    /// `ibp_decode_tiles_lean`: coded rows of 1 to 64 words.
    Any = 0,
    /// `ibp_decode_tiles_lean_mid`: coded rows of 33 to 64 words.
    Mid = 1,
    /// `ibp_decode_tiles_lean_short`: every chunk coded, with rows of at most 16 words, or of at
    /// most 32 words and 64 bytes (taken where the environment variable `IBP_LEAN_SHORT` is not `0`).
    Short = 2,
    /// `ibp_decode_tiles_lean_long`: every chunk coded, with rows of whole words of any length
    /// (taken for rows of more than 64 words of at most 16 bits with at least half the positions
    /// fully invariant: `long_rows_wanted`).
    Long = 3,
    /// `ibp_decode_tiles_lean_vec`: every chunk coded with one group of 16-bit words, rows of whole
    /// 16-byte vectors of at most 1 KiB, at most four runs of free bits per position
    /// (`vector_rows_chunk`), decoded by vector lanes alone at 4 blocks per SM (taken where the
    /// long-rows kernel would be, unless the environment variable `IBP_LEAN_VEC` is `0`; with `2`,
    /// wherever it decodes every chunk: `device::vector_lanes_kernel`).
    Vec = 4,
}

impl LeanShape {
    /// Every shape, in the order of their kernels in [`LeanShape::KERNELS`].
    pub const ALL: [LeanShape; 5] = [
        LeanShape::Any,
        LeanShape::Mid,
        LeanShape::Short,
        LeanShape::Long,
        LeanShape::Vec,
    ];
    /// The kernel of each shape (indexed by `shape as usize`).
    pub const KERNELS: [&'static str; 5] = [
        "ibp_decode_tiles_lean",
        "ibp_decode_tiles_lean_mid",
        "ibp_decode_tiles_lean_short",
        "ibp_decode_tiles_lean_long",
        "ibp_decode_tiles_lean_vec",
    ];

    /// Whether this shape's kernel decodes coded rows of `words` words and `row_bytes` bytes (the
    /// short shape: the kernels' `IBP_LEAN_THREAD_ROWS` 16 and `IBP_LEAN_THREAD_BYTES` 64; the
    /// vector-lanes shape also needs one group of 16-bit words with at most four runs of free bits
    /// per position, which [`LeanShape::decodes_all`] checks).
    pub fn takes(self, words: u32, row_bytes: u64) -> bool {
        match self {
            LeanShape::Any => (1..=64).contains(&words),
            LeanShape::Mid => (33..=64).contains(&words),
            LeanShape::Short => (1..=16).contains(&words) || ((1..=32).contains(&words) && row_bytes <= 64),
            LeanShape::Long => words >= 1,
            LeanShape::Vec => {
                (1..=VECTOR_LANES_MAX_WORDS).contains(&words)
                    && row_bytes == 2 * words as u64
                    && row_bytes.is_multiple_of(16)
            }
        }
    }

    /// Whether this shape's kernel decodes every coded chunk of `layout` ([`LeanShape::takes`];
    /// the vector-lanes shape: `vector_rows_chunk`) and, for the short, long and vector-lanes
    /// shapes, which take no raw chunk, whether every chunk is coded.
    pub fn decodes_all(self, layout: &EntryLayout) -> bool {
        layout.chunks.iter().all(|c| {
            if self == LeanShape::Vec {
                c.group_count > 0 && vector_rows_chunk(c, layout.row_bytes, &layout.meta)
            } else if c.group_count > 0 {
                self.takes(c.words_per_row, layout.row_bytes)
            } else {
                !matches!(self, LeanShape::Short | LeanShape::Long)
            }
        })
    }
}

/// Which tile kernel a range decode uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TileKernel {
    /// The one the entry's chunks call for: a lean kernel where they allow
    /// it (see [`LeanShape`]), else `ibp_decode_tiles_pairs` where every coded chunk has a pair
    /// table, else `ibp_decode_tiles`.
    Auto,
    /// `ibp_decode_tiles`: the general kernel, for rows of any shape.
    General,
    /// `ibp_decode_tiles_pairs`: the general kernel built for chunks of 32-bit or 16-bit words
    /// decoded in pairs alone (17 or more whole words per row, `G * n` within the tile table): on the H200
    /// MiniLM and floret rows of 32-bit words decode 10-14 % faster through it than through
    /// `ibp_decode_tiles` (bench/GPU_NOTES.md entry 35).
    GeneralPairs,
    /// The lean kernel of this shape, whatever the rows of the entry's coded chunks (for tests of
    /// the kernels' shape checks, and comparisons).
    Lean(LeanShape),
}

impl TileKernel {
    /// A small integer for this choice (stored atomically; the CPU-run launcher's kernel argument
    /// takes the same values: -1 general, 0-2 the lean shapes any, mid and short, 3 the pairs
    /// kernel, 4 the long-rows kernel, 5 the vector-lanes kernel).
    pub(crate) const fn code(self) -> i8 {
        match self {
            TileKernel::Auto => -2,
            TileKernel::General => -1,
            TileKernel::Lean(LeanShape::Long) => 4,
            TileKernel::Lean(LeanShape::Vec) => 5,
            TileKernel::Lean(shape) => shape as i8,
            TileKernel::GeneralPairs => 3,
        }
    }

    pub(crate) fn from_code(code: i8) -> TileKernel {
        match code {
            -1 => TileKernel::General,
            0..=2 => TileKernel::Lean(LeanShape::ALL[code as usize]),
            3 => TileKernel::GeneralPairs,
            4 => TileKernel::Lean(LeanShape::Long),
            5 => TileKernel::Lean(LeanShape::Vec),
            _ => TileKernel::Auto,
        }
    }

    /// Which tile size (`tiling`) this resolved choice launches with: 0 the general kernels', 1 the
    /// lean kernels', 2 the short-rows kernel's (3 blocks per SM: larger tiles), 3 the long-rows
    /// kernel's (2 blocks per SM: 32 rows for each of about 4 warps), 4 the vector-lanes kernel's
    /// (4 blocks per SM, no per-position table).
    pub(crate) const fn tile_class(self) -> usize {
        match self {
            TileKernel::Lean(LeanShape::Short) => 2,
            TileKernel::Lean(LeanShape::Long) => 3,
            TileKernel::Lean(LeanShape::Vec) => 4,
            TileKernel::Lean(_) => 1,
            _ => 0,
        }
    }

    /// The kernel this choice launches for an entry whose own choice is `auto` (a lean kernel only
    /// where the entry allows one, else the general kernel).
    pub(crate) fn resolve(self, auto: TileKernel) -> TileKernel {
        match self {
            TileKernel::Auto => auto,
            TileKernel::Lean(_) if !matches!(auto, TileKernel::Lean(_)) => TileKernel::General,
            other => other,
        }
    }

    /// Whether this kernel, chosen for ranges of `layout`, decodes every coded chunk of it rather
    /// than report `E_LAYOUT` for their tiles (tiles whose records are all raw with no padding are
    /// copied by every tile kernel).
    pub fn decodes(self, layout: &EntryLayout) -> bool {
        match self.resolve(auto_tile_kernel(layout)) {
            TileKernel::Lean(shape) => shape.decodes_all(layout),
            TileKernel::GeneralPairs => layout
                .chunks
                .iter()
                .filter(|c| c.group_count > 0)
                .all(|c| pair_table_chunk(c, layout.row_bytes)),
            _ => true,
        }
    }
}

/// Whether `ibp_decode_tiles_pairs` takes chunk `c` (of rows of `row_bytes`): 32-bit or 16-bit
/// words, more than 16 per row (fewer go to the several-rows-per-warp path), whole words, and a
/// table of `1 <= G * n <= TABLE_MAX_ENTRIES` entries (as the kernel's checks).
pub(crate) fn pair_table_chunk(c: &crate::layout::ChunkDesc, row_bytes: u64) -> bool {
    let entries = c.group_count as u64 * c.words_per_row as u64;
    matches!(c.word_bytes, 2 | 4)
        && c.words_per_row > 16
        && c.words_per_row as u64 * c.word_bytes as u64 == row_bytes
        && (1..=crate::device::TABLE_MAX_ENTRIES as u64).contains(&entries)
}

/// The tile kernel for ranges of `layout`: a lean one where [`lean_shape`] allows it, else the
/// pairs kernel where every coded chunk (at least one) has a pair table ([`pair_table_chunk`]),
/// else the general kernel.
pub(crate) fn auto_tile_kernel(layout: &EntryLayout) -> TileKernel {
    if let Some(shape) = lean_shape(layout) {
        return TileKernel::Lean(shape);
    }
    let mut coded = layout.chunks.iter().filter(|c| c.group_count > 0).peekable();
    if coded.peek().is_some() && coded.all(|c| pair_table_chunk(c, layout.row_bytes)) {
        TileKernel::GeneralPairs
    } else {
        TileKernel::General
    }
}

/// A chunk's table offset with this bit set locates a sparse table (`kernels/ibp_gather/sparse_rows.cuh`:
/// per group, one 32-bit word per 32 positions marking those with free bits or a non-zero Bitval
/// word), not a decode table (`IBP_TABLE_SPARSE` in the kernels).
pub(crate) const SPARSE_TABLE_FLAG: u64 = 1 << 63;

/// Whether `ibp_gather_sparse` decodes chunk `c`'s rows as exceptions over zeros: a coded chunk of
/// sparse rows, where the rows' groups have on average at most 1/8 of their positions marked (free
/// bits, or a non-zero Bitval word: a participating word elsewhere is zero, with an empty field) and
/// the records average at most W/4 stream bits per word beyond their participation bits (about 8
/// words of 32 with a field). Cora's rows and f32 rows at 5 % non-zero are such chunks; dense float
/// rows are not. `IBP_GATHER_SPARSE=0` in the environment: no chunk (A/Bs). Whether gathers use the
/// tables: [`sparse_gathers_by_default`].
fn sparse_chunk(c: &crate::layout::ChunkDesc, meta: &[u8]) -> bool {
    static OFF: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *OFF.get_or_init(|| crate::device::env_u32("IBP_GATHER_SPARSE") == Some(0)) {
        return false;
    }
    let wb = c.word_bytes as usize;
    let (n, groups, rows) = (c.words_per_row as usize, c.group_count as usize, c.row_count as usize);
    if groups == 0 || n == 0 || rows == 0 || !matches!(wb, 1 | 2 | 4 | 8) {
        return false;
    }
    let start = c.masks_offset as usize;
    let words_bytes = groups * n * wb;
    let Some(words) = start.checked_add(2 * words_bytes).and_then(|end| meta.get(start..end)) else {
        return false;
    };
    let (masks, bitvals) = words.split_at(words_bytes);
    let word_mask = word_bits_mask(wb);
    let free_positions: Vec<u64> = masks
        .chunks_exact(n * wb)
        .zip(bitvals.chunks_exact(n * wb))
        .map(|(m, b)| {
            m.chunks_exact(wb)
                .zip(b.chunks_exact(wb))
                .filter(|(m, b)| !le_word(m) & word_mask != 0 || le_word(b) != 0)
                .count() as u64
        })
        .collect();
    // Free positions summed over the rows, each row's group's (group ids past G: the kernel rejects them).
    let row_free: u64 = if groups == 1 {
        free_positions[0] * rows as u64
    } else {
        let at = c.groups_offset as usize;
        let Some(ids) = at.checked_add(rows).and_then(|end| meta.get(at..end)) else {
            return false;
        };
        ids.iter()
            .map(|&g| free_positions.get(g as usize).copied().unwrap_or(0))
            .sum()
    };
    sparse_rows_chunk(row_free, rows as u64, n as u64, wb as u64, c.payload_len)
}

/// Whether the loader takes a coded chunk for one of sparse rows, from its counts: `marked`
/// positions (free bits or a non-zero Bitval word), summed over its `rows` rows' groups, are at most
/// 1/8 of their positions (`n` words of `word_bytes` a row), and its payload of `payload_len` bytes holds at most W/4
/// stream bits a word beyond the participation bits. Such chunks get sparse tables, and their rows
/// can gather through `ibp_gather_sparse` (exceptions decoded over zeros).
pub fn sparse_rows_chunk(marked: u64, rows: u64, n: u64, word_bytes: u64, payload_len: u64) -> bool {
    if rows == 0 || n == 0 {
        return false;
    }
    let stream_bits_per_row = (payload_len.saturating_mul(8) / rows).saturating_sub(n);
    marked.saturating_mul(8) <= rows.saturating_mul(n) && stream_bits_per_row <= n.saturating_mul(2 * word_bytes)
}

/// Rows of at least this many bytes gather through `ibp_gather_sparse` by default where their
/// entry has sparse tables. On an H100, interleaved with the kernels that decode every word
/// (bench/GPU_NOTES.md entry 89), it gathered Cora's 5.7 KiB rows 1.06-1.17x as fast and f32 rows
/// at 5 % non-zero of 4 KiB 1.04-1.14x, of 1 KiB 0.99-1.06x; rows of 256 B went 0.86-0.96x.
pub const SPARSE_GATHER_MIN_ROW_BYTES: u64 = 1024;

/// Whether gathers of `layout`, whose chunks have tables at `offsets` ([`table_offsets`]), go through
/// `ibp_gather_sparse` from its load on (`GpuEntry::set_sparse_rows` changes it per entry): rows of
/// at least [`SPARSE_GATHER_MIN_ROW_BYTES`], at least half of them in chunks with a sparse table
/// (the kernel never splits a row over warps, so the other rows lose `ibp_gather_split` at small
/// batches). `IBP_GATHER_SPARSE=1` in the environment: every entry with sparse tables (`=0`: no
/// entry has any, [`sparse_chunk`]).
pub(crate) fn sparse_gathers_by_default(layout: &EntryLayout, offsets: &[u64]) -> bool {
    static ALL: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *ALL.get_or_init(|| crate::device::env_u32("IBP_GATHER_SPARSE") == Some(1)) {
        return true;
    }
    let sparse_rows: u64 = layout
        .chunks
        .iter()
        .zip(offsets)
        .filter(|(_, &o)| is_sparse_table(o))
        .map(|(c, _)| c.row_count as u64)
        .sum();
    layout.row_bytes >= SPARSE_GATHER_MIN_ROW_BYTES && sparse_rows > 0 && 2 * sparse_rows >= layout.row_count
}

/// Bytes of chunk `c`'s sparse table: `G * ceil(n / 32)` 32-bit words, rounded up to 16.
fn sparse_table_bytes(c: &crate::layout::ChunkDesc) -> u64 {
    (c.group_count as u64 * (c.words_per_row as u64).div_ceil(32) * 4).next_multiple_of(16)
}

/// Whether a chunk of `layout` gets a sparse table ([`table_offsets`]): its gathers then go through
/// `ibp_gather_sparse`.
pub(crate) fn has_sparse_tables(offsets: &[u64]) -> bool {
    offsets.iter().any(|&o| is_sparse_table(o))
}

/// Whether a chunk's table offset ([`table_offsets`]) is a sparse table's (`u64::MAX`, no table,
/// has the flag bit set too).
fn is_sparse_table(offset: u64) -> bool {
    offset != u64::MAX && offset & SPARSE_TABLE_FLAG != 0
}

/// Byte offset of each chunk's table (`u64::MAX`: none) and the tables' total size: a decode table
/// for chunks with `1 <= G * n <= GATHER_TABLE_MAX_ENTRIES` whose positions are mostly deposit-heavy
/// (see [`deposit_heavy`]), a sparse table (offset flagged [`SPARSE_TABLE_FLAG`]) for chunks of
/// sparse rows ([`sparse_chunk`]), while the total stays within `GATHER_TABLE_MAX_BYTES`.
pub(crate) fn table_offsets(layout: &EntryLayout) -> (Vec<u64>, u64) {
    table_offsets_within(
        layout,
        crate::device::GATHER_TABLE_MAX_ENTRIES,
        crate::device::GATHER_TABLE_MAX_BYTES,
    )
}

/// [`table_offsets`] with the per-chunk entry limit and the total byte limit as parameters.
fn table_offsets_within(layout: &EntryLayout, max_entries: u64, max_bytes: u64) -> (Vec<u64>, u64) {
    let mut total = 0u64;
    let offsets = layout
        .chunks
        .iter()
        .map(|c| {
            let entries = c.group_count as u64 * c.words_per_row as u64;
            let bytes = entries * launch::TABLE_ENTRY_BYTES as u64;
            if (1..=max_entries).contains(&entries) && total + bytes <= max_bytes && deposit_heavy(c, &layout.meta) {
                total += bytes;
                total - bytes
            } else if total + sparse_table_bytes(c) <= max_bytes && sparse_chunk(c, &layout.meta) {
                total += sparse_table_bytes(c);
                (total - sparse_table_bytes(c)) | SPARSE_TABLE_FLAG
            } else {
                u64::MAX
            }
        })
        .collect();
    (offsets, total)
}

/// Builds the tables of `layout`'s chunks at `offsets` (`total` bytes: [`table_offsets`]) on the
/// device (`ibp_build_tables`), enqueued on `stream`; `None` when no chunk gets one.
pub(crate) fn build_tables(
    device: &GpuDevice,
    stream: &Arc<CudaStream>,
    layout: &EntryLayout,
    (offsets, total): (&[u64], u64),
    chunks_ptr: sys::CUdeviceptr,
    meta_ptr: sys::CUdeviceptr,
) -> GpuResult<Option<(CudaSlice<u8>, CudaSlice<u64>)>> {
    if total == 0 {
        return Ok(None);
    }
    let tables = stream
        .alloc_zeros::<u8>(total as usize)
        .map_err(GpuError::driver("allocating the decode tables"))?;
    let offsets_d = stream
        .clone_htod(offsets)
        .map_err(GpuError::driver("uploading the decode table offsets"))?;
    let p = GatherParams {
        chunks: chunks_ptr,
        meta: meta_ptr,
        tables: tables.device_ptr(stream).0,
        table_offsets: offsets_d.device_ptr(stream).0,
        ..layout_params(layout, 0, 0)
    };
    launch::build_tables(&device.build_tables_fn, stream, &p, total)
        .map_err(GpuError::driver("launching ibp_build_tables"))?;
    Ok(Some((tables, offsets_d)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::build_layout;
    use crate::testdata::{encode_rows, float_rows, sparse_rows, Rng};
    use ibp_codec::EncodeOptions;

    /// The layout of `data` (rows of `row_bytes`) encoded at A = 16 with words of `w` in `groups`
    /// groups, in chunks of `chunk_rows` rows.
    fn layout_of(
        data: &[u8],
        row_bytes: usize,
        w: ibp_format::WordWidth,
        groups: u32,
        chunk_rows: usize,
    ) -> EntryLayout {
        let opts = EncodeOptions {
            align_log2: 4,
            word_width: Some(w),
            groups,
            ..Default::default()
        };
        let (metas, _) = encode_rows(data, row_bytes, &opts, chunk_rows);
        EntryLayout::new(row_bytes as u64, &metas).unwrap()
    }

    #[test]
    fn loads_give_rows_of_128_bytes_and_more_a_flat_row_index() {
        if crate::testdata::default_overridden(&["IBP_GATHER_SPANS"]) {
            return;
        }
        let mut rng = Rng::new(5);
        for (row_bytes, want) in [(64usize, false), (120, false), (128, true), (1024, true)] {
            let data = float_rows(&mut rng, 300, row_bytes, 0.02, 0);
            let (metas, payloads) = encode_rows(&data, row_bytes, &EncodeOptions::default(), 100);
            let refs: Vec<&[u8]> = payloads.iter().map(|p| p.as_slice()).collect();
            let layout = build_layout(row_bytes as u64, &metas, &refs).unwrap();
            assert!(layout.row_spans().is_some());
            assert_eq!(row_spans_wanted(&layout), want, "{row_bytes} B rows");
        }
    }

    #[test]
    fn entries_saving_half_their_bytes_are_decode_bound() {
        use crate::testdata::{encode_rows, float_rows, sparse_rows, Rng};
        let mut rng = Rng::new(3);
        let sparse = sparse_rows(&mut rng, 512, 1024, 0.05);
        let dense = float_rows(&mut rng, 512, 1024, 0.02, 0);
        for (data, want) in [(sparse, true), (dense, false)] {
            let (metas, payloads) = encode_rows(&data, 1024, &ibp_codec::EncodeOptions::default(), 128);
            let refs: Vec<&[u8]> = payloads.iter().map(|p| p.as_slice()).collect();
            let layout = build_layout(1024, &metas, &refs).unwrap();
            assert_eq!(decode_bound(&layout), want);
        }
    }

    #[test]
    fn small_gathers_of_long_rows_take_several_warps_per_row() {
        // (count, words, SMs, words per warp, decode-bound) -> log2 of warps per row; 132 SMs hold
        // 4224 warps.
        for (count, words, sms, per_warp, decode_bound, log2, why) in [
            (1024, 384, 132, 64, false, 2, "1K rows of 384 words: 4 warps each"),
            (2048, 384, 132, 64, false, 1, "2K rows: 2 warps each"),
            (
                2048,
                384,
                132,
                64,
                true,
                1,
                "2K rows: 2 warps each, decode-bound or not",
            ),
            (4096, 384, 132, 64, false, 0, "4K rows fill the GPU a warp each"),
            (
                4096,
                717,
                132,
                64,
                true,
                1,
                "4K decode-bound rows: 2 warps each, two waves",
            ),
            (4096, 127, 132, 64, true, 0, "rows under 128 words stay on one warp"),
            (16384, 717, 132, 64, true, 0, "16K rows: a warp each"),
            (
                1024,
                200,
                132,
                64,
                false,
                1,
                "200 words: 64 or more per warp for 2 warps only",
            ),
            (1024, 200, 132, 32, false, 2, "32 or more per warp: 4 warps"),
            (1, 127, 132, 64, false, 0, "rows under 128 words stay on one warp"),
            (16, 4096, 1, 64, false, 1, "one SM: 32 warps"),
        ] {
            assert_eq!(
                auto_split_log2(count, words, sms, per_warp, decode_bound),
                log2,
                "{why}"
            );
        }
        assert_eq!(split_blocks(1024, 2, 132), 1024, "a block per request at 4 warps each");
        assert_eq!(split_blocks(1024, 1, 132), 512);
        assert_eq!(split_blocks(1 << 20, 1, 132), 132 * 32, "grid capped, the kernel loops");
    }

    #[test]
    fn decode_tables_go_to_deposit_heavy_chunks_back_to_back() {
        let mut rng = Rng::new(3);
        let row_bytes = 256;
        // Chunks of 64 rows: float rows (sign + mantissa runs: decode tables), sparse rows (single
        // runs: a sparse table instead), float rows again, then noise (a raw chunk: none).
        let mut data = float_rows(&mut rng, 64, row_bytes, 0.02, 4);
        data.extend(sparse_rows(&mut rng, 64, row_bytes, 0.05));
        data.extend(float_rows(&mut rng, 64, row_bytes, 0.02, 0));
        data.extend((0..64 * row_bytes).map(|_| rng.next_u64() as u8));
        let opts = EncodeOptions {
            align_log2: 4,
            ..Default::default()
        };
        let (metas, _) = encode_rows(&data, row_bytes, &opts, 64);
        let layout = EntryLayout::new(row_bytes as u64, &metas).unwrap();
        let (offsets, total) = table_offsets(&layout);
        let kinds: Vec<&str> = offsets
            .iter()
            .map(|&o| match o {
                u64::MAX => "none",
                o if o & SPARSE_TABLE_FLAG != 0 => "sparse",
                _ => "decode",
            })
            .collect();
        assert_eq!(
            kinds,
            ["decode", "sparse", "decode", "none"],
            "groups {:?}",
            metas.iter().map(|m| m.group_count).collect::<Vec<_>>()
        );
        let mut next = 0;
        for (c, off) in layout.chunks.iter().zip(&offsets) {
            if *off != u64::MAX {
                assert_eq!(*off & !SPARSE_TABLE_FLAG, next, "tables follow each other");
                assert_eq!(off % 16, 0);
                next += if off & SPARSE_TABLE_FLAG != 0 {
                    sparse_table_bytes(c)
                } else {
                    32 * c.group_count as u64 * c.words_per_row as u64
                };
            }
        }
        assert_eq!(total, next);
    }

    #[test]
    fn long_rows_kernel_only_for_mostly_invariant_rows() {
        if crate::testdata::default_overridden(&["IBP_LEAN_LONG"]) {
            return;
        }
        let mut rng = Rng::new(8);
        let layout_of = |data: &[u8]| layout_of(data, 784, ibp_format::WordWidth::W16, 1, 128);
        // Image rows (a zero frame of 3/8 of the row at each end): most positions invariant.
        let images = layout_of(&crate::testdata::pixel_rows(&mut rng, 256, 784, 7));
        let (invariant, positions) = images.invariant_positions();
        assert_eq!(positions, 2 * 392);
        assert!(2 * invariant >= positions, "{invariant} of {positions}");
        // (Rows of whole 16-byte vectors of one group: the vector-lanes kernel, unless IBP_LEAN_VEC=0.)
        let long = if crate::device::vector_lanes_kernel() >= 1 {
            LeanShape::Vec
        } else {
            LeanShape::Long
        };
        assert_eq!(lean_shape(&images), Some(long));
        // Float values as 16-bit words: no position invariant, the pairs kernel.
        let floats = layout_of(&float_rows(&mut rng, 256, 784, 0.02, 0));
        assert_eq!(floats.invariant_positions(), (0, 2 * 392));
        assert_eq!(lean_shape(&floats), None);
        assert_eq!(auto_tile_kernel(&floats), TileKernel::GeneralPairs);
    }

    #[test]
    fn vector_lanes_kernel_only_for_chunks_it_decodes() {
        let mut rng = Rng::new(9);
        let layout_of = |data: &[u8], row_bytes, w, groups| layout_of(data, row_bytes, w, groups, 128);
        use ibp_format::WordWidth::{W16, W8};
        let vec_kernel = crate::device::vector_lanes_kernel() >= 1;
        // Image rows of 784 B (49 vectors) in one group of 16-bit words: taken.
        let images = layout_of(&crate::testdata::pixel_rows(&mut rng, 256, 784, 7), 784, W16, 1);
        assert!(LeanShape::Vec.decodes_all(&images));
        if vec_kernel {
            assert_eq!(lean_shape(&images), Some(LeanShape::Vec));
        }
        // Rows that are not whole vectors (776 B), of 8-bit words, of several groups, of more than
        // 1 KiB: not taken (the long-rows kernel, where it is wanted, or another).
        for (row_bytes, w, groups) in [(776, W16, 1), (784, W8, 1), (784, W16, 3), (1040, W16, 1)] {
            let layout = layout_of(
                &crate::testdata::pixel_rows(&mut rng, 256, row_bytes, 7),
                row_bytes,
                w,
                groups,
            );
            let label = format!("{row_bytes} B, {w:?}, {groups} groups");
            assert!(layout.chunks.iter().any(|c| c.group_count > 0), "{label}");
            assert!(!LeanShape::Vec.decodes_all(&layout), "{label}");
            assert_ne!(lean_shape(&layout), Some(LeanShape::Vec), "{label}");
        }
        // Free bits of a position in four runs are taken; in five, not (a Mask word set by hand).
        for (free, runs) in [(0x1111u16, 4), (0x1115u16, 5), (0x5555u16, 8)] {
            let mut layout = images.clone();
            let at = layout.chunks[0].masks_offset as usize + 2 * 100;
            layout.meta[at..at + 2].copy_from_slice(&(!free).to_le_bytes());
            assert_eq!(LeanShape::Vec.decodes_all(&layout), runs <= 4, "{runs} runs");
            if vec_kernel && runs > 4 {
                assert_eq!(lean_shape(&layout), Some(LeanShape::Long), "{runs} runs");
            }
        }
        // A raw chunk: not taken (the kernel takes coded chunks only).
        let mut mixed = images.clone();
        mixed.chunks[1].group_count = 0;
        assert!(!LeanShape::Vec.decodes_all(&mixed));
    }

    #[test]
    fn lean_tile_kernels_by_row_shape() {
        let mut rng = Rng::new(6);
        let layout_of = |data: &[u8], row_bytes, w, groups| layout_of(data, row_bytes, w, groups, 64);
        let coded = |l: &EntryLayout| l.chunks.iter().filter(|c| c.group_count > 0).count();
        use ibp_format::WordWidth::{W16, W32, W64};
        // 1-64 whole words per row: lean, the mid kernel from 33 words, the short-rows kernel for
        // entries of coded chunks only of <= 16 words, or <= 32 words of <= 64 B (IBP_LEAN_SHORT
        // unset or not 0).
        use LeanShape::{Any, Mid};
        let short = if crate::device::short_rows_kernel() {
            LeanShape::Short
        } else {
            Any
        };
        // (64 B rows of bf16-like values, so that their records save the 16 B of a step of A = 16.)
        for (row_bytes, w, short_rows, drop_bits, other) in [
            (64, W64, true, 16, Any),
            (64, W16, true, 16, Any),
            (128, W64, true, 4, Any),
            (96, W32, false, 4, Any),
            (136, W64, false, 4, Any),
            (256, W64, false, 4, Any),
            (132, W32, false, 4, Mid),
            (256, W32, false, 4, Mid),
            (512, W64, false, 4, Mid),
        ] {
            let shape = if short_rows { short } else { other };
            let l = layout_of(&float_rows(&mut rng, 256, row_bytes, 0.02, drop_bits), row_bytes, w, 1);
            assert!(
                !short_rows || coded(&l) == l.chunks.len(),
                "{row_bytes} B W{}: a raw chunk",
                w.bits()
            );
            assert!(coded(&l) > 0, "{row_bytes} B W{}", w.bits());
            assert_eq!(lean_shape(&l), Some(shape), "{row_bytes} B W{}", w.bits());
        }
        // Chunks of both shapes (256 B rows of 32 and of 64 words): the kernel for any shape.
        let data = float_rows(&mut rng, 256, 256, 0.02, 4);
        let (mut metas, _) = encode_rows(&data[..128 * 256], 256, &crate::testdata::fixed_width(W64, 1, 4), 64);
        metas.extend(encode_rows(&data[128 * 256..], 256, &crate::testdata::fixed_width(W32, 1, 4), 64).0);
        let l = EntryLayout::new(256, &metas).unwrap();
        assert_eq!(coded(&l), 4);
        assert_eq!(lean_shape(&l), Some(Any));
        // 65 words, or a partial last word: not lean.
        for (row_bytes, w) in [(520, W64), (260, W32), (252, W64)] {
            let l = layout_of(&float_rows(&mut rng, 256, row_bytes, 0.02, 4), row_bytes, w, 1);
            assert!(coded(&l) > 0 && lean_shape(&l).is_none(), "{row_bytes} B W{}", w.bits());
        }
        // Raw chunks only (noise): the general kernel; raw chunks beside coded ones: lean.
        let noise: Vec<u8> = (0..128 * 256).map(|_| rng.next_u64() as u8).collect();
        let l = layout_of(&noise, 256, W64, 1);
        assert!(coded(&l) == 0 && lean_shape(&l).is_none());
        let mut mixed = float_rows(&mut rng, 64, 256, 0.02, 4);
        mixed.extend_from_slice(&noise);
        let l = layout_of(&mixed, 256, W64, 1);
        assert!(coded(&l) > 0 && coded(&l) < l.chunks.len());
        assert_eq!(lean_shape(&l), Some(Any));
        // Short rows with a raw chunk beside the coded ones: the kernel for any shape.
        let mut mixed = float_rows(&mut rng, 512, 64, 0.02, 16);
        mixed.extend_from_slice(&noise);
        let l = layout_of(&mixed, 64, W64, 1);
        assert!(coded(&l) > 0 && coded(&l) < l.chunks.len());
        assert_eq!(lean_shape(&l), Some(Any));
        // More table entries (G * n) than the kernel holds: not lean.
        let mut many = Vec::new();
        for g in 0..40u8 {
            many.extend((0..64 * 512).map(|i| if i % 8 == 7 { g } else { (rng.next_u64() & 1) as u8 }));
        }
        let l = layout_of(&many, 512, W64, 40);
        let max_entries = l
            .chunks
            .iter()
            .map(|c| c.group_count as u32 * c.words_per_row)
            .max()
            .unwrap();
        assert!(max_entries > crate::device::TABLE_MAX_ENTRIES, "{max_entries} entries");
        assert!(lean_shape(&l).is_none());
    }

    #[test]
    fn decode_tables_respect_the_entry_and_byte_limits() {
        let mut rng = Rng::new(4);
        let row_bytes = 256; // 32 words of 64 bits or 64 of 32 bits: 1 KiB or 2 KiB of table per group
        let data = float_rows(&mut rng, 4 * 64, row_bytes, 0.02, 4);
        let opts = EncodeOptions {
            align_log2: 4,
            ..Default::default()
        };
        let (metas, _) = encode_rows(&data, row_bytes, &opts, 64);
        let layout = EntryLayout::new(row_bytes as u64, &metas).unwrap();
        let bytes: Vec<u64> = layout
            .chunks
            .iter()
            .map(|c| 32 * c.group_count as u64 * c.words_per_row as u64)
            .collect();
        let (all, total) = table_offsets_within(&layout, u64::MAX, u64::MAX);
        assert!(all.iter().all(|&o| o != u64::MAX));
        assert_eq!(total, bytes.iter().sum::<u64>());
        // A byte limit that fits two tables: the first two chunks get them, the others none.
        let (two, total) = table_offsets_within(&layout, u64::MAX, bytes[0] + bytes[1]);
        assert_eq!(two[..2], all[..2]);
        assert!(two[2..].iter().all(|&o| o == u64::MAX));
        assert_eq!(total, bytes[0] + bytes[1]);
        // An entry limit below every chunk's G * n: no tables at all.
        let min_entries = layout
            .chunks
            .iter()
            .map(|c| c.group_count as u64 * c.words_per_row as u64)
            .min()
            .unwrap();
        let (none, total) = table_offsets_within(&layout, min_entries - 1, u64::MAX);
        assert!(none.iter().all(|&o| o == u64::MAX));
        assert_eq!(total, 0);
    }

    #[test]
    fn sparse_rows_get_sparse_tables_and_dense_rows_do_not() {
        if crate::testdata::default_overridden(&["IBP_GATHER_SPARSE"]) {
            return;
        }
        let mut rng = Rng::new(6);
        for (w, row_bytes) in [(ibp_format::WordWidth::W32, 1024), (ibp_format::WordWidth::W64, 5732)] {
            // Rows at 3 % non-zero: sparse tables for every chunk, words of ceil(n / 32) per group.
            let sparse = sparse_rows(&mut rng, 256, row_bytes, 0.03);
            let l = layout_of(&sparse, row_bytes, w, 1, 64);
            let (offsets, total) = table_offsets(&l);
            assert!(has_sparse_tables(&offsets), "{w:?} {row_bytes}");
            assert!(offsets.iter().all(|&o| o & SPARSE_TABLE_FLAG != 0 && o != u64::MAX));
            let expected: u64 = l.chunks.iter().map(sparse_table_bytes).sum();
            assert_eq!(total, expected);
            assert_eq!(
                sparse_table_bytes(&l.chunks[0]),
                ((l.chunks[0].words_per_row as u64).div_ceil(32) * 4).next_multiple_of(16)
            );
            // Offsets follow each other, 16-byte aligned.
            for i in 1..l.chunks.len() {
                let prev = offsets[i - 1] & !SPARSE_TABLE_FLAG;
                assert_eq!(
                    offsets[i] & !SPARSE_TABLE_FLAG,
                    prev + sparse_table_bytes(&l.chunks[i - 1])
                );
            }
            // Dense float rows: no sparse table.
            let dense = float_rows(&mut rng, 256, row_bytes, 1.0, 0);
            let l = layout_of(&dense, row_bytes, w, 1, 64);
            assert!(!has_sparse_tables(&table_offsets(&l).0), "{w:?} {row_bytes}");
        }
    }

    #[test]
    fn gathers_take_the_sparse_path_for_mostly_sparse_rows_of_at_least_1_kib() {
        if crate::testdata::default_overridden(&["IBP_GATHER_SPARSE"]) {
            return;
        }
        let mut rng = Rng::new(8);
        let w = ibp_format::WordWidth::W32;
        let default_for = |kinds: &[bool], row_bytes: usize, rng: &mut Rng| {
            // Chunks of 64 rows, each sparse (3 % non-zero) or dense floats.
            let mut data = Vec::new();
            for &sparse in kinds {
                data.extend(if sparse {
                    sparse_rows(rng, 64, row_bytes, 0.03)
                } else {
                    float_rows(rng, 64, row_bytes, 1.0, 0)
                });
            }
            let l = layout_of(&data, row_bytes, w, 1, 64);
            let (offsets, _) = table_offsets(&l);
            assert_eq!(
                offsets.iter().map(|&o| is_sparse_table(o)).collect::<Vec<_>>(),
                kinds,
                "{row_bytes} B: sparse tables where the rows are sparse"
            );
            sparse_gathers_by_default(&l, &offsets)
        };
        let min = SPARSE_GATHER_MIN_ROW_BYTES as usize;
        assert!(default_for(&[true, true], min, &mut rng));
        assert!(
            !default_for(&[true, true], min - 4, &mut rng),
            "rows shorter than the minimum"
        );
        assert!(default_for(&[true, false], 2 * min, &mut rng), "half the rows sparse");
        assert!(
            !default_for(&[true, false, false], 2 * min, &mut rng),
            "a third of the rows sparse"
        );
        assert!(!default_for(&[false, false], 2 * min, &mut rng), "no sparse table");
    }

    #[test]
    fn single_runs_of_free_bits_are_not_deposit_heavy_at_any_width() {
        let mut rng = Rng::new(5);
        for word_bytes in [1usize, 2, 4, 8] {
            // Every position free in its low 3 bits (one run), then with a second run in the same
            // 32-bit half (the word's top bit, bit 20 for 64-bit words): a table only for the second.
            let second = (8 * word_bytes as u32 - 1).min(20);
            for (free, heavy) in [(0b111u64, false), (0b111 | (1u64 << second), true)] {
                let row_bytes = 64;
                let mut data = Vec::with_capacity(100 * row_bytes);
                for _ in 0..100 * row_bytes / word_bytes {
                    let w = 0x5555_5555_5555_5555u64 & !free | (rng.next_u64() & free);
                    data.extend_from_slice(&w.to_le_bytes()[..word_bytes]);
                }
                let opts = EncodeOptions {
                    word_width: Some(ibp_format::WordWidth::from_bits(8 * word_bytes as u32).unwrap()),
                    align_log2: 4,
                    ..Default::default()
                };
                let (metas, _) = encode_rows(&data, row_bytes, &opts, 100);
                let layout = EntryLayout::new(row_bytes as u64, &metas).unwrap();
                let c = &layout.chunks[0];
                assert!(c.group_count >= 1, "W={} coded", 8 * word_bytes);
                assert_eq!(
                    deposit_heavy(c, &layout.meta),
                    heavy,
                    "W={} free {free:#x}",
                    8 * word_bytes
                );
            }
        }
    }
}
