//! The GPU as `verify --gpu`'s second decoder: each entry loaded onto one device (payload in
//! device memory or in pinned host memory read zero-copy), each chunk decoded there and copied back.

use super::{DataError, Reader, SecondDecoder};
use crate::cli::GpuPayloadArg;
use crate::error::{CliError, CliResult};
use ibp_gpu::{ChunkForm, CudaSlice, CudaStream, GpuDevice, GpuEntry, GpuError, PayloadHome};
use std::sync::Arc;

/// The GPU of `verify --gpu`: a device, a stream, where entries' payloads go, the entry loaded
/// last and an output buffer reused across chunks.
pub struct GpuCheck {
    device: Arc<GpuDevice>,
    stream: Arc<CudaStream>,
    home: PayloadHome,
    entry: Option<GpuEntry>,
    out: Option<CudaSlice<u8>>,
}

/// A CUDA failure that is not about the data: exit 4.
fn gpu_failure(e: GpuError) -> CliError {
    CliError::gpu(e.is_no_gpu(), e.to_string())
}

/// A data error of the GPU decoder as (code, detail); anything else is a failure.
fn data_error(e: GpuError) -> CliResult<DataError> {
    match e {
        GpuError::Format(e) => Ok((e.code.as_str().to_owned(), e.detail)),
        e => Err(gpu_failure(e)),
    }
}

impl GpuCheck {
    /// Opens CUDA device `ordinal` (its kernels compiled by NVRTC); `E_NO_GPU` where none can be used.
    pub fn open(ordinal: usize, payload: GpuPayloadArg) -> CliResult<GpuCheck> {
        if let Some(reason) = ibp_gpu::gpu_unavailable_reason() {
            return Err(CliError::gpu(true, format!("no GPU: {reason}")));
        }
        let device = GpuDevice::new(ordinal).map_err(gpu_failure)?;
        let stream = device.new_stream().map_err(gpu_failure)?;
        let home = match payload {
            GpuPayloadArg::Device => PayloadHome::Device,
            GpuPayloadArg::Host => PayloadHome::HostMapped,
        };
        Ok(GpuCheck {
            device,
            stream,
            home,
            entry: None,
            out: None,
        })
    }
}

impl SecondDecoder for GpuCheck {
    fn label(&self) -> String {
        let memory = match self.home {
            PayloadHome::Device => "device",
            PayloadHome::HostMapped => "pinned host",
        };
        format!("gpu ({}, payload in {memory} memory)", self.device.name())
    }

    fn load_entry(&mut self, reader: &mut Reader, entry: usize) -> CliResult<Result<(), DataError>> {
        self.entry = None; // (the previous entry's device memory goes first)
        let form = ChunkForm::AsStored; // every chunk as the file stores it: this checks the file's coding
        match GpuEntry::from_reader_with_form(&self.device, reader, entry, self.home, form) {
            Ok(loaded) => {
                self.entry = Some(loaded);
                Ok(Ok(()))
            }
            Err(e) => data_error(e).map(Err),
        }
    }

    fn decode_chunk(&mut self, chunk: usize, bytes: usize) -> CliResult<Result<Vec<u8>, DataError>> {
        let entry = self
            .entry
            .as_ref()
            .ok_or_else(|| CliError::gpu(false, "no entry loaded on the GPU"))?;
        if self.out.as_ref().is_none_or(|o| o.len() < bytes) {
            self.out = None;
            let buffer = self
                .stream
                .alloc_zeros::<u8>(bytes.max(1))
                .map_err(|e| CliError::gpu(false, format!("allocating {bytes} bytes of GPU memory: {e}")))?;
            self.out = Some(buffer);
        }
        let out = self.out.as_mut().expect("allocated above");
        if let Err(e) = entry
            .decode_chunk(chunk, out, &self.stream)
            .and_then(|pending| pending.wait())
        {
            return data_error(e).map(Err);
        }
        let host = self
            .stream
            .clone_dtoh(&out.slice(..bytes))
            .map_err(|e| CliError::gpu(false, format!("copying decoded rows back: {e}")))?;
        Ok(Ok(host))
    }
}
