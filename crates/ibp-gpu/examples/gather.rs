//! Gathers random rows of a compressed entry on the GPU, straight from pinned host memory, and
//! checks them against the CPU reader.
//!
//! ```text
//! cargo run --release -p ibp-gpu --example gather -- [FILE.ibp] [--entry E] [--rows N] [--device D]
//! ```
//!
//! Without a file the example compresses 64 MiB of synthetic f32 rows with the GPU options
//! (`EncodeOptions::for_gpu()`, what `ibp compress --gpu` writes) and uses that. On a machine without
//! a GPU it prints why and exits with status 0.

use ibp_codec::{ContainerReader, ContainerWriter, DecoderKind, EncodeOptions};
use ibp_format::Dtype;
use ibp_gpu::testdata::{float_rows, Rng};
use ibp_gpu::{gpu_unavailable_reason, GpuDevice, GpuEntry, HostEntry, PayloadHome};
use std::io::Cursor;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut file = None;
    let (mut entry, mut rows_wanted, mut ordinal) = (0usize, 16_384usize, 0usize);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--entry" => entry = value()?.parse()?,
            "--rows" => rows_wanted = value()?.parse()?,
            "--device" => ordinal = value()?.parse()?,
            path => file = Some(path.to_owned()),
        }
    }
    if let Some(reason) = gpu_unavailable_reason() {
        println!("no GPU here ({reason}): nothing to gather");
        return Ok(());
    }
    let bytes = match &file {
        Some(path) => std::fs::read(path)?,
        None => {
            // 256 K rows of 256 bytes: f32 values with 4 quantised mantissa bits.
            let (rows, row_bytes) = (262_144usize, 256usize);
            let data = float_rows(&mut Rng::new(7), rows, row_bytes, 0.02, 4);
            let mut w = ContainerWriter::new(Vec::new(), EncodeOptions::for_gpu())?;
            w.write_entry("features", Dtype::F32, &[rows as u64, 64], row_bytes as u64, &data)?;
            w.finish()?
        }
    };
    let mut reader = ContainerReader::open(Cursor::new(&bytes))?;
    let info = reader.entries().get(entry).ok_or("no such entry")?.clone();
    println!(
        "entry {entry} '{}': {} rows of {} bytes, {} bytes of file",
        info.name,
        info.row_count,
        info.row_bytes,
        bytes.len()
    );

    // The compressed payload goes to pinned host memory once; the GPU reads it over the bus. A file
    // written for size may code chunks whose records are no cheaper to read than raw rows: a host
    // entry keeps those raw (decoded once here, `ChunkForm::FOR_GPU_READS`, the default for host
    // memory), the others as stored.
    let device = GpuDevice::new(ordinal)?;
    let host = HostEntry::from_reader(&device, &mut reader, entry)?;
    println!(
        "{} of {} chunks kept raw for GPU reads; {} bytes in pinned host memory",
        host.relaid_chunks(),
        host.layout().chunks.len(),
        host.payload().len()
    );
    let gpu = GpuEntry::from_host(&device, &host, PayloadHome::HostMapped)?;
    let stream = device.new_stream()?;

    // Random rows, duplicates and any order allowed; the output is a device buffer of the caller's.
    let mut rng = Rng::new(11);
    let rows: Vec<u64> = (0..rows_wanted).map(|_| rng.below(info.row_count)).collect();
    let mut out = stream.alloc_zeros::<u8>(rows.len() * info.row_bytes as usize)?;
    gpu.gather(&rows, &mut out, &stream)?.wait()?; // warm-up (kernel load)
    let t = Instant::now();
    gpu.gather(&rows, &mut out, &stream)?.wait()?;
    let secs = t.elapsed().as_secs_f64();
    let got = stream.clone_dtoh(&out)?;

    let expected = reader.gather(entry, &rows, DecoderKind::Fast)?;
    if got != expected {
        return Err("the GPU's rows differ from the CPU reader's".into());
    }
    println!(
        "{} rows gathered on {} in {:.1} us (upload of the indices and wait included): {:.1} GB/s of rows, identical to the CPU reader's",
        rows.len(),
        device.name(),
        secs * 1e6,
        got.len() as f64 / secs / 1e9
    );
    Ok(())
}
