//! Rabin fingerprints: 62-bit residues of polynomials over GF(2).
//!
//! Implements the fingerprinting the origin-detection paper relies on (Section 2.1,
//! footnote 2; Rabin, TR-15-81): a bit string `A` is read as a polynomial `A(x)` over
//! GF(2) and its fingerprint is `A(x) mod P(x)`, with `P` a fixed irreducible
//! polynomial of degree 62 ([`POLY`]). For two distinct strings of at most `n` bits the
//! probability (over the choice of an irreducible `P`) that they collide is at most
//! `n / 2^62`: a nonzero polynomial of degree `n` has at most `n/62` irreducible
//! factors of degree 62, out of about `2^62/62` such polynomials.
//!
//! Two fingerprints are defined (both persisted, so both are part of the table format):
//! - **token**: the bit string `1 ‖ utf8(term) ‖ 0^62`. The leading 1 separates
//!   terms that differ only by leading zero bytes; the trailing 62 zero bits make even
//!   one-letter terms pass through the reduction, so their fingerprints are spread
//!   over all 62 bits instead of being the raw bytes.
//! - **sequence** (a k-shingle, or a hash-breaking segment): the concatenation of its
//!   token fingerprints, 62 bits each, `Σ t_i · x^{62(n-i)} mod P`. For k-shingles it
//!   is computed in one rolling pass: `f' = f·x^62 ⊕ t_out·x^{62k} ⊕ t_in`.
//!
//! Multiplication by a fixed power of `x` is GF(2)-linear, so it is done with eight
//! 256-entry tables, one per input byte. Everything here is pure and deterministic.

/// The modulus: an irreducible polynomial of degree 62 over GF(2) (bit i = coefficient
/// of x^i). Found by a seeded search; its irreducibility is checked by a unit test.
pub const POLY: u64 = 0x6a2e_dc13_be4d_c8a9;
/// Fingerprints are residues modulo [`POLY`], so they fit in 62 bits.
pub const MASK: u64 = (1 << 62) - 1;

/// Carry-less product of two residues, reduced modulo [`POLY`] (bit by bit; used only
/// to build tables and in tests).
pub fn mul_mod(a: u64, b: u64) -> u64 {
    let (mut a, mut b, mut r) = (a & MASK, b & MASK, 0u64);
    while b != 0 {
        if b & 1 == 1 {
            r ^= a;
        }
        b >>= 1;
        a <<= 1;
        if a >> 62 & 1 == 1 {
            a ^= POLY;
        }
    }
    r
}

/// `x^(62·e) mod P`.
fn x_pow_62(e: usize) -> u64 {
    let x62 = POLY & MASK; // x^62 ≡ P - x^62 (mod P)
    (0..e).fold(1, |acc, _| mul_mod(acc, x62))
}

/// A GF(2)-linear map on residues (multiplication by a constant), table-driven.
#[derive(Clone)]
struct LinearMap {
    tables: Box<[[u64; 256]; 8]>,
}

impl LinearMap {
    fn multiply_by(c: u64) -> Self {
        let mut tables = Box::new([[0u64; 256]; 8]);
        for (j, table) in tables.iter_mut().enumerate() {
            for (b, slot) in table.iter_mut().enumerate() {
                *slot = mul_mod((b as u64) << (8 * j) & MASK, c);
            }
        }
        LinearMap { tables }
    }

    #[inline(always)]
    fn apply(&self, v: u64) -> u64 {
        let t = &self.tables;
        t[0][(v & 0xff) as usize]
            ^ t[1][(v >> 8 & 0xff) as usize]
            ^ t[2][(v >> 16 & 0xff) as usize]
            ^ t[3][(v >> 24 & 0xff) as usize]
            ^ t[4][(v >> 32 & 0xff) as usize]
            ^ t[5][(v >> 40 & 0xff) as usize]
            ^ t[6][(v >> 48 & 0xff) as usize]
            ^ t[7][(v >> 56 & 0xff) as usize]
    }
}

/// Tables for token and k-shingle fingerprints with a fixed `k`.
#[derive(Clone)]
pub struct Rabin {
    k: usize,
    /// What makes a term for [`crate::text::tokenize`] with these tables.
    terms: crate::terms::Terms,
    /// `byte[t] = t · x^62 mod P`: reduces the 8 bits pushed out by a byte shift.
    byte: [u64; 256],
    /// `v ↦ v · x^62 mod P`.
    shift: LinearMap,
    /// `v ↦ v · x^(62k) mod P`: removes the token that leaves a k-window.
    out: LinearMap,
}

impl std::fmt::Debug for Rabin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rabin").field("k", &self.k).finish_non_exhaustive()
    }
}

impl Rabin {
    /// Tables for shingles of `k` tokens (`k >= 1`).
    pub fn new(k: usize) -> Self {
        assert!(k >= 1, "k must be at least 1");
        let mut byte = [0u64; 256];
        let x62 = x_pow_62(1);
        for (t, slot) in byte.iter_mut().enumerate() {
            *slot = mul_mod(t as u64, x62);
        }
        Rabin {
            k,
            terms: crate::terms::Terms::Words,
            byte,
            shift: LinearMap::multiply_by(x62),
            out: LinearMap::multiply_by(x_pow_62(k)),
        }
    }

    /// These tables for texts whose terms follow `terms` (the configuration's).
    pub fn with_terms(self, terms: crate::terms::Terms) -> Self {
        Rabin { terms, ..self }
    }

