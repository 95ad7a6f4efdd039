//! Collecting the tensors to compress from a `.npy` file, a safetensors file or a folder of them.
//!
//! Files are memory-mapped ([`crate::mapped`]); a tensor is a name, dtype, shape and a byte range
//! of its file, so nothing is copied until the encoder reads it.

use crate::error::{CliError, CliResult, Context};
use crate::mapped::MappedFile;
use crate::naming::{relative_name, FolderEntry};
use crate::tensor_io::{npy, safetensors};
use ibp_format::{Dtype, METADATA_NAME};
use std::ops::Range;
use std::path::{Path, PathBuf};

/// What the input path was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// A single `.npy` file.
    Npy,
    /// A single safetensors file.
    Safetensors,
    /// A folder of `.npy` and safetensors files.
    Folder,
}

/// One tensor to store.
#[derive(Debug, Clone)]
pub struct InputTensor {
    /// Entry name (see [`crate::naming`]).
    pub name: String,
    /// Index of its file in [`Inputs::files`].
    pub file: usize,
    /// Element dtype.
    pub dtype: Dtype,
    /// Shape (C order).
    pub shape: Vec<u64>,
    /// Byte range of its data in the file.
    pub range: Range<usize>,
    /// A metadata entry (spec 2.7): the JSON text of a safetensors file's `__metadata__`, stored as
    /// a `u8` vector named `__metadata__` (`FILE.safetensors:__metadata__` in a folder).
    pub metadata: bool,
}

/// Every tensor of an input path, with the mapped files that hold them.
pub struct Inputs {
    /// What the path was.
    pub kind: InputKind,
    /// The files read, with their maps.
    pub files: Vec<(PathBuf, MappedFile)>,
    /// The tensors, in entry order.
    pub tensors: Vec<InputTensor>,
    /// Things worth telling the user (skipped files).
    pub notes: Vec<String>,
}

impl Inputs {
    /// The bytes of tensor `t`.
    pub fn data(&self, t: &InputTensor) -> &[u8] {
        &self.files[t.file].1[t.range.clone()]
    }

    /// Total bytes of all tensors.
    pub fn total_bytes(&self) -> u64 {
        self.tensors.iter().map(|t| t.range.len() as u64).sum()
    }
}

/// The file kind of `path` from its extension, or from its first bytes.
fn sniff(path: &Path, bytes: &[u8]) -> InputKind {
    match path.extension().and_then(|e| e.to_str()) {
        Some("npy") => InputKind::Npy,
        Some("safetensors") => InputKind::Safetensors,
        _ if bytes.starts_with(npy::MAGIC) => InputKind::Npy,
        _ => InputKind::Safetensors,
    }
}

/// Reads the tensors of `path`: a `.npy` file, a safetensors file, or a folder (searched
/// recursively, in sorted path order, for `*.npy` and `*.safetensors`; other files are skipped).
pub fn collect(path: &Path) -> CliResult<Inputs> {
    let meta = std::fs::metadata(path).at(path, "cannot read input")?;
    let mut inputs = Inputs {
        kind: InputKind::Folder,
        files: Vec::new(),
        tensors: Vec::new(),
        notes: Vec::new(),
    };
    if meta.is_dir() {
        let mut found = Vec::new();
        let mut skipped = 0usize;
        walk(path, &mut found, &mut skipped)?;
        found.sort();
        if skipped > 0 {
            inputs.notes.push(format!(
                "{}: skipped {skipped} files that are not .npy or .safetensors",
                path.display()
            ));
        }
        if found.is_empty() {
            return Err(CliError::bad_input(
                path,
                "E_EMPTY",
                "the folder holds no .npy or .safetensors file",
            ));
        }
        for file in found {
            let rel = relative_name(path, &file)
                .ok_or_else(|| CliError::bad_input(&file, "E_NAME", "path is not valid UTF-8"))?;
            add_file(&mut inputs, &file, Some(&rel))?;
        }
    } else {
        add_file(&mut inputs, path, None)?;
        inputs.kind = match inputs.files.first() {
            Some((p, bytes)) => sniff(p, bytes),
            None => InputKind::Npy,
        };
    }
    Ok(inputs)
}

fn walk(dir: &Path, found: &mut Vec<PathBuf>, skipped: &mut usize) -> CliResult<()> {
    for entry in std::fs::read_dir(dir).at(dir, "cannot list folder")? {
        let entry = entry.at(dir, "cannot list folder")?;
        let path = entry.path();
        let ft = entry.file_type().at(&path, "cannot stat")?;
        // Symlinks to files are followed; symlinked folders are not (no cycles).
        let is_file = ft.is_file() || (ft.is_symlink() && path.is_file());
        if ft.is_dir() {
            walk(&path, found, skipped)?;
        } else if is_file && matches!(path.extension().and_then(|e| e.to_str()), Some("npy" | "safetensors")) {
            found.push(path);
        } else {
            *skipped += 1;
        }
    }
    Ok(())
}

/// Maps `path` and adds its tensors; `rel` is its folder-relative name in folder mode.
fn add_file(inputs: &mut Inputs, path: &Path, rel: Option<&str>) -> CliResult<()> {
    let map = MappedFile::open(path).at(path, "cannot open input")?;
    let index = inputs.files.len();
    match sniff(path, &map) {
        InputKind::Npy => {
            let h = npy::parse(&map).map_err(|e| CliError::tensor_file(path, "E_NPY", e))?;
            let name = match rel {
                Some(rel) => FolderEntry::npy_name(rel),
                None => path
                    .file_stem()
                    .and_then(|s| s.to_str())
                    .filter(|s| !s.is_empty())
                    .unwrap_or("tensor")
                    .to_owned(),
            };
            inputs.tensors.push(InputTensor {
                name,
                file: index,
                dtype: h.dtype,
                shape: h.shape,
                range: h.data_offset..h.data_offset + h.data_len,
                metadata: false,
            });
        }
        _ => {
            let st = safetensors::parse(&map).map_err(|e| CliError::tensor_file(path, "E_SAFETENSORS", e))?;
            if let Some(meta) = st.metadata {
                inputs.tensors.push(InputTensor {
                    name: match rel {
                        Some(rel) => FolderEntry::safetensors_name(rel, METADATA_NAME),
                        None => METADATA_NAME.to_owned(),
                    },
                    file: index,
                    dtype: Dtype::U8,
                    shape: vec![meta.text.len() as u64],
                    range: meta.text,
                    metadata: true,
                });
            }
            for t in st.tensors {
                let name = match rel {
                    Some(rel) => FolderEntry::safetensors_name(rel, &t.name),
                    None => t.name,
                };
                inputs.tensors.push(InputTensor {
                    name,
                    file: index,
                    dtype: t.dtype,
                    shape: t.shape,
                    range: t.range,
                    metadata: false,
                });
            }
        }
    }
    inputs.files.push((path.to_path_buf(), map));
    Ok(())
}
