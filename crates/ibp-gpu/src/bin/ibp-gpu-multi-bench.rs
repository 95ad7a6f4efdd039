//! Multi-GPU benchmark: every GPU of the host gathers random rows at once from ONE compressed
//! payload in pinned host memory (zero-copy; registered portable, so each GPU maps the same pages),
//! as data-parallel training does with one process or thread per GPU over one dataset. Side by side
//! in the same run: the same GPUs gathering the same rows uncompressed from one pinned buffer with
//! 16-byte loads (the `raw zc` baseline of `ibp-gpu-bench`). Prints a markdown table.
//!
//! Usage: ibp-gpu-multi-bench [--devices N] [--target-mib N] [--batch-rows 4096,16384] [--batches N]
//!                            [--reps N] [--data-dir DIR] [--only NAME-SUBSTRING] [--quick]
//!
//! Each GPU has a worker thread with its own `GpuEntry` (metadata in its memory, payload mapped from
//! the shared pinned buffer) and stream. A timed run: the workers of the first `k` GPUs meet at a
//! barrier, each enqueues `--batches` gathers of B random rows (rows drawn apart per GPU and
//! per batch) and waits for them; the run's time is from the first worker's start to the last one's
//! end, its throughput the uncompressed bytes all `k` GPUs received divided by that time. IBP and
//! raw runs alternate (which one goes first rotates), medians of `--reps`, for each batch size B of
//! `--batch-rows` and `k` = 1, 2, 4, ... up to `--devices` (default: every GPU). Every GPU's gather
//! is first checked against the rows.
//!
//! Datasets: f32 rows of 1 and 4 KiB (normal values quantised to 4 significant bits, and 5 %
//! non-zero), and every `.npy` under `--data-dir` (default `bench/data/gpu-pack`), each encoded as
//! `ibp compress --gpu` writes it (`EncodeOptions::for_gpu()`), its chunks repeated to about
//! `--target-mib` MiB of rows.

mod bench_common;

use bench_common::{median, npy_datasets, RepeatedChunks, Usage};
use cudarc::driver::{CudaSlice, CudaStream};
use ibp_codec::EncodeOptions;
use ibp_gpu::baselines::{raw_gather, Source};
use ibp_gpu::testdata::{float_rows, sparse_rows, Rng};
use ibp_gpu::{ChunkForm, GpuDevice, GpuEntry, HostEntry, PayloadHome, PendingDecode, PinnedBuffer};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Barrier};
use std::time::Instant;

const USAGE: Usage = Usage {
    name: "ibp-gpu-multi-bench",
    text: "usage: ibp-gpu-multi-bench [--devices N] [--target-mib N] [--batch-rows 4096,16384]
                           [--batches N] [--reps N] [--data-dir DIR] [--only NAME-SUBSTRING] [--quick]",
};

struct Args {
    devices: Option<usize>,
    target_mib: usize,
    batch_rows: Vec<usize>,
    batches: usize,
    reps: usize,
    data_dir: String,
    only: Option<String>,
    quick: bool,
}

fn parse_args() -> Args {
    let mut a = Args {
        devices: None,
        target_mib: 512,
        batch_rows: vec![4096, 16384],
        batches: 16,
        reps: 7,
        data_dir: "bench/data/gpu-pack".into(),
        only: None,
        quick: false,
    };
    USAGE.for_each_flag(|flag, val| {
        match flag {
            "--devices" => a.devices = Some(USAGE.parsed(flag, &val())),
            "--target-mib" => a.target_mib = USAGE.parsed(flag, &val()),
            "--batch-rows" => a.batch_rows = val().split(',').map(|v| USAGE.parsed(flag, v)).collect(),
            "--batches" => a.batches = USAGE.parsed(flag, &val()),
            "--reps" => a.reps = USAGE.parsed(flag, &val()),
            "--data-dir" => a.data_dir = val(),
            "--only" => a.only = Some(val()),
            "--quick" => a.quick = true,
            _ => return false,
        }
        true
    });
    if a.devices == Some(0) || a.target_mib == 0 || a.batch_rows.contains(&0) || a.batches == 0 || a.reps == 0 {
        USAGE.error("--devices, --target-mib, --batch-rows, --batches and --reps must be at least 1");
    }
    if a.quick {
        a.target_mib = a.target_mib.min(64);
        a.reps = a.reps.min(3);
        a.batches = a.batches.min(4);
    }
    a
}

/// Rows to gather: a name and the rows of one base block (repeated up to the target size).
struct Dataset {
    name: String,
    row_bytes: usize,
    base: Vec<u8>,
}

