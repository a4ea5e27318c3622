//! The daemon's open store and measurements, shared with the HTTP inspector's threads.

use std::sync::{Arc, Mutex};

use textorigin_store::storage::datadir::DataDir;
use textorigin_store::storage::store::Store;
use textorigin_store::telemetry::{Latency, StageTimes};

/// The daemon's store, shared with readers in the same process, and what it measured
/// (stage seconds and per-document latency since it opened the data directory,
/// published after each batch).
#[derive(Clone, Default)]
pub struct StoreShare(Arc<Mutex<Option<Arc<Store>>>>, Arc<Mutex<(StageTimes, Latency)>>);

impl std::fmt::Debug for StoreShare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.get().is_some() { "StoreShare(open)" } else { "StoreShare(none)" })
    }
}

impl StoreShare {
    /// The store, when the daemon has one open (None: starting or recovering).
    pub fn get(&self) -> Option<Arc<Store>> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    pub(crate) fn set(&self, store: Option<Arc<Store>>) {
        *self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = store;
    }

    /// The stage seconds and latencies of the documents applied so far.
    pub fn telemetry(&self) -> (StageTimes, Latency) {
        *self.1.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn set_telemetry(&self, dd: &DataDir) {
        *self.1.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = (dd.stage_times(), dd.latency());
    }

    /// Lets go of the store (when the daemon has stopped).
    pub fn clear(&self) {
        self.set(None);
    }
}
