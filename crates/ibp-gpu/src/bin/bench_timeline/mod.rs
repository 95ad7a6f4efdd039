//! `IBP_BENCH_TIMELINE=1`: where a host gather's time goes within one launch, read from the
//! diagnostic kernel build `-DIBP_GATHER_TIMELINE=1` (kernels/ibp_gather/copies.cuh). That build
//! overwrites the start of each output row (the IBP gather: four global-timer readings, start,
//! lookups done, record staged, decode done) and of each record copied by the "ideal" kernel
//! (three: start, span loaded, record copied); its output is never correct, so the bench runs it
//! with `IBP_BENCH_UNCHECKED=1` too. Each batch then gets one line: the quantiles of every reading,
//! in microseconds from the launch's first reading, and of each request's wait for its record and
//! its decode.

#![forbid(unsafe_code)]

/// Whether the environment asks for timelines (`IBP_BENCH_TIMELINE=1`).
pub fn wanted() -> bool {
    std::env::var("IBP_BENCH_TIMELINE").is_ok_and(|v| v == "1")
}

/// The readings of `count` requests, `fields` little-endian `u64`s at the start of each
/// `stride`-byte slot of `bytes`. A request whose readings do not rise (or lie more than a second
/// after its start: a row the kernel did not stamp) is left out.
pub fn stamps(bytes: &[u8], stride: usize, count: usize, fields: usize) -> Vec<Vec<u64>> {
    (0..count)
        .filter_map(|k| {
            let slot = bytes.get(k * stride..k * stride + 8 * fields)?;
            let t: Vec<u64> = slot
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
                .collect();
            let rising = t.windows(2).all(|w| w[0] <= w[1]);
            (rising && t[fields - 1] - t[0] < 1_000_000_000).then_some(t)
        })
        .collect()
}

/// `values` at quantiles 0.5, 0.9 and 1.0 (nearest rank), in microseconds, as `p50/p90/max`.
fn quantiles_us(mut values: Vec<u64>) -> String {
    if values.is_empty() {
        return "-".into();
    }
    values.sort_unstable();
    let at = |q: f64| values[((q * values.len() as f64).ceil() as usize).clamp(1, values.len()) - 1];
    let us = |ns: u64| ns as f64 / 1e3;
    format!("{:.1}/{:.1}/{:.1}", us(at(0.5)), us(at(0.9)), us(at(1.0)))
}

/// One method's readings summarised: `names[i]` for reading `i`, each as quantiles of the time
/// since the earliest first reading of any request; then `spans` (name, from reading, to reading)
/// as quantiles of each request's own time between two readings.
pub fn summary(stamps: &[Vec<u64>], requests: usize, names: &[&str], spans: &[(&str, usize, usize)]) -> String {
    let Some(t0) = stamps.iter().map(|t| t[0]).min() else {
        return format!("0 of {requests} requests stamped");
    };
    let mut parts = vec![format!("{} of {requests} stamped", stamps.len())];
    for (i, name) in names.iter().enumerate() {
        parts.push(format!(
            "{name} {}",
            quantiles_us(stamps.iter().map(|t| t[i] - t0).collect())
        ));
    }
    for (name, from, to) in spans {
        parts.push(format!(
            "{name} {}",
            quantiles_us(stamps.iter().map(|t| t[*to] - t[*from]).collect())
        ));
    }
    parts.join(" | ")
}

/// The batch's timeline line: the IBP gather's output rows (`row_bytes` apart) and the ideal copy's
/// records (`stride` apart), `batch` requests each.
pub fn report(batch: usize, ibp: &[u8], row_bytes: usize, ideal: &[u8], stride: usize) -> String {
    let ibp_stamps = stamps(ibp, row_bytes, batch, 4);
    let ideal_stamps = stamps(ideal, stride, batch, 3);
    format!(
        "timeline batch {batch} (us from the first start; p50/p90/max): IBP: {} || ideal: {}",
        summary(
            &ibp_stamps,
            batch,
            &["start", "looked", "staged", "done"],
            &[("wait", 1, 2), ("decode", 2, 3)]
        ),
        summary(&ideal_stamps, batch, &["start", "span", "copied"], &[("wait", 1, 2)])
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slots(rows: &[&[u64]], stride: usize) -> Vec<u8> {
        let mut out = vec![0xaa; rows.len() * stride];
        for (k, t) in rows.iter().enumerate() {
            for (i, v) in t.iter().enumerate() {
                out[k * stride + 8 * i..k * stride + 8 * i + 8].copy_from_slice(&v.to_le_bytes());
            }
        }
        out
    }

    #[test]
    fn stamps_keep_rising_readings_and_drop_the_rest() {
        let bytes = slots(
            &[&[100, 200, 300, 400], &[100, 90, 300, 400], &[5, 6, 7, 2_000_000_000]],
            40,
        );
        let got = stamps(&bytes, 40, 3, 4);
        assert_eq!(got, vec![vec![100, 200, 300, 400]]);
        // A slot past the end of the bytes is no request.
        assert_eq!(stamps(&bytes, 40, 4, 4).len(), 1);
    }

    #[test]
    fn summary_measures_from_the_earliest_start() {
        let rows: Vec<Vec<u64>> = (0..10)
            .map(|i| vec![1_000 + i * 1_000, 2_000 + i * 1_000, 10_000 + i * 2_000])
            .collect();
        let line = summary(&rows, 12, &["start", "span", "copied"], &[("wait", 1, 2)]);
        assert_eq!(
            line,
            "10 of 12 stamped | start 4.0/8.0/9.0 | span 5.0/9.0/10.0 | copied 17.0/25.0/27.0 | wait 12.0/16.0/17.0"
        );
        assert_eq!(summary(&[], 3, &["start"], &[]), "0 of 3 requests stamped");
    }
}
