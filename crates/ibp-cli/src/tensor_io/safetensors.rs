//! `safetensors` files: an 8-byte little-endian header length `N`, `N` bytes of JSON (an object
//! mapping tensor names to `{"dtype", "shape", "data_offsets": [begin, end]}`, plus an optional
//! `"__metadata__"` object of string values), then the data buffer that the offsets index.
//!
//! The header is parsed here (with `serde_json`), not with the `safetensors` crate, so that the
//! data are never copied and every check names what is wrong. The rules are the format's own: the
//! header fits the file, every tensor's byte length equals its shape times its dtype size, and the
//! tensors tile the data buffer with no hole or overlap.
//!
//! `__metadata__` is returned by [`parse`] with the byte range of its JSON text, which the `ibp`
//! command stores verbatim as a metadata entry (spec 2.7) and [`header_bytes`] writes back verbatim,
//! so a file written by the reference implementation comes back byte for byte.

use super::{malformed, tensor_bytes, unsupported, Result, TensorIoError};
use ibp_format::Dtype;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Write;
use std::ops::Range;

/// Largest header accepted (the reference implementation's limit).
pub const MAX_HEADER_LEN: u64 = 100_000_000;

/// One tensor of a safetensors file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StTensor {
    /// Tensor name (the JSON key).
    pub name: String,
    /// Element dtype.
    pub dtype: Dtype,
    /// Shape (C order).
    pub shape: Vec<u64>,
    /// Where the tensor's bytes lie, as offsets from the start of the file.
    pub range: Range<usize>,
}

/// The `__metadata__` object of a safetensors header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StMetadata {
    /// Its keys and values.
    pub map: BTreeMap<String, String>,
    /// Where its JSON text (the object, as written) lies, as offsets from the start of the file.
    pub text: Range<usize>,
}

/// A parsed safetensors header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StFile {
    /// Tensors in the order of their data in the file.
    pub tensors: Vec<StTensor>,
    /// The `__metadata__` object, if present.
    pub metadata: Option<StMetadata>,
    /// Offset of the data buffer from the start of the file (`8 + N`).
    pub data_start: usize,
}

/// The safetensors dtype string of a dtype.
pub fn dtype_name(dtype: Dtype) -> &'static str {
    match dtype {
        Dtype::Bool => "BOOL",
        Dtype::U8 => "U8",
        Dtype::I8 => "I8",
        Dtype::U16 => "U16",
        Dtype::I16 => "I16",
        Dtype::U32 => "U32",
        Dtype::I32 => "I32",
        Dtype::U64 => "U64",
        Dtype::I64 => "I64",
        Dtype::F16 => "F16",
        Dtype::Bf16 => "BF16",
        Dtype::F32 => "F32",
        Dtype::F64 => "F64",
        Dtype::F8E4m3 => "F8_E4M3",
        Dtype::F8E5m2 => "F8_E5M2",
    }
}

/// Maps a safetensors dtype string to a dtype; others (complex, 4- and 6-bit floats, `F8_E8M0`,
/// ...) are [`TensorIoError::Unsupported`].
pub fn dtype_from_name(name: &str) -> Result<Dtype> {
    Dtype::ALL
        .into_iter()
        .find(|&d| dtype_name(d) == name)
        .ok_or_else(|| TensorIoError::Unsupported(format!("safetensors dtype '{name}' is not supported")))
}

