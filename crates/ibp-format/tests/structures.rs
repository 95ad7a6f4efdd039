//! Header, footer, directory and chunk metadata: round trips and each rejection rule's code.

use ibp_format::*;
use proptest::prelude::*;

#[test]
fn crc32_has_the_spec_check_value() {
    assert_eq!(crc32(b"123456789"), CRC32_CHECK);
}

#[test]
fn header_round_trips_and_rejects_in_spec_order() {
    let h = Header {
        optional_features: 0x8000_0001,
        minor_version: 3,
        ..Header::default()
    };
    let bytes = h.to_bytes();
    assert_eq!(Header::parse(&bytes).unwrap(), h);
    assert_eq!(Header::parse(&bytes[..31]).unwrap_err().code, ErrorCode::Truncated);
    let mut bad = bytes;
    bad[1] = b'X';
    assert_eq!(Header::parse(&bad).unwrap_err().code, ErrorCode::Magic);
    let mut bad = bytes;
    bad[8] = 2; // major 2 is refused before the CRC is looked at
    assert_eq!(Header::parse(&bad).unwrap_err().code, ErrorCode::Version);
    let mut bad = bytes;
    bad[16] ^= 1;
    assert_eq!(Header::parse(&bad).unwrap_err().code, ErrorCode::HeaderCrc);
    let with_required = Header {
        required_features: 4,
        ..Header::default()
    }
    .to_bytes();
    assert_eq!(
        Header::parse(&with_required).unwrap_err().code,
        ErrorCode::RequiredFeature
    );
    let mut reserved = bytes;
    reserved[21] = 1;
    let crc = crc32(&reserved[..28]);
    reserved[28..].copy_from_slice(&crc.to_le_bytes());
    assert_eq!(Header::parse(&reserved).unwrap_err().code, ErrorCode::Reserved);
}

#[test]
fn footer_round_trips_and_checks_the_layout() {
    let f = Footer {
        directory_offset: 100,
        directory_len: 8,
        directory_crc: 7,
    };
    let bytes = f.to_bytes();
    assert_eq!(Footer::parse(&bytes, 140).unwrap(), f);
    assert_eq!(Footer::parse(&bytes, 141).unwrap_err().code, ErrorCode::Layout);
    let mut bad = bytes;
    bad[31] = 0;
    assert_eq!(Footer::parse(&bad, 140).unwrap_err().code, ErrorCode::Truncated);
    let mut bad = bytes;
    bad[3] ^= 0x10;
    assert_eq!(Footer::parse(&bad, 140).unwrap_err().code, ErrorCode::FooterCrc);
    let overflow = Footer {
        directory_offset: u64::MAX - 4,
        directory_len: 8,
        directory_crc: 0,
    }
    .to_bytes();
    assert_eq!(Footer::parse(&overflow, 140).unwrap_err().code, ErrorCode::Layout);
}

fn one_entry_directory() -> Directory {
    Directory {
        entries: vec![EntryInfo {
            name: "w".into(),
            dtype: Dtype::Bf16,
            shape: vec![3, 5],
            row_count: 3,
            row_bytes: 10,
            chunks: vec![
                ChunkRef {
                    offset: 32,
                    byte_len: 60,
                    row_count: 2,
                },
                ChunkRef {
                    offset: 92,
                    byte_len: 60,
                    row_count: 1,
                },
            ],
        }],
    }
}