    /// What makes a term of the texts fingerprinted with these tables.
    pub fn terms(&self) -> crate::terms::Terms {
        self.terms
    }

    /// Shingle length the rolling tables were built for.
    pub fn k(&self) -> usize {
        self.k
    }

    /// Starts a token fingerprint (the leading 1 bit).
    #[inline(always)]
    pub fn token_start(&self) -> u64 {
        1
    }

    /// Appends one byte to a token fingerprint under construction.
    #[inline(always)]
    pub fn token_push(&self, f: u64, b: u8) -> u64 {
        ((f << 8) & MASK) ^ u64::from(b) ^ self.byte[(f >> 54) as usize]
    }

    /// Finishes a token fingerprint (appends 62 zero bits).
    #[inline(always)]
    pub fn token_finish(&self, f: u64) -> u64 {
        self.shift.apply(f)
    }

    /// The fingerprint of one term's bytes.
    pub fn token(&self, bytes: &[u8]) -> u64 {
        let f = bytes.iter().fold(self.token_start(), |f, &b| self.token_push(f, b));
        self.token_finish(f)
    }

    /// Appends a token fingerprint to a sequence fingerprint.
    #[inline(always)]
    pub fn seq_push(&self, f: u64, t: u64) -> u64 {
        self.shift.apply(f) ^ t
    }

    /// Rolls a k-window: drops `t_out` (the oldest of the k tokens in `f`), appends `t_in`.
    #[inline(always)]
    pub fn roll(&self, f: u64, t_out: u64, t_in: u64) -> u64 {
        self.shift.apply(f) ^ self.out.apply(t_out) ^ t_in
    }

    /// The fingerprint of a token sequence (any length).
    pub fn sequence(&self, tokens: impl IntoIterator<Item = u64>) -> u64 {
        tokens.into_iter().fold(0, |f, t| self.seq_push(f, t))
    }

    /// Fingerprints of all k-shingles of `token_fps`, in one rolling pass
    /// (`len - k + 1` of them; none when there are fewer than k tokens).
    pub fn shingles(&self, token_fps: &[u64], out: &mut Vec<u64>) {
        out.clear();
        let k = self.k;
        if token_fps.len() < k {
            return;
        }
        out.reserve(token_fps.len() - k + 1);
        let mut f = self.sequence(token_fps[..k].iter().copied());
        out.push(f);
        for i in k..token_fps.len() {
            f = self.roll(f, token_fps[i - k], token_fps[i]);
            out.push(f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Polynomial remainder over GF(2) for arbitrary-degree operands held in u128.
    fn rem(mut a: u128, m: u128) -> u128 {
        let dm = 127 - m.leading_zeros();
        while a != 0 && 127 - a.leading_zeros() >= dm {
            a ^= m << (127 - a.leading_zeros() - dm);
        }
        a
    }

    fn gcd(mut a: u128, mut b: u128) -> u128 {
        while b != 0 {
            let r = rem(a, b);
            a = b;
            b = r;
        }
        a
    }

    #[test]
    fn modulus_is_irreducible_of_degree_62() {
        assert_eq!(63 - POLY.leading_zeros(), 62);
        // Ben-Or: P is irreducible iff gcd(P, x^(2^i) - x) = 1 for i = 1..=31.
        let mut xp = 2u64; // x
        for _ in 1..=31 {
            xp = mul_mod(xp, xp);
            assert_eq!(gcd(u128::from(POLY), u128::from(xp ^ 2)), 1);
        }
    }

    #[test]
    fn short_terms_are_spread_over_all_bits() {
        let r = Rabin::new(8);
        let a = r.token(b"a");
        let b = r.token(b"b");
        assert_ne!(a, b);
        assert!(a >> 40 != 0 && b >> 40 != 0, "{a:x} {b:x}");
        assert!(a <= MASK);
    }

    /// Reference: the fingerprint of a bit string as one big polynomial, bit by bit.
    fn reference_bits(bits: &[bool]) -> u64 {
        let mut f = 0u64;
        for &bit in bits {
            f <<= 1;
            if f >> 62 & 1 == 1 {
                f ^= POLY;
            }
            f ^= u64::from(bit);
        }
        f
    }

    fn bits_of(v: u64, n: usize) -> impl Iterator<Item = bool> {
        (0..n).rev().map(move |i| v >> i & 1 == 1)
    }

    proptest! {
        #[test]
        fn token_matches_bitwise_definition(bytes in proptest::collection::vec(any::<u8>(), 0..20)) {
            let r = Rabin::new(8);
            let mut bits = vec![true];
            for b in &bytes { bits.extend(bits_of(u64::from(*b), 8)); }
            bits.extend(std::iter::repeat_n(false, 62));
            prop_assert_eq!(r.token(&bytes), reference_bits(&bits));
        }

        #[test]
        fn rolling_equals_direct(tokens in proptest::collection::vec(0u64..=MASK, 0..40), k in 1usize..10) {
            let r = Rabin::new(k);
            let mut rolled = Vec::new();
            r.shingles(&tokens, &mut rolled);
            let direct: Vec<u64> = if tokens.len() < k { vec![] } else {
                tokens.windows(k).map(|w| {
                    let bits: Vec<bool> = w.iter().flat_map(|t| bits_of(*t, 62)).collect();
                    reference_bits(&bits)
                }).collect()
            };
            prop_assert_eq!(rolled, direct);
        }
    }
}
