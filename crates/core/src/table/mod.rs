//! The bucketed shingle table of Section 2.2, over a byte slice.
//!
//! Implements Section 2.2 of the origin-detection paper: a hash table split into
//! buckets of `B` entries (64 by default, 4-256 allowed); a selected fingerprint is
//! hashed to one bucket, searched there, and inserted when absent, evicting one entry
//! of a full bucket with Random, LRU, Copy-Count or Lucky eviction.
//!
//! This module is the bucket logic only: [`Table`] works over any [`BucketMemory`],
//! a `Vec<u8>` in memory (tests, evaluation) or the memory-mapped table file of the
//! storage crate (`textorigin_store::storage::table_file`), which adds the header, the
//! mapping and the files. The same bytes give the same answers either way.
//!
//! Each entry takes 16 bytes (the paper's 14-18): 56 bits of the fingerprint (7 bytes:
//! bits 6-61, the top 32 of them those bucket placement uses), the origin document's
//! sequence number (5 bytes, up to 2^40 documents), the offset of the shingle among its
//! origin's selected shingles mod 256 (1), the top bytes of the fingerprints of the
//! selected shingles before and after it in the origin (1 + 1), and the eviction byte
//! (1). Within a bucket the 16-bit tags come first, then the eviction bytes, then the
//! rest of each entry as a 13-byte record: a lookup reads three prefetched cache lines
//! (B = 64) and an insert or hit one record. The byte layout is in
//! `docs/table-format.md`.
//!
//! The bucket is chosen from the top 32 bits of the 62-bit fingerprint by
//! multiply-shift (`bucket = (fp >> 30) * buckets >> 32`), so bucket order is
//! fingerprint order: a table can be cut into shards by the top fingerprint bits, each
//! shard a contiguous range of buckets.
//!
//! **The buckets in use grow inside the fixed memory** (`grow.rs`): a table of N
//! buckets starts with one bucket in use and doubles the buckets in use when one would
//! overflow, until it spans all N; only then does eviction begin. With `shift` s, bucket
//! `c >> s` in use holds the entries of the N-bucket table's buckets `c` (their final
//! buckets), each final bucket's entries in the order the N-bucket table keeps them; an
//! entry's final bucket is known from its stored bits. Scores, halving (Copy-Count,
//! Lucky's rule e), LRU's order and [`Position`]s are all taken per final bucket, so a
//! growing table answers every operation as the table spanning its memory from the start
//! would, byte for byte, and equals it once it spans: the growth changes which memory is
//! touched, never a result.
//!
//! **Density** ([`crate::select`]): with an adaptive density the table keeps
//! the threshold in force ([`TableStats::density`]; a new table's,
//! [`crate::select::START`], selects a quarter of the shingles the policy leaves out)
//! and marks the entries inserted for extra shingles (not the policy's). While the
//! buckets in use grow nothing is evicted, so the threshold stays; once the table spans
//! its memory a full bucket gives up an extra entry before any of the policy's:
//! - an extra entry whose rank is below the threshold (stale: its shingle is no longer
//!   selected, in a table an older version raised by steps) goes first; with none, and
//!   some extra entry in the bucket, the bucket *asks* for a raise of the threshold to
//!   the floor (the paper's selection, for the whole table);
//! - else an extra entry by the policy's rule (all score alike: a seeded pick for
//!   Copy-Count, Lucky and Random, the first in queue order for LRU); a bucket without
//!   extra entries evicts by the policy for a policy shingle and refuses an extra one,
//!   which is then looked up only (as is an extra shingle a raise left below the
//!   threshold).
//!
//! **Extra entries are guests**: at every document's end the
//! policy's entries of an adaptive table are exactly the paper's table's — the same
//! entries, data and scores, in the same order in each bucket — so that after the
//! sweep at the floor the table *is* the paper's, byte for byte, whatever the density
//! did before (the property test `guests_leave_the_papers_table_as_it_is`). Hence an
//! extra entry given up leaves its place (the entries behind it move up) and the new
//! one goes last, where the paper's table had a free slot; an extra shingle, and any
//! lookup that finds an extra entry, only reads (no score, no move in LRU's queue:
//! extra entries are never scored); a policy shingle that finds an extra entry makes
//! the policy's entry anew, last, and counts as not found, as in the paper's table;
//! halving (Copy-Count's, Lucky's rule e) is decided by the policy's entries; and the
//! engine scores and relabels the policy's entries from the estimate of the policy's
//! shingles alone, their offsets and neighbour bytes taken among them
//! ([`crate::engine`]).
//!
//! The raise comes at the end of a document: the first ask, made
//! while the table's document `d` (counting from 0) is applied, raises the threshold at
//! the end of document `d + L − 1`, `L` the table's lag
//! ([`crate::select::DENSITY_LAG`], 32 for a new data directory), so that the threshold
//! is constant through a document and shards, which each see a part of the buckets, can
//! agree on where it moves (`docs/SCALE-OUT.md`, "The single node's defaults"); a lag
//! of 0 (tables made before schema 23) raises it at once, in the middle of the
//! document. At [`crate::select::FLOOR`] (no extra shingle selected) the end of the
//! document sweeps every extra entry out ([`Table::end_document`]): from then on the
//! table is the paper's, its results are the paper's and it costs nothing more. So the
//! extra shingles add to the results while the table has room, and from `L` documents
//! after the first full bucket on the results are exactly the paper's (extra entries
//! kept while the table evicts gave results below the paper's: `docs/EVALUATION.md`). Without an adaptive density no entry is marked and every choice is the
//! paper's.
//!
//! Occupied entries of a bucket are a prefix; the eviction byte of an occupied entry is
//! never 0, and 0 marks the first free slot. Random and LRU keep it at 1.
//!
//! Eviction choices the paper leaves open (see also `../shared/papers/README.md`):
//! - Random picks slot `mix(seed, fingerprint, salt) mod B`: seeded and stateless, so a
//!   replay gives the same table.
//! - Copy-Count and Lucky evict the lowest score; ties are broken by a seeded hash of
//!   the incoming fingerprint, not by position (positional ties were measured to cost
//!   much DO).
//! - Copy-Count: a hit adds 1 (saturating at 255); when 10 entries of a bucket reach
//!   255, all scores of the bucket are halved. Halving never takes a score below 1.
//! - Lucky: scores are added by the engine after a document is estimated
//!   ([`Table::add_scores`]); when the average score of a touched bucket reaches the
//!   limit (11), the bucket's scores are halved (again, not below 1).
//! - LRU keeps each bucket in queue order: a hit moves the entry to the back, an
//!   insertion into a full bucket evicts the front.

