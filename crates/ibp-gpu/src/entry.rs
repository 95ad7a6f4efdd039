//! Entries loaded for GPU use, and the decode operations on them: gathers of arbitrary rows,
//! ranges, whole chunks and whole entries, enqueued on a caller's stream into a caller's buffer.
//!
//! How an entry's kernels and decode tables are chosen is in `kernel_choice`, how range decodes are
//! tiled in `tiling`, and the status word of a decode in flight in `pending`.
#![forbid(unsafe_code)]

use crate::chunk_form::{form_chunks, ChunkForm, FormedChunks};
use crate::device::GpuDevice;
use crate::error::{GpuError, GpuResult};
use crate::kernel_choice::{
    auto_tile_kernel, build_tables, coded_words, decode_bound, gather_split_log2, has_sparse_tables, row_spans_wanted,
    sparse_gathers_by_default, split_blocks, split_words, stage_bytes, table_offsets,
};
use crate::launch::{self, GatherParams};
use crate::layout::EntryLayout;
use crate::pending::{lock, StatusBlock, StatusPool};
use crate::pinned::PinnedBuffer;
use crate::tiling::{range_chunks, tile_starts, tiling, RowSegments, RowSegmentsSetting};
use cudarc::driver::{sys, CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use ibp_format::{ChunkMeta, ErrorCode, FormatError};
use std::sync::{Arc, Mutex};

pub use crate::kernel_choice::{LeanShape, TileKernel, ROW_SPANS_MAX_BYTES, ROW_SPANS_MIN_ROW_BYTES};
pub use crate::pending::PendingDecode;
/// Where a [`GpuEntry`] keeps its compressed payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayloadHome {
    /// Device memory: a compressed GPU cache.
    Device,
    /// Page-locked host memory mapped for the device: kernels read it over the bus (zero-copy).
    HostMapped,
}

pub(crate) fn invalid(detail: impl Into<String>) -> GpuError {
    GpuError::Format(FormatError::new(ErrorCode::InvalidArgument, detail))
}

/// An entry's layout and compressed payload in page-locked, device-mapped, portable host memory.
///
/// One `HostEntry` can back [`GpuEntry`] values on every GPU of the host at once.
pub struct HostEntry {
    layout: Arc<EntryLayout>,
    payload: PinnedBuffer,
    relaid_chunks: usize,
}

impl HostEntry {
    /// Builds the layout from the chunks' metadata (in row order), checks each payload's length
    /// and CRC (spec 9.2), and copies the payloads into pinned memory allocated through `device`.
    /// Chunks are kept in [`ChunkForm::FOR_GPU_READS`] (a host entry is read over the bus): coded
    /// chunks no cheaper to read than raw rows are kept raw; [`HostEntry::with_form`] with
    /// [`ChunkForm::AsStored`] keeps every chunk as the file stores it.
    pub fn new(
        device: &GpuDevice,
        row_bytes: u64,
        metas: &[ChunkMeta],
        payloads: &[&[u8]],
    ) -> GpuResult<Arc<HostEntry>> {
        HostEntry::with_form(
            device,
            row_bytes,
            metas,
            payloads,
            ChunkForm::for_home(PayloadHome::HostMapped),
        )
    }

    /// [`HostEntry::new`] with the chunks kept in `form`: [`ChunkForm::FOR_GPU_READS`] keeps raw
    /// the coded chunks that are no cheaper to read than raw rows (decoded once here, on the CPU),
    /// so zero-copy gathers of rows that save little run like gathers of uncompressed rows.
    pub fn with_form(
        device: &GpuDevice,
        row_bytes: u64,
        metas: &[ChunkMeta],
        payloads: &[&[u8]],
        form: ChunkForm,
    ) -> GpuResult<Arc<HostEntry>> {
        let (layout, formed) = build_formed_layout(row_bytes, metas, payloads, form)?;
        let payloads = formed.payload_refs();
        let mut payload = PinnedBuffer::new(device.context(), layout.payload_buffer_len as usize)
            .map_err(GpuError::driver("allocating pinned host memory"))?;
        let buf = payload.as_mut_slice();
        for (i, p) in payloads.iter().enumerate() {
            buf[layout.payload_range(i)].copy_from_slice(p);
        }
        Ok(Arc::new(HostEntry {
            layout: Arc::new(layout),
            payload,
            relaid_chunks: formed.relaid,
        }))
    }

    /// Chunks the loader re-laid raw ([`ChunkForm`]); 0 when every chunk is kept as stored.
    pub fn relaid_chunks(&self) -> usize {
        self.relaid_chunks
    }

    /// Reads entry `entry` of a container (every chunk's metadata and payload, payload CRCs checked
    /// by the reader) into pinned memory allocated through `device`, in [`ChunkForm::FOR_GPU_READS`]
    /// as [`HostEntry::new`].
    pub fn from_reader<R: std::io::Read + std::io::Seek>(
        device: &GpuDevice,
        reader: &mut ibp_codec::ContainerReader<R>,
        entry: usize,
    ) -> GpuResult<Arc<HostEntry>> {
        HostEntry::from_reader_with_form(device, reader, entry, ChunkForm::for_home(PayloadHome::HostMapped))
    }

