//! Row records (spec 6): the fast encoder and decoder (BMI2 and portable) against the oracle, on
//! valid and corrupted records; the spec's worked example.

mod common;

use ibp_codec::fast::{decode_row, DecoderKind, RowDecoder, RowEncoder};
use ibp_codec::row::{coded_bits, decode_row_oracle, encode_row, record_len, words_of};
use ibp_format::{ErrorCode, Result, WordWidth};
use proptest::prelude::*;

/// One group's Mask/Bitval, a row, a width and an alignment.
#[derive(Debug, Clone)]
struct RowCase {
    w: WordWidth,
    row: Vec<u8>,
    mask: Vec<u64>,
    bitval: Vec<u64>,
    align: u64,
}

fn row_case() -> impl Strategy<Value = RowCase> {
    (0usize..4, 1usize..40, 0u32..8, any::<u64>(), 0u32..=7).prop_map(|(wi, n, mask_kind, seed, align_log2)| {
        let w = WordWidth::ALL[wi];
        let mut rng = common::Rng(seed);
        let full = w.full_mask();
        // Some rows end in a partial word (spec 2.4): 1 to W/8 bytes of the last word.
        let cut = if rng.next().is_multiple_of(3) {
            (rng.next() % w.bytes() as u64) as usize
        } else {
            0
        };
        let row: Vec<u8> = (0..n * w.bytes() - cut).map(|_| rng.next() as u8).collect();
        let words: Vec<u64> = words_of(&row, w).collect();
        let mask: Vec<u64> = (0..n)
            .map(|_| match mask_kind {
                0 => 0,
                1 => full,
                2 => rng.next() & full,
                // High bits invariant: the float-exponent shape.
                _ => (full << (rng.next() % (w.bits() as u64 + 1)).min(63)) & full,
            })
            .collect();
        // Bitval: mostly the row's own bits (so words match), sometimes random.
        let bitval: Vec<u64> = mask
            .iter()
            .zip(&words)
            .map(|(&m, &v)| {
                if rng.next().is_multiple_of(4) {
                    rng.next() & m
                } else {
                    v & m
                }
            })
            .collect();
        RowCase {
            w,
            row,
            mask,
            bitval,
            align: 1 << align_log2,
        }
    })
}

/// Outcome of a decoder: the row bytes or the error code.
fn outcome(r: Result<()>, out: &[u8]) -> std::result::Result<Vec<u8>, ErrorCode> {
    r.map(|()| out.to_vec()).map_err(|e| e.code)
}

