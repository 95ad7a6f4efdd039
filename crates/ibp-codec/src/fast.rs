//! The fast row decoder and encoder: same contract as [`crate::row`], word at a time.
//!
//! Per (chunk, group) a [`RowDecoder`] / [`RowEncoder`] precomputes, for every word position, the
//! free-bit count `W - popcount(Mask)`, the inverted mask and the Bitval. A coded record is then
//! read with one unaligned 16-byte little-endian load per word (a 128-bit window, enough for a
//! 64-bit field at any bit offset), the free bits are deposited with `pdep` (BMI2 when the CPU has
//! it, detected at run time, else a portable shift-and-mask per run of free bits) and the length
//! and padding rules of spec 6.2 are checked after the row: a record that is too short only makes
//! the reads past its end return zeros (or, through [`RowDecoder::decode_at`], bytes of the next
//! records), and is then rejected. Participation selects by masks, not branches. A block of 64
//! words that all match with no free bits is a copy of the Bitvals.
//!
//! The encoder makes one pass: fields from stream bit `n` on, participation bits collected in a
//! register and put in front at the end; it gives up and stores the row raw as soon as the coded
//! size reaches the raw size.

use crate::row::{
    check_group_args, check_partial_word, coded_len, decode_raw_record, decode_row_oracle, raw_padded, read_word_le,
    words_per_row,
};
use ibp_format::{bail, ensure, ErrorCode, Result, WordWidth};

/// Which row decoder to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DecoderKind {
    /// The bit-by-bit reference decoder of [`crate::row`].
    Oracle,
    /// The word-at-a-time decoder of this module.
    Fast,
}

/// Bit deposit and extract (`pdep` / `pext`) over 64-bit words.
pub(crate) trait BitOps {
    /// Deposits the low bits of `x`, in order, into the set bits of `m`.
    fn deposit(x: u64, m: u64) -> u64;
    /// Gathers the bits of `x` at the set bits of `m` into the low bits of the result.
    fn extract(x: u64, m: u64) -> u64;
}

/// Portable `pdep` / `pext`: one shift-and-mask step per contiguous run of set bits in the mask
/// (a float's free bits are one run per element: its low mantissa bits).
pub(crate) struct Portable;

/// The lowest run of set bits of `m` (non-zero): `(shift, length, bits)` where `bits` is the run
/// shifted down to bit 0.
#[inline(always)]
fn lowest_run(m: u64) -> (u32, u32, u64) {
    let shift = m.trailing_zeros();
    let len = (!(m >> shift)).trailing_zeros();
    // `len` is 1..=64 and `shift + len <= 64`, so both shifts stay below 64.
    (shift, len, u64::MAX >> (64 - len))
}

impl BitOps for Portable {
    #[inline(always)]
    fn deposit(mut x: u64, mut m: u64) -> u64 {
        let mut r = 0;
        while m != 0 {
            let (shift, len, ones) = lowest_run(m);
            r |= (x & ones) << shift;
            x = x.checked_shr(len).unwrap_or(0);
            m &= !(ones << shift);
        }
        r
    }

    #[inline(always)]
    fn extract(x: u64, mut m: u64) -> u64 {
        let mut r = 0;
        let mut filled = 0u32;
        while m != 0 {
            let (shift, len, ones) = lowest_run(m);
            // `filled + len <= 64` and `filled < 64` while bits remain.
            r |= ((x >> shift) & ones) << filled;
            filled += len;
            m &= !(ones << shift);
        }
        r
    }
}

/// Decodes one row record, with the chosen decoder. Same contract as
/// [`decode_row_oracle`]: `record.len()` is the record length from the row index; empty `mask`
/// and `bitval` mean a raw chunk (spec 5.5), whose records must be raw.
#[allow(clippy::too_many_arguments)]
pub fn decode_row(
    kind: DecoderKind,
    record: &[u8],
    mask: &[u64],
    bitval: &[u64],
    w: WordWidth,
    row_bytes: usize,
    align: u64,
    out: &mut [u8],
) -> Result<()> {
    match kind {
        DecoderKind::Oracle => decode_row_oracle(record, mask, bitval, w, row_bytes, align, out),
        DecoderKind::Fast => match crate::row::decode_raw_chunk_row(record, mask, bitval, row_bytes, align, out) {
            Some(result) => result,
            None => RowDecoder::new(mask, bitval, w, row_bytes, align)?.decode(record, &mut out[..]),
        },
    }
}

