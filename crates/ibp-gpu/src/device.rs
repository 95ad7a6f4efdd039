//! One GPU: its CUDA context, the kernels compiled for its architecture, and its properties.
//! Every CUDA path starts here, after checking that the driver library and NVRTC load.
#![forbid(unsafe_code)]

use crate::error::{GpuError, GpuResult};
use crate::kernels;
use crate::nvrtc;
use cudarc::driver::{sys, CudaContext, CudaFunction, CudaStream};
use cudarc::nvrtc::Ptx;
use std::sync::Arc;

/// Whether the CUDA driver library (libcuda) can be loaded. Never panics.
pub fn driver_present() -> bool {
    crate::ffi_probe::driver_lib_present()
}

/// Why no GPU can be used here, or `None` when the driver and NVRTC are present and at least one
/// device exists.
pub fn gpu_unavailable_reason() -> Option<String> {
    if !driver_present() {
        return Some("no CUDA driver (libcuda not found)".into());
    }
    if !nvrtc::nvrtc_present() {
        return Some("no NVRTC (libnvrtc not found)".into());
    }
    match device_count() {
        Ok(0) => Some("the CUDA driver reports no device".into()),
        Ok(_) => None,
        Err(e) => Some(format!("the CUDA driver failed to initialise: {e}")),
    }
}

/// Number of CUDA devices (`NoGpu` without a driver).
pub fn device_count() -> GpuResult<usize> {
    if !driver_present() {
        return Err(GpuError::NoGpu("no CUDA driver (libcuda not found)".into()));
    }
    std::panic::catch_unwind(CudaContext::device_count)
        .map_err(|_| GpuError::NoGpu("the CUDA driver could not be loaded".into()))?
        .map(|n| n.max(0) as usize)
        .map_err(GpuError::driver("counting devices"))
}

/// A GPU ready to decode: context, compiled kernels, properties.
pub struct GpuDevice {
    ctx: Arc<CudaContext>,
    pub(crate) gather_fn: CudaFunction,
    pub(crate) gather_flat_fn: CudaFunction,
    pub(crate) gather_split_fn: CudaFunction,
    /// `ibp_gather_sparse`: `ibp_gather` for entries with sparse tables.
    pub(crate) gather_sparse_fn: CudaFunction,
    pub(crate) tiles_fn: CudaFunction,
    /// The lean tile kernels, indexed by [`crate::LeanShape`].
    pub(crate) tiles_lean_fns: [CudaFunction; 5],
    pub(crate) tiles_pairs_fn: CudaFunction,
    pub(crate) build_tables_fn: CudaFunction,
    pub(crate) raw_gather_fn: CudaFunction,
    pub(crate) copy_records_fn: CudaFunction,
    pub(crate) spin_fn: CudaFunction,
    compute_capability: (i32, i32),
    sm_count: u32,
    name: String,
    max_smem_per_block: u32,
}

/// Compressed bytes per tile of `ibp_decode_tiles` (a tile holds at least one raw record).
pub(crate) const TILE_BYTES: u32 = 32 * 1024;
/// Most per-position table entries (`G * n`) of `ibp_decode_tiles`; larger chunks decode without.
pub(crate) const TABLE_MAX_ENTRIES: u32 = 1024;
/// Dynamic shared memory `ibp_decode_tiles` may use per block (guard, tile, slack, offsets, table).
/// (`tiling::tiling`: at most 1024 rows and `TILE_BYTES_MAX + 63` bytes per tile.)
pub(crate) const TILE_MAX_SMEM: u32 = crate::launch::tiles_smem(1024, TILE_BYTES_MAX + 64, TABLE_MAX_ENTRIES);
/// The largest tile [`tile_bytes`] allows.
pub(crate) const TILE_BYTES_MAX: u32 = 96 * 1024;