fn all_decoders(c: &RowCase, record: &[u8]) -> Vec<std::result::Result<Vec<u8>, ErrorCode>> {
    let rb = c.row.len();
    let mut results = Vec::new();
    let mut out = vec![0u8; rb];
    let r = decode_row_oracle(record, &c.mask, &c.bitval, c.w, rb, c.align, &mut out);
    results.push(outcome(r, &out));
    let mut out = vec![0u8; rb];
    let r = decode_row(
        DecoderKind::Fast,
        record,
        &c.mask,
        &c.bitval,
        c.w,
        rb,
        c.align,
        &mut out,
    );
    results.push(outcome(r, &out));
    let portable = RowDecoder::new(&c.mask, &c.bitval, c.w, rb, c.align)
        .unwrap()
        .force_portable();
    let mut out = vec![0u8; rb];
    let r = portable.decode(record, &mut out);
    results.push(outcome(r, &out));
    results
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn fast_encoders_write_the_oracles_records(c in row_case()) {
        let rb = c.row.len();
        let mut oracle = Vec::new();
        encode_row(&c.row, &c.mask, &c.bitval, c.w, c.align, &mut oracle);
        prop_assert_eq!(oracle.len() as u64, record_len(&c.row, &c.mask, &c.bitval, c.w, c.align));
        prop_assert_eq!(oracle.len() as u64 % c.align, 0);
        let mut enc = RowEncoder::new(&c.mask, &c.bitval, c.w, rb, c.align).unwrap();
        let mut fast = Vec::new();
        let len = enc.encode(&c.row, &mut fast);
        prop_assert_eq!(&fast, &oracle);
        prop_assert_eq!(len, oracle.len() as u64);
        prop_assert_eq!(enc.record_len(&c.row), len);
        let mut portable = Vec::new();
        enc.clone().force_portable().encode(&c.row, &mut portable);
        prop_assert_eq!(&portable, &oracle);
    }

    #[test]
    fn every_decoder_round_trips(c in row_case()) {
        let mut record = Vec::new();
        encode_row(&c.row, &c.mask, &c.bitval, c.w, c.align, &mut record);
        for result in all_decoders(&c, &record) {
            prop_assert_eq!(result, Ok(c.row.clone()));
        }
    }

    #[test]
    fn decoders_agree_on_corrupted_records(
        c in row_case(),
        flips in proptest::collection::vec(any::<u32>(), 0..4),
        resize in prop_oneof![Just(0i64), -3i64..4, Just(i64::MIN)],
        fill in any::<u8>(),
    ) {
        let mut record = Vec::new();
        encode_row(&c.row, &c.mask, &c.bitval, c.w, c.align, &mut record);
        for f in flips {
            if !record.is_empty() {
                let bit = f as usize % (record.len() * 8);
                record[bit / 8] ^= 1 << (bit % 8);
            }
        }
        if resize == i64::MIN {
            // A length chosen from the ones a row index can express.
            record.resize((fill as usize % (c.row.len() + 2 * c.align as usize)) + 1, fill);
        } else {
            let len = (record.len() as i64 + resize * c.align as i64).max(0) as usize;
            record.resize(len, fill);
        }
        let results = all_decoders(&c, &record);
        prop_assert_eq!(&results[1], &results[0], "fast vs oracle on {:02x?}", record);
        prop_assert_eq!(&results[2], &results[0], "portable vs oracle on {:02x?}", record);
    }
}

#[test]
fn spec_6_4_worked_example() {
    let mask = [0xFF00, 0xFFFF];
    let bitval = [0x3F00, 0x0000];
    let w = WordWidth::W16;
    let raw_case = [0xA5, 0x3F, 0x34, 0x12];
    assert_eq!(coded_bits(&raw_case, &mask, &bitval, w), 26);
    let mut rec = Vec::new();
    encode_row(&raw_case, &mask, &bitval, w, 1, &mut rec);
    assert_eq!(rec, raw_case, "T = 26 bits is not shorter than raw: stored raw");

    let coded_case = [0xA5, 0x3F, 0x00, 0x00];
    assert_eq!(coded_bits(&coded_case, &mask, &bitval, w), 10);
    let mut rec = Vec::new();
    encode_row(&coded_case, &mask, &bitval, w, 1, &mut rec);
    assert_eq!(rec, [0x97, 0x02]);
    let mut fast_rec = Vec::new();
    RowEncoder::new(&mask, &bitval, w, 4, 1)
        .unwrap()
        .encode(&coded_case, &mut fast_rec);
    assert_eq!(fast_rec, [0x97, 0x02]);
    for kind in [DecoderKind::Oracle, DecoderKind::Fast] {
        let mut out = [0u8; 4];
        decode_row(kind, &[0x97, 0x02], &mask, &bitval, w, 4, 1, &mut out).unwrap();
        assert_eq!(out, coded_case);
        decode_row(kind, &raw_case, &mask, &bitval, w, 4, 1, &mut out).unwrap();
        assert_eq!(out, raw_case);
        // A padding bit set: E_PADDING; a byte too many: E_ROW_LENGTH.
        let e = decode_row(kind, &[0x97, 0x06], &mask, &bitval, w, 4, 1, &mut out).unwrap_err();
        assert_eq!(e.code, ErrorCode::Padding);
        let e = decode_row(kind, &[0x97, 0x02, 0x00], &mask, &bitval, w, 4, 1, &mut out).unwrap_err();
        assert_eq!(e.code, ErrorCode::RowLength);
        // With A = 4 the coded record would be 4 bytes = raw: the row must be raw.
        let mut rec4 = Vec::new();
        encode_row(&coded_case, &mask, &bitval, w, 4, &mut rec4);
        assert_eq!(rec4, coded_case);
    }
}

