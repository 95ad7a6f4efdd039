//! The GPU decoder's kernels, compiled for the CPU and run there (feature `host-kernels`, see
//! `ibp_gpu::host`), against the CPU decoder: whole entries through both tile kernels, ranges across
//! chunks, gathers (unsorted, duplicates, single row, all rows, indices out of range), and corrupt
//! records rejected with the CPU decoder's error code; and every committed fuzz input, sample
//! container and conformance vector, as `fuzz_replay_gpu.rs` replays them on a GPU. The same checks
//! as the GPU tests, here on every machine (CI has no GPU): they test the kernels' logic, not the
//! device. The last tests damage the buffers after a valid load (`HostKernels::damage`) to test the
//! kernels' own bounds checks: run them with AddressSanitizer in the kernels
//! (`tools/host-kernels-test.sh`, as CI does) and any access outside a buffer aborts them.
//!
//! `cargo test -p ibp-gpu --features host-kernels --test host_kernels`
#![cfg(feature = "host-kernels")]

#[allow(dead_code)]
#[path = "../../../fuzz/src/replay.rs"]
mod replay;

use ibp_codec::{decode_chunk, decode_chunk_rows, DecoderKind, EncodeOptions};
use ibp_format::{crc32, ErrorCode, WordWidth};
use ibp_gpu::host::{decode_container, HostKernels, TileKernel};
use ibp_gpu::testdata::{
    encode_rows, few_run_entry, few_run_rows, fixed_width, float_rows, image_row_entries, long_row_entries,
    mixed_shape_entry, patterned_rows, record_tile_entries, sparse_rows, two_run_rows, uneven_chunk_entries,
    uniform_rows, InvariantBits, Rng, TestEntry, FEW_RUN_SHAPES,
};
use ibp_gpu::{testdata, ChunkForm, LeanShape, RowSegments};
use std::path::Path;

type Case = TestEntry;

fn load(case: &Case) -> HostKernels {
    HostKernels::new(case.row_bytes as u64, &case.metas, &case.payload_refs())
        .unwrap_or_else(|e| panic!("{}: load: {e}", case.label))
}

/// Every path of one case; returns whether the entry takes the lean tile kernel.
fn check_case(case: &Case, rng: &mut Rng) -> bool {
    let mut entry = load(case);
    let lean = check_entry(&entry, case, rng);
    // The gathers again through the anchors and stored lengths (the path of entries whose layout
    // allows no flat row index).
    if entry.has_row_spans() {
        entry.set_row_spans(false);
        check_gathers(&entry, case, rng, &format!("{} (no row spans)", case.label));
    }
    lean
}

