//! Bounded read caches in front of RocksDB for the values quotation search reads for
//! every document: document frequencies (read through, written through after each
//! committed batch) and indexed sentences (immutable once written). A cache holds
//! exactly what the store holds for its keys, so it changes speed, never results;
//! at its bound it starts again empty. (Reading them from RocksDB's memtable for every
//! word and every candidate was most of the quotation stage's time.)

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Mutex, MutexGuard, PoisonError};

use textorigin_core::quote::Sentence;

/// Most document frequencies held (about 40 MB at most).
const DF_ENTRIES: usize = 1 << 20;
/// Most sentences held (about 40 MB for sentences of a dozen words).
const SENTENCE_ENTRIES: usize = 1 << 18;

/// A map of at most `cap` entries.
#[derive(Debug)]
pub(super) struct Bounded<K, V> {
    map: Mutex<HashMap<K, V>>,
    cap: usize,
}

impl<K: Eq + Hash, V: Clone> Bounded<K, V> {
    fn new(cap: usize) -> Self {
        Bounded { map: Mutex::new(HashMap::new()), cap }
    }

    pub(super) fn get(&self, k: &K) -> Option<V> {
        self.lock().get(k).cloned()
    }

    pub(super) fn put(&self, k: K, v: V) {
        let mut m = self.lock();
        if m.len() >= self.cap {
            m.clear();
        }
        m.insert(k, v);
    }

    pub(super) fn clear(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<K, V>> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The store's caches.
#[derive(Debug)]
pub(super) struct Caches {
    /// Word fingerprint → documents containing it (`q_df`).
    pub(super) df: Bounded<u64, u64>,
    /// (seq, sentence index) → the indexed sentence (`q_sent`).
    pub(super) sentences: Bounded<(u64, u32), Sentence>,
}

impl Default for Caches {
    fn default() -> Self {
        Caches { df: Bounded::new(DF_ENTRIES), sentences: Bounded::new(SENTENCE_ENTRIES) }
    }
}

impl Caches {
    /// After a committed batch: the new document frequencies.
    pub(super) fn put_df(&self, dfs: &[(u64, u64)]) {
        for &(w, n) in dfs {
            self.df.put(w, n);
        }
    }
}
