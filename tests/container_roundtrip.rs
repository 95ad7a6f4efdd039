//! Container-level round trips: several entries, every word width, alignment, group count and
//! chunking, decoded whole, chunk by chunk and by gather with both CPU decoders, bit-exact.

use ibp::codec::options::EncodeOptions;
use ibp::codec::row::DecoderKind;
use ibp::codec::{ContainerReader, ContainerWriter};
use ibp::format::{Dtype, ErrorCode, WordWidth};
use proptest::prelude::*;
use std::io::Cursor;

/// Rows that look like float data: mostly shared high bits, some outliers, NaN payloads, -0.0.
fn float_like_rows(rows: usize, row_bytes: usize, seed: u64) -> Vec<u8> {
    let mut state = seed | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut out = Vec::with_capacity(rows * row_bytes);
    for _ in 0..rows * row_bytes / 4 {
        let r = next();
        let v: u32 = match r % 16 {
            0 => 0x7FC0_0000 | (r >> 40) as u32 & 0x3F_FFFF, // NaN with payload
            1 => 0x8000_0000,                                // -0.0
            2 => (r >> 16) as u32,                           // anything
            _ => 0x3F00_0000 | ((r >> 20) as u32 & 0x00FF_FFFF),
        };
        out.extend_from_slice(&v.to_le_bytes());
    }
    for _ in out.len()..rows * row_bytes {
        out.push(next() as u8 & 0x0F);
    }
    out
}

