//! The conformance suite (spec section 13): every vector of `conformance/manifest.json` through the
//! CPU oracle and fast decoders, the re-encoding rule, the release (freeze) rule, and the rule that
//! the committed vectors are exactly what the generator produces.

use ibp_codec::{ContainerReader, DecoderKind};
use ibp_conformance::encoder::encode_entries;
use ibp_conformance::manifest::{Manifest, Outcome, Released, VectorRecord};
use ibp_conformance::runner::{check, decode_cpu, load_manifest, load_vector};
use ibp_conformance::vector::DecodedEntry;
use ibp_conformance::{conformance_dir, data_dir, generate, workspace_root};
use ibp_format::{Dtype, ErrorCode};
use std::collections::{BTreeSet, HashSet};

fn manifest() -> Manifest {
    load_manifest(&conformance_dir()).expect("conformance/manifest.json")
}

#[test]
fn every_vector_gives_the_listed_result_on_oracle_and_fast_decoders() {
    let root = conformance_dir();
    let m = manifest();
    let mut failures = Vec::new();
    for rec in &m.vectors {
        let bytes = load_vector(&root, rec).unwrap();
        for kind in [DecoderKind::Oracle, DecoderKind::Fast] {
            if let Err(e) = check(&root, rec, &decode_cpu(&bytes, kind)) {
                failures.push(format!("{} ({kind:?}): {e}", rec.id));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn manifest_is_well_formed_and_cites_existing_clauses() {
    let m = manifest();
    assert_eq!(m.format, ibp_conformance::manifest::MANIFEST_FORMAT);
    let spec = std::fs::read_to_string(workspace_root().join("spec/SPEC.md")).unwrap();
    let clauses = ibp_conformance::stats::spec_clauses(&spec);
    let mut ids = HashSet::new();
    let retired: HashSet<&str> = m.retired.iter().map(|r| r.id.as_str()).collect();
    for rec in &m.vectors {
        assert!(ids.insert(rec.id.clone()), "{} listed twice", rec.id);
        assert!(!retired.contains(rec.id.as_str()), "{} is a retired id", rec.id);
        let (prefix, number) = rec.id.split_at(2);
        assert!(
            number.len() == 4 && number.bytes().all(|b| b.is_ascii_digit()),
            "{}: id must be v-NNNN or x-NNNN",
            rec.id
        );
        assert!(!rec.clauses.is_empty(), "{}: no clauses", rec.id);
        for c in &rec.clauses {
            assert!(
                clauses.contains(c.as_str()),
                "{}: clause {c} is not a section of spec/SPEC.md",
                rec.id
            );
        }
        match rec.outcome {
            Outcome::Valid => {
                assert_eq!(prefix, "v-", "{}", rec.id);
                assert!(
                    rec.entries.is_some() && rec.encoder.is_some() && rec.error.is_none(),
                    "{}",
                    rec.id
                );
                for e in rec.entries.as_ref().unwrap() {
                    assert!(Dtype::from_name(&e.dtype).is_some(), "{}: dtype {}", rec.id, e.dtype);
                    assert_eq!(e.row_count * e.row_bytes, e.decoded_len, "{}: {}", rec.id, e.name);
                }
            }
            Outcome::Invalid => {
                assert_eq!(prefix, "x-", "{}", rec.id);
                let code = rec.error.as_deref().unwrap_or_else(|| panic!("{}: no error", rec.id));
                assert!(ErrorCode::from_name(code).is_some(), "{}: unknown code {code}", rec.id);
                assert!(rec.defect.is_some() && rec.entries.is_none(), "{}", rec.id);
            }
            Outcome::ImplementationDefined => assert!(rec.error.is_some() && rec.entries.is_some(), "{}", rec.id),
        }
    }
}

#[test]
fn released_vectors_are_never_rewritten() {
    let root = conformance_dir();
    let text = std::fs::read_to_string(root.join("released.json")).expect("conformance/released.json");
    let released: Released = serde_json::from_str(&text).unwrap();
    let m = manifest();
    let listed: HashSet<&str> = released
        .releases
        .iter()
        .flat_map(|r| r.ids.iter().map(String::as_str))
        .collect();
    assert_eq!(
        listed,
        released.vectors.keys().map(String::as_str).collect(),
        "releases[].ids must list exactly the ids of vectors"
    );
    for (id, sha) in &released.vectors {
        let rec = m
            .vectors
            .iter()
            .find(|r| &r.id == id)
            .unwrap_or_else(|| panic!("released vector {id} is missing from the manifest"));
        assert_eq!(
            &rec.file_sha256, sha,
            "released vector {id} was rewritten (manifest hash)"
        );
        let bytes = std::fs::read(root.join(&rec.file)).unwrap_or_else(|e| panic!("released vector {id}: {e}"));
        assert_eq!(
            &ibp_conformance::generate::sha256_hex(&bytes),
            sha,
            "released vector {id} was rewritten"
        );
    }
}

#[test]
fn generator_reproduces_the_committed_vectors_byte_for_byte() {
    let root = conformance_dir();
    let files = generate::generate(&data_dir());
    let m = manifest();
    let mut differ = Vec::new();
    for (rel, bytes) in &files {
        if std::fs::read(root.join(rel)).ok().as_deref() != Some(bytes.as_slice()) {
            let by_encoder = m
                .vectors
                .iter()
                .any(|r| &r.file == rel && r.encoder.as_ref().is_some_and(|e| e.reproduces_file));
            differ.push(if by_encoder {
                format!("{rel} (written by the reference encoder: its output changed)")
            } else {
                rel.clone()
            });
        }
    }
    for dir in ["vectors", "expected"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap().flatten() {
            let rel = format!("{dir}/{}", e.file_name().to_string_lossy());
            if !files.contains_key(&rel) {
                differ.push(format!("{rel} (not produced by the generator)"));
            }
        }
    }
    assert!(
        differ.is_empty(),
        "committed conformance files differ from the generator's output; run `cargo run -p ibp-conformance -- generate` and commit (released vectors must not change): {differ:?}"
    );
}

#[test]
fn example_md_is_the_generators_output() {
    let on_disk = std::fs::read_to_string(workspace_root().join("spec/example.md")).expect("spec/example.md");
    assert_eq!(
        on_disk,
        ibp_conformance::example::example_markdown(),
        "run `cargo run -p ibp-conformance -- example` and commit"
    );
}

fn decoded_entries(bytes: &[u8]) -> Vec<DecodedEntry> {
    decode_cpu(bytes, DecoderKind::Oracle)
        .unwrap()
        .into_iter()
        .map(|(info, data)| DecodedEntry {
            name: info.name,
            dtype: info.dtype,
            shape: info.shape,
            row_bytes: info.row_bytes,
            data,
        })
        .collect()
}

/// Encoder conformance: re-encoding each valid vector's entries with its recorded options gives a
/// file both CPU decoders decode to the same entries, the encoder is deterministic, and a file the
/// reference encoder wrote is reproduced byte for byte.
#[test]
fn reencoding_valid_vectors_round_trips_and_is_deterministic() {
    let root = conformance_dir();
    for rec in manifest().vectors.iter().filter(|r| r.outcome == Outcome::Valid) {
        let bytes = load_vector(&root, rec).unwrap();
        let entries = decoded_entries(&bytes);
        let enc = rec.encoder.as_ref().unwrap();
        let first = encode_entries(&entries, &enc.options).unwrap_or_else(|e| panic!("{}: {e}", rec.id));
        let second = encode_entries(&entries, &enc.options).unwrap();
        assert_eq!(first, second, "{}: the encoder is not deterministic", rec.id);
        for kind in [DecoderKind::Oracle, DecoderKind::Fast] {
            check(&root, rec, &decode_cpu(&first, kind))
                .unwrap_or_else(|e| panic!("{} re-encoded ({kind:?}): {e}", rec.id));
        }
        if enc.reproduces_file {
            assert!(
                first == bytes,
                "{}: the reference encoder no longer reproduces this vector",
                rec.id
            );
        }
    }
}

/// Properties of the set as a whole, computed from the files: every feature spec 13 asks for.
#[test]
fn vectors_cover_every_feature_and_error_code() {
    let root = conformance_dir();
    let m = manifest();
    let (mut widths, mut aligns, mut groups, mut row_bytes) =
        (BTreeSet::new(), BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
    let (mut raw_rows, mut coded_rows, mut length_widths) = (0u64, 0u64, BTreeSet::new());
    let (mut zero_entries, mut empty_entry, mut later_minor, mut optional_bits, mut multi_chunk) =
        (false, false, false, false, false);
    let mut dtypes = BTreeSet::new();
    let mut partial_words = false;
    for rec in m.vectors.iter().filter(|r| r.outcome == Outcome::Valid) {
        let bytes = load_vector(&root, rec).unwrap();
        let mut r = ContainerReader::open(std::io::Cursor::new(bytes)).unwrap();
        zero_entries |= r.entries().is_empty();
        later_minor |= r.header().minor_version > 0;
        optional_bits |= r.header().optional_features != 0;
        for e in 0..r.entries().len() {
            let info = r.entries()[e].clone();
            empty_entry |= info.row_count == 0;
            multi_chunk |= info.chunks.len() > 1;
            dtypes.insert(info.dtype.name());
            row_bytes.insert(info.row_bytes);
            for c in 0..info.chunks.len() {
                let meta = r.chunk_meta(e, c).unwrap();
                widths.insert(meta.word_width.bits());
                partial_words |= !meta.word_width.divides(info.row_bytes);
                aligns.insert(meta.align_log2);
                groups.insert(meta.group_count);
                length_widths.insert(meta.length_bytes);
                for row in 0..meta.row_count as usize {
                    if meta.is_raw(row) {
                        raw_rows += 1;
                    } else {
                        coded_rows += 1;
                    }
                }
            }
        }
    }
    assert_eq!(widths, BTreeSet::from([8, 16, 32, 64]));
    assert_eq!(aligns, (0..=7).collect());
    assert!(
        groups.contains(&0) && groups.contains(&1) && groups.contains(&256) && groups.iter().any(|&g| g > 1 && g < 256),
        "{groups:?}"
    );
    assert!(partial_words, "no chunk with a partial last word");
    assert_eq!(length_widths, BTreeSet::from([1, 2, 4]));
    for len in [1, 7, 8, 31, 32, 33, 4096] {
        assert!(row_bytes.contains(&len), "no valid vector has {len}-byte rows");
    }
    assert_eq!(dtypes.len(), Dtype::ALL.len(), "{dtypes:?}");
    assert!(raw_rows > 0 && coded_rows > 0);
    assert!(zero_entries && empty_entry && later_minor && optional_bits && multi_chunk);

    let codes: BTreeSet<&str> = m.vectors.iter().filter_map(|r| r.error.as_deref()).collect();
    for code in ErrorCode::ALL {
        // API-only codes are not file defects.
        if matches!(code, ErrorCode::RowIndex | ErrorCode::Io | ErrorCode::InvalidArgument) {
            continue;
        }
        assert!(
            codes.contains(code.as_str()),
            "no invalid vector is rejected with {code}"
        );
    }
    let total: u64 = m.vectors.iter().map(|r: &VectorRecord| r.file_len).sum();
    assert!(total < 2 << 20, "vectors take {total} bytes, over the 2 MiB budget");
}

/// Partial decoding (spec 9.3): gathering every row of each valid vector's entries in reverse order
/// gives the listed bytes, row for row, with both CPU decoders.
#[test]
fn gathers_of_valid_vectors_return_the_listed_rows() {
    let root = conformance_dir();
    for rec in manifest().vectors.iter().filter(|r| r.outcome == Outcome::Valid) {
        let bytes = load_vector(&root, rec).unwrap();
        let expected = decoded_entries(&bytes);
        let mut r = ContainerReader::open(std::io::Cursor::new(bytes)).unwrap();
        for (e, want) in expected.iter().enumerate() {
            let rows: Vec<u64> = (0..want.row_count()).rev().collect();
            let rb = want.row_bytes as usize;
            let reversed: Vec<u8> = want.data.chunks(rb).rev().flatten().copied().collect();
            for kind in [DecoderKind::Oracle, DecoderKind::Fast] {
                let got = r
                    .gather(e, &rows, kind)
                    .unwrap_or_else(|err| panic!("{} entry {e}: {err}", rec.id));
                assert!(got == reversed, "{} entry {e} ({kind:?}): gathered rows differ", rec.id);
            }
        }
    }
}

/// Partial decoding must still check every structural rule of what it decodes (spec 9.3): gathering
/// all rows of every entry of an invalid vector fails with the listed code. Payload-CRC vectors are
/// left out: a gather MAY skip `payload_crc`.
#[test]
fn gathers_of_invalid_vectors_report_the_listed_code() {
    let root = conformance_dir();
    for rec in manifest().vectors.iter().filter(|r| r.outcome == Outcome::Invalid) {
        let want = rec.error.as_deref().unwrap();
        if want == "E_PAYLOAD_CRC" {
            continue;
        }
        let bytes = load_vector(&root, rec).unwrap();
        for kind in [DecoderKind::Oracle, DecoderKind::Fast] {
            let got = (|| {
                let mut r = ContainerReader::open(std::io::Cursor::new(&bytes))?;
                for e in 0..r.entries().len() {
                    let rows: Vec<u64> = (0..r.entries()[e].row_count).collect();
                    r.gather(e, &rows, kind)?;
                }
                Ok::<_, ibp_format::FormatError>(())
            })();
            match got {
                Err(e) if e.code.as_str() == want => {}
                other => panic!("{} ({kind:?}): gather gave {other:?}, expected {want}", rec.id),
            }
        }
    }
}
