//! How range decodes are cut into tiles: the tile size of each tile kernel class ([`tiling`],
//! [`balanced_tile_rows`]), the tiles of a range over the chunks it overlaps ([`tile_starts`],
//! [`RangeTiles`]), and a tile launch's parameters narrowed to those chunks ([`range_chunks`]).
#![forbid(unsafe_code)]

use crate::entry::invalid;
use crate::error::GpuResult;
use crate::launch::{self, GatherParams};
use crate::layout::EntryLayout;

/// Tiling of a range decode by a tile kernel of `class`
/// ([`TileKernel::tile_class`](crate::TileKernel::tile_class): general, lean, short-rows or long-rows):
/// `(tile_rows, tile_bytes, table_entries)` (table entries: the largest `G * n` of a coded chunk
/// within `TABLE_MAX_ENTRIES`; chunks above it decode without a table; none for the vector-lanes
/// kernel, class 4, which builds its own tables), or `None` when a record can
/// be too long for a tile (ranges then go through `ibp_gather`). Tiles hold as many raw rows as fit
/// the class's budget, or, where the records stored fill it with at least twice as many rows (rows
/// that save more than half their bytes; for the vector-lanes kernel any more rows:
/// [`crate::device::tiles_by_records_gain`]), as many rows as their records fill ([`record_tile_rows`]).
/// The vector-lanes kernel's tiles then grow to the most rows whose records, offsets and guard fit
/// the shared memory that keeps 4 of its blocks on an SM ([`crate::device::vec_tiles_fill_smem`]).
pub(crate) fn tiling(layout: &EntryLayout, class: usize) -> Option<(u32, u32, u32)> {
    let max_raw = layout.chunks.iter().map(|c| c.raw_padded).max()?;
    let table = layout
        .chunks
        .iter()
        .map(|c| c.group_count as u64 * c.words_per_row as u64)
        .filter(|&e| e <= crate::device::TABLE_MAX_ENTRIES as u64)
        .max()
        .unwrap_or(0) as u32;
    let vector_lanes = crate::TileKernel::Lean(crate::LeanShape::Vec).tile_class();
    let table = if class == vector_lanes { 0 } else { table };
    let budget = crate::device::tile_bytes(class, launch::TABLE_ENTRY_BYTES * table);
    if max_raw > budget / 2 {
        return None;
    }
    let rows = (budget / max_raw).clamp(1, 1024);
    let balanced = class == 0 && crate::device::balanced_tiles();
    let mut tiled = None;
    if crate::device::tiles_by_records(class) {
        let at_least = (rows as u64 * crate::device::tiles_by_records_gain(class) as u64).div_ceil(100);
        if let Some(mut rows) = record_tile_rows(layout, at_least.min(1025) as u32, budget) {
            if balanced && rows > launch::TILE_WARPS {
                rows -= rows % launch::TILE_WARPS;
            }
            tiled = Some((rows, tile_buffer_bytes(layout.window_record_bytes(rows as u64)), table));
        }
    }
    let (rows, bytes, table) = tiled.unwrap_or_else(|| {
        let rows = if balanced {
            balanced_tile_rows(rows, max_raw, table)
        } else {
            rows
        };
        (rows, tile_buffer_bytes(rows as u64 * max_raw as u64), table)
    });
    if class == vector_lanes && crate::device::vec_tiles_fill_smem() {
        // The most rows whose whole dynamic shared memory (guard, records, offsets) keeps 4 blocks
        // on an SM, never fewer than above.
        let fits = |rows: u32| {
            let bytes = tile_buffer_bytes(layout.window_record_bytes(rows as u64));
            launch::tiles_smem_u64(rows, bytes, 0) <= crate::device::VEC_DYNAMIC_SMEM_MAX as u64
        };
        if let Some(more) = most_rows_that_fit(rows, fits) {
            return Some((more, tile_buffer_bytes(layout.window_record_bytes(more as u64)), 0));
        }
    }
    Some((rows, bytes, table))
}

/// How range decodes through the long-rows tile kernel spread a tile's rows over the warps of
/// its block ([`GpuEntry::use_row_segments`](crate::GpuEntry::use_row_segments)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RowSegments {
    /// Segments only where the range has fewer than 2 (`IBP_LONG_TILES_PER_SM`) tiles per
    /// SM (the default; `tiling::launch_tiles`).
    #[default]
    Auto,
    /// The entry's tiles, a lane per whole row, whatever the range.
    WholeRows,
    /// Rows cut into segments whatever the range (tiles as for a small range), for tests.
    Segments,
}

/// How a range decode is cut into tiles and launched ([`GpuEntry::tile_plan`](crate::GpuEntry::tile_plan)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TilePlan {
    /// The tile kernel.
    pub kernel: crate::TileKernel,
    /// Rows per tile (after any cut of a small range into row segments).
    pub tile_rows: u32,
    /// Bytes of records a tile's buffer holds.
    pub tile_bytes: u32,
    /// Dynamic shared memory each block of the launch asks for (guard, tile, offsets, table).
    pub shared_bytes: u32,
    /// Row segments per row (1: a lane per whole row; long-rows kernel only).
    pub row_segments: u32,
    /// Tiles of the range.
    pub tiles: u64,
    /// Blocks the launch asks for (each takes a run of consecutive tiles).
    pub blocks: u32,
}

