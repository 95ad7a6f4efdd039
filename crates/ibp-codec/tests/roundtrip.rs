//! Round trips through the chunk codec: every word width, row size, row count, group count,
//! alignment and data kind; the serialised metadata is re-parsed by `ibp-format`, so the encoder's
//! output is checked against the format's own validation, and both decoders must give back the
//! exact input bytes.

mod common;

use common::*;
use ibp_codec::analysis::ChunkPlan;
use ibp_codec::{decode_chunk, decode_chunk_rows, encode_chunk, encode_chunk_with_plan, DecoderKind, EncodeOptions};
use ibp_format::{ChunkMeta, ErrorCode, WordWidth};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn encode_then_decode_gives_the_input(case in chunk_case()) {
        let (rows, row_bytes, opts) = case;
        let chunk = encode_chunk(&rows, row_bytes, &opts);
        let meta = reparse(&chunk, row_bytes);
        prop_assert_eq!(&meta, &chunk.meta);
        prop_assert_eq!(meta.align_log2, opts.align_log2);
        // One group may become a raw chunk (G = 0) when masks do not pay for themselves, any group
        // count when they save no transfer units.
        if opts.groups == 1 {
            prop_assert!(meta.group_count <= 1);
        } else if opts.transfer_cost.is_some() {
            prop_assert!(meta.group_count == opts.groups || meta.group_count == 0);
        } else {
            prop_assert_eq!(meta.group_count, opts.groups);
        }
        if let Some(w) = opts.word_width {
            prop_assert_eq!(meta.word_width, w);
        }
        for kind in [DecoderKind::Oracle, DecoderKind::Fast] {
            let mut out = vec![0xEEu8; rows.len()];
            decode_chunk(&meta, &chunk.payload, kind, &mut out).unwrap();
            prop_assert_eq!(&out, &rows);
        }
    }

    #[test]
    fn gather_returns_rows_in_the_callers_order(
        case in chunk_case(),
        picks in proptest::collection::vec(any::<u32>(), 0..40),
    ) {
        let (rows, row_bytes, opts) = case;
        let row_count = (rows.len() / row_bytes) as u32;
        let wanted: Vec<u32> = picks.iter().map(|p| p % row_count).collect();
        let chunk = encode_chunk(&rows, row_bytes, &opts);
        for kind in [DecoderKind::Oracle, DecoderKind::Fast] {
            let mut out = vec![0u8; wanted.len() * row_bytes];
            decode_chunk_rows(&chunk.meta, &chunk.payload, &wanted, kind, &mut out).unwrap();
            for (i, &r) in wanted.iter().enumerate() {
                let r = r as usize;
                prop_assert_eq!(
                    &out[i * row_bytes..(i + 1) * row_bytes],
                    &rows[r * row_bytes..(r + 1) * row_bytes]
                );
            }
        }
    }

    #[test]
    fn explicit_all_zero_and_all_one_masks_round_trip(
        (rows, row_bytes, _) in chunk_case(),
        w_pick in 0usize..4,
        align_log2 in 0u8..=7,
        all_ones in any::<bool>(),
        bitval_seed in any::<u64>(),
    ) {
        let w = WordWidth::ALL[w_pick];
        let n = ibp_codec::row::words_per_row(row_bytes, w);
        let mask = if all_ones { u64::MAX } else { 0 };
        // With an all-ones mask every matching word has 0 free bits: use a real row as Bitval so
        // that some rows match.
        let bitvals: Vec<u64> = if all_ones {
            ibp_codec::row::words_of(&rows[..row_bytes], w).collect()
        } else {
            vec![bitval_seed; n]
        };
        let plan = ChunkPlan::single_group(w, vec![mask; n], bitvals);
        let chunk = encode_chunk_with_plan(&rows, row_bytes, &plan, align_log2);
        let meta = reparse(&chunk, row_bytes);
        for kind in [DecoderKind::Oracle, DecoderKind::Fast] {
            let mut out = vec![0u8; rows.len()];
            decode_chunk(&meta, &chunk.payload, kind, &mut out).unwrap();
            prop_assert_eq!(&out, &rows);
        }
        if !all_ones {
            // Mask 0: a coded row costs n + n*W bits, never shorter than raw: all rows raw.
            prop_assert!((0..meta.row_count as usize).all(|r| meta.is_raw(r)));
        } else if row_bytes >= 2 {
            // Row 0 equals Bitval: n bits, shorter than raw unless the alignment hides it.
            let coded = ibp_format::align_up((n as u64).div_ceil(8), meta.align()).unwrap();
            prop_assert_eq!(meta.is_raw(0), coded >= meta.raw_padded());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Corrupted payloads (CRC recomputed, so the rows themselves are judged): the fast decoder,
    /// whose loads run past a record into its neighbours, must agree with the oracle on every
    /// outcome: the same bytes, or the same error code for the same first bad row.
    #[test]
    fn decoders_agree_on_corrupted_payloads(
        case in chunk_case(),
        flips in proptest::collection::vec(any::<u32>(), 1..6),
    ) {
        let (rows, row_bytes, opts) = case;
        let mut chunk = encode_chunk(&rows, row_bytes, &opts);
        for f in flips {
            let bit = f as usize % (chunk.payload.len() * 8);
            chunk.payload[bit / 8] ^= 1 << (bit % 8);
        }
        chunk.meta.payload_crc = ibp_format::crc32(&chunk.payload);
        let mut a = vec![0u8; rows.len()];
        let mut b = vec![0u8; rows.len()];
        let oracle = decode_chunk(&chunk.meta, &chunk.payload, DecoderKind::Oracle, &mut a);
        let fast = decode_chunk(&chunk.meta, &chunk.payload, DecoderKind::Fast, &mut b);
        match (oracle, fast) {
            (Ok(()), Ok(())) => prop_assert_eq!(a, b),
            (Err(x), Err(y)) => {
                prop_assert_eq!(x.code, y.code);
                let row_of = |d: &str| d.split(':').next().unwrap_or("").to_string();
                prop_assert_eq!(row_of(&x.detail), row_of(&y.detail));
            }
            (x, y) => prop_assert!(false, "oracle {:?} vs fast {:?}", x, y),
        }
    }
}

#[test]
fn encoding_is_deterministic() {
    let rows = float_rows(3000, 64, 7);
    for groups in [1, 3] {
        let opts = EncodeOptions {
            groups,
            ..EncodeOptions::default()
        };
        let a = encode_chunk(&rows, 256, &opts);
        let b = encode_chunk(&rows, 256, &opts);
        assert_eq!(a, b);
        assert_eq!(a.meta.to_bytes(32), b.meta.to_bytes(32));
    }
}

#[test]
fn whole_chunk_decode_checks_the_payload_crc_and_sizes() {
    let rows = float_rows(100, 16, 3);
    let chunk = encode_chunk(&rows, 64, &EncodeOptions::default());
    let mut out = vec![0u8; rows.len()];
    let mut bad = chunk.payload.clone();
    bad[0] ^= 1;
    for kind in [DecoderKind::Oracle, DecoderKind::Fast] {
        let e = decode_chunk(&chunk.meta, &bad, kind, &mut out).unwrap_err();
        assert_eq!(e.code, ErrorCode::PayloadCrc);
        let e = decode_chunk(&chunk.meta, &chunk.payload, kind, &mut out[1..]).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        let e = decode_chunk(&chunk.meta, &chunk.payload[1..], kind, &mut out).unwrap_err();
        assert_eq!(e.code, ErrorCode::Truncated);
    }
}

#[test]
fn gather_rejects_out_of_range_rows() {
    let rows = float_rows(10, 16, 5);
    let chunk = encode_chunk(&rows, 64, &EncodeOptions::default());
    let mut out = vec![0u8; 128];
    for kind in [DecoderKind::Oracle, DecoderKind::Fast] {
        let e = decode_chunk_rows(&chunk.meta, &chunk.payload, &[3, 10], kind, &mut out).unwrap_err();
        assert_eq!(e.code, ErrorCode::RowIndex);
        let e = decode_chunk_rows(&chunk.meta, &chunk.payload, &[3], kind, &mut out).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
    }
}

#[test]
fn row_errors_name_the_first_bad_row() {
    // Sparse rows code short; corrupt the padding of two coded rows, the earlier one is reported.
    let rows = sparse_rows(2000, 64, 11);
    let opts = EncodeOptions {
        word_width: Some(WordWidth::W32),
        ..EncodeOptions::default()
    };
    let mut chunk = encode_chunk(&rows, 256, &opts);
    let coded: Vec<usize> = (0..2000).filter(|&r| !chunk.meta.is_raw(r)).collect();
    assert!(coded.len() > 100);
    for &r in [coded[coded.len() - 1], coded[coded.len() / 2]].iter() {
        let range = chunk.meta.record_range(r);
        let last = range.end - 1;
        // The last byte of a coded record ends with padding unless T is a multiple of 8; set its
        // top bit, which is padding whenever the record has any.
        chunk.payload[last] |= 0x80;
    }
    chunk.meta.payload_crc = ibp_format::crc32(&chunk.payload);
    let mut out = vec![0u8; rows.len()];
    let oracle = decode_chunk(&chunk.meta, &chunk.payload, DecoderKind::Oracle, &mut out);
    let fast = decode_chunk(&chunk.meta, &chunk.payload, DecoderKind::Fast, &mut out);
    match (&oracle, &fast) {
        (Err(a), Err(b)) => {
            assert_eq!(a, b);
            assert!(a.detail.starts_with("row "), "{}", a.detail);
        }
        // Both rows may have had T a multiple of 8 with the top bit a data bit: then both decode.
        (Ok(()), Ok(())) => {}
        _ => panic!("decoders disagree: {oracle:?} vs {fast:?}"),
    }
}

/// Serialises the chunk's metadata and parses it back with `ibp-format`'s validation.
fn reparse(chunk: &ibp_codec::EncodedChunk, row_bytes: usize) -> ChunkMeta {
    let offset = 32u64;
    let head = chunk.meta.to_bytes(offset);
    let len = head.len() as u64 + chunk.payload.len() as u64;
    ChunkMeta::parse(&head, offset, len, chunk.meta.row_count as u64, row_bytes as u64)
        .expect("the encoder's metadata passes the format's validation")
}

#[test]
fn bytes_do_not_depend_on_the_thread_count() {
    let rows = float_rows(40_000, 16, 21);
    let opts = EncodeOptions {
        groups: 2,
        ..EncodeOptions::default()
    };
    let encode_with = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| encode_chunk(&rows, 64, &opts))
    };
    let one = encode_with(1);
    assert_eq!(one, encode_with(3));
    assert_eq!(one, encode_with(8));
}