#[test]
fn raw_padding_must_be_zero() {
    let (mask, bitval) = ([0u64; 3], [0u64; 3]);
    let row = [1u8, 2, 3];
    for kind in [DecoderKind::Oracle, DecoderKind::Fast] {
        let mut out = [0u8; 3];
        decode_row(
            kind,
            &[1, 2, 3, 0, 0, 0, 0, 0],
            &mask,
            &bitval,
            WordWidth::W8,
            3,
            8,
            &mut out,
        )
        .unwrap();
        assert_eq!(out, row);
        let e = decode_row(
            kind,
            &[1, 2, 3, 0, 0, 0, 0, 9],
            &mask,
            &bitval,
            WordWidth::W8,
            3,
            8,
            &mut out,
        )
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::Padding);
        let e = decode_row(
            kind,
            &[1, 2, 3, 0, 0, 0, 0, 0, 0],
            &mask,
            &bitval,
            WordWidth::W8,
            3,
            8,
            &mut out,
        )
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::RowLength);
    }
}

#[test]
fn fast_decoder_reports_whether_it_uses_bmi2() {
    let d = RowDecoder::new(&[0], &[0], WordWidth::W8, 1, 1).unwrap();
    #[cfg(target_arch = "x86_64")]
    assert_eq!(d.uses_bmi2(), std::is_x86_feature_detected!("bmi2"));
    assert!(!d.force_portable().uses_bmi2());
}

/// Blocks of 64 words that all match with no free bits take the decoder's copy path; a block
/// with one differing word does not. Both must decode exactly, with every decoder.
#[test]
fn fully_invariant_blocks_decode_exactly() {
    for w in WordWidth::ALL {
        let n = 200;
        let base: Vec<u8> = (0..n * w.bytes()).map(|i| (i * 29 % 256) as u8).collect();
        let mask = vec![w.full_mask(); n];
        let bitval: Vec<u64> = words_of(&base, w).collect();
        for changed in [None, Some(0), Some(70), Some(199)] {
            let mut row = base.clone();
            if let Some(j) = changed {
                row[j * w.bytes()] ^= 0x5A;
            }
            let c = RowCase {
                w,
                row: row.clone(),
                mask: mask.clone(),
                bitval: bitval.clone(),
                align: 1,
            };
            let mut record = Vec::new();
            encode_row(&row, &mask, &bitval, w, 1, &mut record);
            let expected_bits = n as u64 + changed.map_or(0, |_| w.bits() as u64);
            assert_eq!(record.len() as u64, expected_bits.div_ceil(8));
            for result in all_decoders(&c, &record) {
                assert_eq!(result, Ok(row.clone()), "W{w} changed {changed:?}");
            }
        }
    }
}

/// Empty Mask/Bitval mean a raw chunk (spec 5.5): raw records decode, any other length is
/// `E_ROW_LENGTH`, with both decoders.
#[test]
fn rows_of_raw_chunks_decode_without_masks() {
    for kind in [DecoderKind::Oracle, DecoderKind::Fast] {
        let mut out = [0u8; 5];
        decode_row(
            kind,
            &[1, 2, 3, 4, 5, 0, 0, 0],
            &[],
            &[],
            WordWidth::W32,
            5,
            8,
            &mut out,
        )
        .unwrap();
        assert_eq!(out, [1, 2, 3, 4, 5]);
        let e = decode_row(
            kind,
            &[1, 2, 3, 4, 5, 0, 0, 1],
            &[],
            &[],
            WordWidth::W32,
            5,
            8,
            &mut out,
        )
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::Padding);
        let e = decode_row(kind, &[1, 2, 3], &[], &[], WordWidth::W32, 5, 1, &mut out).unwrap_err();
        assert_eq!(e.code, ErrorCode::RowLength);
    }
}
