//! Host-side layout of an entry loaded for GPU use: chunk descriptors, one metadata buffer
//! (masks, bitvals, group ids, row lengths), the row index (one `u64` anchor per 32 rows) and
//! where each chunk's payload sits in the payload buffer.
//!
//! Everything here is computed on the CPU from validated [`ChunkMeta`] values and checked again by
//! the kernels before use. `ChunkDesc` is the twin of `IbpChunk` in `kernels/ibp_status.h`.
#![forbid(unsafe_code)]

use ibp_format::{ensure, ChunkMeta, ErrorCode, FormatError, Result};

/// Byte alignment of every chunk payload inside the payload buffer (keeps each record's
/// alignment `A <= 128` as in the file, spec 3.3).
pub const PAYLOAD_ALIGN: u64 = 128;
/// Zero bytes after the last payload (never read by a valid record; a guard for vector loads).
pub const PAYLOAD_SLACK: u64 = 128;
/// Rows per row-index anchor.
pub const ANCHOR_ROWS: u64 = 32;

/// One chunk of a loaded entry, as the kernels read it (80 bytes, `#[repr(C)]`, mirrors `IbpChunk`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChunkDesc {
    /// Entry row index of the chunk's first row.
    pub first_row: u64,
    /// Byte offset of the chunk's payload in the payload buffer.
    pub payload_offset: u64,
    /// Bytes of row records.
    pub payload_len: u64,
    /// Byte offset of the Mask words in the metadata buffer (Bitval words follow).
    pub masks_offset: u64,
    /// Byte offset of the stored row lengths in the metadata buffer.
    pub lengths_offset: u64,
    /// Byte offset of the group ids in the metadata buffer (unused when `G == 1`).
    pub groups_offset: u64,
    /// Index of the chunk's first anchor in the anchor array.
    pub anchors_index: u64,
    /// Rows in the chunk.
    pub row_count: u32,
    /// Words per row `n`.
    pub words_per_row: u32,
    /// `align_up(row_bytes, A)`.
    pub raw_padded: u32,
    /// Added to every stored row length.
    pub length_base: u32,
    /// `W / 8`.
    pub word_bytes: u8,
    /// `log2(A)`.
    pub align_log2: u8,
    /// Width of a stored row length.
    pub length_bytes: u8,
    /// Zero.
    pub reserved0: u8,
    /// Group count `G`.
    pub group_count: u16,
    /// Zero.
    pub reserved1: u16,
}

impl ChunkDesc {
    /// Size of the descriptor in bytes.
    pub const SIZE: usize = 80;

    /// Little-endian bytes exactly as `IbpChunk` lays them out.
    pub fn to_bytes(&self) -> [u8; 80] {
        let mut out = [0u8; 80];
        let u64s = [
            self.first_row,
            self.payload_offset,
            self.payload_len,
            self.masks_offset,
            self.lengths_offset,
            self.groups_offset,
            self.anchors_index,
        ];
        for (i, v) in u64s.iter().enumerate() {
            out[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
        }
        let u32s = [self.row_count, self.words_per_row, self.raw_padded, self.length_base];
        for (i, v) in u32s.iter().enumerate() {
            out[56 + i * 4..60 + i * 4].copy_from_slice(&v.to_le_bytes());
        }
        out[72] = self.word_bytes;
        out[73] = self.align_log2;
        out[74] = self.length_bytes;
        out[75] = self.reserved0;
        out[76..78].copy_from_slice(&self.group_count.to_le_bytes());
        out[78..80].copy_from_slice(&self.reserved1.to_le_bytes());
        out
    }
}

/// Bits 0-39 of a row span ([`EntryLayout::row_spans`]): the record's offset within its chunk's
/// payload (`IBP_SPAN_OFFSET_MASK`).
pub const SPAN_OFFSET_MASK: u64 = (1 << 40) - 1;
/// Where a row span's record length starts (`IBP_SPAN_LENGTH_SHIFT`).
pub const SPAN_LENGTH_SHIFT: u32 = 40;

/// The layout of one entry for the GPU: everything but the payload bytes themselves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryLayout {
    /// Bytes per decoded row.
    pub row_bytes: u64,
    /// Rows of the entry.
    pub row_count: u64,
    /// One descriptor per chunk, in row order.
    pub chunks: Vec<ChunkDesc>,
    /// Masks, bitvals, group ids and row lengths of every chunk (8-byte aligned sections).
    pub meta: Vec<u8>,
    /// Payload offset (within its chunk) of rows 0, 32, 64, ... of every chunk.
    pub anchors: Vec<u64>,
    /// Bytes of the payload buffer (all payloads, 128-byte aligned, plus slack).
    pub payload_buffer_len: u64,
    /// Record offsets of every chunk (`row_count + 1` each), kept for the host-side helpers.
    row_offsets: Vec<Vec<u64>>,
    /// See [`EntryLayout::flat_rows`].
    flat: bool,
    /// See [`EntryLayout::uniform_chunk_rows`].
    chunk_rows: u32,
}

