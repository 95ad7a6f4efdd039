//! The analysis picks width, threshold and masks by the real encoded size.

mod common;

use common::*;
use ibp_codec::analysis::{count_bits, masks_from_counts, plan_chunk, ChunkPlan};
use ibp_codec::chunk_codec::{raw_transfer_cost, transfer_cost};
use ibp_codec::options::TransferCost;
use ibp_codec::options::SWEEP_THRESHOLDS;
use ibp_codec::{decode_chunk, encode_chunk, encode_chunk_with_plan, DecoderKind, EncodeOptions, EncodedChunk};
use ibp_format::{ChunkMeta, WordWidth, CHUNK_HEADER_LEN};
use proptest::prelude::*;

/// Header + metadata + payload (the padding before the payload depends on the file offset).
fn real_size(c: &EncodedChunk) -> u64 {
    let m = &c.meta;
    let meta = ChunkMeta::meta_len_for(
        m.word_width,
        m.group_count as u64,
        m.words_per_row as u64,
        m.row_count as u64,
        m.length_bytes as u64,
    )
    .unwrap();
    CHUNK_HEADER_LEN + meta + m.payload_len
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(120))]

    /// Without sampling the estimate is the real size, and no forced (width, threshold) pair of
    /// the sweep encodes smaller than the analysis' choice.
    #[test]
    fn the_sweep_keeps_the_smallest_real_size((rows, row_bytes, opts) in chunk_case()) {
        let opts = EncodeOptions { word_width: None, threshold: None, sample_fraction: None, groups: 1, transfer_cost: None, prefer_wide_words: None, fewer_runs_within: None, ..opts };
        let plan = plan_chunk(&rows, row_bytes, &opts);
        let chosen = encode_chunk(&rows, row_bytes, &opts);
        prop_assert_eq!(plan.estimated_bytes, real_size(&chosen));
        let row_count = rows.len() / row_bytes;
        let counts = count_bits(&rows, row_bytes, &(0..row_count).collect::<Vec<_>>());
        for w in WordWidth::ALL {
            for t in SWEEP_THRESHOLDS {
                let forced = EncodeOptions { word_width: Some(w), threshold: Some(t), ..opts.clone() };
                let c = encode_chunk(&rows, row_bytes, &forced);
                prop_assert!(real_size(&c) >= real_size(&chosen), "w {} t {} beats the choice", w, t);
                // Nor does a one-group chunk with those masks (the raw-chunk shortcuts lose nothing).
                let (m, b) = masks_from_counts(&counts, row_count as u64, w, t);
                let one = encode_chunk_with_plan(&rows, row_bytes, &ChunkPlan::single_group(w, m, b), opts.align_log2);
                prop_assert!(real_size(&one) >= real_size(&chosen), "one group w {} t {} beats the choice", w, t);
            }
        }
    }

    /// Merged to fewer runs of free bits (`fewer_runs_within`), a one-group chunk's estimate is still
    /// its real size, within that growth of the smallest plan's, and its positions have at most two
    /// runs, at most three, or as many as the smallest plan's.
    #[test]
    fn fewer_runs_cost_at_most_the_growth_allowed((rows, row_bytes, opts) in chunk_case(), within in 0.0f64..0.05) {
        use ibp_codec::free_runs::most_free_runs;
        let smallest = EncodeOptions { sample_fraction: None, groups: 1, transfer_cost: None, fewer_runs_within: None, ..opts };
        let merged = EncodeOptions { fewer_runs_within: Some(within), ..smallest.clone() };
        let (plan, base) = (plan_chunk(&rows, row_bytes, &merged), plan_chunk(&rows, row_bytes, &smallest));
        let chunk = encode_chunk(&rows, row_bytes, &merged);
        prop_assert_eq!(plan.estimated_bytes, real_size(&chunk));
        prop_assert!(plan.estimated_bytes as f64 <= base.estimated_bytes as f64 * (1.0 + within));
        if !plan.is_raw_chunk() {
            let (runs, before) = (most_free_runs(&plan.masks, plan.word_width), most_free_runs(&base.masks, base.word_width));
            prop_assert!(runs <= 3 || runs == before, "{} runs, {} before", runs, before);
            prop_assert!(plan.masks.iter().zip(&base.masks).all(|(m, b)| m & !b == 0), "a merge made a bit invariant");
        }
        let mut out = vec![0u8; rows.len()];
        decode_chunk(&chunk.meta, &chunk.payload, DecoderKind::Fast, &mut out).unwrap();
        prop_assert!(out == rows);
    }

    /// With groups the estimate is still the real size (every row is assigned exactly).
    #[test]
    fn group_estimates_are_real_sizes((rows, row_bytes, opts) in chunk_case()) {
        let opts = EncodeOptions { sample_fraction: None, transfer_cost: None, ..opts };
        let plan = plan_chunk(&rows, row_bytes, &opts);
        let chunk = encode_chunk(&rows, row_bytes, &opts);
        if opts.groups > 1 {
            prop_assert_eq!(plan.group_ids.len(), rows.len() / row_bytes);
        }
        prop_assert_eq!(plan.estimated_bytes, real_size(&chunk));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(120))]

    /// Sized by a transfer cost, a chunk never costs more to read than raw records would, and it
    /// is coded only where coding costs strictly less; the rows decode either way.
    #[test]
    fn transfer_cost_never_exceeds_raw(
        (rows, row_bytes, opts) in chunk_case(),
        (sector_log2, request_log2, request_weight, record_weight) in (0u32..8, 0u32..9, 0u32..5, 0u32..4),
    ) {
        let cost = TransferCost { sector_bytes: 1 << sector_log2, request_bytes: 1 << request_log2, request_weight, record_weight };
        let opts = EncodeOptions { transfer_cost: Some(cost), ..opts };
        let chunk = encode_chunk(&rows, row_bytes, &opts);
        let (used, raw) = (transfer_cost(&chunk.meta, &cost), raw_transfer_cost(&chunk.meta, &cost));
        prop_assert!(used <= raw, "cost {} against {} raw", used, raw);
        if !chunk.meta.is_raw_chunk() {
            prop_assert!(used < raw, "coded chunk costing {}, raw {}", used, raw);
        }
        let mut out = vec![0u8; rows.len()];
        decode_chunk(&chunk.meta, &chunk.payload, DecoderKind::Fast, &mut out).unwrap();
        prop_assert_eq!(out, rows);
    }
}

