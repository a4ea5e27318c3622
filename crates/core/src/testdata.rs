//! The one seeded pseudo-random generator of generated test data and of the
//! evaluation tools' sampling: xorshift64 (Marsaglia 2003, shifts 13, 7, 17). Not for
//! anything persisted or keyed (that is [`crate::hash`]); repeatable for a seed.

/// xorshift64: the same sequence for the same seed on every machine.
#[derive(Debug, Clone)]
pub struct XorShift(u64);

impl XorShift {
    /// A generator from `seed` (xorshift never leaves 0, so 0 becomes 1).
    pub fn new(seed: u64) -> XorShift {
        XorShift(seed.max(1))
    }

    /// The next number.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// The next number below `n` (modulo: the small bias does not matter here).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// Shuffles `v` (Fisher-Yates, drawing with [`XorShift::below`]).
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            v.swap(i, self.below(i as u64 + 1) as usize);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sequence_is_xorshift64() {
        let mut g = XorShift::new(1);
        assert_eq!(g.next_u64(), 1082269761);
        assert_eq!(XorShift::new(0).next_u64(), XorShift::new(1).next_u64());
        assert!((0..1000).all(|_| g.below(7) < 7));
    }
}
