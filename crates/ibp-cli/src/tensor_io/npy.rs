//! NumPy `.npy` files, format versions 1.0, 2.0 and 3.0.
//!
//! A file is the magic `\x93NUMPY`, a major and a minor version byte, the header length (`u16` LE in
//! version 1, `u32` LE in versions 2 and 3), then the header: a Python dict literal with the keys
//! `descr`, `fortran_order` and `shape`, padded with spaces and ended by `\n` so that the data
//! starts at a multiple of 64 bytes. The data follow: the elements in C order.
//!
//! Supported dtypes (little-endian or byte-order-free only): `|b1 |u1 |i1 <u2 <i2 <u4 <i4 <u8 <i8
//! <f2 <f4 <f8`. Big-endian data, `fortran_order: True`, structured, complex, string and object
//! dtypes are rejected as [`TensorIoError::Unsupported`]. bf16 and the 8-bit floats have no `.npy`
//! spelling NumPy itself writes; they are carried by safetensors instead.
//!
//! [`header_bytes`] writes the header exactly as NumPy's `np.save` does, so a file NumPy wrote comes
//! back byte for byte.

use super::{malformed, tensor_bytes, unsupported, Result, TensorIoError};
use ibp_format::Dtype;
use std::io::Write;

/// The six magic bytes every `.npy` file starts with.
pub const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// NumPy aligns the start of the data to this many bytes.
const ARRAY_ALIGN: usize = 64;

/// NumPy pads the header so that the first dimension can grow to this many digits in place.
const GROWTH_AXIS_MAX_DIGITS: usize = 21;

/// Largest header accepted when reading (NumPy itself refuses headers over 10,000 bytes by
/// default; we allow more but not an unbounded amount).
const MAX_HEADER_LEN: usize = 1 << 20;

/// A parsed `.npy` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpyHeader {
    /// Format version `(major, minor)`: (1, 0), (2, 0) or (3, 0).
    pub version: (u8, u8),
    /// Element dtype.
    pub dtype: Dtype,
    /// Shape (C order); empty for a 0-d array.
    pub shape: Vec<u64>,
    /// Offset of the first data byte from the start of the file.
    pub data_offset: usize,
    /// Length of the data in bytes (`product(shape) * dtype size`).
    pub data_len: usize,
}

/// The NumPy `descr` string of a dtype, `None` for dtypes `.npy` cannot spell (bf16, f8).
pub fn descr_of(dtype: Dtype) -> Option<&'static str> {
    Some(match dtype {
        Dtype::Bool => "|b1",
        Dtype::U8 => "|u1",
        Dtype::I8 => "|i1",
        Dtype::U16 => "<u2",
        Dtype::I16 => "<i2",
        Dtype::U32 => "<u4",
        Dtype::I32 => "<i4",
        Dtype::U64 => "<u8",
        Dtype::I64 => "<i8",
        Dtype::F16 => "<f2",
        Dtype::F32 => "<f4",
        Dtype::F64 => "<f8",
        Dtype::Bf16 | Dtype::F8E4m3 | Dtype::F8E5m2 => return None,
    })
}

