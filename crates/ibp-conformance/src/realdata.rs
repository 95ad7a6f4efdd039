//! Real-data vectors: small slices of the committed sample tables in `data/` (see
//! `data/SOURCE.md` for provenance and licences), written by the reference encoder.

use crate::manifest::OptionsRecord;
use crate::valid::reference_vector;
use crate::vector::{DecodedEntry, Vector};
use ibp_format::Dtype;
use std::path::Path;

/// A 2-D little-endian `f32` C-order `.npy` (version 1 or 2): `(rows, cols, data bytes)`.
pub fn read_npy_f32(bytes: &[u8]) -> Option<(u64, u64, &[u8])> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return None;
    }
    let (header_len, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        _ => (u32::from_le_bytes(bytes.get(8..12)?.try_into().ok()?) as usize, 12),
    };
    let header = std::str::from_utf8(bytes.get(start..start + header_len)?).ok()?;
    if !header.contains("'descr': '<f4'") || !header.contains("'fortran_order': False") {
        return None;
    }
    let shape = header.split("'shape': (").nth(1)?.split(')').next()?;
    let dims: Vec<u64> = shape.split(',').filter_map(|s| s.trim().parse().ok()).collect();
    let [rows, cols] = dims[..] else { return None };
    let data = bytes.get(start + header_len..)?;
    (data.len() as u64 == rows * cols * 4).then_some((rows, cols, data))
}

/// The sample tables and the slice of each that becomes a vector.
struct Source {
    id: &'static str,
    file: &'static str,
    rows: u64,
    name: &'static str,
    description: &'static str,
}

const SOURCES: [Source; 2] = [
    Source {
        id: "v-0042",
        file: "glove-6b-50d-2k.npy",
        rows: 64,
        name: "glove.6B.50d[0:64]",
        description: "real data: the first 64 GloVe 6B 50d vectors (f32, 200-byte rows; PDDL-1.0), reference encoder with its default search",
    },
    Source {
        id: "v-0043",
        file: "minilm-word-emb-300.npy",
        rows: 16,
        name: "minilm.word_embeddings[1996:2012]",
        description: "real data: 16 all-MiniLM-L6-v2 word-embedding rows (f32, 1536-byte rows; Apache-2.0), reference encoder with its default search",
    },
];

/// The real-data vectors whose source table is present under `data_dir` (all of them in the
/// repository; a missing table skips its vector, and the reproduction test then reports it).
pub fn real_data_vectors(data_dir: &Path) -> Vec<Vector> {
    let mut out = Vec::new();
    for s in SOURCES {
        let Ok(bytes) = std::fs::read(data_dir.join(s.file)) else {
            continue;
        };
        let (rows, cols, data) = read_npy_f32(&bytes).unwrap_or_else(|| panic!("{}: not a 2-D <f4 .npy", s.file));
        let rows_taken = s.rows.min(rows);
        let row_bytes = cols * 4;
        let data = data[..(rows_taken * row_bytes) as usize].to_vec();
        out.push(reference_vector(
            s.id,
            s.description,
            &["2.2", "5", "6"],
            vec![DecodedEntry {
                name: s.name.into(),
                dtype: Dtype::F32,
                shape: vec![rows_taken, cols],
                row_bytes,
                data,
            }],
            OptionsRecord::default(),
        ));
    }
    out
}
