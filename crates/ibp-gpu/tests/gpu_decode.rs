//! GPU decoder against the CPU decoder, bit for bit: whole entries, chunks, ranges and random
//! gathers over every word width, several row lengths, group counts and alignments, both payload
//! homes, real data when present; corrupt containers rejected with the CPU decoder's error code.
//!
//! Without a CUDA driver every test prints "SKIPPED: ..." and returns; with `IBP_REQUIRE_GPU=1`
//! a missing GPU fails the test instead.

use cudarc::driver::CudaSlice;
use ibp_codec::{decode_chunk, decode_chunk_rows, DecoderKind, EncodeOptions};
use ibp_format::{ChunkMeta, ErrorCode, WordWidth};
use ibp_gpu::testdata::{
    encode_rows, few_run_entry, few_run_rows, fixed_width, float_rows, image_row_entries, long_row_entries,
    mixed_shape_entry, patterned_rows, read_npy, record_tile_entries, sparse_rows, two_run_rows, uneven_chunk_entries,
    uniform_rows, InvariantBits, Rng, TestEntry, FEW_RUN_SHAPES,
};
use ibp_gpu::{
    testdata, ChunkForm, EntryLayout, GpuDevice, GpuEntry, GpuError, HostEntry, LeanShape, PayloadHome, RowSegments,
    TileKernel,
};
use std::sync::Arc;

fn gpu() -> Option<Arc<GpuDevice>> {
    match ibp_gpu::gpu_unavailable_reason() {
        Some(why) => {
            if std::env::var("IBP_REQUIRE_GPU").as_deref() == Ok("1") {
                panic!("IBP_REQUIRE_GPU=1 but {why}");
            }
            println!("SKIPPED: {why}");
            eprintln!("SKIPPED: {why}");
            None
        }
        None => Some(GpuDevice::new(0).expect("a GPU is present but could not be opened")),
    }
}

type Case = TestEntry;

fn load(case: &Case, dev: &Arc<GpuDevice>, home: PayloadHome) -> GpuEntry {
    load_in_form(case, dev, home, ChunkForm::AsStored)
}

fn load_in_form(case: &Case, dev: &Arc<GpuDevice>, home: PayloadHome, form: ChunkForm) -> GpuEntry {
    GpuEntry::load_with_form(
        dev,
        case.row_bytes as u64,
        &case.metas,
        &case.payload_refs(),
        home,
        form,
    )
    .unwrap_or_else(|e| panic!("{}: load: {e}", case.label))
}

fn gather_to_host(entry: &GpuEntry, rows: &[u64]) -> Result<Vec<u8>, GpuError> {
    let stream = entry.device().new_stream()?;
    let len = (rows.len() as u64 * entry.row_bytes()).max(1) as usize;
    // Poison the output so unwritten bytes show up.
    let mut out: CudaSlice<u8> = stream.clone_htod(&vec![0xA5u8; len]).unwrap();
    entry.gather(rows, &mut out, &stream)?.wait()?;
    let host = stream.clone_dtoh(&out).unwrap();
    Ok(host[..rows.len() * entry.row_bytes() as usize].to_vec())
}

fn range_to_host(entry: &GpuEntry, first: u64, count: u64) -> Result<Vec<u8>, GpuError> {
    let stream = entry.device().new_stream().unwrap();
    // Poisoned like gather_to_host's output.
    let len = (count * entry.row_bytes()).max(1) as usize;
    let mut out: CudaSlice<u8> = stream.clone_htod(&vec![0xA5u8; len]).unwrap();
    entry.decode_range(first, count, &mut out, &stream)?.wait()?;
    Ok(stream.clone_dtoh(&out).unwrap())
}

fn decode_all_to_host(entry: &GpuEntry) -> Vec<u8> {
    let stream = entry.device().new_stream().unwrap();
    let len = (entry.row_count() * entry.row_bytes()) as usize;
    let mut out: CudaSlice<u8> = stream.clone_htod(&vec![0x5Au8; len]).unwrap();
    entry.decode_all(&mut out, &stream).unwrap().wait().unwrap();
    stream.clone_dtoh(&out).unwrap()
}

/// Checks a case through every path; returns whether its entry has a coded chunk and uses the lean
/// tile kernel.
fn check_case(dev: &Arc<GpuDevice>, case: &Case, rng: &mut Rng) -> bool {
    check_case_in_form(dev, case, rng, ChunkForm::AsStored)
}

/// [`check_case`] with the chunks loaded in `form`.
fn check_case_in_form(dev: &Arc<GpuDevice>, case: &Case, rng: &mut Rng, form: ChunkForm) -> bool {
    let mut lean = false;
    for home in [PayloadHome::Device, PayloadHome::HostMapped] {
        let mut entry = load_in_form(case, dev, home, form);
        let label = format!("{} {home:?}", case.label);
        // Loads give rows of >= 128 bytes a flat row index; the others get one here, so that every
        // case's gathers run through both of the kernel's lookups below.
        if std::env::var_os("IBP_GATHER_SPANS").is_none() {
            assert_eq!(
                entry.has_row_spans(),
                case.row_bytes as u64 >= ibp_gpu::ROW_SPANS_MIN_ROW_BYTES && entry.layout().row_spans().is_some(),
                "{label}: row spans at load"
            );
        }
        entry.add_row_spans().unwrap();
        assert_eq!(entry.has_row_spans(), entry.layout().row_spans().is_some(), "{label}");
        assert_eq!(decode_all_to_host(&entry), case.expected, "{label}: whole entry");
        if entry.uses_lean_tiles() {
            // The general tile kernel gives the same bytes.
            lean = entry.layout().chunks.iter().any(|c| c.group_count > 0);
            entry.use_general_tile_decoder(true);
            assert!(!entry.uses_lean_tiles());
            assert_eq!(
                decode_all_to_host(&entry),
                case.expected,
                "{label}: whole entry, general kernel"
            );
            entry.use_general_tile_decoder(false);
        }
        check_shaped_kernels(&entry, case, &label);
        // Each chunk on its own.
        let stream = dev.new_stream().unwrap();
        for (i, c) in entry.layout().chunks.iter().enumerate() {
            let len = c.row_count as usize * case.row_bytes;
            let mut out: CudaSlice<u8> = stream.clone_htod(&vec![0x33u8; len]).unwrap();
            entry.decode_chunk(i, &mut out, &stream).unwrap().wait().unwrap();
            let at = c.first_row as usize * case.row_bytes;
            assert_eq!(
                stream.clone_dtoh(&out).unwrap(),
                &case.expected[at..at + len],
                "{label}: chunk {i}"
            );
        }
        let n = case.rows();
        // A range crossing chunk boundaries, starting mid-chunk.
        let (first, count) = (n / 3, n / 2);
        let mut out: CudaSlice<u8> = stream
            .clone_htod(&vec![0x77u8; count as usize * case.row_bytes])
            .unwrap();
        entry
            .decode_range(first, count, &mut out, &stream)
            .unwrap()
            .wait()
            .unwrap();
        let at = first as usize * case.row_bytes;
        assert_eq!(
            stream.clone_dtoh(&out).unwrap(),
            &case.expected[at..at + count as usize * case.row_bytes],
            "{label}: range"
        );
        let random: Vec<u64> = (0..257).map(|_| rng.below(n)).collect(); // unsorted, duplicates likely
        let single = vec![rng.below(n)];
        let all_reversed: Vec<u64> = (0..n).rev().collect();
        let dup: Vec<u64> = vec![n - 1; 40];
        // Through the flat row index where the entry has one, then through the anchors and stored
        // lengths.
        for spans in [true, false] {
            entry.set_row_spans(spans);
            for rows in [&random, &single, &all_reversed, &dup] {
                let got = gather_to_host(&entry, rows).unwrap();
                assert_eq!(
                    got,
                    case.expected_rows(rows),
                    "{label}: gather of {} rows (row spans {})",
                    rows.len(),
                    spans && entry.has_row_spans()
                );
            }
        }
        entry.set_row_spans(true);
    }
    lean
}