use serde::{Deserialize, Serialize};

use crate::hash::mix;
use crate::memory::RangeMut;

mod bucket;
#[cfg(test)]
mod tests;

mod density;
pub use density::PendingRaise;
mod entries;
mod grow;

use crate::select::{FLOOR, SELECTED};
use bucket::{
    find, halve, is_extra, lowest_score, move_to_back, occupied, read_hit, stored_bits, write_entry, COL_SCORE,
};

/// Bytes of the header page in front of the buckets in a table file.
pub const HEADER_BYTES: usize = 4096;
/// Bytes per entry.
pub const ENTRY_BYTES: usize = 16;
/// Longest configuration text a table header holds.
pub const PARAMS_MAX: usize = 504;
/// Slot numbers 0..256: every slot of a bucket is `&ALL_SLOTS[..B]`.
const ALL_SLOTS: [usize; 256] = {
    let mut a = [0; 256];
    let mut i = 0;
    while i < 256 {
        a[i] = i;
        i += 1;
    }
    a
};

/// Largest origin sequence number an entry can hold (39 bits; bit 39 of the stored
/// origin is the extra flag).
pub const MAX_ORIGIN: u64 = (1 << 39) - 1;

/// Eviction policy of a full bucket (Section 2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Eviction {
    /// Random (seeded, deterministic).
    Random,
    /// Least recently used.
    Lru,
    /// Copy-Count.
    CopyCount,
    /// Lucky scores (rules a-e).
    #[default]
    Lucky,
}

impl Eviction {
    /// The byte that stands for the policy in a table header.
    pub fn code(self) -> u8 {
        match self {
            Eviction::Random => 0,
            Eviction::Lru => 1,
            Eviction::CopyCount => 2,
            Eviction::Lucky => 3,
        }
    }

