//! The form in which a loader keeps each chunk in GPU-visible memory.
//!
//! A file written for size (the default analysis) may code chunks whose records save a few bytes
//! but are no cheaper to read over PCIe: a 16-byte aligned record of 230 bytes often spans three
//! 128-byte lines where the raw 256-byte row spans two, and a 52-byte record often straddles two
//! 64-byte requests where the raw 64-byte row takes one; and a record that saves a sector or less
//! does not repay its decode ([`TransferCost::GPU`] weighs a coded record as one sector). Gathers
//! of such rows run at 0.7-0.9 of the uncompressed gather (bench/GPU_NOTES.md, "What limits
//! what"). The file is right to code them (it is smaller); a loader that serves zero-copy gathers
//! keeps those chunks raw instead ([`ChunkForm::RawWhereNotCheaper`], by default for payloads in
//! pinned host memory: [`ChunkForm::for_home`]): each such chunk is
//! decoded once on the CPU at load (every row checked, spec 6) and re-laid as a raw chunk (spec
//! 5.5, `G = 0`) of 16-byte aligned rows, which gathers read exactly like uncompressed rows.
//! Chunks whose coding does make reads cheaper, raw chunks, and chunks that fail to decode (their
//! errors are reported by the kernels, row by row, as for any other file) are kept as stored. The
//! file itself is never changed.
#![forbid(unsafe_code)]

use crate::entry::PayloadHome;
use ibp_codec::chunk_codec::{gpu_raw_align_log2, reads_no_cheaper_than_raw};
use ibp_codec::options::TransferCost;
use ibp_codec::{decode_chunk, encode_chunk_with_plan, ChunkPlan, DecoderKind};
use ibp_format::ChunkMeta;
use std::borrow::Cow;

/// Alignment (log2) of the rows of a chunk a loader re-lays raw, at least: 16 bytes, the kernels'
/// load width, so a row whose size is a multiple of 16 is read with whole aligned vectors.
pub const RAW_ROWS_ALIGN_LOG2: u8 = ibp_codec::chunk_codec::GPU_RAW_ROWS_ALIGN_LOG2;

/// How a loader keeps each chunk of an entry.
///
/// Loaders that place the payload in pinned host memory for zero-copy gathers
/// ([`crate::HostEntry::new`], [`crate::GpuEntry::load`] with [`PayloadHome::HostMapped`]) use
/// [`ChunkForm::FOR_GPU_READS`] unless told otherwise; loaders that place it in device memory
/// keep every chunk as stored, the smallest form ([`ChunkForm::for_home`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChunkForm {
    /// Every chunk exactly as the file stores it (the smallest form; `Default`).
    #[default]
    AsStored,
    /// A coded chunk whose records cost at least as much to read, under this cost model
    /// ([`TransferCost::of_record`], every row read once), as the same rows stored raw with
    /// rows aligned to `max(A, 16)` bytes is kept raw: decoded on the CPU at load and held at its
    /// raw size. Everything else is kept as stored.
    RawWhereNotCheaper(TransferCost),
}

impl ChunkForm {
    /// [`ChunkForm::RawWhereNotCheaper`] with the cost model fitted to zero-copy gathers on the H200
    /// ([`TransferCost::GPU`], the one `ibp compress --gpu` writes files with): a file written for
    /// size then gathers like one written with `--gpu`.
    pub const FOR_GPU_READS: ChunkForm = ChunkForm::RawWhereNotCheaper(TransferCost::GPU);

    /// The form a loader uses for a payload kept in `home` when none is given: chunks no cheaper to
    /// read coded are kept raw where the kernels read the payload over the bus
    /// ([`PayloadHome::HostMapped`]: rows of <= 256 B then gather at the speed of uncompressed
    /// rows, at the cost of host memory for those chunks' raw rows); every chunk as stored in
    /// device memory ([`PayloadHome::Device`]: a compressed GPU cache, where reads are not
    /// bus-bound).
    pub fn for_home(home: PayloadHome) -> ChunkForm {
        match home {
            PayloadHome::HostMapped => ChunkForm::FOR_GPU_READS,
            PayloadHome::Device => ChunkForm::AsStored,
        }
    }
}

/// An entry's chunks in the form a loader keeps them.
#[derive(Debug)]
pub(crate) struct FormedChunks<'a> {
    /// Metadata of every chunk, in row order.
    pub metas: Cow<'a, [ChunkMeta]>,
    /// Payload of every chunk.
    pub payloads: Vec<Cow<'a, [u8]>>,
    /// Chunks re-laid raw.
    pub relaid: usize,
}

impl FormedChunks<'_> {
    /// The payloads as slices.
    pub fn payload_refs(&self) -> Vec<&[u8]> {
        self.payloads.iter().map(|p| p.as_ref()).collect()
    }
}

