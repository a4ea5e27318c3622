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
//! origins takes the earliest (by publication, [`When`]; without dates the smallest
//! sequence number), the oracle's "earliest
//! source"; copied blocks are then the maximal stretches of tokens taken from one run,
//! so each is a run of its origin's text. Where the origin's own stored result says a
//! stretch of the aligned run was copied from an earlier document, that stretch takes
//! the earlier one: attributions follow copies of copies back to the earliest source
//! the stored results know. Blocks whose origin's text is not available stay as
//! estimation made them.
//!
//! The table and Lucky scoring never see the aligned blocks (they use estimation's), so
//! the table's state does not depend on alignment; the stored results do, and replay
//! aligns the same way against the same stored texts.
//!
//! Pure: the caller supplies the origins' texts.

use std::collections::HashMap;
use std::sync::Arc;

use crate::engine::{Block, ShingleOrigin, Span, When};
use crate::rabin::Rabin;
use crate::text::{tokenize, Token};

/// An earlier document's text as alignment reads it: its token fingerprints, its
/// k-shingles, sorted, with the first position of each, and the copied blocks of its
/// own result (token span, origin).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OriginText {
    tokens: Vec<u64>,
    shingles: Vec<(u64, u32)>,
    sources: Vec<(u32, u32, u64)>,
}

impl OriginText {
    /// The document's token fingerprints.
    pub fn tokens(&self) -> &[u64] {
        &self.tokens
    }

    /// Tokenizes `text` with `rabin` (the engine's, of its k); `blocks` are the copied
    /// blocks of the document's own stored result.
    pub fn new(text: &str, rabin: &Rabin, blocks: &[Block]) -> OriginText {
        let mut toks = Vec::new();
        tokenize(text, rabin, &mut toks);
        let tokens: Vec<u64> = toks.iter().map(|t| t.fp).collect();
        let mut fps = Vec::new();
        rabin.shingles(&tokens, &mut fps);
        let mut shingles: Vec<(u64, u32)> = fps.into_iter().enumerate().map(|(i, f)| (f, i as u32)).collect();
        // Sorted by fingerprint, then position: the first occurrence of each comes first.
        shingles.sort_unstable();
        let sources = blocks.iter().map(|b| (b.span.start_token, b.span.end_token, b.origin)).collect();
        OriginText { tokens, shingles, sources }
    }

