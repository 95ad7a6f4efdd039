//! The committed fuzz inputs (corpora and minimised crashes) and the containers inside them.
//!
//! Depends only on `std`, `ibp_codec` and `ibp_format`, so that any test binary can include it with
//! `#[path = ".../fuzz/src/replay.rs"] mod replay;` — the root `tests/fuzz_replay.rs` does, and a
//! GPU replay can too: for every [`FuzzInput`], [`containers_of`] gives the container byte strings
//! it holds and [`cpu_reference`] what the CPU decoder makes of each (the bytes of every entry, or
//! the error code); another decoder must produce the same bytes or the same error code.

use ibp_codec::options::EncodeOptions;
use ibp_codec::row::DecoderKind;
use ibp_format::{
    crc32, ChunkMeta, Directory, Dtype, ErrorCode, RawChunkHeader, WordWidth, CHUNK_HEADER_LEN, FOOTER_LEN, HEADER_LEN,
    MAGIC, MAX_ALIGN_LOG2, MIN_FILE_LEN,
};
use std::path::{Path, PathBuf};

/// Every fuzz target, in the order the scripts run them.
pub const TARGETS: [&str; 7] = [
    "parse",
    "decode",
    "gather",
    "roundtrip",
    "differential",
    "no_leak",
    "kernels",
];

/// One committed fuzz input.
#[derive(Debug, Clone)]
pub struct FuzzInput {
    /// The target whose corpus or artifact folder holds it.
    pub target: String,
    /// Its path.
    pub path: PathBuf,
    /// Whether it is a minimised crash (`fuzz/artifacts/`) rather than a corpus entry.
    pub is_crash: bool,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// Lists every file under `fuzz_dir/corpus/<target>/` and `fuzz_dir/artifacts/<target>/` for the
/// known targets (sorted by path; README and dot files skipped). `fuzz_dir` is the repository's
/// `fuzz/` folder.
pub fn fuzz_inputs(fuzz_dir: &Path) -> std::io::Result<Vec<FuzzInput>> {
    fuzz_inputs_of(fuzz_dir, &TARGETS)
}

/// [`fuzz_inputs`] of the given targets (`tensor_files`, whose inputs are not containers, is
/// replayed apart).
pub fn fuzz_inputs_of(fuzz_dir: &Path, targets: &[&str]) -> std::io::Result<Vec<FuzzInput>> {
    let mut inputs = Vec::new();
    for (kind, is_crash) in [("corpus", false), ("artifacts", true)] {
        for &target in targets {
            let dir = fuzz_dir.join(kind).join(target);
            if !dir.is_dir() {
                continue;
            }
            let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)?
                .map(|e| e.map(|e| e.path()))
                .collect::<std::io::Result<_>>()?;
            paths.sort();
            for path in paths {
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                if !path.is_file() || name.starts_with('.') || name.ends_with(".md") {
                    continue;
                }
                let bytes = std::fs::read(&path)?;
                inputs.push(FuzzInput {
                    target: target.to_owned(),
                    path,
                    is_crash,
                    bytes,
                });
            }
        }
    }
    Ok(inputs)
}

/// Splits a `gather` input into its requested row indices and the container that follows them.
///
/// Layout: one byte `k`, then `k` little-endian `u32` indices, then the container. Missing bytes
/// give fewer indices and an empty container.
pub fn split_gather_input(data: &[u8]) -> (Vec<u32>, &[u8]) {
    let Some((&k, rest)) = data.split_first() else {
        return (Vec::new(), data);
    };
    let take = (k as usize * 4).min(rest.len()) / 4 * 4;
    let indices = rest[..take]
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
        .collect();
    (indices, &rest[take..])
}

/// Builds a `gather` input from indices and a container (the inverse of [`split_gather_input`]).
pub fn make_gather_input(indices: &[u32], container: &[u8]) -> Vec<u8> {
    let k = indices.len().min(255);
    let mut out = vec![k as u8];
    for i in &indices[..k] {
        out.extend_from_slice(&i.to_le_bytes());
    }
    out.extend_from_slice(container);
    out
}

/// The container byte strings a fuzz input of `target` holds: the input itself (or, for `gather`,
/// the part after the indices) and, when it differs, the same bytes with every CRC recomputed
/// ([`fix_crcs`]). `roundtrip` inputs and row-level `differential` inputs hold none.
pub fn containers_of(target: &str, data: &[u8]) -> Vec<Vec<u8>> {
    let file = match target {
        "gather" => split_gather_input(data).1,
        "roundtrip" => return Vec::new(),
        "differential" if !data.starts_with(&MAGIC) => return Vec::new(),
        _ => data,
    };
    with_fixed_crcs(file)
}