fn check_shaped_kernels(entry: &GpuEntry, case: &Case, label: &str) {
    let (own, lean) = (entry.tile_kernel(), entry.uses_lean_tiles());
    testdata::check_shaped_kernels(entry.layout(), own, lean, &case.expected, label, |kernel, mode| {
        entry.use_tile_kernel(kernel);
        entry.use_row_segments(mode);
        range_to_host(entry, 0, case.rows())
    });
    entry.use_tile_kernel(TileKernel::Auto);
    entry.use_row_segments(RowSegments::Auto);
    assert_eq!(entry.tile_kernel(), own);
}

#[test]
fn generated_cases_match_cpu_decoder() {
    let Some(dev) = gpu() else { return };
    let mut rng = Rng::new(1);
    let (mut cases, mut lean) = (0, 0);
    for w in [WordWidth::W8, WordWidth::W16, WordWidth::W32, WordWidth::W64] {
        let wb = w.bytes();
        for words in [1usize, 31, 32, 33, 100] {
            for groups in [1u32, 3] {
                for align_log2 in [0u8, 2, 4, 7] {
                    let row_bytes = words * wb;
                    let data = patterned_rows(&mut rng, 170, row_bytes, wb, 0.1, 0.05);
                    let opts = fixed_width(w, groups, align_log2);
                    let label = format!("W{} n{words} G{groups} A{}", w.bits(), 1 << align_log2);
                    lean += usize::from(check_case(
                        &dev,
                        &Case::new(&data, row_bytes, &opts, 64, label),
                        &mut rng,
                    ));
                    cases += 1;
                }
            }
        }
    }
    // Chunks of uneven sizes: ibp_gather finds them by binary search (the cases above by division).
    for case in uneven_chunk_entries(&mut rng) {
        check_case(&dev, &case, &mut rng);
        cases += 1;
    }
    // Chunks of rows of 32 and of 64 words: the lean kernel for any shape.
    let mixed = mixed_shape_entry(&mut rng);
    let shape = load(&mixed, &dev, PayloadHome::Device).lean_tile_shape();
    assert_eq!(shape, Some(LeanShape::Any), "{}", mixed.label);
    lean += usize::from(check_case(&dev, &mixed, &mut rng));
    cases += 1;
    println!("{cases} generated cases matched the CPU decoder ({lean} with coded chunks through both tile kernels)");
    assert!(
        lean >= 4,
        "only {lean} cases with coded chunks used the lean tile kernel"
    );
}

/// Rows of whole words with at most two runs of free bits per position and field lengths that
/// differ, the rows `ibp_decode_tiles_lean` takes (one thread per row checks records, one warp per
/// row decodes them): every word width, 2-64 words (one round, or two sharing a scan; 100 words go
/// to the general kernel, or of 8 and 16 bits with mostly invariant positions to the long-rows
/// one), 1 or 3 groups, A = 1, 16 and 128, and enough rows for several groups of
/// 32 rows per warp and several tiles. (Positions with 3+ runs of free bits go through the lean
/// kernel in the other tests' float rows.)
#[test]
fn rows_through_the_lean_tile_kernel_match_cpu_decoder() {
    let Some(dev) = gpu() else { return };
    let mut rng = Rng::new(12);
    let (mut cases, mut lean) = (0, 0);
    let mut shapes = [0usize; 5]; // cases per lean kernel (LeanShape)
    for w in [WordWidth::W8, WordWidth::W16, WordWidth::W32, WordWidth::W64] {
        for words in [2usize, 7, 16, 17, 25, 32, 33, 64, 100] {
            for (groups, align_log2, rows, max_run) in
                [(1usize, 4u8, 3000usize, 64u32), (3, 0, 700, 64), (1, 7, 700, 12)]
            {
                let row_bytes = words * w.bytes();
                let data = two_run_rows(&mut rng, rows, words, w.bytes(), groups, max_run);
                let opts = fixed_width(w, groups as u32, align_log2);
                let label = format!("lean W{} n{words} G{groups} A{}", w.bits(), 1 << align_log2);
                let case = Case::new(&data, row_bytes, &opts, 256, label);
                // The kernel the host picks: by the rows' words (every chunk has the same).
                let entry = load(&case, &dev, PayloadHome::Device);
                if let Some(shape) = entry.lean_tile_shape() {
                    let all_coded = entry.layout().chunks.iter().all(|c| c.group_count > 0);
                    let expected = if words > 64 {
                        LeanShape::Long
                    } else if words > 32 {
                        LeanShape::Mid
                    } else if all_coded
                        && ibp_gpu::device::short_rows_kernel()
                        && LeanShape::Short.takes(words as u32, row_bytes as u64)
                    {
                        LeanShape::Short
                    } else {
                        LeanShape::Any
                    };
                    assert_eq!(shape, expected, "{}", case.label);
                    shapes[shape as usize] += 1;
                }
                lean += usize::from(check_case(&dev, &case, &mut rng));
                cases += 1;
            }
        }
    }
    let [rejected, pairs_rejected, pairs_own, vec_decoded, vec_rejected] = testdata::shaped_kernel_counts();
    println!(
        "{cases} short-row cases matched the CPU decoder ({lean} with coded chunks through both tile kernels; \
         lean kernels any/mid/short/long {shapes:?}; {rejected} entries of other rows rejected by the mid and short ones)"
    );
    assert!(
        rejected >= 10,
        "the mid-row and short-row kernels rejected only {rejected} entries of other rows"
    );
    let short_cases = if ibp_gpu::device::short_rows_kernel() { 10 } else { 0 };
    // (Rows of 100 words of 8 or 16 bits take the long-rows kernel only when at least half their
    // positions are fully invariant, which these rows' are not: image_like_rows_match_cpu_decoder.)
    assert!(
        shapes[0] >= 10 && shapes[1] >= 4 && shapes[2] >= short_cases,
        "cases per lean kernel: {shapes:?}"
    );
    // The W32 rows of 100 words: the pairs kernel's own; the rest it rejects (or copies).
    assert!(
        pairs_own >= 2 && pairs_rejected >= 20,
        "pairs kernel: {pairs_own} entries its own, {pairs_rejected} rejected"
    );
    // The vector-lanes kernel decoded the entries of one group of 16-bit words in rows of whole
    // vectors (16, 32 and 64 words) and rejected the others it was forced on.
    println!("vector-lanes kernel: decoded {vec_decoded} entries, rejected {vec_rejected}");
    assert!(
        vec_decoded >= 3 && vec_rejected >= 10,
        "vector-lanes kernel: decoded {vec_decoded} entries, rejected {vec_rejected}"
    );
    assert!(
        2 * lean >= cases,
        "only {lean} of {cases} short-row cases used the lean tile kernel"
    );
}

