//! BMI2 `pdep` / `pext` for the fast row codec: the crate's only unsafe code.
//!
//! The field loops of [`crate::fast`] are generic over [`BitOps`]; this module instantiates them
//! with the BMI2 instructions inside functions compiled with the `bmi2` target feature. Those
//! functions can only be reached with a [`Bmi2Token`], which only [`Bmi2Token::detect`] creates,
//! after the CPU has been found to support BMI2.
#![allow(unsafe_code)]

use crate::fast::{decode_fields as generic_decode, encode_coded as generic_encode};
use crate::fast::{BitOps, FieldTables};
use core::arch::x86_64::{_pdep_u64, _pext_u64};
use ibp_format::WordWidth;

/// Proof that the running CPU supports BMI2 (private field: only [`Bmi2Token::detect`] makes one).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bmi2Token(());

impl Bmi2Token {
    /// A token if this CPU supports BMI2 (the standard library caches the CPUID result).
    pub(crate) fn detect() -> Option<Bmi2Token> {
        if std::is_x86_feature_detected!("bmi2") {
            Some(Bmi2Token(()))
        } else {
            None
        }
    }
}

/// `pdep` / `pext` as single instructions. Private: only the `bmi2`-enabled functions below use it.
struct Bmi2;

impl BitOps for Bmi2 {
    #[inline(always)]
    fn deposit(x: u64, m: u64) -> u64 {
        // SAFETY: `Bmi2` is private to this module and only used by `decode_fields_bmi2` and
        // `encode_coded_bmi2`, which are only called with a `Bmi2Token`, i.e. on a CPU with BMI2.
        unsafe { _pdep_u64(x, m) }
    }

    #[inline(always)]
    fn extract(x: u64, m: u64) -> u64 {
        // SAFETY: as in `deposit`: only reached on a CPU with BMI2.
        unsafe { _pext_u64(x, m) }
    }
}

/// The field loop of the fast decoder compiled for BMI2.
///
/// # Safety
/// The CPU must support BMI2.
#[target_feature(enable = "bmi2")]
unsafe fn decode_fields_bmi2<const WB: usize>(t: FieldTables<'_>, record: &[u8], out: &mut [u8]) -> (u64, u64) {
    generic_decode::<WB, Bmi2>(t, record, out)
}

/// The single-pass fast encoder compiled for BMI2.
///
/// # Safety
/// The CPU must support BMI2.
#[target_feature(enable = "bmi2")]
unsafe fn encode_coded_bmi2<const WB: usize>(
    t: FieldTables<'_>,
    row: &[u8],
    buf: &mut [u8],
    budget: u64,
    participation: &mut [u64],
) -> Option<u64> {
    generic_encode::<WB, Bmi2>(t, row, buf, budget, participation)
}

/// Decodes the fields of a coded record with BMI2 `pdep`; see [`crate::fast::decode_fields`].
pub(crate) fn decode_fields(
    _token: Bmi2Token,
    w: WordWidth,
    t: FieldTables<'_>,
    record: &[u8],
    out: &mut [u8],
) -> (u64, u64) {
    // SAFETY: the token proves the CPU supports BMI2, the only requirement of these functions.
    unsafe {
        match w {
            WordWidth::W8 => decode_fields_bmi2::<1>(t, record, out),
            WordWidth::W16 => decode_fields_bmi2::<2>(t, record, out),
            WordWidth::W32 => decode_fields_bmi2::<4>(t, record, out),
            WordWidth::W64 => decode_fields_bmi2::<8>(t, record, out),
        }
    }
}

/// Writes a coded row with BMI2 `pext`; see [`crate::fast::encode_coded`].
pub(crate) fn encode_coded(
    _token: Bmi2Token,
    w: WordWidth,
    t: FieldTables<'_>,
    row: &[u8],
    buf: &mut [u8],
    budget: u64,
    participation: &mut [u64],
) -> Option<u64> {
    // SAFETY: the token proves the CPU supports BMI2, the only requirement of these functions.
    unsafe {
        match w {
            WordWidth::W8 => encode_coded_bmi2::<1>(t, row, buf, budget, participation),
            WordWidth::W16 => encode_coded_bmi2::<2>(t, row, buf, budget, participation),
            WordWidth::W32 => encode_coded_bmi2::<4>(t, row, buf, budget, participation),
            WordWidth::W64 => encode_coded_bmi2::<8>(t, row, buf, budget, participation),
        }
    }
}
