//! Data-model types of spec section 2: dtypes and word widths.

use crate::error::{ErrorCode, FormatError, Result};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Element dtypes of spec section 2.2 (the code is the on-disk byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dtype {
    /// Boolean, one byte.
    Bool,
    /// Unsigned 8-bit integer.
    U8,
    /// Signed 8-bit integer.
    I8,
    /// Unsigned 16-bit integer.
    U16,
    /// Signed 16-bit integer.
    I16,
    /// Unsigned 32-bit integer.
    U32,
    /// Signed 32-bit integer.
    I32,
    /// Signed 64-bit integer.
    I64,
    /// IEEE half precision.
    F16,
    /// bfloat16.
    Bf16,
    /// IEEE single precision.
    F32,
    /// IEEE double precision.
    F64,
    /// 8-bit float, 4 exponent bits, 3 mantissa bits.
    F8E4m3,
    /// 8-bit float, 5 exponent bits, 2 mantissa bits.
    F8E5m2,
    /// Unsigned 64-bit integer.
    U64,
}

impl Dtype {
    /// Every dtype in code order.
    pub const ALL: [Dtype; 15] = [
        Dtype::Bool,
        Dtype::U8,
        Dtype::I8,
        Dtype::U16,
        Dtype::I16,
        Dtype::U32,
        Dtype::I32,
        Dtype::I64,
        Dtype::F16,
        Dtype::Bf16,
        Dtype::F32,
        Dtype::F64,
        Dtype::F8E4m3,
        Dtype::F8E5m2,
        Dtype::U64,
    ];

    /// The on-disk code (spec 2.2).
    pub fn code(self) -> u8 {
        Dtype::ALL.iter().position(|&d| d == self).expect("listed") as u8 + 1
    }

    /// Decodes an on-disk code; unknown codes are `E_DTYPE`.
    pub fn from_code(code: u8) -> Result<Dtype> {
        match code {
            1..=15 => Ok(Dtype::ALL[code as usize - 1]),
            _ => Err(FormatError::new(ErrorCode::Dtype, format!("unknown dtype code {code}"))),
        }
    }

    /// Element size in bytes.
    pub fn size(self) -> u64 {
        match self {
            Dtype::Bool | Dtype::U8 | Dtype::I8 | Dtype::F8E4m3 | Dtype::F8E5m2 => 1,
            Dtype::U16 | Dtype::I16 | Dtype::F16 | Dtype::Bf16 => 2,
            Dtype::U32 | Dtype::I32 | Dtype::F32 => 4,
            Dtype::U64 | Dtype::I64 | Dtype::F64 => 8,
        }
    }

    /// The lower-case name used by the spec, the CLI and JSON (`"f32"`, `"bf16"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Dtype::Bool => "bool",
            Dtype::U8 => "u8",
            Dtype::I8 => "i8",
            Dtype::U16 => "u16",
            Dtype::I16 => "i16",
            Dtype::U32 => "u32",
            Dtype::I32 => "i32",
            Dtype::I64 => "i64",
            Dtype::F16 => "f16",
            Dtype::Bf16 => "bf16",
            Dtype::F32 => "f32",
            Dtype::F64 => "f64",
            Dtype::F8E4m3 => "f8_e4m3",
            Dtype::F8E5m2 => "f8_e5m2",
            Dtype::U64 => "u64",
        }
    }

    /// Parses a name produced by [`Dtype::name`].
    pub fn from_name(name: &str) -> Option<Dtype> {
        Dtype::ALL.into_iter().find(|d| d.name() == name)
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Word width `W` of spec 2.4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum WordWidth {
    /// 8-bit words.
    W8,
    /// 16-bit words.
    W16,
    /// 32-bit words.
    W32,
    /// 64-bit words.
    W64,
}

impl WordWidth {
    /// Every width, narrowest first.
    pub const ALL: [WordWidth; 4] = [WordWidth::W8, WordWidth::W16, WordWidth::W32, WordWidth::W64];

    /// Width in bits (the on-disk `word_bits`).
    pub fn bits(self) -> u32 {
        match self {
            WordWidth::W8 => 8,
            WordWidth::W16 => 16,
            WordWidth::W32 => 32,
            WordWidth::W64 => 64,
        }
    }

    /// Width in bytes.
    pub fn bytes(self) -> usize {
        self.bits() as usize / 8
    }

    /// All-ones value of this width, as a `u64`.
    pub fn full_mask(self) -> u64 {
        if self == WordWidth::W64 {
            u64::MAX
        } else {
            (1u64 << self.bits()) - 1
        }
    }

    /// Decodes `word_bits`; other values are `E_CHUNK_HEADER`.
    pub fn from_bits(bits: u32) -> Result<WordWidth> {
        match bits {
            8 => Ok(WordWidth::W8),
            16 => Ok(WordWidth::W16),
            32 => Ok(WordWidth::W32),
            64 => Ok(WordWidth::W64),
            _ => Err(FormatError::new(
                ErrorCode::ChunkHeader,
                format!("word_bits {bits} is not 8, 16, 32 or 64"),
            )),
        }
    }

    /// Whether rows of `row_bytes` bytes split into whole words of this width (otherwise the
    /// last word of each row is partial, spec 2.4).
    pub fn divides(self, row_bytes: u64) -> bool {
        row_bytes.is_multiple_of(self.bytes() as u64)
    }

    /// Words per row of `row_bytes` bytes: `ceil(row_bytes / (W/8))` (spec 2.4).
    pub fn words_per_row(self, row_bytes: u64) -> u64 {
        row_bytes.div_ceil(self.bytes() as u64)
    }
}

impl fmt::Display for WordWidth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.bits())
    }
}
