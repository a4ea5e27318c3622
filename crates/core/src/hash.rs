//! The seeded mixing function behind every pseudo-random choice of the core.
//!
//! SplitMix64's finalizer (Steele, Lea, Flood 2014): a bijection of 64-bit words with
//! good avalanche. It is specified here, not taken from a hashing crate, because its
//! outputs are persisted (table contents, near-duplicate keys, quotation signatures)
//! and must never change between versions or machines.

/// SplitMix64 finalizer: the seeded mixing used for every pseudo-random choice.
#[inline]
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A fast hasher for maps of small integer keys (sequence numbers, word
/// fingerprints): [`mix`] over the written words. Never persisted, and meant for keys
/// an attacker does not choose freely (the standard library's SipHash is there for
/// those).
#[derive(Debug, Default, Clone, Copy)]
pub struct MixHasher(u64);

impl std::hash::Hasher for MixHasher {
    fn finish(&self) -> u64 {
        mix(self.0)
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(8)) ^ u64::from(*b);
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.0 = mix(self.0 ^ u64::from(n));
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = mix(self.0 ^ n);
    }
}

/// A hash map over [`MixHasher`].
pub type MixMap<K, V> = std::collections::HashMap<K, V, std::hash::BuildHasherDefault<MixHasher>>;

#[cfg(test)]
mod tests {
    use super::mix;

    #[test]
    fn mix_is_stable() {
        // Persisted values depend on these outputs: they must never change.
        assert_eq!(mix(0), 0xe220_a839_7b1d_cdaf);
        assert_ne!(mix(1), mix(2));
    }
}
