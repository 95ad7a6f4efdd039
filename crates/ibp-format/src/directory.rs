//! The directory (spec section 7): entries with their names, dtypes, shapes and chunk references.

use crate::constants::*;
use crate::error::{ErrorCode, Result};
use crate::types::Dtype;
use crate::{bail, ensure};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// A chunk reference: where a chunk lies and how many rows it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkRef {
    /// File offset of the chunk's first byte.
    pub offset: u64,
    /// Bytes of the whole chunk (header, metadata, padding and payload).
    pub byte_len: u64,
    /// Rows in the chunk.
    pub row_count: u32,
}

/// One entry (a named tensor).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryInfo {
    /// Unique UTF-8 name.
    pub name: String,
    /// Element dtype.
    pub dtype: Dtype,
    /// Logical shape (C order).
    pub shape: Vec<u64>,
    /// Number of rows.
    pub row_count: u64,
    /// Bytes per row.
    pub row_bytes: u64,
    /// The chunks covering the rows, in row order.
    pub chunks: Vec<ChunkRef>,
}

impl EntryInfo {
    /// Product of the shape (1 for rank 0), `None` on overflow.
    pub fn element_count(&self) -> Option<u64> {
        self.shape.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d))
    }

    /// Decoded size in bytes (`row_count * row_bytes`).
    pub fn decoded_len(&self) -> u64 {
        self.row_count * self.row_bytes
    }

    /// First row of every chunk, plus `row_count` at the end.
    pub fn chunk_row_starts(&self) -> Vec<u64> {
        let mut starts = Vec::with_capacity(self.chunks.len() + 1);
        let mut acc = 0u64;
        starts.push(0);
        for c in &self.chunks {
            acc += c.row_count as u64;
            starts.push(acc);
        }
        starts
    }

    /// Checks the data-model rules of spec 2.3 and the entry limits of section 10.
    pub fn validate_shape(&self) -> Result<()> {
        ensure!(
            self.shape.len() <= MAX_RANK,
            ErrorCode::Limit,
            "rank {} exceeds {MAX_RANK}",
            self.shape.len()
        );
        let elements = self.element_count();
        let bytes = elements.and_then(|e| e.checked_mul(self.dtype.size()));
        let rows_bytes = self.row_count.checked_mul(self.row_bytes);
        ensure!(
            bytes.is_some() && bytes == rows_bytes,
            ErrorCode::Shape,
            "shape {:?} of {} is {bytes:?} bytes, but {} rows of {} bytes are {rows_bytes:?}",
            self.shape,
            self.dtype,
            self.row_count,
            self.row_bytes
        );
        ensure!(
            self.row_bytes >= 1 && self.row_bytes.is_multiple_of(self.dtype.size()),
            ErrorCode::Shape,
            "row_bytes {} is not a positive multiple of the {}-byte {}",
            self.row_bytes,
            self.dtype.size(),
            self.dtype
        );
        ensure!(
            elements != Some(0) || self.row_count == 0,
            ErrorCode::Shape,
            "an empty tensor must have 0 rows, not {}",
            self.row_count
        );
        ensure!(
            self.row_bytes <= MAX_ROW_BYTES,
            ErrorCode::Limit,
            "row_bytes {} exceeds 2^24",
            self.row_bytes
        );
        Ok(())
    }
}

/// The whole directory.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Directory {
    /// Entries in file order.
    pub entries: Vec<EntryInfo>,
}

fn validate_name(name: &[u8], seen: &mut HashSet<String>) -> Result<String> {
    ensure!(
        !name.is_empty() && name.len() <= MAX_NAME_LEN,
        ErrorCode::Name,
        "name length {} is not in 1..=1024",
        name.len()
    );
    let name = std::str::from_utf8(name)
        .map_err(|_| crate::FormatError::new(ErrorCode::Name, "name is not valid UTF-8"))?
        .to_owned();
    ensure!(
        seen.insert(name.clone()),
        ErrorCode::Name,
        "name {name:?} appears twice"
    );
    Ok(name)
}

