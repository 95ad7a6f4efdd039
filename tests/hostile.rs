//! Hostile input, exhaustively (issue 5): every truncated prefix, every single-bit flip and every
//! appended tail of several valid files, crafted files that claim huge sizes, and the resource
//! limits a reader's user sets. Peak allocation under hostile input is measured separately, in
//! `tests/hostile_alloc.rs` (its own binary, with a counting global allocator).

#[path = "../fuzz/src/props.rs"]
#[allow(dead_code)]
mod props;
#[path = "../fuzz/src/replay.rs"]
#[allow(dead_code)]
mod replay;

use ibp_codec::row::DecoderKind;
use ibp_codec::{decode_bytes, ContainerReader, Limits};
use ibp_format::{crc32, ErrorCode, FormatError, FOOTER_LEN};
use std::collections::BTreeMap;
use std::io::Cursor;

fn decode_code(bytes: &[u8]) -> Result<(), ErrorCode> {
    decode_bytes(bytes, DecoderKind::Fast).map(|_| ()).map_err(|e| e.code)
}

/// The sample files the exhaustive tests walk (every one, all small).
fn samples() -> Vec<(String, Vec<u8>)> {
    replay::sample_containers()
}

#[test]
fn every_truncated_prefix_is_rejected_with_e_truncated() {
    // Spec 11.1: a prefix shorter than 64 bytes fails step 1; a longer one keeps the intact header
    // (step 2 passes) and, unless its last 8 bytes happen to spell the end magic, fails step 3's
    // end-magic check: E_TRUNCATED either way.
    let mut prefixes = 0;
    for (name, bytes) in samples() {
        for len in 0..bytes.len() {
            let prefix = &bytes[..len];
            assert!(
                !prefix.ends_with(&ibp_format::END_MAGIC),
                "{name}: prefix {len} ends with the end magic; pick other samples"
            );
            assert_eq!(
                decode_code(prefix),
                Err(ErrorCode::Truncated),
                "{name}: prefix of {len} of {} bytes",
                bytes.len()
            );
            prefixes += 1;
        }
    }
    assert!(prefixes > 5_000, "only {prefixes} prefixes checked");
}

#[test]
fn bytes_appended_after_the_footer_are_rejected_with_e_truncated() {
    for (name, bytes) in samples() {
        for tail in [
            &[0u8][..],
            b"IBP",
            &[0xFF; 31],
            &[0; 32],
            &bytes[bytes.len() - 32..][..31],
        ] {
            let mut longer = bytes.clone();
            longer.extend_from_slice(tail);
            assert_eq!(
                decode_code(&longer),
                Err(ErrorCode::Truncated),
                "{name} + {} bytes",
                tail.len()
            );
        }
        // A whole second footer appended: the end magic is there, the directory does not end
        // where the (new) footer starts.
        let mut doubled = bytes.clone();
        doubled.extend_from_slice(&bytes[bytes.len() - 32..]);
        assert_eq!(decode_code(&doubled), Err(ErrorCode::Layout), "{name} + footer");
    }
}

