//! Kernel status codes (twin of `kernels/ibp_status.h`) and their mapping to spec error codes.
#![forbid(unsafe_code)]

use ibp_format::ErrorCode;

/// No failure.
pub const IBP_STATUS_OK: u32 = 0;
/// A requested row is out of range.
pub const IBP_STATUS_ROW_INDEX: u32 = 1;
/// A record lies outside its chunk's payload or the buffers.
pub const IBP_STATUS_LAYOUT: u32 = 2;
/// A coded record's length is not the one its contents require.
pub const IBP_STATUS_ROW_LENGTH: u32 = 3;
/// Non-zero padding in a record.
pub const IBP_STATUS_PADDING: u32 = 4;
/// A group id is not below the group count.
pub const IBP_STATUS_GROUP_ID: u32 = 5;
/// Value of the status word when no failure was seen (failures store `!((request << 8) | code)`).
pub const IBP_STATUS_CLEAR: u64 = 0;

/// Every status constant with its name in `ibp_status.h`.
pub const ALL_STATUS: [(&str, u32); 6] = [
    ("IBP_STATUS_OK", IBP_STATUS_OK),
    ("IBP_STATUS_ROW_INDEX", IBP_STATUS_ROW_INDEX),
    ("IBP_STATUS_LAYOUT", IBP_STATUS_LAYOUT),
    ("IBP_STATUS_ROW_LENGTH", IBP_STATUS_ROW_LENGTH),
    ("IBP_STATUS_PADDING", IBP_STATUS_PADDING),
    ("IBP_STATUS_GROUP_ID", IBP_STATUS_GROUP_ID),
];

/// A failure read back from a kernel's status word: the lowest failing request index and its code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelFailure {
    /// Index into the request (position in the gather list, or row offset in a range decode).
    pub request: u64,
    /// The kernel's status code.
    pub status: u32,
}

impl KernelFailure {
    /// Decodes a status word; `None` when it reports no failure.
    pub fn from_word(word: u64) -> Option<KernelFailure> {
        if word == IBP_STATUS_CLEAR {
            None
        } else {
            let key = !word;
            Some(KernelFailure {
                request: key >> 8,
                status: (key & 0xff) as u32,
            })
        }
    }

    /// The spec error code this status stands for.
    pub fn error_code(&self) -> ErrorCode {
        match self.status {
            IBP_STATUS_ROW_INDEX => ErrorCode::RowIndex,
            IBP_STATUS_ROW_LENGTH => ErrorCode::RowLength,
            IBP_STATUS_PADDING => ErrorCode::Padding,
            IBP_STATUS_GROUP_ID => ErrorCode::GroupId,
            _ => ErrorCode::Layout,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_constants_match_rust() {
        let header = include_str!("../../../kernels/ibp_status.h");
        for (name, value) in ALL_STATUS {
            let line = header
                .lines()
                .find(|l| l.starts_with(&format!("#define {name} ")))
                .unwrap_or_else(|| panic!("{name} missing from ibp_status.h"));
            let text = line.split_whitespace().nth(2).unwrap();
            assert_eq!(text.parse::<u32>().unwrap(), value, "{name}");
        }
        let clear = header
            .lines()
            .find(|l| l.starts_with("#define IBP_STATUS_CLEAR "))
            .unwrap();
        assert!(clear.contains(" 0ull"));
    }

    #[test]
    fn status_word_round_trip() {
        assert_eq!(KernelFailure::from_word(IBP_STATUS_CLEAR), None);
        let f = KernelFailure::from_word(!((77u64 << 8) | IBP_STATUS_PADDING as u64)).unwrap();
        assert_eq!(f.request, 77);
        assert_eq!(f.error_code(), ErrorCode::Padding);
    }
}