std::thread_local! {
    /// Entries checked in this thread (each test runs in a thread of its own) whose own kernel is
    /// the short-rows lean kernel.
    static SHORT_ENTRIES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Counts `entry` in [`SHORT_ENTRIES`] when its own kernel is the short-rows lean kernel.
fn count_short_entry(entry: &HostKernels) {
    if entry.lean_tile_shape() == Some(LeanShape::Short) {
        SHORT_ENTRIES.with(|c| c.set(c.get() + 1));
    }
}

/// Every path of one loaded case; returns whether the entry takes the lean tile kernel.
fn check_entry(entry: &HostKernels, case: &Case, rng: &mut Rng) -> bool {
    let label = &case.label;
    count_short_entry(entry);
    let n = (case.expected.len() / case.row_bytes) as u64;
    let all = |kernel| {
        entry
            .decode_range(0, n, kernel)
            .unwrap_or_else(|e| panic!("{label}: {e}"))
    };
    assert_eq!(all(TileKernel::Auto), case.expected, "{label}: whole entry");
    let lean = entry.uses_lean_tiles();
    if entry.tile_kernel() != TileKernel::General {
        assert_eq!(
            all(TileKernel::General),
            case.expected,
            "{label}: whole entry, general kernel"
        );
    }
    check_shaped_kernels(entry, case, label);
    // Each chunk on its own (the launch then sees only that chunk's descriptor).
    for (i, c) in entry.layout().chunks.iter().enumerate() {
        let at = c.first_row as usize * case.row_bytes;
        assert_eq!(
            entry
                .decode_range(c.first_row, c.row_count as u64, TileKernel::Auto)
                .unwrap(),
            &case.expected[at..at + c.row_count as usize * case.row_bytes],
            "{label}: chunk {i}"
        );
    }
    let (first, count) = (n / 3, n / 2);
    let at = first as usize * case.row_bytes;
    assert_eq!(
        entry.decode_range(first, count, TileKernel::Auto).unwrap(),
        &case.expected[at..at + count as usize * case.row_bytes],
        "{label}: range"
    );
    check_gathers(entry, case, rng, label);
    lean
}

/// Gathers of one loaded case through `ibp_gather` and `ibp_gather_split`, and a gather with rows
/// out of range.
fn check_gathers(entry: &HostKernels, case: &Case, rng: &mut Rng, label: &str) {
    let n = case.rows();
    let (random, one) = gather_rows(rng, n);
    let all_reversed: Vec<u64> = (0..n).rev().collect();
    for rows in [&random, &vec![one], &all_reversed, &vec![n - 1; 9]] {
        assert_eq!(
            entry.gather(rows).unwrap(),
            case.expected_rows(rows),
            "{label}: gather of {} rows",
            rows.len()
        );
    }
    // ibp_gather_split (rows under 64 words per warp go to one warp of the group).
    for split in [1, 2] {
        assert_eq!(
            entry.gather_split(&random, split).unwrap(),
            case.expected_rows(&random),
            "{label}: split gather, 2^{split} warps"
        );
    }
    // An index past the entry: E_ROW_INDEX naming the first such request.
    let err = entry.gather(&[0, n, 1, n + 5]).expect_err("row n is out of range");
    assert_eq!(err.code(), Some(ErrorCode::RowIndex), "{label}: {err}");
    assert!(err.to_string().contains("request 1"), "{label}: {err}");
}

/// The random rows of [`check_gathers`] (all it draws from `rng`): 97 unsorted, duplicates likely,
/// and one.
fn gather_rows(rng: &mut Rng, n: u64) -> (Vec<u64>, u64) {
    let random = (0..97).map(|_| rng.below(n)).collect();
    (random, rng.below(n))
}

fn check_shaped_kernels(entry: &HostKernels, case: &Case, label: &str) {
    let (own, lean) = (entry.tile_kernel(), entry.uses_lean_tiles());
    testdata::check_shaped_kernels(entry.layout(), own, lean, &case.expected, label, |kernel, mode| {
        entry.use_row_segments(mode);
        let got = entry.decode_range(0, case.rows(), kernel);
        entry.use_row_segments(RowSegments::Auto);
        got
    });
}

/// The longest tests run in parts, each a test of its own: a process runs one kernel launch at a
/// time (the emulated shared memory is global), and `tools/host-kernels-test.sh` runs the tests in
/// processes side by side. Each part generates every case of the test from the one `Rng`, so every
/// case has the data it has in a single test, and checks its share of them.
const PARTS: usize = 3;

/// Part `part` of [`PARTS`] of a test: its cases are those of index `part`, `part + PARTS`, ...
struct Part {
    part: usize,
    next: usize,
    checked: usize,
}

impl Part {
    fn new(part: usize) -> Part {
        assert!(part < PARTS);
        Part {
            part,
            next: 0,
            checked: 0,
        }
    }

    /// Whether the next case is this part's (counted in `checked` when it is).
    fn mine(&mut self) -> bool {
        let mine = self.next % PARTS == self.part;
        self.next += 1;
        self.checked += usize::from(mine);
        mine
    }

    /// [`check_case`] when the case is this part's; else loads it (counted in [`SHORT_ENTRIES`] as
    /// `check_case` counts it) and draws from `rng` what `check_case` draws, so the next case gets
    /// the same data either way. Returns whether the entry takes the lean tile kernel.
    fn case(&mut self, case: &Case, rng: &mut Rng) -> bool {
        if self.mine() {
            return check_case(case, rng);
        }
        let entry = load(case);
        count_short_entry(&entry);
        gather_rows(rng, case.rows());
        if entry.has_row_spans() {
            gather_rows(rng, case.rows());
        }
        entry.uses_lean_tiles()
    }

    /// This part's share of a count the whole test asserts is at least `whole`: a [`PARTS`]-th,
    /// rounded up, so that the parts passing asserts the whole test's bound.
    fn share(&self, whole: usize) -> usize {
        whole.div_ceil(PARTS)
    }

    fn name(&self) -> String {
        format!("part {} of {PARTS}", self.part + 1)
    }
}

#[test]
fn generated_cases_match_cpu_decoder_part_1() {
    generated_cases_match_cpu_decoder(Part::new(0));
}

#[test]
fn generated_cases_match_cpu_decoder_part_2() {
    generated_cases_match_cpu_decoder(Part::new(1));
}

#[test]
fn generated_cases_match_cpu_decoder_part_3() {
    generated_cases_match_cpu_decoder(Part::new(2));
}

/// Generated entries of every word width, row length, group count and alignment, and rows for each
/// of the kernels' special paths, through every path ([`check_case`]); this part's share of them
/// checked, the counts asserted for all of them.
fn generated_cases_match_cpu_decoder(mut part: Part) {
    let mut rng = Rng::new(21);
    let (mut cases, mut lean) = (0, 0);
    for w in [WordWidth::W8, WordWidth::W16, WordWidth::W32, WordWidth::W64] {
        let wb = w.bytes();
        for words in [1usize, 17, 32, 33, 100] {
            for (groups, align_log2) in [(1u32, 0u8), (3, 4), (1, 7)] {
                let row_bytes = words * wb;
                let data = patterned_rows(&mut rng, 150, row_bytes, wb, 0.1, 0.05);
                let label = format!("W{} n{words} G{groups} A{}", w.bits(), 1 << align_log2);
                let case = Case::new(&data, row_bytes, &fixed_width(w, groups, align_log2), 64, label);
                lean += usize::from(part.case(&case, &mut rng));
                cases += 1;
            }
        }
    }
    // Rows of 64 bytes with many raw records at A = 16: the thread path's 16-byte copy of a raw
    // record (rows of 8 64-bit words and of 32 16-bit words).
    for (w, words, groups) in [
        (WordWidth::W64, 8usize, 1u32),
        (WordWidth::W64, 8, 3),
        (WordWidth::W16, 32, 1),
    ] {
        let row_bytes = words * w.bytes();
        // Sparse rows (coded, well under 48 bytes), every third one random bytes (stored raw).
        let mut data = sparse_rows(&mut rng, 150, row_bytes, 0.05);
        for row in data.chunks_exact_mut(row_bytes).step_by(3) {
            row.iter_mut().for_each(|b| *b = rng.next_u64() as u8);
        }
        let label = format!("W{} n{words} G{groups} A16, a third of rows raw", w.bits());
        let case = Case::new(&data, row_bytes, &fixed_width(w, groups, 4), 64, label);
        assert!(
            case.metas.iter().any(|m| m.group_count > 0),
            "{}: no coded chunk",
            case.label
        );
        lean += usize::from(part.case(&case, &mut rng));
        cases += 1;
    }
    // Raw chunks (G = 0) of rows that are a multiple of 16 bytes with no padding: flat entries,
    // gathered by ibp_gather_flat; and raw chunks of padded rows, gathered by ibp_gather.
    let mut flat = 0;
    for (row_bytes, align_log2) in [(64usize, 4u8), (48, 0), (48, 5), (40, 0)] {
        let data = patterned_rows(&mut rng, 150, row_bytes, 8, 0.1, 0.05);
        let label = format!("raw chunks {row_bytes} B A{}", 1 << align_log2);
        let case = Case::new(&data, row_bytes, &fixed_width(WordWidth::W64, 0, align_log2), 64, label);
        flat += usize::from(load(&case).layout().flat_rows());
        part.case(&case, &mut rng);
        cases += 1;
    }
    assert_eq!(flat, 2, "the 64 B A16 and 48 B A1 raw entries are flat, the others not");
    // Rows for the lean kernel's two-run fast paths, partial last words, floats and sparse rows
    // (decode tables for ibp_gather), and rows too long for a tile (ranges through ibp_gather).
    for (w, words, groups) in [
        (WordWidth::W64, 25usize, 1usize),
        (WordWidth::W16, 32, 3),
        (WordWidth::W32, 64, 1),
    ] {
        let data = two_run_rows(&mut rng, 200, words, w.bytes(), groups, 64);
        let label = format!("two-run W{} n{words} G{groups}", w.bits());
        let case = Case::new(&data, words * w.bytes(), &fixed_width(w, groups as u32, 2), 96, label);
        lean += usize::from(part.case(&case, &mut rng));
        cases += 1;
    }
    // Positions that all have one field length, with 10 % of words not participating: the lean
    // kernel counts a row's field bits by popcount (G = 1) and keeps word `lane`'s table entry in
    // registers for rows of 33-64 words.
    let mut uniform_long = 0;
    for w in [WordWidth::W8, WordWidth::W32] {
        for words in [17usize, 33, 64] {
            for groups in [1u32, 3] {
                let wb = w.bytes();
                let data = uniform_rows(
                    &mut rng,
                    150,
                    words * wb,
                    wb,
                    3 * wb as u32,
                    InvariantBits::PerPosition,
                    0.1,
                    0.05,
                );
                let label = format!("uniform W{} n{words} G{groups}", w.bits());
                let case = Case::new(&data, words * wb, &fixed_width(w, groups, 4), 64, label);
                uniform_long += case
                    .metas
                    .iter()
                    .filter(|m| m.group_count == 1 && m.words_per_row > 32 && testdata::one_field_length(m))
                    .count();
                lean += usize::from(part.case(&case, &mut rng));
                cases += 1;
            }
        }
    }
    assert!(
        uniform_long >= 4,
        "only {uniform_long} uniform chunks of G = 1 and > 32 words"
    );
    // Rows for the thread path whose positions all have one Mask and Bitval (KV-cache rows: head
    // dimensions alike), and rows whose positions share a Mask but not a Bitval: the short-rows
    // kernel holds a one-entry table in registers (IBP_SLICE_ONE_ENTRY), the others it reads.
    let mut one_entry = 0;
    for (w, words) in [
        (WordWidth::W8, 32usize),
        (WordWidth::W16, 32),
        (WordWidth::W16, 7),
        (WordWidth::W32, 16),
        (WordWidth::W64, 8),
        (WordWidth::W64, 2),
    ] {
        for (groups, align_log2) in [(1u32, 0u8), (3, 4)] {
            for alike in [true, false] {
                let wb = w.bytes();
                let invariant = if alike {
                    InvariantBits::Shared
                } else {
                    InvariantBits::PerPosition
                };
                let data = uniform_rows(&mut rng, 150, words * wb, wb, 5 * wb as u32, invariant, 0.03, 0.05);
                let label = format!(
                    "{} W{} n{words} G{groups} A{}",
                    if alike { "one entry" } else { "one mask" },
                    w.bits(),
                    1 << align_log2
                );
                let case = Case::new(&data, words * wb, &fixed_width(w, groups, align_log2), 64, label);
                if alike {
                    one_entry += case.metas.iter().filter(|m| testdata::one_table_entry(m)).count();
                }
                lean += usize::from(part.case(&case, &mut rng));
                cases += 1;
            }
        }
    }
    // (Of the 18 chunks of one group; with three groups the encoder's groups get masks of their own.)
    assert!(one_entry >= 12, "only {one_entry} chunks with one table entry");
    // Rows of 2-16 words whose positions have different field lengths: several rows per warp pass
    // with a scan of the field lengths within each row's lanes (decode_small_rows), in the lean
    // kernel (whole words) and the general one (a partial last word), with raw rows among them.
    let mut small_any_f = 0;
    for (w, words, groups, align_log2, trim) in [
        (WordWidth::W64, 8usize, 1u32, 4u8, 0usize),
        (WordWidth::W16, 16, 3, 0, 0),
        (WordWidth::W32, 7, 1, 0, 1),
        (WordWidth::W8, 13, 2, 4, 0),
        (WordWidth::W64, 2, 1, 7, 3),
    ] {
        let wb = w.bytes();
        let row_bytes = words * wb - trim;
        let full = patterned_rows(&mut rng, 200, words * wb, wb, 0.1, 0.05);
        let data: Vec<u8> = full.chunks(words * wb).flat_map(|r| r[..row_bytes].to_vec()).collect();
        let label = format!("small rows W{} {row_bytes} B G{groups} A{}", w.bits(), 1 << align_log2);
        let case = Case::new(&data, row_bytes, &fixed_width(w, groups, align_log2), 64, label);
        small_any_f += case
            .metas
            .iter()
            .filter(|m| m.group_count > 0 && !testdata::one_field_length(m))
            .count();
        lean += usize::from(part.case(&case, &mut rng));
        cases += 1;
    }
    assert!(
        small_any_f >= 8,
        "only {small_any_f} coded chunks of short rows with several F"
    );
    // Positions with 3-4 runs of free bits in a 32-bit half (decoded by deposit_runs) and with 5-8
    // (the run-by-run loop): lean rows, a pair table (W32 n40 in the general kernel), long rows.
    for shape in FEW_RUN_SHAPES {
        let case = few_run_entry(&mut rng, shape, 192, 4, 96);
        lean += usize::from(part.case(&case, &mut rng));
        cases += 1;
    }
    let partial_rows = |rng: &mut Rng, rows: usize, row_bytes: usize, wb: usize| -> Vec<u8> {
        let padded = row_bytes.div_ceil(wb) * wb;
        let wide = patterned_rows(rng, rows, padded, wb, 0.1, 0.05);
        wide.chunks(padded)
            .flat_map(|r| r[..row_bytes].iter().copied())
            .collect()
    };
    for (label, data, row_bytes) in [
        ("floats 200 B", float_rows(&mut rng, 300, 200, 0.02, 4), 200usize),
        ("sparse 1 KiB", sparse_rows(&mut rng, 120, 1024, 0.05), 1024),
        ("partial words 23 B", partial_rows(&mut rng, 150, 23, 8), 23),
        (
            "rows of 20 KiB",
            float_rows(&mut rng, 12, 20 * 1024, 0.02, 0),
            20 * 1024,
        ),
    ] {
        let opts = if row_bytes == 23 {
            fixed_width(WordWidth::W64, 1, 4)
        } else {
            EncodeOptions {
                align_log2: 4,
                ..Default::default()
            }
        };
        part.case(&Case::new(&data, row_bytes, &opts, 64, label.into()), &mut rng);
        cases += 1;
    }
    // Chunks of uneven sizes: ibp_gather finds them by binary search (the cases above by division).
    for case in uneven_chunk_entries(&mut rng) {
        part.case(&case, &mut rng);
        cases += 1;
    }
    // Chunks of rows of 32 and of 64 words: the lean kernel for any shape.
    let mixed = mixed_shape_entry(&mut rng);
    assert_eq!(load(&mixed).lean_tile_shape(), Some(LeanShape::Any));
    lean += usize::from(part.case(&mixed, &mut rng));
    // The shaped kernels rejected entries of other rows, and the pairs kernel decoded some (in the
    // whole list at least 5, 10 and 3: each part its share of the entries it checked).
    let [mid_rejected, pairs_rejected, pairs_own, vec_decoded, vec_rejected] = testdata::shaped_kernel_counts();
    assert!(
        mid_rejected >= part.share(5) && pairs_rejected >= part.share(10) && pairs_own >= part.share(3),
        "{}: mid kernel rejected {mid_rejected}, pairs kernel rejected {pairs_rejected} entries; {pairs_own} own",
        part.name()
    );
    assert!(lean >= 10, "only {lean} of {cases} cases took the lean tile kernel");
    let short = SHORT_ENTRIES.with(|c| c.get());
    if ibp_gpu::device::short_rows_kernel() {
        assert!(
            short >= 5,
            "only {short} of {lean} lean cases took the short-rows kernel"
        );
    }
    println!("{cases} cases, {lean} through the lean tile kernel ({short} the short-rows one) and the general one");
    println!(
        "generated cases, {}: {} of the {} entries checked (the shaped kernels rejected {mid_rejected} (mid) and {pairs_rejected} (pairs), the pairs kernel decoded {pairs_own}, the vector-lanes kernel decoded {vec_decoded} and rejected {vec_rejected})",
        part.name(),
        part.checked,
        part.next
    );
}

/// Image-like rows of more than 64 words of 8 or 16 bits (as Fashion-MNIST), every chunk coded:
/// the long-rows kernel takes them (a lane per row for rows of whole 16-byte vectors, else in
/// slices; the vector-lanes kernel where vector lanes take every chunk; with `IBP_LEAN_LONG=0` the
/// pairs kernel takes the rows of whole 16-bit words, the general kernel the others), and every
/// path gives the CPU decoder's rows.
#[test]
fn image_like_rows_match_cpu_decoder() {
    let mut rng = Rng::new(31);
    let (mut pairs, mut long_entries, mut vector_entries) = (0, 0, 0);
    for case in image_row_entries(&mut rng) {
        let entry = load(&case);
        let whole_w16 = case.metas.iter().all(|m| m.word_width.bytes() == 2) && case.row_bytes % 2 == 0;
        // Every chunk coded with tables of whole words of <= 16 bits, more than 64 a row, at least
        // half the positions fully invariant: the long-rows kernel; else 16-bit words in pairs, else
        // the general kernel.
        let (invariant, positions) = entry.layout().invariant_positions();
        let long = ibp_gpu::device::long_rows_kernel() != 0
            && 2 * invariant >= positions
            && case.metas.iter().all(|m| {
                m.group_count > 0
                    && m.word_width.bytes() <= 2
                    && m.words_per_row > 64
                    && m.words_per_row as usize * m.word_width.bytes() == case.row_bytes
                    && m.group_count * m.words_per_row <= 1024
            });
        // (Of those, entries whose chunks vector lanes all take: the vector-lanes kernel.)
        let vector_rows =
            long && ibp_gpu::device::vector_lanes_kernel() >= 1 && LeanShape::Vec.decodes_all(entry.layout());
        let expected = if vector_rows {
            TileKernel::Lean(LeanShape::Vec)
        } else if long {
            TileKernel::Lean(LeanShape::Long)
        } else if whole_w16 {
            TileKernel::GeneralPairs
        } else {
            TileKernel::General
        };
        assert_eq!(entry.tile_kernel(), expected, "{}", case.label);
        long_entries += usize::from(long);
        vector_entries += usize::from(vector_rows);
        pairs += usize::from(whole_w16);
        check_case(&case, &mut rng);
    }
    assert!(pairs >= 3, "{pairs} entries of 16-bit words");
    if ibp_gpu::device::long_rows_kernel() != 0 {
        assert!(long_entries >= 4, "{long_entries} entries through the long-rows kernel");
    }
    println!("image rows: {long_entries} entries for the long-rows kernel, {vector_entries} of them the vector-lanes kernel's");
}

/// Rows that save most of their bytes: tiles sized by their records, several per chunk, and range
/// decodes starting and ending anywhere in them.
#[test]
fn record_sized_tiles_match_cpu_decoder() {
    let mut rng = Rng::new(61);
    for case in record_tile_entries(&mut rng) {
        check_case(&case, &mut rng);
        let entry = load(&case);
        let n = case.rows();
        for _ in 0..12 {
            let first = rng.below(n);
            let count = 1 + rng.below(n - first);
            let at = first as usize * case.row_bytes;
            for kernel in [TileKernel::Auto, TileKernel::General] {
                assert_eq!(
                    entry.decode_range(first, count, kernel).unwrap(),
                    &case.expected[at..at + count as usize * case.row_bytes],
                    "{}: rows {first} + {count}, {kernel:?}",
                    case.label
                );
            }
        }
    }
}

/// Entries loaded with [`ChunkForm::FOR_GPU_READS`]: the chunks no cheaper to read coded are re-laid
/// raw (an entry of them alone becomes a flat one, gathered by `ibp_gather_flat`, when its rows are a
/// multiple of 16 bytes), the others stay coded, and every path gives the CPU decoder's rows.
#[test]
fn entries_relaid_for_gpu_reads_match_cpu_decoder() {
    let mut rng = Rng::new(31);
    for case in testdata::relayout_entries(&mut rng) {
        let label = &case.label;
        let entry = HostKernels::with_form(
            case.row_bytes as u64,
            &case.metas,
            &case.payload_refs(),
            ChunkForm::FOR_GPU_READS,
        )
        .unwrap_or_else(|e| panic!("{label}: load: {e}"));
        let chunks = &entry.layout().chunks;
        let raw = chunks.iter().filter(|c| c.group_count == 0).count();
        assert!(
            case.metas.iter().all(|m| m.group_count != 0),
            "{label}: every chunk is coded in the file"
        );
        assert!(raw > 0, "{label}: no chunk re-laid raw");
        if label.starts_with("mixed") {
            assert!(raw < chunks.len(), "{label}: the sparse chunks stay coded");
        } else {
            assert_eq!(raw, chunks.len(), "{label}: every chunk re-laid raw");
        }
        assert_eq!(
            entry.layout().flat_rows(),
            raw == chunks.len() && case.row_bytes % 16 == 0,
            "{label}: flat rows"
        );
        check_entry(&entry, &case, &mut rng);
        // A damaged payload is reported as for the chunks as stored: the loader checks them before
        // it re-lays any.
        let mut damaged = case.payloads.clone();
        damaged[0][7] ^= 0x20;
        let refs: Vec<&[u8]> = damaged.iter().map(|p| p.as_slice()).collect();
        let rb = case.row_bytes as u64;
        let stored = HostKernels::new(rb, &case.metas, &refs).err().expect("CRC mismatch");
        let formed = HostKernels::with_form(rb, &case.metas, &refs, ChunkForm::FOR_GPU_READS)
            .err()
            .expect("CRC mismatch");
        assert_eq!(stored.code(), Some(ErrorCode::PayloadCrc), "{label}: {stored}");
        assert_eq!(formed.to_string(), stored.to_string(), "{label}");
    }
}

/// Chunks of several tiles, so each block of the emulated grid (at most three) decodes a run of
/// consecutive tiles of one chunk: from its second tile on, a tile's first record offset is the one
/// the tile before it left (`IBP_TILE_CARRY_START`), in the short-rows, lean and general kernels.
#[test]
fn runs_of_tiles_in_one_chunk_match_cpu_decoder() {
    let mut rng = Rng::new(57);
    // 64-byte rows of 16-bit words (the short-rows kernel: tiles of up to 1024 rows), 256-byte rows
    // (the lean kernel for 33-64 words), 1 KiB rows of 32-bit words (the pairs kernel) and of 64-bit
    // words (the general kernel); a third of the rows random bytes (raw records).
    let mut kernels = Vec::new();
    for (w, words, rows, align_log2) in [
        (WordWidth::W16, 32usize, 5000usize, 0u8),
        (WordWidth::W16, 32, 5000, 4),
        (WordWidth::W32, 64, 1500, 4),
        (WordWidth::W32, 256, 400, 4),
        (WordWidth::W64, 128, 400, 4),
    ] {
        let row_bytes = words * w.bytes();
        let mut data = if words <= 64 {
            sparse_rows(&mut rng, rows, row_bytes, 0.05)
        } else {
            patterned_rows(&mut rng, rows, row_bytes, w.bytes(), 0.1, 0.05)
        };
        for row in data.chunks_exact_mut(row_bytes).step_by(3) {
            row.iter_mut().for_each(|b| *b = rng.next_u64() as u8);
        }
        let label = format!(
            "W{} n{words} A{}, {rows} rows in chunks of 4096",
            w.bits(),
            1 << align_log2
        );
        let case = Case::new(&data, row_bytes, &fixed_width(w, 1, align_log2), 4096, label);
        let entry = load(&case);
        kernels.push(entry.tile_kernel());
        check_entry(&entry, &case, &mut rng);
    }
    let short = TileKernel::Lean(LeanShape::Short);
    assert_eq!(
        kernels,
        [
            short,
            short,
            TileKernel::Lean(LeanShape::Mid),
            TileKernel::GeneralPairs,
            TileKernel::General
        ],
        "the tile kernels these rows take"
    );
}

/// `ibp_gather_split`: rows of 128 words and more decoded by 2 or 4 warps each, through decode tables
/// (rows of 3-4 free-bit runs) and Mask/Bitval words, at every word width, with groups, alignments
/// and partial last words; the same rows and the same first error as the CPU decoder when records
/// are damaged.
#[test]
fn split_gathers_match_cpu_decoder() {
    let mut rng = Rng::new(23);
    let (mut decoded, mut rejected, mut sparse) = (0usize, 0usize, false);
    for case in long_row_entries(&mut rng, 40) {
        let (label, row_bytes) = (case.label.clone(), case.row_bytes);
        sparse |= case.metas.iter().all(testdata::fields_none_or_whole);
        let entry = load(&case);
        let rows: Vec<u64> = (0..33).map(|_| rng.below(40)).collect();
        for split in [1, 2] {
            assert_eq!(
                entry.gather_split(&rows, split).unwrap(),
                case.expected_rows(&rows),
                "{label}: 2^{split} warps"
            );
        }
        assert_eq!(
            entry.gather(&rows[..5]).unwrap(),
            case.expected_rows(&rows[..5]),
            "{label}: auto"
        );
        // Damaged records: each row alone and all rows together, against the CPU decoder.
        let (mut meta, mut payload) = (case.metas[0].clone(), case.payloads[0].clone());
        // (Long records: many flips per round, so that field lengths and padding change too.)
        for _ in 0..4 {
            let flips = 8 + rng.below(16);
            testdata::flip_random_bits(&mut rng, &mut meta, &mut payload, flips);
            let entry = HostKernels::new(row_bytes as u64, std::slice::from_ref(&meta), &[&payload]).expect("loads");
            for r in 0..meta.row_count {
                let mut cpu = vec![0u8; row_bytes];
                let cpu_res = decode_chunk_rows(&meta, &payload, &[r], DecoderKind::Oracle, &mut cpu);
                for split in [1, 2] {
                    let got = entry.gather_split(&[r as u64], split);
                    if testdata::same_verdict(&cpu_res, &cpu, got, &format!("{label} row {r}, 2^{split} warps")) {
                        decoded += 1;
                    } else {
                        rejected += 1;
                    }
                }
            }
        }
    }
    assert!(
        decoded > 100 && rejected > 40,
        "decoded {decoded}, rejected {rejected}: too few of one kind"
    );
    assert!(sparse, "no entry of fields of 0 or W bits only");
    println!("split gathers: {decoded} rows decoded like the CPU, {rejected} rejected with its code");
}

/// Flips bits of a chunk's payload (CRC fixed, so the loader accepts it) and decodes each row alone
/// through `ibp_gather` and both tile kernels: each must decode to the CPU decoder's bytes or fail
/// with its error code; a whole-entry decode fails exactly when some row does. In [`PARTS`] tests:
/// every part damages every chunk as a single test would; a part checks its share of the rounds.
#[test]
fn corrupt_records_rejected_like_cpu_part_1() {
    corrupt_records_rejected_like_cpu(Part::new(0));
}

#[test]
fn corrupt_records_rejected_like_cpu_part_2() {
    corrupt_records_rejected_like_cpu(Part::new(1));
}

#[test]
fn corrupt_records_rejected_like_cpu_part_3() {
    corrupt_records_rejected_like_cpu(Part::new(2));
}

fn corrupt_records_rejected_like_cpu(mut part: Part) {
    let mut rng = Rng::new(22);
    let (mut decoded, mut rejected) = (0usize, 0usize);
    // (W, A, G, words, runs): runs > 0 gives positions with 3-4 runs of free bits per half.
    for (w, align_log2, groups, words, runs) in [
        (WordWidth::W8, 0u8, 1u32, 24usize, 0u32),
        (WordWidth::W16, 2, 2, 24, 0),
        (WordWidth::W16, 0, 1, 100, 0),
        (WordWidth::W32, 4, 1, 40, 0),
        (WordWidth::W64, 7, 3, 24, 0),
        (WordWidth::W64, 4, 1, 80, 0),
        (WordWidth::W64, 4, 1, 24, 3),
        (WordWidth::W32, 0, 1, 40, 3),
        // Image-like rows of whole 16-byte vectors: the long-rows kernel, a lane per row.
        (WordWidth::W16, 4, 1, 392, 0),
        (WordWidth::W16, 0, 2, 392, 0),
        (WordWidth::W8, 0, 1, 1024, 0),
    ] {
        let row_bytes = words * w.bytes();
        let data = if runs > 0 {
            few_run_rows(&mut rng, 48, words, w.bytes(), runs, runs + 1)
        } else if words > 64 && row_bytes % 16 == 0 {
            testdata::pixel_rows(&mut rng, 48, row_bytes, 7)
        } else if words <= 64 {
            two_run_rows(&mut rng, 48, words, w.bytes(), groups as usize, 64)
        } else {
            patterned_rows(&mut rng, 48, row_bytes, w.bytes(), 0.05, 0.0)
        };
        let (metas, payloads) = encode_rows(&data, row_bytes, &fixed_width(w, groups, align_log2), 48);
        let (mut meta, mut payload) = (metas[0].clone(), payloads[0].clone());
        for _ in 0..6 {
            let flips = 1 + rng.below(3);
            testdata::flip_random_bits(&mut rng, &mut meta, &mut payload, flips);
            if !part.mine() {
                continue; // (the flips above are kept: the next rounds build on them)
            }
            let entry = HostKernels::new(row_bytes as u64, std::slice::from_ref(&meta), &[&payload])
                .expect("structure unchanged, CRC fixed: loads");
            let mut cpu_all = vec![0u8; row_bytes * meta.row_count as usize];
            let cpu_whole = decode_chunk(&meta, &payload, DecoderKind::Oracle, &mut cpu_all);
            // (The long-rows kernel's rows whole and in segments; other kernels ignore the mode.)
            for mode in [RowSegments::WholeRows, RowSegments::Segments] {
                entry.use_row_segments(mode);
                let whole = entry.decode_range(0, meta.row_count as u64, TileKernel::Auto);
                assert_eq!(
                    whole.is_ok(),
                    cpu_whole.is_ok(),
                    "W{} n{words} {mode:?}: whole-entry verdicts differ",
                    w.bits()
                );
                if let Ok(bytes) = whole {
                    assert_eq!(bytes, cpu_all, "whole entry {mode:?}: bytes differ");
                }
            }
            entry.use_row_segments(RowSegments::Auto);
            for r in 0..meta.row_count {
                let mut cpu = vec![0u8; row_bytes];
                let cpu_res = decode_chunk_rows(&meta, &payload, &[r], DecoderKind::Oracle, &mut cpu);
                let range_in = |mode| {
                    entry.use_row_segments(mode);
                    let got = entry.decode_range(r as u64, 1, TileKernel::Auto);
                    entry.use_row_segments(RowSegments::Auto);
                    got
                };
                for (path, res) in [
                    ("gather", entry.gather(&[r as u64])),
                    ("range, whole rows", range_in(RowSegments::WholeRows)),
                    ("range, segments", range_in(RowSegments::Segments)),
                    ("range, general", entry.decode_range(r as u64, 1, TileKernel::General)),
                ] {
                    let what = format!("W{} n{words} row {r} ({path})", w.bits());
                    if testdata::same_verdict(&cpu_res, &cpu, res, &what) {
                        decoded += 1;
                    } else {
                        rejected += 1;
                    }
                }
            }
        }
    }
    // (In the whole test more than 100 and 40: each part its share.)
    assert!(
        decoded >= part.share(101) && rejected >= part.share(41),
        "{}: decoded {decoded}, rejected {rejected}: too few of one kind",
        part.name()
    );
    println!(
        "{decoded} rows decoded like the CPU, {rejected} rejected with its code ({}: {} of {} damaged chunks)",
        part.name(),
        part.checked,
        part.next
    );
}

#[test]
fn fuzz_inputs_and_vectors_decode_through_the_kernels_as_on_the_cpu() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let cases = replay::replay_cases(&root).expect("readable fuzz inputs");
    assert!(cases.len() > 50, "only {} replay cases", cases.len());
    let (mut same_bytes, mut same_code, mut other_code) = (0, 0, 0);
    for case in &cases {
        let got = decode_container(&case.bytes).unwrap_or_else(|e| panic!("{}: {e}", case.label));
        match (&case.expected, got) {
            (Ok(cpu), Ok(got)) => {
                assert_eq!(&got, cpu, "{}: bytes differ from the CPU's", case.label);
                same_bytes += 1;
            }
            (Ok(_), Err(e)) => panic!("{}: the CPU decodes it, the kernels say {e}", case.label),
            (Err(code), Ok(_)) => panic!("{}: the CPU rejects it with {code}, the kernels decoded it", case.label),
            (Err(cpu), Err(got)) if *cpu == got => same_code += 1,
            // Both reject; the loader checks every chunk's metadata and CRCs before any row, so a
            // file with several defects can be reported by a later chunk first (spec 11.3).
            (Err(cpu), Err(got)) => {
                replay::several_defects_explain(&case.bytes, *cpu, got)
                    .unwrap_or_else(|why| panic!("{}: CPU {cpu}, kernels {got}: {why}", case.label));
                other_code += 1;
            }
        }
    }
    println!(
        "replay through the kernels: {} cases: {same_bytes} decoded to the CPU's bytes, {same_code} rejected with the CPU's code, {other_code} with another code",
        cases.len()
    );
}

