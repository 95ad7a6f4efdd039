//! Encoder options: word width, threshold, sampling, groups, row alignment and chunking.

use ibp_format::{
    ensure, ErrorCode, Result, WordWidth, MAX_ALIGN_LOG2, MAX_CHUNK_DECODED_BYTES, MAX_GROUPS, MAX_ROWS_PER_CHUNK,
    MAX_ROW_BYTES,
};

/// Raw bytes per chunk that the default chunking aims at.
pub const DEFAULT_CHUNK_TARGET_BYTES: u64 = 16 << 20;

/// How the encoder chooses each chunk's word width, masks, groups, alignment and size.
///
/// Every `None` means "search": the analysis ([`crate::analysis::plan_chunk`]) tries the candidates
/// and keeps the one whose real encoded size (row records with padding, metadata and the row-length
/// field width) is smallest (then, by default, trades at most 0.1 % of it for positions of fewer
/// runs of free bits: [`EncodeOptions::fewer_runs_within`]).
#[derive(Debug, Clone, PartialEq)]
pub struct EncodeOptions {
    /// Word width `W`; `None` tries every width (spec 2.4 allows a partial last word).
    pub word_width: Option<WordWidth>,
    /// Invariance threshold `t` in `(0.5, 1]`; `None` sweeps 0.70, 0.75, ..., 0.95 and 1.0.
    ///
    /// A bit of a word position is invariant-1 if it is set in more than `t * N` of the `N` analysed
    /// rows and invariant-0 if set in fewer than `(1 - t) * N`. `t = 1.0` means "exact": a bit is
    /// invariant only if it has the same value in every analysed row.
    pub threshold: Option<f64>,
    /// `None` analyses every row; `Some(f)` estimates masks from `ceil(f * N)` evenly strided rows
    /// (at least `min(N, 64)`), `f` in `(0, 1]`.
    pub sample_fraction: Option<f64>,
    /// Number of Mask/Bitval groups per chunk, `0..=256`. `1` (the default) writes one group, or a
    /// raw chunk where that is no larger; with `k > 1` exactly `k` groups are written (rows are
    /// assigned by their real coded size; unused groups get Mask 0, Bitval 0); `0` writes raw
    /// chunks (spec 5.5: no masks, every row stored raw).
    pub groups: u32,
    /// Row alignment `A = 2^align_log2`, `0..=7` (0 gives the smallest file; 4 suits 16-byte loads).
    pub align_log2: u8,
    /// Rows per chunk; `None` aims at about 16 MiB of raw bytes per chunk (one copy of the masks per 16 MiB keeps their cost near 0.01 %).
    pub chunk_rows: Option<u32>,
    /// Cost model for files read by random row gathers ([`TransferCost::GPU`] for GPU zero-copy
    /// reads). `Some(c)`: a coded chunk is written raw (spec 5.5) unless reading each of its records
    /// once costs less than reading raw records would, whatever `groups` asks for. `None`
    /// (default): bytes only.
    pub transfer_cost: Option<TransferCost>,
    /// `Some(x)`: 64-bit words are kept when their chunk is at most `x` times the raw bytes larger
    /// than the smallest width's (a GPU decodes about as fast per word at any width, so 64-bit
    /// words turn out up to 2x the bytes of 32-bit ones). `None` (default): smallest size wins.
    /// Only with `word_width: None`.
    pub prefer_wide_words: Option<f64>,
    /// `Some(x)`: a one-group chunk some of whose positions have more than two runs of free bits
    /// gets the invariant bits between runs freed, shortest gaps first, until every position has at
    /// most two runs (else at most three), where that makes the chunk at most `x` times its bytes
    /// larger ([`crate::free_runs`]): GPU decoders take faster paths for such chunks. Default
    /// `Some(`[`DEFAULT_FEWER_RUNS_WITHIN`]`)`; `None`: bytes only (the smallest masks).
    pub fewer_runs_within: Option<f64>,
}

/// The cost of reading row records one at a time over a link that moves whole sectors and pays for
/// every request: a record of `L` bytes at payload offset `o` costs the `sector_bytes` blocks it
/// touches plus `request_weight` times the `request_bytes` blocks it touches (blocks aligned to
/// their size from the payload's start, which GPU loaders place on a 128-byte boundary), plus
/// `record_weight` for each record of a coded chunk (the reader's work on it beyond moving its
/// bytes: row lengths looked up, the record staged and decoded; a raw chunk's record is found by
/// multiplication and copied).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransferCost {
    /// Bytes of a sector (a power of two, 1..=4096).
    pub sector_bytes: u32,
    /// Bytes of a request (a power of two, 1..=4096).
    pub request_bytes: u32,
    /// Cost of a request in sectors.
    pub request_weight: u32,
    /// Cost in sectors of each record of a coded chunk beyond its bytes (0: bytes only).
    pub record_weight: u32,
}

