//! Chunk-level encode and decode: a chunk's rows to [`ChunkMeta`] + payload (spec 5 and 6), and
//! back, whole (with the payload CRC, spec 9.3) or as a gather of rows.

use crate::analysis::{plan_chunk, ChunkPlan};
use crate::fast::{DecoderKind, RowDecoder, RowEncoder};
use crate::options::{EncodeOptions, TransferCost};
use crate::row::{decode_row_oracle, raw_padded, words_per_row};
use ibp_format::{
    ensure, ChunkMeta, ErrorCode, FormatError, Result, MAX_ALIGN_LOG2, MAX_CHUNK_DECODED_BYTES, MAX_GROUPS,
    MAX_ROWS_PER_CHUNK,
};
use rayon::prelude::*;

/// Decoded bytes per parallel task of the fast chunk decoder and encoder.
const BYTES_PER_TASK: usize = 256 << 10;

/// One encoded chunk: its validated metadata (header fields, masks, row index, payload CRC) and
/// its payload of row records. `meta.to_bytes(offset)` followed by `payload` is the chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodedChunk {
    /// Header fields and metadata.
    pub meta: ChunkMeta,
    /// The row records, back to back.
    pub payload: Vec<u8>,
}

/// Encodes one chunk: analyses the rows ([`plan_chunk`]) and writes every row record.
/// Deterministic: the same rows and options give the same bytes, whatever the thread count.
///
/// # Panics
/// If `rows.len()` is not a positive multiple of `row_bytes`, the row count exceeds 2^20, the
/// decoded size exceeds 2^32 bytes, or `opts` is invalid ([`EncodeOptions::validate`]).
pub fn encode_chunk(rows: &[u8], row_bytes: usize, opts: &EncodeOptions) -> EncodedChunk {
    let plan = plan_chunk(rows, row_bytes, opts);
    let chunk = encode_chunk_with_plan(rows, row_bytes, &plan, opts.align_log2);
    if let Some(cost) = opts.transfer_cost {
        // Raw unless coding makes reading every row once cheaper.
        if !plan.is_raw_chunk() && reads_no_cheaper_than_raw(&chunk.meta, &cost, chunk.meta.align_log2) {
            let raw = ChunkPlan::raw_chunk(
                plan.word_width,
                chunk.meta.row_count as u64,
                row_bytes,
                chunk.meta.align(),
            );
            return encode_chunk_with_plan(rows, row_bytes, &raw, opts.align_log2);
        }
    }
    chunk
}

/// Cost of reading every record of a chunk once ([`TransferCost::of_record`], offsets from the
/// payload's start), plus [`TransferCost::record_weight`] per record of a coded chunk.
pub fn transfer_cost(meta: &ChunkMeta, cost: &TransferCost) -> u64 {
    let bytes: u64 = meta
        .row_offsets
        .windows(2)
        .map(|w| cost.of_record(w[0], w[1] - w[0]))
        .sum();
    let records = if meta.is_raw_chunk() { 0 } else { meta.row_count as u64 };
    bytes + cost.record_weight as u64 * records
}

/// [`transfer_cost`] of the same rows in a raw chunk (every record `align_up(row_bytes, A)` bytes).
pub fn raw_transfer_cost(meta: &ChunkMeta, cost: &TransferCost) -> u64 {
    raw_transfer_cost_aligned(meta, cost, meta.align_log2)
}

/// [`transfer_cost`] of the same rows in a raw chunk of alignment `2^align_log2` (every record
/// `align_up(row_bytes, 2^align_log2)` bytes).
pub fn raw_transfer_cost_aligned(meta: &ChunkMeta, cost: &TransferCost, align_log2: u8) -> u64 {
    let raw = raw_padded(meta.row_bytes(), 1u64 << align_log2.min(MAX_ALIGN_LOG2));
    (0..meta.row_count as u64).map(|i| cost.of_record(i * raw, raw)).sum()
}

/// Alignment (log2) of the rows of a coded chunk a GPU loader keeps raw, at least: 16 bytes, the
/// GPU kernels' load width (`ibp_gpu::ChunkForm`).
pub const GPU_RAW_ROWS_ALIGN_LOG2: u8 = 4;

/// Whether a GPU loader reading for gathers (`ibp_gpu::ChunkForm::FOR_GPU_READS`:
/// [`TransferCost::GPU`], rows re-laid at alignment `max(A, 16)`) keeps this chunk raw.
pub fn raw_for_gpu_reads(meta: &ChunkMeta) -> bool {
    reads_no_cheaper_than_raw(meta, &TransferCost::GPU, gpu_raw_align_log2(meta))
}