fn datasets(args: &Args) -> Vec<Dataset> {
    let mut rng = Rng::new(42);
    let base_bytes = if args.quick { 8 << 20 } else { 32 << 20 };
    let mut out = Vec::new();
    for rb in [1024usize, 4096] {
        let rows = base_bytes / rb;
        let q4 = float_rows(&mut rng, rows, rb, 0.02, 4);
        out.push(Dataset {
            name: "f32-normal-q4".into(),
            row_bytes: rb,
            base: q4,
        });
        let sparse = sparse_rows(&mut rng, rows, rb, 0.05);
        out.push(Dataset {
            name: "f32-sparse-5%".into(),
            row_bytes: rb,
            base: sparse,
        });
    }
    out.extend(npy_datasets(&args.data_dir, base_bytes).into_iter().map(|npy| Dataset {
        name: npy.name,
        row_bytes: npy.row_bytes,
        base: npy.rows,
    }));
    if let Some(only) = &args.only {
        out.retain(|d| d.name.contains(only.as_str()));
    }
    out
}

/// What a timed run gathers with.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Method {
    /// The IBP zero-copy gather from the shared compressed payload.
    Ibp,
    /// The uncompressed zero-copy gather from the shared pinned rows.
    Raw,
}

/// One timed run for a worker: wait at `barrier` with the other workers of the run, then gather
/// its lists of `batch_rows[size]` rows with `method`.
struct Job {
    method: Method,
    size: usize,
    barrier: Arc<Barrier>,
}

/// When a worker's run started (after the barrier) and ended (its stream idle, every gather checked).
struct Span {
    start: Instant,
    end: Instant,
}

/// The data every worker reads: one compressed entry, one raw copy of its rows, both pinned.
struct Shared<'a> {
    host: &'a Arc<HostEntry>,
    raw: &'a PinnedBuffer,
    row_bytes: usize,
    rows: u64,
}

/// What a worker gathers with on its GPU: the shared entry loaded there, a stream, per batch size
/// `batches` lists of random rows in device memory, and an output buffer for the largest.
struct Loaded {
    entry: GpuEntry,
    stream: Arc<CudaStream>,
    lists: Vec<Vec<CudaSlice<u64>>>,
    out: CudaSlice<u8>,
}

/// Loads the shared entry on `device` and checks a gather of 4096 random rows against the raw rows.
fn load(device: &Arc<GpuDevice>, shared: &Shared<'_>, batch_rows: &[usize], batches: usize) -> Result<Loaded, String> {
    let entry =
        GpuEntry::from_host(device, shared.host, PayloadHome::HostMapped).map_err(failed("loading the entry"))?;
    let stream = device.new_stream().map_err(failed("creating a stream"))?;
    let mut rng = Rng::new(1000 + device.ordinal() as u64);
    let mut draw = |n: usize| (0..n).map(|_| rng.below(shared.rows)).collect::<Vec<u64>>();
    let rb = shared.row_bytes;
    let check = draw(4096);
    let mut o: CudaSlice<u8> = stream.alloc_zeros(check.len() * rb).map_err(failed("allocating"))?;
    let pending = entry.gather(&check, &mut o, &stream).map_err(failed("gathering"))?;
    pending.wait().map_err(failed("gathering"))?;
    let got = stream.clone_dtoh(&o).map_err(failed("copying back"))?;
    for (k, &r) in check.iter().enumerate() {
        if got[k * rb..(k + 1) * rb] != shared.raw.as_slice()[r as usize * rb..(r as usize + 1) * rb] {
            return Err(format!("gathered row {r} differs from the original"));
        }
    }
    let mut lists = Vec::new();
    for &size in batch_rows {
        let of_size = (0..batches)
            .map(|_| stream.clone_htod(&draw(size)).map_err(failed("uploading rows")))
            .collect::<Result<Vec<_>, String>>()?;
        lists.push(of_size);
    }
    let most = batch_rows.iter().max().copied().unwrap_or(0);
    let out = stream.alloc_zeros(most * rb).map_err(failed("allocating"))?;
    Ok(Loaded {
        entry,
        stream,
        lists,
        out,
    })
}

/// What a worker sends back: that it has loaded, then a [`Span`] per job (or what failed).
enum Report {
    Loaded,
    Ran(Span),
}

