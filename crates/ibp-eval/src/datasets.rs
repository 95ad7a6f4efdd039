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

    /// About `max_bytes` of whole rows spread over the dataset: evenly spaced slabs of about 64 KiB
    /// (at least one row each), concatenated; the whole data when it is not larger than `max_bytes`.
    /// A plain prefix would be unrepresentative where a table starts with special rows (MiniLM's
    /// first ~1000 word pieces are `[unused]` tokens).
    pub fn spread_sample(&self, max_bytes: u64) -> Vec<u8> {
        let rb = self.entry.row_bytes;
        let rows = self.rows();
        if rows * rb <= max_bytes {
            return self.data.clone();
        }
        let slab_rows = (65_536 / rb).max(1);
        let slabs = (max_bytes / (slab_rows * rb)).max(1);
        let last_start = rows.saturating_sub(slab_rows);
        let mut out = Vec::with_capacity((slabs * slab_rows * rb) as usize);
        for i in 0..slabs {
            let start = if slabs > 1 { i * last_start / (slabs - 1) } else { 0 };
            let end = (start + slab_rows).min(rows);
            out.extend_from_slice(&self.data[(start * rb) as usize..(end * rb) as usize]);
        }
        out
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

#[cfg(test)]
mod tests {
    use super::*;

    fn dataset(rows: u64, row_bytes: u64) -> Dataset {
        let entry = ManifestEntry {
            name: "t".into(),
            path: "t.npy".into(),
            dtype: "uint8".into(),
            shape: vec![rows, row_bytes],
            row_bytes,
            committed: false,
            description: String::new(),
        };
        let data = (0..rows * row_bytes).map(|i| (i / row_bytes) as u8).collect();
        Dataset {
            entry,
            dtype: Dtype::U8,
            data,
        }
    }

    #[test]
    fn spread_sample_takes_whole_rows_from_start_to_end() {
        let ds = dataset(200_000, 16);
        let s = ds.spread_sample(1 << 20);
        assert_eq!(s.len() % 16, 0);
        assert!(s.len() <= 1 << 20 && s.len() >= (1 << 20) - 65_536);
        // first row of the first slab and last row of the data are in the sample
        assert_eq!(&s[..16], &ds.data[..16]);
        assert_eq!(&s[s.len() - 16..], &ds.data[ds.data.len() - 16..]);
    }

    #[test]
    fn spread_sample_of_small_data_is_all_of_it_and_huge_rows_give_one_row() {
        let ds = dataset(10, 16);
        assert_eq!(ds.spread_sample(1 << 20), ds.data);
        let wide = dataset(4, 100_000);
        assert_eq!(wide.spread_sample(150_000).len(), 100_000);
    }
}
