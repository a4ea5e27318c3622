//! A data directory as one partition of a sharded deployment (issue 37,
//! `docs/SCALE-OUT.md`, "Partitions"): it stores the documents it owns, under the log's
//! ids, and reads the others' through an [`Elsewhere`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use textorigin_core::index::Indexes;

use super::{analysis, db_path, DataDir, Result};
use crate::storage::store::{Elsewhere, Revised, Store};

/// The data directories of a deployment's partitions in `dir` (`p0`, `p1`, ...: none
/// for a data directory of its own).
pub fn partitions(dir: &Path) -> Vec<PathBuf> {
    if db_path(dir).exists() {
        return Vec::new();
    }
    (0..).map(|p| dir.join(format!("p{p}"))).take_while(|p| db_path(p).exists()).collect()
}

/// The store of `dir` read-only, and the data directory it is in: the partitions' read
/// as one where `dir` holds a deployment's ([`Store::open_partitions`]), with the first
/// partition's data directory.
pub(super) fn open_read_store(dir: &Path) -> Result<(PathBuf, Store)> {
    let parts = partitions(dir);
    if parts.is_empty() {
        return Ok((dir.to_path_buf(), Store::open_read_only(&db_path(dir))?));
    }
    let stores: Vec<PathBuf> = parts.iter().map(|p| db_path(p)).collect();
    Ok((parts[0].clone(), Store::open_partitions(&stores)?))
}

impl DataDir {
    /// Makes this data directory one partition of a deployment (issue 37): the
    /// documents `elsewhere` does not say are its own are read through it (once: false
    /// when it was set before).
    pub fn set_elsewhere(&self, elsewhere: Arc<dyn Elsewhere>) -> bool {
        self.store.set_elsewhere(elsewhere)
    }

    /// Adds another partition's document `seq` of `text` to the derived indexes, in
    /// its turn (after every document before it, before every one after): what its
    /// analysis would add.
    /// Its sketch and sentences go to the caches, as a stored document's do: the
    /// searches of the next documents read them from there.
    pub fn index_elsewhere(&mut self, seq: u64, text: &str) -> Result<()> {
        let (add, sketch, sentences) = analysis::index_keys(&mut self.preparer, &self.q_cfg, text);
        Indexes::over(self.table.index_region_mut()?, self.shape).add(&self.q_cfg, seq, &add);
        self.store.cache_elsewhere(seq, sketch, sentences);
        Ok(())
    }

    /// The revisions the last document stored made (those of other partitions'
    /// documents are for their owners to store, [`Store::put_revisions`](crate::storage::store::Store::put_revisions)).
    pub fn take_revisions(&mut self) -> Vec<Revised> {
        std::mem::take(&mut self.last_revised)
    }
}
