//! The decoder kernels run on the CPU (feature `host-kernels`): `kernels/ibp_gather.cu` compiled as
//! C++ with `kernels/host/cuda_host.h` (each GPU thread a fiber; warp collectives and block barriers
//! wait for every live thread of their scope) and launched with the parameters, shapes and buffers a [`GpuEntry`]
//! gives the device, every pointer a host address. It lets machines without a GPU (CI) check the
//! kernels' logic against the CPU decoder: the rows they decode, the errors they report on corrupt
//! input. It says nothing about speed; the tiles' `cp.async` copies are made at once.
//!
//! [`GpuEntry`]: crate::GpuEntry

use crate::chunk_form::ChunkForm;
use crate::entry::{build_formed_layout, layout_params, read_entry};
use crate::kernel_choice::{
    auto_tile_kernel, coded_words, decode_bound, gather_split_log2, has_sparse_tables, sparse_gathers_by_default,
    split_blocks, split_words, stage_bytes, table_offsets,
};
use crate::launch::{self, GatherParams};
use crate::pending::failure_error;
use crate::status::KernelFailure;
use crate::tiling::{range_chunks, tile_starts, tiling, RangeTiles, RowSegments, RowSegmentsSetting};
use crate::{EntryLayout, GpuError, GpuResult, LeanShape};
use ibp_format::ChunkMeta;

extern "C" {
    fn ibp_host_gather(p: *const GatherParams, blocks: u32, smem: u32);
    fn ibp_host_gather_flat(p: *const GatherParams, blocks: u32);
    fn ibp_host_gather_sparse(p: *const GatherParams, blocks: u32, smem: u32);
    fn ibp_host_gather_split(p: *const GatherParams, split_log2: u32, split_words: u32, blocks: u32, smem: u32);
    fn ibp_host_build_tables(p: *const GatherParams, tables_size: u64);
    fn ibp_host_decode_tiles(
        p: *const GatherParams,
        tile_starts: *const u32,
        tile_rows: u32,
        tile_bytes: u32,
        table_entries: u32,
        blocks: u32,
        smem: u32,
        kernel: i32,
    );
}

/// Per-block shared-memory limit assumed for staging buffers (the H200's opt-in limit, 227 KiB).
const SMEM_LIMIT: u32 = 227 * 1024;
/// Most blocks of an emulated launch (blocks run one after another; more than one exercises the
/// kernels' grid-stride and per-block tile runs).
const MAX_BLOCKS: u64 = 3;
/// SMs the tile launches are planned for ([`launch_tiles`]): one, so that ranges of fewer than two
/// tiles take the long-rows kernel's segments and larger ones its whole rows, and the tests
/// cover both.
const HOST_SM_COUNT: u32 = 1;

/// Blocks of an emulated gather launch over `count` requests (one warp per request, as on the device,
/// at most [`MAX_BLOCKS`]).
fn gather_blocks(count: u64) -> u32 {
    count.div_ceil(launch::WARPS_PER_BLOCK as u64).min(MAX_BLOCKS) as u32
}

/// Bytes whose first one is 16-byte aligned (the kernels load 16-byte vectors), zero-initialised.
struct Aligned {
    buf: Vec<u8>,
    off: usize,
    len: usize,
}

impl Aligned {
    fn zeroed(len: usize) -> Aligned {
        let buf = vec![0u8; len + 16];
        let off = buf.as_ptr().align_offset(16);
        Aligned { buf, off, len }
    }
    fn from_bytes(bytes: &[u8]) -> Aligned {
        let mut a = Aligned::zeroed(bytes.len());
        a.bytes_mut().copy_from_slice(bytes);
        a
    }
    fn bytes(&self) -> &[u8] {
        &self.buf[self.off..self.off + self.len]
    }
    fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.buf[self.off..self.off + self.len]
    }
    /// The address the kernels read.
    fn addr(&self) -> u64 {
        self.buf[self.off..].as_ptr() as u64
    }
    /// The address the kernels write.
    fn addr_mut(&mut self) -> u64 {
        self.buf[self.off..].as_mut_ptr() as u64
    }
}

