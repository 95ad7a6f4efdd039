//! With the `host-kernels` feature: compiles the decoder kernels for the CPU (kernels/host/launch.cpp,
//! which includes kernels/ibp_gather.cu through kernels/host/cuda_host.h).
fn main() {
    #[cfg(feature = "host-kernels")]
    {
        let kernels = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../kernels");
        for f in ["ibp_gather.cu", "ibp_status.h", "host/cuda_host.h", "host/launch.cpp"] {
            println!("cargo:rerun-if-changed={}", kernels.join(f).display());
        }
        cc::Build::new()
            .cpp(true)
            .std("c++20")
            .file(kernels.join("host/launch.cpp"))
            .flag("-pthread")
            .flag_if_supported("-Wno-unknown-pragmas")
            .flag_if_supported("-Wno-unused-parameter")
            .flag_if_supported("-Wno-unused-function")
            .opt_level(2)
            .compile("ibp_host_kernels");
        println!("cargo:rustc-link-lib=pthread");
    }
}