/// Which structure byte `at` of a valid file belongs to, and the code a flip of one of its bits
/// must produce (spec 11.1's order: magic, version, header CRC, footer magic, footer CRC,
/// directory CRC, then per chunk the header fields before `meta_crc`, then the payload CRC).
fn expected_codes(bytes: &[u8]) -> Vec<&'static [ErrorCode]> {
    use ErrorCode::*;
    let len = bytes.len();
    let mut expect: Vec<&'static [ErrorCode]> = vec![&[]; len];
    for (at, e) in expect.iter_mut().enumerate().take(32) {
        *e = match at {
            0..=7 => &[Magic],
            8..=9 => &[Version],
            _ => &[HeaderCrc],
        };
    }
    let footer = len - FOOTER_LEN as usize;
    for (at, e) in expect.iter_mut().enumerate().skip(footer) {
        *e = if at >= footer + 24 { &[Truncated] } else { &[FooterCrc] };
    }
    let reader = ContainerReader::open(Cursor::new(bytes)).expect("valid sample");
    let dir = reader.footer().directory_offset as usize;
    for e in &mut expect[dir..footer] {
        *e = &[DirectoryCrc];
    }
    let mut reader = reader;
    let entries = reader.entries().to_vec();
    for (ei, entry) in entries.iter().enumerate() {
        for (ci, c) in entry.chunks.iter().enumerate() {
            let meta = reader.chunk_meta(ei, ci).expect("valid");
            let o = c.offset as usize;
            let payload = (c.offset + c.byte_len - meta.payload_len) as usize;
            for (k, e) in expect[o..payload].iter_mut().enumerate() {
                *e = match k {
                    0..=3 => &[ChunkMagic],
                    // Header fields with rules: a flip breaks a rule or, if the value stays
                    // allowed, the metadata formula, the chunk's extent or the metadata CRC.
                    4..=35 | 40..=43 => &[Reserved, ChunkHeader, Limit, Layout, ChunkCrc],
                    _ => &[ChunkCrc], // payload_crc, meta_crc, metadata and padding
                };
            }
            for e in &mut expect[payload..o + c.byte_len as usize] {
                *e = &[PayloadCrc];
            }
        }
    }
    assert!(expect.iter().all(|e| !e.is_empty()), "every byte is covered");
    expect
}

#[test]
fn every_single_bit_flip_is_detected_with_the_code_of_its_structure() {
    let mut flips = 0u64;
    let mut by_code: BTreeMap<&'static str, u64> = BTreeMap::new();
    for (name, bytes) in samples() {
        let expect = expected_codes(&bytes);
        let mut flipped = bytes.clone();
        for at in 0..bytes.len() {
            for bit in 0..8 {
                flipped[at] ^= 1 << bit;
                let got = decode_code(&flipped);
                flipped[at] ^= 1 << bit;
                let code = got.expect_err("a bit flip that decodes: CRC-32 catches every one");
                assert!(
                    expect[at].contains(&code),
                    "{name}: flip of bit {bit} of byte {at} gives {code}, expected one of {:?}",
                    expect[at]
                );
                *by_code.entry(code.as_str()).or_default() += 1;
                flips += 1;
            }
        }
    }
    eprintln!("{flips} single-bit flips, all rejected: {by_code:?}");
    assert!(flips > 40_000);
}

#[test]
fn bit_flips_behind_recomputed_crcs_never_panic_and_report_file_defects() {
    // A crafted file keeps its CRCs right: flip every bit, recompute every CRC, decode with both
    // decoders. Some flips stay valid (a payload bit of a raw row, a free bit of a coded row); the
    // rest must be rejected with a file-defect code, both decoders agreeing.
    let mut accepted = 0u64;
    let mut rejected: BTreeMap<&'static str, u64> = BTreeMap::new();
    for (name, bytes) in samples() {
        let mut flipped = bytes.clone();
        for at in 0..bytes.len() {
            for bit in 0..8 {
                flipped[at] ^= 1 << bit;
                let mut crafted = flipped.clone();
                replay::fix_crcs(&mut crafted);
                let oracle = decode_bytes(&crafted, DecoderKind::Oracle);
                let fast = decode_bytes(&crafted, DecoderKind::Fast);
                match (&oracle, &fast) {
                    (Ok(a), Ok(b)) => {
                        assert!(a == b, "{name} byte {at} bit {bit}: decoders disagree");
                        accepted += 1;
                    }
                    (Err(a), Err(b)) => {
                        assert_eq!(a.code, b.code, "{name} byte {at} bit {bit}: {a} / {b}");
                        props::assert_file_error(a, &format!("{name} byte {at} bit {bit}"));
                        *rejected.entry(a.code.as_str()).or_default() += 1;
                    }
                    _ => panic!("{name} byte {at} bit {bit}: {oracle:?} vs {fast:?}"),
                }
                flipped[at] ^= 1 << bit;
            }
        }
    }
    eprintln!("flips with fixed CRCs: {accepted} still valid, rejected {rejected:?}");
    assert!(accepted > 0 && !rejected.is_empty());
}

