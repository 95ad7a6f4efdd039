//! Runs vectors through a decoder and compares the result with the manifest.

use crate::generate::{crc32_hex, sha256_hex};
use crate::manifest::{Manifest, Outcome, VectorRecord};
use ibp_codec::{ContainerReader, DecoderKind};
use ibp_format::{EntryInfo, ErrorCode, FormatError};
use std::path::Path;

/// What a decoder made of a file: every entry with its bytes, or the first error.
pub type Decoded = Result<Vec<(EntryInfo, Vec<u8>)>, FormatError>;

/// Full validation and decode with the CPU decoder `kind` (spec 11.1, first error).
pub fn decode_cpu(bytes: &[u8], kind: DecoderKind) -> Decoded {
    let mut r = ContainerReader::open(std::io::Cursor::new(bytes))?;
    let data = r.decode_all(kind)?;
    Ok(r.entries().iter().cloned().zip(data).collect())
}

/// Reads and parses `manifest.json` under `root` (the `conformance/` folder).
pub fn load_manifest(root: &Path) -> Result<Manifest, String> {
    let path = root.join("manifest.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Reads a vector's file and checks it against the manifest's length and SHA-256.
pub fn load_vector(root: &Path, rec: &VectorRecord) -> Result<Vec<u8>, String> {
    let path = root.join(&rec.file);
    let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.len() as u64 != rec.file_len || sha256_hex(&bytes) != rec.file_sha256 {
        return Err(format!(
            "{}: file differs from the manifest (length or SHA-256)",
            rec.file
        ));
    }
    Ok(bytes)
}

/// A short form of a result for tables: `ok` or the error code.
pub fn summary(d: &Decoded) -> String {
    match d {
        Ok(_) => "ok".to_owned(),
        Err(e) => e.code.as_str().to_owned(),
    }
}

/// Checks a decoder's result against the manifest record; `Err` explains the first mismatch.
pub fn check(root: &Path, rec: &VectorRecord, got: &Decoded) -> Result<(), String> {
    match rec.outcome {
        Outcome::Valid => check_valid(root, rec, got),
        Outcome::Invalid => check_error(rec, got),
        Outcome::ImplementationDefined => check_valid(root, rec, got).or_else(|_| check_error(rec, got)),
    }
}

fn check_error(rec: &VectorRecord, got: &Decoded) -> Result<(), String> {
    let want = rec
        .error
        .as_deref()
        .ok_or("manifest: invalid vector without an error code")?;
    ErrorCode::from_name(want).ok_or_else(|| format!("manifest: unknown error code {want}"))?;
    match got {
        Ok(_) => Err(format!("decoded, but the vector must be rejected with {want}")),
        Err(e) if e.code.as_str() == want => Ok(()),
        Err(e) => Err(format!("rejected with {e}, expected {want}")),
    }
}

fn check_valid(root: &Path, rec: &VectorRecord, got: &Decoded) -> Result<(), String> {
    let want = rec.entries.as_ref().ok_or("manifest: valid vector without entries")?;
    let got = got
        .as_ref()
        .map_err(|e| format!("rejected with {e}, expected a valid decode"))?;
    if got.len() != want.len() {
        return Err(format!("{} entries decoded, manifest lists {}", got.len(), want.len()));
    }
    for (k, ((info, data), w)) in got.iter().zip(want).enumerate() {
        let fields = (
            info.name.as_str(),
            info.dtype.name(),
            &info.shape,
            info.row_count,
            info.row_bytes,
        );
        let wanted = (w.name.as_str(), w.dtype.as_str(), &w.shape, w.row_count, w.row_bytes);
        if fields != wanted {
            return Err(format!("entry {k}: decoded {fields:?}, manifest {wanted:?}"));
        }
        if data.len() as u64 != w.decoded_len || sha256_hex(data) != w.sha256 || crc32_hex(data) != w.crc32 {
            return Err(format!(
                "entry {k} ({}): decoded bytes differ from the manifest's length/CRC-32/SHA-256",
                w.name
            ));
        }
        if let Some(raw) = &w.raw_file {
            let expected = std::fs::read(root.join(raw)).map_err(|e| format!("{raw}: {e}"))?;
            if &expected != data {
                return Err(format!("entry {k}: decoded bytes differ from {raw}"));
            }
        }
    }
    Ok(())
}
