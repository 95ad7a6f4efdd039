//! Row records (spec section 6): the clarity-first reference ("oracle") encoder and decoder.
//!
//! Laid out like the spec and written bit by bit; the fast paths in [`crate::fast`] are tested
//! against these functions. `mask`, `bitval` are the `n` words of one group (only the low `W` bits
//! are used); a row of `row_bytes` bytes has `n = ceil(row_bytes / (W/8))` words, the last one
//! partial when `W/8` does not divide `row_bytes` (spec 2.4).

use ibp_format::{align_up, bail, ensure, ErrorCode, Result, WordWidth};

pub use crate::fast::{decode_row, DecoderKind};

/// The words of a row (spec 2.4): word `j` is the little-endian integer of bytes
/// `j*W/8 .. min((j+1)*W/8, row_bytes) - 1`; when `W/8` does not divide the row, the last word is
/// partial and its missing high bytes are zero.
pub fn words_of(row: &[u8], w: WordWidth) -> impl Iterator<Item = u64> + '_ {
    row.chunks(w.bytes()).map(read_word_le)
}

/// `n = ceil_div(row_bytes, W/8)`: words per row (spec 2.4).
pub fn words_per_row(row_bytes: usize, w: WordWidth) -> usize {
    row_bytes.div_ceil(w.bytes())
}

/// Reads a little-endian word of 1 to 8 bytes.
pub(crate) fn read_word_le(bytes: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b[..bytes.len()].copy_from_slice(bytes);
    u64::from_le_bytes(b)
}

/// `W - popcount(mask)`: the number of free bits of a matching word (spec 6.2).
fn free_bits(mask: u64, w: WordWidth) -> u64 {
    (w.bits() - (mask & w.full_mask()).count_ones()) as u64
}

/// Whether a word participates (spec 6.3): `word & Mask = Bitval`.
pub fn participates(word: u64, mask: u64, bitval: u64) -> bool {
    word & mask == bitval & mask
}

/// `T` of spec 6.2: the bits of the coded form of `row` (participation bits plus fields).
pub fn coded_bits(row: &[u8], mask: &[u64], bitval: &[u64], w: WordWidth) -> u64 {
    let mut total = 0u64;
    for (j, word) in words_of(row, w).enumerate() {
        total += 1; // participation bit
        total += if participates(word, mask[j], bitval[j]) {
            free_bits(mask[j], w)
        } else {
            w.bits() as u64
        };
    }
    total
}

/// `align_up(row_bytes, A)`: the length of a raw record (spec 6.1).
pub fn raw_padded(row_bytes: u64, align: u64) -> u64 {
    align_up(row_bytes, align).expect("row_bytes is bounded by the format limits")
}

/// The length of the record of a coded row of `t` bits: `align_up(ceil_div(T, 8), A)` (spec 6.2).
pub fn coded_len(t: u64, align: u64) -> u64 {
    align_up(t.div_ceil(8), align).expect("T is bounded by the format limits")
}

/// The record length an encoder writes for `row` (spec 6.3): the coded length if it is shorter
/// than `align_up(row_bytes, A)`, otherwise the raw length.
pub fn record_len(row: &[u8], mask: &[u64], bitval: &[u64], w: WordWidth, align: u64) -> u64 {
    let raw = raw_padded(row.len() as u64, align);
    let coded = coded_len(coded_bits(row, mask, bitval, w), align);
    if coded < raw {
        coded
    } else {
        raw
    }
}

/// A least-significant-bit-first bit stream writer (spec 6.2).
struct BitWriter<'a> {
    out: &'a mut Vec<u8>,
    start: usize,
    bits: u64,
}

impl BitWriter<'_> {
    fn push_bit(&mut self, bit: bool) {
        let byte = self.start + (self.bits / 8) as usize;
        if byte == self.out.len() {
            self.out.push(0);
        }
        if bit {
            self.out[byte] |= 1 << (self.bits % 8);
        }
        self.bits += 1;
    }

    /// Appends the low `f` bits of `value`, bit 0 first.
    fn push_field(&mut self, value: u64, f: u32) {
        for b in 0..f {
            self.push_bit((value >> b) & 1 == 1);
        }
    }
}