/// Per-position tables of one group of one chunk, shared by the fast decoder and encoder.
#[derive(Debug, Clone)]
struct Tables {
    w: WordWidth,
    row_bytes: usize,
    n: usize,
    align: u64,
    raw: u64,
    /// `Mask[j]` (low `W` bits).
    masks: Vec<u64>,
    /// `!Mask[j]` within `W` bits: where the free bits go.
    free_masks: Vec<u64>,
    /// `Bitval[j] & Mask[j]`.
    bitvals: Vec<u64>,
    /// `W - popcount(Mask[j])`.
    free: Vec<u8>,
    /// What the decoder's loop needs per position, side by side.
    entries: Vec<DecodeEntry>,
    /// The Bitvals as bytes (`n * W / 8`): the words of a row whose every word matched with no free
    /// bits.
    bitval_bytes: Vec<u8>,
    /// Free bits of each block of 64 positions.
    block_free_bits: Vec<u64>,
}

/// One word position as the fast decoder's loop reads it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DecodeEntry {
    /// `!Mask[j]` within `W` bits.
    pub(crate) free_mask: u64,
    /// `Bitval[j] & Mask[j]`.
    pub(crate) bitval: u64,
    /// `popcount(Mask[j])`: the bits a matching word does not store.
    pub(crate) fixed_bits: u64,
}

impl Tables {
    fn new(mask: &[u64], bitval: &[u64], w: WordWidth, row_bytes: usize, align: u64) -> Result<Self> {
        check_group_args(mask, bitval, w, row_bytes, align)?;
        let n = words_per_row(row_bytes, w);
        let full = w.full_mask();
        let masks: Vec<u64> = mask[..n].iter().map(|m| m & full).collect();
        let entries = masks
            .iter()
            .zip(bitval)
            .map(|(&m, &b)| DecodeEntry {
                free_mask: !m & full,
                bitval: b & m,
                fixed_bits: m.count_ones() as u64,
            })
            .collect();
        let free: Vec<u8> = masks.iter().map(|m| (w.bits() - m.count_ones()) as u8).collect();
        Ok(Tables {
            entries,
            bitval_bytes: bitval[..n]
                .iter()
                .zip(&masks)
                .flat_map(|(b, m)| (b & m).to_le_bytes().into_iter().take(w.bytes()))
                .collect(),
            block_free_bits: free.chunks(64).map(|c| c.iter().map(|&f| f as u64).sum()).collect(),
            w,
            row_bytes,
            n,
            align,
            raw: raw_padded(row_bytes as u64, align),
            free_masks: masks.iter().map(|m| !m & full).collect(),
            bitvals: bitval[..n].iter().zip(&masks).map(|(b, m)| b & m).collect(),
            free,
            masks,
        })
    }
}

/// Which `pdep`/`pext` implementation a prepared decoder or encoder uses.
#[derive(Debug, Clone, Copy)]
enum Ops {
    Portable,
    #[cfg(target_arch = "x86_64")]
    Bmi2(crate::bmi2::Bmi2Token),
}

impl Ops {
    fn detect() -> Ops {
        #[cfg(target_arch = "x86_64")]
        if let Some(token) = crate::bmi2::Bmi2Token::detect() {
            return Ops::Bmi2(token);
        }
        Ops::Portable
    }
}

/// A fast decoder prepared for one group of one chunk (word width, row size, alignment,
/// Mask/Bitval). Cheap to clone and shareable across threads.
#[derive(Debug, Clone)]
pub struct RowDecoder {
    tables: Tables,
    ops: Ops,
}

impl RowDecoder {
    /// Prepares a decoder for `n = ceil(row_bytes / (W/8))` words of Mask/Bitval
    /// (`E_INVALID_ARGUMENT` if the arguments do not fit together).
    pub fn new(mask: &[u64], bitval: &[u64], w: WordWidth, row_bytes: usize, align: u64) -> Result<RowDecoder> {
        Ok(RowDecoder {
            tables: Tables::new(mask, bitval, w, row_bytes, align)?,
            ops: Ops::detect(),
        })
    }

    /// The same decoder using the portable `pdep` (for testing the BMI2 path against it).
    pub fn force_portable(mut self) -> RowDecoder {
        self.ops = Ops::Portable;
        self
    }

