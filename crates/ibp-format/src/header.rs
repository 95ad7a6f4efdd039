//! The 32-byte file header (spec section 4).

use crate::constants::*;
use crate::ensure;
use crate::error::{ErrorCode, Result};

/// The decoded header fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Major version (1).
    pub major_version: u16,
    /// Minor version.
    pub minor_version: u16,
    /// Required-feature bits (must all be understood by the reader).
    pub required_features: u32,
    /// Optional-feature bits (ignored when unknown).
    pub optional_features: u32,
}

impl Default for Header {
    fn default() -> Self {
        Header {
            major_version: MAJOR_VERSION,
            minor_version: MINOR_VERSION,
            required_features: 0,
            optional_features: 0,
        }
    }
}

impl Header {
    /// Serialises the header, computing `header_crc`.
    pub fn to_bytes(&self) -> [u8; 32] {
        let mut b = [0u8; 32];
        b[..8].copy_from_slice(&MAGIC);
        b[8..10].copy_from_slice(&self.major_version.to_le_bytes());
        b[10..12].copy_from_slice(&self.minor_version.to_le_bytes());
        b[12..16].copy_from_slice(&self.required_features.to_le_bytes());
        b[16..20].copy_from_slice(&self.optional_features.to_le_bytes());
        let crc = crc32(&b[..28]);
        b[28..32].copy_from_slice(&crc.to_le_bytes());
        b
    }

    /// Parses and validates the header in spec 11.1 step 2 order.
    pub fn parse(bytes: &[u8]) -> Result<Header> {
        ensure!(
            bytes.len() >= HEADER_LEN as usize,
            ErrorCode::Truncated,
            "file shorter than the 32-byte header"
        );
        ensure!(
            bytes[..8] == MAGIC,
            ErrorCode::Magic,
            "not an IBP file (magic {:02x?})",
            &bytes[..8]
        );
        let u16_at = |o: usize| u16::from_le_bytes([bytes[o], bytes[o + 1]]);
        let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().expect("4 bytes"));
        let major = u16_at(8);
        ensure!(
            major == MAJOR_VERSION,
            ErrorCode::Version,
            "major version {major} is not supported (this reader reads 1)"
        );
        let stored = u32_at(28);
        let computed = crc32(&bytes[..28]);
        ensure!(
            stored == computed,
            ErrorCode::HeaderCrc,
            "header CRC 0x{computed:08x} differs from stored 0x{stored:08x}"
        );
        let required = u32_at(12);
        ensure!(
            required & !KNOWN_REQUIRED_FEATURES == 0,
            ErrorCode::RequiredFeature,
            "required-feature bits 0x{:08x} are not implemented",
            required & !KNOWN_REQUIRED_FEATURES
        );
        ensure!(
            bytes[20..28].iter().all(|&b| b == 0),
            ErrorCode::Reserved,
            "header reserved bytes are not zero"
        );
        Ok(Header {
            major_version: major,
            minor_version: u16_at(10),
            required_features: required,
            optional_features: u32_at(16),
        })
    }
}
