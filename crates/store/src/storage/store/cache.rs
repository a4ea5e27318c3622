//! Bounded read caches in front of RocksDB for what is read again and again and never
//! changes once written: the sentences quotation search reads for its candidates (split
//! from the stored texts), the sketches near-duplicate search reads for its candidates, the
//! texts alignment reads for its origins (tokenized), and the publication times that
//! order pairs and origins with the texts' hashes ([`DocFacts`]). They hold exactly what the store
//! holds for their keys, so they change speed, never results. Each keeps two
//! generations ([`Bounded`]): starting again empty at the bound, as they did, lost the
//! sentences quotation search reads again and again once a stream outgrew the cache
//! (about 50,000 GCC entries); the quotation stage of 100,000 entries went from 21.1-21.9
//! to 19.5 s (with bounds counted in entries; they are weighed in bytes since, for the
//! memory bound, `docs/PERFORMANCE.md`).

use std::hash::Hash;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use rocksdb::IteratorMode;
use textorigin_core::align::OriginText;
use textorigin_core::hash::MixMap;
use textorigin_core::neardup::Sketch;
use textorigin_core::quote::DocSentences;

use super::{Store, CF_ND_SKETCH, CF_Q_SENT};

/// Bytes of sentences held (a document's weigh their packed arrays, 16 bytes a sentence
/// and 8 a word, and a fixed overhead: [`DocSentences`]). Since schema 16 a document
/// missing here is split again from its stored text (about 20 µs for a GCC entry,
/// against 2 for reading the stored sentence before): with 32 MiB all 198,919 GCC
/// entries took 96-98 s to ingest against 71-80 s before (1.3 million misses), with
/// 64 MiB as long as before; packed (a sentence weighed 64 bytes beside its words as a
/// `Sentence`), 81-83 s against 94-113 s, the quotation stage 37 s against 47-55 s.
/// With the index laid out for exact searches (schema 22), which keeps older
/// candidates, misses were a quarter of the last documents' time at 64 MiB; with 128
/// MiB the quotation stage took 25.9-29.0 s against 38.9-42.4 s, the peak resident
/// memory 560 MB against 527-529.
const SENTENCE_BYTES: usize = 128 << 20;
/// Bytes of sketches held (min-values and SimHash words, and a fixed overhead; a
/// default sketch weighs about 900 bytes).
const SKETCH_BYTES: usize = 16 << 20;
/// Bytes of origins' texts held for alignment (a document of 10,000 words takes
/// about 240 KB). Late in a long stream origins come from all of it: on all GCC
/// entries the alignment stage took 5.8-5.9 s with 64 MiB against 7.1-7.2 s with 32,
/// the peak resident memory 582-585 MB against 559.
const ORIGIN_TEXT_BYTES: usize = 64 << 20;
/// Bytes of the newest documents' token fingerprints held ([`Caches::recent_tokens`]):
/// a million tokens, about 6 MB of English text.
const RECENT_TOKEN_BYTES: usize = 8 << 20;
/// Bytes of the map from a text to a document of that text ([`Caches::same_text`]),
/// and what an entry weighs (the key, the document, the map's slot).
const SAME_TEXT_BYTES: usize = 4 << 20;
pub(super) const SAME_TEXT_ENTRY: usize = 64;
/// Bytes of sketches held by their text ([`Caches::text_sketches`]; an entry shares
/// its sketch with [`Caches::sketches`] or the document being analysed).
const TEXT_SKETCH_BYTES: usize = 8 << 20;
/// Bytes of [`DocFacts`] held, and what one weighs: every candidate of a quotation
/// asks its document's time, and late in a long stream the candidates come from all
/// of it (262,144 entries hold every GCC entry; with 65,536 7% of the last
/// documents' time went to reading metadata again).
const FACTS_BYTES: usize = 16 << 20;
pub(super) const FACTS_ENTRY: usize = 64;
/// What an entry costs beside its own vectors: the map's slot, the `Arc`, the vectors'
/// headers and the allocator's.
const ENTRY_OVERHEAD: usize = 96;