/// Extracts the bits of `word` at the zero bits of `mask` (within `W` bits), packed low to high:
/// the inverse of the deposit of spec 6.2.
fn extract_free_bits(word: u64, mask: u64, w: WordWidth) -> u64 {
    let mut field = 0u64;
    let mut out_bit = 0;
    for b in 0..w.bits() {
        if (mask >> b) & 1 == 0 {
            field |= ((word >> b) & 1) << out_bit;
            out_bit += 1;
        }
    }
    field
}

/// Deposits the low bits of `field`, in order, into the zero bits of `mask` within `W` bits (the
/// `pdep` of spec 6.2).
fn deposit_free_bits(field: u64, mask: u64, w: WordWidth) -> u64 {
    let mut word = 0u64;
    let mut in_bit = 0;
    for b in 0..w.bits() {
        if (mask >> b) & 1 == 0 {
            word |= ((field >> in_bit) & 1) << b;
            in_bit += 1;
        }
    }
    word
}

/// Appends the record of `row` (spec 6): coded if that is shorter than raw, else raw; zero padded
/// to a multiple of `align`.
pub fn encode_row(row: &[u8], mask: &[u64], bitval: &[u64], w: WordWidth, align: u64, out: &mut Vec<u8>) {
    let len = record_len(row, mask, bitval, w, align);
    let start = out.len();
    if len == raw_padded(row.len() as u64, align) {
        out.extend_from_slice(row);
    } else {
        let words: Vec<u64> = words_of(row, w).collect();
        let mut writer = BitWriter { out, start, bits: 0 };
        let matches: Vec<bool> = words
            .iter()
            .enumerate()
            .map(|(j, &v)| participates(v, mask[j], bitval[j]))
            .collect();
        for &p in &matches {
            writer.push_bit(p);
        }
        for (j, &v) in words.iter().enumerate() {
            if matches[j] {
                let f = free_bits(mask[j], w) as u32;
                writer.push_field(extract_free_bits(v, mask[j], w), f);
            } else {
                writer.push_field(v, w.bits());
            }
        }
    }
    out.resize(start + len as usize, 0);
}

/// A least-significant-bit-first bit stream reader over a record; reading past the record's end
/// is reported, never performed.
struct BitReader<'a> {
    record: &'a [u8],
    pos: u64,
}

impl BitReader<'_> {
    fn len_bits(&self) -> u64 {
        self.record.len() as u64 * 8
    }

    fn bit(&self, k: u64) -> bool {
        (self.record[(k / 8) as usize] >> (k % 8)) & 1 == 1
    }

    /// Reads an `f`-bit field (spec 6.2), or `None` if it runs past the record.
    fn field(&mut self, f: u32) -> Option<u64> {
        if self.pos + f as u64 > self.len_bits() {
            return None;
        }
        let mut value = 0u64;
        for b in 0..f {
            if self.bit(self.pos + b as u64) {
                value |= 1 << b;
            }
        }
        self.pos += f as u64;
        Some(value)
    }
}

