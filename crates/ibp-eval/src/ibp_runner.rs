//! IBP side of the evaluation: encode a dataset into a container, decode it whole (chunks in
//! parallel on the current rayon pool), fetch single rows, and describe what the encoder chose.

use crate::datasets::Dataset;
use ibp_codec::{decode_chunk, encode_to_vec, ContainerReader, DecoderKind, EncodeOptions};
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