fn push_aligned(meta: &mut Vec<u8>, bytes: &[u8]) -> u64 {
    while !meta.len().is_multiple_of(8) {
        meta.push(0);
    }
    let at = meta.len() as u64;
    meta.extend_from_slice(bytes);
    at
}

fn layout_err(detail: impl Into<String>) -> FormatError {
    FormatError::new(ErrorCode::Layout, detail)
}

impl EntryLayout {
    /// Builds the layout of an entry of `row_bytes`-byte rows from its chunks' metadata, in row order.
    ///
    /// Each chunk must describe rows of `row_bytes` bytes and carry a consistent row index
    /// (`ChunkMeta::parse` guarantees both for chunks read from a file; hand-built values are
    /// checked again here).
    pub fn new(row_bytes: u64, chunks: &[ChunkMeta]) -> Result<EntryLayout> {
        ensure!(
            (1..=ibp_format::MAX_ROW_BYTES).contains(&row_bytes),
            ErrorCode::Limit,
            "row_bytes {row_bytes} is not in 1..=2^24"
        );
        let mut descs = Vec::with_capacity(chunks.len());
        let mut meta = Vec::new();
        let mut anchors = Vec::new();
        let mut row_offsets = Vec::with_capacity(chunks.len());
        let mut first_row = 0u64;
        let mut payload_at = 0u64;
        // Every chunk raw (spec 5.5) with records of exactly `row_bytes`, a multiple of 16: the
        // payloads go back to back (each a multiple of 16 bytes long, so every row stays 16-byte
        // aligned) and the payload buffer is the entry's rows, in order (`flat_rows`).
        let flat = row_bytes.is_multiple_of(16)
            && !chunks.is_empty()
            && chunks
                .iter()
                .all(|c| c.group_count == 0 && c.row_bytes() == row_bytes && c.raw_padded() == row_bytes);
        let chunk_align = if flat { 16 } else { PAYLOAD_ALIGN };
        for (ci, c) in chunks.iter().enumerate() {
            let at = |e: FormatError| e.at(format!("chunk {ci}"));
            ensure!(
                c.row_bytes() == row_bytes,
                ErrorCode::ChunkHeader,
                "chunk {ci}: {}-byte rows, entry has {row_bytes}",
                c.row_bytes()
            );
            let n = c.words_per_row as usize;
            let g = c.group_count as usize;
            let rows = c.row_count as usize;
            ensure!(
                rows as u64 <= ibp_format::MAX_ROWS_PER_CHUNK && g as u32 <= ibp_format::MAX_GROUPS,
                ErrorCode::Limit,
                "chunk {ci}: {rows} rows or {g} groups exceed the format limits"
            );
            let w = c.word_width.bytes();
            ensure!(
                c.masks.len() == g * n && c.bitvals.len() == g * n,
                ErrorCode::Layout,
                "chunk {ci}: mask/bitval arrays do not hold G*n words"
            );
            ensure!(
                (g <= 1 && c.group_ids.is_empty()) || (g > 1 && c.group_ids.len() == rows),
                ErrorCode::Layout,
                "chunk {ci}: group id count does not match"
            );
            ensure!(
                c.row_lengths.len() == rows && c.row_offsets.len() == rows + 1,
                ErrorCode::Layout,
                "chunk {ci}: row index does not hold {rows} rows"
            );
            ensure!(
                matches!(c.length_bytes, 1 | 2 | 4)
                    && c.align_log2 <= 7
                    && rows >= 1
                    && n >= 1
                    && ((n - 1) * w) < row_bytes as usize
                    && n * w >= row_bytes as usize,
                ErrorCode::ChunkHeader,
                "chunk {ci}: header fields out of range (n = ceil(row_bytes / (W/8)), spec 2.4)"
            );
            // The stored lengths must reproduce the offsets (the kernels recompute them).
            let align = c.align();
            let raw_padded = c.raw_padded();
            let mut acc = 0u64;
            for (r, &stored) in c.row_lengths.iter().enumerate() {
                let len = (c.length_base as u64 + stored as u64) * align;
                // A raw chunk (G = 0, spec 5.5) stores every row raw.
                if len == 0 || len > raw_padded || (g == 0 && len != raw_padded) || c.row_offsets[r] != acc {
                    return Err(at(FormatError::new(
                        ErrorCode::RowLength,
                        format!("row {r}: record length {len} or offset disagrees with the index"),
                    )));
                }
                if c.length_bytes < 4 && stored >> (8 * c.length_bytes as u32) != 0 {
                    return Err(at(layout_err(format!(
                        "row {r}: stored length {stored} does not fit {} bytes",
                        c.length_bytes
                    ))));
                }
                acc += len;
            }
            ensure!(
                acc == c.payload_len && c.row_offsets[rows] == acc,
                ErrorCode::Layout,
                "chunk {ci}: records add up to {acc} bytes, payload_len is {}",
                c.payload_len
            );
            let mut words = Vec::with_capacity(2 * g * n * w);
            for &v in c.masks.iter().chain(c.bitvals.iter()) {
                words.extend_from_slice(&v.to_le_bytes()[..w]);
            }
            let masks_offset = push_aligned(&mut meta, &words);
            let groups_offset = if g > 1 {
                push_aligned(&mut meta, &c.group_ids)
            } else {
                0
            };
            let mut lens = Vec::with_capacity(rows * c.length_bytes as usize);
            for &l in &c.row_lengths {
                lens.extend_from_slice(&l.to_le_bytes()[..c.length_bytes as usize]);
            }
            let lengths_offset = push_aligned(&mut meta, &lens);
            let anchors_index = anchors.len() as u64;
            anchors.extend(c.row_offsets[..rows].iter().step_by(ANCHOR_ROWS as usize));
            descs.push(ChunkDesc {
                first_row,
                payload_offset: payload_at,
                payload_len: c.payload_len,
                masks_offset,
                lengths_offset,
                groups_offset,
                anchors_index,
                row_count: c.row_count,
                words_per_row: c.words_per_row,
                raw_padded: raw_padded as u32,
                length_base: c.length_base,
                word_bytes: w as u8,
                align_log2: c.align_log2,
                length_bytes: c.length_bytes,
                reserved0: 0,
                group_count: g as u16,
                reserved1: 0,
            });
            row_offsets.push(c.row_offsets.clone());
            first_row = first_row
                .checked_add(rows as u64)
                .ok_or_else(|| layout_err("row count overflows"))?;
            payload_at = payload_at
                .checked_add(c.payload_len)
                .and_then(|v| ibp_format::align_up(v, chunk_align))
                .ok_or_else(|| layout_err("payload size overflows"))?;
        }
        while !meta.len().is_multiple_of(8) || meta.is_empty() {
            meta.push(0);
        }
        if anchors.is_empty() {
            anchors.push(0);
        }
        Ok(EntryLayout {
            // Every record is `row_bytes` (checked above) and chunks follow with no gap, so row r
            // sits at r * row_bytes.
            flat,
            chunk_rows: Self::find_uniform_chunk_rows(&descs, first_row),
            row_bytes,
            row_count: first_row,
            chunks: descs,
            meta,
            anchors,
            payload_buffer_len: payload_at + PAYLOAD_SLACK,
            row_offsets,
        })
    }