/// A status block as the device's (`kernels/ibp_status.h`): the word, then the address of `flag`,
/// boxed so that the addresses the kernels write through stay put.
struct Status(Box<StatusBlock>);

#[repr(C)]
struct StatusBlock {
    block: [u64; 2],
    flag: u32,
}

impl Status {
    fn new() -> Status {
        Status(Box::new(StatusBlock { block: [0, 0], flag: 0 }))
    }
    /// The address the kernels write (the block's flag address set from the same borrow).
    fn block_addr(&mut self) -> u64 {
        let b = &mut *self.0;
        b.block[1] = std::ptr::addr_of_mut!(b.flag) as u64;
        b.block.as_mut_ptr() as u64
    }
    /// The status word, after checking the kernels' invariant that the flag is set exactly when
    /// the word reports a failure (a `GpuEntry` trusts the flag to skip reading the word).
    fn word(&self) -> u64 {
        let word = self.0.block[0];
        assert_eq!(
            self.0.flag != 0,
            word != 0,
            "kernel status flag {} disagrees with status word {word:#x}",
            self.0.flag
        );
        word
    }
}

/// An entry loaded for the CPU-run kernels: the buffers a [`crate::GpuEntry`] uploads, in host memory.
pub struct HostKernels {
    layout: EntryLayout,
    chunks: Aligned,
    meta: Aligned,
    anchors: Vec<u64>,
    payload: Aligned,
    /// Decode tables `ibp_build_tables` wrote for `ibp_gather`, and each chunk's offset in them.
    tables: Option<(Aligned, Vec<u64>)>,
    /// The flat row index ([`EntryLayout::row_spans`]) wherever the layout allows one (a `GpuEntry`
    /// uploads it for rows of >= 128 bytes, or on request; here always, so tests can run both of
    /// `ibp_gather`'s lookups), and whether gathers pass it ([`HostKernels::set_row_spans`]).
    row_spans: Option<Vec<u64>>,
    use_row_spans: bool,
    /// How the long-rows kernel spreads a range's rows ([`HostKernels::use_row_segments`]).
    row_segments: RowSegmentsSetting,
    /// [`HostKernels::set_sparse_rows`].
    use_sparse_rows: bool,
    stage_bytes: u32,
    /// The tile kernel the entry's chunks call for.
    auto_kernel: TileKernel,
}

pub use crate::entry::TileKernel;

impl HostKernels {
    /// Builds the layout (checking each payload's length and CRC, as [`crate::HostEntry::new`]) and
    /// runs `ibp_build_tables`.
    pub fn new(row_bytes: u64, metas: &[ChunkMeta], payloads: &[&[u8]]) -> GpuResult<HostKernels> {
        HostKernels::with_form(row_bytes, metas, payloads, ChunkForm::AsStored)
    }

    /// [`HostKernels::new`] with the chunks kept in `form`, as [`crate::HostEntry::with_form`].
    pub fn with_form(
        row_bytes: u64,
        metas: &[ChunkMeta],
        payloads: &[&[u8]],
        form: ChunkForm,
    ) -> GpuResult<HostKernels> {
        let (layout, formed) = build_formed_layout(row_bytes, metas, payloads, form)?;
        let payloads = formed.payload_refs();
        let mut payload = Aligned::zeroed(layout.payload_buffer_len as usize);
        for (i, p) in payloads.iter().enumerate() {
            payload.bytes_mut()[layout.payload_range(i)].copy_from_slice(p);
        }
        let (offsets, total) = table_offsets(&layout);
        let mut entry = HostKernels {
            chunks: Aligned::from_bytes(&layout.chunk_bytes()),
            meta: Aligned::from_bytes(&layout.meta),
            anchors: layout.anchors.clone(),
            payload,
            tables: None,
            row_spans: layout.row_spans(),
            use_row_spans: true,
            use_sparse_rows: sparse_gathers_by_default(&layout, &offsets),
            row_segments: RowSegmentsSetting::default(),
            stage_bytes: stage_bytes(&layout, SMEM_LIMIT),
            auto_kernel: auto_tile_kernel(&layout),
            layout,
        };
        if total > 0 {
            entry.tables = Some((Aligned::zeroed(total as usize), offsets));
            entry.build_tables();
        }
        Ok(entry)
    }