/// Image-like rows of more than 64 words of 8 or 16 bits (as Fashion-MNIST), every chunk coded:
/// whole entries, every chunk, ranges and gathers from both payload homes give the CPU decoder's
/// rows, through the long-rows kernel (a lane per row, or slices for rows that are not whole
/// 16-byte vectors; the entries' own kernel where most positions are invariant, else forced by
/// `check_case`), the vector-lanes kernel (where it takes every chunk) and the general kernel.
#[test]
fn image_like_rows_match_cpu_decoder() {
    let Some(dev) = gpu() else { return };
    let mut rng = Rng::new(31);
    let (mut long, mut vector) = (0, 0);
    for case in image_row_entries(&mut rng) {
        let entry = load(&case, &dev, PayloadHome::Device);
        // (Every chunk is coded with whole words of at most 16 bits, more than 64 a row: the
        // long-rows kernel where at least half the positions are fully invariant.)
        let (invariant, positions) = entry.layout().invariant_positions();
        if ibp_gpu::device::long_rows_kernel() != 0 && 2 * invariant >= positions {
            // (The vector-lanes kernel where vector lanes take every chunk.)
            let shape = if ibp_gpu::device::vector_lanes_kernel() >= 1 && LeanShape::Vec.decodes_all(entry.layout()) {
                vector += 1;
                LeanShape::Vec
            } else {
                LeanShape::Long
            };
            assert_eq!(entry.lean_tile_shape(), Some(shape), "{}", case.label);
            long += 1;
        }
        check_case(&dev, &case, &mut rng);
    }
    if ibp_gpu::device::long_rows_kernel() != 0 {
        assert!(long >= 4, "{long} entries through the long-rows kernel");
    }
    println!("image rows: {long} entries for the long-rows kernel, {vector} of them the vector-lanes kernel's");
}

/// Positions whose free bits form 3 or 4 runs in a 32-bit half (bf16 pairs, 8- and 16-bit pixels;
/// the table entries `deposit_runs` decodes) and 5-8 runs (the run-by-run loop), through every
/// kernel: lean rows, a pair table (W32, 40 words, general kernel), long rows, gathers with tables.
#[test]
fn positions_with_three_or_more_runs_of_free_bits_match_cpu_decoder() {
    // The cases are built (and the runs their masks have checked) without a GPU.
    let mut rng = Rng::new(13);
    let mut cases = Vec::new();
    for shape in FEW_RUN_SHAPES {
        let (w, words, ..) = shape;
        let aligns: &[u8] = if words * w.bytes() >= 512 { &[0, 4, 7] } else { &[0, 4] }; // short rows at A = 128 are raw
        for &align_log2 in aligns {
            cases.push(few_run_entry(&mut rng, shape, 1024, align_log2, 256));
        }
    }
    let Some(dev) = gpu() else { return };
    let lean = cases.iter().filter(|case| check_case(&dev, case, &mut rng)).count();
    println!(
        "{} cases with 3+ runs of free bits per position matched the CPU decoder ({lean} through both tile kernels)",
        cases.len()
    );
    assert!(lean >= 4, "only {lean} cases used the lean tile kernel");
}

/// Every position with the same field length (the tile kernel's several-rows-per-warp path for rows of
/// at most 16 words; round pairs for long rows), short and long rows, partial last words.
#[test]
fn uniform_field_lengths_match_cpu_decoder() {
    // The cases are built (and their coverage checked) without a GPU.
    let mut rng = Rng::new(11);
    let mut cases = Vec::new();
    for w in [WordWidth::W8, WordWidth::W16, WordWidth::W32, WordWidth::W64] {
        let wb = w.bytes();
        for words in [1usize, 2, 3, 8, 15, 16, 17, 32, 33, 64, 65, 100] {
            for (groups, align_log2, trim) in [(1u32, 4u8, 0usize), (3, 0, 0), (1, 0, 1), (2, 7, 1)] {
                if trim >= wb || words * wb <= trim {
                    continue;
                }
                let row_bytes = words * wb - trim;
                let free = 1 + rng.below(wb as u64 * 8 - 1) as u32;
                let data = uniform_rows(
                    &mut rng,
                    150,
                    row_bytes,
                    wb,
                    free,
                    InvariantBits::PerPosition,
                    0.03,
                    0.05,
                );
                let opts = fixed_width(w, groups, align_log2);
                let label = format!("uniform W{} {row_bytes} B G{groups} A{}", w.bits(), 1 << align_log2);
                cases.push(Case::new(&data, row_bytes, &opts, 64, label));
            }
        }
    }
    // Chunks whose positions all have one field length, with rows of <= 16 words (several rows per
    // warp) and of > 32 words (round pairs).
    let (mut small, mut long) = (0, 0);
    for m in cases.iter().flat_map(|c| &c.metas) {
        if testdata::one_field_length(m) {
            small += usize::from(m.words_per_row <= 16);
            long += usize::from(m.words_per_row > 32);
        }
    }
    assert!(
        small >= 40 && long >= 40,
        "uniform chunks: {small} short-row, {long} long-row"
    );
    let Some(dev) = gpu() else { return };
    for case in &cases {
        check_case(&dev, case, &mut rng);
    }
    println!(
        "{} uniform cases matched the CPU decoder ({small} short-row and {long} long-row chunks with one field length)",
        cases.len()
    );
}

/// Rows whose size is not a multiple of the word width (partial last word, spec 2.4) and raw
/// chunks (G = 0, spec 5.5), including output rows that are not aligned to the word size.
#[test]
fn partial_words_and_raw_chunks_match_cpu_decoder() {
    let Some(dev) = gpu() else { return };
    let mut rng = Rng::new(9);
    let mut partial = 0;
    for w in [WordWidth::W16, WordWidth::W32, WordWidth::W64] {
        let wb = w.bytes();
        for row_bytes in [wb + 1, 5 * wb - 1, 33 * wb + 1, 130 * wb - 3, 5732] {
            if row_bytes % wb == 0 {
                continue;
            }
            let padded = row_bytes.div_ceil(wb) * wb;
            let wide = patterned_rows(&mut rng, 150, padded, wb, 0.1, 0.05);
            let data: Vec<u8> = wide
                .chunks(padded)
                .flat_map(|r| r[..row_bytes].iter().copied())
                .collect();
            for align_log2 in [0u8, 4] {
                let opts = fixed_width(w, 1, align_log2);
                let label = format!("partial W{} {row_bytes} B A{}", w.bits(), 1 << align_log2);
                let case = Case::new(&data, row_bytes, &opts, 64, label);
                partial += case.metas.iter().filter(|m| m.group_count > 0).count();
                check_case(&dev, &case, &mut rng);
            }
        }
    }
    assert!(partial > 0, "no coded chunk with a partial last word was produced");
    // Incompressible rows: the encoder writes raw chunks.
    let noise: Vec<u8> = (0..300 * 100).map(|_| rng.next_u64() as u8).collect();
    let opts = EncodeOptions {
        align_log2: 4,
        ..Default::default()
    };
    let case = Case::new(&noise, 100, &opts, 128, "raw chunks".into());
    assert!(
        case.metas.iter().any(|m| m.group_count == 0),
        "expected a raw chunk (G = 0)"
    );
    check_case(&dev, &case, &mut rng);
    // Raw chunks of rows that are a multiple of 16 bytes with no padding: flat entries, whose
    // gathers go through ibp_gather_flat (three chunks each, so rows of later chunks too).
    for (row_bytes, align_log2) in [(64usize, 4u8), (48, 0)] {
        let noise: Vec<u8> = (0..300 * row_bytes).map(|_| rng.next_u64() as u8).collect();
        let opts = fixed_width(WordWidth::W64, 0, align_log2);
        let case = Case::new(&noise, row_bytes, &opts, 128, format!("flat {row_bytes} B"));
        let layout = ibp_gpu::EntryLayout::new(row_bytes as u64, &case.metas).unwrap();
        assert!(
            layout.flat_rows() && layout.chunks.len() == 3,
            "{}: not a flat 3-chunk entry",
            case.label
        );
        check_case(&dev, &case, &mut rng);
        // Indices already on the device are checked by the flat kernel itself.
        for home in [PayloadHome::Device, PayloadHome::HostMapped] {
            let entry = GpuEntry::load(&dev, row_bytes as u64, &case.metas, &case.payload_refs(), home).unwrap();
            let stream = dev.new_stream().unwrap();
            let mut out: CudaSlice<u8> = stream.alloc_zeros(4 * row_bytes).unwrap();
            let rows_d = stream.clone_htod(&[0u64, 300, 1, u64::MAX]).unwrap();
            let err = entry
                .gather_device_rows(&rows_d, &mut out, &stream)
                .unwrap()
                .wait()
                .expect_err("row 300 is past the entry");
            assert_eq!(err.code(), Some(ErrorCode::RowIndex), "{}: {err}", case.label);
            assert!(err.to_string().contains("request 1"), "{}: {err}", case.label);
        }
    }
}