/// Maps a NumPy `descr` string to a dtype.
///
/// Accepts `<` (little-endian) and, for one-byte types, `|` (and `<`/`=`); `=` (native) is
/// accepted as little-endian since every platform we build for is. `>` for multi-byte types is
/// unsupported (big-endian).
pub fn dtype_from_descr(descr: &str) -> Result<Dtype> {
    let (order, code) = match descr.char_indices().nth(1) {
        Some((i, _)) if descr.is_char_boundary(i) => descr.split_at(i),
        _ => return unsupported(format!("dtype '{descr}' is not supported")),
    };
    let dtype = match code {
        "b1" | "?" => Dtype::Bool,
        "u1" | "B" => Dtype::U8,
        "i1" | "b" => Dtype::I8,
        "u2" => Dtype::U16,
        "i2" => Dtype::I16,
        "u4" => Dtype::U32,
        "i4" => Dtype::I32,
        "u8" => Dtype::U64,
        "i8" => Dtype::I64,
        "f2" => Dtype::F16,
        "f4" => Dtype::F32,
        "f8" => Dtype::F64,
        _ => {
            let what = match code.as_bytes().first() {
                Some(b'c') => " (complex)",
                Some(b'U') | Some(b'S') | Some(b'a') => " (string)",
                Some(b'O') => " (Python objects)",
                Some(b'V') => " (raw void/structured)",
                Some(b'M') | Some(b'm') => " (datetime)",
                Some(b'f') => " (float of this size)",
                _ => "",
            };
            return unsupported(format!(
                "dtype '{descr}'{what} is not supported; supported: |b1 |u1 |i1 <u2 <i2 <u4 <i4 <u8 <i8 <f2 <f4 <f8"
            ));
        }
    };
    match order {
        "<" | "=" => Ok(dtype),
        "|" if dtype.size() == 1 => Ok(dtype),
        ">" if dtype.size() == 1 => Ok(dtype),
        ">" => unsupported(format!(
            "big-endian dtype '{descr}' is not supported; save it little-endian, e.g. a.astype('<{code}')"
        )),
        _ => unsupported(format!("dtype '{descr}' has an unknown byte-order mark")),
    }
}

/// Parses the header of a `.npy` file and checks that `bytes` holds exactly its data.
///
/// `bytes` is the whole file. Trailing bytes after the data are rejected (NumPy never writes
/// them; keeping them would make the round trip lossy).
pub fn parse(bytes: &[u8]) -> Result<NpyHeader> {
    let header = parse_header(bytes)?;
    let have = bytes.len() - header.data_offset;
    if have < header.data_len {
        return malformed(format!(
            "truncated: shape {:?} of {} needs {} data bytes, the file has {have}",
            header.shape, header.dtype, header.data_len
        ));
    }
    if have > header.data_len {
        return malformed(format!(
            "{} unexpected bytes after the {} data bytes of shape {:?} of {}",
            have - header.data_len,
            header.data_len,
            header.shape,
            header.dtype
        ));
    }
    Ok(header)
}

/// Parses a `.npy` header from the first bytes of a file (`bytes` may hold only the header); the
/// data length is computed, not checked against `bytes`.
pub fn parse_header(bytes: &[u8]) -> Result<NpyHeader> {
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return malformed("not a .npy file (missing \\x93NUMPY magic)");
    }
    let version = (bytes[6], bytes[7]);
    let (len_size, utf8) = match version {
        (1, 0) => (2usize, false),
        (2, 0) => (4, false),
        (3, 0) => (4, true),
        (major, minor) => return unsupported(format!(".npy format version {major}.{minor}")),
    };
    if bytes.len() < 8 + len_size {
        return malformed("truncated header length");
    }
    let header_len = if len_size == 2 {
        u16::from_le_bytes([bytes[8], bytes[9]]) as usize
    } else {
        u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize
    };
    if header_len > MAX_HEADER_LEN {
        return malformed(format!("header of {header_len} bytes is implausibly long"));
    }
    let start = 8 + len_size;
    let data_offset = start + header_len;
    if bytes.len() < data_offset {
        return malformed(format!(
            "truncated: header declares {header_len} bytes, the file has {}",
            bytes.len() - start
        ));
    }
    let raw = &bytes[start..data_offset];
    let text: String = if utf8 {
        std::str::from_utf8(raw)
            .map_err(|_| TensorIoError::Malformed("header is not UTF-8".into()))?
            .to_owned()
    } else {
        raw.iter().map(|&b| b as char).collect() // latin-1
    };
    let dict = parse_dict(&text)?;
    let dtype = dtype_from_descr(&dict.descr)?;
    if dict.fortran_order {
        return unsupported("fortran_order=True (column-major) arrays are not supported; save np.ascontiguousarray(a)");
    }
    let data_len = tensor_bytes(&dict.shape, dtype.size())
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| TensorIoError::Malformed(format!("shape {:?} overflows the address space", dict.shape)))?;
    Ok(NpyHeader {
        version,
        dtype,
        shape: dict.shape,
        data_offset,
        data_len,
    })
}

