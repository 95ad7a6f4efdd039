//! No allocation exceeds what the bytes present can back (spec 10.1): a counting global allocator
//! measures the peak heap use while opening and decoding valid files and crafted files that claim
//! huge sizes. Its own test binary, with a single test, so that nothing else allocates meanwhile.

use ibp_codec::row::DecoderKind;
use ibp_codec::ContainerReader;
use ibp_format::{crc32, Dtype, Footer, Header};
use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Cursor;
use std::sync::atomic::{AtomicUsize, Ordering};

#[path = "../fuzz/src/replay.rs"]
#[allow(dead_code)]
mod replay;

/// Counts live heap bytes and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(size: usize) {
    let now = LIVE.fetch_add(size, Ordering::SeqCst) + size;
    PEAK.fetch_max(now, Ordering::SeqCst);
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged; the counters
// are atomics and allocate nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::SeqCst);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::SeqCst);
            grew(new_size);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Peak heap growth (bytes above the level at the start) while `f` runs.
fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.load(Ordering::SeqCst);
    PEAK.store(base, Ordering::SeqCst);
    let out = f();
    (out, PEAK.load(Ordering::SeqCst).saturating_sub(base))
}

/// Opens and fully decodes `file` with both decoders; returns the decoded bytes (or error code)
/// and the peak heap growth meanwhile.
fn open_and_decode(file: &[u8]) -> (Result<usize, ibp_format::ErrorCode>, usize) {
    peak_during(|| {
        let mut out = 0;
        for kind in [DecoderKind::Oracle, DecoderKind::Fast] {
            let mut r = ContainerReader::open(Cursor::new(file)).map_err(|e| e.code)?;
            let all = r.decode_all(kind).map_err(|e| e.code)?;
            out = all.iter().map(Vec::len).sum();
        }
        Ok(out)
    })
}

/// The allowance: a small multiple of the file, plus the output it really decodes to, plus a
/// fixed amount for the reader's bookkeeping and the rayon pool's first use.
fn allowance(file_len: usize, output_len: usize) -> usize {
    32 * file_len + 2 * output_len + (1 << 20)
}

/// A chunk of `rows` rows of `row_bytes` bytes whose metadata is valid (full masks, 1-byte records)
/// and whose payload of `rows` zero bytes is far too short for its rows: every record fails
/// `E_ROW_LENGTH`, but only a decoder that allocates the claimed output first would notice late.
fn claims_huge_output(rows: u32, row_bytes: u32) -> Vec<u8> {
    let n = row_bytes / 8;
    let meta_len = 2 * row_bytes + rows;
    let mut chunk = vec![0u8; 48];
    chunk[..4].copy_from_slice(b"IBPC");
    chunk[4] = 64; // W
    chunk[6] = 1; // length_bytes
    chunk[8] = 1; // G
    chunk[12..16].copy_from_slice(&rows.to_le_bytes());
    chunk[16..20].copy_from_slice(&n.to_le_bytes());
    chunk[20..24].copy_from_slice(&1u32.to_le_bytes()); // length_base: every record 1 byte
    chunk[24..32].copy_from_slice(&(rows as u64).to_le_bytes());
    chunk[32..36].copy_from_slice(&meta_len.to_le_bytes());
    chunk.extend(std::iter::repeat_n(0xFFu8, row_bytes as usize)); // masks: all invariant
    chunk.extend(std::iter::repeat_n(0u8, row_bytes as usize)); // bitvals
    chunk.extend(std::iter::repeat_n(0u8, rows as usize)); // row lengths: base + 0
    chunk.extend(std::iter::repeat_n(0u8, rows as usize)); // payload
    let mut dir = 1u32.to_le_bytes().to_vec();
    dir.extend_from_slice(&[0; 4]);
    dir.extend_from_slice(&1u16.to_le_bytes());
    dir.push(Dtype::U8.code());
    dir.push(2);
    dir.extend_from_slice(&1u32.to_le_bytes());
    dir.extend_from_slice(&(rows as u64).to_le_bytes());
    dir.extend_from_slice(&(row_bytes as u64).to_le_bytes());
    dir.extend_from_slice(&(rows as u64).to_le_bytes());
    dir.extend_from_slice(&(row_bytes as u64).to_le_bytes());
    dir.extend_from_slice(b"x\0\0\0\0\0\0\0");
    dir.extend_from_slice(&32u64.to_le_bytes());
    dir.extend_from_slice(&(chunk.len() as u64).to_le_bytes());
    dir.extend_from_slice(&rows.to_le_bytes());
    dir.extend_from_slice(&[0; 4]);
    let mut file = Header::default().to_bytes().to_vec();
    file.extend_from_slice(&chunk);
    let footer = Footer {
        directory_offset: file.len() as u64,
        directory_len: dir.len() as u64,
        directory_crc: crc32(&dir),
    };
    file.extend_from_slice(&dir);
    file.extend_from_slice(&footer.to_bytes());
    replay::fix_crcs(&mut file);
    file
}

#[test]
fn peak_allocation_stays_within_what_the_file_backs() {
    // Warm up the rayon pool and lazy statics outside the measurements.
    let samples = replay::sample_containers();
    let _ = open_and_decode(&samples[0].1);

    for (name, file) in &samples {
        let (out, peak) = open_and_decode(file);
        let out = out.unwrap_or_else(|c| panic!("{name}: {c}"));
        eprintln!("{name}: file {} B, output {out} B, peak {peak} B", file.len());
        assert!(peak <= allowance(file.len(), out), "{name}: peak {peak} B");
    }

    // Crafted: metadata is valid and CRCs are right, the rows cannot be.
    for (rows, row_bytes) in [(1u32 << 12, 1u32 << 12), (1 << 20, 1 << 12), (1 << 16, 1 << 16)] {
        let file = claims_huge_output(rows, row_bytes);
        let claimed = rows as usize * row_bytes as usize;
        let (out, peak) = open_and_decode(&file);
        eprintln!(
            "crafted {rows} rows x {row_bytes} B (claims {claimed} B): file {} B, {out:?}, peak {peak} B",
            file.len()
        );
        assert_eq!(out, Err(ibp_format::ErrorCode::RowLength));
        assert!(
            peak <= allowance(file.len(), 0),
            "a {}-byte file that decodes to nothing made the reader allocate {peak} B (claims {claimed} B)",
            file.len()
        );
    }
}
