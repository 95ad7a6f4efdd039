//! A second, spec-level IBP writer used to build vectors.
//!
//! It is written from `spec/SPEC.md` alone (sections 4-8) and independently of `ibp-codec`, so that
//! the vectors test the codec rather than echo it. Unlike a production encoder it gives full control
//! over every choice the spec leaves to the encoder (word width, alignment, masks, groups, raw
//! rows, participation bits, row-length field width and base) and records where every structure
//! landed ([`FileLayout`]), so that invalid vectors can be made by surgery on exact offsets.

use ibp_format::{crc32, Dtype, WordWidth, CHUNK_MAGIC, END_MAGIC, MAGIC};

/// `align_up(x, a)` for a power-of-two `a` (generator inputs are small: no overflow).
pub fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a) * a
}

/// Raw header fields (spec 4); every field is written as given, the CRC is computed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderFields {
    /// `magic`.
    pub magic: [u8; 8],
    /// `major_version`.
    pub major: u16,
    /// `minor_version`.
    pub minor: u16,
    /// `required_features`.
    pub required: u32,
    /// `optional_features`.
    pub optional: u32,
    /// The 8 reserved bytes.
    pub reserved: [u8; 8],
}

impl Default for HeaderFields {
    fn default() -> Self {
        HeaderFields {
            magic: MAGIC,
            major: 1,
            minor: 0,
            required: 0,
            optional: 0,
            reserved: [0; 8],
        }
    }
}

impl HeaderFields {
    /// The 32 header bytes with a correct `header_crc`.
    pub fn to_bytes(&self) -> [u8; 32] {
        let mut b = [0u8; 32];
        b[..8].copy_from_slice(&self.magic);
        b[8..10].copy_from_slice(&self.major.to_le_bytes());
        b[10..12].copy_from_slice(&self.minor.to_le_bytes());
        b[12..16].copy_from_slice(&self.required.to_le_bytes());
        b[16..20].copy_from_slice(&self.optional.to_le_bytes());
        b[20..28].copy_from_slice(&self.reserved);
        let crc = crc32(&b[..28]);
        b[28..].copy_from_slice(&crc.to_le_bytes());
        b
    }
}

/// The 32 footer bytes (spec 8) for a directory at `offset` with contents `dir`.
pub fn footer_bytes(offset: u64, dir: &[u8]) -> [u8; 32] {
    let mut b = [0u8; 32];
    b[..8].copy_from_slice(&offset.to_le_bytes());
    b[8..16].copy_from_slice(&(dir.len() as u64).to_le_bytes());
    b[16..20].copy_from_slice(&crc32(dir).to_le_bytes());
    let crc = crc32(&b[..20]);
    b[20..24].copy_from_slice(&crc.to_le_bytes());
    b[24..].copy_from_slice(&END_MAGIC);
    b
}

/// How one chunk is coded: everything spec 5 and 6 leave to the encoder.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkSpec {
    /// Word width `W`.
    pub word: WordWidth,
    /// `align_log2` (`A = 2^align_log2`).
    pub align_log2: u8,
    /// Number of groups `G`; 0 makes a raw chunk (spec 5.5: no masks, every row raw).
    pub groups: u32,
    /// `Mask[g][j]` at `g * n + j`.
    pub masks: Vec<u64>,
    /// `Bitval[g][j]` at `g * n + j`.
    pub bitvals: Vec<u64>,
    /// Group id per row (empty when `G = 1`).
    pub group_ids: Vec<u8>,
    /// Rows (chunk-relative) stored raw even when coding them would be shorter (spec 6.1: MAY).
    pub force_raw: Vec<usize>,
    /// Word positions `j` whose matching words still get `P[j] = 0` (spec 6.3: a decoder MUST
    /// accept it).
    pub decline_words: Vec<usize>,
    /// `length_bytes`; `None` picks the narrowest that fits.
    pub length_bytes: Option<u8>,
    /// `length_base`; `None` uses the smallest record length (in units of `A`).
    pub length_base: Option<u32>,
    /// Invalid-vector helper: `(row, delta)` lengthens (or shortens) a coded row's record by
    /// `delta * A` bytes after coding, keeping the record coded (in a raw chunk: the raw record).
    pub record_delta_units: Vec<(usize, i64)>,
}

