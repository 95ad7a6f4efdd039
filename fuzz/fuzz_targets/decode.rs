//! Fuzz target `decode`: see `ibp_fuzz::props::check_decode` for the property checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ibp_fuzz::props::check_decode(data));
