//! Bounded read caches in front of RocksDB for what is read again and again and never
//! changes once written: the indexed sentences quotation search reads for its
//! candidates, the sketches near-duplicate search reads for its candidates, and the
//! texts alignment reads for its origins (tokenized). They hold
//! exactly what the store holds for their keys, so they change speed, never results;
//! at its bound a cache starts again empty.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use textorigin_core::align::OriginText;
use textorigin_core::neardup::Sketch;
use textorigin_core::quote::Sentence;

/// Most sentences held (about 40 MB for sentences of a dozen words).
const SENTENCE_ENTRIES: usize = 1 << 18;
/// Most sketches held (about 30 MB: 84 min-values and 384 SimHash bits each).
const SKETCH_ENTRIES: usize = 1 << 15;
/// Most bytes of origins' texts held for alignment (a document of 10,000 words takes
/// about 240 KB).
const ORIGIN_TEXT_BYTES: usize = 48 << 20;

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

/// The entries and their total weight.
type Entries<K, V> = (HashMap<K, V, BuildHasherDefault<MixHasher>>, usize);

/// A map whose entries weigh at most `cap` in all (each entry its own weight: 1 for a
/// sentence, its bytes for an origin's text); at the bound it starts again empty.
#[derive(Debug)]
pub(super) struct Bounded<K, V> {
    map: Mutex<Entries<K, V>>,
    cap: usize,
}

impl<K: Eq + Hash, V: Clone> Bounded<K, V> {
    fn new(cap: usize) -> Self {
        Bounded { map: Mutex::new((HashMap::default(), 0)), cap }
    }

    pub(super) fn get(&self, k: &K) -> Option<V> {
        self.lock().0.get(k).cloned()
    }

    /// Adds an entry of weight `w`; one heavier than the whole bound is not kept.
    pub(super) fn put(&self, k: K, v: V, w: usize) {
        if w > self.cap {
            return;
        }
        let mut m = self.lock();
        if m.1 + w > self.cap {
            m.0.clear();
            m.1 = 0;
        }
        m.1 += w;
        m.0.insert(k, v);
    }

    fn lock(&self) -> MutexGuard<'_, Entries<K, V>> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The store's caches.
#[derive(Debug)]
pub(super) struct Caches {
    /// (seq, sentence index) → the indexed sentence (`q_sent`).
    pub(super) sentences: Bounded<(u64, u32), Arc<Sentence>>,
    /// seq → the document's near-duplicate sketch (`nd_sketch`).
    pub(super) sketches: Bounded<u64, Arc<Sketch>>,
    /// seq → the document's text as alignment reads it (tokens and shingles).
    pub(super) origin_texts: Bounded<u64, Arc<OriginText>>,
}

impl Default for Caches {
    fn default() -> Self {
        Caches { sentences: Bounded::new(SENTENCE_ENTRIES), sketches: Bounded::new(SKETCH_ENTRIES), origin_texts: Bounded::new(ORIGIN_TEXT_BYTES) }
    }
}