/// Whether `form` keeps this chunk raw: a coded chunk no cheaper to read than its rows re-laid raw
/// (any metadata may be asked: a row index that is not one is never re-laid).
pub fn relays(form: ChunkForm, meta: &ChunkMeta) -> bool {
    match form {
        ChunkForm::AsStored => false,
        ChunkForm::RawWhereNotCheaper(cost) => reads_no_cheaper_than_raw(meta, &cost, gpu_raw_align_log2(meta)),
    }
}

/// The chunk decoded and re-encoded raw, or `None` when it does not decode (wrong payload length or
/// CRC, a bad row): the caller then keeps it as stored and its errors surface as for any file.
fn relay_raw(meta: &ChunkMeta, payload: &[u8]) -> Option<(ChunkMeta, Vec<u8>)> {
    let row_bytes = usize::try_from(meta.row_bytes()).ok()?;
    let len = row_bytes.checked_mul(meta.row_count as usize)?;
    // A chunk that is no cheaper to read than raw rows holds at least about half their bytes (every
    // record costs at least one sector and one request), so this allocation is bounded by the
    // payload actually present, not by what a header claims.
    if (payload.len() as u64).saturating_mul(4) < len as u64 {
        return None;
    }
    let mut rows = vec![0u8; len];
    decode_chunk(meta, payload, DecoderKind::Fast, &mut rows).ok()?;
    let align_log2 = gpu_raw_align_log2(meta);
    let plan = ChunkPlan::raw_chunk(meta.word_width, meta.row_count as u64, row_bytes, 1u64 << align_log2);
    let chunk = encode_chunk_with_plan(&rows, row_bytes, &plan, align_log2);
    Some((chunk.meta, chunk.payload))
}