/// A [`RowSegments`] that can be changed through a shared reference (the entry's and the
/// CPU-run kernels' setting), and the launch plan it gives.
#[derive(Debug, Default)]
pub(crate) struct RowSegmentsSetting(std::sync::atomic::AtomicU8);

impl RowSegmentsSetting {
    /// Uses `mode` from the next launch on.
    pub(crate) fn set(&self, mode: RowSegments) {
        let code = match mode {
            RowSegments::Auto => 0,
            RowSegments::WholeRows => 1,
            RowSegments::Segments => 2,
        };
        self.0.store(code, std::sync::atomic::Ordering::Relaxed);
    }

    /// The mode set last (`Auto` until one is).
    pub(crate) fn get(&self) -> RowSegments {
        match self.0.load(std::sync::atomic::Ordering::Relaxed) {
            1 => RowSegments::WholeRows,
            2 => RowSegments::Segments,
            _ => RowSegments::Auto,
        }
    }

    /// [`launch_tiles`] in the mode set last.
    pub(crate) fn launch_tiles(&self, class: usize, tile_rows: u32, count: u64, sm_count: u32) -> (u32, u32) {
        launch_tiles(class, tile_rows, count, sm_count, self.get())
    }

    /// Tile rows and row segments of a range decode of rows `first .. first + count` (inside the
    /// entry, `count >= 1`) by a tile kernel of `class` whose entry [`tiling`] gave `tiling`:
    /// [`Self::launch_tiles`], then [`fill_tile_rows`] where [`crate::device::tile_fill`] asks for
    /// it for the class.
    pub(crate) fn range_tiles(
        &self,
        layout: &EntryLayout,
        class: usize,
        tiling: (u32, u32, u32),
        first: u64,
        count: u64,
        sm_count: u32,
    ) -> GpuResult<(u32, u32)> {
        let (tile_rows, tile_bytes, table) = tiling;
        let (rows, segments) = self.launch_tiles(class, tile_rows, count, sm_count);
        if !crate::device::tile_fill(class) || segments != 1 {
            return Ok((rows, segments));
        }
        let resident = crate::device::resident_tile_blocks(class, launch::tiles_smem(rows, tile_bytes, table));
        let resident = resident as u64 * sm_count.max(1) as u64;
        let rows = fill_tile_rows(layout, first, count, rows, resident, crate::device::tile_fill_waves())?;
        Ok((rows, segments))
    }
}