    /// The policy of a header byte; `None` for a code no build wrote (a corrupt header).
    pub fn from_code(code: u8) -> Option<Eviction> {
        match code {
            0 => Some(Eviction::Random),
            1 => Some(Eviction::Lru),
            2 => Some(Eviction::CopyCount),
            3 => Some(Eviction::Lucky),
            _ => None,
        }
    }
}

impl std::fmt::Display for Eviction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Eviction::Random => "R",
            Eviction::Lru => "LRU",
            Eviction::CopyCount => "CC",
            Eviction::Lucky => "LS",
        })
    }
}

impl std::str::FromStr for Eviction {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "r" | "random" => Ok(Eviction::Random),
            "lru" => Ok(Eviction::Lru),
            "cc" | "copy-count" | "copycount" => Ok(Eviction::CopyCount),
            "ls" | "lucky" => Ok(Eviction::Lucky),
            _ => Err(format!("unknown eviction `{s}`; expected random (R), lru, copy-count (CC) or lucky (LS)")),
        }
    }
}

/// What the table must be; a stored table must match exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableParams {
    /// Total file size in bytes (header included).
    pub bytes: u64,
    /// Entries per bucket (4-256).
    pub bucket_entries: u32,
    /// Eviction policy.
    pub eviction: Eviction,
    /// Seed of every pseudo-random choice.
    pub seed: u64,
    /// Lucky rule (e): halve a bucket when its average score reaches this.
    pub lucky_limit: u8,
    /// Bytes of the derived indexes stored behind the buckets ([`crate::index`]); the
    /// file is `bytes + index_bytes` long.
    pub index_bytes: u64,
    /// Canonical text of every configuration value that shapes the table's content,
    /// stored in the header and compared on open (at most 512 bytes).
    pub fingerprint_text: String,
    /// An adaptive selection density: the table keeps the threshold and
    /// marks extra entries.
    pub adaptive: bool,
    /// Documents from a full bucket's first ask for a raise of the threshold to the
    /// raise ([`crate::select::DENSITY_LAG`]; 0: at once).
    pub density_lag: u8,
}

/// Parameters that cannot make a table.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParamsError {
    #[error(
        "table size {bytes} bytes is too small: it needs at least {min} bytes for one bucket of {entries} entries"
    )]
    TooSmall { bytes: u64, min: u64, entries: u32 },
    #[error("bucket size {0} is out of range (4-256 entries)")]
    BucketEntries(u32),
    #[error("configuration text is longer than {PARAMS_MAX} bytes")]
    ParamsTooLong,
    #[error(transparent)]
    IndexTooSmall(#[from] crate::index::IndexTooSmall),
}

impl TableParams {
    /// Checks that the parameters make a table.
    pub fn check(&self) -> Result<(), ParamsError> {
        if !(4..=256).contains(&self.bucket_entries) {
            return Err(ParamsError::BucketEntries(self.bucket_entries));
        }
        let min = HEADER_BYTES as u64 + (ENTRY_BYTES as u64) * u64::from(self.bucket_entries);
        if self.bytes < min {
            return Err(ParamsError::TooSmall { bytes: self.bytes, min, entries: self.bucket_entries });
        }
        if self.fingerprint_text.len() > PARAMS_MAX {
            return Err(ParamsError::ParamsTooLong);
        }
        if self.index_bytes < crate::index::MIN_INDEX_BYTES {
            return Err(crate::index::IndexTooSmall(self.index_bytes).into());
        }
        Ok(())
    }

    /// Number of buckets.
    pub fn buckets(&self) -> u64 {
        bucket_count(self.bytes, self.bucket_entries)
    }

    /// The same table with a single bucket: the file of a process whose buckets are
    /// held elsewhere (a sharded deployment's aggregator), keeping the header, the
    /// configuration text and the derived-index region.
    pub fn with_one_bucket(&self) -> TableParams {
        TableParams { bytes: HEADER_BYTES as u64 + ENTRY_BYTES as u64 * u64::from(self.bucket_entries), ..self.clone() }
    }
}

/// What a hit returns (Section 2.2, parts 2-4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hit {
    /// Sequence number of the origin document.
    pub origin: u64,
    /// Offset of the shingle among its origin's selected shingles, mod 256.
    pub offset: u8,
    /// Top byte of the preceding selected shingle in the origin.
    pub prev: u8,
    /// Top byte of the succeeding selected shingle in the origin.
    pub next: u8,
}