#[test]
fn mixed_word_widths_and_long_rows_match_cpu_decoder() {
    let Some(dev) = gpu() else { return };
    let mut rng = Rng::new(2);
    // Chunks with different word widths in one entry (the analysis picks per chunk).
    let mut data = float_rows(&mut rng, 100, 256, 0.02, 4);
    data.extend(sparse_rows(&mut rng, 100, 256, 0.05));
    data.extend(patterned_rows(&mut rng, 100, 256, 2, 0.05, 0.0));
    let opts = EncodeOptions {
        align_log2: 4,
        ..Default::default()
    };
    check_case(
        &dev,
        &Case::new(&data, 256, &opts, 100, "mixed widths".into()),
        &mut rng,
    );
    // Rows longer than the shared-memory staging buffer (decoded straight from memory).
    for (row_bytes, align_log2) in [(64 * 1024, 4u8), (40 * 1024 + 8, 0)] {
        let data = patterned_rows(&mut rng, 12, row_bytes, 8, 0.02, 0.0);
        let opts = fixed_width(WordWidth::W64, 1, align_log2);
        let label = format!("{row_bytes}-byte rows");
        check_case(&dev, &Case::new(&data, row_bytes, &opts, 5, label), &mut rng);
    }
}

/// Rows that save most of their bytes: tiles sized by their records, several per chunk, and range
/// decodes starting and ending anywhere in them, from device and from host memory.
#[test]
fn record_sized_tiles_match_cpu_decoder() {
    let Some(dev) = gpu() else { return };
    let mut rng = Rng::new(61);
    for case in record_tile_entries(&mut rng) {
        check_case(&dev, &case, &mut rng);
        for home in [PayloadHome::Device, PayloadHome::HostMapped] {
            let entry = load(&case, &dev, home);
            let n = case.rows();
            for _ in 0..12 {
                let first = rng.below(n);
                let count = 1 + rng.below(n - first);
                let at = first as usize * case.row_bytes;
                assert_eq!(
                    range_to_host(&entry, first, count).unwrap(),
                    &case.expected[at..at + count as usize * case.row_bytes],
                    "{}: rows {first} + {count}, {home:?}",
                    case.label
                );
            }
        }
    }
}

#[test]
fn real_data_matches_cpu_decoder() {
    let Some(dev) = gpu() else { return };
    let dir = std::env::var("IBP_DATA_DIR")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/data").into());
    let mut files: Vec<_> = ["", "gpu-pack"]
        .iter()
        .filter_map(|sub| std::fs::read_dir(std::path::Path::new(&dir).join(sub)).ok())
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "npy"))
        .collect();
    files.sort();
    files.dedup_by_key(|p| p.file_name().map(|f| f.to_owned()));
    if files.is_empty() {
        println!("SKIPPED: no .npy files under {dir}");
        return;
    }
    let mut rng = Rng::new(3);
    for path in files {
        let npy = read_npy(&path).unwrap();
        let rows = npy.rows.min(3000);
        let data = &npy.data[..rows * npy.row_bytes];
        for align_log2 in [0u8, 4] {
            let opts = EncodeOptions {
                align_log2,
                sample_fraction: Some(0.1),
                ..Default::default()
            };
            let label = format!("{} A{}", path.file_name().unwrap().to_string_lossy(), 1 << align_log2);
            check_case(
                &dev,
                &Case::new(data, npy.row_bytes, &opts, 1000, label.clone()),
                &mut rng,
            );
            println!("{label}: matched");
        }
    }
}

/// Entries loaded with [`ChunkForm::FOR_GPU_READS`] (chunks no cheaper to read coded re-laid raw at
/// load; entries of them alone flat, gathered by `ibp_gather_flat`): every path, from device memory
/// and zero-copy, gives the CPU decoder's rows.
#[test]
fn entries_relaid_for_gpu_reads_match_cpu_decoder() {
    let Some(dev) = gpu() else { return };
    let mut rng = Rng::new(31);
    for case in testdata::relayout_entries(&mut rng) {
        for home in [PayloadHome::Device, PayloadHome::HostMapped] {
            let entry = load_in_form(&case, &dev, home, ChunkForm::FOR_GPU_READS);
            let raw = entry.layout().chunks.iter().filter(|c| c.group_count == 0).count();
            assert!(
                entry.relaid_chunks() > 0 && entry.relaid_chunks() == raw,
                "{} {home:?}: {} chunks re-laid, {raw} raw",
                case.label,
                entry.relaid_chunks()
            );
        }
        check_case_in_form(&dev, &case, &mut rng, ChunkForm::FOR_GPU_READS);
        // The loaders' defaults: re-laid in pinned host memory, as stored in device memory.
        let refs = case.payload_refs();
        let host = HostEntry::new(&dev, case.row_bytes as u64, &case.metas, &refs).unwrap();
        let mapped = GpuEntry::load(&dev, case.row_bytes as u64, &case.metas, &refs, PayloadHome::HostMapped).unwrap();
        let cached = GpuEntry::load(&dev, case.row_bytes as u64, &case.metas, &refs, PayloadHome::Device).unwrap();
        assert!(
            host.relaid_chunks() > 0,
            "{}: HostEntry::new re-laid nothing",
            case.label
        );
        assert_eq!(
            mapped.relaid_chunks(),
            host.relaid_chunks(),
            "{}: GpuEntry::load in host memory",
            case.label
        );
        assert_eq!(
            cached.relaid_chunks(),
            0,
            "{}: GpuEntry::load in device memory",
            case.label
        );
        assert_eq!(
            decode_all_to_host(&mapped),
            case.expected,
            "{}: default host load",
            case.label
        );
        println!("{}: matched", case.label);
    }
}