/// Compressed bytes per tile of `ibp_decode_tiles_lean` (rows of at most 64 words: a larger tile
/// spreads the per-tile work over more rows), while its table leaves room for it (see [`tile_bytes`]).
pub(crate) const LEAN_TILE_BYTES: u32 = 48 * 1024;
/// Shared memory per block that keeps 4 tile-kernel blocks on an SM of 228 KiB (1 KiB of each
/// block is reserved by the hardware).
pub(crate) const TILE_BLOCK_SMEM: u32 = 56 * 1024;
/// Compressed bytes per tile of `ibp_decode_tiles_lean_short` (built for 3 blocks per SM: the
/// largest tile, so the per-tile steps are spread over the most rows; GPU_NOTES entries 52, 55).
pub(crate) const SHORT_TILE_BYTES: u32 = 64 * 1024;
/// Shared memory per block that keeps 3 blocks of `ibp_decode_tiles_lean_short` on an SM.
pub(crate) const SHORT_BLOCK_SMEM: u32 = 75 * 1024;
/// Compressed bytes per tile of `ibp_decode_tiles_lean_long` (a lane per row: a warp decodes 32 rows
/// of a tile, so a large tile keeps the most warps busy; GPU_NOTES entry 62). 84 KiB (109 raw
/// Fashion-MNIST rows) rather than the 96 KiB that fit: +3 % on Fashion-MNIST's 256 MiB entries on
/// an H100, 80-84 KiB the best of 64-96 KiB (GPU_NOTES entry 74).
pub(crate) const LONG_TILE_BYTES: u32 = 84 * 1024;
/// Shared memory per block that keeps 2 blocks of `ibp_decode_tiles_lean_long` on an SM.
pub(crate) const LONG_BLOCK_SMEM: u32 = 113 * 1024;
/// Compressed bytes per tile of `ibp_decode_tiles_lean_vec` (vector lanes at 4 blocks per SM, no
/// per-position table: what [`VEC_BLOCK_SMEM`] leaves; GPU_NOTES entry 80: on an H100, 4 blocks per
/// SM with 42 KiB tiles decoded Fashion-MNIST 7 % faster than 3 with 56 KiB).
pub(crate) const VEC_TILE_BYTES: u32 = 40 * 1024;
/// Shared memory per block that keeps 4 blocks of `ibp_decode_tiles_lean_vec` on an SM, static
/// included.
pub(crate) const VEC_BLOCK_SMEM: u32 = 56 * 1024;
/// Static shared memory of `ibp_decode_tiles_lean_vec` (its vector tables, 10.6 KiB), rounded up
/// (the GPU tests check the built kernel's against it).
pub const VEC_STATIC_SMEM: u32 = 11 * 1024;
/// Dynamic shared memory a block of `ibp_decode_tiles_lean_vec` may take while 4 of its blocks fit
/// an SM of 228 KiB: a quarter of it, less the 1 KiB the hardware reserves per block and the
/// kernel's static shared memory (45 KiB).
pub const VEC_DYNAMIC_SMEM_MAX: u32 = 228 * 1024 / 4 - 1024 - VEC_STATIC_SMEM;

/// Whether the vector-lanes kernel's tiles hold the most rows whose records, offsets and guard fit
/// [`VEC_DYNAMIC_SMEM_MAX`] (`tiling::tiling`) rather than records within [`VEC_TILE_BYTES`] (whose
/// allowance of 4 KiB for 1024 rows' offsets and the 56 KiB block left about 4.7 KiB of each
/// block's share unused at Fashion-MNIST's 77 rows a tile): yes unless the environment variable
/// `IBP_VEC_TILE_FILL` is `0`, or `IBP_TILE_BYTES` sets every tile's size; read once per process.
pub(crate) fn vec_tiles_fill_smem() -> bool {
    static FILL: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FILL.get_or_init(|| {
        tile_bytes_override().is_none() && std::env::var("IBP_VEC_TILE_FILL").map_or(true, |v| v.trim() != "0")
    })
}

/// The environment variable `name` as a `u32` (tuning and A/B overrides); `None` when it is unset
/// or not a number.
pub(crate) fn env_u32(name: &str) -> Option<u32> {
    std::env::var(name).ok().and_then(|v| v.trim().parse::<u32>().ok())
}

