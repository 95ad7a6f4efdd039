//! Streaming container writer (spec section 3.2): header, chunks as they are encoded, then the
//! directory and the footer, in one forward pass.

use crate::chunk_codec::encode_chunk;
use crate::options::EncodeOptions;
use ibp_format::{
    bail, crc32, ensure, is_metadata_name, ChunkRef, Directory, Dtype, EntryInfo, ErrorCode, Footer, FormatError,
    Header, Result, HEADER_LEN, MAX_ENTRIES, MAX_NAME_LEN, MAX_RANK, MAX_ROW_BYTES,
};
use rayon::prelude::*;
use std::collections::HashSet;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

/// The entry being written: its directory record and the rows not yet encoded.
struct OpenEntry {
    info: EntryInfo,
    pending: Vec<u8>,
    rows_written: u64,
}

/// Writes an IBP container to any [`Write`] in one forward pass.
///
/// Rows are buffered until enough whole chunks are present to keep every rayon thread busy, then
/// encoded in parallel and written in order; memory stays bounded by about `threads x chunk size`.
///
/// ```
/// use ibp_codec::{options::EncodeOptions, writer::ContainerWriter, reader::ContainerReader, row::DecoderKind};
/// use ibp_format::Dtype;
/// let data: Vec<u8> = (0..64u32).flat_map(|i| (i as f32).to_le_bytes()).collect();
/// let mut w = ContainerWriter::new(Vec::new(), EncodeOptions::default()).unwrap();
/// w.begin_entry("x", Dtype::F32, &[16, 4], 16).unwrap();
/// w.write_rows(&data).unwrap();
/// w.end_entry().unwrap();
/// let bytes = w.finish().unwrap();
/// let mut r = ContainerReader::open(std::io::Cursor::new(bytes)).unwrap();
/// assert_eq!(r.decode_entry(0, DecoderKind::Fast).unwrap(), data);
/// ```
pub struct ContainerWriter<W: Write> {
    out: W,
    opts: EncodeOptions,
    offset: u64,
    directory: Directory,
    names: HashSet<String>,
    open: Option<OpenEntry>,
    /// Optional-feature bit 0 is set: entries named as metadata (spec 2.7) must be `u8` vectors.
    metadata_bit: bool,
}

impl<W: Write> ContainerWriter<W> {
    /// Starts a container with a default (1.0) header.
    pub fn new(out: W, opts: EncodeOptions) -> Result<Self> {
        Self::with_header(out, opts, Header::default())
    }

    /// Starts a container with the given header (e.g. optional-feature bits set). With bit 0
    /// (metadata entries, spec 2.7) set, every entry named `__metadata__` or `...:__metadata__`
    /// must be a `u8` vector (its text, a JSON object of strings, is the caller's to check). The
    /// header is written as given: setting bit 0 with no such entry is the caller's choice (spec
    /// 2.7 discourages it; conformance vectors `v-0032` and `v-0033` do it).
    pub fn with_header(mut out: W, opts: EncodeOptions, header: Header) -> Result<Self> {
        out.write_all(&header.to_bytes())?;
        Ok(ContainerWriter {
            out,
            opts,
            offset: HEADER_LEN,
            directory: Directory::default(),
            names: HashSet::new(),
            open: None,
            metadata_bit: header.has_metadata_entries(),
        })
    }

    /// Changes the encoding options for entries begun from now on.
    pub fn set_options(&mut self, opts: EncodeOptions) -> Result<()> {
        ensure!(
            self.open.is_none(),
            ErrorCode::InvalidArgument,
            "options cannot change inside an entry"
        );
        self.opts = opts;
        Ok(())
    }