/// Where an entry was found or put: valid until the bucket changes. Taken in the
/// table that spans its memory (the same while it grows): the entry's final bucket and
/// its place among that bucket's entries — among the policy's entries alone in an
/// adaptive table, so that a policy entry's position is the paper's table's (the moves
/// of extra entries leave it), and [`GUEST`] for an extra entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Position {
    pub bucket: u64,
    pub slot: u32,
}

/// The [`Position::slot`] of an extra entry (a guest: held while its bucket holds it).
pub const GUEST: u32 = u32::MAX - 1;

/// Counters kept in the header.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableStats {
    /// Sequence number of the last document applied (0: none).
    pub last_seq: u64,
    /// Documents applied.
    pub documents: u64,
    /// Lookups (selected fingerprints sent).
    pub lookups: u64,
    /// Lookups that found their fingerprint.
    pub hits: u64,
    /// Entries inserted.
    pub inserts: u64,
    /// Entries evicted to make room.
    pub evictions: u64,
    /// Entries occupied now.
    pub occupied: u64,
    /// k-shingles of all applied documents (for ssr).
    pub shingles: u64,
    /// The density threshold in force ([`crate::select::kept`]):
    /// [`crate::select::START`] for a new table, raised when the table needs room, up
    /// to [`crate::select::FLOOR`].
    /// Meaningful with an adaptive density only ([`Table::density`]).
    pub density: u8,
}

impl TableStats {
    /// The counters of a new table of parameters `p`: none, and the density threshold
    /// at [`crate::select::START`] when it is adaptive.
    pub fn new(p: &TableParams) -> TableStats {
        TableStats { density: if p.adaptive { crate::select::START } else { 0 }, ..TableStats::default() }
    }
}

/// The bucket of fingerprint `fp` in a table of `buckets` buckets: a multiply-shift of
/// its top 32 bits.
#[inline]
pub fn bucket_of(fp: u64, buckets: u64) -> u64 {
    ((fp >> 30 & 0xffff_ffff) * buckets) >> 32
}

/// Top byte of a 62-bit fingerprint (the neighbour bytes of Section 2.2, part 4).
#[inline]
pub fn top_byte(fp: u64) -> u8 {
    (fp >> 54) as u8
}

/// Number of buckets a file of `bytes` holds with `entries` per bucket.
pub fn bucket_count(bytes: u64, entries: u32) -> u64 {
    bytes.saturating_sub(HEADER_BYTES as u64) / (ENTRY_BYTES as u64 * u64::from(entries))
}

/// The bytes the buckets live in, bucket after bucket, at least
/// `buckets · entries · ENTRY_BYTES` long; written through [`RangeMut`].
pub trait BucketMemory: RangeMut {
    /// The bucket bytes.
    fn bytes(&self) -> &[u8];
    /// Hints the CPU to fetch the cache line holding byte `at` (a lookup is coming).
    /// Only a hint: the default does nothing.
    #[inline]
    fn prefetch(&self, at: usize) {
        let _ = at;
    }
}

impl BucketMemory for Vec<u8> {
    fn bytes(&self) -> &[u8] {
        self
    }
}

/// The shape of a table: what its header or its parameters say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Entries per bucket (4-256).
    pub entries: u32,
    /// Number of buckets.
    pub buckets: u64,
    /// Eviction policy.
    pub eviction: Eviction,
    /// Seed of every pseudo-random choice.
    pub seed: u64,
    /// Lucky rule (e) limit.
    pub lucky_limit: u8,
    /// Buckets in use: `((buckets - 1) >> shift) + 1`; 0 once the table spans its
    /// memory, [`widest_shift`] for a new table.
    pub shift: u8,
    /// An adaptive selection density ([`TableParams::adaptive`]).
    pub adaptive: bool,
    /// Its lag ([`TableParams::density_lag`]).
    pub density_lag: u8,
}

impl From<&TableParams> for Shape {
    /// The shape of a new table: one bucket in use.
    fn from(p: &TableParams) -> Shape {
        Shape {
            entries: p.bucket_entries,
            buckets: p.buckets(),
            eviction: p.eviction,
            seed: p.seed,
            lucky_limit: p.lucky_limit,
            shift: widest_shift(p.buckets()),
            adaptive: p.adaptive,
            density_lag: p.density_lag,
        }
    }
}