/// The kernels' own bounds checks: after a valid load, random bytes of the chunk descriptors, the
/// metadata (row lengths, group ids, masks), the row-index anchors or the payload are changed (as a
/// loader bug might), and gathers (with indices out of range too) and range decodes through both tile
/// kernels run. Any outcome is allowed but a failure that is not a data error; under
/// `tools/host-kernels-test.sh` (AddressSanitizer in the kernels) any access outside the buffers the
/// kernels were given aborts the test.
#[test]
fn kernels_stay_in_their_buffers_on_damaged_metadata() {
    let mut rng = Rng::new(23);
    let mut runs = 0usize;
    let (mut ok, mut rejected) = (0usize, 0usize);
    for (w, words, groups, align_log2, raw_rows) in [
        (WordWidth::W32, 50usize, 1u32, 4u8, 0.0),
        (WordWidth::W16, 40, 3, 0, 0.1),
        (WordWidth::W64, 100, 1, 7, 0.0),
        (WordWidth::W8, 24, 2, 2, 0.2),
    ] {
        let row_bytes = words * w.bytes();
        let data = patterned_rows(&mut rng, 130, row_bytes, w.bytes(), 0.1, raw_rows);
        let case = Case::new(
            &data,
            row_bytes,
            &fixed_width(w, groups, align_log2),
            48,
            format!("W{}", w.bits()),
        );
        for round in 0..30 {
            let mut entry = load(&case);
            let n = entry.layout().row_count;
            // Half the rounds gather through the flat row index, with one span damaged in some.
            entry.set_row_spans(round % 2 == 0);
            let damaged_span = (round % 4 == 0).then(|| rng.below(n));
            if let Some(i) = damaged_span {
                let v = rng.next_u64();
                entry.damage_row_spans(|spans| {
                    let s = &mut spans[i as usize];
                    *s = if v.is_multiple_of(2) { v } else { *s ^ (1 << (v % 64)) };
                });
            }
            let hits = 1 + rng.below(4);
            let (r1, r2, r3) = (rng.next_u64(), rng.next_u64(), rng.next_u64());
            entry.damage(|chunks, meta, anchors, payload| {
                let mut r = Rng::new(r1);
                for _ in 0..hits {
                    match r2 % 4 {
                        0 => {
                            let i = r.below(chunks.len() as u64) as usize;
                            chunks[i] ^= 1 << r.below(8);
                        }
                        1 => {
                            let i = r.below(meta.len() as u64) as usize;
                            meta[i] = r.next_u64() as u8;
                        }
                        2 => {
                            let i = r.below(anchors.len() as u64) as usize;
                            anchors[i] = if r3 % 2 == 0 {
                                r.next_u64()
                            } else {
                                anchors[i] ^ (1 << r.below(12))
                            };
                        }
                        _ => {
                            let i = r.below(payload.len() as u64) as usize;
                            payload[i] = r.next_u64() as u8;
                        }
                    }
                }
            });
            let mut rows: Vec<u64> = (0..40).map(|_| rng.below(n + 2)).collect();
            rows.extend(damaged_span);
            for res in [
                entry.gather(&rows),
                entry.decode_range(0, n, TileKernel::Auto),
                entry.decode_range(n / 4, n / 2, TileKernel::General),
            ] {
                match res {
                    Ok(_) => ok += 1,
                    Err(e) => {
                        assert!(e.code().is_some(), "not a data error: {e}");
                        rejected += 1;
                    }
                }
                runs += 1;
            }
        }
    }
    assert!(
        ok > 50 && rejected > 50,
        "{ok} decoded, {rejected} rejected: too few of one kind"
    );
    println!("damaged metadata: {runs} launches, {ok} decoded, {rejected} rejected, none outside its buffers");
}

