//! Metadata entries (spec 2.7): `u8` entries holding the UTF-8 text of a JSON object of strings
//! (a safetensors file's `__metadata__`), announced by optional-feature bit 0 (spec 4.3).
//!
//! This crate names them and tells them apart from tensors; what their text means (JSON) is the
//! business of the tools that read and write the source formats.

use crate::directory::EntryInfo;
use crate::header::Header;
use crate::types::Dtype;

/// Optional-feature bit 0 (spec 4.3): the file holds metadata entries (spec 2.7).
pub const OPTIONAL_METADATA_ENTRIES: u32 = 1;

/// The name of the whole file's metadata entry, and the last part of the others' (`P:__metadata__`).
pub const METADATA_NAME: &str = "__metadata__";

/// Whether `name` is a metadata entry's name (spec 2.7): `__metadata__` or `P:__metadata__`.
/// (Only a name: with bit 0 clear an entry so named is a tensor.)
pub fn is_metadata_name(name: &str) -> bool {
    metadata_scope(name).is_some()
}

/// Whose metadata an entry named `name` holds: `Some("")` for `__metadata__` (the whole file),
/// `Some(P)` for `P:__metadata__` (the entries named `P:...`), `None` if the name is not a
/// metadata entry's.
pub fn metadata_scope(name: &str) -> Option<&str> {
    if name == METADATA_NAME {
        return Some("");
    }
    name.strip_suffix(METADATA_NAME)?.strip_suffix(':')
}

impl Header {
    /// Whether optional-feature bit 0 announces metadata entries (spec 2.7, 4.3).
    pub fn has_metadata_entries(&self) -> bool {
        self.optional_features & OPTIONAL_METADATA_ENTRIES != 0
    }
}

impl EntryInfo {
    /// Whether this entry is a metadata entry of a file with `header` (bit 0 set and a metadata
    /// name). Its form (`u8`, rank 1) is checked by [`EntryInfo::metadata_form_ok`].
    pub fn is_metadata(&self, header: &Header) -> bool {
        header.has_metadata_entries() && is_metadata_name(&self.name)
    }

    /// Whether the entry has a metadata entry's dtype and rank (`u8`, rank 1; spec 2.7).
    pub fn metadata_form_ok(&self) -> bool {
        self.dtype == Dtype::U8 && self.shape.len() == 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_scopes() {
        assert_eq!(metadata_scope("__metadata__"), Some(""));
        assert_eq!(
            metadata_scope("model.safetensors:__metadata__"),
            Some("model.safetensors")
        );
        assert_eq!(metadata_scope("a:b:__metadata__"), Some("a:b"));
        assert_eq!(metadata_scope(":__metadata__"), Some(""));
        for other in ["__metadata", "x__metadata__", "__metadata__:x", "meta", ""] {
            assert_eq!(metadata_scope(other), None, "{other}");
            assert!(!is_metadata_name(other));
        }
    }

    #[test]
    fn bit_zero_announces_them() {
        let entry = |name: &str, dtype| EntryInfo {
            name: name.into(),
            dtype,
            shape: vec![2],
            row_count: 1,
            row_bytes: 2,
            chunks: Vec::new(),
        };
        let with = Header {
            optional_features: OPTIONAL_METADATA_ENTRIES,
            ..Header::default()
        };
        let without = Header {
            optional_features: 2,
            ..Header::default()
        };
        assert!(with.has_metadata_entries() && !without.has_metadata_entries());
        assert!(entry("__metadata__", Dtype::U8).is_metadata(&with));
        assert!(!entry("__metadata__", Dtype::U8).is_metadata(&without));
        assert!(!entry("weights", Dtype::U8).is_metadata(&with));
        assert!(entry("__metadata__", Dtype::U8).metadata_form_ok());
        assert!(!entry("__metadata__", Dtype::I8).metadata_form_ok());
    }
}