impl TransferCost {
    /// Zero-copy row gathers of an H200 over PCIe: 32-byte sectors, 64-byte requests costing 3
    /// sectors each (fitted to the gather speeds of 256-byte rows, bench/GPU_NOTES.md entry 16), and
    /// one sector per coded record: a gather of 256-byte rows decodes each coded record in about
    /// the time of 1.2 sectors at 4K-row batches and 2.4 at 1K (6 % and 12 % below the "ideal"
    /// copy of the same bytes, entry 45), none from 16K. So a chunk stays coded only where its
    /// records save more than a sector each: rows of 256 bytes that save 4-5 % (200-210 of 256
    /// bytes, which touch as many 64-byte requests as the raw row) are read raw.
    pub const GPU: TransferCost = TransferCost {
        sector_bytes: 32,
        request_bytes: 64,
        request_weight: 3,
        record_weight: 1,
    };

    /// Cost of reading `len >= 1` bytes at `offset`.
    pub fn of_record(&self, offset: u64, len: u64) -> u64 {
        let blocks = |b: u64| (offset + len).div_ceil(b) - offset / b;
        blocks(self.sector_bytes as u64) + self.request_weight as u64 * blocks(self.request_bytes as u64)
    }
}

/// A setting of [`EncodeOptions::prefer_wide_words`]: 64-bit words unless they cost more than 2 % of
/// the raw bytes. [`EncodeOptions::for_gpu`] used it while 64-bit words decoded faster on the GPU than
/// 32-bit ones; since 32-bit words are decoded in pairs they decode and gather as fast or faster
/// (H200, bench/GPU_NOTES.md entry 42), so it no longer does.
pub const GPU_WIDE_WORDS_WITHIN: f64 = 0.02;

/// The default [`EncodeOptions::fewer_runs_within`]: 0.1 % of a chunk's bytes. Fashion-MNIST's
/// 16-bit pixel words, whose smallest masks leave a few positions three to five runs of free bits,
/// then have at most two at +0.04 % of bytes, and the GPU decodes their whole entries 8-14 % faster
/// (bench/GPU_NOTES.md entry 83); of the other benchmark datasets none changes (their positions
/// have at most two runs, or merging costs 8-28 %).
pub const DEFAULT_FEWER_RUNS_WITHIN: f64 = 0.001;

impl Default for EncodeOptions {
    fn default() -> Self {
        EncodeOptions {
            word_width: None,
            threshold: None,
            sample_fraction: None,
            groups: 1,
            align_log2: 0,
            chunk_rows: None,
            transfer_cost: None,
            prefer_wide_words: None,
            fewer_runs_within: Some(DEFAULT_FEWER_RUNS_WITHIN),
        }
    }
}

impl EncodeOptions {
    /// Options for files decoded and gathered on a GPU: 16-byte row alignment (16-byte loads),
    /// chunks sized by what a gather reads ([`TransferCost::GPU`]: a chunk whose coding does not
    /// make its records cheaper to read is stored raw); word widths as the default analysis picks
    /// them (the smallest size).
    pub fn for_gpu() -> EncodeOptions {
        EncodeOptions {
            align_log2: 4,
            transfer_cost: Some(TransferCost::GPU),
            ..EncodeOptions::default()
        }
    }

    /// Rows per chunk for rows of `row_bytes` bytes: `chunk_rows` if set, otherwise enough rows for
    /// about 16 MiB; always within `[1, 2^20]` and at most `2^32` decoded bytes per chunk.
    pub fn rows_per_chunk(&self, row_bytes: u64) -> u64 {
        let row_bytes = row_bytes.max(1);
        let wanted = match self.chunk_rows {
            Some(rows) => rows as u64,
            None => DEFAULT_CHUNK_TARGET_BYTES / row_bytes,
        };
        wanted
            .min(MAX_ROWS_PER_CHUNK)
            .min(MAX_CHUNK_DECODED_BYTES / row_bytes)
            .max(1)
    }

