//! `ibp decompress`: a `.ibp` back to `.npy`, `.safetensors` or a folder, whole or in part.
//!
//! Whole entries are decoded chunk by chunk straight into the output (memory bounded by one
//! chunk); `--rows` uses the row index to decode only the rows asked for (a gather).

use crate::atomic;
use crate::cli::{DecompressArgs, OutputKind};
use crate::commands::open_container;
use crate::error::{CliError, CliResult};
use crate::metadata::{self, metadata_entries, MetadataEntry};
use crate::naming::{safe_relative_path, FolderEntry};
use crate::progress::Ui;
use crate::sink::{BarWriter, CountingWriter};
use crate::tensor_io::{npy, safetensors};
use ibp_codec::Limits;
use ibp_codec::{ContainerReader, DecoderKind};
use ibp_format::{Dtype, EntryInfo};
use indicatif::ProgressBar;
use std::fs::File;
use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};

type Reader = ContainerReader<BufReader<File>>;

/// What a decompression wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecompressSummary {
    /// The file or folder written.
    pub output: PathBuf,
    /// Its kind.
    pub kind: OutputKind,
    /// Entries written.
    pub entries: usize,
    /// Tensor bytes written.
    pub bytes: u64,
}

/// The output kind named by a path's extension.
fn kind_of_extension(path: &Path) -> Option<OutputKind> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("npy") => Some(OutputKind::Npy),
        Some("safetensors") => Some(OutputKind::Safetensors),
        _ => None,
    }
}

/// The default output path for `input` and `kind`.
pub fn default_output(input: &Path, kind: OutputKind) -> PathBuf {
    let stem = if input.extension().and_then(|e| e.to_str()) == Some("ibp") {
        input.with_extension("")
    } else {
        input.to_path_buf()
    };
    match kind {
        OutputKind::Npy => stem.with_extension("npy"),
        OutputKind::Safetensors => stem.with_extension("safetensors"),
        OutputKind::Folder if stem == input => {
            let mut s = stem.into_os_string();
            s.push(".out");
            PathBuf::from(s)
        }
        OutputKind::Folder => stem,
    }
}

/// The output shape of a gather of `n` rows from `entry`: `[n] + shape[K..]` where `K` is the
/// smallest dimension with `product(shape[..K]) == row_count`; else `[n, elements per row]`.
pub fn gathered_shape(entry: &EntryInfo, n: u64) -> Vec<u64> {
    let mut prod = 1u64;
    for k in 0..=entry.shape.len() {
        if prod == entry.row_count {
            let mut shape = vec![n];
            shape.extend_from_slice(&entry.shape[k..]);
            return shape;
        }
        match entry.shape.get(k) {
            Some(&d) => prod = prod.saturating_mul(d),
            None => break,
        }
    }
    vec![n, entry.row_bytes / entry.dtype.size()]
}