/// `file`, followed by the CRC-fixed copy when [`fix_crcs`] changes anything.
pub fn with_fixed_crcs(file: &[u8]) -> Vec<Vec<u8>> {
    let mut out = vec![file.to_vec()];
    let mut fixed = file.to_vec();
    if fix_crcs(&mut fixed) {
        out.push(fixed);
    }
    out
}

fn u64_at(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"))
}

fn put_u32(b: &mut [u8], o: usize, v: u32) {
    b[o..o + 4].copy_from_slice(&v.to_le_bytes());
}

/// Recomputes every CRC that the structure of `file` lets one locate (payload and metadata CRCs of
/// each chunk the directory lists, then the directory, footer and header CRCs), so that a fuzzer's
/// mutations reach the checks behind the CRCs. Returns whether any byte changed. Never panics.
pub fn fix_crcs(file: &mut [u8]) -> bool {
    let len = file.len() as u64;
    if len < MIN_FILE_LEN {
        return false;
    }
    let before = file.to_vec();
    let footer = (len - FOOTER_LEN) as usize;
    let dir_offset = u64_at(file, footer);
    let dir_len = u64_at(file, footer + 8);
    let dir_end = dir_offset.checked_add(dir_len);
    if dir_offset >= HEADER_LEN && dir_end.is_some_and(|e| e <= footer as u64) {
        let dir = dir_offset as usize..dir_end.expect("checked") as usize;
        if let Ok(directory) = Directory::parse(&file[dir.clone()], dir_offset) {
            for entry in &directory.entries {
                for c in &entry.chunks {
                    fix_chunk_crcs(file, c.offset, c.byte_len);
                }
            }
        }
        let crc = crc32(&file[dir]);
        put_u32(file, footer + 16, crc);
    }
    let crc = crc32(&file[footer..footer + 20]);
    put_u32(file, footer + 20, crc);
    let crc = crc32(&file[..28]);
    put_u32(file, 28, crc);
    *file != before[..]
}

/// Recomputes one chunk's `payload_crc`, then its `meta_crc` (which covers `payload_crc`).
fn fix_chunk_crcs(file: &mut [u8], offset: u64, byte_len: u64) {
    let Some(end) = offset.checked_add(byte_len).filter(|&e| e <= file.len() as u64) else {
        return;
    };
    if byte_len < CHUNK_HEADER_LEN {
        return;
    }
    let c = offset as usize;
    let Ok(h) = RawChunkHeader::parse(&file[c..end as usize]) else {
        return;
    };
    let align = 1u64 << h.align_log2.min(MAX_ALIGN_LOG2);
    let Some(payload_start) = ChunkMeta::payload_start(offset, h.meta_len as u64, align) else {
        return;
    };
    let Some(meta_end) = offset.checked_add(payload_start).filter(|&e| e <= end) else {
        return;
    };
    if let Some(payload_end) = meta_end.checked_add(h.payload_len).filter(|&e| e <= end) {
        let crc = crc32(&file[meta_end as usize..payload_end as usize]);
        put_u32(file, c + 36, crc);
    }
    let mut covered = file[c..c + 44].to_vec();
    covered.extend_from_slice(&file[c + 48..meta_end as usize]);
    let crc = crc32(&covered);
    put_u32(file, c + 44, crc);
}

/// One container to replay through another decoder, with what the CPU reference makes of it.
#[derive(Debug, Clone)]
pub struct ReplayCase {
    /// Where it comes from: a path, with `#crc-fixed` when its CRCs were recomputed.
    pub label: String,
    /// The container's bytes.
    pub bytes: Vec<u8>,
    /// [`cpu_reference`] of the bytes: every entry's name and bytes, or the error code.
    pub expected: Result<Vec<(String, Vec<u8>)>, ErrorCode>,
}

