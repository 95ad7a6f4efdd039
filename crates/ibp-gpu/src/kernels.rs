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

/// One kernel module (one `.cu` file and the parts it includes).
#[derive(Debug, Clone, Copy)]
pub struct KernelModule {
    /// File name in `kernels/`.
    pub file: &'static str,
    /// The file's text.
    pub body: &'static str,
    /// The files it includes with `#include "NAME"` (paths relative to `kernels/`), which
    /// [`KernelModule::full_source`] puts in place of those lines: NVRTC gets one source, with no
    /// include paths, while a C++ compiler (kernels/host) reads the same files through the includes.
    pub parts: &'static [KernelPart],
    /// `extern "C"` entry points the module defines.
    pub functions: &'static [&'static str],
}

/// A file a kernel module includes.
#[derive(Debug, Clone, Copy)]
pub struct KernelPart {
    /// The name its `#include` line gives, relative to `kernels/`.
    pub name: &'static str,
    /// The file's text.
    pub text: &'static str,
}

/// `kernels/ibp_gather/NAME`, embedded.
macro_rules! gather_part {
    ($name:literal) => {
        KernelPart {
            name: concat!("ibp_gather/", $name),
            text: include_str!(concat!("../../../kernels/ibp_gather/", $name)),
        }
    };
}

/// The decoder: `ibp_gather.cu` and its parts (one per section of the decode, in the order it
/// includes them).
pub const GATHER: KernelModule = KernelModule {
    file: "ibp_gather.cu",
    body: include_str!("../../../kernels/ibp_gather.cu"),
    parts: &[
        gather_part!("words.cuh"),
        gather_part!("records.cuh"),
        gather_part!("copies.cuh"),
        gather_part!("sparse_rows.cuh"),
        gather_part!("tables.cuh"),
        gather_part!("pairs.cuh"),
        gather_part!("gather_rows.cuh"),
        gather_part!("gather_split.cuh"),
        gather_part!("gather_flat.cuh"),
        gather_part!("gather_tables.cuh"),
        gather_part!("tiles.cuh"),
        gather_part!("lean.cuh"),
        gather_part!("short_rows.cuh"),
        gather_part!("vector_lanes.cuh"),
        gather_part!("tile_kernels.cuh"),
    ],
    functions: &[
        "ibp_gather",
        "ibp_gather_split",
        "ibp_gather_sparse",
        "ibp_gather_flat",
        "ibp_build_tables",
        "ibp_decode_tiles",
        "ibp_decode_tiles_lean",
        "ibp_decode_tiles_lean_mid",
        "ibp_decode_tiles_lean_short",
        "ibp_decode_tiles_lean_long",
        "ibp_decode_tiles_lean_vec",
        "ibp_decode_tiles_pairs",
    ],
};

/// Benchmark baselines (uncompressed gather, record copy).
pub const BASELINES: KernelModule = KernelModule {
    file: "ibp_baselines.cu",
    body: include_str!("../../../kernels/ibp_baselines.cu"),
    parts: &[],
    functions: &["ibp_raw_gather", "ibp_copy_records", "ibp_spin"],
};

/// Every module.
pub const ALL_MODULES: [KernelModule; 2] = [GATHER, BASELINES];

impl KernelModule {
    /// The source NVRTC compiles: `ibp_status.h`, then the file with each `#include` of one of its
    /// [`parts`](KernelModule::parts) replaced by that part's text (with `#line` directives, so
    /// diagnostics and line info point into the right file).
    pub fn full_source(&self) -> String {
        let mut out = format!("#line 1 \"ibp_status.h\"\n{STATUS_H}\n#line 1 \"{}\"\n", self.file);
        for (i, line) in self.body.lines().enumerate() {
            match self.part_included_by(line) {
                Some(part) => {
                    out.push_str(&format!("#line 1 \"{}\"\n{}", part.name, part.text));
                    if !part.text.ends_with('\n') {
                        out.push('\n');
                    }
                    out.push_str(&format!("#line {} \"{}\"\n", i + 2, self.file));
                }
                None => {
                    out.push_str(line);
                    out.push('\n');
                }
            }
        }
        out
    }

    /// The part a line `#include "NAME"` names, if NAME is one of this module's parts.
    pub fn part_included_by(&self, line: &str) -> Option<&'static KernelPart> {
        let name = quoted_include(line)?;
        self.parts.iter().find(|p| p.name == name)
    }
}

/// NAME of a line `#include "NAME"`.
fn quoted_include(line: &str) -> Option<&str> {
    line.trim()
        .strip_prefix("#include")?
        .trim()
        .strip_prefix('"')?
        .strip_suffix('"')
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
    defines_from_env("IBP_KERNEL_DEFINES")
}

/// The `-DNAME=VALUE` options of the environment variable `var` (whitespace-separated; anything
/// else in it is ignored): `IBP_KERNEL_DEFINES` for the device's kernels, `IBP_HOST_KERNELS_DEFINES`
/// for the CPU-run ones.
pub fn defines_from_env(var: &str) -> Vec<String> {
    std::env::var(var)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The quoted `#include` names of `text`, in order.
    fn quoted_includes(text: &str) -> Vec<&str> {
        text.lines().filter_map(quoted_include).collect()
    }

    #[test]
    fn every_part_is_included_once_in_order_and_nothing_else_is() {
        for module in ALL_MODULES {
            let names: Vec<&str> = module.parts.iter().map(|p| p.name).collect();
            assert_eq!(quoted_includes(module.body), names, "{}", module.file);
            for part in module.parts {
                assert!(quoted_includes(part.text).is_empty(), "{} includes a file", part.name);
            }
            let source = module.full_source();
            assert!(
                quoted_includes(&source).is_empty(),
                "{}: an include was left",
                module.file
            );
            for part in module.parts {
                assert_eq!(source.matches(part.text.trim_end()).count(), 1, "{}", part.name);
            }
        }
    }

    #[test]
    fn every_file_of_the_parts_folder_is_a_part() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../kernels/ibp_gather");
        let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| format!("ibp_gather/{}", e.unwrap().file_name().to_string_lossy()))
            .collect();
        on_disk.sort();
        let mut listed: Vec<String> = GATHER.parts.iter().map(|p| p.name.to_string()).collect();
        listed.sort();
        assert_eq!(on_disk, listed);
    }

    #[test]
    fn line_directives_point_back_into_the_including_file() {
        let source = GATHER.full_source();
        let body_lines: Vec<&str> = GATHER.body.lines().collect();
        // After each part, a `#line N "ibp_gather.cu"` whose line N is the one after the include.
        let mut lines = source.lines();
        let mut checked = 0;
        while let Some(l) = lines.next() {
            if let Some(rest) = l.strip_prefix("#line ") {
                let (n, file) = rest.split_once(' ').unwrap();
                if file == "\"ibp_gather.cu\"" && n != "1" {
                    let n: usize = n.parse().unwrap();
                    let next = lines.next().unwrap_or("");
                    let expected = body_lines.get(n - 1).copied().unwrap_or("");
                    // Line n itself, or (an include) the directive that starts its part.
                    match GATHER.part_included_by(expected) {
                        Some(part) => assert_eq!(next, format!("#line 1 \"{}\"", part.name), "line {n}"),
                        None => assert_eq!(next, expected, "line {n}"),
                    }
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, GATHER.parts.len());
    }
}
