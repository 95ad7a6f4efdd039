//! Error codes of spec section 11: every rejection names one.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The stable error codes of spec section 11.2. Their string forms (`E_TRUNCATED`, ...) are what
/// conformance vectors and other implementations report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum ErrorCode {
    /// The file ends before a structure it declares, or does not end with the footer.
    Truncated,
    /// The file does not start with the IBP magic.
    Magic,
    /// Unsupported major version.
    Version,
    /// Header CRC mismatch.
    HeaderCrc,
    /// A required-feature bit the decoder does not implement.
    RequiredFeature,
    /// A reserved field or bit is non-zero.
    Reserved,
    /// Footer CRC mismatch.
    FooterCrc,
    /// Directory CRC mismatch.
    DirectoryCrc,
    /// The directory's records do not fit or do not fill it.
    Directory,
    /// Unknown dtype code.
    Dtype,
    /// An entry name is empty, too long, not UTF-8 or duplicated.
    Name,
    /// Shape, row count and row size disagree.
    Shape,
    /// A format limit or a user-set resource limit is exceeded.
    Limit,
    /// Offsets or sizes out of range, out of order, overlapping, leaving holes, or overflowing.
    Layout,
    /// A chunk does not start with `IBPC`.
    ChunkMagic,
    /// A chunk header field has a value outside its rule.
    ChunkHeader,
    /// Chunk metadata CRC mismatch.
    ChunkCrc,
    /// Chunk payload CRC mismatch.
    PayloadCrc,
    /// A Bitval bit is set where its Mask is clear.
    BitvalOutsideMask,
    /// A row's group id is not below the chunk's group count.
    GroupId,
    /// A row record's length is not the one its contents require.
    RowLength,
    /// Non-zero padding.
    Padding,
    /// (API) a requested row, chunk or entry index is out of range.
    RowIndex,
    /// (API) an I/O error from the underlying reader or writer.
    Io,
    /// (API) the caller passed arguments the operation cannot accept (e.g. wrong buffer size).
    InvalidArgument,
}

impl ErrorCode {
    /// Every code, in spec order.
    pub const ALL: [ErrorCode; 25] = [
        ErrorCode::Truncated,
        ErrorCode::Magic,
        ErrorCode::Version,
        ErrorCode::HeaderCrc,
        ErrorCode::RequiredFeature,
        ErrorCode::Reserved,
        ErrorCode::FooterCrc,
        ErrorCode::DirectoryCrc,
        ErrorCode::Directory,
        ErrorCode::Dtype,
        ErrorCode::Name,
        ErrorCode::Shape,
        ErrorCode::Limit,
        ErrorCode::Layout,
        ErrorCode::ChunkMagic,
        ErrorCode::ChunkHeader,
        ErrorCode::ChunkCrc,
        ErrorCode::PayloadCrc,
        ErrorCode::BitvalOutsideMask,
        ErrorCode::GroupId,
        ErrorCode::RowLength,
        ErrorCode::Padding,
        ErrorCode::RowIndex,
        ErrorCode::Io,
        ErrorCode::InvalidArgument,
    ];

    /// The code's stable name from spec section 11.2, e.g. `"E_TRUNCATED"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::Truncated => "E_TRUNCATED",
            ErrorCode::Magic => "E_MAGIC",
            ErrorCode::Version => "E_VERSION",
            ErrorCode::HeaderCrc => "E_HEADER_CRC",
            ErrorCode::RequiredFeature => "E_REQUIRED_FEATURE",
            ErrorCode::Reserved => "E_RESERVED",
            ErrorCode::FooterCrc => "E_FOOTER_CRC",
            ErrorCode::DirectoryCrc => "E_DIRECTORY_CRC",
            ErrorCode::Directory => "E_DIRECTORY",
            ErrorCode::Dtype => "E_DTYPE",
            ErrorCode::Name => "E_NAME",
            ErrorCode::Shape => "E_SHAPE",
            ErrorCode::Limit => "E_LIMIT",
            ErrorCode::Layout => "E_LAYOUT",
            ErrorCode::ChunkMagic => "E_CHUNK_MAGIC",
            ErrorCode::ChunkHeader => "E_CHUNK_HEADER",
            ErrorCode::ChunkCrc => "E_CHUNK_CRC",
            ErrorCode::PayloadCrc => "E_PAYLOAD_CRC",
            ErrorCode::BitvalOutsideMask => "E_BITVAL_OUTSIDE_MASK",
            ErrorCode::GroupId => "E_GROUP_ID",
            ErrorCode::RowLength => "E_ROW_LENGTH",
            ErrorCode::Padding => "E_PADDING",
            ErrorCode::RowIndex => "E_ROW_INDEX",
            ErrorCode::Io => "E_IO",
            ErrorCode::InvalidArgument => "E_INVALID_ARGUMENT",
        }
    }

    /// Parses a stable name back into a code.
    pub fn from_name(name: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|c| c.as_str() == name)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A typed error: the spec's code plus a human-readable description of what and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError {
    /// The stable code (what every implementation reports).
    pub code: ErrorCode,
    /// What is wrong and where (e.g. "entry 'x' chunk 3: payload CRC 0x.. != stored 0x..").
    pub detail: String,
}

impl FormatError {
    /// Builds an error from a code and a description.
    pub fn new(code: ErrorCode, detail: impl Into<String>) -> Self {
        FormatError {
            code,
            detail: detail.into(),
        }
    }

    /// Prefixes the description with a location (e.g. `"chunk 3"`), keeping the code.
    pub fn at(mut self, location: impl fmt::Display) -> Self {
        self.detail = format!("{location}: {}", self.detail);
        self
    }
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.detail)
    }
}

impl std::error::Error for FormatError {}

impl From<std::io::Error> for FormatError {
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            FormatError::new(ErrorCode::Truncated, format!("unexpected end of file: {e}"))
        } else {
            FormatError::new(ErrorCode::Io, e.to_string())
        }
    }
}

/// Shorthand for results carrying a [`FormatError`].
pub type Result<T, E = FormatError> = std::result::Result<T, E>;

/// Returns `Err(FormatError::new(code, detail))` from the enclosing function.
#[macro_export]
macro_rules! bail {
    ($code:expr, $($arg:tt)*) => {
        return Err($crate::FormatError::new($code, format!($($arg)*)))
    };
}

/// Returns an error with `code` unless `cond` holds.
#[macro_export]
macro_rules! ensure {
    ($cond:expr, $code:expr, $($arg:tt)*) => {
        if !($cond) {
            $crate::bail!($code, $($arg)*);
        }
    };
}