    /// Whether this decoder uses the BMI2 `pdep` instruction.
    pub fn uses_bmi2(&self) -> bool {
        !matches!(self.ops, Ops::Portable)
    }

    /// Decodes one record (its length is the record length from the row index) into
    /// `out[..row_bytes]`. Errors as [`decode_row_oracle`].
    pub fn decode(&self, record: &[u8], out: &mut [u8]) -> Result<()> {
        self.decode_within(record, record, out)
    }

    /// Decodes the record at `range` of `bytes` (typically a chunk's payload): the same as
    /// `decode(&bytes[range], out)`, but faster, because word loads may run past the record into
    /// the rest of `bytes` (bits that never reach the output of a valid record).
    pub fn decode_at(&self, bytes: &[u8], range: std::ops::Range<usize>, out: &mut [u8]) -> Result<()> {
        let Some(record) = bytes.get(range.clone()) else {
            bail!(
                ErrorCode::InvalidArgument,
                "record range {range:?} outside the {} bytes given",
                bytes.len()
            );
        };
        self.decode_within(record, &bytes[range.start..], out)
    }

    /// Decodes `record`; `readable` starts with the record and may continue past it.
    fn decode_within(&self, record: &[u8], readable: &[u8], out: &mut [u8]) -> Result<()> {
        let t = &self.tables;
        ensure!(
            out.len() >= t.row_bytes,
            ErrorCode::InvalidArgument,
            "output of {} bytes for a {}-byte row",
            out.len(),
            t.row_bytes
        );
        let out = &mut out[..t.row_bytes];
        let len = record.len() as u64;
        if len == t.raw {
            return decode_raw_record(record, t.row_bytes, out);
        }
        ensure!(
            len < t.raw,
            ErrorCode::RowLength,
            "record of {len} bytes is longer than a raw record ({} bytes)",
            t.raw
        );
        ensure!(
            len * 8 >= t.n as u64,
            ErrorCode::RowLength,
            "record of {len} bytes ends inside the {} participation bits",
            t.n
        );
        let (end_bits, last_word) = match (t.w, self.ops) {
            (WordWidth::W8, Ops::Portable) => decode_fields::<1, Portable>(t.into(), readable, out),
            (WordWidth::W16, Ops::Portable) => decode_fields::<2, Portable>(t.into(), readable, out),
            (WordWidth::W32, Ops::Portable) => decode_fields::<4, Portable>(t.into(), readable, out),
            (WordWidth::W64, Ops::Portable) => decode_fields::<8, Portable>(t.into(), readable, out),
            #[cfg(target_arch = "x86_64")]
            (w, Ops::Bmi2(token)) => crate::bmi2::decode_fields(token, w, t.into(), readable, out),
        };
        check_coded_end(record, end_bits, t.align)?;
        check_partial_word(last_word, t.row_bytes, t.w)
    }
}

/// The pieces of the tables the field loop needs (so that [`crate::bmi2`] can call it).
pub(crate) struct FieldTables<'a> {
    pub(crate) n: usize,
    pub(crate) bitval_bytes: &'a [u8],
    pub(crate) block_free_bits: &'a [u64],
    pub(crate) entries: &'a [DecodeEntry],
    pub(crate) masks: &'a [u64],
    pub(crate) w: WordWidth,
    pub(crate) free_masks: &'a [u64],
    pub(crate) bitvals: &'a [u64],
    pub(crate) free: &'a [u8],
}

impl<'a> From<&'a Tables> for FieldTables<'a> {
    fn from(t: &'a Tables) -> Self {
        FieldTables {
            n: t.n,
            bitval_bytes: &t.bitval_bytes,
            block_free_bits: &t.block_free_bits,
            entries: &t.entries,
            masks: &t.masks,
            w: t.w,
            free_masks: &t.free_masks,
            bitvals: &t.bitvals,
            free: &t.free,
        }
    }
}

