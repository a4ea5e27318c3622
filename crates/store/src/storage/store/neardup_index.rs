//! Near-duplicate data in the store: sketches (`nd_sketch`) and the recorded verdicts
//! (`nd_result`, and `nd_later` seen from the earlier document). Candidates come from
//! the derived key index in the table file (`textorigin_core::index`); the verdicts
//! are computed by `textorigin_core::neardup`.

use std::sync::Arc;

use rocksdb::{IteratorMode, WriteBatch};
use textorigin_core::index::{self, Indexes};
use textorigin_core::neardup::{self, NearDup, NearDupConfig, Sketch};

use super::codec::{encode, seq_key};
use super::{Result, Store, CF_ND_LATER, CF_ND_RESULT, CF_ND_SKETCH};

/// A document's near-duplicate data, ready to be written with it.
#[derive(Debug, Clone)]
pub struct NearDupWrite {
    pub sketch: Sketch,
    /// Earlier documents with at least one verdict, by sequence number.
    pub found: Vec<NearDup>,
    /// Its index keys ([`index::nd_keys`]), for the derived index.
    pub keys: Vec<u64>,
}

impl Store {
    /// The sketch of document `seq`.
    pub fn sketch(&self, seq: u64) -> Result<Option<Arc<Sketch>>> {
        self.get_cached(
            &self.caches.sketches,
            seq,
            (CF_ND_SKETCH, || seq_key(seq)),
            "sketch",
            super::cache::sketch_bytes,
        )
    }

    /// Compares a new document's sketch with every earlier document that shares an
    /// index key with it (found through `indexes`).
    pub fn near_dup_write<M: AsRef<[u8]>>(
        &self,
        cfg: &NearDupConfig,
        seq: u64,
        sketch: Sketch,
        indexes: &Indexes<M>,
    ) -> Result<NearDupWrite> {
        let keys = index::nd_keys(cfg, &sketch);
        let mut others = Vec::new();
        for c in indexes.nd_candidates(cfg, seq, &keys) {
            if let Some(other) = self.sketch(c)? {
                others.push((c, other));
            }
        }
        let found = neardup::verdicts(cfg, &sketch, others);
        Ok(NearDupWrite { sketch, found, keys })
    }

    /// Adds a document's near-duplicate data to a batch.
    pub(super) fn add_near_dups(&self, b: &mut WriteBatch, seq: u64, nd: &NearDupWrite) {
        let key = seq_key(seq);
        b.put_cf(self.cf(CF_ND_SKETCH), key, encode(&nd.sketch));
        b.put_cf(self.cf(CF_ND_RESULT), key, encode(&nd.found));
        for d in &nd.found {
            let later = NearDup { seq, ..*d };
            b.put_cf(self.cf(CF_ND_LATER), [seq_key(d.seq), key].concat(), encode(&later));
        }
    }

    /// Deletes document `seq`'s sketch and verdicts (before a re-analysis).
    pub(super) fn delete_near_dups(&self, b: &mut WriteBatch, seq: u64) {
        b.delete_cf(self.cf(CF_ND_SKETCH), seq_key(seq));
        b.delete_cf(self.cf(CF_ND_RESULT), seq_key(seq));
    }

    /// Deletes every near-duplicate verdict seen from the earlier document (before a
    /// re-analysis writes them anew).
    pub fn clear_later_near_dups(&self) -> Result<()> {
        let mut b = WriteBatch::default();
        b.delete_range_cf(self.cf(CF_ND_LATER), &[0u8; 16][..], &[0xffu8; 17][..]);
        self.write(b, false)
    }

    /// The earlier near-duplicates recorded for document `seq` (every verdict).
    pub fn near_dups(&self, seq: u64) -> Result<Vec<NearDup>> {
        Ok(self
            .get(CF_ND_RESULT, &seq_key(seq))?
            .map(|v| self.decode("near-duplicates", &v))
            .transpose()?
            .unwrap_or_default())
    }

    /// The later documents that found `seq` as a near-duplicate.
    pub fn near_dups_later(&self, seq: u64) -> Result<Vec<NearDup>> {
        let prefix = seq_key(seq);
        let mut out = Vec::new();
        for item in self.db.iterator_cf(self.cf(CF_ND_LATER), IteratorMode::From(&prefix, rocksdb::Direction::Forward))
        {
            let (k, v) = item.map_err(self.db_err())?;
            if !k.starts_with(&prefix) {
                break;
            }
            out.push(self.decode("near-duplicate", &v)?);
        }
        Ok(out)
    }
}
