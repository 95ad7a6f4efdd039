//! Streaming container reader (spec sections 3.2, 9 and 11): validates the header, the footer and
//! the directory on open, then reads any chunk or row on demand without loading the whole file.

use crate::chunk_codec::{decode_chunk, decode_chunk_rows};
use crate::fast::RowDecoder;
use crate::row::{decode_row, DecoderKind};
use ibp_format::{
    bail, crc32, ensure, ChunkMeta, Directory, EntryInfo, ErrorCode, Footer, FormatError, Header, Result, FOOTER_LEN,
    HEADER_LEN, MIN_FILE_LEN,
};
use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom, Write};

/// Resource limits a caller sets on a reader (spec 10.2): exceeding one is `E_LIMIT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest output one call may produce (a decoded chunk, a decoded entry or a gather), in
    /// bytes. Streaming decodes ([`ContainerReader::decode_entry_to`], [`ContainerReader::verify`])
    /// hold one chunk at a time, so this also bounds their memory.
    pub max_output_bytes: u64,
    /// Most rows one gather may request.
    pub max_gather_rows: u64,
    /// Largest directory accepted, in bytes.
    pub max_directory_bytes: u64,
}

impl Default for Limits {
    /// 16 GiB of output, 16 Mi rows per gather, 256 MiB of directory.
    fn default() -> Self {
        Limits {
            max_output_bytes: 16 << 30,
            max_gather_rows: 16 << 20,
            max_directory_bytes: 256 << 20,
        }
    }
}

/// What [`ContainerReader::verify`] found.
#[derive(Debug, Clone, Default)]
pub struct VerifyReport {
    /// Chunks checked (CRCs and every row decoded) without a problem.
    pub chunks_ok: u64,
    /// Rows decoded without a problem.
    pub rows_ok: u64,
    /// Every damaged chunk: `(entry index, chunk index, error)`.
    pub problems: Vec<(usize, usize, FormatError)>,
}

impl VerifyReport {
    /// Whether nothing was damaged.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Reads an IBP container from any `Read + Seek` source (a file, a memory map through a `Cursor`).
pub struct ContainerReader<R> {
    source: R,
    file_len: u64,
    header: Header,
    footer: Footer,
    directory: Directory,
    limits: Limits,
    meta_cache: HashMap<(usize, usize), std::sync::Arc<ChunkMeta>>,
}

fn read_exact_at<R: Read + Seek>(source: &mut R, offset: u64, len: u64) -> Result<Vec<u8>> {
    source.seek(SeekFrom::Start(offset))?;
    let mut buf = Vec::new();
    let got = source.by_ref().take(len).read_to_end(&mut buf)?;
    ensure!(
        got as u64 == len,
        ErrorCode::Truncated,
        "needed {len} bytes at offset {offset}, file has {got}"
    );
    Ok(buf)
}

impl<R: Read + Seek> ContainerReader<R> {
    /// Opens a container with default [`Limits`].
    pub fn open(source: R) -> Result<Self> {
        Self::open_with_limits(source, Limits::default())
    }

    /// Opens a container: validates header, footer and directory (spec 11.1 steps 1-4).
    pub fn open_with_limits(mut source: R, limits: Limits) -> Result<Self> {
        let file_len = source.seek(SeekFrom::End(0))?;
        ensure!(
            file_len >= MIN_FILE_LEN,
            ErrorCode::Truncated,
            "file of {file_len} bytes is shorter than header and footer (64)"
        );
        let header = Header::parse(&read_exact_at(&mut source, 0, HEADER_LEN)?)?;
        let footer_bytes = read_exact_at(&mut source, file_len - FOOTER_LEN, FOOTER_LEN)?;
        let footer = Footer::parse(&footer_bytes, file_len)?;
        ensure!(
            footer.directory_len <= limits.max_directory_bytes,
            ErrorCode::Limit,
            "directory of {} bytes exceeds the reader's limit of {}",
            footer.directory_len,
            limits.max_directory_bytes
        );
        // Footer::parse checked the directory lies within the file: the allocation is backed.
        let dir_bytes = read_exact_at(&mut source, footer.directory_offset, footer.directory_len)?;
        let computed = crc32(&dir_bytes);
        ensure!(
            computed == footer.directory_crc,
            ErrorCode::DirectoryCrc,
            "directory CRC 0x{computed:08x} differs from stored 0x{:08x}",
            footer.directory_crc
        );
        let directory = Directory::parse(&dir_bytes, footer.directory_offset)?;
        Ok(ContainerReader {
            source,
            file_len,
            header,
            footer,
            directory,
            limits,
            meta_cache: HashMap::new(),
        })
    }

