//! `ibp inspect`: what a `.ibp` file holds and how well it is packed, as text or JSON.

use crate::cli::InspectArgs;
use crate::commands::open_container;
use crate::error::{CliError, CliResult};
use crate::metadata::{self, metadata_entries};
use ibp_codec::chunk_codec::raw_for_gpu_reads;
use ibp_codec::{DecoderKind, Limits};
use ibp_format::{FOOTER_LEN, HEADER_LEN};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// One chunk.
#[derive(Debug, Clone, Serialize)]
pub struct ChunkReport {
    /// Chunk index within its entry.
    pub index: usize,
    /// First row of the chunk within its entry.
    pub first_row: u64,
    /// Rows in the chunk.
    pub rows: u32,
    /// Word width `W` in bits.
    pub word_bits: u32,
    /// Row alignment in bytes.
    pub align: u64,
    /// Mask/Bitval groups.
    pub groups: u32,
    /// Bytes of the whole chunk (header, metadata, padding, payload).
    pub byte_len: u64,
    /// Bytes of row records.
    pub payload_len: u64,
    /// Rows stored raw.
    pub raw_rows: u64,
    /// Per group: invariant bits of its masks / all mask bits (`popcount(Mask[g]) / (n * W)`).
    pub invariant_fraction_per_group: Vec<f64>,
    /// Rows per group.
    pub rows_per_group: Vec<u64>,
    /// A coded chunk whose records cost at least as much for a GPU gather to read as raw rows
    /// (`TransferCost::GPU`): `ibp compress --gpu` writes such chunks raw, and a GPU loader with
    /// `ChunkForm::FOR_GPU_READS` keeps them raw in memory.
    pub raw_for_gpu_reads: bool,
}

/// One entry.
#[derive(Debug, Clone, Serialize)]
pub struct EntryReport {
    /// Entry name.
    pub name: String,
    /// Dtype name (`f32`, `bf16`, ...).
    pub dtype: String,
    /// Shape.
    pub shape: Vec<u64>,
    /// Rows.
    pub row_count: u64,
    /// Bytes per row.
    pub row_bytes: u64,
    /// Decoded bytes.
    pub raw_bytes: u64,
    /// Bytes of its chunks in the file.
    pub stored_bytes: u64,
    /// Of which row records.
    pub payload_bytes: u64,
    /// Of which chunk headers, metadata (masks, bitvals, group ids, row lengths) and padding.
    pub chunk_overhead_bytes: u64,
    /// raw / stored (0 when nothing is stored).
    pub ratio: f64,
    /// Number of chunks.
    pub chunk_count: usize,
    /// Chunks per word width in bits.
    pub word_bits_histogram: BTreeMap<u32, usize>,
    /// Chunks per group count.
    pub groups_histogram: BTreeMap<u32, usize>,
    /// Invariant mask bits over all mask bits, weighted by rows (each row's group's mask).
    pub invariant_fraction: f64,
    /// Rows stored raw / rows.
    pub raw_row_fraction: f64,
    /// Chunks with [`ChunkReport::raw_for_gpu_reads`].
    pub chunks_raw_for_gpu_reads: usize,
    /// Every chunk.
    pub chunks: Vec<ChunkReport>,
    /// A metadata entry's keys and values (spec 2.7: a safetensors `__metadata__`); absent for
    /// tensors.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<BTreeMap<String, String>>,
    /// Why a metadata entry's text is not of the spec's form (`E_METADATA`); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata_error: Option<String>,
}