/// The shift of a table of `buckets` buckets with one bucket in use.
pub fn widest_shift(buckets: u64) -> u8 {
    (64 - buckets.saturating_sub(1).leading_zeros()) as u8
}

/// The table: bucket logic over a [`BucketMemory`], plus its counters.
pub struct Table<M> {
    mem: M,
    entries: usize,
    buckets: u64,
    shift: u8,
    eviction: Eviction,
    seed: u64,
    lucky_limit: u8,
    stats: TableStats,
    adaptive: bool,
    density_lag: u8,
    /// The table's document ([`TableStats::documents`] while it was applied) that
    /// first asked for a raise of the threshold since the last raise.
    ask: Option<u64>,
    /// The asks since ([`PendingRaise::asks`]).
    asks: u64,
    /// The asks of the document being applied.
    doc_asks: u64,
    /// The threshold reached the floor during this document: extra entries are swept
    /// out at its end.
    sweep: bool,
}

impl<M> std::fmt::Debug for Table<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table").field("buckets", &self.buckets).field("entries", &self.entries).finish_non_exhaustive()
    }
}

impl Table<Vec<u8>> {
    /// An empty table in memory with the shape `p` describes (no header: only buckets).
    pub fn in_memory(p: &TableParams) -> Result<Table<Vec<u8>>, ParamsError> {
        p.check()?;
        let shape = Shape::from(p);
        let len = shape.buckets as usize * shape.entries as usize * ENTRY_BYTES;
        Ok(Table::over(vec![0; len], shape, TableStats::new(p)))
    }
}

impl<M: BucketMemory> Table<M> {
    /// The table held in `mem`, with `stats` as its counters.
    ///
    /// # Panics
    /// When `mem` is shorter than the shape's buckets or the shape is out of range
    /// (callers check headers and parameters first).
    pub fn over(mem: M, shape: Shape, stats: TableStats) -> Table<M> {
        assert!((4..=256).contains(&shape.entries), "bucket entries out of range");
        let entries = shape.entries as usize;
        assert!(mem.bytes().len() >= shape.buckets as usize * entries * ENTRY_BYTES, "bucket memory too short");
        assert!(shape.shift <= widest_shift(shape.buckets), "shift out of range");
        Table {
            mem,
            entries,
            buckets: shape.buckets,
            shift: shape.shift,
            eviction: shape.eviction,
            seed: shape.seed,
            lucky_limit: shape.lucky_limit,
            stats,
            adaptive: shape.adaptive,
            density_lag: shape.density_lag,
            ask: None,
            asks: 0,
            doc_asks: 0,
            sweep: false,
        }
    }

    /// The memory the buckets live in.
    pub fn memory(&self) -> &M {
        &self.mem
    }

    /// The memory the buckets live in, for writing (the table file's header).
    pub fn memory_mut(&mut self) -> &mut M {
        &mut self.mem
    }

    /// Counters.
    pub fn stats(&self) -> TableStats {
        self.stats
    }

    /// Mutable counters (the engine adds per-document totals).
    pub fn stats_mut(&mut self) -> &mut TableStats {
        &mut self.stats
    }

    /// Capacity in entries (once the table spans its memory).
    pub fn capacity(&self) -> u64 {
        self.buckets * self.entries as u64
    }

    /// Entries per bucket.
    pub fn bucket_entries(&self) -> usize {
        self.entries
    }

    /// Number of buckets of the memory (of the table once it spans it).
    pub fn buckets(&self) -> u64 {
        self.buckets
    }

    /// The shift: buckets in use are [`Table::used_buckets`].
    pub fn shift(&self) -> u8 {
        self.shift
    }

    /// Buckets in use, at the start of the memory: `((buckets - 1) >> shift) + 1`.
    pub fn used_buckets(&self) -> u64 {
        ((self.buckets - 1) >> self.shift) + 1
    }

    /// The eviction policy.
    pub fn eviction(&self) -> Eviction {
        self.eviction
    }

    /// The bytes of the buckets in `r` (a shard's range, [`crate::shard`]).
    ///
    /// # Panics
    /// When the table does not span its memory ([`Table::span`]).
    pub fn range_bytes(&self, r: std::ops::Range<u64>) -> &[u8] {
        assert_eq!(self.shift, 0, "a bucket range of a table that does not span its memory");
        let len = self.bucket_bytes();
        &self.mem.bytes()[r.start as usize * len..r.end as usize * len]
    }

