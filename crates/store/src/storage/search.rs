//! The searches beside the store: a new document's near-duplicates and quotations among
//! the earlier documents'. Candidates come from the derived indexes
//! (`textorigin_core::index`: a region of the table file, or a deployment's shards'
//! answers); the earlier documents' sketches, sentences and texts from the [`Store`]
//! (through its caches, computed again from the stored texts by the [`Recomputer`],
//! which holds the searches' configurations); the verdicts and scores
//! from `textorigin_core::neardup` and `textorigin_core::quote`. The store records what
//! they find ([`Store::put_document`]) and runs no search itself.

use std::collections::HashMap;
use std::sync::Arc;

use textorigin_core::engine::Engine;
use textorigin_core::index::{self, IndexLookup};
use textorigin_core::neardup::{self, Sketch};
use textorigin_core::quote::{self, QuoteConfig, QuoteFind, Sentence, SentenceIndex, SharedSentence};
use textorigin_core::text::Token;

use super::recompute::{self, Recomputer};
use super::store::{NearDupWrite, Result, Store, StoreError};

/// Compares a new document's sketch with every earlier document that shares an index
/// key with it (found through `indexes`); those for which `later` holds were published
/// after it. With `verify` (the engine and the document's tokens), a pair near the
/// threshold is decided by the exact resemblance of the two documents' shingles
/// ([`NearDupConfig::verify`](textorigin_core::neardup::NearDupConfig::verify)), the
/// other's read from its stored text as alignment reads it. The near-duplicate
/// configuration is `rc`'s.
pub fn near_dups(
    store: &Store,
    rc: &Recomputer,
    seq: u64,
    sketch: impl Into<Arc<Sketch>>,
    indexes: &(impl IndexLookup + ?Sized),
    later: impl Fn(u64) -> bool,
    verify: Option<(&Engine, &[Token])>,
) -> Result<NearDupWrite> {
    let cfg = rc.neardup();
    let sketch = sketch.into();
    let keys = index::nd_keys(cfg, &sketch);
    let mut others = Vec::new();
    for c in indexes.nd_candidates(cfg, seq, &keys) {
        if let Some(other) = rc.sketch(store, c)? {
            others.push((c, other));
        }
    }
    let mut own: Option<Vec<u64>> = None;
    // Candidates of one text (copies of one document) have one resemblance: each text
    // is read and compared once (its hash from the candidate's metadata).
    let mut by_text: HashMap<u128, Option<f64>> = HashMap::new();
    let exact = |c: u64| -> Result<Option<f64>> {
        let Some((engine, tokens)) = verify else { return Ok(None) };
        let text = store.text_hash(c)?;
        if let Some(known) = text.and_then(|h| by_text.get(&h)) {
            return Ok(*known);
        }
        let Some(other) = recompute::origin_text(store, engine, c)? else { return Ok(None) };
        let own =
            own.get_or_insert_with(|| neardup::shingle_set(&tokens.iter().map(|t| t.fp).collect::<Vec<u64>>(), cfg.k));
        let j = Some(neardup::exact_resemblance(own, &neardup::shingle_set(other.tokens(), cfg.k)));
        if let Some(h) = text {
            by_text.insert(h, j);
        }
        Ok(j)
    };
    let (late, found) =
        neardup::verified_verdicts(cfg, &sketch, others, exact)?.into_iter().partition(|d| later(d.seq));
    Ok(NearDupWrite { sketch: Some(sketch), found, late, keys })
}

/// The near-duplicates of document `seq`, an exact copy of the earlier document `of`
/// (the same tokens, so the same sketch, `sketch` where it was made, and index `keys`),
/// without a search: `of` itself, identical, and every document `of` has a verdict
/// with, earlier or later, with that verdict. A verdict is a function of the two
/// sketches and the two texts' shingles, the same for the copy as for `of`, and the
/// candidates of a search are the documents sharing an index key with `of`'s sketch:
/// the search would find these pairs, `of`'s earlier copies among them, and keep the
/// same [`neardup::MAX_PAIRS`] closest of them (of the pairs found after `of`, the
/// first 200 of each orientation are read: of a text copied thousands of times, its
/// earliest copies, the closest). Those for which `later` holds were published after
/// it.
pub fn copy_near_dups(
    store: &Store,
    rc: &Recomputer,
    (seq, of): (u64, u64),
    (sketch, keys): (Option<Arc<Sketch>>, Vec<u64>),
    later: impl Fn(u64) -> bool,
) -> Result<NearDupWrite> {
    let mut pairs = vec![neardup::identical(rc.neardup(), of)];
    // Of a heavily copied text the earliest pairs: its copies, exact, are the closest,
    // and the earliest of equals are kept.
    let limit = 2 * neardup::MAX_PAIRS;
    pairs.extend(store.near_dup_pairs(of, limit)?.into_iter().filter(|d| d.seq != seq));
    // As a search gives them: by sequence number.
    pairs.sort_by_key(|d| d.seq);
    let (late, found) = neardup::closest(pairs).into_iter().partition(|d| later(d.seq));
    Ok(NearDupWrite { sketch, found, late, keys })
}