/// A worker for one GPU: [`load`]s (its outcome is the first report), then runs each job it
/// receives and reports its [`Span`].
fn worker(
    device: &Arc<GpuDevice>,
    shared: &Shared<'_>,
    batch_rows: &[usize],
    batches: usize,
    jobs: Receiver<Job>,
    done: Sender<Result<Report, String>>,
) {
    let Loaded {
        entry,
        stream,
        lists,
        mut out,
    } = match load(device, shared, batch_rows, batches) {
        Ok(l) => {
            let _ = done.send(Ok(Report::Loaded));
            l
        }
        Err(e) => {
            let _ = done.send(Err(format!("device {}: {e}", device.ordinal())));
            return;
        }
    };
    for job in jobs {
        job.barrier.wait();
        let start = Instant::now();
        let mut run = || -> Result<(), String> {
            let mut pending: Vec<PendingDecode<'_>> = Vec::with_capacity(batches);
            for rows in &lists[job.size] {
                match job.method {
                    Method::Ibp => pending.push(
                        entry
                            .gather_device_rows(rows, &mut out, &stream)
                            .map_err(failed("launching"))?,
                    ),
                    Method::Raw => raw_gather(
                        device,
                        Source::Pinned(shared.raw),
                        shared.row_bytes as u64,
                        rows,
                        &mut out,
                        &stream,
                    )
                    .map_err(failed("launching"))?,
                }
            }
            stream.synchronize().map_err(failed("synchronizing"))?;
            pending
                .into_iter()
                .try_for_each(|p| p.wait().map_err(failed("decoding")))
        };
        let result = run()
            .map(|()| {
                Report::Ran(Span {
                    start,
                    end: Instant::now(),
                })
            })
            .map_err(|e| format!("device {}: {:?} run: {e}", device.ordinal(), job.method));
        if done.send(result).is_err() {
            return;
        }
    }
}

/// An error of `what` as a message.
fn failed<E: std::fmt::Display>(what: &'static str) -> impl Fn(E) -> String {
    move |e| format!("{what}: {e}")
}

/// 1, 2, 4, ... below `n`, then `n`.
fn gpu_counts(n: usize) -> Vec<usize> {
    let mut v: Vec<usize> = std::iter::successors(Some(1usize), |k| Some(k * 2))
        .take_while(|&k| k < n)
        .collect();
    v.push(n);
    v
}

/// One table row: a dataset on `gpus` GPUs, batches of `batch` rows.
struct Row {
    name: String,
    row_bytes: usize,
    saved: f64,
    gpus: usize,
    batch: usize,
    ibp: f64,
    raw: f64,
    ibp_one: f64,
}

/// Times IBP and raw gathers of `shared` on 1, 2, 4, ... of `devices` at once, for every batch
/// size: `(GPUs, batch rows, IBP GB/s, raw GB/s, IBP GB/s on one GPU)` per GPU count and size.
fn measure(devices: &[Arc<GpuDevice>], shared: &Shared<'_>, args: &Args) -> Vec<(usize, usize, f64, f64, f64)> {
    std::thread::scope(|s| {
        let (done_tx, done_rx) = channel();
        let mut job_txs = Vec::new();
        for d in devices {
            let (tx, rx) = channel();
            job_txs.push(tx);
            let done_tx = done_tx.clone();
            s.spawn(move || worker(d, shared, &args.batch_rows, args.batches, rx, done_tx));
        }
        for _ in devices {
            match done_rx.recv().unwrap() {
                Ok(Report::Loaded) => {}
                Ok(Report::Ran(_)) => unreachable!("no job was sent yet"),
                Err(e) => panic!("{e}"),
            }
        }
        // One run of `method` on the first `k` GPUs: GB/s of uncompressed rows, all together.
        let run = |method: Method, size: usize, k: usize| -> f64 {
            let barrier = Arc::new(Barrier::new(k));
            for tx in &job_txs[..k] {
                let barrier = barrier.clone();
                tx.send(Job { method, size, barrier }).unwrap();
            }
            let spans: Vec<Span> = (0..k)
                .map(|_| match done_rx.recv().unwrap() {
                    Ok(Report::Ran(span)) => span,
                    Ok(Report::Loaded) => unreachable!("every worker reported its load first"),
                    Err(e) => panic!("{e}"),
                })
                .collect();
            let first = spans.iter().map(|s| s.start).min().unwrap();
            let last = spans.iter().map(|s| s.end).max().unwrap();
            let bytes = (k * args.batches * args.batch_rows[size] * shared.row_bytes) as f64;
            bytes / (last - first).as_secs_f64() / 1e9
        };
        let mut out = Vec::new();
        for (size, &batch) in args.batch_rows.iter().enumerate() {
            let mut ibp_one = 0.0;
            for k in gpu_counts(devices.len()) {
                run(Method::Ibp, size, k); // warm-up
                run(Method::Raw, size, k);
                let (mut ibp, mut raw) = (Vec::new(), Vec::new());
                for rep in 0..args.reps {
                    let order = if rep % 2 == 0 {
                        [Method::Ibp, Method::Raw]
                    } else {
                        [Method::Raw, Method::Ibp]
                    };
                    for m in order {
                        let gbps = run(m, size, k);
                        match m {
                            Method::Ibp => ibp.push(gbps),
                            Method::Raw => raw.push(gbps),
                        }
                    }
                }
                let (ibp, raw) = (median(ibp), median(raw));
                if k == 1 {
                    ibp_one = ibp;
                }
                println!(
                    "batch {batch}, {k} GPU(s): IBP zc {ibp:.1} GB/s | raw zc {raw:.1} GB/s | IBP/raw {:.2}",
                    ibp / raw
                );
                out.push((k, batch, ibp, raw, ibp_one));
            }
        }
        drop(job_txs);
        out
    })
}

