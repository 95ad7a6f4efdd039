//! The properties the fuzz targets check. Each `check_*` function takes the raw fuzz input and
//! panics, with a message naming the property, when it fails; it returns normally for any input
//! the decoders handle correctly (rejecting it with a file-defect error code included).
//!
//! Byte-level targets run every property twice: on the input as it is, and on a copy whose CRCs are
//! recomputed ([`crate::replay::fix_crcs`]), so that mutations reach the structural checks and the
//! row decoders that sit behind the CRCs.
//!
//! Depends on `std`, `arbitrary`, `ibp_codec`, `ibp_format` and the sibling module `replay`
//! (reached as `crate::replay`, so that a test binary can include both files with `#[path]`).

use crate::replay::{split_gather_input, with_fixed_crcs};
use arbitrary::{Arbitrary, Unstructured};
use ibp_codec::chunk_codec::{decode_chunk, decode_chunk_rows};
use ibp_codec::fast::{RowDecoder, RowEncoder};
use ibp_codec::options::EncodeOptions;
use ibp_codec::row::{decode_row, encode_row, DecoderKind};
use ibp_codec::{decode_bytes, encode_to_vec, ContainerReader, Limits};
use ibp_format::{ChunkMeta, Directory, Dtype, EntryInfo, ErrorCode, FormatError, WordWidth, FOOTER_LEN, MAGIC};
use std::io::Cursor;

/// Entries and chunks the byte-level properties look at per input (bounds the work per run).
const MAX_ENTRIES_CHECKED: usize = 8;
/// Largest decoded size the byte-level properties decode (bigger claims are only parsed).
const MAX_DECODE_BYTES: u64 = 1 << 22;

/// Limits for fuzzing: small enough that a crafted file cannot make a run slow or large.
fn fuzz_limits() -> Limits {
    Limits {
        max_output_bytes: MAX_DECODE_BYTES,
        max_gather_rows: 1 << 16,
        max_directory_bytes: 1 << 20,
    }
}

/// Panics unless `e` is an error a decoder may report for the bytes of a file: a file-defect code
/// of spec 11.2 (never an API code such as `E_ROW_INDEX`, `E_IO` or `E_INVALID_ARGUMENT`), with a
/// description.
pub fn assert_file_error(e: &FormatError, context: &str) {
    assert!(
        !matches!(e.code, ErrorCode::RowIndex | ErrorCode::Io | ErrorCode::InvalidArgument),
        "{context}: a file defect reported with the API code {e}"
    );
    assert!(!e.detail.is_empty(), "{context}: error {e:?} has no detail");
}

fn open(bytes: &[u8]) -> Result<ContainerReader<Cursor<&[u8]>>, FormatError> {
    ContainerReader::open_with_limits(Cursor::new(bytes), fuzz_limits())
}

/// Same outcome: equal values, or errors with equal codes.
fn assert_same<T: PartialEq + std::fmt::Debug>(a: &Result<T, FormatError>, b: &Result<T, FormatError>, what: &str) {
    match (a, b) {
        (Ok(x), Ok(y)) => assert!(x == y, "{what}: the two results differ"),
        (Err(x), Err(y)) => assert_eq!(x.code, y.code, "{what}: different error codes ({x} / {y})"),
        (Ok(_), Err(e)) | (Err(e), Ok(_)) => panic!("{what}: one succeeds, the other fails with {e}"),
    }
}

// ---------------------------------------------------------------------------------------------
// parse

/// `parse`: opening a container never panics; a rejection carries a file-defect code; and whatever
/// the reader accepts (header, footer, directory, each chunk's header, metadata and padding) is
/// byte for byte what the format's serialisers write for the parsed values — the parser leaves no
/// bit unchecked.
pub fn check_parse(data: &[u8]) {
    for file in with_fixed_crcs(data) {
        parse_one(&file);
    }
}

