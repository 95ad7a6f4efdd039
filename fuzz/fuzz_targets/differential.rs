//! Fuzz target `differential`: see `ibp_fuzz::props::check_differential` for the property checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ibp_fuzz::props::check_differential(data));
