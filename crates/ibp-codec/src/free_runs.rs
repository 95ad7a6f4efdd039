//! Runs of free bits: how many maximal runs of consecutive free bits (Mask bit 0) a word position
//! has, and a position's Mask with the invariant bits between its runs freed until it has at most a
//! given number.
//!
//! Decoders deposit a participating word's field into its free bits one run at a time, so a
//! position's runs cost them work: the GPU kernels have paths for positions of at most two runs
//! (vector lanes, `kernels/ibp_gather/vector_lanes.cuh`) or at most three, taken per chunk. Freeing
//! the invariant bits of a gap keeps every word that matched the Mask matching (a Mask with fewer
//! set bits constrains less) and costs one more field bit per participating word and gap bit, so
//! the encoder frees the shortest gaps first ([`merge_free_runs`]) and only where the chunk's size
//! allows it ([`crate::EncodeOptions::fewer_runs_within`]).
#![forbid(unsafe_code)]

use ibp_format::WordWidth;

/// The bits of a `w`-bit word.
fn word_bits(w: WordWidth) -> u64 {
    match w.bits() {
        64 => u64::MAX,
        bits => (1u64 << bits) - 1,
    }
}

/// The number of maximal runs of free bits (Mask bit 0) of a `w`-bit position with Mask `mask`.
pub fn free_runs(mask: u64, w: WordWidth) -> u32 {
    let free = !mask & word_bits(w);
    // A run starts at each free bit whose lower neighbour is not free.
    (free & !(free << 1)).count_ones()
}

/// The most runs of free bits of any position of `masks` (0 when there are none).
pub fn most_free_runs(masks: &[u64], w: WordWidth) -> u32 {
    masks.iter().map(|&m| free_runs(m, w)).max().unwrap_or(0)
}

/// Mask and Bitval of a `w`-bit position with at most `most` (>= 1) runs of free bits: while it has
/// more, the shortest gap of invariant bits between two runs (the lowest of equal ones) is freed, and
/// the Bitval keeps only the bits the Mask still holds. A position with `most` runs or fewer is
/// returned as it is.
pub fn merge_free_runs(mask: u64, bitval: u64, w: WordWidth, most: u32) -> (u64, u64) {
    let most = most.max(1);
    let mut mask = mask & word_bits(w);
    while free_runs(mask, w) > most {
        let free = !mask & word_bits(w);
        // The gaps lie between the lowest and the highest free bit.
        let (lo, hi) = (free.trailing_zeros(), 63 - free.leading_zeros());
        let mut shortest: Option<(u32, u64)> = None;
        let mut b = lo;
        while b <= hi {
            if (mask >> b) & 1 == 0 {
                b += 1;
                continue;
            }
            let start = b;
            while b <= hi && (mask >> b) & 1 == 1 {
                b += 1;
            }
            let len = b - start;
            if shortest.is_none_or(|(l, _)| len < l) {
                shortest = Some((len, ((1u64 << len) - 1) << start));
            }
        }
        let Some((_, gap)) = shortest else { break };
        mask &= !gap;
    }
    (mask, bitval & mask)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prng::SplitMix64;

    #[test]
    fn runs_are_counted_within_the_word() {
        use WordWidth::*;
        assert_eq!(free_runs(0xffff, W16), 0);
        assert_eq!(free_runs(0x0000, W16), 1);
        assert_eq!(free_runs(0xff00, W16), 1);
        assert_eq!(free_runs(0x00ff, W16), 1);
        assert_eq!(free_runs(0xf0f0, W16), 2);
        assert_eq!(free_runs(0x5555, W16), 8);
        // Bits above the word do not count as free.
        assert_eq!(free_runs(0x00, W8), 1);
        assert_eq!(free_runs(0x8000_0000_0000_0001, W64), 1);
        assert_eq!(free_runs(0, W64), 1);
        assert_eq!(most_free_runs(&[0xffff, 0xf0f0, 0x00ff], W16), 2);
        assert_eq!(most_free_runs(&[], W16), 0);
    }

    #[test]
    fn the_shortest_gaps_are_freed_first() {
        use WordWidth::W16;
        // Free runs at bits 0-1, 3-4, 9-15: gaps of 1 (bit 2) and 4 (bits 5-8).
        let mask = 0b0000_0001_1110_0100;
        assert_eq!(free_runs(mask, W16), 3);
        assert_eq!(
            merge_free_runs(mask, mask, W16, 2),
            (0b0000_0001_1110_0000, 0b0000_0001_1110_0000)
        );
        assert_eq!(merge_free_runs(mask, 0, W16, 1), (0, 0));
        assert_eq!(merge_free_runs(mask, 0b100, W16, 3), (mask, 0b100));
    }

    /// Merging only frees bits (every word matching before still matches), keeps Bitval within
    /// Mask, leaves the bits outside the gaps alone, and reaches the number of runs asked for.
    #[test]
    fn merged_masks_only_free_bits_between_runs() {
        let mut rng = SplitMix64::new(7);
        for w in WordWidth::ALL {
            for _ in 0..2000 {
                let mask = rng.next_u64() & rng.next_u64() | rng.next_u64() & word_bits(w) & 0x00ff_00ff_00ff_00ff;
                let mask = mask & word_bits(w);
                let bitval = rng.next_u64() & mask;
                for most in 1..=4 {
                    let (m, b) = merge_free_runs(mask, bitval, w, most);
                    assert_eq!(m & !mask, 0, "{w:?}: a bit became invariant");
                    assert_eq!(b & !m, 0, "{w:?}: Bitval outside Mask");
                    assert_eq!(b, bitval & m, "{w:?}: Bitval changed where Mask holds");
                    let runs = free_runs(mask, w);
                    assert_eq!(free_runs(m, w), runs.min(most), "{w:?} {mask:#x} at most {most}");
                    // Bits below the lowest and above the highest free bit stay invariant.
                    let free = !mask & word_bits(w);
                    if free != 0 {
                        let outside =
                            word_bits(w) & !(u64::MAX >> free.leading_zeros() & u64::MAX << free.trailing_zeros());
                        assert_eq!(m & outside, mask & outside, "{w:?}: {mask:#x}");
                    }
                }
            }
        }
    }
}
