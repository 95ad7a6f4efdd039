//! `ibp verify`: checks every CRC and decodes every row, continuing past damage, and reports each
//! damaged chunk with its entry, chunk, row (when known) and error code.

use crate::cli::VerifyArgs;
use crate::commands::open_container;
use crate::error::{CliError, CliResult, ErrorKind};
use crate::progress::Ui;
use ibp_codec::DecoderKind;
use ibp_codec::Limits;
use serde::Serialize;
use std::path::Path;

/// One damaged chunk.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Problem {
    /// Entry name.
    pub entry: String,
    /// Entry index.
    pub entry_index: usize,
    /// Chunk index within the entry.
    pub chunk: usize,
    /// Row within the entry, when the error names one.
    pub row: Option<u64>,
    /// The spec's error code (`E_PAYLOAD_CRC`, ...) or `E_DECODER_MISMATCH`.
    pub code: String,
    /// What is wrong.
    pub detail: String,
}

/// What `verify` found.
#[derive(Debug, Clone, Serialize)]
pub struct VerifyResult {
    /// The file checked.
    pub file: String,
    /// Decoders used (`fast`, `oracle`).
    pub decoders: Vec<&'static str>,
    /// Entries in the file.
    pub entries: usize,
    /// Chunks in the file.
    pub chunks: u64,
    /// Chunks that passed every check.
    pub chunks_ok: u64,
    /// Rows decoded without a problem.
    pub rows_ok: u64,
    /// Every damaged chunk.
    pub problems: Vec<Problem>,
}

impl VerifyResult {
    /// Whether nothing was damaged.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Finds `row N` in an error detail (the codec writes `... chunk C: row N: ...`).
fn row_in_detail(detail: &str) -> Option<u64> {
    let i = detail.find("row ")?;
    let digits: String = detail[i + 4..].chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Checks the whole file. Header, footer or directory damage is an error (nothing else can be
/// located without them); chunk damage is collected.
pub fn check(path: &Path, oracle: bool, ui: Ui, limits: Limits) -> CliResult<VerifyResult> {
    let mut reader = open_container(path, limits)?;
    let entries = reader.entries().to_vec();
    let total: u64 = entries.iter().map(|e| e.chunks.len() as u64).sum();
    let bar = ui.items_bar(total, "verify");
    let mut result = VerifyResult {
        file: path.display().to_string(),
        decoders: if oracle { vec!["fast", "oracle"] } else { vec!["fast"] },
        entries: entries.len(),
        chunks: total,
        chunks_ok: 0,
        rows_ok: 0,
        problems: Vec::new(),
    };
    for (ei, e) in entries.iter().enumerate() {
        let starts = e.chunk_row_starts();
        for (ci, &chunk_start) in starts.iter().take(e.chunks.len()).enumerate() {
            let location = format!("entry {:?} chunk {ci}: ", e.name);
            let problem = |code: &str, detail: String, row_in_chunk: Option<u64>| Problem {
                entry: e.name.clone(),
                entry_index: ei,
                chunk: ci,
                row: row_in_chunk.map(|r| chunk_start + r),
                code: code.to_owned(),
                // The reader prefixes its own location; ours is in the fields.
                detail: detail.strip_prefix(&location).map(str::to_owned).unwrap_or(detail),
            };
            let fast = reader.decode_chunk(ei, ci, DecoderKind::Fast);
            let outcome = match fast {
                Err(err) => Err(problem(
                    err.code.as_str(),
                    err.detail.clone(),
                    row_in_detail(&err.detail),
                )),
                Ok(fast) if oracle => match reader.decode_chunk(ei, ci, DecoderKind::Oracle) {
                    Err(err) => Err(problem(
                        err.code.as_str(),
                        format!("oracle decoder: {}", err.detail),
                        row_in_detail(&err.detail),
                    )),
                    Ok(slow) if slow != fast => {
                        let rb = e.row_bytes as usize;
                        let row =
                            (0..fast.len() / rb).find(|&r| fast[r * rb..(r + 1) * rb] != slow[r * rb..(r + 1) * rb]);
                        Err(problem(
                            "E_DECODER_MISMATCH",
                            "fast and oracle decoders disagree".to_owned(),
                            row.map(|r| r as u64),
                        ))
                    }
                    Ok(_) => Ok(()),
                },
                Ok(_) => Ok(()),
            };
            match outcome {
                Ok(()) => {
                    result.chunks_ok += 1;
                    result.rows_ok += e.chunks[ci].row_count as u64;
                }
                Err(p) => result.problems.push(p),
            }
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    Ok(result)
}

/// Runs `ibp verify`: one line per problem on stderr, a summary on stdout (or JSON); exit 2 when
/// anything is damaged.
pub fn run(args: &VerifyArgs, ui: Ui, limits: Limits) -> CliResult<()> {
    let r = check(&args.input, args.oracle, ui, limits)?;
    for p in &r.problems {
        let row = p.row.map(|r| format!(" row {r}")).unwrap_or_default();
        eprintln!(
            "error: {}: {}: entry '{}' chunk {}{row}: {}",
            args.input.display(),
            p.code,
            p.entry,
            p.chunk,
            p.detail
        );
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&r).expect("report serialises"));
    } else if r.is_ok() {
        println!(
            "{}: OK: {} entries, {} chunks, {} rows verified ({})",
            args.input.display(),
            r.entries,
            r.chunks,
            r.rows_ok,
            r.decoders.join(" + ")
        );
    } else {
        println!(
            "{}: DAMAGED: {} of {} chunks damaged ({} rows verified)",
            args.input.display(),
            r.problems.len(),
            r.chunks,
            r.rows_ok
        );
    }
    if r.is_ok() {
        Ok(())
    } else {
        // Already reported line by line; the caller prints nothing more for this error.
        Err(CliError {
            kind: ErrorKind::BadInput,
            path: Some(args.input.clone()),
            code: "E_DAMAGED",
            message: format!("{} damaged chunks", r.problems.len()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_rows_in_details() {
        assert_eq!(row_in_detail("entry \"w\" chunk 3: row 17: bad padding"), Some(17));
        assert_eq!(row_in_detail("payload CRC 0x1 != 0x2"), None);
    }
}