/// The weight of a document's sentences in their cache.
pub(super) fn sentences_bytes(all: &DocSentences) -> usize {
    ENTRY_OVERHEAD + all.bytes()
}

/// The weight of a sketch in its cache.
pub(super) fn sketch_bytes(s: &Sketch) -> usize {
    ENTRY_OVERHEAD + (s.mins.len() + s.simhash.len() + s.coarse.len()) * 8
}

/// A generation of entries (value and weight) and their total weight.
#[derive(Debug)]
struct Generation<K, V> {
    map: MixMap<K, (V, usize)>,
    weight: usize,
}

impl<K, V> Default for Generation<K, V> {
    fn default() -> Self {
        Generation { map: MixMap::default(), weight: 0 }
    }
}

/// The young and the old generation.
type Entries<K, V> = (Generation<K, V>, Generation<K, V>);

/// A map whose entries weigh at most `cap` in all (each entry its own weight, an
/// estimate of its bytes), in two generations of at most `cap / 2`:
/// entries go into the young one; when it is full it becomes the old one (the old one is
/// dropped) and a new young one starts. An entry found in the old generation moves to
/// the young one, so what is read again and again stays, whatever the order of reads.
#[derive(Debug)]
pub(super) struct Bounded<K, V> {
    map: Mutex<Entries<K, V>>,
    cap: usize,
}

impl<K: Eq + Hash + Clone, V: Clone> Bounded<K, V> {
    fn new(cap: usize) -> Self {
        Bounded { map: Mutex::new(Default::default()), cap }
    }

    pub(super) fn get(&self, k: &K) -> Option<V> {
        let mut m = self.lock();
        if let Some((v, _)) = m.0.map.get(k) {
            return Some(v.clone());
        }
        let (v, w) = m.1.map.remove(k)?;
        m.1.weight -= w;
        Self::insert(&mut m, self.cap / 2, k.clone(), v.clone(), w);
        Some(v)
    }

    /// Adds an entry of weight `w`; one heavier than a generation is not kept.
    pub(super) fn put(&self, k: K, v: V, w: usize) {
        if w > self.cap / 2 {
            return;
        }
        Self::insert(&mut self.lock(), self.cap / 2, k, v, w);
    }

    /// Drops the entry under `k` (its value changed).
    pub(super) fn remove(&self, k: &K) {
        let mut m = self.lock();
        let (young, old) = &mut *m;
        for g in [young, old] {
            if let Some((_, w)) = g.map.remove(k) {
                g.weight -= w;
            }
        }
    }

    fn insert(m: &mut Entries<K, V>, half: usize, k: K, v: V, w: usize) {
        if m.0.weight + w > half {
            m.1 = std::mem::take(&mut m.0);
        }
        m.0.weight += w;
        if let Some((_, old)) = m.0.map.insert(k, (v, w)) {
            m.0.weight -= old;
        }
    }

