//! `ibp-gpu-bench --exception-stats`: how much work `ibp_gather_sparse` has per row, counted on the
//! CPU from the same encoded chunks the bench times (no GPU needed). That kernel zeroes a row and
//! decodes only its exceptions (`kernels/ibp_gather/sparse_rows.cuh`): the words that do not
//! participate and the positions its group marks (free bits or a non-zero Bitval word).
//! `decode_sparse_compact` takes them 32 a pass, each pass one dependent chain, so the pass counts
//! say how long a row's decode chain is (the "passes of 64" column: two exceptions a lane).
//!
//! Only rows of coded records in chunks the loader gives sparse tables are counted
//! ([`ibp_gpu::sparse_rows_chunk`]); raw records are copied, not decoded.

#![forbid(unsafe_code)]

use ibp_format::ChunkMeta;

/// Per-row counts over the sparse chunks of one dataset.
#[derive(Default)]
pub struct ExceptionStats {
    /// Rows of every chunk.
    pub rows: usize,
    /// Rows in chunks the loader would give sparse tables.
    pub sparse_rows: usize,
    /// Of those, rows stored raw (copied, not decoded).
    pub raw_records: usize,
    /// Exceptions of each coded row counted.
    pub exceptions: Vec<u32>,
    /// Words that do not participate, per coded row counted.
    pub non_participating: Vec<u32>,
    /// Positions its group marks, per coded row counted.
    pub marked: Vec<u32>,
}

/// Word `j` of a row (little-endian, `wb` bytes; a partial last word padded with zeros).
fn word(row: &[u8], j: usize, wb: usize) -> u64 {
    row[j * wb..row.len().min((j + 1) * wb)]
        .iter()
        .rev()
        .fold(0u64, |w, &b| (w << 8) | b as u64)
}

impl ExceptionStats {
    /// Counts the rows of one chunk (`rows`: its decoded rows, `meta.row_count` of them).
    pub fn add_chunk(&mut self, meta: &ChunkMeta, rows: &[u8]) {
        let count = meta.row_count as usize;
        self.rows += count;
        if meta.is_raw_chunk() || count == 0 {
            return;
        }
        let n = meta.words_per_row as usize;
        let wb = meta.word_width.bytes();
        let full = meta.word_width.full_mask();
        let row_bytes = meta.row_bytes() as usize;
        let marked_at = |g: usize, j: usize| meta.masks[g * n + j] != full || meta.bitvals[g * n + j] != 0;
        let marked_in_group: Vec<u64> = (0..meta.group_count as usize)
            .map(|g| (0..n).filter(|&j| marked_at(g, j)).count() as u64)
            .collect();
        let row_marked: u64 = (0..count).map(|r| marked_in_group[meta.group_of(r)]).sum();
        if !ibp_gpu::sparse_rows_chunk(row_marked, count as u64, n as u64, wb as u64, meta.payload_len) {
            return;
        }
        self.sparse_rows += count;
        for r in 0..count {
            if meta.is_raw(r) {
                self.raw_records += 1;
                continue;
            }
            let g = meta.group_of(r);
            let row = &rows[r * row_bytes..(r + 1) * row_bytes];
            let (mut exceptions, mut np) = (0u32, 0u32);
            for j in 0..n {
                let w = word(row, j, wb);
                let participates = w & meta.masks[g * n + j] == meta.bitvals[g * n + j];
                np += u32::from(!participates);
                exceptions += u32::from(!participates || marked_at(g, j));
            }
            self.exceptions.push(exceptions);
            self.non_participating.push(np);
            self.marked.push(marked_in_group[g] as u32);
        }
    }

