//! The derived indexes: document frequencies, the qSign signature index and the
//! near-duplicate candidate keys, bounded, over one byte region.
//!
//! These are what quotation search (qSign, Kim, Candan, Tatemura 2009, Section 2.1:
//! the signature index and the idf weights of the score) and near-duplicate candidate
//! generation (Broder's supershingles, LSH bands of the min-values, Charikar's SimHash
//! pieces, Section 3 of Henzinger's comparison, and the exact hash) read for every
//! document. They are derived from the stored documents, so, like the shingle table of
//! the origin paper (Section 2.2), they can live in a fixed-size region with eviction
//! and be rebuilt by replaying the documents. The region sits in the table file behind
//! the buckets (`docs/table-format.md`), so it is checkpointed with them, byte for byte.
//!
//! Layout of a region of `L` bytes: a 4096-byte header of counters, then three
//! sections of 16-byte entries `(a: u64 LE, b: u64 LE)`; an entry with `b = 0` is free
//! and the occupied entries of a bucket are a prefix:
//! - **document frequencies** (1/16 of the rest): buckets of 16 `(word, documents)`;
//!   a word absent from a full bucket evicts the lowest count (the first of equal
//!   ones), so frequent words stay and an evicted rare word reads as unseen, the
//!   score's treatment of a word seen once.
//! - **signatures** (3/8): one home bucket per signature piece value `(p, v)` while
//!   they fit (`pieces · 2^width` buckets, 131,072 for the defaults), each holding
//!   `(signature, seq << 24 | sentence)` in insertion order. Buckets hold at least 32
//!   and at most 256 entries. Piece values are far from uniform (a short sentence sets
//!   few bits), so a value whose bucket is full spills into the next one, up to 8
//!   buckets, within its block of 1,024 buckets (wrapping at the block's end; table
//!   format 4: before, across blocks); a probe reads on while the bucket it read was
//!   full. A signature is not added to a bucket that holds `max_sources` entries of
//!   it already: a sentence repeated in thousands of documents is found
//!   through its first copies (at most `max_sources` a bucket of its chain), which
//!   are what a search reports of it (sources best first, then oldest), and its chain
//!   keeps room for other sentences; the copies left out are counted. (Counted in the
//!   bucket the entry would go to, which the insertion reads anyway: counting the
//!   whole chain cost a read of up to 8 buckets an insertion, 10% of a repeated
//!   corpus's time.)
//! - **near-duplicate keys** (the rest): buckets of 64 `(key hash, seq)`, the key hash
//!   the xxh3-64 of the key's kind, index and value.
//!
//! Each section uses only its first buckets while they hold what came, doubling them
//! as they fill, as the shingle table grows inside its file (`grow`): a small
//! collection touches a few pages of the region; what every question answers is the
//! section's spanning all its buckets.
//!
//! A full signature chain or key bucket keeps its older half for good (the first documents
//! to bring a value: the origins of whatever repeats it later) and runs its newer half
//! as a queue (the most recent documents, the likely sources of new copies): the new
//! entry drops the oldest of the newer half.
//!
//! What the bound costs: an evicted entry is a candidate no longer found, so a
//! quotation or near-duplicate of an old enough document is missed (measured in
//! `docs/PERFORMANCE.md`). Sequence numbers up to 2^40 and sentence numbers below 2^24
//! are indexed; a sentence beyond is not.
//!
//! Pure: the same documents in the same order give the same bytes.
//!
//! **Parts** (`docs/SCALE-OUT.md`): every section's content is a function of
//! the inserts into each of its buckets (a document-frequency or near-duplicate
//! bucket) or blocks of buckets (a signature chain never leaves its block). Shard `s`
//! of `S` ([`IndexPart`]) holds the buckets, and the signature blocks, `b` of `n` with
//! `⌊b·S/n⌋ = s`, as the shards hold the table: each adds only its keys
//! ([`Indexes::add_part`]) and answers only about them ([`IndexPart::holds_word`],
//! [`IndexPart::holds_probe`], [`IndexPart::holds_key`]), and what the parts answer is
//! what the whole region answers (the property test `parts_answer_as_the_whole`):
//! a document's questions are answered part by part and merged ([`IndexAnswers`]).

