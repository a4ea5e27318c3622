//! Revisions (issue 25): who copied from whom, and the stored results that a document
//! published before their origins changed.
//!
//! - `copiers`: key origin (8 bytes, big-endian), copier (8): a document whose result
//!   names the origin for one of its selected shingles. Written with every result (a
//!   revision adds the revised result's); never removed (a superset is enough: a
//!   copier that no longer names the origin is re-analysed for nothing).
//! - `revisions`: key document (8), cause (8): the document's result before the
//!   arrival of `cause` changed it (postcard, behind a version byte). The stored result
//!   is always the current one; the first revision holds the result the document got
//!   when it was applied, which recovery's replay reproduces.

use rocksdb::WriteBatch;
use serde::{Deserialize, Serialize};
use textorigin_core::engine::DocResult;

use super::codec::{encode, pair_key, seq_key};
use super::{Result, Store, CF_COPIERS, CF_RESULTS, CF_REVISIONS};

/// A stored result that changed: why, and what it was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Revision {
    /// The document whose arrival changed it.
    pub cause: u64,
    /// The result before.
    pub before: DocResult,
}

/// A revision to write with the document that caused it: the revised document, its new
/// result and its result before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revised {
    pub seq: u64,
    pub after: DocResult,
    pub before: DocResult,
}

impl Store {
    /// Adds the copier edges of `result` (document `seq`) to a batch.
    pub(super) fn add_copiers(&self, b: &mut WriteBatch, seq: u64, result: &DocResult) {
        let mut origins: Vec<u64> = result.selected_origins.iter().map(|s| s.origin).filter(|&o| o != seq).collect();
        origins.sort_unstable();
        origins.dedup();
        for o in origins {
            b.put_cf(self.cf(CF_COPIERS), pair_key(o, seq), []);
        }
    }

    /// Adds revisions caused by document `cause` to a batch: each revised document's new
    /// result, the record of its result before, and its new copier edges.
    pub(super) fn add_revisions(&self, b: &mut WriteBatch, cause: u64, revised: &[Revised]) {
        for r in revised {
            b.put_cf(self.cf(CF_RESULTS), seq_key(r.seq), encode(&r.after));
            b.put_cf(
                self.cf(CF_REVISIONS),
                pair_key(r.seq, cause),
                encode(&Revision { cause, before: r.before.clone() }),
            );
            self.add_copiers(b, r.seq, &r.after);
        }
    }

    /// Drops every copier edge and revision (`rebuild --reanalyse` writes them again).
    pub fn clear_revisions(&self) -> Result<()> {
        let mut b = WriteBatch::default();
        for cf in [CF_COPIERS, CF_REVISIONS] {
            b.delete_range_cf(self.cf(cf), &[0u8; 16][..], &[0xffu8; 17][..]);
        }
        self.write(b, false)
    }

    /// The documents whose results named `origin` (ascending).
    pub fn copiers_of(&self, origin: u64) -> Result<Vec<u64>> {
        self.pairs(CF_COPIERS, origin).map(|v| v.into_iter().map(|(c, _)| c).collect())
    }

    /// Document `seq`'s revisions, oldest first.
    pub fn revisions(&self, seq: u64) -> Result<Vec<Revision>> {
        self.pairs(CF_REVISIONS, seq)?.into_iter().map(|(_, v)| self.decode_revision(&v)).collect()
    }

    /// The result document `seq` got when it was applied: its first revision's before,
    /// else its stored result.
    pub fn first_result(&self, seq: u64) -> Result<Option<DocResult>> {
        match self.pairs(CF_REVISIONS, seq)?.into_iter().next() {
            Some((_, v)) => Ok(Some(self.decode_revision(&v)?.before)),
            None => self.result(seq),
        }
    }

    fn decode_revision(&self, v: &[u8]) -> Result<Revision> {
        self.decode("revision", v)
    }
}