impl ChunkSpec {
    /// A raw chunk (`G = 0`, spec 5.5) with word width `word` and alignment `2^align_log2`.
    pub fn raw(word: WordWidth, align_log2: u8) -> Self {
        ChunkSpec {
            groups: 0,
            ..ChunkSpec::single(word, align_log2, Vec::new(), Vec::new())
        }
    }

    /// A chunk of `G = 1` with the given masks and bitvals and no special choices.
    pub fn single(word: WordWidth, align_log2: u8, masks: Vec<u64>, bitvals: Vec<u64>) -> Self {
        ChunkSpec {
            word,
            align_log2,
            groups: 1,
            masks,
            bitvals,
            group_ids: Vec::new(),
            force_raw: Vec::new(),
            decline_words: Vec::new(),
            length_bytes: None,
            length_base: None,
            record_delta_units: Vec::new(),
        }
    }

    /// A chunk whose masks come from [`analyse`] over `rows` (rows `i` go to group `i mod groups`).
    pub fn analysed(
        rows: &[u8],
        row_bytes: usize,
        word: WordWidth,
        align_log2: u8,
        groups: u32,
        threshold: f64,
    ) -> Self {
        let n_rows = rows.len() / row_bytes;
        let group_ids: Vec<u8> = (0..n_rows).map(|i| (i % groups as usize) as u8).collect();
        let (masks, bitvals) = analyse(rows, row_bytes, word, groups, &group_ids, threshold);
        ChunkSpec {
            groups,
            group_ids: if groups > 1 { group_ids } else { Vec::new() },
            ..ChunkSpec::single(word, align_log2, masks, bitvals)
        }
    }
}

/// Words per row (spec 2.4): `ceil_div(row_bytes, W/8)`; the last word may be partial.
pub fn words_per_row(row_bytes: usize, word: WordWidth) -> usize {
    row_bytes.div_ceil(word.bytes())
}

/// Reads word `j` (little-endian, `W/8` bytes) of `row`; a partial last word (spec 2.4) has its
/// missing high bytes zero.
pub fn word_at(row: &[u8], word: WordWidth, j: usize) -> u64 {
    let w = word.bytes();
    let end = ((j + 1) * w).min(row.len());
    let mut b = [0u8; 8];
    b[..end - j * w].copy_from_slice(&row[j * w..end]);
    u64::from_le_bytes(b)
}

/// Masks and bitvals by bit counting: in each group, a bit of word position `j` is invariant-1 when
/// set in more than `threshold * N` of the group's `N` rows and invariant-0 when set in fewer than
/// `(1 - threshold) * N`; `threshold = 1.0` keeps only bits equal in every row. Groups without rows
/// get Mask 0.
pub fn analyse(
    rows: &[u8],
    row_bytes: usize,
    word: WordWidth,
    groups: u32,
    group_ids: &[u8],
    threshold: f64,
) -> (Vec<u64>, Vec<u64>) {
    let n = words_per_row(row_bytes, word);
    let bits = word.bits() as usize;
    let mut masks = vec![0u64; groups as usize * n];
    let mut bitvals = vec![0u64; groups as usize * n];
    for g in 0..groups as usize {
        let members: Vec<&[u8]> = rows
            .chunks(row_bytes)
            .enumerate()
            .filter(|(i, _)| group_ids.get(*i).map_or(0, |&x| x as usize) == g)
            .map(|(_, r)| r)
            .collect();
        let count = members.len() as f64;
        if members.is_empty() {
            continue;
        }
        for j in 0..n {
            let (mut m, mut v) = (0u64, 0u64);
            for b in 0..bits {
                let ones = members.iter().filter(|r| word_at(r, word, j) >> b & 1 == 1).count() as f64;
                if threshold >= 1.0 {
                    if ones == count {
                        m |= 1 << b;
                        v |= 1 << b;
                    } else if ones == 0.0 {
                        m |= 1 << b;
                    }
                } else if ones > threshold * count {
                    m |= 1 << b;
                    v |= 1 << b;
                } else if ones < (1.0 - threshold) * count {
                    m |= 1 << b;
                }
            }
            masks[g * n + j] = m;
            bitvals[g * n + j] = v;
        }
    }
    (masks, bitvals)
}