/// `ibp_gather` uses a chunk's decode table only where the table its descriptor implies (G * n
/// entries) lies inside the tables buffer: a descriptor damaged to more groups than the table was
/// built for (every row set to the extra group) must not make it read past the tables (run under
/// AddressSanitizer by tools/host-kernels-test.sh; before the check it read 16 bytes past them).
#[test]
fn ibp_gather_reads_no_table_past_its_buffer() {
    let mut rng = Rng::new(5);
    let w = WordWidth::W32;
    let words = 50usize;
    let row_bytes = words * 4;
    let data = float_rows(&mut rng, 3000, row_bytes, 0.02, 4);
    let case = Case::new(&data, row_bytes, &fixed_width(w, 2, 4), 4000, "probe".into());
    assert_eq!(case.metas.iter().map(|m| m.group_count).collect::<Vec<_>>(), [2]);
    for bump in 1..6u32 {
        let mut entry = load(&case);
        let last = entry.layout().chunks.len() - 1;
        entry.damage(|chunks, meta, _anchors, _payload| {
            let at = last * 80 + 76; // group_count
            let g = u16::from_le_bytes(chunks[at..at + 2].try_into().unwrap());
            let v = g + bump as u16;
            chunks[at..at + 2].copy_from_slice(&v.to_le_bytes());
            let go = u64::from_le_bytes(chunks[last * 80 + 40..last * 80 + 48].try_into().unwrap()) as usize;
            for b in &mut meta[go..go + 3000] {
                *b = (g as u8) + (bump as u8) - 1;
            }
        });
        let rows: Vec<u64> = (0..4).collect();
        if let Err(e) = entry.gather(&rows) {
            assert!(e.code().is_some(), "not a data error: {e}");
        }
    }
}