/// Finds the quotations of a new document's sentences among the earlier documents'
/// (found through `indexes`); those for which `later` holds were published after it
/// ([`quote::find`]), with `rc`'s quotation configuration.
pub fn quotations(
    store: &Store,
    rc: &Recomputer,
    seq: u64,
    sentences: Vec<Sentence>,
    indexes: &(impl IndexLookup + ?Sized),
    later: impl Fn(u64) -> bool,
) -> Result<QuoteFind> {
    quote::find(&Earlier { store, rc, indexes, seq }, rc.quote(), seq, sentences, later)
}

/// The earlier documents' sentences as quotation search sees them: candidates and
/// frequencies from the derived indexes, sentences from the store.
struct Earlier<'a, L: ?Sized> {
    store: &'a Store,
    rc: &'a Recomputer,
    indexes: &'a L,
    /// The document searching.
    seq: u64,
}

impl<L: IndexLookup + ?Sized> SentenceIndex for Earlier<'_, L> {
    type Error = StoreError;

    fn documents(&self) -> Result<u64> {
        Ok(self.indexes.documents())
    }

    fn df(&self, word: u64) -> Result<u64> {
        Ok(self.indexes.df(word))
    }

    fn candidates(&self, cfg: &QuoteConfig, sig: u64, d: u32) -> Result<(Vec<(u64, u32, u32)>, u64)> {
        self.indexes.quote_candidates(cfg, sig, d).map_err(|source| StoreError::Unanswered { seq: self.seq, source })
    }

    fn sentence(&self, seq: u64, idx: u32) -> Result<Option<SharedSentence>> {
        self.rc.sentence(self.store, seq, idx)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use rocksdb::WriteBatch;
    use textorigin_core::config::Config;
    use textorigin_core::neardup::NearDupConfig;
    use textorigin_core::text::{tokenize, Terms};

    use super::*;
    use crate::storage::store::tests::{meta, put_bare};
    use crate::storage::store::CF_TEXT;

    /// Candidates 1 and 2, whatever is asked.
    struct Two;

    impl IndexLookup for Two {
        fn documents(&self) -> u64 {
            2
        }
        fn df(&self, _: u64) -> u64 {
            0
        }
        fn quote_candidates(
            &self,
            _: &QuoteConfig,
            _: u64,
            _: u32,
        ) -> std::result::Result<(Vec<(u64, u32, u32)>, u64), index::Unanswered> {
            Ok((Vec::new(), 0))
        }
        fn nd_candidates(&self, _: &neardup::NearDupConfig, _: u64, _: &[u64]) -> BTreeSet<u64> {
            BTreeSet::from([1, 2])
        }
    }

    /// Copies of one text have one exact resemblance: the second copy's is the first's,
    /// its text neither read nor compared again (it is deleted here, so without that
    /// its verdict would keep the estimate).
    #[test]
    fn copies_of_one_text_are_verified_once() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path()).unwrap();
        let (cfg, nd) = (Config::default(), NearDupConfig::default());
        let rc = Recomputer::new(Terms::Words, nd.clone(), QuoteConfig::default());
        let engine = Engine::new(cfg.clone());
        let mut g = textorigin_core::testdata::XorShift::new(7);
        let words: Vec<String> = (0..400).map(|_| format!("w{}", g.below(5000))).collect();
        let text = words.join(" ");
        let hash = format!("{:032x}", xxhash_rust::xxh3::xxh3_128(text.as_bytes()));
        for seq in [1, 2] {
            put_bare(&s, &crate::storage::store::DocMeta { content_hash: hash.clone(), ..meta(seq, "copy") }, &text);
        }
        let tokens_of = |t: &str| {
            let mut tokens = Vec::new();
            tokenize(t, engine.rabin(), &mut tokens);
            tokens
        };
        // A variant whose estimate falls near the threshold, not on its exact value.
        let own = rc.sketch(&s, 1).unwrap().unwrap();
        let (variant, sketch) = (1..200)
            .map(|n| {
                let mut w = words.clone();
                (0..n).for_each(|i| w[(i * 37) % 400] = format!("x{i}"));
                let v = w.join(" ");
                let sketch = rc.sketch_of(&v);
                (v, sketch)
            })
            .find(|(_, sk)| {
                let d = neardup::compare(&nd, 1, sk, &own);
                (d.resemblance - nd.threshold).abs() < neardup::verify_window(&nd) && !d.exact
            })
            .expect("a variant near the threshold");
        let tokens = tokens_of(&variant);
        let mut b = WriteBatch::default();
        s.delete(&mut b, CF_TEXT, &2);
        s.write(b, true).unwrap();
        let found = near_dups(&s, &rc, 3, sketch.clone(), &Two, |_| false, Some((&engine, &tokens))).unwrap().found;
        let estimate = neardup::compare(&nd, 1, &sketch, &own).resemblance;
        assert_eq!(found.iter().map(|d| d.seq).collect::<Vec<_>>(), [1, 2], "{found:?}");
        assert_ne!(found[0].resemblance, estimate, "the first copy's is the exact resemblance");
        assert_eq!(found[1].resemblance, found[0].resemblance, "{found:?}");
    }
}
