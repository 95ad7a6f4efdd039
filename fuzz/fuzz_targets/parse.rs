//! Fuzz target `parse`: see `ibp_fuzz::props::check_parse` for the property checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ibp_fuzz::props::check_parse(data));