/// Every field of the first and the last chunk descriptor set, one at a time, to values a loader bug
/// might leave (0, one more, all ones): the kernels stay in their buffers (AddressSanitizer under
/// tools/host-kernels-test.sh) and give a decode or a data error. (With 1, one less and twice as
/// well, 1,836 launches, the same; a stored-length width of 3 made the length reads go 1 byte past
/// the metadata until `stored_len_inside`.)
#[test]
fn kernels_stay_in_their_buffers_on_each_damaged_descriptor_field() {
    // (offset, bytes) of every IbpChunk field (kernels/ibp_status.h).
    const FIELDS: [(usize, usize); 17] = [
        (0, 8),
        (8, 8),
        (16, 8),
        (24, 8),
        (32, 8),
        (40, 8),
        (48, 8),
        (56, 4),
        (60, 4),
        (64, 4),
        (68, 4),
        (72, 1),
        (73, 1),
        (74, 1),
        (75, 1),
        (76, 2),
        (78, 2),
    ];
    let mut rng = Rng::new(24);
    let mut launches = 0usize;
    for (w, words, groups) in [(WordWidth::W32, 50usize, 2u32), (WordWidth::W16, 20, 1)] {
        let row_bytes = words * w.bytes();
        let data = float_rows(&mut rng, 200, row_bytes, 0.02, 4);
        let case = Case::new(
            &data,
            row_bytes,
            &fixed_width(w, groups, 4),
            80,
            format!("W{}", w.bits()),
        );
        let chunks = case.metas.len();
        for chunk in [0, chunks - 1] {
            for (at, size) in FIELDS {
                for variant in [0u32, 2, 5] {
                    let mut entry = load(&case);
                    let n = entry.layout().row_count;
                    entry.damage(|descs, _, _, _| {
                        let field = &mut descs[chunk * 80 + at..chunk * 80 + at + size];
                        let mut bytes = [0u8; 8];
                        bytes[..size].copy_from_slice(field);
                        let v = u64::from_le_bytes(bytes);
                        let max = if size == 8 { u64::MAX } else { (1u64 << (8 * size)) - 1 };
                        let new = match variant {
                            0 => 0,
                            1 => 1,
                            2 => v.wrapping_add(1) & max,
                            3 => v.wrapping_sub(1) & max,
                            4 => v.wrapping_mul(2) & max,
                            _ => max,
                        };
                        field.copy_from_slice(&new.to_le_bytes()[..size]);
                    });
                    let rows: Vec<u64> = (0..n + 1).rev().collect();
                    for res in [
                        entry.gather(&rows),
                        entry.decode_range(0, n, TileKernel::Auto),
                        entry.decode_range(0, n, TileKernel::General),
                    ] {
                        if let Err(e) = res {
                            assert!(
                                e.code().is_some(),
                                "chunk {chunk} field @{at} variant {variant}: not a data error: {e}"
                            );
                        }
                        launches += 1;
                    }
                }
            }
        }
    }
    println!("damaged descriptor fields: {launches} launches, none outside its buffers");
}

