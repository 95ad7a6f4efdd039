//! The CUDA sources in `kernels/`, embedded at build time and compiled at run time by NVRTC for the
//! device's architecture.
#![forbid(unsafe_code)]

use crate::error::{GpuError, GpuResult};
use crate::{kernel_cache, nvrtc};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

/// `kernels/ibp_status.h`: status codes and shared structs, prepended to every module.
pub const STATUS_H: &str = include_str!("../../../kernels/ibp_status.h");

/// One kernel module (one `.cu` file).
#[derive(Debug, Clone, Copy)]
pub struct KernelModule {
    /// File name in `kernels/`.
    pub file: &'static str,
    /// The file's text.
    pub body: &'static str,
    /// `extern "C"` entry points the module defines.
    pub functions: &'static [&'static str],
}

/// The decoder.
pub const GATHER: KernelModule = KernelModule {
    file: "ibp_gather.cu",
    body: include_str!("../../../kernels/ibp_gather.cu"),
    functions: &[
        "ibp_gather",
        "ibp_decode_tiles",
        "ibp_decode_tiles_lean",
        "ibp_decode_tiles_lean_mid",
        "ibp_decode_tiles_lean_short",
        "ibp_decode_tiles_pairs",
    ],
};

/// Benchmark baselines (uncompressed gather, record copy).
pub const BASELINES: KernelModule = KernelModule {
    file: "ibp_baselines.cu",
    body: include_str!("../../../kernels/ibp_baselines.cu"),
    functions: &["ibp_raw_gather", "ibp_copy_records", "ibp_spin"],
};

/// Every module.
pub const ALL_MODULES: [KernelModule; 2] = [GATHER, BASELINES];

impl KernelModule {
    /// The source NVRTC compiles: `ibp_status.h`, then the file (with a `#line` so diagnostics
    /// point into the right file).
    pub fn full_source(&self) -> String {
        format!(
            "#line 1 \"ibp_status.h\"\n{STATUS_H}\n#line 1 \"{}\"\n{}",
            self.file, self.body
        )
    }
}

/// NVRTC options for compute capability `major.minor`: a real architecture, so the result is a
/// cubin with no PTX JIT step on the driver.
pub fn compile_options(major: i32, minor: i32) -> Vec<String> {
    vec![
        format!("--gpu-architecture=sm_{major}{minor}"),
        "--std=c++17".into(),
        "-lineinfo".into(),
    ]
}

/// Extra NVRTC options from the environment variable `IBP_KERNEL_DEFINES` (whitespace-separated,
/// each of the form `-DNAME=VALUE`), for tuning experiments such as
/// `IBP_KERNEL_DEFINES=-DIBP_TILE_MIN_BLOCKS=3`; anything else in it is ignored.
pub fn extra_options_from_env() -> Vec<String> {
    std::env::var("IBP_KERNEL_DEFINES")
        .map(|v| {
            v.split_whitespace()
                .filter(|o| o.starts_with("-D") && o.len() > 2)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Compiles `module` for `sm_{major}{minor}` (plus [`extra_options_from_env`]), caching the cubin
/// per (module, architecture) for the life of the process, and on disk across processes where the
/// environment names a cache directory ([`crate::kernel_cache`]).
pub fn compile(module: &KernelModule, major: i32, minor: i32) -> GpuResult<Arc<Vec<u8>>> {
    type Cache = Mutex<HashMap<(&'static str, i32, i32), Arc<Vec<u8>>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = (module.file, major, minor);
    if let Some(c) = cache.lock().expect("kernel cache poisoned").get(&key) {
        return Ok(c.clone());
    }
    let dir = kernel_cache::cache_dir_from_env();
    let (cubin, _) = compile_cached(module, major, minor, dir.as_deref())?;
    cache.lock().expect("kernel cache poisoned").insert(key, cubin.clone());
    Ok(cubin)
}

/// Compiles `module` for `sm_{major}{minor}` (plus [`extra_options_from_env`]) through the cubin
/// cache in `cache_dir` (none: always NVRTC); returns the cubin and whether it came from the cache.
/// A cache file that cannot be read or does not match is replaced; one that cannot be written is
/// skipped.
pub fn compile_cached(
    module: &KernelModule,
    major: i32,
    minor: i32,
    cache_dir: Option<&Path>,
) -> GpuResult<(Arc<Vec<u8>>, bool)> {
    let version = nvrtc::nvrtc_version().ok_or_else(|| GpuError::NoGpu("NVRTC (libnvrtc) not found".into()))?;
    let mut options = compile_options(major, minor);
    options.extend(extra_options_from_env());
    let source = module.full_source();
    let cached = cache_dir.map(|dir| {
        let key = kernel_cache::cache_key(module.file, &source, &options, version);
        let path = kernel_cache::cache_path(dir, module.file, &format!("sm_{major}{minor}"), &key);
        (key, path)
    });
    if let Some((key, path)) = &cached {
        if let Some(cubin) = kernel_cache::load(path, key) {
            return Ok((Arc::new(cubin), true));
        }
    }
    let compiled = nvrtc::compile_cubin(&source, module.file, &options).map_err(|log| GpuError::Compile {
        module: module.file.into(),
        log,
    })?;
    if let Some((key, path)) = &cached {
        let _ = kernel_cache::store(path, key, &compiled.cubin);
    }
    Ok((Arc::new(compiled.cubin), false))
}