fn parse_one(file: &[u8]) {
    let mut reader = match open(file) {
        Ok(r) => r,
        Err(e) => return assert_file_error(&e, "open"),
    };
    let len = file.len();
    assert_eq!(
        reader.header().to_bytes()[..],
        file[..32],
        "accepted header is not canonical"
    );
    assert_eq!(
        reader.footer().to_bytes()[..],
        file[len - FOOTER_LEN as usize..],
        "accepted footer is not canonical"
    );
    let footer = *reader.footer();
    let dir_bytes = &file[footer.directory_offset as usize..(len - FOOTER_LEN as usize)];
    let directory = Directory {
        entries: reader.entries().to_vec(),
    };
    assert_eq!(directory.to_bytes(), dir_bytes, "accepted directory is not canonical");
    for (e, entry) in directory.entries.iter().enumerate().take(MAX_ENTRIES_CHECKED) {
        for (c, chunk) in entry.chunks.iter().enumerate().take(MAX_ENTRIES_CHECKED) {
            match reader.chunk_meta(e, c) {
                Ok(meta) => check_meta(&meta, file, chunk.offset, chunk.byte_len, entry),
                Err(err) => assert_file_error(&err, "chunk_meta"),
            }
        }
    }
}

/// An accepted chunk's metadata re-serialises to its bytes, and its row index is consistent.
fn check_meta(meta: &ChunkMeta, file: &[u8], offset: u64, byte_len: u64, entry: &EntryInfo) {
    let prefix = meta.to_bytes(offset);
    let start = offset as usize;
    assert_eq!(
        prefix[..],
        file[start..start + prefix.len()],
        "accepted chunk header and metadata are not canonical"
    );
    assert_eq!(
        prefix.len() as u64 + meta.payload_len,
        byte_len,
        "chunk extent differs from its directory reference"
    );
    assert_eq!(
        meta.row_bytes(),
        entry.row_bytes,
        "chunk row size differs from the entry's"
    );
    assert_eq!(meta.row_offsets.len(), meta.row_count as usize + 1);
    assert_eq!(*meta.row_offsets.last().expect("rows + 1"), meta.payload_len);
    for r in 0..meta.row_count as usize {
        let range = meta.record_range(r);
        assert!(
            range.start < range.end && (range.end - range.start) as u64 <= meta.raw_padded(),
            "row {r}: record {range:?} out of the allowed lengths"
        );
        assert_eq!(range.start as u64 % meta.align(), 0, "row {r}: record misaligned");
        if meta.is_raw_chunk() {
            assert!(meta.is_raw(r), "row {r} of a raw chunk (G = 0) is not stored raw");
            continue;
        }
        assert!(
            meta.group_of(r) < meta.group_count as usize,
            "row {r}: group {} of {} groups (ids {:?})",
            meta.group_of(r),
            meta.group_count,
            meta.group_ids
        );
    }
}

// ---------------------------------------------------------------------------------------------
// decode

/// `decode`: whole-file decoding never panics; a rejection carries a file-defect code; an accepted
/// file decodes every entry to exactly `row_count * row_bytes` bytes, `verify` agrees with the
/// decode, and gathering every row in order returns the same bytes.
pub fn check_decode(data: &[u8]) {
    for file in with_fixed_crcs(data) {
        decode_one(&file);
    }
}

fn decodable(reader: &ContainerReader<Cursor<&[u8]>>) -> bool {
    let total = reader
        .entries()
        .iter()
        .try_fold(0u64, |acc, e| acc.checked_add(e.row_count.checked_mul(e.row_bytes)?));
    total.is_some_and(|t| t <= MAX_DECODE_BYTES) && reader.entries().len() <= MAX_ENTRIES_CHECKED
}

