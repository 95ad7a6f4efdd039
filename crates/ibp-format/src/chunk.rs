//! Chunks (spec section 5): the 48-byte chunk header, the metadata arrays and the row index.

use crate::constants::*;
use crate::error::{ErrorCode, FormatError, Result};
use crate::types::WordWidth;
use crate::{bail, ensure};
use binrw::{BinRead, BinWrite};
use std::io::Cursor;

/// The on-disk chunk header exactly as laid out in spec 5.1 (field values not yet validated).
#[derive(Debug, Clone, Copy, PartialEq, Eq, BinRead, BinWrite)]
#[brw(little)]
pub struct RawChunkHeader {
    /// `IBPC`.
    pub chunk_magic: [u8; 4],
    /// `W`.
    pub word_bits: u8,
    /// `log2(A)`.
    pub align_log2: u8,
    /// Width of a row-length field.
    pub length_bytes: u8,
    /// Reserved, zero.
    pub reserved0: u8,
    /// `G`.
    pub group_count: u16,
    /// Reserved, zero.
    pub reserved1: u16,
    /// Rows in the chunk.
    pub row_count: u32,
    /// `n`.
    pub words_per_row: u32,
    /// Added to every stored row length.
    pub length_base: u32,
    /// Bytes of row records.
    pub payload_len: u64,
    /// Bytes of metadata.
    pub meta_len: u32,
    /// CRC-32 of the payload.
    pub payload_crc: u32,
    /// Reserved, zero.
    pub reserved2: u32,
    /// CRC-32 of header bytes 0..44, metadata and padding.
    pub meta_crc: u32,
}

impl RawChunkHeader {
    /// Parses the 48 header bytes (`bytes.len()` must be at least 48).
    pub fn parse(bytes: &[u8]) -> Result<RawChunkHeader> {
        ensure!(
            bytes.len() as u64 >= CHUNK_HEADER_LEN,
            ErrorCode::Layout,
            "chunk shorter than its 48-byte header"
        );
        RawChunkHeader::read(&mut Cursor::new(&bytes[..CHUNK_HEADER_LEN as usize]))
            .map_err(|e| FormatError::new(ErrorCode::Layout, format!("chunk header: {e}")))
    }

    /// Serialises the 48 header bytes.
    pub fn to_bytes(&self) -> [u8; 48] {
        let mut out = Cursor::new([0u8; 48]);
        self.write(&mut out).expect("fixed-size write into a 48-byte buffer");
        out.into_inner()
    }
}

/// A validated chunk: header fields, masks, bitvals, group ids and the row index.
///
/// Masks and bitvals are widened to `u64` (only the low `W` bits are used). Row offsets are
/// precomputed, so any row's record is found in O(1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkMeta {
    /// Word width `W`.
    pub word_width: WordWidth,
    /// `log2` of the row alignment `A`.
    pub align_log2: u8,
    /// Width of a stored row length (1, 2 or 4).
    pub length_bytes: u8,
    /// Number of groups `G`.
    pub group_count: u32,
    /// Rows in the chunk.
    pub row_count: u32,
    /// Words per row `n = ceil(row_bytes / (W/8))` (the last word may be partial, spec 2.4).
    pub words_per_row: u32,
    /// Bytes per decoded row (the entry's `row_bytes`).
    pub row_bytes: u64,
    /// Added to every stored row length.
    pub length_base: u32,
    /// Payload length in bytes.
    pub payload_len: u64,
    /// CRC-32 of the payload as stored.
    pub payload_crc: u32,
    /// `Mask[g][j]` at index `g * n + j`.
    pub masks: Vec<u64>,
    /// `Bitval[g][j]` at index `g * n + j`.
    pub bitvals: Vec<u64>,
    /// Group id per row; empty when `G == 1`.
    pub group_ids: Vec<u8>,
    /// Stored (unscaled) row lengths.
    pub row_lengths: Vec<u32>,
    /// Payload offset of every row record, plus the payload length at the end (`row_count + 1` values).
    pub row_offsets: Vec<u64>,
}

impl ChunkMeta {
    /// Row alignment `A` in bytes.
    pub fn align(&self) -> u64 {
        1u64 << self.align_log2
    }

    /// Bytes per decoded row.
    pub fn row_bytes(&self) -> u64 {
        self.row_bytes
    }

    /// Bytes of the last word of a row that lie inside the row (`W/8` unless the word is partial).
    pub fn last_word_bytes(&self) -> usize {
        let wb = self.word_width.bytes() as u64;
        (self.row_bytes - (self.words_per_row as u64 - 1) * wb) as usize
    }