#[test]
fn directory_round_trips_and_rejects_each_rule() {
    let dir = one_entry_directory();
    let bytes = dir.to_bytes();
    assert_eq!(bytes.len() % 8, 0);
    assert_eq!(Directory::parse(&bytes, 152).unwrap(), dir);
    // A hole before the directory, and chunks that run past it.
    assert_eq!(Directory::parse(&bytes, 160).unwrap_err().code, ErrorCode::Layout);
    assert_eq!(Directory::parse(&bytes, 140).unwrap_err().code, ErrorCode::Layout);
    // Bytes left over, or records cut short.
    let mut longer = bytes.clone();
    longer.extend_from_slice(&[0; 8]);
    assert_eq!(Directory::parse(&longer, 152).unwrap_err().code, ErrorCode::Directory);
    assert_eq!(
        Directory::parse(&bytes[..bytes.len() - 1], 152).unwrap_err().code,
        ErrorCode::Directory
    );
    // Unknown dtype, bad name, shape mismatch, duplicate names.
    let mut bad = bytes.clone();
    bad[8 + 2] = 99;
    assert_eq!(Directory::parse(&bad, 152).unwrap_err().code, ErrorCode::Dtype);
    let mut bad = bytes.clone();
    bad[8 + 24 + 16] = 0xFF; // the name byte, not UTF-8
    assert_eq!(Directory::parse(&bad, 152).unwrap_err().code, ErrorCode::Name);
    let mut wrong_shape = dir.clone();
    wrong_shape.entries[0].shape = vec![3, 4];
    assert_eq!(
        Directory::parse(&wrong_shape.to_bytes(), 152).unwrap_err().code,
        ErrorCode::Shape
    );
    let mut twice = dir.clone();
    let mut second = twice.entries[0].clone();
    second.chunks = vec![];
    second.row_count = 0;
    second.shape = vec![0, 5];
    twice.entries.push(second);
    assert_eq!(
        Directory::parse(&twice.to_bytes(), 152).unwrap_err().code,
        ErrorCode::Name
    );
    // Huge counts are rejected without allocating for them.
    let mut bomb = bytes.clone();
    bomb[0..4].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_eq!(Directory::parse(&bomb, 152).unwrap_err().code, ErrorCode::Directory);
    let mut rows = dir.clone();
    rows.entries[0].chunks[1].row_count = 2;
    assert_eq!(
        Directory::parse(&rows.to_bytes(), 152).unwrap_err().code,
        ErrorCode::Layout
    );
}

/// A chunk of 2 rows of 5 bf16 values with 16-bit words: one raw row and one coded row.
fn sample_chunk(groups: u32) -> ChunkMeta {
    let raw = 10u64; // raw_padded with A = 1
    let (base, lb, lengths, offsets) = ChunkMeta::index_from_record_lengths(&[raw, 3], 1);
    ChunkMeta {
        word_width: WordWidth::W16,
        align_log2: 0,
        length_bytes: lb,
        group_count: groups,
        row_count: 2,
        words_per_row: 5,
        row_bytes: 10,
        length_base: base,
        payload_len: 13,
        payload_crc: 0x1234_5678,
        masks: vec![0xFF00; 5 * groups as usize],
        bitvals: vec![0x3F00; 5 * groups as usize],
        group_ids: if groups > 1 { vec![0, 1] } else { vec![] },
        row_lengths: lengths,
        row_offsets: offsets,
    }
}

#[test]
fn chunk_metadata_round_trips_at_every_alignment_and_group_count() {
    for groups in [1, 2] {
        for offset in [32u64, 33, 47, 100] {
            let meta = sample_chunk(groups);
            let head = meta.to_bytes(offset);
            let byte_len = head.len() as u64 + meta.payload_len;
            let parsed = ChunkMeta::parse(&head, offset, byte_len, 2, 10).unwrap();
            assert_eq!(parsed, meta);
            assert!(parsed.is_raw(0) && !parsed.is_raw(1));
            assert_eq!(parsed.record_range(1), 10..13);
        }
    }
}

#[test]
fn chunk_metadata_rejects_each_rule() {
    let meta = sample_chunk(2);
    let head = meta.to_bytes(32);
    let len = head.len() as u64 + 13;
    let parse = |b: &[u8]| ChunkMeta::parse(b, 32, len, 2, 10).unwrap_err().code;
    let fix_crc = |b: &mut Vec<u8>| {
        let mut h = crc32fast::Hasher::new();
        h.update(&b[..44]);
        h.update(&b[48..]);
        let c = h.finalize();
        b[44..48].copy_from_slice(&c.to_le_bytes());
    };
    let mut b = head.clone();
    b[0] = b'X';
    assert_eq!(parse(&b), ErrorCode::ChunkMagic);
    let mut b = head.clone();
    b[4] = 24;
    assert_eq!(parse(&b), ErrorCode::ChunkHeader);
    let mut b = head.clone();
    b[7] = 1;
    assert_eq!(parse(&b), ErrorCode::Reserved);
    let mut b = head.clone();
    b[50] ^= 1;
    assert_eq!(parse(&b), ErrorCode::ChunkCrc);
    // Bitval bit outside its Mask (CRC recomputed so that only the defect remains).
    let mut b = head.clone();
    b[48 + 20] = 0x01; // first bitval word, low byte: outside Mask 0xFF00
    fix_crc(&mut b);
    assert_eq!(parse(&b), ErrorCode::BitvalOutsideMask);
    let mut b = head.clone();
    b[48 + 40] = 2; // group id of row 0: only 2 groups
    fix_crc(&mut b);
    assert_eq!(parse(&b), ErrorCode::GroupId);
    assert_eq!(
        ChunkMeta::parse(&head, 32, len + 1, 2, 10).unwrap_err().code,
        ErrorCode::Layout
    );
    assert_eq!(
        ChunkMeta::parse(&head, 32, len, 3, 10).unwrap_err().code,
        ErrorCode::ChunkHeader
    );
    assert_eq!(
        ChunkMeta::parse(&head, 32, len, 2, 12).unwrap_err().code,
        ErrorCode::ChunkHeader
    );
}

