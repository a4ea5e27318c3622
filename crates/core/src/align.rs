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
//! longest run covering it instead (counted in the tokens it agrees on; on a tie the
//! run with fewer differing tokens, then the earlier origin): a passage copied
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
//! series of 7-token runs, none of which holds a k-shingle. A third pass (passage
//! attribution) tries an origin's later versions, the documents that copied from it
//! (the caller's copiers index): where the table names an origin for a shingle its text
//! does not hold (origin propagation relabelled an edited copy's own shingles with its
//! source), or a run goes through edits, a later version the document agrees with on
//! more tokens takes the passage, the older one listed beside it. Where the origin's
//! own stored result says a stretch of the aligned run was copied from an earlier
//! document, that stretch takes
//! the earlier one: attributions follow copies of copies back to the earliest source
//! the stored results know. Blocks whose origin's text is not available stay as
//! estimation made them.
//!
//! The table and Lucky scoring never see the aligned blocks (they use estimation's), so
//! the table's state does not depend on alignment; the stored results do, and replay
//! aligns the same way against the same stored texts.
//!
//! Pure: the caller supplies the origins' texts.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::config::Attribution;
use crate::estimate::How;
use crate::rabin::Rabin;
use crate::select::shingle_count;
use crate::spans::{Block, ShingleOrigin, Span, When};
use crate::text::{tokenize, Token};

/// An earlier document's text as alignment reads it: its token fingerprints, its
/// k-shingles' fingerprints with a hash table of the first position of each, and the
/// copied blocks of its own result (token span, origin).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OriginText {
    tokens: Vec<u64>,
    shingles: Vec<u64>,
    /// Open addressing over `shingles` (linear probing, a power of two long, at most
    /// two thirds full): 1 + the first position of a fingerprint, 0 for an empty slot.
    /// A seed is looked up once or more for each of a document's positions, in texts
    /// of thousands of shingles: one or two probes where a binary search took a dozen.
    slots: Vec<u32>,
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
        OriginText::of_tokens(toks.iter().map(|t| t.fp).collect(), rabin, blocks)
    }

    /// [`OriginText::new`] for a text whose token fingerprints `tokens` are known (as
    /// `rabin` tokenizes it).
    pub fn of_tokens(tokens: Vec<u64>, rabin: &Rabin, blocks: &[Block]) -> OriginText {
        OriginText::of_tokens_with(tokens, rabin, &[], blocks)
    }

    /// [`OriginText::of_tokens`], the shingles `given` where they are the tokens'
    /// ([`shingles_of`]).
    pub fn of_tokens_with(tokens: Vec<u64>, rabin: &Rabin, given: &[u64], blocks: &[Block]) -> OriginText {
        let shingles = shingles_of(rabin, &tokens, given).into_owned();
        let mut slots = vec![0u32; (shingles.len() * 3 / 2 + 1).next_power_of_two()];
        let mask = slots.len() - 1;
        for (i, &fp) in shingles.iter().enumerate() {
            let mut at = slot_of(fp, mask);
            // In order of position: a fingerprint met before keeps its first position.
            while slots[at] != 0 && shingles[slots[at] as usize - 1] != fp {
                at = (at + 1) & mask;
            }
            if slots[at] == 0 {
                slots[at] = i as u32 + 1;
            }
        }
        let sources = blocks.iter().map(|b| (b.span.start_token, b.span.end_token, b.origin)).collect();
        OriginText { tokens, shingles, slots, sources }
    }

    /// Bytes held (for a cache's bound).
    pub fn bytes(&self) -> usize {
        self.tokens.len() * 8 + self.shingles.len() * 8 + self.slots.len() * 4 + self.sources.len() * 16 + 64
    }

    /// The first position of a k-shingle with fingerprint `fp`.
    fn find(&self, fp: u64) -> Option<usize> {
        let mask = self.slots.len() - 1;
        let mut at = slot_of(fp, mask);
        loop {
            match self.slots[at] {
                0 => return None,
                i if self.shingles[i as usize - 1] == fp => return Some(i as usize - 1),
                _ => at = (at + 1) & mask,
            }
        }
    }
}

