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
//! so each is a run of its origin's text. That is [`Attribution::Earliest`]. With
//! [`Attribution::Passage`] (a new data directory's) a token goes to the
//! longest run covering it instead (the earlier origin on a tie): a passage copied
//! whole stays one block of the source it was copied from, and a shorter run inside it
//! that an older document also holds (a stock phrase: "for the fiscal year ending on
//! the 30th") does not split it; the older document is listed beside the block
//! ([`AlsoEarlier`]), so the earliest occurrence is still shown, and so are the
//! stretches of it the origin's own result credits to an earlier document (a copy of a
//! copy: the passage is credited to the document it was copied from, the earlier
//! source listed beside it). Runs are then extended
//! through light edits too: past up to [`MAX_EDIT`] tokens that differ (words replaced,
//! inserted or left out) as long as the next [`MIN_AFTER_EDIT`] tokens agree again, so a passage
//! with one word in eight changed is one block with its edited tokens listed, not a
//! series of 7-token runs, none of which holds a k-shingle. Where the origin's own stored result says a
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

use serde::{Deserialize, Serialize};

use crate::config::Attribution;
use crate::rabin::Rabin;
use crate::spans::{Block, ShingleOrigin, Span, When};
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
    /// Which run a token covered by several goes to.
    pub attribution: Attribution,
}

/// An earlier document that also holds part of a copied block ([`Attribution::Passage`]):
/// the document, and the tokens of the block it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AlsoEarlier {
    pub origin: u64,
    pub start_token: u32,
    pub end_token: u32,
}

/// What [`Attribution::Passage`] says beyond the blocks: the earlier documents that
/// also hold parts of them, and the tokens of the blocks that differ from their origin
/// (light edits), in token order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Passages {
    pub also_earlier: Vec<AlsoEarlier>,
    pub edits: Vec<u32>,
}

impl Passages {
    pub fn is_empty(&self) -> bool {
        self.also_earlier.is_empty() && self.edits.is_empty()
    }
}

/// Tokens that must agree after an edit for a run to go on through it.
pub const MIN_AFTER_EDIT: usize = 3;
/// The edits [`extend_edited`] tries, the smallest first: (document tokens, origin
/// tokens) skipped.
static EDIT_GAPS: std::sync::LazyLock<Vec<(usize, usize)>> = std::sync::LazyLock::new(|| {
    let mut gaps: Vec<(usize, usize)> =
        (0..=MAX_EDIT).flat_map(|x| (0..=MAX_EDIT).map(move |y| (x, y))).filter(|&g| g != (0, 0)).collect();
    gaps.sort_by_key(|&(x, y)| (x.max(y), x + y));
    gaps
});

/// Tokens of either text an edit may span (a word replaced by up to three, three left
/// out, ...).
pub const MAX_EDIT: usize = 5;
/// Earlier documents listed beside one block, at most.
const MAX_ALSO: usize = 8;

/// An aligned run: document tokens `a..b` taken from `origin`; `parent`: the run it
/// refines (a stretch its origin's own result attributes to an earlier document);
/// `edits`: its document tokens that differ from the origin's.
struct Run {
    a: usize,
    b: usize,
    origin: u64,
    parent: Option<usize>,
    edits: Vec<usize>,
}

