//! The GPU crate's error type: spec error codes for data and index problems, plus driver, compiler
//! and "no GPU" failures that have no spec code.
#![forbid(unsafe_code)]

use ibp_format::{ErrorCode, FormatError};
use std::fmt;

/// Why a GPU operation failed.
#[derive(Debug)]
pub enum GpuError {
    /// No usable GPU: the CUDA driver library (libcuda) or NVRTC is missing, or the requested
    /// device ordinal does not exist. Never a panic.
    NoGpu(String),
    /// A CUDA driver call failed.
    Driver {
        /// What was being done.
        what: String,
        /// The driver's error.
        source: cudarc::driver::DriverError,
    },
    /// NVRTC rejected a kernel (the log names the line in `kernels/`).
    Compile {
        /// Kernel file name.
        module: String,
        /// NVRTC's log or error.
        log: String,
    },
    /// The data or the request is invalid: a spec error code (`E_ROW_INDEX`, `E_ROW_LENGTH`,
    /// `E_PADDING`, `E_PAYLOAD_CRC`, ...) with what and where.
    Format(FormatError),
}

impl GpuError {
    /// The spec error code, for data and request errors.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            GpuError::Format(e) => Some(e.code),
            _ => None,
        }
    }

    /// Whether this error means "no GPU here" (callers may fall back to the CPU decoder).
    pub fn is_no_gpu(&self) -> bool {
        matches!(self, GpuError::NoGpu(_))
    }

    pub(crate) fn driver(what: impl Into<String>) -> impl FnOnce(cudarc::driver::DriverError) -> GpuError {
        let what = what.into();
        move |source| GpuError::Driver { what, source }
    }
}

impl fmt::Display for GpuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GpuError::NoGpu(why) => write!(f, "no GPU: {why}"),
            GpuError::Driver { what, source } => write!(f, "CUDA driver error while {what}: {source}"),
            GpuError::Compile { module, log } => write!(f, "NVRTC failed to compile {module}: {log}"),
            GpuError::Format(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for GpuError {}

impl From<FormatError> for GpuError {
    fn from(e: FormatError) -> Self {
        GpuError::Format(e)
    }
}

/// Shorthand for results of this crate.
pub type GpuResult<T> = std::result::Result<T, GpuError>;
