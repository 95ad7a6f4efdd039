//! `conformance/manifest.json`: the machine-readable list of vectors (format documented in
//! `conformance/README.md`, referenced by spec section 13).

use serde::{Deserialize, Serialize};

/// The manifest's `format` string.
pub const MANIFEST_FORMAT: &str = "ibp-conformance-manifest";
/// The manifest layout version (bumped only if the JSON layout changes incompatibly).
pub const MANIFEST_VERSION: u32 = 1;

/// The whole manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Always [`MANIFEST_FORMAT`].
    pub format: String,
    /// Always [`MANIFEST_VERSION`].
    pub manifest_version: u32,
    /// The spec version the vectors test (e.g. `"1.0-draft"`).
    pub spec_version: String,
    /// How the vectors were produced.
    pub generator: String,
    /// Remarks that apply to the whole set (rules a vector cannot express, omissions).
    pub notes: Vec<String>,
    /// Every vector, sorted by id.
    pub vectors: Vec<VectorRecord>,
    /// Ids withdrawn before a release, never to be used again.
    #[serde(default)]
    pub retired: Vec<RetiredId>,
}

/// A withdrawn id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetiredId {
    /// The id.
    pub id: String,
    /// Why it was withdrawn.
    pub reason: String,
}

/// The expected result of decoding a vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Decodes to the listed entries.
    Valid,
    /// Rejected with the listed error code.
    Invalid,
    /// The spec lets a decoder either decode it to the listed entries or reject it with the listed
    /// code.
    ImplementationDefined,
}

/// One vector.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VectorRecord {
    /// Stable id, never reused: `v-NNNN` for valid vectors, `x-NNNN` for invalid ones.
    pub id: String,
    /// Path of the vector file, relative to `conformance/`.
    pub file: String,
    /// Length of the file in bytes.
    pub file_len: u64,
    /// SHA-256 of the file (lower-case hex).
    pub file_sha256: String,
    /// What the vector is.
    pub description: String,
    /// Spec clauses it exercises (section numbers of `spec/SPEC.md`).
    pub clauses: Vec<String>,
    /// Expected result.
    pub outcome: Outcome,
    /// For `invalid` (and `implementation-defined`): the error code of spec 11.2 a decoder reports.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
    /// For `invalid`: the one defect, and where it is.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub defect: Option<String>,
    /// For `valid`: the decoded entries, in directory order.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub entries: Option<Vec<ExpectedEntry>>,
    /// For `valid`: how the file was produced and the options that re-encode its contents.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub encoder: Option<EncoderRecord>,
}

/// One decoded entry of a valid vector.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExpectedEntry {
    /// Entry name.
    pub name: String,
    /// Dtype name (`"f32"`, `"bf16"`, ...).
    pub dtype: String,
    /// Shape.
    pub shape: Vec<u64>,
    /// Rows.
    pub row_count: u64,
    /// Bytes per row.
    pub row_bytes: u64,
    /// Decoded length in bytes.
    pub decoded_len: u64,
    /// CRC-32 (spec 1.7) of the decoded bytes, 8 lower-case hex digits.
    pub crc32: String,
    /// SHA-256 of the decoded bytes (lower-case hex).
    pub sha256: String,
    /// For small entries: a file (relative to `conformance/`) holding exactly the decoded bytes.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub raw_file: Option<String>,
}

/// How a valid vector was produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EncoderRecord {
    /// `"spec-builder"`: hand-built by the generator's spec-level writer (explicit masks, groups,
    /// raw rows); `"reference-encoder"`: written by `ibp_codec::encode_to_vec` with `options`.
    pub origin: String,
    /// Encoder options that re-encode the decoded entries (`ibp_codec::options::EncodeOptions`).
    pub options: OptionsRecord,
    /// Whether `encode_to_vec(entries, options)` reproduces this file byte for byte (true exactly
    /// when `origin` is `"reference-encoder"`).
    pub reproduces_file: bool,
}

/// `EncodeOptions` as JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OptionsRecord {
    /// `W` in bits (8, 16, 32, 64) or null to search.
    pub word_width: Option<u32>,
    /// Threshold or null to sweep.
    pub threshold: Option<f64>,
    /// Sample fraction or null for every row.
    pub sample_fraction: Option<f64>,
    /// Groups per chunk.
    pub groups: u32,
    /// `align_log2`.
    pub align_log2: u8,
    /// Rows per chunk or null for the default.
    pub chunk_rows: Option<u32>,
    /// Header minor version written (0 unless the vector tests a later minor).
    #[serde(default)]
    pub minor_version: u16,
    /// Header optional-feature bits written.
    #[serde(default)]
    pub optional_features: u32,
    /// `EncodeOptions::transfer_cost` as `[sector_bytes, request_bytes, request_weight]` or
    /// `[sector_bytes, request_bytes, request_weight, record_weight]` (three values: record weight
    /// 0; absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfer_cost: Option<Vec<u32>>,
    /// `EncodeOptions::prefer_wide_words` (absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefer_wide_words: Option<f64>,
    /// `EncodeOptions::fewer_runs_within` (absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fewer_runs_within: Option<f64>,
}

impl Default for OptionsRecord {
    /// The record of `EncodeOptions::default()` (every width and threshold searched, one group,
    /// `A = 1`, default chunks), written with a 1.0 header and no optional feature, as the released
    /// vectors were encoded: bytes only (`fewer_runs_within` none, which the generator must keep
    /// to reproduce them).
    fn default() -> Self {
        let o = ibp_codec::EncodeOptions::default();
        OptionsRecord {
            word_width: o.word_width.map(|w| w.bits()),
            threshold: o.threshold,
            sample_fraction: o.sample_fraction,
            groups: o.groups,
            align_log2: o.align_log2,
            chunk_rows: o.chunk_rows,
            minor_version: 0,
            optional_features: 0,
            transfer_cost: o
                .transfer_cost
                .map(|t| vec![t.sector_bytes, t.request_bytes, t.request_weight, t.record_weight]),
            prefer_wide_words: o.prefer_wide_words,
            fewer_runs_within: None,
        }
    }
}

/// `conformance/released.json`: vectors frozen by a release, id -> SHA-256 of the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Released {
    /// Explains the file.
    pub note: String,
    /// The releases so far (e.g. `"1.0"`), each with the ids it froze.
    pub releases: Vec<Release>,
    /// Every released vector: id -> SHA-256 of its file. A released file is never rewritten.
    pub vectors: std::collections::BTreeMap<String, String>,
}

/// One release.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Release {
    /// Spec version released (e.g. `"1.0"`).
    pub spec_version: String,
    /// Ids frozen by it.
    pub ids: Vec<String>,
}
