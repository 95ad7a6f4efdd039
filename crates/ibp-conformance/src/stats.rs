//! Counts over the manifest: vectors per outcome and error code, spec clauses covered.

use crate::manifest::{Manifest, Outcome};
use std::collections::{BTreeMap, BTreeSet};

/// Section numbers of the spec: headings (`## 6.`, `### 5.1.`) and numbered paragraphs (`2.3.`).
pub fn spec_clauses(spec: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in spec.lines() {
        let text = line.trim_start_matches('#').trim_start();
        let number: String = text.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
        if number.starts_with(|c: char| c.is_ascii_digit())
            && number.ends_with('.')
            && text[number.len()..].starts_with(' ')
        {
            out.insert(number.trim_end_matches('.').to_owned());
        }
    }
    out
}

/// What [`stats`] counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stats {
    /// Vectors per outcome (`valid`, `invalid`, `implementation-defined`).
    pub per_outcome: BTreeMap<String, usize>,
    /// Invalid vectors per error code.
    pub per_error: BTreeMap<String, usize>,
    /// Vectors citing each clause.
    pub per_clause: BTreeMap<String, usize>,
    /// Clauses of the spec no vector cites.
    pub uncited: Vec<String>,
    /// Bytes of all vector files.
    pub total_bytes: u64,
}

/// Counts over `manifest`, with the clauses of `spec_text` for coverage.
pub fn stats(manifest: &Manifest, spec_text: &str) -> Stats {
    let mut s = Stats {
        per_outcome: BTreeMap::new(),
        per_error: BTreeMap::new(),
        per_clause: BTreeMap::new(),
        uncited: Vec::new(),
        total_bytes: 0,
    };
    for v in &manifest.vectors {
        let outcome = match v.outcome {
            Outcome::Valid => "valid",
            Outcome::Invalid => "invalid",
            Outcome::ImplementationDefined => "implementation-defined",
        };
        *s.per_outcome.entry(outcome.to_owned()).or_default() += 1;
        if let Some(e) = &v.error {
            *s.per_error.entry(e.clone()).or_default() += 1;
        }
        for c in &v.clauses {
            *s.per_clause.entry(c.clone()).or_default() += 1;
        }
        s.total_bytes += v.file_len;
    }
    s.uncited = spec_clauses(spec_text)
        .into_iter()
        .filter(|c| !s.per_clause.contains_key(c))
        .collect();
    s
}
