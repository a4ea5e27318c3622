//! A bounded read cache in front of RocksDB for the indexed sentences quotation search
//! reads for its candidates (immutable once written). It holds exactly what the store
//! holds for its keys, so it changes speed, never results; at its bound it starts
//! again empty.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use textorigin_core::quote::Sentence;

/// Most sentences held (about 40 MB for sentences of a dozen words).
const SENTENCE_ENTRIES: usize = 1 << 18;

/// A fast hasher for the cache's small integer keys: SplitMix64's finalizer over the
/// written words. Never persisted, and the keys are sequence numbers, not input an
/// attacker chooses freely.
#[derive(Default)]
pub(super) struct MixHasher(u64);

impl Hasher for MixHasher {
    fn finish(&self) -> u64 {
        textorigin_core::hash::mix(self.0)
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(8)) ^ u64::from(*b);
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.0 = textorigin_core::hash::mix(self.0 ^ u64::from(n));
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = textorigin_core::hash::mix(self.0 ^ n);
    }
}

/// A map of at most `cap` entries.
#[derive(Debug)]
pub(super) struct Bounded<K, V> {
    map: Mutex<HashMap<K, V, BuildHasherDefault<MixHasher>>>,
    cap: usize,
}

impl<K: Eq + Hash, V: Clone> Bounded<K, V> {
    fn new(cap: usize) -> Self {
        Bounded { map: Mutex::new(HashMap::default()), cap }
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

    fn lock(&self) -> MutexGuard<'_, HashMap<K, V, BuildHasherDefault<MixHasher>>> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The store's caches.
#[derive(Debug)]
pub(super) struct Caches {
    /// (seq, sentence index) → the indexed sentence (`q_sent`).
    pub(super) sentences: Bounded<(u64, u32), Arc<Sentence>>,
}

impl Default for Caches {
    fn default() -> Self {
        Caches { sentences: Bounded::new(SENTENCE_ENTRIES) }
    }
}