/// Tile rows for rows `first .. first + count` whose `tile_rows`-row tiles need at most
/// `max_waves` waves of `resident` blocks, the last one partial: the fewest rows per tile, a
/// multiple of [`launch::TILE_WARPS`] and at most `tile_rows`, whose tiles still fit those waves,
/// so that every resident block gets a smaller tile instead of some blocks a large one and the
/// others nothing. `tile_rows` where the tiles need more waves or fill their last one (each block
/// then has tiles of its own, and smaller ones only add per-tile work: GPU_NOTES entry 75, -1-6 %
/// on entries of 7-11 waves), or where no smaller multiple fits. The default `max_waves` is 2
/// ([`crate::device::tile_fill_waves`]). (Entry 75: Cora's whole-entry decode, 357-374 tiles of
/// 128-136 rows on 528 resident blocks of an H100, 0.81-0.86 -> 0.89-0.90 of the D2D copy with
/// 96-row tiles; f32-sparse 1 KiB rows, 768 tiles, 0.93 -> 1.01 with 1,024; 8 MiB ranges of most
/// entries 1.1-5x.)
pub(crate) fn fill_tile_rows(
    layout: &EntryLayout,
    first: u64,
    count: u64,
    tile_rows: u32,
    resident: u64,
    max_waves: u64,
) -> GpuResult<u32> {
    let step = launch::TILE_WARPS;
    let tiles = |rows: u32| tile_starts(layout, first, count, rows).map(|t| t.tiles);
    let resident = resident.max(1);
    // A range has at least ceil(count / tile_rows) tiles: past the waves without walking its chunks.
    if count.div_ceil(u64::from(tile_rows.max(1))) > max_waves.saturating_mul(resident) {
        return Ok(tile_rows);
    }
    let now = tiles(tile_rows)?;
    let waves = now.div_ceil(resident);
    let limit = waves * resident;
    if waves > max_waves || now == limit {
        return Ok(tile_rows);
    }
    // Smallest k in 1 ..= tile_rows / step with tiles(k * step) <= limit (tiles only fall as
    // rows grow); none: tile_rows.
    let (mut lo, mut hi) = (1u32, tile_rows / step);
    if hi == 0 || tiles(hi * step)? > limit {
        return Ok(tile_rows);
    }
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if tiles(mid * step)? <= limit {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Ok((lo * step).min(tile_rows))
}

/// Tile rows and row segments (`GatherParams::row_segments`) for a range decode of `count` rows
/// by a tile kernel of `class` on `sm_count` SMs: the entry's `tile_rows` and whole rows, except
/// for the long-rows kernel (3), whose lanes each walk a row, and the vector-lanes kernel (4, rows
/// only: its warps share a tile's vectors whatever its rows): when the range has fewer than
/// [`crate::device::long_tiles_per_sm`] tiles per SM (or `mode` asks for segments), the fewest
/// whole 32-row groups that give it that many (at least 32 rows, at most the entry's tile), each
/// row cut into up to [`launch::TILE_WARPS`] segments so that every warp of a block decodes
/// (GPU_NOTES entry 65: Fashion-MNIST ranges of 10,700 rows 0.29-0.32 -> 0.39-0.44 of the D2D
/// copy; on ranges of many tiles per SM segments lost 7 %). Fewer rows than the entry's tiles
/// always fit the same tile buffer.
pub(crate) fn launch_tiles(class: usize, tile_rows: u32, count: u64, sm_count: u32, mode: RowSegments) -> (u32, u32) {
    let per_sm = crate::device::long_tiles_per_sm().max(u32::from(mode == RowSegments::Segments)) as u64;
    let wanted = (sm_count.max(1) as u64).saturating_mul(per_sm);
    let few_tiles = count.div_ceil(tile_rows.max(1) as u64) < wanted;
    let long_rows = crate::TileKernel::Lean(crate::LeanShape::Long).tile_class();
    let vector_lanes = crate::TileKernel::Lean(crate::LeanShape::Vec).tile_class();
    if (class != long_rows && class != vector_lanes)
        || mode == RowSegments::WholeRows
        || !(few_tiles || mode == RowSegments::Segments)
    {
        return (tile_rows, 1);
    }
    let rows = count.div_ceil(wanted).div_ceil(32).saturating_mul(32).max(32);
    let segments = if class == long_rows { launch::TILE_WARPS } else { 1 };
    (rows.min(tile_rows as u64) as u32, segments)
}

/// Shared-memory bytes of a tile buffer for at most `records` bytes of records: the tile is
/// loaded from the 16-byte vector holding its first record on, and the kernels check a tile's
/// records against this size before loading them.
fn tile_buffer_bytes(records: u64) -> u32 {
    u32::try_from((records + 48 + 15) & !15).unwrap_or(u32::MAX)
}

/// Tile rows sized by the records the entry actually stores ([`crate::device::tiles_by_records`]):
/// the most rows (at most 1024) such that no run of that many consecutive rows of a chunk holds more
/// than `budget` record bytes, or `None` when that is fewer than `at_least`. A tile is never more
/// than `tile_rows` consecutive rows of one chunk, so every tile of any range then fits.
fn record_tile_rows(layout: &EntryLayout, at_least: u32, budget: u32) -> Option<u32> {
    most_rows_that_fit(at_least, |rows| {
        layout.window_record_bytes(rows as u64) <= budget as u64
    })
}

/// The most rows (at most 1024) that `fits`, a test that holds up to some number of rows and for
/// none beyond, or `None` when `at_least` rows do not fit.
fn most_rows_that_fit(at_least: u32, fits: impl Fn(u32) -> bool) -> Option<u32> {
    if at_least > 1024 || !fits(at_least.max(1)) {
        return None;
    }
    let (mut lo, mut hi) = (at_least.max(1), 1024);
    if fits(hi) {
        lo = hi;
    }
    // Invariant: lo fits; hi + 1 does not, or is past 1024.
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    Some(lo)
}

/// Rows per tile of `ibp_decode_tiles` made a multiple of its warps: the warps decode a tile's rows
/// round-robin and the block waits at a barrier for the warp with the most, so 21 rows (MiniLM's
/// 1536 B rows in 32 KiB) cost as much as 24. Rounded up where the larger tile still keeps 4 blocks
/// on an SM (`TILE_BLOCK_SMEM` with the table), else down (never below one row per warp; fewer rows
/// than warps are only rounded up).
pub(crate) fn balanced_tile_rows(rows: u32, max_raw: u32, table_entries: u32) -> u32 {
    let warps = launch::TILE_WARPS;
    if rows.is_multiple_of(warps) {
        return rows;
    }
    let up = rows.next_multiple_of(warps);
    let up_bytes = (up as u64 * max_raw as u64 + 48 + 15) & !15;
    let fits = up_bytes <= u32::MAX as u64
        && launch::tiles_smem(up, up_bytes as u32, table_entries) <= crate::device::TILE_BLOCK_SMEM;
    if fits {
        up
    } else if rows > warps {
        rows / warps * warps
    } else {
        rows
    }
}

/// The tiles of a range decode (tiles of at most `tile_rows` rows within one chunk), over the
/// chunks the range overlaps only: `first_chunk` and the following `starts.len() - 1` chunks, so a
/// decode of a few chunks of an entry of thousands costs no pass over all of them.
pub(crate) struct RangeTiles {
    /// The range's first chunk.
    pub first_chunk: usize,
    /// Entry `i`: index of chunk `first_chunk + i`'s first tile; the last entry: the tile count.
    pub starts: Vec<u32>,
    /// Tiles in all.
    pub tiles: u64,
}

/// [`RangeTiles`] of rows `first .. first + count` (`count >= 1`, inside the entry).
pub(crate) fn tile_starts(layout: &EntryLayout, first: u64, count: u64, tile_rows: u32) -> GpuResult<RangeTiles> {
    let end = first + count;
    let (first_chunk, _) = layout.locate(first)?;
    let (last_chunk, _) = layout.locate(end - 1)?;
    let chunks = &layout.chunks[first_chunk..=last_chunk];
    let mut starts = Vec::with_capacity(chunks.len() + 1);
    let mut acc = 0u64;
    for c in chunks {
        starts.push(acc as u32);
        let c_end = c.first_row + c.row_count as u64;
        let (a, b) = (first.max(c.first_row), end.min(c_end));
        if a < b {
            acc += (b - a).div_ceil(tile_rows as u64);
        }
    }
    starts.push(acc as u32);
    if acc > u32::MAX as u64 {
        return Err(invalid("range needs more than 2^32 tiles"));
    }
    Ok(RangeTiles {
        first_chunk,
        starts,
        tiles: acc,
    })
}

/// Narrows a tile launch's parameters to `chunks` descriptors from `first_chunk` on (the tile kernels
/// index chunks only through `tile_starts`; descriptors hold absolute offsets into the metadata,
/// anchors and payload): the descriptor and table-offset arrays start there, and `chunk_rows` no
/// longer describes chunk indices, so it is cleared.
pub(crate) fn range_chunks(p: &mut GatherParams, first_chunk: usize, chunks: usize) {
    p.chunks += (first_chunk * crate::layout::ChunkDesc::SIZE) as u64;
    if p.table_offsets != 0 {
        p.table_offsets += (first_chunk * std::mem::size_of::<u64>()) as u64;
    }
    p.chunk_count = chunks as u32;
    p.chunk_rows = 0;
    p.row_spans = 0;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::build_layout;
    use crate::testdata::{encode_rows, float_rows, Rng};
    use ibp_codec::EncodeOptions;

    /// The layout of `rows` generated f32 rows of `row_bytes` (seed `seed`) in chunks of
    /// `chunk_rows`.
    fn float_layout(seed: u64, rows: usize, row_bytes: usize, chunk_rows: usize) -> EntryLayout {
        let mut rng = Rng::new(seed);
        let (metas, payloads) = encode_rows(
            &float_rows(&mut rng, rows, row_bytes, 0.02, 4),
            row_bytes,
            &EncodeOptions::default(),
            chunk_rows,
        );
        let refs: Vec<&[u8]> = payloads.iter().map(|p| p.as_slice()).collect();
        build_layout(row_bytes as u64, &metas, &refs).unwrap()
    }

    #[test]
    fn filled_tiles_are_the_fewest_rows_that_keep_the_partial_waves() {
        // Chunks of 64 rows of 256 B: 1,000 rows in 16 chunks, the last partial.
        let layout = float_layout(5, 1000, 256, 64);
        assert!(layout.chunks.len() > 4, "{} chunks", layout.chunks.len());
        let tiles = |first, count, rows| tile_starts(&layout, first, count, rows).unwrap().tiles;
        for (first, count) in [(0u64, 1000u64), (10, 900), (999, 1), (100, 64)] {
            for tile_rows in [8u32, 24, 40, 64, 136] {
                for (resident, max_waves) in [1u64, 3, 7, 16, 40, 1000]
                    .into_iter()
                    .flat_map(|r| [(r, 1), (r, 2), (r, 3)])
                {
                    let rows = fill_tile_rows(&layout, first, count, tile_rows, resident, max_waves).unwrap();
                    let case = format!(
                        "rows {first} + {count}, {tile_rows} per tile, {resident} resident, {max_waves} waves: {rows}"
                    );
                    let now = tiles(first, count, tile_rows);
                    let limit = now.div_ceil(resident) * resident;
                    if now.div_ceil(resident) > max_waves || now == limit {
                        assert_eq!(
                            rows, tile_rows,
                            "{case}: more waves, or full ones, are left as they are"
                        );
                        continue;
                    }
                    assert!(rows <= tile_rows && rows >= 1, "{case}");
                    assert!(tiles(first, count, rows) <= limit, "{case}: more waves");
                    if rows < tile_rows {
                        assert_eq!(rows % launch::TILE_WARPS, 0, "{case}");
                    }
                    // No smaller multiple of the warps keeps within the waves.
                    let mut r = launch::TILE_WARPS;
                    while r < rows {
                        assert!(tiles(first, count, r) > limit, "{case}: {r} rows would do");
                        r += launch::TILE_WARPS;
                    }
                }
            }
        }
        // One wave of 16 chunks' tiles of 64 rows (16 tiles) on 40 resident blocks: tiles of 32
        // rows (32 tiles) fill it better; 24 rows would need 47 tiles.
        assert_eq!(fill_tile_rows(&layout, 0, 1000, 64, 40, 1).unwrap(), 32);
        // 16 tiles on 16 or 7 resident blocks: a full wave, or more, left as it is.
        assert_eq!(fill_tile_rows(&layout, 0, 1000, 64, 16, 1).unwrap(), 64);
        assert_eq!(fill_tile_rows(&layout, 0, 1000, 64, 7, 1).unwrap(), 64);
    }

    #[test]
    fn long_rows_kernel_cuts_small_ranges_into_tiles_for_every_sm() {
        if crate::testdata::default_overridden(&["IBP_LONG_TILES_PER_SM"]) {
            return;
        }
        let segs = launch::TILE_WARPS;
        // 10,000 rows on 132 SMs, 122-row tiles: 264 tiles wanted, so 38 rows, rounded up to 64.
        assert_eq!(launch_tiles(3, 122, 10_000, 132, RowSegments::Auto), (64, segs));
        // Ranges of enough tiles keep the entry's tiles and whole rows; small ones never go below
        // one 32-row group.
        assert_eq!(launch_tiles(3, 122, 1_000_000, 132, RowSegments::Auto), (122, 1));
        assert_eq!(launch_tiles(3, 122, 122 * 264, 132, RowSegments::Auto), (122, 1));
        assert_eq!(launch_tiles(3, 122, 122 * 264 - 122, 132, RowSegments::Auto).1, segs);
        assert_eq!(launch_tiles(3, 122, 100, 132, RowSegments::Auto), (32, segs));
        assert_eq!(launch_tiles(3, 20, 100, 132, RowSegments::Auto), (20, segs));
        for count in [1u64, 31, 33, 5_000, 20_000, 32_000] {
            let (rows, s) = launch_tiles(3, 122, count, 132, RowSegments::Auto);
            assert_eq!(s, segs);
            // Whole 32-row groups (or the entry's tile, which they never pass), and the fewest: a
            // group fewer would give at least the wanted tiles.
            assert!(
                rows == 122 || (rows < 122 && rows.is_multiple_of(32)),
                "{count}: {rows}"
            );
            assert!(
                rows == 32 || count.div_ceil(rows as u64 - 32) >= 132 * 2,
                "{count}: {rows}"
            );
        }
        // The vector-lanes kernel: the same tiles, whole rows (its warps share a tile's vectors).
        for count in [100u64, 10_000, 1_000_000] {
            assert_eq!(
                launch_tiles(4, 122, count, 132, RowSegments::Auto),
                (launch_tiles(3, 122, count, 132, RowSegments::Auto).0, 1)
            );
        }
        // Other kernels keep the entry's tiles, whole rows.
        for class in 0..3 {
            for mode in [RowSegments::Auto, RowSegments::WholeRows, RowSegments::Segments] {
                assert_eq!(launch_tiles(class, 122, 10_000, 132, mode), (122, 1));
            }
        }
        // The modes tests force: whole rows on a small range, segments on a large one.
        assert_eq!(launch_tiles(3, 122, 10_000, 132, RowSegments::WholeRows), (122, 1));
        assert_eq!(launch_tiles(3, 122, 1_000_000, 132, RowSegments::Segments), (122, segs));
        assert_eq!(launch_tiles(3, 122, 1_000, 1, RowSegments::Segments), (122, segs));
        assert_eq!(launch_tiles(3, 122, 100, 1, RowSegments::Segments), (64, segs));
    }

    #[test]
    fn row_segments_setting_keeps_the_mode_set_last() {
        let setting = RowSegmentsSetting::default();
        assert_eq!(setting.get(), RowSegments::Auto);
        for mode in [RowSegments::Segments, RowSegments::WholeRows, RowSegments::Auto] {
            setting.set(mode);
            assert_eq!(setting.get(), mode);
            assert_eq!(
                setting.launch_tiles(3, 122, 10_000, 132),
                launch_tiles(3, 122, 10_000, 132, mode)
            );
        }
    }

    #[test]
    fn lean_tiles_are_larger_while_four_blocks_fit_an_sm() {
        if crate::testdata::default_overridden(&["IBP_TILE_BYTES"]) {
            return;
        }
        let mut rng = Rng::new(5);
        let layout_of = |rows: &[u8], row_bytes: usize, groups: u32| {
            let opts = EncodeOptions {
                align_log2: 4,
                groups,
                word_width: Some(ibp_format::WordWidth::W64),
                ..Default::default()
            };
            let (metas, payloads) = encode_rows(rows, row_bytes, &opts, 1 << 20);
            let refs: Vec<&[u8]> = payloads.iter().map(|p| p.as_slice()).collect();
            build_layout(row_bytes as u64, &metas, &refs).unwrap()
        };
        // 256 B rows, one group: a 32-entry table; the lean kernel's tiles hold 48 KiB of records.
        let small = layout_of(&float_rows(&mut rng, 400, 256, 0.02, 4), 256, 1);
        let smem = |class| {
            let (rows, bytes, table) = tiling(&small, class).unwrap();
            (rows, launch::tiles_smem(rows, bytes, table))
        };
        let ((lean_rows, lean_smem), (general_rows, _)) = (smem(1), smem(0));
        assert_eq!((lean_rows, general_rows), (192, 128));
        assert!(
            lean_smem <= crate::device::TILE_BLOCK_SMEM,
            "{lean_smem} B of shared memory"
        );
        // 256 B rows, 16 groups: a 512-entry (16 KiB) table leaves 56 - 16 - 4 = 36 KiB of records.
        let grouped = layout_of(&float_rows(&mut rng, 400, 256, 0.02, 4), 256, 16);
        let (rows, bytes, table) = tiling(&grouped, 1).unwrap();
        assert_eq!((rows, table), (36 * 1024 / 256, 512));
        assert!(launch::tiles_smem(rows, bytes, table) <= crate::device::TILE_BLOCK_SMEM);
        // 64 B rows through the short-rows kernel: 64 KiB tiles of 1024 rows, 3 blocks per SM.
        let kv = layout_of(&float_rows(&mut rng, 4096, 64, 0.02, 16), 64, 1);
        let (rows, bytes, table) = tiling(&kv, 2).unwrap();
        assert_eq!((rows, table), (1024, 8));
        let smem = launch::tiles_smem(rows, bytes, table);
        assert!(smem <= crate::device::SHORT_BLOCK_SMEM, "{smem} B of shared memory");
        assert!(3 * (smem + 1024) <= 228 * 1024, "{smem} B: 3 blocks per SM");
        // A 1024-entry (32 KiB) table leaves 75 - 1 - 32 - 4 = 38 KiB of records.
        let grouped = layout_of(&float_rows(&mut rng, 4096, 64, 0.02, 16), 64, 128);
        let (rows, bytes, table) = tiling(&grouped, 2).unwrap();
        assert_eq!(table, 1024);
        assert_eq!(rows, 38 * 1024 / 64);
        assert!(launch::tiles_smem(rows, bytes, table) <= crate::device::SHORT_BLOCK_SMEM);
        // 784 B rows of 16-bit words (Fashion-MNIST) through the long-rows kernel: a 392-entry table
        // would leave 113 - 1 - 12.25 - 4 = 95.75 KiB of records; the tile takes LONG_TILE_BYTES, 84
        // KiB, 109 raw rows (about 3.4 warps' 32), and 2 blocks per SM. Pixel rows that save more
        // than half their bytes fill tiles of at least twice those rows with their records.
        let long_opts = EncodeOptions {
            align_log2: 4,
            word_width: Some(ibp_format::WordWidth::W16),
            ..Default::default()
        };
        let images = crate::testdata::pixel_rows(&mut rng, 600, 784, 7);
        let (metas, payloads) = encode_rows(&images, 784, &long_opts, 1 << 20);
        let refs: Vec<&[u8]> = payloads.iter().map(|p| p.as_slice()).collect();
        let long = build_layout(784, &metas, &refs).unwrap();
        // Tiles of `raw_rows` raw rows in `budget`, or, where the class's gain of rows
        // (`tiles_by_records_gain`: twice as many, any more for the vector-lanes kernel) have
        // records that fit, the most rows whose records fit (the buffer then holds them and a
        // loaded vector's slack).
        let record_rows = |class: usize, budget: u32, raw_rows: u32| {
            let (rows, bytes, table) = tiling(&long, class).unwrap();
            let most = long.window_record_bytes(rows as u64);
            let at_least = (raw_rows as u64 * crate::device::tiles_by_records_gain(class) as u64).div_ceil(100);
            if long.window_record_bytes(at_least) <= budget as u64 {
                assert!((at_least..1024).contains(&(rows as u64)), "class {class}: {rows} rows");
                assert!(most <= budget as u64 && long.window_record_bytes(rows as u64 + 1) > budget as u64);
                assert_eq!(bytes as u64, (most + 48 + 15) & !15);
            } else {
                assert_eq!(rows, raw_rows, "class {class}");
            }
            (rows, bytes, table)
        };
        assert_eq!(crate::device::LONG_TILE_BYTES, 84 * 1024);
        let (rows, bytes, table) = record_rows(3, crate::device::LONG_TILE_BYTES, 109);
        assert_eq!(table, 392);
        let smem = launch::tiles_smem(rows, bytes, table);
        assert!(smem <= crate::device::LONG_BLOCK_SMEM, "{smem} B of shared memory");
        assert!(2 * (smem + 1024) <= 228 * 1024, "{smem} B: 2 blocks per SM");
        // The same rows through the vector-lanes kernel: no per-position table, and 4 blocks per SM
        // with its 11 KiB of static shared memory. Tiles hold the most rows whose records, offsets
        // and guard fit the 45 KiB of dynamic shared memory that leaves a block (more than the
        // records within VEC_TILE_BYTES, 40 KiB, of 52 raw rows or more by their records).
        assert_eq!(crate::device::VEC_TILE_BYTES, 40 * 1024);
        let vec_smem = |rows: u32| {
            launch::tiles_smem(rows, tile_buffer_bytes(long.window_record_bytes(rows as u64)), 0)
                + crate::device::VEC_STATIC_SMEM
        };
        let (rows, bytes, table) = tiling(&long, 4).unwrap();
        assert_eq!(table, 0);
        assert_eq!(bytes, tile_buffer_bytes(long.window_record_bytes(rows as u64)));
        let by_budget = record_tile_rows(&long, 52, crate::device::VEC_TILE_BYTES).unwrap();
        let smem = vec_smem(rows);
        assert!(4 * (smem + 1024) <= 228 * 1024, "{smem} B: 4 blocks per SM");
        assert_eq!(
            crate::device::resident_tile_blocks(4, smem - crate::device::VEC_STATIC_SMEM),
            4
        );
        if crate::device::vec_tiles_fill_smem() {
            assert!(
                rows > by_budget && by_budget > 52,
                "{rows} rows a tile, {by_budget} within 40 KiB"
            );
            assert!(
                rows == 1024 || 4 * (vec_smem(rows + 1) + 1024) > 228 * 1024,
                "{rows} rows is not the most that keep 4 blocks per SM"
            );
        } else {
            assert_eq!(rows, by_budget);
        }
    }

    #[test]
    fn record_sized_tiles_hold_every_run_of_their_rows() {
        let mut rng = Rng::new(9);
        let opts = EncodeOptions {
            align_log2: 4,
            word_width: Some(ibp_format::WordWidth::W16),
            ..Default::default()
        };
        // Chunks of 100, 37 and 1 rows: windows longer than a chunk hold the whole chunk.
        let images = crate::testdata::pixel_rows(&mut rng, 138, 784, 3);
        let (metas, payloads) = crate::testdata::encode_rows_sized(&images, 784, &opts, &[100, 37, 1]);
        let refs: Vec<&[u8]> = payloads.iter().map(|p| p.as_slice()).collect();
        let layout = build_layout(784, &metas, &refs).unwrap();
        // The oracle: every run of k consecutive rows of a chunk (or the whole chunk when shorter).
        let brute = |k: usize| {
            metas
                .iter()
                .flat_map(|m| {
                    let lens: Vec<u64> = m.row_offsets.windows(2).map(|w| w[1] - w[0]).collect();
                    let k = k.min(lens.len());
                    (0..=lens.len() - k)
                        .map(move |r| lens[r..r + k].iter().sum::<u64>())
                        .collect::<Vec<_>>()
                })
                .max()
                .unwrap()
        };
        for k in [1usize, 2, 31, 37, 99, 100, 101, 500] {
            assert_eq!(layout.window_record_bytes(k as u64), brute(k), "{k} rows");
        }
        assert!(brute(1) <= 784 && brute(138) < 138 * 784, "coded records save bytes");
        for budget in [4096u32, 10_000, 30_000, 60_000] {
            let at_least = budget / 784;
            let rows = record_tile_rows(&layout, at_least, budget).unwrap();
            let most = layout.window_record_bytes(rows as u64);
            assert!(
                rows >= at_least && most <= budget as u64,
                "{budget} B: {rows} rows, {most} B"
            );
            assert!(
                rows == 1024 || brute(rows as usize + 1) > budget as u64,
                "{budget} B: {rows} rows is not the most"
            );
            // Asking for more rows than fit: none.
            assert_eq!(record_tile_rows(&layout, rows + 1, budget), None, "{budget} B");
        }
        // Every row fits a budget above the whole entry: the 1024-row cap.
        assert_eq!(record_tile_rows(&layout, 1, 1 << 20), Some(1024));
        assert_eq!(record_tile_rows(&layout, 1025, 1 << 20), None);
    }

    #[test]
    fn tiles_are_sized_by_records_only_where_they_hold_twice_the_raw_rows() {
        if crate::testdata::default_overridden(&["IBP_TILE_BYTES", "IBP_TILE_RECORDS"]) {
            return;
        }
        let mut rng = Rng::new(10);
        let layout_of = |rows: &[u8], row_bytes: usize| {
            let opts = EncodeOptions {
                align_log2: 4,
                word_width: Some(ibp_format::WordWidth::W64),
                ..Default::default()
            };
            let (metas, payloads) = encode_rows(rows, row_bytes, &opts, 1 << 20);
            let refs: Vec<&[u8]> = payloads.iter().map(|p| p.as_slice()).collect();
            build_layout(row_bytes as u64, &metas, &refs).unwrap()
        };
        // 4 KiB rows of floats saving little: 32 KiB tiles of 8 raw rows, as before.
        let dense = layout_of(&float_rows(&mut rng, 64, 4096, 0.02, 4), 4096);
        assert!(dense.window_record_bytes(16) > 32 * 1024);
        assert_eq!(tiling(&dense, 0).unwrap().0, 8);
        // 4 KiB rows of 5 % nonzero floats: records of a few hundred bytes, tiles of many more rows,
        // a multiple of the general kernel's 8 warps, their records within 32 KiB.
        let sparse = layout_of(&crate::testdata::sparse_rows(&mut rng, 2000, 4096, 0.05), 4096);
        let (rows, bytes, _) = tiling(&sparse, 0).unwrap();
        assert!(rows >= 16 && rows.is_multiple_of(launch::TILE_WARPS), "{rows} rows");
        let most = sparse.window_record_bytes(rows as u64);
        assert!(most <= 32 * 1024 && sparse.window_record_bytes(rows as u64 + 8) > 32 * 1024);
        assert_eq!(bytes as u64, (most + 48 + 15) & !15);
    }

    #[test]
    fn general_tiles_hold_a_multiple_of_the_warps_rows() {
        let warps = launch::TILE_WARPS;
        // MiniLM rows of 1536 B: 21 rows in 32 KiB, 24 with a 6 KiB table still fit 4 blocks per SM.
        assert_eq!(balanced_tile_rows(21, 1536, 192), 24);
        // Fashion-MNIST 784 B rows: 41 -> 48 (37.6 KiB); 1 KiB rows keep 32; 4 KiB rows keep 8.
        assert_eq!(balanced_tile_rows(41, 784, 392), 48);
        assert_eq!(balanced_tile_rows(32, 1024, 128), 32);
        assert_eq!(balanced_tile_rows(8, 4096, 512), 8);
        // With a 1024-entry (32 KiB) table 24 rows of 1536 B do not fit: down to 16.
        assert_eq!(balanced_tile_rows(21, 1536, 1024), 16);
        // Cora's 5744 B records with a 717-entry table: 5 rows, 8 do not fit: 5 stay.
        assert_eq!(balanced_tile_rows(5, 5744, 717), 5);
        for raw in [16u32, 200, 784, 1200, 1536, 3000, 5744, 16384] {
            for table in [0u32, 64, 512, 1024] {
                let rows = (crate::device::TILE_BYTES / raw).clamp(1, 1024);
                let b = balanced_tile_rows(rows, raw, table);
                assert!(
                    b.is_multiple_of(warps) || b == rows,
                    "{raw} B, {table} entries: {rows} -> {b}"
                );
                assert!(b >= rows.min(warps) && b >= 1);
                let bytes = (b * raw + 48 + 15) & !15;
                assert!(
                    b <= rows || launch::tiles_smem(b, bytes, table) <= crate::device::TILE_BLOCK_SMEM,
                    "{raw} B, {table} entries: {b} rows exceed the block's shared memory"
                );
            }
        }
    }

    #[test]
    fn range_tiles_cover_only_the_chunks_a_range_overlaps() {
        let layout = float_layout(8, 500, 64, 100);
        assert_eq!(layout.chunks.len(), 5);
        // Rows 150 .. 349 with tiles of 32 rows: 50 rows of chunk 1, 100 of chunk 2, 50 of chunk 3.
        let t = tile_starts(&layout, 150, 200, 32).unwrap();
        assert_eq!(t.first_chunk, 1);
        assert_eq!(t.starts, vec![0, 2, 6, 8]);
        assert_eq!(t.tiles, 8);
        // One row; the whole entry; the last row.
        let one = tile_starts(&layout, 299, 1, 32).unwrap();
        assert_eq!((one.first_chunk, one.starts, one.tiles), (2, vec![0, 1], 1));
        let all = tile_starts(&layout, 0, 500, 32).unwrap();
        assert_eq!((all.first_chunk, all.starts.len(), all.tiles), (0, 6, 5 * 4));
        assert_eq!(tile_starts(&layout, 499, 1, 7).unwrap().first_chunk, 4);
        // The launch parameters narrowed to chunks 1 ..= 3: descriptors and table offsets from
        // chunk 1, no chunk_rows.
        let mut p = GatherParams {
            chunks: 4096,
            table_offsets: 8192,
            chunk_count: 5,
            chunk_rows: 100,
            ..Default::default()
        };
        range_chunks(&mut p, t.first_chunk, t.starts.len() - 1);
        assert_eq!(
            (p.chunks, p.table_offsets, p.chunk_count, p.chunk_rows),
            (4096 + 80, 8200, 3, 0)
        );
        let mut no_tables = GatherParams::default();
        range_chunks(&mut no_tables, 2, 1);
        assert_eq!(no_tables.table_offsets, 0, "a null table-offset array stays null");
    }
}
