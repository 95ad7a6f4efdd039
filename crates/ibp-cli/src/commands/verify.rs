//! `ibp verify`: checks every CRC and decodes every row, continuing past damage, and reports each
//! damaged chunk with its entry, chunk, row (when known) and error code. With `--gpu` every chunk
//! the CPU decodes is decoded on the GPU as well and must come out byte for byte the same.

use crate::cli::VerifyArgs;
use crate::commands::open_container;
use crate::error::{CliError, CliResult, ErrorKind};
use crate::metadata::{self, metadata_entries};
use crate::progress::Ui;
use ibp_codec::DecoderKind;
use ibp_codec::{ContainerReader, Limits};
use serde::Serialize;
use std::fs::File;
use std::io::BufReader;
use std::path::Path;

mod gpu_check;
pub use gpu_check::GpuCheck;

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
    /// The spec's error code (`E_PAYLOAD_CRC`, ...), `E_DECODER_MISMATCH`, or `E_METADATA` (a
    /// metadata entry whose text is not a JSON object of strings; its chunks decode).
    pub code: String,
    /// What is wrong.
    pub detail: String,
}

/// What `verify` found.
#[derive(Debug, Clone, Serialize)]
pub struct VerifyResult {
    /// The file checked.
    pub file: String,
    /// Decoders used (`fast`, `oracle`, `gpu (DEVICE NAME, payload in device|host memory)`).
    pub decoders: Vec<String>,
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

/// What a second decoder says about data it rejects: the spec's error code and the detail.
pub type DataError = (String, String);

/// The reader `verify` decodes with.
pub type Reader = ContainerReader<BufReader<File>>;

/// A second decoder whose bytes `verify` checks against the CPU decoder's: the GPU for `--gpu`
/// ([`GpuCheck`]). Data it rejects comes back as `Ok(Err(..))`; a failure of the decoder itself
/// (no GPU, a CUDA error) as `Err`, which stops `verify`.
pub trait SecondDecoder {
    /// How the report names it.
    fn label(&self) -> String;
    /// Takes entry `entry` of `reader` (payload CRCs checked) for the chunk decodes that follow.
    fn load_entry(&mut self, reader: &mut Reader, entry: usize) -> CliResult<Result<(), DataError>>;
    /// Decodes chunk `chunk` (`bytes` bytes of rows) of the entry loaded last.
    fn decode_chunk(&mut self, chunk: usize, bytes: usize) -> CliResult<Result<Vec<u8>, DataError>>;
}

/// The first row where two decodes of a chunk differ (rows of `row_bytes` bytes; a length
/// difference counts from the shorter one's end).
fn first_differing_row(a: &[u8], b: &[u8], row_bytes: usize) -> Option<u64> {
    let row_bytes = row_bytes.max(1);
    a.chunks(row_bytes)
        .zip(b.chunks(row_bytes))
        .position(|(x, y)| x != y)
        .or_else(|| (a.len() != b.len()).then(|| a.len().min(b.len()) / row_bytes))
        .map(|r| r as u64)
}

/// Checks the whole file. Header, footer or directory damage is an error (nothing else can be
/// located without them); chunk damage is collected. With `second` (the GPU for `--gpu`), every
/// chunk the CPU decodes is decoded by it too, and a difference (or a rejection of data the CPU
/// accepts) is an `E_DECODER_MISMATCH` problem.
pub fn check(
    path: &Path,
    oracle: bool,
    mut second: Option<&mut dyn SecondDecoder>,
    ui: Ui,
    limits: Limits,
) -> CliResult<VerifyResult> {
    let mut reader = open_container(path, limits)?;
    let entries = reader.entries().to_vec();
    let total: u64 = entries.iter().map(|e| e.chunks.len() as u64).sum();
    let bar = ui.items_bar(total, "verify");
    let mut decoders = vec!["fast".to_owned()];
    if oracle {
        decoders.push("oracle".to_owned());
    }
    decoders.extend(second.as_ref().map(|d| d.label()));
    let mut result = VerifyResult {
        file: path.display().to_string(),
        decoders,
        entries: entries.len(),
        chunks: total,
        chunks_ok: 0,
        rows_ok: 0,
        problems: Vec::new(),
    };
    for (ei, e) in entries.iter().enumerate() {
        // The second decoder takes the entry whole; where it rejects it, the CPU's checks say
        // whether the entry is damaged (then nothing more to say) or the two disagree (below).
        let loaded = match second.as_deref_mut() {
            Some(d) => Some(d.load_entry(&mut reader, ei)?),
            None => None,
        };
        let problems_before = result.problems.len();
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
                    Ok(slow) if slow != fast => Err(problem(
                        "E_DECODER_MISMATCH",
                        "fast and oracle decoders disagree".to_owned(),
                        first_differing_row(&fast, &slow, e.row_bytes as usize),
                    )),
                    Ok(_) => Ok(fast),
                },
                Ok(fast) => Ok(fast),
            };
            // The second decoder's bytes for a chunk the CPU decodes.
            let outcome = match (outcome, second.as_deref_mut(), &loaded) {
                (Ok(fast), Some(d), Some(Ok(()))) => match d.decode_chunk(ci, fast.len())? {
                    Err((code, detail)) => Err(problem(
                        "E_DECODER_MISMATCH",
                        format!(
                            "the {} decoder fails a chunk the CPU decodes: {code}: {detail}",
                            d.label()
                        ),
                        // (It names the entry's row.)
                        row_in_detail(&detail).and_then(|r| r.checked_sub(chunk_start)),
                    )),
                    Ok(got) if got != fast => Err(problem(
                        "E_DECODER_MISMATCH",
                        format!("the {} and CPU decoders disagree", d.label()),
                        first_differing_row(&got, &fast, e.row_bytes as usize),
                    )),
                    Ok(_) => Ok(()),
                },
                (outcome, _, _) => outcome.map(drop),
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
        if let (Some(Err((code, detail))), Some(d)) = (&loaded, second.as_deref()) {
            if result.problems.len() == problems_before {
                result.problems.push(Problem {
                    entry: e.name.clone(),
                    entry_index: ei,
                    chunk: 0,
                    row: None,
                    code: "E_DECODER_MISMATCH".to_owned(),
                    detail: format!(
                        "the {} decoder rejects an entry the CPU decodes: {code}: {detail}",
                        d.label()
                    ),
                });
            }
        }
    }
    // Metadata entries (spec 2.7) that decode: their text must be a JSON object of strings.
    for m in metadata_entries(reader.header(), &entries) {
        if result.problems.iter().any(|p| p.entry_index == m.index) {
            continue;
        }
        if let Ok(Err(detail)) = metadata::decode(&mut reader, m.index, DecoderKind::Fast) {
            result.problems.push(Problem {
                entry: entries[m.index].name.clone(),
                entry_index: m.index,
                chunk: 0,
                row: None,
                code: metadata::E_METADATA.to_owned(),
                detail,
            });
        }
    }
    bar.finish_and_clear();
    Ok(result)
}