    /// Entry `entry` of a container (payload CRCs checked by the reader).
    pub fn from_reader<R: std::io::Read + std::io::Seek>(
        reader: &mut ibp_codec::ContainerReader<R>,
        entry: usize,
    ) -> GpuResult<HostKernels> {
        let (row_bytes, metas, payloads) = read_entry(reader, entry)?;
        let refs: Vec<&[u8]> = payloads.iter().map(|p| p.as_slice()).collect();
        HostKernels::new(row_bytes, &metas, &refs)
    }

    /// The entry's layout.
    pub fn layout(&self) -> &EntryLayout {
        &self.layout
    }

    /// Whether the entry has a flat row index ([`EntryLayout::row_spans`]).
    pub fn has_row_spans(&self) -> bool {
        self.row_spans.is_some()
    }

    /// Makes gathers pass the flat row index (`on`, the default, as a `GpuEntry` does) or find
    /// records through the anchors and stored lengths (both paths of `ibp_gather`'s lookup).
    pub fn set_row_spans(&mut self, on: bool) {
        self.use_row_spans = on;
    }

    /// How range decodes through the long-rows kernel spread a tile's rows
    /// ([`crate::GpuEntry::use_row_segments`]; default [`RowSegments::Auto`]).
    pub fn use_row_segments(&self, mode: RowSegments) {
        self.row_segments.set(mode);
    }

    /// Lets `damage` change the flat row index after the loader built it (a test of the kernels'
    /// bounds checks, as [`HostKernels::damage`]); nothing when the entry has none.
    pub fn damage_row_spans(&mut self, damage: impl FnOnce(&mut [u64])) {
        if let Some(spans) = &mut self.row_spans {
            damage(spans);
        }
    }

    /// Lets `damage` change the bytes the kernels read after the loader checked them (chunk
    /// descriptors, metadata, row-index anchors, payload), then rebuilds the decode tables from the
    /// damaged metadata: a test of the kernels' own bounds checks, which must hold whatever these
    /// buffers hold. The sizes the kernels are given stay those of the buffers.
    pub fn damage(&mut self, damage: impl FnOnce(&mut [u8], &mut [u8], &mut [u64], &mut [u8])) {
        damage(
            self.chunks.bytes_mut(),
            self.meta.bytes_mut(),
            &mut self.anchors,
            self.payload.bytes_mut(),
        );
        self.build_tables();
    }

    /// Runs `ibp_build_tables` over the current descriptors and metadata into the tables buffer.
    fn build_tables(&mut self) {
        if let Some((tables, offsets)) = &mut self.tables {
            let total = tables.len as u64;
            let p = GatherParams {
                chunks: self.chunks.addr(),
                meta: self.meta.addr(),
                tables: tables.addr_mut(),
                table_offsets: offsets.as_ptr() as u64,
                ..layout_params(&self.layout, 0, 0)
            };
            // SAFETY: `p` points at this entry's chunk descriptors and metadata (sizes in `p`),
            // `tables` holds `total` writable bytes and `offsets` one value per chunk, all alive for
            // the call, which returns after the emulated grid has finished.
            unsafe { ibp_host_build_tables(&p, total) };
        }
    }

    /// Whether range decodes take a lean tile kernel (with [`TileKernel::Auto`]).
    pub fn uses_lean_tiles(&self) -> bool {
        self.lean_tile_shape().is_some()
    }

    /// The lean tile kernel range decodes take with [`TileKernel::Auto`], as a `GpuEntry` would.
    pub fn lean_tile_shape(&self) -> Option<LeanShape> {
        match self.auto_kernel {
            TileKernel::Lean(shape) if tiling(&self.layout, self.auto_kernel.tile_class()).is_some() => Some(shape),
            _ => None,
        }
    }