/// Returns the `.npy` header NumPy's `np.save` writes for a C-order array of `dtype` and `shape`
/// (version 1.0, or 2.0 when the header does not fit a `u16`), data aligned to 64 bytes.
pub fn header_bytes(dtype: Dtype, shape: &[u64]) -> Result<Vec<u8>> {
    let Some(descr) = descr_of(dtype) else {
        return unsupported(format!(
            "{dtype} cannot be stored in a .npy file (NumPy has no such dtype); write .safetensors instead"
        ));
    };
    let shape_repr = match shape {
        [] => "()".to_owned(),
        [d] => format!("({d},)"),
        _ => format!("({})", shape.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")),
    };
    let mut dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape_repr}, }}");
    if let Some(first) = shape.first() {
        let digits = first.to_string().len();
        dict.push_str(&" ".repeat(GROWTH_AXIS_MAX_DIGITS.saturating_sub(digits)));
    }
    let hlen = dict.len() + 1; // + '\n'
    let wrap = |version: u8, len_size: usize| -> Option<Vec<u8>> {
        let padlen = ARRAY_ALIGN - ((MAGIC.len() + 2 + len_size + hlen) % ARRAY_ALIGN);
        let total = hlen + padlen;
        let mut out = Vec::with_capacity(8 + len_size + total);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&[version, 0]);
        if len_size == 2 {
            out.extend_from_slice(&u16::try_from(total).ok()?.to_le_bytes());
        } else {
            out.extend_from_slice(&u32::try_from(total).ok()?.to_le_bytes());
        }
        out.extend_from_slice(dict.as_bytes());
        out.resize(out.len() + padlen, b' ');
        out.push(b'\n');
        Some(out)
    };
    wrap(1, 2)
        .or_else(|| wrap(2, 4))
        .ok_or_else(|| TensorIoError::Unsupported("shape too long for a .npy header".into()))
}

/// Writes a whole `.npy` file: header then `data` (C order, little-endian).
pub fn write<W: Write>(out: &mut W, dtype: Dtype, shape: &[u64], data: &[u8]) -> std::io::Result<()> {
    let header =
        header_bytes(dtype, shape).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()))?;
    let expected = tensor_bytes(shape, dtype.size());
    if expected != Some(data.len() as u64) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "{} data bytes for shape {shape:?} of {dtype} (expected {expected:?})",
                data.len()
            ),
        ));
    }
    out.write_all(&header)?;
    out.write_all(data)
}

/// The three keys of a `.npy` header.
struct HeaderDict {
    descr: String,
    fortran_order: bool,
    shape: Vec<u64>,
}

/// A value of the Python literal subset used by `.npy` headers.
enum PyValue {
    Str(String),
    Bool(bool),
    Tuple(Vec<u64>),
}