/// Aligned copied blocks (maximal stretches of tokens taken from one run, in token
/// order), the per-token origin (0: none) and, with [`Attribution::Passage`], what it
/// says beside them, for `doc`; `origin_text(o)` gives an earlier document's text and
/// stored blocks when its text is stored.
pub fn align(
    doc: &Alignment<'_>,
    mut origin_text: impl FnMut(u64) -> Option<Arc<OriginText>>,
) -> (Vec<Block>, Vec<u64>, Passages) {
    let n = doc.tokens.len();
    let k = doc.rabin.k();
    let edited = doc.attribution == Attribution::Passage;
    let fps: Vec<u64> = doc.tokens.iter().map(|t| t.fp).collect();
    let mut shingles = Vec::new();
    doc.rabin.shingles(&fps, &mut shingles);
    // Every run: aligned ones, and estimation's blocks whose origin's text is not
    // available.
    let mut runs: Vec<Run> = Vec::new();
    // The origins aligned to, with their texts and aligned tokens.
    let mut aligned: Vec<(u64, Arc<OriginText>, usize)> = Vec::new();
    // Each origin's text asked for once per document: a run of shingles of one origin
    // ends at every edit, and reading, tokenizing and sorting a large origin again for
    // each run would cost its length times the edits. So alignment costs the
    // document's length and its origins' lengths once each.
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
                None => runs.push(Run {
                    a: block[0].start_token as usize,
                    b: block[j - i - 1].end_token as usize,
                    origin: o,
                    parent: None,
                    edits: Vec::new(),
                }),
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
                            reach = reach.max(push_runs(&mut runs, &fps, &text, (o, p, q, k), doc.when, edited).1);
                        }
                    }
                    let tokens: usize = runs[first_run..].iter().map(|r| r.b - r.a).sum();
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
        for r in &runs {
            covered[r.a..r.b].iter_mut().for_each(|c| *c = true);
        }
        let mut p = 0;
        while p + k <= n {
            if covered[p] && covered[p + k - 1] {
                p += 1;
                continue;
            }
            match aligned.iter().find_map(|(o, text, _)| text.find(shingles[p]).map(|q| (*o, q, text))) {
                Some((o, q, text)) => {
                    let (a, b) = push_runs(&mut runs, &fps, text, (o, p, q, k), doc.when, edited);
                    covered[a..b].iter_mut().for_each(|c| *c = true);
                    p = b.saturating_sub(k - 1).max(p + 1);
                }
                None => p += 1,
            }
        }
    }
    // Each run's origin's publication order, asked once: a token is weighed against
    // every run covering it, and a document copied from many versions of a text has
    // many runs over the same tokens.
    let order: Vec<(i64, u64)> = runs.iter().map(|r| (doc.when)(r.origin)).collect();
    let owner = match doc.attribution {
        Attribution::Earliest => earliest_owners(n, &runs, &order),
        Attribution::Passage => passage_owners(n, &runs, &order),
    };
    let labels: Vec<u64> = owner.iter().map(|&w| if w == usize::MAX { 0 } else { runs[w].origin }).collect();
    let blocks = blocks_of_owners(doc, &owner, &runs);
    let passages = if edited { passages(&blocks, &owner, &runs, &order) } else { Passages::default() };
    (blocks, labels, passages)
}

/// [`Attribution::Earliest`]: every token goes to the covering run of the earliest
/// origin (the first such run on a tie); `order[r]` is run `r`'s origin's order.
fn earliest_owners(n: usize, runs: &[Run], order: &[(i64, u64)]) -> Vec<usize> {
    owners_by(n, runs, |r| std::cmp::Reverse(order[r]), |_| true)
}

/// [`Attribution::Passage`]: every token goes to the longest run found in the document
/// covering it (the earlier origin, then the first run, on a tie). The stretches its
/// origin's own result attributes to earlier documents do not split it: they are
/// listed beside the block ([`passages`]), as the other runs' earlier origins are.
fn passage_owners(n: usize, runs: &[Run], order: &[(i64, u64)]) -> Vec<usize> {
    owners_by(n, runs, |r| (runs[r].b - runs[r].a, std::cmp::Reverse(order[r])), |r| runs[r].parent.is_none())
}

/// Every token goes to the run of the highest `key` covering it among the runs `take`
/// admits, the first such run on a tie: the runs are visited best first, and a token
/// keeps the first that reaches it.
fn owners_by<K: Ord>(n: usize, runs: &[Run], key: impl Fn(usize) -> K, take: impl Fn(usize) -> bool) -> Vec<usize> {
    let mut best: Vec<usize> = (0..runs.len()).filter(|&r| take(r)).collect();
    // Stable: among equal keys the first run stays first.
    best.sort_by_cached_key(|&r| std::cmp::Reverse(key(r)));
    let mut owner = vec![usize::MAX; n];
    for r in best {
        for w in owner[runs[r].a..runs[r].b].iter_mut().filter(|w| **w == usize::MAX) {
            *w = r;
        }
    }
    owner
}