    /// The tile kernel range decodes take with [`TileKernel::Auto`] (never `Auto`), as a `GpuEntry`
    /// would.
    pub fn tile_kernel(&self) -> TileKernel {
        self.auto_kernel
    }

    fn params(&self, rows: u64, first_row: u64, count: u64, out: &mut Aligned, status: &mut Status) -> GatherParams {
        let (tables, table_offsets) = match &self.tables {
            Some((t, o)) => (t.addr(), o.as_ptr() as u64),
            None => (0, 0),
        };
        let tables_size = self.tables.as_ref().map_or(0, |(t, _)| t.len as u32);
        // (`self.anchors` is the layout's anchors, copied so that tests can damage them: same count.)
        GatherParams {
            payload: self.payload.addr(),
            chunks: self.chunks.addr(),
            meta: self.meta.addr(),
            anchors: self.anchors.as_ptr() as u64,
            rows,
            first_row,
            count,
            out: out.addr_mut(),
            status: status.block_addr(),
            tables,
            table_offsets,
            row_spans: match &self.row_spans {
                Some(spans) if self.use_row_spans => spans.as_ptr() as u64,
                _ => 0,
            },
            ..layout_params(&self.layout, self.stage_bytes, tables_size)
        }
    }

    /// Whether a chunk has a sparse table, so that gathers can go through `ibp_gather_sparse` (as on
    /// the device).
    pub fn has_sparse_tables(&self) -> bool {
        self.tables
            .as_ref()
            .is_some_and(|(_, offsets)| has_sparse_tables(offsets))
    }

    /// Whether gathers go through `ibp_gather_sparse`: sparse tables, and [`HostKernels::set_sparse_rows`] on.
    pub fn uses_sparse_rows(&self) -> bool {
        self.use_sparse_rows && self.has_sparse_tables()
    }

    /// Gathers through `ibp_gather_sparse` where the entry has sparse tables (`on`) or through the
    /// other kernels, as `GpuEntry::set_sparse_rows` (the same default: rows of at least
    /// [`crate::SPARSE_GATHER_MIN_ROW_BYTES`], mostly in chunks with sparse tables).
    pub fn set_sparse_rows(&mut self, on: bool) {
        self.use_sparse_rows = on;
    }

    /// `ibp_gather` of `rows` (indices checked by the kernel only, as
    /// `GpuEntry::gather_device_rows`): the rows, or the first failing request's error.
    pub fn gather(&self, rows: &[u64]) -> GpuResult<Vec<u8>> {
        let count = rows.len() as u64;
        let mut out = Aligned::zeroed((count * self.layout.row_bytes) as usize);
        let mut status = Status::new();
        if count > 0 {
            let p = self.params(rows.as_ptr() as u64, 0, count, &mut out, &mut status);
            self.launch_list_gather(&p);
        }
        Self::finish(status, out, |k| {
            rows.get(k as usize).map_or("?".into(), |r| r.to_string())
        })
    }

    /// Rows `first .. first + count` through the tile kernel `kernel` picks (through `ibp_gather`
    /// when records are too long for a tile, as on the device).
    pub fn decode_range(&self, first: u64, count: u64, kernel: TileKernel) -> GpuResult<Vec<u8>> {
        if first.checked_add(count).is_none_or(|e| e > self.layout.row_count) {
            return Err(GpuError::Format(ibp_format::FormatError::new(
                ibp_format::ErrorCode::RowIndex,
                format!(
                    "rows {first}..{first}+{count} exceed the entry's {} rows",
                    self.layout.row_count
                ),
            )));
        }
        let mut out = Aligned::zeroed((count * self.layout.row_bytes) as usize);
        let mut status = Status::new();
        if count > 0 {
            let mut p = self.params(0, first, count, &mut out, &mut status);
            let kernel = kernel.resolve(self.auto_kernel);
            match tiling(&self.layout, kernel.tile_class()) {
                Some(tiling @ (_, tile_bytes, table_entries)) => {
                    let (tile_rows, row_segments) = self.row_segments.range_tiles(
                        &self.layout,
                        kernel.tile_class(),
                        tiling,
                        first,
                        count,
                        HOST_SM_COUNT,
                    )?;
                    p.row_segments = row_segments;
                    let RangeTiles {
                        first_chunk,
                        starts,
                        tiles,
                    } = tile_starts(&self.layout, first, count, tile_rows)?;
                    range_chunks(&mut p, first_chunk, starts.len() - 1);
                    let smem = launch::tiles_smem(tile_rows, tile_bytes, table_entries);
                    // SAFETY: as in `launch_gather` (the descriptors narrowed to the range's chunks, which lie
                    // inside the descriptor array), plus `starts` holds `chunk_count + 1` tile indices
                    // consistent with the range and `tile_rows`, and `smem` is the dynamic shared
                    // memory the device launch gives (the emulation allocates it).
                    unsafe {
                        ibp_host_decode_tiles(
                            &p,
                            starts.as_ptr(),
                            tile_rows,
                            tile_bytes,
                            table_entries,
                            tiles.clamp(1, MAX_BLOCKS) as u32,
                            smem,
                            kernel.code() as i32,
                        )
                    };
                }
                None => self.launch_gather(&p),
            }
        }
        Self::finish(status, out, |k| (first + k).to_string())
    }

