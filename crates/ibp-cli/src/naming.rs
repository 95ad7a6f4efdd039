//! Entry names and how they map back to files.
//!
//! * A single `.npy` file becomes one entry named after the file's stem (`weights.npy` ->
//!   `weights`).
//! * A single safetensors file becomes one entry per tensor, named as the tensor.
//! * A folder becomes one entry per `.npy` file, named by its path relative to the folder
//!   (`sub/a.npy`), and one entry per tensor of each safetensors file, named
//!   `<relative path>:<tensor name>` (`sub/model.safetensors:encoder.weight`). Paths use `/`.
//!
//! `decompress` recognises the folder form ([`FolderEntry::parse`]) and rebuilds the folder.

use std::path::{Component, Path, PathBuf};

/// Separator between a safetensors file's relative path and a tensor name in folder entries.
pub const TENSOR_SEPARATOR: char = ':';

const ST_MARK: &str = ".safetensors:";

/// Where a folder-form entry goes back to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderEntry {
    /// Relative path of the file (`/`-separated), ending in `.npy` or `.safetensors`.
    pub file: String,
    /// The tensor name inside a safetensors file; `None` for a `.npy` file.
    pub tensor: Option<String>,
}

impl FolderEntry {
    /// Entry name of a `.npy` file at `rel` in a folder.
    pub fn npy_name(rel: &str) -> String {
        rel.to_owned()
    }

    /// Entry name of tensor `tensor` of the safetensors file at `rel` in a folder.
    pub fn safetensors_name(rel: &str, tensor: &str) -> String {
        format!("{rel}{TENSOR_SEPARATOR}{tensor}")
    }

    /// Reads an entry name in folder form: `path.npy` or `path.safetensors:tensor` (split at the
    /// first `.safetensors:`). Other names are `None`.
    pub fn parse(name: &str) -> Option<FolderEntry> {
        if let Some(i) = name.find(ST_MARK) {
            let split = i + ST_MARK.len() - 1;
            let tensor = &name[split + 1..];
            if tensor.is_empty() {
                return None;
            }
            return Some(FolderEntry {
                file: name[..split].to_owned(),
                tensor: Some(tensor.to_owned()),
            });
        }
        if name.ends_with(".npy") && name.len() > 4 {
            return Some(FolderEntry {
                file: name.to_owned(),
                tensor: None,
            });
        }
        None
    }
}

/// A `/`-separated relative path from an (untrusted) entry name, made safe to join below an
/// output folder: no absolute paths, no `..`, `.` or empty components, no backslashes or NULs.
pub fn safe_relative_path(rel: &str) -> Result<PathBuf, String> {
    if rel.is_empty() || rel.contains(['\\', '\0']) || rel.starts_with('/') {
        return Err(format!("entry path '{rel}' is not a safe relative path"));
    }
    let mut out = PathBuf::new();
    for part in rel.split('/') {
        let c = Path::new(part).components().next();
        match c {
            Some(Component::Normal(n)) if n == part => out.push(part),
            _ => return Err(format!("entry path '{rel}' is not a safe relative path")),
        }
    }
    Ok(out)
}

/// The `/`-separated form of `path` relative to `root`, `None` if not UTF-8.
pub fn relative_name(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
    Some(parts?.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_names_round_trip() {
        let n = FolderEntry::safetensors_name("sub/m.safetensors", "dense/kernel:0");
        assert_eq!(
            FolderEntry::parse(&n),
            Some(FolderEntry {
                file: "sub/m.safetensors".into(),
                tensor: Some("dense/kernel:0".into())
            })
        );
        assert_eq!(
            FolderEntry::parse("a/b.npy"),
            Some(FolderEntry {
                file: "a/b.npy".into(),
                tensor: None
            })
        );
        assert_eq!(FolderEntry::parse("weights"), None);
        assert_eq!(FolderEntry::parse("m.safetensors:"), None);
        assert_eq!(FolderEntry::parse(".npy"), None);
    }

    #[test]
    fn unsafe_paths_are_refused() {
        for bad in [
            "",
            "/etc/passwd",
            "../x.npy",
            "a/../../x.npy",
            "a//b.npy",
            "./a.npy",
            "a\\b.npy",
            "a/./b.npy",
            "a/",
        ] {
            assert!(safe_relative_path(bad).is_err(), "{bad}");
        }
        assert_eq!(safe_relative_path("a/b.npy").unwrap(), Path::new("a").join("b.npy"));
    }
}
