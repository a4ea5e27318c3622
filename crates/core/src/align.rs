//! Seed-and-extend: copied blocks aligned against their origin's text, to the exact
//! edges of the common run.
//!
//! The origin-detection paper (Sections 2.3 and 3.2) labels tokens through selected
//! shingles only: with a sampled selection a copied run's edge tokens are covered only
//! by shingles that straddle the run's boundary, which are never found, and a
//! fingerprint collision labels a block that was never copied. Alignment closes both
//! gaps where the origin's text is stored. Every shingle estimation labelled with an
//! earlier origin is a seed: its k-shingle is looked up among the origin's k-shingles
//! (re-derived from the stored text), and from there the two texts are compared token
//! by token (the case-folded token fingerprints of [`crate::text`]) to the left and to
//! the right as far as they agree. A block none of whose seeds occurs in its origin is
//! dropped. A second pass looks the document's other k-shingles up in the origins it
//! was aligned to, which finds the copied runs too short to hold a selected shingle
//! (the lines between interleaved quotes). A token covered by aligned runs of several
//! origins takes the earliest (smallest sequence number), the oracle's "earliest
//! source"; copied blocks are then the maximal stretches of tokens taken from one run,
//! so each is a run of its origin's text. Blocks whose origin's text is not available
//! stay as estimation made them.
//!
//! The table and Lucky scoring never see the aligned blocks (they use estimation's), so
//! the table's state does not depend on alignment; the stored results do, and replay
//! aligns the same way against the same stored texts.
//!
//! Pure: the caller supplies the origins' texts.

use std::sync::Arc;

use crate::engine::{Block, ShingleOrigin, Span};
use crate::rabin::Rabin;
use crate::text::{tokenize, Token};

/// An earlier document's text as alignment reads it: its token fingerprints and its
/// k-shingles, sorted, with the first position of each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OriginText {
    tokens: Vec<u64>,
    shingles: Vec<(u64, u32)>,
}

impl OriginText {
    /// Tokenizes `text` with `rabin` (the engine's, of its k).
    pub fn new(text: &str, rabin: &Rabin) -> OriginText {
        let mut toks = Vec::new();
        tokenize(text, rabin, &mut toks);
        let tokens: Vec<u64> = toks.iter().map(|t| t.fp).collect();
        let mut fps = Vec::new();
        rabin.shingles(&tokens, &mut fps);
        let mut shingles: Vec<(u64, u32)> = fps.into_iter().enumerate().map(|(i, f)| (f, i as u32)).collect();
        // Sorted by fingerprint, then position: the first occurrence of each comes first.
        shingles.sort_unstable();
        OriginText { tokens, shingles }
    }

    /// Bytes held (for a cache's bound).
    pub fn bytes(&self) -> usize {
        self.tokens.len() * 8 + self.shingles.len() * 16 + 64
    }

    /// The first position of a k-shingle with fingerprint `fp`.
    fn find(&self, fp: u64) -> Option<usize> {
        let at = self.shingles.partition_point(|&(f, _)| f < fp);
        self.shingles.get(at).filter(|x| x.0 == fp).map(|x| x.1 as usize)
    }
}

/// One document's tokens and the shingle-level copied blocks estimation found.
pub struct Alignment<'a> {
    pub seq: u64,
    pub tokens: &'a [Token],
    /// The document's selected shingles with their estimated origins, in order.
    pub selected: &'a [ShingleOrigin],
    pub rabin: &'a Rabin,
}

