//! Kernel launches: the parameter struct shared with `kernels/ibp_status.h` (`IbpGatherParams`) and
//! one function per entry point. Callers check every pointer and size beforehand.

use cudarc::driver::{sys, CudaFunction, CudaStream, DeviceRepr, DriverError, LaunchConfig, PushKernelArg};

/// Parameters of `ibp_gather` (mirrors `IbpGatherParams`: 16 `u64`, then 6 `u32`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct GatherParams {
    pub payload: sys::CUdeviceptr,
    pub payload_size: u64,
    pub chunks: sys::CUdeviceptr,
    pub meta: sys::CUdeviceptr,
    pub meta_size: u64,
    pub anchors: sys::CUdeviceptr,
    pub anchor_count: u64,
    pub entry_rows: u64,
    pub rows: sys::CUdeviceptr,
    pub first_row: u64,
    pub count: u64,
    pub out: sys::CUdeviceptr,
    /// The status block (`kernels/ibp_status.h`): the status word, then the device address of a
    /// host-visible `u32` flag (0: none) that every failure sets.
    pub status: sys::CUdeviceptr,
    /// Per-position decode tables (null when no chunk has one).
    pub tables: sys::CUdeviceptr,
    /// Per chunk: byte offset of its table in `tables`, or `u64::MAX`; null when no chunk has one.
    pub table_offsets: sys::CUdeviceptr,
    /// Null, or `entry_rows` row spans ([`crate::layout::EntryLayout::row_spans`]), with chunks
    /// found by division (`chunk_rows` set) or by binary search.
    pub row_spans: sys::CUdeviceptr,
    pub chunk_count: u32,
    pub row_bytes: u32,
    pub stage_bytes: u32,
    /// Bytes at `tables` (at most `GATHER_TABLE_MAX_BYTES`, so they fit; 0 when null).
    pub tables_size: u32,
    /// Rows of every chunk but the last when chunk `c` starts at row `c * chunk_rows`
    /// ([`crate::layout::EntryLayout::uniform_chunk_rows`]), else 0.
    pub chunk_rows: u32,
    /// Tile kernels: the most segments the long-rows kernel cuts each row of a tile into (0 or 1:
    /// a lane walks its whole row; [`crate::tiling::launch_tiles`]); other kernels ignore it.
    pub row_segments: u32,
}

// SAFETY: `GatherParams` is `#[repr(C)]`, made only of integers, with the field order and sizes of
// `IbpGatherParams` (checked by `params_match_header` below), so its bytes are a valid kernel argument.
unsafe impl DeviceRepr for GatherParams {}

/// Warps per block of every kernel but `ibp_decode_tiles` (`IBP_WARPS_PER_BLOCK`).
pub(crate) const WARPS_PER_BLOCK: u32 = 4;
/// Warps per block of `ibp_decode_tiles` (`IBP_TILE_WARPS`).
pub(crate) const TILE_WARPS: u32 = 8;
/// Guard bytes before the tile buffer of `ibp_decode_tiles` (`IBP_TILE_GUARD`).
pub(crate) const TILE_GUARD: u32 = 16;
/// Shared-memory bytes per table entry of `ibp_decode_tiles` (`tmask` and `tinfo`, 16 bytes each).
pub(crate) const TABLE_ENTRY_BYTES: u32 = 16 + 16;

fn config(blocks: u32, smem: u32) -> LaunchConfig {
    config_warps(blocks, smem, WARPS_PER_BLOCK)
}

fn config_warps(blocks: u32, smem: u32, warps: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (blocks.max(1), 1, 1),
        block_dim: (32 * warps, 1, 1),
        shared_mem_bytes: smem,
    }
}

/// Dynamic shared memory of `ibp_decode_tiles`: guard, tile, offsets (16-byte multiple), table.
pub(crate) const fn tiles_smem(tile_rows: u32, tile_bytes: u32, table_entries: u32) -> u32 {
    TILE_GUARD + tile_bytes + ((4 * (tile_rows + 1) + 15) & !15) + TABLE_ENTRY_BYTES * table_entries
}

