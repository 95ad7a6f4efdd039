//! Fuzz target `tensor_files`: see `ibp_fuzz::tensor_props::check_tensor_files` for the property
//! checked (the `ibp` command's `.npy` and safetensors readers).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ibp_fuzz::tensor_props::check_tensor_files(data));