/// A bit set in a record's last byte, one record at a time: where it falls in the padding after the
/// record's fields the kernels reject the row with the CPU decoder's `E_PADDING`, elsewhere they
/// decode what the CPU decodes. Rows of image-like 16-bit words (the long-rows kernel, lane per row
/// and vector lanes; the vector-lanes kernel), of 512 16-bit words of at most four runs of free
/// bits a position (vector lanes: 64 vectors a row, so every row of a warp ends in the same lane,
/// where `IBP_VL_DEFER_CHECKS` checks the row it kept before keeping the next) and of 64 16-bit
/// words (the lean kernels), through the whole entry, a range of the row (by the kernel chosen, and
/// by the long-rows and vector-lanes kernels forced) and a gather.
#[test]
fn padding_bits_rejected_like_cpu() {
    let mut rng = Rng::new(23);
    let (mut padding, mut decoded, mut vector_rows) = (0usize, 0usize, 0usize);
    for (w, align_log2, words) in [
        (WordWidth::W16, 4u8, 392usize),
        (WordWidth::W16, 4, 64),
        (WordWidth::W8, 4, 1024),
        (WordWidth::W16, 4, 512),
    ] {
        let row_bytes = words * w.bytes();
        let data = if words == 512 {
            testdata::vector_rows(&mut rng, 40, words, 4)
        } else {
            testdata::pixel_rows(&mut rng, 40, row_bytes, 7)
        };
        let (metas, payloads) = encode_rows(&data, row_bytes, &fixed_width(w, 1, align_log2), 40);
        for r in 0..metas[0].row_count as usize {
            let (mut meta, mut payload) = (metas[0].clone(), payloads[0].clone());
            let last = meta.record_range(r).end - 1;
            if payload[last] & 0x80 != 0 {
                continue;
            }
            payload[last] |= 0x80;
            meta.payload_crc = crc32(&payload);
            let entry = HostKernels::new(row_bytes as u64, std::slice::from_ref(&meta), &[&payload])
                .expect("structure unchanged, CRC fixed: loads");
            let mut cpu_all = vec![0u8; row_bytes * meta.row_count as usize];
            let cpu_whole = decode_chunk(&meta, &payload, DecoderKind::Oracle, &mut cpu_all);
            let label = format!("W{} n{words} A{} record {r}", w.bits(), 1 << align_log2);
            // (The whole entry by the kernel chosen and, where it decodes the entry, the
            // vector-lanes kernel: a tile of several rows a warp.)
            let mut whole = vec![("kernel chosen", TileKernel::Auto)];
            if TileKernel::Lean(LeanShape::Vec).decodes(entry.layout()) {
                whole.push(("vector-lanes kernel", TileKernel::Lean(LeanShape::Vec)));
            }
            for (kernel_label, kernel) in whole {
                match (&cpu_whole, entry.decode_range(0, meta.row_count as u64, kernel)) {
                    (Ok(()), Ok(got)) => {
                        assert_eq!(got, cpu_all, "{label}: whole entry ({kernel_label}), bytes differ")
                    }
                    (Err(c), Err(g)) => assert_eq!(
                        g.code(),
                        Some(c.code),
                        "{label}: whole entry ({kernel_label}), CPU says {c}, kernels {g}"
                    ),
                    (c, g) => panic!(
                        "{label}: whole entry ({kernel_label}): CPU {c:?}, kernels {:?}",
                        g.map(|_| ())
                    ),
                }
            }
            let mut cpu = vec![0u8; row_bytes];
            let cpu_res = decode_chunk_rows(&meta, &payload, &[r as u32], DecoderKind::Oracle, &mut cpu);
            let long = TileKernel::Lean(LeanShape::Long);
            let vector_lanes = TileKernel::Lean(LeanShape::Vec);
            let mut paths = vec![
                ("gather", entry.gather(&[r as u64])),
                ("range", entry.decode_range(r as u64, 1, TileKernel::Auto)),
                ("range, long-rows kernel", entry.decode_range(r as u64, 1, long)),
            ];
            if vector_lanes.decodes(entry.layout()) {
                paths.push((
                    "range, vector-lanes kernel",
                    entry.decode_range(r as u64, 1, vector_lanes),
                ));
                vector_rows += 1;
            }
            for (path, res) in paths {
                if testdata::same_verdict(&cpu_res, &cpu, res, &format!("{label} ({path})")) {
                    decoded += 1;
                } else {
                    padding += usize::from(cpu_res.as_ref().is_err_and(|c| c.code == ErrorCode::Padding));
                }
            }
        }
    }
    assert!(
        padding >= 30 && decoded >= 10 && vector_rows >= 10,
        "{padding} rows rejected for padding, {decoded} decoded, {vector_rows} through the vector-lanes kernel"
    );
    println!("padding bits: {padding} rows rejected with E_PADDING like the CPU, {decoded} decoded like it ({vector_rows} records through the vector-lanes kernel too)");
}

