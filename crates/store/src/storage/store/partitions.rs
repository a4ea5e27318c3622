//! The stores of a deployment's partitions (`docs/SCALE-OUT.md`, "Partitions"):
//! partition `p` of `P` holds documents `n` with `(n − 1) mod P = p`, and a later
//! document's partition writes the pairs it finds under an earlier document
//! (near-duplicates and quotations found later, copier edges) in its own store.
//!
//! [`PartitionStores`] is the one way to other partitions' stores on disk, each opened
//! read-only when first read. It opens the stores of a deployment read as one store:
//! the views, `export` and the HTTP API read it as they read one data directory (what
//! is keyed by one document routed to its owner, what is keyed by pairs merged). A
//! running partition's book reads through it the texts `cluster trim` dropped from the
//! log; the rest of another partition's documents a running partition reads through
//! its [`Elsewhere`](super::Elsewhere).

use std::iter::Peekable;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::documents::DocMeta;
use super::{Result, Store, CF_DOCS, CF_ND_RESULT, CF_ND_SKETCH, CF_Q_RESULT, CF_Q_SENT, CF_RESULTS, CF_TEXT};

/// The partition of `partitions` that owns document `seq` (from 1): `(seq − 1) mod
/// partitions`, the rule of every process and reader of a deployment.
pub fn partition_of(seq: u64, partitions: u32) -> u32 {
    ((seq.max(1) - 1) % u64::from(partitions)) as u32
}

/// The stores of a deployment's partitions `0..P`, each opened read-only when first
/// read.
pub struct PartitionStores {
    paths: Vec<PathBuf>,
    open: Mutex<Vec<Option<Arc<Store>>>>,
}

impl PartitionStores {
    /// The stores at `paths` (partition `p`'s at `paths[p]`), none open yet.
    pub fn new(paths: Vec<PathBuf>) -> PartitionStores {
        let open = Mutex::new(paths.iter().map(|_| None).collect());
        PartitionStores { paths, open }
    }

    /// How many partitions the deployment has.
    pub fn partitions(&self) -> u32 {
        self.paths.len() as u32
    }

    /// Where partition `p`'s store is.
    pub fn path(&self, p: u32) -> &Path {
        &self.paths[p as usize]
    }

    /// Partition `p`'s store, opened now unless it is open (again when `fresh`: a
    /// read-only open reads the store as it was then).
    fn store(&self, p: u32, fresh: bool) -> Result<Arc<Store>> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let slot = &mut open[p as usize];
        if let Some(s) = slot.as_ref().filter(|_| !fresh) {
            return Ok(s.clone());
        }
        *slot = None;
        let s = Arc::new(Store::open_read_only(self.path(p))?);
        *slot = Some(s.clone());
        Ok(s)
    }

    /// The text of document `seq` from its owner's store (opened again when the one
    /// kept open does not hold it: it was opened before the document was stored).
    pub fn text(&self, seq: u64) -> Result<Option<String>> {
        let p = partition_of(seq, self.partitions());
        match self.store(p, false)?.text(seq)? {
            Some(text) => Ok(Some(text)),
            None => self.store(p, true)?.text(seq),
        }
    }
}

/// The other partitions' stores of a store read with them (`stores[p]`: partition
/// `p`'s, None for this one's), as they were when it was opened.
pub(super) struct Siblings {
    stores: Vec<Option<Arc<Store>>>,
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
        let all = PartitionStores::new(paths.iter().map(|p| p.as_ref().to_path_buf()).collect());
        let front = Store::open_read_only(all.path(0))?;
        let mut stores = vec![None];
        for p in 1..all.partitions() {
            stores.push(Some(all.store(p, false)?));
        }
        let _ = front.siblings.set(Siblings { stores });
        Ok(front)
    }

    /// The store that holds what is keyed by document `seq` (this one but in a read of
    /// partitions).
    fn owner_of(&self, seq: u64) -> &Store {
        match self.siblings.get() {
            Some(s) => s.stores[partition_of(seq, s.stores.len() as u32) as usize].as_deref().unwrap_or(self),
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
        self.siblings.get().into_iter().flat_map(|s| s.stores.iter().flatten().map(|s| &**s))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::store::tests::{meta, put_bare};

    fn put(s: &Store, seq: u64, text: &str) {
        put_bare(s, &meta(seq, &format!("d{seq}")), text);
    }

    /// A partition's book reads a text trimmed from the log in its owner's store, which
    /// a writer may have stored after the store was first opened here.
    #[test]
    fn a_text_is_read_from_its_owner_opened_again_when_it_was_stored_since() {
        let dirs: Vec<_> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
        let writers: Vec<Store> = dirs.iter().map(|d| Store::open(d.path()).unwrap()).collect();
        put(&writers[0], 1, "one");
        put(&writers[1], 2, "two");
        writers.iter().for_each(|w| w.sync().unwrap());
        let all = PartitionStores::new(dirs.iter().map(|d| d.path().to_path_buf()).collect());
        assert_eq!(all.text(1).unwrap().as_deref(), Some("one"));
        assert_eq!(all.text(2).unwrap().as_deref(), Some("two"));
        // Document 4 is partition 1's, stored after its store was opened here.
        put(&writers[1], 4, "four");
        writers[1].sync().unwrap();
        assert_eq!(all.text(4).unwrap().as_deref(), Some("four"));
        assert_eq!(all.text(6).unwrap(), None);
        // Read as one store, each document from its owner.
        drop(all);
        let one = Store::open_partitions(&dirs.iter().map(|d| d.path()).collect::<Vec<_>>()).unwrap();
        let texts: Vec<_> = (1..=4).map(|seq| one.text(seq).unwrap()).collect();
        assert_eq!(texts, [Some("one".into()), Some("two".into()), None, Some("four".into())]);
        assert_eq!(one.docs().map(|d| d.unwrap().seq).collect::<Vec<_>>(), [1, 2, 4]);
    }
}