/// Aligned copied blocks (maximal runs of tokens with one origin, in token order) and
/// the per-token origin (0: none), for `doc`; `origin_text(o)` gives an earlier
/// document's text when it is stored.
pub fn align(doc: &Alignment<'_>, mut origin_text: impl FnMut(u64) -> Option<Arc<OriginText>>) -> (Vec<Block>, Vec<u64>) {
    let n = doc.tokens.len();
    let k = doc.rabin.k();
    let fps: Vec<u64> = doc.tokens.iter().map(|t| t.fp).collect();
    let mut shingles = Vec::new();
    doc.rabin.shingles(&fps, &mut shingles);
    // (start, end, origin) of every run: aligned ones, and estimation's blocks whose
    // origin's text is not available.
    let mut runs: Vec<(usize, usize, u64)> = Vec::new();
    // The origins aligned to, with their texts and aligned tokens.
    let mut aligned: Vec<(u64, Arc<OriginText>, usize)> = Vec::new();
    let mut i = 0;
    while i < doc.selected.len() {
        let o = doc.selected[i].origin;
        let mut j = i + 1;
        while j < doc.selected.len() && doc.selected[j].origin == o {
            j += 1;
        }
        if o != doc.seq {
            let block = &doc.selected[i..j];
            match origin_text(o) {
                None => runs.push((block[0].start_token as usize, block[j - i - 1].end_token as usize, o)),
                Some(text) => {
                    let first_run = runs.len();
                    for s in block {
                        let p = s.start_token as usize;
                        if p + k > n || runs[first_run..].iter().any(|&(a, b, _)| a <= p && p + k <= b) {
                            continue;
                        }
                        if let Some(q) = text.find(shingles[p]) {
                            let (a, b) = extend(&fps, &text.tokens, p, q, k);
                            runs.push((a, b, o));
                        }
                    }
                    let tokens: usize = runs[first_run..].iter().map(|r| r.1 - r.0).sum();
                    match aligned.iter_mut().find(|x| x.0 == o) {
                        Some(x) => x.2 += tokens,
                        None if tokens > 0 => aligned.push((o, text, tokens)),
                        None => {}
                    }
                }
            }
        }
        i = j;
    }
    // Second pass: the document's other k-shingles looked up in the origins it was
    // aligned to (the most aligned first, at most MAX_ORIGINS): copied runs too short
    // to hold a selected shingle, such as the edges between interleaved quotes.
    aligned.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
    aligned.truncate(MAX_ORIGINS);
    if !aligned.is_empty() {
        let mut covered = vec![false; n];
        for &(a, b, _) in &runs {
            covered[a..b].iter_mut().for_each(|c| *c = true);
        }
        let mut p = 0;
        while p + k <= n {
            if covered[p] && covered[p + k - 1] {
                p += 1;
                continue;
            }
            match aligned.iter().find_map(|(o, text, _)| text.find(shingles[p]).map(|q| (*o, q, text))) {
                Some((o, q, text)) => {
                    let (a, b) = extend(&fps, &text.tokens, p, q, k);
                    covered[a..b].iter_mut().for_each(|c| *c = true);
                    runs.push((a, b, o));
                    p = b.saturating_sub(k - 1).max(p + 1);
                }
                None => p += 1,
            }
        }
    }
    // Every token goes to the covering run of the earliest origin (the first such run on
    // a tie); blocks are the maximal stretches of tokens of one run, so each is a run of
    // its origin's text.
    let mut owner = vec![usize::MAX; n];
    for (r, &(a, b, o)) in runs.iter().enumerate() {
        for w in &mut owner[a..b] {
            if *w == usize::MAX || o < runs[*w].2 {
                *w = r;
            }
        }
    }
    let labels: Vec<u64> = owner.iter().map(|&w| if w == usize::MAX { 0 } else { runs[w].2 }).collect();
    (blocks_of_owners(doc, &owner, &runs), labels)
}

/// How many origins the second pass of [`align`] searches.
const MAX_ORIGINS: usize = 8;

/// The common run of the document's tokens `fps` and an origin's `tokens` through the
/// k-shingle at `p` in the document and `q` in the origin: (first, one past the last)
/// document token.
fn extend(fps: &[u64], tokens: &[u64], p: usize, q: usize, k: usize) -> (usize, usize) {
    let back = fps[..p].iter().rev().zip(tokens[..q].iter().rev()).take_while(|(a, b)| a == b).count();
    let ahead = fps[p + k..].iter().zip(&tokens[q + k..]).take_while(|(a, b)| a == b).count();
    (p - back, p + k + ahead)
}

/// Maximal stretches of tokens owned by one run, as blocks; `shingles` counts the
/// selected shingles inside the block estimated from its origin.
fn blocks_of_owners(doc: &Alignment<'_>, owner: &[usize], runs: &[(usize, usize, u64)]) -> Vec<Block> {
    let mut blocks = Vec::new();
    let (mut t, mut at) = (0, 0);
    while t < owner.len() {
        let w = owner[t];
        let mut u = t + 1;
        while u < owner.len() && owner[u] == w {
            u += 1;
        }
        if w != usize::MAX {
            let o = runs[w].2;
            while at < doc.selected.len() && (doc.selected[at].start_token as usize) < t {
                at += 1;
            }
            let inside = doc.selected[at..].iter().take_while(|s| (s.start_token as usize) < u);
            let shingles = inside.filter(|s| s.origin == o && s.end_token as usize <= u).count() as u32;
            let span = Span { start_token: t as u32, end_token: u as u32, start_byte: doc.tokens[t].start, end_byte: doc.tokens[u - 1].end };
            blocks.push(Block { span, origin: o, shingles });
        }
        t = u;
    }
    blocks
}