/// Applies `form` to an entry's chunks (metadata and payloads in row order, as a loader gets them).
pub(crate) fn form_chunks<'a>(form: ChunkForm, metas: &'a [ChunkMeta], payloads: &[&'a [u8]]) -> FormedChunks<'a> {
    let as_stored = |metas| FormedChunks {
        metas,
        payloads: payloads.iter().map(|p| Cow::Borrowed(*p)).collect(),
        relaid: 0,
    };
    if metas.len() != payloads.len() || !metas.iter().any(|m| relays(form, m)) {
        return as_stored(Cow::Borrowed(metas));
    }
    let formed: Vec<Option<(ChunkMeta, Vec<u8>)>> = metas
        .iter()
        .zip(payloads)
        .map(|(m, p)| relays(form, m).then(|| relay_raw(m, p)).flatten())
        .collect();
    let relaid = formed.iter().filter(|f| f.is_some()).count();
    if relaid == 0 {
        return as_stored(Cow::Borrowed(metas));
    }
    let mut out_metas = Vec::with_capacity(metas.len());
    let mut out_payloads = Vec::with_capacity(metas.len());
    for ((m, p), f) in metas.iter().zip(payloads).zip(formed) {
        match f {
            Some((meta, payload)) => {
                out_metas.push(meta);
                out_payloads.push(Cow::Owned(payload));
            }
            None => {
                out_metas.push(m.clone());
                out_payloads.push(Cow::Borrowed(*p));
            }
        }
    }
    FormedChunks {
        metas: Cow::Owned(out_metas),
        payloads: out_payloads,
        relaid,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{encode_rows, float_rows, Rng};
    use ibp_codec::chunk_codec::transfer_cost;
    use ibp_codec::EncodeOptions;

    fn decode_all(metas: &[ChunkMeta], payloads: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for (m, p) in metas.iter().zip(payloads) {
            let mut rows = vec![0u8; (m.row_bytes() * m.row_count as u64) as usize];
            decode_chunk(m, p, DecoderKind::Oracle, &mut rows).unwrap();
            out.extend(rows);
        }
        out
    }

    fn entry(rows: &[u8], row_bytes: usize, align_log2: u8) -> (Vec<ChunkMeta>, Vec<Vec<u8>>) {
        let opts = EncodeOptions {
            align_log2,
            ..EncodeOptions::default()
        };
        encode_rows(rows, row_bytes, &opts, 512)
    }

    /// Rows that save little (full-mantissa floats) are coded by the default analysis but cost more
    /// to read than raw rows: they are re-laid raw, rows unchanged. Rows that save much (4 mantissa
    /// bits dropped, 1 KiB) stay coded, as does everything under `AsStored`.
    #[test]
    fn chunks_no_cheaper_to_read_are_relaid_raw_with_the_same_rows() {
        let mut rng = Rng::new(5);
        for (row_bytes, align_log2) in [(256usize, 4u8), (256, 0), (64, 0), (128, 0), (200, 4)] {
            let rows = float_rows(&mut rng, 2048, row_bytes, 0.02, 0);
            let (metas, payloads) = entry(&rows, row_bytes, align_log2);
            let refs: Vec<&[u8]> = payloads.iter().map(|p| p.as_slice()).collect();
            assert!(
                metas.iter().any(|m| m.group_count != 0),
                "{row_bytes} B: the analysis codes these rows"
            );
            let stored = form_chunks(ChunkForm::AsStored, &metas, &refs);
            assert_eq!(stored.relaid, 0);
            assert!(matches!(stored.metas, Cow::Borrowed(_)));
            let formed = form_chunks(ChunkForm::FOR_GPU_READS, &metas, &refs);
            for (before, after) in metas.iter().zip(formed.metas.iter()) {
                if relays(ChunkForm::FOR_GPU_READS, before) {
                    assert_eq!(after.group_count, 0, "{row_bytes} B A={align_log2}: re-laid raw");
                    assert_eq!(after.align_log2, align_log2.max(RAW_ROWS_ALIGN_LOG2));
                    assert!(transfer_cost(after, &TransferCost::GPU) <= transfer_cost(before, &TransferCost::GPU));
                } else {
                    assert_eq!(after, before, "{row_bytes} B A={align_log2}: kept as stored");
                }
            }
            assert_eq!(
                formed.relaid,
                metas.iter().filter(|m| relays(ChunkForm::FOR_GPU_READS, m)).count()
            );
            assert_eq!(
                decode_all(&formed.metas, &formed.payload_refs()),
                rows,
                "{row_bytes} B rows"
            );
            if row_bytes != 200 {
                // 6 % saved at most: no chunk of these is cheaper to read coded.
                assert_eq!(
                    formed.relaid,
                    metas.len(),
                    "{row_bytes} B A={align_log2}: every chunk re-laid"
                );
            }
        }
        // Rows with 4 mantissa bits dropped save 19 %: 208-byte records of 256-byte rows touch one
        // sector less than raw rows, which the GPU's decode of a record outweighs (re-laid); the
        // 1 KiB rows save 15 sectors each and stay coded.
        for (row_bytes, relaid) in [(256usize, true), (1024, false)] {
            let q4 = float_rows(&mut rng, 2048, row_bytes, 0.02, 4);
            let (metas, payloads) = entry(&q4, row_bytes, 4);
            let refs: Vec<&[u8]> = payloads.iter().map(|p| p.as_slice()).collect();
            let formed = form_chunks(ChunkForm::FOR_GPU_READS, &metas, &refs);
            if relaid {
                assert_eq!(formed.relaid, metas.len(), "q4 {row_bytes} B: re-laid");
                assert_eq!(decode_all(&formed.metas, &formed.payload_refs()), q4);
            } else {
                assert_eq!(formed.relaid, 0, "q4 {row_bytes} B: cheaper to read coded");
                assert_eq!(formed.metas.as_ref(), metas.as_slice());
            }
        }
    }

    /// A row index that is not one (offsets going back, past 2^48) is never re-laid, and looking
    /// at it does not overflow.
    #[test]
    fn bad_row_indexes_are_kept_as_stored() {
        let mut rng = Rng::new(7);
        let rows = float_rows(&mut rng, 512, 256, 0.02, 0);
        let (metas, payloads) = entry(&rows, 256, 4);
        let refs: Vec<&[u8]> = payloads.iter().map(|p| p.as_slice()).collect();
        assert!(relays(ChunkForm::FOR_GPU_READS, &metas[0]));
        let mut back = metas[0].clone();
        back.row_offsets.swap(3, 4);
        let mut huge = metas[0].clone();
        for o in huge.row_offsets.iter_mut().skip(1) {
            *o += u64::MAX - (1 << 20);
        }
        for bad in [back, huge] {
            assert!(!relays(ChunkForm::FOR_GPU_READS, &bad));
            let formed = form_chunks(ChunkForm::FOR_GPU_READS, std::slice::from_ref(&bad), &refs[..1]);
            assert_eq!(formed.relaid, 0);
        }
    }

    /// A chunk that does not decode is kept as stored (its error then comes from the loader's or the
    /// kernels' checks, as for any file), while its neighbours are still re-laid.
    #[test]
    fn chunks_that_do_not_decode_are_kept_as_stored() {
        let mut rng = Rng::new(6);
        let rows = float_rows(&mut rng, 1536, 256, 0.02, 0);
        let (metas, mut payloads) = entry(&rows, 256, 4);
        assert_eq!(metas.len(), 3);
        let mid = payloads[1].len() / 2;
        payloads[1][mid] ^= 0x10; // CRC no longer matches
        let short = payloads[2][..payloads[2].len() / 8].to_vec();
        let refs: Vec<&[u8]> = vec![&payloads[0], &payloads[1], &short];
        let formed = form_chunks(ChunkForm::FOR_GPU_READS, &metas, &refs);
        assert_eq!(formed.relaid, 1);
        assert_eq!(formed.metas[0].group_count, 0);
        assert_eq!(formed.metas[1], metas[1]);
        assert_eq!(formed.payloads[1].as_ref(), payloads[1].as_slice());
        assert_eq!(formed.metas[2], metas[2]);
        assert_eq!(formed.payloads[2].as_ref(), short.as_slice());
    }
}