/// Alignment (log2) of the rows of `meta`'s chunk when a GPU loader keeps it raw: `max(A, 16)`.
pub fn gpu_raw_align_log2(meta: &ChunkMeta) -> u8 {
    meta.align_log2.max(GPU_RAW_ROWS_ALIGN_LOG2)
}

/// Whether `meta` is a coded chunk whose records cost at least as much to read once, under `cost`,
/// as its rows stored in a raw chunk of alignment `2^raw_align_log2`: the chunks `ibp compress
/// --gpu` writes raw (at the file's alignment) and a GPU loader for reads keeps raw (spec 5.5,
/// informative). False for raw chunks and for a row index that is not one (offsets going back, or
/// past 2^48), so any metadata can be asked.
pub fn reads_no_cheaper_than_raw(meta: &ChunkMeta, cost: &TransferCost, raw_align_log2: u8) -> bool {
    let offsets = &meta.row_offsets;
    meta.group_count != 0
        && offsets.len() == meta.row_count as usize + 1
        && offsets.windows(2).all(|w| w[0] <= w[1])
        && offsets.last().is_some_and(|&end| end < 1 << 48)
        && meta.row_bytes() <= ibp_format::MAX_ROW_BYTES
        && transfer_cost(meta, cost) >= raw_transfer_cost_aligned(meta, cost, raw_align_log2)
}

/// Encodes one chunk with a given plan (word width, Mask/Bitval per group, group ids; `G = 0`
/// writes a raw chunk, spec 5.5). Masks are cut to `W` bits and Bitvals to their masks.
///
/// # Panics
/// If the rows or the plan do not fit together (row count 1..=2^20, at most 2^32 bytes,
/// `G <= 256`, `G * n` mask words, one group id below `G` per row when `G > 1`) or
/// `align_log2 > 7`.
pub fn encode_chunk_with_plan(rows: &[u8], row_bytes: usize, plan: &ChunkPlan, align_log2: u8) -> EncodedChunk {
    let w = plan.word_width;
    assert!(row_bytes > 0 && rows.len().is_multiple_of(row_bytes), "whole rows");
    let row_count = rows.len() / row_bytes;
    assert!(
        row_count >= 1 && row_count as u64 <= MAX_ROWS_PER_CHUNK,
        "1..=2^20 rows per chunk"
    );
    assert!(
        rows.len() as u64 <= MAX_CHUNK_DECODED_BYTES,
        "at most 2^32 bytes per chunk"
    );
    assert!(align_log2 <= MAX_ALIGN_LOG2, "align_log2 <= 7");
    let groups = plan.group_count as usize;
    assert!(groups as u32 <= MAX_GROUPS, "0..=256 groups");
    let n = words_per_row(row_bytes, w);
    assert!(plan.masks.len() == groups * n && plan.bitvals.len() == groups * n);
    if groups > 1 {
        assert!(plan.group_ids.len() == row_count, "one group id per row");
        assert!(plan.group_ids.iter().all(|&g| (g as usize) < groups));
    }
    let align = 1u64 << align_log2;
    let raw = raw_padded(row_bytes as u64, align);
    let full = w.full_mask();
    let masks: Vec<u64> = plan.masks.iter().map(|m| m & full).collect();
    let bitvals: Vec<u64> = plan.bitvals.iter().zip(&masks).map(|(b, m)| b & m).collect();
    let encoders: Vec<RowEncoder> = (0..groups)
        .map(|g| {
            RowEncoder::new(
                &masks[g * n..(g + 1) * n],
                &bitvals[g * n..(g + 1) * n],
                w,
                row_bytes,
                align,
            )
            .expect("arguments checked above")
        })
        .collect();
    let group_of = |r: usize| if groups <= 1 { 0 } else { plan.group_ids[r] as usize };

    // Encode runs of rows in parallel, each with the CRC of its records; joining them in order
    // keeps the bytes deterministic.
    let rows_per_task = (BYTES_PER_TASK / row_bytes).max(1);
    let parts: Vec<(Vec<u8>, Vec<u64>, crc32fast::Hasher)> = rows
        .par_chunks(rows_per_task * row_bytes)
        .enumerate()
        .map(|(task, part)| {
            let mut encoders = encoders.clone();
            let mut payload = Vec::with_capacity(part.len() + 64);
            let mut lens = Vec::with_capacity(part.len() / row_bytes);
            for (i, row) in part.chunks_exact(row_bytes).enumerate() {
                if groups == 0 {
                    // Raw chunk: every record raw (spec 5.5).
                    payload.extend_from_slice(row);
                    payload.resize(payload.len() + (raw as usize - row_bytes), 0);
                    lens.push(raw);
                } else {
                    let g = group_of(task * rows_per_task + i);
                    lens.push(encoders[g].encode(row, &mut payload));
                }
            }
            let mut crc = crc32fast::Hasher::new();
            crc.update(&payload);
            (payload, lens, crc)
        })
        .collect();
    let total: usize = parts.iter().map(|(p, _, _)| p.len()).sum();
    let mut payload = vec![0u8; total];
    let mut pieces = Vec::with_capacity(parts.len());
    let mut rest = payload.as_mut_slice();
    for (p, _, _) in &parts {
        let (piece, tail) = rest.split_at_mut(p.len());
        pieces.push(piece);
        rest = tail;
    }
    pieces
        .into_par_iter()
        .zip(parts.par_iter())
        .for_each(|(piece, (p, _, _))| piece.copy_from_slice(p));
    let mut record_lens = Vec::with_capacity(row_count);
    let mut crc = crc32fast::Hasher::new();
    for (_, lens, part_crc) in &parts {
        record_lens.extend_from_slice(lens);
        crc.combine(part_crc);
    }

    let (length_base, length_bytes, row_lengths, row_offsets) =
        ChunkMeta::index_from_record_lengths(&record_lens, align);
    let meta = ChunkMeta {
        word_width: w,
        align_log2,
        length_bytes,
        group_count: groups as u32,
        row_count: row_count as u32,
        words_per_row: n as u32,
        row_bytes: row_bytes as u64,
        length_base,
        payload_len: payload.len() as u64,
        payload_crc: crc.finalize(),
        masks,
        bitvals,
        group_ids: if groups > 1 { plan.group_ids.clone() } else { Vec::new() },
        row_lengths,
        row_offsets,
    };
    EncodedChunk { meta, payload }
}