/// The tile size every tile kernel takes when the environment variable `IBP_TILE_BYTES` sets one
/// (4096 to [`TILE_BYTES_MAX`], rounded down to 16 bytes), read once per process.
fn tile_bytes_override() -> Option<u32> {
    static OVERRIDE: std::sync::OnceLock<Option<u32>> = std::sync::OnceLock::new();
    *OVERRIDE.get_or_init(|| env_u32("IBP_TILE_BYTES").map(|b| b.clamp(4096, TILE_BYTES_MAX) & !15))
}

/// Compressed bytes per tile of a tile kernel of `class` (`TileKernel::tile_class`), whose table
/// takes `table_bytes` of shared memory: for the general kernels (0) [`TILE_BYTES`]; for the lean
/// ones (1) [`LEAN_TILE_BYTES`] where that and the table fit [`TILE_BLOCK_SMEM`] (with 4 KiB for
/// row offsets), never below [`TILE_BYTES`]; for the short-rows kernel (2) [`SHORT_TILE_BYTES`]
/// where they fit [`SHORT_BLOCK_SMEM`] (with 4 KiB for row offsets and 1 KiB of slack), never
/// below [`TILE_BYTES`]; for the long-rows kernel (3) [`LONG_TILE_BYTES`] where they fit
/// [`LONG_BLOCK_SMEM`] (the same allowances), never below [`TILE_BYTES`]; for the vector-lanes
/// kernel (4) [`VEC_TILE_BYTES`] where they fit [`VEC_BLOCK_SMEM`] less its static shared memory
/// (the same allowances), never below [`TILE_BYTES`]; or for all the value of
/// the environment variable `IBP_TILE_BYTES` (for tuning runs of the benchmark: 4096 to
/// [`TILE_BYTES_MAX`], rounded down to 16 bytes), read once per process ([`tile_bytes_override`]).
pub(crate) fn tile_bytes(class: usize, table_bytes: u32) -> u32 {
    let fit = |block: u32, most: u32| block.saturating_sub(table_bytes + 4096).clamp(TILE_BYTES, most) & !15;
    tile_bytes_override().unwrap_or(match class {
        0 => TILE_BYTES,
        1 => fit(TILE_BLOCK_SMEM, LEAN_TILE_BYTES),
        2 => fit(SHORT_BLOCK_SMEM - 1024, SHORT_TILE_BYTES),
        3 => fit(LONG_BLOCK_SMEM - 1024, LONG_TILE_BYTES),
        _ => fit(VEC_BLOCK_SMEM - 1024 - VEC_STATIC_SMEM, VEC_TILE_BYTES),
    })
}

/// Whether entries of short rows only take `ibp_decode_tiles_lean_short` (`kernel_choice::lean_shape`):
/// yes unless the environment variable `IBP_LEAN_SHORT` is `0` (then `ibp_decode_tiles_lean`, for
/// A/B runs of the benchmark), read once per process.
pub fn short_rows_kernel() -> bool {
    static SHORT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SHORT.get_or_init(|| std::env::var("IBP_LEAN_SHORT").map_or(true, |v| v.trim() != "0"))
}

/// Which entries of rows of more than 64 words take `ibp_decode_tiles_lean_long`
/// (`kernel_choice::long_rows_wanted`): the environment variable `IBP_LEAN_LONG` (0 none, 1 words of
/// at most 16 bits, 2 every width; unset: 1), read once per process.
pub fn long_rows_kernel() -> u32 {
    static LONG: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *LONG.get_or_init(|| env_u32("IBP_LEAN_LONG").unwrap_or(1))
}