use std::collections::BTreeSet;

use xxhash_rust::xxh3::xxh3_64;

mod answers;
mod grow;
pub use answers::{Answered, IndexAnswers, IndexLookup, IndexQueries, IndexWork, QuoteAnswer, Unanswered};
use grow::Section;

use crate::hash::mix;
use crate::memory::RangeMut;
use crate::neardup::{self, NearDupConfig, Sketch};
use crate::quote::{self, QuoteConfig, QuoteFind};

/// Bytes of the counters page in front of the sections.
pub const INDEX_HEADER_BYTES: usize = 4096;
/// The smallest index region.
pub const MIN_INDEX_BYTES: u64 = 64 << 10;
const ENTRY: usize = 16;
const DF_BUCKET: usize = 16;
const ND_BUCKET: usize = 64;
const SIG_MIN_BUCKET: usize = 32;
const SIG_MAX_BUCKET: usize = 256;
/// Buckets a signature piece value may fill: its home bucket and the ones after it,
/// each taken only when the ones before are full (a frequent value borrows the room of
/// rare neighbours).
const SIG_SPILL: u64 = 8;
/// Signature buckets a chain stays within: blocks of 1,024 buckets (the last may be
/// shorter), a chain wrapping at its block's end (table format 4), so that the section
/// splits by block (see "Parts").
const SIG_BLOCK: u64 = 1024;
/// Largest sequence number and sentence number a signature entry holds.
const SEQ_BITS: u32 = 40;
const SENTENCE_BITS: u32 = 24;

// Counter offsets in the header page.
const C_DOCS: usize = 0;
const C_LAST_SEQ: usize = 8;
const C_DF_INSERTS: usize = 16;
const C_DF_EVICTIONS: usize = 24;
const C_SIG_INSERTS: usize = 32;
const C_SIG_EVICTIONS: usize = 40;
const C_ND_INSERTS: usize = 48;
const C_ND_EVICTIONS: usize = 56;
const C_SIG_COPIES: usize = 64;

/// An index region too small for its sections.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("index size {0} bytes is too small: it needs at least {MIN_INDEX_BYTES} bytes")]
pub struct IndexTooSmall(pub u64);

/// Where the sections of a region of a given size lie.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexShape {
    bytes: usize,
    df_buckets: u64,
    sig_width: u32,
    sig_keys: u64,
    sig_buckets: u64,
    sig_entries: usize,
    /// Laid out for exact searches ([`QuoteConfig::exact_only`]): one entry a
    /// signature, hashed home buckets of [`SIG_MIN_BUCKET`] entries, no spill.
    sig_exact: bool,
    nd_buckets: u64,
}

impl IndexShape {
    /// The shape of a region of `bytes` for quotation parameters `q`.
    pub fn new(bytes: u64, q: &QuoteConfig) -> Result<IndexShape, IndexTooSmall> {
        if bytes < MIN_INDEX_BYTES {
            return Err(IndexTooSmall(bytes));
        }
        let rest = bytes as usize - INDEX_HEADER_BYTES;
        // Shares measured on mail, news and GCC streams: a document brings ~32
        // near-duplicate keys, ~20 signature entries and few new words.
        let df_buckets = (rest / 16 / (DF_BUCKET * ENTRY)) as u64;
        let sig_total = rest / 8 * 3 / ENTRY;
        let width = q.m.div_ceil(q.pieces);
        let sig_keys = u64::from(q.pieces) << width;
        let sig_exact = q.exact_only();
        let (sig_buckets, sig_entries) = if sig_exact {
            (((sig_total / SIG_MIN_BUCKET) as u64).max(1), SIG_MIN_BUCKET.min(sig_total))
        } else {
            let buckets = sig_keys.min((sig_total / SIG_MIN_BUCKET) as u64).max(1);
            (buckets, (sig_total / buckets as usize).clamp(1, SIG_MAX_BUCKET))
        };
        let used = df_buckets as usize * DF_BUCKET * ENTRY + sig_buckets as usize * sig_entries * ENTRY;
        let nd_buckets = ((rest - used) / (ND_BUCKET * ENTRY)) as u64;
        Ok(IndexShape {
            bytes: bytes as usize,
            df_buckets,
            sig_width: width,
            sig_keys,
            sig_buckets,
            sig_entries,
            sig_exact,
            nd_buckets,
        })
    }

