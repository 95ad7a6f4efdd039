//! The 32-byte footer (spec section 8).

use crate::constants::*;
use crate::ensure;
use crate::error::{ErrorCode, Result};

/// The decoded footer fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Footer {
    /// File offset of the directory.
    pub directory_offset: u64,
    /// Directory length in bytes.
    pub directory_len: u64,
    /// CRC-32 of the directory.
    pub directory_crc: u32,
}

impl Footer {
    /// Serialises the footer, computing `footer_crc`.
    pub fn to_bytes(&self) -> [u8; 32] {
        let mut b = [0u8; 32];
        b[..8].copy_from_slice(&self.directory_offset.to_le_bytes());
        b[8..16].copy_from_slice(&self.directory_len.to_le_bytes());
        b[16..20].copy_from_slice(&self.directory_crc.to_le_bytes());
        let crc = crc32(&b[..20]);
        b[20..24].copy_from_slice(&crc.to_le_bytes());
        b[24..].copy_from_slice(&END_MAGIC);
        b
    }

    /// Parses the last 32 bytes of a file of `file_len` bytes and checks 8.1 and 8.2.
    pub fn parse(bytes: &[u8], file_len: u64) -> Result<Footer> {
        ensure!(
            bytes.len() == FOOTER_LEN as usize,
            ErrorCode::Truncated,
            "file shorter than the 32-byte footer"
        );
        ensure!(
            bytes[24..] == END_MAGIC,
            ErrorCode::Truncated,
            "file does not end with the IBP footer: it was cut short or has bytes appended"
        );
        let stored = u32::from_le_bytes(bytes[20..24].try_into().expect("4 bytes"));
        let computed = crc32(&bytes[..20]);
        ensure!(
            stored == computed,
            ErrorCode::FooterCrc,
            "footer CRC 0x{computed:08x} differs from stored 0x{stored:08x}"
        );
        let footer = Footer {
            directory_offset: u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes")),
            directory_len: u64::from_le_bytes(bytes[8..16].try_into().expect("8 bytes")),
            directory_crc: u32::from_le_bytes(bytes[16..20].try_into().expect("4 bytes")),
        };
        let end = footer
            .directory_offset
            .checked_add(footer.directory_len)
            .and_then(|e| e.checked_add(FOOTER_LEN));
        ensure!(
            end == Some(file_len) && footer.directory_offset >= HEADER_LEN,
            ErrorCode::Layout,
            "directory at {} of {} bytes does not end where the footer starts ({} - 32)",
            footer.directory_offset,
            footer.directory_len,
            file_len
        );
        Ok(footer)
    }
}