    /// Checks the options against rows of `row_bytes` bytes (`E_INVALID_ARGUMENT` when one is
    /// out of range, `E_LIMIT` when `row_bytes` exceeds the format's limit).
    pub fn validate(&self, row_bytes: u64) -> Result<()> {
        ensure!(
            row_bytes >= 1,
            ErrorCode::InvalidArgument,
            "row_bytes must be at least 1"
        );
        ensure!(
            row_bytes <= MAX_ROW_BYTES,
            ErrorCode::Limit,
            "row_bytes {row_bytes} exceeds the format limit 2^24"
        );
        if let Some(t) = self.threshold {
            ensure!(
                t > 0.5 && t <= 1.0,
                ErrorCode::InvalidArgument,
                "threshold {t} is not in (0.5, 1]"
            );
        }
        if let Some(f) = self.sample_fraction {
            ensure!(
                f > 0.0 && f <= 1.0,
                ErrorCode::InvalidArgument,
                "sample fraction {f} is not in (0, 1]"
            );
        }
        ensure!(
            self.groups <= MAX_GROUPS,
            ErrorCode::InvalidArgument,
            "groups {} is not in 0..=256",
            self.groups
        );
        ensure!(
            self.align_log2 <= MAX_ALIGN_LOG2,
            ErrorCode::InvalidArgument,
            "align_log2 {} exceeds 7",
            self.align_log2
        );
        if let Some(rows) = self.chunk_rows {
            ensure!(
                rows >= 1 && rows as u64 <= MAX_ROWS_PER_CHUNK,
                ErrorCode::InvalidArgument,
                "chunk_rows {rows} is not in 1..=2^20"
            );
            ensure!(
                rows as u64 * row_bytes <= MAX_CHUNK_DECODED_BYTES,
                ErrorCode::InvalidArgument,
                "chunk_rows {rows} of {row_bytes} bytes exceed 2^32 decoded bytes per chunk"
            );
        }
        if let Some(c) = self.transfer_cost {
            ensure!(
                [c.sector_bytes, c.request_bytes]
                    .iter()
                    .all(|b| b.is_power_of_two() && *b <= 4096),
                ErrorCode::InvalidArgument,
                "transfer cost blocks {} and {} bytes: each must be a power of two in 1..=4096",
                c.sector_bytes,
                c.request_bytes
            );
        }
        if let Some(x) = self.prefer_wide_words {
            ensure!(
                (0.0..=1.0).contains(&x),
                ErrorCode::InvalidArgument,
                "prefer_wide_words {x} is not in [0, 1]"
            );
        }
        if let Some(x) = self.fewer_runs_within {
            ensure!(
                (0.0..=1.0).contains(&x),
                ErrorCode::InvalidArgument,
                "fewer_runs_within {x} is not in [0, 1]"
            );
        }
        // A chunk's metadata length is a u32 (spec 5.1, 10): masks and bitvals take at most
        // 2 * G * (row_bytes + 7) bytes (a partial last word rounds up), group ids and 4-byte row
        // lengths at most 5 bytes per row.
        let rows = self.rows_per_chunk(row_bytes);
        let meta = 2 * self.groups as u64 * (row_bytes + 7) + 5 * rows;
        ensure!(
            meta <= u32::MAX as u64,
            ErrorCode::InvalidArgument,
            "{} groups of {row_bytes}-byte rows need more chunk metadata than the format's 4 GiB (spec 10): use fewer groups",
            self.groups
        );
        Ok(())
    }

    /// The word widths the analysis tries, narrowest first: every width (one that does not divide
    /// the row makes its last word partial, spec 2.4), or the one asked for.
    pub fn candidate_widths(&self) -> Vec<WordWidth> {
        match self.word_width {
            Some(w) => vec![w],
            None => WordWidth::ALL.to_vec(),
        }
    }

    /// The thresholds the analysis tries, ascending.
    pub fn candidate_thresholds(&self) -> Vec<f64> {
        match self.threshold {
            Some(t) => vec![t],
            None => SWEEP_THRESHOLDS.to_vec(),
        }
    }
}

/// The default threshold sweep: 0.70 to 0.95 in steps of 0.05, then exact (1.0).
pub const SWEEP_THRESHOLDS: [f64; 7] = [0.70, 0.75, 0.80, 0.85, 0.90, 0.95, 1.0];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_chunking_targets_16_mib_within_limits() {
        let o = EncodeOptions::default();
        assert_eq!(o.rows_per_chunk(1024), 16384);
        assert_eq!(o.rows_per_chunk(1), MAX_ROWS_PER_CHUNK);
        assert_eq!(o.rows_per_chunk(MAX_ROW_BYTES), 1);
        let big = EncodeOptions {
            chunk_rows: Some(1 << 20),
            ..o
        };
        assert_eq!(big.rows_per_chunk(1 << 24), 256);
    }

    #[test]
    fn validate_rejects_bad_options() {
        let ok = EncodeOptions::default();
        assert!(ok.validate(12).is_ok());
        let bad = [
            EncodeOptions {
                groups: 257,
                ..ok.clone()
            },
            EncodeOptions {
                align_log2: 8,
                ..ok.clone()
            },
            EncodeOptions {
                threshold: Some(0.5),
                ..ok.clone()
            },
            EncodeOptions {
                threshold: Some(1.01),
                ..ok.clone()
            },
            EncodeOptions {
                sample_fraction: Some(0.0),
                ..ok.clone()
            },
            EncodeOptions {
                chunk_rows: Some(0),
                ..ok.clone()
            },
        ];
        for o in bad {
            assert_eq!(o.validate(12).unwrap_err().code, ErrorCode::InvalidArgument, "{o:?}");
        }
        // 256 groups of 16 MiB rows: masks and bitvals alone would need 8 GiB of metadata.
        let many = EncodeOptions {
            groups: 256,
            ..ok.clone()
        };
        assert!(many.validate(1 << 20).is_ok());
        assert_eq!(many.validate(1 << 24).unwrap_err().code, ErrorCode::InvalidArgument);
        assert_eq!(ok.validate(0).unwrap_err().code, ErrorCode::InvalidArgument);
    }
}
