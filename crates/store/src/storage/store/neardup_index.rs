//! Near-duplicate data in the store: the recorded verdicts (`nd_result`, and `nd_later`
//! seen from the earlier document) and the sketches searches read (computed again from
//! the stored texts since schema 16: [`super::recompute`]). Candidates come from
//! the derived key index in the table file (`textorigin_core::index`); the verdicts
//! are computed by `textorigin_core::neardup`.
//!
//! A pair is oriented by publication: a document that arrives after a
//! near-duplicate published later than it is that one's earlier near-duplicate. Its
//! verdict goes to `nd_late` (key: the later-published document, the late arrival)
//! and to `nd_later` under the late arrival; the stored `nd_result` of the other is
//! never rewritten. [`Store::near_dups`] reads both. The verdicts are symmetric, so the
//! pairs and their orientation are those of a run in publication order.

use std::sync::Arc;

use rocksdb::WriteBatch;
use textorigin_core::engine::Engine;
use textorigin_core::index::{self, IndexLookup};
use textorigin_core::neardup::{self, NearDup, NearDupConfig, Sketch};
use textorigin_core::text::Token;

use super::codec::{encode, pair_key, seq_key};
use super::{Result, Store, CF_ND_LATE, CF_ND_LATER, CF_ND_RESULT, CF_ND_SKETCH};

/// A document's near-duplicate data, ready to be written with it.
#[derive(Debug, Clone)]
pub struct NearDupWrite {
    pub sketch: Arc<Sketch>,
    /// Earlier documents with at least one verdict, by sequence number.
    pub found: Vec<NearDup>,
    /// Documents that arrived earlier but were published later, with at least one
    /// verdict: this document is their earlier near-duplicate.
    pub late: Vec<NearDup>,
    /// Its index keys ([`index::nd_keys`]), for the derived index.
    pub keys: Vec<u64>,
}

impl Store {
    /// The sketch of document `seq` (computed again from its stored text since schema
    /// 16: [`super::recompute`]).
    pub fn sketch(&self, seq: u64) -> Result<Option<Arc<Sketch>>> {
        if let Some(s) = self.caches.sketches.get(&seq) {
            return Ok(Some(s));
        }
        let Some(s) = self.recompute_sketch(seq)? else { return Ok(None) };
        self.cache_sketch(seq, &s);
        Ok(Some(s))
    }

    /// Keeps document `seq`'s sketch for the searches that read it.
    pub(super) fn cache_sketch(&self, seq: u64, s: &Arc<Sketch>) {
        self.caches.sketches.put(seq, Arc::clone(s), super::cache::sketch_bytes(s));
    }

    /// Compares a new document's sketch with every earlier document that shares an
    /// index key with it (found through `indexes`); those for which `later` holds were
    /// published after it. With `verify` (the engine and the document's tokens), a
    /// pair near the threshold is decided by the exact resemblance of the two
    /// documents' shingles ([`NearDupConfig::verify`]), the other's read from its stored
    /// text as alignment reads it.
    pub fn near_dup_write(
        &self,
        cfg: &NearDupConfig,
        seq: u64,
        sketch: impl Into<Arc<Sketch>>,
        indexes: &(impl IndexLookup + ?Sized),
        later: impl Fn(u64) -> bool,
        verify: Option<(&Engine, &[Token])>,
    ) -> Result<NearDupWrite> {
        let sketch = sketch.into();
        let keys = index::nd_keys(cfg, &sketch);
        let mut others = Vec::new();
        for c in indexes.nd_candidates(cfg, seq, &keys) {
            if let Some(other) = self.sketch(c)? {
                others.push((c, other));
            }
        }
        let mut own: Option<Vec<u64>> = None;
        let exact = |c: u64| -> Result<Option<f64>> {
            let Some((engine, tokens)) = verify else { return Ok(None) };
            let Some(other) = self.origin_text(engine, c)? else { return Ok(None) };
            let own = own
                .get_or_insert_with(|| neardup::shingle_set(&tokens.iter().map(|t| t.fp).collect::<Vec<u64>>(), cfg.k));
            Ok(Some(neardup::exact_resemblance(own, &neardup::shingle_set(other.tokens(), cfg.k))))
        };
        let (late, found) =
            neardup::verified_verdicts(cfg, &sketch, others, exact)?.into_iter().partition(|d| later(d.seq));
        Ok(NearDupWrite { sketch, found, late, keys })
    }

    /// Adds a document's near-duplicate data to a batch.
    pub(super) fn add_near_dups(&self, b: &mut WriteBatch, seq: u64, nd: &NearDupWrite) {
        let key = seq_key(seq);
        b.put_cf(self.cf(CF_ND_RESULT), key, encode(&nd.found));
        for d in &nd.found {
            let later = NearDup { seq, ..*d };
            b.put_cf(self.cf(CF_ND_LATER), pair_key(d.seq, seq), encode(&later));
        }
        for d in &nd.late {
            b.put_cf(self.cf(CF_ND_LATER), pair_key(seq, d.seq), encode(d));
            b.put_cf(self.cf(CF_ND_LATE), pair_key(d.seq, seq), encode(&NearDup { seq, ..*d }));
        }
    }

    /// Deletes document `seq`'s verdicts, and the sketch an older build stored for it
    /// (before a re-analysis, which computes it as this build does).
    pub(super) fn delete_near_dups(&self, b: &mut WriteBatch, seq: u64) {
        b.delete_cf(self.cf(CF_ND_SKETCH), seq_key(seq));
        b.delete_cf(self.cf(CF_ND_RESULT), seq_key(seq));
    }

    /// The earlier-published near-duplicates of document `seq` (every verdict), the
    /// earliest published first (equal times by arrival): those found when it arrived
    /// and those that arrived after it.
    pub fn near_dups(&self, seq: u64) -> Result<Vec<NearDup>> {
        let mut out: Vec<NearDup> = self
            .get(CF_ND_RESULT, &seq_key(seq))?
            .map(|v| self.decode("near-duplicates", &v))
            .transpose()?
            .unwrap_or_default();
        for (_, v) in self.pairs(CF_ND_LATE, seq)? {
            out.push(self.decode("near-duplicate", &v)?);
        }
        if out.len() > 1 {
            let mut keyed = Vec::with_capacity(out.len());
            for d in out {
                keyed.push((self.publication_key(d.seq)?, d));
            }
            keyed.sort_by_key(|x| x.0);
            out = keyed.into_iter().map(|x| x.1).collect();
        }
        Ok(out)
    }

    /// The later-published documents that are near-duplicates of `seq`.
    pub fn near_dups_later(&self, seq: u64) -> Result<Vec<NearDup>> {
        self.pairs(CF_ND_LATER, seq)?.into_iter().map(|(_, v)| self.decode("near-duplicate", &v)).collect()
    }
}
