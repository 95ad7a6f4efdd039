//! Fuzz target `gather`: see `ibp_fuzz::props::check_gather` for the property checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ibp_fuzz::props::check_gather(data));
