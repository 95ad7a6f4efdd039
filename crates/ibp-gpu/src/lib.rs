//! IBP GPU decoder: CUDA kernels (`kernels/*.cu`, compiled at run time by NVRTC for the device's
//! architecture) driven through cudarc.
//!
//! - [`GpuDevice`]: one GPU (any ordinal), its context and compiled kernels. Every CUDA path first
//!   checks that libcuda and libnvrtc load; without them you get [`GpuError::NoGpu`], never a panic.
//! - [`HostEntry`]: an entry's compressed payload in page-locked, device-mapped, portable host
//!   memory, shareable by every GPU of the host.
//! - [`GpuEntry`]: an entry on one GPU (metadata in device memory; payload in device memory or
//!   mapped host memory) with [`gather`](GpuEntry::gather), range, chunk and whole-entry decodes,
//!   asynchronous on the caller's stream into the caller's buffer.
//! - [`ChunkForm`]: how a loader keeps each chunk: as stored or, with [`ChunkForm::FOR_GPU_READS`],
//!   coded chunks that are no cheaper to read than raw rows kept raw (decoded once on the CPU at
//!   load), so files written for size gather like `ibp compress --gpu` files. Loaders use
//!   `FOR_GPU_READS` for payloads in pinned host memory and keep chunks as stored in device memory
//!   unless given a form ([`ChunkForm::for_home`]).
//! - [`baselines`]: copy kernels used by the benchmark (uncompressed gather, record copy).
//! - [`kernel_cache`]: compiled kernels kept on disk across processes (`IBP_KERNEL_CACHE`).
//!
//! `examples/gather.rs` walks through a zero-copy gather from a `.ibp` file, checked against the CPU
//! reader.
//!
//! - `host` (feature `host-kernels`): the same kernels compiled for the CPU and run there, to
//!   test their logic on machines without a GPU.
//!
//! Unsafe code lives only in `nvrtc`, `pinned`, `launch`, `ffi_probe` and `host`, each block with a
//! `// SAFETY:` comment.
#![warn(missing_docs)]

pub mod baselines;
pub mod chunk_form;
pub mod device;
pub mod entry;
pub mod error;
mod ffi_probe;
#[cfg(feature = "host-kernels")]
pub mod host;
pub mod kernel_cache;
mod kernel_choice;
pub mod kernels;
mod launch;
pub mod layout;
pub mod nvrtc;
mod pending;
pub mod pinned;
pub mod status;
pub mod testdata;
mod tiling;

pub use chunk_form::ChunkForm;
/// The cudarc types the API takes (the caller's streams and device buffers), so that callers need
/// not depend on cudarc themselves.
pub use cudarc::driver::{CudaSlice, CudaStream};
pub use device::{device_count, driver_present, gpu_unavailable_reason, GpuDevice};
pub use entry::{
    GpuEntry, HostEntry, LeanShape, PayloadHome, PendingDecode, TileKernel, ROW_SPANS_MAX_BYTES,
    ROW_SPANS_MIN_ROW_BYTES,
};
pub use error::{GpuError, GpuResult};
pub use kernel_choice::{sparse_rows_chunk, SPARSE_GATHER_MIN_ROW_BYTES};
pub use layout::EntryLayout;
pub use pinned::PinnedBuffer;
pub use tiling::{RowSegments, TilePlan};