/// A record's cost counts the sectors and requests it touches.
#[test]
fn transfer_cost_counts_touched_blocks() {
    let c = TransferCost::GPU; // 32-byte sectors, 64-byte requests of weight 3
    assert_eq!(c.of_record(0, 64), 2 + 3);
    assert_eq!(c.of_record(16, 64), 3 + 3 * 2);
    assert_eq!(c.of_record(48, 16), 1 + 3);
    assert_eq!(c.of_record(56, 16), 2 + 3 * 2);
    assert_eq!(c.of_record(0, 256), 8 + 3 * 4);
    assert_eq!(c.of_record(16, 240), 8 + 3 * 4);
    assert_eq!(c.of_record(16, 256), 9 + 3 * 5);
    // Over a chunk: the sum over its records; raw records of 64 bytes cost 2 + 3 each.
    let data = sparse_rows(400, 16, 9);
    let chunk = encode_chunk(
        &data,
        64,
        &EncodeOptions {
            align_log2: 4,
            ..EncodeOptions::default()
        },
    );
    assert!(!chunk.meta.is_raw_chunk());
    let offs = &chunk.meta.row_offsets;
    let by_hand: u64 = (0..400).map(|i| c.of_record(offs[i], offs[i + 1] - offs[i])).sum();
    // ... plus the record weight (1 for the GPU) per record of a coded chunk, none for raw ones.
    assert_eq!(c.record_weight, 1);
    assert_eq!(transfer_cost(&chunk.meta, &c), by_hand + 400);
    assert_eq!(raw_transfer_cost(&chunk.meta, &c), 400 * 5);
    let raw_chunk = encode_chunk(
        &data,
        64,
        &EncodeOptions {
            align_log2: 4,
            groups: 0,
            ..EncodeOptions::default()
        },
    );
    assert!(raw_chunk.meta.is_raw_chunk());
    assert_eq!(transfer_cost(&raw_chunk.meta, &c), 400 * 5);
}