    /// Begins an entry: a tensor of `dtype` and `shape` split into rows of `row_bytes` bytes.
    pub fn begin_entry(&mut self, name: &str, dtype: Dtype, shape: &[u64], row_bytes: u64) -> Result<()> {
        ensure!(
            self.open.is_none(),
            ErrorCode::InvalidArgument,
            "entry begun before the previous one ended"
        );
        ensure!(
            !name.is_empty() && name.len() <= MAX_NAME_LEN,
            ErrorCode::Name,
            "entry name must be 1 to 1024 bytes, got {}",
            name.len()
        );
        ensure!(
            !self.names.contains(name),
            ErrorCode::Name,
            "entry name {name:?} is used twice"
        );
        ensure!(
            (self.directory.entries.len() as u64) < MAX_ENTRIES,
            ErrorCode::Limit,
            "more than 65,536 entries"
        );
        ensure!(
            shape.len() <= MAX_RANK,
            ErrorCode::Limit,
            "rank {} exceeds 8",
            shape.len()
        );
        ensure!(
            (1..=MAX_ROW_BYTES).contains(&row_bytes),
            ErrorCode::Limit,
            "row_bytes {row_bytes} is not in 1..=2^24"
        );
        let elements = shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
        let total = elements.and_then(|e| e.checked_mul(dtype.size()));
        let Some(total) = total else {
            bail!(ErrorCode::Shape, "shape {shape:?} overflows 64 bits")
        };
        ensure!(
            total.is_multiple_of(row_bytes),
            ErrorCode::Shape,
            "{total} bytes of {dtype} {shape:?} do not split into rows of {row_bytes} bytes"
        );
        ensure!(
            !self.metadata_bit || !is_metadata_name(name) || (dtype == Dtype::U8 && shape.len() == 1),
            ErrorCode::Name,
            "entry {name:?} is a metadata entry (optional-feature bit 0 is set): it must be a u8 vector, not {dtype} of rank {} (spec 2.7)",
            shape.len()
        );
        self.opts.validate(row_bytes)?;
        let info = EntryInfo {
            name: name.to_owned(),
            dtype,
            shape: shape.to_vec(),
            row_count: total / row_bytes,
            row_bytes,
            chunks: Vec::new(),
        };
        info.validate_shape()?;
        self.open = Some(OpenEntry {
            info,
            pending: Vec::new(),
            rows_written: 0,
        });
        Ok(())
    }

    /// Appends whole rows (`bytes.len()` a multiple of `row_bytes`) to the open entry.
    pub fn write_rows(&mut self, bytes: &[u8]) -> Result<()> {
        let Some(open) = self.open.as_mut() else {
            bail!(ErrorCode::InvalidArgument, "write_rows outside an entry")
        };
        let row_bytes = open.info.row_bytes;
        ensure!(
            (bytes.len() as u64).is_multiple_of(row_bytes),
            ErrorCode::InvalidArgument,
            "{} bytes are not whole rows of {row_bytes}",
            bytes.len()
        );
        let rows = bytes.len() as u64 / row_bytes;
        ensure!(
            open.rows_written + rows <= open.info.row_count,
            ErrorCode::InvalidArgument,
            "entry {:?} declares {} rows, {} written",
            open.info.name,
            open.info.row_count,
            open.rows_written + rows
        );
        open.rows_written += rows;
        open.pending.extend_from_slice(bytes);
        let chunk_bytes = (self.opts.rows_per_chunk(row_bytes) * row_bytes) as usize;
        let batch = chunk_bytes * rayon::current_num_threads().max(1);
        if open.pending.len() >= batch {
            let full = open.pending.len() / chunk_bytes * chunk_bytes;
            let ready: Vec<u8> = open.pending.drain(..full).collect();
            self.encode_and_write(&ready)?;
        }
        Ok(())
    }

    /// Encodes whole chunks of `rows` in parallel and writes them in order.
    fn encode_and_write(&mut self, rows: &[u8]) -> Result<()> {
        let open = self.open.as_mut().expect("called inside an entry");
        let row_bytes = open.info.row_bytes as usize;
        let chunk_bytes = self.opts.rows_per_chunk(row_bytes as u64) as usize * row_bytes;
        let opts = &self.opts;
        let encoded: Vec<_> = rows
            .par_chunks(chunk_bytes)
            .map(|c| encode_chunk(c, row_bytes, opts))
            .collect();
        for chunk in encoded {
            let head = chunk.meta.to_bytes(self.offset);
            self.out.write_all(&head)?;
            self.out.write_all(&chunk.payload)?;
            let byte_len = head.len() as u64 + chunk.payload.len() as u64;
            open.info.chunks.push(ChunkRef {
                offset: self.offset,
                byte_len,
                row_count: chunk.meta.row_count,
            });
            self.offset += byte_len;
        }
        Ok(())
    }

