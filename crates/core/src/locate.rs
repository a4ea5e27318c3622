//! Where copied blocks stand in their source, for the side-by-side views.
//!
//! A copied block names its origin and its own tokens; a reader comparing the two texts
//! also needs the passage of the origin it came from, and which words were edited.
//! The block's runs were found through selected shingles, which keep no positions in
//! the origin, so the place is found again from the two token streams:
//!
//! 1. **Anchors**: every [`ANCHOR`]-token gram of the blocks (one map for all blocks of
//!    one origin) is looked up along the origin in one pass, `O(origin + blocks)` time
//!    and memory of the blocks only, however long the origin (a gram the origin holds
//!    more than [`MAX_REPEATS`] times, a stock phrase, is no anchor).
//! 2. **Chain**: a block's anchors `(i, j)` (block token `i`, origin token `j`) form
//!    the best chain increasing in both, each anchor a gain and each step's skew (an
//!    insertion or deletion) a cost (`chain`): the copy in order, through
//!    substitutions, insertions and deletions, and past decoys (the block's phrases
//!    elsewhere in the origin).
//! 3. **Span and edits**: the anchors' tokens are matched, the tokens between two
//!    anchors by their longest common subsequence (a stock phrase there is matched
//!    though it anchors nothing), and equal tokens before the first anchor and after
//!    the last; the origin's passage runs from the first matched token to the last, and
//!    a token matched to none is edited (on either side).
//!
//! A block with no anchor (shorter than [`ANCHOR`] tokens, or wholly made of stock
//! phrases) is not located. `tests` checks planted copies with substitutions against the
//! positions planted (property test).

use std::collections::HashMap;

/// Tokens of an anchor gram.
pub const ANCHOR: usize = 3;
/// A gram the origin holds more often than this is no anchor.
pub const MAX_REPEATS: usize = 64;
/// What an anchor adds to a chain; a step costs its skew in tokens.
const STEP_SCORE: i64 = 8;
/// The furthest step of a chain, in block tokens (a stock phrase, no anchor, may stand
/// between two anchors).
const MAX_STEP: u32 = 128;
/// The largest skew of a step, in tokens (an insertion or deletion).
const MAX_SKEW: i64 = 32;

/// Where a block stands in its source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// The source's tokens `start..end`.
    pub start: usize,
    pub end: usize,
    /// For each of the block's tokens: whether the source holds it at its place.
    pub block_matched: Vec<bool>,
    /// For each source token of `start..end`: whether the block holds it.
    pub source_matched: Vec<bool>,
}

impl Located {
    /// The block's edited tokens (indexes into the block).
    pub fn block_edits(&self) -> impl Iterator<Item = usize> + '_ {
        self.block_matched.iter().enumerate().filter(|(_, m)| !**m).map(|(i, _)| i)
    }

    /// The source's tokens of the passage the block does not hold (indexes into the
    /// source).
    pub fn source_edits(&self) -> impl Iterator<Item = usize> + '_ {
        self.source_matched.iter().enumerate().filter(|(_, m)| !**m).map(move |(j, _)| self.start + j)
    }
}

/// The places of `blocks` (each a run of token fingerprints) in `source`, each found
/// alone (see the module docs).
pub fn locate_all(blocks: &[&[u64]], source: &[u64]) -> Vec<Option<Located>> {
    // Gram → (block, position) of every anchor of every block.
    let mut grams: HashMap<&[u64], Vec<(u32, u32)>> = HashMap::new();
    for (b, block) in blocks.iter().enumerate() {
        for (i, g) in block.windows(ANCHOR).enumerate() {
            grams.entry(g).or_default().push((b as u32, i as u32));
        }
    }
    let mut repeats: HashMap<&[u64], usize> = HashMap::new();
    for g in source.windows(ANCHOR) {
        if grams.contains_key(g) {
            *repeats.entry(g).or_default() += 1;
        }
    }
    let mut anchors: Vec<Vec<(u32, u32)>> = vec![Vec::new(); blocks.len()];
    for (j, g) in source.windows(ANCHOR).enumerate() {
        if repeats.get(g).is_some_and(|&n| n <= MAX_REPEATS) {
            for &(b, i) in &grams[g] {
                anchors[b as usize].push((i, j as u32));
            }
        }
    }
    anchors.into_iter().zip(blocks).map(|(a, block)| located(block, source, &chain(a))).collect()
}