/// Every container held by the committed fuzz inputs under `repo_root/fuzz/` (as they are and
/// CRC-fixed, see [`containers_of`]), the sample containers, and the conformance vectors
/// `repo_root/conformance/vectors/*.ibp` when present, each with the CPU reference's outcome. A
/// second decoder (the GPU's) conforms on these when it returns `expected`: the same bytes for every
/// entry, or an error with the same code.
pub fn replay_cases(repo_root: &Path) -> std::io::Result<Vec<ReplayCase>> {
    let mut cases = Vec::new();
    let mut push = |label: String, files: Vec<Vec<u8>>| {
        for (k, bytes) in files.into_iter().enumerate() {
            let label = if k == 0 {
                label.clone()
            } else {
                format!("{label}#crc-fixed")
            };
            let expected = cpu_reference(&bytes);
            cases.push(ReplayCase { label, bytes, expected });
        }
    };
    for (name, bytes) in sample_containers() {
        push(format!("sample:{name}"), vec![bytes]);
    }
    for input in fuzz_inputs(&repo_root.join("fuzz"))? {
        push(
            input.path.display().to_string(),
            containers_of(&input.target, &input.bytes),
        );
    }
    let vectors = repo_root.join("conformance/vectors");
    if vectors.is_dir() {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&vectors)?
            .map(|e| e.map(|e| e.path()))
            .collect::<std::io::Result<_>>()?;
        paths.sort();
        for path in paths.into_iter().filter(|p| p.extension().is_some_and(|e| e == "ibp")) {
            let bytes = std::fs::read(&path)?;
            push(path.display().to_string(), vec![bytes]);
        }
    }
    Ok(cases)
}

/// What the CPU reference decoder makes of a container: every entry's name and decoded bytes, or
/// the error code of the first failure (spec 11.1).
pub fn cpu_reference(file: &[u8]) -> Result<Vec<(String, Vec<u8>)>, ErrorCode> {
    ibp_codec::decode_bytes(file, DecoderKind::Oracle)
        .map(|entries| entries.into_iter().map(|(info, bytes)| (info.name, bytes)).collect())
        .map_err(|e| e.code)
}

/// Checks that a random-access decoder (spec 11.3) may report `other` for a file on which the CPU
/// reference reports `first`: the file has at least two damaged chunks in one entry (the CPU's
/// whole-file check, continuing past damage), the first of them fails with `first`, and a later
/// chunk of the same entry fails with `other`. A decoder that reports another code for a file with
/// one defect, or a code no chunk of the file has, is not covered by 11.3; the error says why.
pub fn several_defects_explain(file: &[u8], first: ErrorCode, other: ErrorCode) -> Result<(), String> {
    let mut reader = ibp_codec::ContainerReader::open(std::io::Cursor::new(file))
        .map_err(|e| format!("the file does not open ({}), so no chunk can fail later", e.code))?;
    let report = reader.verify(DecoderKind::Oracle);
    let Some((entry, chunk, error)) = report.problems.first() else {
        return Err("the CPU's whole-file check finds no damaged chunk".into());
    };
    if error.code != first {
        return Err(format!(
            "the first damaged chunk fails with {}, not {first}",
            error.code
        ));
    }
    let later = report
        .problems
        .iter()
        .skip(1)
        .any(|(e, c, err)| e == entry && c > chunk && err.code == other);
    if later {
        Ok(())
    } else {
        Err(format!(
            "no later chunk of entry {entry} fails with {other} (damaged chunks: {:?})",
            report
                .problems
                .iter()
                .map(|(e, c, err)| (e, c, err.code))
                .collect::<Vec<_>>()
        ))
    }
}

/// The `fuzz/` folder of this repository, found from a crate's manifest directory by walking up.
pub fn fuzz_dir_from(manifest_dir: &Path) -> Option<PathBuf> {
    manifest_dir
        .ancestors()
        .map(|d| d.join("fuzz"))
        .find(|d| d.join("Cargo.toml").is_file())
}

/// A deterministic xorshift generator for sample data (no dependency, same bytes everywhere).
pub struct SampleRng(u64);

impl SampleRng {
    /// A generator from a non-zero seed.
    pub fn new(seed: u64) -> SampleRng {
        SampleRng(seed | 1)
    }

    /// The next 64 pseudo-random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
}

/// `rows` rows of `row_bytes` bytes that share most bits: every byte is the base row's byte with
/// the bits of a per-column noise mask replaced by random bits, so the encoder codes most rows.
pub fn drifting_rows(rng: &mut SampleRng, rows: usize, row_bytes: usize, noisy_bits: u32) -> Vec<u8> {
    let base: Vec<u8> = (0..row_bytes).map(|_| rng.next_u64() as u8).collect();
    let noise: Vec<u8> = (0..row_bytes)
        .map(|_| {
            let mut m = 0u8;
            for _ in 0..noisy_bits {
                m |= 1 << (rng.next_u64() % 8);
            }
            m
        })
        .collect();
    let mut out = Vec::with_capacity(rows * row_bytes);
    for _ in 0..rows {
        for j in 0..row_bytes {
            let r = rng.next_u64() as u8;
            out.push((base[j] & !noise[j]) | (r & noise[j]));
        }
    }
    out
}