    /// One markdown table row: rows counted, then mean / p50 / p90 / max of each count, and the
    /// mean passes of 32 and of 64 exceptions.
    pub fn table_row(&self, name: &str) -> String {
        let coded = self.exceptions.len();
        let passes =
            |per: u32| self.exceptions.iter().map(|&e| e.div_ceil(per) as f64).sum::<f64>() / coded.max(1) as f64;
        let one_pass = self.exceptions.iter().filter(|&&e| e <= 32).count();
        format!(
            "| {name} | {} / {} | {} | {} | {} | {} | {:.0} % | {:.2} | {:.2} |",
            coded,
            self.rows,
            self.raw_records,
            spread(&self.marked),
            spread(&self.non_participating),
            spread(&self.exceptions),
            100.0 * one_pass as f64 / coded.max(1) as f64,
            passes(32),
            passes(64),
        )
    }
}

/// The markdown header of [`ExceptionStats::table_row`].
pub const TABLE_HEADER: &str = "| dataset | coded rows in sparse chunks / rows | raw records there | marked positions mean p50/p90/max | words not participating | exceptions | rows of <= 32 | passes of 32 | passes of 64 |\n|---|---|---|---|---|---|---|---|---|";

/// `mean p50/p90/max` of `values` (nearest rank), or `-`.
fn spread(values: &[u32]) -> String {
    if values.is_empty() {
        return "-".into();
    }
    let mut v = values.to_vec();
    v.sort_unstable();
    let at = |q: f64| v[((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
    let mean = v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64;
    format!("{mean:.1} {}/{}/{}", at(0.5), at(0.9), v[v.len() - 1])
}

#[cfg(test)]
mod tests {
    use super::*;
    use ibp_codec::{encode_chunk, EncodeOptions};

    /// Rows of 64 f32 words, zero but for word 3 of every row (a marked position) and word 40 of
    /// one row in four (a word that does not participate); row 7 is noise, stored raw.
    fn sparse_block() -> Vec<u8> {
        let mut rows = vec![0u8; 256 * 64 * 4];
        for (r, row) in rows.chunks_exact_mut(256).enumerate() {
            row[12..16].copy_from_slice(&(1.0f32 + r as f32).to_le_bytes());
            if r % 4 == 0 {
                row[160..164].copy_from_slice(&(r as f32 * 0.37 - 5.0).to_le_bytes());
            }
            if r == 7 {
                for (i, b) in row.iter_mut().enumerate() {
                    *b = ((i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as u8 | 1;
                }
            }
        }
        rows
    }

    #[test]
    fn counts_marked_positions_and_non_participating_words() {
        let rows = sparse_block();
        let opts = EncodeOptions {
            word_width: Some(ibp_format::WordWidth::W32),
            threshold: Some(0.9),
            ..EncodeOptions::default()
        };
        let chunk = encode_chunk(&rows, 256, &opts);
        let mut stats = ExceptionStats::default();
        stats.add_chunk(&chunk.meta, &rows);
        assert_eq!(stats.rows, 256);
        assert_eq!(stats.sparse_rows, 256, "a chunk with few marked positions is sparse");
        let coded = stats.exceptions.len();
        assert_eq!(stats.raw_records, 1, "row 7 does not shrink");
        assert_eq!(coded, 255);
        // Each coded row: its marked positions and the words that do not participate.
        for k in 0..coded {
            let (m, np, e) = (stats.marked[k], stats.non_participating[k], stats.exceptions[k]);
            assert!(m >= 1, "word 3 has free bits");
            assert!(
                e >= m.max(np) && e <= m + np,
                "row {k}: {m} marked, {np} not participating, {e}"
            );
        }
        assert!(stats.non_participating.iter().any(|&np| np > 0));
        assert!(stats.non_participating.contains(&0));
        assert!(stats.table_row("t").starts_with("| t | "));
    }

    #[test]
    fn dense_chunks_are_not_counted() {
        let rows: Vec<u8> = (0..256 * 256)
            .map(|i| ((i as u64).wrapping_mul(2654435761) >> 7) as u8)
            .collect();
        let chunk = encode_chunk(&rows, 256, &EncodeOptions::default());
        let mut stats = ExceptionStats::default();
        stats.add_chunk(&chunk.meta, &rows);
        assert_eq!(stats.rows, 256);
        assert_eq!(stats.sparse_rows, 0);
        assert!(stats.exceptions.is_empty());
    }
}