/// A file with one entry of `rows` rows of `row_bytes` bytes (one chunk).
fn one_entry_file(rows: usize, row_bytes: usize) -> (Vec<u8>, Vec<u8>) {
    let mut rng = replay::SampleRng::new(5);
    let data = replay::drifting_rows(&mut rng, rows, row_bytes, 2);
    let shape = [rows as u64, row_bytes as u64];
    let t = [("x", ibp_format::Dtype::U8, &shape[..], row_bytes as u64, &data[..])];
    let file = ibp_codec::encode_to_vec(&t, &ibp_codec::options::EncodeOptions::default()).unwrap();
    (file, data)
}

fn open_with(file: &[u8], limits: Limits) -> Result<ContainerReader<Cursor<&[u8]>>, FormatError> {
    ContainerReader::open_with_limits(Cursor::new(file), limits)
}

#[test]
fn default_limits_are_sane() {
    let l = Limits::default();
    assert!(
        l.max_output_bytes >= 1 << 30,
        "default output limit {l:?} too small for tensors"
    );
    assert!(l.max_output_bytes <= 1 << 40, "default output limit {l:?} is no limit");
    assert!(l.max_gather_rows >= 1 << 16 && l.max_gather_rows <= 1 << 32);
    assert!(l.max_directory_bytes >= 1 << 20 && l.max_directory_bytes <= 1 << 32);
}

#[test]
fn directory_limit_is_enforced_with_e_limit() {
    let (file, _) = one_entry_file(10, 8);
    let dir_len = {
        let f = &file[file.len() - 32..];
        u64::from_le_bytes(f[8..16].try_into().unwrap())
    };
    let limits = |max_directory_bytes| Limits {
        max_directory_bytes,
        ..Limits::default()
    };
    assert!(open_with(&file, limits(dir_len)).is_ok());
    let err = open_with(&file, limits(dir_len - 1)).err().expect("over the limit");
    assert_eq!(err.code, ErrorCode::Limit, "{err}");
}

#[test]
fn output_limit_is_enforced_with_e_limit_for_entries_chunks_streams_and_gathers() {
    let (file, data) = one_entry_file(10, 8);
    let limits = |max_output_bytes| Limits {
        max_output_bytes,
        ..Limits::default()
    };
    let exact = data.len() as u64;
    let mut r = open_with(&file, limits(exact)).unwrap();
    assert_eq!(r.decode_entry(0, DecoderKind::Fast).unwrap(), data);
    assert_eq!(r.decode_all(DecoderKind::Oracle).unwrap(), vec![data.clone()]);
    let mut r = open_with(&file, limits(exact - 1)).unwrap();
    for kind in [DecoderKind::Oracle, DecoderKind::Fast] {
        assert_eq!(r.decode_entry(0, kind).unwrap_err().code, ErrorCode::Limit);
        assert_eq!(r.decode_all(kind).unwrap_err().code, ErrorCode::Limit);
        // Chunk decodes and streaming decodes hold one chunk: the limit bounds them too, and
        // verify reports the chunk as over the limit instead of allocating it.
        assert_eq!(r.decode_chunk(0, 0, kind).unwrap_err().code, ErrorCode::Limit);
        let mut sink = Vec::new();
        assert_eq!(
            r.decode_entry_to(0, kind, &mut sink).unwrap_err().code,
            ErrorCode::Limit
        );
        assert!(sink.is_empty(), "nothing is written past the limit");
        let report = r.verify(kind);
        assert_eq!(report.problems.len(), 1);
        assert_eq!(report.problems[0].2.code, ErrorCode::Limit);
        // A gather's output counts, duplicates included: 3 rows of 8 bytes against a 24-byte limit.
        let mut g = open_with(&file, limits(24)).unwrap();
        assert_eq!(
            g.gather(0, &[1, 1, 9], kind).unwrap(),
            [&data[8..16], &data[8..16], &data[72..80]].concat()
        );
        assert_eq!(g.gather(0, &[1, 1, 9, 0], kind).unwrap_err().code, ErrorCode::Limit);
    }
    // Output limits apply before anything is allocated: an absurd request is refused at once.
    let mut g = open_with(&file, Limits::default()).unwrap();
    let many = vec![0u64; 1 << 16];
    assert!(g.gather(0, &many, DecoderKind::Fast).is_ok());
    let mut tight = open_with(&file, limits(1 << 10)).unwrap();
    assert_eq!(
        tight.gather(0, &many, DecoderKind::Fast).unwrap_err().code,
        ErrorCode::Limit
    );
}