/// Rows of one group of 16-bit words, 33-64 output vectors (the long-rows kernel's vector lanes,
/// `IBP_LONG_VECTOR_LANES`, take both of a lane's vectors), three positions in five fully invariant
/// (so the vector-lanes kernel is the entry's own, or with `IBP_LEAN_VEC=0` the long-rows kernel)
/// and the others of one or two runs of free bits, or of one to four, at both alignments
/// (`testdata::vector_row_entries`): every path of the case, then
/// records damaged a few bits at a time, rejected or decoded as the CPU decoder does, through the
/// long-rows and the vector-lanes kernels.
#[test]
fn long_rows_of_many_vectors_match_cpu_decoder() {
    let mut rng = Rng::new(24);
    let (mut decoded, mut rejected) = (0usize, 0usize);
    for case in testdata::vector_row_entries(&mut rng, 96) {
        let (label, row_bytes) = (case.label.clone(), case.row_bytes);
        check_case(&case, &mut rng);
        let own = if ibp_gpu::device::vector_lanes_kernel() >= 1 {
            TileKernel::Lean(LeanShape::Vec)
        } else {
            TileKernel::Lean(LeanShape::Long)
        };
        assert_eq!(load(&case).tile_kernel(), own, "{label}");
        let long = TileKernel::Lean(LeanShape::Long);
        let vector_lanes = TileKernel::Lean(LeanShape::Vec);
        let (mut meta, mut payload) = (case.metas[0].clone(), case.payloads[0].clone());
        for _ in 0..4 {
            let flips = 4 + rng.below(8);
            testdata::flip_random_bits(&mut rng, &mut meta, &mut payload, flips);
            let entry = HostKernels::new(row_bytes as u64, std::slice::from_ref(&meta), &[&payload])
                .expect("structure unchanged, CRC fixed: loads");
            for r in 0..meta.row_count {
                let mut cpu = vec![0u8; row_bytes];
                let cpu_res = decode_chunk_rows(&meta, &payload, &[r], DecoderKind::Oracle, &mut cpu);
                for kernel in [long, vector_lanes] {
                    let got = entry.decode_range(r as u64, 1, kernel);
                    if testdata::same_verdict(&cpu_res, &cpu, got, &format!("{label} row {r}, {kernel:?}")) {
                        decoded += 1;
                    } else {
                        rejected += 1;
                    }
                }
            }
        }
    }
    assert!(
        decoded > 2000 && rejected > 100,
        "decoded {decoded}, rejected {rejected}"
    );
    println!("long rows of many vectors: {decoded} damaged-entry rows decoded like the CPU, {rejected} rejected with its code");
}