/// After the fields: `T` must fit the record, the record length must be
/// `align_up(ceil(T/8), A)` and the bits after `T` must be zero (spec 6.2).
fn check_coded_end(record: &[u8], t_bits: u64, align: u64) -> Result<()> {
    let len = record.len() as u64;
    if t_bits > len * 8 {
        bail!(
            ErrorCode::RowLength,
            "coded row of {t_bits} bits runs past its {len}-byte record"
        );
    }
    let expected = coded_len(t_bits, align);
    ensure!(
        len == expected,
        ErrorCode::RowLength,
        "coded row of {t_bits} bits needs a {expected}-byte record, found {len} bytes"
    );
    let first = (t_bits / 8) as usize;
    let partial = (t_bits % 8) as u32;
    let mut bad = false;
    if partial != 0 {
        bad |= record[first] >> partial != 0;
    }
    let rest = first + (partial != 0) as usize;
    bad |= record[rest..].iter().any(|&b| b != 0);
    ensure!(
        !bad,
        ErrorCode::Padding,
        "padding bits after bit {t_bits} of a coded record are not all zero"
    );
    Ok(())
}

/// Loads 16 bytes at `byte` as a little-endian `u128`, with zeros past the end of `bytes`.
#[inline(always)]
fn load_u128(bytes: &[u8], byte: usize) -> u128 {
    if let Some(b) = bytes.get(byte..byte + 16) {
        u128::from_le_bytes(b.try_into().expect("16 bytes"))
    } else {
        let mut buf = [0u8; 16];
        if byte < bytes.len() {
            let avail = &bytes[byte..];
            buf[..avail.len()].copy_from_slice(avail);
        }
        u128::from_le_bytes(buf)
    }
}

/// Loads 8 bytes at `byte` as a little-endian `u64`, with zeros past the end of `bytes`.
#[inline(always)]
fn load_u64(bytes: &[u8], byte: usize) -> u64 {
    if let Some(b) = bytes.get(byte..byte + 8) {
        u64::from_le_bytes(b.try_into().expect("8 bytes"))
    } else {
        let mut buf = [0u8; 8];
        if byte < bytes.len() {
            let avail = &bytes[byte..];
            buf[..avail.len()].copy_from_slice(avail);
        }
        u64::from_le_bytes(buf)
    }
}

/// Reads the participation bits and fields of a coded record into `out` (`row_bytes` bytes: `n`
/// words, the last one cut when partial) and returns `T`, the stream position after the last
/// field, and the last word whole (for the partial-word check). Reads past the record return
/// zeros; the caller checks `T` against the record.
#[inline(always)]
pub(crate) fn decode_fields<const WB: usize, B: BitOps>(
    t: FieldTables<'_>,
    record: &[u8],
    out: &mut [u8],
) -> (u64, u64) {
    let n = t.n;
    let wbits = (WB * 8) as u64;
    let full = t.w.full_mask();
    // One word: branch-free, participation decides by masks, not jumps (it is data, so a branch
    // would mispredict on mixed rows).
    let step = |e: &DecodeEntry, participates: u64, pos: &mut u64| -> u64 {
        let p_mask = participates.wrapping_neg();
        let field = (load_u128(record, (*pos / 8) as usize) >> (*pos % 8)) as u64;
        let deposited = e.bitval | B::deposit(field, e.free_mask);
        *pos += wbits - (e.fixed_bits & p_mask);
        (deposited & p_mask) | (field & full & !p_mask)
    };
    let whole_words = out.len() / WB;
    let (whole, tail) = out.split_at_mut(whole_words * WB);
    let mut pos = n as u64;
    let mut last_word = 0;
    for (block, (out_block, entries)) in whole.chunks_mut(64 * WB).zip(t.entries.chunks(64)).enumerate() {
        let mut pbits = load_u64(record, block * 8);
        if out_block.len() == 64 * WB && pbits == u64::MAX && t.block_free_bits[block] == 0 {
            // Every word of the block matches and has no free bits (sparse data): the words are
            // the Bitvals and the block has no fields.
            out_block.copy_from_slice(&t.bitval_bytes[block * 64 * WB..][..64 * WB]);
            continue;
        }
        for (dst, e) in out_block.chunks_exact_mut(WB).zip(entries) {
            let word = step(e, pbits & 1, &mut pos);
            pbits >>= 1;
            dst.copy_from_slice(&word.to_le_bytes()[..WB]);
            last_word = word;
        }
    }
    if !tail.is_empty() {
        // The partial last word (2.4): only its bytes inside the row are written.
        let j = n - 1;
        let participates = (load_u64(record, (j / 64) * 8) >> (j % 64)) & 1;
        let word = step(&t.entries[j], participates, &mut pos);
        tail.copy_from_slice(&word.to_le_bytes()[..tail.len()]);
        last_word = word;
    }
    (pos, last_word)
}

