//! Charikar's SimHash of a document's tokens, as Henzinger 2006 (Section 2) uses it:
//! every token adds its ±1 vector, weighted by its count, and the positive sums are the
//! 1 bits; one 64-bit word a key, as [`super::sketch`] keeps it.

use crate::hash::mix;

/// Charikar's SimHash of the tokens `sorted` (their fingerprints, ascending; a repeated
/// token weighs its count), one 64-bit word per key: bit b of word j is set where the
/// tokens whose hash under key j has bit b set outweigh those with it clear. The 64
/// counts of a word are kept bit-sliced (plane p holds bit p of every count), so that
/// a token adds its hash to all 64 at once, a carry through the planes, where counting
/// bit by bit cost 64 additions a token and word.
pub(super) fn simhash(sorted: &[u64], keys: &[u64]) -> Vec<u64> {
    let total = sorted.len() as u64;
    let planes = (u64::BITS - total.leading_zeros()) as usize + 1;
    let mut counts = vec![0u64; keys.len() * planes];
    let mut i = 0;
    while i < sorted.len() {
        let t = sorted[i];
        let run = sorted[i..].iter().take_while(|&&u| u == t).count();
        i += run;
        for (j, &key) in keys.iter().enumerate() {
            let word = &mut counts[j * planes..(j + 1) * planes];
            let r = mix(t ^ key);
            // Adds `run` to the counts of r's set bits: r at each plane of run's set bits.
            let mut weight = run;
            while weight != 0 {
                let mut p = weight.trailing_zeros() as usize;
                weight &= weight - 1;
                let mut carry = r;
                while carry != 0 {
                    let c = word[p];
                    word[p] = c ^ carry;
                    carry &= c;
                    p += 1;
                }
            }
        }
    }
    (0..keys.len())
        .map(|j| {
            let word = &counts[j * planes..(j + 1) * planes];
            (0..64).fold(0u64, |out, b| {
                let count: u64 = word.iter().enumerate().map(|(p, &plane)| (plane >> b & 1) << p).sum();
                out | (u64::from(2 * count > total) << b)
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// SimHash as Charikar defines it, counted bit by bit: each token adds its weight
    /// to the positions its hash sets and takes it from the others.
    fn simhash_by_bits(sorted: &[u64], keys: &[u64]) -> Vec<u64> {
        let mut acc = vec![0i64; keys.len() * 64];
        for &t in sorted {
            for (j, &key) in keys.iter().enumerate() {
                let r = mix(t ^ key);
                for b in 0..64 {
                    acc[j * 64 + b] += if r >> b & 1 == 1 { 1 } else { -1 };
                }
            }
        }
        (0..keys.len()).map(|j| (0..64).fold(0u64, |w, b| w | (u64::from(acc[j * 64 + b] > 0) << b))).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// The bit-sliced counts give the SimHash of the bit-by-bit ones, with repeats
        /// (weights), ties (a bit set as often as clear stays clear) and long documents.
        #[test]
        fn simhash_bit_sliced_equals_bit_by_bit(
            tokens in prop::collection::vec(0u64..40, 0..300),
            long in prop::bool::ANY,
            seed in any::<u64>(),
        ) {
            let mut sorted: Vec<u64> = tokens;
            if long {
                sorted.extend((0..5000).map(|i| i % 700));
            }
            sorted.sort_unstable();
            let keys: Vec<u64> = (0..6).map(|j| mix(seed.wrapping_add(j))).collect();
            prop_assert_eq!(simhash(&sorted, &keys), simhash_by_bits(&sorted, &keys));
        }
    }
}