/// The best chain of anchors increasing in both the block and the source: each anchor
/// counts [`STEP_SCORE`], and each step costs its skew (how much further it goes in one
/// text than in the other: an insertion or a deletion), so that the copy in place wins
/// over a chain as long that jumps to a decoy. A step spans at most [`MAX_STEP`] block
/// tokens and [`MAX_SKEW`] of skew; `O(anchors · MAX_STEP)`.
fn chain(mut anchors: Vec<(u32, u32)>) -> Vec<(u32, u32)> {
    anchors.sort_unstable();
    let mut score: Vec<i64> = Vec::with_capacity(anchors.len());
    let mut before: Vec<Option<usize>> = Vec::with_capacity(anchors.len());
    let mut first = 0; // the first anchor within MAX_STEP block tokens of this one
    for (n, &(i, j)) in anchors.iter().enumerate() {
        while anchors[first].0 + MAX_STEP < i {
            first += 1;
        }
        let (mut best, mut from) = (STEP_SCORE, None);
        for (p, &(pi, pj)) in anchors.iter().enumerate().take(n).skip(first) {
            if pi >= i || pj >= j {
                continue;
            }
            let skew = i64::from(j - pj).abs_diff(i64::from(i - pi)) as i64;
            if skew <= MAX_SKEW && score[p] + STEP_SCORE - skew > best {
                (best, from) = (score[p] + STEP_SCORE - skew, Some(p));
            }
        }
        score.push(best);
        before.push(from);
    }
    let mut out = Vec::new();
    // The best end; the earliest of equals (the first copy in the source).
    let mut at = (0..anchors.len()).rev().max_by_key(|&n| score[n]);
    while let Some(n) = at {
        out.push(anchors[n]);
        at = before[n];
    }
    out.reverse();
    out
}

/// The place the chain gives: its anchors' tokens matched, the tokens between two
/// anchors matched by their longest common subsequence (a stock phrase, no anchor, is
/// matched there too), and the equal tokens before the first anchor and after the last.
fn located(block: &[u64], source: &[u64], chain: &[(u32, u32)]) -> Option<Located> {
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    for (n, &(i, j)) in chain.iter().enumerate() {
        let (i, j) = (i as usize, j as usize);
        pairs.extend((0..ANCHOR).map(|t| (i + t, j + t)));
        if let Some(&(ni, nj)) = chain.get(n + 1) {
            let (bi, bj) = (i + ANCHOR, j + ANCHOR);
            if (ni as usize) > bi && (nj as usize) > bj {
                let common = lcs(&block[bi..ni as usize], &source[bj..nj as usize]);
                pairs.extend(common.into_iter().map(|(x, y)| (bi + x, bj + y)));
            }
        }
    }
    let (&(i0, j0), &(i1, j1)) = (pairs.first()?, pairs.last()?);
    let before = (1..=i0.min(j0)).take_while(|&t| block[i0 - t] == source[j0 - t]).count();
    let after = (1..block.len().saturating_sub(i1).min(source.len() - j1))
        .take_while(|&t| block[i1 + t] == source[j1 + t])
        .count();
    pairs.extend((1..=before).map(|t| (i0 - t, j0 - t)));
    pairs.extend((1..=after).map(|t| (i1 + t, j1 + t)));
    let start = pairs.iter().map(|p| p.1).min()?;
    let end = pairs.iter().map(|p| p.1).max()? + 1;
    let mut block_matched = vec![false; block.len()];
    let mut source_matched = vec![false; end - start];
    for (i, j) in pairs {
        block_matched[i] = true;
        source_matched[j - start] = true;
    }
    Some(Located { start, end, block_matched, source_matched })
}