    /// [`HostEntry::from_reader`] with the chunks kept in `form` (see [`HostEntry::with_form`]).
    pub fn from_reader_with_form<R: std::io::Read + std::io::Seek>(
        device: &GpuDevice,
        reader: &mut ibp_codec::ContainerReader<R>,
        entry: usize,
        form: ChunkForm,
    ) -> GpuResult<Arc<HostEntry>> {
        let (row_bytes, metas, payloads) = read_entry(reader, entry)?;
        let refs: Vec<&[u8]> = payloads.iter().map(|p| p.as_slice()).collect();
        HostEntry::with_form(device, row_bytes, &metas, &refs, form)
    }

    /// The entry's layout.
    pub fn layout(&self) -> &EntryLayout {
        &self.layout
    }

    /// The payload buffer (every chunk's payload at its layout offset).
    pub fn payload(&self) -> &[u8] {
        self.payload.as_slice()
    }

    /// The pinned buffer (for baselines that read the same memory).
    pub fn pinned(&self) -> &PinnedBuffer {
        &self.payload
    }
}

/// Row size, chunk metadata and payloads of a container entry.
pub(crate) fn read_entry<R: std::io::Read + std::io::Seek>(
    reader: &mut ibp_codec::ContainerReader<R>,
    entry: usize,
) -> GpuResult<(u64, Vec<ChunkMeta>, Vec<Vec<u8>>)> {
    let info = reader.entries().get(entry).cloned().ok_or_else(|| {
        GpuError::Format(FormatError::new(
            ErrorCode::RowIndex,
            format!("entry {entry} requested, container has {}", reader.entries().len()),
        ))
    })?;
    let mut metas = Vec::with_capacity(info.chunks.len());
    let mut payloads = Vec::with_capacity(info.chunks.len());
    for chunk in 0..info.chunks.len() {
        let (m, p) = reader.read_chunk(entry, chunk)?;
        metas.push(m);
        payloads.push(p);
    }
    Ok((info.row_bytes, metas, payloads))
}

/// The layout of an entry's chunks kept in `form`, and those chunks. The chunks as given are checked
/// first ([`build_layout`]: lengths, CRCs, row indexes), so a defect is reported as for
/// [`ChunkForm::AsStored`] and only valid chunks are re-laid.
pub(crate) fn build_formed_layout<'a>(
    row_bytes: u64,
    metas: &'a [ChunkMeta],
    payloads: &[&'a [u8]],
    form: ChunkForm,
) -> GpuResult<(EntryLayout, FormedChunks<'a>)> {
    let layout = build_layout(row_bytes, metas, payloads)?;
    let formed = form_chunks(form, metas, payloads);
    if formed.relaid == 0 {
        return Ok((layout, formed));
    }
    let layout = build_layout(row_bytes, &formed.metas, &formed.payload_refs())?;
    Ok((layout, formed))
}

pub(crate) fn build_layout(row_bytes: u64, metas: &[ChunkMeta], payloads: &[&[u8]]) -> GpuResult<EntryLayout> {
    if metas.len() != payloads.len() {
        return Err(invalid(format!(
            "{} chunk metadata values but {} payloads",
            metas.len(),
            payloads.len()
        )));
    }
    for (i, (m, p)) in metas.iter().zip(payloads).enumerate() {
        m.check_payload_crc(p).map_err(|e| e.at(format!("chunk {i}")))?;
    }
    Ok(EntryLayout::new(row_bytes, metas)?)
}

enum Payload {
    Device(CudaSlice<u8>),
    Host(Arc<HostEntry>),
}