/// [`tiles_smem`] in 64 bits, for sizes that are being tried (no overflow).
pub(crate) fn tiles_smem_u64(tile_rows: u32, tile_bytes: u32, table_entries: u32) -> u64 {
    TILE_GUARD as u64
        + tile_bytes as u64
        + ((4 * (tile_rows as u64 + 1) + 15) & !15)
        + TABLE_ENTRY_BYTES as u64 * table_entries as u64
}

/// Launches `ibp_gather` on `stream`.
///
/// The caller guarantees: `p.payload`, `p.chunks`, `p.meta`, `p.anchors` point to device-readable
/// memory of at least the sizes given in `p` (chunks: `chunk_count` descriptors), `p.rows` is null or
/// holds `p.count` `u64`s, `p.row_spans` is null or holds `p.entry_rows` spans that lie inside their
/// chunks' payloads, `p.out` is writable for `p.count * p.row_bytes` bytes and 8-byte aligned,
/// `p.status` is a status block of two `u64`s (the word, writable; then 0 or the device address of a
/// writable `u32`), and all of them stay alive until the launch completes.
pub(crate) fn gather(
    func: &CudaFunction,
    stream: &CudaStream,
    p: &GatherParams,
    blocks: u32,
) -> Result<(), DriverError> {
    // One staging buffer per warp.
    let smem = p.stage_bytes * WARPS_PER_BLOCK;
    // SAFETY: the kernel reads/writes only within the buffers described by `p` (it bounds-checks
    // every index against the sizes in `p`), which the caller guarantees valid as documented above.
    unsafe { launch_with_params(func, stream, p, config(blocks, smem)) }
}

/// Launches `ibp_gather_split` on `stream`: `ibp_gather` with `2^split_log2` warps of a block per
/// request (at most [`WARPS_PER_BLOCK`]; the kernel clamps a larger value), each decoding at least
/// `split_words` words of a row, for batches too small to fill the GPU with one warp per request.
///
/// The caller guarantees what [`gather`] requires.
pub(crate) fn gather_split(
    func: &CudaFunction,
    stream: &CudaStream,
    p: &GatherParams,
    split_log2: u32,
    split_words: u32,
    blocks: u32,
) -> Result<(), DriverError> {
    let smem = p.stage_bytes * WARPS_PER_BLOCK;
    let mut b = stream.launch_builder(func);
    b.arg(p).arg(&split_log2).arg(&split_words);
    // SAFETY: as in `gather`: the kernel reads and writes only within the buffers `p` describes,
    // which the caller guarantees valid; `split_log2` and `split_words` may be any values (the
    // kernel clamps them).
    unsafe { b.launch(config(blocks, smem)) }?;
    Ok(())
}

/// Launches `ibp_gather_flat` (blocks of [`WARPS_PER_BLOCK`] warps, one request per warp at a time)
/// for an entry whose layout is flat ([`crate::layout::EntryLayout::flat_rows`]).
///
/// The caller guarantees what [`gather`] requires of `p.payload`, `p.rows`, `p.out` and `p.status`;
/// the kernel uses no other buffer.
pub(crate) fn gather_flat(
    func: &CudaFunction,
    stream: &CudaStream,
    p: &GatherParams,
    blocks: u32,
) -> Result<(), DriverError> {
    // SAFETY: the kernel reads the payload only inside `p.payload_size` bytes, the row list only
    // for requests below `p.count`, and writes `p.count * p.row_bytes` bytes of `p.out` and the
    // status block, all valid as the caller guarantees.
    unsafe { launch_with_params(func, stream, p, config(blocks, 0)) }
}

