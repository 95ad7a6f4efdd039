//! Compiles every kernel for sm_90 through NVRTC alone (no GPU or driver needed). Runs in CI with
//! `tools/ci-nvrtc.sh`; prints SKIPPED when NVRTC is absent, unless `IBP_REQUIRE_NVRTC=1`.

use ibp_gpu::kernels::{compile_options, ALL_MODULES};
use ibp_gpu::nvrtc::{compile_cubin, nvrtc_present, nvrtc_version};

/// Whether NVRTC is here; without it, prints that `what` was skipped (or fails when
/// `IBP_REQUIRE_NVRTC=1`, as in CI).
fn nvrtc_or_skip(what: &str) -> bool {
    if nvrtc_present() {
        return true;
    }
    if std::env::var("IBP_REQUIRE_NVRTC").as_deref() == Ok("1") {
        panic!("IBP_REQUIRE_NVRTC=1 but libnvrtc could not be loaded (set LD_LIBRARY_PATH, see tools/ci-nvrtc.sh)");
    }
    println!("SKIPPED: no NVRTC (libnvrtc not found); {what} not compiled");
    false
}

#[test]
fn nvrtc_compiles_for_sm90() {
    if !nvrtc_or_skip("kernels were") {
        return;
    }
    println!("NVRTC version {:?}", nvrtc_version());
    for module in ALL_MODULES {
        let compiled = compile_cubin(&module.full_source(), module.file, &compile_options(9, 0))
            .unwrap_or_else(|log| panic!("{} failed to compile for sm_90:\n{log}", module.file));
        // A cubin is an ELF image.
        assert_eq!(&compiled.cubin[..4], b"\x7fELF", "{}: not a cubin", module.file);
        for f in module.functions {
            let name = f.as_bytes();
            assert!(
                compiled.cubin.windows(name.len()).any(|w| w == name),
                "{}: entry point {f} missing from the cubin",
                module.file
            );
        }
        assert!(
            !compiled.log.contains("warning"),
            "{}: NVRTC warnings:\n{}",
            module.file,
            compiled.log
        );
    }
}

#[test]
fn a_kernel_error_reports_the_log() {
    if !nvrtc_present() {
        println!("SKIPPED: no NVRTC (libnvrtc not found)");
        return;
    }
    let err = compile_cubin(
        "extern \"C\" __global__ void k() { undefined_thing(); }",
        "bad.cu",
        &compile_options(9, 0),
    )
    .err()
    .expect("broken source must not compile");
    assert!(err.contains("undefined_thing"), "log does not name the error: {err}");
}