#[test]
fn gather_row_limit_is_enforced_with_e_limit() {
    let (file, data) = one_entry_file(10, 8);
    let limits = Limits {
        max_gather_rows: 4,
        ..Limits::default()
    };
    let mut r = open_with(&file, limits).unwrap();
    assert_eq!(
        r.gather(0, &[3, 2, 1, 0], DecoderKind::Fast).unwrap(),
        [&data[24..32], &data[16..24], &data[8..16], &data[..8]].concat()
    );
    assert_eq!(
        r.gather(0, &[0; 5], DecoderKind::Fast).unwrap_err().code,
        ErrorCode::Limit
    );
    // The limit is checked before the row indices: E_LIMIT wins over E_ROW_INDEX.
    assert_eq!(
        r.gather(0, &[99; 5], DecoderKind::Fast).unwrap_err().code,
        ErrorCode::Limit
    );
    assert_eq!(
        r.gather(0, &[99; 4], DecoderKind::Fast).unwrap_err().code,
        ErrorCode::RowIndex
    );
}

// ---------------------------------------------------------------------------------------------
// Crafted files that claim huge sizes: each must be rejected quickly, with the right code.

/// Builds a file from raw parts: header, `chunks` bytes, directory bytes, with correct CRCs in the
/// header, directory and footer.
pub fn assemble(chunks: &[u8], directory: &[u8]) -> Vec<u8> {
    let mut file = ibp_format::Header::default().to_bytes().to_vec();
    file.extend_from_slice(chunks);
    let directory_offset = file.len() as u64;
    file.extend_from_slice(directory);
    let footer = ibp_format::Footer {
        directory_offset,
        directory_len: directory.len() as u64,
        directory_crc: crc32(directory),
    };
    file.extend_from_slice(&footer.to_bytes());
    file
}

/// A directory record of one entry (the caller picks each field, valid or not).
fn entry_record(
    name: &[u8],
    dtype: u8,
    shape: &[u64],
    row_count: u64,
    row_bytes: u64,
    chunk_count: u32,
    refs: &[(u64, u64, u32)],
) -> Vec<u8> {
    let mut r = Vec::new();
    r.extend_from_slice(&(name.len() as u16).to_le_bytes());
    r.push(dtype);
    r.push(shape.len() as u8);
    r.extend_from_slice(&chunk_count.to_le_bytes());
    r.extend_from_slice(&row_count.to_le_bytes());
    r.extend_from_slice(&row_bytes.to_le_bytes());
    for d in shape {
        r.extend_from_slice(&d.to_le_bytes());
    }
    r.extend_from_slice(name);
    while !r.len().is_multiple_of(8) {
        r.push(0);
    }
    for &(offset, len, rows) in refs {
        r.extend_from_slice(&offset.to_le_bytes());
        r.extend_from_slice(&len.to_le_bytes());
        r.extend_from_slice(&rows.to_le_bytes());
        r.extend_from_slice(&0u32.to_le_bytes());
    }
    r
}

fn directory(entry_count: u32, records: &[Vec<u8>]) -> Vec<u8> {
    let mut d = entry_count.to_le_bytes().to_vec();
    d.extend_from_slice(&[0; 4]);
    for r in records {
        d.extend_from_slice(r);
    }
    d
}