    fn lock(&self) -> MutexGuard<'_, Entries<K, V>> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The store's caches.
#[derive(Debug)]
pub(super) struct Caches {
    /// seq → the document's indexed sentences.
    pub(super) sentences: Bounded<u64, DocSentences>,
    /// Whether the store holds sketches, or sentences, an older build computed
    /// otherwise (schema 16; none in a store made since: nothing to look up).
    pub(super) kept_sketches: AtomicBool,
    pub(super) kept_sentences: AtomicBool,
    /// seq → the document's near-duplicate sketch (`nd_sketch`).
    pub(super) sketches: Bounded<u64, Arc<Sketch>>,
    /// seq → the document's text as alignment reads it (tokens and shingles).
    pub(super) origin_texts: Bounded<u64, Arc<OriginText>>,
    /// seq → the token fingerprints of a document this process stored: most origins
    /// are recent documents, whose texts alignment then reads without reading and
    /// tokenizing them again ([`Store::note_tokens`]).
    pub(super) recent_tokens: Bounded<u64, Arc<Vec<u64>>>,
    /// seq → what the searches ask of the document's metadata.
    pub(super) facts: Bounded<u64, DocFacts>,
    /// xxh3-128 of a stored text → a document of that text whose sentences were split
    /// again: a document's n earlier copies (a feed that re-publishes) are split once,
    /// not n times, by a process that starts with empty caches.
    pub(super) same_text: Bounded<u128, u64>,
    /// xxh3-128 of a text → its near-duplicate sketch (of the whole text: a page with
    /// site template lines of its own is sketched alone), computed again or given by
    /// the document being analysed ([`Store::note_text_sketch`]): the earlier
    /// copies of a document are not sketched again, whether they were stored by this
    /// process or another.
    pub(super) text_sketches: Bounded<u128, Arc<Sketch>>,
}

/// What the searches ask of an earlier document, read once from its metadata: its
/// publication time (which orders pairs and origins), and its text's hash, which finds
/// the sketch or sentences of a copy of it read before without reading its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct DocFacts {
    /// [`DocMeta::time`](super::DocMeta::time).
    pub time: i64,
    /// [`DocMeta::content_hash`](super::DocMeta) (None for a document held elsewhere).
    pub text_hash: Option<u128>,
}

impl Default for Caches {
    fn default() -> Self {
        Caches {
            sentences: Bounded::new(SENTENCE_BYTES),
            kept_sketches: AtomicBool::new(true),
            kept_sentences: AtomicBool::new(true),
            sketches: Bounded::new(SKETCH_BYTES),
            origin_texts: Bounded::new(ORIGIN_TEXT_BYTES),
            recent_tokens: Bounded::new(RECENT_TOKEN_BYTES),
            facts: Bounded::new(FACTS_BYTES),
            same_text: Bounded::new(SAME_TEXT_BYTES),
            text_sketches: Bounded::new(TEXT_SKETCH_BYTES),
        }
    }
}

/// What the store's caches hold, read and filled by what computes it
/// (`crate::storage::recompute`).
impl Store {
    /// Document `seq`'s indexed sentences, when cached.
    pub(crate) fn cached_sentences(&self, seq: u64) -> Option<DocSentences> {
        self.caches.sentences.get(&seq)
    }

    /// Keeps document `seq`'s indexed sentences for the searches that read them.
    pub(crate) fn cache_sentences(&self, seq: u64, all: &DocSentences) {
        self.caches.sentences.put(seq, all.clone(), sentences_bytes(all));
    }

    /// The cached sentences of a document whose text's xxh3-128 is `text_hash`.
    pub(crate) fn text_sentences(&self, text_hash: u128) -> Option<DocSentences> {
        self.caches.same_text.get(&text_hash).and_then(|other| self.caches.sentences.get(&other))
    }

    /// Notes that document `seq`, whose sentences are being split, has the text whose
    /// xxh3-128 is `text_hash`.
    pub(crate) fn note_text_sentences(&self, text_hash: u128, seq: u64) {
        self.caches.same_text.put(text_hash, seq, SAME_TEXT_ENTRY);
    }

    /// Document `seq`'s sketch, when cached.
    pub(crate) fn cached_sketch(&self, seq: u64) -> Option<Arc<Sketch>> {
        self.caches.sketches.get(&seq)
    }

    /// Keeps document `seq`'s sketch for the searches that read it.
    pub(crate) fn cache_sketch(&self, seq: u64, s: &Arc<Sketch>) {
        self.caches.sketches.put(seq, Arc::clone(s), sketch_bytes(s));
    }

    /// The sketch of the text whose xxh3-128 is `text_hash`, when cached.
    pub(crate) fn text_sketch(&self, text_hash: u128) -> Option<Arc<Sketch>> {
        self.caches.text_sketches.get(&text_hash)
    }