/// Parses a whole safetensors file held in `bytes` and validates it against the bytes present.
pub fn parse(bytes: &[u8]) -> Result<StFile> {
    if bytes.len() < 8 {
        return malformed("not a safetensors file (shorter than its 8-byte header length)");
    }
    let n = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
    if n > MAX_HEADER_LEN {
        return malformed(format!("header length {n} exceeds the {MAX_HEADER_LEN}-byte limit"));
    }
    let data_start = 8 + n as usize;
    if data_start > bytes.len() {
        return malformed(format!(
            "truncated: header declares {n} bytes, the file has {}",
            bytes.len() - 8
        ));
    }
    let header: Value = serde_json::from_slice(&bytes[8..data_start])
        .map_err(|e| TensorIoError::Malformed(format!("header is not valid JSON: {e}")))?;
    // The metadata object's text as written (a second, borrowing parse of the valid header).
    #[derive(serde::Deserialize)]
    struct MetadataText<'a> {
        #[serde(rename = "__metadata__", borrow, default)]
        text: Option<&'a serde_json::value::RawValue>,
    }
    let metadata_text = serde_json::from_slice::<MetadataText<'_>>(&bytes[8..data_start])
        .map_err(|e| TensorIoError::Malformed(format!("header is not valid JSON: {e}")))?
        .text
        .map(|raw| {
            let start = raw.get().as_ptr() as usize - bytes.as_ptr() as usize;
            start..start + raw.get().len()
        });
    let Value::Object(map) = header else {
        return malformed("header is not a JSON object");
    };
    let data_len = bytes.len() - data_start;
    let mut metadata = None;
    let mut tensors = Vec::with_capacity(map.len());
    for (name, value) in map {
        if name == "__metadata__" {
            let Some(text) = metadata_text.clone() else {
                return malformed("__metadata__ could not be located in the header");
            };
            metadata = Some(StMetadata {
                map: parse_metadata(&value)?,
                text,
            });
            continue;
        }
        tensors.push(parse_tensor(name, &value, data_start, data_len)?);
    }
    tensors.sort_by_key(|t| (t.range.start, t.range.end));
    let mut expected = data_start;
    for t in &tensors {
        if t.range.start != expected {
            let what = if t.range.start < expected {
                "overlaps the tensor before it"
            } else {
                "leaves a hole before it"
            };
            return malformed(format!(
                "tensor '{}' {what} (data_offsets start {})",
                t.name,
                t.range.start - data_start
            ));
        }
        expected = t.range.end;
    }
    if expected != bytes.len() {
        return malformed(format!("{} bytes after the last tensor's data", bytes.len() - expected));
    }
    Ok(StFile {
        tensors,
        metadata,
        data_start,
    })
}

/// Reads the JSON text of a `__metadata__` object (as a metadata entry stores it, spec 2.7): an
/// object whose values are all strings.
pub fn metadata_from_text(text: &[u8]) -> Result<BTreeMap<String, String>> {
    let value: Value = serde_json::from_slice(text)
        .map_err(|e| TensorIoError::Malformed(format!("__metadata__ is not valid JSON: {e}")))?;
    parse_metadata(&value)
}

fn parse_metadata(value: &Value) -> Result<BTreeMap<String, String>> {
    let Value::Object(m) = value else {
        return malformed("__metadata__ is not an object");
    };
    m.iter()
        .map(|(k, v)| match v {
            Value::String(s) => Ok((k.clone(), s.clone())),
            _ => malformed(format!("__metadata__ value of '{k}' is not a string")),
        })
        .collect()
}

fn parse_tensor(name: String, value: &Value, data_start: usize, data_len: usize) -> Result<StTensor> {
    let bad = |what: &str| TensorIoError::Malformed(format!("tensor '{name}': {what}"));
    let Value::Object(t) = value else {
        return Err(bad("is not an object"));
    };
    let dtype_str = t
        .get("dtype")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("no string 'dtype'"))?;
    let dtype = dtype_from_name(dtype_str).map_err(|e| match e {
        TensorIoError::Unsupported(m) => TensorIoError::Unsupported(format!("tensor '{name}': {m}")),
        other => other,
    })?;
    let shape = t
        .get("shape")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("no 'shape' array"))?
        .iter()
        .map(|d| d.as_u64().ok_or_else(|| bad("shape holds a non-integer")))
        .collect::<Result<Vec<u64>>>()?;
    let offsets = t
        .get("data_offsets")
        .and_then(Value::as_array)
        .filter(|a| a.len() == 2)
        .ok_or_else(|| bad("no 'data_offsets' pair"))?;
    let (Some(begin), Some(end)) = (offsets[0].as_u64(), offsets[1].as_u64()) else {
        return Err(bad("data_offsets are not integers"));
    };
    if begin > end || end > data_len as u64 {
        return Err(bad(&format!(
            "data_offsets [{begin}, {end}] lie outside the {data_len}-byte data buffer"
        )));
    }
    let expected = tensor_bytes(&shape, dtype.size());
    if expected != Some(end - begin) {
        return Err(bad(&format!(
            "shape {shape:?} of {dtype_str} needs {expected:?} bytes, data_offsets span {}",
            end - begin
        )));
    }
    if t.keys()
        .any(|k| !matches!(k.as_str(), "dtype" | "shape" | "data_offsets"))
    {
        return Err(bad("unexpected key in tensor info"));
    }
    Ok(StTensor {
        name,
        dtype,
        shape,
        range: data_start + begin as usize..data_start + end as usize,
    })
}

