//! Turns the vectors into the files of `conformance/`: `vectors/<id>.ibp`, `expected/<id>.<k>.bin`
//! (decoded bytes of small entries) and `manifest.json`. Deterministic: the same sources give the
//! same bytes.

use crate::manifest::*;
use crate::vector::{Expectation, Vector};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;

/// The spec version the vectors test.
pub const SPEC_VERSION: &str = "1.0-draft";
/// Decoded entries up to this size also get a raw file in `expected/`.
pub const RAW_FILE_MAX: u64 = 16 * 1024;

/// Lower-case hex SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// CRC-32 (spec 1.7) as 8 lower-case hex digits.
pub fn crc32_hex(bytes: &[u8]) -> String {
    format!("{:08x}", ibp_format::crc32(bytes))
}

/// Remarks that hold for the whole set.
pub fn notes() -> Vec<String> {
    [
        "Each invalid vector carries exactly one defect; CRCs that would otherwise fail first were recomputed, so `error` is the first failure in the order of spec 11.1.",
        "Row records cannot overlap or leave gaps: a record's offset is the sum of the lengths before it (spec 5.3), so overlapping rows are not representable; overlapping, out-of-order and gapped chunks are (x-0062..x-0070).",
        "Not covered by a vector: more than 65,536 entries (E_LIMIT, checked after the directory fill rule: a vector would need over 2 MiB of entry records).",
        "Where the spec's limit table (section 10) and a field rule name different codes, the vectors follow 11.1: a name over 1024 bytes is E_NAME (7.1), group_count 257 is E_CHUNK_HEADER (5.1).",
        "Valid vectors with encoder.origin = \"spec-builder\" were hand-built to reach choices a production encoder may never make (forced raw rows, declined participation bits, wide length fields, unused groups); re-encoding their entries with encoder.options gives a different, equally valid file.",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// Ids withdrawn during the draft (never reused).
pub fn retired() -> Vec<RetiredId> {
    vec![RetiredId {
        id: "x-0081".into(),
        reason: "group_count 0 was E_CHUNK_HEADER; it became a raw chunk (spec 5.5): see v-0048, x-0112, x-0113".into(),
    }]
}

/// Every vector, valid then invalid, with `data_dir` holding the real-data sample tables.
pub fn all_vectors(data_dir: &Path) -> Vec<Vector> {
    let mut v = crate::valid::valid_vectors(data_dir);
    v.extend(crate::invalid::invalid_vectors());
    v
}

/// The files of `conformance/` (path relative to it -> bytes), manifest included.
pub fn generate(data_dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let vectors = all_vectors(data_dir);
    let mut files = BTreeMap::new();
    let mut records = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for v in &vectors {
        assert!(seen.insert(v.id), "duplicate vector id {}", v.id);
        let file = format!("vectors/{}.ibp", v.id);
        files.insert(file.clone(), v.bytes.clone());
        let mut rec = VectorRecord {
            id: v.id.to_owned(),
            file,
            file_len: v.bytes.len() as u64,
            file_sha256: sha256_hex(&v.bytes),
            description: v.description.clone(),
            clauses: v.clauses.iter().map(|c| c.to_string()).collect(),
            outcome: Outcome::Valid,
            error: None,
            defect: None,
            entries: None,
            encoder: None,
        };
        match &v.expect {
            Expectation::Valid {
                entries,
                options,
                reference_encoder,
            } => {
                assert!(v.id.starts_with("v-"), "{}: valid ids start with v-", v.id);
                let mut out = Vec::new();
                for (k, e) in entries.iter().enumerate() {
                    let raw_file = (!e.data.is_empty() && e.data.len() as u64 <= RAW_FILE_MAX).then(|| {
                        let path = format!("expected/{}.{k}.bin", v.id);
                        files.insert(path.clone(), e.data.clone());
                        path
                    });
                    out.push(ExpectedEntry {
                        name: e.name.clone(),
                        dtype: e.dtype.name().to_owned(),
                        shape: e.shape.clone(),
                        row_count: e.row_count(),
                        row_bytes: e.row_bytes,
                        decoded_len: e.data.len() as u64,
                        crc32: crc32_hex(&e.data),
                        sha256: sha256_hex(&e.data),
                        raw_file,
                    });
                }
                rec.entries = Some(out);
                rec.encoder = Some(EncoderRecord {
                    origin: if *reference_encoder {
                        "reference-encoder"
                    } else {
                        "spec-builder"
                    }
                    .to_owned(),
                    options: options.clone(),
                    reproduces_file: *reference_encoder,
                });
            }
            Expectation::Invalid { error, defect } => {
                assert!(v.id.starts_with("x-"), "{}: invalid ids start with x-", v.id);
                rec.outcome = Outcome::Invalid;
                rec.error = Some(error.as_str().to_owned());
                rec.defect = Some(defect.clone());
            }
        }
        records.push(rec);
    }
    records.sort_by(|a, b| a.id.cmp(&b.id));
    let manifest = Manifest {
        format: MANIFEST_FORMAT.to_owned(),
        manifest_version: MANIFEST_VERSION,
        spec_version: SPEC_VERSION.to_owned(),
        generator: "cargo run -p ibp-conformance -- generate (crates/ibp-conformance; SplitMix64 with fixed seeds)"
            .to_owned(),
        notes: notes(),
        vectors: records,
        retired: retired(),
    };
    for r in &manifest.retired {
        assert!(!seen.contains(r.id.as_str()), "retired id {} is used again", r.id);
    }
    let mut json = serde_json::to_string_pretty(&manifest).expect("manifest serialises");
    json.push('\n');
    files.insert("manifest.json".to_owned(), json.into_bytes());
    files
}

/// Files under `conformance/` that the generator owns (and so may replace or must match).
pub fn is_generated_path(rel: &str) -> bool {
    rel == "manifest.json" || rel.starts_with("vectors/") || rel.starts_with("expected/")
}