/// A little-endian bit stream writer (spec 6.2: stream bit `k` is bit `k mod 8` of byte `k div 8`).
#[derive(Debug, Default, Clone)]
pub struct BitWriter {
    /// The bytes written so far (the last one possibly partial).
    pub bytes: Vec<u8>,
    /// Bits written so far.
    pub bits: u64,
}

impl BitWriter {
    /// Appends the low `count` bits of `value`, least significant first.
    pub fn push(&mut self, value: u64, count: u32) {
        for b in 0..count {
            if self.bits.is_multiple_of(8) {
                self.bytes.push(0);
            }
            if value >> b & 1 == 1 {
                self.bytes[(self.bits / 8) as usize] |= 1 << (self.bits % 8);
            }
            self.bits += 1;
        }
    }
}

/// The bits of `word` where `mask` is 0, packed in order (the inverse of `pdep`, i.e. `pext` with
/// the complement of the mask).
pub fn extract_free_bits(word: u64, mask: u64, bits: u32) -> u64 {
    let mut out = 0u64;
    let mut k = 0;
    for b in 0..bits {
        if mask >> b & 1 == 0 {
            out |= (word >> b & 1) << k;
            k += 1;
        }
    }
    out
}

/// A coded row record (spec 6.2) before alignment: the bit stream and its length `T` in bits.
pub fn code_row(row: &[u8], word: WordWidth, mask: &[u64], bitval: &[u64], decline_words: &[usize]) -> BitWriter {
    let n = mask.len();
    let bits = word.bits();
    let words: Vec<u64> = (0..n).map(|j| word_at(row, word, j)).collect();
    let participates: Vec<bool> = (0..n)
        .map(|j| words[j] & mask[j] == bitval[j] && !decline_words.contains(&j))
        .collect();
    let mut out = BitWriter::default();
    for &p in &participates {
        out.push(p as u64, 1);
    }
    for j in 0..n {
        if participates[j] {
            let free = bits - mask[j].count_ones();
            out.push(extract_free_bits(words[j], mask[j], bits), free);
        } else {
            out.push(words[j], bits);
        }
    }
    out
}

/// Where one row record landed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordLayout {
    /// File offset of the record.
    pub at: u64,
    /// Record length in bytes.
    pub len: u64,
    /// Stored raw.
    pub raw: bool,
    /// Meaningful bits: `T` for a coded row, `8 * row_bytes` for a raw one.
    pub used_bits: u64,
}

/// Where one chunk's structures landed (file offsets).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkLayout {
    /// First byte of the chunk (its header).
    pub at: u64,
    /// `masks` array.
    pub masks_at: u64,
    /// `bitvals` array.
    pub bitvals_at: u64,
    /// `group_ids` array (equal to `lengths_at` when `G = 1`).
    pub group_ids_at: u64,
    /// `row_lengths` array.
    pub lengths_at: u64,
    /// First padding byte after the metadata (equal to `payload_at` when there is none).
    pub padding_at: u64,
    /// First payload byte.
    pub payload_at: u64,
    /// One past the chunk's last byte.
    pub end: u64,
    /// `length_bytes` as written.
    pub length_bytes: u8,
    /// Row alignment `A`.
    pub align: u64,
    /// Word width.
    pub word: WordWidth,
    /// Rows in the chunk.
    pub rows: u32,
    /// Each row record.
    pub records: Vec<RecordLayout>,
}

/// One entry of a [`FileSpec`].
#[derive(Debug, Clone, PartialEq)]
pub struct EntrySpec {
    /// Name bytes (written as given).
    pub name: Vec<u8>,
    /// Element dtype.
    pub dtype: Dtype,
    /// Shape.
    pub shape: Vec<u64>,
    /// Bytes per row.
    pub row_bytes: u64,
    /// The tensor's bytes (`row_count * row_bytes`).
    pub data: Vec<u8>,
    /// Chunks in row order: `(rows in the chunk, how it is coded)`.
    pub chunks: Vec<(u32, ChunkSpec)>,
}

impl EntrySpec {
    /// Rows in the entry.
    pub fn row_count(&self) -> u64 {
        self.data.len() as u64 / self.row_bytes
    }
}

/// A whole file to build.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FileSpec {
    /// Header fields.
    pub header: HeaderFields,
    /// Entries in directory order (their chunks are written in the same order).
    pub entries: Vec<EntrySpec>,
}