/// Rows the vector-lanes kernel takes (`testdata::vector_row_entries`: one group of 264-512 16-bit
/// words, one to four runs of free bits a position, A = 1 and 16): the entry's own kernel (unless
/// `IBP_LEAN_VEC=0`), every path of `check_case` from both payload homes, a whole-entry decode into
/// an output that is only 8-byte aligned, then records damaged a few bits at a time, decoded or
/// rejected as the CPU decoder does by the vector-lanes and long-rows kernels, one row at a time
/// and whole (the same first failing row and code).
#[test]
fn vector_lane_rows_match_cpu_decoder() {
    let Some(dev) = gpu() else { return };
    let mut rng = Rng::new(25);
    let (mut decoded, mut rejected) = (0usize, 0usize);
    let vector_lanes = TileKernel::Lean(LeanShape::Vec);
    let long = TileKernel::Lean(LeanShape::Long);
    for case in testdata::vector_row_entries(&mut rng, 96) {
        let label = case.label.clone();
        check_case(&dev, &case, &mut rng);
        let entry = load(&case, &dev, PayloadHome::Device);
        if ibp_gpu::device::vector_lanes_kernel() >= 1 {
            assert_eq!(entry.tile_kernel(), vector_lanes, "{label}");
        }
        // Into an output 8 bytes past a 16-byte boundary (the launch then takes the long-rows
        // kernel): the same rows, and the bytes around them untouched.
        let stream = dev.new_stream().unwrap();
        let len = case.expected.len();
        let mut out: CudaSlice<u8> = stream.clone_htod(&vec![0xA5u8; len + 16]).unwrap();
        let mut view = out.slice_mut(8..8 + len);
        entry.decode_all(&mut view, &stream).unwrap().wait().unwrap();
        let got = stream.clone_dtoh(&out).unwrap();
        assert_eq!(
            &got[8..8 + len],
            &case.expected[..],
            "{label}: output 8 bytes off a 16-byte boundary"
        );
        assert!(
            got[..8].iter().chain(&got[8 + len..]).all(|&b| b == 0xA5),
            "{label}: bytes around the output"
        );
        let (mut meta, mut payload) = (case.metas[0].clone(), case.payloads[0].clone());
        for _ in 0..2 {
            let flips = 4 + rng.below(8);
            testdata::flip_random_bits(&mut rng, &mut meta, &mut payload, flips);
            let entry = GpuEntry::load(
                &dev,
                case.row_bytes as u64,
                std::slice::from_ref(&meta),
                &[&payload],
                PayloadHome::Device,
            )
            .expect("structure unchanged, CRC fixed: loads");
            let mut cpu_all = vec![0u8; case.row_bytes * meta.row_count as usize];
            let cpu_whole = decode_chunk(&meta, &payload, DecoderKind::Oracle, &mut cpu_all);
            let mut first_failing = None; // the CPU's code for the first row it rejects
            let mut wholes = Vec::new();
            for kernel in [vector_lanes, long] {
                entry.use_tile_kernel(kernel);
                for r in 0..meta.row_count {
                    let mut cpu = vec![0u8; case.row_bytes];
                    let cpu_res = decode_chunk_rows(&meta, &payload, &[r], DecoderKind::Oracle, &mut cpu);
                    let got = range_to_host(&entry, r as u64, 1);
                    if testdata::same_verdict(&cpu_res, &cpu, got, &format!("{label} row {r}, {kernel:?}")) {
                        decoded += 1;
                    } else {
                        first_failing.get_or_insert(cpu_res.unwrap_err().code);
                        rejected += 1;
                    }
                }
                // The whole entry: the CPU's bytes, or an error with the first failing row's code.
                let whole = range_to_host(&entry, 0, meta.row_count as u64);
                match (&cpu_whole, &whole) {
                    (Ok(()), Ok(got)) => assert_eq!(got, &cpu_all, "{label}, {kernel:?}: whole entry, bytes differ"),
                    (Err(_), Err(g)) => assert_eq!(g.code(), first_failing, "{label}, {kernel:?}: whole entry: {g}"),
                    (c, g) => panic!(
                        "{label}, {kernel:?}: whole entry: CPU {c:?}, GPU {:?}",
                        g.as_ref().map(|_| ())
                    ),
                }
                wholes.push(whole.map_err(|e| e.to_string()));
            }
            // Both kernels name the same first failing row.
            assert_eq!(
                wholes[0], wholes[1],
                "{label}: whole entry, vector-lanes and long-rows kernels differ"
            );
            entry.use_tile_kernel(TileKernel::Auto);
        }
    }
    println!("vector-lane rows: {decoded} damaged-entry rows decoded like the CPU, {rejected} rejected with its code");
    assert!(
        decoded > 1000 && rejected > 50,
        "decoded {decoded}, rejected {rejected}"
    );
}

/// Small gathers of long rows take several warps per row (`ibp_gather_split`), large ones a warp
/// each (`ibp_gather`), and batches of 24 rows per SM of rows that save at least half their bytes
/// two warps per row in two waves of blocks: all give the CPU decoder's rows, from device memory
/// and zero-copy, through decode tables and Mask/Bitval words, at every word width.
#[test]
fn small_and_large_batches_of_long_rows_match_cpu_decoder() {
    let Some(dev) = gpu() else { return };
    let mut rng = Rng::new(9);
    for case in long_row_entries(&mut rng, 200) {
        for home in [PayloadHome::Device, PayloadHome::HostMapped] {
            let entry = load(&case, &dev, home);
            let small: Vec<u64> = (0..100).map(|_| rng.below(200)).collect();
            let large: Vec<u64> = (0..20_000).map(|_| rng.below(200)).collect();
            let two_waves: Vec<u64> = (0..dev.sm_count() as u64 * 24).map(|_| rng.below(200)).collect();
            for rows in [&small, &vec![rng.below(200)], &large, &two_waves] {
                assert_eq!(
                    gather_to_host(&entry, rows).unwrap(),
                    case.expected_rows(rows),
                    "{} {home:?}: gather of {} rows",
                    case.label,
                    rows.len()
                );
            }
        }
    }
}

/// `ibp_gather_sparse`: entries of mostly sparse rows (`testdata::SPARSE_SHAPES`) take it, and their
/// gathers (every row, random rows, a batch of several rows per warp) give the CPU decoder's rows from
/// device memory and zero-copy; damaged records give the CPU's bytes or its error code, row by row.
#[test]
fn sparse_rows_gather_as_exceptions_like_cpu() {
    let Some(dev) = gpu() else { return };
    if testdata::default_overridden(&["IBP_GATHER_SPARSE"]) {
        return;
    }
    let mut rng = Rng::new(32);
    let (mut decoded, mut rejected) = (0usize, 0usize);
    for (w, row_bytes, groups, align_log2) in testdata::SPARSE_SHAPES {
        let label = format!("W{} {row_bytes} B G{groups} A{}", w.bits(), 1 << align_log2);
        let data = testdata::mostly_sparse_rows(&mut rng, 400, row_bytes, 0.03);
        let case = Case::new(
            &data,
            row_bytes,
            &fixed_width(w, groups, align_log2),
            128,
            label.clone(),
        );
        let n = case.rows();
        let all: Vec<u64> = (0..n).rev().collect();
        let random: Vec<u64> = (0..97).map(|_| rng.below(n)).collect();
        let many: Vec<u64> = (0..20_000).map(|_| rng.below(n)).collect();
        for home in [PayloadHome::Device, PayloadHome::HostMapped] {
            let entry = load(&case, &dev, home);
            assert!(entry.has_sparse_tables(), "{label}: no sparse table");
            assert_eq!(
                entry.uses_sparse_rows(),
                row_bytes as u64 >= ibp_gpu::SPARSE_GATHER_MIN_ROW_BYTES,
                "{label}: default path"
            );
            entry.set_sparse_rows(true);
            for rows in [&all, &random, &many] {
                assert_eq!(
                    gather_to_host(&entry, rows).unwrap(),
                    case.expected_rows(rows),
                    "{label} {home:?}: gather of {} rows",
                    rows.len()
                );
            }
            // The same rows through ibp_gather / ibp_gather_split, which decode every word.
            entry.set_sparse_rows(false);
            assert_eq!(
                gather_to_host(&entry, &random).unwrap(),
                case.expected_rows(&random),
                "{label} {home:?}: sparse tables off"
            );
        }
        let (mut meta, mut payload) = (case.metas[0].clone(), case.payloads[0].clone());
        testdata::flip_random_bits(&mut rng, &mut meta, &mut payload, 24);
        let entry = GpuEntry::load(
            &dev,
            row_bytes as u64,
            std::slice::from_ref(&meta),
            &[&payload],
            PayloadHome::HostMapped,
        )
        .expect("structure unchanged, CRC fixed: loads");
        entry.set_sparse_rows(true);
        for r in 0..meta.row_count {
            let mut cpu = vec![0u8; row_bytes];
            let cpu_res = decode_chunk_rows(&meta, &payload, &[r], DecoderKind::Oracle, &mut cpu);
            let got = gather_to_host(&entry, &[r as u64]);
            if testdata::same_verdict(&cpu_res, &cpu, got, &format!("{label} row {r}")) {
                decoded += 1;
            } else {
                rejected += 1;
            }
        }
    }
    assert!(
        decoded > 500 && rejected > 20,
        "decoded {decoded}, rejected {rejected}: too few of one kind"
    );
}