/// A fingerprint's home slot in a table of `mask + 1` slots (a power of two): the high
/// bits of a multiplicative hash.
fn slot_of(fp: u64, mask: usize) -> usize {
    (fp.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize & mask
}

/// One document's tokens and the shingle-level copied blocks estimation found.
pub struct Alignment<'a> {
    pub seq: u64,
    pub tokens: &'a [Token],
    /// Every k-shingle's fingerprint of the tokens, where the caller has them (else
    /// empty: alignment computes them, [`shingles_of`]).
    pub shingles: &'a [u64],
    /// The document's selected shingles with their estimated origins, in order.
    pub selected: &'a [ShingleOrigin],
    pub rabin: &'a Rabin,
    /// Publication order: the smaller key is the earlier document ([`When`]).
    pub when: When<'a>,
    /// Which run a token covered by several goes to.
    pub attribution: Attribution,
}

/// The fingerprints of every k-shingle of the token fingerprints `fps`: `given` where
/// it holds one a shingle (the selection's, from a preparation thread), else computed.
pub fn shingles_of<'a>(rabin: &Rabin, fps: &[u64], given: &'a [u64]) -> Cow<'a, [u64]> {
    if given.len() == shingle_count(fps.len(), rabin.k()) {
        return Cow::Borrowed(given);
    }
    let mut computed = Vec::new();
    rabin.shingles(fps, &mut computed);
    Cow::Owned(computed)
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
/// `edits`: its document tokens that differ from the origin's; `left_out`: the
/// origin's tokens inside it that the document leaves out.
struct Run {
    a: usize,
    b: usize,
    origin: u64,
    parent: Option<usize>,
    edits: Vec<usize>,
    left_out: usize,
}

/// A run found from a seed: the document tokens of the seed's exact piece (its
/// diagonal is the key it is kept under), the run's end, and the tokens it and the
/// runs inside it cover.
struct Found {
    piece: (usize, usize),
    end: usize,
    tokens: usize,
}

/// Aligned copied blocks (maximal stretches of tokens taken from one run, in token
/// order), the per-token origin (0: none) and, with [`Attribution::Passage`], what it
/// says beside them, for `doc`; `origin_text(o)` gives an earlier document's text and
/// stored blocks when its text is stored.
pub fn align(
    doc: &Alignment<'_>,
    origin_text: impl FnMut(u64) -> Option<Arc<OriginText>>,
) -> (Vec<Block>, Vec<u64>, Passages) {
    align_runs(doc, origin_text, |_| Vec::new(), true)
}

/// [`align`], and with [`Attribution::Passage`] the later versions of an origin are
/// tried too where the table names the origin for a shingle its text does not hold, or
/// a block runs through edits (over the shingles of the edits): `copiers(o)` gives
/// documents whose stored results named `o` (of the newest, at most [`MAX_COPIERS`]
/// are read; those not published before the document are passed over). The table and
/// estimation name the earliest holder of a passage (origin propagation relabels a
/// lightly edited copy's own shingles with its source), so a passage taken word for
/// word from an edited version would otherwise be credited to the version before the
/// edits, through them.
pub fn align_with_copiers(
    doc: &Alignment<'_>,
    origin_text: impl FnMut(u64) -> Option<Arc<OriginText>>,
    copiers: impl FnMut(u64) -> Vec<u64>,
) -> (Vec<Block>, Vec<u64>, Passages) {
    align_runs(doc, origin_text, copiers, true)
}