/// The whole file.
#[derive(Debug, Clone, Serialize)]
pub struct InspectReport {
    /// The file inspected.
    pub file: String,
    /// Format version `major.minor`.
    pub version: String,
    /// File length in bytes.
    pub file_bytes: u64,
    /// Sum of the entries' decoded bytes.
    pub raw_bytes: u64,
    /// Header, directory and footer bytes.
    pub container_overhead_bytes: u64,
    /// Chunk headers, metadata and padding, all entries.
    pub chunk_overhead_bytes: u64,
    /// raw / file bytes.
    pub ratio: f64,
    /// `1 - file / raw`, overhead included (negative when the file is larger than the tensors).
    pub space_saved_fraction: f64,
    /// Rows stored raw / all rows.
    pub raw_row_fraction: f64,
    /// Entries in file order.
    pub entries: Vec<EntryReport>,
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Reads every chunk's metadata (not the payloads) and builds the report.
pub fn report(path: &Path, limits: Limits) -> CliResult<InspectReport> {
    let mut reader = open_container(path, limits)?;
    let entries = reader.entries().to_vec();
    let mut out = Vec::with_capacity(entries.len());
    let (mut all_rows, mut all_raw_rows) = (0u64, 0u64);
    let mut chunk_overhead_total = 0;
    for (ei, e) in entries.iter().enumerate() {
        let starts = e.chunk_row_starts();
        let mut chunks = Vec::with_capacity(e.chunks.len());
        let (mut inv_bits, mut mask_bits, mut raw_rows, mut payload) = (0f64, 0f64, 0u64, 0u64);
        let mut widths = BTreeMap::new();
        let mut groups_h = BTreeMap::new();
        for (ci, c) in e.chunks.iter().enumerate() {
            let m = reader.chunk_meta(ei, ci).map_err(|err| CliError::format(path, err))?;
            let n = m.words_per_row as u64;
            let w = m.word_width.bits();
            let per_group: Vec<f64> = (0..m.group_count as usize)
                .map(|g| {
                    let ones: u64 = m.mask(g).iter().map(|x| x.count_ones() as u64).sum();
                    ratio(ones, n * w as u64)
                })
                .collect();
            let mut rows_per_group = vec![0u64; m.group_count as usize];
            let mut chunk_raw = 0;
            for r in 0..m.row_count as usize {
                // A raw chunk (G = 0) has no groups: its rows have no invariant bits.
                if let Some(&share) = per_group.get(m.group_of(r)) {
                    rows_per_group[m.group_of(r)] += 1;
                    inv_bits += share;
                }
                mask_bits += 1.0;
                if m.is_raw(r) {
                    chunk_raw += 1;
                }
            }
            raw_rows += chunk_raw;
            payload += m.payload_len;
            *widths.entry(w).or_insert(0) += 1;
            *groups_h.entry(m.group_count).or_insert(0) += 1;
            chunks.push(ChunkReport {
                index: ci,
                first_row: starts[ci],
                rows: m.row_count,
                word_bits: w,
                align: m.align(),
                groups: m.group_count,
                byte_len: c.byte_len,
                payload_len: m.payload_len,
                raw_rows: chunk_raw,
                invariant_fraction_per_group: per_group,
                rows_per_group,
                raw_for_gpu_reads: raw_for_gpu_reads(&m),
            });
        }
        let stored: u64 = e.chunks.iter().map(|c| c.byte_len).sum();
        chunk_overhead_total += stored - payload;
        all_rows += e.row_count;
        all_raw_rows += raw_rows;
        out.push(EntryReport {
            name: e.name.clone(),
            dtype: e.dtype.name().to_owned(),
            shape: e.shape.clone(),
            row_count: e.row_count,
            row_bytes: e.row_bytes,
            raw_bytes: e.decoded_len(),
            stored_bytes: stored,
            payload_bytes: payload,
            chunk_overhead_bytes: stored - payload,
            ratio: ratio(e.decoded_len(), stored),
            chunk_count: e.chunks.len(),
            word_bits_histogram: widths,
            groups_histogram: groups_h,
            invariant_fraction: if mask_bits > 0.0 { inv_bits / mask_bits } else { 0.0 },
            raw_row_fraction: ratio(raw_rows, e.row_count),
            chunks_raw_for_gpu_reads: chunks.iter().filter(|c| c.raw_for_gpu_reads).count(),
            chunks,
            metadata: None,
            metadata_error: None,
        });
    }
    for m in metadata_entries(reader.header(), &entries) {
        let decoded =
            metadata::decode(&mut reader, m.index, DecoderKind::Fast).map_err(|e| CliError::format(path, e))?;
        match decoded {
            Ok((_, map)) => out[m.index].metadata = Some(map),
            Err(why) => out[m.index].metadata_error = Some(why),
        }
    }
    let file_bytes = reader.file_len();
    let raw: u64 = out.iter().map(|e| e.raw_bytes).sum();
    let h = reader.header();
    Ok(InspectReport {
        file: path.display().to_string(),
        version: format!("{}.{}", h.major_version, h.minor_version),
        file_bytes,
        raw_bytes: raw,
        container_overhead_bytes: HEADER_LEN + reader.footer().directory_len + FOOTER_LEN,
        chunk_overhead_bytes: chunk_overhead_total,
        ratio: ratio(raw, file_bytes),
        space_saved_fraction: if raw == 0 {
            0.0
        } else {
            1.0 - file_bytes as f64 / raw as f64
        },
        raw_row_fraction: ratio(all_raw_rows, all_rows),
        entries: out,
    })
}

fn histogram(h: &BTreeMap<u32, usize>, unit: &str) -> String {
    h.iter()
        .map(|(k, v)| format!("{k}{unit}x{v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn shape_text(shape: &[u64]) -> String {
    format!("[{}]", shape.iter().map(u64::to_string).collect::<Vec<_>>().join(", "))
}

/// Renders the report as text.
pub fn render_text(r: &InspectReport, chunks: bool) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}: IBP {}, {} entries, {} bytes",
        r.file,
        r.version,
        r.entries.len(),
        r.file_bytes
    );
    let _ = writeln!(
        s,
        "{:<40} {:>5} {:>18} {:>10} {:>7} {:>10} {:>7} {:>7} {:>6} {:>8}",
        "entry", "dtype", "shape", "rows", "chunks", "W (bits)", "groups", "invar", "raw", "ratio"
    );
    for e in &r.entries {
        let name = if e.name.chars().count() > 40 {
            format!(
                "...{}",
                e.name.chars().skip(e.name.chars().count() - 37).collect::<String>()
            )
        } else {
            e.name.clone()
        };
        let _ = writeln!(
            s,
            "{:<40} {:>5} {:>18} {:>10} {:>7} {:>10} {:>7} {:>6.1}% {:>5.1}% {:>8.4}",
            name,
            e.dtype,
            shape_text(&e.shape),
            e.row_count,
            e.chunk_count,
            histogram(&e.word_bits_histogram, ""),
            histogram(&e.groups_histogram, ""),
            100.0 * e.invariant_fraction,
            100.0 * e.raw_row_fraction,
            e.ratio,
        );
        if e.chunks_raw_for_gpu_reads > 0 {
            let _ = writeln!(
                s,
                "    GPU gathers: {} of {} chunks cost no less to read coded than raw (`ibp compress --gpu` \
                 writes them raw; a GPU loader with ChunkForm::FOR_GPU_READS keeps them raw)",
                e.chunks_raw_for_gpu_reads, e.chunk_count
            );
        }
        if let Some(map) = &e.metadata {
            let _ = writeln!(
                s,
                "    metadata (spec 2.7): {}",
                serde_json::to_string(map).expect("a map of strings serialises")
            );
        }
        if let Some(why) = &e.metadata_error {
            let _ = writeln!(s, "    metadata (spec 2.7): E_METADATA: {why}");
        }
        if chunks {
            for c in &e.chunks {
                let inv: Vec<String> = c
                    .invariant_fraction_per_group
                    .iter()
                    .map(|f| format!("{:.1}%", 100.0 * f))
                    .collect();
                let _ = writeln!(
                    s,
                    "    chunk {:>5}: rows {}..{} W={} A={} G={} bytes={} payload={} raw_rows={} invariant/group=[{}]{}",
                    c.index,
                    c.first_row,
                    c.first_row + c.rows as u64,
                    c.word_bits,
                    c.align,
                    c.groups,
                    c.byte_len,
                    c.payload_len,
                    c.raw_rows,
                    inv.join(" "),
                    if c.raw_for_gpu_reads { " raw-for-GPU-reads" } else { "" }
                );
            }
        }
    }
    let _ = writeln!(
        s,
        "total: {} tensor bytes -> {} file bytes (ratio {:.4}, space saved {:.2}% incl. {} bytes of chunk metadata and {} of header/directory/footer; {:.1}% of rows raw)",
        r.raw_bytes,
        r.file_bytes,
        r.ratio,
        100.0 * r.space_saved_fraction,
        r.chunk_overhead_bytes,
        r.container_overhead_bytes,
        100.0 * r.raw_row_fraction,
    );
    s
}

/// Runs `ibp inspect`.
pub fn run(args: &InspectArgs, limits: Limits) -> CliResult<()> {
    let r = report(&args.input, limits)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&r).expect("report serialises"));
    } else {
        print!("{}", render_text(&r, args.chunks));
    }
    Ok(())
}
