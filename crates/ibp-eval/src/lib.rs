//! Evaluation of IBP on real data against the alternatives a user would pick (issue 7).
//!
//! The `ibp-eval-cpu` binary reads the row matrices that `tools/datasets.py` writes into
//! `bench/data/` and measures, in one run and on the same bytes, IBP containers (auto options and
//! sampled analysis) against zstd (levels 1, 3, 19), lz4 and no compression, each as one stream
//! and as independent 64 KiB blocks: space saved with every overhead counted, encode and decode
//! throughput on one thread and on all cores, and the time to fetch one random row.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod baselines;
pub mod datasets;
pub mod ibp_runner;
pub mod npy;
pub mod published;
pub mod report;
pub mod timing;
