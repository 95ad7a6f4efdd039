//! IBP CPU codec: analysis that picks word width, masks and threshold per chunk; row packing; a
//! streaming container writer and reader; a clarity-first oracle decoder and a fast decoder.
#![deny(unsafe_code)]
#![warn(missing_docs)]
