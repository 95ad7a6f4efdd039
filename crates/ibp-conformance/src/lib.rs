//! IBP conformance.
