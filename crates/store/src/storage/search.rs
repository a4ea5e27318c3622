//! The searches beside the store: a new document's near-duplicates and quotations among
//! the earlier documents'. Candidates come from the derived indexes
//! (`textorigin_core::index`: a region of the table file, or a deployment's shards'
//! answers); the earlier documents' sketches, sentences and texts from the [`Store`]
//! (through its caches, computed again from the stored texts by the [`Recomputer`],
//! which holds the searches' configurations); the verdicts and scores
//! from `textorigin_core::neardup` and `textorigin_core::quote`. The store records what
//! they find ([`Store::put_document`]) and runs no search itself.

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
    let exact = |c: u64| -> Result<Option<f64>> {
        let Some((engine, tokens)) = verify else { return Ok(None) };
        let Some(other) = recompute::origin_text(store, engine, c)? else { return Ok(None) };
        let own =
            own.get_or_insert_with(|| neardup::shingle_set(&tokens.iter().map(|t| t.fp).collect::<Vec<u64>>(), cfg.k));
        Ok(Some(neardup::exact_resemblance(own, &neardup::shingle_set(other.tokens(), cfg.k))))
    };
    let (late, found) =
        neardup::verified_verdicts(cfg, &sketch, others, exact)?.into_iter().partition(|d| later(d.seq));
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