/// An entry ready to decode on one GPU: metadata in device memory, payload in device memory or
/// mapped host memory. Loading also builds, in device memory, the per-position decode tables that
/// gathers use for chunks of float-like masks (32 bytes per group and word position: for 1 KiB rows
/// of 64-bit words, 4 KiB per chunk; at most 256 MiB per entry), and for rows of at least 128 bytes
/// a flat row index (8 bytes per row, [`GpuEntry::add_row_spans`]).
pub struct GpuEntry {
    device: Arc<GpuDevice>,
    layout: Arc<EntryLayout>,
    chunks: CudaSlice<u8>,
    meta: CudaSlice<u8>,
    anchors: CudaSlice<u64>,
    payload: Payload,
    payload_ptr: sys::CUdeviceptr,
    chunks_ptr: sys::CUdeviceptr,
    meta_ptr: sys::CUdeviceptr,
    anchors_ptr: sys::CUdeviceptr,
    /// Per-position decode tables for `ibp_gather` and each chunk's byte offset in them (`u64::MAX`:
    /// none), built on the device at load time; `None` when no chunk has one.
    tables: Option<(CudaSlice<u8>, CudaSlice<u64>)>,
    /// Device addresses of `tables` (0 when none), taken at load: the tables are written once by
    /// the load, which synchronises, and only read afterwards, so launches on any stream pass the
    /// addresses without per-use stream events.
    tables_ptrs: (sys::CUdeviceptr, sys::CUdeviceptr),
    /// The flat row index gathers read ([`EntryLayout::row_spans`], 8 bytes per row), and its device
    /// address (0: none): uploaded at load for rows of at least [`ROW_SPANS_MIN_ROW_BYTES`]
    /// ([`row_spans_wanted`]), or later by [`GpuEntry::add_row_spans`].
    row_spans: Option<CudaSlice<u64>>,
    row_spans_ptr: sys::CUdeviceptr,
    /// Whether gathers pass `row_spans` ([`GpuEntry::set_row_spans`]).
    use_row_spans: std::sync::atomic::AtomicBool,
    stage_bytes: u32,
    /// Words per row of the entry's longest coded rows ([`coded_words`], for `ibp_gather_split`).
    coded_words: u32,
    /// [`decode_bound`] of the layout (for `ibp_gather_split`).
    decode_bound: bool,
    /// Whether a chunk has a sparse table (`kernel_choice::table_offsets`): gathers can then go
    /// through `ibp_gather_sparse`, one warp per request.
    sparse_tables: bool,
    /// [`GpuEntry::set_sparse_rows`].
    use_sparse_rows: std::sync::atomic::AtomicBool,
    /// Chunks the loader re-laid raw ([`ChunkForm`]).
    relaid_chunks: usize,
    /// Status words that are zero and used by no launch.
    status_pool: StatusPool,
    /// Tile table of the last range decoded, reused by the next decode of the same range with the
    /// same tile rows on the same stream (a whole entry decoded again and again uploads nothing;
    /// another stream uploads its own, so it never reads a table whose upload it has not waited for).
    tile_cache: Mutex<Option<CachedTiles>>,
    /// The tile kernel the entry's chunks call for (see [`auto_tile_kernel`]).
    auto_kernel: TileKernel,
    /// [`tiling`] of the entry for the general (`[0]`), the lean (`[1]`), the short-rows (`[2]`),
    /// the long-rows (`[3]`) and the vector-lanes (`[4]`) tile kernels ([`TileKernel::tile_class`]),
    /// computed once: each pass over the descriptors costs microseconds per launch on entries of
    /// thousands of chunks.
    tilings: [Option<(u32, u32, u32)>; 5],
    /// The tile kernel range decodes use, as [`TileKernel::code`] (comparisons and tests).
    tile_kernel: std::sync::atomic::AtomicI8,
    /// How the long-rows kernel spreads a range's rows (tests).
    row_segments: RowSegmentsSetting,
}

/// A range's tile table ([`RangeTiles`](crate::tiling::RangeTiles)) in device memory.
#[derive(Clone)]
struct TileTable {
    /// The tile starts, uploaded.
    starts: Arc<CudaSlice<u32>>,
    /// Their device address, taken at upload: the table is uploaded on the stream that uses it and
    /// reused only on that stream, so stream order alone keeps its uses after the upload, with no
    /// per-use stream events.
    ptr: sys::CUdeviceptr,
    /// Tiles in all.
    tiles: u64,
    /// The range's first chunk and its chunk count (the launch sees only those descriptors).
    first_chunk: usize,
    chunks: usize,
}

/// A cached tile table: `(first, count, tile_rows, stream id)` of the range it was made for, and the
/// table.
type CachedTiles = ((u64, u64, u32, usize), TileTable);

/// Rows the kernel produces: a list in device memory, or a contiguous range.
enum Rows<'a> {
    List(&'a CudaSlice<u64>),
    Range(u64),
}

impl GpuEntry {
    /// Loads an entry from its chunks' metadata and payloads (row order). The payload goes to
    /// device memory (`PayloadHome::Device`) or to new pinned host memory (`HostMapped`), its
    /// chunks in the form [`ChunkForm::for_home`] gives: as stored in device memory, in
    /// [`ChunkForm::FOR_GPU_READS`] in host memory.
    pub fn load(
        device: &Arc<GpuDevice>,
        row_bytes: u64,
        metas: &[ChunkMeta],
        payloads: &[&[u8]],
        home: PayloadHome,
    ) -> GpuResult<GpuEntry> {
        GpuEntry::load_with_form(device, row_bytes, metas, payloads, home, ChunkForm::for_home(home))
    }

    /// [`GpuEntry::load`] with the chunks kept in `form` (see [`HostEntry::with_form`]).
    pub fn load_with_form(
        device: &Arc<GpuDevice>,
        row_bytes: u64,
        metas: &[ChunkMeta],
        payloads: &[&[u8]],
        home: PayloadHome,
        form: ChunkForm,
    ) -> GpuResult<GpuEntry> {
        match home {
            PayloadHome::HostMapped => {
                let host = HostEntry::with_form(device, row_bytes, metas, payloads, form)?;
                GpuEntry::from_host(device, &host, PayloadHome::HostMapped)
            }
            PayloadHome::Device => {
                let (layout, formed) = build_formed_layout(row_bytes, metas, payloads, form)?;
                let payloads = formed.payload_refs();
                let mut bytes = vec![0u8; layout.payload_buffer_len as usize];
                for (i, p) in payloads.iter().enumerate() {
                    bytes[layout.payload_range(i)].copy_from_slice(p);
                }
                let stream = device.context().default_stream();
                let dev = stream
                    .clone_htod(&bytes)
                    .map_err(GpuError::driver("uploading the payload"))?;
                GpuEntry::assemble(device, Arc::new(layout), Payload::Device(dev), formed.relaid)
            }
        }
    }

