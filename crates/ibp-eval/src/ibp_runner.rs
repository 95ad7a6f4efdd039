//! IBP side of the evaluation: encode a dataset into a container, decode it whole (chunks in
//! parallel on the current rayon pool), fetch single rows, and describe what the encoder chose.

use crate::datasets::Dataset;
use ibp_codec::{decode_chunk, encode_to_vec, ContainerReader, DecoderKind, EncodeOptions, RowDecoder};
use ibp_format::{ChunkMeta, Result};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::io::Cursor;
use std::sync::Arc;

/// Encodes `ds` as a one-entry container (the whole file, every overhead included).
pub fn encode(ds: &Dataset, opts: &EncodeOptions) -> Result<Vec<u8>> {
    let e = &ds.entry;
    encode_to_vec(
        &[(
            e.name.as_str(),
            ds.dtype,
            e.shape.as_slice(),
            e.row_bytes,
            ds.data.as_slice(),
        )],
        opts,
    )
}

/// Opens the container in `bytes`, checks every chunk's metadata and payload CRC, and decodes
/// entry 0 with its chunks spread over the current rayon pool.
pub fn decode_parallel(bytes: &[u8]) -> Result<Vec<u8>> {
    let mut reader = ContainerReader::open(Cursor::new(bytes))?;
    let entry = reader.entries()[0].clone();
    let mut parts: Vec<(Arc<ChunkMeta>, usize)> = Vec::with_capacity(entry.chunks.len());
    for c in 0..entry.chunks.len() {
        let meta = reader.chunk_meta(0, c)?;
        let off = reader.payload_offset(0, c)? as usize;
        parts.push((meta, off));
    }
    let mut out = vec![0u8; entry.decoded_len() as usize];
    let mut slices: Vec<&mut [u8]> = Vec::with_capacity(parts.len());
    let mut rest = out.as_mut_slice();
    for (meta, _) in &parts {
        let len = (meta.row_count as u64 * meta.row_bytes()) as usize;
        let (head, tail) = rest.split_at_mut(len);
        slices.push(head);
        rest = tail;
    }
    parts
        .par_iter()
        .zip(slices.into_par_iter())
        .try_for_each(|((meta, off), dst)| {
            // The reader validated that the payload lies within the file.
            let payload = &bytes[*off..*off + meta.payload_len as usize];
            meta.check_payload_crc(payload)?;
            decode_chunk(meta, payload, DecoderKind::Fast, dst)
        })?;
    Ok(out)
}

/// Single-row access through the library's gather (metadata cached after first use).
pub struct RowAccess<'a> {
    reader: ContainerReader<Cursor<&'a [u8]>>,
}

impl<'a> RowAccess<'a> {
    /// Opens the container in `bytes`.
    pub fn open(bytes: &'a [u8]) -> Result<Self> {
        Ok(RowAccess {
            reader: ContainerReader::open(Cursor::new(bytes))?,
        })
    }

    /// Row `row` of entry 0.
    pub fn row(&mut self, row: u64) -> Result<Vec<u8>> {
        self.reader.gather(0, &[row], DecoderKind::Fast)
    }
}

/// Single-row access with everything prepared once per file: chunk metadata, payload offsets and
/// one fast [`RowDecoder`] per group of every chunk. The gap to [`RowAccess`] is what a reader
/// could save by caching decoders instead of building one per requested row.
pub struct PreparedRows<'a> {
    bytes: &'a [u8],
    row_bytes: usize,
    /// First row of each chunk, plus the row count at the end.
    starts: Vec<u64>,
    chunks: Vec<PreparedChunk>,
}

struct PreparedChunk {
    meta: Arc<ChunkMeta>,
    payload_offset: usize,
    decoders: Vec<RowDecoder>,
}

impl<'a> PreparedRows<'a> {
    /// Opens the container in `bytes` and prepares every chunk of entry 0.
    pub fn open(bytes: &'a [u8]) -> Result<Self> {
        let mut reader = ContainerReader::open(Cursor::new(bytes))?;
        let entry = reader.entries()[0].clone();
        let mut chunks = Vec::with_capacity(entry.chunks.len());
        for c in 0..entry.chunks.len() {
            let meta = reader.chunk_meta(0, c)?;
            let payload_offset = reader.payload_offset(0, c)? as usize;
            let decoders = (0..meta.group_count as usize)
                .map(|g| {
                    RowDecoder::new(
                        meta.mask(g),
                        meta.bitval(g),
                        meta.word_width,
                        entry.row_bytes as usize,
                        meta.align(),
                    )
                })
                .collect::<Result<Vec<_>>>()?;
            chunks.push(PreparedChunk {
                meta,
                payload_offset,
                decoders,
            });
        }
        Ok(PreparedRows {
            bytes,
            row_bytes: entry.row_bytes as usize,
            starts: entry.chunk_row_starts(),
            chunks,
        })
    }

