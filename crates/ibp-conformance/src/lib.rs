//! IBP conformance vectors (spec section 13): a deterministic generator, the manifest types and a
//! runner.
//!
//! | module | role |
//! | --- | --- |
//! | [`build`] | a spec-level writer, independent of `ibp-codec`, with full control and a layout map |
//! | [`surgery`] | patching built files and recomputing CRCs so that a vector has one defect |
//! | [`valid`], [`invalid`], [`realdata`] | the vectors, with hand-assigned stable ids |
//! | [`generate`] | the files of `conformance/` and `manifest.json` |
//! | [`manifest`] | the manifest's JSON types |
//! | [`runner`] | decoding vectors and comparing with the manifest |
//! | [`example`] | `spec/example.md`, an annotated hex dump of a small file |
//! | `gpu` (feature `gpu`) | the same vectors through the CUDA decoder of `ibp-gpu` |
//! | [`stats`] | counts over the manifest and the spec clauses it covers |
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod build;
pub mod data;
pub mod encoder;
pub mod example;
pub mod generate;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod invalid;
pub mod manifest;
pub mod prng;
pub mod realdata;
pub mod runner;
pub mod stats;
pub mod surgery;
pub mod valid;
pub mod vector;

use std::path::PathBuf;

/// The workspace root: `$IBP_WORKSPACE` if set, else two levels above this crate's source (where it
/// was built), else the current directory (a binary copied to another machine and run from a
/// checkout's root).
pub fn workspace_root() -> PathBuf {
    if let Some(root) = std::env::var_os("IBP_WORKSPACE") {
        return PathBuf::from(root);
    }
    let built = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    if built.join("conformance").is_dir() {
        built
    } else {
        PathBuf::from(".")
    }
}

/// The `conformance/` folder of the workspace.
pub fn conformance_dir() -> PathBuf {
    workspace_root().join("conformance")
}

/// The committed sample tables (`data/`).
pub fn data_dir() -> PathBuf {
    workspace_root().join("data")
}
