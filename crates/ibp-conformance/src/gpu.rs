//! Running vectors through the CUDA decoder of `ibp-gpu` (feature `gpu`).
//!
//! The container's structure (header, footer, directory, chunk metadata and payload CRC: spec 11.1
//! steps 1-5 up to `payload_crc`) is validated by the CPU reader, as every GPU user does; the rows
//! are decoded by the GPU kernel, which checks each row's coded length and padding. Chunks are
//! loaded and decoded one at a time, in file order, so that the first error is the one spec 11.1
//! names.

use crate::runner::Decoded;
use ibp_codec::ContainerReader;
use ibp_format::{ensure, ChunkMeta, ErrorCode, FormatError};
use ibp_gpu::{ChunkForm, GpuDevice, GpuEntry, GpuError, LeanShape, PayloadHome, TileKernel};
use std::sync::Arc;

/// A GPU (ordinal 0) with its kernels compiled.
pub struct GpuRunner {
    device: Arc<GpuDevice>,
}

fn to_format(e: GpuError) -> FormatError {
    match e {
        GpuError::Format(f) => f,
        // Not a verdict on the file: reported as E_IO so that it never matches an expected code.
        other => FormatError::new(ErrorCode::Io, format!("GPU failure: {other}")),
    }
}

impl GpuRunner {
    /// Opens GPU 0 (compiles the kernels).
    pub fn new() -> Result<Self, String> {
        GpuDevice::new(0)
            .map(|device| GpuRunner { device })
            .map_err(|e| format!("cannot use the GPU: {e}"))
    }

    /// The device's name.
    pub fn name(&self) -> &str {
        self.device.name()
    }

    /// Decodes one chunk's rows on the GPU. Where the entry uses another tile kernel than the
    /// general one, the general one decodes it too (and the lean kernel for any row shape, where the
    /// entry uses the mid one), and where a loader for GPU reads re-lays the chunk raw
    /// ([`ChunkForm::FOR_GPU_READS`]) the re-laid chunk is decoded too: each must give the same
    /// bytes or the same error (else an `E_IO` failure that no vector expects).
    fn decode_chunk(&self, row_bytes: u64, meta: ChunkMeta, payload: &[u8]) -> Result<Vec<u8>, FormatError> {
        let metas = [meta];
        let entry =
            GpuEntry::load(&self.device, row_bytes, &metas, &[payload], PayloadHome::Device).map_err(to_format)?;
        let lean = self.decode_entry(&entry);
        let relaid = GpuEntry::load_with_form(
            &self.device,
            row_bytes,
            &metas,
            &[payload],
            PayloadHome::HostMapped,
            ChunkForm::FOR_GPU_READS,
        )
        .map_err(to_format)?;
        if relaid.relaid_chunks() > 0 {
            let again = self.decode_entry(&relaid);
            ensure!(
                matches!((&lean, &again), (Ok(a), Ok(b)) if a == b),
                ErrorCode::Io,
                "the chunk re-laid raw for GPU reads decodes otherwise: {:?} against {:?}",
                lean.as_ref().map(|_| ()),
                again.as_ref().map(|_| ())
            );
        }
        let others = match entry.tile_kernel() {
            TileKernel::General | TileKernel::Auto => vec![],
            TileKernel::Lean(LeanShape::Mid | LeanShape::Short) => {
                vec![TileKernel::General, TileKernel::Lean(LeanShape::Any)]
            }
            TileKernel::Lean(LeanShape::Any) | TileKernel::GeneralPairs => vec![TileKernel::General],
            TileKernel::Lean(LeanShape::Long) => vec![TileKernel::General, TileKernel::GeneralPairs],
            // (Its entries' chunks, one group of 16-bit words, are also the long-rows kernel's, and
            // the pairs kernel's where rows have more than 16 words.)
            TileKernel::Lean(LeanShape::Vec) => [
                TileKernel::General,
                TileKernel::Lean(LeanShape::Long),
                TileKernel::GeneralPairs,
            ]
            .into_iter()
            .filter(|k| k.decodes(entry.layout()))
            .collect(),
        };
        for other in others {
            entry.use_tile_kernel(other);
            let again = self.decode_entry(&entry);
            entry.use_tile_kernel(TileKernel::Auto);
            let same = match (&lean, &again) {
                (Ok(a), Ok(b)) => a == b,
                (Err(a), Err(b)) => a.code == b.code,
                _ => false,
            };
            ensure!(
                same,
                ErrorCode::Io,
                "GPU tile kernels disagree: {:?} {:?}, {other:?} {:?}",
                entry.tile_kernel(),
                lean.as_ref().map(|_| ()),
                again.as_ref().map(|_| ())
            );
        }
        lean
    }

    fn decode_entry(&self, entry: &GpuEntry) -> Result<Vec<u8>, FormatError> {
        let len = entry.row_count() * entry.row_bytes();
        let stream = self.device.new_stream().map_err(to_format)?;
        let mut out = stream
            .alloc_zeros::<u8>(len as usize)
            .map_err(|e| FormatError::new(ErrorCode::Io, format!("allocating {len} bytes: {e}")))?;
        entry
            .decode_all(&mut out, &stream)
            .map_err(to_format)?
            .wait()
            .map_err(to_format)?;
        stream
            .clone_dtoh(&out)
            .map_err(|e| FormatError::new(ErrorCode::Io, format!("copying the rows back: {e}")))
    }

    /// Validates and decodes a whole file: structure on the CPU, rows on the GPU.
    pub fn decode(&mut self, bytes: &[u8]) -> Decoded {
        let mut r = ContainerReader::open(std::io::Cursor::new(bytes))?;
        let mut out = Vec::new();
        for e in 0..r.entries().len() {
            let info = r.entries()[e].clone();
            ensure!(
                info.decoded_len() <= r.limits().max_output_bytes,
                ErrorCode::Limit,
                "entry decodes to {} bytes, over the reader's limit",
                info.decoded_len()
            );
            let mut data = Vec::new();
            for c in 0..info.chunks.len() {
                let (meta, payload) = r.read_chunk(e, c)?;
                let rows = self
                    .decode_chunk(info.row_bytes, meta, &payload)
                    .map_err(|err| err.at(format!("entry {:?} chunk {c} (GPU)", info.name)))?;
                data.extend_from_slice(&rows);
            }
            out.push((info, data));
        }
        Ok(out)
    }
}