    /// The file header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The file footer.
    pub fn footer(&self) -> &Footer {
        &self.footer
    }

    /// File length in bytes.
    pub fn file_len(&self) -> u64 {
        self.file_len
    }

    /// The entries, in file order.
    pub fn entries(&self) -> &[EntryInfo] {
        &self.directory.entries
    }

    /// Index of the entry called `name`.
    pub fn entry_index(&self, name: &str) -> Option<usize> {
        self.directory.entries.iter().position(|e| e.name == name)
    }

    /// The reader's limits.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    fn entry(&self, entry: usize) -> Result<&EntryInfo> {
        self.directory.entries.get(entry).ok_or_else(|| {
            FormatError::new(
                ErrorCode::RowIndex,
                format!("entry {entry} out of range ({} entries)", self.directory.entries.len()),
            )
        })
    }

    fn chunk_ref(&self, entry: usize, chunk: usize) -> Result<(u64, ibp_format::ChunkRef, u64)> {
        let e = self.entry(entry)?;
        let c = *e.chunks.get(chunk).ok_or_else(|| {
            FormatError::new(
                ErrorCode::RowIndex,
                format!(
                    "entry {:?}: chunk {chunk} out of range ({} chunks)",
                    e.name,
                    e.chunks.len()
                ),
            )
        })?;
        Ok((e.row_bytes, c, c.row_count as u64))
    }

    fn locate(&self, entry: usize, chunk: usize) -> String {
        match self.directory.entries.get(entry) {
            Some(e) => format!("entry {:?} chunk {chunk}", e.name),
            None => format!("entry {entry} chunk {chunk}"),
        }
    }

    /// Reads and validates a chunk's header and metadata (not its payload); cached.
    pub fn chunk_meta(&mut self, entry: usize, chunk: usize) -> Result<std::sync::Arc<ChunkMeta>> {
        if let Some(m) = self.meta_cache.get(&(entry, chunk)) {
            return Ok(m.clone());
        }
        let (row_bytes, c, rows) = self.chunk_ref(entry, chunk)?;
        let here = self.locate(entry, chunk);
        // Read the fixed header first, then exactly the metadata it declares (bounded by the chunk).
        let head = read_exact_at(&mut self.source, c.offset, c.byte_len.min(ibp_format::CHUNK_HEADER_LEN))
            .map_err(|e| e.at(&here))?;
        let prefix_len = match ibp_format::RawChunkHeader::parse(&head) {
            Ok(h) => ChunkMeta::payload_start(c.offset, h.meta_len as u64, 1u64 << h.align_log2.min(7))
                .unwrap_or(u64::MAX)
                .min(c.byte_len),
            Err(_) => head.len() as u64,
        };
        let prefix = read_exact_at(&mut self.source, c.offset, prefix_len).map_err(|e| e.at(&here))?;
        let meta = ChunkMeta::parse(&prefix, c.offset, c.byte_len, rows, row_bytes).map_err(|e| e.at(&here))?;
        let meta = std::sync::Arc::new(meta);
        self.meta_cache.insert((entry, chunk), meta.clone());
        Ok(meta)
    }

    /// File offset of a chunk's payload.
    pub fn payload_offset(&mut self, entry: usize, chunk: usize) -> Result<u64> {
        let meta = self.chunk_meta(entry, chunk)?;
        let (_, c, _) = self.chunk_ref(entry, chunk)?;
        Ok(c.offset + c.byte_len - meta.payload_len)
    }

    /// Reads a chunk's validated metadata and its payload, checking the payload CRC.
    pub fn read_chunk(&mut self, entry: usize, chunk: usize) -> Result<(ChunkMeta, Vec<u8>)> {
        let meta = self.chunk_meta(entry, chunk)?;
        let offset = self.payload_offset(entry, chunk)?;
        let here = self.locate(entry, chunk);
        let payload = read_exact_at(&mut self.source, offset, meta.payload_len).map_err(|e| e.at(&here))?;
        meta.check_payload_crc(&payload).map_err(|e| e.at(&here))?;
        Ok(((*meta).clone(), payload))
    }

