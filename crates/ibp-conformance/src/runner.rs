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

/// What an external decoder (a command following the protocol of `conformance/README.md`) made of a
/// vector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum External {
    /// Exit status 0: the decoded bytes of every entry (`<out>/0.bin`, `<out>/1.bin`, ...).
    Decoded(Vec<Vec<u8>>),
    /// Non-zero exit status: the first word of the last line of standard output.
    Rejected(String),
    /// The command could not be run or broke the protocol.
    Broken(String),
}

impl External {
    /// `ok`, the error code, or `broken`.
    pub fn summary(&self) -> String {
        match self {
            External::Decoded(_) => "ok".to_owned(),
            External::Rejected(code) => code.clone(),
            External::Broken(_) => "broken".to_owned(),
        }
    }
}

/// Runs `command` (program and arguments) with two more arguments, the vector file and an empty
/// output folder, and reads its verdict.
pub fn run_external(command: &[String], file: &Path, out_dir: &Path) -> External {
    let _ = std::fs::remove_dir_all(out_dir);
    if let Err(e) = std::fs::create_dir_all(out_dir) {
        return External::Broken(format!("{}: {e}", out_dir.display()));
    }
    let Some((program, args)) = command.split_first() else {
        return External::Broken("empty command".into());
    };
    let output = match std::process::Command::new(program)
        .args(args)
        .arg(file)
        .arg(out_dir)
        .output()
    {
        Ok(o) => o,
        Err(e) => return External::Broken(format!("{program}: {e}")),
    };
    if output.status.success() {
        let mut entries = Vec::new();
        while let Ok(bytes) = std::fs::read(out_dir.join(format!("{}.bin", entries.len()))) {
            entries.push(bytes);
        }
        External::Decoded(entries)
    } else {
        let stdout = String::from_utf8_lossy(&output.stdout);
        match stdout.lines().last().and_then(|l| l.split_whitespace().next()) {
            Some(code) => External::Rejected(code.to_owned()),
            None => External::Broken(format!("exit status {} without an error code on stdout", output.status)),
        }
    }
}

/// Checks an external decoder's verdict against the manifest record.
pub fn check_external(rec: &VectorRecord, got: &External) -> Result<(), String> {
    let valid = || -> Result<(), String> {
        let want = rec.entries.as_ref().ok_or("manifest: valid vector without entries")?;
        let External::Decoded(got) = got else {
            return Err(format!("got {}, expected a valid decode", got.summary()));
        };
        if got.len() != want.len() {
            return Err(format!(
                "{} entry files, manifest lists {} entries",
                got.len(),
                want.len()
            ));
        }
        for (k, (data, w)) in got.iter().zip(want).enumerate() {
            if data.len() as u64 != w.decoded_len || sha256_hex(data) != w.sha256 {
                return Err(format!("entry {k} ({}): bytes differ from the manifest", w.name));
            }
        }
        Ok(())
    };
    let invalid = || -> Result<(), String> {
        let want = rec
            .error
            .as_deref()
            .ok_or("manifest: invalid vector without an error code")?;
        match got {
            External::Rejected(code) if code == want => Ok(()),
            other => Err(format!("got {}, expected {want}", other.summary())),
        }
    };
    match rec.outcome {
        Outcome::Valid => valid(),
        Outcome::Invalid => invalid(),
        Outcome::ImplementationDefined => valid().or_else(|_| invalid()),
    }
}