/// A sample: name, dtype, rows, elements per row, word width, align_log2, groups, rows per chunk
/// and noisy bits per byte.
type SampleCase = (
    &'static str,
    Dtype,
    usize,
    usize,
    Option<WordWidth>,
    u8,
    u32,
    Option<u32>,
    u32,
);

/// A tensor as `encode_to_vec` takes it: name, dtype, shape, row bytes, data.
type Tensor<'a> = (&'a str, Dtype, &'a [u64], u64, &'a [u8]);

/// Small valid containers covering the format's options (every word width, alignments 1 to 128,
/// 1 to 4 groups, several chunks per entry, raw and coded rows, empty and rank-0 entries, several
/// entries): the seeds of the container fuzz targets and the inputs of the structural tests.
/// Each is `(name, bytes)`; all are a few KiB.
pub fn sample_containers() -> Vec<(String, Vec<u8>)> {
    let mut rng = SampleRng::new(0x1B9_5EED);
    let mut out = Vec::new();
    let cases: [SampleCase; 8] = [
        // name, dtype, rows, elements per row, width, align_log2, groups, chunk rows, noisy bits
        ("f32_w32_a0", Dtype::F32, 24, 8, Some(WordWidth::W32), 0, 1, None, 2),
        (
            "bf16_w16_a4_g2",
            Dtype::Bf16,
            20,
            12,
            Some(WordWidth::W16),
            4,
            2,
            Some(8),
            3,
        ),
        (
            "u8_w8_a0_chunks",
            Dtype::U8,
            30,
            16,
            Some(WordWidth::W8),
            0,
            1,
            Some(7),
            1,
        ),
        ("f64_w64_a7", Dtype::F64, 10, 4, Some(WordWidth::W64), 7, 1, None, 4),
        ("i16_auto_g4", Dtype::I16, 40, 6, None, 2, 4, Some(16), 2),
        ("f16_raw_noise", Dtype::F16, 8, 8, Some(WordWidth::W16), 1, 1, None, 8),
        ("u64_w32_a3", Dtype::U64, 12, 3, Some(WordWidth::W32), 3, 3, Some(5), 5),
        ("bool_w8_one_row", Dtype::Bool, 1, 5, Some(WordWidth::W8), 0, 1, None, 1),
    ];
    for (name, dtype, rows, elems, width, align_log2, groups, chunk_rows, noisy) in cases {
        let row_bytes = elems * dtype.size() as usize;
        let data = drifting_rows(&mut rng, rows, row_bytes, noisy);
        let opts = EncodeOptions {
            word_width: width,
            threshold: None,
            sample_fraction: None,
            groups,
            align_log2,
            chunk_rows,
            ..EncodeOptions::default()
        };
        let shape = [rows as u64, elems as u64];
        let tensors = [("tensor", dtype, &shape[..], row_bytes as u64, &data[..])];
        let file = ibp_codec::encode_to_vec(&tensors, &opts).expect("sample encodes");
        out.push((name.to_owned(), file));
    }
    // Several entries in one file: an empty tensor, a scalar and two matrices.
    let a = drifting_rows(&mut rng, 16, 16, 2);
    let b = drifting_rows(&mut rng, 9, 8, 3);
    let scalar = 7.5f32.to_le_bytes();
    let opts = EncodeOptions {
        chunk_rows: Some(6),
        ..EncodeOptions::default()
    };
    let tensors: [Tensor; 4] = [
        ("weights.a", Dtype::F32, &[16, 4], 16, &a),
        ("empty", Dtype::F16, &[0, 3], 6, &[]),
        ("scalar", Dtype::F32, &[], 4, &scalar),
        ("weights.b", Dtype::I32, &[9, 2], 8, &b),
    ];
    let file = ibp_codec::encode_to_vec(&tensors, &opts).expect("sample encodes");
    out.push(("multi_entry".to_owned(), file));
    // No entries at all: header, empty directory, footer.
    let empty = ibp_codec::encode_to_vec(&[], &EncodeOptions::default()).expect("encodes");
    out.push(("no_entries".to_owned(), empty));
    out
}
