//! `ibp verify`: checks every CRC and decodes every row, continuing past damage, and reports each
//! damaged chunk with its entry, chunk, row (when known) and error code. With `--gpu` every chunk
//! the CPU decodes is decoded on the GPU as well and must come out byte for byte the same.

use crate::cli::{GpuPayloadArg, VerifyArgs};
use crate::commands::open_container;
use crate::error::{CliError, CliResult, ErrorKind};
use crate::progress::Ui;
use ibp_codec::DecoderKind;
use ibp_codec::{ContainerReader, Limits};
use ibp_gpu::{CudaSlice, CudaStream, GpuDevice, GpuEntry, GpuError, PayloadHome};
use serde::Serialize;
use std::path::Path;
use std::sync::Arc;

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

/// The GPU of `verify --gpu`: a device, a stream, and where entries' payloads go.
pub struct GpuCheck {
    device: Arc<GpuDevice>,
    stream: Arc<CudaStream>,
    home: PayloadHome,
}

/// A CUDA failure that is not about the data: exit 4.
fn gpu_failure(e: GpuError) -> CliError {
    CliError::gpu(e.is_no_gpu(), e.to_string())
}

impl GpuCheck {
    /// Opens CUDA device `ordinal` (its kernels compiled by NVRTC); `E_NO_GPU` where none can be used.
    pub fn open(ordinal: usize, payload: GpuPayloadArg) -> CliResult<GpuCheck> {
        if let Some(reason) = ibp_gpu::gpu_unavailable_reason() {
            return Err(CliError::gpu(true, format!("no GPU: {reason}")));
        }
        let device = GpuDevice::new(ordinal).map_err(gpu_failure)?;
        let stream = device.new_stream().map_err(gpu_failure)?;
        let home = match payload {
            GpuPayloadArg::Device => PayloadHome::Device,
            GpuPayloadArg::Host => PayloadHome::HostMapped,
        };
        Ok(GpuCheck { device, stream, home })
    }

    /// How the report names this decoder.
    fn label(&self) -> String {
        let memory = match self.home {
            PayloadHome::Device => "device",
            PayloadHome::HostMapped => "pinned host",
        };
        format!("gpu ({}, payload in {memory} memory)", self.device.name())
    }

    /// Loads entry `entry` (every chunk as stored): `Ok(Err(..))` when the GPU loader rejects the
    /// data, with its spec code and detail.
    fn load<R: std::io::Read + std::io::Seek>(
        &self,
        reader: &mut ContainerReader<R>,
        entry: usize,
    ) -> CliResult<Result<GpuEntry, (String, String)>> {
        match GpuEntry::from_reader(&self.device, reader, entry, self.home) {
            Ok(loaded) => Ok(Ok(loaded)),
            Err(GpuError::Format(e)) => Ok(Err((e.code.as_str().to_owned(), e.detail))),
            Err(e) => Err(gpu_failure(e)),
        }
    }

    /// Decodes chunk `chunk` of `entry` (`bytes` bytes) on the GPU into `out` (grown as needed)
    /// and copies it back: `Ok(Err(..))` when the kernels report a data error.
    fn decode_chunk(
        &self,
        entry: &GpuEntry,
        chunk: usize,
        bytes: usize,
        out: &mut Option<CudaSlice<u8>>,
    ) -> CliResult<Result<Vec<u8>, (String, String)>> {
        if out.as_ref().is_none_or(|o| o.len() < bytes) {
            let buffer = self
                .stream
                .alloc_zeros::<u8>(bytes.max(1))
                .map_err(|e| CliError::gpu(false, format!("allocating {bytes} bytes of GPU memory: {e}")))?;
            *out = Some(buffer);
        }
        let buffer = out.as_mut().expect("allocated above");
        let decoded = entry
            .decode_chunk(chunk, buffer, &self.stream)
            .and_then(|pending| pending.wait());
        match decoded {
            Ok(()) => {}
            Err(GpuError::Format(e)) => return Ok(Err((e.code.as_str().to_owned(), e.detail))),
            Err(e) => return Err(gpu_failure(e)),
        }
        let host = self
            .stream
            .clone_dtoh(&buffer.slice(..bytes))
            .map_err(|e| CliError::gpu(false, format!("copying decoded rows back: {e}")))?;
        Ok(Ok(host))
    }
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
/// located without them); chunk damage is collected. With `gpu`, every chunk the CPU decodes is
/// decoded on the GPU too, and a difference (or a GPU rejection of data the CPU accepts) is an
/// `E_DECODER_MISMATCH` problem.
pub fn check(path: &Path, oracle: bool, gpu: Option<&GpuCheck>, ui: Ui, limits: Limits) -> CliResult<VerifyResult> {
    let mut reader = open_container(path, limits)?;
    let entries = reader.entries().to_vec();
    let total: u64 = entries.iter().map(|e| e.chunks.len() as u64).sum();
    let bar = ui.items_bar(total, "verify");
    let mut decoders = vec!["fast".to_owned()];
    if oracle {
        decoders.push("oracle".to_owned());
    }
    decoders.extend(gpu.map(GpuCheck::label));
    let mut result = VerifyResult {
        file: path.display().to_string(),
        decoders,
        entries: entries.len(),
        chunks: total,
        chunks_ok: 0,
        rows_ok: 0,
        problems: Vec::new(),
    };
    let mut gpu_out = None;
    for (ei, e) in entries.iter().enumerate() {
        // The GPU loads the entry whole; where it rejects it, the CPU's checks say whether the
        // entry is damaged (then nothing more to say) or the GPU disagrees (a problem below).
        let gpu_entry = match gpu {
            Some(g) => Some(g.load(&mut reader, ei)?),
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
            // The GPU's bytes for a chunk the CPU decodes.
            let outcome = match (outcome, gpu.zip(gpu_entry.as_ref())) {
                (Ok(fast), Some((g, Ok(loaded)))) => match g.decode_chunk(loaded, ci, fast.len(), &mut gpu_out)? {
                    Err((code, detail)) => Err(problem(
                        "E_DECODER_MISMATCH",
                        format!("the GPU decoder fails a chunk the CPU decodes: {code}: {detail}"),
                        // (The GPU names the entry's row.)
                        row_in_detail(&detail).and_then(|r| r.checked_sub(chunk_start)),
                    )),
                    Ok(got) if got != fast => Err(problem(
                        "E_DECODER_MISMATCH",
                        "the GPU and CPU decoders disagree".to_owned(),
                        first_differing_row(&got, &fast, e.row_bytes as usize),
                    )),
                    Ok(_) => Ok(()),
                },
                (outcome, _) => outcome.map(drop),
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
        if let Some(Err((code, detail))) = &gpu_entry {
            if result.problems.len() == problems_before {
                result.problems.push(Problem {
                    entry: e.name.clone(),
                    entry_index: ei,
                    chunk: 0,
                    row: None,
                    code: "E_DECODER_MISMATCH".to_owned(),
                    detail: format!("the GPU loader rejects an entry the CPU decodes: {code}: {detail}"),
                });
            }
        }
    }
    bar.finish_and_clear();
    Ok(result)
}

/// Runs `ibp verify`: one line per problem on stderr, a summary on stdout (or JSON); exit 2 when
/// anything is damaged.
pub fn run(args: &VerifyArgs, ui: Ui, limits: Limits) -> CliResult<()> {
    let gpu = if args.gpu {
        Some(GpuCheck::open(args.device, args.gpu_payload)?)
    } else {
        None
    };
    let r = check(&args.input, args.oracle, gpu.as_ref(), ui, limits)?;
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