    /// Tells the caches that `sketch` is the sketch of the text whose xxh3-128 is
    /// `text_hash` (without site template lines of its own): what the document being
    /// analysed tells of its own text before its search reads its earlier copies.
    pub fn note_text_sketch(&self, text_hash: u128, sketch: &Arc<Sketch>) {
        self.caches.text_sketches.put(text_hash, Arc::clone(sketch), sketch_bytes(sketch));
    }

    /// Document `seq` as alignment reads it, when cached.
    pub(crate) fn cached_origin_text(&self, seq: u64) -> Option<Arc<OriginText>> {
        self.caches.origin_texts.get(&seq)
    }

    /// Keeps document `seq` as alignment reads it (dropped when its result is revised).
    pub(crate) fn cache_origin_text(&self, seq: u64, t: &Arc<OriginText>) {
        self.caches.origin_texts.put(seq, Arc::clone(t), t.bytes());
    }

    /// Keeps the token fingerprints of document `seq`, just stored from a text its
    /// engine tokenized so: alignment reads it as an origin without its text
    /// (`crate::storage::recompute::origin_text`).
    pub fn note_tokens(&self, seq: u64, tokens: Vec<u64>) {
        let bytes = tokens.len() * 8 + 64;
        self.caches.recent_tokens.put(seq, Arc::new(tokens), bytes);
    }

    /// The token fingerprints kept of document `seq` ([`Store::note_tokens`]).
    pub(crate) fn recent_tokens(&self, seq: u64) -> Option<Arc<Vec<u64>>> {
        self.caches.recent_tokens.get(&seq)
    }

    /// Whether the store may hold sketches an older build computed otherwise (schema
    /// 16; none in a store made since: nothing to look up).
    pub(crate) fn keeps_old_sketches(&self) -> bool {
        self.caches.kept_sketches.load(Ordering::Relaxed)
    }

    /// Whether the store may hold sentences an older build split otherwise.
    pub(crate) fn keeps_old_sentences(&self) -> bool {
        self.caches.kept_sentences.load(Ordering::Relaxed)
    }

    /// Notes whether an older build's sketches and sentences are stored (read at open
    /// and after schema 16's step: a store without any reads none).
    pub(crate) fn note_kept(&self) {
        // (An older store opened read-only may lack them: it is refused right after.)
        let any =
            |cf| self.db.cf_handle(cf).is_some_and(|h| self.db.iterator_cf(h, IteratorMode::Start).next().is_some());
        self.caches.kept_sketches.store(any(CF_ND_SKETCH.name), Ordering::Relaxed);
        self.caches.kept_sentences.store(any(CF_Q_SENT.name), Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn weight(b: &Bounded<u64, u64>) -> usize {
        let m = b.lock();
        m.0.weight + m.1.weight
    }

    #[test]
    fn a_key_read_again_and_again_stays_while_others_stream_through() {
        let b = Bounded::new(100);
        b.put(7, 70, 1);
        for k in 1000..10_000u64 {
            b.put(k, k, 1);
            assert!(weight(&b) <= 100);
            if k % 40 == 0 {
                assert_eq!(b.get(&7), Some(70), "the hot key was dropped at {k}");
            }
        }
        // A key read once, long ago, is gone; the newest ones are there.
        assert_eq!(b.get(&1000), None);
        assert_eq!(b.get(&9_999), Some(9_999));
    }

    #[test]
    fn weights_bound_the_cache_and_an_entry_heavier_than_a_generation_is_not_kept() {
        let b = Bounded::new(100);
        b.put(1, 1, 51);
        assert_eq!(b.get(&1), None);
        for k in 0..1000u64 {
            b.put(k, k, 1 + (k % 7) as usize);
            let _ = b.get(&(k / 2));
            assert!(weight(&b) <= 100, "weight {} at {k}", weight(&b));
        }
        b.put(5000, 1, 3);
        b.put(5000, 2, 3);
        assert_eq!(b.get(&5000), Some(2), "a key put again holds the newer value");
    }
}
