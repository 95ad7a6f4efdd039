//! The command's errors and exit codes.
//!
//! Every failure is one line on stderr, `error: <file>: <CODE>: <what and where>`, and one of these
//! exit codes (documented in the crate's README):
//!
//! | code | meaning |
//! | --- | --- |
//! | 0 | success (for `verify`: every check passed) |
//! | 1 | usage error: bad arguments or option values, unknown entry, row out of range, output exists |
//! | 2 | bad input: a corrupt or truncated `.ibp` (any `E_*` code of the spec), a malformed or unsupported `.npy`/safetensors file; `verify` found damage |
//! | 3 | I/O error: a file cannot be opened, read, written, synced or renamed |
//! | 4 | GPU error (`verify --gpu`): no usable GPU (no CUDA driver, no NVRTC, no such device), or a CUDA call or kernel compile failed |

use crate::tensor_io::TensorIoError;
use ibp_format::{ErrorCode, FormatError};
use std::fmt;
use std::path::{Path, PathBuf};

/// What kind of failure an error is; decides the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Bad arguments or option values (exit 1).
    Usage,
    /// A corrupt, malformed or unsupported input file (exit 2).
    BadInput,
    /// An operating-system I/O failure (exit 3).
    Io,
    /// No usable GPU, or a CUDA driver or NVRTC failure (exit 4).
    Gpu,
}

impl ErrorKind {
    /// The process exit code for this kind.
    pub fn exit_code(self) -> i32 {
        match self {
            ErrorKind::Usage => 1,
            ErrorKind::BadInput => 2,
            ErrorKind::Io => 3,
            ErrorKind::Gpu => 4,
        }
    }
}

/// A failure of an `ibp` command: its kind, the file it concerns, a stable code and a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliError {
    /// Decides the exit code.
    pub kind: ErrorKind,
    /// The file or folder concerned, if any.
    pub path: Option<PathBuf>,
    /// A stable code: the spec's `E_*` name for container errors, `E_NPY`/`E_SAFETENSORS`/
    /// `E_UNSUPPORTED` for tensor files, `E_IO` for I/O, `E_USAGE` for arguments, `E_NO_GPU` / `E_GPU`
    /// for the GPU.
    pub code: &'static str,
    /// What is wrong and where.
    pub message: String,
}

impl CliError {
    /// A usage error (exit 1).
    pub fn usage(message: impl Into<String>) -> Self {
        CliError {
            kind: ErrorKind::Usage,
            path: None,
            code: "E_USAGE",
            message: message.into(),
        }
    }

    /// An I/O error on `path` (exit 3).
    pub fn io(path: &Path, what: &str, e: &std::io::Error) -> Self {
        CliError {
            kind: ErrorKind::Io,
            path: Some(path.to_path_buf()),
            code: "E_IO",
            message: format!("{what}: {e}"),
        }
    }

    /// A GPU failure that is not about the data (exit 4): `E_NO_GPU` when no GPU can be used,
    /// `E_GPU` for a failed CUDA call or kernel compile.
    pub fn gpu(no_gpu: bool, message: impl Into<String>) -> Self {
        CliError {
            kind: ErrorKind::Gpu,
            path: None,
            code: if no_gpu { "E_NO_GPU" } else { "E_GPU" },
            message: message.into(),
        }
    }

    /// A container (format or codec) error on `path`; the exit code follows the error code.
    pub fn format(path: &Path, e: FormatError) -> Self {
        let kind = match e.code {
            ErrorCode::Io => ErrorKind::Io,
            ErrorCode::InvalidArgument | ErrorCode::RowIndex => ErrorKind::Usage,
            _ => ErrorKind::BadInput,
        };
        CliError {
            kind,
            path: Some(path.to_path_buf()),
            code: e.code.as_str(),
            message: e.detail,
        }
    }

    /// A `.npy` or safetensors error on `path` (exit 2); `format` names the file kind.
    pub fn tensor_file(path: &Path, format: &'static str, e: TensorIoError) -> Self {
        let (code, message) = match e {
            TensorIoError::Malformed(m) => (format, m),
            TensorIoError::Unsupported(m) => ("E_UNSUPPORTED", m),
        };
        CliError {
            kind: ErrorKind::BadInput,
            path: Some(path.to_path_buf()),
            code,
            message,
        }
    }

    /// A bad-input error on `path` with a given code (exit 2).
    pub fn bad_input(path: &Path, code: &'static str, message: impl Into<String>) -> Self {
        CliError {
            kind: ErrorKind::BadInput,
            path: Some(path.to_path_buf()),
            code,
            message: message.into(),
        }
    }

    /// Attaches `path` to an error that has none.
    pub fn with_path(mut self, path: &Path) -> Self {
        if self.path.is_none() {
            self.path = Some(path.to_path_buf());
        }
        self
    }

    /// The process exit code.
    pub fn exit_code(&self) -> i32 {
        self.kind.exit_code()
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(p) = &self.path {
            write!(f, "{}: ", p.display())?;
        }
        // Keep it to one line whatever the message holds.
        let message = self.message.replace(['\n', '\r'], " ");
        write!(f, "{}: {message}", self.code)
    }
}

impl std::error::Error for CliError {}

/// Shorthand for results of the command.
pub type CliResult<T> = std::result::Result<T, CliError>;

/// Extension to attach a path to `io::Result`s and `FormatError` results.
pub trait Context<T> {
    /// Maps the error to a [`CliError`] naming `path` and what was being done.
    fn at(self, path: &Path, what: &str) -> CliResult<T>;
}

impl<T> Context<T> for std::io::Result<T> {
    fn at(self, path: &Path, what: &str) -> CliResult<T> {
        self.map_err(|e| CliError::io(path, what, &e))
    }
}

impl<T> Context<T> for ibp_format::Result<T> {
    fn at(self, path: &Path, what: &str) -> CliResult<T> {
        self.map_err(|e| {
            let e = if what.is_empty() { e } else { e.at(what) };
            CliError::format(path, e)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_is_one_line_with_path_and_code() {
        let e = CliError::format(
            Path::new("x.ibp"),
            FormatError::new(ErrorCode::PayloadCrc, "payload CRC 0x1 != stored 0x2\nsecond line"),
        )
        .with_path(Path::new("ignored"));
        let s = e.to_string();
        assert!(s.starts_with("x.ibp: E_PAYLOAD_CRC: payload CRC"), "{s}");
        assert!(!s.contains('\n'));
        assert_eq!(e.exit_code(), 2);
        assert_eq!(
            CliError::format(Path::new("a"), FormatError::new(ErrorCode::Io, "x")).exit_code(),
            3
        );
        assert_eq!(CliError::usage("bad").exit_code(), 1);
    }
}
