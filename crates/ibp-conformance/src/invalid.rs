//! The invalid vectors (`x-NNNN`): one defect each, made by surgery on a valid base file, with the
//! CRCs that would otherwise fire first recomputed, so that spec 11.1's order names one code.
//!
//! Ids are assigned here by hand, once, and never reused.

use crate::build::{build_file, Built, ChunkSpec, EntrySpec, FileSpec, HeaderFields, RawEntry, RawRef};
use crate::data::{f32_bytes, near_rows};
use crate::prng::SplitMix64;
use crate::surgery::*;
use crate::vector::{invalid, Vector};
use ibp_format::{crc32, Dtype, ErrorCode, WordWidth, CHUNK_MAGIC};
use ErrorCode as E;

/// The invalid vectors' base: two entries.
///
/// - `tensor`: f32 `[6, 5]` (20-byte rows), two chunks of 3 rows, `W = 32`, `A = 8`, `G = 2`. Rows
///   1.0 + k/64 (group 0) and 2.0 + k/32 (group 1) are coded in 8-byte records (35 bits used: 5
///   padding bits and 3 padding bytes); two random rows are raw (24-byte records: 4 padding bytes).
///   Each chunk has 2 bytes of padding before its payload; the name needs 2 bytes of padding.
/// - `u`: u8 `[4, 7]`, one chunk, `W = 8`, `A = 1`, `G = 1`; coded rows of 14 bits (2 bytes).
pub fn base_spec() -> FileSpec {
    let mut rng = SplitMix64::new(0x1B9_0002);
    let mut vals = Vec::new();
    for r in 0..6 {
        for _ in 0..5 {
            let k = rng.below(64) as f32;
            vals.push(match r {
                2 | 5 => f32::from_bits(rng.next_u64() as u32 | 0x4000_0000),
                1 | 4 => 2.0 + k / 32.0,
                _ => 1.0 + k / 64.0,
            });
        }
    }
    let mask = 0xFF81_FFFFu64;
    let chunk = |ids: Vec<u8>| ChunkSpec {
        groups: 2,
        group_ids: ids,
        ..ChunkSpec::single(
            WordWidth::W32,
            3,
            vec![mask; 10],
            [vec![0x3F80_0000; 5], vec![0x4000_0000; 5]].concat(),
        )
    };
    let tensor = EntrySpec {
        name: b"tensor".to_vec(),
        dtype: Dtype::F32,
        shape: vec![6, 5],
        row_bytes: 20,
        data: f32_bytes(&vals),
        chunks: vec![(3, chunk(vec![0, 1, 1])), (3, chunk(vec![0, 1, 0]))],
    };
    // Bit 0 of every column takes both values, so Mask = 0xFE everywhere: 7 + 7 = 14 bits per row.
    let u_base = near_rows(&mut rng, 1, 7, 0, &[]);
    let u_data: Vec<u8> = (0..4)
        .flat_map(|r| {
            u_base
                .iter()
                .enumerate()
                .map(move |(j, b)| (b & 0xFE) | ((r + j) % 2) as u8)
        })
        .collect();
    let u_chunk = ChunkSpec::analysed(&u_data, 7, WordWidth::W8, 0, 1, 1.0);
    let u = EntrySpec {
        name: b"u".to_vec(),
        dtype: Dtype::U8,
        shape: vec![4, 7],
        row_bytes: 7,
        data: u_data,
        chunks: vec![(4, u_chunk)],
    };
    FileSpec {
        header: HeaderFields::default(),
        entries: vec![tensor, u],
    }
}

/// Builds the base and checks that it has every structure the surgery needs.
pub fn base() -> Built {
    let b = build_file(&base_spec());
    let t0 = &b.layout.chunks[0][0];
    assert!(
        t0.padding_at < t0.payload_at,
        "base chunk 0 needs padding before its payload"
    );
    assert!(
        !t0.records[0].raw
            && !t0.records[0].used_bits.is_multiple_of(8)
            && t0.records[0].len * 8 > t0.records[0].used_bits + 8
    );
    assert!(!t0.records[1].raw && t0.records[2].raw);
    let u = &b.layout.chunks[1][0];
    assert!(u.records.iter().all(|r| !r.raw && r.len == 2 && r.used_bits == 14));
    b
}

fn patched(base: &Built, f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut b = base.bytes.clone();
    f(&mut b);
    b
}

/// A file of one u8 entry `[rows, row_bytes]` whose single chunk is exactly `chunk` (raw bytes).
fn file_with_raw_chunk(rows: u64, row_bytes: u64, chunk: &[u8]) -> Vec<u8> {
    let mut out = HeaderFields::default().to_bytes().to_vec();
    out.extend_from_slice(chunk);
    let dir = crate::build::RawDirectory {
        entry_count: 1,
        reserved: 0,
        entries: vec![RawEntry::new(
            b"huge",
            Dtype::U8.code(),
            &[rows, row_bytes],
            rows,
            row_bytes,
            vec![RawRef {
                offset: 32,
                byte_len: chunk.len() as u64,
                row_count: rows as u32,
                reserved: 0,
            }],
        )],
        trailing: Vec::new(),
    };
    let d = dir.to_bytes();
    let at = out.len() as u64;
    out.extend_from_slice(&d);
    out.extend_from_slice(&crate::build::footer_bytes(at, &d));
    out
}

