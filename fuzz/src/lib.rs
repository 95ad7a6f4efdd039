//! Property checks for the IBP fuzz targets, shared with the workspace's ordinary tests.
//!
//! The fuzz targets in `fuzz_targets/` are one line each: they call a `check_*` function of
//! [`props`], which panics when a property fails. The root test `tests/fuzz_replay.rs` includes the
//! same two modules (with `#[path]`) and replays every committed corpus and crash file through them
//! on every `cargo test`. [`replay`] lists those files and turns them into containers, for any other
//! decoder (the GPU decoder) to be compared against the CPU reference. [`kernels`] checks the GPU
//! decoder's kernels, run on the CPU, against that reference. [`tensor_props`] checks the `ibp`
//! command's `.npy` and safetensors readers (target `tensor_files`).
#![forbid(unsafe_code)]

pub mod kernels;
pub mod props;
pub mod replay;
pub mod tensor_props;