    /// Length in bytes of a raw row record: `align_up(row_bytes, A)`.
    pub fn raw_padded(&self) -> u64 {
        align_up(self.row_bytes(), self.align()).expect("row_bytes <= 2^24")
    }

    /// Whether this is a raw chunk (`G == 0`, spec 5.1): no masks, every row stored raw.
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

    /// Mask words of group `g` (`n` words; empty in a raw chunk, whose rows are all raw).
    pub fn mask(&self, group: usize) -> &[u64] {
        let n = self.words_per_row as usize;
        self.masks.get(group * n..(group + 1) * n).unwrap_or(&[])
    }

    /// Bitval words of group `g` (`n` words; empty in a raw chunk, whose rows are all raw).
    pub fn bitval(&self, group: usize) -> &[u64] {
        let n = self.words_per_row as usize;
        self.bitvals.get(group * n..(group + 1) * n).unwrap_or(&[])
    }

    /// Payload byte range of row `i`'s record.
    pub fn record_range(&self, row: usize) -> std::ops::Range<usize> {
        self.row_offsets[row] as usize..self.row_offsets[row + 1] as usize
    }

    /// Whether row `i` is stored raw (record length equals `align_up(row_bytes, A)`).
    pub fn is_raw(&self, row: usize) -> bool {
        self.row_offsets[row + 1] - self.row_offsets[row] == self.raw_padded()
    }

    /// Length of the metadata arrays in bytes (spec 5.2), `None` on overflow.
    pub fn meta_len_for(word: WordWidth, groups: u64, n: u64, rows: u64, length_bytes: u64) -> Option<u64> {
        let masks = 2u64
            .checked_mul(groups)?
            .checked_mul(n)?
            .checked_mul(word.bytes() as u64)?;
        let ids = if groups > 1 { rows } else { 0 };
        masks.checked_add(ids)?.checked_add(rows.checked_mul(length_bytes)?)
    }

    /// Offset of the payload from the chunk's first byte, given the chunk's file offset.
    pub fn payload_start(chunk_offset: u64, meta_len: u64, align: u64) -> Option<u64> {
        let end_meta = chunk_offset.checked_add(CHUNK_HEADER_LEN)?.checked_add(meta_len)?;
        align_up(end_meta, align)?.checked_sub(chunk_offset)
    }

    /// Serialises this chunk's header, metadata and padding for a chunk starting at file offset
    /// `chunk_offset`, computing `meta_crc`. The payload (whose CRC is `payload_crc`) follows.
    pub fn to_bytes(&self, chunk_offset: u64) -> Vec<u8> {
        let w = self.word_width.bytes();
        let n = self.words_per_row as u64;
        let meta_len = Self::meta_len_for(
            self.word_width,
            self.group_count as u64,
            n,
            self.row_count as u64,
            self.length_bytes as u64,
        )
        .expect("validated sizes");
        let header = RawChunkHeader {
            chunk_magic: CHUNK_MAGIC,
            word_bits: self.word_width.bits() as u8,
            align_log2: self.align_log2,
            length_bytes: self.length_bytes,
            reserved0: 0,
            group_count: self.group_count as u16,
            reserved1: 0,
            row_count: self.row_count,
            words_per_row: self.words_per_row,
            length_base: self.length_base,
            payload_len: self.payload_len,
            meta_len: u32::try_from(meta_len).expect("validated sizes: metadata fits a u32"),
            payload_crc: self.payload_crc,
            reserved2: 0,
            meta_crc: 0,
        };
        let start = Self::payload_start(chunk_offset, meta_len, self.align()).expect("validated sizes");
        let mut out = Vec::with_capacity(start as usize);
        out.extend_from_slice(&header.to_bytes());
        for &word in self.masks.iter().chain(self.bitvals.iter()) {
            out.extend_from_slice(&word.to_le_bytes()[..w]);
        }
        if self.group_count > 1 {
            out.extend_from_slice(&self.group_ids);
        }
        for &len in &self.row_lengths {
            out.extend_from_slice(&len.to_le_bytes()[..self.length_bytes as usize]);
        }
        out.resize(start as usize, 0);
        let mut crc = crc32fast::Hasher::new();
        crc.update(&out[..44]);
        crc.update(&out[48..]);
        let meta_crc = crc.finalize();
        out[44..48].copy_from_slice(&meta_crc.to_le_bytes());
        out
    }

