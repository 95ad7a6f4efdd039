//! IBP CPU codec: analysis that picks word width, masks and threshold per chunk; row packing; a
//! streaming container writer and reader; a clarity-first oracle decoder and a fast decoder.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod reader;
pub mod writer;

pub use reader::{decode_bytes, ContainerReader, Limits, VerifyReport};
pub use writer::{encode_to_vec, write_atomic, ContainerWriter};

pub mod analysis;
#[cfg(target_arch = "x86_64")]
mod bmi2;
pub mod chunk_codec;
pub mod fast;
pub mod free_runs;
pub mod options;
pub mod position_masks;
pub mod prng;
pub mod row;

pub use analysis::{plan_chunk, ChunkPlan};
pub use chunk_codec::{decode_chunk, decode_chunk_rows, encode_chunk, encode_chunk_with_plan, EncodedChunk};
pub use fast::{decode_row, DecoderKind, RowDecoder, RowEncoder};
pub use options::EncodeOptions;