/// Which entries take `ibp_decode_tiles_lean_vec` (`kernel_choice::lean_shape`): the environment
/// variable `IBP_LEAN_VEC` (0 none; 1, the default, those the long-rows kernel would take whose
/// chunks vector lanes all take; 2 every entry whose chunks vector lanes all take, for A/B runs),
/// read once per process; 0 also where `IBP_KERNEL_DEFINES` or `IBP_HOST_KERNELS_DEFINES` builds
/// the kernels with `-DIBP_LONG_VECTOR_LANES=0` (no vector lanes: that kernel would decode nothing).
pub fn vector_lanes_kernel() -> u32 {
    static VEC: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *VEC.get_or_init(|| {
        let off = ["IBP_KERNEL_DEFINES", "IBP_HOST_KERNELS_DEFINES"].iter().any(|var| {
            crate::kernels::defines_from_env(var)
                .iter()
                .filter_map(|o| o.strip_prefix("-DIBP_LONG_VECTOR_LANES="))
                .next_back()
                .is_some_and(|value| value == "0")
        });
        if off {
            0
        } else {
            env_u32("IBP_LEAN_VEC").unwrap_or(1)
        }
    })
}

/// Blocks per SM a launch of the tile kernels of `class` gets at most (each block takes a run of
/// ceil(tiles / blocks) consecutive tiles): 8 for the general kernels (0), 32 for the lean ones,
/// whose blocks are fewer per SM at once (2-4) and whose runs of tiles then end closer together
/// (GPU_NOTES entry 64: MiniLM KV bf16 rows +3-4 %, Fashion-MNIST +10 %, GloVe +2-7 % at 32 per SM
/// against 8; the general kernel's Cora rows did not move and its all-raw tiles lost 4 %).
pub(crate) fn tile_blocks_per_sm(class: usize) -> u32 {
    if class == 0 {
        8
    } else {
        32
    }
}

/// Tiles per SM a range decode by the long-rows kernel is cut into at least, its rows in segments
/// (`tiling::launch_tiles`): 2, or the environment variable `IBP_LONG_TILES_PER_SM` (read once
/// per process; 0 keeps the entry's tiles and whole rows) for tuning runs.
pub(crate) fn long_tiles_per_sm() -> u32 {
    static PER_SM: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *PER_SM.get_or_init(|| env_u32("IBP_LONG_TILES_PER_SM").unwrap_or(2))
}

/// The most blocks a tile-kernel launch gets, from the environment variable `IBP_TILE_MAX_BLOCKS`
/// (read once per process; unset: [`tile_blocks_per_sm`] per SM). For sanitizer runs of the GPU
/// tests: with few blocks each runs several tiles of a chunk, as on large entries (the tile start
/// carried from tile to tile).
pub(crate) fn tile_blocks_cap() -> Option<u32> {
    static CAP: std::sync::OnceLock<Option<u32>> = std::sync::OnceLock::new();
    *CAP.get_or_init(|| env_u32("IBP_TILE_MAX_BLOCKS"))
}

/// Whether the tile kernels of `class` may size their tiles by the record bytes the entry stores
/// rather than by raw rows (`tiling::tiling`: only where that gives [`tiles_by_records_gain`]): yes for
/// every class, unless the environment variable `IBP_TILE_RECORDS` (a bit per class, read once per
/// process) says otherwise for tuning runs; `0` sizes every tile by raw rows.
pub(crate) fn tiles_by_records(class: usize) -> bool {
    static CLASSES: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    let classes = *CLASSES.get_or_init(|| env_u32("IBP_TILE_RECORDS").unwrap_or(0b11111));
    class < 32 && (classes >> class) & 1 == 1
}

/// Whether range decodes by the tile kernels of `class` whose tiles need at most
/// [`tile_fill_waves`] waves of resident blocks, the last one partial, take
/// [`crate::tiling::fill_tile_rows`]'s smaller tiles: yes for every class, unless the
/// environment variable `IBP_TILE_FILL` (a bit per class, read once per process) says otherwise
/// for A/B runs; `0` turns it off (GPU_NOTES entry 75).
pub(crate) fn tile_fill(class: usize) -> bool {
    static CLASSES: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    let classes = *CLASSES.get_or_init(|| env_u32("IBP_TILE_FILL").unwrap_or(0b11111));
    class < 32 && (classes >> class) & 1 == 1
}