/// Runs `ibp decompress`.
pub fn run(args: &DecompressArgs, ui: Ui, limits: Limits) -> CliResult<DecompressSummary> {
    let input = &args.input;
    let mut reader = open_container(input, limits)?;
    let entries = reader.entries().to_vec();
    // Metadata entries (spec 2.7) go into the headers of the safetensors files they belong to; they
    // are tensors only when named with --entry.
    let mut metadata = metadata_entries(reader.header(), &entries);
    let selected: Vec<usize> = if args.entry.is_empty() {
        (0..entries.len())
            .filter(|i| !metadata.iter().any(|m| m.index == *i))
            .collect()
    } else {
        args.entry
            .iter()
            .map(|name| {
                reader.entry_index(name).ok_or_else(|| {
                    let names: Vec<&str> = entries.iter().take(8).map(|e| e.name.as_str()).collect();
                    let more = if entries.len() > 8 { ", ..." } else { "" };
                    CliError::usage(format!(
                        "{}: no entry '{name}' (entries: {}{more})",
                        input.display(),
                        names.join(", ")
                    ))
                })
            })
            .collect::<CliResult<_>>()?
    };
    metadata.retain(|m| !selected.contains(&m.index));
    let file_metadata = metadata.iter().find(|m| m.scope.is_empty()).map(|m| m.index);
    let explicit = args
        .output_kind
        .or_else(|| args.output.as_deref().and_then(kind_of_extension));
    let folder_form = !selected.is_empty() && selected.iter().all(|&i| FolderEntry::parse(&entries[i].name).is_some());
    let kind = explicit.unwrap_or(if folder_form && args.rows.is_none() {
        OutputKind::Folder
    } else if selected.len() == 1 && file_metadata.is_none() {
        OutputKind::Npy
    } else {
        OutputKind::Safetensors
    });
    let output = args.output.clone().unwrap_or_else(|| default_output(input, kind));
    if output == *input {
        return Err(CliError::usage(format!("output '{}' is the input", output.display())));
    }
    let decoder = args.decoder.kind();
    // Metadata entries go where the output has their file: the whole file's (`__metadata__`) into a
    // single safetensors output, `FILE:__metadata__` into FILE of a folder output. Any other is
    // named in a note when the whole container is decompressed.
    if args.entry.is_empty() {
        for m in &metadata {
            let placed = match kind {
                OutputKind::Npy => false,
                OutputKind::Safetensors => m.scope.is_empty(),
                OutputKind::Folder => !m.scope.is_empty(),
            };
            if !placed {
                ui.note(&format!(
                    "metadata entry '{}' is not written: this output has no file it belongs to (extract it with --entry)",
                    entries[m.index].name
                ));
            }
        }
    }
    let file_metadata = match (file_metadata, kind) {
        (Some(i), OutputKind::Safetensors) => Some(metadata::read_text(&mut reader, input, i, decoder)?),
        _ => None,
    };

    if let Some(selection) = &args.rows {
        if selected.len() != 1 {
            return Err(CliError::usage(format!(
                "--rows needs exactly one entry; {} has {} (choose one with --entry)",
                input.display(),
                selected.len()
            )));
        }
        let e = &entries[selected[0]];
        let rows = selection
            .resolve(e.row_count, reader.limits().max_gather_rows)
            .map_err(|m| CliError::usage(format!("--rows: entry '{}': {m}", e.name)))?;
        let data = reader
            .gather(selected[0], &rows, decoder)
            .map_err(|err| CliError::format(input, err))?;
        let shape = gathered_shape(e, rows.len() as u64);
        let bytes = data.len() as u64;
        match kind {
            OutputKind::Npy => {
                let header = npy_header(e.dtype, &shape, &e.name)?;
                atomic::write_file(&output, args.force, |w| {
                    w.write_all(&header)
                        .and_then(|()| w.write_all(&data))
                        .map_err(|er| CliError::io(&output, "cannot write the output", &er))
                })?;
            }
            OutputKind::Safetensors => {
                let spec = safetensors::TensorSpec {
                    name: &e.name,
                    dtype: e.dtype,
                    shape: &shape,
                };
                atomic::write_file(&output, args.force, |w| {
                    safetensors::write(w, &[(spec, &data)], file_metadata.as_deref())
                        .map_err(|er| CliError::io(&output, "cannot write the output", &er))
                })?;
            }
            OutputKind::Folder => {
                return Err(CliError::usage(
                    "--rows writes one .npy or .safetensors file, not a folder",
                ))
            }
        }
        return finish(
            ui,
            DecompressSummary {
                output,
                kind,
                entries: 1,
                bytes,
            },
        );
    }

    let total: u64 = selected.iter().map(|&i| entries[i].decoded_len()).sum();
    let bar = ui.bytes_bar(total, "decompress");
    let ctx = Ctx {
        input,
        decoder,
        bar: &bar,
    };
    match kind {
        OutputKind::Npy => {
            if selected.len() != 1 {
                return Err(CliError::usage(format!(
                    "{} entries selected but a .npy file holds one; use --entry NAME or -o OUT.safetensors",
                    selected.len()
                )));
            }
            let i = selected[0];
            let header = npy_header(entries[i].dtype, &entries[i].shape, &entries[i].name)?;
            atomic::write_file(&output, args.force, |w| ctx.npy(&mut reader, i, &header, w, &output))?;
        }
        OutputKind::Safetensors => {
            atomic::write_file(&output, args.force, |w| {
                ctx.safetensors(&mut reader, &entries, &selected, file_metadata.as_deref(), w, &output)
            })?;
        }
        OutputKind::Folder => {
            let plan = folder_plan(&entries, &selected, &metadata, args.entry.is_empty())
                .map_err(|m| CliError::bad_input(input, "E_NAME", m))?;
            atomic::write_dir(&output, args.force, |dir| {
                for (rel, members) in &plan {
                    let path = dir.join(rel);
                    let shown = output.join(rel);
                    match members {
                        FolderFile::Npy(i) => {
                            let e = &entries[*i];
                            let header = npy_header(e.dtype, &e.shape, &e.name)?;
                            atomic::write_inner_file(&path, |w| ctx.npy(&mut reader, *i, &header, w, &shown))?;
                        }
                        FolderFile::Safetensors { tensors, metadata } => {
                            let tensors: Vec<(usize, &str)> = tensors.iter().map(|(i, n)| (*i, n.as_str())).collect();
                            let text = match metadata {
                                Some(m) => Some(metadata::read_text(&mut reader, input, *m, decoder)?),
                                None => None,
                            };
                            atomic::write_inner_file(&path, |w| {
                                ctx.safetensors_named(&mut reader, &entries, &tensors, text.as_deref(), w, &shown)
                            })?;
                        }
                    }
                }
                Ok(())
            })?;
        }
    }
    bar.finish_and_clear();
    finish(
        ui,
        DecompressSummary {
            output,
            kind,
            entries: selected.len(),
            bytes: total,
        },
    )
}

