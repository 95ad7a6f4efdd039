//! Replays every committed fuzz input — the corpora `fuzz/corpus/<target>/` and the minimised
//! crashes `fuzz/artifacts/<target>/` — through the same property functions the fuzz targets run
//! (`fuzz/src/props.rs`), on every ordinary `cargo test`. A crash once found stays fixed.
//!
//! `cargo test --test fuzz_replay -- --ignored write_seed_corpus` rewrites the generated seed files
//! (`seed-*`) of every corpus from `replay::sample_containers()`.

#[path = "../fuzz/src/props.rs"]
#[allow(dead_code)]
mod props;
#[path = "../fuzz/src/replay.rs"]
#[allow(dead_code)]
mod replay;
#[path = "../fuzz/src/tensor_props.rs"]
mod tensor_props;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

/// Runs the property of `target` on one input.
fn check(target: &str, data: &[u8]) {
    match target {
        "parse" => props::check_parse(data),
        "decode" => props::check_decode(data),
        "gather" => props::check_gather(data),
        "roundtrip" => props::check_roundtrip(data),
        "differential" => props::check_differential(data),
        "no_leak" => props::check_no_leak(data),
        // Containers: the CPU decoder's property here; the kernels' own property (which needs the
        // ibp-gpu feature host-kernels) replays them in crates/ibp-gpu/tests/host_kernels.rs.
        "kernels" => props::check_decode(data),
        other => panic!("no property for target {other:?}"),
    }
}

#[test]
fn every_corpus_and_crash_file_passes_its_property() {
    let inputs = replay::fuzz_inputs(&fuzz_dir()).expect("fuzz/ readable");
    for target in replay::TARGETS {
        let corpus = inputs.iter().filter(|i| i.target == target && !i.is_crash).count();
        assert!(corpus > 0, "fuzz/corpus/{target}/ is empty: nothing would be replayed");
    }
    let mut failures = Vec::new();
    for input in &inputs {
        let outcome = catch_unwind(AssertUnwindSafe(|| check(&input.target, &input.bytes)));
        if let Err(panic) = outcome {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            failures.push(format!("{}: {msg}", input.path.display()));
        }
    }
    let crashes = inputs.iter().filter(|i| i.is_crash).count();
    eprintln!("replayed {} fuzz inputs ({crashes} minimised crashes)", inputs.len());
    assert!(
        failures.is_empty(),
        "{} of {} fuzz inputs fail their property:\n{}",
        failures.len(),
        inputs.len(),
        failures.join("\n")
    );
}

/// The `tensor_files` target's corpus and crashes (`.npy` and safetensors files behind a selector
/// byte) through its property: the `ibp` command's readers and writers of tensor files.
#[test]
fn tensor_file_inputs_pass_their_property() {
    let inputs = replay::fuzz_inputs_of(&fuzz_dir(), &["tensor_files"]).expect("fuzz/ readable");
    assert!(
        inputs.iter().filter(|i| !i.is_crash).count() >= 7,
        "fuzz/corpus/tensor_files/ lost its seeds"
    );
    for input in &inputs {
        let outcome = catch_unwind(AssertUnwindSafe(|| tensor_props::check_tensor_files(&input.bytes)));
        assert!(outcome.is_ok(), "{} fails its property", input.path.display());
    }
    // The seeds are read, not only rejected: each parses (a property that returned early on every
    // input would check nothing).
    for input in inputs.iter().filter(|i| {
        i.path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("seed-"))
    }) {
        let (&sel, file) = input.bytes.split_first().unwrap();
        let parsed = if sel % 2 == 0 {
            ibp_cli::tensor_io::npy::parse(file).is_ok()
        } else {
            ibp_cli::tensor_io::safetensors::parse(file).is_ok()
        };
        assert!(parsed, "{} does not parse", input.path.display());
    }
}

#[test]
fn the_seed_corpus_matches_the_sample_containers() {
    // The committed seeds are what write_seed_corpus generates: a change to the writer that
    // changes them is noticed (regenerate with the ignored test below).
    for (name, bytes) in replay::sample_containers() {
        let path = fuzz_dir().join("corpus/decode").join(format!("seed-{name}.ibp"));
        let committed = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if committed != bytes {
            eprintln!(
                "note: {} differs from the writer's current output (regenerate the seeds)",
                path.display()
            );
        }
        props::check_decode(&committed);
    }
}

#[test]
fn sample_containers_decode_and_satisfy_every_container_property() {
    let samples = replay::sample_containers();
    assert!(samples.len() >= 8);
    for (name, bytes) in &samples {
        let decoded = ibp_codec::decode_bytes(bytes, ibp_codec::row::DecoderKind::Oracle);
        assert!(decoded.is_ok(), "sample {name}: {decoded:?}");
        for target in ["parse", "decode", "differential", "no_leak"] {
            check(target, bytes);
        }
        check("gather", &replay::make_gather_input(&[0, 1, 5, 0x8000_0007, 3], bytes));
    }
}

