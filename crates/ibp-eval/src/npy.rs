//! A minimal reader for NumPy `.npy` files (format versions 1.0-3.0, C order, little-endian or
//! byte-sized dtypes): enough for the row matrices of `tools/datasets.py`.

use std::fs;
use std::path::Path;

/// An array loaded from a `.npy` file: its dtype descriptor, shape and raw little-endian bytes.
#[derive(Debug, Clone)]
pub struct NpyArray {
    /// The `descr` field, e.g. `<f4`, `<u2`, `|u1`.
    pub descr: String,
    /// Dimensions, outermost first.
    pub shape: Vec<u64>,
    /// Element bytes in C order.
    pub data: Vec<u8>,
}

/// Why a `.npy` file could not be read.
#[derive(Debug)]
pub struct NpyError(pub String);

impl std::fmt::Display for NpyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "npy: {}", self.0)
    }
}

impl std::error::Error for NpyError {}

fn err<T>(msg: impl Into<String>) -> Result<T, NpyError> {
    Err(NpyError(msg.into()))
}

/// Element size in bytes of a little-endian or byte-sized descriptor we accept.
pub fn descr_item_size(descr: &str) -> Option<u64> {
    let (order, kind) = descr.split_at(1);
    if !matches!(order, "<" | "|") {
        return None;
    }
    match kind {
        "f2" | "u2" | "i2" => Some(2),
        "f4" | "u4" | "i4" => Some(4),
        "f8" | "u8" | "i8" => Some(8),
        "u1" | "i1" | "b1" => Some(1),
        _ => None,
    }
}

/// Value of `key` in the header dictionary text (`'key': value`), up to the next top-level comma.
fn dict_value<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    let pat = format!("'{key}':");
    let start = header.find(&pat)? + pat.len();
    let rest = header[start..].trim_start();
    if let Some(stripped) = rest.strip_prefix('(') {
        let end = stripped.find(')')?;
        return Some(&stripped[..end]);
    }
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    Some(rest[..end].trim())
}

/// Parses a `.npy` image held in memory.
pub fn parse(bytes: &[u8]) -> Result<NpyArray, NpyError> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return err("not a .npy file (magic)");
    }
    let major = bytes[6];
    let (header_len, header_start) = match major {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10usize),
        2 | 3 => {
            if bytes.len() < 12 {
                return err("truncated header length");
            }
            (
                u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
                12,
            )
        }
        v => return err(format!("unsupported format version {v}")),
    };
    let Some(data_start) = header_start.checked_add(header_len).filter(|&e| e <= bytes.len()) else {
        return err("header runs past the end of the file");
    };
    let Ok(header) = std::str::from_utf8(&bytes[header_start..data_start]) else {
        return err("header is not UTF-8");
    };
    let Some(descr) = dict_value(header, "descr").map(|d| d.trim_matches(|c| c == '\'' || c == '"').to_string()) else {
        return err("header has no descr");
    };
    let Some(item) = descr_item_size(&descr) else {
        return err(format!("unsupported dtype {descr}"));
    };
    if dict_value(header, "fortran_order") != Some("False") {
        return err("only C-order arrays are supported");
    }
    let Some(shape_text) = dict_value(header, "shape") else {
        return err("header has no shape");
    };
    let mut shape = Vec::new();
    for part in shape_text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.parse::<u64>() {
            Ok(d) => shape.push(d),
            Err(_) => return err(format!("bad shape dimension {part:?}")),
        }
    }
    let elements = shape.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d));
    let Some(len) = elements.and_then(|e| e.checked_mul(item)) else {
        return err("shape overflows");
    };
    let present = (bytes.len() - data_start) as u64;
    if present != len {
        return err(format!(
            "shape {shape:?} of {descr} needs {len} data bytes, file has {present}"
        ));
    }
    Ok(NpyArray {
        descr,
        shape,
        data: bytes[data_start..].to_vec(),
    })
}

/// Reads and parses a `.npy` file.
pub fn read(path: &Path) -> Result<NpyArray, NpyError> {
    let bytes = fs::read(path).map_err(|e| NpyError(format!("{}: {e}", path.display())))?;
    parse(&bytes).map_err(|e| NpyError(format!("{}: {}", path.display(), e.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(header: &str, data: &[u8]) -> Vec<u8> {
        let mut h = header.to_string();
        while !(10 + h.len() + 1).is_multiple_of(64) {
            h.push(' ');
        }
        h.push('\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&(h.len() as u16).to_le_bytes());
        out.extend_from_slice(h.as_bytes());
        out.extend_from_slice(data);
        out
    }

    #[test]
    fn reads_a_version_1_matrix() {
        let data: Vec<u8> = (0..24).collect();
        let a = parse(&image(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
            &data,
        ))
        .unwrap();
        assert_eq!(a.descr, "<f4");
        assert_eq!(a.shape, vec![2, 3]);
        assert_eq!(a.data, data);
    }

    #[test]
    fn rejects_length_mismatch_fortran_and_unknown_dtype() {
        let short = image("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", &[0; 20]);
        assert!(parse(&short).is_err());
        let fortran = image("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", &[0; 24]);
        assert!(parse(&fortran).is_err());
        let big_endian = image("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", &[0; 24]);
        assert!(parse(&big_endian).is_err());
        assert!(parse(b"\x93NUMPY\x01\x00\xff\xff").is_err());
    }

    #[test]
    fn reads_one_dimensional_shapes() {
        let a = parse(&image(
            "{'descr': '|u1', 'fortran_order': False, 'shape': (5,), }",
            &[1, 2, 3, 4, 5],
        ))
        .unwrap();
        assert_eq!(a.shape, vec![5]);
    }
}