fn finish(ui: Ui, s: DecompressSummary) -> CliResult<DecompressSummary> {
    if !ui.quiet {
        eprintln!(
            "wrote {} ({} entries, {} tensor bytes)",
            s.output.display(),
            s.entries,
            s.bytes
        );
    }
    Ok(s)
}

fn npy_header(dtype: Dtype, shape: &[u64], name: &str) -> CliResult<Vec<u8>> {
    npy::header_bytes(dtype, shape).map_err(|_| {
        CliError::usage(format!(
            "entry '{name}' is {dtype}, which .npy cannot hold; write it as .safetensors (-o OUT.safetensors or --as safetensors)"
        ))
    })
}

/// One file of a folder output.
enum FolderFile {
    Npy(usize),
    /// Tensors (entry, tensor name) and the metadata entry of the file, if any.
    Safetensors {
        tensors: Vec<(usize, String)>,
        metadata: Option<usize>,
    },
}

/// Groups the selected entries into the files of a folder output (in order of first appearance).
/// Entries not in folder form become `<name>.npy`. A metadata entry `FILE:__metadata__` goes into
/// the header of `FILE` when the output has it, and makes `FILE` (with no tensors) when the whole
/// container is written (`all`), so that a safetensors file that held only metadata comes back.
fn folder_plan(
    entries: &[EntryInfo],
    selected: &[usize],
    metadata: &[MetadataEntry],
    all: bool,
) -> Result<Vec<(PathBuf, FolderFile)>, String> {
    let mut plan: Vec<(PathBuf, FolderFile)> = Vec::new();
    for &i in selected {
        let name = &entries[i].name;
        let fe = FolderEntry::parse(name).unwrap_or(FolderEntry {
            file: format!("{name}.npy"),
            tensor: None,
        });
        let rel = safe_relative_path(&fe.file)?;
        match (fe.tensor, plan.iter_mut().find(|(p, _)| *p == rel)) {
            (Some(t), Some((_, FolderFile::Safetensors { tensors, .. }))) => tensors.push((i, t)),
            (Some(t), None) => plan.push((
                rel,
                FolderFile::Safetensors {
                    tensors: vec![(i, t)],
                    metadata: None,
                },
            )),
            (None, None) => plan.push((rel, FolderFile::Npy(i))),
            (_, Some(_)) => return Err(format!("entry '{name}' maps to a file another entry uses")),
        }
    }
    for m in metadata.iter().filter(|m| !m.scope.is_empty()) {
        let rel = safe_relative_path(&m.scope)?;
        match plan.iter_mut().find(|(p, _)| *p == rel) {
            Some((_, FolderFile::Safetensors { metadata, .. })) => *metadata = Some(m.index),
            Some(_) => {
                return Err(format!(
                    "metadata entry '{}' maps to a file another entry uses",
                    entries[m.index].name
                ))
            }
            None if all => plan.push((
                rel,
                FolderFile::Safetensors {
                    tensors: Vec::new(),
                    metadata: Some(m.index),
                },
            )),
            None => {}
        }
    }
    Ok(plan)
}

