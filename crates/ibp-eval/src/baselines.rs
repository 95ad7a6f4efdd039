//! General-purpose baselines: zstd and lz4 as one stream and as independent fixed-size blocks
//! (random access by block), and no compression.

use rayon::prelude::*;

/// Block size of the random-access variants.
pub const BLOCK_BYTES: usize = 64 * 1024;

/// Bytes of the block index a random-access file needs: one `u64` offset per block, plus one.
pub fn block_index_bytes(blocks: usize) -> u64 {
    8 * (blocks as u64 + 1)
}

/// A general-purpose codec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    /// zstd at the given level.
    Zstd(i32),
    /// lz4 (block format, `lz4_flex`).
    Lz4,
}

impl Codec {
    /// Short name, e.g. `zstd-3`.
    pub fn name(self) -> String {
        match self {
            Codec::Zstd(l) => format!("zstd-{l}"),
            Codec::Lz4 => "lz4".to_string(),
        }
    }
}

/// Per-thread compressor state (zstd contexts are reused, as a real user would).
pub enum Encoder {
    /// zstd context.
    Zstd(zstd::bulk::Compressor<'static>),
    /// lz4 needs none.
    Lz4,
}

impl Encoder {
    /// A fresh encoder for `codec`.
    pub fn new(codec: Codec) -> Encoder {
        match codec {
            Codec::Zstd(level) => Encoder::Zstd(zstd::bulk::Compressor::new(level).expect("zstd context")),
            Codec::Lz4 => Encoder::Lz4,
        }
    }

    /// Compresses `src` on its own.
    pub fn compress(&mut self, src: &[u8]) -> Vec<u8> {
        match self {
            Encoder::Zstd(c) => c.compress(src).expect("zstd compress"),
            Encoder::Lz4 => lz4_flex::block::compress(src),
        }
    }
}

/// Per-thread decompressor state.
pub enum Decoder {
    /// zstd context.
    Zstd(zstd::bulk::Decompressor<'static>),
    /// lz4 needs none.
    Lz4,
}

impl Decoder {
    /// A fresh decoder for `codec`.
    pub fn new(codec: Codec) -> Decoder {
        match codec {
            Codec::Zstd(_) => Decoder::Zstd(zstd::bulk::Decompressor::new().expect("zstd context")),
            Codec::Lz4 => Decoder::Lz4,
        }
    }

    /// Decompresses `src` into exactly `dst` (whose length is the decoded size); `Err` on corrupt
    /// input or a size mismatch.
    pub fn decompress_into(&mut self, src: &[u8], dst: &mut [u8]) -> Result<(), String> {
        let n = match self {
            Decoder::Zstd(d) => d.decompress_to_buffer(src, dst).map_err(|e| e.to_string())?,
            Decoder::Lz4 => lz4_flex::block::decompress_into(src, dst).map_err(|e| e.to_string())?,
        };
        if n == dst.len() {
            Ok(())
        } else {
            Err(format!("decoded {n} bytes, expected {}", dst.len()))
        }
    }
}

/// The data as one compressed stream; `stored_bytes` adds 8 bytes for the decoded length that
/// the lz4 block format does not carry (zstd frames carry their own).
pub struct Stream {
    /// Codec used.
    pub codec: Codec,
    /// Compressed bytes.
    pub bytes: Vec<u8>,
    /// Decoded length.
    pub raw_len: usize,
}

impl Stream {
    /// Compresses `data` as one stream (single thread).
    pub fn encode(codec: Codec, data: &[u8]) -> Stream {
        Stream {
            codec,
            bytes: Encoder::new(codec).compress(data),
            raw_len: data.len(),
        }
    }

    /// Total stored size, every overhead counted.
    pub fn stored_bytes(&self) -> u64 {
        self.bytes.len() as u64 + if self.codec == Codec::Lz4 { 8 } else { 0 }
    }

    /// Decodes the whole stream.
    pub fn decode(&self) -> Result<Vec<u8>, String> {
        let mut out = vec![0u8; self.raw_len];
        Decoder::new(self.codec).decompress_into(&self.bytes, &mut out)?;
        Ok(out)
    }
}

/// The data as independent blocks of [`BLOCK_BYTES`] with an offset index.
pub struct Blocks {
    /// Codec used.
    pub codec: Codec,
    /// Concatenated compressed blocks.
    pub bytes: Vec<u8>,
    /// `blocks + 1` offsets into `bytes`.
    pub offsets: Vec<usize>,
    /// Decoded length.
    pub raw_len: usize,
}

impl Blocks {
    /// Compresses `data` block by block on the current rayon pool.
    pub fn encode(codec: Codec, data: &[u8]) -> Blocks {
        let parts: Vec<Vec<u8>> = data
            .par_chunks(BLOCK_BYTES)
            .map_init(|| Encoder::new(codec), |enc, block| enc.compress(block))
            .collect();
        let mut offsets = Vec::with_capacity(parts.len() + 1);
        let mut bytes = Vec::with_capacity(parts.iter().map(Vec::len).sum());
        offsets.push(0);
        for p in &parts {
            bytes.extend_from_slice(p);
            offsets.push(bytes.len());
        }
        Blocks {
            codec,
            bytes,
            offsets,
            raw_len: data.len(),
        }
    }