/// Launches `func`, whose one argument is `p`, with `cfg`.
///
/// # Safety
/// `func` must take one `IbpGatherParams` and access only memory that `p` makes valid for it (the
/// callers above state what that is for each kernel).
unsafe fn launch_with_params(
    func: &CudaFunction,
    stream: &CudaStream,
    p: &GatherParams,
    cfg: LaunchConfig,
) -> Result<(), DriverError> {
    let mut b = stream.launch_builder(func);
    b.arg(p);
    // SAFETY: the caller guarantees the kernel's accesses (this function's contract).
    unsafe { b.launch(cfg) }?;
    Ok(())
}

/// Launches `ibp_build_tables`: one block per chunk writes the per-position decode table of every
/// chunk whose `table_offsets` entry is not `u64::MAX`.
///
/// The caller guarantees what [`gather`] requires of `p.chunks` and `p.meta`, plus: `p.tables` is
/// writable for `tables_size` bytes, `p.table_offsets` holds `p.chunk_count` values, and every
/// chunk's table (32 bytes per `G * n` entry at its offset) lies inside `tables_size` (the kernel
/// also skips any that does not).
pub(crate) fn build_tables(
    func: &CudaFunction,
    stream: &CudaStream,
    p: &GatherParams,
    tables_size: u64,
) -> Result<(), DriverError> {
    let mut b = stream.launch_builder(func);
    b.arg(p).arg(&tables_size);
    // SAFETY: the kernel reads chunk descriptors and metadata within the sizes in `p` and writes
    // only inside `tables_size` bytes at `p.tables`, which the caller guarantees valid.
    unsafe { b.launch(config_warps(p.chunk_count, 0, TILE_WARPS)) }?;
    Ok(())
}

/// Launches `func`, `ibp_decode_tiles` or `ibp_decode_tiles_lean` (same parameters), on `stream`
/// (rows `p.first_row .. + p.count`, `p.rows` null).
///
/// The caller guarantees what [`gather`] requires, plus: `tile_starts` holds `p.chunk_count + 1`
/// `u32` tile indices consistent with the range and `tile_rows` (see the kernel's comment), the
/// dynamic shared memory [`tiles_smem`] is within the function's limit, and `tile_bytes` is a
/// multiple of 16.
#[allow(clippy::too_many_arguments)]
pub(crate) fn decode_tiles(
    func: &CudaFunction,
    stream: &CudaStream,
    p: &GatherParams,
    tile_starts: sys::CUdeviceptr,
    tile_rows: u32,
    tile_bytes: u32,
    table_entries: u32,
    blocks: u32,
) -> Result<(), DriverError> {
    let smem = tiles_smem(tile_rows, tile_bytes, table_entries);
    let mut b = stream.launch_builder(func);
    b.arg(p)
        .arg(&tile_starts)
        .arg(&tile_rows)
        .arg(&tile_bytes)
        .arg(&table_entries);
    // SAFETY: the kernel bounds-checks every index against the sizes in `p`, reads `tile_starts`
    // within `chunk_count + 1` entries and its shared memory within `smem` (its table holds
    // `table_entries` entries), as guaranteed above.
    unsafe { b.launch(config_warps(blocks, smem, TILE_WARPS)) }?;
    Ok(())
}

/// Launches `ibp_raw_gather`: `count` rows of `row_bytes` from `src` at `rows` to `out` (the kernel
/// skips indices not below `src_rows`).
///
/// The caller guarantees: `src` is readable for `src_rows * row_bytes` bytes, `rows` holds `count`
/// indices, `out` is writable for `count * row_bytes` bytes, all alive until completion.
#[allow(clippy::too_many_arguments)]
pub(crate) fn raw_gather(
    func: &CudaFunction,
    stream: &CudaStream,
    src: sys::CUdeviceptr,
    src_rows: u64,
    row_bytes: u64,
    rows: sys::CUdeviceptr,
    count: u64,
    out: sys::CUdeviceptr,
    blocks: u32,
) -> Result<(), DriverError> {
    let mut b = stream.launch_builder(func);
    b.arg(&src)
        .arg(&src_rows)
        .arg(&row_bytes)
        .arg(&rows)
        .arg(&count)
        .arg(&out);
    // SAFETY: per the caller's guarantees above the kernel stays within `src`, `rows` and `out`.
    unsafe { b.launch(config(blocks, 0)) }?;
    Ok(())
}

