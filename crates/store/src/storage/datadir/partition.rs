//! A data directory as one partition of a sharded deployment (issue 37,
//! `docs/SCALE-OUT.md`, "Partitions"): it stores the documents it owns, under the log's
//! ids, and reads the others' through an [`Elsewhere`].

use std::sync::Arc;

use textorigin_core::index::Indexes;

use super::{analysis, DataDir, Result};
use crate::storage::store::{Elsewhere, Revised};

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
    pub fn index_elsewhere(&mut self, seq: u64, text: &str) -> Result<()> {
        let add = analysis::index_keys(&mut self.preparer, &self.q_cfg, text);
        Indexes::over(self.table.index_region_mut()?, self.shape).add(&self.q_cfg, seq, &add);
        Ok(())
    }

    /// The revisions the last document stored made (those of other partitions'
    /// documents are for their owners to store, [`Store::put_revisions`](crate::storage::store::Store::put_revisions)).
    pub fn take_revisions(&mut self) -> Vec<Revised> {
        std::mem::take(&mut self.last_revised)
    }
}
