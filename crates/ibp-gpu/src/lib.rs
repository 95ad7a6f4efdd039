//! IBP GPU decoder.