/// 256-byte rows of 64-bit words whose top 13 bits are zero code to records of exactly 208 bytes
/// (32 participation bits + 32 fields of 51 bits): at A = 16 each touches 7 sectors and 4 requests
/// against the raw row's 8 and 4, one sector less. Coded by bytes alone; raw under the GPU's cost,
/// whose decode of a coded record weighs a sector.
#[test]
fn gpu_options_store_raw_records_saving_one_sector_or_less() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let rows: Vec<u8> = (0..2048 * 32)
        .flat_map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 13).to_le_bytes()
        })
        .collect();
    let aligned = EncodeOptions {
        align_log2: 4,
        ..EncodeOptions::default()
    };
    let bytes_only_cost = TransferCost {
        record_weight: 0,
        ..TransferCost::GPU
    };
    let coded = encode_chunk(
        &rows,
        256,
        &EncodeOptions {
            transfer_cost: Some(bytes_only_cost),
            ..aligned.clone()
        },
    );
    assert!(!coded.meta.is_raw_chunk());
    assert!(coded.meta.row_offsets.windows(2).all(|w| w[1] - w[0] == 208));
    assert_eq!(transfer_cost(&coded.meta, &bytes_only_cost), 2048 * (7 + 3 * 4));
    assert_eq!(raw_transfer_cost(&coded.meta, &bytes_only_cost), 2048 * (8 + 3 * 4));
    let gpu = encode_chunk(
        &rows,
        256,
        &EncodeOptions {
            transfer_cost: Some(TransferCost::GPU),
            ..aligned
        },
    );
    assert!(gpu.meta.is_raw_chunk());
    assert!(ibp_codec::chunk_codec::raw_for_gpu_reads(&coded.meta));
    let mut out = vec![0u8; rows.len()];
    decode_chunk(&gpu.meta, &gpu.payload, DecoderKind::Fast, &mut out).unwrap();
    assert_eq!(out, rows);
}

/// f32 rows with 3 random exponent bits save about 10 %: 16-byte aligned coded records of 256-byte
/// rows then cost more GPU requests than raw rows, so the GPU options store the chunk raw; sparse
/// rows (90 % saved) stay coded.
#[test]
fn gpu_options_store_raw_what_is_not_cheaper_to_read() {
    let dense = float_rows(2048, 64, 5);
    let bytes_only = encode_chunk(
        &dense,
        256,
        &EncodeOptions {
            align_log2: 4,
            ..EncodeOptions::default()
        },
    );
    assert!(!bytes_only.meta.is_raw_chunk(), "coding saves bytes");
    assert!(bytes_only.meta.payload_len < dense.len() as u64);
    let gpu = encode_chunk(&dense, 256, &EncodeOptions::for_gpu());
    assert!(gpu.meta.is_raw_chunk(), "but costs more to read: raw");
    let sparse = sparse_rows(2048, 64, 6);
    let gpu = encode_chunk(&sparse, 256, &EncodeOptions::for_gpu());
    assert!(!gpu.meta.is_raw_chunk());
    let c = TransferCost::GPU;
    assert!(transfer_cost(&gpu.meta, &c) * 2 < raw_transfer_cost(&gpu.meta, &c));
}

/// `prefer_wide_words`: 64-bit words are taken exactly when they cost at most the given fraction
/// of the raw bytes more than the smallest width (bf16 rows below, where 16-bit words win).
#[test]
fn wide_words_are_preferred_within_the_allowance() {
    let data = bf16_outlier_rows(4096);
    let auto = plan_chunk(&data, 64, &EncodeOptions::default());
    assert_eq!(auto.word_width, WordWidth::W16);
    let wide = plan_chunk(
        &data,
        64,
        &EncodeOptions {
            word_width: Some(WordWidth::W64),
            ..EncodeOptions::default()
        },
    );
    let gap = (wide.estimated_bytes - auto.estimated_bytes) as f64 / data.len() as f64;
    assert!(gap > 0.0);
    let with = |x: f64| {
        plan_chunk(
            &data,
            64,
            &EncodeOptions {
                prefer_wide_words: Some(x),
                ..EncodeOptions::default()
            },
        )
    };
    let above = with(gap + 1e-4);
    assert_eq!(
        (above.word_width, above.estimated_bytes),
        (WordWidth::W64, wide.estimated_bytes)
    );
    assert_eq!(with(gap - 1e-4).word_width, WordWidth::W16);
    assert_eq!(with(0.0).word_width, WordWidth::W16);
}

/// bf16 rows of 32 elements with 15 % outliers (see `bf16_rows_get_16_bit_words`).
fn bf16_outlier_rows(rows: usize) -> Vec<u8> {
    let mut rng = Rng(42);
    let mut data = Vec::with_capacity(rows * 64);
    for _ in 0..rows * 32 {
        let r = rng.next();
        let exp = if r % 100 < 15 {
            (r >> 8) as u16 % 255
        } else {
            126 + (r >> 8) as u16 % 2
        };
        let bf16 = (exp << 7) | ((r >> 16) as u16 & 0x7F);
        data.extend_from_slice(&bf16.to_le_bytes());
    }
    data
}

