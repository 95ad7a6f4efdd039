//! Probes for the CUDA driver library, made before any other driver call (cudarc panics when a
//! library it needs cannot be loaded).

/// Whether libcuda can be loaded. Never panics.
pub fn driver_lib_present() -> bool {
    std::panic::catch_unwind(|| {
        // SAFETY: `is_culib_present` only tries to dlopen the candidate library names and drops
        // the handles; it calls no driver function.
        unsafe { cudarc::driver::sys::is_culib_present() }
    })
    .unwrap_or(false)
}