/// Parses `{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }` (whitespace anywhere,
/// either quote style, optional trailing commas, Python-2 `L` suffixes on integers).
fn parse_dict(text: &str) -> Result<HeaderDict> {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
    };
    p.ws();
    p.expect(b'{')?;
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    loop {
        p.ws();
        if p.eat(b'}') {
            break;
        }
        let key = p.string()?;
        p.ws();
        p.expect(b':')?;
        p.ws();
        let value = p.value()?;
        match (key.as_str(), value) {
            ("descr", PyValue::Str(s)) if descr.is_none() => descr = Some(s),
            ("fortran_order", PyValue::Bool(b)) if fortran.is_none() => fortran = Some(b),
            ("shape", PyValue::Tuple(t)) if shape.is_none() => shape = Some(t),
            ("descr", _) => return unsupported("structured (record) dtypes are not supported"),
            (k, _) => return malformed(format!("unexpected or repeated header key '{k}'")),
        }
        p.ws();
        if !p.eat(b',') {
            p.ws();
            p.expect(b'}')?;
            break;
        }
    }
    p.ws();
    if p.i != p.s.len() {
        return malformed("unexpected text after the header dict");
    }
    match (descr, fortran, shape) {
        (Some(descr), Some(fortran_order), Some(shape)) => Ok(HeaderDict {
            descr,
            fortran_order,
            shape,
        }),
        _ => malformed("header lacks one of 'descr', 'fortran_order', 'shape'"),
    }
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: u8) -> Result<()> {
        if self.eat(c) {
            Ok(())
        } else {
            malformed(format!("header dict: expected '{}' at byte {}", c as char, self.i))
        }
    }

    fn string(&mut self) -> Result<String> {
        let quote = match self.s.get(self.i) {
            Some(&q @ (b'\'' | b'"')) => q,
            _ => return malformed(format!("header dict: expected a string at byte {}", self.i)),
        };
        self.i += 1;
        let start = self.i;
        while self.i < self.s.len() && self.s[self.i] != quote {
            if self.s[self.i] == b'\\' {
                return unsupported("escape sequences in .npy header strings");
            }
            self.i += 1;
        }
        if self.i >= self.s.len() {
            return malformed("header dict: unterminated string");
        }
        let text = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
        self.i += 1;
        Ok(text)
    }

    fn value(&mut self) -> Result<PyValue> {
        match self.s.get(self.i) {
            Some(b'\'' | b'"') => Ok(PyValue::Str(self.string()?)),
            Some(b'(') => {
                self.i += 1;
                let mut dims = Vec::new();
                loop {
                    self.ws();
                    if self.eat(b')') {
                        break;
                    }
                    dims.push(self.integer()?);
                    self.ws();
                    if !self.eat(b',') {
                        self.ws();
                        self.expect(b')')?;
                        break;
                    }
                }
                Ok(PyValue::Tuple(dims))
            }
            Some(b'[') => unsupported("structured (record) dtypes are not supported"),
            _ if self.s[self.i..].starts_with(b"True") => {
                self.i += 4;
                Ok(PyValue::Bool(true))
            }
            _ if self.s[self.i..].starts_with(b"False") => {
                self.i += 5;
                Ok(PyValue::Bool(false))
            }
            _ => malformed(format!("header dict: unexpected value at byte {}", self.i)),
        }
    }

    fn integer(&mut self) -> Result<u64> {
        let start = self.i;
        while self.i < self.s.len() && self.s[self.i].is_ascii_digit() {
            self.i += 1;
        }
        let digits = std::str::from_utf8(&self.s[start..self.i]).expect("ASCII digits");
        let value = digits
            .parse::<u64>()
            .map_err(|_| TensorIoError::Malformed(format!("header dict: bad dimension at byte {start}")))?;
        let _ = self.eat(b'L'); // Python 2 long suffix
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(dtype: Dtype, shape: &[u64], data: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        write(&mut v, dtype, shape, data).unwrap();
        v
    }

    #[test]
    fn header_matches_numpy_layout() {
        // NumPy 2.x, np.save of np.zeros((3, 4), np.float32): 128-byte header.
        let h = header_bytes(Dtype::F32, &[3, 4]).unwrap();
        assert_eq!(h.len(), 128);
        let text = std::str::from_utf8(&h[10..]).unwrap();
        assert!(text.starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }"));
        assert!(text.ends_with(" \n"));
        // 1-d and 0-d spellings.
        let h = header_bytes(Dtype::U8, &[5]).unwrap();
        assert!(std::str::from_utf8(&h[10..]).unwrap().contains("'shape': (5,), }"));
        let h = header_bytes(Dtype::F64, &[]).unwrap();
        assert!(std::str::from_utf8(&h[10..]).unwrap().contains("'shape': (), }"));
        assert_eq!(h.len() % 64, 0);
    }

    #[test]
    fn every_supported_dtype_round_trips() {
        for dtype in Dtype::ALL {
            let Some(descr) = descr_of(dtype) else {
                assert!(header_bytes(dtype, &[2]).is_err());
                continue;
            };
            assert_eq!(dtype_from_descr(descr).unwrap(), dtype);
            let shape = [2u64, 3];
            let data: Vec<u8> = (0..6 * dtype.size() as u8).collect();
            let f = file(dtype, &shape, &data);
            let h = parse(&f).unwrap();
            assert_eq!((h.dtype, h.shape.as_slice(), h.version), (dtype, &shape[..], (1, 0)));
            assert_eq!(&f[h.data_offset..h.data_offset + h.data_len], &data[..]);
            assert_eq!(h.data_offset % 64, 0);
        }
    }

    fn handmade(version: u8, dict: &str, data: &[u8]) -> Vec<u8> {
        let mut v = MAGIC.to_vec();
        v.extend_from_slice(&[version, 0]);
        if version == 1 {
            v.extend_from_slice(&(dict.len() as u16).to_le_bytes());
        } else {
            v.extend_from_slice(&(dict.len() as u32).to_le_bytes());
        }
        v.extend_from_slice(dict.as_bytes());
        v.extend_from_slice(data);
        v
    }

    #[test]
    fn reads_v2_v3_and_loose_spellings() {
        let data = [1u8, 2, 3, 4, 5, 6, 7, 8];
        for (version, dict) in [
            (2, "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }\n"),
            (3, "{\"shape\": (2L,), \"fortran_order\": False, \"descr\": \"<u4\"}\n"),
            (1, "{ 'descr' : '<f4' , 'fortran_order' : False , 'shape' : ( 1 , 2 ) }"),
        ] {
            let f = handmade(version, dict, &data);
            let h = parse(&f).unwrap();
            assert_eq!(h.version, (version, 0));
            assert_eq!(h.data_len, 8);
            assert_eq!(h.shape.iter().product::<u64>(), 2);
        }
    }

    #[test]
    fn rejects_unsupported_and_malformed() {
        let unsupported_dicts = [
            "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }",
            "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }",
            "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }",
            "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }",
            "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }",
        ];
        for d in unsupported_dicts {
            let e = parse(&handmade(1, d, &[0; 8])).unwrap_err();
            assert!(matches!(e, TensorIoError::Unsupported(_)), "{d}: {e}");
        }
        let malformed_files = [
            handmade(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", &[0; 8]),
            handmade(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", &[0; 8]),
            handmade(1, "{'descr': '<f4', 'shape': (2,), }", &[0; 8]),
            handmade(
                1,
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}",
                &[0; 8],
            ),
            handmade(
                1,
                "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }",
                &[],
            ),
            handmade(
                1,
                "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }",
                &[],
            ),
            b"\x93NUMPY\x01\x00\xff\x00{".to_vec(),
            b"PK\x03\x04 not numpy".to_vec(),
            Vec::new(),
        ];
        for f in &malformed_files {
            let e = parse(f).unwrap_err();
            assert!(matches!(e, TensorIoError::Malformed(_)), "{e}");
        }
    }

    #[test]
    fn every_truncation_is_an_error() {
        let f = file(Dtype::I16, &[3, 5], &[7u8; 30]);
        for cut in 0..f.len() {
            assert!(parse(&f[..cut]).is_err(), "prefix of {cut} bytes accepted");
        }
    }

    #[test]
    fn every_bit_flip_is_handled_without_panic() {
        let f = file(Dtype::F16, &[3, 4], &[9u8; 24]);
        let mut accepted = 0;
        for pos in 0..f.len() {
            for bit in 0..8 {
                let mut g = f.clone();
                g[pos] ^= 1 << bit;
                if let Ok(h) = parse(&g) {
                    // Whatever is accepted describes exactly the bytes present.
                    assert_eq!(h.data_offset + h.data_len, g.len());
                    accepted += 1;
                }
            }
        }
        // Flips in the data (and in header padding spaces that stay whitespace) are accepted.
        assert!(accepted >= 24 * 8, "{accepted}");
    }
}