/// Every invalid vector.
pub fn invalid_vectors() -> Vec<Vector> {
    let b = base();
    let l = &b.layout;
    let t0 = l.chunks[0][0].clone();
    let t1 = l.chunks[0][1].clone();
    let uc = l.chunks[1][0].clone();
    let dir_at = l.directory_at;
    let footer_at = l.footer_at;
    let len = b.bytes.len() as u64;
    let tensor_rec = dir_at + l.directory.entry_offset(0);
    let mut v = Vec::new();
    let cut = |n: u64| b.bytes[..n as usize].to_vec();

    // --- Truncation (spec 11.1 step 1, 8.2, 10.1) ---
    let cuts: [(&'static str, u64, &str); 14] = [
        ("x-0001", 0, "an empty file"),
        ("x-0002", 20, "cut inside the header"),
        ("x-0003", 32, "cut at the end of the header"),
        ("x-0004", 52, "cut inside the first chunk header"),
        ("x-0005", 63, "63 bytes: one short of header + footer"),
        ("x-0006", t0.at + 48, "cut at the end of the first chunk header"),
        ("x-0007", t0.bitvals_at + 3, "cut inside the first chunk's metadata"),
        ("x-0008", t0.payload_at, "cut where the first payload starts"),
        ("x-0009", t0.payload_at + 5, "cut inside the first payload"),
        ("x-0010", t1.at, "cut at the boundary between two chunks"),
        ("x-0011", dir_at, "cut where the directory starts"),
        ("x-0012", dir_at + 30, "cut inside the directory's first entry record"),
        ("x-0013", footer_at, "cut where the footer starts"),
        (
            "x-0014",
            len - 1,
            "cut one byte before the end (inside the footer's end magic)",
        ),
    ];
    for (id, n, what) in cuts {
        let clauses: &[&str] = if n < 64 {
            &["11.1", "10.1"]
        } else {
            &["8.2", "11.1", "10.1"]
        };
        v.push(invalid(
            id,
            &format!("truncated: {what} ({n} of {len} bytes)"),
            clauses,
            cut(n),
            E::Truncated,
            &format!("file cut to {n} bytes"),
        ));
    }
    v.push(invalid(
        "x-0015",
        "one byte of trailing garbage after the footer",
        &["8.2", "3.1"],
        patched(&b, |x| x.push(0)),
        E::Truncated,
        "1 byte appended: the file no longer ends with the end magic",
    ));
    v.push(invalid(
        "x-0016",
        "a second copy of the footer appended (the file ends with a valid footer that does not describe it)",
        &["8.1", "3.1"],
        patched(&b, |x| x.extend_from_slice(&b.bytes[footer_at as usize..])),
        E::Layout,
        "directory_offset + directory_len + 32 != file length",
    ));

    // --- Header (step 2) ---
    let hdr = |id, desc: &str, clauses: &[&'static str], f: &dyn Fn(&mut Vec<u8>), code, defect: &str| {
        invalid(
            id,
            desc,
            clauses,
            patched(&b, |x| {
                f(x);
                fix_header_crc(x);
            }),
            code,
            defect,
        )
    };
    v.push(hdr(
        "x-0017",
        "bad magic (second byte 'I' -> 'J'), header CRC recomputed",
        &["4", "11.1"],
        &|x| x[1] = b'J',
        E::Magic,
        "magic byte 1",
    ));
    v.push(hdr(
        "x-0018",
        "magic damaged by a text-mode CRLF -> LF conversion (bytes 4-7 shifted)",
        &["4", "11.1"],
        &|x| put(x, 4, &[0x0A, 0x1A, 0x0A, 0x0A]),
        E::Magic,
        "magic bytes 4..7",
    ));
    v.push(hdr(
        "x-0019",
        "major version 2",
        &["4.1", "12.2"],
        &|x| put_u16(x, 8, 2),
        E::Version,
        "major_version = 2",
    ));
    v.push(hdr(
        "x-0020",
        "major version 0",
        &["4.1"],
        &|x| put_u16(x, 8, 0),
        E::Version,
        "major_version = 0",
    ));
    v.push(invalid(
        "x-0021",
        "header CRC field wrong",
        &["4", "9.2"],
        patched(&b, |x| x[28] ^= 1),
        E::HeaderCrc,
        "header_crc bit 0 flipped",
    ));
    v.push(invalid(
        "x-0022",
        "header damaged (minor version changed, CRC not updated)",
        &["4", "9.2"],
        patched(&b, |x| x[10] = 3),
        E::HeaderCrc,
        "minor_version changed after the CRC was computed",
    ));
    v.push(hdr(
        "x-0023",
        "required-feature bit 0 set",
        &["4.2", "12.1"],
        &|x| put_u32(x, 12, 1),
        E::RequiredFeature,
        "required_features = 0x00000001",
    ));
    v.push(hdr(
        "x-0024",
        "required-feature bit 31 set",
        &["4.2"],
        &|x| put_u32(x, 12, 0x8000_0000),
        E::RequiredFeature,
        "required_features = 0x80000000",
    ));
    v.push(hdr(
        "x-0025",
        "header reserved byte 20 non-zero",
        &["1.4", "4"],
        &|x| x[20] = 1,
        E::Reserved,
        "header byte 20 = 0x01",
    ));
    v.push(hdr(
        "x-0026",
        "header reserved byte 27 non-zero",
        &["1.4", "4"],
        &|x| x[27] = 0x80,
        E::Reserved,
        "header byte 27 = 0x80",
    ));

    // --- Footer (step 3) ---
    let f = footer_at;
    v.push(invalid(
        "x-0027",
        "footer end magic damaged (last byte '\\n' -> '\\r')",
        &["8.2"],
        patched(&b, |x| *x.last_mut().unwrap() = b'\r'),
        E::Truncated,
        "end_magic byte 7",
    ));
    v.push(invalid(
        "x-0028",
        "footer CRC field wrong",
        &["8", "9.2"],
        patched(&b, |x| x[f as usize + 20] ^= 0x40),
        E::FooterCrc,
        "footer_crc bit 6 flipped",
    ));
    v.push(invalid(
        "x-0029",
        "directory_offset 8 bytes too far (footer CRC recomputed)",
        &["8.1"],
        patched(&b, |x| {
            put_u64(x, f, dir_at + 8);
            fix_footer_crc(x);
        }),
        E::Layout,
        "directory_offset + directory_len + 32 = file length + 8",
    ));
    v.push(invalid(
        "x-0030",
        "directory_offset + directory_len wraps around 2^64 to the right value (checked arithmetic must catch it)",
        &["1.6", "8.1"],
        patched(&b, |x| {
            let dlen = footer_at - dir_at;
            put_u64(x, f, u64::MAX - 7);
            put_u64(x, f + 8, dlen + dir_at + 8);
            fix_footer_crc(x);
        }),
        E::Layout,
        "directory_offset = 2^64 - 8: the sum overflows",
    ));
    v.push(invalid(
        "x-0031",
        "directory_len 2^62 (a size far beyond the file: must not be allocated)",
        &["8.1", "10.1"],
        patched(&b, |x| {
            put_u64(x, f + 8, 1 << 62);
            fix_footer_crc(x);
        }),
        E::Layout,
        "directory_len = 2^62",
    ));

    // --- Directory (step 4) ---
    v.push(invalid(
        "x-0032",
        "directory CRC field wrong",
        &["8", "9.2"],
        patched(&b, |x| {
            x[f as usize + 16] ^= 0x01;
            fix_footer_crc(x);
        }),
        E::DirectoryCrc,
        "directory_crc bit 0 flipped (footer CRC recomputed)",
    ));
    v.push(invalid(
        "x-0033",
        "directory damaged (a name byte changed, CRC not updated)",
        &["7", "9.2"],
        patched(&b, |x| {
            x[(tensor_rec + 40) as usize] = b'T';
        }),
        E::DirectoryCrc,
        "name byte changed after the CRC was computed",
    ));
    let dirfix = |id, desc: &str, clauses: &[&'static str], at: u64, val: &[u8], code, defect: &str| {
        let val = val.to_vec();
        invalid(
            id,
            desc,
            clauses,
            patched(&b, move |x| {
                put(x, at, &val);
                fix_directory_crc(x, dir_at);
            }),
            code,
            defect,
        )
    };
    v.push(dirfix(
        "x-0034",
        "directory reserved field non-zero",
        &["1.4", "7"],
        dir_at + 4,
        &[1],
        E::Reserved,
        "directory bytes 4..8 = 1",
    ));
    v.push(dirfix(
        "x-0035",
        "entry_count 2^32 - 1 with 2 records present (must not be allocated up front)",
        &["7", "7.1", "10.1"],
        dir_at,
        &u32::MAX.to_le_bytes(),
        E::Directory,
        "entry_count = 0xFFFFFFFF: entry 2's fixed fields run past the directory",
    ));
    v.push(dirfix(
        "x-0036",
        "entry_count 1 with 2 records present",
        &["7.1"],
        dir_at,
        &1u32.to_le_bytes(),
        E::Directory,
        "entry_count = 1: the records do not fill the directory",
    ));
    v.push(dirfix(
        "x-0037",
        "entry_count 3 with 2 records present",
        &["7.1", "10.1"],
        dir_at,
        &3u32.to_le_bytes(),
        E::Directory,
        "entry_count = 3: entry 2 does not fit",
    ));
    v.push(invalid(
        "x-0038",
        "8 zero bytes after the last entry record",
        &["7.1"],
        with_directory(&b, |d| d.trailing = vec![0; 8]),
        E::Directory,
        "directory has 8 bytes after its last record",
    ));
    v.push(invalid(
        "x-0039",
        "directory_len 0 (not even the 8-byte preamble)",
        &["7", "10.1"],
        {
            let mut x = b.bytes[..dir_at as usize].to_vec();
            x.extend_from_slice(&crate::build::footer_bytes(dir_at, &[]));
            x
        },
        E::Directory,
        "empty directory",
    ));
    for (id, code) in [("x-0040", 0u8), ("x-0041", 16), ("x-0042", 255)] {
        v.push(dirfix(
            id,
            &format!("unknown dtype code {code}"),
            &["2.2", "7"],
            tensor_rec + 2,
            &[code],
            E::Dtype,
            &format!("entry 0 dtype = {code}"),
        ));
    }
    v.push(invalid(
        "x-0043",
        "rank 9 (shape [6,5,1,1,1,1,1,1,1])",
        &["7", "10"],
        with_directory(&b, |d| {
            let e = &mut d.entries[0];
            e.shape.extend([1; 7]);
            e.rank = 9;
            e.repad();
        }),
        E::Limit,
        "entry 0 rank = 9",
    ));
    let rename = |id, desc: &str, name: &[u8], defect: &str| {
        let name = name.to_vec();
        invalid(
            id,
            desc,
            &["2.1", "7.1"],
            with_directory(&b, move |d| {
                let e = &mut d.entries[1];
                e.name_len = name.len() as u16;
                e.name = name;
                e.repad();
            }),
            E::Name,
            defect,
        )
    };
    v.push(rename("x-0044", "empty entry name", b"", "entry 1 name_len = 0"));
    v.push(rename(
        "x-0045",
        "duplicate entry name (entry 1 also called \"tensor\")",
        b"tensor",
        "entry 1 name = entry 0 name",
    ));
    v.push(rename(
        "x-0046",
        "entry name not UTF-8 (byte 0xFF)",
        b"u\xFF",
        "entry 1 name = 75 FF",
    ));
    v.push(rename(
        "x-0047",
        "entry name with an overlong UTF-8 encoding of '/' (C0 AF)",
        b"a\xC0\xAFb",
        "entry 1 name = 61 C0 AF 62",
    ));
    v.push(rename(
        "x-0048",
        "entry name with a UTF-8-encoded surrogate (ED A0 80)",
        b"\xED\xA0\x80",
        "entry 1 name = ED A0 80",
    ));
    v.push(rename(
        "x-0049",
        "entry name of 1025 bytes (limit 1024)",
        &[b'n'; 1025],
        "entry 1 name_len = 1025",
    ));
    v.push(invalid(
        "x-0050",
        "shape [6, 6] for 6 rows of 20 bytes of f32",
        &["2.3", "7"],
        with_directory(&b, |d| d.entries[0].shape = vec![6, 6]),
        E::Shape,
        "entry 0 shape",
    ));
    v.push(invalid(
        "x-0051",
        "row_bytes 7 not a multiple of the u16 element size (u16 [2, 7], 4 rows of 7 bytes)",
        &["2.3"],
        with_directory(&b, |d| {
            d.entries[1].dtype = Dtype::U16.code();
            d.entries[1].shape = vec![2, 7];
        }),
        E::Shape,
        "entry 1 dtype u16 with row_bytes 7",
    ));
    v.push(invalid(
        "x-0052",
        "an empty entry with row_bytes 0",
        &["2.3"],
        with_directory(&b, |d| {
            d.entry_count = 3;
            d.entries
                .push(RawEntry::new(b"z", Dtype::U8.code(), &[0], 0, 0, vec![]));
        }),
        E::Shape,
        "entry 2 row_bytes = 0",
    ));
    v.push(invalid(
        "x-0053",
        "shape whose element count overflows 64 bits ([2^32, 2^32, 6, 5])",
        &["1.6", "2.3"],
        with_directory(&b, |d| {
            let e = &mut d.entries[0];
            e.shape = vec![1 << 32, 1 << 32, 6, 5];
            e.rank = 4;
            e.repad();
        }),
        E::Shape,
        "element count overflows",
    ));
    v.push(invalid(
        "x-0054",
        "shape whose byte size overflows 64 bits (f32 [2^62]: 2^64 bytes)",
        &["1.6", "2.3"],
        with_directory(&b, |d| {
            let e = &mut d.entries[0];
            e.shape = vec![1 << 62];
            e.rank = 1;
            e.repad();
        }),
        E::Shape,
        "element count * 4 overflows",
    ));
    v.push(invalid(
        "x-0055",
        "row_bytes 2^24 + 1 (u8 [1, 2^24 + 1], no chunks, so it declares 16 MiB it does not hold)",
        &["10", "10.1"],
        with_directory(&b, |d| {
            d.entry_count = 3;
            d.entries.push(RawEntry::new(
                b"big",
                Dtype::U8.code(),
                &[1, (1 << 24) + 1],
                1,
                (1 << 24) + 1,
                vec![],
            ));
        }),
        E::Limit,
        "entry 2 row_bytes = 2^24 + 1",
    ));
    v.push(invalid(
        "x-0056",
        "non-zero name padding",
        &["1.5", "7"],
        with_directory(&b, |d| d.entries[0].padding[1] = 0x20),
        E::Padding,
        "entry 0 name padding byte 1 = 0x20",
    ));
    let refs_at = tensor_rec + 24 + 16 + 8;
    v.push(dirfix(
        "x-0057",
        "chunk_count 2^32 - 1 (references must not be allocated up front)",
        &["7", "10.1"],
        tensor_rec + 4,
        &u32::MAX.to_le_bytes(),
        E::Directory,
        "entry 0 chunk_count = 0xFFFFFFFF",
    ));
    v.push(dirfix(
        "x-0058",
        "chunk reference reserved field non-zero",
        &["1.4", "7"],
        refs_at + 20,
        &[1],
        E::Reserved,
        "entry 0 chunk 0 reserved = 1",
    ));
    v.push(invalid(
        "x-0059",
        "a chunk reference with row_count 0 (the counts still add up)",
        &["7"],
        with_directory(&b, |d| {
            d.entries[0].refs[0].row_count = 0;
            d.entries[0].refs[1].row_count = 6;
        }),
        E::Layout,
        "entry 0 chunk 0 row_count = 0",
    ));
    v.push(dirfix(
        "x-0060",
        "chunk row counts add up to 5, the entry has 6 rows",
        &["7.1"],
        refs_at + 16,
        &2u32.to_le_bytes(),
        E::Layout,
        "entry 0 chunk 0 row_count = 2",
    ));
    v.push(invalid(
        "x-0061",
        "a chunk of 2^20 + 1 rows (u8 [2^20 + 1], 1-byte rows)",
        &["10", "10.1"],
        with_directory(&b, |d| {
            d.entry_count = 3;
            d.entries.push(RawEntry::new(
                b"long",
                Dtype::U8.code(),
                &[(1 << 20) + 1],
                (1 << 20) + 1,
                1,
                vec![RawRef {
                    offset: dir_at,
                    byte_len: 48,
                    row_count: (1 << 20) + 1,
                    reserved: 0,
                }],
            ));
        }),
        E::Limit,
        "entry 2 chunk 0 row_count = 2^20 + 1",
    ));
    v.push(dirfix(
        "x-0062",
        "the first chunk does not start at offset 32",
        &["3.1"],
        refs_at,
        &40u64.to_le_bytes(),
        E::Layout,
        "entry 0 chunk 0 offset = 40",
    ));
    v.push(invalid(
        "x-0063",
        "chunks of one entry listed out of order",
        &["3.1", "2.5"],
        with_directory(&b, |d| d.entries[0].refs.swap(0, 1)),
        E::Layout,
        "entry 0 chunk references swapped",
    ));
    v.push(invalid(
        "x-0064",
        "entries listed in an order other than their chunks'",
        &["3.1"],
        with_directory(&b, |d| d.entries.swap(0, 1)),
        E::Layout,
        "entry records swapped",
    ));
    v.push(invalid(
        "x-0065",
        "overlapping chunks (chunk 1 starts 8 bytes inside chunk 0)",
        &["3.1"],
        with_directory(&b, |d| {
            d.entries[0].refs[1].offset -= 8;
            d.entries[0].refs[1].byte_len += 8;
        }),
        E::Layout,
        "entry 0 chunk 1 offset 8 bytes early",
    ));
    v.push(invalid(
        "x-0066",
        "a hole of 8 bytes between two chunks",
        &["3.1"],
        insert_before_directory(&b, t1.at, &[0; 8], true),
        E::Layout,
        "8 bytes before chunk 1",
    ));
    v.push(invalid(
        "x-0067",
        "a hole of 8 bytes between the last chunk and the directory",
        &["3.1"],
        insert_before_directory(&b, dir_at, &[0; 8], false),
        E::Layout,
        "8 bytes before the directory",
    ));
    v.push(invalid(
        "x-0068",
        "chunk byte_len 2^64 - 1 (offset + byte_len overflows)",
        &["1.6", "3.1"],
        with_directory(&b, |d| d.entries[1].refs[0].byte_len = u64::MAX),
        E::Layout,
        "entry 1 chunk 0 byte_len = 2^64 - 1",
    ));
    v.push(invalid(
        "x-0069",
        "chunk offset 2^63 (out of range)",
        &["3.1"],
        with_directory(&b, |d| d.entries[1].refs[0].offset = 1 << 63),
        E::Layout,
        "entry 1 chunk 0 offset = 2^63",
    ));
    v.push(invalid(
        "x-0070",
        "the last chunk's byte_len runs 8 bytes into the directory",
        &["3.1"],
        with_directory(&b, |d| d.entries[1].refs[0].byte_len += 8),
        E::Layout,
        "entry 1 chunk 0 byte_len + 8",
    ));

    // --- Chunks (step 5) ---
    let chunk_patch = |id,
                       desc: &str,
                       clauses: &[&'static str],
                       c: &crate::build::ChunkLayout,
                       at: u64,
                       val: &[u8],
                       code,
                       defect: &str| {
        let (val, c) = (val.to_vec(), c.clone());
        invalid(
            id,
            desc,
            clauses,
            patched(&b, move |x| {
                put(x, at, &val);
                fix_chunk_crc(x, &c);
            }),
            code,
            defect,
        )
    };
    v.push(invalid(
        "x-0071",
        "a chunk of 40 bytes: shorter than its 48-byte header",
        &["5.1", "11.1"],
        {
            let mut x = b.bytes[..uc.at as usize].to_vec();
            x.extend_from_slice(&b.bytes[uc.at as usize..uc.at as usize + 40]);
            let mut dir = l.directory.clone();
            dir.entries[1].refs[0].byte_len = 40;
            let d = dir.to_bytes();
            let at = x.len() as u64;
            x.extend_from_slice(&d);
            x.extend_from_slice(&crate::build::footer_bytes(at, &d));
            x
        },
        E::Layout,
        "entry 1 chunk 0 byte_len = 40",
    ));
    let c0 = t0.at;
    v.push(chunk_patch(
        "x-0072",
        "chunk magic IBPD",
        &["5.1"],
        &t0,
        c0 + 3,
        b"D",
        E::ChunkMagic,
        "chunk 0 magic byte 3",
    ));
    v.push(chunk_patch(
        "x-0073",
        "chunk header reserved byte 7 non-zero",
        &["1.4", "5.1"],
        &t0,
        c0 + 7,
        &[1],
        E::Reserved,
        "chunk 0 byte 7 = 1",
    ));
    v.push(chunk_patch(
        "x-0074",
        "chunk header reserved u16 at 10 non-zero",
        &["1.4", "5.1"],
        &t0,
        c0 + 10,
        &[0, 1],
        E::Reserved,
        "chunk 0 bytes 10..12 = 0x0100",
    ));
    v.push(chunk_patch(
        "x-0075",
        "chunk header reserved u32 at 40 non-zero",
        &["1.4", "5.1"],
        &t0,
        c0 + 40,
        &[0, 0, 0, 0x80],
        E::Reserved,
        "chunk 0 bytes 40..44 = 0x80000000",
    ));
    v.push(chunk_patch(
        "x-0076",
        "word_bits 24",
        &["5.1"],
        &t0,
        c0 + 4,
        &[24],
        E::ChunkHeader,
        "chunk 0 word_bits = 24",
    ));
    v.push(chunk_patch(
        "x-0077",
        "word_bits 16 where words_per_row 5 makes 10-byte rows, not 20",
        &["2.4", "5.1"],
        &t0,
        c0 + 4,
        &[16],
        E::ChunkHeader,
        "chunk 0 word_bits = 16",
    ));
    v.push(chunk_patch(
        "x-0078",
        "align_log2 8",
        &["5.1"],
        &t0,
        c0 + 5,
        &[8],
        E::ChunkHeader,
        "chunk 0 align_log2 = 8",
    ));
    v.push(chunk_patch(
        "x-0079",
        "length_bytes 3",
        &["5.1"],
        &t0,
        c0 + 6,
        &[3],
        E::ChunkHeader,
        "chunk 0 length_bytes = 3",
    ));
    v.push(chunk_patch(
        "x-0080",
        "length_bytes 0",
        &["5.1"],
        &t0,
        c0 + 6,
        &[0],
        E::ChunkHeader,
        "chunk 0 length_bytes = 0",
    ));
    // x-0081 (group_count 0 -> E_CHUNK_HEADER) is retired: G = 0 became a raw chunk (spec 5.5); x-0112.
    v.push(chunk_patch(
        "x-0082",
        "group_count 257",
        &["5.1", "10"],
        &t0,
        c0 + 8,
        &257u16.to_le_bytes(),
        E::ChunkHeader,
        "chunk 0 group_count = 257",
    ));
    v.push(chunk_patch(
        "x-0083",
        "chunk row_count 4, the directory says 3",
        &["5.1"],
        &t0,
        c0 + 12,
        &4u32.to_le_bytes(),
        E::ChunkHeader,
        "chunk 0 row_count = 4",
    ));
    v.push(chunk_patch(
        "x-0084",
        "chunk row_count 2^32 - 1 (must not be allocated)",
        &["5.1", "10.1"],
        &t0,
        c0 + 12,
        &u32::MAX.to_le_bytes(),
        E::ChunkHeader,
        "chunk 0 row_count = 0xFFFFFFFF",
    ));
    v.push(chunk_patch(
        "x-0085",
        "words_per_row 6 for 20-byte rows of 32-bit words",
        &["5.1"],
        &t0,
        c0 + 16,
        &6u32.to_le_bytes(),
        E::ChunkHeader,
        "chunk 0 words_per_row = 6",
    ));
    v.push(chunk_patch(
        "x-0086",
        "words_per_row 2^32 - 1 (must not be allocated)",
        &["5.1", "10.1"],
        &t0,
        c0 + 16,
        &u32::MAX.to_le_bytes(),
        E::ChunkHeader,
        "chunk 0 words_per_row = 0xFFFFFFFF",
    ));
    v.push(invalid(
        "x-0087",
        "a chunk that would decode to 2^33 bytes (2^20 rows of 8 KiB) in a 48-byte chunk",
        &["10", "10.2"],
        {
            let mut h = Vec::new();
            h.extend_from_slice(&CHUNK_MAGIC);
            h.extend_from_slice(&[8, 0, 1, 0]);
            h.extend_from_slice(&1u16.to_le_bytes());
            h.extend_from_slice(&0u16.to_le_bytes());
            h.extend_from_slice(&(1u32 << 20).to_le_bytes());
            h.extend_from_slice(&8192u32.to_le_bytes());
            h.extend_from_slice(&0u32.to_le_bytes());
            h.extend_from_slice(&0u64.to_le_bytes());
            h.extend_from_slice(&0u32.to_le_bytes()); // meta_len (the formula wants more: checked later)
            h.extend_from_slice(&crc32(&[]).to_le_bytes());
            h.extend_from_slice(&0u32.to_le_bytes());
            let crc = crc32(&h[..44]);
            h.extend_from_slice(&crc.to_le_bytes());
            file_with_raw_chunk(1 << 20, 8192, &h)
        },
        E::Limit,
        "chunk decoded size 2^33 > 2^32",
    ));
    v.push(chunk_patch(
        "x-0088",
        "meta_len one more than the formula",
        &["5.2"],
        &t0,
        c0 + 32,
        &(get_u32(&b.bytes, c0 + 32) + 1).to_le_bytes(),
        E::Layout,
        "chunk 0 meta_len + 1",
    ));
    v.push(chunk_patch(
        "x-0089",
        "meta_len 2^32 - 1",
        &["5.2", "10.1"],
        &t0,
        c0 + 32,
        &u32::MAX.to_le_bytes(),
        E::Layout,
        "chunk 0 meta_len = 0xFFFFFFFF",
    ));
    let payload_len = t0.end - t0.payload_at;
    v.push(chunk_patch(
        "x-0090",
        "payload_len 8 more than the chunk holds",
        &["5.4"],
        &t0,
        c0 + 24,
        &(payload_len + 8).to_le_bytes(),
        E::Layout,
        "chunk 0 payload_len + 8",
    ));
    v.push(chunk_patch(
        "x-0091",
        "payload_len 2^62 (a size far beyond the file)",
        &["5.4", "10.1"],
        &t0,
        c0 + 24,
        &(1u64 << 62).to_le_bytes(),
        E::Layout,
        "chunk 0 payload_len = 2^62",
    ));
    v.push(chunk_patch(
        "x-0092",
        "payload_len 2^64 - 1 (payload start + payload_len overflows)",
        &["1.6", "5.4"],
        &t0,
        c0 + 24,
        &u64::MAX.to_le_bytes(),
        E::Layout,
        "chunk 0 payload_len = 2^64 - 1",
    ));
    v.push(invalid(
        "x-0093",
        "chunk metadata CRC field wrong",
        &["5.1", "9.2"],
        patched(&b, |x| x[(c0 + 44) as usize] ^= 0x10),
        E::ChunkCrc,
        "chunk 0 meta_crc bit 4 flipped",
    ));
    v.push(invalid(
        "x-0094",
        "chunk metadata damaged (a Mask byte changed, CRC not updated)",
        &["5.2", "9.2"],
        patched(&b, |x| x[t0.masks_at as usize + 2] ^= 0x04),
        E::ChunkCrc,
        "chunk 0 Mask[0][0] bit 18 flipped",
    ));
    v.push(invalid(
        "x-0095",
        "chunk padding damaged (CRC not updated)",
        &["5.4", "9.2"],
        patched(&b, |x| x[t0.padding_at as usize] = 1),
        E::ChunkCrc,
        "chunk 0 padding byte changed after the CRC was computed",
    ));
    v.push(chunk_patch(
        "x-0096",
        "a Bitval bit outside its Mask (group 0, word 0, bit 17)",
        &["2.6"],
        &t0,
        t0.bitvals_at,
        &(0x3F80_0000u32 | 1 << 17).to_le_bytes(),
        E::BitvalOutsideMask,
        "chunk 0 Bitval[0][0] = 0x3F820000, Mask 0xFF81FFFF",
    ));
    v.push(chunk_patch(
        "x-0097",
        "group id 2 in a chunk of 2 groups",
        &["5.2"],
        &t0,
        t0.group_ids_at + 1,
        &[2],
        E::GroupId,
        "chunk 0 row 1 group id = 2",
    ));
    v.push(chunk_patch(
        "x-0098",
        "group id 255 in a chunk of 2 groups",
        &["5.2"],
        &t1,
        t1.group_ids_at + 2,
        &[255],
        E::GroupId,
        "chunk 1 row 2 group id = 255",
    ));
    v.push(chunk_patch(
        "x-0099",
        "non-zero padding between metadata and payload",
        &["1.5", "5.4"],
        &t0,
        t0.padding_at + 1,
        &[0x01],
        E::Padding,
        "chunk 0 padding byte 1 = 1",
    ));
    // Row lengths: chunk 0 stores [0, 0, 2] with length_base 1 (8, 8 and 24 bytes).
    v.push(chunk_patch(
        "x-0100",
        "a record length 32 > align_up(row_bytes, A) = 24",
        &["5.3"],
        &t0,
        t0.lengths_at + 2,
        &[3],
        E::RowLength,
        "chunk 0 row 2 stored length 3 (32 bytes)",
    ));
    v.push(chunk_patch(
        "x-0101",
        "a record length of 0 bytes (length_base 0)",
        &["5.3"],
        &t0,
        c0 + 20,
        &0u32.to_le_bytes(),
        E::RowLength,
        "chunk 0 length_base = 0: row 0 has 0 bytes",
    ));
    v.push(chunk_patch(
        "x-0102",
        "length_base 2^32 - 1 (record lengths far beyond the row)",
        &["5.3", "10.1"],
        &t0,
        c0 + 20,
        &u32::MAX.to_le_bytes(),
        E::RowLength,
        "chunk 0 length_base = 0xFFFFFFFF",
    ));
    v.push(chunk_patch(
        "x-0103",
        "record lengths add up to more than payload_len",
        &["5.3"],
        &t0,
        t0.lengths_at,
        &[1],
        E::Layout,
        "chunk 0 row 0 stored length 1 (16 bytes): sum 48 != 40",
    ));
    v.push(invalid(
        "x-0104",
        "payload CRC field wrong (metadata CRC recomputed)",
        &["5.1", "9.2"],
        patched(&b, |x| {
            x[(c0 + 36) as usize] ^= 0x02;
            fix_chunk_crc(x, &t0);
        }),
        E::PayloadCrc,
        "chunk 0 payload_crc bit 1 flipped",
    ));
    v.push(invalid(
        "x-0105",
        "payload damaged (a raw row byte changed, CRC not updated)",
        &["9.2", "9.3"],
        patched(&b, |x| x[t0.records[2].at as usize] ^= 0x80),
        E::PayloadCrc,
        "chunk 0 row 2 byte 0 changed",
    ));
    // Row contents (payload CRC recomputed).
    let row_patch = |id,
                     desc: &str,
                     clauses: &[&'static str],
                     c: &crate::build::ChunkLayout,
                     at: u64,
                     xor: u8,
                     code,
                     defect: &str| {
        let c = c.clone();
        invalid(
            id,
            desc,
            clauses,
            patched(&b, move |x| {
                x[at as usize] ^= xor;
                fix_payload_crc(x, &c);
            }),
            code,
            defect,
        )
    };
    let r0 = &t0.records[0];
    v.push(row_patch(
        "x-0106",
        "non-zero padding bit after T in a coded row (bit 35 of a 35-bit row)",
        &["1.5", "6.2"],
        &t0,
        r0.at + 4,
        0x08,
        E::Padding,
        "chunk 0 row 0 stream bit 35 set",
    ));
    v.push(row_patch(
        "x-0107",
        "non-zero alignment padding byte in a coded row (A = 8)",
        &["1.5", "6.2"],
        &t0,
        r0.at + 6,
        0x01,
        E::Padding,
        "chunk 0 row 0 byte 6 = 1",
    ));
    v.push(row_patch(
        "x-0108",
        "non-zero tail of a raw row (bytes 20..24 of a 24-byte record)",
        &["1.5", "6.1"],
        &t0,
        t0.records[2].at + 22,
        0x01,
        E::Padding,
        "chunk 0 row 2 byte 22 = 1",
    ));
    v.push(row_patch(
        "x-0109",
        "non-zero padding bits of a 14-bit coded row (A = 1)",
        &["1.5", "6.2"],
        &uc,
        uc.records[1].at + 1,
        0x80,
        E::Padding,
        "entry 1 row 1 stream bit 15 set",
    ));
    let mut spec = base_spec();
    spec.entries[0].chunks[0].1.record_delta_units = vec![(1, 1)];
    v.push(invalid(
        "x-0110",
        "a coded row stored in 16 bytes where its 35 bits need align_up(5, 8) = 8",
        &["6.2", "5.3"],
        build_file(&spec).bytes,
        E::RowLength,
        "chunk 0 row 1 record one unit of A too long",
    ));
    let mut spec = base_spec();
    spec.entries[1].chunks[0].1.record_delta_units = vec![(2, -1)];
    v.push(invalid(
        "x-0111",
        "a coded row of 14 bits stored in 1 byte",
        &["6.2", "5.3"],
        build_file(&spec).bytes,
        E::RowLength,
        "entry 1 row 2 record one byte short",
    ));

    // --- Raw chunks (spec 5.5) and partial last words (spec 2.4) ---
    v.push(chunk_patch(
        "x-0112",
        "group_count 0 (a raw chunk) in a chunk whose meta_len still counts 2 groups of masks, bitvals and group ids",
        &["5.1", "5.2", "5.5"],
        &t0,
        c0 + 8,
        &[0, 0],
        E::Layout,
        "chunk 0 group_count = 0: meta_len 86 != 3",
    ));
    v.push(invalid(
        "x-0113",
        "a raw chunk (G = 0) with a 19-byte record for a 20-byte row",
        &["5.5", "5.3"],
        build_file(&raw_chunk_spec(vec![(1, -1)], 0)).bytes,
        E::RowLength,
        "raw chunk row 1 record 19 bytes, align_up(row_bytes, A) = 20",
    ));
    let built = build_file(&raw_chunk_spec(Vec::new(), 4));
    let rc = built.layout.chunks[0][0].clone();
    v.push(invalid(
        "x-0116",
        "non-zero padding in a raw chunk's record (20-byte row in a 32-byte record, A = 16)",
        &["5.5", "6.1", "1.5"],
        patched(&built, |x| {
            x[(rc.records[0].at + 25) as usize] = 0xFF;
            fix_payload_crc(x, &rc);
        }),
        E::Padding,
        "raw chunk row 0 byte 25 = 0xFF",
    ));
    // Spec 8.2: a cut that happens to leave the end magic last is caught by the footer CRC.
    let mut spec = raw_chunk_spec(Vec::new(), 0);
    spec.entries[0].name = b"IBPEND\r\n".to_vec();
    let built = build_file(&spec);
    let name_end = built.layout.directory_at + built.layout.directory.entry_offset(0) + 24 + 16 + 8;
    assert_eq!(
        &built.bytes[name_end as usize - 8..name_end as usize],
        &ibp_format::END_MAGIC
    );
    v.push(invalid(
        "x-0117",
        "truncated right after an entry name that reads IBPEND\\r\\n: the file ends with the end magic by chance",
        &["8.2", "10.1"],
        built.bytes[..name_end as usize].to_vec(),
        E::FooterCrc,
        "file cut after the directory's name bytes `IBPEND\\r\\n`: its last 32 bytes are no footer",
    ));
    let (spec, field_bit) = partial_word_spec(true);
    let built = build_file(&spec);
    let pc = built.layout.chunks[0][0].clone();
    let at = pc.records[0].at + field_bit / 8;
    v.push(invalid(
        "x-0114",
        "a partial last word (3 of 4 bytes, W = 32 over 7-byte rows) stored whole (P = 0) with its high byte non-zero",
        &["2.4", "6.2", "1.5"],
        patched(&built, |x| {
            x[at as usize] ^= 1 << (field_bit % 8);
            fix_payload_crc(x, &pc);
        }),
        E::Padding,
        "row 0 word 1 field bit 24 (byte 3 of a 3-byte partial word) set",
    ));
    let (spec, _) = partial_word_spec(false);
    let built = build_file(&spec);
    let pc = built.layout.chunks[0][0].clone();
    v.push(invalid(
        "x-0115",
        "a Bitval bit above the row's bytes in a partial last word (inside its Mask): coded rows decode past the row",
        &["2.4", "2.6", "6.2", "1.5"],
        patched(&built, |x| {
            x[(pc.bitvals_at + 4 + 3) as usize] |= 0x80;
            fix_chunk_crc(x, &pc);
        }),
        E::Padding,
        "Bitval[0][1] bit 31 set: row 0 decodes word 1 with a bit above the row's 7 bytes",
    ));
    v
}

/// One f32 `[4, 5]` entry in a raw chunk (`G = 0`, `A = 2^align_log2`), with `record_delta_units` applied.
pub fn raw_chunk_spec(deltas: Vec<(usize, i64)>, align_log2: u8) -> FileSpec {
    let mut rng = SplitMix64::new(0x1B9_0003);
    let data = rng.bytes(80);
    let mut chunk = ChunkSpec::raw(WordWidth::W32, align_log2);
    chunk.record_delta_units = deltas;
    FileSpec {
        header: HeaderFields::default(),
        entries: vec![EntrySpec {
            name: b"raw".to_vec(),
            dtype: Dtype::F32,
            shape: vec![4, 5],
            row_bytes: 20,
            data,
            chunks: vec![(4, chunk)],
        }],
    }
}

/// One u8 `[6, 7]` entry coded with `W = 32` (2 words, the second partial: 3 bytes), exact masks;
/// with `decline`, word 1 is always stored whole (P = 0). Returns the spec and the stream bit of
/// row 0's word-1 field bit 24 (the partial word's first bit above the row).
pub fn partial_word_spec(decline: bool) -> (FileSpec, u64) {
    let mut rng = SplitMix64::new(0x1B9_0004);
    let data = near_rows(&mut rng, 6, 7, 1, &[]);
    let mut chunk = ChunkSpec::analysed(&data, 7, WordWidth::W32, 0, 1, 1.0);
    if decline {
        chunk.decline_words = vec![1];
    }
    let f0 = 32 - chunk.masks[0].count_ones() as u64;
    let spec = FileSpec {
        header: HeaderFields::default(),
        entries: vec![EntrySpec {
            name: b"partial".to_vec(),
            dtype: Dtype::U8,
            shape: vec![6, 7],
            row_bytes: 7,
            data,
            chunks: vec![(6, chunk)],
        }],
    };
    (spec, 2 + f0 + 24)
}
