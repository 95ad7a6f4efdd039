//! `ibp demo`: the README's main job on the embedded default dataset (`data/` in the repository):
//! compress every embedded real tensor, decompress it with both CPU decoders, check the bytes are
//! identical, and print sizes and the space saved.

use crate::error::{CliError, CliResult};
use crate::tensor_io::npy;
use ibp_codec::options::EncodeOptions;
use ibp_codec::{ContainerReader, ContainerWriter, DecoderKind};
use std::io::Cursor;
use std::path::Path;
use std::time::Instant;

/// The embedded datasets: name, `.npy` bytes (see `data/SOURCE.md` for source and licence).
pub const EMBEDDED: [(&str, &[u8]); 2] = [
    (
        "glove-6b-50d-2k",
        include_bytes!("../../../../data/glove-6b-50d-2k.npy"),
    ),
    (
        "minilm-word-emb-300",
        include_bytes!("../../../../data/minilm-word-emb-300.npy"),
    ),
];

/// One dataset's result.
#[derive(Debug, Clone)]
pub struct DemoRow {
    /// Dataset name.
    pub name: String,
    /// Raw tensor bytes.
    pub raw_bytes: u64,
    /// Whole `.ibp` file bytes (every overhead counted).
    pub ibp_bytes: u64,
    /// Seconds to encode.
    pub encode_s: f64,
    /// Seconds to decode with the fast decoder.
    pub decode_s: f64,
}

/// Compresses, decompresses (oracle and fast) and verifies every embedded dataset.
pub fn run_demo() -> CliResult<Vec<DemoRow>> {
    let mut rows = Vec::new();
    for (name, bytes) in EMBEDDED {
        let here = Path::new(name);
        let header = npy::parse(bytes).map_err(|e| CliError::tensor_file(here, "npy", e))?;
        let data = &bytes[header.data_offset..header.data_offset + header.data_len];
        let row_bytes = header.data_len as u64 / header.shape.first().copied().unwrap_or(1).max(1);
        let start = Instant::now();
        let mut w =
            ContainerWriter::new(Vec::new(), EncodeOptions::default()).map_err(|e| CliError::format(here, e))?;
        w.write_entry(name, header.dtype, &header.shape, row_bytes, data)
            .map_err(|e| CliError::format(here, e))?;
        let file = w.finish().map_err(|e| CliError::format(here, e))?;
        let encode_s = start.elapsed().as_secs_f64();
        let mut r = ContainerReader::open(Cursor::new(&file)).map_err(|e| CliError::format(here, e))?;
        let start = Instant::now();
        let fast = r
            .decode_entry(0, DecoderKind::Fast)
            .map_err(|e| CliError::format(here, e))?;
        let decode_s = start.elapsed().as_secs_f64();
        let oracle = r
            .decode_entry(0, DecoderKind::Oracle)
            .map_err(|e| CliError::format(here, e))?;
        if fast != data || oracle != data {
            return Err(CliError::bad_input(
                here,
                "MISMATCH",
                "decoded bytes differ from the original",
            ));
        }
        let report = r.verify(DecoderKind::Fast);
        if !report.is_ok() {
            return Err(CliError::bad_input(here, "VERIFY", format!("{:?}", report.problems)));
        }
        rows.push(DemoRow {
            name: name.to_owned(),
            raw_bytes: data.len() as u64,
            ibp_bytes: file.len() as u64,
            encode_s,
            decode_s,
        });
    }
    Ok(rows)
}

/// Runs the demo and prints a table.
pub fn run() -> CliResult<()> {
    let rows = run_demo()?;
    println!("IBP demo: embedded real datasets (data/SOURCE.md), compressed, decompressed with the oracle and fast decoders, verified bit-exact\n");
    println!("| dataset | raw bytes | .ibp bytes | space saved | encode MB/s | decode MB/s | round trip |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | --- |");
    for r in &rows {
        println!(
            "| {} | {} | {} | {:.2} % | {:.0} | {:.0} | bit-exact |",
            r.name,
            r.raw_bytes,
            r.ibp_bytes,
            100.0 * (1.0 - r.ibp_bytes as f64 / r.raw_bytes as f64),
            r.raw_bytes as f64 / r.encode_s / 1e6,
            r.raw_bytes as f64 / r.decode_s / 1e6
        );
    }
    let raw: u64 = rows.iter().map(|r| r.raw_bytes).sum();
    let ibp: u64 = rows.iter().map(|r| r.ibp_bytes).sum();
    println!(
        "\ntotal: {raw} -> {ibp} bytes, {:.2} % saved (every overhead counted)",
        100.0 * (1.0 - ibp as f64 / raw as f64)
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn demo_round_trips_every_embedded_dataset_and_saves_space() {
        let rows = super::run_demo().expect("demo succeeds");
        assert_eq!(rows.len(), super::EMBEDDED.len());
        for r in rows {
            assert!(
                r.ibp_bytes < r.raw_bytes,
                "{} did not shrink: {} -> {}",
                r.name,
                r.raw_bytes,
                r.ibp_bytes
            );
        }
    }
}