    /// Decodes row `row` of entry 0 into `out` (`row_bytes` long).
    pub fn row_into(&self, row: u64, out: &mut [u8]) -> Result<()> {
        let total = *self.starts.last().unwrap_or(&0);
        ibp_format::ensure!(
            row < total,
            ibp_format::ErrorCode::RowIndex,
            "row {row} out of range ({total} rows)"
        );
        let c = self.starts.partition_point(|&s| s <= row) - 1;
        let chunk = &self.chunks[c];
        let local = (row - self.starts[c]) as usize;
        let range = chunk.meta.record_range(local);
        let payload = &self.bytes[chunk.payload_offset..chunk.payload_offset + chunk.meta.payload_len as usize];
        chunk.decoders[chunk.meta.group_of(local)].decode_at(payload, range, &mut out[..self.row_bytes])
    }
}

/// What the encoder chose, for the report: e.g. `W16 x 6 chunks, A=1`.
pub fn describe(bytes: &[u8]) -> Result<String> {
    let mut reader = ContainerReader::open(Cursor::new(bytes))?;
    let chunks = reader.entries()[0].chunks.len();
    let mut widths: BTreeMap<u32, usize> = BTreeMap::new();
    let mut raw_rows = 0u64;
    let mut rows = 0u64;
    let mut groups = 0u32;
    let mut align = 1;
    for c in 0..chunks {
        let m = reader.chunk_meta(0, c)?;
        *widths.entry(m.word_width.bits()).or_default() += 1;
        raw_rows += (0..m.row_count as usize).filter(|&r| m.is_raw(r)).count() as u64;
        rows += m.row_count as u64;
        groups = groups.max(m.group_count);
        align = m.align();
    }
    let w: Vec<String> = widths.iter().map(|(w, n)| format!("W{w}x{n}")).collect();
    let raw_pct = if rows > 0 {
        100.0 * raw_rows as f64 / rows as f64
    } else {
        0.0
    };
    Ok(format!(
        "{} chunks {}, G<={groups}, A={align}, raw rows {raw_pct:.1}%",
        chunks,
        w.join("+")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datasets::{Dataset, ManifestEntry};
    use ibp_format::Dtype;

    fn dataset() -> Dataset {
        // 3000 rows of 8 f32 with a shared exponent pattern (compressible) and varied low bits.
        let rows = 3000u64;
        let data: Vec<u8> = (0..rows * 8)
            .flat_map(|i| (1.0f32 + (i % 97) as f32 / 128.0 + (i / 8) as f32 * 1e-6).to_le_bytes())
            .collect();
        let entry = ManifestEntry {
            name: "t".into(),
            path: "t.npy".into(),
            dtype: "float32".into(),
            shape: vec![rows, 8],
            row_bytes: 32,
            committed: false,
            description: String::new(),
        };
        Dataset {
            entry,
            dtype: Dtype::F32,
            data,
        }
    }

    #[test]
    fn every_access_path_returns_the_original_rows() {
        let ds = dataset();
        // Small chunks so that rows are spread over several chunks.
        let opts = EncodeOptions {
            chunk_rows: Some(700),
            ..EncodeOptions::default()
        };
        let file = encode(&ds, &opts).unwrap();
        assert!(file.len() < ds.data.len(), "the test data should compress");
        assert_eq!(decode_parallel(&file).unwrap(), ds.data);
        let mut gather = RowAccess::open(&file).unwrap();
        let prepared = PreparedRows::open(&file).unwrap();
        let mut out = vec![0u8; 32];
        for r in [0u64, 1, 699, 700, 701, 1500, 2999] {
            let want = &ds.data[r as usize * 32..(r as usize + 1) * 32];
            assert_eq!(gather.row(r).unwrap(), want, "gather row {r}");
            prepared.row_into(r, &mut out).unwrap();
            assert_eq!(out, want, "prepared row {r}");
        }
        assert!(prepared.row_into(3000, &mut out).is_err());
        assert!(describe(&file).unwrap().contains("5 chunks"));
    }
}