    /// Chunk descriptors as bytes (what is uploaded).
    pub fn chunk_bytes(&self) -> Vec<u8> {
        self.chunks.iter().flat_map(|c| c.to_bytes()).collect()
    }

    /// `(chunk index, row within the chunk)` of entry row `row`, or `E_ROW_INDEX`.
    pub fn locate(&self, row: u64) -> Result<(usize, u64)> {
        ensure!(
            row < self.row_count,
            ErrorCode::RowIndex,
            "row {row} is not below the entry's {} rows",
            self.row_count
        );
        let ci = self.chunks.partition_point(|c| c.first_row <= row) - 1;
        Ok((ci, row - self.chunks[ci].first_row))
    }

    /// Byte range of row `row`'s record in the payload buffer.
    pub fn record_span(&self, row: u64) -> Result<(u64, u64)> {
        let (ci, r) = self.locate(row)?;
        let offs = &self.row_offsets[ci];
        let start = self.chunks[ci].payload_offset + offs[r as usize];
        Ok((start, offs[r as usize + 1] - offs[r as usize]))
    }

    /// Most record bytes any `rows` consecutive rows of one chunk hold (`rows >= 1`): the bytes a
    /// tile of at most `rows` rows can ask for, in a range decode starting anywhere.
    pub fn window_record_bytes(&self, rows: u64) -> u64 {
        self.row_offsets
            .iter()
            .map(|offs| {
                let n = offs.len() - 1;
                let k = usize::try_from(rows).unwrap_or(usize::MAX).min(n);
                offs.iter().zip(&offs[k..]).map(|(a, b)| b - a).max().unwrap_or(0)
            })
            .max()
            .unwrap_or(0)
    }