/// Checks that the in-memory metadata is self-consistent, so that indexing it cannot panic (a
/// `ChunkMeta` from [`ChunkMeta::parse`] always is; this guards hand-built ones).
fn check_meta_shape(meta: &ChunkMeta, payload: &[u8]) -> Result<()> {
    let g = meta.group_count as usize;
    let n = meta.words_per_row as usize;
    let rows = meta.row_count as usize;
    let row_bytes = meta.row_bytes;
    ensure!(
        g <= MAX_GROUPS as usize
            && (1..=1 << 24).contains(&row_bytes)
            && n as u64 == row_bytes.div_ceil(meta.word_width.bytes() as u64)
            && meta.masks.len() == g * n
            && meta.bitvals.len() == g * n
            && meta.group_ids.len() == if g > 1 { rows } else { 0 }
            && meta.group_ids.iter().all(|&id| (id as usize) < g)
            && meta.align_log2 <= MAX_ALIGN_LOG2
            && meta.row_offsets.len() == rows + 1
            && meta.row_offsets.first() == Some(&0)
            && meta.row_offsets.windows(2).all(|p| p[0] <= p[1])
            && meta.row_offsets.last() == Some(&meta.payload_len),
        ErrorCode::InvalidArgument,
        "chunk metadata is not self-consistent (not produced by ChunkMeta::parse)"
    );
    ensure!(
        payload.len() as u64 == meta.payload_len,
        ErrorCode::Truncated,
        "payload has {} bytes, header declares {}",
        payload.len(),
        meta.payload_len
    );
    Ok(())
}

/// Row decoders for every group of a chunk (none for a raw chunk).
fn group_decoders(meta: &ChunkMeta) -> Result<Vec<RowDecoder>> {
    let row_bytes = meta.row_bytes() as usize;
    (0..meta.group_count as usize)
        .map(|g| RowDecoder::new(meta.mask(g), meta.bitval(g), meta.word_width, row_bytes, meta.align()))
        .collect()
}

/// Decodes chunk row `row` into `out` (exactly `row_bytes` bytes).
fn decode_one(
    meta: &ChunkMeta,
    payload: &[u8],
    decoders: &[RowDecoder],
    kind: DecoderKind,
    row: usize,
    out: &mut [u8],
) -> Result<()> {
    let range = meta.record_range(row);
    let row_bytes = meta.row_bytes() as usize;
    let result = if meta.is_raw_chunk() {
        crate::row::decode_raw_chunk_row(&payload[range], &[], &[], row_bytes, meta.align(), out)
            .expect("no masks: a raw-chunk row")
    } else {
        let g = meta.group_of(row);
        match kind {
            DecoderKind::Fast => decoders[g].decode_at(payload, range, out),
            DecoderKind::Oracle => decode_row_oracle(
                &payload[range],
                meta.mask(g),
                meta.bitval(g),
                meta.word_width,
                row_bytes,
                meta.align(),
                out,
            ),
        }
    };
    result.map_err(|e| e.at(format_args!("row {row}")))
}