/// The most waves of resident blocks a range's tiles may need for [`tile_fill`] to shrink them
/// (`crate::tiling::fill_tile_rows`): 2 (GPU_NOTES entry 75: filling the second of two partial
/// waves gained 1-11 % wherever it changed the tiling; entries of 7-11 waves lost 1-6 % when
/// filled, and entry 76: of 3-6 waves none gained and several lost 2-5 %), or the environment
/// variable `IBP_TILE_FILL_WAVES` (read once per process; at least 1) for A/B runs.
pub(crate) fn tile_fill_waves() -> u64 {
    static WAVES: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *WAVES.get_or_init(|| env_u32("IBP_TILE_FILL_WAVES").map_or(2, |w| u64::from(w.max(1))))
}

/// Blocks of a tile kernel of `class` that fit on an SM at once with `smem` bytes of dynamic
/// shared memory each: the registers' limit (`__launch_bounds__`: 4 for the general and lean
/// kernels and the vector-lanes kernel, 3 for the short-rows kernel, 2 for the long-rows kernel) or 228 KiB
/// of shared memory (1 KiB of it per block reserved; the vector-lanes kernel's static shared
/// memory counted), whichever is fewer, and at least 1.
pub(crate) fn resident_tile_blocks(class: usize, smem: u32) -> u32 {
    let by_registers = match class {
        0 | 1 | 4 => 4,
        2 => 3,
        _ => 2,
    };
    let fixed = if class == 4 { VEC_STATIC_SMEM } else { 0 };
    (228 * 1024 / (smem + fixed + 1024)).clamp(1, by_registers)
}

/// How many times the raw rows a tile must hold for [`tiles_by_records`] to size it by records, in
/// percent, for tile kernels of `class`: 100 (any gain) for the vector-lanes kernel (4), whose
/// per-tile steps are shared by more rows at no cost to its decode (GPU_NOTES entry 82: Fashion-MNIST
/// 0.656-0.665 -> 0.680-0.700 of the D2D copy on an H100, 77 rows a tile instead of 52), 200
/// (twice) for the others; or for all the environment variable `IBP_TILE_RECORDS_GAIN` (read once
/// per process; at least 100) for tuning runs.
pub(crate) fn tiles_by_records_gain(class: usize) -> u32 {
    static GAIN: std::sync::OnceLock<Option<u32>> = std::sync::OnceLock::new();
    let chosen = *GAIN.get_or_init(|| env_u32("IBP_TILE_RECORDS_GAIN").map(|g| g.max(100)));
    chosen.unwrap_or(if class == 4 { 100 } else { 200 })
}

/// Whether `ibp_decode_tiles` tiles hold a multiple of its warps' rows (`tiling::balanced_tile_rows`):
/// yes unless the environment variable `IBP_TILE_BALANCE` is `0` (for A/B runs of the benchmark),
/// read once per process.
pub(crate) fn balanced_tiles() -> bool {
    static BALANCE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *BALANCE.get_or_init(|| std::env::var("IBP_TILE_BALANCE").map_or(true, |v| v.trim() != "0"))
}

/// Most per-position table entries (`G * n`) of one chunk for which a loaded entry builds a decode
/// table in device memory for `ibp_gather` (32 bytes each: at most 2 MiB per chunk).
pub(crate) const GATHER_TABLE_MAX_ENTRIES: u64 = 1 << 16;
/// Most bytes of decode tables one loaded entry keeps in device memory; later chunks go without.
pub(crate) const GATHER_TABLE_MAX_BYTES: u64 = 256 << 20;

/// Dynamic shared memory `ibp_gather` may use per block (4 warps, one 16 KiB staging buffer each).
pub(crate) const GATHER_MAX_SMEM: u32 = 4 * 16 * 1024;