/// The earlier documents that also hold parts of each block (the other runs found in
/// the document over it, of an earlier origin than the block's), and the edited
/// tokens of the blocks.
fn passages(blocks: &[Block], owner: &[usize], runs: &[Run], order: &[(i64, u64)]) -> Passages {
    let mut out = Passages::default();
    for block in blocks {
        let (a, b) = (block.span.start_token as usize, block.span.end_token as usize);
        let w = owner[a];
        // The earlier documents, each with its order.
        let mut also: Vec<(AlsoEarlier, (i64, u64))> = Vec::new();
        for (run, &when) in runs.iter().zip(order) {
            let (s, e) = (run.a.max(a), run.b.min(b));
            if s >= e || run.origin == block.origin || when >= order[w] {
                continue;
            }
            match also.iter_mut().find(|x| x.0.origin == run.origin) {
                Some((x, _)) => {
                    x.start_token = x.start_token.min(s as u32);
                    x.end_token = x.end_token.max(e as u32);
                }
                None => {
                    also.push((AlsoEarlier { origin: run.origin, start_token: s as u32, end_token: e as u32 }, when))
                }
            }
        }
        also.sort_by_key(|x| (x.1, x.0.start_token));
        also.truncate(MAX_ALSO);
        out.also_earlier.extend(also.into_iter().map(|x| x.0));
        out.edits.extend(runs[w].edits.iter().filter(|&&t| (a..b).contains(&t)).map(|&t| t as u32));
    }
    out
}

/// How many origins the second pass of [`align`] searches.
const MAX_ORIGINS: usize = 8;

/// Adds the run through the k-shingle at `p` in the document and `q` in origin `o`'s
/// `text` (through light edits when `edited`), and, inside it, a run for each stretch
/// the origin's own result attributes to an earlier document (the earliest source is
/// the origin's origin), if it holds a k-shingle; returns the run.
fn push_runs(
    runs: &mut Vec<Run>,
    fps: &[u64],
    text: &OriginText,
    (o, p, q, k): (u64, usize, usize, usize),
    when: When<'_>,
    edited: bool,
) -> (usize, usize) {
    let pieces =
        if edited { extend_edited(fps, &text.tokens, p, q, k) } else { vec![extend(fps, &text.tokens, p, q, k)] };
    let (a, b) = (pieces[0].0, pieces[pieces.len() - 1].1);
    let edits = pieces.windows(2).flat_map(|w| w[0].1..w[1].0).collect();
    let parent = runs.len();
    runs.push(Run { a, b, origin: o, parent: None, edits });
    for &(pa, pb, qa) in &pieces {
        // Document token t of the piece lies at origin token t - pa + qa.
        let qb = qa + (pb - pa);
        // The origin's blocks are in token order and apart: those that reach past `qa`,
        // up to the first that starts at `qb` or later.
        let from = text.sources.partition_point(|&(_, e, _)| e as usize <= qa);
        for &(s, e, earlier) in text.sources[from..].iter().take_while(|&&(s, _, _)| (s as usize) < qb) {
            let (s, e) = ((s as usize).max(qa), (e as usize).min(qb));
            // A stretch shorter than k holds no shingle of the earlier document.
            if s + k <= e && when(earlier) < when(o) {
                let (a, b) = (pa + (s - qa), pa + (e - qa));
                runs.push(Run { a, b, origin: earlier, parent: Some(parent), edits: Vec::new() });
            }
        }
    }
    (a, b)
}

/// The common run of the document's tokens `fps` and an origin's `tokens` through the
/// k-shingle at `p` in the document and `q` in the origin: (first, one past the last)
/// document token, and the origin token of the first.
fn extend(fps: &[u64], tokens: &[u64], p: usize, q: usize, k: usize) -> (usize, usize, usize) {
    let back = fps[..p].iter().rev().zip(tokens[..q].iter().rev()).take_while(|(a, b)| a == b).count();
    let ahead = fps[p + k..].iter().zip(&tokens[q + k..]).take_while(|(a, b)| a == b).count();
    (p - back, p + k + ahead, q - back)
}