/// A fast encoder prepared for one group of one chunk; produces exactly the records of
/// [`crate::row::encode_row`].
#[derive(Debug, Clone)]
pub struct RowEncoder {
    tables: Tables,
    ops: Ops,
    participation: Vec<u64>,
}

impl RowEncoder {
    /// Prepares an encoder (`E_INVALID_ARGUMENT` if the arguments do not fit together).
    pub fn new(mask: &[u64], bitval: &[u64], w: WordWidth, row_bytes: usize, align: u64) -> Result<RowEncoder> {
        let tables = Tables::new(mask, bitval, w, row_bytes, align)?;
        Ok(RowEncoder {
            participation: vec![0; tables.n.div_ceil(64)],
            tables,
            ops: Ops::detect(),
        })
    }

    /// The same encoder using the portable `pext`.
    pub fn force_portable(mut self) -> RowEncoder {
        self.ops = Ops::Portable;
        self
    }

    /// Appends the record of `row` (`row_bytes` bytes) to `out` and returns its length.
    ///
    /// One pass over the row: fields are written from stream bit `n` on while the participation
    /// bits are collected, then put in front; the pass stops as soon as the coded row can no
    /// longer be shorter than the raw one, and the row is stored raw.
    ///
    /// # Panics
    /// If `row.len()` is not the `row_bytes` the encoder was prepared for.
    pub fn encode(&mut self, row: &[u8], out: &mut Vec<u8>) -> u64 {
        let t = &self.tables;
        assert_eq!(row.len(), t.row_bytes, "row of the prepared size");
        let start = out.len();
        // Coded iff align_up(ceil(T/8), A) < raw, i.e. ceil(T/8) <= raw - A (raw is a multiple of A).
        let budget = 8 * (t.raw - t.align);
        // Room for the budget plus one 64-bit field and a whole-word store past it.
        out.resize(start + (budget / 8) as usize + 24, 0);
        let buf = &mut out[start..];
        let p = &mut self.participation;
        let coded_bits = match (t.w, self.ops) {
            (WordWidth::W8, Ops::Portable) => encode_coded::<1, Portable>(t.into(), row, buf, budget, p),
            (WordWidth::W16, Ops::Portable) => encode_coded::<2, Portable>(t.into(), row, buf, budget, p),
            (WordWidth::W32, Ops::Portable) => encode_coded::<4, Portable>(t.into(), row, buf, budget, p),
            (WordWidth::W64, Ops::Portable) => encode_coded::<8, Portable>(t.into(), row, buf, budget, p),
            #[cfg(target_arch = "x86_64")]
            (w, Ops::Bmi2(token)) => crate::bmi2::encode_coded(token, w, t.into(), row, buf, budget, p),
        };
        match coded_bits {
            Some(bits) => {
                let len = coded_len(bits, t.align);
                out.truncate(start + len as usize);
                len
            }
            None => {
                out.truncate(start);
                out.extend_from_slice(row);
                out.resize(start + t.raw as usize, 0);
                t.raw
            }
        }
    }

    /// The record length [`RowEncoder::encode`] would produce for `row`.
    pub fn record_len(&mut self, row: &[u8]) -> u64 {
        let t = &self.tables;
        let bits = match t.w {
            WordWidth::W8 => participation::<1>(t, row, &mut self.participation),
            WordWidth::W16 => participation::<2>(t, row, &mut self.participation),
            WordWidth::W32 => participation::<4>(t, row, &mut self.participation),
            WordWidth::W64 => participation::<8>(t, row, &mut self.participation),
        };
        coded_len(bits, t.align).min(t.raw)
    }
}

/// Reads word `j` of a row of `WB`-byte words (a partial last word zero-extended, spec 2.4).
#[inline(always)]
fn word_at<const WB: usize>(row: &[u8], j: usize) -> u64 {
    match row.get(j * WB..(j + 1) * WB) {
        Some(bytes) => {
            let mut b = [0u8; 8];
            b[..WB].copy_from_slice(bytes);
            u64::from_le_bytes(b)
        }
        None => read_word_le(&row[j * WB..]),
    }
}

