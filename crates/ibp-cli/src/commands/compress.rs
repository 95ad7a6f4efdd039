//! `ibp compress`: tensors in, one `.ibp` out, streamed chunk by chunk.

use crate::atomic;
use crate::cli::CompressArgs;
use crate::error::{CliError, CliResult, ErrorKind};
use crate::inputs::{self, InputKind, Inputs};
use crate::layout;
use crate::progress::Ui;
use crate::sink::CountingWriter;
use ibp_codec::{ContainerWriter, EncodeOptions};
use ibp_format::{is_metadata_name, FormatError, Header, OPTIONAL_METADATA_ENTRIES};
use std::path::{Path, PathBuf};

/// What a compression produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompressSummary {
    /// The file written.
    pub output: PathBuf,
    /// Entries stored.
    pub entries: usize,
    /// Tensor bytes read.
    pub raw_bytes: u64,
    /// Bytes of the `.ibp` file.
    pub file_bytes: u64,
}

/// The encoder options the arguments ask for.
pub fn encode_options(args: &CompressArgs) -> EncodeOptions {
    let base = if args.gpu {
        EncodeOptions::for_gpu()
    } else {
        EncodeOptions::default()
    };
    EncodeOptions {
        word_width: args.word_width.width(),
        threshold: args.threshold.0,
        sample_fraction: args.sample_fraction,
        groups: args.groups,
        align_log2: args.align.unwrap_or(base.align_log2),
        chunk_rows: args.chunk_rows,
        fewer_runs_within: args.fewer_runs_within.map_or(base.fewer_runs_within, |r| r.0),
        ..base
    }
}

/// The default output path for an input: its extension replaced by `.ibp` (a folder gets `.ibp`
/// appended).
pub fn default_output(input: &Path, kind: InputKind) -> PathBuf {
    let trimmed = input.components().as_path().to_path_buf(); // drops a trailing '/'
    match kind {
        InputKind::Folder => {
            let mut s = trimmed.into_os_string();
            s.push(".ibp");
            PathBuf::from(s)
        }
        _ => trimmed.with_extension("ibp"),
    }
}

/// Refuses an output that is one of the input files (the rename would replace the input).
fn check_not_an_input(output: &Path, inputs: &Inputs) -> CliResult<()> {
    let canon = |p: &Path| -> Option<PathBuf> {
        let parent = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        Some(parent.canonicalize().ok()?.join(p.file_name()?))
    };
    let Some(out) = canon(output) else { return Ok(()) };
    for (file, _) in &inputs.files {
        if canon(file).as_deref() == Some(out.as_path()) || file.canonicalize().ok().as_deref() == Some(out.as_path()) {
            return Err(CliError::usage(format!(
                "output '{}' is an input file; choose another output",
                output.display()
            )));
        }
    }
    Ok(())
}

/// Runs `ibp compress`.
pub fn run(args: &CompressArgs, ui: Ui) -> CliResult<CompressSummary> {
    let opts = encode_options(args);
    let inputs = inputs::collect(&args.input)?;
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| default_output(&args.input, inputs.kind));
    check_not_an_input(&output, &inputs)?;
    atomic::check_target(&output, args.force)?;
    for note in &inputs.notes {
        ui.note(note);
    }
    let header = header_for(&inputs)?;
    // Plan every entry's rows before writing anything, so layout errors come first. (A metadata
    // entry's text is one row, whatever --row-dim says: rows of text bytes share nothing to code.)
    let mut layouts = Vec::with_capacity(inputs.tensors.len());
    for t in &inputs.tensors {
        let file = &inputs.files[t.file].0;
        let row_dim = if t.metadata { Some(0) } else { args.row_dim };
        let l = layout::choose(t.dtype, &t.shape, row_dim).map_err(|m| {
            let e = CliError::bad_input(file, "E_SHAPE", format!("tensor '{}': {m}", t.name));
            // A --row-dim the tensor cannot take is the argument's fault.
            match args.row_dim {
                Some(_) => CliError {
                    kind: ErrorKind::Usage,
                    code: "E_USAGE",
                    ..e
                },
                None => e,
            }
        })?;
        if let Some(note) = &l.note {
            ui.note(&format!("{}: tensor '{}': {note}", file.display(), t.name));
        }
        opts.validate(l.row_bytes).map_err(|e| entry_error(file, &t.name, e))?;
        layouts.push(l);
    }
    let total = inputs.total_bytes();
    let bar = ui.bytes_bar(total, "compress");
    let file_bytes = atomic::write_file(&output, args.force, |w| {
        let mut counting = CountingWriter {
            inner: w,
            written: 0,
            error: None,
        };
        let result = (|| -> CliResult<()> {
            let mut writer = ContainerWriter::with_header(&mut counting, opts.clone(), header)
                .map_err(|e| CliError::format(&output, e))?;
            for (t, l) in inputs.tensors.iter().zip(&layouts) {
                let file = &inputs.files[t.file].0;
                writer
                    .begin_entry(&t.name, t.dtype, &t.shape, l.row_bytes)
                    .map_err(|e| entry_error(file, &t.name, e))?;
                let data = inputs.data(t);
                let rows_per_call = opts.rows_per_chunk(l.row_bytes) as usize;
                let step = rows_per_call.saturating_mul(l.row_bytes as usize).max(1);
                for part in data.chunks(step) {
                    writer.write_rows(part).map_err(|e| entry_error(file, &t.name, e))?;
                    bar.inc(part.len() as u64);
                }
                writer.end_entry().map_err(|e| entry_error(file, &t.name, e))?;
            }
            writer.finish().map_err(|e| CliError::format(&output, e))?;
            Ok(())
        })();
        if let Some(e) = counting.error.take() {
            return Err(CliError::io(&output, "cannot write the output", &e));
        }
        result.map(|()| counting.written)
    })?;
    bar.finish_and_clear();
    let summary = CompressSummary {
        output,
        entries: inputs.tensors.len(),
        raw_bytes: total,
        file_bytes,
    };
    if !ui.quiet {
        let saved = if total > 0 {
            100.0 * (1.0 - file_bytes as f64 / total as f64)
        } else {
            0.0
        };
        eprintln!(
            "{} -> {}: {} entries, {} -> {} bytes (ratio {:.4}, saved {saved:.2}% incl. overhead)",
            args.input.display(),
            summary.output.display(),
            summary.entries,
            total,
            file_bytes,
            if file_bytes > 0 {
                total as f64 / file_bytes as f64
            } else {
                0.0
            },
        );
    }
    Ok(summary)
}

/// The file header: optional-feature bit 0 set when a safetensors input has `__metadata__`
/// (spec 2.7). A tensor whose name would then read as metadata (`...:__metadata__`) is refused.
fn header_for(inputs: &Inputs) -> CliResult<Header> {
    if !inputs.tensors.iter().any(|t| t.metadata) {
        return Ok(Header::default());
    }
    if let Some(t) = inputs.tensors.iter().find(|t| !t.metadata && is_metadata_name(&t.name)) {
        return Err(CliError::bad_input(
            &inputs.files[t.file].0,
            "E_NAME",
            format!(
                "tensor '{}': a name ending in ':__metadata__' reads as metadata in a file that stores a safetensors __metadata__ (spec 2.7)",
                t.name
            ),
        ));
    }
    Ok(Header {
        optional_features: OPTIONAL_METADATA_ENTRIES,
        ..Header::default()
    })
}

/// Maps a writer error about an entry: I/O errors concern the output, others the input tensor.
fn entry_error(file: &Path, name: &str, e: FormatError) -> CliError {
    CliError::format(file, e.at(format_args!("tensor '{name}'")))
}