    fn df_at(&self) -> usize {
        INDEX_HEADER_BYTES
    }

    fn sig_at(&self) -> usize {
        self.df_at() + self.df_buckets as usize * DF_BUCKET * ENTRY
    }

    fn nd_at(&self) -> usize {
        self.sig_at() + self.sig_buckets as usize * self.sig_entries * ENTRY
    }

    /// The home bucket of signature piece value `(p, v)`.
    fn sig_home(&self, p: u32, v: u32) -> u64 {
        if self.sig_buckets == self.sig_keys && !self.sig_exact {
            // One bucket per piece value: (p, v) → p · 2^width + v.
            u64::from(p) << self.sig_width | u64::from(v)
        } else {
            bucket_of(u64::from(p) << 32 | u64::from(v), SIG_SALT, self.sig_buckets)
        }
    }

    /// Buckets per section: (document frequencies, signatures, near-duplicate keys).
    pub fn buckets(&self) -> (u64, u64, u64) {
        (self.df_buckets, self.sig_buckets, self.nd_buckets)
    }

    /// Entries per section: (document frequencies, signatures, near-duplicate keys).
    pub fn capacity(&self) -> (u64, u64, u64) {
        (
            self.df_buckets * DF_BUCKET as u64,
            self.sig_buckets * self.sig_entries as u64,
            self.nd_buckets * ND_BUCKET as u64,
        )
    }
}

/// Shard `shard` of `shards`' part of the derived indexes (see the module
/// documentation, "Parts"): the buckets, and signature blocks, `b` of `n` with
/// `⌊b·shards/n⌋ = shard`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexPart {
    pub shard: u32,
    pub shards: u32,
}

impl IndexPart {
    /// The whole region (one node).
    pub const WHOLE: IndexPart = IndexPart { shard: 0, shards: 1 };

    fn holds(&self, b: u64, n: u64) -> bool {
        (u128::from(b) * u128::from(self.shards) / u128::from(n.max(1))) as u32 == self.shard
    }

    /// The buckets (or blocks) of `n` this part holds: `b` with `⌊b·S/n⌋ = s` are
    /// `⌈s·n/S⌉ ≤ b < ⌈(s+1)·n/S⌉`.
    fn span(&self, n: u64) -> std::ops::Range<u64> {
        let start = |s: u32| (u128::from(s) * u128::from(n)).div_ceil(u128::from(self.shards)) as u64;
        start(self.shard)..start(self.shard + 1)
    }

    /// The byte ranges of a region of `shape` that hold the counters page, this part's
    /// signature chains and its near-duplicate buckets: what a shard worker keeps of
    /// its part (the document frequencies are the partitions').
    pub fn searched_ranges(&self, shape: &IndexShape) -> [std::ops::Range<usize>; 3] {
        let blocks = self.span(shape.sig_buckets.div_ceil(SIG_BLOCK));
        let (sig_len, nd_len) = (shape.sig_entries * ENTRY, ND_BUCKET * ENTRY);
        let sig = |b: u64| shape.sig_at() + (b * SIG_BLOCK).min(shape.sig_buckets) as usize * sig_len;
        let keys = self.span(shape.nd_buckets);
        let nd = |b: u64| shape.nd_at() + b as usize * nd_len;
        [0..INDEX_HEADER_BYTES, sig(blocks.start)..sig(blocks.end), nd(keys.start)..nd(keys.end)]
    }

    /// Whether this part counts `word` (its document frequency is answered here).
    pub fn holds_word(&self, shape: &IndexShape, word: u64) -> bool {
        self.holds(bucket_of(word, DF_SALT, shape.df_buckets), shape.df_buckets)
    }

    /// Whether this part holds the chain of signature piece value `(p, v)` (a probe of
    /// it is answered here).
    pub fn holds_probe(&self, shape: &IndexShape, p: u32, v: u32) -> bool {
        self.holds(shape.sig_home(p, v) / SIG_BLOCK, shape.sig_buckets.div_ceil(SIG_BLOCK))
    }

