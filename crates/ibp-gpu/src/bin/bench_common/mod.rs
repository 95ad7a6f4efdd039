//! What the GPU benchmark binaries share: their command lines, medians, the real datasets (`.npy`
//! files) of a folder, and entries made of one encoded block repeated.

use ibp_codec::EncodeOptions;
use ibp_format::ChunkMeta;
use ibp_gpu::testdata::{encode_rows_parallel, read_npy};

/// A binary's name and usage text, for errors about its arguments.
pub struct Usage {
    /// The binary's name.
    pub name: &'static str,
    /// Its usage text.
    pub text: &'static str,
}

impl Usage {
    /// Prints `why` and the usage to stderr and exits with status 2.
    pub fn error(&self, why: &str) -> ! {
        eprintln!("{}: {why}\n{}", self.name, self.text);
        std::process::exit(2)
    }

    /// Reads the command line: `-h`/`--help` prints the usage and exits; every other flag goes to
    /// `on(flag, value)`, where `value()` takes the next argument as the flag's value (a usage
    /// error when there is none); `on` returns whether it knows the flag (a usage error if not).
    pub fn for_each_flag(&self, mut on: impl FnMut(&str, &mut dyn FnMut() -> String) -> bool) {
        let mut it = std::env::args().skip(1);
        while let Some(flag) = it.next() {
            if flag == "-h" || flag == "--help" {
                println!("{}", self.text);
                std::process::exit(0)
            }
            let mut value = || {
                it.next()
                    .unwrap_or_else(|| self.error(&format!("{flag} needs a value")))
            };
            if !on(&flag, &mut value) {
                self.error(&format!("unknown flag {flag}"))
            }
        }
    }

    /// Parses `value` of `flag`, or exits with a usage error naming both.
    pub fn parsed<T: std::str::FromStr>(&self, flag: &str, value: &str) -> T {
        value
            .parse()
            .unwrap_or_else(|_| self.error(&format!("{flag}: cannot read {value:?}")))
    }
}

/// The median of `v` (not empty).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// A real dataset: a `.npy` file's name (without `.npy`), its row size and its first rows.
pub struct NpyDataset {
    /// The file's name without `.npy`.
    pub name: String,
    /// Bytes of one row.
    pub row_bytes: usize,
    /// The first rows, at most `base_bytes` of them (at least one row).
    pub rows: Vec<u8>,
}

/// Every `.npy` file of `dir` in name order, each cut to its first `base_bytes` of rows (at least
/// one row); files that cannot be read, or hold no rows, are named and skipped.
pub fn npy_datasets(dir: &str, base_bytes: usize) -> Vec<NpyDataset> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        println!("no real datasets: {dir} not found");
        return Vec::new();
    };
    let mut paths: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "npy"))
        .collect();
    paths.sort();
    let mut out = Vec::new();
    for p in paths {
        match read_npy(&p) {
            Ok(npy) if npy.row_bytes > 0 && npy.rows > 0 => {
                let keep = npy.rows.min((base_bytes / npy.row_bytes).max(1));
                out.push(NpyDataset {
                    name: p.file_stem().unwrap().to_string_lossy().into_owned(),
                    row_bytes: npy.row_bytes,
                    rows: npy.data[..keep * npy.row_bytes].to_vec(),
                });
            }
            Ok(_) => println!("skipping {}: no rows", p.display()),
            Err(e) => println!("skipping {}: {e}", p.display()),
        }
    }
    out
}

/// A block of rows encoded once, its chunks repeated `copies` times: an entry of about the target
/// size whose chunks cost one encoding.
pub struct RepeatedChunks {
    /// The block's chunks' metadata, in row order.
    pub metas: Vec<ChunkMeta>,
    /// The block's chunks' payloads.
    pub payloads: Vec<Vec<u8>>,
    /// How many times the block repeats.
    pub copies: usize,
    /// Bytes of the block's rows.
    pub block_bytes: usize,
}

impl RepeatedChunks {
    /// Encodes `block` (rows of `row_bytes`) in chunks of `chunk_rows` rows (parts in parallel) and
    /// repeats it up to about `target_bytes` (at least once).
    pub fn encode(
        block: &[u8],
        row_bytes: usize,
        opts: &EncodeOptions,
        chunk_rows: usize,
        target_bytes: usize,
    ) -> RepeatedChunks {
        let (metas, payloads) = encode_rows_parallel(block, row_bytes, opts, chunk_rows);
        RepeatedChunks {
            metas,
            payloads,
            copies: (target_bytes / block.len().max(1)).max(1),
            block_bytes: block.len(),
        }
    }

    /// Every chunk's metadata, the block's repeated.
    pub fn all_metas(&self) -> Vec<ChunkMeta> {
        (0..self.copies).flat_map(|_| self.metas.iter().cloned()).collect()
    }

    /// Every chunk's payload, the block's repeated.
    pub fn all_payloads(&self) -> Vec<&[u8]> {
        (0..self.copies)
            .flat_map(|_| self.payloads.iter().map(|p| p.as_slice()))
            .collect()
    }

    /// Bytes of all the rows.
    pub fn raw_len(&self) -> usize {
        self.block_bytes * self.copies
    }

    /// Percent of the rows' bytes the payloads save.
    pub fn saved_percent(&self) -> f64 {
        let stored: usize = self.payloads.iter().map(|p| p.len()).sum();
        100.0 * (1.0 - stored as f64 / self.block_bytes as f64)
    }
}
