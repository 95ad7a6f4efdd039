//! The valid vectors (`v-NNNN`): every feature a decoder must handle.
//!
//! Ids are assigned here by hand, once; a new vector takes the next unused id, and an id is never
//! reused, even after its vector is withdrawn.

use crate::build::{ChunkSpec, EntrySpec, FileSpec, HeaderFields};
use crate::data::*;
use crate::manifest::OptionsRecord;
use crate::prng::SplitMix64;
use crate::vector::{valid_from_spec, DecodedEntry, Expectation, Vector};
use ibp_format::{Dtype, WordWidth};

/// An entry with one chunk covering all rows.
pub fn one_chunk_entry(
    name: &str,
    dtype: Dtype,
    shape: &[u64],
    row_bytes: u64,
    data: Vec<u8>,
    chunk: ChunkSpec,
) -> EntrySpec {
    let rows = (data.len() as u64 / row_bytes) as u32;
    EntrySpec {
        name: name.as_bytes().to_vec(),
        dtype,
        shape: shape.to_vec(),
        row_bytes,
        chunks: if rows == 0 { Vec::new() } else { vec![(rows, chunk)] },
        data,
    }
}

/// An entry whose rows are split into chunks of the given sizes, each analysed on its own rows.
pub fn chunked_entry(
    name: &str,
    dtype: Dtype,
    shape: &[u64],
    row_bytes: u64,
    data: Vec<u8>,
    chunks: &[(u32, WordWidth, u8, u32, f64)],
) -> EntrySpec {
    let rb = row_bytes as usize;
    let mut row = 0usize;
    let mut specs = Vec::new();
    for &(rows, word, align_log2, groups, threshold) in chunks {
        let part = &data[row * rb..(row + rows as usize) * rb];
        specs.push((rows, ChunkSpec::analysed(part, rb, word, align_log2, groups, threshold)));
        row += rows as usize;
    }
    assert_eq!(row * rb, data.len());
    EntrySpec {
        name: name.as_bytes().to_vec(),
        dtype,
        shape: shape.to_vec(),
        row_bytes,
        data,
        chunks: specs,
    }
}

fn file(entries: Vec<EntrySpec>) -> FileSpec {
    FileSpec {
        header: HeaderFields::default(),
        entries,
    }
}

/// A single-entry, single-chunk file whose chunk is analysed from the data.
#[allow(clippy::too_many_arguments)]
fn simple(
    name: &str,
    dtype: Dtype,
    shape: &[u64],
    row_bytes: u64,
    data: Vec<u8>,
    word: WordWidth,
    align_log2: u8,
    groups: u32,
    threshold: f64,
) -> FileSpec {
    let chunk = ChunkSpec::analysed(&data, row_bytes as usize, word, align_log2, groups, threshold);
    file(vec![one_chunk_entry(name, dtype, shape, row_bytes, data, chunk)])
}

/// `spec`, after checking that it has both raw and coded rows (as its description promises).
fn mixed(spec: FileSpec) -> FileSpec {
    let built = crate::build::build_file(&spec);
    let records: Vec<_> = built.layout.all_chunks().flat_map(|c| c.records.iter()).collect();
    assert!(
        records.iter().any(|r| r.raw) && records.iter().any(|r| !r.raw),
        "{:?}: expected raw and coded rows",
        String::from_utf8_lossy(&spec.entries[0].name)
    );
    spec
}

/// Special float bit patterns: NaNs with payloads (quiet and signalling, both signs), infinities,
/// signed zeros, subnormals.
const F32_SPECIALS: [u32; 12] = [
    0x7FC0_0000,
    0x7FC0_0001,
    0xFFC0_1234,
    0x7F80_0001,
    0xFFBF_FFFF,
    0x7FFF_FFFF,
    0x8000_0000,
    0x0000_0000,
    0x7F80_0000,
    0xFF80_0000,
    0x0000_0001,
    0x807F_FFFF,
];
const F16_SPECIALS: [u16; 8] = [0x7E00, 0x7E01, 0xFC01, 0x7C01, 0x8000, 0x0000, 0x7C00, 0x0001];
const BF16_SPECIALS: [u16; 8] = [0x7FC0, 0x7FC1, 0xFF81, 0x7F81, 0x8000, 0x0000, 0xFF80, 0x8001];
const F64_SPECIALS: [u64; 6] = [
    0x7FF8_0000_0000_0000,
    0x7FF8_0000_0000_0001,
    0xFFF0_0000_0000_0001,
    0x8000_0000_0000_0000,
    0x7FF0_0000_0000_0000,
    0x0000_0000_0000_0001,
];