#[test]
fn large_gathers_split_over_threads_keep_the_order() {
    let rows = sparse_rows(30_000, 4, 8);
    let chunk = encode_chunk(&rows, 16, &EncodeOptions::default());
    let wanted: Vec<u32> = (0..50_000u32).map(|i| (i * 7919) % 30_000).collect();
    let mut out = vec![0u8; wanted.len() * 16];
    decode_chunk_rows(&chunk.meta, &chunk.payload, &wanted, DecoderKind::Fast, &mut out).unwrap();
    for (i, &r) in wanted.iter().enumerate() {
        let r = r as usize;
        assert_eq!(out[i * 16..(i + 1) * 16], rows[r * 16..(r + 1) * 16]);
    }
}

/// Incompressible rows and tiny tensors become raw chunks (spec 5.5), which decode like any other
/// chunk and are smaller than a one-group chunk of the same rows.
#[test]
fn incompressible_and_tiny_data_make_raw_chunks() {
    let mut rng = Rng(77);
    let random: Vec<u8> = (0..64 * 300).map(|_| rng.next() as u8).collect();
    let tiny = 0x3F80_0000u32.to_le_bytes().to_vec();
    for (rows, row_bytes) in [(random, 64), (tiny, 4)] {
        let chunk = encode_chunk(&rows, row_bytes, &EncodeOptions::default());
        assert_eq!(chunk.meta.group_count, 0, "{row_bytes}-byte rows");
        assert!(chunk.meta.masks.is_empty());
        let meta = reparse(&chunk, row_bytes);
        let forced = ibp_codec::analysis::ChunkPlan::single_group(
            meta.word_width,
            vec![0; meta.words_per_row as usize],
            vec![0; meta.words_per_row as usize],
        );
        let one_group = encode_chunk_with_plan(&rows, row_bytes, &forced, 0);
        assert!(
            meta.to_bytes(32).len() + chunk.payload.len() < one_group.meta.to_bytes(32).len() + one_group.payload.len()
        );
        for kind in [DecoderKind::Oracle, DecoderKind::Fast] {
            let mut out = vec![0u8; rows.len()];
            decode_chunk(&meta, &chunk.payload, kind, &mut out).unwrap();
            assert_eq!(out, rows);
            let mut one = vec![0u8; row_bytes];
            decode_chunk_rows(&meta, &chunk.payload, &[0], kind, &mut one).unwrap();
            assert_eq!(one, rows[..row_bytes]);
        }
    }
}

/// A raw chunk whose record is not raw-length is rejected (`E_ROW_LENGTH`), even when the
/// metadata was built by hand rather than parsed.
#[test]
fn raw_chunk_rows_must_be_raw() {
    let rows: Vec<u8> = (0..32u8).collect();
    let plan = ibp_codec::analysis::ChunkPlan::raw_chunk(WordWidth::W32, 4, 8, 1);
    let mut chunk = encode_chunk_with_plan(&rows, 8, &plan, 0);
    assert_eq!(chunk.meta.group_count, 0);
    // Move one byte from row 1's record to row 0's: lengths 9 and 7.
    chunk.meta.row_offsets[1] = 9;
    for kind in [DecoderKind::Oracle, DecoderKind::Fast] {
        let mut out = vec![0u8; 32];
        let e = decode_chunk(&chunk.meta, &chunk.payload, kind, &mut out).unwrap_err();
        assert_eq!(e.code, ErrorCode::RowLength, "{e}");
        assert!(e.detail.starts_with("row 0"), "{e}");
    }
}
