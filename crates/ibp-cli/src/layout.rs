//! How a tensor is split into rows (spec 2.3): the `--row-dim` rule.
//!
//! * Rank >= 2: rows are the sub-tensors below dimension `K` (`--row-dim K`): there are
//!   `product(shape[..K])` rows of `product(shape[K..])` elements. The default is `K = 1`, so a
//!   `[out, in]` weight matrix has `out` rows of `in` elements and the masks describe each input
//!   feature; leading dimensions of size 1 are skipped (`[1, 30, 40]` gives 30 rows of 40), and a
//!   tensor with at most one dimension above 1 (`[1, 512]`) is cut like a vector (below).
//! * Rank 1 (default): the vector is cut into equal segments of `r` elements, `r` the largest
//!   divisor of its length `N` that is at most `sqrt(0.75 * N / size)` and at most
//!   [`VECTOR_ROW_TARGET_BYTES`] bytes. A chunk stores two rows' worth of masks and bitvals and
//!   about 1.5 bytes per row (length field, padding); `r = sqrt(0.75 N / size)` balances the two,
//!   so short vectors (biases, norms) get short rows instead of paying masks as large as
//!   themselves. One element per row (`--row-dim 1`) and the whole vector as one row
//!   (`--row-dim 0`) are still accepted.
//! * Rank 0: one row of one element.
//! * Empty tensors have no rows; their row size is recorded all the same (one element when the
//!   rule above gives zero bytes).
//!
//! Whatever the rule, a row larger than the format's limit (2^24 bytes) is cut into the largest
//! equal segments that fit, and a note says so.

use ibp_format::{Dtype, MAX_ROW_BYTES};

/// Target row size for 1-D tensors.
pub const VECTOR_ROW_TARGET_BYTES: u64 = 1024;

/// The rows chosen for a tensor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowLayout {
    /// Number of rows.
    pub row_count: u64,
    /// Bytes per row.
    pub row_bytes: u64,
    /// Set when the layout differs from what `--row-dim` asked for, saying why.
    pub note: Option<String>,
}

/// Chooses the rows of a `dtype` tensor of `shape`; `row_dim` is `--row-dim` (`None`: default).
pub fn choose(dtype: Dtype, shape: &[u64], row_dim: Option<usize>) -> Result<RowLayout, String> {
    let size = dtype.size();
    let elements = shape
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .filter(|&e| e.checked_mul(size).is_some())
        .ok_or_else(|| format!("shape {shape:?} of {dtype} overflows 64 bits"))?;
    if let Some(k) = row_dim {
        if k > shape.len() {
            return Err(format!(
                "--row-dim {k} exceeds the rank {} of shape {shape:?}",
                shape.len()
            ));
        }
    }
    let non_unit_dims = shape.iter().filter(|&&d| d != 1).count();
    let row_elems = match (shape.len(), row_dim) {
        (0, _) => 1,
        (_, None) if non_unit_dims <= 1 && elements > 0 => {
            let balanced = (0.75 * elements as f64 / size as f64).sqrt().round() as u64;
            let limit = balanced.clamp(1, (VECTOR_ROW_TARGET_BYTES / size).max(1));
            largest_divisor_at_most(elements, limit)
        }
        (_, Some(k)) => shape[k..].iter().product::<u64>(),
        (_, None) => {
            let leading_units = shape.iter().take_while(|&&d| d == 1).count();
            shape[(leading_units + 1).min(shape.len())..].iter().product::<u64>()
        }
    };
    if elements == 0 || row_elems == 0 {
        let row_bytes = (row_elems * size).clamp(size, MAX_ROW_BYTES / size * size);
        return Ok(RowLayout {
            row_count: 0,
            row_bytes,
            note: None,
        });
    }
    let max_elems = MAX_ROW_BYTES / size;
    if row_elems > max_elems {
        let fit = largest_divisor_at_most(row_elems, max_elems);
        return Ok(RowLayout {
            row_count: elements / fit,
            row_bytes: fit * size,
            note: Some(format!(
                "rows of {} bytes exceed the format's 2^24-byte limit; using rows of {fit} elements",
                row_elems * size
            )),
        });
    }
    Ok(RowLayout {
        row_count: elements / row_elems,
        row_bytes: row_elems * size,
        note: None,
    })
}