impl GpuDevice {
    /// Opens device `ordinal`: creates (retains) its primary context, compiles the kernels for its
    /// compute capability with NVRTC and loads them. `NoGpu` without a driver, NVRTC or device.
    pub fn new(ordinal: usize) -> GpuResult<Arc<GpuDevice>> {
        if let Some(why) = gpu_unavailable_reason() {
            return Err(GpuError::NoGpu(why));
        }
        let count = device_count()?;
        if ordinal >= count {
            return Err(GpuError::NoGpu(format!(
                "device ordinal {ordinal} requested, {count} device(s) present"
            )));
        }
        let ctx = CudaContext::new(ordinal).map_err(GpuError::driver("creating the context"))?;
        let (major, minor) = ctx
            .compute_capability()
            .map_err(GpuError::driver("reading the compute capability"))?;
        let attr = |a| ctx.attribute(a).map_err(GpuError::driver("reading a device attribute"));
        let sm_count = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32;
        let max_smem_per_block =
            attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)? as u32;
        let name = ctx.name().unwrap_or_else(|_| "unknown".into());
        let load = |module: &kernels::KernelModule| -> GpuResult<Arc<cudarc::driver::CudaModule>> {
            let cubin = kernels::compile(module, major, minor)?;
            ctx.load_module(Ptx::from_binary(cubin.as_ref().clone()))
                .map_err(GpuError::driver(format!("loading {}", module.file)))
        };
        let gather_mod = load(&kernels::GATHER)?;
        let base_mod = load(&kernels::BASELINES)?;
        let func = |m: &Arc<cudarc::driver::CudaModule>, name: &str| {
            m.load_function(name)
                .map_err(GpuError::driver(format!("loading function {name}")))
        };
        // A function of the decoder module allowed `bytes` of dynamic shared memory.
        let with_smem = |name: &str, bytes: u32| {
            let f = func(&gather_mod, name)?;
            f.set_attribute(
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                bytes as i32,
            )
            .map_err(GpuError::driver(format!("raising {name}'s shared-memory limit")))?;
            Ok::<_, GpuError>(f)
        };
        // ibp_gather also has 2 KiB of static shared memory (chunk start rows).
        let smem = GATHER_MAX_SMEM.min(max_smem_per_block.saturating_sub(4096));
        let gather_fn = with_smem("ibp_gather", smem)?;
        let gather_split_fn = with_smem("ibp_gather_split", smem)?;
        let gather_sparse_fn = with_smem("ibp_gather_sparse", smem)?;
        let tiles_fn = with_smem("ibp_decode_tiles", TILE_MAX_SMEM.min(max_smem_per_block))?;
        let lean = |shape: crate::LeanShape| {
            with_smem(
                crate::LeanShape::KERNELS[shape as usize],
                TILE_MAX_SMEM.min(max_smem_per_block),
            )
        };
        let tiles_lean_fns = [
            lean(crate::LeanShape::Any)?,
            lean(crate::LeanShape::Mid)?,
            lean(crate::LeanShape::Short)?,
            lean(crate::LeanShape::Long)?,
            lean(crate::LeanShape::Vec)?,
        ];
        let tiles_pairs_fn = with_smem("ibp_decode_tiles_pairs", TILE_MAX_SMEM.min(max_smem_per_block))?;
        Ok(Arc::new(GpuDevice {
            gather_fn,
            gather_split_fn,
            gather_sparse_fn,
            gather_flat_fn: func(&gather_mod, "ibp_gather_flat")?,
            tiles_fn,
            tiles_lean_fns,
            tiles_pairs_fn,
            build_tables_fn: func(&gather_mod, "ibp_build_tables")?,
            raw_gather_fn: func(&base_mod, "ibp_raw_gather")?,
            copy_records_fn: func(&base_mod, "ibp_copy_records")?,
            spin_fn: func(&base_mod, "ibp_spin")?,
            ctx,
            compute_capability: (major, minor),
            sm_count,
            name,
            max_smem_per_block: smem,
        }))
    }

    /// The CUDA context.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// Device ordinal.
    pub fn ordinal(&self) -> usize {
        self.ctx.ordinal()
    }

    /// A new non-default stream on this device.
    pub fn new_stream(&self) -> GpuResult<Arc<CudaStream>> {
        self.ctx.new_stream().map_err(GpuError::driver("creating a stream"))
    }

    /// Compute capability `(major, minor)`.
    pub fn compute_capability(&self) -> (i32, i32) {
        self.compute_capability
    }

    /// Number of multiprocessors.
    pub fn sm_count(&self) -> u32 {
        self.sm_count
    }

    /// Device name as the driver reports it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Shared memory `ibp_gather` may use per block.
    pub(crate) fn gather_smem_limit(&self) -> u32 {
        self.max_smem_per_block
    }

    /// Grid size for `items` warp-sized work items: enough blocks to cover them, at most 32 per SM
    /// (kernels are grid-stride loops).
    pub(crate) fn blocks_for(&self, items: u64) -> u32 {
        let needed = items.div_ceil(crate::launch::WARPS_PER_BLOCK as u64);
        needed.clamp(1, self.sm_count.max(1) as u64 * 32) as u32
    }
}

