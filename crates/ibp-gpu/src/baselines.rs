//! Reference copy kernels for benchmarks: an uncompressed zero-copy gather and a copy of compressed
//! records ("ideal": only the compressed bytes, with the gather's access pattern).
#![forbid(unsafe_code)]

use crate::device::GpuDevice;
use crate::error::{GpuError, GpuResult};
use crate::launch;
use cudarc::driver::{sys, CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use ibp_format::{ErrorCode, FormatError};
use std::sync::Arc;

fn invalid(detail: impl Into<String>) -> GpuError {
    GpuError::Format(FormatError::new(ErrorCode::InvalidArgument, detail))
}

/// Readable bytes at a device address: a device allocation or a mapped pinned host buffer.
#[derive(Clone, Copy)]
pub enum Source<'a> {
    /// Device memory.
    Device(&'a CudaSlice<u8>),
    /// Page-locked host memory, mapped for the device.
    Pinned(&'a crate::pinned::PinnedBuffer),
}

impl Source<'_> {
    fn resolve(&self, device: &GpuDevice, stream: &CudaStream) -> GpuResult<(sys::CUdeviceptr, u64)> {
        match self {
            Source::Device(s) => Ok((s.device_ptr(stream).0, s.len() as u64)),
            Source::Pinned(p) => Ok((
                p.device_ptr(device.context())
                    .map_err(GpuError::driver("mapping pinned memory"))?,
                p.len() as u64,
            )),
        }
    }
}

/// Uncompressed gather: output row `k` is row `rows[k]` of `src` (rows of `row_bytes` bytes).
/// Indices not below the number of rows in `src` are skipped by the kernel.
pub fn raw_gather<O: DevicePtrMut<u8>>(
    device: &GpuDevice,
    src: Source<'_>,
    row_bytes: u64,
    rows: &CudaSlice<u64>,
    out: &mut O,
    stream: &Arc<CudaStream>,
) -> GpuResult<()> {
    let (src_ptr, src_len) = src.resolve(device, stream)?;
    let count = rows.len() as u64;
    if row_bytes == 0 || (out.len() as u64) < count.saturating_mul(row_bytes) {
        return Err(invalid("raw gather: output too small or zero row size"));
    }
    let (out_ptr, _g) = out.device_ptr_mut(stream);
    let rows_ptr = rows.device_ptr(stream).0;
    launch::raw_gather(
        &device.raw_gather_fn,
        stream,
        src_ptr,
        src_len / row_bytes,
        row_bytes,
        rows_ptr,
        count,
        out_ptr,
        device.blocks_for(count),
    )
    .map_err(GpuError::driver("launching ibp_raw_gather"))
}

/// Copies record `k` (`spans[2k]` byte offset into `src`, `spans[2k+1]` length) to
/// `out + k * out_stride`. Spans outside `src` or longer than `out_stride` are skipped.
pub fn copy_records<O: DevicePtrMut<u8>>(
    device: &GpuDevice,
    src: Source<'_>,
    spans: &CudaSlice<u64>,
    out: &mut O,
    out_stride: u64,
    stream: &Arc<CudaStream>,
) -> GpuResult<()> {
    let (src_ptr, src_len) = src.resolve(device, stream)?;
    let count = spans.len() as u64 / 2;
    if (out.len() as u64) < count.saturating_mul(out_stride) {
        return Err(invalid("record copy: output too small"));
    }
    let (out_ptr, _g) = out.device_ptr_mut(stream);
    let spans_ptr = spans.device_ptr(stream).0;
    launch::copy_records(
        &device.copy_records_fn,
        stream,
        src_ptr,
        src_len,
        spans_ptr,
        count,
        out_ptr,
        out_stride,
        device.blocks_for(count),
    )
    .map_err(GpuError::driver("launching ibp_copy_records"))
}

/// Keeps `stream` busy for `ns` nanoseconds of GPU time. Enqueued before a timed launch, it lets the
/// launch's host-side calls overlap GPU work, so events around the launch time the GPU's part alone.
pub fn spin(device: &GpuDevice, stream: &Arc<CudaStream>, ns: u64) -> GpuResult<()> {
    launch::spin(&device.spin_fn, stream, ns).map_err(GpuError::driver("launching ibp_spin"))
}