    /// Parses and validates a chunk's header, metadata and padding (spec 11.1 step 5 up to, not
    /// including, the payload CRC and row contents).
    ///
    /// `bytes` are the chunk's bytes from its first byte: at least up to the payload start (the
    /// payload itself is not needed). `chunk_offset` is its file offset (for the alignment of the
    /// payload), `chunk_byte_len` and `expected_rows` come from the directory, and `row_bytes` from the
    /// entry.
    pub fn parse(
        bytes: &[u8],
        chunk_offset: u64,
        chunk_byte_len: u64,
        expected_rows: u64,
        row_bytes: u64,
    ) -> Result<ChunkMeta> {
        ensure!(
            chunk_byte_len >= CHUNK_HEADER_LEN,
            ErrorCode::Layout,
            "chunk of {chunk_byte_len} bytes cannot hold its 48-byte header"
        );
        let h = RawChunkHeader::parse(bytes)?;
        ensure!(
            h.chunk_magic == CHUNK_MAGIC,
            ErrorCode::ChunkMagic,
            "chunk magic {:02x?} is not IBPC",
            h.chunk_magic
        );
        ensure!(
            h.reserved0 == 0 && h.reserved1 == 0 && h.reserved2 == 0,
            ErrorCode::Reserved,
            "chunk header reserved fields are {}, {}, {}",
            h.reserved0,
            h.reserved1,
            h.reserved2
        );
        let word = WordWidth::from_bits(h.word_bits as u32)?;
        ensure!(
            h.align_log2 <= MAX_ALIGN_LOG2,
            ErrorCode::ChunkHeader,
            "align_log2 {} exceeds 7",
            h.align_log2
        );
        ensure!(
            matches!(h.length_bytes, 1 | 2 | 4),
            ErrorCode::ChunkHeader,
            "length_bytes {} is not 1, 2 or 4",
            h.length_bytes
        );
        ensure!(
            h.group_count as u32 <= MAX_GROUPS,
            ErrorCode::ChunkHeader,
            "group_count {} is not in 0..=256",
            h.group_count
        );
        ensure!(
            h.row_count >= 1 && h.row_count as u64 == expected_rows,
            ErrorCode::ChunkHeader,
            "row_count {} differs from the directory's {expected_rows}",
            h.row_count
        );
        ensure!(
            h.words_per_row as u64 == row_bytes.div_ceil(word.bytes() as u64),
            ErrorCode::ChunkHeader,
            "words_per_row {} is not the number of {}-bit words of the entry's {row_bytes}-byte rows",
            h.words_per_row,
            word.bits()
        );
        let decoded = (h.row_count as u64).checked_mul(row_bytes);
        ensure!(
            decoded.is_some_and(|d| d <= MAX_CHUNK_DECODED_BYTES),
            ErrorCode::Limit,
            "chunk decodes to more than 2^32 bytes ({} rows of {row_bytes})",
            h.row_count
        );
        let groups = h.group_count as u64;
        let n = h.words_per_row as u64;
        let rows = h.row_count as u64;
        let meta_len = Self::meta_len_for(word, groups, n, rows, h.length_bytes as u64);
        ensure!(
            meta_len == Some(h.meta_len as u64),
            ErrorCode::Layout,
            "meta_len {} differs from the {meta_len:?} bytes its fields require",
            h.meta_len
        );
        let meta_len = h.meta_len as u64;
        let align = 1u64 << h.align_log2;
        let payload_start = Self::payload_start(chunk_offset, meta_len, align);
        let end = payload_start.and_then(|p| p.checked_add(h.payload_len));
        ensure!(
            end == Some(chunk_byte_len),
            ErrorCode::Layout,
            "header, metadata, padding and {}-byte payload do not make the chunk's {chunk_byte_len} bytes",
            h.payload_len
        );
        let payload_start = payload_start.expect("checked") as usize;
        if bytes.len() < payload_start {
            bail!(
                ErrorCode::Truncated,
                "chunk metadata needs {payload_start} bytes, {} present",
                bytes.len()
            );
        }
        let mut crc = crc32fast::Hasher::new();
        crc.update(&bytes[..44]);
        crc.update(&bytes[48..payload_start]);
        let computed = crc.finalize();
        ensure!(
            computed == h.meta_crc,
            ErrorCode::ChunkCrc,
            "metadata CRC 0x{computed:08x} differs from stored 0x{:08x}",
            h.meta_crc
        );

        let w = word.bytes();
        let meta = &bytes[CHUNK_HEADER_LEN as usize..payload_start];
        let words_len = (groups * n) as usize;
        let read_word = |i: usize| -> u64 {
            let mut b = [0u8; 8];
            b[..w].copy_from_slice(&meta[i * w..(i + 1) * w]);
            u64::from_le_bytes(b)
        };
        let masks: Vec<u64> = (0..words_len).map(read_word).collect();
        let bitvals: Vec<u64> = (words_len..2 * words_len).map(read_word).collect();
        for (i, (&m, &b)) in masks.iter().zip(&bitvals).enumerate() {
            ensure!(
                b & !m == 0,
                ErrorCode::BitvalOutsideMask,
                "group {} word {}: Bitval 0x{b:x} has bits outside Mask 0x{m:x}",
                i as u64 / n,
                i as u64 % n
            );
        }
        let mut pos = 2 * words_len * w;
        let group_ids = if groups > 1 {
            let ids = meta[pos..pos + rows as usize].to_vec();
            if let Some((row, &g)) = ids.iter().enumerate().find(|(_, &g)| g as u64 >= groups) {
                bail!(
                    ErrorCode::GroupId,
                    "row {row} has group id {g}, chunk has {groups} groups"
                );
            }
            pos += rows as usize;
            ids
        } else {
            Vec::new()
        };
        let lb = h.length_bytes as usize;
        let row_lengths: Vec<u32> = (0..rows as usize)
            .map(|r| {
                let mut b = [0u8; 4];
                b[..lb].copy_from_slice(&meta[pos + r * lb..pos + (r + 1) * lb]);
                u32::from_le_bytes(b)
            })
            .collect();
        pos += rows as usize * lb;
        if meta[pos..].iter().any(|&b| b != 0) {
            bail!(ErrorCode::Padding, "padding between metadata and payload is not zero");
        }
        let raw_padded = align_up(row_bytes, align).expect("row_bytes <= 2^24");
        let mut row_offsets = Vec::with_capacity(rows as usize + 1);
        let mut offset = 0u64;
        row_offsets.push(0);
        for (r, &stored) in row_lengths.iter().enumerate() {
            let len = (h.length_base as u64 + stored as u64) * align;
            ensure!(
                len >= 1 && len <= raw_padded,
                ErrorCode::RowLength,
                "row {r}: record length {len} is not in 1..={raw_padded}"
            );
            ensure!(
                groups > 0 || len == raw_padded,
                ErrorCode::RowLength,
                "row {r}: record length {len} in a raw chunk (no groups) is not the raw length {raw_padded}"
            );
            offset += len; // at most 2^20 rows of at most 2^24 + 127 bytes: no overflow
            row_offsets.push(offset);
        }
        ensure!(
            offset == h.payload_len,
            ErrorCode::Layout,
            "row records add up to {offset} bytes, payload_len is {}",
            h.payload_len
        );
        Ok(ChunkMeta {
            word_width: word,
            align_log2: h.align_log2,
            length_bytes: h.length_bytes,
            group_count: groups as u32,
            row_count: h.row_count,
            words_per_row: h.words_per_row,
            row_bytes,
            length_base: h.length_base,
            payload_len: h.payload_len,
            payload_crc: h.payload_crc,
            masks,
            bitvals,
            group_ids,
            row_lengths,
            row_offsets,
        })
    }