impl GpuDevice {
    /// The function of tile kernel `kernel` (`Auto`, which a launch resolves first: the general one).
    pub(crate) fn tile_function(&self, kernel: crate::TileKernel) -> &CudaFunction {
        match kernel {
            crate::TileKernel::Lean(shape) => &self.tiles_lean_fns[shape as usize],
            crate::TileKernel::GeneralPairs => &self.tiles_pairs_fn,
            crate::TileKernel::General | crate::TileKernel::Auto => &self.tiles_fn,
        }
    }

    /// How many blocks of tile kernel `kernel` the driver keeps on one SM at once when each asks
    /// for `shared_bytes` of dynamic shared memory (a [`crate::TilePlan`]'s `shared_bytes`).
    pub fn resident_tile_blocks(&self, kernel: crate::TileKernel, shared_bytes: u32) -> GpuResult<u32> {
        self.tile_function(kernel)
            .occupancy_max_active_blocks_per_multiprocessor(crate::launch::TILE_WARPS * 32, shared_bytes as usize, None)
            .map_err(GpuError::driver("reading a tile kernel's occupancy"))
    }

    /// `(kernel, registers per thread, local bytes per thread, static shared bytes)` of each kernel.
    pub fn kernel_attributes(&self) -> Vec<(&'static str, i32, i32, i32)> {
        use sys::CUfunction_attribute::*;
        let fns = [
            ("ibp_gather", &self.gather_fn),
            ("ibp_gather_flat", &self.gather_flat_fn),
            ("ibp_gather_split", &self.gather_split_fn),
            ("ibp_gather_sparse", &self.gather_sparse_fn),
            ("ibp_decode_tiles", &self.tiles_fn),
            ("ibp_decode_tiles_lean", &self.tiles_lean_fns[0]),
            ("ibp_decode_tiles_lean_mid", &self.tiles_lean_fns[1]),
            ("ibp_decode_tiles_lean_short", &self.tiles_lean_fns[2]),
            ("ibp_decode_tiles_lean_long", &self.tiles_lean_fns[3]),
            ("ibp_decode_tiles_lean_vec", &self.tiles_lean_fns[4]),
            ("ibp_decode_tiles_pairs", &self.tiles_pairs_fn),
            ("ibp_build_tables", &self.build_tables_fn),
            ("ibp_raw_gather", &self.raw_gather_fn),
            ("ibp_copy_records", &self.copy_records_fn),
            ("ibp_spin", &self.spin_fn),
        ];
        fns.iter()
            .map(|(name, f)| {
                let get = |a| f.get_attribute(a).unwrap_or(-1);
                (
                    *name,
                    get(CU_FUNC_ATTRIBUTE_NUM_REGS),
                    get(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES),
                    get(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES),
                )
            })
            .collect()
    }
}
