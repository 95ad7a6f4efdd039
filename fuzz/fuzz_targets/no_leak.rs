//! Fuzz target `no_leak`: see `ibp_fuzz::props::check_no_leak` for the property checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ibp_fuzz::props::check_no_leak(data));