    /// Loads entry `entry` of a container (payload CRCs checked) onto `device`, its chunks in the
    /// form [`ChunkForm::for_home`] gives (see [`GpuEntry::load`]).
    pub fn from_reader<R: std::io::Read + std::io::Seek>(
        device: &Arc<GpuDevice>,
        reader: &mut ibp_codec::ContainerReader<R>,
        entry: usize,
        home: PayloadHome,
    ) -> GpuResult<GpuEntry> {
        GpuEntry::from_reader_with_form(device, reader, entry, home, ChunkForm::for_home(home))
    }

    /// [`GpuEntry::from_reader`] with the chunks kept in `form` (see [`HostEntry::with_form`]).
    pub fn from_reader_with_form<R: std::io::Read + std::io::Seek>(
        device: &Arc<GpuDevice>,
        reader: &mut ibp_codec::ContainerReader<R>,
        entry: usize,
        home: PayloadHome,
        form: ChunkForm,
    ) -> GpuResult<GpuEntry> {
        let (row_bytes, metas, payloads) = read_entry(reader, entry)?;
        let refs: Vec<&[u8]> = payloads.iter().map(|p| p.as_slice()).collect();
        GpuEntry::load_with_form(device, row_bytes, &metas, &refs, home, form)
    }

    /// Uses a host entry on `device`: mapped in place (`HostMapped`, no copy) or copied into
    /// device memory (`Device`), in either case in the form the host entry keeps its chunks
    /// ([`HostEntry::new`]: [`ChunkForm::FOR_GPU_READS`]).
    pub fn from_host(device: &Arc<GpuDevice>, host: &Arc<HostEntry>, home: PayloadHome) -> GpuResult<GpuEntry> {
        let payload = match home {
            PayloadHome::HostMapped => Payload::Host(host.clone()),
            PayloadHome::Device => {
                let stream = device.context().default_stream();
                Payload::Device(
                    stream
                        .clone_htod(host.payload())
                        .map_err(GpuError::driver("uploading the payload"))?,
                )
            }
        };
        GpuEntry::assemble(device, host.layout.clone(), payload, host.relaid_chunks)
    }

    fn assemble(
        device: &Arc<GpuDevice>,
        layout: Arc<EntryLayout>,
        payload: Payload,
        relaid_chunks: usize,
    ) -> GpuResult<GpuEntry> {
        let stream = device.context().default_stream();
        let up = |what: &str, e| GpuError::driver(format!("uploading {what}"))(e);
        let chunks = stream
            .clone_htod(&layout.chunk_bytes())
            .map_err(|e| up("chunk descriptors", e))?;
        let meta = stream.clone_htod(&layout.meta).map_err(|e| up("metadata", e))?;
        let anchors = stream.clone_htod(&layout.anchors).map_err(|e| up("the row index", e))?;
        let payload_ptr = match &payload {
            Payload::Device(s) => s.device_ptr(&stream).0,
            Payload::Host(h) => h
                .payload
                .device_ptr(device.context())
                .map_err(GpuError::driver("mapping the pinned payload"))?,
        };
        let chunks_ptr = chunks.device_ptr(&stream).0;
        let meta_ptr = meta.device_ptr(&stream).0;
        let anchors_ptr = anchors.device_ptr(&stream).0;
        let (table_offsets, tables_total) = table_offsets(&layout);
        let sparse_tables = has_sparse_tables(&table_offsets);
        let sparse_by_default = sparse_gathers_by_default(&layout, &table_offsets);
        let tables = build_tables(
            device,
            &stream,
            &layout,
            (&table_offsets, tables_total),
            chunks_ptr,
            meta_ptr,
        )?;
        let tables_ptrs = match &tables {
            Some((t, o)) => (t.device_ptr(&stream).0, o.device_ptr(&stream).0),
            None => (0, 0),
        };
        // (The spans are built only where they are wanted.)
        let spans = if row_spans_wanted(&layout) {
            layout.row_spans()
        } else {
            None
        };
        let row_spans = spans
            .map(|spans| stream.clone_htod(&spans))
            .transpose()
            .map_err(|e| up("the row spans", e))?;
        let row_spans_ptr = row_spans.as_ref().map_or(0, |s| s.device_ptr(&stream).0);
        stream.synchronize().map_err(GpuError::driver("finishing the upload"))?;
        let stage_bytes = stage_bytes(&layout, device.gather_smem_limit());
        let auto_kernel = auto_tile_kernel(&layout);
        let tilings = [0, 1, 2, 3, 4].map(|class| tiling(&layout, class));
        let coded_words = coded_words(&layout);
        let decode_bound = decode_bound(&layout);
        Ok(GpuEntry {
            device: device.clone(),
            layout,
            chunks,
            meta,
            anchors,
            payload,
            payload_ptr,
            chunks_ptr,
            meta_ptr,
            anchors_ptr,
            tables,
            tables_ptrs,
            row_spans,
            row_spans_ptr,
            use_row_spans: std::sync::atomic::AtomicBool::new(true),
            stage_bytes,
            coded_words,
            decode_bound,
            sparse_tables,
            use_sparse_rows: std::sync::atomic::AtomicBool::new(sparse_by_default),
            relaid_chunks,
            status_pool: Mutex::new(Vec::new()),
            tile_cache: Mutex::new(None),
            auto_kernel,
            tilings,
            tile_kernel: std::sync::atomic::AtomicI8::new(TileKernel::Auto.code()),
            row_segments: RowSegmentsSetting::default(),
        })
    }

