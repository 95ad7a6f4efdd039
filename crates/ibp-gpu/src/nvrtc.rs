//! NVRTC: compiles CUDA C++ source to a cubin for one real architecture (`sm_XX`).
//!
//! The only FFI here is NVRTC's C API through `cudarc::nvrtc::{result, sys}`; every call is made
//! only after [`nvrtc_present`] has confirmed that the library loads (cudarc panics otherwise).

use cudarc::nvrtc::{result, sys};
use std::ffi::{c_char, CStr, CString};

/// Whether libnvrtc can be loaded (never panics).
pub fn nvrtc_present() -> bool {
    // SAFETY: `is_culib_present` only tries to dlopen the candidate library names and drops the
    // handles; it calls no NVRTC function.
    std::panic::catch_unwind(|| unsafe { sys::is_culib_present() }).unwrap_or(false)
}

/// NVRTC's version `(major, minor)`, or `None` when NVRTC is absent.
pub fn nvrtc_version() -> Option<(i32, i32)> {
    if !nvrtc_present() {
        return None;
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: the library is present (checked above); both out-pointers are valid for writes.
    let rc = unsafe { sys::nvrtcVersion(&mut major, &mut minor) };
    rc.result().ok().map(|_| (major, minor))
}

/// A compiled program: the cubin for the requested architecture and NVRTC's log.
pub struct Compiled {
    /// The cubin (ELF) for the `sm_XX` the program was compiled for.
    pub cubin: Vec<u8>,
    /// NVRTC's log (warnings), possibly empty.
    pub log: String,
}

/// Owns an `nvrtcProgram` and destroys it on drop.
struct Program(sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: `self.0` was created by `nvrtcCreateProgram` and is destroyed exactly once.
        let _ = unsafe { result::destroy_program(self.0) };
    }
}

fn log_of(prog: &Program) -> String {
    // SAFETY: `prog` is a live program; the returned buffer is NUL-terminated by NVRTC.
    match unsafe { result::get_program_log(prog.0) } {
        Ok(buf) if !buf.is_empty() => {
            // SAFETY: NVRTC writes a NUL-terminated string of the size it reported.
            unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned()
        }
        _ => String::new(),
    }
}

/// Compiles `source` (named `name` in diagnostics) with `options` (e.g.
/// `--gpu-architecture=sm_90`) and returns the cubin. Errors carry NVRTC's log.
///
/// The caller must have checked [`nvrtc_present`].
pub fn compile_cubin(source: &str, name: &str, options: &[String]) -> Result<Compiled, String> {
    if !nvrtc_present() {
        return Err("NVRTC (libnvrtc) not found".into());
    }
    let src = CString::new(source).map_err(|_| "kernel source contains a NUL byte".to_string())?;
    let cname = CString::new(name).map_err(|_| "kernel name contains a NUL byte".to_string())?;
    let prog = Program(result::create_program(&src, Some(&cname)).map_err(|e| format!("nvrtcCreateProgram: {e}"))?);
    // SAFETY: `prog` is live; options are converted to NUL-terminated strings by cudarc.
    let compiled = unsafe { result::compile_program(prog.0, options) };
    let log = log_of(&prog);
    if let Err(e) = compiled {
        return Err(format!("{e}: {log}"));
    }
    let mut size = 0usize;
    // SAFETY: `prog` compiled successfully; `size` is a valid out-pointer.
    unsafe { sys::nvrtcGetCUBINSize(prog.0, &mut size) }
        .result()
        .map_err(|e| format!("nvrtcGetCUBINSize: {e}"))?;
    if size == 0 {
        return Err("NVRTC produced no cubin (was a real sm_XX architecture requested?)".into());
    }
    let mut cubin = vec![0u8; size];
    // SAFETY: `cubin` has exactly the `size` bytes NVRTC reported for this program.
    unsafe { sys::nvrtcGetCUBIN(prog.0, cubin.as_mut_ptr() as *mut c_char) }
        .result()
        .map_err(|e| format!("nvrtcGetCUBIN: {e}"))?;
    Ok(Compiled { cubin, log })
}
