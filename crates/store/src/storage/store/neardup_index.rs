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
    /// Its index keys ([`textorigin_core::index::nd_keys`]), for the derived index.
    pub keys: Vec<u64>,
}

impl Store {
    /// The sketch an older build stored for document `seq` (none for a document stored
    /// since schema 16, which computes it again).
    pub(crate) fn stored_sketch(&self, seq: u64) -> Result<Option<Sketch>> {
        self.get(CF_ND_SKETCH, &seq_key(seq))?.map(|v| self.decode("sketch", &v)).transpose()
    }

    /// Adds a document's near-duplicate data to a batch.
    pub(crate) fn add_near_dups(&self, b: &mut WriteBatch, seq: u64, nd: &NearDupWrite) {
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