/// The largest divisor of `n` (>= 1) that is at most `limit` (>= 1).
fn largest_divisor_at_most(n: u64, limit: u64) -> u64 {
    if n <= limit {
        return n.max(1);
    }
    if limit.saturating_mul(limit) < n {
        // Every divisor <= limit is below sqrt(n): scan down from the limit (at most `limit` steps).
        return (1..=limit).rev().find(|d| n.is_multiple_of(*d)).unwrap_or(1);
    }
    // Divisors come in pairs (d, n/d) with d <= sqrt(n) <= limit: scan d upwards (at most
    // sqrt(n) <= limit steps); the first n/d that fits is the largest divisor that fits, and it is
    // at least sqrt(n), so larger than any d.
    let mut best = 1;
    let mut d = 1u64;
    while d.saturating_mul(d) <= n {
        if n.is_multiple_of(d) {
            if n / d <= limit {
                return n / d;
            }
            best = d;
        }
        d += 1;
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(layout: &RowLayout, dtype: Dtype, shape: &[u64]) {
        let total: u64 = shape.iter().product::<u64>() * dtype.size();
        assert_eq!(layout.row_count * layout.row_bytes, total);
        assert!(layout.row_bytes >= 1 && layout.row_bytes <= MAX_ROW_BYTES);
        assert_eq!(layout.row_bytes % dtype.size(), 0);
    }

    #[test]
    fn default_rows_follow_the_first_dimension() {
        let l = choose(Dtype::F32, &[384, 1536], None).unwrap();
        assert_eq!((l.row_count, l.row_bytes), (384, 6144));
        let l = choose(Dtype::F16, &[2, 3, 4, 5], Some(2)).unwrap();
        assert_eq!((l.row_count, l.row_bytes), (6, 40));
        let l = choose(Dtype::F16, &[2, 3, 4, 5], Some(4)).unwrap();
        assert_eq!((l.row_count, l.row_bytes), (120, 2));
        let l = choose(Dtype::F16, &[2, 3], Some(0)).unwrap();
        assert_eq!((l.row_count, l.row_bytes), (1, 12));
        assert!(choose(Dtype::F16, &[2, 3], Some(3)).is_err());
    }

    #[test]
    fn vectors_are_cut_into_segments() {
        // sqrt(0.75 * 1536 / 4) = 16.97 -> 17 -> largest divisor <= 17 is 16.
        let l = choose(Dtype::F32, &[1536], None).unwrap();
        assert_eq!((l.row_count, l.row_bytes), (96, 64));
        // Long vectors: capped at 1 KiB rows.
        let l = choose(Dtype::F32, &[1 << 20], None).unwrap();
        assert_eq!((l.row_count, l.row_bytes), (4096, 1024));
        let l = choose(Dtype::F32, &[7919], None).unwrap(); // prime: one element per row
        assert_eq!((l.row_count, l.row_bytes), (7919, 4));
        // sqrt(75) = 8.66 -> 9 -> largest divisor of 100 <= 9 is 5.
        let l = choose(Dtype::U8, &[100], None).unwrap();
        assert_eq!((l.row_count, l.row_bytes), (20, 5));
        let l = choose(Dtype::F32, &[1536], Some(1)).unwrap();
        assert_eq!((l.row_count, l.row_bytes), (1536, 4));
        check(&l, Dtype::F32, &[1536]);
    }

    #[test]
    fn leading_unit_dimensions_are_skipped() {
        let l = choose(Dtype::F32, &[1, 30, 40], None).unwrap();
        assert_eq!((l.row_count, l.row_bytes), (30, 160));
        // One non-unit dimension: a vector. sqrt(0.75 * 512 / 8) = 6.9 -> 7 -> divisor 4.
        let l = choose(Dtype::I64, &[1, 512], None).unwrap();
        assert_eq!((l.row_count, l.row_bytes), (128, 32));
        let l = choose(Dtype::I64, &[1, 512], Some(1)).unwrap();
        assert_eq!((l.row_count, l.row_bytes), (1, 4096));
        let l = choose(Dtype::F32, &[1, 1, 1], None).unwrap();
        assert_eq!((l.row_count, l.row_bytes), (1, 4));
    }

    #[test]
    fn scalars_empties_and_huge_rows() {
        let l = choose(Dtype::F64, &[], None).unwrap();
        assert_eq!((l.row_count, l.row_bytes), (1, 8));
        let l = choose(Dtype::I16, &[0, 5], None).unwrap();
        assert_eq!((l.row_count, l.row_bytes), (0, 10));
        let l = choose(Dtype::I16, &[5, 0], None).unwrap();
        assert_eq!((l.row_count, l.row_bytes), (0, 2));
        let l = choose(Dtype::F32, &[2, 1 << 23], None).unwrap();
        check(&l, Dtype::F32, &[2, 1 << 23]);
        assert!(l.note.is_some());
        assert_eq!(l.row_bytes, 1 << 24);
        assert!(choose(Dtype::F64, &[u64::MAX, 2], None).is_err());
    }

    #[test]
    fn largest_divisor() {
        assert_eq!(largest_divisor_at_most(1000, 300), 250);
        assert_eq!(largest_divisor_at_most(97, 10), 1);
        assert_eq!(largest_divisor_at_most(12, 12), 12);
        assert_eq!(largest_divisor_at_most(36, 7), 6);
        assert_eq!(largest_divisor_at_most(36, 5), 4);
    }
}