/// Decodes one row record (spec 6), the reference way.
///
/// `record` is the record's bytes; its length is the record length from the row index, and it is
/// raw iff that equals `align_up(row_bytes, A)` (spec 6.1). A coded record must have length
/// `align_up(ceil_div(T, 8), A)` (`E_ROW_LENGTH`); raw tails and coded padding bits must be zero
/// (`E_PADDING`). On success exactly `row_bytes` bytes of `out` are written.
///
/// Empty `mask` and `bitval` mean a raw chunk (spec 5.5, `G = 0`): the record must be raw
/// (`E_ROW_LENGTH` otherwise).
pub fn decode_row_oracle(
    record: &[u8],
    mask: &[u64],
    bitval: &[u64],
    w: WordWidth,
    row_bytes: usize,
    align: u64,
    out: &mut [u8],
) -> Result<()> {
    if let Some(result) = decode_raw_chunk_row(record, mask, bitval, row_bytes, align, out) {
        return result;
    }
    check_row_args(mask, bitval, w, row_bytes, align, out)?;
    let n = words_per_row(row_bytes, w);
    let raw = raw_padded(row_bytes as u64, align);
    let len = record.len() as u64;

    // 6.1 raw rows.
    if len == raw {
        return decode_raw_record(record, row_bytes, out);
    }
    ensure!(
        len < raw,
        ErrorCode::RowLength,
        "record of {len} bytes is longer than a raw record ({raw} bytes)"
    );

    // 6.2 coded rows: participation bits, then one field per word.
    let mut reader = BitReader { record, pos: 0 };
    let mut participation = Vec::with_capacity(n);
    for j in 0..n {
        match reader.field(1) {
            Some(bit) => participation.push(bit == 1),
            None => bail!(
                ErrorCode::RowLength,
                "record of {len} bytes ends inside the participation bits (bit {j} of {n})"
            ),
        }
    }
    let wb = w.bytes();
    let mut last_word = 0;
    for j in 0..n {
        let m = mask[j] & w.full_mask();
        let f = if participation[j] {
            free_bits(m, w) as u32
        } else {
            w.bits()
        };
        let Some(field) = reader.field(f) else {
            bail!(
                ErrorCode::RowLength,
                "record of {len} bytes ends inside the field of word {j}"
            )
        };
        let word = if participation[j] {
            (bitval[j] & m) | deposit_free_bits(field, m, w)
        } else {
            field
        };
        // The last word may be partial (2.4): only its bytes inside the row are written.
        let end = ((j + 1) * wb).min(row_bytes);
        out[j * wb..end].copy_from_slice(&word.to_le_bytes()[..end - j * wb]);
        last_word = word;
    }
    let t = reader.pos;
    let expected = coded_len(t, align);
    ensure!(
        len == expected,
        ErrorCode::RowLength,
        "coded row of {t} bits needs a {expected}-byte record, found {len} bytes"
    );
    for k in t..reader.len_bits() {
        ensure!(
            !reader.bit(k),
            ErrorCode::Padding,
            "padding bit {k} of a coded record of {t} bits is set"
        );
    }
    check_partial_word(last_word, row_bytes, w)
}

/// A partial last word (2.4) must have no set bit above the row's bytes (`E_PADDING`).
pub(crate) fn check_partial_word(last_word: u64, row_bytes: usize, w: WordWidth) -> Result<()> {
    let inside = row_bytes - (words_per_row(row_bytes, w) - 1) * w.bytes();
    if inside < w.bytes() {
        ensure!(
            last_word >> (8 * inside) == 0,
            ErrorCode::Padding,
            "partial last word 0x{last_word:x} has bits set above the row's last {inside} bytes"
        );
    }
    Ok(())
}

/// A row of a raw chunk (spec 5.5), which the row decoders are given as empty `mask` and
/// `bitval`: `None` if the masks are not empty, else the result of decoding the record, which
/// must be raw (`E_ROW_LENGTH`).
pub(crate) fn decode_raw_chunk_row(
    record: &[u8],
    mask: &[u64],
    bitval: &[u64],
    row_bytes: usize,
    align: u64,
    out: &mut [u8],
) -> Option<Result<()>> {
    if !(mask.is_empty() && bitval.is_empty()) {
        return None;
    }
    Some(decode_raw_only(record, row_bytes, align, out))
}

/// Decodes a record that must be raw (`E_ROW_LENGTH` otherwise).
fn decode_raw_only(record: &[u8], row_bytes: usize, align: u64, out: &mut [u8]) -> Result<()> {
    ensure!(
        row_bytes >= 1 && align.is_power_of_two() && align <= 128,
        ErrorCode::InvalidArgument,
        "{row_bytes}-byte rows with alignment {align}"
    );
    let raw = raw_padded(row_bytes as u64, align);
    ensure!(
        record.len() as u64 == raw,
        ErrorCode::RowLength,
        "record of {} bytes in a raw chunk (no masks) is not the raw length {raw}",
        record.len()
    );
    decode_raw_record(record, row_bytes, out)
}

