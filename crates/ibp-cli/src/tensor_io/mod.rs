//! Reading and writing the tensor files the `ibp` command accepts: NumPy `.npy` ([`npy`]) and
//! `safetensors` ([`safetensors`]).
//!
//! Both readers work on a byte slice (a loaded or memory-mapped file) and never copy tensor data:
//! they return where each tensor's bytes lie. Sizes are checked against the bytes present before
//! anything is sliced, with checked arithmetic, so a hostile file yields an error, not a panic.

pub mod npy;
pub mod safetensors;

use std::fmt;

/// Why a tensor file cannot be read or written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TensorIoError {
    /// The file is not a well-formed file of its kind (bad magic, header, sizes, offsets).
    Malformed(String),
    /// The file is well formed but uses something IBP cannot store (a dtype, byte order, layout).
    Unsupported(String),
}

impl fmt::Display for TensorIoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TensorIoError::Malformed(m) => write!(f, "malformed: {m}"),
            TensorIoError::Unsupported(m) => write!(f, "unsupported: {m}"),
        }
    }
}

impl std::error::Error for TensorIoError {}

/// Shorthand for results of this module.
pub type Result<T, E = TensorIoError> = std::result::Result<T, E>;

/// Product of `shape` times `elem_size`, `None` on overflow (the byte size of a C-order tensor).
pub fn tensor_bytes(shape: &[u64], elem_size: u64) -> Option<u64> {
    shape.iter().try_fold(elem_size, |acc, &d| acc.checked_mul(d))
}

pub(crate) fn malformed<T>(msg: impl Into<String>) -> Result<T> {
    Err(TensorIoError::Malformed(msg.into()))
}

pub(crate) fn unsupported<T>(msg: impl Into<String>) -> Result<T> {
    Err(TensorIoError::Unsupported(msg.into()))
}