    /// The bytes of the buckets in `r`, for writing.
    ///
    /// # Panics
    /// When the table does not span its memory ([`Table::span`]).
    pub fn range_bytes_mut(&mut self, r: std::ops::Range<u64>) -> &mut [u8] {
        assert_eq!(self.shift, 0, "a bucket range of a table that does not span its memory");
        let len = self.bucket_bytes();
        self.mem.range_mut(r.start as usize * len..r.end as usize * len)
    }

    fn bucket_bytes(&self) -> usize {
        self.entries * ENTRY_BYTES
    }

    /// The final bucket of a fingerprint: its bucket once the table spans its memory
    /// ([`Position::bucket`]).
    #[inline]
    pub fn bucket_of(&self, fp: u64) -> u64 {
        bucket_of(fp, self.buckets)
    }

    #[inline]
    fn bucket(&self, b: u64) -> &[u8] {
        let len = self.bucket_bytes();
        let at = b as usize * len;
        &self.mem.bytes()[at..at + len]
    }

    #[inline]
    fn bucket_mut(&mut self, b: u64) -> &mut [u8] {
        let len = self.bucket_bytes();
        let at = b as usize * len;
        self.mem.range_mut(at..at + len)
    }

    /// Hints the CPU to fetch the bucket of `fp` (tags and eviction bytes: 3·B bytes,
    /// up to four cache lines), through [`BucketMemory::prefetch`].
    #[inline]
    pub fn prefetch(&self, fp: u64) {
        let at = (self.bucket_of(fp) >> self.shift) as usize * self.bucket_bytes();
        let mut off = 0;
        while off < (3 * self.entries).min(256) {
            self.mem.prefetch(at + off);
            off += 64;
        }
    }

    /// Looks `fp` up without changing anything.
    pub fn lookup(&self, fp: u64) -> Option<(Position, Hit)> {
        let c = self.bucket_of(fp);
        let data = self.bucket(c >> self.shift);
        find(data, self.entries, fp).map(|slot| (self.position(data, c, slot), read_hit(data, self.entries, slot)))
    }

    /// Looks `fp` up and, when absent, inserts it with `new` as its data (growing the
    /// buckets in use, or evicting once the table spans its memory, if the bucket is
    /// full). Returns the hit (if found) and where the entry now is.
    /// `salt` feeds Random eviction (the engine passes document and position). `rank`
    /// is the shingle's ([`crate::select::Item::rank`]): an extra shingle's entry is
    /// marked, evicted first, and may be refused (then the position holds nothing).
    pub fn process(&mut self, fp: u64, new: Hit, salt: u64, rank: u8) -> (Option<Hit>, Position) {
        let (hit, pos, _) = self.process_noting(fp, new, salt, rank);
        (hit, pos)
    }