    /// Byte range of chunk `chunk`'s payload in the payload buffer.
    pub fn payload_range(&self, chunk: usize) -> std::ops::Range<usize> {
        let c = &self.chunks[chunk];
        c.payload_offset as usize..(c.payload_offset + c.payload_len) as usize
    }

    /// Whether the payload buffer holds the entry's rows back to back, row `r` at byte
    /// `r * row_bytes`: every chunk is raw (spec 5.5) with records of exactly `row_bytes` bytes, a
    /// multiple of 16 (so a raw row has no padding), and the chunks' payloads were placed one after
    /// another. Gathers from such an entry copy rows with no lookup (`ibp_gather_flat`).
    pub fn flat_rows(&self) -> bool {
        self.flat
    }

    /// Positions of the coded chunks' groups (`G * n` each) whose Mask covers every bit of the word
    /// (the word is its Bitval or stored whole), and all their positions: `(invariant, positions)`.
    /// Image rows with a constant border are mostly such positions (Fashion-MNIST: 290 of 392), float
    /// weights none; the long-rows kernel is taken for the former (`kernel_choice::lean_shape`).
    pub fn invariant_positions(&self) -> (u64, u64) {
        let (mut invariant, mut positions) = (0u64, 0u64);
        for c in self.chunks.iter().filter(|c| c.group_count > 0) {
            let wb = c.word_bytes as usize;
            let words = c.group_count as usize * c.words_per_row as usize;
            let start = c.masks_offset as usize;
            let Some(masks) = start.checked_add(words * wb).and_then(|end| self.meta.get(start..end)) else {
                continue;
            };
            positions += words as u64;
            invariant += masks.chunks_exact(wb).filter(|m| m.iter().all(|&b| b == 0xff)).count() as u64;
        }
        (invariant, positions)
    }