fn decode_one(file: &[u8]) {
    let mut reader = match open(file) {
        Ok(r) => r,
        Err(e) => return assert_file_error(&e, "open"),
    };
    if !decodable(&reader) {
        return;
    }
    let decoded = reader.decode_all(DecoderKind::Fast);
    let report = open(file).expect("opened once").verify(DecoderKind::Fast);
    match &decoded {
        Err(e) => {
            assert_file_error(e, "decode_all");
            assert!(!report.is_ok(), "decode_all fails with {e}, verify finds no problem");
            // Both walk the chunks in file order: verify's first problem is decode_all's error.
            let first = &report.problems[0].2;
            assert_eq!(first.code, e.code, "verify's first problem {first} vs decode_all's {e}");
        }
        Ok(entries) => {
            assert!(
                report.is_ok(),
                "decode_all succeeds, verify reports {:?}",
                report.problems
            );
            for (e, (info, bytes)) in reader.entries().iter().zip(entries).enumerate() {
                assert_eq!(bytes.len() as u64, info.row_count * info.row_bytes, "entry {e} size");
                let all: Vec<u64> = (0..info.row_count).collect();
                let mut fresh = open(file).expect("opened once");
                let gathered = fresh.gather(e, &all, DecoderKind::Fast);
                assert!(
                    gathered.as_ref().is_ok_and(|g| g == bytes),
                    "entry {e}: gathering every row differs from decoding ({:?})",
                    gathered.err()
                );
            }
        }
    }
    let whole = decode_bytes(file, DecoderKind::Fast).map(|v| v.into_iter().map(|(_, b)| b).collect::<Vec<_>>());
    assert_same(&decoded, &whole, "decode_all vs decode_bytes");
}

// ---------------------------------------------------------------------------------------------
// gather

/// `gather`: input is `[k: u8][k x u32 LE indices][container]` ([`split_gather_input`]). For each
/// entry, the indices are mapped into `0..=row_count` (the top bit keeps an index as it is, mostly
/// out of range) and gathered with both decoders. Properties: no panic; both decoders agree; an
/// out-of-range index is `E_ROW_INDEX`; when the whole entry decodes, an in-range gather succeeds
/// and returns exactly the requested rows of that decode, in the requested order.
pub fn check_gather(data: &[u8]) {
    let (indices, container) = split_gather_input(data);
    for file in with_fixed_crcs(container) {
        gather_one(&indices, &file);
    }
}

