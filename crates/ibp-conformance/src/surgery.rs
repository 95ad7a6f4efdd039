//! Byte surgery on built files: patch a field, then recompute the CRCs that would otherwise fire
//! first, so that a vector carries exactly one defect.

use crate::build::{footer_bytes, Built, ChunkLayout, RawDirectory};
use ibp_format::crc32;

/// Writes `value` at `at`.
pub fn put(bytes: &mut [u8], at: u64, value: &[u8]) {
    bytes[at as usize..at as usize + value.len()].copy_from_slice(value);
}

/// Writes a `u16` at `at`.
pub fn put_u16(bytes: &mut [u8], at: u64, v: u16) {
    put(bytes, at, &v.to_le_bytes());
}

/// Writes a `u32` at `at`.
pub fn put_u32(bytes: &mut [u8], at: u64, v: u32) {
    put(bytes, at, &v.to_le_bytes());
}

/// Writes a `u64` at `at`.
pub fn put_u64(bytes: &mut [u8], at: u64, v: u64) {
    put(bytes, at, &v.to_le_bytes());
}

/// Reads a `u32` at `at`.
pub fn get_u32(bytes: &[u8], at: u64) -> u32 {
    u32::from_le_bytes(bytes[at as usize..at as usize + 4].try_into().expect("4 bytes"))
}

/// Recomputes `header_crc`.
pub fn fix_header_crc(bytes: &mut [u8]) {
    let crc = crc32(&bytes[..28]);
    put_u32(bytes, 28, crc);
}

/// Recomputes a chunk's `meta_crc` over header bytes 0..43 and the bytes up to its payload.
pub fn fix_chunk_crc(bytes: &mut [u8], c: &ChunkLayout) {
    let at = c.at as usize;
    let mut h = crc32fast::Hasher::new();
    h.update(&bytes[at..at + 44]);
    h.update(&bytes[at + 48..c.payload_at as usize]);
    let crc = h.finalize();
    put_u32(bytes, c.at + 44, crc);
}

/// Recomputes a chunk's `payload_crc`, then its `meta_crc` (which covers it).
pub fn fix_payload_crc(bytes: &mut [u8], c: &ChunkLayout) {
    let crc = crc32(&bytes[c.payload_at as usize..c.end as usize]);
    put_u32(bytes, c.at + 36, crc);
    fix_chunk_crc(bytes, c);
}

/// Recomputes the footer's `footer_crc` only.
pub fn fix_footer_crc(bytes: &mut [u8]) {
    let f = bytes.len() - 32;
    let crc = crc32(&bytes[f..f + 20]);
    put_u32(bytes, f as u64 + 20, crc);
}

/// Recomputes `directory_crc` (the directory lies between `directory_at` and the footer), then
/// `footer_crc`.
pub fn fix_directory_crc(bytes: &mut [u8], directory_at: u64) {
    let f = bytes.len() - 32;
    let crc = crc32(&bytes[directory_at as usize..f]);
    put_u32(bytes, f as u64 + 16, crc);
    fix_footer_crc(bytes);
}

/// The base file with its directory replaced by `edit(directory)` and a matching footer.
pub fn with_directory(base: &Built, edit: impl FnOnce(&mut RawDirectory)) -> Vec<u8> {
    let mut dir = base.layout.directory.clone();
    edit(&mut dir);
    let dir_bytes = dir.to_bytes();
    let at = base.layout.directory_at;
    let mut out = base.bytes[..at as usize].to_vec();
    out.extend_from_slice(&dir_bytes);
    out.extend_from_slice(&footer_bytes(at, &dir_bytes));
    out
}

/// The base file with `extra` inserted at `at` (before the directory) and every chunk reference at
/// or after `at` moved, with the directory and footer rewritten to match.
pub fn insert_before_directory(base: &Built, at: u64, extra: &[u8], move_refs: bool) -> Vec<u8> {
    let shift = extra.len() as u64;
    let mut dir = base.layout.directory.clone();
    if move_refs {
        for e in &mut dir.entries {
            for r in &mut e.refs {
                if r.offset >= at {
                    r.offset += shift;
                }
            }
        }
    }
    let dir_bytes = dir.to_bytes();
    let mut out = base.bytes[..at as usize].to_vec();
    out.extend_from_slice(extra);
    out.extend_from_slice(&base.bytes[at as usize..base.layout.directory_at as usize]);
    let dir_at = base.layout.directory_at + shift;
    out.extend_from_slice(&dir_bytes);
    out.extend_from_slice(&footer_bytes(dir_at, &dir_bytes));
    out
}