    /// Whether a chunk has a sparse table (`kernel_choice::table_offsets`), so that gathers can go
    /// through `ibp_gather_sparse`: rows of sparse chunks decoded as their exceptions over zeros.
    pub fn has_sparse_tables(&self) -> bool {
        self.sparse_tables
    }

    /// Whether gathers go through `ibp_gather_sparse`: the entry has sparse tables and
    /// [`GpuEntry::set_sparse_rows`] is on.
    pub fn uses_sparse_rows(&self) -> bool {
        self.sparse_tables && self.use_sparse_rows.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Makes later gathers go through `ibp_gather_sparse` where the entry has sparse tables (`on`) or
    /// through the kernels of other entries, which decode every word (off). The default from the
    /// load on: on for rows of at least [`crate::SPARSE_GATHER_MIN_ROW_BYTES`], at least half of them
    /// in chunks with sparse tables (`kernel_choice::sparse_gathers_by_default`). Both give the same
    /// rows and the same errors.
    pub fn set_sparse_rows(&self, on: bool) {
        self.use_sparse_rows.store(on, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether gathers find records through a flat row index in device memory
    /// ([`EntryLayout::row_spans`]: 8 bytes per row, uploaded at load where the layout allows one).
    pub fn has_row_spans(&self) -> bool {
        self.row_spans.is_some()
    }

    /// Uploads the flat row index where the load did not ([`ROW_SPANS_MIN_ROW_BYTES`]), so gathers of
    /// short rows in small batches start reading records sooner (GPU_NOTES entry 50: 64-byte rows
    /// +2-7 % at 1K-row batches), at 8 bytes of device memory per row. Returns whether the entry has
    /// one now (not where [`EntryLayout::row_spans`] gives none). Synchronises the device's default
    /// stream; call it before gathering, as a part of loading.
    pub fn add_row_spans(&mut self) -> GpuResult<bool> {
        if self.row_spans.is_none() {
            if let Some(spans) = self.layout.row_spans() {
                let stream = self.device.context().default_stream();
                let dev = stream
                    .clone_htod(&spans)
                    .map_err(GpuError::driver("uploading the row spans"))?;
                self.row_spans_ptr = dev.device_ptr(&stream).0;
                stream.synchronize().map_err(GpuError::driver("finishing the upload"))?;
                self.row_spans = Some(dev);
            }
        }
        Ok(self.row_spans.is_some())
    }

    /// Makes later gathers pass the flat row index (`on`, the default) or find records through the
    /// anchors and stored lengths, as entries without one do (tests and A/Bs: both paths give the
    /// same rows and the same errors).
    pub fn set_row_spans(&self, on: bool) {
        self.use_row_spans.store(on, std::sync::atomic::Ordering::Relaxed);
    }

    /// The entry's layout.
    pub fn layout(&self) -> &EntryLayout {
        &self.layout
    }

    /// Chunks the loader re-laid raw ([`ChunkForm`]); 0 when every chunk is kept as stored.
    pub fn relaid_chunks(&self) -> usize {
        self.relaid_chunks
    }

    /// The device this entry lives on.
    pub fn device(&self) -> &Arc<GpuDevice> {
        &self.device
    }

    /// Rows of the entry.
    pub fn row_count(&self) -> u64 {
        self.layout.row_count
    }

    /// Bytes per row.
    pub fn row_bytes(&self) -> u64 {
        self.layout.row_bytes
    }

    /// Device address and readable length of the payload buffer (for baselines).
    pub fn payload_device_ptr(&self) -> (sys::CUdeviceptr, u64) {
        (self.payload_ptr, self.layout.payload_buffer_len)
    }

    /// Whether range decodes (`decode_range`, `decode_chunk`, `decode_all`) of this entry use the
    /// lean tile kernel `ibp_decode_tiles_lean` (records checked by one thread per row, rows decoded
    /// by one warp per row): the entry has a coded chunk, every coded chunk has rows of at most 64
    /// whole words and a per-position table of at most 1024 entries, and
    /// [`GpuEntry::use_tile_kernel`] has not turned it off.
    pub fn uses_lean_tiles(&self) -> bool {
        self.lean_tile_shape().is_some()
    }

    /// The lean tile kernel range decodes use (`None`: a general one): by default the one for the
    /// row lengths of the entry's coded chunks (see [`LeanShape`]), else what
    /// [`GpuEntry::use_tile_kernel`] set.
    pub fn lean_tile_shape(&self) -> Option<LeanShape> {
        match self.tile_kernel() {
            TileKernel::Lean(shape) => Some(shape),
            _ => None,
        }
    }

    /// The tile kernel range decodes use (never [`TileKernel::Auto`]): the one the entry's chunks
    /// call for, or what [`GpuEntry::use_tile_kernel`] set.
    pub fn tile_kernel(&self) -> TileKernel {
        TileKernel::from_code(self.tile_kernel.load(std::sync::atomic::Ordering::Relaxed)).resolve(self.auto_kernel)
    }

    /// With `true`, range decodes use the general tile kernel `ibp_decode_tiles` even where the lean
    /// one is allowed (both give the same bytes and errors; for comparisons and tests); `false`
    /// restores the default. Takes effect for launches after the call.
    pub fn use_general_tile_decoder(&self, general: bool) {
        self.use_tile_kernel(if general { TileKernel::General } else { TileKernel::Auto });
    }

    /// The tile kernel range decodes use from the next launch on (for comparisons and tests).
    /// [`TileKernel::Lean`] applies only where the entry allows a lean kernel at all; a kernel that
    /// does not take the entry's coded rows ([`TileKernel::decodes`]) reports `E_LAYOUT` for their
    /// tiles.
    pub fn use_tile_kernel(&self, kernel: TileKernel) {
        self.tile_kernel
            .store(kernel.code(), std::sync::atomic::Ordering::Relaxed);
    }

    /// How a range decode of rows `first .. first + count` (`decode_range`; `decode_all` is the
    /// whole entry) would be launched now: its tile kernel, rows and bytes per tile, tiles and
    /// blocks; `None` where the range goes through a gather kernel instead (records too long for
    /// a tile) or is empty; `E_ROW_INDEX` where it is not inside the entry. For benchmarks and
    /// tuning: it computes what the launch computes, on the CPU, and launches nothing (for an output
    /// that is 16-byte aligned: into one that is only 8-byte aligned, a launch takes the long-rows
    /// kernel where this says the vector-lanes one).
    pub fn tile_plan(&self, first: u64, count: u64) -> GpuResult<Option<crate::TilePlan>> {
        self.check_range(first, count)?;
        let kernel = self.tile_kernel();
        let Some(tiling) = self.tilings[kernel.tile_class()] else {
            return Ok(None);
        };
        if count == 0 {
            return Ok(None);
        }
        let tile_bytes = tiling.1;
        let (tile_rows, row_segments) = self.range_tiles(kernel, tiling, first, count)?;
        let tiles = tile_starts(&self.layout, first, count, tile_rows)?.tiles;
        Ok(Some(crate::TilePlan {
            kernel,
            tile_rows,
            tile_bytes,
            shared_bytes: crate::launch::tiles_smem(tile_rows, tile_bytes, tiling.2),
            row_segments,
            tiles,
            blocks: self.tile_blocks(kernel, tiles),
        }))
    }

    /// Tile rows and row segments of a range decode by `kernel`, whose tiling of this entry is
    /// `tiling` (`RowSegmentsSetting::range_tiles` on this device's SMs).
    fn range_tiles(
        &self,
        kernel: TileKernel,
        tiling: (u32, u32, u32),
        first: u64,
        count: u64,
    ) -> GpuResult<(u32, u32)> {
        self.row_segments.range_tiles(
            &self.layout,
            kernel.tile_class(),
            tiling,
            first,
            count,
            self.device.sm_count(),
        )
    }

    /// Blocks a launch of `kernel` over `tiles` tiles asks for: one per tile, at most
    /// `tile_blocks_per_sm` per SM (or the tuning cap).
    fn tile_blocks(&self, kernel: TileKernel, tiles: u64) -> u32 {
        let most = crate::device::tile_blocks_cap()
            .unwrap_or(self.device.sm_count() * crate::device::tile_blocks_per_sm(kernel.tile_class()));
        tiles.clamp(1, most.max(1) as u64) as u32
    }

    /// How range decodes through the long-rows tile kernel spread a tile's rows from the next
    /// launch on: [`RowSegments::Auto`] (the default), or whole rows or segments whatever the
    /// range (tests: both give the same bytes and errors).
    pub fn use_row_segments(&self, mode: RowSegments) {
        self.row_segments.set(mode);
    }

    /// Where the payload lives.
    pub fn home(&self) -> PayloadHome {
        match self.payload {
            Payload::Device(_) => PayloadHome::Device,
            Payload::Host(_) => PayloadHome::HostMapped,
        }
    }

    fn check_stream(&self, stream: &CudaStream) -> GpuResult<()> {
        if stream.context().cu_ctx() != self.device.context().cu_ctx() {
            return Err(invalid("the stream belongs to another device's context"));
        }
        Ok(())
    }

    /// Gathers `rows` (any order, duplicates allowed) into `out` (row `k` of the output is entry row
    /// `rows[k]`), asynchronously on `stream`. Every index is checked first (`E_ROW_INDEX`);
    /// `out` must hold at least `rows.len() * row_bytes` bytes. Call [`PendingDecode::wait`] to learn
    /// whether the rows decoded (`E_ROW_LENGTH`, `E_PADDING`, ... name the failing row).
    pub fn gather<O: DevicePtrMut<u8>>(
        &self,
        rows: &[u64],
        out: &mut O,
        stream: &Arc<CudaStream>,
    ) -> GpuResult<PendingDecode<'_>> {
        self.layout.check_rows(rows)?;
        self.check_stream(stream)?;
        if rows.is_empty() {
            return Ok(PendingDecode::empty(stream));
        }
        let list = stream
            .clone_htod(rows)
            .map_err(GpuError::driver("uploading row indices"))?;
        let mut pending = self.launch(Rows::List(&list), rows.len() as u64, out, stream)?;
        pending.rows = Some(list);
        Ok(pending)
    }

    /// Gathers rows whose indices are already in device memory (`rows[..count]`); indices are
    /// checked by the kernel (`E_ROW_INDEX` from [`PendingDecode::wait`]).
    pub fn gather_device_rows<O: DevicePtrMut<u8>>(
        &self,
        rows: &CudaSlice<u64>,
        out: &mut O,
        stream: &Arc<CudaStream>,
    ) -> GpuResult<PendingDecode<'_>> {
        self.check_stream(stream)?;
        if rows.is_empty() {
            return Ok(PendingDecode::empty(stream));
        }
        self.launch(Rows::List(rows), rows.len() as u64, out, stream)
    }

    /// Decodes rows `first .. first + count` into `out`.
    pub fn decode_range<O: DevicePtrMut<u8>>(
        &self,
        first: u64,
        count: u64,
        out: &mut O,
        stream: &Arc<CudaStream>,
    ) -> GpuResult<PendingDecode<'_>> {
        self.check_stream(stream)?;
        self.check_range(first, count)?;
        if count == 0 {
            return Ok(PendingDecode::empty(stream));
        }
        self.launch(Rows::Range(first), count, out, stream)
    }