/// A chunk reference as written in the directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawRef {
    /// `offset`.
    pub offset: u64,
    /// `byte_len`.
    pub byte_len: u64,
    /// `row_count`.
    pub row_count: u32,
    /// Reserved.
    pub reserved: u32,
}

/// A directory entry record exactly as written: declared counts are independent of the arrays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawEntry {
    /// `name_len`.
    pub name_len: u16,
    /// `dtype` code.
    pub dtype: u8,
    /// `rank`.
    pub rank: u8,
    /// `chunk_count`.
    pub chunk_count: u32,
    /// `row_count`.
    pub row_count: u64,
    /// `row_bytes`.
    pub row_bytes: u64,
    /// Shape words written.
    pub shape: Vec<u64>,
    /// Name bytes written.
    pub name: Vec<u8>,
    /// Padding bytes written after the name.
    pub padding: Vec<u8>,
    /// Chunk references written.
    pub refs: Vec<RawRef>,
}

impl RawEntry {
    /// A consistent record.
    pub fn new(name: &[u8], dtype: u8, shape: &[u64], row_count: u64, row_bytes: u64, refs: Vec<RawRef>) -> Self {
        let mut e = RawEntry {
            name_len: name.len() as u16,
            dtype,
            rank: shape.len() as u8,
            chunk_count: refs.len() as u32,
            row_count,
            row_bytes,
            shape: shape.to_vec(),
            name: name.to_vec(),
            padding: Vec::new(),
            refs,
        };
        e.repad();
        e
    }

    /// Recomputes zero padding for the current shape and name.
    pub fn repad(&mut self) {
        let len = 24 + 8 * self.shape.len() as u64 + self.name.len() as u64;
        self.padding = vec![0; (align_up(len, 8) - len) as usize];
    }

    /// Offset of the name from the record's start.
    pub fn name_offset(&self) -> u64 {
        24 + 8 * self.shape.len() as u64
    }
}

/// The directory exactly as written.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RawDirectory {
    /// `entry_count`.
    pub entry_count: u32,
    /// Reserved preamble field.
    pub reserved: u32,
    /// Entry records written.
    pub entries: Vec<RawEntry>,
    /// Bytes appended after the last record.
    pub trailing: Vec<u8>,
}

impl RawDirectory {
    /// Serialises the directory.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&self.entry_count.to_le_bytes());
        out.extend_from_slice(&self.reserved.to_le_bytes());
        for e in &self.entries {
            out.extend_from_slice(&e.name_len.to_le_bytes());
            out.push(e.dtype);
            out.push(e.rank);
            out.extend_from_slice(&e.chunk_count.to_le_bytes());
            out.extend_from_slice(&e.row_count.to_le_bytes());
            out.extend_from_slice(&e.row_bytes.to_le_bytes());
            for d in &e.shape {
                out.extend_from_slice(&d.to_le_bytes());
            }
            out.extend_from_slice(&e.name);
            out.extend_from_slice(&e.padding);
            for r in &e.refs {
                out.extend_from_slice(&r.offset.to_le_bytes());
                out.extend_from_slice(&r.byte_len.to_le_bytes());
                out.extend_from_slice(&r.row_count.to_le_bytes());
                out.extend_from_slice(&r.reserved.to_le_bytes());
            }
        }
        out.extend_from_slice(&self.trailing);
        out
    }

    /// Offset of entry record `i` from the directory's start.
    pub fn entry_offset(&self, i: usize) -> u64 {
        8 + self.entries[..i]
            .iter()
            .map(|e| {
                24 + 8 * e.shape.len() as u64 + e.name.len() as u64 + e.padding.len() as u64 + 24 * e.refs.len() as u64
            })
            .sum::<u64>()
    }
}

/// Where everything of a built file landed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileLayout {
    /// Chunks of each entry.
    pub chunks: Vec<Vec<ChunkLayout>>,
    /// The directory as written.
    pub directory: RawDirectory,
    /// Directory offset.
    pub directory_at: u64,
    /// Footer offset.
    pub footer_at: u64,
}

impl FileLayout {
    /// All chunks in file order.
    pub fn all_chunks(&self) -> impl Iterator<Item = &ChunkLayout> {
        self.chunks.iter().flatten()
    }
}

/// A built file.
#[derive(Debug, Clone)]
pub struct Built {
    /// The file.
    pub bytes: Vec<u8>,
    /// Where its structures are.
    pub layout: FileLayout,
}