/// Rows that repeat the special patterns with small per-row variations in their payload, so that
/// some rows are coded and the NaN payloads must survive coding.
fn special_rows<T: Copy>(specials: &[T], rows: usize, vary: impl Fn(T, usize) -> T) -> Vec<T> {
    (0..rows)
        .flat_map(|r| specials.iter().map(move |&s| (s, r)))
        .map(|(s, r)| vary(s, r))
        .collect()
}

/// Every valid vector.
pub fn valid_vectors(data_dir: &std::path::Path) -> Vec<Vector> {
    let mut rng = SplitMix64::new(0x1B9_0001);
    let mut v = Vec::new();

    v.push(valid_from_spec(
        "v-0001",
        "a file with zero entries: header, an 8-byte directory, footer",
        &["3", "3.1", "7", "8"],
        &file(vec![]),
    ));

    let d = near_rows(&mut rng, 12, 31, 2, &[5]);
    v.push(valid_from_spec(
        "v-0002",
        "W=8: 12 u8 rows of 31 bytes (low 2 bits of each byte vary), one outlier row stored raw",
        &["2.4", "5.1", "5.2", "5.3", "6.1", "6.2"],
        &mixed(simple("w8", Dtype::U8, &[12, 31], 31, d, WordWidth::W8, 0, 1, 0.9)),
    ));

    let d = bf16_rows(&mut rng, 10, 32, 0.05, &[3]);
    v.push(valid_from_spec(
        "v-0003",
        "W=16: 10 bf16 rows of 32 values (64 bytes), threshold 0.8 masks, one outlier row stored raw",
        &["2.4", "5.1", "6.2", "6.3"],
        &mixed(simple("w16", Dtype::Bf16, &[10, 32], 64, d, WordWidth::W16, 0, 1, 0.8)),
    ));

    let d = embedding_rows(&mut rng, 10, 8, 0.5, 12, &[7]);
    v.push(valid_from_spec(
        "v-0004",
        "W=32: 10 f32 rows of 8 values (32 bytes), threshold 0.8",
        &["2.4", "5.1", "6.2", "6.3"],
        &simple("w32", Dtype::F32, &[10, 8], 32, d, WordWidth::W32, 0, 1, 0.8),
    ));

    let vals: Vec<u64> = (0..16).map(|i| (1.0f64 + i as f64 / 1024.0).to_bits()).collect();
    v.push(valid_from_spec(
        "v-0005",
        "W=64, row length 8: 16 f64 rows of one value each (n = 1)",
        &["2.4", "5.1", "6.2"],
        &simple("w64", Dtype::F64, &[16], 8, u64_bytes(&vals), WordWidth::W64, 0, 1, 1.0),
    ));

    let d: Vec<u8> = (0..20).map(|i| 0x10 | (i % 4) as u8).collect();
    v.push(valid_from_spec(
        "v-0006",
        "row length 1 (u8, W=8): a coded record would be 1 byte, not shorter than raw, so every row is raw",
        &["2.3", "6.1", "6.3"],
        &simple("len1", Dtype::U8, &[20], 1, d, WordWidth::W8, 0, 1, 1.0),
    ));

    let d = near_rows(&mut rng, 9, 7, 1, &[]);
    v.push(valid_from_spec(
        "v-0007",
        "row length 7 (i8, W=8, n = 7)",
        &["2.4", "6.2"],
        &simple("len7", Dtype::I8, &[9, 7], 7, d, WordWidth::W8, 0, 1, 1.0),
    ));

    let d: Vec<u8> = (0..8 * 33).map(|_| (rng.below(4) == 0) as u8).collect();
    v.push(valid_from_spec(
        "v-0008",
        "row length 33 (bool, W=8): one free bit per word",
        &["2.2", "2.4", "6.2"],
        &simple("len33", Dtype::Bool, &[8, 33], 33, d, WordWidth::W8, 0, 1, 1.0),
    ));

    let d = bf16_rows(&mut rng, 4, 2048, 0.02, &[1]);
    v.push(valid_from_spec(
        "v-0009",
        "large rows: 4 bf16 rows of 4 KiB (W=16); record lengths span more than 255, so 2-byte length fields",
        &["5.1", "5.2", "5.3", "6.2"],
        &simple("len4096", Dtype::Bf16, &[4, 2048], 4096, d, WordWidth::W16, 0, 1, 0.85),
    ));

    let d = u16_bytes(&[7, 9, 7, 7, 0xFFFF, 7]);
    v.push(valid_from_spec(
        "v-0010",
        "a single row (i16, 6 values, W=16)",
        &["2.3", "5.1", "6.2"],
        &simple("one_row", Dtype::I16, &[1, 6], 12, d, WordWidth::W16, 0, 1, 1.0),
    ));

    v.push(valid_from_spec(
        "v-0011",
        "an empty entry: shape [0, 5] f32, row_count 0, no chunks",
        &["2.1", "2.3", "7", "7.1"],
        &file(vec![one_chunk_entry(
            "empty",
            Dtype::F32,
            &[0, 5],
            20,
            Vec::new(),
            ChunkSpec::single(WordWidth::W32, 0, vec![], vec![]),
        )]),
    ));

    let scalar = u64_bytes(&[0x8000_0000_0000_0000]);
    let rank8 = u32_bytes(&[1, 2, 3, 4, 5, 6]);
    v.push(valid_from_spec(
        "v-0012",
        "rank 0 (an f64 scalar -0.0, one row of 8 bytes) and rank 8 (shape [1,1,1,1,1,1,2,3] i32)",
        &["2.1", "2.3", "7"],
        &file(vec![
            one_chunk_entry(
                "scalar",
                Dtype::F64,
                &[],
                8,
                scalar,
                ChunkSpec::single(
                    WordWidth::W64,
                    0,
                    vec![0xFFFF_FFFF_FFFF_FFFF],
                    vec![0x8000_0000_0000_0000],
                ),
            ),
            one_chunk_entry(
                "rank8",
                Dtype::I32,
                &[1, 1, 1, 1, 1, 1, 2, 3],
                12,
                rank8,
                ChunkSpec::single(WordWidth::W32, 0, vec![0xFFFF_FFF0; 3], vec![0; 3]),
            ),
        ]),
    ));

    let d = embedding_rows(&mut rng, 6, 16, 0.5, 16, &[]);
    let mut spec = simple("all_raw", Dtype::F32, &[6, 16], 64, d, WordWidth::W32, 0, 1, 1.0);
    spec.entries[0].chunks[0].1.force_raw = (0..6).collect();
    v.push(valid_from_spec(
        "v-0013",
        "all rows raw although coding them would be shorter (an encoder MAY store any row raw)",
        &["6.1", "5.3"],
        &spec,
    ));

    let row = f32_bytes(&[1.0, -2.5, 0.0, 3.25, 1e-3, -0.0, 7.0, 8.0]);
    let d: Vec<u8> = row.iter().copied().cycle().take(16 * 32).collect();
    v.push(valid_from_spec(
        "v-0014",
        "all rows coded with Mask all-ones: 16 identical rows, each record is just the 8 participation bits (1 byte)",
        &["2.6", "6.2", "5.3"],
        &simple("all_packed", Dtype::F32, &[16, 8], 32, d, WordWidth::W32, 0, 1, 1.0),
    ));

    let d = near_rows(&mut rng, 5, 16, 3, &[]);
    v.push(valid_from_spec(
        "v-0015",
        "Mask all-zero (Bitval zero): a coded record would take n + n*W bits, so every row is raw",
        &["2.6", "6.1", "6.3"],
        &file(vec![one_chunk_entry(
            "mask_zero",
            Dtype::U16,
            &[5, 8],
            16,
            d,
            ChunkSpec::single(WordWidth::W16, 0, vec![0; 8], vec![0; 8]),
        )]),
    ));

    let align_ids = [
        "v-0016", "v-0017", "v-0018", "v-0019", "v-0020", "v-0021", "v-0022", "v-0023",
    ];
    let d = embedding_rows(&mut rng, 6, 96, 0.25, 16, &[4]);
    for (log2, id) in align_ids.into_iter().enumerate() {
        let desc = format!(
            "row alignment A = {} (align_log2 {log2}): 6 f32 rows of 384 bytes, coded and raw; records and payload start on multiples of A",
            1u32 << log2
        );
        v.push(valid_from_spec(
            id,
            &desc,
            &["3.3", "5.1", "5.3", "5.4", "6.1", "6.2"],
            &mixed(simple(
                &format!("align{log2}"),
                Dtype::F32,
                &[6, 96],
                384,
                d.clone(),
                WordWidth::W32,
                log2 as u8,
                1,
                0.8,
            )),
        ));
    }

    // Groups: rows alternate between two populations with different exponents.
    let mut d = Vec::new();
    for r in 0..12 {
        let scale = if r % 2 == 0 { 1.0 } else { 1000.0 };
        let vals: Vec<f32> = (0..6).map(|_| ((1.0 + rng.unit() / 8.0) * scale) as f32).collect();
        d.extend(f32_bytes(&vals));
    }
    v.push(valid_from_spec(
        "v-0024",
        "G = 2: rows alternate between two value ranges, each with its own Mask/Bitval",
        &["2.6", "5.2", "6"],
        &simple(
            "groups2",
            Dtype::F32,
            &[12, 6],
            24,
            d.clone(),
            WordWidth::W32,
            0,
            2,
            1.0,
        ),
    ));
    let mut spec = simple("groups3", Dtype::F32, &[12, 6], 24, d, WordWidth::W32, 2, 2, 1.0);
    {
        let c = &mut spec.entries[0].chunks[0].1;
        let n = 6;
        c.groups = 3;
        c.masks.extend(vec![0; n]);
        c.bitvals.extend(vec![0; n]);
        // Group 2 (Mask 0) holds one row (row 3), which is therefore raw.
        c.group_ids[3] = 2;
    }
    v.push(valid_from_spec(
        "v-0025",
        "G = 3 with A = 4: one group with Mask 0 holds a single (raw) row",
        &["2.6", "5.2", "6", "6.1"],
        &spec,
    ));

    let d = near_rows(&mut rng, 512, 4, 2, &[]);
    let mut spec = simple("groups256", Dtype::U8, &[512, 4], 4, d, WordWidth::W8, 0, 256, 1.0);
    spec.entries[0].chunks[0].1.group_ids.reverse();
    let (masks, bitvals) = {
        let c = &spec.entries[0].chunks[0].1;
        crate::build::analyse(&spec.entries[0].data, 4, WordWidth::W8, 256, &c.group_ids, 1.0)
    };
    spec.entries[0].chunks[0].1.masks = masks;
    spec.entries[0].chunks[0].1.bitvals = bitvals;
    v.push(valid_from_spec(
        "v-0026",
        "G = 256 (the limit): 512 u8 rows of 4 bytes, two rows per group",
        &["2.6", "5.1", "5.2", "10"],
        &spec,
    ));

    // Several entries and chunks, with per-chunk word width, alignment and groups.
    let d0 = embedding_rows(&mut rng, 21, 8, 1.0, 8, &[2, 13]);
    let e0 = chunked_entry(
        "layers.0.weight",
        Dtype::F32,
        &[21, 8],
        32,
        d0,
        &[
            (5, WordWidth::W32, 0, 1, 1.0),
            (6, WordWidth::W16, 4, 1, 0.8),
            (7, WordWidth::W8, 7, 2, 0.9),
            (3, WordWidth::W64, 3, 1, 1.0),
        ],
    );
    let e1 = one_chunk_entry(
        "layers.0.bias",
        Dtype::F32,
        &[0],
        4,
        Vec::new(),
        ChunkSpec::single(WordWidth::W32, 0, vec![], vec![]),
    );
    let d2 = near_rows(&mut rng, 9, 10, 4, &[]);
    let e2 = chunked_entry(
        "tokens",
        Dtype::U8,
        &[90],
        10,
        d2,
        &[(4, WordWidth::W16, 1, 1, 1.0), (5, WordWidth::W8, 0, 1, 1.0)],
    );
    v.push(valid_from_spec(
        "v-0027",
        "3 entries (one empty) and 6 chunks; chunks of one entry use different W (32, 16, 8, 64), A and G",
        &["2.5", "3.1", "5.1", "7", "7.1"],
        &file(vec![e0, e1, e2]),
    ));

    let vals = special_rows(&F32_SPECIALS, 6, |s, r| {
        if s & 0x7F80_0000 == 0x7F80_0000 && s & 0x7F_FFFF != 0 {
            s ^ ((r as u32) << 3)
        } else {
            s
        }
    });
    v.push(valid_from_spec(
        "v-0028",
        "f32 NaN payloads (quiet, signalling, negative), infinities, -0.0, subnormals: decoded bit for bit",
        &["2.2", "6.2"],
        &simple(
            "f32_specials",
            Dtype::F32,
            &[6, 12],
            48,
            u32_bytes(&vals),
            WordWidth::W32,
            0,
            1,
            0.9,
        ),
    ));
    let vals = special_rows(&F16_SPECIALS, 5, |s, r| {
        if s & 0x7C00 == 0x7C00 && s & 0x3FF != 0 {
            s ^ ((r as u16) << 4)
        } else {
            s
        }
    });
    v.push(valid_from_spec(
        "v-0029",
        "f16 NaN payloads, infinities, -0.0, subnormals",
        &["2.2", "6.2"],
        &simple(
            "f16_specials",
            Dtype::F16,
            &[5, 8],
            16,
            u16_bytes(&vals),
            WordWidth::W16,
            0,
            1,
            0.9,
        ),
    ));
    let vals = special_rows(&BF16_SPECIALS, 5, |s, r| {
        if s & 0x7F80 == 0x7F80 && s & 0x7F != 0 {
            s ^ (r as u16)
        } else {
            s
        }
    });
    v.push(valid_from_spec(
        "v-0030",
        "bf16 NaN payloads, infinities, -0.0, subnormals (W=32: two bf16 per word)",
        &["2.2", "2.4", "6.2"],
        &simple(
            "bf16_specials",
            Dtype::Bf16,
            &[5, 8],
            16,
            u16_bytes(&vals),
            WordWidth::W32,
            0,
            1,
            0.9,
        ),
    ));
    let vals = special_rows(&F64_SPECIALS, 4, |s, r| {
        if s & 0x7FF0_0000_0000_0000 == 0x7FF0_0000_0000_0000 && s & 0xF_FFFF_FFFF_FFFF != 0 {
            s ^ ((r as u64) << 40)
        } else {
            s
        }
    });
    v.push(valid_from_spec(
        "v-0031",
        "f64 NaN payloads, infinities, -0.0, subnormals",
        &["2.2", "6.2"],
        &simple(
            "f64_specials",
            Dtype::F64,
            &[4, 6],
            48,
            u64_bytes(&vals),
            WordWidth::W64,
            0,
            1,
            0.9,
        ),
    ));

    let d = near_rows(&mut rng, 6, 8, 2, &[]);
    let mut spec = simple("x", Dtype::U8, &[6, 8], 8, d, WordWidth::W8, 0, 1, 1.0);
    spec.header.optional = 0xFFFF_FFFF;
    v.push(valid_from_spec(
        "v-0032",
        "every optional-feature bit set: a 1.0 reader ignores them",
        &["4", "4.3"],
        &spec,
    ));
    let d = near_rows(&mut rng, 6, 8, 2, &[]);
    let mut spec = simple("x", Dtype::U8, &[6, 8], 8, d, WordWidth::W8, 0, 1, 1.0);
    spec.header.minor = 7;
    spec.header.optional = 0x0000_0001;
    v.push(valid_from_spec(
        "v-0033",
        "minor version 7 with an optional-feature bit: a 1.0 reader reads any 1.x minor version",
        &["4.1", "4.3", "12.1"],
        &spec,
    ));

    let d = embedding_rows(&mut rng, 8, 8, 0.5, 16, &[]);
    let mut spec = simple("declined", Dtype::F32, &[8, 8], 32, d, WordWidth::W32, 0, 1, 1.0);
    spec.entries[0].chunks[0].1.decline_words = vec![0, 3, 4];
    v.push(valid_from_spec(
        "v-0034",
        "participation bit 0 for words that match their Mask/Bitval (words 0, 3, 4 stored whole): a decoder MUST accept it",
        &["6.2", "6.3"],
        &spec,
    ));

    let d = embedding_rows(&mut rng, 8, 8, 0.5, 16, &[5]);
    let mut spec = simple("wide_lengths", Dtype::F32, &[8, 8], 32, d, WordWidth::W32, 1, 1, 1.0);
    spec.entries[0].chunks[0].1.length_bytes = Some(4);
    spec.entries[0].chunks[0].1.length_base = Some(0);
    v.push(valid_from_spec(
        "v-0035",
        "4-byte row-length fields with length_base 0 (wider than needed is allowed)",
        &["5.1", "5.2", "5.3"],
        &spec,
    ));

    let d = embedding_rows(&mut rng, 8, 8, 0.5, 16, &[5]);
    let mut spec = simple("based_lengths", Dtype::F32, &[8, 8], 32, d, WordWidth::W32, 0, 1, 1.0);
    spec.entries[0].chunks[0].1.length_bytes = Some(2);
    v.push(valid_from_spec(
        "v-0036",
        "2-byte row-length fields with a non-zero length_base",
        &["5.1", "5.3"],
        &spec,
    ));

    let long_name: String = "n".repeat(1024);
    let d1 = near_rows(&mut rng, 2, 4, 1, &[]);
    let d2 = near_rows(&mut rng, 2, 4, 1, &[]);
    v.push(valid_from_spec(
        "v-0037",
        "entry names: 1024 bytes (the limit) and multi-byte UTF-8 (\"température/ж/漢字/🙂\")",
        &["2.1", "7", "7.1", "10"],
        &file(vec![
            one_chunk_entry(
                &long_name,
                Dtype::U8,
                &[2, 4],
                4,
                d1.clone(),
                ChunkSpec::analysed(&d1, 4, WordWidth::W8, 0, 1, 1.0),
            ),
            one_chunk_entry(
                "température/ж/漢字/🙂",
                Dtype::U8,
                &[2, 4],
                4,
                d2.clone(),
                ChunkSpec::analysed(&d2, 4, WordWidth::W8, 0, 1, 1.0),
            ),
        ]),
    ));

    // Every dtype: two rows of 8 bytes each (16 bytes of data), W = 64 when it divides.
    let mut entries = Vec::new();
    for dt in Dtype::ALL {
        let elems = 8 / dt.size();
        let d = near_rows(&mut rng, 2, 8, 3, &[]);
        let d = if dt == Dtype::Bool {
            d.iter().map(|b| b & 1).collect()
        } else {
            d
        };
        entries.push(one_chunk_entry(
            dt.name(),
            dt,
            &[2, elems],
            8,
            d.clone(),
            ChunkSpec::analysed(&d, 8, WordWidth::W64, 0, 1, 1.0),
        ));
    }
    v.push(valid_from_spec(
        "v-0038",
        "every dtype code 1-15, one entry each (2 rows of 8 bytes)",
        &["2.2", "7"],
        &file(entries),
    ));

    let row = u64_bytes(&[0x3FF0_0000_0000_0000, 0x4000_0000_0000_0000, 0x3FF8_0000_0000_0000, 0]);
    let mut d = row.clone();
    d.extend(u64_bytes(&[
        0x3FF0_0000_0000_00FF,
        0x4000_0000_0000_0000,
        0x3FF8_0000_0000_0001,
        1,
    ]));
    d.extend(row);
    v.push(valid_from_spec(
        "v-0039",
        "W=64 with 0-bit fields (fully invariant words) next to 8-bit fields; a row with T a multiple of 8",
        &["6.2"],
        &file(vec![one_chunk_entry(
            "zero_fields",
            Dtype::F64,
            &[3, 4],
            32,
            d,
            ChunkSpec::single(
                WordWidth::W64,
                0,
                vec![!0xFF, u64::MAX, !0xFF, !0xFF],
                vec![0x3FF0_0000_0000_0000, 0x4000_0000_0000_0000, 0x3FF8_0000_0000_0000, 0],
            ),
        )]),
    ));

    // Reference-encoder vectors: the file is exactly what `encode_to_vec` writes for the options.
    let d = bf16_rows(&mut rng, 48, 64, 0.1, &[10, 30]);
    v.push(reference_vector(
        "v-0040",
        "reference encoder, default search (W, threshold) on 48 bf16 rows of 64 values, chunks of 16 rows",
        &["5", "6"],
        vec![DecodedEntry {
            name: "emb.bf16".into(),
            dtype: Dtype::Bf16,
            shape: vec![48, 64],
            row_bytes: 128,
            data: d,
        }],
        OptionsRecord {
            chunk_rows: Some(16),
            ..OptionsRecord::default()
        },
    ));
    let d = embedding_rows(&mut rng, 40, 24, 0.3, 12, &[]);
    v.push(reference_vector(
        "v-0041",
        "reference encoder with 4 groups, A = 16, W = 32, threshold 0.9 on 40 f32 rows with 11 mantissa bits",
        &["2.6", "5", "6"],
        vec![DecodedEntry {
            name: "emb.f32".into(),
            dtype: Dtype::F32,
            shape: vec![40, 24],
            row_bytes: 96,
            data: d,
        }],
        OptionsRecord {
            word_width: Some(32),
            threshold: Some(0.9),
            groups: 4,
            align_log2: 4,
            ..OptionsRecord::default()
        },
    ));

    v.extend(crate::realdata::real_data_vectors(data_dir));

    v.push(valid_from_spec(
        "v-0044",
        "the annotated example of spec/example.md: bf16 [3, 4], W=16, A=1, one raw and two coded rows",
        &["14", "4", "5", "6.1", "6.2", "7", "8"],
        &mixed(crate::example::example_spec()),
    ));

    // Spec 6.4: the first row must be raw (T = 26 bits, 4 bytes, not shorter than 4), the second is
    // coded as `97 02`.
    let d = u16_bytes(&[0x3FA5, 0x1234, 0x3FA5, 0x0000]);
    v.push(valid_from_spec(
        "v-0045",
        "the worked example of spec 6.4: rows [0x3FA5, 0x1234] (raw) and [0x3FA5, 0x0000] (coded as 97 02)",
        &["6.4", "6.2", "6.3"],
        &file(vec![one_chunk_entry(
            "spec_6_4",
            Dtype::U16,
            &[2, 2],
            4,
            d,
            ChunkSpec::single(WordWidth::W16, 0, vec![0xFF00, 0xFFFF], vec![0x3F00, 0x0000]),
        )]),
    ));

    v.push(valid_from_spec(
        "v-0046",
        "the base file the invalid vectors x-0001..x-0086 and x-0088..x-0111 are cut from: 2 entries, G = 2, A = 8, raw and coded rows",
        &["5", "5.4", "6.1", "6.2", "7"],
        &mixed(crate::invalid::base_spec()),
    ));

    // Partial last words (spec 2.4): W/8 does not divide row_bytes.
    let d1 = near_rows(&mut rng, 9, 7, 1, &[4]);
    let d2: Vec<u8> = (0..8 * 33).map(|_| (rng.below(3) == 0) as u8).collect();
    let d3 = embedding_rows(&mut rng, 6, 5, 0.5, 12, &[2]);
    v.push(valid_from_spec(
        "v-0047",
        "partial last words: W=32 over 7-byte u8 rows (last word 3 bytes), W=64 over 33-byte bool rows (last word 1 byte), W=64 over 20-byte f32 rows with A = 4",
        &["2.4", "5.1", "6.2"],
        &file(vec![
            one_chunk_entry("u8x7", Dtype::U8, &[9, 7], 7, d1.clone(), ChunkSpec::analysed(&d1, 7, WordWidth::W32, 0, 1, 1.0)),
            one_chunk_entry("boolx33", Dtype::Bool, &[8, 33], 33, d2.clone(), ChunkSpec::analysed(&d2, 33, WordWidth::W64, 0, 1, 1.0)),
            one_chunk_entry("f32x5", Dtype::F32, &[6, 5], 20, d3.clone(), ChunkSpec::analysed(&d3, 20, WordWidth::W64, 2, 1, 0.9)),
        ]),
    ));
    v.push(valid_from_spec(
        "v-0048",
        "a raw chunk (G = 0): no masks, every row raw",
        &["5.1", "5.2", "5.5"],
        &crate::invalid::raw_chunk_spec(Vec::new(), 0),
    ));
    let d = embedding_rows(&mut rng, 12, 6, 0.5, 12, &[]);
    let mut e = chunked_entry(
        "mixed_raw",
        Dtype::F32,
        &[12, 6],
        24,
        d,
        &[
            (4, WordWidth::W32, 0, 1, 1.0),
            (5, WordWidth::W16, 0, 1, 1.0),
            (3, WordWidth::W64, 3, 1, 1.0),
        ],
    );
    e.chunks[1].1 = ChunkSpec::raw(WordWidth::W16, 4);
    v.push(valid_from_spec(
        "v-0049",
        "an entry whose middle chunk is raw (G = 0, A = 16, padded records) between coded chunks; the last chunk has W=64 over 24-byte rows",
        &["2.4", "2.5", "5.5", "5.4"],
        &file(vec![e]),
    ));

    // Metadata entries (spec 2.7, optional-feature bit 0): a safetensors `__metadata__` kept as the
    // u8 text of its JSON object, for the whole file and for the tensors of one folder file. A
    // decoder that ignores bit 0 decodes them as the u8 tensors they are.
    let text = |t: &str| DecodedEntry {
        name: String::new(),
        dtype: Dtype::U8,
        shape: vec![t.len() as u64],
        row_bytes: t.len() as u64,
        data: t.as_bytes().to_vec(),
    };
    let whole = r#"{"format":"pt", "note":"keys in the writer's order"}"#;
    let folder = r#"{"format":"np"}"#;
    let w = embedding_rows(&mut rng, 8, 16, 0.3, 12, &[]);
    let b = embedding_rows(&mut rng, 4, 8, 0.3, 12, &[]);
    v.push(reference_vector(
        "v-0050",
        "metadata entries (optional-feature bit 0): `__metadata__` and `a.safetensors:__metadata__` hold JSON objects of strings as u8 vectors, next to f32 tensors",
        &["2.7", "4.3"],
        vec![
            DecodedEntry {
                name: "__metadata__".into(),
                ..text(whole)
            },
            DecodedEntry {
                name: "w".into(),
                dtype: Dtype::F32,
                shape: vec![8, 16],
                row_bytes: 64,
                data: w,
            },
            DecodedEntry {
                name: "a.safetensors:__metadata__".into(),
                ..text(folder)
            },
            DecodedEntry {
                name: "a.safetensors:b".into(),
                dtype: Dtype::F32,
                shape: vec![4, 8],
                row_bytes: 32,
                data: b,
            },
        ],
        OptionsRecord {
            optional_features: ibp_format::OPTIONAL_METADATA_ENTRIES,
            ..OptionsRecord::default()
        },
    ));
    v
}

/// A vector written by the reference encoder.
pub fn reference_vector(
    id: &'static str,
    description: &str,
    clauses: &[&'static str],
    entries: Vec<DecodedEntry>,
    options: OptionsRecord,
) -> Vector {
    let bytes = crate::encoder::encode_entries(&entries, &options)
        .unwrap_or_else(|e| panic!("{id}: reference encoder failed: {e}"));
    Vector {
        id,
        description: description.to_owned(),
        clauses: clauses.to_vec(),
        bytes,
        expect: Expectation::Valid {
            entries,
            options,
            reference_encoder: true,
        },
    }
}
