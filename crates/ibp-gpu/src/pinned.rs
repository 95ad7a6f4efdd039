//! Page-locked host memory mapped for the device (zero-copy): `cuMemHostAlloc` with
//! `DEVICEMAP | PORTABLE`, so every context of the process (every GPU) can read it through the
//! pointer `cuMemHostGetDevicePointer_v2` gives in that context.

use cudarc::driver::{result, sys, CudaContext, DriverError};
use std::sync::Arc;

/// A zero-initialised page-locked host buffer, mapped into the address space of every GPU.
pub struct PinnedBuffer {
    ptr: *mut u8,
    len: usize,
    /// The context that allocated it (bound again to free it).
    ctx: Arc<CudaContext>,
}

// SAFETY: the buffer is plain host memory owned by this value; `&self` only hands out shared
// slices and `&mut self` exclusive ones, so the usual aliasing rules carry over across threads.
unsafe impl Send for PinnedBuffer {}
// SAFETY: as above: no interior mutability through `&self`.
unsafe impl Sync for PinnedBuffer {}

impl PinnedBuffer {
    /// Allocates `len` (at least 1) zeroed bytes of page-locked, device-mapped, portable memory.
    pub fn new(ctx: &Arc<CudaContext>, len: usize) -> Result<PinnedBuffer, DriverError> {
        let len = len.max(1);
        ctx.bind_to_thread()?;
        let flags = sys::CU_MEMHOSTALLOC_DEVICEMAP | sys::CU_MEMHOSTALLOC_PORTABLE;
        // SAFETY: a context is current (bound above); `malloc_host` returns a fresh allocation of
        // `len` bytes or an error.
        let raw = unsafe { result::malloc_host(len, flags) }? as *mut u8;
        assert!(!raw.is_null(), "cuMemHostAlloc returned success and a null pointer");
        // SAFETY: `raw` points to `len` writable bytes that nothing else references yet.
        unsafe { std::ptr::write_bytes(raw, 0, len) };
        Ok(PinnedBuffer {
            ptr: raw,
            len,
            ctx: ctx.clone(),
        })
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false (a buffer holds at least one byte).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `ptr` is valid for `len` initialised bytes for the lifetime of `self`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// The bytes, mutably.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as in `as_slice`, and `&mut self` guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }

    /// The device address of the buffer in `ctx` (any context: the memory is portable).
    pub fn device_ptr(&self, ctx: &Arc<CudaContext>) -> Result<sys::CUdeviceptr, DriverError> {
        ctx.bind_to_thread()?;
        let mut dptr: sys::CUdeviceptr = 0;
        // SAFETY: `ptr` is a live allocation from `cuMemHostAlloc` with DEVICEMAP|PORTABLE; the
        // out-pointer is valid; flags must be 0.
        unsafe { sys::cuMemHostGetDevicePointer_v2(&mut dptr, self.ptr as *mut _, 0) }.result()?;
        Ok(dptr)
    }
}

impl Drop for PinnedBuffer {
    fn drop(&mut self) {
        let _ = self.ctx.bind_to_thread();
        // SAFETY: `ptr` came from `cuMemHostAlloc` and is freed exactly once; users of the device
        // mapping hold an `Arc` to the owner, so no kernel can still be reading it once this runs
        // unless a caller dropped it with work in flight (documented on the owning types).
        let _ = unsafe { result::free_host(self.ptr as *mut _) };
    }
}