/// [`extend`] through light edits: the exact run, then on either side, past up to
/// [`MAX_EDIT`] tokens replaced, inserted or left out, as long as the next
/// [`MIN_AFTER_EDIT`] tokens agree again (the smallest edit first); the exact pieces, in
/// order, as (document start, end, origin start).
fn extend_edited(fps: &[u64], tokens: &[u64], p: usize, q: usize, k: usize) -> Vec<(usize, usize, usize)> {
    let m = MIN_AFTER_EDIT;
    let ahead = |d: usize, o: usize| match (fps.get(d..), tokens.get(o..)) {
        (Some(x), Some(y)) => x.iter().zip(y).take_while(|(a, b)| a == b).count(),
        _ => 0,
    };
    let back =
        |d: usize, o: usize| fps[..d].iter().rev().zip(tokens[..o].iter().rev()).take_while(|(a, b)| a == b).count();
    let mut pieces = std::collections::VecDeque::from([extend(fps, tokens, p, q, k)]);
    loop {
        let &(a, b, qa) = pieces.back().expect("one piece");
        let (d, o) = (b, qa + (b - a));
        let next = EDIT_GAPS.iter().find_map(|&(x, y)| Some((d + x, o + y, ahead(d + x, o + y))).filter(|g| g.2 >= m));
        let Some((nd, no, n)) = next else { break };
        pieces.push_back((nd, nd + n, no));
    }
    loop {
        let &(a, _, qa) = pieces.front().expect("one piece");
        let prev = EDIT_GAPS.iter().find_map(|&(x, y)| {
            let (d, o) = (a.checked_sub(x)?, qa.checked_sub(y)?);
            Some((d, o, back(d, o))).filter(|g| g.2 >= m)
        });
        let Some((d, o, n)) = prev else { break };
        pieces.push_front((d - n, d, o - n));
    }
    pieces.into()
}