fn main() {
    let args = parse_args();
    let count = match ibp_gpu::device_count() {
        Ok(n) if n > 0 => n,
        Ok(_) => {
            println!("SKIPPED: no GPU: the driver reports no device");
            return;
        }
        Err(e) if e.is_no_gpu() => {
            println!("SKIPPED: {e}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let n = args.devices.unwrap_or(count);
    if n > count {
        USAGE.error(&format!("--devices {n}: this host has {count} GPU(s)"));
    }
    let devices: Vec<Arc<GpuDevice>> = (0..n).map(|i| GpuDevice::new(i).unwrap()).collect();
    println!(
        "{n} of {count} GPU(s): {}; batches of {:?} rows, {} per GPU per run, medians of {} runs",
        devices
            .iter()
            .map(|d| format!("{} ({})", d.name(), d.ordinal()))
            .collect::<Vec<_>>()
            .join(", "),
        args.batch_rows,
        args.batches,
        args.reps
    );
    let mut table = Vec::new();
    for ds in datasets(&args) {
        let rb = ds.row_bytes;
        let t0 = Instant::now();
        let opts = EncodeOptions {
            sample_fraction: Some(0.05),
            ..EncodeOptions::for_gpu()
        };
        let chunk_rows = ((8usize << 20) / rb).clamp(1, 1 << 20);
        let chunks = RepeatedChunks::encode(&ds.base, rb, &opts, chunk_rows, args.target_mib << 20);
        let (raw_len, saved) = (chunks.raw_len(), chunks.saved_percent());
        let host = HostEntry::with_form(
            &devices[0],
            rb as u64,
            &chunks.all_metas(),
            &chunks.all_payloads(),
            ChunkForm::AsStored,
        )
        .unwrap();
        let mut raw = PinnedBuffer::new(devices[0].context(), raw_len).unwrap();
        for c in raw.as_mut_slice().chunks_mut(ds.base.len()) {
            c.copy_from_slice(&ds.base[..c.len()]);
        }
        let shared = Shared {
            host: &host,
            raw: &raw,
            row_bytes: rb,
            rows: (raw_len / rb) as u64,
        };
        println!(
            "\n## {} {rb} B rows: {} MiB raw, {saved:.1} % saved (prepared in {:.1} s)",
            ds.name,
            raw_len >> 20,
            t0.elapsed().as_secs_f64()
        );
        let times = measure(&devices, &shared, &args);
        table.extend(times.into_iter().map(|(gpus, batch, ibp, raw, ibp_one)| Row {
            name: ds.name.clone(),
            row_bytes: rb,
            saved,
            gpus,
            batch,
            ibp,
            raw,
            ibp_one,
        }));
    }
    println!(
        "\n### All GPUs gathering at once from one pinned payload (GB/s of uncompressed rows, all GPUs together)\n"
    );
    println!(
        "| dataset | row B | saved % | batch | GPUs | IBP zc | raw zc | IBP / raw | IBP / (GPUs x IBP on 1 GPU) |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for r in &table {
        println!(
            "| {} | {} | {:.1} | {} | {} | {:.1} | {:.1} | {:.2} | {:.2} |",
            r.name,
            r.row_bytes,
            r.saved,
            r.batch,
            r.gpus,
            r.ibp,
            r.raw,
            r.ibp / r.raw,
            r.ibp / (r.gpus as f64 * r.ibp_one)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::gpu_counts;

    #[test]
    fn gpu_counts_double_up_to_every_gpu() {
        assert_eq!(gpu_counts(1), vec![1]);
        assert_eq!(gpu_counts(2), vec![1, 2]);
        assert_eq!(gpu_counts(6), vec![1, 2, 4, 6]);
        assert_eq!(gpu_counts(8), vec![1, 2, 4, 8]);
    }
}
