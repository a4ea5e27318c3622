//! The stores of a deployment's partitions read as one store (
//! `docs/SCALE-OUT.md`, "Partitions"): partition `p` of `P` holds documents `n` with
//! `(n − 1) mod P = p`, and a later document's partition writes the pairs it finds
//! under an earlier document (near-duplicates and quotations found later, copier
//! edges) in its own store. Reading them as one store routes what is keyed by one
//! document to its owner and merges what is keyed by pairs, so the views, `export`
//! and the HTTP API read a partitioned deployment as they read one data directory.

use std::iter::Peekable;
use std::path::Path;

use super::documents::DocMeta;
use super::{Result, Store, CF_DOCS, CF_ND_RESULT, CF_ND_SKETCH, CF_Q_RESULT, CF_Q_SENT, CF_RESULTS, CF_TEXT};

/// The other partitions' stores of a store read with them (`stores[p]`: partition
/// `p`'s, None for this one's).
pub(super) struct Siblings {
    stores: Vec<Option<Store>>,
}

/// The partition of `partitions` that owns document `seq` (from 1): `(seq − 1) mod
/// partitions`, the rule of every process and reader of a deployment.
pub fn partition_of(seq: u64, partitions: u32) -> u32 {
    ((seq.max(1) - 1) % u64::from(partitions)) as u32
}

/// Column families whose keys begin with the one document they are about.
const BY_DOCUMENT: [&str; 7] = [
    CF_DOCS.name,
    CF_TEXT.name,
    CF_RESULTS.name,
    CF_ND_SKETCH.name,
    CF_ND_RESULT.name,
    CF_Q_SENT.name,
    CF_Q_RESULT.name,
];

impl Store {
    /// The stores of partitions `0..P` at `paths`, read-only, as one store (partition
    /// 0's, reading the others through it).
    pub fn open_partitions(paths: &[impl AsRef<Path>]) -> Result<Store> {
        let mut stores = Vec::with_capacity(paths.len());
        for p in paths {
            stores.push(Some(Store::open_read_only(p.as_ref())?));
        }
        let front = stores[0].take().expect("opened");
        let _ = front.siblings.set(Siblings { stores });
        Ok(front)
    }

    /// The store that holds what is keyed by document `seq` (this one but in a read of
    /// partitions).
    fn owner_of(&self, seq: u64) -> &Store {
        match self.siblings.get() {
            Some(s) => s.stores[partition_of(seq, s.stores.len() as u32) as usize].as_ref().unwrap_or(self),
            None => self,
        }
    }

    /// The store to read `key` of `cf` from.
    pub(super) fn holder(&self, cf: &str, key: &[u8]) -> &Store {
        match <[u8; 8]>::try_from(key.get(..8).unwrap_or_default()) {
            Ok(seq) if BY_DOCUMENT.contains(&cf) => self.owner_of(u64::from_be_bytes(seq)),
            _ => self,
        }
    }

    /// The other partitions' stores, in a read of partitions.
    pub(super) fn siblings(&self) -> impl Iterator<Item = &Store> {
        self.siblings.get().into_iter().flat_map(|s| s.stores.iter().flatten())
    }

    /// The documents of this store and its siblings, ascending or descending (`down`)
    /// as `own` and theirs, from `first` on.
    pub(super) fn docs_merged<'a>(
        &'a self,
        own: Box<dyn Iterator<Item = Result<DocMeta>> + 'a>,
        theirs: impl Fn(&'a Store) -> Box<dyn Iterator<Item = Result<DocMeta>> + 'a>,
        down: bool,
    ) -> Box<dyn Iterator<Item = Result<DocMeta>> + 'a> {
        if self.siblings.get().is_none() {
            return own;
        }
        let mut all: Vec<Peekable<Box<dyn Iterator<Item = Result<DocMeta>> + 'a>>> = vec![own.peekable()];
        all.extend(self.siblings().map(|s| theirs(s).peekable()));
        Box::new(std::iter::from_fn(move || {
            // An error first, else the next document in order.
            let key = |m: &Result<DocMeta>| match m {
                Ok(m) if down => (1, u64::MAX - m.seq),
                Ok(m) => (1, m.seq),
                Err(_) => (0, 0),
            };
            let next = (0..all.len()).filter_map(|i| all[i].peek().map(|m| (key(m), i))).min()?;
            all[next.1].next()
        }))
    }
}