fn options(width: Option<WordWidth>, align_log2: u8, groups: u32, chunk_rows: Option<u32>) -> EncodeOptions {
    EncodeOptions {
        word_width: width,
        align_log2,
        groups,
        chunk_rows,
        ..EncodeOptions::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn entries_round_trip_whole_and_gathered(
        rows in 0usize..300,
        row_words in 1usize..40,
        width in prop::sample::select(vec![None, Some(WordWidth::W8), Some(WordWidth::W16), Some(WordWidth::W32)]),
        align_log2 in 0u8..=7,
        groups in 1u32..4,
        chunk_rows in prop::option::of(1u32..64),
        seed in any::<u64>(),
        picks in prop::collection::vec(any::<u64>(), 0..50),
    ) {
        let row_bytes = row_words * 4;
        let data = float_like_rows(rows, row_bytes, seed);
        let small = float_like_rows(3, 2, seed ^ 0xABCD); // a second entry of u8 rows of 2 bytes
        let mut w = ContainerWriter::new(Vec::new(), options(width, align_log2, groups, chunk_rows)).unwrap();
        w.write_entry("features", Dtype::F32, &[rows as u64, row_words as u64], row_bytes as u64, &data).unwrap();
        w.set_options(EncodeOptions::default()).unwrap();
        w.write_entry("ids", Dtype::U8, &[3, 2], 2, &small).unwrap();
        let file = w.finish().unwrap();

        let mut reader = ContainerReader::open(Cursor::new(&file)).unwrap();
        prop_assert_eq!(reader.entries().len(), 2);
        for kind in [DecoderKind::Oracle, DecoderKind::Fast] {
            prop_assert_eq!(&reader.decode_entry(0, kind).unwrap(), &data);
            prop_assert_eq!(&reader.decode_entry(1, kind).unwrap(), &small);
            if rows > 0 {
                let wanted: Vec<u64> = picks.iter().map(|p| p % rows as u64).collect();
                let got = reader.gather(0, &wanted, kind).unwrap();
                let expected: Vec<u8> = wanted
                    .iter()
                    .flat_map(|&r| data[r as usize * row_bytes..(r as usize + 1) * row_bytes].to_vec())
                    .collect();
                prop_assert_eq!(got, expected);
            }
        }
        prop_assert!(reader.verify(DecoderKind::Fast).is_ok());
    }
}

#[test]
fn encoding_is_deterministic() {
    let data = float_like_rows(500, 128, 7);
    let encode = || {
        let mut w = ContainerWriter::new(Vec::new(), options(None, 0, 2, Some(100))).unwrap();
        w.write_entry("x", Dtype::F32, &[500, 32], 128, &data).unwrap();
        w.finish().unwrap()
    };
    assert_eq!(encode(), encode());
}

#[test]
fn streaming_writes_equal_one_shot_writes() {
    let data = float_like_rows(1000, 64, 11);
    let opts = options(None, 4, 1, Some(128));
    let mut one = ContainerWriter::new(Vec::new(), opts.clone()).unwrap();
    one.write_entry("x", Dtype::F32, &[1000, 16], 64, &data).unwrap();
    let mut streamed = ContainerWriter::new(Vec::new(), opts).unwrap();
    streamed.begin_entry("x", Dtype::F32, &[1000, 16], 64).unwrap();
    for piece in data.chunks(64 * 37) {
        streamed.write_rows(piece).unwrap();
    }
    streamed.end_entry().unwrap();
    assert_eq!(one.finish().unwrap(), streamed.finish().unwrap());
}

#[test]
fn empty_entries_and_empty_files_round_trip() {
    let w = ContainerWriter::new(Vec::new(), EncodeOptions::default()).unwrap();
    let empty_file = w.finish().unwrap();
    assert_eq!(empty_file.len(), 64 + 8);
    let r = ContainerReader::open(Cursor::new(&empty_file)).unwrap();
    assert!(r.entries().is_empty());

    let mut w = ContainerWriter::new(Vec::new(), EncodeOptions::default()).unwrap();
    w.write_entry("none", Dtype::F16, &[0, 8], 16, &[]).unwrap();
    w.write_entry("scalar", Dtype::F64, &[], 8, &(-0.0f64).to_le_bytes())
        .unwrap();
    let file = w.finish().unwrap();
    let mut r = ContainerReader::open(Cursor::new(&file)).unwrap();
    assert_eq!(r.decode_entry(0, DecoderKind::Fast).unwrap(), Vec::<u8>::new());
    assert_eq!(r.decode_entry(1, DecoderKind::Oracle).unwrap(), (-0.0f64).to_le_bytes());
}

#[test]
fn writer_rejects_bad_entries_with_typed_errors() {
    let mut w = ContainerWriter::new(Vec::new(), EncodeOptions::default()).unwrap();
    assert_eq!(
        w.begin_entry("", Dtype::F32, &[1], 4).unwrap_err().code,
        ErrorCode::Name
    );
    assert_eq!(
        w.begin_entry("x", Dtype::F32, &[3], 8).unwrap_err().code,
        ErrorCode::Shape
    );
    w.write_entry("x", Dtype::F32, &[1], 4, &[0; 4]).unwrap();
    assert_eq!(
        w.begin_entry("x", Dtype::F32, &[1], 4).unwrap_err().code,
        ErrorCode::Name
    );
    w.begin_entry("y", Dtype::F32, &[2], 4).unwrap();
    w.write_rows(&[0; 4]).unwrap();
    assert_eq!(w.end_entry().unwrap_err().code, ErrorCode::InvalidArgument);
}

#[test]
fn gather_rejects_out_of_range_rows_and_limits() {
    let data = float_like_rows(10, 16, 3);
    let mut w = ContainerWriter::new(Vec::new(), EncodeOptions::default()).unwrap();
    w.write_entry("x", Dtype::F32, &[10, 4], 16, &data).unwrap();
    let file = w.finish().unwrap();
    let mut r = ContainerReader::open(Cursor::new(&file)).unwrap();
    assert_eq!(
        r.gather(0, &[10], DecoderKind::Fast).unwrap_err().code,
        ErrorCode::RowIndex
    );
    assert_eq!(
        r.gather(1, &[0], DecoderKind::Fast).unwrap_err().code,
        ErrorCode::RowIndex
    );
    let limits = ibp::codec::Limits {
        max_gather_rows: 2,
        ..Default::default()
    };
    let mut r = ContainerReader::open_with_limits(Cursor::new(&file), limits).unwrap();
    assert_eq!(
        r.gather(0, &[1, 2, 3], DecoderKind::Fast).unwrap_err().code,
        ErrorCode::Limit
    );
    assert_eq!(
        r.gather(0, &[9, 0], DecoderKind::Fast).unwrap(),
        [&data[144..160], &data[0..16]].concat()
    );
}