    /// [`Table::process`], also giving what the extra entry a policy shingle found held
    /// before the shingle made the policy's entry anew (the shingle counts as not
    /// found, as in the paper's table: the module docs, "Extra entries are guests").
    pub fn process_noting(&mut self, fp: u64, new: Hit, salt: u64, rank: u8) -> (Option<Hit>, Position, Option<Hit>) {
        debug_assert!(new.origin != 0 && new.origin <= MAX_ORIGIN);
        let n = self.entries;
        let c = self.bucket_of(fp);
        self.stats.lookups += 1;
        while self.shift > 0 && {
            let data = self.bucket(c >> self.shift);
            occupied(data, n) == n && find(data, n, fp).is_none()
        } {
            self.grow();
        }
        let eviction = self.eviction;
        let (adaptive, density, sweeping) = (self.adaptive, self.stats.density, self.sweep);
        // Copy-Count's halving needs the final bucket's entries (read from the records)
        // only when the bucket in use has ten counts about to be 255.
        let finals = if eviction == Eviction::CopyCount
            && self.bucket(c >> self.shift)[COL_SCORE * n..COL_SCORE * n + n].iter().filter(|&&s| s >= 254).count()
                >= 10
        {
            self.finals(c >> self.shift)
        } else {
            None
        };
        let data = self.bucket_mut(c >> self.shift);
        let member = |i: usize| finals.as_ref().is_none_or(|f| f.get(i) == Some(&c));
        if let Some(slot) = find(data, n, fp) {
            let count = occupied(data, n);
            if adaptive && is_extra(data, n, slot) && rank == SELECTED {
                // A guest found by a policy shingle: the paper's table does not hold
                // it, so the policy's entry is made as the paper makes it (behind the
                // others, new), and the lookup counts as not found.
                let guest = read_hit(data, n, slot);
                move_to_back(data, n, slot, count);
                write_entry(data, n, count - 1, fp, new, false);
                self.stats.inserts += 1;
                let data = self.bucket(c >> self.shift);
                return (None, self.position(data, c, count - 1), Some(guest));
            }
            let hit = read_hit(data, n, slot);
            // A guest, or an extra shingle, is only read: the policy's entries change as
            // in the paper's table, which never looks an extra shingle up.
            let slot = match eviction {
                _ if rank != SELECTED || is_extra(data, n, slot) => slot,
                Eviction::CopyCount => {
                    let s = &mut data[COL_SCORE * n + slot];
                    *s = s.saturating_add(1);
                    let full = (0..n)
                        .filter(|&i| data[COL_SCORE * n + i] == 255 && member(i) && !is_extra(data, n, i))
                        .count();
                    if full >= 10 {
                        halve(data, n, member);
                    }
                    slot
                }
                Eviction::Lru => {
                    move_to_back(data, n, slot, count);
                    count - 1
                }
                Eviction::Random | Eviction::Lucky => slot,
            };
            self.stats.hits += 1;
            let data = self.bucket(c >> self.shift);
            return (Some(hit), self.position(data, c, slot), None);
        }
        let count = occupied(data, n);
        let slot = if count < n {
            count
        } else if adaptive && (density < FLOOR || sweeping) {
            // Extra entries may be in the bucket (until the sweep at the floor).
            let Some(slot) = self.victim(c, fp, salt, rank) else {
                return (None, Position { bucket: c, slot: u32::MAX }, None);
            };
            slot
        } else {
            self.policy_victim(c, fp, salt, &ALL_SLOTS[..n])
        };
        let data = self.bucket_mut(c >> self.shift);
        // A guest given up leaves its place: the entries behind it move up and the new
        // one goes last, as in the paper's table, which had a free slot there.
        let slot = if count == n && is_extra(data, n, slot) {
            move_to_back(data, n, slot, n);
            n - 1
        } else {
            slot
        };
        write_entry(data, n, slot, fp, new, rank != SELECTED);
        self.stats.inserts += 1;
        if count < n {
            self.stats.occupied += 1;
        } else {
            self.stats.evictions += 1;
        }
        let data = self.bucket(c >> self.shift);
        (None, self.position(data, c, slot), None)
    }

    /// The slot the eviction policy gives up for `fp` in the full final bucket `c` (the
    /// table spanning its memory), choosing among the slots `among` (in bucket order,
    /// not empty): every one ([`ALL_SLOTS`]), or the extra entries the density gives up
    /// first. Random: a seeded pick; LRU: the first, moved to the back; Copy-Count and
    /// Lucky: the lowest score.
    pub(super) fn policy_victim(&mut self, c: u64, fp: u64, salt: u64, among: &[usize]) -> usize {
        let (n, seed) = (self.entries, self.seed);
        match self.eviction {
            Eviction::Random => among[(mix(seed ^ mix(fp ^ mix(salt))) % among.len() as u64) as usize],
            Eviction::Lru => {
                move_to_back(self.bucket_mut(c), n, among[0], n);
                n - 1
            }
            Eviction::CopyCount | Eviction::Lucky => lowest_score(self.bucket(c), n, among, mix(seed ^ fp)),
        }
    }

    /// Reads every occupied entry of bucket `bucket` in use, as (the fingerprint bits
    /// stored: 6-61, the hit, the score) (for tests and inspection).
    pub fn entries_of(&self, bucket: u64) -> Vec<(u64, Hit, u8)> {
        let n = self.entries;
        let data = self.bucket(bucket);
        (0..occupied(data, n))
            .map(|s| (stored_bits(data, n, s), read_hit(data, n, s), data[COL_SCORE * n + s]))
            .collect()
    }
}