/// A bounds-checked little-endian reader over the directory bytes.
struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: u64, what: &str) -> Result<&'a [u8]> {
        let end = (self.pos as u64)
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len() as u64);
        match end {
            Some(end) => {
                let s = &self.bytes[self.pos..end as usize];
                self.pos = end as usize;
                Ok(s)
            }
            None => bail!(
                ErrorCode::Directory,
                "{what} ({n} bytes at directory offset {}) runs past the directory's {} bytes",
                self.pos,
                self.bytes.len()
            ),
        }
    }
    fn u64(s: &[u8], o: usize) -> u64 {
        u64::from_le_bytes(s[o..o + 8].try_into().expect("8 bytes"))
    }
    fn u32(s: &[u8], o: usize) -> u32 {
        u32::from_le_bytes(s[o..o + 4].try_into().expect("4 bytes"))
    }
}

impl Directory {
    /// Serialises the directory (the caller places it after the last chunk and computes its CRC).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&(self.entries.len() as u32).to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        for e in &self.entries {
            let start = out.len();
            out.extend_from_slice(&(e.name.len() as u16).to_le_bytes());
            out.push(e.dtype.code());
            out.push(e.shape.len() as u8);
            out.extend_from_slice(&(e.chunks.len() as u32).to_le_bytes());
            out.extend_from_slice(&e.row_count.to_le_bytes());
            out.extend_from_slice(&e.row_bytes.to_le_bytes());
            for d in &e.shape {
                out.extend_from_slice(&d.to_le_bytes());
            }
            out.extend_from_slice(e.name.as_bytes());
            while !(out.len() - start).is_multiple_of(8) {
                out.push(0);
            }
            for c in &e.chunks {
                out.extend_from_slice(&c.offset.to_le_bytes());
                out.extend_from_slice(&c.byte_len.to_le_bytes());
                out.extend_from_slice(&c.row_count.to_le_bytes());
                out.extend_from_slice(&0u32.to_le_bytes());
            }
        }
        out
    }

    /// Parses and validates the directory bytes (spec 11.1 step 4, CRC already checked by the caller)
    /// for a file whose directory starts at `directory_offset`.
    pub fn parse(bytes: &[u8], directory_offset: u64) -> Result<Directory> {
        let mut cur = Cursor { bytes, pos: 0 };
        let pre = cur.take(DIRECTORY_PREAMBLE_LEN, "directory preamble")?;
        let entry_count = Cursor::u32(pre, 0) as u64;
        ensure!(
            Cursor::u32(pre, 4) == 0,
            ErrorCode::Reserved,
            "directory reserved field is not zero"
        );
        // Every entry record takes at least 24 + 8 bytes: a count the bytes cannot back is rejected
        // before anything is allocated for it.
        let mut entries = Vec::new();
        let mut seen = HashSet::new();
        for index in 0..entry_count {
            let at = |e: crate::FormatError| e.at(format!("directory entry {index}"));
            let fixed = cur.take(ENTRY_FIXED_LEN, "entry record").map_err(at)?;
            let name_len = u16::from_le_bytes([fixed[0], fixed[1]]) as u64;
            let dtype_code = fixed[2];
            let rank = fixed[3] as u64;
            let chunk_count = Cursor::u32(fixed, 4) as u64;
            let row_count = Cursor::u64(fixed, 8);
            let row_bytes = Cursor::u64(fixed, 16);
            let dtype = Dtype::from_code(dtype_code).map_err(at)?;
            if rank > MAX_RANK as u64 {
                return Err(at(crate::FormatError::new(
                    ErrorCode::Limit,
                    format!("rank {rank} exceeds 8"),
                )));
            }
            let shape_bytes = cur.take(8 * rank, "shape").map_err(at)?;
            let shape: Vec<u64> = (0..rank as usize).map(|i| Cursor::u64(shape_bytes, 8 * i)).collect();
            let name_bytes = cur.take(name_len, "name").map_err(at)?;
            let name = validate_name(name_bytes, &mut seen).map_err(at)?;
            let mut entry = EntryInfo {
                name,
                dtype,
                shape,
                row_count,
                row_bytes,
                chunks: Vec::new(),
            };
            entry
                .validate_shape()
                .map_err(|e| e.at(format!("entry {:?}", entry.name)))?;
            let record_len = ENTRY_FIXED_LEN + 8 * rank + name_len;
            let pad = align_up(record_len, 8).expect("small") - record_len;
            let pad_bytes = cur.take(pad, "name padding").map_err(at)?;
            ensure!(
                pad_bytes.iter().all(|&b| b == 0),
                ErrorCode::Padding,
                "entry {:?}: name padding is not zero",
                entry.name
            );
            let refs = cur.take(chunk_count.saturating_mul(CHUNK_REF_LEN), "chunk references");
            let refs = refs.map_err(|e| e.at(format!("entry {:?}", entry.name)))?;
            let mut rows = 0u64;
            for i in 0..chunk_count as usize {
                let r = &refs[i * CHUNK_REF_LEN as usize..(i + 1) * CHUNK_REF_LEN as usize];
                ensure!(
                    Cursor::u32(r, 20) == 0,
                    ErrorCode::Reserved,
                    "entry {:?} chunk {i}: reserved field is not zero",
                    entry.name
                );
                let c = ChunkRef {
                    offset: Cursor::u64(r, 0),
                    byte_len: Cursor::u64(r, 8),
                    row_count: Cursor::u32(r, 16),
                };
                ensure!(
                    c.row_count >= 1,
                    ErrorCode::Layout,
                    "entry {:?} chunk {i} has no rows",
                    entry.name
                );
                ensure!(
                    c.row_count as u64 <= MAX_ROWS_PER_CHUNK,
                    ErrorCode::Limit,
                    "entry {:?} chunk {i} has {} rows, more than 2^20",
                    entry.name,
                    c.row_count
                );
                rows += c.row_count as u64;
                entry.chunks.push(c);
            }
            ensure!(
                rows == entry.row_count,
                ErrorCode::Layout,
                "entry {:?}: chunks hold {rows} rows, the entry declares {}",
                entry.name,
                entry.row_count
            );
            entries.push(entry);
        }
        ensure!(
            cur.pos == bytes.len(),
            ErrorCode::Directory,
            "directory has {} bytes after its last entry",
            bytes.len() - cur.pos
        );
        ensure!(
            entry_count <= MAX_ENTRIES,
            ErrorCode::Limit,
            "{entry_count} entries exceed 65,536"
        );
        let dir = Directory { entries };
        dir.validate_layout(directory_offset)?;
        Ok(dir)
    }

    /// Checks spec 3.1: chunks tile the file from offset 32 up to the directory, in directory order.
    pub fn validate_layout(&self, directory_offset: u64) -> Result<()> {
        let mut expected = HEADER_LEN;
        for e in &self.entries {
            for (i, c) in e.chunks.iter().enumerate() {
                ensure!(
                    c.offset == expected,
                    ErrorCode::Layout,
                    "entry {:?} chunk {i} starts at {}, expected {expected} (chunks must follow each other)",
                    e.name,
                    c.offset
                );
                expected = c
                    .offset
                    .checked_add(c.byte_len)
                    .filter(|&end| end <= directory_offset)
                    .ok_or_else(|| {
                        crate::FormatError::new(
                            ErrorCode::Layout,
                            format!(
                                "entry {:?} chunk {i} ({} bytes at {}) runs past the directory at {directory_offset}",
                                e.name, c.byte_len, c.offset
                            ),
                        )
                    })?;
            }
        }
        ensure!(
            expected == directory_offset,
            ErrorCode::Layout,
            "{} bytes between the last chunk and the directory",
            directory_offset - expected
        );
        Ok(())
    }
}