/// Writes one chunk starting at file offset `at`; returns its bytes and layout.
pub fn build_chunk(at: u64, rows: &[u8], row_bytes: usize, spec: &ChunkSpec) -> (Vec<u8>, ChunkLayout) {
    let word = spec.word;
    let w = word.bytes();
    let n = words_per_row(row_bytes, word);
    let g_count = spec.groups as usize;
    assert_eq!(spec.masks.len(), g_count * n);
    assert_eq!(spec.bitvals.len(), g_count * n);
    let row_count = rows.len() / row_bytes;
    assert!(row_count >= 1);
    let align = 1u64 << spec.align_log2;
    let raw_padded = align_up(row_bytes as u64, align);

    // Row records.
    let mut records: Vec<(Vec<u8>, bool, u64)> = Vec::with_capacity(row_count);
    for (i, row) in rows.chunks(row_bytes).enumerate() {
        if g_count == 0 {
            // A raw chunk (spec 5.5): every row raw. `record_delta_units` may break that rule.
            let delta = spec
                .record_delta_units
                .iter()
                .find(|(r, _)| *r == i)
                .map_or(0, |(_, d)| *d);
            let len = (raw_padded as i64 + delta * align as i64) as usize;
            assert!(len >= 1);
            let mut rec = row.to_vec();
            rec.resize(len, 0);
            records.push((rec, true, 8 * row_bytes as u64));
            continue;
        }
        let g = if g_count > 1 { spec.group_ids[i] as usize } else { 0 };
        let stream = code_row(
            row,
            word,
            &spec.masks[g * n..(g + 1) * n],
            &spec.bitvals[g * n..(g + 1) * n],
            &spec.decline_words,
        );
        let coded_len = align_up(stream.bytes.len() as u64, align);
        let delta = spec
            .record_delta_units
            .iter()
            .find(|(r, _)| *r == i)
            .map_or(0, |(_, d)| *d);
        if coded_len < raw_padded && !spec.force_raw.contains(&i) {
            let mut rec = stream.bytes.clone();
            let len = (coded_len as i64 + delta * align as i64) as u64;
            assert!(len >= 1 && len < raw_padded, "record delta must keep row {i} coded");
            rec.resize(len as usize, 0);
            records.push((rec, false, stream.bits));
        } else {
            assert_eq!(delta, 0, "record delta applies to coded rows only (row {i})");
            let mut rec = row.to_vec();
            rec.resize(raw_padded as usize, 0);
            records.push((rec, true, 8 * row_bytes as u64));
        }
    }
    let units: Vec<u64> = records.iter().map(|(r, _, _)| r.len() as u64 / align).collect();
    let base = spec
        .length_base
        .map_or_else(|| *units.iter().min().expect("rows"), |b| b as u64);
    let span = units.iter().map(|&u| u - base).max().expect("rows");
    let length_bytes = spec.length_bytes.unwrap_or(if span <= 0xFF {
        1
    } else if span <= 0xFFFF {
        2
    } else {
        4
    });
    let meta_len = 2 * g_count * n * w + if g_count > 1 { row_count } else { 0 } + row_count * length_bytes as usize;
    let payload_at = align_up(at + 48 + meta_len as u64, align);
    let payload: Vec<u8> = records.iter().flat_map(|(r, _, _)| r.iter().copied()).collect();

    let mut out = Vec::new();
    out.extend_from_slice(&CHUNK_MAGIC);
    out.push(word.bits() as u8);
    out.push(spec.align_log2);
    out.push(length_bytes);
    out.push(0);
    out.extend_from_slice(&(spec.groups as u16).to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&(row_count as u32).to_le_bytes());
    out.extend_from_slice(&(n as u32).to_le_bytes());
    out.extend_from_slice(&(base as u32).to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&(meta_len as u32).to_le_bytes());
    out.extend_from_slice(&crc32(&payload).to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes()); // meta_crc, below
    let masks_at = at + out.len() as u64;
    for &m in spec.masks.iter().chain(&spec.bitvals) {
        out.extend_from_slice(&m.to_le_bytes()[..w]);
    }
    let bitvals_at = masks_at + (g_count * n * w) as u64;
    let group_ids_at = at + out.len() as u64;
    if g_count > 1 {
        out.extend_from_slice(&spec.group_ids);
    }
    let lengths_at = at + out.len() as u64;
    for &u in &units {
        out.extend_from_slice(&((u - base) as u32).to_le_bytes()[..length_bytes as usize]);
    }
    let padding_at = at + out.len() as u64;
    out.resize((payload_at - at) as usize, 0);
    let mut crc = crc32fast::Hasher::new();
    crc.update(&out[..44]);
    crc.update(&out[48..]);
    let meta_crc = crc.finalize();
    out[44..48].copy_from_slice(&meta_crc.to_le_bytes());
    let mut rec_at = payload_at;
    let record_layouts = records
        .iter()
        .map(|(r, raw, bits)| {
            let l = RecordLayout {
                at: rec_at,
                len: r.len() as u64,
                raw: *raw,
                used_bits: *bits,
            };
            rec_at += r.len() as u64;
            l
        })
        .collect();
    out.extend_from_slice(&payload);
    let layout = ChunkLayout {
        at,
        masks_at,
        bitvals_at,
        group_ids_at,
        lengths_at,
        padding_at,
        payload_at,
        end: at + out.len() as u64,
        length_bytes,
        align,
        word,
        rows: row_count as u32,
        records: record_layouts,
    };
    (out, layout)
}