    /// Rows per chunk when chunk `c` starts at entry row `c * rows` (every chunk but the last has
    /// that many rows, the last at most that many) and the entry has at most 2^32 rows, else 0.
    /// `ibp_gather` then finds a row's chunk by one division instead of a binary search
    /// (`IbpGatherParams::chunk_rows`); the encoder's chunking always has this shape.
    pub fn uniform_chunk_rows(&self) -> u32 {
        self.chunk_rows
    }

    fn find_uniform_chunk_rows(chunks: &[ChunkDesc], entry_rows: u64) -> u32 {
        let Some((last, rest)) = chunks.split_last() else {
            return 0;
        };
        let rows = rest.first().unwrap_or(last).row_count;
        let uniform = rest.iter().all(|c| c.row_count == rows) && last.row_count <= rows;
        if uniform && entry_rows <= 1 << 32 {
            rows
        } else {
            0
        }
    }

    /// A flat row index for `ibp_gather` (`IbpGatherParams::row_spans`): per entry row, its record's
    /// offset within its chunk's payload in bits 0-39 and its length in bits 40-63, so the kernel
    /// finds a record with one load issued beside the chunk search and descriptor's, instead of two
    /// after them (anchor, row lengths), whether chunks are found by division
    /// ([`EntryLayout::uniform_chunk_rows`]) or by binary search. `None` where the kernel would not
    /// use it (every chunk raw, its records found by position) or a value does not fit (a chunk
    /// payload of 2^40 bytes or more, a record of 2^24 bytes or more).
    pub fn row_spans(&self) -> Option<Vec<u64>> {
        if self.chunks.iter().all(|c| c.group_count == 0) {
            return None;
        }
        let mut spans = Vec::with_capacity(usize::try_from(self.row_count).ok()?);
        for offs in &self.row_offsets {
            for pair in offs.windows(2) {
                let (off, len) = (pair[0], pair[1].checked_sub(pair[0])?);
                if off > SPAN_OFFSET_MASK || len >> (64 - SPAN_LENGTH_SHIFT) != 0 {
                    return None;
                }
                spans.push(off | (len << SPAN_LENGTH_SHIFT));
            }
        }
        (spans.len() as u64 == self.row_count).then_some(spans)
    }