    /// `E_ROW_INDEX` unless rows `first .. first + count` lie inside the entry.
    fn check_range(&self, first: u64, count: u64) -> GpuResult<()> {
        let end = first.checked_add(count);
        if end.is_none_or(|e| e > self.layout.row_count) {
            return Err(GpuError::Format(FormatError::new(
                ErrorCode::RowIndex,
                format!(
                    "rows {first}..{first}+{count} exceed the entry's {} rows",
                    self.layout.row_count
                ),
            )));
        }
        Ok(())
    }

    /// Decodes chunk `chunk` (all its rows) into `out`.
    pub fn decode_chunk<O: DevicePtrMut<u8>>(
        &self,
        chunk: usize,
        out: &mut O,
        stream: &Arc<CudaStream>,
    ) -> GpuResult<PendingDecode<'_>> {
        let c = self.layout.chunks.get(chunk).ok_or_else(|| {
            GpuError::Format(FormatError::new(
                ErrorCode::RowIndex,
                format!("chunk {chunk} requested, entry has {}", self.layout.chunks.len()),
            ))
        })?;
        self.decode_range(c.first_row, c.row_count as u64, out, stream)
    }

    /// Decodes the whole entry into `out`.
    pub fn decode_all<O: DevicePtrMut<u8>>(
        &self,
        out: &mut O,
        stream: &Arc<CudaStream>,
    ) -> GpuResult<PendingDecode<'_>> {
        self.decode_range(0, self.layout.row_count, out, stream)
    }

    fn launch<O: DevicePtrMut<u8>>(
        &self,
        rows: Rows<'_>,
        count: u64,
        out: &mut O,
        stream: &Arc<CudaStream>,
    ) -> GpuResult<PendingDecode<'_>> {
        let need = count
            .checked_mul(self.layout.row_bytes)
            .ok_or_else(|| invalid("output size overflows"))?;
        if (out.len() as u64) < need {
            return Err(invalid(format!(
                "output buffer holds {} bytes, {count} rows of {} need {need}",
                out.len(),
                self.layout.row_bytes
            )));
        }
        // A cleared status block: one from the pool, else a new one (its upload enqueued on the stream).
        let pooled = lock(&self.status_pool).pop();
        let status = match pooled {
            Some(word) => word,
            None => StatusBlock::new(&self.device, stream)?,
        };
        let (rows_ptr, first_row) = match rows {
            Rows::List(list) => (list.device_ptr(stream).0, 0),
            Rows::Range(first) => (0, first),
        };
        let (out_ptr, _out_guard) = out.device_ptr_mut(stream);
        if out_ptr % 8 != 0 {
            return Err(invalid("the output buffer must be 8-byte aligned"));
        }
        let status_ptr = status.ptr;
        let (tables_ptr, table_offsets_ptr) = self.tables_ptrs;
        let tables_size = self.tables.as_ref().map_or(0, |(t, _)| t.len() as u32);
        let mut p = GatherParams {
            payload: self.payload_ptr,
            chunks: self.chunks_ptr,
            meta: self.meta_ptr,
            anchors: self.anchors_ptr,
            rows: rows_ptr,
            first_row,
            count,
            out: out_ptr,
            status: status_ptr,
            tables: tables_ptr,
            table_offsets: table_offsets_ptr,
            row_spans: if self.use_row_spans.load(std::sync::atomic::Ordering::Relaxed) {
                self.row_spans_ptr
            } else {
                0
            },
            ..layout_params(&self.layout, self.stage_bytes, tables_size)
        };
        let mut tiles = None;
        let kernel = match self.tile_kernel() {
            // (The vector-lanes kernel stores whole 16-byte vectors: into an output that is only
            // 8-byte aligned the long-rows kernel decodes the same rows.)
            TileKernel::Lean(crate::LeanShape::Vec) if out_ptr % 16 != 0 => TileKernel::Lean(crate::LeanShape::Long),
            kernel => kernel,
        };
        match (&rows, self.tilings[kernel.tile_class()]) {
            (Rows::Range(first), Some(tiling @ (_, tile_bytes, table_entries))) => {
                let (tile_rows, row_segments) = self.range_tiles(kernel, tiling, *first, count)?;
                p.row_segments = row_segments;
                let table = self.tile_starts(*first, count, tile_rows, stream)?;
                p.rows = 0;
                range_chunks(&mut p, table.first_chunk, table.chunks);
                let blocks = self.tile_blocks(kernel, table.tiles);
                launch::decode_tiles(
                    self.device.tile_function(kernel),
                    stream,
                    &p,
                    table.ptr,
                    tile_rows,
                    tile_bytes,
                    table_entries,
                    blocks,
                )
                .map_err(GpuError::driver("launching the tile kernel"))?;
                tiles = Some(table.starts);
            }
            // Gathers from a flat entry (every chunk raw, rows back to back): the uncompressed gather.
            (Rows::List(_), _) if self.layout.flat_rows() => {
                launch::gather_flat(&self.device.gather_flat_fn, stream, &p, self.device.blocks_for(count))
                    .map_err(GpuError::driver("launching ibp_gather_flat"))?
            }
            // Sparse rows are decoded by their exceptions, a warp each (bench/GPU_NOTES.md entry 88).
            _ if self.uses_sparse_rows() => {
                launch::gather(&self.device.gather_sparse_fn, stream, &p, self.device.blocks_for(count))
                    .map_err(GpuError::driver("launching ibp_gather_sparse"))?
            }
            _ => match gather_split_log2(count, self.coded_words, self.device.sm_count(), self.decode_bound) {
                0 => launch::gather(&self.device.gather_fn, stream, &p, self.device.blocks_for(count))
                    .map_err(GpuError::driver("launching ibp_gather"))?,
                split => launch::gather_split(
                    &self.device.gather_split_fn,
                    stream,
                    &p,
                    split,
                    split_words(),
                    split_blocks(count, split, self.device.sm_count()),
                )
                .map_err(GpuError::driver("launching ibp_gather_split"))?,
            },
        }
        Ok(PendingDecode {
            status: Some(status),
            pool: Some(&self.status_pool),
            stream: stream.clone(),
            rows: None,
            _tiles: tiles,
            first_row,
            done: false,
        })
    }

    /// The [`RangeTiles`](crate::tiling::RangeTiles) of rows `first .. first + count` in device memory: the cached table when
    /// the range is the last one decoded on this stream, else uploaded on `stream`.
    fn tile_starts(&self, first: u64, count: u64, tile_rows: u32, stream: &Arc<CudaStream>) -> GpuResult<TileTable> {
        let stream_id = stream.cu_stream() as usize;
        let key = (first, count, tile_rows, stream_id);
        if let Some((k, table)) = lock(&self.tile_cache).as_ref() {
            if *k == key {
                return Ok(table.clone());
            }
        }
        let t = tile_starts(&self.layout, first, count, tile_rows)?;
        let starts_d = stream
            .clone_htod(&t.starts)
            .map_err(GpuError::driver("uploading the tile table"))?;
        let ptr = starts_d.device_ptr(stream).0;
        let table = TileTable {
            ptr,
            starts: Arc::new(starts_d),
            tiles: t.tiles,
            first_chunk: t.first_chunk,
            chunks: t.starts.len() - 1,
        };
        *lock(&self.tile_cache) = Some((key, table.clone()));
        Ok(table)
    }
}

/// The kernel parameters that follow from `layout` alone (sizes, counts, `chunk_rows`), with the
/// entry's `stage_bytes` and `tables_size`; every buffer address null and no request (`count` 0):
/// the caller sets the addresses of its own buffers and the request.
pub(crate) fn layout_params(layout: &EntryLayout, stage_bytes: u32, tables_size: u32) -> GatherParams {
    GatherParams {
        payload_size: layout.payload_buffer_len,
        meta_size: layout.meta.len() as u64,
        anchor_count: layout.anchors.len() as u64,
        entry_rows: layout.row_count,
        chunk_count: layout.chunks.len() as u32,
        row_bytes: layout.row_bytes as u32,
        stage_bytes,
        tables_size,
        chunk_rows: layout.uniform_chunk_rows(),
        ..Default::default()
    }
}

impl Drop for GpuEntry {
    fn drop(&mut self) {
        // Buffers are freed on the context's default stream; make sure no other stream still reads them.
        let _ = self.device.context().synchronize();
        let _ = (&self.chunks, &self.meta, &self.anchors, &self.payload, &self.tables);
    }
}
