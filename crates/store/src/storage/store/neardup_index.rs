//! Near-duplicate data in the store: the recorded verdicts (`nd_result`, and `nd_later`
//! seen from the earlier document) and the sketches an older build stored where this
//! one computes otherwise (since schema 16 they are computed again from the stored
//! texts: `crate::storage::recompute`). The search itself is beside the store
//! ([`crate::storage::search::near_dups`]).
//!
//! A pair is oriented by publication: a document that arrives after a
//! near-duplicate published later than it is that one's earlier near-duplicate. Its
//! verdict goes to `nd_late` (key: the later-published document, the late arrival)
//! and to `nd_later` under the late arrival; the stored `nd_result` of the other is
//! never rewritten. [`Store::near_dups`] reads both. The verdicts are symmetric, so the
//! pairs and their orientation are those of a run in publication order.

use std::sync::Arc;

use rocksdb::WriteBatch;
use textorigin_core::neardup::{NearDup, Sketch};

use super::{Result, Store, CF_ND_LATE, CF_ND_LATER, CF_ND_RESULT, CF_ND_SKETCH};

/// A document's near-duplicate data, ready to be written with it.
#[derive(Debug, Clone)]
pub struct NearDupWrite {
    /// None for an exact copy answered without one (its earlier copy's is the same).
    pub sketch: Option<Arc<Sketch>>,
    /// Earlier documents with at least one verdict, by sequence number.
    pub found: Vec<NearDup>,
    /// Documents that arrived earlier but were published later, with at least one
    /// verdict: this document is their earlier near-duplicate.
    pub late: Vec<NearDup>,
    /// Its index keys ([`textorigin_core::index::nd_keys`]), for the derived index.
    pub keys: Vec<u64>,
}

impl Store {
    /// The sketch an older build stored for document `seq` (none for a document stored
    /// since schema 16, which computes it again).
    pub(crate) fn stored_sketch(&self, seq: u64) -> Result<Option<Sketch>> {
        self.read(CF_ND_SKETCH, &seq)
    }

    /// Adds a document's near-duplicate data to a batch.
    pub(crate) fn add_near_dups(&self, b: &mut WriteBatch, seq: u64, nd: &NearDupWrite) {
        self.put(b, CF_ND_RESULT, &seq, &nd.found);
        for d in &nd.found {
            self.put(b, CF_ND_LATER, &(d.seq, seq), &NearDup { seq, ..*d });
        }
        for d in &nd.late {
            self.put(b, CF_ND_LATER, &(seq, d.seq), d);
            self.put(b, CF_ND_LATE, &(d.seq, seq), &NearDup { seq, ..*d });
        }
    }

    /// Deletes document `seq`'s verdicts, and the sketch an older build stored for it
    /// (before a re-analysis, which computes it as this build does).
    pub(super) fn delete_near_dups(&self, b: &mut WriteBatch, seq: u64) {
        self.delete(b, CF_ND_SKETCH, &seq);
        self.delete(b, CF_ND_RESULT, &seq);
    }

    /// The earlier-published near-duplicates of document `seq` (every verdict), the
    /// earliest published first (equal times by arrival): those found when it arrived
    /// and those that arrived after it.
    pub fn near_dups(&self, seq: u64) -> Result<Vec<NearDup>> {
        let mut out = self.read(CF_ND_RESULT, &seq)?.unwrap_or_default();
        out.extend(self.pairs(CF_ND_LATE, seq)?.into_iter().map(|(_, d)| d));
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

    /// Every verdict of document `seq`, unsorted: those it found, and of those found
    /// later, oriented either way, the first `limit` of each kind by sequence number
    /// (an exact copy's pairs, `crate::storage::search::copy_near_dups`: a text copied
    /// 50,000 times has as many pairs, and each copy would read them all).
    pub fn near_dup_pairs(&self, seq: u64, limit: usize) -> Result<Vec<NearDup>> {
        let mut out = self.read(CF_ND_RESULT, &seq)?.unwrap_or_default();
        for cf in [CF_ND_LATE, CF_ND_LATER] {
            out.extend(self.first_pairs(cf, seq, limit)?.into_iter().map(|(_, d)| d));
        }
        Ok(out)
    }

    /// The later-published documents that are near-duplicates of `seq`.
    pub fn near_dups_later(&self, seq: u64) -> Result<Vec<NearDup>> {
        Ok(self.pairs(CF_ND_LATER, seq)?.into_iter().map(|(_, d)| d).collect())
    }
}