    /// Bytes held (for a cache's bound).
    pub fn bytes(&self) -> usize {
        self.tokens.len() * 8 + self.shingles.len() * 16 + self.sources.len() * 16 + 64
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
    /// Publication order: the smaller key is the earlier document ([`When`]).
    pub when: When<'a>,
}

/// Aligned copied blocks (maximal stretches of tokens taken from one run, in token
/// order) and the per-token origin (0: none), for `doc`; `origin_text(o)` gives an
/// earlier document's text and stored blocks when its text is stored.
pub fn align(
    doc: &Alignment<'_>,
    mut origin_text: impl FnMut(u64) -> Option<Arc<OriginText>>,
) -> (Vec<Block>, Vec<u64>) {
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
    // Each origin's text asked for once per document: a run of shingles of one origin
    // ends at every edit, and a 6.3 MB origin read, tokenized and sorted again for each
    // of 2,000 runs took 204 s (issue 53). Alignment now costs the document's length
    // and its origins' lengths once each.
    let mut texts: HashMap<u64, Option<Arc<OriginText>>> = HashMap::new();
    let mut text_of = |o: u64| texts.entry(o).or_insert_with(|| origin_text(o)).clone();
    let mut i = 0;
    while i < doc.selected.len() {
        let o = doc.selected[i].origin;
        let mut j = i + 1;
        while j < doc.selected.len() && doc.selected[j].origin == o {
            j += 1;
        }
        if o != doc.seq {
            let block = &doc.selected[i..j];
            match text_of(o) {
                None => runs.push((block[0].start_token as usize, block[j - i - 1].end_token as usize, o)),
                Some(text) => {
                    let first_run = runs.len();
                    // The end of the runs found so far in this block: each starts at or
                    // before the shingle it was found from, and the shingles come in
                    // order, so a shingle is inside one of them when it ends by `reach`.
                    let mut reach = 0;
                    for s in block {
                        let p = s.start_token as usize;
                        if p + k > n || p + k <= reach {
                            continue;
                        }
                        if let Some(q) = text.find(shingles[p]) {
                            reach = reach.max(push_runs(&mut runs, &fps, &text, (o, p, q, k), doc.when).1);
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
    aligned.sort_by(|a, b| b.2.cmp(&a.2).then((doc.when)(a.0).cmp(&(doc.when)(b.0))));
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
                    let (a, b) = push_runs(&mut runs, &fps, text, (o, p, q, k), doc.when);
                    covered[a..b].iter_mut().for_each(|c| *c = true);
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
            if *w == usize::MAX || (doc.when)(o) < (doc.when)(runs[*w].2) {
                *w = r;
            }
        }
    }
    let labels: Vec<u64> = owner.iter().map(|&w| if w == usize::MAX { 0 } else { runs[w].2 }).collect();
    (blocks_of_owners(doc, &owner, &runs), labels)
}

/// How many origins the second pass of [`align`] searches.
const MAX_ORIGINS: usize = 8;

/// Adds the run through the k-shingle at `p` in the document and `q` in origin `o`'s
/// `text`, and, inside it, a run for each stretch the origin's own result attributes to
/// an earlier document (the earliest source is the origin's origin), if it holds a
/// k-shingle; returns the run.
fn push_runs(
    runs: &mut Vec<(usize, usize, u64)>,
    fps: &[u64],
    text: &OriginText,
    (o, p, q, k): (u64, usize, usize, usize),
    when: When<'_>,
) -> (usize, usize) {
    let (a, b) = extend(fps, &text.tokens, p, q, k);
    runs.push((a, b, o));
    // Document token t lies at origin token t - a + qa.
    let qa = q - (p - a);
    let qb = qa + (b - a);
    // The origin's blocks are in token order and apart: those that reach past `qa`,
    // up to the first that starts at `qb` or later.
    let from = text.sources.partition_point(|&(_, e, _)| e as usize <= qa);
    for &(s, e, earlier) in text.sources[from..].iter().take_while(|&&(s, _, _)| (s as usize) < qb) {
        let (s, e) = ((s as usize).max(qa), (e as usize).min(qb));
        // A stretch shorter than k holds no shingle of the earlier document.
        if s + k <= e && when(earlier) < when(o) {
            runs.push((a + (s - qa), a + (e - qa), earlier));
        }
    }
    (a, b)
}

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
            let span = Span {
                start_token: t as u32,
                end_token: u as u32,
                start_byte: doc.tokens[t].start,
                end_byte: doc.tokens[u - 1].end,
            };
            blocks.push(Block { span, origin: o, shingles });
        }
        t = u;
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimate::How;

    fn words(prefix: &str, n: usize) -> Vec<String> {
        (0..n).map(|i| format!("{prefix}{i}")).collect()
    }

    /// C copies a stretch of B that B itself copied from A: the part from A is
    /// attributed to A (B's stored result says so), the rest of the stretch to B.
    #[test]
    fn a_copy_of_a_copy_is_attributed_to_the_earliest_source() {
        let rabin = Rabin::new(8);
        let (a, b_own, c_own) = (words("a", 20), words("b", 20), words("c", 10));
        let b: Vec<String> = [&b_own[..10], &a[..], &b_own[10..]].concat();
        let c: Vec<String> = [&c_own[..5], &b[4..36], &c_own[5..]].concat();
        let (b_text, c_text) = (b.join(" "), c.join(" "));
        let mut toks = Vec::new();
        tokenize(&c_text, &rabin, &mut toks);
        // Estimation found one shingle of the copied stretch, labelled B (document 2).
        let selected = [ShingleOrigin { start_token: 10, end_token: 18, origin: 2, how: How::Found }];
        let doc =
            Alignment { seq: 3, tokens: &toks, selected: &selected, rabin: &rabin, when: &crate::engine::by_arrival };
        let span = |s: u32, e: u32| Span { start_token: s, end_token: e, start_byte: 0, end_byte: 0 };
        // B's own result: its tokens 10..30 were copied from A (document 1).
        let b_blocks = [Block { span: span(10, 30), origin: 1, shingles: 3 }];
        let (blocks, labels) = align(&doc, |o| (o == 2).then(|| Arc::new(OriginText::new(&b_text, &rabin, &b_blocks))));
        let got: Vec<(u32, u32, u64)> =
            blocks.iter().map(|x| (x.span.start_token, x.span.end_token, x.origin)).collect();
        // C's tokens 5..37 are B's 4..36: B's 4..10 (C 5..11) from B, A's words (C 11..31)
        // from A, B's 30..36 (C 31..37) from B.
        assert_eq!(got, [(5, 11, 2), (11, 31, 1), (31, 37, 2)]);
        assert_eq!(labels.iter().filter(|&&l| l == 1).count(), 20);
        // Without B's result the whole stretch is B's.
        let (blocks, _) = align(&doc, |o| (o == 2).then(|| Arc::new(OriginText::new(&b_text, &rabin, &[]))));
        assert_eq!(
            blocks.iter().map(|x| (x.span.start_token, x.span.end_token, x.origin)).collect::<Vec<_>>(),
            [(5, 37, 2)]
        );
    }
}