/// Launches `ibp_spin` (one thread that waits `ns` nanoseconds of GPU time).
pub(crate) fn spin(func: &CudaFunction, stream: &CudaStream, ns: u64) -> Result<(), DriverError> {
    let mut b = stream.launch_builder(func);
    b.arg(&ns);
    // SAFETY: the kernel touches no memory; its one argument is a `u64` as declared.
    unsafe {
        b.launch(LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1, 1, 1),
            shared_mem_bytes: 0,
        })
    }?;
    Ok(())
}

/// Launches `ibp_copy_records`: record `k` (`spans[2k]` offset, `spans[2k+1]` length) of `src` to
/// `out + k * out_stride`.
///
/// The caller guarantees: `src` is readable for `src_len` bytes (the kernel skips spans outside it
/// or longer than `out_stride`), `spans` holds `2 * count` values, `out` is writable for
/// `count * out_stride` bytes, all alive until completion.
#[allow(clippy::too_many_arguments)]
pub(crate) fn copy_records(
    func: &CudaFunction,
    stream: &CudaStream,
    src: sys::CUdeviceptr,
    src_len: u64,
    spans: sys::CUdeviceptr,
    count: u64,
    out: sys::CUdeviceptr,
    out_stride: u64,
    blocks: u32,
) -> Result<(), DriverError> {
    let mut b = stream.launch_builder(func);
    b.arg(&src)
        .arg(&src_len)
        .arg(&spans)
        .arg(&count)
        .arg(&out)
        .arg(&out_stride);
    // SAFETY: per the caller's guarantees above the kernel stays within `src`, `spans` and `out`.
    unsafe { b.launch(config(blocks, 0)) }?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn tile_constants_match_kernel() {
        let src = &crate::kernels::GATHER.full_source();
        let define = |name: &str| -> u32 {
            let line = src
                .lines()
                .find(|l| l.starts_with(&format!("#define {name} ")))
                .unwrap_or_else(|| panic!("{name} not defined"));
            line.split_whitespace().nth(2).unwrap().parse().unwrap()
        };
        assert_eq!(define("IBP_TILE_WARPS"), super::TILE_WARPS);
        assert_eq!(define("IBP_TILE_GUARD"), super::TILE_GUARD);
        assert_eq!(define("IBP_WARPS_PER_BLOCK"), super::WARPS_PER_BLOCK);
        // The table is two uint4 arrays of table_entries entries.
        assert!(src.contains("uint4* const tinfo = tmask + table_entries;"));
        assert_eq!(super::TABLE_ENTRY_BYTES, 2 * 16);
        // Offsets are rounded up to 16 bytes in both.
        assert!(src.contains("((4 * (tile_rows + 1) + 15) & ~15u)"));
        assert_eq!(super::tiles_smem(1, 32, 2), 16 + 32 + 16 + 64);
    }

    #[test]
    fn params_match_header() {
        assert_eq!(std::mem::size_of::<super::GatherParams>(), 16 * 8 + 6 * 4);
        let header = include_str!("../../../kernels/ibp_status.h");
        let start = header.find("struct IbpGatherParams {").unwrap();
        let body = &header[start..header[start..].find("};").unwrap() + start];
        let fields: Vec<&str> = body
            .lines()
            .skip(1)
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("//"))
            .collect();
        assert_eq!(fields.len(), 22);
        let (wide, narrow) = fields.split_at(16);
        assert!(
            wide.iter().all(|l| l.contains('*') || l.starts_with("ibp_u64")),
            "{wide:?}"
        );
        assert!(narrow.iter().all(|l| l.starts_with("ibp_u32")), "{narrow:?}");
    }
}
