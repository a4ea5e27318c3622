//! The near-duplicate index: sketches (`nd_sketch`), index keys (`nd_index`: exact
//! hash, supershingles, LSH bands, SimHash pieces, each followed by the sequence
//! number), and the recorded verdicts (`nd_result`, and `nd_later` seen from the
//! earlier document). This module finds candidates; the verdicts are computed by
//! `textorigin_core::neardup`.

use std::collections::BTreeSet;

use rocksdb::{IteratorMode, WriteBatch};
use textorigin_core::neardup::{self, NearDup, NearDupConfig, Sketch};

use super::codec::{encode, seq_key};
use super::{Result, Store, CF_ND_INDEX, CF_ND_LATER, CF_ND_RESULT, CF_ND_SKETCH};

/// A document's near-duplicate data, ready to be written with it.
#[derive(Debug, Clone)]
pub struct NearDupWrite {
    pub sketch: Sketch,
    /// Earlier documents with at least one verdict, by sequence number.
    pub found: Vec<NearDup>,
}

/// The index keys of a sketch (without the sequence number): kind `x` (exact hash,
/// index 0, 16-byte value), `s` (supershingle i), `b` (band i), `p` (piece i), the last
/// three with an 8-byte value.
fn nd_keys(cfg: &NearDupConfig, sketch: &Sketch) -> Vec<Vec<u8>> {
    let mut keys = vec![[&[b'x', 0][..], &sketch.exact.to_be_bytes()[..]].concat()];
    let mut add = |kind: u8, values: Vec<u64>| {
        for (i, v) in values.into_iter().enumerate() {
            keys.push([&[kind, i as u8][..], &v.to_be_bytes()[..]].concat());
        }
    };
    add(b's', neardup::supershingles(cfg, &sketch.mins));
    add(b'b', neardup::bands(cfg, &sketch.mins));
    add(b'p', neardup::pieces(cfg, &sketch.simhash));
    keys
}

impl Store {
    /// The sketch of document `seq`.
    pub fn sketch(&self, seq: u64) -> Result<Option<Sketch>> {
        self.get(CF_ND_SKETCH, &seq_key(seq))?.map(|v| self.decode("sketch", &v)).transpose()
    }

    /// The earlier documents (before `seq`) that share an index key with `sketch`,
    /// ascending: at most `max_per_key` documents a key.
    pub fn near_dup_candidates(&self, cfg: &NearDupConfig, seq: u64, sketch: &Sketch) -> Result<BTreeSet<u64>> {
        let mut candidates = BTreeSet::new();
        self.scan_prefixes(CF_ND_INDEX, nd_keys(cfg, sketch), cfg.max_per_key as usize, |rest| {
            if let Ok(s) = <[u8; 8]>::try_from(rest) {
                let s = u64::from_be_bytes(s);
                if s < seq {
                    candidates.insert(s);
                }
            }
        })?;
        Ok(candidates)
    }

    /// Compares a new document's sketch with every earlier document that shares an
    /// index key with it.
    pub fn near_dup_write(&self, cfg: &NearDupConfig, seq: u64, sketch: Sketch) -> Result<NearDupWrite> {
        let mut others = Vec::new();
        for c in self.near_dup_candidates(cfg, seq, &sketch)? {
            if let Some(other) = self.sketch(c)? {
                others.push((c, other));
            }
        }
        let found = neardup::verdicts(cfg, &sketch, others);
        Ok(NearDupWrite { sketch, found })
    }

    /// Adds a document's near-duplicate data to a batch.
    pub(super) fn add_near_dups(&self, b: &mut WriteBatch, cfg: &NearDupConfig, seq: u64, nd: &NearDupWrite) {
        let key = seq_key(seq);
        b.put_cf(self.cf(CF_ND_SKETCH), key, encode(&nd.sketch));
        for k in nd_keys(cfg, &nd.sketch) {
            b.put_cf(self.cf(CF_ND_INDEX), [&k[..], &key[..]].concat(), []);
        }
        b.put_cf(self.cf(CF_ND_RESULT), key, encode(&nd.found));
        for d in &nd.found {
            let later = NearDup { seq, ..*d };
            b.put_cf(self.cf(CF_ND_LATER), [seq_key(d.seq), key].concat(), encode(&later));
        }
    }

    /// The earlier near-duplicates recorded for document `seq` (every verdict).
    pub fn near_dups(&self, seq: u64) -> Result<Vec<NearDup>> {
        Ok(self.get(CF_ND_RESULT, &seq_key(seq))?.map(|v| self.decode("near-duplicates", &v)).transpose()?.unwrap_or_default())
    }

    /// The later documents that found `seq` as a near-duplicate.
    pub fn near_dups_later(&self, seq: u64) -> Result<Vec<NearDup>> {
        let prefix = seq_key(seq);
        let mut out = Vec::new();
        for item in self.db.iterator_cf(self.cf(CF_ND_LATER), IteratorMode::From(&prefix, rocksdb::Direction::Forward)) {
            let (k, v) = item.map_err(self.db_err())?;
            if !k.starts_with(&prefix) {
                break;
            }
            out.push(self.decode("near-duplicate", &v)?);
        }
        Ok(out)
    }
}