/// A longest common subsequence of `a` and `b` (short: the tokens between two anchors),
/// as pairs of positions.
fn lcs(a: &[u64], b: &[u64]) -> Vec<(usize, usize)> {
    let w = b.len() + 1;
    let mut len = vec![0u32; (a.len() + 1) * w];
    for x in (0..a.len()).rev() {
        for y in (0..b.len()).rev() {
            len[x * w + y] = match a[x] == b[y] {
                true => len[(x + 1) * w + y + 1] + 1,
                false => len[(x + 1) * w + y].max(len[x * w + y + 1]),
            };
        }
    }
    let (mut x, mut y, mut out) = (0, 0, Vec::new());
    while x < a.len() && y < b.len() {
        if a[x] == b[y] {
            out.push((x, y));
            (x, y) = (x + 1, y + 1);
        } else if len[(x + 1) * w + y] >= len[x * w + y + 1] {
            x += 1;
        } else {
            y += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn words(s: &str) -> Vec<u64> {
        s.split_whitespace()
            .map(|w| w.bytes().fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b))))
            .collect()
    }

    #[test]
    fn a_copy_through_an_insertion_a_deletion_and_a_decoy() {
        // A decoy ("the quick brown fox") before the copied sentence.
        let source = words(
            "the quick brown fox sleeps . later the quick brown fox jumps over the lazy dog and runs far away into the woods tonight",
        );
        // The second sentence with "high" inserted and "far" deleted.
        let block = words("the quick brown fox jumps high over the lazy dog and runs away into the woods tonight");
        let got = locate_all(&[&block], &source).pop().unwrap().unwrap();
        assert_eq!((got.start, got.end), (7, source.len()), "the second sentence, not the decoy");
        assert_eq!(got.block_edits().collect::<Vec<_>>(), vec![5], "`high` is the block's own");
        assert_eq!(got.source_edits().collect::<Vec<_>>(), vec![18], "`far` was dropped");
    }

    #[test]
    fn a_stock_phrase_inside_a_copy_is_no_edit() {
        // A signature line the source repeats far more often than any anchor may.
        let stock = "richard henderson rth at cygnus dot com";
        let mut source = String::new();
        for n in 0..(MAX_REPEATS + 10) {
            source += &format!("entry {n} fixes a bug in file{n} . {stock} . ");
        }
        source += &format!(
            "the alpha port now simplifies add operand checks . {stock} . and the mips port drops an old hack ."
        );
        let source = words(&source);
        let block = words(&format!(
            "the alpha port now simplifies add operand checks . {stock} . and the mips port drops an old hack"
        ));
        let got = locate_all(&[&block], &source).pop().unwrap().unwrap();
        assert_eq!((got.start, got.end), (source.len() - block.len() - 1, source.len() - 1));
        assert_eq!(got.block_edits().count(), 0, "the stock phrase is matched between the anchors");
        assert_eq!(got.source_edits().count(), 0);
    }

    #[test]
    fn a_block_with_no_anchor_is_not_located() {
        let source = words("one two three four five");
        assert_eq!(locate_all(&[&words("six seven eight"), &words("one two")], &source), vec![None, None]);
    }

    proptest! {
        /// A block copied from a random place of a random source, with substitutions at
        /// least `ANCHOR + 1` tokens apart and off its ends: found at exactly that place,
        /// and its edited tokens are exactly those substituted, on both sides.
        #[test]
        fn planted_copies_are_found_where_planted(
            source in proptest::collection::vec(0u64..400, 60..400),
            at in 0usize..1000,
            len in 12usize..60,
            subs in proptest::collection::btree_set(0usize..60, 0..6),
        ) {
            let start = at % (source.len() - len);
            let mut block = source[start..start + len].to_vec();
            let mut planted: Vec<usize> = Vec::new();
            for &s in &subs {
                let s = s % len;
                let spaced = planted.last().is_none_or(|&p| s > p + ANCHOR);
                if s >= ANCHOR && s + ANCHOR < len && spaced {
                    block[s] = 1_000_000 + s as u64; // a word the source lacks
                    planted.push(s);
                }
            }
            // The brute-force reference: the planted place, unless the same block text
            // (its anchors) also stands elsewhere in the source as long a chain.
            let got = locate_all(&[&block], &source).pop().unwrap().expect("a planted block has anchors");
            let edits: Vec<usize> = got.block_edits().collect();
            let dropped: Vec<usize> = got.source_edits().map(|j| j - got.start).collect();
            let elsewhere = (0..source.len() - len).filter(|&s| s != start).any(|s| {
                (0..len).filter(|i| !planted.contains(i)).all(|i| source[s + i] == block[i])
            });
            if !elsewhere {
                prop_assert_eq!((got.start, got.end), (start, start + len));
                prop_assert_eq!(&edits, &planted);
                prop_assert_eq!(&dropped, &planted);
            }
        }
    }
}