/// `ibp_gather_sparse`: rows of chunks with sparse tables decoded as exceptions over zeros (at every
/// word width, partial last words, several groups, positions with a non-zero Bitval word, windows of
/// more than 32 rounds of words), against the CPU decoder: gathers of every row and of random rows, then single-row gathers
/// of damaged records (same bytes or the CPU's error code).
#[test]
fn sparse_rows_decode_as_exceptions_like_cpu() {
    if testdata::default_overridden(&["IBP_GATHER_SPARSE"]) {
        return;
    }
    let mut rng = Rng::new(31);
    let (mut decoded, mut rejected, mut sparse_rounds) = (0usize, 0usize, 0usize);
    for (w, row_bytes, groups, align_log2) in testdata::SPARSE_SHAPES {
        let label = format!("W{} {row_bytes} B G{groups} A{}", w.bits(), 1 << align_log2);
        let data = testdata::mostly_sparse_rows(&mut rng, 160, row_bytes, 0.03);
        let case = Case::new(&data, row_bytes, &fixed_width(w, groups, align_log2), 64, label.clone());
        let mut entry = load(&case);
        assert!(entry.has_sparse_tables(), "{label}: no sparse table");
        assert_eq!(
            entry.uses_sparse_rows(),
            row_bytes as u64 >= ibp_gpu::SPARSE_GATHER_MIN_ROW_BYTES,
            "{label}: default path"
        );
        entry.set_sparse_rows(true);
        let n = case.rows();
        let all: Vec<u64> = (0..n).rev().collect();
        assert_eq!(
            entry.gather(&all).unwrap(),
            case.expected_rows(&all),
            "{label}: every row"
        );
        let (random, _) = gather_rows(&mut rng, n);
        assert_eq!(
            entry.gather(&random).unwrap(),
            case.expected_rows(&random),
            "{label}: random rows"
        );
        // Damaged records: each row alone, as the CPU decodes it.
        let (mut meta, mut payload) = (case.metas[0].clone(), case.payloads[0].clone());
        for round in 0..3 {
            testdata::flip_random_bits(&mut rng, &mut meta, &mut payload, 4 + 4 * round);
            let mut damaged = HostKernels::new(row_bytes as u64, std::slice::from_ref(&meta), &[&payload])
                .expect("structure unchanged, CRC fixed: loads");
            damaged.set_sparse_rows(true);
            // (The flips may reach the masks or group ids and take the chunk off the sparse path.)
            if !damaged.uses_sparse_rows() {
                continue;
            }
            sparse_rounds += 1;
            for r in 0..meta.row_count {
                let mut cpu = vec![0u8; row_bytes];
                let cpu_res = decode_chunk_rows(&meta, &payload, &[r], DecoderKind::Oracle, &mut cpu);
                let what = format!("{label} round {round} row {r}");
                if testdata::same_verdict(&cpu_res, &cpu, damaged.gather(&[r as u64]), &what) {
                    decoded += 1;
                } else {
                    rejected += 1;
                }
            }
        }
    }
    let damaged_entries = 3 * testdata::SPARSE_SHAPES.len();
    assert!(
        sparse_rounds * 10 >= damaged_entries * 7,
        "{sparse_rounds} of {damaged_entries} damaged entries kept their sparse tables"
    );
    assert!(
        decoded > 1000 && rejected > 40,
        "decoded {decoded}, rejected {rejected}: too few of one kind"
    );
    println!(
        "{decoded} rows of damaged entries decoded like the CPU, {rejected} rejected with its code \
         ({sparse_rounds} of {damaged_entries} entries)"
    );
}