/// Decodes a whole chunk into `out` (`row_count * row_bytes` bytes, else `E_INVALID_ARGUMENT`):
/// checks the payload CRC (spec 9.3) and every row (spec 6). A CRC mismatch is reported before
/// any row error; otherwise the first bad row is reported, named. The fast decoder spreads rows
/// over the rayon pool and computes the CRC of each run of records as it decodes it.
pub fn decode_chunk(meta: &ChunkMeta, payload: &[u8], kind: DecoderKind, out: &mut [u8]) -> Result<()> {
    let row_bytes = meta.row_bytes() as usize;
    let rows = meta.row_count as usize;
    ensure!(
        out.len() as u64 == meta.row_count as u64 * meta.row_bytes(),
        ErrorCode::InvalidArgument,
        "output of {} bytes for {rows} rows of {row_bytes} bytes",
        out.len()
    );
    check_meta_shape(meta, payload)?;
    let decoders = group_decoders(meta)?;
    if kind == DecoderKind::Oracle {
        meta.check_payload_crc(payload)?;
        for (row, dst) in out.chunks_exact_mut(row_bytes).enumerate() {
            decode_one(meta, payload, &decoders, kind, row, dst)?;
        }
        return Ok(());
    }
    let rows_per_task = (BYTES_PER_TASK / row_bytes).max(1);
    let results: Vec<(crc32fast::Hasher, Result<()>)> = out
        .par_chunks_mut(rows_per_task * row_bytes)
        .enumerate()
        .map(|(task, part)| {
            let first = task * rows_per_task;
            let count = part.len() / row_bytes;
            let records = meta.row_offsets[first] as usize..meta.row_offsets[first + count] as usize;
            let mut crc = crc32fast::Hasher::new();
            crc.update(&payload[records]);
            let decoded = part
                .chunks_exact_mut(row_bytes)
                .enumerate()
                .try_for_each(|(i, dst)| decode_one(meta, payload, &decoders, kind, first + i, dst));
            (crc, decoded)
        })
        .collect();
    let mut crc = crc32fast::Hasher::new();
    for (part, _) in &results {
        crc.combine(part);
    }
    let computed = crc.finalize();
    ensure!(
        computed == meta.payload_crc,
        ErrorCode::PayloadCrc,
        "payload CRC 0x{computed:08x} differs from stored 0x{:08x}",
        meta.payload_crc
    );
    results.into_iter().try_for_each(|(_, r)| r)
}

/// Decodes the chunk rows `rows_in_chunk` (in that order, duplicates allowed) into `out`
/// (`rows_in_chunk.len() * row_bytes` bytes, else `E_INVALID_ARGUMENT`). A gather: the payload CRC
/// is not checked (spec 9.3), every row's structure is. A row index `>= row_count` is `E_ROW_INDEX`.
pub fn decode_chunk_rows(
    meta: &ChunkMeta,
    payload: &[u8],
    rows_in_chunk: &[u32],
    kind: DecoderKind,
    out: &mut [u8],
) -> Result<()> {
    let row_bytes = meta.row_bytes() as usize;
    ensure!(
        out.len() as u64 == rows_in_chunk.len() as u64 * meta.row_bytes(),
        ErrorCode::InvalidArgument,
        "output of {} bytes for {} rows of {row_bytes} bytes",
        out.len(),
        rows_in_chunk.len()
    );
    check_meta_shape(meta, payload)?;
    if let Some((i, &r)) = rows_in_chunk.iter().enumerate().find(|(_, &r)| r >= meta.row_count) {
        return Err(FormatError::new(
            ErrorCode::RowIndex,
            format!("requested row {r} (position {i}) of a chunk of {} rows", meta.row_count),
        ));
    }
    let decoders = group_decoders(meta)?;
    let rows_per_task = (BYTES_PER_TASK / row_bytes).max(1);
    let parallel = kind == DecoderKind::Fast && rows_in_chunk.len() > rows_per_task;
    if !parallel {
        for (&r, dst) in rows_in_chunk.iter().zip(out.chunks_exact_mut(row_bytes)) {
            decode_one(meta, payload, &decoders, kind, r as usize, dst)?;
        }
        return Ok(());
    }
    let results: Vec<Result<()>> = out
        .par_chunks_mut(rows_per_task * row_bytes)
        .zip(rows_in_chunk.par_chunks(rows_per_task))
        .map(|(part, wanted)| {
            for (&r, dst) in wanted.iter().zip(part.chunks_exact_mut(row_bytes)) {
                decode_one(meta, payload, &decoders, kind, r as usize, dst)?;
            }
            Ok(())
        })
        .collect();
    results.into_iter().collect()
}