    /// Decodes one whole chunk (all checks of spec 11.1 step 5).
    pub fn decode_chunk(&mut self, entry: usize, chunk: usize, kind: DecoderKind) -> Result<Vec<u8>> {
        let (meta, payload) = self.read_chunk(entry, chunk)?;
        let len = meta.row_count as u64 * meta.row_bytes();
        ensure!(
            len <= self.limits.max_output_bytes,
            ErrorCode::Limit,
            "{} decodes to {len} bytes, over the reader's limit of {}",
            self.locate(entry, chunk),
            self.limits.max_output_bytes
        );
        // Spec 10.2: a valid chunk decodes to at most 64 times its payload. One that claims more
        // has a bad row: find it row by row (same error, spec 11.1 order) instead of allocating an
        // output the file's bytes cannot back (a 2 MiB file could otherwise claim 4 GiB).
        if len > meta.payload_len.saturating_mul(64) {
            let mut row = vec![0u8; meta.row_bytes() as usize];
            for r in 0..meta.row_count {
                decode_chunk_rows(&meta, &payload, &[r], kind, &mut row)
                    .map_err(|e| e.at(self.locate(entry, chunk)))?;
            }
        }
        let mut out = vec![0u8; len as usize];
        decode_chunk(&meta, &payload, kind, &mut out).map_err(|e| e.at(self.locate(entry, chunk)))?;
        Ok(out)
    }

    /// Decodes a whole entry into memory.
    pub fn decode_entry(&mut self, entry: usize, kind: DecoderKind) -> Result<Vec<u8>> {
        let len = self.entry(entry)?.decoded_len();
        ensure!(
            len <= self.limits.max_output_bytes,
            ErrorCode::Limit,
            "entry decodes to {len} bytes, over the reader's limit of {}",
            self.limits.max_output_bytes
        );
        let mut out = Vec::new();
        self.decode_entry_to(entry, kind, &mut out)?;
        Ok(out)
    }

    /// Decodes a whole entry chunk by chunk into `sink` (memory bounded by one chunk).
    pub fn decode_entry_to(&mut self, entry: usize, kind: DecoderKind, sink: &mut impl Write) -> Result<()> {
        let chunks = self.entry(entry)?.chunks.len();
        for chunk in 0..chunks {
            let rows = self.decode_chunk(entry, chunk, kind)?;
            sink.write_all(&rows)?;
        }
        Ok(())
    }

