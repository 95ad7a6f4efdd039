//! The bridge to the reference encoder (`ibp_codec`): recorded options to `EncodeOptions`, and
//! re-encoding decoded entries.

use crate::manifest::OptionsRecord;
use crate::vector::DecodedEntry;
use ibp_codec::options::{EncodeOptions, TransferCost};
use ibp_codec::ContainerWriter;
use ibp_format::{ErrorCode, FormatError, Header, Result, WordWidth};

/// The `EncodeOptions` a manifest record describes.
pub fn encode_options(o: &OptionsRecord) -> Result<EncodeOptions> {
    let word_width = match o.word_width {
        None => None,
        Some(bits) => Some(WordWidth::from_bits(bits)?),
    };
    Ok(EncodeOptions {
        word_width,
        threshold: o.threshold,
        sample_fraction: o.sample_fraction,
        groups: o.groups,
        align_log2: o.align_log2,
        chunk_rows: o.chunk_rows,
        transfer_cost: o.transfer_cost.as_deref().map(transfer_cost).transpose()?,
        prefer_wide_words: o.prefer_wide_words,
        fewer_runs_within: o.fewer_runs_within,
    })
}

/// A recorded transfer cost: three values (record weight 0) or four.
fn transfer_cost(v: &[u32]) -> Result<TransferCost> {
    let (sector_bytes, request_bytes, request_weight, record_weight) = match *v {
        [s, r, w] => (s, r, w, 0),
        [s, r, w, rec] => (s, r, w, rec),
        _ => {
            return Err(FormatError::new(
                ErrorCode::InvalidArgument,
                format!("transfer_cost has {} values, not 3 or 4", v.len()),
            ))
        }
    };
    Ok(TransferCost {
        sector_bytes,
        request_bytes,
        request_weight,
        record_weight,
    })
}

/// Encodes `entries` with the reference encoder and the recorded options (and header fields).
pub fn encode_entries(entries: &[DecodedEntry], o: &OptionsRecord) -> Result<Vec<u8>> {
    let header = Header {
        minor_version: o.minor_version,
        optional_features: o.optional_features,
        ..Header::default()
    };
    let mut w = ContainerWriter::with_header(Vec::new(), encode_options(o)?, header)?;
    for e in entries {
        w.write_entry(&e.name, e.dtype, &e.shape, e.row_bytes, &e.data)
            .map_err(|err: FormatError| err.at(format!("entry {:?}", e.name)))?;
    }
    w.finish()
}