/// Fills the participation bits of `row` and returns `T`.
fn participation<const WB: usize>(t: &Tables, row: &[u8], bits: &mut [u64]) -> u64 {
    let mut total = t.n as u64 * (1 + 8 * WB as u64);
    bits.fill(0);
    for j in 0..t.n {
        let v = word_at::<WB>(row, j);
        if v & t.masks[j] == t.bitvals[j] {
            bits[j / 64] |= 1 << (j % 64);
            total -= (8 * WB as u64) - t.free[j] as u64;
        }
    }
    total
}

/// Writes a coded row into the zeroed `buf`: the fields from stream bit `n` on, then the
/// participation bits in front. Returns `T`, or `None` as soon as `T` exceeds `budget` bits (the
/// row is then stored raw). `buf` holds at least `budget / 8 + 24` bytes.
#[inline(always)]
pub(crate) fn encode_coded<const WB: usize, B: BitOps>(
    t: FieldTables<'_>,
    row: &[u8],
    buf: &mut [u8],
    budget: u64,
    participation: &mut [u64],
) -> Option<u64> {
    let n = t.n;
    let wbits = (WB * 8) as u64;
    let masks = &t.masks[..n];
    let bitvals = &t.bitvals[..n];
    let free_masks = &t.free_masks[..n];
    let free = &t.free[..n];
    // The field stream starts at bit n: whole 64-bit words of participation bits come first.
    let mut word_at_byte = (n / 64) * 8;
    let mut acc: u128 = 0;
    let mut pending = (n % 64) as u32;
    let mut total = n as u64;
    for (block, pword) in participation.iter_mut().enumerate() {
        // The block's participation bits stay in a register (not a read-modify-write per word).
        let mut bits = 0u64;
        let first = block * 64;
        for (i, j) in (first..(first + 64).min(n)).enumerate() {
            let v = word_at::<WB>(row, j);
            let matches = v & masks[j] == bitvals[j];
            bits |= (matches as u64) << i;
            let (field, f) = if matches {
                (B::extract(v, free_masks[j]), free[j] as u32)
            } else {
                (v, wbits as u32)
            };
            total += f as u64;
            if total > budget {
                return None;
            }
            acc |= (field as u128) << pending;
            pending += f;
            if pending >= 64 {
                buf[word_at_byte..word_at_byte + 8].copy_from_slice(&(acc as u64).to_le_bytes());
                word_at_byte += 8;
                acc >>= 64;
                pending -= 64;
            }
        }
        *pword = bits;
    }
    let tail = pending.div_ceil(8) as usize;
    buf[word_at_byte..word_at_byte + tail].copy_from_slice(&acc.to_le_bytes()[..tail]);
    // Participation bits: stream bits 0 .. n-1, sharing their last byte with the first field.
    for (i, &bits) in participation.iter().enumerate() {
        let bytes = (n - i * 64).min(64).div_ceil(8);
        for (b, dst) in buf[i * 8..i * 8 + bytes].iter_mut().enumerate() {
            *dst |= (bits >> (8 * b)) as u8;
        }
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bit-by-bit `pdep`, the definition.
    fn deposit_bits(x: u64, m: u64) -> u64 {
        let mut r = 0;
        let mut k = 0;
        for b in 0..64 {
            if (m >> b) & 1 == 1 {
                r |= ((x >> k) & 1) << b;
                k += 1;
            }
        }
        r
    }

    #[test]
    fn portable_deposit_and_extract_match_the_definition() {
        let mut s = 0x1234_5678_9ABC_DEF0u64;
        let mut masks = vec![
            0,
            u64::MAX,
            1,
            1 << 63,
            0xFF00,
            0x7FFF_FFFF,
            0xFFFF_FFFF_0000_0000,
            0xF0F0,
        ];
        for _ in 0..2000 {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            masks.push(s ^ (s >> 29));
        }
        for (i, &m) in masks.iter().enumerate() {
            let x = (m.rotate_left(i as u32)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let d = deposit_bits(x, m);
            assert_eq!(Portable::deposit(x, m), d, "deposit {x:x} {m:x}");
            assert_eq!(
                Portable::extract(d, m),
                x & (1u64.checked_shl(m.count_ones()).unwrap_or(0).wrapping_sub(1)),
                "extract {m:x}"
            );
        }
    }
}