    /// Checks the payload CRC (spec 9.3: required when decoding a whole chunk).
    pub fn check_payload_crc(&self, payload: &[u8]) -> Result<()> {
        ensure!(
            payload.len() as u64 == self.payload_len,
            ErrorCode::Truncated,
            "payload has {} bytes, header declares {}",
            payload.len(),
            self.payload_len
        );
        let computed = crc32(payload);
        ensure!(
            computed == self.payload_crc,
            ErrorCode::PayloadCrc,
            "payload CRC 0x{computed:08x} differs from stored 0x{:08x}",
            self.payload_crc
        );
        Ok(())
    }

    /// Builds the row index from record lengths in bytes (each a multiple of `A`), choosing the
    /// smallest `length_bytes` and the `length_base` that make the stored values fit.
    ///
    /// Returns `(length_base, length_bytes, row_lengths, row_offsets)`.
    pub fn index_from_record_lengths(record_lens: &[u64], align: u64) -> (u32, u8, Vec<u32>, Vec<u64>) {
        let units: Vec<u64> = record_lens.iter().map(|&l| l / align).collect();
        let base = units.iter().copied().min().unwrap_or(0);
        let span = units.iter().map(|&u| u - base).max().unwrap_or(0);
        let length_bytes = if span <= u8::MAX as u64 {
            1
        } else if span <= u16::MAX as u64 {
            2
        } else {
            4
        };
        let stored = units.iter().map(|&u| (u - base) as u32).collect();
        let mut offsets = Vec::with_capacity(record_lens.len() + 1);
        let mut acc = 0u64;
        offsets.push(0);
        for &l in record_lens {
            acc += l;
            offsets.push(acc);
        }
        (base as u32, length_bytes, stored, offsets)
    }
}
