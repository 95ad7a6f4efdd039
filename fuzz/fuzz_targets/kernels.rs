//! Fuzz target `kernels`: see `ibp_fuzz::kernels::check_kernels` for the property checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ibp_fuzz::kernels::check_kernels(data));