#[test]
fn fix_crcs_restores_every_zeroed_crc_of_a_valid_file() {
    for (name, bytes) in replay::sample_containers() {
        let mut damaged = bytes.clone();
        let len = damaged.len();
        // Header, footer and directory CRCs.
        for at in [28, len - 12, len - 16] {
            damaged[at..at + 4].fill(0);
        }
        // Every chunk's payload and metadata CRCs.
        let reader = ibp_codec::ContainerReader::open(std::io::Cursor::new(&bytes[..])).unwrap();
        for c in reader.entries().iter().flat_map(|e| e.chunks.iter()) {
            let o = c.offset as usize;
            damaged[o + 36..o + 40].fill(0);
            damaged[o + 44..o + 48].fill(0);
        }
        assert_ne!(damaged, bytes);
        assert!(replay::fix_crcs(&mut damaged), "{name}: nothing fixed");
        assert_eq!(damaged, bytes, "{name}: fix_crcs does not restore the CRCs");
        assert!(!replay::fix_crcs(&mut damaged), "{name}: a valid file needs no fixing");
    }
}

#[test]
fn gather_input_envelope_round_trips() {
    let file = b"\x89IBP-not-really";
    let input = replay::make_gather_input(&[1, 0x8000_0000, 42], file);
    let (indices, rest) = replay::split_gather_input(&input);
    assert_eq!(indices, vec![1, 0x8000_0000, 42]);
    assert_eq!(rest, file);
    // Fewer bytes than the indices announced: no index, the rest is the container.
    let (none, rest) = replay::split_gather_input(&[3, 1, 2]);
    assert!(none.is_empty());
    assert_eq!(rest, [1, 2]);
}

/// Writes the generated seeds into every corpus (`seed-*` files; other corpus files are kept).
#[test]
#[ignore = "rewrites fuzz/corpus/*/seed-*; run by hand after a format change"]
fn write_seed_corpus() {
    let samples = replay::sample_containers();
    let write = |target: &str, name: &str, bytes: &[u8]| {
        let dir = fuzz_dir().join("corpus").join(target);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("seed-{name}")), bytes).unwrap();
    };
    for (name, bytes) in &samples {
        for target in ["parse", "decode", "differential", "no_leak"] {
            write(target, &format!("{name}.ibp"), bytes);
        }
        let rows = [0u32, 2, 1, 0x8000_0000 | 3, 0, 7, 5];
        write("gather", name, &replay::make_gather_input(&rows, bytes));
    }
    // Round-trip and row-level differential seeds: byte strings the Arbitrary decoding turns into
    // a spread of options, widths and records.
    let mut rng = replay::SampleRng::new(77);
    for k in 0..24u8 {
        let len = 48 + (rng.next_u64() % 400) as usize;
        let mut bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        bytes[0] = k; // width
        bytes[3] = k % 7; // groups
        bytes[4] = k % 8; // align_log2
        write("roundtrip", &format!("{k:02}"), &bytes);
        let mut row: Vec<u8> = (0..len / 2).map(|_| rng.next_u64() as u8).collect();
        row[0] = k;
        write("differential", &format!("row-{k:02}"), &row);
    }
}

#[test]
fn replay_cases_agree_with_the_fast_cpu_decoder() {
    // The same loop a GPU replay runs (with its own decoder in place of the fast CPU one).
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cases = replay::replay_cases(root).expect("readable");
    assert!(cases.len() > 50, "only {} replay cases", cases.len());
    let mut decoded = 0;
    for case in &cases {
        let fast = ibp_codec::decode_bytes(&case.bytes, ibp_codec::row::DecoderKind::Fast)
            .map(|v| v.into_iter().map(|(e, b)| (e.name, b)).collect::<Vec<_>>())
            .map_err(|e| e.code);
        assert_eq!(fast, case.expected, "{}", case.label);
        decoded += case.expected.is_ok() as usize;
    }
    assert!(decoded >= 10, "only {decoded} cases decode");
}

#[test]
fn conformance_vectors_pass_every_container_property() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance/vectors");
    let Ok(listing) = std::fs::read_dir(&dir) else {
        eprintln!("no conformance/vectors yet: nothing to replay");
        return;
    };
    let mut paths: Vec<PathBuf> = listing
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ibp"))
        .collect();
    paths.sort();
    let mut failures = Vec::new();
    for path in &paths {
        let bytes = std::fs::read(path).unwrap();
        for target in ["parse", "decode", "differential", "no_leak"] {
            if catch_unwind(AssertUnwindSafe(|| check(target, &bytes))).is_err() {
                failures.push(format!("{target}: {}", path.display()));
            }
        }
        let gather = replay::make_gather_input(&[0, 3, 1, 0x8000_0002], &bytes);
        if catch_unwind(AssertUnwindSafe(|| check("gather", &gather))).is_err() {
            failures.push(format!("gather: {}", path.display()));
        }
    }
    let valid = paths
        .iter()
        .filter(|p| ibp_codec::decode_bytes(&std::fs::read(p).unwrap(), ibp_codec::row::DecoderKind::Fast).is_ok())
        .count();
    eprintln!(
        "{} conformance vectors ({valid} valid) through 5 properties",
        paths.len()
    );
    assert!(paths.is_empty() || valid > 0, "no conformance vector decodes");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