/// Decodes a raw record (spec 6.1): the row's bytes, then zero padding (`E_PADDING`). The caller
/// has checked that `record.len()` is `align_up(row_bytes, A)`.
pub fn decode_raw_record(record: &[u8], row_bytes: usize, out: &mut [u8]) -> Result<()> {
    ensure!(
        record.len() >= row_bytes && out.len() >= row_bytes,
        ErrorCode::InvalidArgument,
        "raw record of {} bytes or output of {} bytes for a {row_bytes}-byte row",
        record.len(),
        out.len()
    );
    out[..row_bytes].copy_from_slice(&record[..row_bytes]);
    ensure!(
        record[row_bytes..].iter().all(|&b| b == 0),
        ErrorCode::Padding,
        "raw record padding after {row_bytes} row bytes is not zero"
    );
    Ok(())
}

/// Checks the caller's arguments of a row decoder (`E_INVALID_ARGUMENT`): these are API misuse,
/// not file defects.
pub(crate) fn check_row_args(
    mask: &[u64],
    bitval: &[u64],
    w: WordWidth,
    row_bytes: usize,
    align: u64,
    out: &[u8],
) -> Result<()> {
    check_group_args(mask, bitval, w, row_bytes, align)?;
    ensure!(
        out.len() >= row_bytes,
        ErrorCode::InvalidArgument,
        "output of {} bytes for a {row_bytes}-byte row",
        out.len()
    );
    Ok(())
}

/// Checks that Mask/Bitval, width, row size and alignment fit together (`E_INVALID_ARGUMENT`).
pub(crate) fn check_group_args(mask: &[u64], bitval: &[u64], w: WordWidth, row_bytes: usize, align: u64) -> Result<()> {
    let n = words_per_row(row_bytes, w);
    ensure!(
        row_bytes >= 1,
        ErrorCode::InvalidArgument,
        "rows must have at least 1 byte"
    );
    ensure!(
        mask.len() >= n && bitval.len() >= n,
        ErrorCode::InvalidArgument,
        "{} mask / {} bitval words for {n} words per row",
        mask.len(),
        bitval.len()
    );
    ensure!(
        align.is_power_of_two() && align <= 128,
        ErrorCode::InvalidArgument,
        "alignment {align} is not a power of two up to 128"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_6_4_worked_example() {
        let mask = [0xFF00, 0xFFFF];
        let bitval = [0x3F00, 0x0000];
        let w = WordWidth::W16;
        // First case: coded would be 4 bytes, not shorter than raw: stored raw.
        let row = [0xA5, 0x3F, 0x34, 0x12];
        assert_eq!(coded_bits(&row, &mask, &bitval, w), 26);
        let mut rec = Vec::new();
        encode_row(&row, &mask, &bitval, w, 1, &mut rec);
        assert_eq!(rec, row);
        // Second case: T = 10, record 97 02.
        let row = [0xA5, 0x3F, 0x00, 0x00];
        assert_eq!(coded_bits(&row, &mask, &bitval, w), 10);
        let mut rec = Vec::new();
        encode_row(&row, &mask, &bitval, w, 1, &mut rec);
        assert_eq!(rec, [0x97, 0x02]);
        let mut out = [0u8; 4];
        decode_row_oracle(&rec, &mask, &bitval, w, 4, 1, &mut out).unwrap();
        assert_eq!(out, row);
    }

    #[test]
    fn deposit_and_extract_are_inverse() {
        let w = WordWidth::W32;
        for &(word, mask) in &[(0xDEADBEEFu64, 0xFF00F0F0u64), (0x12345678, 0), (7, 0xFFFFFFFF)] {
            let f = extract_free_bits(word, mask, w);
            assert_eq!(deposit_free_bits(f, mask, w) | (word & mask), word);
        }
    }
}
