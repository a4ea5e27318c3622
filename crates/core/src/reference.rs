//! The brute-force reference (and evaluation oracle): an unbounded exact map from every
//! k-shingle to the earliest document containing it.
//!
//! This is the paper's oracle of Section 3.2 ("our system without shingle selection and
//! with enough memory to hold all shingles"), written independently of the engine:
//! shingles are keyed by their case-folded terms, not by fingerprints, so a fingerprint
//! collision in the engine would show up as a difference.
//!
//! A token is old when a shingle covering it has an earlier origin (the cleaner reading
//! of "fresh" noted in `../shared/papers/README.md`); the dominant origin follows the
//! same 10% rule as [`crate::engine`].

use std::collections::HashMap;

use crate::rabin::Rabin;
use crate::text::{fold, tokenize};

/// What the oracle says about one document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truth {
    /// Origin of every shingle, in order.
    pub origins: Vec<u64>,
    /// Fresh (true) or old per token.
    pub fresh: Vec<bool>,
    pub fresh_tokens: u32,
    pub dominant_origin: Option<u64>,
}

/// The exact index.
#[derive(Debug)]
pub struct Reference {
    k: usize,
    rabin: Rabin,
    first_seen: HashMap<String, u64>,
}

impl Reference {
    /// An empty index for k-shingles.
    pub fn new(k: usize) -> Reference {
        Reference { k, rabin: Rabin::new(k), first_seen: HashMap::new() }
    }

    /// Distinct shingles seen.
    pub fn len(&self) -> usize {
        self.first_seen.len()
    }

    /// Whether nothing was seen.
    pub fn is_empty(&self) -> bool {
        self.first_seen.is_empty()
    }

    /// Records document `seq` and returns the truth about it.
    pub fn apply(&mut self, seq: u64, text: &str) -> Truth {
        let mut toks = Vec::new();
        tokenize(text, &self.rabin, &mut toks);
        let terms: Vec<String> = toks.iter().map(|t| fold(&text[t.start as usize..t.end as usize])).collect();
        let k = self.k;
        let mut origins = Vec::new();
        if terms.len() >= k {
            for w in terms.windows(k) {
                let key = w.join("\u{0}");
                origins.push(*self.first_seen.entry(key).or_insert(seq));
            }
        }
        let mut fresh = vec![true; terms.len()];
        for (i, &o) in origins.iter().enumerate() {
            if o != seq {
                fresh[i..i + k].iter_mut().for_each(|f| *f = false);
            }
        }
        let mut counts: HashMap<u64, u32> = HashMap::new();
        for &o in &origins {
            *counts.entry(o).or_default() += 1;
        }
        let mut counts: Vec<(u64, u32)> = counts.into_iter().collect();
        counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let dominant_origin = counts.first().and_then(|&(o, top)| {
            let second = counts.get(1).map_or(0, |x| x.1);
            (10 * u64::from(top) >= 11 * u64::from(second)).then_some(o)
        });
        Truth { fresh_tokens: fresh.iter().filter(|f| **f).count() as u32, origins, fresh, dominant_origin }
    }
}