/// The vector-lanes kernel's tiles are sized for 4 blocks per SM: its static shared memory is within
/// the `VEC_STATIC_SMEM` the tiling counts, a block asking for the largest dynamic shared memory a
/// tile may take (`VEC_DYNAMIC_SMEM_MAX`) still gets 4 blocks on an SM, and a real plan asks for no
/// more than that.
#[test]
fn vector_lane_tiles_keep_four_blocks_on_an_sm() {
    let Some(dev) = gpu() else { return };
    let vector_lanes = TileKernel::Lean(LeanShape::Vec);
    let (_, _, local, statics) = dev
        .kernel_attributes()
        .into_iter()
        .find(|a| a.0 == "ibp_decode_tiles_lean_vec")
        .unwrap();
    assert_eq!(local, 0, "the vector-lanes kernel spills");
    assert!(
        statics > 0 && statics as u32 <= ibp_gpu::device::VEC_STATIC_SMEM,
        "{statics} B of static shared memory, {} B counted",
        ibp_gpu::device::VEC_STATIC_SMEM
    );
    let most = ibp_gpu::device::VEC_DYNAMIC_SMEM_MAX;
    assert_eq!(dev.resident_tile_blocks(vector_lanes, most).unwrap(), 4, "{most} B");
    assert!(
        dev.resident_tile_blocks(vector_lanes, most + 2048).unwrap() < 4,
        "{most} B is not the most"
    );
    if ibp_gpu::device::vector_lanes_kernel() == 0 {
        println!("SKIPPED (plans): the vector-lanes kernel is off (IBP_LEAN_VEC or the kernel defines)");
        return;
    }
    let mut rng = Rng::new(31);
    let mut planned = 0;
    for case in testdata::vector_row_entries(&mut rng, 2000) {
        let entry = load(&case, &dev, PayloadHome::Device);
        if entry.tile_kernel() != vector_lanes {
            continue;
        }
        let plan = entry.tile_plan(0, entry.row_count()).unwrap().unwrap();
        assert!(plan.shared_bytes <= most, "{}: {} B", case.label, plan.shared_bytes);
        assert_eq!(
            dev.resident_tile_blocks(plan.kernel, plan.shared_bytes).unwrap(),
            4,
            "{}",
            case.label
        );
        planned += 1;
    }
    assert!(planned > 0, "no entry took the vector-lanes kernel");
}

/// `GpuEntry::tile_plan` says what a range decode launches: tiles of every chunk the range
/// overlaps (a tile never spans two chunks), one block per tile up to the cap, and a typed error
/// for a range outside the entry.
#[test]
fn tile_plans_count_each_chunks_tiles() {
    let Some(dev) = gpu() else { return };
    let mut rng = Rng::new(12);
    let mut planned = 0;
    for case in long_row_entries(&mut rng, 300) {
        let entry = load(&case, &dev, PayloadHome::Device);
        let rows = entry.layout().row_count;
        for (first, count) in [(0, rows), (7, rows - 20), (rows - 1, 1)] {
            let Some(plan) = entry.tile_plan(first, count).unwrap() else {
                continue;
            };
            planned += 1;
            let end = first + count;
            let want: u64 = entry
                .layout()
                .chunks
                .iter()
                .map(|c| {
                    let (a, b) = (first.max(c.first_row), end.min(c.first_row + c.row_count as u64));
                    if a < b {
                        (b - a).div_ceil(plan.tile_rows as u64)
                    } else {
                        0
                    }
                })
                .sum();
            assert_eq!(plan.tiles, want, "{}: rows {first} + {count}: {plan:?}", case.label);
            assert!(
                plan.blocks >= 1 && plan.blocks as u64 <= plan.tiles,
                "{}: {plan:?}",
                case.label
            );
            assert!(
                plan.tile_rows >= 1 && plan.tile_bytes >= 16 && plan.row_segments >= 1,
                "{plan:?}"
            );
            assert_eq!(plan.kernel, entry.tile_kernel());
        }
        assert_eq!(entry.tile_plan(0, 0).unwrap(), None);
        let err = entry.tile_plan(rows, 1).unwrap_err();
        assert!(
            matches!(&err, GpuError::Format(e) if e.code == ErrorCode::RowIndex),
            "{err:?}"
        );
    }
    assert!(planned > 0, "no entry decoded through tiles");
}

/// Single-row gathers of corrupted (CRC fixed up) records: the GPU and the CPU decoder must agree
/// on every row, either the same bytes or the same error code.
#[test]
fn corrupt_records_rejected_like_cpu() {
    let Some(dev) = gpu() else { return };
    let mut rng = Rng::new(4);
    let mut checked = [0usize; 3];
    // Rows of 24 words (one round) and of 80-100 words (round pairs and a last round).
    for (w, align_log2, groups, words) in [
        (WordWidth::W8, 0u8, 1u32, 24usize),
        (WordWidth::W16, 2, 2, 24),
        (WordWidth::W32, 4, 1, 24),
        (WordWidth::W64, 7, 3, 24),
        (WordWidth::W32, 0, 1, 24),
        (WordWidth::W64, 4, 1, 80),
        (WordWidth::W16, 0, 2, 100),
    ] {
        let row_bytes = words * w.bytes();
        let data = patterned_rows(&mut rng, 64, row_bytes, w.bytes(), 0.05, 0.0);
        corrupt_and_compare(&dev, &mut rng, &data, row_bytes, w, align_log2, groups, &mut checked);
    }
    // One field length everywhere (several rows per warp for short rows), some rows raw.
    for (w, align_log2, groups, row_bytes) in [
        (WordWidth::W64, 4u8, 1u32, 64usize),
        (WordWidth::W16, 0, 2, 23),
        (WordWidth::W32, 2, 1, 128),
        (WordWidth::W64, 0, 1, 800),
    ] {
        let data = uniform_rows(
            &mut rng,
            64,
            row_bytes,
            w.bytes(),
            2 * w.bytes() as u32,
            InvariantBits::PerPosition,
            0.05,
            0.1,
        );
        corrupt_and_compare(&dev, &mut rng, &data, row_bytes, w, align_log2, groups, &mut checked);
    }
    // Rows the lean tile kernel takes (<= 32 words, at most two runs of free bits per position).
    for (w, align_log2, groups, words) in [
        (WordWidth::W64, 4u8, 1u32, 25usize),
        (WordWidth::W16, 0, 3, 32),
        (WordWidth::W32, 2, 1, 17),
    ] {
        let data = two_run_rows(&mut rng, 64, words, w.bytes(), groups as usize, 64);
        corrupt_and_compare(
            &dev,
            &mut rng,
            &data,
            words * w.bytes(),
            w,
            align_log2,
            groups,
            &mut checked,
        );
    }
    // Rows of 128 words and more: single-row gathers go through ibp_gather_split (2-4 warps a row).
    for (w, align_log2, groups, words) in [(WordWidth::W64, 4u8, 1u32, 300usize), (WordWidth::W16, 0, 2, 520)] {
        let row_bytes = words * w.bytes();
        let data = patterned_rows(&mut rng, 64, row_bytes, w.bytes(), 0.05, 0.0);
        corrupt_and_compare(&dev, &mut rng, &data, row_bytes, w, align_log2, groups, &mut checked);
    }
    // Image-like rows of whole 16-byte vectors: the vector-lanes kernel (one group) and the
    // long-rows kernel, rows whole and in segments.
    for (w, align_log2, groups, words) in [(WordWidth::W16, 4u8, 1u32, 392usize), (WordWidth::W16, 0, 2, 392)] {
        let row_bytes = words * w.bytes();
        let data = testdata::pixel_rows(&mut rng, 64, row_bytes, 7);
        corrupt_and_compare(&dev, &mut rng, &data, row_bytes, w, align_log2, groups, &mut checked);
    }
    // Positions with 3-4 runs of free bits per half (deposit_runs), lean and pair-table rows.
    for (w, words) in [(WordWidth::W64, 24usize), (WordWidth::W32, 40), (WordWidth::W32, 260)] {
        let data = few_run_rows(&mut rng, 64, words, w.bytes(), 3, 4);
        corrupt_and_compare(&dev, &mut rng, &data, words * w.bytes(), w, 4, 1, &mut checked);
    }
    println!(
        "corrupt rows: {} decoded identically, {} rejected with the CPU's code; {} corrupt entries through the lean tile kernel",
        checked[0], checked[1], checked[2]
    );
    assert!(checked[1] > 0, "no corruption was detected at all");
    assert!(checked[2] > 0, "no corrupt entry went through the lean tile kernel");
}