    /// Runs `ibp_gather` over the `p.count` requests `p` describes (a row list, or rows from
    /// `p.first_row`).
    fn launch_gather(&self, p: &GatherParams) {
        let blocks = gather_blocks(p.count);
        // SAFETY: `p` comes from `params`: this entry's buffers with their sizes (the row spans, when
        // passed: one per entry row), a row list of `p.count` indices (or none), `out` of `p.count * row_bytes` writable bytes and one status
        // block, all alive until the call returns, which is after the emulated grid has finished
        // (`out` and `status` are written only through the addresses taken from `&mut` borrows).
        unsafe { ibp_host_gather(p, blocks, self.stage_bytes * launch::WARPS_PER_BLOCK) };
    }

    /// `ibp_gather_split` with `2^split_log2` warps per request (clamped to the block's) over the
    /// same requests as [`HostKernels::gather`]: the rows, or the first failing request's error.
    pub fn gather_split(&self, rows: &[u64], split_log2: u32) -> GpuResult<Vec<u8>> {
        let count = rows.len() as u64;
        let mut out = Aligned::zeroed((count * self.layout.row_bytes) as usize);
        let mut status = Status::new();
        if count > 0 {
            let p = self.params(rows.as_ptr() as u64, 0, count, &mut out, &mut status);
            self.launch_split(&p, split_log2);
        }
        Self::finish(status, out, |k| {
            rows.get(k as usize).map_or("?".into(), |r| r.to_string())
        })
    }

    fn launch_split(&self, p: &GatherParams, split_log2: u32) {
        let blocks = split_blocks(p.count, split_log2, 1).min(MAX_BLOCKS as u32);
        // SAFETY: as in `launch_gather` (same parameters; the split kernel reads and writes the same
        // buffers, and `split_log2` may be any value).
        unsafe {
            ibp_host_gather_split(
                p,
                split_log2,
                split_words(),
                blocks,
                self.stage_bytes * launch::WARPS_PER_BLOCK,
            )
        };
    }

    /// Gathers go through the kernel the device would take for them (`ibp_gather_flat` for a flat
    /// entry; `ibp_gather_split` for a batch a GPU of one SM would not fill, `ibp_gather` otherwise).
    fn launch_list_gather(&self, p: &GatherParams) {
        if !self.layout.flat_rows() && self.uses_sparse_rows() {
            // SAFETY: as in `launch_gather` (ibp_gather_sparse has ibp_gather's parameters and reads the
            // tables within `tables_size`).
            unsafe { ibp_host_gather_sparse(p, gather_blocks(p.count), self.stage_bytes * launch::WARPS_PER_BLOCK) };
            return;
        }
        if !self.layout.flat_rows() {
            return match gather_split_log2(p.count, coded_words(&self.layout), 1, decode_bound(&self.layout)) {
                0 => self.launch_gather(p),
                split => self.launch_split(p, split),
            };
        }
        let blocks = gather_blocks(p.count);
        // SAFETY: as in `launch_gather`; the flat kernel reads only the payload (within its size)
        // and the row list, and writes `out` and the status block.
        unsafe { ibp_host_gather_flat(p, blocks) };
    }

