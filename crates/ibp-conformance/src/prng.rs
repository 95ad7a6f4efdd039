//! The generator's only source of variety: SplitMix64 with fixed seeds, so that every run produces
//! the same vectors byte for byte.

/// The shared SplitMix64 ([`ibp_codec::prng::SplitMix64`]) with the draws the generator uses.
/// `below` reduces by modulo: the vectors' bytes depend on it, so it stays as it was.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    inner: ibp_codec::prng::SplitMix64,
}

impl SplitMix64 {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64 {
            inner: ibp_codec::prng::SplitMix64::new(seed),
        }
    }

    /// The next 64 pseudo-random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.inner.next_u64()
    }

    /// A value in `0..bound` (`bound > 0`; the slight modulo bias does not matter here).
    pub fn below(&mut self, bound: u64) -> u64 {
        self.next_u64() % bound
    }

    /// `len` pseudo-random bytes.
    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(len + 8);
        while out.len() < len {
            out.extend_from_slice(&self.next_u64().to_le_bytes());
        }
        out.truncate(len);
        out
    }

    /// A float in `[0, 1)` with 53 random bits.
    pub fn unit(&mut self) -> f64 {
        self.inner.unit()
    }

    /// An approximately normal value (mean 0, variance 1): the sum of 12 uniforms minus 6.
    pub fn normal(&mut self) -> f64 {
        (0..12).map(|_| self.unit()).sum::<f64>() - 6.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_are_those_the_vectors_were_generated_with() {
        // The vectors depend on these exact draws: `below` by modulo, `bytes` little-endian words.
        let mut g = SplitMix64::new(1234567);
        assert_eq!(g.below(1000), 6457827717110365317 % 1000);
        let b = g.bytes(3);
        assert_eq!(b, 3203168211198807973u64.to_le_bytes()[..3].to_vec());
    }
}