/// Builds a whole file: header, every entry's chunks in order, directory, footer.
pub fn build_file(spec: &FileSpec) -> Built {
    let mut bytes = spec.header.to_bytes().to_vec();
    let mut chunk_layouts = Vec::new();
    let mut dir = RawDirectory {
        entry_count: spec.entries.len() as u32,
        ..Default::default()
    };
    for e in &spec.entries {
        let rb = e.row_bytes as usize;
        assert_eq!(e.data.len() % rb, 0, "entry data must be whole rows");
        let mut row = 0usize;
        let mut refs = Vec::new();
        let mut layouts = Vec::new();
        for (rows, cs) in &e.chunks {
            let rows = *rows as usize;
            let at = bytes.len() as u64;
            let (cb, cl) = build_chunk(at, &e.data[row * rb..(row + rows) * rb], rb, cs);
            refs.push(RawRef {
                offset: at,
                byte_len: cb.len() as u64,
                row_count: rows as u32,
                reserved: 0,
            });
            bytes.extend_from_slice(&cb);
            layouts.push(cl);
            row += rows;
        }
        assert_eq!(row as u64, e.row_count(), "chunks must cover the entry's rows");
        chunk_layouts.push(layouts);
        dir.entries.push(RawEntry::new(
            &e.name,
            e.dtype.code(),
            &e.shape,
            e.row_count(),
            e.row_bytes,
            refs,
        ));
    }
    let directory_at = bytes.len() as u64;
    let dir_bytes = dir.to_bytes();
    bytes.extend_from_slice(&dir_bytes);
    bytes.extend_from_slice(&footer_bytes(directory_at, &dir_bytes));
    let footer_at = bytes.len() as u64 - 32;
    Built {
        bytes,
        layout: FileLayout {
            chunks: chunk_layouts,
            directory: dir,
            directory_at,
            footer_at,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The worked example of spec 6.4 (second part): record `97 02`.
    #[test]
    fn reproduces_the_spec_worked_example() {
        let row = [0xA5, 0x3F, 0x00, 0x00];
        let s = code_row(&row, WordWidth::W16, &[0xFF00, 0xFFFF], &[0x3F00, 0x0000], &[]);
        assert_eq!(s.bits, 10);
        assert_eq!(s.bytes, vec![0x97, 0x02]);
        // First part: T = 26, so 4 bytes: not shorter than the raw 4 bytes.
        let s = code_row(
            &[0xA5, 0x3F, 0x34, 0x12],
            WordWidth::W16,
            &[0xFF00, 0xFFFF],
            &[0x3F00, 0],
            &[],
        );
        assert_eq!(s.bits, 26);
    }

    #[test]
    fn free_bits_are_extracted_in_order() {
        assert_eq!(extract_free_bits(0b1011_0110, 0b1111_0000, 8), 0b0110);
        assert_eq!(extract_free_bits(0b1011_0110, 0b0101_0101, 8), 0b1101);
        assert_eq!(extract_free_bits(u64::MAX, u64::MAX, 64), 0);
    }
}