    /// Number of blocks.
    pub fn block_count(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Total stored size: compressed blocks plus the offset index.
    pub fn stored_bytes(&self) -> u64 {
        self.bytes.len() as u64 + block_index_bytes(self.block_count())
    }

    fn block(&self, i: usize) -> &[u8] {
        &self.bytes[self.offsets[i]..self.offsets[i + 1]]
    }

    /// Decodes every block into `out` (length `raw_len`) on the current rayon pool.
    pub fn decode_into(&self, out: &mut [u8]) -> Result<(), String> {
        if out.len() != self.raw_len {
            return Err(format!(
                "output of {} bytes for {} decoded bytes",
                out.len(),
                self.raw_len
            ));
        }
        out.par_chunks_mut(BLOCK_BYTES).enumerate().try_for_each_init(
            || Decoder::new(self.codec),
            |dec, (i, dst)| dec.decompress_into(self.block(i), dst),
        )
    }

    /// Fetches bytes `start..start + out.len()` by decoding only the blocks that hold them
    /// (`scratch` is a reusable block buffer).
    pub fn read_range(
        &self,
        dec: &mut Decoder,
        start: usize,
        out: &mut [u8],
        scratch: &mut Vec<u8>,
    ) -> Result<(), String> {
        let end = start + out.len();
        if end > self.raw_len {
            return Err(format!("range {start}..{end} past {} bytes", self.raw_len));
        }
        let mut pos = start;
        while pos < end {
            let b = pos / BLOCK_BYTES;
            let b_start = b * BLOCK_BYTES;
            let b_len = BLOCK_BYTES.min(self.raw_len - b_start);
            scratch.resize(b_len, 0);
            dec.decompress_into(self.block(b), &mut scratch[..b_len])?;
            let take_end = end.min(b_start + b_len);
            out[pos - start..take_end - start].copy_from_slice(&scratch[pos - b_start..take_end - b_start]);
            pos = take_end;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        (0..200_000u32)
            .flat_map(|i| ((i % 977) as f32 * 0.5).to_le_bytes())
            .collect()
    }

    #[test]
    fn streams_and_blocks_round_trip_for_every_codec() {
        let data = sample();
        for codec in [Codec::Zstd(1), Codec::Zstd(3), Codec::Lz4] {
            let s = Stream::encode(codec, &data);
            assert_eq!(s.decode().unwrap(), data, "{}", codec.name());
            assert!(s.stored_bytes() < data.len() as u64);
            let b = Blocks::encode(codec, &data);
            assert_eq!(b.block_count(), data.len().div_ceil(BLOCK_BYTES));
            let mut out = vec![0u8; data.len()];
            b.decode_into(&mut out).unwrap();
            assert_eq!(out, data, "{} blocks", codec.name());
        }
    }

    #[test]
    fn read_range_crosses_block_boundaries() {
        let data = sample();
        let b = Blocks::encode(Codec::Zstd(3), &data);
        let mut dec = Decoder::new(Codec::Zstd(3));
        let mut scratch = Vec::new();
        for start in [0usize, BLOCK_BYTES - 100, 3 * BLOCK_BYTES + 5, data.len() - 300] {
            let mut out = vec![0u8; 300];
            b.read_range(&mut dec, start, &mut out, &mut scratch).unwrap();
            assert_eq!(out, &data[start..start + 300]);
        }
        let mut out = vec![0u8; 10];
        assert!(b.read_range(&mut dec, data.len() - 5, &mut out, &mut scratch).is_err());
    }

    #[test]
    fn corrupt_blocks_are_errors_not_panics() {
        let data = sample();
        for codec in [Codec::Zstd(3), Codec::Lz4] {
            let mut b = Blocks::encode(codec, &data);
            let n = b.bytes.len();
            for byte in &mut b.bytes[n / 2..n / 2 + 64] {
                *byte ^= 0x5A;
            }
            let mut out = vec![0u8; data.len()];
            // Either detected, or (lz4 has no checksum) decoded to different bytes.
            match b.decode_into(&mut out) {
                Err(_) => {}
                Ok(()) => assert_ne!(out, data),
            }
        }
    }
}