/// The decoder's A/B switches that `bench/GPU_NOTES.md` keeps for measurements (set on the device
/// through `IBP_KERNEL_DEFINES`): each non-default setting must still compile, without warnings.
/// Switches of different code paths share a compile (each compile of the decoder takes ~20 s).
const AB_SWITCHES: [&[&str]; 4] = [
    &[
        "-DIBP_LEAN_HOIST=0",
        "-DIBP_LEAN_UNIFORM_T=0",
        "-DIBP_GATHER_LEAN_LOOKUP=0",
        "-DIBP_LEAN_SHAPED=0",
        "-DIBP_TILES_PAIRS_KERNEL=0",
        "-DIBP_SMALL_ROWS_ANY_F=0",
        "-DIBP_TILE_W16_PAIRS=0",
        "-DIBP_LEAN_RAW_BATCH=0",
        "-DIBP_LEAN_TODO_LOOP=0",
        "-DIBP_LEAN_THREAD_ROWS=0",
        "-DIBP_LEAN_THREAD_BYTES=0",
        "-DIBP_GATHER_SPANS=0",
        "-DIBP_TILE_CHUNK_CACHE=0",
        "-DIBP_TILE_LEN_UNROLL=0",
        "-DIBP_TILE_CARRY_START=0",
        "-DIBP_GATHER_DIAG=2",
        "-DIBP_GATHER_TIMELINE=1",
        "-DIBP_LONG_VECTOR_LANES=0",
    ],
    &[
        "-DIBP_LEAN_HOIST=2",
        "-DIBP_LEAN_THREAD_ROWS=32",
        "-DIBP_LEAN_LANE_BYTES=16",
        "-DIBP_LEAN_THREAD_A1_ONLY=1",
        "-DIBP_SLICE_RAW_VECS=0",
        "-DIBP_SLICE_BITBUF=0",
        "-DIBP_GATHER_MIN_BLOCKS=8",
        "-DIBP_GATHER_SPARSE_MIN_BLOCKS=7",
        "-DIBP_LONG_DIAG=2",
        "-DIBP_LONG_VECTOR_LANES=2",
        "-DIBP_GATHER_DIAG=1",
    ],
    &[
        "-DIBP_LEAN_HOIST=4",
        "-DIBP_SLICE_ONE_ENTRY=1",
        "-DIBP_LONG_WIDE_READS=1",
        "-DIBP_ROUND_BALLOT_SCAN=1",
        "-DIBP_LONG_LEAN_VECS=0",
        "-DIBP_LONG_DIAG=1",
        "-DIBP_LONG_VECTOR_LANES=1",
        "-DIBP_GATHER_SPARSE_MIN_BLOCKS=6",
        "-DIBP_STORE_WORD_HALVES=0",
    ],
    &[
        "-DIBP_LONG_VECTOR_LANES=4",
        "-DIBP_VL_PAD_WORDS=1",
        "-DIBP_VL_BALANCED=0",
        "-DIBP_VL_DEFER_CHECKS=0",
        "-DIBP_LEAN_VEC_MIN_BLOCKS=3",
        "-DIBP_SPARSE_COMPACT=0",
    ],
];

#[test]
fn ab_switches_compile_for_sm90() {
    if !nvrtc_or_skip("the A/B switches were") {
        return;
    }
    let module = ibp_gpu::kernels::GATHER;
    for switches in AB_SWITCHES {
        let switch = switches.join(" ");
        let mut options = compile_options(9, 0);
        options.extend(switches.iter().map(|s| s.to_string()));
        let compiled = compile_cubin(&module.full_source(), module.file, &options)
            .unwrap_or_else(|log| panic!("{} with {switch} failed to compile:\n{log}", module.file));
        assert_eq!(&compiled.cubin[..4], b"\x7fELF", "{switch}: not a cubin");
        assert!(
            !compiled.log.contains("warning"),
            "{switch}: NVRTC warnings:\n{}",
            compiled.log
        );
    }
}

/// The cubin cache on disk: a second compile of a module is read from the cache (the same bytes),
/// and a damaged cache file is compiled again and replaced, never loaded.
#[test]
fn kernel_cache_serves_a_second_compile() {
    if !nvrtc_or_skip("the kernel cache was") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("ibp-nvrtc-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let module = &ibp_gpu::kernels::BASELINES;
    let compile = || ibp_gpu::kernels::compile_cached(module, 9, 0, Some(&dir)).expect("compiles");
    let (first, cached) = compile();
    assert!(!cached, "nothing cached yet");
    let files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let (second, cached) = compile();
    assert!(cached, "the second compile comes from the cache");
    assert_eq!(first, second);
    // A damaged file: compiled again (an ELF image again, not the damaged bytes) and rewritten.
    let mut bytes = std::fs::read(&files[0]).unwrap();
    let at = bytes.len() - 100;
    bytes[at] ^= 0xff;
    std::fs::write(&files[0], &bytes).unwrap();
    let (third, cached) = compile();
    assert!(!cached, "a damaged cache file is not used");
    assert_eq!(&third[..4], b"\x7fELF");
    assert!(compile().1, "the damaged file was replaced");
    // No cache directory: always NVRTC.
    assert!(!ibp_gpu::kernels::compile_cached(module, 9, 0, None).unwrap().1);
    std::fs::remove_dir_all(&dir).unwrap();
}
