//! Space saved and container overhead on `.npy` row matrices (C order, little-endian, 2-D):
//! `cargo run --release -p ibp-codec --example overhead -- FILE.npy [ALIGN_LOG2]` (environment:
//! `IBP_WIDTH`, `IBP_THRESHOLD`, `IBP_GROUPS`, `IBP_CHUNK_ROWS` fix those options).
//!
//! Overhead = file bytes - row record bytes (header, chunk headers, masks, bitvals, row index,
//! alignment padding, directory, footer), reported per row and as a share of the raw bytes.

use ibp_codec::options::EncodeOptions;
use ibp_codec::ContainerReader;
use ibp_codec::ContainerWriter;
use ibp_format::Dtype;

fn read_npy(path: &str) -> (Dtype, Vec<u64>, Vec<u8>) {
    let bytes = std::fs::read(path).expect("readable .npy");
    assert_eq!(&bytes[..6], b"\x93NUMPY", "not a .npy file");
    let (header_len, start) = if bytes[6] == 1 {
        (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10)
    } else {
        (u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize, 12)
    };
    let header = std::str::from_utf8(&bytes[start..start + header_len]).unwrap();
    let descr = header.split("'descr':").nth(1).unwrap().split('\'').nth(1).unwrap();
    let dtype = match descr {
        "<f4" => Dtype::F32,
        "<f2" => Dtype::F16,
        "<u2" => Dtype::Bf16,
        "|u1" => Dtype::U8,
        "<f8" => Dtype::F64,
        other => panic!("unsupported dtype {other}"),
    };
    let shape_text = header
        .split("'shape':")
        .nth(1)
        .unwrap()
        .split('(')
        .nth(1)
        .unwrap()
        .split(')')
        .next()
        .unwrap();
    let shape: Vec<u64> = shape_text.split(',').filter_map(|s| s.trim().parse().ok()).collect();
    (dtype, shape, bytes[start + header_len..].to_vec())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).expect("usage: overhead FILE.npy [ALIGN_LOG2]");
    let align_log2: u8 = args.get(2).map(|a| a.parse().unwrap()).unwrap_or(0);
    let (dtype, shape, data) = read_npy(path);
    let rows = shape[0];
    let row_bytes = data.len() as u64 / rows.max(1);
    let word_width = std::env::var("IBP_WIDTH")
        .ok()
        .map(|w| ibp_format::WordWidth::from_bits(w.parse().unwrap()).unwrap());
    let chunk_rows = std::env::var("IBP_CHUNK_ROWS").ok().map(|c| c.parse().unwrap());
    let groups = std::env::var("IBP_GROUPS")
        .ok()
        .map(|g| g.parse().unwrap())
        .unwrap_or(1);
    let threshold = std::env::var("IBP_THRESHOLD")
        .ok()
        .filter(|t| !t.is_empty())
        .map(|t| t.parse().unwrap());
    let opts = EncodeOptions {
        align_log2,
        word_width,
        chunk_rows,
        groups,
        threshold,
        ..EncodeOptions::default()
    };
    let mut w = ContainerWriter::new(Vec::new(), opts).unwrap();
    w.write_entry("x", dtype, &shape, row_bytes, &data).unwrap();
    let file = w.finish().unwrap();
    let mut r = ContainerReader::open(std::io::Cursor::new(&file)).unwrap();
    let mut payload = 0u64;
    let mut widths = std::collections::BTreeMap::new();
    for c in 0..r.entries()[0].chunks.len() {
        let m = r.chunk_meta(0, c).unwrap();
        payload += m.payload_len;
        *widths.entry(m.word_width.bits()).or_insert(0u32) += 1;
    }
    let raw = data.len() as f64;
    let overhead = file.len() as u64 - payload;
    println!(
        "{path}: {rows} rows x {row_bytes} B, A={}: file {} B, saved {:.2} %, records {:.2} % of raw, overhead {} B ({:.3} B/row, {:.3} % of raw), chunk word widths {:?}",
        1 << align_log2,
        file.len(),
        100.0 * (1.0 - file.len() as f64 / raw),
        100.0 * payload as f64 / raw,
        overhead,
        overhead as f64 / rows as f64,
        100.0 * overhead as f64 / raw,
        widths
    );
}