    /// Ends the open entry; every declared row must have been written.
    pub fn end_entry(&mut self) -> Result<()> {
        let Some(open) = self.open.as_mut() else {
            bail!(ErrorCode::InvalidArgument, "end_entry outside an entry")
        };
        ensure!(
            open.rows_written == open.info.row_count,
            ErrorCode::InvalidArgument,
            "entry {:?} declares {} rows, only {} written",
            open.info.name,
            open.info.row_count,
            open.rows_written
        );
        let rest = std::mem::take(&mut open.pending);
        if !rest.is_empty() {
            self.encode_and_write(&rest)?;
        }
        let open = self.open.take().expect("checked above");
        self.names.insert(open.info.name.clone());
        self.directory.entries.push(open.info);
        Ok(())
    }

    /// Writes one whole tensor as an entry.
    pub fn write_entry(&mut self, name: &str, dtype: Dtype, shape: &[u64], row_bytes: u64, data: &[u8]) -> Result<()> {
        self.begin_entry(name, dtype, shape, row_bytes)?;
        self.write_rows(data)?;
        self.end_entry()
    }

    /// Writes the directory and the footer and returns the underlying writer (flushed).
    pub fn finish(mut self) -> Result<W> {
        ensure!(
            self.open.is_none(),
            ErrorCode::InvalidArgument,
            "finish called inside an entry"
        );
        let dir = self.directory.to_bytes();
        let footer = Footer {
            directory_offset: self.offset,
            directory_len: dir.len() as u64,
            directory_crc: crc32(&dir),
        };
        self.out.write_all(&dir)?;
        self.out.write_all(&footer.to_bytes())?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// A whole tensor to encode: `(name, dtype, shape, row_bytes, bytes)`.
pub type TensorSpec<'a> = (&'a str, Dtype, &'a [u64], u64, &'a [u8]);

/// Encodes whole tensors into an in-memory container.
pub fn encode_to_vec(tensors: &[TensorSpec<'_>], opts: &EncodeOptions) -> Result<Vec<u8>> {
    let mut w = ContainerWriter::new(Vec::new(), opts.clone())?;
    for &(name, dtype, shape, row_bytes, data) in tensors {
        w.write_entry(name, dtype, shape, row_bytes, data)?;
    }
    w.finish()
}

/// Writes `path` atomically: `fill` writes into a temporary file in the same folder, which is
/// flushed, fsynced and renamed over `path` only if `fill` succeeds. On any error the temporary
/// file is removed and `path` is untouched.
pub fn write_atomic(path: &Path, fill: impl FnOnce(&mut BufWriter<File>) -> Result<()>) -> Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let file_name = path.file_name().ok_or_else(|| {
        FormatError::new(
            ErrorCode::InvalidArgument,
            format!("{} is not a file path", path.display()),
        )
    })?;
    let tmp = dir.join(format!(".{}.tmp-{}", file_name.to_string_lossy(), std::process::id()));
    let result = (|| {
        let file = File::create(&tmp)?;
        let mut w = BufWriter::new(file);
        fill(&mut w)?;
        let file = w.into_inner().map_err(|e| FormatError::from(e.into_error()))?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)?;
        if let Ok(d) = File::open(&dir) {
            let _ = d.sync_all(); // best effort: persist the rename
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use ibp_format::OPTIONAL_METADATA_ENTRIES;

    fn with_bit() -> ContainerWriter<Vec<u8>> {
        let header = Header {
            optional_features: OPTIONAL_METADATA_ENTRIES,
            ..Header::default()
        };
        ContainerWriter::with_header(Vec::new(), EncodeOptions::default(), header).unwrap()
    }

    /// Spec 2.7: with bit 0, metadata names are u8 vectors.
    #[test]
    fn metadata_bit_and_names_agree() {
        let text = br#"{"format":"pt"}"#;
        let mut w = with_bit();
        let err = w.begin_entry("a:__metadata__", Dtype::F32, &[4], 16).unwrap_err();
        assert_eq!(err.code, ErrorCode::Name);
        w.write_entry("x", Dtype::F32, &[2], 8, &[0; 8]).unwrap();
        w.write_entry("__metadata__", Dtype::U8, &[text.len() as u64], text.len() as u64, text)
            .unwrap();
        let bytes = w.finish().unwrap();
        let r = crate::reader::ContainerReader::open(std::io::Cursor::new(bytes)).unwrap();
        assert!(r.header().has_metadata_entries());

        // Without the bit the names are free.
        let mut w = ContainerWriter::new(Vec::new(), EncodeOptions::default()).unwrap();
        w.write_entry("__metadata__", Dtype::F32, &[2], 8, &[0; 8]).unwrap();
        w.finish().unwrap();
    }
}