    /// Whether this part holds near-duplicate key `key`.
    pub fn holds_key(&self, shape: &IndexShape, key: u64) -> bool {
        self.holds(bucket_of(key, ND_SALT, shape.nd_buckets), shape.nd_buckets)
    }
}

/// The counters of the header page.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct IndexStats {
    /// Documents added (the N of the idf weights).
    pub documents: u64,
    /// Sequence number of the last document added.
    pub last_seq: u64,
    pub df_inserts: u64,
    pub df_evictions: u64,
    pub sig_inserts: u64,
    pub sig_evictions: u64,
    pub nd_inserts: u64,
    pub nd_evictions: u64,
    /// Signature entries not added: their bucket held `max_sources` entries of other
    /// sentences with the same signature (the earliest copies of a repeated sentence
    /// are what a search reports).
    pub sig_copies: u64,
}

/// The near-duplicate index keys of a sketch: the xxh3-64 of kind `x` (exact hash,
/// index 0, 16 bytes BE), `s` (supershingle i), `b` (band i), `p` (SimHash piece i),
/// each with its index byte and its value (8 bytes BE); then the supershingles and
/// bands of its coarse min-values (the same kinds, so that they meet the next size
/// group's own keys), each key once.
pub fn nd_keys(cfg: &NearDupConfig, sketch: &Sketch) -> Vec<u64> {
    let mut keys = vec![xxh3_64(&[&[b'x', 0][..], &sketch.exact.to_be_bytes()[..]].concat())];
    let mut add = |kind: u8, values: Vec<u64>| {
        for (i, v) in values.into_iter().enumerate() {
            let key = xxh3_64(&[&[kind, i as u8][..], &v.to_be_bytes()[..]].concat());
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
    };
    add(b's', neardup::supershingles(cfg, &sketch.mins));
    add(b'b', neardup::bands(cfg, &sketch.mins));
    add(b'p', neardup::pieces(cfg, &sketch.simhash));
    add(b's', neardup::supershingles(cfg, &sketch.coarse));
    add(b'b', neardup::bands(cfg, &sketch.coarse));
    keys
}

/// What one document adds to the indexes (a partition's outcome carries it to the
/// other partitions).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct IndexAdd {
    /// Its distinct words (each counts once more in the document frequencies).
    pub words: Vec<u64>,
    /// (sentence number, signature) of its indexed sentences.
    pub signatures: Vec<(u32, u64)>,
    /// Its near-duplicate keys ([`nd_keys`]).
    pub nd_keys: Vec<u64>,
}

impl IndexAdd {
    /// What a document of `sentences` (all of them, as split) adds: their words, the
    /// signatures of those indexed, and its near-duplicate keys.
    pub fn of(cfg: &QuoteConfig, sentences: &[quote::Sentence], nd_keys: Vec<u64>) -> IndexAdd {
        IndexAdd { words: quote::words(sentences), signatures: quote::signatures(cfg, sentences), nd_keys }
    }

    /// Its words alone: what a partition of a deployment adds to its own region, whose
    /// signature and near-duplicate sections the shard workers hold (
    /// [`IndexWork`]).
    pub fn words_only(self) -> IndexAdd {
        IndexAdd { words: self.words, ..IndexAdd::default() }
    }

    /// What a searched document adds: its words and indexed sentences, from its
    /// quotation search (none when quotation search is off), and its near-duplicate keys.
    pub fn found(q: Option<&QuoteFind>, nd_keys: Vec<u64>) -> IndexAdd {
        match q {
            Some(q) => IndexAdd { words: q.words.clone(), signatures: q.signatures.clone(), nd_keys },
            None => IndexAdd { words: Vec::new(), signatures: Vec::new(), nd_keys },
        }
    }
}