/// Shared state of one decompression.
struct Ctx<'a> {
    input: &'a Path,
    decoder: DecoderKind,
    bar: &'a ProgressBar,
}

impl Ctx<'_> {
    /// Streams entry `i` into `w`, attributing write failures to `output`.
    fn stream<W: Write>(&self, reader: &mut Reader, i: usize, w: &mut W, output: &Path) -> CliResult<()> {
        let mut sink = BarWriter {
            inner: CountingWriter {
                inner: w,
                written: 0,
                error: None,
            },
            bar: self.bar,
        };
        let r = reader.decode_entry_to(i, self.decoder, &mut sink);
        if let Some(e) = sink.inner.error.take() {
            return Err(CliError::io(output, "cannot write the output", &e));
        }
        r.map_err(|e| CliError::format(self.input, e))
    }

    fn npy<W: Write>(&self, reader: &mut Reader, i: usize, header: &[u8], w: &mut W, output: &Path) -> CliResult<()> {
        w.write_all(header)
            .map_err(|e| CliError::io(output, "cannot write the output", &e))?;
        self.stream(reader, i, w, output)
    }

    fn safetensors<W: Write>(
        &self,
        reader: &mut Reader,
        entries: &[EntryInfo],
        selected: &[usize],
        metadata: Option<&str>,
        w: &mut W,
        output: &Path,
    ) -> CliResult<()> {
        let tensors: Vec<(usize, &str)> = selected.iter().map(|&i| (i, entries[i].name.as_str())).collect();
        self.safetensors_named(reader, entries, &tensors, metadata, w, output)
    }

    /// Writes a safetensors file of `tensors` (entry, tensor name) with `metadata` (JSON text).
    fn safetensors_named<W: Write>(
        &self,
        reader: &mut Reader,
        entries: &[EntryInfo],
        tensors: &[(usize, &str)],
        metadata: Option<&str>,
        w: &mut W,
        output: &Path,
    ) -> CliResult<()> {
        let specs: Vec<safetensors::TensorSpec<'_>> = tensors
            .iter()
            .map(|&(i, name)| safetensors::TensorSpec {
                name,
                dtype: entries[i].dtype,
                shape: &entries[i].shape,
            })
            .collect();
        let header = safetensors::header_bytes(&specs, metadata)
            .map_err(|e| CliError::bad_input(self.input, "E_NAME", e.to_string()))?;
        w.write_all(&header)
            .map_err(|e| CliError::io(output, "cannot write the output", &e))?;
        for &(i, _) in tensors {
            self.stream(reader, i, w, output)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(shape: &[u64], row_count: u64, row_bytes: u64) -> EntryInfo {
        EntryInfo {
            name: "x".into(),
            dtype: Dtype::F32,
            shape: shape.to_vec(),
            row_count,
            row_bytes,
            chunks: vec![],
        }
    }

    #[test]
    fn gathered_shapes() {
        assert_eq!(gathered_shape(&entry(&[10, 4, 3], 10, 48), 2), [2, 4, 3]);
        assert_eq!(gathered_shape(&entry(&[10, 4, 3], 40, 12), 5), [5, 3]);
        assert_eq!(gathered_shape(&entry(&[1, 10, 3], 10, 12), 5), [5, 3]);
        assert_eq!(gathered_shape(&entry(&[1536], 6, 1024), 2), [2, 256]);
        assert_eq!(gathered_shape(&entry(&[], 1, 4), 1), [1]);
        assert_eq!(gathered_shape(&entry(&[6, 5], 1, 120), 1), [1, 6, 5]);
    }

    #[test]
    fn default_outputs() {
        assert_eq!(
            default_output(Path::new("a/m.ibp"), OutputKind::Npy),
            Path::new("a/m.npy")
        );
        assert_eq!(default_output(Path::new("m.ibp"), OutputKind::Folder), Path::new("m"));
        assert_eq!(default_output(Path::new("m"), OutputKind::Folder), Path::new("m.out"));
        assert_eq!(
            default_output(Path::new("m.bin"), OutputKind::Safetensors),
            Path::new("m.safetensors")
        );
    }
}