fn gather_one(indices: &[u32], file: &[u8]) {
    let Ok(reader) = open(file) else { return };
    if !decodable(&reader) {
        return;
    }
    let entries: Vec<EntryInfo> = reader.entries().to_vec();
    for (e, info) in entries.iter().enumerate() {
        let rows: Vec<u64> = indices
            .iter()
            .map(|&i| {
                if i & 0x8000_0000 != 0 {
                    (i & 0x7FFF_FFFF) as u64
                } else {
                    i as u64 % (info.row_count + 1)
                }
            })
            .collect();
        let out_of_range = rows.iter().any(|&r| r >= info.row_count);
        let limits = fuzz_limits();
        let over_limit = rows.len() as u64 > limits.max_gather_rows
            || (rows.len() as u64).saturating_mul(info.row_bytes) > limits.max_output_bytes;
        let oracle = open(file).expect("opened once").gather(e, &rows, DecoderKind::Oracle);
        let fast = open(file).expect("opened once").gather(e, &rows, DecoderKind::Fast);
        assert_same(&oracle, &fast, "gather: oracle vs fast");
        // The reader's limits are checked first, then the indices (both before any chunk is read).
        let code = fast.as_ref().err().map(|e| e.code);
        if over_limit {
            assert_eq!(code, Some(ErrorCode::Limit), "gather over the reader's limits");
            continue;
        }
        if out_of_range {
            assert_eq!(code, Some(ErrorCode::RowIndex), "gather of an out-of-range row");
            continue;
        }
        if let Err(err) = &fast {
            assert_file_error(err, "gather");
        }
        let whole = open(file).expect("opened once").decode_entry(e, DecoderKind::Fast);
        if let Ok(whole) = whole {
            let got = fast.unwrap_or_else(|err| panic!("entry decodes, but gather fails: {err}"));
            let rb = info.row_bytes as usize;
            let expected: Vec<u8> = rows
                .iter()
                .flat_map(|&r| whole[r as usize * rb..(r as usize + 1) * rb].iter().copied())
                .collect();
            assert!(
                got == expected,
                "gather returns other bytes than the rows of the decode"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// roundtrip

/// Parameters of one round trip, drawn from the fuzz input.
#[derive(Debug, Arbitrary)]
pub struct RoundtripCase {
    width: u8,
    threshold: u8,
    sample: u8,
    groups: u8,
    align_log2: u8,
    chunk_rows: u8,
    dtype: u8,
    words: u8,
    shape_style: u8,
    noise_density: u8,
    data: Vec<u8>,
}

/// A tensor and the options to encode it with, built from a [`RoundtripCase`].
#[derive(Debug)]
pub struct RoundtripPlan {
    /// Encoder options (possibly invalid for the row size: then encoding must fail).
    pub opts: EncodeOptions,
    /// Element dtype.
    pub dtype: Dtype,
    /// Shape.
    pub shape: Vec<u64>,
    /// Bytes per row.
    pub row_bytes: u64,
    /// The tensor's bytes.
    pub data: Vec<u8>,
}

impl RoundtripCase {
    /// Builds the tensor: rows of `row_bytes` bytes that share most of their bits (a base row with
    /// noise at input-chosen positions), so that the encoder codes rows rather than storing them raw.
    pub fn plan(&self) -> RoundtripPlan {
        let width = match self.width % 6 {
            0 | 5 => None,
            k => Some(WordWidth::ALL[k as usize - 1]),
        };
        let threshold = match self.threshold {
            0 => None,
            255 => Some(1.0),
            t => Some(0.5 + t as f64 / 512.0),
        };
        let sample = match self.sample {
            0 => None,
            s => Some(s as f64 / 255.0),
        };
        let groups = match self.groups {
            255 => 256,
            254 => 0, // invalid on purpose
            g => 1 + (g % 6) as u32,
        };
        let chunk_rows = match self.chunk_rows {
            0 => None,
            r => Some(r as u32 % 64),
        };
        let dtype = Dtype::ALL[self.dtype as usize % Dtype::ALL.len()];
        let elems_per_row = 1 + self.words as u64 % 24;
        let row_bytes = dtype.size() * elems_per_row;
        let rb = row_bytes as usize;
        let max_rows = 300usize;
        let (base, rest) = self.data.split_at(self.data.len().min(rb));
        let (noise_mask, rest) = rest.split_at(rest.len().min(rb));
        let rows = (rest.len() / rb).min(max_rows);
        let density = self.noise_density % 4;
        let mut data = Vec::with_capacity(rows * rb);
        for r in 0..rows {
            for j in 0..rb {
                let noise = rest[r * rb + j];
                let b = base.get(j).copied().unwrap_or(0);
                let m = noise_mask.get(j).copied().unwrap_or(0);
                let m = match density {
                    0 => m,
                    1 => m & 0x0F,
                    2 => m & 0x01,
                    _ => 0xFF,
                };
                data.push((b & !m) | (noise & m));
            }
        }
        let shape = match self.shape_style % 4 {
            0 => vec![rows as u64, elems_per_row],
            1 => vec![rows as u64 * elems_per_row],
            2 if rows == 1 && elems_per_row == 1 => vec![],
            2 => vec![rows as u64, 1, elems_per_row],
            _ => vec![0, elems_per_row], // empty tensor
        };
        let data = if shape.contains(&0) { Vec::new() } else { data };
        RoundtripPlan {
            opts: EncodeOptions {
                word_width: width,
                threshold,
                sample_fraction: sample,
                groups,
                align_log2: self.align_log2 % 9, // 8 is invalid on purpose
                chunk_rows,
                // Width choice 5 (auto) also sizes chunks in GPU sectors and prefers 64-bit words.
                transfer_cost: (self.width % 6 == 5).then_some(ibp_codec::options::TransferCost::GPU),
                prefer_wide_words: (self.width % 6 == 5).then_some(ibp_codec::options::GPU_WIDE_WORDS_WITHIN),
                // Positions of more than two runs of free bits merged where that costs at most 0.1 %
                // (one case in four) or 50 % (nearly any merge; one in four).
                fewer_runs_within: match self.noise_density / 4 % 4 {
                    1 => Some(0.001),
                    2 => Some(0.5),
                    _ => None,
                },
            },
            dtype,
            shape,
            row_bytes,
            data,
        }
    }
}

/// `roundtrip`: any tensor encoded with any options decodes bit-exactly with both decoders (whole
/// file, per chunk and gathered), its chunks honour the options (word width, alignment, group
/// count, rows per chunk), and options the encoder documents as invalid are rejected with
/// `E_INVALID_ARGUMENT` rather than written.
pub fn check_roundtrip(data: &[u8]) {
    let Ok(case) = RoundtripCase::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    let plan = case.plan();
    roundtrip_plan(&plan);
}

/// Runs the round-trip property on one plan (also used by the root tests with hand-made plans).
pub fn roundtrip_plan(plan: &RoundtripPlan) {
    let tensors = [(
        "t",
        plan.dtype,
        plan.shape.as_slice(),
        plan.row_bytes,
        plan.data.as_slice(),
    )];
    let encoded = encode_to_vec(&tensors, &plan.opts);
    if let Err(e) = plan.opts.validate(plan.row_bytes) {
        let got = encoded.err().map(|e| e.code);
        assert_eq!(got, Some(e.code), "invalid options {:?} must be rejected", plan.opts);
        return;
    }
    let file = encoded.unwrap_or_else(|e| panic!("encoding {plan:?} fails: {e}"));
    for kind in [DecoderKind::Oracle, DecoderKind::Fast] {
        let decoded = decode_bytes(&file, kind).unwrap_or_else(|e| panic!("{kind:?} decode: {e}"));
        assert_eq!(decoded.len(), 1);
        let (info, bytes) = &decoded[0];
        assert_eq!(info.dtype, plan.dtype);
        assert_eq!(info.shape, plan.shape);
        assert_eq!(info.row_bytes, plan.row_bytes);
        assert!(bytes == &plan.data, "{kind:?} decode differs from the input ({plan:?})");
    }
    let mut reader = ContainerReader::open(Cursor::new(&file[..])).expect("opens");
    let info = reader.entries()[0].clone();
    let per_chunk = plan.opts.rows_per_chunk(plan.row_bytes);
    let starts = info.chunk_row_starts();
    for (c, chunk) in info.chunks.iter().enumerate() {
        let meta = reader.chunk_meta(0, c).expect("valid chunk");
        assert_eq!(meta.align_log2, plan.opts.align_log2, "chunk {c}: alignment option");
        // A raw chunk (G = 0, spec 5.5) is the encoder's choice when masks cannot pay; otherwise
        // the chunk has the width and group count asked for.
        if !meta.is_raw_chunk() {
            if let Some(w) = plan.opts.word_width {
                assert_eq!(meta.word_width, w, "chunk {c}: word width option not honoured");
            }
            assert_eq!(meta.group_count, plan.opts.groups, "chunk {c}: group count option");
        }
        let last = c + 1 == info.chunks.len();
        assert!(
            chunk.row_count as u64 == per_chunk || (last && (chunk.row_count as u64) < per_chunk),
            "chunk {c} has {} rows, options ask for {per_chunk}",
            chunk.row_count
        );
        let rb = plan.row_bytes as usize;
        let expect = &plan.data[starts[c] as usize * rb..starts[c + 1] as usize * rb];
        for kind in [DecoderKind::Oracle, DecoderKind::Fast] {
            let got = reader.decode_chunk(0, c, kind).expect("chunk decodes");
            assert!(got == expect, "chunk {c} decodes differently with {kind:?}");
        }
    }
    if info.row_count > 0 {
        let rows: Vec<u64> = (0..info.row_count.min(40))
            .map(|i| (i * 7919 + 13) % info.row_count)
            .collect();
        let rb = plan.row_bytes as usize;
        let expected: Vec<u8> = rows
            .iter()
            .flat_map(|&r| plan.data[r as usize * rb..(r as usize + 1) * rb].iter().copied())
            .collect();
        for kind in [DecoderKind::Oracle, DecoderKind::Fast] {
            let got = reader.gather(0, &rows, kind).expect("gather");
            assert!(got == expected, "gather with {kind:?} differs");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// differential

/// One row-level case for the differential target: a chunk's word width, alignment, masks and
/// bitvals, and a record of a length the row index allows.
#[derive(Debug, Arbitrary)]
pub struct RowCase {
    width: u8,
    align_log2: u8,
    words: u8,
    record_units: u16,
    masks: Vec<u64>,
    bitvals: Vec<u64>,
    record: Vec<u8>,
}

/// `differential`: the oracle and the fast CPU decoders agree: the same bytes or the same error
/// code. Inputs that start with the IBP magic are containers (decoded whole, as they are and with
/// their CRCs recomputed); any other input is a [`RowCase`]: one record decoded by both row
/// decoders with metadata that satisfies everything the chunk parser checks (Bitval inside Mask, a
/// record length that is a multiple of `A` and at most `align_up(row_bytes, A)`).
pub fn check_differential(data: &[u8]) {
    if data.starts_with(&MAGIC) {
        for file in with_fixed_crcs(data) {
            let Ok(reader) = open(&file) else { continue };
            if !decodable(&reader) {
                continue;
            }
            let oracle = decode_bytes(&file, DecoderKind::Oracle);
            let fast = decode_bytes(&file, DecoderKind::Fast);
            let strip = |r: ibp_format::Result<Vec<(EntryInfo, Vec<u8>)>>| {
                r.map(|v| v.into_iter().map(|(_, b)| b).collect::<Vec<_>>())
            };
            assert_same(&strip(oracle), &strip(fast), "file decode: oracle vs fast");
        }
        return;
    }
    let Ok(case) = RowCase::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    row_differential(&case);
}

fn row_differential(case: &RowCase) {
    let w = WordWidth::ALL[case.width as usize % 4];
    let n = 1 + case.words as usize % 40;
    // The last word may be partial (spec 2.4): drop up to W/8 - 1 bytes from the row.
    let row_bytes = n * w.bytes() - (case.align_log2 >> 3) as usize % w.bytes();
    let align = 1u64 << (case.align_log2 % 8);
    let raw_padded = (row_bytes as u64).div_ceil(align) * align;
    let units = raw_padded / align;
    let len = ((1 + case.record_units as u64 % units) * align) as usize;
    let full = w.full_mask();
    let masks: Vec<u64> = (0..n)
        .map(|j| case.masks.get(j).copied().unwrap_or(full) & full)
        .collect();
    let bitvals: Vec<u64> = (0..n)
        .map(|j| case.bitvals.get(j).copied().unwrap_or(0) & masks[j])
        .collect();
    let mut record = case.record.clone();
    record.resize(len, 0);
    let mut outs = Vec::new();
    for kind in [DecoderKind::Oracle, DecoderKind::Fast] {
        let mut out = vec![0u8; row_bytes];
        let r = decode_row(kind, &record, &masks, &bitvals, w, row_bytes, align, &mut out);
        if let Err(e) = &r {
            assert!(
                matches!(e.code, ErrorCode::RowLength | ErrorCode::Padding),
                "{kind:?} row decode: unexpected error {e}"
            );
        }
        outs.push(r.map(|()| out));
    }
    assert_same(&outs[0], &outs[1], "row decode: oracle vs fast");
    // The fast decoder's portable `pdep` path (the fast kind uses BMI2 where the CPU has it).
    let portable = RowDecoder::new(&masks, &bitvals, w, row_bytes, align)
        .expect("valid arguments")
        .force_portable();
    let mut out = vec![0u8; row_bytes];
    let r = portable.decode(&record, &mut out).map(|()| out);
    assert_same(&outs[0], &r, "row decode: oracle vs fast (portable)");

    // Encoders: the oracle, the fast (BMI2 where present) and the portable fast encoder write the
    // same record for the row (the decoded row, or the record's first bytes taken as a row), and
    // it decodes back to the row.
    let row: Vec<u8> = match &outs[0] {
        Ok(row) => row.clone(),
        Err(_) => {
            let mut row = case.record.clone();
            row.resize(row_bytes, 0);
            row
        }
    };
    let mut oracle = Vec::new();
    encode_row(&row, &masks, &bitvals, w, align, &mut oracle);
    for portable in [false, true] {
        let mut enc = RowEncoder::new(&masks, &bitvals, w, row_bytes, align).expect("valid arguments");
        if portable {
            enc = enc.force_portable();
        }
        let mut fast = Vec::new();
        let len = enc.encode(&row, &mut fast);
        assert_eq!(len as usize, fast.len(), "RowEncoder::encode returns the record length");
        assert!(fast == oracle, "encoders disagree (portable: {portable})");
    }
    assert!(oracle.len() as u64 <= raw_padded && (oracle.len() as u64).is_multiple_of(align));
    for kind in [DecoderKind::Oracle, DecoderKind::Fast] {
        let mut back = vec![0u8; row_bytes];
        decode_row(kind, &oracle, &masks, &bitvals, w, row_bytes, align, &mut back)
            .unwrap_or_else(|e| panic!("{kind:?}: an encoded record does not decode: {e}"));
        assert!(back == row, "{kind:?}: encode then decode changes the row");
    }
}

// ---------------------------------------------------------------------------------------------
// no_leak

/// `no_leak`: for every chunk of a container (its metadata validated, its payload taken as it is,
/// CRC unchecked), decoding the whole chunk and decoding a list of its rows give the same outcome
/// whether the output buffer starts filled with 0x00 or 0xFF — on success every output byte is
/// written from the file, none left over from the buffer — with both decoders; a row list decode
/// equals the same rows of the whole-chunk decode; an out-of-range row is `E_ROW_INDEX`.
pub fn check_no_leak(data: &[u8]) {
    for file in with_fixed_crcs(data) {
        no_leak_one(&file);
    }
}

fn no_leak_one(file: &[u8]) {
    let Ok(mut reader) = open(file) else { return };
    if !decodable(&reader) {
        return;
    }
    let entries: Vec<EntryInfo> = reader.entries().to_vec();
    for (e, entry) in entries.iter().enumerate() {
        for (c, chunk) in entry.chunks.iter().enumerate().take(MAX_ENTRIES_CHECKED) {
            let Ok(meta) = reader.chunk_meta(e, c) else { continue };
            let start = (chunk.offset + chunk.byte_len - meta.payload_len) as usize;
            let payload = &file[start..start + meta.payload_len as usize];
            let rb = meta.row_bytes() as usize;
            let rows = meta.row_count as usize;
            let picks: Vec<u32> = [rows - 1, 0, rows / 2, rows - 1, 0].iter().map(|&r| r as u32).collect();
            for kind in [DecoderKind::Oracle, DecoderKind::Fast] {
                let whole = prefilled(rows * rb, |out| decode_chunk(&meta, payload, kind, out));
                let some = prefilled(picks.len() * rb, |out| {
                    decode_chunk_rows(&meta, payload, &picks, kind, out)
                });
                if let (Ok(whole), Ok(some)) = (&whole, &some) {
                    for (k, &r) in picks.iter().enumerate() {
                        let r = r as usize;
                        assert!(
                            some[k * rb..(k + 1) * rb] == whole[r * rb..(r + 1) * rb],
                            "{kind:?}: row {r} of a row-list decode differs from the chunk decode"
                        );
                    }
                }
                if whole.is_ok() {
                    assert!(some.is_ok(), "{kind:?}: chunk decodes, its rows do not");
                }
                let mut out = vec![0u8; rb];
                let bad = decode_chunk_rows(&meta, payload, &[rows as u32], kind, &mut out);
                assert_eq!(
                    bad.err().map(|e| e.code),
                    Some(ErrorCode::RowIndex),
                    "{kind:?}: row {rows} of a {rows}-row chunk"
                );
            }
        }
    }
}

/// Runs `decode` into a buffer of `len` bytes filled with 0x00 and into one filled with 0xFF;
/// asserts both give the same outcome and, on success, the same bytes.
fn prefilled(len: usize, mut decode: impl FnMut(&mut [u8]) -> ibp_format::Result<()>) -> ibp_format::Result<Vec<u8>> {
    let mut zeros = vec![0x00u8; len];
    let mut ones = vec![0xFFu8; len];
    let a = decode(&mut zeros).map(|()| zeros);
    let b = decode(&mut ones).map(|()| ones);
    if let Err(e) = &a {
        assert_file_error(e, "chunk decode");
    }
    assert_same(&a, &b, "decode into a 0x00- vs a 0xFF-filled buffer");
    a
}
