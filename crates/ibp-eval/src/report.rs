//! Result records of the CPU evaluation, written as JSON (read by `tools/plot_results.py`) and CSV.

use crate::published::Anchor;
use serde::Serialize;
use std::fmt::Write as _;

/// One method measured on one dataset.
#[derive(Debug, Clone, Default, Serialize)]
pub struct MethodResult {
    /// Display name, e.g. `IBP auto`, `zstd-3 64 KiB blocks`.
    pub method: String,
    /// `ibp`, `zstd`, `lz4` or `none`.
    pub family: String,
    /// Whether one row can be read without decoding the whole file.
    pub random_access: bool,
    /// Raw bytes the figures of this row were measured on.
    pub measured_bytes: u64,
    /// True when measured on a prefix of the dataset rather than all of it.
    pub subset: bool,
    /// Stored bytes, every overhead counted (whole file / frame / blocks + index).
    pub stored_bytes: u64,
    /// `100 * (1 - stored / raw)`.
    pub saved_pct: f64,
    /// Encode throughput, GB/s of raw bytes, one thread.
    pub encode_gbps_1t: Option<f64>,
    /// Encode throughput, all cores.
    pub encode_gbps_all: Option<f64>,
    /// Decode throughput, GB/s of raw bytes, one thread.
    pub decode_gbps_1t: Option<f64>,
    /// Decode throughput, all cores.
    pub decode_gbps_all: Option<f64>,
    /// Mean time to fetch one random row, microseconds (one thread).
    pub row_access_us: Option<f64>,
    /// IBP only: the same with decoders and metadata prepared once per file (no per-row setup).
    pub row_access_prepared_us: Option<f64>,
    /// What the encoder chose (IBP) or other notes.
    pub detail: Option<String>,
    /// Set when the method failed on this dataset.
    pub error: Option<String>,
}

/// All methods on one dataset.
#[derive(Debug, Clone, Serialize)]
pub struct DatasetResult {
    /// Dataset name.
    pub name: String,
    /// What it is.
    pub description: String,
    /// Logical dtype.
    pub dtype: String,
    /// Rows.
    pub rows: u64,
    /// Bytes per row.
    pub row_bytes: u64,
    /// Raw bytes.
    pub raw_bytes: u64,
    /// Published space saving to match or beat, if any.
    pub published: Option<Anchor>,
    /// memcpy of the whole dataset, one thread (baseline of this run), GB/s.
    pub memcpy_gbps_1t: f64,
    /// memcpy split over all cores, GB/s.
    pub memcpy_gbps_all: f64,
    /// Every method measured.
    pub methods: Vec<MethodResult>,
    /// Wall seconds spent on this dataset.
    pub seconds: f64,
}

/// One whole run.
#[derive(Debug, Clone, Serialize)]
pub struct Run {
    /// Producer.
    pub tool: String,
    /// CPU model from /proc/cpuinfo.
    pub cpu_model: String,
    /// Logical cores available to the process.
    pub logical_cores: usize,
    /// Threads of the "all cores" measurements.
    pub threads_all: usize,
    /// Start time, seconds since the Unix epoch.
    pub unix_time: u64,
    /// Wall seconds of the whole run.
    pub elapsed_s: f64,
    /// How the figures were measured.
    pub notes: Vec<String>,
    /// Per dataset.
    pub datasets: Vec<DatasetResult>,
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.filter(|x| x.is_finite())
        .map(|x| format!("{x:.digits$}"))
        .unwrap_or_default()
}

/// The run as CSV, one line per (dataset, method).
pub fn to_csv(run: &Run) -> String {
    let mut s = String::from(
        "dataset,method,random_access,subset,raw_bytes,stored_bytes,saved_pct,published_pct,encode_gbps_1t,encode_gbps_all,decode_gbps_1t,decode_gbps_all,row_access_us,error\n",
    );
    for d in &run.datasets {
        for m in &d.methods {
            let _ = writeln!(
                s,
                "{},{},{},{},{},{},{:.3},{},{},{},{},{},{},{}",
                d.name,
                m.method,
                m.random_access,
                m.subset,
                m.measured_bytes,
                m.stored_bytes,
                m.saved_pct,
                opt(d.published.map(|a| a.saved_pct), 1),
                opt(m.encode_gbps_1t, 4),
                opt(m.encode_gbps_all, 4),
                opt(m.decode_gbps_1t, 4),
                opt(m.decode_gbps_all, 4),
                opt(m.row_access_us, 3),
                m.error.as_deref().unwrap_or("").replace(',', ";"),
            );
        }
    }
    s
}

/// CPU model name from `/proc/cpuinfo` (empty if unreadable).
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_has_one_line_per_method_and_escapes_commas() {
        let m = MethodResult {
            method: "zstd-3".into(),
            error: Some("a, b".into()),
            ..Default::default()
        };
        let d = DatasetResult {
            name: "x".into(),
            description: String::new(),
            dtype: "float32".into(),
            rows: 1,
            row_bytes: 4,
            raw_bytes: 4,
            published: None,
            memcpy_gbps_1t: 1.0,
            memcpy_gbps_all: 1.0,
            methods: vec![m.clone(), m],
            seconds: 0.0,
        };
        let run = Run {
            tool: "t".into(),
            cpu_model: String::new(),
            logical_cores: 2,
            threads_all: 2,
            unix_time: 0,
            elapsed_s: 0.0,
            notes: vec![],
            datasets: vec![d],
        };
        let csv = to_csv(&run);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 3);
        let header_cols = lines[0].split(',').count();
        assert!(lines[1..].iter().all(|l| l.split(',').count() == header_cols));
        assert!(lines[1].ends_with("a; b"));
    }
}