#[inline]
fn get(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

#[inline]
fn put(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// Bucket `mix(key ^ salt)` of `n` by multiply-shift.
fn bucket_of(key: u64, salt: u64, n: u64) -> u64 {
    ((u128::from(mix(key ^ salt)) * u128::from(n)) >> 64) as u64
}

const DF_SALT: u64 = 0x6466_6466_6466_6466;
const SIG_SALT: u64 = 0x7369_6773_6967_7369;
const ND_SALT: u64 = 0x6e64_6e64_6e64_6e64;

/// The entries of a bucket: (a, b) pairs, occupied ones first.
#[inline]
fn entries(bucket: &[u8]) -> impl Iterator<Item = (u64, u64)> + '_ {
    bucket.chunks_exact(ENTRY).map(|e| (get(e, 0), get(e, 8))).take_while(|&(_, b)| b != 0)
}

/// Whether every entry of a bucket is occupied (its last one is).
#[inline]
fn full(bucket: &[u8]) -> bool {
    get(bucket, bucket.len() - 8) != 0
}

/// How many entries of a bucket are occupied (a prefix: found by halves).
#[inline]
fn occupied(bucket: &[u8]) -> usize {
    let (mut lo, mut hi) = (0, bucket.len() / ENTRY);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if get(bucket, mid * ENTRY + 8) != 0 {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Appends (a, b) to a bucket; a full bucket keeps its older half (the first
/// documents to bring a value: the origins of what repeats it) and drops the oldest
/// entry of its newer half (a queue of the most recent ones). True when one was dropped.
fn push_queue(bucket: &mut [u8], a: u64, b: u64) -> bool {
    let (n, len) = (occupied(bucket), bucket.len() / ENTRY);
    let dropped = (n == len).then_some(len / 2);
    drop_and_append(bucket, n, dropped, a, b);
    dropped.is_some()
}

/// Drops entry `dropped` (if any) of a bucket's `n` occupied ones, those after it moving
/// up one, and appends (a, b) after the occupied ones.
fn drop_and_append(bucket: &mut [u8], n: usize, dropped: Option<usize>, a: u64, b: u64) {
    let mut at = n;
    if let Some(d) = dropped {
        bucket.copy_within((d + 1) * ENTRY..n * ENTRY, d * ENTRY);
        at -= 1;
    }
    put(bucket, at * ENTRY, a);
    put(bucket, at * ENTRY + 8, b);
}

/// Whether signature `sig` tells a sentence's words apart from others': at most three
/// quarters of its bits set. The signature of a long sentence sets nearly all of them
/// (each word sets `l`), so that different long sentences share it: their copies are
/// not counted as one sentence's.
fn specific(cfg: &QuoteConfig, sig: u64) -> bool {
    sig.count_ones() * 4 <= cfg.m * 3
}

/// Whether a signature bucket holds `max` entries of `sig` of other sentences than
/// `packed`'s (each once: two pieces' chains may share a bucket and each add the same
/// entry), `seen` a buffer.
fn holds_copies(bucket: &[u8], (sig, packed): (u64, u64), max: u32, seen: &mut Vec<u64>) -> bool {
    seen.clear();
    seen.extend(entries(bucket).filter(|&(s, p)| s == sig && p != packed).map(|(_, p)| p));
    if seen.len() < max as usize {
        return false;
    }
    seen.sort_unstable();
    seen.dedup();
    seen.len() >= max as usize
}

/// The derived indexes over a byte region (see the module documentation).
#[derive(Debug)]
pub struct Indexes<M> {
    mem: M,
    shape: IndexShape,
}

impl Indexes<Vec<u8>> {
    /// An empty region in memory.
    pub fn in_memory(bytes: u64, q: &QuoteConfig) -> Result<Self, IndexTooSmall> {
        let shape = IndexShape::new(bytes, q)?;
        Ok(Indexes { mem: vec![0; bytes as usize], shape })
    }

    /// The region's bytes (a part of them to a checkpoint).
    pub fn region(&self) -> &[u8] {
        &self.mem
    }

    /// The region's bytes, to copy a part of them in (a restored checkpoint).
    pub fn region_mut(&mut self) -> &mut [u8] {
        &mut self.mem
    }
}

impl<M: AsRef<[u8]>> Indexes<M> {
    /// The indexes held in `mem` (at least `shape`'s bytes long).
    ///
    /// # Panics
    /// When `mem` is shorter than the shape.
    pub fn over(mem: M, shape: IndexShape) -> Self {
        assert!(mem.as_ref().len() >= shape.bytes, "index memory too short");
        Indexes { mem, shape }
    }

    fn bytes(&self) -> &[u8] {
        &self.mem.as_ref()[..self.shape.bytes]
    }

    /// Loads a byte at each of `offsets` (buckets about to be read, mostly cache
    /// misses) as independent loads the CPU has in flight together, before they are
    /// read one by one.
    fn touch(&self, offsets: impl Iterator<Item = usize>) {
        let bytes = self.bytes();
        std::hint::black_box(offsets.fold(0u8, |x, at| x ^ bytes[at]));
    }

    fn counter(&self, at: usize) -> u64 {
        get(self.bytes(), at)
    }

    /// The counters.
    pub fn stats(&self) -> IndexStats {
        IndexStats {
            documents: self.counter(C_DOCS),
            last_seq: self.counter(C_LAST_SEQ),
            df_inserts: self.counter(C_DF_INSERTS),
            df_evictions: self.counter(C_DF_EVICTIONS),
            sig_inserts: self.counter(C_SIG_INSERTS),
            sig_evictions: self.counter(C_SIG_EVICTIONS),
            nd_inserts: self.counter(C_ND_INSERTS),
            nd_evictions: self.counter(C_ND_EVICTIONS),
            sig_copies: self.counter(C_SIG_COPIES),
        }
    }

    /// The shape.
    pub fn shape(&self) -> IndexShape {
        self.shape
    }

    /// xxh3-64 of the region: equal digests, equal indexes.
    pub fn digest(&self) -> u64 {
        xxh3_64(self.bytes())
    }

    /// [`Indexes::digest`] reading only the byte ranges `data` (ascending, apart) of
    /// the region, the rest hashed as the zeros it holds without being read (a table
    /// file's holes: on a tmpfs each page read of a hole is allocated).
    pub fn digest_of(&self, data: &[std::ops::Range<usize>]) -> u64 {
        static ZEROS: [u8; 1 << 16] = [0; 1 << 16];
        let bytes = self.bytes();
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        let mut at = 0;
        let zeros = |h: &mut xxhash_rust::xxh3::Xxh3, mut len: usize| {
            while len > 0 {
                let n = len.min(ZEROS.len());
                h.update(&ZEROS[..n]);
                len -= n;
            }
        };
        for r in data {
            let (start, end) = (r.start.max(at).min(bytes.len()), r.end.min(bytes.len()));
            if start >= end {
                continue;
            }
            zeros(&mut h, start - at);
            h.update(&bytes[start..end]);
            at = end;
        }
        zeros(&mut h, bytes.len() - at);
        h.digest()
    }

    fn df_bucket(&self, word: u64) -> std::ops::Range<usize> {
        self.in_use(Section::Df).of(bucket_of(word, DF_SALT, self.shape.df_buckets))
    }

    /// The chain of a piece value, as byte ranges: its home bucket and the
    /// [`SIG_SPILL`] − 1 after it, wrapping within its block of [`SIG_BLOCK`]; the home
    /// bucket alone in a region laid out for exact searches.
    fn sig_chain(&self, p: u32, v: u32) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        let s = &self.shape;
        let home = s.sig_home(p, v);
        let base = home - home % SIG_BLOCK;
        let size = SIG_BLOCK.min(s.sig_buckets - base);
        let spill = if s.sig_exact { 1 } else { SIG_SPILL };
        // Laid out by pieces the section spans its buckets (shift 0).
        let in_use = self.in_use(Section::Sig);
        (0..spill.min(size)).map(move |i| in_use.of(base + (home - base + i) % size))
    }

    fn nd_bucket(&self, key: u64) -> std::ops::Range<usize> {
        self.in_use(Section::Nd).of(bucket_of(key, ND_SALT, self.shape.nd_buckets))
    }

    /// Documents counted in the document frequencies.
    pub fn documents(&self) -> u64 {
        self.counter(C_DOCS)
    }

    /// Documents containing `word` (0 when unseen or evicted).
    pub fn df(&self, word: u64) -> u64 {
        entries(&self.bytes()[self.df_bucket(word)]).find(|&(w, _)| w == word).map_or(0, |(_, n)| n)
    }

    /// Every indexed sentence within `d` bits of `sig`: (seq, sentence, distance),
    /// sorted; of each probe at most `max_per_probe` entries within the radius, the
    /// oldest. Also returns how many the cap left out.
    pub fn quote_candidates(&self, cfg: &QuoteConfig, sig: u64, d: u32) -> (Vec<(u64, u32, u32)>, u64) {
        self.quote_candidates_part(cfg, sig, d, IndexPart::WHOLE)
    }

    /// [`Indexes::quote_candidates`] through the probes whose chains `part` holds: the
    /// parts' answers together (concatenated, sorted, deduplicated; what the caps left
    /// out summed) are the whole region's.
    pub fn quote_candidates_part(
        &self,
        cfg: &QuoteConfig,
        sig: u64,
        d: u32,
        part: IndexPart,
    ) -> (Vec<(u64, u32, u32)>, u64) {
        self.assert_held(part);
        let mut out = Vec::new();
        let mut capped = 0u64;
        let mut probe = Vec::new();
        let mut probes = quote::probes(cfg, sig, d);
        probes.retain(|&(p, v)| part.holds_probe(&self.shape, p, v));
        self.touch(probes.iter().filter_map(|&(p, v)| self.sig_chain(p, v).next().map(|r| r.start)));
        for (p, v) in probes {
            let (lo, hi) = cfg.piece_range(p);
            let mask = (1u64 << (hi - lo)) - 1;
            probe.clear();
            for r in self.sig_chain(p, v) {
                let bucket = &self.bytes()[r];
                let mut occupied = 0;
                for (s, packed) in entries(bucket) {
                    occupied += 1;
                    // Within radius 0 (every search of part and clause signatures) the
                    // test is equality: no bit count, which x86-64's baseline has no
                    // instruction for.
                    let dist = match d {
                        0 if s == sig => 0,
                        0 => continue,
                        _ if (s >> lo) & mask != u64::from(v) => continue,
                        _ => (s ^ sig).count_ones(),
                    };
                    if dist <= d {
                        probe.push((packed >> SENTENCE_BITS, (packed & ((1 << SENTENCE_BITS) - 1)) as u32, dist));
                    }
                }
                // A value spills into the next bucket only when this one is full (known
                // from the scan: reading the last entry would cost another cache miss).
                if occupied < self.shape.sig_entries {
                    break;
                }
            }
            let cap = cfg.max_per_probe as usize;
            if probe.len() > cap {
                probe.sort_unstable();
                capped += (probe.len() - cap) as u64;
                probe.truncate(cap);
            }
            out.extend_from_slice(&probe);
        }
        out.sort_unstable();
        out.dedup();
        (out, capped)
    }

    /// The earlier documents (before `seq`) that share a key with `keys`, ascending; at
    /// most `max_per_key` (the oldest) a key.
    pub fn nd_candidates(&self, cfg: &NearDupConfig, seq: u64, keys: &[u64]) -> BTreeSet<u64> {
        let mut out = BTreeSet::new();
        self.touch(keys.iter().map(|&k| self.nd_bucket(k).start));
        for &k in keys {
            let bucket = &self.bytes()[self.nd_bucket(k)];
            out.extend(
                entries(bucket).filter(|&(a, s)| a == k && s < seq).map(|(_, s)| s).take(cfg.max_per_key as usize),
            );
        }
        out
    }
}

impl<M: AsRef<[u8]> + RangeMut> Indexes<M> {
    /// The bytes in `at..at + len`, for writing (within the region's `shape.bytes`).
    fn range_mut(&mut self, at: usize, len: usize) -> &mut [u8] {
        assert!(at + len <= self.shape.bytes, "index write out of the region");
        self.mem.range_mut(at..at + len)
    }

    fn set(&mut self, at: usize, v: u64) {
        put(self.range_mut(at, 8), 0, v);
    }

    fn bump(&mut self, at: usize, by: u64) {
        let v = self.counter(at) + by;
        self.set(at, v);
    }

    /// Adds document `seq` (after every earlier one): counts its words, indexes its
    /// sentences' signatures and its near-duplicate keys.
    pub fn add(&mut self, cfg: &QuoteConfig, seq: u64, add: &IndexAdd) {
        self.add_part(cfg, seq, add, IndexPart::WHOLE);
    }

    /// [`Indexes::add`] of the keys `part` holds (every part counts the document).
    pub fn add_part(&mut self, cfg: &QuoteConfig, seq: u64, add: &IndexAdd, part: IndexPart) {
        self.assert_held(part);
        let shape = self.shape;
        let words = || add.words.iter().copied().filter(move |&w| part.holds_word(&shape, w));
        let (mut df_new, mut df_evicted) = (0, 0);
        self.touch(words().map(|w| self.df_bucket(w).start));
        for w in words() {
            let r = self.df_bucket(w);
            let found = entries(&self.bytes()[r.clone()]).position(|(x, _)| x == w);
            if let Some(i) = found {
                let n = get(&self.bytes()[r.clone()], i * ENTRY + 8);
                put(self.range_mut(r.start, r.len()), i * ENTRY + 8, n + 1);
                continue;
            }
            let b = bucket_of(w, DF_SALT, shape.df_buckets);
            let (r, evict) = self.room_for(Section::Df, w, b);
            let bucket = &self.bytes()[r.clone()];
            // A full final bucket's new word replaces its first word of the lowest count.
            let slot = if evict {
                df_evicted += 1;
                let mine = self.mine(Section::Df, w, b);
                let lowest =
                    entries(bucket).enumerate().filter(|&(_, (x, _))| mine(x)).min_by_key(|&(i, (_, n))| (n, i));
                lowest.expect("a full bucket").0
            } else {
                occupied(bucket)
            };
            df_new += 1;
            let bucket = self.range_mut(r.start, r.len());
            put(bucket, slot * ENTRY, w);
            put(bucket, slot * ENTRY + 8, 1);
        }
        let (mut sig_new, mut sig_evicted, mut sig_copies) = (0, 0, 0);
        if seq < 1 << SEQ_BITS {
            let mut copies = Vec::new();
            for &(idx, sig) in &add.signatures {
                if idx >= 1 << SENTENCE_BITS {
                    continue;
                }
                let packed = seq << SENTENCE_BITS | u64::from(idx);
                for (p, v) in quote::entries(cfg, sig) {
                    if !part.holds_probe(&shape, p, v) {
                        continue;
                    }
                    // The first bucket of the chain with room, else the home bucket
                    // evicts.
                    let mut chain = self.sig_chain(p, v);
                    let home = chain.next().expect("a chain has its home bucket");
                    let r = std::iter::once(home.clone())
                        .chain(chain)
                        .find(|r| !full(&self.bytes()[r.clone()]))
                        .unwrap_or(home);
                    if specific(cfg, sig)
                        && holds_copies(&self.bytes()[r.clone()], (sig, packed), cfg.max_sources, &mut copies)
                    {
                        sig_copies += 1;
                        continue;
                    }
                    sig_new += 1;
                    if !shape.sig_exact {
                        sig_evicted += u64::from(push_queue(self.range_mut(r.start, r.len()), sig, packed));
                        continue;
                    }
                    // Laid out for exact searches (the one bucket a chain has) the
                    // buckets in use may double first (the copies counted above are
                    // its signature's, all in its final bucket).
                    sig_evicted += u64::from(self.push(Section::Sig, shape.sig_home(p, v), sig, packed));
                }
            }
        }
        let (mut nd_new, mut nd_evicted) = (0, 0);
        let keys = || add.nd_keys.iter().copied().filter(move |&k| part.holds_key(&shape, k));
        self.touch(keys().map(|k| self.nd_bucket(k).start));
        for k in keys() {
            nd_new += 1;
            nd_evicted += u64::from(self.push(Section::Nd, bucket_of(k, ND_SALT, shape.nd_buckets), k, seq));
        }
        self.bump(C_DOCS, 1);
        self.set(C_LAST_SEQ, seq);
        self.bump(C_DF_INSERTS, df_new);
        self.bump(C_DF_EVICTIONS, df_evicted);
        self.bump(C_SIG_INSERTS, sig_new);
        self.bump(C_SIG_EVICTIONS, sig_evicted);
        self.bump(C_SIG_COPIES, sig_copies);
        self.bump(C_ND_INSERTS, nd_new);
        self.bump(C_ND_EVICTIONS, nd_evicted);
    }
}

#[cfg(test)]
mod tests;
