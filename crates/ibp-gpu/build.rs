//! With the `host-kernels` feature: compiles the decoder kernels for the CPU (kernels/host/launch.cpp,
//! which includes kernels/ibp_gather.cu through kernels/host/cuda_host.h).
fn main() {
    #[cfg(feature = "host-kernels")]
    {
        let kernels = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../kernels");
        for f in [
            "ibp_gather.cu",
            "ibp_gather",
            "ibp_status.h",
            "host/cuda_host.h",
            "host/launch.cpp",
        ] {
            println!("cargo:rerun-if-changed={}", kernels.join(f).display());
        }
        // IBP_HOST_KERNELS_ASAN=1: AddressSanitizer in the kernels (run the tests with the runtime
        // preloaded: LD_PRELOAD=$(g++ -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0).
        println!("cargo:rerun-if-env-changed=IBP_HOST_KERNELS_ASAN");
        let asan = std::env::var("IBP_HOST_KERNELS_ASAN").is_ok_and(|v| v == "1");
        let mut build = cc::Build::new();
        build
            .cpp(true)
            .std("c++20")
            .file(kernels.join("host/launch.cpp"))
            .flag("-pthread")
            .flag_if_supported("-Wno-unknown-pragmas")
            .flag_if_supported("-Wno-unused-parameter")
            .flag_if_supported("-Wno-unused-function")
            .opt_level(2);
        if asan {
            build.flag("-fsanitize=address").flag("-fno-omit-frame-pointer");
        }
        // IBP_HOST_KERNELS_DEFINES="-DNAME=VALUE ...": the kernels' A/B switches, as the GPU run takes
        // them from IBP_KERNEL_DEFINES, so a switch is checked on the CPU before it is timed.
        println!("cargo:rerun-if-env-changed=IBP_HOST_KERNELS_DEFINES");
        for define in std::env::var("IBP_HOST_KERNELS_DEFINES")
            .unwrap_or_default()
            .split_whitespace()
        {
            let define = define.strip_prefix("-D").unwrap_or(define);
            let (name, value) = define.split_once('=').map_or((define, None), |(n, v)| (n, Some(v)));
            build.define(name, value);
        }
        build.compile("ibp_host_kernels");
        if asan {
            println!("cargo:rustc-link-lib=asan");
        }
        println!("cargo:rustc-link-lib=pthread");
    }
}
