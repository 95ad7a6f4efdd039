//! Entries loaded for GPU use, and the decode operations on them: gathers of arbitrary rows,
//! ranges, whole chunks and whole entries, enqueued on a caller's stream into a caller's buffer.
#![forbid(unsafe_code)]

use crate::chunk_form::{form_chunks, ChunkForm, FormedChunks};
use crate::device::GpuDevice;
use crate::error::{GpuError, GpuResult};
use crate::launch::{self, GatherParams};
use crate::layout::EntryLayout;
use crate::pinned::PinnedBuffer;
use crate::status::{KernelFailure, IBP_STATUS_CLEAR};
use cudarc::driver::{sys, CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use ibp_format::{ChunkMeta, ErrorCode, FormatError};
use std::sync::{Arc, Mutex, MutexGuard};

/// A kernel status block (`kernels/ibp_status.h`: the status word, then the device address of
/// `flag`) and its device address, taken once when it is allocated: later launches pass the address
/// as it is, without cudarc's per-use stream events (two driver calls per buffer and launch). That
/// is sound because a block is used by one launch at a time: it leaves the pool for one launch and
/// comes back only after `wait` has synchronised that launch's stream.
///
/// `flag` is a page-locked `u32` the kernels set on any failure: `wait` reads it in host memory and
/// copies the word from the device only when it is set, so a decode that succeeded costs its stream
/// no copy after the kernel (a copy there delayed the stream's next launch by 1-2 us: GPU_NOTES
/// entry 47).
struct StatusBlock {
    block: CudaSlice<u64>,
    ptr: sys::CUdeviceptr,
    flag: PinnedBuffer,
}

impl StatusBlock {
    /// A cleared block on `stream` (its word 0, its flag address set).
    fn new(device: &GpuDevice, stream: &Arc<CudaStream>) -> GpuResult<StatusBlock> {
        let flag = PinnedBuffer::new(device.context(), 4).map_err(GpuError::driver("allocating the status flag"))?;
        let flag_ptr = flag
            .device_ptr(device.context())
            .map_err(GpuError::driver("mapping the status flag"))?;
        let block = stream
            .clone_htod(&[IBP_STATUS_CLEAR, flag_ptr])
            .map_err(GpuError::driver("allocating the status word"))?;
        let ptr = block.device_ptr(stream).0;
        Ok(StatusBlock { block, ptr, flag })
    }

    /// Whether a kernel reported a failure (read once its stream is synchronised).
    fn failed(&self) -> bool {
        self.flag.as_slice()[..4] != [0; 4]
    }

    /// The status word from the device, then the block cleared for reuse (its word zeroed on the
    /// stream, its flag in host memory), with whether the clearing succeeded.
    fn take_word(&mut self, stream: &Arc<CudaStream>) -> GpuResult<(u64, bool)> {
        let word = stream
            .clone_dtoh(&self.block.slice(0..1))
            .map_err(GpuError::driver("reading the status word"))?[0];
        let cleared = stream.memset_zeros(&mut self.block.slice_mut(0..1)).is_ok() && stream.synchronize().is_ok();
        self.flag.as_mut_slice().fill(0);
        Ok((word, cleared))
    }
}

/// Cleared status blocks kept for reuse, so that a launch enqueues no allocation or memset.
type StatusPool = Mutex<Vec<StatusBlock>>;
/// Status blocks kept per entry (more than this many decodes in flight allocate new ones).
const STATUS_POOL_MAX: usize = 64;

/// Locks a mutex whose data stays valid even if a holder panicked (a pool or a cache).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Where a [`GpuEntry`] keeps its compressed payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayloadHome {
    /// Device memory: a compressed GPU cache.
    Device,
    /// Page-locked host memory mapped for the device: kernels read it over the bus (zero-copy).
    HostMapped,
}