    fn finish(status: Status, out: Aligned, row_of: impl Fn(u64) -> String) -> GpuResult<Vec<u8>> {
        match KernelFailure::from_word(status.word()) {
            Some(f) => Err(failure_error(&f, &row_of(f.request))),
            None => Ok(out.bytes().to_vec()),
        }
    }
}

/// Every entry of a container decoded by the kernels, entry by entry: `Ok(entries)` (name and
/// bytes) or `Err(code)` for the first rejection, as the CPU reader's `decode_bytes` reports it.
pub type Decoded = Result<Vec<(String, Vec<u8>)>, ibp_format::ErrorCode>;

/// What the kernels make of container `bytes`, each entry several ways: a whole-entry decode (the tile
/// kernel the entry takes, or `ibp_gather` for rows too long for a tile), the general tile kernel
/// where that was the lean one, and `ibp_gather` of every row in reverse order (and the same through
/// `ibp_gather_sparse` where the entry has sparse tables). `Err(text)` when they disagree (bytes, or
/// one failing where another does not), or when a failure is not a data error: a fault of the
/// kernels, whatever the input.
pub fn decode_container(bytes: &[u8]) -> Result<Decoded, String> {
    let mut reader = match ibp_codec::ContainerReader::open(std::io::Cursor::new(bytes)) {
        Ok(r) => r,
        Err(e) => return Ok(Err(e.code)),
    };
    let data_code = |e: GpuError| e.code().ok_or_else(|| format!("not a data error: {e}"));
    let mut out = Vec::new();
    for e in 0..reader.entries().len() {
        let name = reader.entries()[e].name.clone();
        let entry = match HostKernels::from_reader(&mut reader, e) {
            Ok(entry) => entry,
            Err(err) => return Ok(Err(data_code(err)?)),
        };
        let (n, row_bytes) = (entry.layout.row_count, entry.layout.row_bytes as usize);
        let whole = entry.decode_range(0, n, TileKernel::Auto);
        if entry.tile_kernel() != TileKernel::General {
            let general = entry.decode_range(0, n, TileKernel::General);
            let verdict = |r: &GpuResult<Vec<u8>>| r.as_ref().map_err(|e| e.code()).cloned();
            if verdict(&whole) != verdict(&general) {
                return Err(format!(
                    "entry {e}: the {:?} and general tile kernels disagree",
                    entry.tile_kernel()
                ));
            }
        }
        let reversed: Vec<u64> = (0..n).rev().collect();
        let gathered = entry.gather(&reversed);
        match (&whole, &gathered) {
            (Ok(w), Ok(g)) => {
                let back: Vec<u8> = g.chunks(row_bytes.max(1)).rev().flatten().copied().collect();
                if &back != w {
                    return Err(format!(
                        "entry {e}: ibp_gather and the range decode give different bytes"
                    ));
                }
            }
            (Err(_), Err(_)) => {}
            _ => return Err(format!("entry {e}: only one of ibp_gather and the range decode fails")),
        }
        // Entries with sparse tables: the same gather through the other path (ibp_gather_sparse, or
        // the kernels that decode every word): same rows, or the same first failing request and code.
        if entry.has_sparse_tables() {
            let mut other_path = entry;
            other_path.set_sparse_rows(!other_path.uses_sparse_rows());
            let other = other_path.gather(&reversed);
            let verdict = |r: &GpuResult<Vec<u8>>| r.as_ref().map_err(|e| e.to_string()).cloned();
            if verdict(&other) != verdict(&gathered) {
                return Err(format!("entry {e}: ibp_gather_sparse and ibp_gather disagree"));
            }
        }
        match whole {
            Ok(bytes) => out.push((name, bytes)),
            Err(err) => return Ok(Err(data_code(err)?)),
        }
    }
    Ok(Ok(out))
}
