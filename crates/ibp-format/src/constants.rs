//! Magic numbers, fixed sizes and format limits (spec sections 4, 5, 8 and 10).

/// Header magic (spec 4): `\x89IBP\r\n\x1a\n`.
pub const MAGIC: [u8; 8] = [0x89, b'I', b'B', b'P', 0x0D, 0x0A, 0x1A, 0x0A];
/// Footer end magic (spec 8): `IBPEND\r\n`.
pub const END_MAGIC: [u8; 8] = *b"IBPEND\r\n";
/// Chunk magic (spec 5.1): `IBPC`.
pub const CHUNK_MAGIC: [u8; 4] = *b"IBPC";
/// The major version this crate reads and writes.
pub const MAJOR_VERSION: u16 = 1;
/// The minor version this crate writes.
pub const MINOR_VERSION: u16 = 0;
/// Required-feature bits this implementation understands (none in 1.0).
pub const KNOWN_REQUIRED_FEATURES: u32 = 0;

/// Header length in bytes.
pub const HEADER_LEN: u64 = 32;
/// Footer length in bytes.
pub const FOOTER_LEN: u64 = 32;
/// Chunk header length in bytes.
pub const CHUNK_HEADER_LEN: u64 = 48;
/// Fixed part of a directory entry record in bytes (before shape and name).
pub const ENTRY_FIXED_LEN: u64 = 24;
/// Chunk reference length in bytes.
pub const CHUNK_REF_LEN: u64 = 24;
/// Directory preamble (entry_count + reserved) in bytes.
pub const DIRECTORY_PREAMBLE_LEN: u64 = 8;
/// Smallest possible file: header and footer.
pub const MIN_FILE_LEN: u64 = HEADER_LEN + FOOTER_LEN;

/// Most entries per file.
pub const MAX_ENTRIES: u64 = 65_536;
/// Largest row in bytes.
pub const MAX_ROW_BYTES: u64 = 1 << 24;
/// Most rows per chunk.
pub const MAX_ROWS_PER_CHUNK: u64 = 1 << 20;
/// Most decoded bytes per chunk.
pub const MAX_CHUNK_DECODED_BYTES: u64 = 1 << 32;
/// Most groups per chunk.
pub const MAX_GROUPS: u32 = 256;
/// Largest tensor rank.
pub const MAX_RANK: usize = 8;
/// Longest entry name in bytes.
pub const MAX_NAME_LEN: usize = 1024;
/// Largest `align_log2` (alignment 128 bytes).
pub const MAX_ALIGN_LOG2: u8 = 7;

/// CRC-32 check value of `b"123456789"` (spec 1.7).
pub const CRC32_CHECK: u32 = 0xCBF4_3926;

/// CRC-32 (IEEE, as spec 1.7) of `bytes`.
pub fn crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

/// `align_up(x, a)` for a power-of-two `a`, or `None` on overflow.
pub fn align_up(x: u64, a: u64) -> Option<u64> {
    debug_assert!(a.is_power_of_two());
    x.checked_add(a - 1).map(|v| v & !(a - 1))
}