/// A tensor to be written: name, dtype, shape (its byte length follows from them).
#[derive(Debug, Clone, Copy)]
pub struct TensorSpec<'a> {
    /// Tensor name.
    pub name: &'a str,
    /// Element dtype.
    pub dtype: Dtype,
    /// Shape (C order).
    pub shape: &'a [u64],
}

/// Builds the 8-byte length and the JSON header for `tensors` whose data will follow back to back
/// in the given order, with `metadata` (the JSON text of a `__metadata__` object, written verbatim
/// first; it must be an object of strings, [`metadata_from_text`]). The header is padded with
/// spaces to a multiple of 8 bytes, so the data buffer starts 8-byte aligned. Names must be unique
/// and not `__metadata__`. (This is the layout the reference implementation writes, so a file it
/// wrote, parsed and written back here, comes back byte for byte.)
pub fn header_bytes(tensors: &[TensorSpec<'_>], metadata: Option<&str>) -> Result<Vec<u8>> {
    let mut json = String::from("{");
    let mut first = true;
    if let Some(text) = metadata {
        metadata_from_text(text.as_bytes())?;
        json.push_str("\"__metadata__\":");
        json.push_str(text);
        first = false;
    }
    let mut offset = 0u64;
    let mut seen = std::collections::HashSet::new();
    for t in tensors {
        if t.name == "__metadata__" || !seen.insert(t.name) {
            return unsupported(format!("tensor name '{}' is reserved or repeated", t.name));
        }
        let len = tensor_bytes(t.shape, t.dtype.size())
            .ok_or_else(|| TensorIoError::Unsupported(format!("shape {:?} overflows", t.shape)))?;
        let end = offset
            .checked_add(len)
            .ok_or_else(|| TensorIoError::Unsupported("data larger than 2^64 bytes".into()))?;
        if !first {
            json.push(',');
        }
        first = false;
        json.push_str(&serde_json::to_string(t.name).expect("string serialises"));
        json.push_str(&format!(
            ":{{\"dtype\":\"{}\",\"shape\":{},\"data_offsets\":[{offset},{end}]}}",
            dtype_name(t.dtype),
            serde_json::to_string(t.shape).expect("integers serialise"),
        ));
        offset = end;
    }
    json.push('}');
    while !json.len().is_multiple_of(8) {
        json.push(' ');
    }
    let mut out = Vec::with_capacity(8 + json.len());
    out.extend_from_slice(&(json.len() as u64).to_le_bytes());
    out.extend_from_slice(json.as_bytes());
    Ok(out)
}

/// Writes a whole safetensors file from in-memory tensors `(spec, bytes)`.
pub fn write<W: Write>(
    out: &mut W,
    tensors: &[(TensorSpec<'_>, &[u8])],
    metadata: Option<&str>,
) -> std::io::Result<()> {
    let specs: Vec<TensorSpec<'_>> = tensors.iter().map(|(s, _)| *s).collect();
    let header = header_bytes(&specs, metadata)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()))?;
    for (spec, data) in tensors {
        if tensor_bytes(spec.shape, spec.dtype.size()) != Some(data.len() as u64) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "tensor '{}': {} bytes do not match shape {:?}",
                    spec.name,
                    data.len(),
                    spec.shape
                ),
            ));
        }
    }
    out.write_all(&header)?;
    for (_, data) in tensors {
        out.write_all(data)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        let a: Vec<u8> = (0..24).collect();
        let b: Vec<u8> = vec![0x3f, 0x80, 0x40, 0x00]; // two bf16
        let c: Vec<u8> = vec![];
        let mut out = Vec::new();
        write(
            &mut out,
            &[
                (
                    TensorSpec {
                        name: "layer.0.weight",
                        dtype: Dtype::F32,
                        shape: &[2, 3],
                    },
                    &a,
                ),
                (
                    TensorSpec {
                        name: "scale",
                        dtype: Dtype::Bf16,
                        shape: &[2],
                    },
                    &b,
                ),
                (
                    TensorSpec {
                        name: "empty",
                        dtype: Dtype::I64,
                        shape: &[0, 4],
                    },
                    &c,
                ),
            ],
            Some(r#"{"format": "pt", "b":"2"}"#),
        )
        .unwrap();
        out
    }

    #[test]
    fn round_trip_keeps_names_dtypes_shapes_bytes_and_metadata() {
        let f = sample();
        let st = parse(&f).unwrap();
        assert_eq!(st.data_start % 8, 0);
        let names: Vec<_> = st.tensors.iter().map(|t| t.name.as_str()).collect();
        // Sorted by data offset; the empty tensor (0 bytes) sits at the end, tied with nothing.
        assert_eq!(names, ["layer.0.weight", "scale", "empty"]);
        assert_eq!(st.tensors[1].dtype, Dtype::Bf16);
        assert_eq!(&f[st.tensors[1].range.clone()], &[0x3f, 0x80, 0x40, 0x00]);
        assert_eq!(st.tensors[0].shape, [2, 3]);
        let meta = st.metadata.unwrap();
        assert_eq!(meta.map["format"], "pt");
        // The text as written (spacing and key order), for a verbatim copy.
        assert_eq!(&f[meta.text], br#"{"format": "pt", "b":"2"}"#);
    }

    #[test]
    fn every_dtype_name_round_trips() {
        for d in Dtype::ALL {
            assert_eq!(dtype_from_name(dtype_name(d)).unwrap(), d);
        }
        assert!(matches!(dtype_from_name("C64"), Err(TensorIoError::Unsupported(_))));
    }

    fn with_header(json: &str, data: &[u8]) -> Vec<u8> {
        let mut v = (json.len() as u64).to_le_bytes().to_vec();
        v.extend_from_slice(json.as_bytes());
        v.extend_from_slice(data);
        v
    }

    #[test]
    fn rejects_bad_headers() {
        let cases = [
            with_header("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", &[0; 8]),
            with_header("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", &[0; 4]),
            with_header("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", &[0; 8]),
            with_header(
                "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},\"b\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[4,8]}}",
                &[0; 8],
            ),
            with_header("[1,2]", &[]),
            with_header("{\"a\":", &[]),
            with_header("{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,0]}}", &[]),
            with_header("{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4],\"data_offsets\":[0,0]}}", &[]),
            vec![255, 255, 255, 255, 0, 0, 0, 0],
            vec![1, 2, 3],
        ];
        for c in &cases {
            assert!(matches!(parse(c), Err(TensorIoError::Malformed(_))), "{:?}", parse(c));
        }
        let c64 = with_header(
            "{\"z\":{\"dtype\":\"C64\",\"shape\":[1],\"data_offsets\":[0,8]}}",
            &[0; 8],
        );
        assert!(matches!(parse(&c64), Err(TensorIoError::Unsupported(_))));
    }

    #[test]
    fn every_truncation_is_an_error() {
        let f = sample();
        for cut in 0..f.len() {
            assert!(parse(&f[..cut]).is_err(), "prefix of {cut} bytes accepted");
        }
    }

    #[test]
    fn every_bit_flip_is_handled_without_panic() {
        let f = sample();
        for pos in 0..f.len() {
            for bit in 0..8 {
                let mut g = f.clone();
                g[pos] ^= 1 << bit;
                if let Ok(st) = parse(&g) {
                    for t in &st.tensors {
                        assert!(t.range.end <= g.len() && t.range.start >= st.data_start);
                    }
                }
            }
        }
    }
}