#[test]
fn partial_last_words_and_raw_chunks_are_accepted() {
    // 10-byte rows with 64-bit words: n = 2, the last word holds 2 bytes.
    let mut meta = sample_chunk(1);
    meta.word_width = WordWidth::W64;
    meta.words_per_row = 2;
    meta.masks = vec![u64::MAX; 2];
    meta.bitvals = vec![0; 2];
    let head = meta.to_bytes(32);
    let parsed = ChunkMeta::parse(&head, 32, head.len() as u64 + 13, 2, 10).unwrap();
    assert_eq!(parsed.last_word_bytes(), 2);
    // A raw chunk: no masks, every row raw.
    let (base, lb, lengths, offsets) = ChunkMeta::index_from_record_lengths(&[10, 10], 1);
    let raw = ChunkMeta {
        group_count: 0,
        masks: vec![],
        bitvals: vec![],
        group_ids: vec![],
        length_base: base,
        length_bytes: lb,
        row_lengths: lengths,
        row_offsets: offsets,
        payload_len: 20,
        ..sample_chunk(1)
    };
    let head = raw.to_bytes(32);
    let parsed = ChunkMeta::parse(&head, 32, head.len() as u64 + 20, 2, 10).unwrap();
    assert!(parsed.is_raw_chunk() && parsed.is_raw(0) && parsed.is_raw(1));
    assert!(parsed.mask(0).is_empty());
    // A coded row in a raw chunk is refused.
    let (base, lb, lengths, offsets) = ChunkMeta::index_from_record_lengths(&[10, 3], 1);
    let bad = ChunkMeta {
        length_base: base,
        length_bytes: lb,
        row_lengths: lengths,
        row_offsets: offsets,
        payload_len: 13,
        ..raw
    };
    let head = bad.to_bytes(32);
    assert_eq!(
        ChunkMeta::parse(&head, 32, head.len() as u64 + 13, 2, 10)
            .unwrap_err()
            .code,
        ErrorCode::RowLength
    );
}

proptest! {
    #[test]
    fn row_index_reconstructs_every_record_length(lens in prop::collection::vec(1u64..5000, 1..200), align_log2 in 0u32..8) {
        let a = 1u64 << align_log2;
        let lens: Vec<u64> = lens.into_iter().map(|l| align_up(l, a).unwrap()).collect();
        let (base, lb, stored, offsets) = ChunkMeta::index_from_record_lengths(&lens, a);
        for (i, &l) in lens.iter().enumerate() {
            prop_assert!((stored[i] as u64) < (1u64 << (8 * lb as u32)));
            prop_assert_eq!((base as u64 + stored[i] as u64) * a, l);
            prop_assert_eq!(offsets[i + 1] - offsets[i], l);
        }
    }

    #[test]
    fn error_codes_round_trip_through_their_names(i in 0usize..ErrorCode::ALL.len()) {
        let code = ErrorCode::ALL[i];
        prop_assert_eq!(ErrorCode::from_name(code.as_str()), Some(code));
    }

    #[test]
    fn dtype_codes_round_trip(code in 0u8..=255) {
        match Dtype::from_code(code) {
            Ok(d) => { prop_assert_eq!(d.code(), code); prop_assert_eq!(Dtype::from_name(d.name()), Some(d)); }
            Err(e) => { prop_assert_eq!(e.code, ErrorCode::Dtype); prop_assert!(code == 0 || code > 15); }
        }
    }
}