fn invalid(detail: impl Into<String>) -> GpuError {
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
    /// Every chunk is kept as stored ([`ChunkForm::AsStored`]).
    pub fn new(
        device: &GpuDevice,
        row_bytes: u64,
        metas: &[ChunkMeta],
        payloads: &[&[u8]],
    ) -> GpuResult<Arc<HostEntry>> {
        HostEntry::with_form(device, row_bytes, metas, payloads, ChunkForm::AsStored)
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
    /// by the reader) into pinned memory allocated through `device`.
    pub fn from_reader<R: std::io::Read + std::io::Seek>(
        device: &GpuDevice,
        reader: &mut ibp_codec::ContainerReader<R>,
        entry: usize,
    ) -> GpuResult<Arc<HostEntry>> {
        HostEntry::from_reader_with_form(device, reader, entry, ChunkForm::AsStored)
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
    /// [`tiling`] of the entry for the general (`[0]`), the lean (`[1]`) and the short-rows (`[2]`)
    /// tile kernels ([`TileKernel::tile_class`]), computed
    /// once: each pass over the descriptors costs microseconds per launch on entries of thousands of
    /// chunks.
    tilings: [Option<(u32, u32, u32)>; 3],
    /// The tile kernel range decodes use, as [`TileKernel::code`] (comparisons and tests).
    tile_kernel: std::sync::atomic::AtomicI8,
}

/// A range's tile table ([`RangeTiles`]) in device memory.
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
    /// device memory (`PayloadHome::Device`) or to new pinned host memory (`HostMapped`).
    /// Every chunk is kept as stored ([`ChunkForm::AsStored`]).
    pub fn load(
        device: &Arc<GpuDevice>,
        row_bytes: u64,
        metas: &[ChunkMeta],
        payloads: &[&[u8]],
        home: PayloadHome,
    ) -> GpuResult<GpuEntry> {
        GpuEntry::load_with_form(device, row_bytes, metas, payloads, home, ChunkForm::AsStored)
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

    /// Loads entry `entry` of a container (payload CRCs checked) onto `device`, every chunk as
    /// stored.
    pub fn from_reader<R: std::io::Read + std::io::Seek>(
        device: &Arc<GpuDevice>,
        reader: &mut ibp_codec::ContainerReader<R>,
        entry: usize,
        home: PayloadHome,
    ) -> GpuResult<GpuEntry> {
        GpuEntry::from_reader_with_form(device, reader, entry, home, ChunkForm::AsStored)
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
    /// device memory (`Device`).
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
        let tables = build_tables(device, &stream, &layout, chunks_ptr, meta_ptr)?;
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
        let tilings = [0, 1, 2].map(|class| tiling(&layout, class));
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
            relaid_chunks,
            status_pool: Mutex::new(Vec::new()),
            tile_cache: Mutex::new(None),
            auto_kernel,
            tilings,
            tile_kernel: std::sync::atomic::AtomicI8::new(TileKernel::Auto.code()),
        })
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
        if count == 0 {
            return Ok(PendingDecode::empty(stream));
        }
        self.launch(Rows::Range(first), count, out, stream)
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
        let kernel = self.tile_kernel();
        match (&rows, self.tilings[kernel.tile_class()]) {
            (Rows::Range(first), Some((tile_rows, tile_bytes, table_entries))) => {
                let table = self.tile_starts(*first, count, tile_rows, stream)?;
                p.rows = 0;
                range_chunks(&mut p, table.first_chunk, table.chunks);
                let most = crate::device::tile_blocks_cap().unwrap_or(self.device.sm_count() * 8);
                let blocks = table.tiles.clamp(1, most.max(1) as u64) as u32;
                let func = match kernel {
                    TileKernel::Lean(shape) => &self.device.tiles_lean_fns[shape as usize],
                    TileKernel::GeneralPairs => &self.device.tiles_pairs_fn,
                    _ => &self.device.tiles_fn,
                };
                launch::decode_tiles(
                    func,
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

    /// The [`RangeTiles`] of rows `first .. first + count` in device memory: the cached table when
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

/// Warps per SM that `ibp_gather_split` has resident at once (8 blocks of 4 warps: 64 registers
/// per thread).
const SPLIT_RESIDENT_WARPS_PER_SM: u64 = 32;

/// The most words per row among `layout`'s coded chunks (0 when every chunk is raw).
pub(crate) fn coded_words(layout: &EntryLayout) -> u32 {
    layout
        .chunks
        .iter()
        .filter(|c| c.group_count > 0)
        .map(|c| c.words_per_row)
        .max()
        .unwrap_or(0)
}

/// Fewest words of a row each warp of `ibp_gather_split` decodes (a multiple of 32; a warp's
/// segment is a multiple of it): 64, or the environment variable `IBP_SPLIT_WORDS` for A/B runs
/// (read once per process).
pub(crate) fn split_words() -> u32 {
    static WORDS: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *WORDS.get_or_init(|| crate::device::env_u32("IBP_SPLIT_WORDS").map_or(64, |w| w.clamp(32, 1 << 16) & !31))
}

/// log2 of the warps `ibp_gather_split` gives each request of a gather of `count` rows whose
/// longest coded rows have `words` words, on a GPU of `sm_count` multiprocessors; 0: `ibp_gather`
/// (one warp per request). A batch too small to fill the GPU ends with the decode of its last
/// records, a warp each; the most warps per request (up to the block's) that keep every request's
/// warps resident at once and leave each at least [`split_words`] words shorten that tail
/// (bench/GPU_NOTES.md entry 42). Entries whose gathers the decode bounds (`decode_bound`:
/// [`decode_bound`]) also take 2 warps per request for batches of up to two waves of them, where
/// one warp per request needs two waves of `ibp_gather` (entry 44). The environment variable
/// `IBP_GATHER_SPLIT` overrides this for A/B runs: `0` never splits, `1`/`2` always take that value
/// (read once per process).
pub(crate) fn gather_split_log2(count: u64, words: u32, sm_count: u32, decode_bound: bool) -> u32 {
    static FORCED: std::sync::OnceLock<Option<u32>> = std::sync::OnceLock::new();
    let forced = *FORCED.get_or_init(|| {
        crate::device::env_u32("IBP_GATHER_SPLIT").map(|v| v.min(launch::WARPS_PER_BLOCK.trailing_zeros()))
    });
    forced.unwrap_or_else(|| auto_split_log2(count, words, sm_count, split_words(), decode_bound))
}

/// [`gather_split_log2`] without the override, for warps of at least `per_warp` words.
pub(crate) fn auto_split_log2(count: u64, words: u32, sm_count: u32, per_warp: u32, decode_bound: bool) -> u32 {
    let resident = sm_count as u64 * SPLIT_RESIDENT_WARPS_PER_SM;
    let fits = |log2: u32, waves: u64| {
        count.saturating_mul(1 << log2) <= waves * resident && words as u64 >= (per_warp as u64) << log2
    };
    match (1..=launch::WARPS_PER_BLOCK.trailing_zeros())
        .filter(|&log2| fits(log2, 1))
        .max()
    {
        Some(log2) => log2,
        None if decode_bound && fits(1, 2) => 1,
        None => 0,
    }
}

/// Whether gathers of `layout`'s rows are bound by their decode rather than by the bus: its
/// records take at most half the bytes of its rows (Cora, sparse rows). Those gain from more warps
/// per request at batches of a few thousand rows; rows that save less are bound by the link there
/// and do not (bench/GPU_NOTES.md entry 44).
pub(crate) fn decode_bound(layout: &EntryLayout) -> bool {
    let records: u64 = layout.chunks.iter().map(|c| c.payload_len).sum();
    records.saturating_mul(2) <= layout.row_count.saturating_mul(layout.row_bytes)
}

/// Blocks of an `ibp_gather_split` launch: one step of every group covers the requests, up to 32
/// blocks per SM (the kernel loops over the rest).
pub(crate) fn split_blocks(count: u64, split_log2: u32, sm_count: u32) -> u32 {
    let groups = (launch::WARPS_PER_BLOCK >> split_log2).max(1) as u64;
    count.div_ceil(groups).clamp(1, sm_count.max(1) as u64 * 32) as u32
}

/// One staging buffer per warp of `ibp_gather`: the 16-byte vectors covering the largest record (up
/// to 30 bytes more than it) plus a 16-byte tail, within the block's shared-memory budget
/// `smem_limit`; longer records are decoded straight from memory.
pub(crate) fn stage_bytes(layout: &EntryLayout, smem_limit: u32) -> u32 {
    let max_raw = layout.chunks.iter().map(|c| c.raw_padded as u64).max().unwrap_or(16);
    let budget = (smem_limit / launch::WARPS_PER_BLOCK) as u64 & !15;
    ((max_raw + 15) & !15).saturating_add(48).min(budget) as u32
}

/// Tiling of a range decode by a tile kernel of `class` ([`TileKernel::tile_class`]: general, lean
/// or short-rows): `(tile_rows, tile_bytes, table_entries)` (table entries: the largest
/// `G * n` of a coded chunk within `TABLE_MAX_ENTRIES`; chunks above it decode without a table), or
/// `None` when a record can be too long for a tile (ranges then go through `ibp_gather`).
pub(crate) fn tiling(layout: &EntryLayout, class: usize) -> Option<(u32, u32, u32)> {
    let max_raw = layout.chunks.iter().map(|c| c.raw_padded).max()?;
    let table = layout
        .chunks
        .iter()
        .map(|c| c.group_count as u64 * c.words_per_row as u64)
        .filter(|&e| e <= crate::device::TABLE_MAX_ENTRIES as u64)
        .max()
        .unwrap_or(0) as u32;
    let budget = crate::device::tile_bytes(class, launch::TABLE_ENTRY_BYTES * table);
    if max_raw > budget / 2 {
        return None;
    }
    let mut rows = (budget / max_raw).clamp(1, 1024);
    if class == 0 && crate::device::balanced_tiles() {
        rows = balanced_tile_rows(rows, max_raw, table);
    }
    let bytes = (rows * max_raw + 48 + 15) & !15;
    Some((rows, bytes, table))
}

/// Rows per tile of `ibp_decode_tiles` made a multiple of its warps: the warps decode a tile's rows
/// round-robin and the block waits at a barrier for the warp with the most, so 21 rows (MiniLM's
/// 1536 B rows in 32 KiB) cost as much as 24. Rounded up where the larger tile still keeps 4 blocks
/// on an SM (`TILE_BLOCK_SMEM` with the table), else down (never below one row per warp; fewer rows
/// than warps are only rounded up).
pub(crate) fn balanced_tile_rows(rows: u32, max_raw: u32, table_entries: u32) -> u32 {
    let warps = launch::TILE_WARPS;
    if rows.is_multiple_of(warps) {
        return rows;
    }
    let up = rows.next_multiple_of(warps);
    let up_bytes = (up as u64 * max_raw as u64 + 48 + 15) & !15;
    let fits = up_bytes <= u32::MAX as u64
        && launch::tiles_smem(up, up_bytes as u32, table_entries) <= crate::device::TILE_BLOCK_SMEM;
    if fits {
        up
    } else if rows > warps {
        rows / warps * warps
    } else {
        rows
    }
}

/// The tiles of a range decode (tiles of at most `tile_rows` rows within one chunk), over the
/// chunks the range overlaps only: `first_chunk` and the following `starts.len() - 1` chunks, so a
/// decode of a few chunks of an entry of thousands costs no pass over all of them.
pub(crate) struct RangeTiles {
    /// The range's first chunk.
    pub first_chunk: usize,
    /// Entry `i`: index of chunk `first_chunk + i`'s first tile; the last entry: the tile count.
    pub starts: Vec<u32>,
    /// Tiles in all.
    pub tiles: u64,
}

/// [`RangeTiles`] of rows `first .. first + count` (`count >= 1`, inside the entry).
pub(crate) fn tile_starts(layout: &EntryLayout, first: u64, count: u64, tile_rows: u32) -> GpuResult<RangeTiles> {
    let end = first + count;
    let (first_chunk, _) = layout.locate(first)?;
    let (last_chunk, _) = layout.locate(end - 1)?;
    let chunks = &layout.chunks[first_chunk..=last_chunk];
    let mut starts = Vec::with_capacity(chunks.len() + 1);
    let mut acc = 0u64;
    for c in chunks {
        starts.push(acc as u32);
        let c_end = c.first_row + c.row_count as u64;
        let (a, b) = (first.max(c.first_row), end.min(c_end));
        if a < b {
            acc += (b - a).div_ceil(tile_rows as u64);
        }
    }
    starts.push(acc as u32);
    if acc > u32::MAX as u64 {
        return Err(invalid("range needs more than 2^32 tiles"));
    }
    Ok(RangeTiles {
        first_chunk,
        starts,
        tiles: acc,
    })
}

/// Rows of at least this many bytes get a flat row index at load ([`EntryLayout::row_spans`]): its 8
/// bytes per row are then at most 1/16 of the decoded size. Shorter rows get one on request
/// ([`GpuEntry::add_row_spans`]).
pub const ROW_SPANS_MIN_ROW_BYTES: u64 = 128;
/// Largest flat row index uploaded at load (64 Mi rows).
pub const ROW_SPANS_MAX_BYTES: u64 = 512 << 20;

/// Whether a load uploads the flat row index of `layout`: for rows of at least
/// [`ROW_SPANS_MIN_ROW_BYTES`] up to [`ROW_SPANS_MAX_BYTES`]; `IBP_GATHER_SPANS=0` / `=1` in the
/// environment: never / wherever the layout allows one (A/Bs).
fn row_spans_wanted(layout: &EntryLayout) -> bool {
    static FORCED: std::sync::OnceLock<Option<bool>> = std::sync::OnceLock::new();
    let forced = *FORCED.get_or_init(|| match std::env::var("IBP_GATHER_SPANS").as_deref().map(str::trim) {
        Ok("0") => Some(false),
        Ok("1") => Some(true),
        _ => None,
    });
    forced.unwrap_or_else(|| {
        layout.row_bytes >= ROW_SPANS_MIN_ROW_BYTES && layout.row_count.saturating_mul(8) <= ROW_SPANS_MAX_BYTES
    })
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

/// Narrows a tile launch's parameters to `chunks` descriptors from `first_chunk` on (the tile kernels
/// index chunks only through `tile_starts`; descriptors hold absolute offsets into the metadata,
/// anchors and payload): the descriptor and table-offset arrays start there, and `chunk_rows` no
/// longer describes chunk indices, so it is cleared.
pub(crate) fn range_chunks(p: &mut GatherParams, first_chunk: usize, chunks: usize) {
    p.chunks += (first_chunk * crate::layout::ChunkDesc::SIZE) as u64;
    if p.table_offsets != 0 {
        p.table_offsets += (first_chunk * std::mem::size_of::<u64>()) as u64;
    }
    p.chunk_count = chunks as u32;
    p.chunk_rows = 0;
    p.row_spans = 0;
}

/// Whether at least half of a chunk's positions have free bits (`~Mask` within the word) that form
/// more than one run in a 32-bit half: there the table saves `ibp_gather` a deposit loop per word
/// (float data: sign bit and mantissa). Where free bits form single runs (sparse data, one-hot
/// features) the per-lane Mask/Bitval path is cheaper than 32 bytes of table per word (measured on
/// the H200: bench/GPU_NOTES.md, entry 14).
fn deposit_heavy(c: &crate::layout::ChunkDesc, meta: &[u8]) -> bool {
    let wb = c.word_bytes as usize;
    let entries = c.group_count as usize * c.words_per_row as usize;
    let start = c.masks_offset as usize;
    let Some(masks) = meta.get(start..start + entries * wb) else {
        return false;
    };
    let word_mask = if wb >= 8 { u64::MAX } else { (1u64 << (8 * wb)) - 1 };
    let several_runs = |half: u32| {
        let t = half >> half.trailing_zeros().min(31);
        half != 0 && (t & t.wrapping_add(1)) != 0
    };
    let multi = masks
        .chunks_exact(wb)
        .filter(|m| {
            let mut bytes = [0u8; 8];
            bytes[..wb].copy_from_slice(m);
            let free = !u64::from_le_bytes(bytes) & word_mask;
            several_runs(free as u32) || several_runs((free >> 32) as u32)
        })
        .count();
    2 * multi >= entries
}

/// The lean kernel that decodes ranges of `layout`, if any. A lean kernel may where the entry has
/// a coded chunk, and every coded chunk has `1 <= G * n <= TABLE_MAX_ENTRIES` (its positions' table fits the kernel's shared
/// memory) and rows of at most 64 whole words (`row_bytes == n * W/8`, `n <= 64`). The kernel checks
/// the same per tile and reports `E_LAYOUT` for a tile that breaks it, so a wrong answer here fails
/// loudly, never silently. Longer rows give a warp too few rows per tile for its one-thread-per-row
/// checks, each walking more words (on the H200, 1 KiB rows gained 0.03 of the D2D copy and rows
/// from 1.5 KiB on lost 0.05-0.10: bench/GPU_NOTES.md entry 19c), and entries of raw chunks only
/// copy at the same speed through either kernel. Of the lean kernels, the mid one is taken when
/// every coded chunk has rows of 33 to 64 words, the short one when every chunk is coded with rows
/// it takes ([`LeanShape::decodes_all`], unless `IBP_LEAN_SHORT=0`), else the one for any shape.
pub(crate) fn lean_shape(layout: &EntryLayout) -> Option<LeanShape> {
    let coded: Vec<_> = layout.chunks.iter().filter(|c| c.group_count > 0).collect();
    let allowed = !coded.is_empty()
        && coded.iter().all(|c| {
            let entries = c.group_count as u64 * c.words_per_row as u64;
            matches!(c.word_bytes, 1 | 2 | 4 | 8)
                && c.words_per_row <= 64
                && c.words_per_row as u64 * c.word_bytes as u64 == layout.row_bytes
                && entries <= crate::device::TABLE_MAX_ENTRIES as u64
        });
    allowed.then_some(if LeanShape::Mid.decodes_all(layout) {
        LeanShape::Mid
    } else if crate::device::short_rows_kernel() && LeanShape::Short.decodes_all(layout) {
        LeanShape::Short
    } else {
        LeanShape::Any
    })
}

/// Which of the lean tile kernels decodes ranges of an entry. All are the same decoder; the one
/// for rows of 33 to 64 words is built for them alone, so that its row loop gets its own register
/// allocation and code layout (on the H200, 256 B rows of 32-bit words decode 20-25 % faster
/// through it: bench/GPU_NOTES.md entry 35), and the one for short rows (one thread per row, as
/// the bf16 KV rows: at most 16 words, or at most 32 words of at most 64 bytes) holds nothing but
/// that path, built for 3 blocks per SM and launched with 64 KiB tiles (GPU_NOTES entries 52 and
/// 55). The any and mid kernels decode raw chunks; the mid kernel reports `E_LAYOUT` for a tile of
/// coded rows of another shape, the short one for any tile that is not all raw records
/// ([`TileKernel::decodes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeanShape {
    /// `ibp_decode_tiles_lean`: coded rows of 1 to 64 words.
    Any = 0,
    /// `ibp_decode_tiles_lean_mid`: coded rows of 33 to 64 words.
    Mid = 1,
    /// `ibp_decode_tiles_lean_short`: every chunk coded, with rows of at most 16 words, or of at
    /// most 32 words and 64 bytes (taken where the environment variable `IBP_LEAN_SHORT` is not `0`).
    Short = 2,
}

impl LeanShape {
    /// Every shape, in the order of their kernels in [`LeanShape::KERNELS`].
    pub const ALL: [LeanShape; 3] = [LeanShape::Any, LeanShape::Mid, LeanShape::Short];
    /// The kernel of each shape (indexed by `shape as usize`).
    pub const KERNELS: [&'static str; 3] = [
        "ibp_decode_tiles_lean",
        "ibp_decode_tiles_lean_mid",
        "ibp_decode_tiles_lean_short",
    ];

    /// Whether this shape's kernel decodes coded rows of `words` words and `row_bytes` bytes (the
    /// short shape: the kernels' `IBP_LEAN_THREAD_ROWS` 16 and `IBP_LEAN_THREAD_BYTES` 64).
    pub fn takes(self, words: u32, row_bytes: u64) -> bool {
        match self {
            LeanShape::Any => (1..=64).contains(&words),
            LeanShape::Mid => (33..=64).contains(&words),
            LeanShape::Short => (1..=16).contains(&words) || ((1..=32).contains(&words) && row_bytes <= 64),
        }
    }

    /// Whether this shape's kernel decodes every coded chunk of `layout` ([`LeanShape::takes`]) and,
    /// for the short shape, which takes no raw chunk, whether every chunk is coded.
    pub fn decodes_all(self, layout: &EntryLayout) -> bool {
        layout.chunks.iter().all(|c| {
            if c.group_count > 0 {
                self.takes(c.words_per_row, layout.row_bytes)
            } else {
                self != LeanShape::Short
            }
        })
    }
}

/// Which tile kernel a range decode uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TileKernel {
    /// The one the entry's chunks call for: a lean kernel where they allow
    /// it (see [`LeanShape`]), else `ibp_decode_tiles_pairs` where every coded chunk has a pair
    /// table, else `ibp_decode_tiles`.
    Auto,
    /// `ibp_decode_tiles`: the general kernel, for rows of any shape.
    General,
    /// `ibp_decode_tiles_pairs`: the general kernel built for chunks of 32-bit or 16-bit words
    /// decoded in pairs alone (17 or more whole words per row, `G * n` within the tile table): on the H200
    /// MiniLM and floret rows of 32-bit words decode 10-14 % faster through it than through
    /// `ibp_decode_tiles` (bench/GPU_NOTES.md entry 35).
    GeneralPairs,
    /// The lean kernel of this shape, whatever the rows of the entry's coded chunks (for tests of
    /// the kernels' shape checks, and comparisons).
    Lean(LeanShape),
}

impl TileKernel {
    /// A small integer for this choice (stored atomically; the CPU-run launcher's kernel argument
    /// takes the same values: -1 general, 0-2 the lean shapes, 3 the pairs kernel).
    pub(crate) const fn code(self) -> i8 {
        match self {
            TileKernel::Auto => -2,
            TileKernel::General => -1,
            TileKernel::Lean(shape) => shape as i8,
            TileKernel::GeneralPairs => 3,
        }
    }

    fn from_code(code: i8) -> TileKernel {
        match code {
            -1 => TileKernel::General,
            0..=2 => TileKernel::Lean(LeanShape::ALL[code as usize]),
            3 => TileKernel::GeneralPairs,
            _ => TileKernel::Auto,
        }
    }

    /// Which tile size (`tiling`) this resolved choice launches with: 0 the general kernels', 1 the
    /// lean kernels', 2 the short-rows kernel's (3 blocks per SM: larger tiles).
    pub(crate) const fn tile_class(self) -> usize {
        match self {
            TileKernel::Lean(LeanShape::Short) => 2,
            TileKernel::Lean(_) => 1,
            _ => 0,
        }
    }

    /// The kernel this choice launches for an entry whose own choice is `auto` (a lean kernel only
    /// where the entry allows one, else the general kernel).
    pub(crate) fn resolve(self, auto: TileKernel) -> TileKernel {
        match self {
            TileKernel::Auto => auto,
            TileKernel::Lean(_) if !matches!(auto, TileKernel::Lean(_)) => TileKernel::General,
            other => other,
        }
    }

    /// Whether this kernel, chosen for ranges of `layout`, decodes every coded chunk of it rather
    /// than report `E_LAYOUT` for their tiles (tiles whose records are all raw with no padding are
    /// copied by every tile kernel).
    pub fn decodes(self, layout: &EntryLayout) -> bool {
        match self.resolve(auto_tile_kernel(layout)) {
            TileKernel::Lean(shape) => shape.decodes_all(layout),
            TileKernel::GeneralPairs => layout
                .chunks
                .iter()
                .filter(|c| c.group_count > 0)
                .all(|c| pair_table_chunk(c, layout.row_bytes)),
            _ => true,
        }
    }
}

/// Whether `ibp_decode_tiles_pairs` takes chunk `c` (of rows of `row_bytes`): 32-bit or 16-bit
/// words, more than 16 per row (fewer go to the several-rows-per-warp path), whole words, and a
/// table of `1 <= G * n <= TABLE_MAX_ENTRIES` entries (as the kernel's checks).
pub(crate) fn pair_table_chunk(c: &crate::layout::ChunkDesc, row_bytes: u64) -> bool {
    let entries = c.group_count as u64 * c.words_per_row as u64;
    matches!(c.word_bytes, 2 | 4)
        && c.words_per_row > 16
        && c.words_per_row as u64 * c.word_bytes as u64 == row_bytes
        && (1..=crate::device::TABLE_MAX_ENTRIES as u64).contains(&entries)
}

/// The tile kernel for ranges of `layout`: a lean one where [`lean_shape`] allows it, else the
/// pairs kernel where every coded chunk (at least one) has a pair table ([`pair_table_chunk`]),
/// else the general kernel.
pub(crate) fn auto_tile_kernel(layout: &EntryLayout) -> TileKernel {
    if let Some(shape) = lean_shape(layout) {
        return TileKernel::Lean(shape);
    }
    let mut coded = layout.chunks.iter().filter(|c| c.group_count > 0).peekable();
    if coded.peek().is_some() && coded.all(|c| pair_table_chunk(c, layout.row_bytes)) {
        TileKernel::GeneralPairs
    } else {
        TileKernel::General
    }
}

/// Byte offset of each chunk's decode table (`u64::MAX`: none) and the tables' total size: chunks
/// with `1 <= G * n <= GATHER_TABLE_MAX_ENTRIES` whose positions are mostly deposit-heavy (see
/// [`deposit_heavy`]), while the total stays within `GATHER_TABLE_MAX_BYTES`.
pub(crate) fn table_offsets(layout: &EntryLayout) -> (Vec<u64>, u64) {
    table_offsets_within(
        layout,
        crate::device::GATHER_TABLE_MAX_ENTRIES,
        crate::device::GATHER_TABLE_MAX_BYTES,
    )
}

/// [`table_offsets`] with the per-chunk entry limit and the total byte limit as parameters.
fn table_offsets_within(layout: &EntryLayout, max_entries: u64, max_bytes: u64) -> (Vec<u64>, u64) {
    let mut total = 0u64;
    let offsets = layout
        .chunks
        .iter()
        .map(|c| {
            let entries = c.group_count as u64 * c.words_per_row as u64;
            let bytes = entries * launch::TABLE_ENTRY_BYTES as u64;
            if (1..=max_entries).contains(&entries) && total + bytes <= max_bytes && deposit_heavy(c, &layout.meta) {
                total += bytes;
                total - bytes
            } else {
                u64::MAX
            }
        })
        .collect();
    (offsets, total)
}

/// Builds the per-position decode tables of `layout`'s chunks on the device (`ibp_build_tables`),
/// enqueued on `stream`; `None` when no chunk gets one.
fn build_tables(
    device: &GpuDevice,
    stream: &Arc<CudaStream>,
    layout: &EntryLayout,
    chunks_ptr: sys::CUdeviceptr,
    meta_ptr: sys::CUdeviceptr,
) -> GpuResult<Option<(CudaSlice<u8>, CudaSlice<u64>)>> {
    let (offsets, total) = table_offsets(layout);
    if total == 0 {
        return Ok(None);
    }
    let tables = stream
        .alloc_zeros::<u8>(total as usize)
        .map_err(GpuError::driver("allocating the decode tables"))?;
    let offsets_d = stream
        .clone_htod(&offsets)
        .map_err(GpuError::driver("uploading the decode table offsets"))?;
    let p = GatherParams {
        chunks: chunks_ptr,
        meta: meta_ptr,
        tables: tables.device_ptr(stream).0,
        table_offsets: offsets_d.device_ptr(stream).0,
        ..layout_params(layout, 0, 0)
    };
    launch::build_tables(&device.build_tables_fn, stream, &p, total)
        .map_err(GpuError::driver("launching ibp_build_tables"))?;
    Ok(Some((tables, offsets_d)))
}

impl Drop for GpuEntry {
    fn drop(&mut self) {
        // Buffers are freed on the context's default stream; make sure no other stream still reads them.
        let _ = self.device.context().synchronize();
        let _ = (&self.chunks, &self.meta, &self.anchors, &self.payload, &self.tables);
    }
}

/// A decode enqueued on a stream. [`wait`](PendingDecode::wait) synchronises the stream and turns
/// the kernel's status word into a typed error. Dropping it without waiting synchronises too.
#[must_use = "a decode's errors are only reported by wait()"]
pub struct PendingDecode<'a> {
    status: Option<StatusBlock>,
    /// The entry's pool, where `wait` returns the status word (zeroed).
    pool: Option<&'a StatusPool>,
    stream: Arc<CudaStream>,
    rows: Option<CudaSlice<u64>>,
    /// Kept alive until the decode completes.
    _tiles: Option<Arc<CudaSlice<u32>>>,
    first_row: u64,
    done: bool,
}

impl PendingDecode<'_> {
    fn empty(stream: &Arc<CudaStream>) -> Self {
        PendingDecode {
            status: None,
            pool: None,
            stream: stream.clone(),
            rows: None,
            _tiles: None,
            first_row: 0,
            done: false,
        }
    }

    /// Waits for the decode and reports the first failing request (lowest index) as a typed error.
    pub fn wait(mut self) -> GpuResult<()> {
        self.done = true;
        self.stream
            .synchronize()
            .map_err(GpuError::driver("waiting for the decode"))?;
        let Some(mut status) = self.status.take() else {
            return Ok(());
        };
        // Success leaves the flag clear: nothing to read from the device, the block goes back as it is.
        let (word, cleared) = if status.failed() {
            status.take_word(&self.stream)?
        } else {
            (IBP_STATUS_CLEAR, true)
        };
        if let Some(pool) = self.pool {
            let mut pool = lock(pool);
            if cleared && pool.len() < STATUS_POOL_MAX {
                pool.push(status);
            }
        }
        let Some(failure) = KernelFailure::from_word(word) else {
            return Ok(());
        };
        let k = failure.request;
        let row = match &self.rows {
            Some(list) if k < list.len() as u64 => self
                .stream
                .clone_dtoh(&list.slice(k as usize..k as usize + 1))
                .map(|v| v[0].to_string())
                .unwrap_or_else(|_| "?".into()),
            Some(_) => "?".into(),
            None => (self.first_row + k).to_string(),
        };
        Err(failure_error(&failure, &row))
    }
}

/// The typed error of a kernel's reported failure; `row` names the failing request's row.
pub(crate) fn failure_error(failure: &KernelFailure, row: &str) -> GpuError {
    let what = match failure.error_code() {
        ErrorCode::RowIndex => "row index out of range",
        ErrorCode::RowLength => "record length differs from the length its contents require",
        ErrorCode::Padding => "non-zero padding in the record",
        ErrorCode::GroupId => "group id not below the group count",
        _ => "record outside its chunk's payload",
    };
    GpuError::Format(FormatError::new(
        failure.error_code(),
        format!("row {row} (request {}): {what}", failure.request),
    ))
}

impl Drop for PendingDecode<'_> {
    fn drop(&mut self) {
        if !self.done {
            let _ = self.stream.synchronize();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{encode_rows, float_rows, sparse_rows, Rng};
    use ibp_codec::EncodeOptions;

    #[test]
    fn loads_give_rows_of_128_bytes_and_more_a_flat_row_index() {
        if std::env::var_os("IBP_GATHER_SPANS").is_some() {
            println!("IBP_GATHER_SPANS is set: the default policy is not in force, not checked");
            return;
        }
        let mut rng = Rng::new(5);
        for (row_bytes, want) in [(64usize, false), (120, false), (128, true), (1024, true)] {
            let data = float_rows(&mut rng, 300, row_bytes, 0.02, 0);
            let (metas, payloads) = encode_rows(&data, row_bytes, &EncodeOptions::default(), 100);
            let refs: Vec<&[u8]> = payloads.iter().map(|p| p.as_slice()).collect();
            let layout = build_layout(row_bytes as u64, &metas, &refs).unwrap();
            assert!(layout.row_spans().is_some());
            assert_eq!(row_spans_wanted(&layout), want, "{row_bytes} B rows");
        }
    }

    #[test]
    fn entries_saving_half_their_bytes_are_decode_bound() {
        use crate::testdata::{encode_rows, float_rows, sparse_rows, Rng};
        let mut rng = Rng::new(3);
        let sparse = sparse_rows(&mut rng, 512, 1024, 0.05);
        let dense = float_rows(&mut rng, 512, 1024, 0.02, 0);
        for (data, want) in [(sparse, true), (dense, false)] {
            let (metas, payloads) = encode_rows(&data, 1024, &ibp_codec::EncodeOptions::default(), 128);
            let refs: Vec<&[u8]> = payloads.iter().map(|p| p.as_slice()).collect();
            let layout = build_layout(1024, &metas, &refs).unwrap();
            assert_eq!(decode_bound(&layout), want);
        }
    }

    #[test]
    fn small_gathers_of_long_rows_take_several_warps_per_row() {
        // (count, words, SMs, words per warp, decode-bound) -> log2 of warps per row; 132 SMs hold
        // 4224 warps.
        for (count, words, sms, per_warp, decode_bound, log2, why) in [
            (1024, 384, 132, 64, false, 2, "1K rows of 384 words: 4 warps each"),
            (2048, 384, 132, 64, false, 1, "2K rows: 2 warps each"),
            (
                2048,
                384,
                132,
                64,
                true,
                1,
                "2K rows: 2 warps each, decode-bound or not",
            ),
            (4096, 384, 132, 64, false, 0, "4K rows fill the GPU a warp each"),
            (
                4096,
                717,
                132,
                64,
                true,
                1,
                "4K decode-bound rows: 2 warps each, two waves",
            ),
            (4096, 127, 132, 64, true, 0, "rows under 128 words stay on one warp"),
            (16384, 717, 132, 64, true, 0, "16K rows: a warp each"),
            (
                1024,
                200,
                132,
                64,
                false,
                1,
                "200 words: 64 or more per warp for 2 warps only",
            ),
            (1024, 200, 132, 32, false, 2, "32 or more per warp: 4 warps"),
            (1, 127, 132, 64, false, 0, "rows under 128 words stay on one warp"),
            (16, 4096, 1, 64, false, 1, "one SM: 32 warps"),
        ] {
            assert_eq!(
                auto_split_log2(count, words, sms, per_warp, decode_bound),
                log2,
                "{why}"
            );
        }
        assert_eq!(split_blocks(1024, 2, 132), 1024, "a block per request at 4 warps each");
        assert_eq!(split_blocks(1024, 1, 132), 512);
        assert_eq!(split_blocks(1 << 20, 1, 132), 132 * 32, "grid capped, the kernel loops");
    }

    #[test]
    fn lean_tiles_are_larger_while_four_blocks_fit_an_sm() {
        if std::env::var_os("IBP_TILE_BYTES").is_some() {
            println!("SKIPPED: IBP_TILE_BYTES overrides the tile size");
            return;
        }
        let mut rng = Rng::new(5);
        let layout_of = |rows: &[u8], row_bytes: usize, groups: u32| {
            let opts = EncodeOptions {
                align_log2: 4,
                groups,
                word_width: Some(ibp_format::WordWidth::W64),
                ..Default::default()
            };
            let (metas, payloads) = encode_rows(rows, row_bytes, &opts, 1 << 20);
            let refs: Vec<&[u8]> = payloads.iter().map(|p| p.as_slice()).collect();
            build_layout(row_bytes as u64, &metas, &refs).unwrap()
        };
        // 256 B rows, one group: a 32-entry table; the lean kernel's tiles hold 48 KiB of records.
        let small = layout_of(&float_rows(&mut rng, 400, 256, 0.02, 4), 256, 1);
        let smem = |class| {
            let (rows, bytes, table) = tiling(&small, class).unwrap();
            (rows, launch::tiles_smem(rows, bytes, table))
        };
        let ((lean_rows, lean_smem), (general_rows, _)) = (smem(1), smem(0));
        assert_eq!((lean_rows, general_rows), (192, 128));
        assert!(
            lean_smem <= crate::device::TILE_BLOCK_SMEM,
            "{lean_smem} B of shared memory"
        );
        // 256 B rows, 16 groups: a 512-entry (16 KiB) table leaves 56 - 16 - 4 = 36 KiB of records.
        let grouped = layout_of(&float_rows(&mut rng, 400, 256, 0.02, 4), 256, 16);
        let (rows, bytes, table) = tiling(&grouped, 1).unwrap();
        assert_eq!((rows, table), (36 * 1024 / 256, 512));
        assert!(launch::tiles_smem(rows, bytes, table) <= crate::device::TILE_BLOCK_SMEM);
        // 64 B rows through the short-rows kernel: 64 KiB tiles of 1024 rows, 3 blocks per SM.
        let kv = layout_of(&float_rows(&mut rng, 4096, 64, 0.02, 16), 64, 1);
        let (rows, bytes, table) = tiling(&kv, 2).unwrap();
        assert_eq!((rows, table), (1024, 8));
        let smem = launch::tiles_smem(rows, bytes, table);
        assert!(smem <= crate::device::SHORT_BLOCK_SMEM, "{smem} B of shared memory");
        assert!(3 * (smem + 1024) <= 228 * 1024, "{smem} B: 3 blocks per SM");
        // A 1024-entry (32 KiB) table leaves 75 - 1 - 32 - 4 = 38 KiB of records.
        let grouped = layout_of(&float_rows(&mut rng, 4096, 64, 0.02, 16), 64, 128);
        let (rows, bytes, table) = tiling(&grouped, 2).unwrap();
        assert_eq!(table, 1024);
        assert_eq!(rows, 38 * 1024 / 64);
        assert!(launch::tiles_smem(rows, bytes, table) <= crate::device::SHORT_BLOCK_SMEM);
    }

    #[test]
    fn general_tiles_hold_a_multiple_of_the_warps_rows() {
        let warps = launch::TILE_WARPS;
        // MiniLM rows of 1536 B: 21 rows in 32 KiB, 24 with a 6 KiB table still fit 4 blocks per SM.
        assert_eq!(balanced_tile_rows(21, 1536, 192), 24);
        // Fashion-MNIST 784 B rows: 41 -> 48 (37.6 KiB); 1 KiB rows keep 32; 4 KiB rows keep 8.
        assert_eq!(balanced_tile_rows(41, 784, 392), 48);
        assert_eq!(balanced_tile_rows(32, 1024, 128), 32);
        assert_eq!(balanced_tile_rows(8, 4096, 512), 8);
        // With a 1024-entry (32 KiB) table 24 rows of 1536 B do not fit: down to 16.
        assert_eq!(balanced_tile_rows(21, 1536, 1024), 16);
        // Cora's 5744 B records with a 717-entry table: 5 rows, 8 do not fit: 5 stay.
        assert_eq!(balanced_tile_rows(5, 5744, 717), 5);
        for raw in [16u32, 200, 784, 1200, 1536, 3000, 5744, 16384] {
            for table in [0u32, 64, 512, 1024] {
                let rows = (crate::device::TILE_BYTES / raw).clamp(1, 1024);
                let b = balanced_tile_rows(rows, raw, table);
                assert!(
                    b.is_multiple_of(warps) || b == rows,
                    "{raw} B, {table} entries: {rows} -> {b}"
                );
                assert!(b >= rows.min(warps) && b >= 1);
                let bytes = (b * raw + 48 + 15) & !15;
                assert!(
                    b <= rows || launch::tiles_smem(b, bytes, table) <= crate::device::TILE_BLOCK_SMEM,
                    "{raw} B, {table} entries: {b} rows exceed the block's shared memory"
                );
            }
        }
    }

    #[test]
    fn range_tiles_cover_only_the_chunks_a_range_overlaps() {
        let mut rng = Rng::new(8);
        let (metas, payloads) = encode_rows(
            &float_rows(&mut rng, 500, 64, 0.02, 4),
            64,
            &EncodeOptions::default(),
            100,
        );
        let refs: Vec<&[u8]> = payloads.iter().map(|p| p.as_slice()).collect();
        let layout = build_layout(64, &metas, &refs).unwrap();
        assert_eq!(layout.chunks.len(), 5);
        // Rows 150 .. 349 with tiles of 32 rows: 50 rows of chunk 1, 100 of chunk 2, 50 of chunk 3.
        let t = tile_starts(&layout, 150, 200, 32).unwrap();
        assert_eq!(t.first_chunk, 1);
        assert_eq!(t.starts, vec![0, 2, 6, 8]);
        assert_eq!(t.tiles, 8);
        // One row; the whole entry; the last row.
        let one = tile_starts(&layout, 299, 1, 32).unwrap();
        assert_eq!((one.first_chunk, one.starts, one.tiles), (2, vec![0, 1], 1));
        let all = tile_starts(&layout, 0, 500, 32).unwrap();
        assert_eq!((all.first_chunk, all.starts.len(), all.tiles), (0, 6, 5 * 4));
        assert_eq!(tile_starts(&layout, 499, 1, 7).unwrap().first_chunk, 4);
        // The launch parameters narrowed to chunks 1 ..= 3: descriptors and table offsets from
        // chunk 1, no chunk_rows.
        let mut p = GatherParams {
            chunks: 4096,
            table_offsets: 8192,
            chunk_count: 5,
            chunk_rows: 100,
            ..Default::default()
        };
        range_chunks(&mut p, t.first_chunk, t.starts.len() - 1);
        assert_eq!(
            (p.chunks, p.table_offsets, p.chunk_count, p.chunk_rows),
            (4096 + 80, 8200, 3, 0)
        );
        let mut no_tables = GatherParams::default();
        range_chunks(&mut no_tables, 2, 1);
        assert_eq!(no_tables.table_offsets, 0, "a null table-offset array stays null");
    }

    #[test]
    fn decode_tables_go_to_deposit_heavy_chunks_back_to_back() {
        let mut rng = Rng::new(3);
        let row_bytes = 256;
        // Chunks of 64 rows: float rows (sign + mantissa runs: tables), sparse rows (single runs:
        // none), float rows again, then noise (a raw chunk: none).
        let mut data = float_rows(&mut rng, 64, row_bytes, 0.02, 4);
        data.extend(sparse_rows(&mut rng, 64, row_bytes, 0.05));
        data.extend(float_rows(&mut rng, 64, row_bytes, 0.02, 0));
        data.extend((0..64 * row_bytes).map(|_| rng.next_u64() as u8));
        let opts = EncodeOptions {
            align_log2: 4,
            ..Default::default()
        };
        let (metas, _) = encode_rows(&data, row_bytes, &opts, 64);
        let layout = EntryLayout::new(row_bytes as u64, &metas).unwrap();
        let (offsets, total) = table_offsets(&layout);
        let has: Vec<bool> = offsets.iter().map(|&o| o != u64::MAX).collect();
        assert_eq!(
            has,
            [true, false, true, false],
            "groups {:?}",
            metas.iter().map(|m| m.group_count).collect::<Vec<_>>()
        );
        let mut next = 0;
        for (c, off) in layout.chunks.iter().zip(&offsets) {
            if *off != u64::MAX {
                assert_eq!(*off, next, "tables follow each other");
                assert_eq!(off % 16, 0);
                next += 32 * c.group_count as u64 * c.words_per_row as u64;
            }
        }
        assert_eq!(total, next);
    }

    #[test]
    fn lean_tile_kernels_by_row_shape() {
        let mut rng = Rng::new(6);
        let layout_of = |data: &[u8], row_bytes: usize, w: ibp_format::WordWidth, groups: u32| {
            let opts = EncodeOptions {
                align_log2: 4,
                word_width: Some(w),
                groups,
                ..Default::default()
            };
            let (metas, _) = encode_rows(data, row_bytes, &opts, 64);
            EntryLayout::new(row_bytes as u64, &metas).unwrap()
        };
        let coded = |l: &EntryLayout| l.chunks.iter().filter(|c| c.group_count > 0).count();
        use ibp_format::WordWidth::{W16, W32, W64};
        // 1-64 whole words per row: lean, the mid kernel from 33 words, the short-rows kernel for
        // entries of coded chunks only of <= 16 words, or <= 32 words of <= 64 B (IBP_LEAN_SHORT
        // unset or not 0).
        use LeanShape::{Any, Mid};
        let short = if crate::device::short_rows_kernel() {
            LeanShape::Short
        } else {
            Any
        };
        // (64 B rows of bf16-like values, so that their records save the 16 B of a step of A = 16.)
        for (row_bytes, w, short_rows, drop_bits, other) in [
            (64, W64, true, 16, Any),
            (64, W16, true, 16, Any),
            (128, W64, true, 4, Any),
            (96, W32, false, 4, Any),
            (136, W64, false, 4, Any),
            (256, W64, false, 4, Any),
            (132, W32, false, 4, Mid),
            (256, W32, false, 4, Mid),
            (512, W64, false, 4, Mid),
        ] {
            let shape = if short_rows { short } else { other };
            let l = layout_of(&float_rows(&mut rng, 256, row_bytes, 0.02, drop_bits), row_bytes, w, 1);
            assert!(
                !short_rows || coded(&l) == l.chunks.len(),
                "{row_bytes} B W{}: a raw chunk",
                w.bits()
            );
            assert!(coded(&l) > 0, "{row_bytes} B W{}", w.bits());
            assert_eq!(lean_shape(&l), Some(shape), "{row_bytes} B W{}", w.bits());
        }
        // Chunks of both shapes (256 B rows of 32 and of 64 words): the kernel for any shape.
        let data = float_rows(&mut rng, 256, 256, 0.02, 4);
        let (mut metas, _) = encode_rows(&data[..128 * 256], 256, &crate::testdata::fixed_width(W64, 1, 4), 64);
        metas.extend(encode_rows(&data[128 * 256..], 256, &crate::testdata::fixed_width(W32, 1, 4), 64).0);
        let l = EntryLayout::new(256, &metas).unwrap();
        assert_eq!(coded(&l), 4);
        assert_eq!(lean_shape(&l), Some(Any));
        // 65 words, or a partial last word: not lean.
        for (row_bytes, w) in [(520, W64), (260, W32), (252, W64)] {
            let l = layout_of(&float_rows(&mut rng, 256, row_bytes, 0.02, 4), row_bytes, w, 1);
            assert!(coded(&l) > 0 && lean_shape(&l).is_none(), "{row_bytes} B W{}", w.bits());
        }
        // Raw chunks only (noise): the general kernel; raw chunks beside coded ones: lean.
        let noise: Vec<u8> = (0..128 * 256).map(|_| rng.next_u64() as u8).collect();
        let l = layout_of(&noise, 256, W64, 1);
        assert!(coded(&l) == 0 && lean_shape(&l).is_none());
        let mut mixed = float_rows(&mut rng, 64, 256, 0.02, 4);
        mixed.extend_from_slice(&noise);
        let l = layout_of(&mixed, 256, W64, 1);
        assert!(coded(&l) > 0 && coded(&l) < l.chunks.len());
        assert_eq!(lean_shape(&l), Some(Any));
        // Short rows with a raw chunk beside the coded ones: the kernel for any shape.
        let mut mixed = float_rows(&mut rng, 512, 64, 0.02, 16);
        mixed.extend_from_slice(&noise);
        let l = layout_of(&mixed, 64, W64, 1);
        assert!(coded(&l) > 0 && coded(&l) < l.chunks.len());
        assert_eq!(lean_shape(&l), Some(Any));
        // More table entries (G * n) than the kernel holds: not lean.
        let mut many = Vec::new();
        for g in 0..40u8 {
            many.extend((0..64 * 512).map(|i| if i % 8 == 7 { g } else { (rng.next_u64() & 1) as u8 }));
        }
        let l = layout_of(&many, 512, W64, 40);
        let max_entries = l
            .chunks
            .iter()
            .map(|c| c.group_count as u32 * c.words_per_row)
            .max()
            .unwrap();
        assert!(max_entries > crate::device::TABLE_MAX_ENTRIES, "{max_entries} entries");
        assert!(lean_shape(&l).is_none());
    }

    #[test]
    fn decode_tables_respect_the_entry_and_byte_limits() {
        let mut rng = Rng::new(4);
        let row_bytes = 256; // 32 words of 64 bits or 64 of 32 bits: 1 KiB or 2 KiB of table per group
        let data = float_rows(&mut rng, 4 * 64, row_bytes, 0.02, 4);
        let opts = EncodeOptions {
            align_log2: 4,
            ..Default::default()
        };
        let (metas, _) = encode_rows(&data, row_bytes, &opts, 64);
        let layout = EntryLayout::new(row_bytes as u64, &metas).unwrap();
        let bytes: Vec<u64> = layout
            .chunks
            .iter()
            .map(|c| 32 * c.group_count as u64 * c.words_per_row as u64)
            .collect();
        let (all, total) = table_offsets_within(&layout, u64::MAX, u64::MAX);
        assert!(all.iter().all(|&o| o != u64::MAX));
        assert_eq!(total, bytes.iter().sum::<u64>());
        // A byte limit that fits two tables: the first two chunks get them, the others none.
        let (two, total) = table_offsets_within(&layout, u64::MAX, bytes[0] + bytes[1]);
        assert_eq!(two[..2], all[..2]);
        assert!(two[2..].iter().all(|&o| o == u64::MAX));
        assert_eq!(total, bytes[0] + bytes[1]);
        // An entry limit below every chunk's G * n: no tables at all.
        let min_entries = layout
            .chunks
            .iter()
            .map(|c| c.group_count as u64 * c.words_per_row as u64)
            .min()
            .unwrap();
        let (none, total) = table_offsets_within(&layout, min_entries - 1, u64::MAX);
        assert!(none.iter().all(|&o| o == u64::MAX));
        assert_eq!(total, 0);
    }

    #[test]
    fn single_runs_of_free_bits_are_not_deposit_heavy_at_any_width() {
        let mut rng = Rng::new(5);
        for word_bytes in [1usize, 2, 4, 8] {
            // Every position free in its low 3 bits (one run), then with a second run in the same
            // 32-bit half (the word's top bit, bit 20 for 64-bit words): a table only for the second.
            let second = (8 * word_bytes as u32 - 1).min(20);
            for (free, heavy) in [(0b111u64, false), (0b111 | (1u64 << second), true)] {
                let row_bytes = 64;
                let mut data = Vec::with_capacity(100 * row_bytes);
                for _ in 0..100 * row_bytes / word_bytes {
                    let w = 0x5555_5555_5555_5555u64 & !free | (rng.next_u64() & free);
                    data.extend_from_slice(&w.to_le_bytes()[..word_bytes]);
                }
                let opts = EncodeOptions {
                    word_width: Some(ibp_format::WordWidth::from_bits(8 * word_bytes as u32).unwrap()),
                    align_log2: 4,
                    ..Default::default()
                };
                let (metas, _) = encode_rows(&data, row_bytes, &opts, 100);
                let layout = EntryLayout::new(row_bytes as u64, &metas).unwrap();
                let c = &layout.chunks[0];
                assert!(c.group_count >= 1, "W={} coded", 8 * word_bytes);
                assert_eq!(
                    deposit_heavy(c, &layout.meta),
                    heavy,
                    "W={} free {free:#x}",
                    8 * word_bytes
                );
            }
        }
    }
}