    /// Checks `rows` against the entry (`E_ROW_INDEX` naming the first bad position).
    pub fn check_rows(&self, rows: &[u64]) -> Result<()> {
        if let Some((k, &r)) = rows.iter().enumerate().find(|(_, &r)| r >= self.row_count) {
            return Err(FormatError::new(
                ErrorCode::RowIndex,
                format!("request {k}: row {r} is not below the entry's {} rows", self.row_count),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ibp_codec::{encode_chunk, EncodeOptions};

    fn sample(groups: u32) -> ChunkMeta {
        let rows: Vec<u8> = (0..200u32 * 64)
            .map(|i| if i % 7 == 0 { (i * 31) as u8 } else { 0 })
            .collect();
        let opts = EncodeOptions {
            align_log2: 4,
            groups,
            ..Default::default()
        };
        encode_chunk(&rows, 64, &opts).meta
    }

    fn raw_chunk(rows: usize, row_bytes: usize, align_log2: u8, groups: u32) -> ChunkMeta {
        let data: Vec<u8> = (0..rows * row_bytes).map(|i| (i * 131 % 251) as u8).collect();
        let opts = EncodeOptions {
            align_log2,
            groups,
            ..Default::default()
        };
        encode_chunk(&data, row_bytes, &opts).meta
    }

    #[test]
    fn raw_entries_of_16_byte_rows_are_flat() {
        // Three raw chunks of 7 rows of 48 B: 336-byte payloads, which 128-byte alignment would
        // have spaced apart; a flat layout puts row r at r * 48.
        let chunks = [raw_chunk(7, 48, 4, 0), raw_chunk(7, 48, 4, 0), raw_chunk(5, 48, 4, 0)];
        let layout = EntryLayout::new(48, &chunks).unwrap();
        assert!(layout.flat_rows());
        for row in 0..layout.row_count {
            assert_eq!(layout.record_span(row).unwrap(), (row * 48, 48));
        }
        assert!(layout.payload_buffer_len >= 19 * 48 + PAYLOAD_SLACK);
        // Not flat: rows that are not a multiple of 16 bytes, records padded beyond the row, a
        // coded chunk among raw ones (and then chunks are 128-byte aligned again).
        assert!(!EntryLayout::new(40, &[raw_chunk(7, 40, 0, 0), raw_chunk(7, 40, 0, 0)])
            .unwrap()
            .flat_rows());
        assert!(!EntryLayout::new(48, &[raw_chunk(7, 48, 5, 0)]).unwrap().flat_rows());
        let mixed = EntryLayout::new(64, &[raw_chunk(7, 64, 4, 0), sample(1)]).unwrap();
        assert!(!mixed.flat_rows());
        assert_eq!(mixed.chunks[1].payload_offset % PAYLOAD_ALIGN, 0);
    }

    #[test]
    fn uniform_chunk_rows_only_when_chunk_c_starts_at_c_times_its_rows() {
        let seven = |rows| raw_chunk(rows, 48, 4, 0);
        let rows_of = |chunks: &[ChunkMeta]| EntryLayout::new(48, chunks).unwrap().uniform_chunk_rows();
        assert_eq!(rows_of(&[seven(7), seven(7), seven(5)]), 7);
        assert_eq!(rows_of(&[seven(7), seven(7), seven(7)]), 7);
        assert_eq!(rows_of(&[seven(5)]), 5);
        // A short chunk before the last, or a longer last one: chunk c no longer starts at c * 7.
        assert_eq!(rows_of(&[seven(7), seven(5), seven(7)]), 0);
        assert_eq!(rows_of(&[seven(7), seven(7), seven(8)]), 0);
        let layout = EntryLayout::new(48, &[seven(7), seven(7), seven(5)]).unwrap();
        for (c, d) in layout.chunks.iter().enumerate() {
            assert_eq!(d.first_row, c as u64 * 7);
        }
    }

    #[test]
    fn layout_locates_every_record() {
        let (a, b) = (sample(1), sample(3));
        let layout = EntryLayout::new(64, &[a.clone(), b.clone()]).unwrap();
        assert_eq!(layout.row_count, 400);
        assert_eq!(layout.chunks[1].first_row, 200);
        assert_eq!(layout.chunks[1].payload_offset % PAYLOAD_ALIGN, 0);
        assert!(layout.payload_buffer_len >= layout.chunks[1].payload_offset + b.payload_len + PAYLOAD_SLACK);
        for row in 0..400u64 {
            let (m, r, base) = if row < 200 {
                (&a, row, 0)
            } else {
                (&b, row - 200, layout.chunks[1].payload_offset)
            };
            let range = m.record_range(r as usize);
            assert_eq!(
                layout.record_span(row).unwrap(),
                (base + range.start as u64, (range.end - range.start) as u64)
            );
            // The anchor of the row's 32-row block plus the lengths before it give its offset.
            let c = &layout.chunks[(row >= 200) as usize];
            let anchor = layout.anchors[(c.anchors_index + r / 32) as usize];
            assert_eq!(anchor, m.row_offsets[(r / 32 * 32) as usize]);
        }
        assert_eq!(layout.check_rows(&[0, 399, 400]).unwrap_err().code, ErrorCode::RowIndex);
    }

    #[test]
    fn row_spans_give_every_record() {
        let layout = EntryLayout::new(64, &[sample(1), sample(3)]).unwrap();
        assert_eq!(layout.uniform_chunk_rows(), 200);
        // Each span is its record's offset within its chunk's payload and its length.
        let spans_match = |layout: &EntryLayout| {
            let spans = layout.row_spans().unwrap();
            assert_eq!(spans.len() as u64, layout.row_count);
            for (row, &span) in spans.iter().enumerate() {
                let row = row as u64;
                let c = layout.chunks.iter().rfind(|c| c.first_row <= row).unwrap();
                let (start, len) = layout.record_span(row).unwrap();
                assert_eq!(span & SPAN_OFFSET_MASK, start - c.payload_offset, "row {row}");
                assert_eq!(span >> SPAN_LENGTH_SHIFT, len, "row {row}");
            }
        };
        spans_match(&layout);
        // No uniform chunk rows (a short chunk in the middle): the kernel finds chunks by binary
        // search, and still takes the spans.
        let odd = EntryLayout::new(64, &[sample(1), raw_chunk(7, 64, 4, 0), sample(3)]).unwrap();
        assert_eq!(odd.uniform_chunk_rows(), 0);
        spans_match(&odd);
        // Raw chunks only: records are found by position, no spans.
        let raw = EntryLayout::new(64, &[raw_chunk(7, 64, 4, 0), raw_chunk(7, 64, 4, 0)]).unwrap();
        assert_eq!(raw.uniform_chunk_rows(), 7);
        assert!(raw.row_spans().is_none());
        // The header's constants are these.
        let header = include_str!("../../../kernels/ibp_status.h");
        assert!(header.contains("#define IBP_SPAN_OFFSET_MASK 0xffffffffffull"));
        assert!(header.contains(&format!("#define IBP_SPAN_LENGTH_SHIFT {SPAN_LENGTH_SHIFT}")));
        assert_eq!(SPAN_OFFSET_MASK, 0xff_ffff_ffff);
    }

    #[test]
    fn hostile_metadata_is_rejected() {
        let good = sample(1);
        let mut m = good.clone();
        m.row_lengths[5] += 1; // lengths no longer match the offsets
        assert_eq!(EntryLayout::new(64, &[m]).unwrap_err().code, ErrorCode::RowLength);
        let mut m = good.clone();
        m.masks.pop();
        assert_eq!(EntryLayout::new(64, &[m]).unwrap_err().code, ErrorCode::Layout);
        let mut m = good.clone();
        m.group_count = 0; // a raw chunk whose rows are not all raw
        m.masks.clear();
        m.bitvals.clear();
        assert_eq!(EntryLayout::new(64, &[m]).unwrap_err().code, ErrorCode::RowLength);
        assert_eq!(
            EntryLayout::new(65, std::slice::from_ref(&good)).unwrap_err().code,
            ErrorCode::ChunkHeader
        );
        assert_eq!(EntryLayout::new(1 << 25, &[good]).unwrap_err().code, ErrorCode::Limit);
    }

    #[test]
    fn descriptor_matches_header_layout() {
        // Field offsets of IbpChunk in kernels/ibp_status.h: 7 u64, 4 u32, 4 u8, 2 u16.
        let d = ChunkDesc {
            first_row: 1,
            payload_offset: 2,
            payload_len: 3,
            masks_offset: 4,
            lengths_offset: 5,
            groups_offset: 6,
            anchors_index: 7,
            row_count: 8,
            words_per_row: 9,
            raw_padded: 10,
            length_base: 11,
            word_bytes: 12,
            align_log2: 13,
            length_bytes: 14,
            reserved0: 0,
            group_count: 15,
            reserved1: 0,
        };
        let b = d.to_bytes();
        assert_eq!(std::mem::size_of::<ChunkDesc>(), ChunkDesc::SIZE);
        for i in 0..7 {
            assert_eq!(
                u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap()),
                i as u64 + 1
            );
        }
        for i in 0..4 {
            let v = u32::from_le_bytes(b[56 + i * 4..60 + i * 4].try_into().unwrap());
            assert_eq!(v, i as u32 + 8);
        }
        assert_eq!(&b[72..75], &[12, 13, 14]);
        assert_eq!(u16::from_le_bytes([b[76], b[77]]), 15);
        let header = include_str!("../../../kernels/ibp_status.h");
        let start = header.find("struct IbpChunk {").unwrap();
        let body = &header[start..header[start..].find("};").unwrap() + start];
        let count = |ty: &str| body.matches(&format!("    {ty} ")).count();
        assert_eq!(
            (count("ibp_u64"), count("ibp_u32"), count("ibp_u8"), count("ibp_u16")),
            (7, 4, 4, 2)
        );
    }
}