/// Crafted files with huge claims and the code each must be rejected with.
pub fn huge_claims() -> Vec<(&'static str, Vec<u8>, ErrorCode)> {
    let u8_code = ibp_format::Dtype::U8.code();
    let mut cases = Vec::new();
    // 4 billion entries announced, none present.
    cases.push((
        "entry_count 2^32-1",
        assemble(&[], &directory(u32::MAX, &[])),
        ErrorCode::Directory,
    ));
    // 4 billion chunk references announced, none present.
    let rec = entry_record(b"x", u8_code, &[1 << 40], 1 << 40, 1, u32::MAX, &[]);
    cases.push((
        "chunk_count 2^32-1",
        assemble(&[], &directory(1, &[rec])),
        ErrorCode::Directory,
    ));
    // A directory length of 2^63 in the footer.
    let mut f = assemble(&[], &directory(0, &[]));
    let n = f.len();
    let footer = ibp_format::Footer {
        directory_offset: 32,
        directory_len: 1 << 63,
        directory_crc: 0,
    };
    f[n - 32..].copy_from_slice(&footer.to_bytes());
    cases.push(("directory_len 2^63", f, ErrorCode::Layout));
    // A shape of 2^64-ish elements (overflowing the product).
    let rec = entry_record(b"x", u8_code, &[u64::MAX, u64::MAX], u64::MAX, 1, 0, &[]);
    cases.push((
        "shape overflows",
        assemble(&[], &directory(1, &[rec])),
        ErrorCode::Shape,
    ));
    // row_bytes of 2^40.
    let rec = entry_record(b"x", u8_code, &[1 << 40], 1, 1 << 40, 0, &[]);
    cases.push(("row_bytes 2^40", assemble(&[], &directory(1, &[rec])), ErrorCode::Limit));
    // A chunk reference with a length of 2^64-1 bytes.
    let rec = entry_record(b"x", u8_code, &[4, 1], 4, 1, 1, &[(32, u64::MAX, 4)]);
    cases.push((
        "chunk byte_len 2^64-1",
        assemble(&[], &directory(1, &[rec])),
        ErrorCode::Layout,
    ));
    // A chunk of 2^20 rows of 2^12 bytes (4 GiB decoded) whose header claims a payload of 2^62.
    let rows = 1u64 << 20;
    let row_bytes = 1u64 << 12;
    let mut head = [0u8; 48];
    head[..4].copy_from_slice(b"IBPC");
    head[4] = 64;
    head[6] = 1;
    head[8] = 1;
    head[12..16].copy_from_slice(&(rows as u32).to_le_bytes());
    head[16..20].copy_from_slice(&((row_bytes / 8) as u32).to_le_bytes());
    head[24..32].copy_from_slice(&(1u64 << 62).to_le_bytes());
    let meta_len = 2 * row_bytes + rows;
    head[32..36].copy_from_slice(&(meta_len as u32).to_le_bytes());
    let rec = entry_record(
        b"x",
        u8_code,
        &[rows, row_bytes],
        rows,
        row_bytes,
        1,
        &[(32, 48, rows as u32)],
    );
    cases.push((
        "payload_len 2^62",
        assemble(&head, &directory(1, &[rec])),
        ErrorCode::Layout,
    ));
    cases
}

#[test]
fn crafted_files_claiming_huge_sizes_are_rejected_with_their_codes() {
    for (what, file, code) in huge_claims() {
        let got = decode_bytes(&file, DecoderKind::Fast).map(|_| ()).map_err(|e| e.code);
        assert_eq!(got, Err(code), "{what}");
        props::check_parse(&file);
        props::check_decode(&file);
    }
}

#[test]
fn a_prefix_that_ends_with_the_end_magic_fails_the_footer_crc_instead() {
    // The one exception to "every prefix is E_TRUNCATED": when the cut falls right after bytes that
    // spell `IBPEND\r\n` inside the file (here in an entry name), step 3 finds the end magic and
    // the footer CRC check reports the damage (E_FOOTER_CRC) — still a rejection, but not the
    // code a reader of spec 8.2 alone would expect.
    let data = [1u8, 2, 3, 4];
    let t = [("name IBPEND\r\n", ibp_format::Dtype::U8, &[4u64][..], 4, &data[..])];
    let file = ibp_codec::encode_to_vec(&t, &ibp_codec::options::EncodeOptions::default()).unwrap();
    let magic = ibp_format::END_MAGIC;
    let at = file.windows(8).position(|w| w == magic).expect("name holds the magic");
    assert!(at + 8 < file.len() - 32, "the magic inside the file, not the footer's");
    assert_eq!(decode_code(&file[..at + 8]), Err(ErrorCode::FooterCrc));
    // Every other prefix is E_TRUNCATED.
    for len in (0..file.len()).filter(|&l| l != at + 8) {
        assert_eq!(decode_code(&file[..len]), Err(ErrorCode::Truncated), "prefix {len}");
    }
}
