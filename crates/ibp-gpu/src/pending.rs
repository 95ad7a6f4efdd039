//! A decode in flight: the kernel status block each launch writes its failures to ([`StatusBlock`],
//! pooled per entry), and [`PendingDecode`], which waits for an enqueued decode and turns the status
//! word into a typed error.
#![forbid(unsafe_code)]

use crate::device::GpuDevice;
use crate::error::{GpuError, GpuResult};
use crate::pinned::PinnedBuffer;
use crate::status::{KernelFailure, IBP_STATUS_CLEAR};
use cudarc::driver::{sys, CudaSlice, CudaStream, DevicePtr};
use ibp_format::{ErrorCode, FormatError};
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
pub(crate) struct StatusBlock {
    block: CudaSlice<u64>,
    pub(crate) ptr: sys::CUdeviceptr,
    flag: PinnedBuffer,
}

impl StatusBlock {
    /// A cleared block on `stream` (its word 0, its flag address set).
    pub(crate) fn new(device: &GpuDevice, stream: &Arc<CudaStream>) -> GpuResult<StatusBlock> {
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
pub(crate) type StatusPool = Mutex<Vec<StatusBlock>>;
/// Status blocks kept per entry (more than this many decodes in flight allocate new ones).
const STATUS_POOL_MAX: usize = 64;

/// Locks a mutex whose data stays valid even if a holder panicked (a pool or a cache).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A decode enqueued on a stream. [`wait`](PendingDecode::wait) synchronises the stream and turns
/// the kernel's status word into a typed error. Dropping it without waiting synchronises too.
#[must_use = "a decode's errors are only reported by wait()"]
pub struct PendingDecode<'a> {
    pub(crate) status: Option<StatusBlock>,
    /// The entry's pool, where `wait` returns the status word (zeroed).
    pub(crate) pool: Option<&'a StatusPool>,
    pub(crate) stream: Arc<CudaStream>,
    pub(crate) rows: Option<CudaSlice<u64>>,
    /// Kept alive until the decode completes.
    pub(crate) _tiles: Option<Arc<CudaSlice<u32>>>,
    pub(crate) first_row: u64,
    pub(crate) done: bool,
}

impl PendingDecode<'_> {
    pub(crate) fn empty(stream: &Arc<CudaStream>) -> Self {
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