/// Flips random payload bits of `data`'s encoding 40 times (CRC fixed) and compares every row's
/// verdict and bytes through the gather kernel and the tile kernel with the CPU oracle.
#[allow(clippy::too_many_arguments)]
fn corrupt_and_compare(
    dev: &Arc<GpuDevice>,
    rng: &mut Rng,
    data: &[u8],
    row_bytes: usize,
    w: WordWidth,
    align_log2: u8,
    groups: u32,
    checked: &mut [usize; 3],
) {
    let opts = fixed_width(w, groups, align_log2);
    let (metas, payloads) = encode_rows(data, row_bytes, &opts, 64);
    let (mut meta, mut payload) = (metas[0].clone(), payloads[0].clone());
    for _ in 0..40 {
        // Flip 1-3 random bits of the payload.
        let flips = 1 + rng.below(3);
        testdata::flip_random_bits(rng, &mut meta, &mut payload, flips);
        let entry = GpuEntry::load(
            dev,
            row_bytes as u64,
            std::slice::from_ref(&meta),
            &[&payload],
            PayloadHome::HostMapped,
        )
        .expect("structure unchanged, CRC fixed: loads");
        for r in 0..meta.row_count {
            let mut cpu = vec![0u8; row_bytes];
            let cpu_res = decode_chunk_rows(&meta, &payload, &[r], DecoderKind::Oracle, &mut cpu);
            // The gather kernel, and the tile kernel on a one-row range.
            let lean = entry.uses_lean_tiles();
            entry.use_general_tile_decoder(true);
            let general = range_to_host(&entry, r as u64, 1);
            entry.use_general_tile_decoder(false);
            // (The long-rows kernel's rows whole and in segments; other kernels ignore the mode.)
            let range_in = |mode| {
                entry.use_row_segments(mode);
                let got = range_to_host(&entry, r as u64, 1);
                entry.use_row_segments(RowSegments::Auto);
                got
            };
            let mut paths = vec![
                ("gather", gather_to_host(&entry, &[r as u64])),
                (
                    if lean { "range, lean" } else { "range" },
                    range_in(RowSegments::WholeRows),
                ),
                ("range, segments", range_in(RowSegments::Segments)),
                ("range, general", general),
            ];
            // (The entries of the vector-lanes kernel: also the long-rows kernel's vector lanes.)
            if entry.tile_kernel() == TileKernel::Lean(LeanShape::Vec) {
                entry.use_tile_kernel(TileKernel::Lean(LeanShape::Long));
                paths.push(("range, long-rows kernel", range_to_host(&entry, r as u64, 1)));
                entry.use_tile_kernel(TileKernel::Auto);
            }
            for (path, gpu_res) in paths {
                match (&cpu_res, gpu_res) {
                    (Ok(()), Ok(g)) => {
                        assert_eq!(g, cpu, "row {r} ({path}): bytes differ");
                        checked[0] += 1;
                    }
                    (Err(c), Err(g)) => {
                        assert_eq!(g.code(), Some(c.code), "row {r} ({path}): CPU says {c}, GPU says {g}");
                        checked[1] += 1;
                    }
                    (c, g) => panic!("row {r} ({path}): CPU {c:?}, GPU {:?}", g.map(|_| ())),
                }
            }
        }
        // A whole-entry decode reports an error exactly when some row fails.
        let stream = dev.new_stream().unwrap();
        let mut out: CudaSlice<u8> = stream.alloc_zeros(row_bytes * meta.row_count as usize).unwrap();
        let whole = entry.decode_all(&mut out, &stream).unwrap().wait();
        let mut cpu = vec![0u8; row_bytes * meta.row_count as usize];
        let cpu_whole = decode_chunk(&meta, &payload, DecoderKind::Oracle, &mut cpu);
        assert_eq!(whole.is_ok(), cpu_whole.is_ok(), "whole-entry verdicts differ");
        if whole.is_ok() {
            assert_eq!(stream.clone_dtoh(&out).unwrap(), cpu, "whole entry: bytes differ");
        }
        // Both tile kernels (and the long-rows kernel's segments) name the same first failing row
        // and code.
        entry.use_general_tile_decoder(true);
        let general = entry.decode_all(&mut out, &stream).unwrap().wait();
        entry.use_general_tile_decoder(false);
        entry.use_row_segments(RowSegments::Segments);
        let segments = entry.decode_all(&mut out, &stream).unwrap().wait();
        entry.use_row_segments(RowSegments::Auto);
        let whole = whole.map_err(|e| e.to_string());
        assert_eq!(
            whole,
            general.map_err(|e| e.to_string()),
            "whole entry: lean and general tile kernels differ"
        );
        assert_eq!(
            whole,
            segments.map_err(|e| e.to_string()),
            "whole entry: rows whole and in segments differ"
        );
        checked[2] += usize::from(entry.uses_lean_tiles() && meta.group_count > 0);
    }
}