/// Maximal stretches of tokens owned by one run, as blocks; `shingles` counts the
/// selected shingles inside the block estimated from its origin.
fn blocks_of_owners(doc: &Alignment<'_>, owner: &[usize], runs: &[Run]) -> Vec<Block> {
    let mut blocks = Vec::new();
    let (mut t, mut at) = (0, 0);
    while t < owner.len() {
        let w = owner[t];
        let mut u = t + 1;
        while u < owner.len() && owner[u] == w {
            u += 1;
        }
        if w != usize::MAX {
            let o = runs[w].origin;
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
    use proptest::prelude::*;

    /// Random streams for the brute-force oracle: each origin its own words with, at
    /// random places, phrases of the origins before it (stock phrases, copies of
    /// copies); the document passages of random origins, apart by at least
    /// `MAX_EDIT + 1` words of its own (so no run can go on from one to the next).
    fn streams(seed: u64, origins: usize) -> (Vec<Vec<String>>, Vec<String>) {
        let mut rng = seed | 1;
        let mut next = move |n: usize| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng % n as u64) as usize
        };
        let mut texts: Vec<Vec<String>> = Vec::new();
        for o in 0..origins {
            let mut t: Vec<String> = (0..40 + next(60)).map(|i| format!("o{o}w{i}")).collect();
            for _ in 0..next(3) {
                if o == 0 {
                    break;
                }
                let from = &texts[next(o)];
                let len = 8 + next(25).min(from.len() - 8);
                let at = next(from.len() - len + 1);
                let phrase = from[at..at + len].to_vec();
                let put = next(t.len());
                t.splice(put..put, phrase);
            }
            texts.push(t);
        }
        let mut doc: Vec<String> = Vec::new();
        for part in 0..2 + next(4) {
            doc.extend((0..MAX_EDIT + 1 + next(5)).map(|i| format!("d{part}w{i}")));
            let from = &texts[next(origins)];
            let len = 8 + next(from.len() - 8);
            let at = next(from.len() - len + 1);
            doc.extend(from[at..at + len].iter().cloned());
        }
        doc.extend((0..MAX_EDIT + 1).map(|i| format!("end{i}")));
        (texts, doc)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// With every shingle selected and labelled by its earliest holder (a table
        /// that evicts nothing), the passage attribution credits every token to the
        /// origin of the longest common run covering it (the earliest on a tie),
        /// found by brute force over every origin; the earliest attribution credits it
        /// to the earliest origin holding a common run through it of at least k.
        #[test]
        fn tokens_go_to_the_longest_common_run(seed in any::<u64>(), origins in 2usize..7) {
            let rabin = Rabin::new(8);
            let k = 8;
            let (texts, doc) = streams(seed, origins);
            let seq = origins as u64 + 1;
            let text = doc.join(" ");
            let mut toks = Vec::new();
            tokenize(&text, &rabin, &mut toks);
            prop_assert_eq!(toks.len(), doc.len());
            // The longest maximal common run with each origin covering each token.
            let mut longest = vec![(0usize, 0u64); doc.len()];
            let mut earliest = vec![0u64; doc.len()];
            for (o, t) in texts.iter().enumerate().rev() {
                let o = o as u64 + 1;
                for i in 0..doc.len() {
                    for x in 0..t.len() {
                        // Maximal runs start where the tokens before differ.
                        if (i > 0 && x > 0 && doc[i - 1] == t[x - 1]) || doc[i] != t[x] {
                            continue;
                        }
                        let len = doc[i..].iter().zip(&t[x..]).take_while(|(a, b)| a == b).count();
                        if len < k {
                            continue;
                        }
                        for tok in i..i + len {
                            if len >= longest[tok].0 {
                                longest[tok] = (len, o);
                            }
                            earliest[tok] = o;
                        }
                    }
                }
            }
            // Every shingle selected, labelled by its earliest holder.
            let holder = |p: usize| (1..seq).find(|&o| texts[o as usize - 1].windows(k).any(|w| w == &doc[p..p + k]));
            let selected: Vec<ShingleOrigin> = (0..doc.len() + 1 - k)
                .map(|p| ShingleOrigin { start_token: p as u32, end_token: (p + k) as u32, origin: holder(p).unwrap_or(seq), how: How::Found })
                .collect();
            let origin = |o: u64| Some(Arc::new(OriginText::new(&texts[o as usize - 1].join(" "), &rabin, &[])));
            for attribution in [Attribution::Passage, Attribution::Earliest] {
                let a = Alignment { seq, tokens: &toks, selected: &selected, rabin: &rabin, when: &crate::spans::by_arrival, attribution };
                let (_, labels, passages) = align(&a, origin);
                let want: Vec<u64> = match attribution {
                    Attribution::Passage => longest.iter().map(|x| x.1).collect(),
                    Attribution::Earliest => earliest.clone(),
                };
                prop_assert_eq!(&labels, &want, "{:?}: {:?}", attribution, doc);
                prop_assert!(passages.edits.is_empty(), "no edits in these streams");
            }
        }
    }

    /// A verbatim passage of B that holds a stock phrase of A, copied into C, is one
    /// block of B with A listed beside it; with one word in eight changed, still one
    /// block, its edits listed; `Earliest` keeps the blocks it made before.
    #[test]
    fn a_passage_keeps_its_source_through_stock_phrases_and_light_edits() {
        let rabin = Rabin::new(8);
        let stock: Vec<String> =
            "for the fiscal year ending on the 30th of June".split(' ').map(str::to_string).collect();
        let a: Vec<String> = [&words("a", 30)[..], &stock, &words("a", 30)[..]].concat();
        let passage: Vec<String> = [&words("p", 40)[..], &stock, &words("q", 40)[..]].concat();
        let b: Vec<String> = [&words("b", 20)[..], &passage, &words("b", 20)[..]].concat();
        // One word in eight changed, at random places (a change every 8th word exactly
        // leaves no 8-word shingle to find the passage by).
        let mut rng = 54u64;
        let edited: Vec<String> = passage
            .iter()
            .enumerate()
            .map(|(i, w)| {
                rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                if (rng >> 33).is_multiple_of(8) {
                    format!("x{i}")
                } else {
                    w.clone()
                }
            })
            .collect();
        let changed = edited.iter().filter(|w| w.starts_with('x')).count();
        assert!((8..=14).contains(&changed), "{changed} words of 90 changed");
        let texts = [a.join(" "), b.join(" ")];
        let run = |doc: &[String], attribution: Attribution| {
            let mut toks = Vec::new();
            tokenize(&doc.join(" "), &rabin, &mut toks);
            let k = 8;
            let holder = |p: usize| {
                (1..3u64).find(|&o| {
                    let t: Vec<&str> = texts[o as usize - 1].split(' ').collect();
                    t.windows(k).any(|w| w.iter().zip(&doc[p..p + k]).all(|(x, y)| x == y))
                })
            };
            let selected: Vec<ShingleOrigin> = (0..doc.len() + 1 - k)
                .filter_map(|p| {
                    holder(p).map(|o| ShingleOrigin {
                        start_token: p as u32,
                        end_token: (p + k) as u32,
                        origin: o,
                        how: How::Found,
                    })
                })
                .collect();
            let a = Alignment {
                seq: 3,
                tokens: &toks,
                selected: &selected,
                rabin: &rabin,
                when: &crate::spans::by_arrival,
                attribution,
            };
            align(&a, |o| Some(Arc::new(OriginText::new(&texts[o as usize - 1], &rabin, &[]))))
        };
        let c: Vec<String> = [&words("c", 10)[..], &passage, &words("c", 10)[..]].concat();
        let spans = |blocks: &[Block]| {
            blocks.iter().map(|b| (b.span.start_token, b.span.end_token, b.origin)).collect::<Vec<_>>()
        };
        let (blocks, _, passages) = run(&c, Attribution::Passage);
        assert_eq!(spans(&blocks), [(10, 100, 2)]);
        assert_eq!(passages.also_earlier, [AlsoEarlier { origin: 1, start_token: 50, end_token: 60 }]);
        let (blocks, _, passages) = run(&c, Attribution::Earliest);
        assert_eq!(spans(&blocks), [(10, 50, 2), (50, 60, 1), (60, 100, 2)], "the paper's earliest source, per token");
        assert!(passages.is_empty());
        // One word in eight changed: at most two blocks over the passage, the edits listed
        // (those at its very edges, with fewer than 3 words after them, left out).
        let d: Vec<String> = [&words("d", 10)[..], &edited, &words("d", 10)[..]].concat();
        let (blocks, labels, passages) = run(&d, Attribution::Passage);
        assert!(blocks.len() <= 2, "{:?}", spans(&blocks));
        let credited = labels[10..100].iter().filter(|&&l| l == 2).count();
        assert!(credited >= 81, "{credited} of 90 tokens credited to the source");
        // Every changed word inside a block is listed as an edit.
        for b in &blocks {
            for t in b.span.start_token..b.span.end_token {
                let changed = edited.get(t as usize - 10).is_some_and(|w| w.starts_with('x'));
                assert!(!changed || passages.edits.contains(&t), "token {t}: {:?}", passages.edits);
            }
        }
        let (blocks, _, _) = run(&d, Attribution::Earliest);
        assert!(blocks.len() > 3, "exact runs: {:?}", spans(&blocks));
    }

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
        let doc = Alignment {
            seq: 3,
            tokens: &toks,
            selected: &selected,
            rabin: &rabin,
            when: &crate::spans::by_arrival,
            attribution: Attribution::Earliest,
        };
        let span = |s: u32, e: u32| Span { start_token: s, end_token: e, start_byte: 0, end_byte: 0 };
        // B's own result: its tokens 10..30 were copied from A (document 1).
        let b_blocks = [Block { span: span(10, 30), origin: 1, shingles: 3 }];
        let (blocks, labels, _) =
            align(&doc, |o| (o == 2).then(|| Arc::new(OriginText::new(&b_text, &rabin, &b_blocks))));
        let got: Vec<(u32, u32, u64)> =
            blocks.iter().map(|x| (x.span.start_token, x.span.end_token, x.origin)).collect();
        // C's tokens 5..37 are B's 4..36: B's 4..10 (C 5..11) from B, A's words (C 11..31)
        // from A, B's 30..36 (C 31..37) from B.
        assert_eq!(got, [(5, 11, 2), (11, 31, 1), (31, 37, 2)]);
        assert_eq!(labels.iter().filter(|&&l| l == 1).count(), 20);
        // Without B's result the whole stretch is B's.
        let (blocks, _, _) = align(&doc, |o| (o == 2).then(|| Arc::new(OriginText::new(&b_text, &rabin, &[]))));
        assert_eq!(
            blocks.iter().map(|x| (x.span.start_token, x.span.end_token, x.origin)).collect::<Vec<_>>(),
            [(5, 37, 2)]
        );
    }
}
