//! The `--rows` selection syntax: a comma-separated list of row numbers and ranges, in output
//! order, duplicates allowed: `35`, `10..20` (20 excluded), `10..=20` (20 included), `10..` (to the
//! end), `..5` (from the start). Rows are counted from 0.

/// One item of a `--rows` list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowItem {
    /// A single row.
    One(u64),
    /// Rows `start..end` (end excluded); `end: None` means to the last row.
    Range {
        /// First row.
        start: u64,
        /// One past the last row, or `None` for "to the end".
        end: Option<u64>,
    },
}

/// A parsed `--rows` list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowSelection(pub Vec<RowItem>);

impl RowSelection {
    /// Parses `10..20,35` and friends.
    pub fn parse(text: &str) -> Result<RowSelection, String> {
        let mut items = Vec::new();
        for part in text.split(',') {
            let part = part.trim();
            if part.is_empty() {
                return Err(format!("empty item in row list '{text}'"));
            }
            let num = |s: &str| -> Result<u64, String> {
                s.trim()
                    .parse::<u64>()
                    .map_err(|_| format!("'{s}' is not a row number (in '{text}')"))
            };
            let item = if let Some((a, b)) = part.split_once("..=") {
                let start = if a.trim().is_empty() { 0 } else { num(a)? };
                let last = num(b)?;
                let end = last.checked_add(1).ok_or_else(|| format!("row {last} is too large"))?;
                RowItem::Range { start, end: Some(end) }
            } else if let Some((a, b)) = part.split_once("..") {
                let start = if a.trim().is_empty() { 0 } else { num(a)? };
                let end = if b.trim().is_empty() { None } else { Some(num(b)?) };
                RowItem::Range { start, end }
            } else {
                RowItem::One(num(part)?)
            };
            if let RowItem::Range { start, end: Some(end) } = item {
                if end < start {
                    return Err(format!("range '{part}' runs backwards"));
                }
            }
            items.push(item);
        }
        Ok(RowSelection(items))
    }

    /// The row numbers selected from an entry of `row_count` rows, in order; a row at or past
    /// `row_count` is an error naming it. `max_rows` bounds the list's length.
    pub fn resolve(&self, row_count: u64, max_rows: u64) -> Result<Vec<u64>, String> {
        let mut rows = Vec::new();
        for item in &self.0 {
            let (start, end) = match *item {
                RowItem::One(r) => (r, r + 1),
                RowItem::Range { start, end } => (start, end.unwrap_or(row_count.max(start))),
            };
            if end > row_count {
                return Err(format!(
                    "row {} is out of range: the entry has {row_count} rows (0..{row_count})",
                    end - 1
                ));
            }
            if (rows.len() as u64).saturating_add(end - start) > max_rows {
                return Err(format!("more than {max_rows} rows requested"));
            }
            rows.extend(start..end);
        }
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_resolves_in_order() {
        let s = RowSelection::parse("10..13, 35,2..=3,..2,38..").unwrap();
        assert_eq!(s.resolve(40, 1000).unwrap(), vec![10, 11, 12, 35, 2, 3, 0, 1, 38, 39]);
        assert_eq!(RowSelection::parse("5,5").unwrap().resolve(6, 10).unwrap(), vec![5, 5]);
        assert_eq!(
            RowSelection::parse("3..3").unwrap().resolve(6, 10).unwrap(),
            Vec::<u64>::new()
        );
    }

    #[test]
    fn rejects_bad_lists_and_out_of_range_rows() {
        for bad in ["", "1,,2", "a", "3..1", "1..x", "-1", "..=18446744073709551615"] {
            assert!(RowSelection::parse(bad).is_err(), "{bad}");
        }
        let s = RowSelection::parse("0..11").unwrap();
        let e = s.resolve(10, 100).unwrap_err();
        assert!(e.contains("row 10 is out of range"), "{e}");
        assert!(RowSelection::parse("10").unwrap().resolve(10, 100).is_err());
        assert!(RowSelection::parse("0..50").unwrap().resolve(100, 20).is_err());
        // An open range that starts past the end is an error too.
        assert_eq!(
            RowSelection::parse("12..").unwrap().resolve(10, 100).unwrap_err(),
            "row 11 is out of range: the entry has 10 rows (0..10)"
        );
    }
}
