//! Metadata entries (spec 2.7) as the `ibp` command uses them: a safetensors file's `__metadata__`
//! object, kept as a `u8` entry of its JSON text named `__metadata__` (a single file) or
//! `FILE.safetensors:__metadata__` (a folder), announced by optional-feature bit 0.
//!
//! `compress` stores them ([`crate::inputs`]); `decompress` writes each back into the header of the
//! safetensors file it belongs to, verbatim; `inspect` lists them; `verify` checks their text. A
//! metadata entry whose text is not a JSON object of strings is `E_METADATA` where its text is
//! needed; its bytes still decode (spec 2.7).

use crate::error::{CliError, CliResult};
use crate::tensor_io::safetensors;
use ibp_codec::{ContainerReader, DecoderKind};
use ibp_format::{metadata_scope, EntryInfo, Header};
use std::collections::BTreeMap;
use std::io::{Read, Seek};
use std::path::Path;

/// The error code of a metadata entry that is not of the spec's form.
pub const E_METADATA: &str = "E_METADATA";

/// A metadata entry of a container: its index and whose metadata it is (`""`: the whole file,
/// else the `FILE.safetensors` part of the folder names it goes with).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataEntry {
    /// Index of the entry.
    pub index: usize,
    /// Its scope.
    pub scope: String,
}

/// The metadata entries of a container with `header` and `entries` (none when bit 0 is clear).
pub fn metadata_entries(header: &Header, entries: &[EntryInfo]) -> Vec<MetadataEntry> {
    entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.is_metadata(header))
        .filter_map(|(index, e)| {
            Some(MetadataEntry {
                index,
                scope: metadata_scope(&e.name)?.to_owned(),
            })
        })
        .collect()
}

/// Checks a metadata entry's form and decoded bytes: `u8`, rank 1, the UTF-8 text of a JSON object
/// of strings. Returns its keys and values, or what is wrong.
pub fn check(entry: &EntryInfo, bytes: &[u8]) -> Result<BTreeMap<String, String>, String> {
    if !entry.metadata_form_ok() {
        return Err(format!(
            "metadata entry '{}' is {} of rank {}, not a u8 vector (spec 2.7)",
            entry.name,
            entry.dtype,
            entry.shape.len()
        ));
    }
    safetensors::metadata_from_text(bytes).map_err(|e| format!("metadata entry '{}': {e}", entry.name))
}

/// A metadata entry decoded: its text and keys, or what makes it not of the spec's form.
pub type Decoded = Result<(String, BTreeMap<String, String>), String>;

/// Decodes metadata entry `index` and checks it ([`check`]; at most a safetensors header's length).
/// A container error while decoding is the outer error.
pub fn decode<R: Read + Seek>(
    reader: &mut ContainerReader<R>,
    index: usize,
    decoder: DecoderKind,
) -> ibp_format::Result<Decoded> {
    let entry = reader.entries()[index].clone();
    if entry.decoded_len() > safetensors::MAX_HEADER_LEN {
        return Ok(Err(format!(
            "metadata entry '{}' holds {} bytes, more than a safetensors header may ({})",
            entry.name,
            entry.decoded_len(),
            safetensors::MAX_HEADER_LEN
        )));
    }
    let bytes = reader.decode_entry(index, decoder)?;
    Ok(check(&entry, &bytes).map(|map| (String::from_utf8(bytes).expect("valid JSON is UTF-8"), map)))
}

/// [`decode`] where the text is needed: a container error or `E_METADATA` stops the command.
pub fn read_text<R: Read + Seek>(
    reader: &mut ContainerReader<R>,
    input: &Path,
    index: usize,
    decoder: DecoderKind,
) -> CliResult<String> {
    match decode(reader, index, decoder).map_err(|e| CliError::format(input, e))? {
        Ok((text, _)) => Ok(text),
        Err(why) => Err(CliError::bad_input(input, E_METADATA, why)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ibp_format::{Dtype, OPTIONAL_METADATA_ENTRIES};

    fn entry(name: &str, dtype: Dtype, shape: &[u64]) -> EntryInfo {
        EntryInfo {
            name: name.into(),
            dtype,
            shape: shape.to_vec(),
            row_count: 1,
            row_bytes: shape.iter().product::<u64>().max(1) * dtype.size(),
            chunks: Vec::new(),
        }
    }

    #[test]
    fn entries_are_metadata_only_under_bit_zero() {
        let list = [
            entry("__metadata__", Dtype::U8, &[15]),
            entry("w", Dtype::F32, &[4]),
            entry("a.safetensors:__metadata__", Dtype::U8, &[2]),
            entry("a.safetensors:w", Dtype::F32, &[4]),
        ];
        let on = Header {
            optional_features: OPTIONAL_METADATA_ENTRIES,
            ..Header::default()
        };
        let found = metadata_entries(&on, &list);
        assert_eq!(
            found,
            [
                MetadataEntry {
                    index: 0,
                    scope: String::new()
                },
                MetadataEntry {
                    index: 2,
                    scope: "a.safetensors".into()
                }
            ]
        );
        assert!(metadata_entries(&Header::default(), &list).is_empty());
    }

    #[test]
    fn text_must_be_an_object_of_strings_in_a_u8_vector() {
        let ok = entry("__metadata__", Dtype::U8, &[15]);
        assert_eq!(check(&ok, br#"{"format":"pt"}"#).unwrap()["format"], "pt");
        for bad in [&br#"{"n":1}"#[..], b"[]", b"{", b"\xff", b""] {
            assert!(check(&ok, bad).is_err(), "{bad:?}");
        }
        let wrong_dtype = entry("__metadata__", Dtype::I8, &[2]);
        assert!(check(&wrong_dtype, b"{}").unwrap_err().contains("not a u8 vector"));
        let wrong_rank = entry("__metadata__", Dtype::U8, &[1, 2]);
        assert!(check(&wrong_rank, b"{}").is_err());
    }
}
