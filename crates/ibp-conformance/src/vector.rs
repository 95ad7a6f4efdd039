//! A generated vector before it is written out: its bytes and what a decoder must make of them.

use crate::build::{EntrySpec, FileSpec};
use crate::manifest::OptionsRecord;
use ibp_format::{Dtype, ErrorCode};

/// One decoded entry a valid vector must produce.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedEntry {
    /// Name.
    pub name: String,
    /// Dtype.
    pub dtype: Dtype,
    /// Shape.
    pub shape: Vec<u64>,
    /// Bytes per row.
    pub row_bytes: u64,
    /// The decoded bytes.
    pub data: Vec<u8>,
}

impl DecodedEntry {
    /// The entry a [`EntrySpec`] describes.
    pub fn from_spec(e: &EntrySpec) -> Self {
        DecodedEntry {
            name: String::from_utf8(e.name.clone()).expect("valid vectors have UTF-8 names"),
            dtype: e.dtype,
            shape: e.shape.clone(),
            row_bytes: e.row_bytes,
            data: e.data.clone(),
        }
    }

    /// Rows.
    pub fn row_count(&self) -> u64 {
        self.data.len() as u64 / self.row_bytes
    }
}

/// What a vector tests.
#[derive(Debug, Clone, PartialEq)]
pub enum Expectation {
    /// Decodes to these entries; `options` re-encode them; `reference_encoder` when the file is
    /// the reference encoder's own output for those options.
    Valid {
        /// Entries in directory order.
        entries: Vec<DecodedEntry>,
        /// Options that re-encode the entries.
        options: OptionsRecord,
        /// Whether the file is `encode_to_vec`'s output.
        reference_encoder: bool,
    },
    /// Rejected with `error` because of `defect`.
    Invalid {
        /// The code spec 11.1's order names.
        error: ErrorCode,
        /// The one defect.
        defect: String,
    },
}

/// A generated vector.
#[derive(Debug, Clone, PartialEq)]
pub struct Vector {
    /// Stable id (`v-NNNN` or `x-NNNN`), assigned by hand and never reused.
    pub id: &'static str,
    /// What it is.
    pub description: String,
    /// Spec clauses exercised.
    pub clauses: Vec<&'static str>,
    /// The file.
    pub bytes: Vec<u8>,
    /// The expected result.
    pub expect: Expectation,
}

/// Options describing a hand-built file: the first chunk's word width, alignment and group count
/// where all chunks agree (word width only if it divides every entry's rows), its row count as
/// `chunk_rows`, exact threshold.
pub fn options_for(spec: &FileSpec) -> OptionsRecord {
    let chunks: Vec<_> = spec.entries.iter().flat_map(|e| e.chunks.iter()).collect();
    let first = chunks.first();
    let same_word = first.is_some_and(|(_, c)| chunks.iter().all(|(_, d)| d.word == c.word));
    let word_width = first
        .filter(|_| same_word)
        .map(|(_, c)| c.word)
        .filter(|w| spec.entries.iter().all(|e| w.divides(e.row_bytes)));
    OptionsRecord {
        word_width: word_width.map(|w| w.bits()),
        threshold: Some(1.0),
        sample_fraction: None,
        groups: first.map_or(1, |(_, c)| c.groups.max(1)),
        align_log2: first.map_or(0, |(_, c)| c.align_log2),
        chunk_rows: first.map(|(r, _)| *r),
        minor_version: spec.header.minor,
        optional_features: spec.header.optional,
        transfer_cost: None,
        prefer_wide_words: None,
        fewer_runs_within: None,
    }
}

/// A valid vector built by the spec-level writer from `spec`.
pub fn valid_from_spec(id: &'static str, description: &str, clauses: &[&'static str], spec: &FileSpec) -> Vector {
    let built = crate::build::build_file(spec);
    Vector {
        id,
        description: description.to_owned(),
        clauses: clauses.to_vec(),
        bytes: built.bytes,
        expect: Expectation::Valid {
            entries: spec.entries.iter().map(DecodedEntry::from_spec).collect(),
            options: options_for(spec),
            reference_encoder: false,
        },
    }
}

/// An invalid vector.
///
/// Every invalid vector also cites 11.1 (its code is the first failure in that order) and 11.2 (the
/// code); vectors about a CRC also cite 1.7 and 9.1.
pub fn invalid(
    id: &'static str,
    description: &str,
    clauses: &[&'static str],
    bytes: Vec<u8>,
    error: ErrorCode,
    defect: &str,
) -> Vector {
    let mut clauses = clauses.to_vec();
    let crc = matches!(
        error,
        ErrorCode::HeaderCrc
            | ErrorCode::FooterCrc
            | ErrorCode::DirectoryCrc
            | ErrorCode::ChunkCrc
            | ErrorCode::PayloadCrc
    );
    let extra: &[&'static str] = if crc {
        &["1.7", "9.1", "11.1", "11.2"]
    } else {
        &["11.1", "11.2"]
    };
    for c in extra {
        if !clauses.contains(c) {
            clauses.push(c);
        }
    }
    Vector {
        id,
        description: description.to_owned(),
        clauses,
        bytes,
        expect: Expectation::Invalid {
            error,
            defect: defect.to_owned(),
        },
    }
}