#[test]
fn bad_requests_and_containers_are_typed_errors() {
    // CPU-only part: a hostile row index never reaches a kernel.
    let mut rng = Rng::new(5);
    let data = patterned_rows(&mut rng, 50, 64, 4, 0.1, 0.0);
    let opts = fixed_width(WordWidth::W32, 1, 4);
    let (metas, payloads) = encode_rows(&data, 64, &opts, 50);
    let mut hostile = metas[0].clone();
    hostile.row_lengths[3] += 1;
    let err = EntryLayout::new(64, &[hostile]).unwrap_err();
    assert_eq!(err.code, ErrorCode::RowLength);

    let Some(dev) = gpu() else { return };
    // Payload CRC mismatch: rejected on load.
    let mut bad = payloads[0].clone();
    bad[0] ^= 1;
    let err = GpuEntry::load(&dev, 64, &metas, &[&bad], PayloadHome::Device)
        .err()
        .unwrap();
    assert_eq!(err.code(), Some(ErrorCode::PayloadCrc), "{err}");
    let host_err = HostEntry::new(&dev, 64, &metas, &[&bad]).err().unwrap();
    assert_eq!(host_err.code(), Some(ErrorCode::PayloadCrc));

    let entry = GpuEntry::load(&dev, 64, &metas, &[&payloads[0]], PayloadHome::HostMapped).unwrap();
    let stream = dev.new_stream().unwrap();
    let mut out: CudaSlice<u8> = stream.alloc_zeros(64 * 4).unwrap();
    // Out-of-range index: checked before launch.
    let err = entry.gather(&[0, 50, 1], &mut out, &stream).err().unwrap();
    assert_eq!(err.code(), Some(ErrorCode::RowIndex));
    // Out-of-range index already on the device: the kernel reports it.
    let rows_d = stream.clone_htod(&[1u64, 2, u64::MAX, 3]).unwrap();
    let failed_gather = |out: &mut CudaSlice<u8>| {
        entry
            .gather_device_rows(&rows_d, out, &stream)
            .unwrap()
            .wait()
            .err()
            .unwrap()
    };
    let err = failed_gather(&mut out);
    assert_eq!(err.code(), Some(ErrorCode::RowIndex));
    assert!(err.to_string().contains("request 2"), "{err}");
    // Status blocks are reused: the failed launch's word and host flag come back cleared, so the
    // next gathers succeed with the right rows, and a later failure is reported again.
    for _ in 0..3 {
        let good = stream.clone_htod(&[4u64, 0, 49]).unwrap();
        entry
            .gather_device_rows(&good, &mut out, &stream)
            .unwrap()
            .wait()
            .unwrap();
        let got = stream.clone_dtoh(&out).unwrap();
        for (k, r) in [4usize, 0, 49].into_iter().enumerate() {
            assert_eq!(&got[k * 64..(k + 1) * 64], &data[r * 64..(r + 1) * 64], "request {k}");
        }
    }
    let err = failed_gather(&mut out);
    assert!(err.to_string().contains("request 2"), "{err}");
    // Output too small.
    let mut small: CudaSlice<u8> = stream.alloc_zeros(64 * 2).unwrap();
    let err = entry.gather(&[0, 1, 2], &mut small, &stream).err().unwrap();
    assert_eq!(err.code(), Some(ErrorCode::InvalidArgument));
    // Range and chunk out of range.
    assert_eq!(
        entry.decode_range(40, 11, &mut out, &stream).err().unwrap().code(),
        Some(ErrorCode::RowIndex)
    );
    assert_eq!(
        entry.decode_chunk(1, &mut out, &stream).err().unwrap().code(),
        Some(ErrorCode::RowIndex)
    );
    // Empty gather is fine.
    entry.gather(&[], &mut out, &stream).unwrap().wait().unwrap();
}

/// One pinned payload, every GPU of the host gathering from it at once.
#[test]
fn every_gpu_gathers_from_one_pinned_payload() {
    let Some(dev0) = gpu() else { return };
    let count = ibp_gpu::device_count().unwrap();
    let mut rng = Rng::new(6);
    let data = float_rows(&mut rng, 4000, 1024, 0.05, 3);
    let opts = EncodeOptions {
        align_log2: 4,
        sample_fraction: Some(0.1),
        ..Default::default()
    };
    let case = Case::new(&data, 1024, &opts, 1500, "shared".into());
    let host = HostEntry::new(&dev0, 1024, &case.metas, &case.payload_refs()).unwrap();
    let devices: Vec<Arc<GpuDevice>> = (0..count)
        .map(|i| {
            if i == 0 {
                dev0.clone()
            } else {
                GpuDevice::new(i).unwrap()
            }
        })
        .collect();
    let rows: Vec<u64> = (0..3000).map(|_| rng.below(case.rows())).collect();
    let expected = case.expected_rows(&rows);
    std::thread::scope(|s| {
        for d in &devices {
            let (host, rows, expected) = (&host, &rows, &expected);
            s.spawn(move || {
                let entry = GpuEntry::from_host(d, host, PayloadHome::HostMapped).unwrap();
                for _ in 0..3 {
                    assert_eq!(
                        &gather_to_host(&entry, rows).unwrap(),
                        expected,
                        "device {}",
                        d.ordinal()
                    );
                }
            });
        }
    });
    println!("{count} GPU(s) gathered from one pinned payload");
}

#[test]
fn no_gpu_is_an_error_not_a_panic() {
    // On a CPU machine this is NoGpu; on a GPU machine an absurd ordinal is NoGpu too.
    match GpuDevice::new(1_000_000) {
        Err(e) => assert!(e.is_no_gpu(), "{e}"),
        Ok(_) => panic!("device 1000000 cannot exist"),
    }
}

/// A container written by the CPU writer and read back by the CPU reader decodes identically on
/// the GPU (every entry, both payload homes, plus a gather).
#[test]
fn container_entries_match_cpu_reader() {
    let mut rng = Rng::new(8);
    let a = float_rows(&mut rng, 3000, 512, 0.05, 2);
    let b = sparse_rows(&mut rng, 700, 96, 0.1);
    let empty: Vec<u8> = Vec::new();
    let opts = EncodeOptions {
        align_log2: 4,
        chunk_rows: Some(1000),
        ..Default::default()
    };
    let bytes = ibp_codec::encode_to_vec(
        &[
            ("a", ibp_format::Dtype::F32, &[3000, 128], 512, &a),
            ("b", ibp_format::Dtype::F32, &[700, 24], 96, &b),
            ("empty", ibp_format::Dtype::F32, &[0, 4], 16, &empty),
        ],
        &opts,
    )
    .unwrap();
    let mut reader = ibp_codec::ContainerReader::open(std::io::Cursor::new(bytes)).unwrap();
    // CPU-only part: the layout built from the reader's chunks locates every row's record.
    for e in 0..reader.entries().len() {
        let info = reader.entries()[e].clone();
        let metas: Vec<ChunkMeta> = (0..info.chunks.len())
            .map(|c| (*reader.chunk_meta(e, c).unwrap()).clone())
            .collect();
        let layout = EntryLayout::new(info.row_bytes, &metas).unwrap();
        assert_eq!(layout.row_count, info.row_count);
        let mut first = 0u64;
        for (ci, m) in metas.iter().enumerate() {
            for r in [0, m.row_count as usize / 2, m.row_count as usize - 1] {
                let (off, len) = layout.record_span(first + r as u64).unwrap();
                let range = m.record_range(r);
                assert_eq!(off, layout.chunks[ci].payload_offset + range.start as u64);
                assert_eq!(len, (range.end - range.start) as u64);
            }
            first += m.row_count as u64;
        }
        assert_eq!(
            layout.record_span(info.row_count).unwrap_err().code,
            ErrorCode::RowIndex
        );
    }
    let Some(dev) = gpu() else { return };
    for e in 0..reader.entries().len() {
        let expected = reader.decode_entry(e, DecoderKind::Fast).unwrap();
        for home in [PayloadHome::Device, PayloadHome::HostMapped] {
            let entry = GpuEntry::from_reader(&dev, &mut reader, e, home).unwrap();
            if entry.row_count() == 0 {
                assert!(expected.is_empty());
                continue;
            }
            assert_eq!(decode_all_to_host(&entry), expected, "entry {e} {home:?}");
            let rows: Vec<u64> = (0..100).map(|_| rng.below(entry.row_count())).collect();
            let cpu = reader.gather(e, &rows, DecoderKind::Fast).unwrap();
            assert_eq!(gather_to_host(&entry, &rows).unwrap(), cpu, "entry {e} {home:?} gather");
        }
    }
    let host = HostEntry::from_reader(&dev, &mut reader, 0).unwrap();
    assert_eq!(host.layout().row_count, 3000);
}