/// [`align_with_copiers`]; with `again` false, a seed on a run found before extends it
/// again (the same result, tested).
fn align_runs(
    doc: &Alignment<'_>,
    mut origin_text: impl FnMut(u64) -> Option<Arc<OriginText>>,
    mut copiers: impl FnMut(u64) -> Vec<u64>,
    again: bool,
) -> (Vec<Block>, Vec<u64>, Passages) {
    let n = doc.tokens.len();
    let k = doc.rabin.k();
    let edited = doc.attribution == Attribution::Passage;
    let fps: Vec<u64> = doc.tokens.iter().map(|t| t.fp).collect();
    let shingles = shingles_of(doc.rabin, &fps, doc.shingles);
    let shingles = &shingles[..];
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
    // The runs found from each origin's seeds. Estimation labels a long copy's
    // shingles with several of the documents holding it, in turns, so the blocks of one
    // origin come back again and again over the same run; a seed on the exact piece of
    // a run found before would find that run again, and is counted as if it had,
    // without reading the texts again. Kept by origin and diagonal (origin token less
    // document token): the exact pieces of one diagonal are apart, in token order.
    let mut found: HashMap<(u64, i64), Vec<Found>> = HashMap::new();
    // Seeds found in the table whose origin's text does not hold them (origin, token).
    let mut unheld: Vec<(u64, usize)> = Vec::new();
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
                    left_out: 0,
                }),
                Some(text) => {
                    let first_run = runs.len();
                    // The end of the runs found so far in this block: each starts at or
                    // before the shingle it was found from, and the shingles come in
                    // order, so a shingle is inside one of them when it ends by `reach`.
                    let mut reach = 0;
                    // Tokens of the runs found again.
                    let mut repeated = 0;
                    for s in block {
                        let p = s.start_token as usize;
                        if p + k > n || p + k <= reach {
                            continue;
                        }
                        let Some(q) = text.find(shingles[p]) else {
                            // Found in the table under an origin that does not hold it:
                            // propagated there from a later version (or a collision).
                            if s.how == How::Found {
                                unheld.push((o, p));
                            }
                            continue;
                        };
                        let seen = found.entry((o, q as i64 - p as i64)).or_default();
                        if !again {
                            seen.clear();
                        }
                        // The piece of this diagonal that starts last at or before the seed.
                        let at = seen.partition_point(|f| f.piece.0 <= p);
                        if let Some(f) = at.checked_sub(1).map(|x| &seen[x]).filter(|f| p + k <= f.piece.1) {
                            reach = reach.max(f.end);
                            repeated += f.tokens;
                            continue;
                        }
                        let before = runs.len();
                        let (piece, (_, end)) = push_runs(&mut runs, &fps, &text, (o, p, q, k), doc.when, edited);
                        reach = reach.max(end);
                        let tokens = runs[before..].iter().map(|r| r.b - r.a).sum();
                        seen.insert(at, Found { piece, end, tokens });
                    }
                    let tokens: usize = repeated + runs[first_run..].iter().map(|r| r.b - r.a).sum::<usize>();
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
                    let (_, (a, b)) = push_runs(&mut runs, &fps, text, (o, p, q, k), doc.when, edited);
                    covered[a..b].iter_mut().for_each(|c| *c = true);
                    p = b.saturating_sub(k - 1).max(p + 1);
                }
                None => p += 1,
            }
        }
    }
    if edited {
        // Runs through edits: the shingles over their edited tokens are searched as an
        // unheld seed is.
        for r in runs.iter().filter(|r| r.parent.is_none()) {
            let over = |&e: &usize| (e + 1).saturating_sub(k).max(r.a)..=e.min(r.b.saturating_sub(k));
            unheld.extend(r.edits.iter().flat_map(over).map(|p| (r.origin, p)));
        }
        unheld.sort_unstable();
        unheld.dedup();
        later_versions(doc, (&fps, shingles), &mut runs, &unheld, (&mut text_of, &mut copiers));
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

/// Copiers of an origin read by [`align_with_copiers`], at most: the newest.
pub const MAX_COPIERS: usize = 32;

/// The third pass of [`align_with_copiers`]: a shingle found in the table under an
/// origin whose text does not hold it was put there by a later document that copied
/// from the origin, with edits, and whose own new shingles origin propagation
/// relabelled with the origin; a run through edits may be a copy of such a later
/// version too. `unheld` (origin, document token, sorted, distinct) are those
/// shingles and the shingles over the edited tokens of those runs. For each such
/// origin (the [`MAX_ORIGINS`] with the most of them), its copiers published before
/// this document are searched for them, and a run is aligned from each one found, as
/// the second pass does: a later version the document agrees with on more tokens then
/// owns them ([`passage_owners`]), and the origin is listed beside it as an earlier
/// holder. Costs nothing where every seed's origin holds it and every run is exact.
fn later_versions(
    doc: &Alignment<'_>,
    (fps, shingles): (&[u64], &[u64]),
    runs: &mut Vec<Run>,
    unheld: &[(u64, usize)],
    (text_of, copiers): (&mut impl FnMut(u64) -> Option<Arc<OriginText>>, &mut impl FnMut(u64) -> Vec<u64>),
) {
    let k = doc.rabin.k();
    // Each origin's seeds, the origins with the most first (the earlier on a tie).
    let mut origins: Vec<&[(u64, usize)]> = unheld.chunk_by(|a, b| a.0 == b.0).collect();
    origins.sort_by(|a, b| b.len().cmp(&a.len()).then((doc.when)(a[0].0).cmp(&(doc.when)(b[0].0))));
    origins.truncate(MAX_ORIGINS);
    let this = (doc.when)(doc.seq);
    let mut tried: Vec<u64> = Vec::new();
    for seeds in origins {
        let o = seeds[0].0;
        let mut later = copiers(o);
        later.retain(|&c| c != doc.seq && c != o && (doc.when)(c) < this);
        for c in later.into_iter().rev().take(MAX_COPIERS) {
            if tried.contains(&c) {
                continue;
            }
            tried.push(c);
            let Some(text) = text_of(c) else { continue };
            // The end of the runs found from this copier so far (the seeds are in order).
            let mut reach = 0;
            for &(_, p) in seeds {
                if p + k <= reach {
                    continue;
                }
                if let Some(q) = text.find(shingles[p]) {
                    let (_, (_, end)) = push_runs(runs, fps, &text, (c, p, q, k), doc.when, true);
                    reach = reach.max(end);
                }
            }
        }
    }
}

/// [`Attribution::Earliest`]: every token goes to the covering run of the earliest
/// origin (the first such run on a tie); `order[r]` is run `r`'s origin's order.
fn earliest_owners(n: usize, runs: &[Run], order: &[(i64, u64)]) -> Vec<usize> {
    owners_by(n, runs, |r| std::cmp::Reverse(order[r]), |_| true)
}

/// [`Attribution::Passage`]: every token goes to the run found in the document covering
/// it that agrees with the document on the most tokens (its span less its edited
/// tokens: a run through an edit spans words that differ), then the one with the fewest
/// tokens differing in either text (an exact run before one as long through words the
/// document leaves out), then the earlier origin, then the first run. The stretches its
/// origin's own result attributes to earlier documents do not split it: they are
/// listed beside the block ([`passages`]), as the other runs' earlier origins are.
fn passage_owners(n: usize, runs: &[Run], order: &[(i64, u64)]) -> Vec<usize> {
    use std::cmp::Reverse;
    let key = |r: &Run| (r.b - r.a - r.edits.len(), Reverse(r.edits.len() + r.left_out));
    owners_by(n, runs, |r| (key(&runs[r]), Reverse(order[r])), |r| runs[r].parent.is_none())
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
    // Each block's earlier documents, each with its order. A run is matched with the
    // blocks it overlaps only (the blocks are in token order and apart), not with all.
    let mut also: Vec<Vec<(AlsoEarlier, (i64, u64))>> = vec![Vec::new(); blocks.len()];
    for (run, &when) in runs.iter().zip(order) {
        let from = blocks.partition_point(|b| b.span.end_token as usize <= run.a);
        for (x, block) in blocks.iter().enumerate().skip(from) {
            let (a, b) = (block.span.start_token as usize, block.span.end_token as usize);
            if a >= run.b {
                break;
            }
            let (s, e) = (run.a.max(a), run.b.min(b));
            if run.origin == block.origin || when >= order[owner[a]] {
                continue;
            }
            match also[x].iter_mut().find(|(earlier, _)| earlier.origin == run.origin) {
                Some((earlier, _)) => {
                    earlier.start_token = earlier.start_token.min(s as u32);
                    earlier.end_token = earlier.end_token.max(e as u32);
                }
                None => {
                    also[x].push((AlsoEarlier { origin: run.origin, start_token: s as u32, end_token: e as u32 }, when))
                }
            }
        }
    }
    let mut out = Passages::default();
    for (block, mut also) in blocks.iter().zip(also) {
        let (a, b) = (block.span.start_token as usize, block.span.end_token as usize);
        // Every origin's order differs: the order is total.
        also.sort_by_key(|x| (x.1, x.0.start_token));
        also.truncate(MAX_ALSO);
        out.also_earlier.extend(also.into_iter().map(|x| x.0));
        out.edits.extend(runs[owner[a]].edits.iter().filter(|&&t| (a..b).contains(&t)).map(|&t| t as u32));
    }
    out
}

/// How many origins the second pass of [`align`] searches.
const MAX_ORIGINS: usize = 8;

/// Adds the run through the k-shingle at `p` in the document and `q` in origin `o`'s
/// `text` (through light edits when `edited`), and, inside it, a run for each stretch
/// the origin's own result attributes to an earlier document (the earliest source is
/// the origin's origin), if it holds a k-shingle; returns the document tokens of the
/// exact piece through the seed and of the run.
fn push_runs(
    runs: &mut Vec<Run>,
    fps: &[u64],
    text: &OriginText,
    (o, p, q, k): (u64, usize, usize, usize),
    when: When<'_>,
    edited: bool,
) -> ((usize, usize), (usize, usize)) {
    let seed = extend(fps, &text.tokens, p, q, k);
    let pieces = if edited { extend_edited(fps, &text.tokens, seed) } else { vec![seed] };
    let (a, b) = (pieces[0].0, pieces[pieces.len() - 1].1);
    let edits = pieces.windows(2).flat_map(|w| w[0].1..w[1].0).collect();
    let left_out = pieces.windows(2).map(|w| w[1].2 - (w[0].2 + w[0].1 - w[0].0)).sum();
    let parent = runs.len();
    runs.push(Run { a, b, origin: o, parent: None, edits, left_out });
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
                runs.push(Run { a, b, origin: earlier, parent: Some(parent), edits: Vec::new(), left_out: 0 });
            }
        }
    }
    ((seed.0, seed.1), (a, b))
}

