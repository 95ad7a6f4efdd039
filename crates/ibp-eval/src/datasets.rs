//! The datasets of the evaluation: `bench/data/manifest.json` (written by `tools/datasets.py`)
//! and the `.npy` row matrices it lists.

use crate::npy;
use ibp_format::Dtype;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// One manifest record (the fields the evaluation uses).
#[derive(Debug, Clone, Deserialize)]
pub struct ManifestEntry {
    /// Dataset name, e.g. `glove-6b-50d-f32`.
    pub name: String,
    /// Path relative to the repository root.
    pub path: String,
    /// Logical dtype: `float32`, `bfloat16` (stored as `<u2` bit patterns) or `uint8`.
    pub dtype: String,
    /// Matrix shape `[rows, columns]`.
    pub shape: Vec<u64>,
    /// Bytes per row.
    pub row_bytes: u64,
    /// Whether the file is a small committed sample (those are skipped here).
    #[serde(default)]
    pub committed: bool,
    /// What the data is.
    #[serde(default)]
    pub description: String,
}

#[derive(Debug, Deserialize)]
struct Manifest {
    datasets: Vec<ManifestEntry>,
}

/// Datasets present in the manifest but left out of the evaluation, with the reason.
pub const SKIPPED: &[(&str, &str)] = &[("fashion-mnist-train", "the published figure is for the test images")];

/// A dataset loaded into memory.
#[derive(Debug, Clone)]
pub struct Dataset {
    /// Manifest record.
    pub entry: ManifestEntry,
    /// IBP dtype.
    pub dtype: Dtype,
    /// Row bytes, C order.
    pub data: Vec<u8>,
}

impl Dataset {
    /// Number of rows.
    pub fn rows(&self) -> u64 {
        self.data.len() as u64 / self.entry.row_bytes
    }

    /// The first rows holding at most `max_bytes` bytes (at least one row).
    pub fn prefix(&self, max_bytes: u64) -> &[u8] {
        let rb = self.entry.row_bytes;
        let rows = (max_bytes / rb).clamp(1, self.rows());
        &self.data[..(rows * rb) as usize]
    }
}

/// Maps the manifest's logical dtype to the IBP dtype.
pub fn dtype_of(logical: &str) -> Option<Dtype> {
    match logical {
        "float32" => Some(Dtype::F32),
        "bfloat16" => Some(Dtype::Bf16),
        "float16" => Some(Dtype::F16),
        "uint8" => Some(Dtype::U8),
        "uint16" => Some(Dtype::U16),
        _ => None,
    }
}

/// Reads `manifest.json` in `data_dir` and returns the evaluated entries, in manifest order.
pub fn manifest(data_dir: &Path) -> Result<Vec<ManifestEntry>, String> {
    let path = data_dir.join("manifest.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let m: Manifest = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(m.datasets
        .into_iter()
        .filter(|d| !d.committed && !SKIPPED.iter().any(|(n, _)| *n == d.name))
        .collect())
}

/// The `.npy` file of `entry`, looked up in `data_dir` by file name.
pub fn file_of(data_dir: &Path, entry: &ManifestEntry) -> PathBuf {
    let name = Path::new(&entry.path)
        .file_name()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(&entry.path));
    data_dir.join(name)
}

/// Loads one dataset and checks it against its manifest record.
pub fn load(data_dir: &Path, entry: &ManifestEntry) -> Result<Dataset, String> {
    let dtype = dtype_of(&entry.dtype).ok_or_else(|| format!("{}: unknown dtype {}", entry.name, entry.dtype))?;
    let arr = npy::read(&file_of(data_dir, entry)).map_err(|e| e.to_string())?;
    if arr.shape != entry.shape {
        return Err(format!(
            "{}: file shape {:?} differs from manifest {:?}",
            entry.name, arr.shape, entry.shape
        ));
    }
    let rb = entry.row_bytes;
    if rb == 0 || !(arr.data.len() as u64).is_multiple_of(rb) {
        return Err(format!(
            "{}: {} bytes are not whole rows of {rb}",
            entry.name,
            arr.data.len()
        ));
    }
    Ok(Dataset {
        entry: entry.clone(),
        dtype,
        data: arr.data,
    })
}
