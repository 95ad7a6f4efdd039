//! Replays every committed fuzz input (corpora and crash files, as they are and CRC-fixed), the
//! sample containers and the conformance vectors through the GPU decoder, from device memory and
//! zero-copy from pinned host memory, and compares with the CPU reference decoder: the same bytes
//! for every entry where the CPU decodes, a rejection where it rejects.
//!
//! Run it under `compute-sanitizer --tool memcheck` (tools/gpu-run.sh does) to show the kernels
//! never read or write out of bounds on hostile input. Without a CUDA driver it prints SKIPPED.

#[allow(dead_code)]
#[path = "../../../fuzz/src/replay.rs"]
mod replay;

use cudarc::driver::CudaSlice;
use ibp_format::ErrorCode;
use ibp_gpu::{ChunkForm, GpuDevice, GpuEntry, GpuError, PayloadHome};
use std::path::Path;
use std::sync::Arc;

fn gpu() -> Option<Arc<GpuDevice>> {
    match ibp_gpu::gpu_unavailable_reason() {
        Some(why) if std::env::var("IBP_REQUIRE_GPU").as_deref() == Ok("1") => panic!("IBP_REQUIRE_GPU=1 but {why}"),
        Some(why) => {
            println!("SKIPPED: {why}");
            eprintln!("SKIPPED: {why}");
            None
        }
        None => Some(GpuDevice::new(0).expect("a GPU is present but could not be opened")),
    }
}

/// Decoded entries `(name, bytes)`.
type Entries = Vec<(String, Vec<u8>)>;
/// A rejection's code, or the text of a failure that is not a data error.
type Rejection = Result<ErrorCode, String>;

fn code_of(e: GpuError) -> Result<ErrorCode, String> {
    e.code().ok_or_else(|| format!("not a data error: {e}"))
}

/// Every entry of `bytes` decoded by the GPU: `Ok(entries)`, `Err(Ok(code))` for a rejection, or
/// `Err(Err(text))` for a failure that is not a data error (which fails the test).
fn gpu_decode(dev: &Arc<GpuDevice>, bytes: &[u8], home: PayloadHome) -> Result<Entries, Rejection> {
    let mut reader = ibp_codec::ContainerReader::open(std::io::Cursor::new(bytes)).map_err(|e| Ok(e.code))?;
    let mut out = Vec::new();
    for e in 0..reader.entries().len() {
        let name = reader.entries()[e].name.clone();
        // Every chunk as stored, in either home: the kernels, not the loader's CPU decode, face the input.
        let entry = GpuEntry::from_reader_with_form(dev, &mut reader, e, home, ChunkForm::AsStored).map_err(code_of)?;
        let len = (entry.row_count() * entry.row_bytes()) as usize;
        if len == 0 {
            out.push((name, Vec::new()));
            continue;
        }
        let stream = dev.new_stream().map_err(|e| Err(e.to_string()))?;
        let mut buf: CudaSlice<u8> = stream.clone_htod(&vec![0xA5u8; len]).map_err(|e| Err(e.to_string()))?;
        entry
            .decode_all(&mut buf, &stream)
            .map_err(code_of)?
            .wait()
            .map_err(code_of)?;
        out.push((name, stream.clone_dtoh(&buf).map_err(|e| Err(e.to_string()))?));
    }
    Ok(out)
}

#[test]
fn fuzz_inputs_and_vectors_decode_on_the_gpu_as_on_the_cpu() {
    let Some(dev) = gpu() else { return };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let cases = replay::replay_cases(&root).expect("readable fuzz inputs");
    assert!(cases.len() > 50, "only {} replay cases", cases.len());
    // Under compute-sanitizer every launch is slow: IBP_REPLAY_STRIDE=N replays every N-th case.
    let stride: usize = std::env::var("IBP_REPLAY_STRIDE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
        .max(1);
    let cases: Vec<_> = cases.into_iter().step_by(stride).collect();
    let (mut same_bytes, mut same_code, mut other_code) = (0, 0, 0);
    for case in &cases {
        for home in [PayloadHome::Device, PayloadHome::HostMapped] {
            let label = format!("{} {home:?}", case.label);
            match (&case.expected, gpu_decode(&dev, &case.bytes, home)) {
                (Ok(cpu), Ok(gpu)) => {
                    assert_eq!(&gpu, cpu, "{label}: GPU bytes differ from the CPU's");
                    same_bytes += 1;
                }
                (Ok(_), Err(e)) => panic!("{label}: the CPU decodes it, the GPU says {e:?}"),
                (Err(code), Ok(_)) => panic!("{label}: the CPU rejects it with {code}, the GPU decoded it"),
                (Err(_), Err(Err(text))) => panic!("{label}: GPU failure that is not a data error: {text}"),
                (Err(cpu), Err(Ok(gpu))) if *cpu == gpu => same_code += 1,
                (Err(cpu), Err(Ok(gpu))) => {
                    // Both reject; the GPU loader checks every chunk's metadata and CRCs before any
                    // row, so a file with several defects can be reported by a later chunk first
                    // (spec 11.3), and only such a file.
                    replay::several_defects_explain(&case.bytes, *cpu, gpu)
                        .unwrap_or_else(|why| panic!("{label}: CPU {cpu}, GPU {gpu}: {why}"));
                    println!("{label}: CPU {cpu}, GPU {gpu} (a later chunk's defect, spec 11.3)");
                    other_code += 1;
                }
            }
        }
    }
    println!(
        "GPU replay: {} cases x 2 payload homes: {same_bytes} decoded to the CPU's bytes, {same_code} rejected with the CPU's code, {other_code} rejected with another code",
        cases.len()
    );
}
