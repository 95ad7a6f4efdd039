//! Fuzz target `roundtrip`: see `ibp_fuzz::props::check_roundtrip` for the property checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ibp_fuzz::props::check_roundtrip(data));
