//! Invariant Bit Packing (IBP): a lossless storage format for ML tensors.
//!
//! This facade re-exports the container format ([`format`]) and the CPU codec ([`codec`]).
//! The normative specification lives in `spec/SPEC.md`.
#![forbid(unsafe_code)]

pub use ibp_codec as codec;
pub use ibp_format as format;
