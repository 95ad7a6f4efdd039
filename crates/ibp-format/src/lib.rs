//! The IBP container format, version 1 (`spec/SPEC.md`): types, constants, parsing, validation,
//! writing and error codes. Modules mirror the spec's sections:
//!
//! | module | spec |
//! | --- | --- |
//! | [`types`] | 2 (data model: dtypes, word widths) |
//! | [`header`] | 4 (header) |
//! | [`chunk`] | 5 (chunk header, metadata, row index) |
//! | [`directory`] | 7 (directory) |
//! | [`footer`] | 8 (footer) |
//! | [`constants`] | 4, 8, 10 (magics, sizes, limits), 1.7 (CRC-32) |
//! | [`error`] | 11 (error codes) |
//!
//! Row records (spec 6) are coded and decoded by the `ibp-codec` crate.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod chunk;
pub mod constants;
pub mod directory;
pub mod error;
pub mod footer;
pub mod header;
pub mod metadata;
pub mod types;

pub use chunk::{ChunkMeta, RawChunkHeader};
pub use constants::*;
pub use directory::{ChunkRef, Directory, EntryInfo};
pub use error::{ErrorCode, FormatError, Result};
pub use footer::Footer;
pub use header::Header;
pub use metadata::{is_metadata_name, metadata_scope, METADATA_NAME, OPTIONAL_METADATA_ENTRIES};
pub use types::{Dtype, WordWidth};