/// The common run of the document's tokens `fps` and an origin's `tokens` through the
/// k-shingle at `p` in the document and `q` in the origin: (first, one past the last)
/// document token, and the origin token of the first.
fn extend(fps: &[u64], tokens: &[u64], p: usize, q: usize, k: usize) -> (usize, usize, usize) {
    let back = fps[..p].iter().rev().zip(tokens[..q].iter().rev()).take_while(|(a, b)| a == b).count();
    let ahead = fps[p + k..].iter().zip(&tokens[q + k..]).take_while(|(a, b)| a == b).count();
    (p - back, p + k + ahead, q - back)
}

/// [`extend`] through light edits: from the exact run `seed` on either side, past up to
/// [`MAX_EDIT`] tokens replaced, inserted or left out, as long as the next
/// [`MIN_AFTER_EDIT`] tokens agree again (the smallest edit first); the exact pieces, in
/// order, as (document start, end, origin start).
fn extend_edited(fps: &[u64], tokens: &[u64], seed: (usize, usize, usize)) -> Vec<(usize, usize, usize)> {
    let m = MIN_AFTER_EDIT;
    let ahead = |d: usize, o: usize| match (fps.get(d..), tokens.get(o..)) {
        (Some(x), Some(y)) => x.iter().zip(y).take_while(|(a, b)| a == b).count(),
        _ => 0,
    };
    let back =
        |d: usize, o: usize| fps[..d].iter().rev().zip(tokens[..o].iter().rev()).take_while(|(a, b)| a == b).count();
    let mut pieces = std::collections::VecDeque::from([seed]);
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
mod tests;