/// Runs `ibp verify`: one line per problem on stderr, a summary on stdout (or JSON); exit 2 when
/// anything is damaged.
pub fn run(args: &VerifyArgs, ui: Ui, limits: Limits) -> CliResult<()> {
    let mut gpu = if args.gpu {
        Some(GpuCheck::open(args.device, args.gpu_payload)?)
    } else {
        None
    };
    let second = gpu.as_mut().map(|g| g as &mut dyn SecondDecoder);
    let r = check(&args.input, args.oracle, second, ui, limits)?;
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

    /// A second decoder made of the CPU decoder's bytes, with the faults a test asks for.
    #[derive(Default)]
    struct Stand {
        chunks: Vec<Vec<u8>>,
        entry: usize,
        /// Flip this byte of (entry, chunk).
        flip: Option<(usize, usize, usize)>,
        /// Reject this entry when loading it.
        reject_entry: Option<usize>,
        /// Fail this (entry, chunk) with a data error naming entry row `row`.
        fail_chunk: Option<(usize, usize, u64)>,
        /// Fail every decode as a broken device would.
        broken: bool,
    }

    impl SecondDecoder for Stand {
        fn label(&self) -> String {
            "stand-in".into()
        }

        fn load_entry(&mut self, reader: &mut Reader, entry: usize) -> CliResult<Result<(), DataError>> {
            self.entry = entry;
            if self.reject_entry == Some(entry) {
                return Ok(Err(("E_LAYOUT".into(), "no such layout here".into())));
            }
            let chunks = reader.entries()[entry].chunks.len();
            self.chunks = (0..chunks)
                .map(|c| reader.decode_chunk(entry, c, DecoderKind::Oracle).unwrap_or_default())
                .collect();
            Ok(Ok(()))
        }

        fn decode_chunk(&mut self, chunk: usize, bytes: usize) -> CliResult<Result<Vec<u8>, DataError>> {
            if self.broken {
                return Err(CliError::gpu(false, "the device fell over"));
            }
            if let Some((e, c, row)) = self.fail_chunk {
                if (e, c) == (self.entry, chunk) {
                    return Ok(Err(("E_PADDING".into(), format!("row {row} (request 0): padding"))));
                }
            }
            let mut got = self.chunks[chunk].clone();
            assert_eq!(got.len(), bytes, "the chunk's size is asked for");
            if let Some((e, c, byte)) = self.flip {
                if (e, c) == (self.entry, chunk) {
                    got[byte] ^= 4;
                }
            }
            Ok(Ok(got))
        }
    }

    /// A file of two entries: "a" (120 rows of 40 bytes in chunks of 50 rows) and "b" (30 rows).
    fn two_entries(dir: &Path) -> std::path::PathBuf {
        let a: Vec<u8> = (0..120u32 * 10)
            .flat_map(|i| ((i % 37) as f32 * 0.25).to_le_bytes())
            .collect();
        let b: Vec<u8> = (0..30u32 * 4).flat_map(|i| (i as f32).to_le_bytes()).collect();
        let opts = ibp_codec::EncodeOptions {
            chunk_rows: Some(50),
            ..Default::default()
        };
        let bytes = ibp_codec::encode_to_vec(
            &[
                ("a", ibp_format::Dtype::F32, &[120, 10], 40, &a),
                ("b", ibp_format::Dtype::F32, &[30, 4], 16, &b),
            ],
            &opts,
        )
        .unwrap();
        let path = dir.join("two.ibp");
        std::fs::write(&path, bytes).unwrap();
        path
    }

    fn verify_with(path: &Path, stand: &mut Stand) -> CliResult<VerifyResult> {
        check(
            path,
            false,
            Some(stand as &mut dyn SecondDecoder),
            Ui { quiet: true },
            Limits::default(),
        )
    }

    #[test]
    fn a_second_decoder_that_agrees_passes() {
        let dir = tempfile::tempdir().unwrap();
        let path = two_entries(dir.path());
        let r = verify_with(&path, &mut Stand::default()).unwrap();
        assert!(r.is_ok(), "{:?}", r.problems);
        assert_eq!((r.chunks, r.chunks_ok, r.rows_ok), (4, 4, 150));
        assert_eq!(r.decoders, ["fast", "stand-in"]);
    }

    #[test]
    fn second_decoder_disagreements_are_located() {
        let dir = tempfile::tempdir().unwrap();
        let path = two_entries(dir.path());
        // A byte of chunk 1's row 3 (entry row 53) differs.
        let mut stand = Stand {
            flip: Some((0, 1, 3 * 40 + 7)),
            ..Default::default()
        };
        let r = verify_with(&path, &mut stand).unwrap();
        assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
        let p = &r.problems[0];
        assert_eq!(
            (p.code.as_str(), p.entry.as_str(), p.chunk, p.row),
            ("E_DECODER_MISMATCH", "a", 1, Some(53))
        );
        assert!(p.detail.contains("stand-in and CPU decoders disagree"), "{}", p.detail);
        assert_eq!((r.chunks_ok, r.rows_ok), (3, 100));
        // A data error on a chunk the CPU decodes names the entry's row it gives.
        let mut stand = Stand {
            fail_chunk: Some((0, 2, 117)),
            ..Default::default()
        };
        let r = verify_with(&path, &mut stand).unwrap();
        assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
        let p = &r.problems[0];
        assert_eq!((p.code.as_str(), p.chunk, p.row), ("E_DECODER_MISMATCH", 2, Some(117)));
        assert!(
            p.detail.contains("fails a chunk the CPU decodes: E_PADDING"),
            "{}",
            p.detail
        );
        // An entry it rejects while the CPU decodes every chunk: one problem for the entry.
        let mut stand = Stand {
            reject_entry: Some(1),
            ..Default::default()
        };
        let r = verify_with(&path, &mut stand).unwrap();
        assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
        let p = &r.problems[0];
        assert_eq!(
            (p.code.as_str(), p.entry.as_str(), p.row),
            ("E_DECODER_MISMATCH", "b", None)
        );
        assert!(
            p.detail.contains("rejects an entry the CPU decodes: E_LAYOUT"),
            "{}",
            p.detail
        );
        // Its own failure stops verify with that error.
        let mut stand = Stand {
            broken: true,
            ..Default::default()
        };
        let err = verify_with(&path, &mut stand).unwrap_err();
        assert_eq!((err.kind, err.code), (ErrorKind::Gpu, "E_GPU"));
    }

    #[test]
    fn finds_the_first_differing_row() {
        let a = [0u8; 12];
        let mut b = a;
        assert_eq!(first_differing_row(&a, &b, 4), None);
        b[9] = 1;
        assert_eq!(first_differing_row(&a, &b, 4), Some(2));
        b[4] = 1;
        assert_eq!(first_differing_row(&a, &b, 4), Some(1));
        assert_eq!(first_differing_row(&a, &a[..8], 4), Some(2));
    }
}