    /// Decodes rows `rows` of an entry, in the caller's order (duplicates allowed), reading only
    /// the chunks' metadata and the records needed. The payload CRC is not checked (spec 9.3).
    pub fn gather(&mut self, entry: usize, rows: &[u64], kind: DecoderKind) -> Result<Vec<u8>> {
        let e = self.entry(entry)?;
        let row_bytes = e.row_bytes;
        let row_count = e.row_count;
        let starts = e.chunk_row_starts();
        ensure!(
            rows.len() as u64 <= self.limits.max_gather_rows,
            ErrorCode::Limit,
            "gather of {} rows exceeds the reader's limit of {}",
            rows.len(),
            self.limits.max_gather_rows
        );
        let out_len = (rows.len() as u64)
            .checked_mul(row_bytes)
            .filter(|&l| l <= self.limits.max_output_bytes);
        let Some(out_len) = out_len else {
            bail!(
                ErrorCode::Limit,
                "gather output exceeds the reader's limit of {} bytes",
                self.limits.max_output_bytes
            )
        };
        if let Some((i, &r)) = rows.iter().enumerate().find(|(_, &r)| r >= row_count) {
            bail!(
                ErrorCode::RowIndex,
                "requested row {r} (position {i}) is out of range: entry has {row_count} rows"
            );
        }
        let mut out = vec![0u8; out_len as usize];
        // Group requests by chunk, keeping output positions.
        let mut by_chunk: HashMap<usize, Vec<(usize, u32)>> = HashMap::new();
        for (pos, &r) in rows.iter().enumerate() {
            let chunk = starts.partition_point(|&s| s <= r) - 1;
            by_chunk
                .entry(chunk)
                .or_default()
                .push((pos, (r - starts[chunk]) as u32));
        }
        let mut chunks: Vec<_> = by_chunk.into_iter().collect();
        chunks.sort_by_key(|(c, _)| *c);
        let rb = row_bytes as usize;
        for (chunk, wanted) in chunks {
            let meta = self.chunk_meta(entry, chunk)?;
            let here = self.locate(entry, chunk);
            let payload_offset = self.payload_offset(entry, chunk)?;
            if wanted.len() as u64 * 8 >= meta.row_count as u64 {
                // Many rows of this chunk: read the payload once.
                let payload =
                    read_exact_at(&mut self.source, payload_offset, meta.payload_len).map_err(|e| e.at(&here))?;
                let in_chunk: Vec<u32> = wanted.iter().map(|&(_, r)| r).collect();
                let mut tmp = vec![0u8; in_chunk.len() * rb];
                decode_chunk_rows(&meta, &payload, &in_chunk, kind, &mut tmp).map_err(|e| e.at(&here))?;
                for (k, &(pos, _)) in wanted.iter().enumerate() {
                    out[pos * rb..(pos + 1) * rb].copy_from_slice(&tmp[k * rb..(k + 1) * rb]);
                }
            } else {
                // One prepared fast decoder per group of this chunk, built on first use.
                let mut decoders: HashMap<usize, RowDecoder> = HashMap::new();
                for &(pos, r) in &wanted {
                    let range = meta.record_range(r as usize);
                    let record = read_exact_at(
                        &mut self.source,
                        payload_offset + range.start as u64,
                        (range.end - range.start) as u64,
                    )
                    .map_err(|e| e.at(&here))?;
                    let g = meta.group_of(r as usize);
                    let dst = &mut out[pos * rb..(pos + 1) * rb];
                    let at_row = |e: FormatError| e.at(format!("{here} row {r}"));
                    if kind == DecoderKind::Fast && !meta.is_raw_chunk() {
                        let decoder = match decoders.entry(g) {
                            std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
                            std::collections::hash_map::Entry::Vacant(v) => v.insert(
                                RowDecoder::new(meta.mask(g), meta.bitval(g), meta.word_width, rb, meta.align())
                                    .map_err(at_row)?,
                            ),
                        };
                        decoder.decode(&record, dst).map_err(at_row)?;
                    } else {
                        decode_row(
                            kind,
                            &record,
                            meta.mask(g),
                            meta.bitval(g),
                            meta.word_width,
                            rb,
                            meta.align(),
                            dst,
                        )
                        .map_err(at_row)?;
                    }
                }
            }
        }
        Ok(out)
    }

    /// Checks every CRC and decodes every row of every entry, continuing past damaged chunks.
    pub fn verify(&mut self, kind: DecoderKind) -> VerifyReport {
        let mut report = VerifyReport::default();
        for entry in 0..self.directory.entries.len() {
            for chunk in 0..self.directory.entries[entry].chunks.len() {
                match self.decode_chunk(entry, chunk, kind) {
                    Ok(_) => {
                        report.chunks_ok += 1;
                        report.rows_ok += self.directory.entries[entry].chunks[chunk].row_count as u64;
                    }
                    Err(e) => report.problems.push((entry, chunk, e)),
                }
            }
        }
        report
    }

    /// Fully validates and decodes the file in spec 11.1 order, returning every entry's bytes or
    /// the first error.
    pub fn decode_all(&mut self, kind: DecoderKind) -> Result<Vec<Vec<u8>>> {
        (0..self.directory.entries.len())
            .map(|e| self.decode_entry(e, kind))
            .collect()
    }
}

/// Opens `bytes` and decodes every entry (spec 11.1's full validation): `(entry, decoded bytes)`.
pub fn decode_bytes(bytes: &[u8], kind: DecoderKind) -> Result<Vec<(EntryInfo, Vec<u8>)>> {
    let mut r = ContainerReader::open(std::io::Cursor::new(bytes))?;
    let data = r.decode_all(kind)?;
    Ok(r.entries().iter().cloned().zip(data).collect())
}