/// bf16-like rows of 32 elements (64 bytes): positive values whose exponents sit in [2^-1, 2) with
/// 15 % outliers. 16-bit words keep an outlier from spoiling its neighbour's word, and the analysis
/// must find that.
#[test]
fn bf16_rows_get_16_bit_words() {
    let data = bf16_outlier_rows(4096);
    let chosen = encode_chunk(&data, 64, &EncodeOptions::default());
    assert_eq!(chosen.meta.word_width, WordWidth::W16);
    for w in WordWidth::ALL {
        let forced = encode_chunk(
            &data,
            64,
            &EncodeOptions {
                word_width: Some(w),
                ..EncodeOptions::default()
            },
        );
        assert!(real_size(&forced) >= real_size(&chosen), "{w}-bit words are smaller");
        if w == WordWidth::W32 {
            assert!(real_size(&forced) > real_size(&chosen), "16 bits strictly beat 32 here");
        }
    }
    let mut out = vec![0u8; data.len()];
    decode_chunk(&chosen.meta, &chosen.payload, DecoderKind::Fast, &mut out).unwrap();
    assert_eq!(out, data);
}

/// A 5 % sample finds nearly the masks of the full analysis on homogeneous data.
#[test]
fn sampling_costs_little_on_homogeneous_data() {
    let data = float_rows(20_000, 64, 9);
    let full = encode_chunk(&data, 256, &EncodeOptions::default());
    let sampled = encode_chunk(
        &data,
        256,
        &EncodeOptions {
            sample_fraction: Some(0.05),
            ..EncodeOptions::default()
        },
    );
    assert!(real_size(&full) < data.len() as u64, "float rows compress");
    assert!((real_size(&sampled) as f64) < real_size(&full) as f64 * 1.01);
    let mut out = vec![0u8; data.len()];
    decode_chunk(&sampled.meta, &sampled.payload, DecoderKind::Fast, &mut out).unwrap();
    assert_eq!(out, data);
}

/// Two interleaved row populations: two groups code them much smaller than one.
#[test]
fn groups_separate_row_populations() {
    let a = sparse_rows(2000, 64, 1);
    let b = float_rows(2000, 64, 2);
    let mut data = Vec::new();
    for r in 0..2000 {
        data.extend_from_slice(&a[r * 256..(r + 1) * 256]);
        data.extend_from_slice(&b[r * 256..(r + 1) * 256]);
    }
    let one = encode_chunk(&data, 256, &EncodeOptions::default());
    let two = encode_chunk(
        &data,
        256,
        &EncodeOptions {
            groups: 2,
            ..EncodeOptions::default()
        },
    );
    assert_eq!(two.meta.group_count, 2);
    assert!(
        real_size(&two) < real_size(&one),
        "{} vs {}",
        real_size(&two),
        real_size(&one)
    );
    let mut out = vec![0u8; data.len()];
    decode_chunk(&two.meta, &two.payload, DecoderKind::Fast, &mut out).unwrap();
    assert_eq!(out, data);
}

/// Asking for more groups than there are distinct rows still writes exactly that many groups.
#[test]
fn surplus_groups_are_written_empty() {
    let data = float_rows(3, 4, 5);
    let c = encode_chunk(
        &data,
        16,
        &EncodeOptions {
            groups: 9,
            ..EncodeOptions::default()
        },
    );
    assert_eq!(c.meta.group_count, 9);
    assert_eq!(c.meta.masks.len(), 9 * c.meta.words_per_row as usize);
    let mut out = vec![0u8; data.len()];
    decode_chunk(&c.meta, &c.payload, DecoderKind::Oracle, &mut out).unwrap();
    assert_eq!(out, data);
}

/// A chunk of one 4 MiB row cannot gain from masks (they cost two rows): a raw chunk, at once.
#[test]
fn a_few_huge_rows_make_a_raw_chunk() {
    let data = float_rows(1, 1 << 20, 3);
    let c = encode_chunk(&data, 4 << 20, &EncodeOptions::default());
    assert_eq!(c.meta.group_count, 0);
    assert_eq!(c.payload, data);
}
