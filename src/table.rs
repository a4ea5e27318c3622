//! The fixed-size bucketed shingle table in a memory-mapped file.
//!
//! Implements Section 2.2 of the origin-detection paper: a hash table split into
//! buckets of `B` entries (64 by default, 4-256 allowed); a selected fingerprint is
//! hashed to one bucket, searched there, and inserted when absent, evicting one entry
//! of a full bucket with Random, LRU, Copy-Count or Lucky eviction.
//!
//! Each entry takes 16 bytes (the paper's 14-18): 48 bits of the fingerprint (6 bytes),
//! the origin document's sequence number (6 bytes, up to 2^48 documents), the offset of
//! the shingle among its origin's selected shingles mod 256 (1), the top bytes of the
//! fingerprints of the selected shingles before and after it in the origin (1 + 1),
//! and the eviction byte (1). Within a bucket the 16-bit tags come first, then the
//! eviction bytes, then the rest of each entry as a 13-byte record: a lookup reads
//! three prefetched cache lines (B = 64) and an insert or hit one record. The byte
//! layout is in `docs/table-format.md`.
//!
//! The bucket is chosen from the top 32 bits of the 62-bit fingerprint by
//! multiply-shift (`bucket = (fp >> 30) * buckets >> 32`), so bucket order is
//! fingerprint order: a table can be cut into shards by the top fingerprint bits, each
//! shard a contiguous range of buckets. The stored 48 bits are the low ones, which the
//! bucket index does not use.
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
//!
//! All `unsafe` (the mapping) is in the private `mapping` module.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_64;

/// Bytes of the header page in front of the buckets.
pub const HEADER_BYTES: usize = 4096;
/// Bytes per entry.
pub const ENTRY_BYTES: usize = 16;
/// The file format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;
const MAGIC: &[u8; 8] = b"TXORTBL\0";
const PARAMS_MAX: usize = 512;
const CHECKSUM_AT: usize = 128 + PARAMS_MAX;
/// Largest origin sequence number an entry can hold.
pub const MAX_ORIGIN: u64 = (1 << 48) - 1;

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
    fn code(self) -> u8 {
        match self {
            Eviction::Random => 0,
            Eviction::Lru => 1,
            Eviction::CopyCount => 2,
            Eviction::Lucky => 3,
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
    /// Canonical text of every configuration value that shapes the table's content,
    /// stored in the header and compared on open (at most 512 bytes).
    pub fingerprint_text: String,
}

/// Errors of the table file.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    #[error("table file {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("table file {0}: not a textorigin table (bad magic)")]
    BadMagic(PathBuf),
    #[error("table file {path}: format version {found} is newer than this build's {FORMAT_VERSION}; upgrade textorigin")]
    NewerFormat { path: PathBuf, found: u32 },
    #[error("table file {path}: header checksum mismatch (the header is corrupt)")]
    Checksum { path: PathBuf },
    #[error("table file {path}: size is {found} bytes, the header says {expected}: the file was truncated or extended")]
    Length { path: PathBuf, found: u64, expected: u64 },
    #[error("table file {path} was made with other parameters.\n  stored:    {stored}\n  requested: {requested}\nUse the stored parameters (omit the differing options) or a new data directory")]
    Params { path: PathBuf, stored: String, requested: String },
    #[error("table file {0} was not closed cleanly (a run was interrupted): its content may be half-applied; rebuild it with `textorigin rebuild`")]
    NotClean(PathBuf),
    #[error("table size {bytes} bytes is too small: it needs at least {min} bytes for one bucket of {entries} entries")]
    TooSmall { bytes: u64, min: u64, entries: u32 },
    #[error("bucket size {0} is out of range (4-256 entries)")]
    BucketEntries(u32),
    #[error("configuration text is longer than {PARAMS_MAX} bytes")]
    ParamsTooLong,
    #[error("table file {0} is open read-only")]
    ReadOnly(PathBuf),
}

type Result<T> = std::result::Result<T, TableError>;

/// What a hit returns (Section 2.2, parts 2-4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// Where an entry was found or put: valid until the bucket changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Position {
    pub bucket: u64,
    pub slot: u32,
}

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
}

/// Top byte of a 62-bit fingerprint (the neighbour bytes of Section 2.2, part 4).
#[inline]
pub fn top_byte(fp: u64) -> u8 {
    (fp >> 54) as u8
}

/// SplitMix64 finalizer: the seeded mixing used for every pseudo-random choice.
#[inline]
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

mod mapping {
    //! The only `unsafe` of the crate: mapping the table file.
    use memmap2::{Mmap, MmapMut};
    use std::fs::File;

    pub enum Map {
        Ro(Mmap),
        Rw(MmapMut),
    }

    impl Map {
        pub fn read_only(file: &File) -> std::io::Result<Map> {
            // SAFETY: the file is only written through a mapping of this process or of
            // the single writer (guarded by the data directory's lock); a reader may see
            // a table in motion, never memory outside the fixed-size file.
            Ok(Map::Ro(unsafe { Mmap::map(file)? }))
        }

        pub fn read_write(file: &File) -> std::io::Result<Map> {
            // SAFETY: as above; the writer holds the data directory's lock, and the file
            // is preallocated and never resized while mapped.
            let m = unsafe { MmapMut::map_mut(file)? };
            // Buckets are visited at random: reading ahead around a fault only wastes work.
            m.advise(memmap2::Advice::Random)?;
            Ok(Map::Rw(m))
        }

        pub fn bytes(&self) -> &[u8] {
            match self {
                Map::Ro(m) => m,
                Map::Rw(m) => m,
            }
        }

        pub fn bytes_mut(&mut self) -> Option<&mut [u8]> {
            match self {
                Map::Ro(_) => None,
                Map::Rw(m) => Some(m),
            }
        }

        pub fn flush(&self) -> std::io::Result<()> {
            match self {
                Map::Ro(_) => Ok(()),
                Map::Rw(m) => m.flush(),
            }
        }
    }
}

/// Column offsets within a bucket, as multiples of the bucket's entry count B.
/// Bucket layout: `B` tags (u16), then `B` eviction bytes, then `B` records of 13 bytes
/// (fingerprint bits 16-47 as u32, origin as 48 bits, offset, prev, next). A lookup
/// reads the tags and the eviction bytes (adjacent, prefetched); an insert or a hit
/// then touches one record (at most two cache lines).
const COL_SCORE: usize = 2;
const COL_RECORD: usize = 3;
const RECORD: usize = 13;
/// (column, width) of every field, for moving whole entries.
const COLUMNS: [(usize, usize); 3] = [(0, 2), (COL_SCORE, 1), (COL_RECORD, RECORD)];

#[inline]
fn record(n: usize, slot: usize) -> usize {
    COL_RECORD * n + RECORD * slot
}

/// The table: a mapped file plus its parameters and counters.
pub struct Table {
    path: PathBuf,
    _file: File,
    map: mapping::Map,
    entries: usize,
    buckets: u64,
    eviction: Eviction,
    seed: u64,
    lucky_limit: u8,
    stats: TableStats,
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table").field("path", &self.path).field("buckets", &self.buckets).finish_non_exhaustive()
    }
}

/// Number of buckets a file of `bytes` holds with `entries` per bucket.
pub fn bucket_count(bytes: u64, entries: u32) -> u64 {
    bytes.saturating_sub(HEADER_BYTES as u64) / (ENTRY_BYTES as u64 * u64::from(entries))
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> TableError + '_ {
    move |source| TableError::Io { path: path.to_path_buf(), source }
}

fn get_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}
fn get_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
fn put_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}
fn put_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// Reserves the file's blocks so that writes through the mapping cannot hit a full disk
/// (a sparse mapped file turns a full disk into SIGBUS).
pub(crate) fn preallocate(file: &File, len: u64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let len = libc::off_t::try_from(len).map_err(|_| std::io::Error::other("table size too large"))?;
    // SAFETY: plain syscall on an owned, open descriptor.
    let rc = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, len) };
    match rc {
        0 => Ok(()),
        libc::EOPNOTSUPP | libc::EINVAL => file.set_len(len as u64), // filesystems without fallocate
        e => Err(std::io::Error::from_raw_os_error(e)),
    }
}

impl Table {
    /// Validates parameters without touching a file.
    pub fn check_params(p: &TableParams) -> Result<()> {
        if !(4..=256).contains(&p.bucket_entries) {
            return Err(TableError::BucketEntries(p.bucket_entries));
        }
        let min = HEADER_BYTES as u64 + (ENTRY_BYTES as u64) * u64::from(p.bucket_entries);
        if p.bytes < min {
            return Err(TableError::TooSmall { bytes: p.bytes, min, entries: p.bucket_entries });
        }
        if p.fingerprint_text.len() > PARAMS_MAX {
            return Err(TableError::ParamsTooLong);
        }
        Ok(())
    }

    /// Creates a new, empty, preallocated table file (fails if it exists).
    pub fn create(path: &Path, p: &TableParams) -> Result<Table> {
        Self::check_params(p)?;
        let file = OpenOptions::new().read(true).write(true).create_new(true).open(path).map_err(io(path))?;
        preallocate(&file, p.bytes).map_err(io(path))?;
        let mut header = vec![0u8; HEADER_BYTES];
        header[0..8].copy_from_slice(MAGIC);
        put_u32(&mut header, 8, FORMAT_VERSION);
        put_u32(&mut header, 12, HEADER_BYTES as u32);
        put_u64(&mut header, 16, p.bytes);
        put_u32(&mut header, 24, p.bucket_entries);
        put_u32(&mut header, 28, ENTRY_BYTES as u32);
        put_u64(&mut header, 32, bucket_count(p.bytes, p.bucket_entries));
        put_u64(&mut header, 40, p.seed);
        header[48] = p.eviction.code();
        header[49] = p.lucky_limit;
        header[50..52].copy_from_slice(&(p.fingerprint_text.len() as u16).to_le_bytes());
        header[128..128 + p.fingerprint_text.len()].copy_from_slice(p.fingerprint_text.as_bytes());
        let sum = xxh3_64(&header[..CHECKSUM_AT]);
        put_u64(&mut header, CHECKSUM_AT, sum);
        use std::io::Write;
        (&file).write_all(&header).map_err(io(path))?;
        file.sync_all().map_err(io(path))?;
        if let Some(dir) = path.parent() {
            File::open(dir).and_then(|d| d.sync_all()).map_err(io(path))?;
        }
        drop(file);
        Self::open(path, p, true)
    }

    /// Opens an existing table, checking that it was made with exactly `p`.
    /// A writable open marks the table "in use" until [`Table::close`]; it refuses a table
    /// that was not closed cleanly. A read-only open accepts one in use (a live writer).
    pub fn open(path: &Path, p: &TableParams, writable: bool) -> Result<Table> {
        Self::check_params(p)?;
        let mut t = Self::open_any(path, writable)?;
        let h = t.map.bytes();
        let plen = usize::from(u16::from_le_bytes([h[50], h[51]])).min(PARAMS_MAX);
        let stored = String::from_utf8_lossy(&h[128..128 + plen]).into_owned();
        let stored_shape = (get_u64(h, 16), get_u32(h, 24), h[48], get_u64(h, 40), h[49]);
        let wanted_shape = (p.bytes, p.bucket_entries, p.eviction.code(), p.seed, p.lucky_limit);
        if stored != p.fingerprint_text || stored_shape != wanted_shape {
            return Err(TableError::Params { path: path.to_path_buf(), stored, requested: p.fingerprint_text.clone() });
        }
        if writable {
            if t.map.bytes()[52] != 0 {
                return Err(TableError::NotClean(path.to_path_buf()));
            }
            t.header_mut()?[52] = 1;
            t.write_header()?;
            t.map.flush().map_err(io(path))?;
        }
        Ok(t)
    }

    /// Opens a table whatever its parameters (for inspection).
    pub fn open_any(path: &Path, writable: bool) -> Result<Table> {
        let file = OpenOptions::new().read(true).write(writable).open(path).map_err(io(path))?;
        let len = file.metadata().map_err(io(path))?.len();
        if len < HEADER_BYTES as u64 {
            return Err(TableError::BadMagic(path.to_path_buf()));
        }
        let map = if writable { mapping::Map::read_write(&file) } else { mapping::Map::read_only(&file) }
            .map_err(io(path))?;
        let h = map.bytes();
        if &h[0..8] != MAGIC {
            return Err(TableError::BadMagic(path.to_path_buf()));
        }
        let version = get_u32(h, 8);
        if version > FORMAT_VERSION {
            return Err(TableError::NewerFormat { path: path.to_path_buf(), found: version });
        }
        if get_u64(h, CHECKSUM_AT) != xxh3_64(&h[..CHECKSUM_AT]) {
            return Err(TableError::Checksum { path: path.to_path_buf() });
        }
        let expected = get_u64(h, 16);
        if expected != len {
            return Err(TableError::Length { path: path.to_path_buf(), found: len, expected });
        }
        let entries = get_u32(h, 24) as usize;
        let buckets = get_u64(h, 32);
        let eviction = match h[48] {
            0 => Eviction::Random,
            1 => Eviction::Lru,
            2 => Eviction::CopyCount,
            _ => Eviction::Lucky,
        };
        let stats = TableStats {
            last_seq: get_u64(h, 56),
            documents: get_u64(h, 64),
            lookups: get_u64(h, 72),
            hits: get_u64(h, 80),
            inserts: get_u64(h, 88),
            evictions: get_u64(h, 96),
            occupied: get_u64(h, 104),
            shingles: get_u64(h, 112),
        };
        if !(4..=256).contains(&entries) || bucket_count(len, entries as u32) != buckets {
            return Err(TableError::Checksum { path: path.to_path_buf() });
        }
        Ok(Table {
            path: path.to_path_buf(),
            seed: get_u64(h, 40),
            lucky_limit: h[49],
            _file: file,
            map,
            entries,
            buckets,
            eviction,
            stats,
        })
    }

    fn header_mut(&mut self) -> Result<&mut [u8]> {
        let path = self.path.clone();
        Ok(&mut self.map.bytes_mut().ok_or(TableError::ReadOnly(path))?[..HEADER_BYTES])
    }

    fn write_header(&mut self) -> Result<()> {
        let s = self.stats;
        let h = self.header_mut()?;
        for (at, v) in [
            (56, s.last_seq),
            (64, s.documents),
            (72, s.lookups),
            (80, s.hits),
            (88, s.inserts),
            (96, s.evictions),
            (104, s.occupied),
            (112, s.shingles),
        ] {
            put_u64(h, at, v);
        }
        let sum = xxh3_64(&h[..CHECKSUM_AT]);
        put_u64(h, CHECKSUM_AT, sum);
        Ok(())
    }

    /// Writes the counters into the mapped header, where readers see them, without
    /// flushing anything to disk.
    pub fn publish_counters(&mut self) -> Result<()> {
        self.write_header()
    }

    /// Writes the counters and flushes the mapping to disk (msync).
    pub fn flush(&mut self) -> Result<()> {
        self.write_header()?;
        self.map.flush().map_err(io(&self.path))
    }

    /// Flushes and marks the table cleanly closed.
    pub fn close(mut self) -> Result<()> {
        self.header_mut()?[52] = 0;
        self.flush()
    }

    /// Marks a table file closed (after it was restored from a checkpoint copy).
    pub fn mark_closed(path: &Path) -> Result<()> {
        let mut t = Self::open_any(path, true)?;
        t.header_mut()?[52] = 0;
        t.flush()
    }

    /// Whether the header says a writer has it open (or died with it open).
    pub fn in_use(&self) -> bool {
        self.map.bytes()[52] != 0
    }

    /// The path of the file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Counters.
    pub fn stats(&self) -> TableStats {
        self.stats
    }

    /// Mutable counters (the engine adds per-document totals).
    pub fn stats_mut(&mut self) -> &mut TableStats {
        &mut self.stats
    }

    /// Capacity in entries.
    pub fn capacity(&self) -> u64 {
        self.buckets * self.entries as u64
    }

    /// Entries per bucket.
    pub fn bucket_entries(&self) -> usize {
        self.entries
    }

    /// Number of buckets.
    pub fn buckets(&self) -> u64 {
        self.buckets
    }

    /// The eviction policy.
    pub fn eviction(&self) -> Eviction {
        self.eviction
    }

    /// The stored configuration text.
    pub fn params_text(&self) -> String {
        let h = self.map.bytes();
        let plen = usize::from(u16::from_le_bytes([h[50], h[51]])).min(PARAMS_MAX);
        String::from_utf8_lossy(&h[128..128 + plen]).into_owned()
    }

    /// xxh3-64 of the bucket region: equal digests, equal table content.
    pub fn digest(&self) -> u64 {
        let end = HEADER_BYTES + self.buckets as usize * self.bucket_bytes();
        xxh3_64(&self.map.bytes()[HEADER_BYTES..end])
    }

    fn bucket_bytes(&self) -> usize {
        self.entries * ENTRY_BYTES
    }

    /// The bucket of a fingerprint.
    #[inline]
    pub fn bucket_of(&self, fp: u64) -> u64 {
        ((fp >> 30 & 0xffff_ffff) * self.buckets) >> 32
    }

    #[inline]
    fn bucket(&self, b: u64) -> &[u8] {
        let len = self.bucket_bytes();
        let at = HEADER_BYTES + b as usize * len;
        &self.map.bytes()[at..at + len]
    }

    #[inline]
    fn bucket_mut(&mut self, b: u64) -> &mut [u8] {
        let len = self.bucket_bytes();
        let at = HEADER_BYTES + b as usize * len;
        match self.map.bytes_mut() {
            Some(m) => &mut m[at..at + len],
            None => panic!("write to a read-only table"),
        }
    }

    /// Hints the CPU to fetch the bucket of `fp` (tags and scores).
    #[inline]
    pub fn prefetch(&self, fp: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            let b = self.bucket(self.bucket_of(fp));
            let n = self.entries;
            // SAFETY: prefetch is a hint; the pointers are in bounds of the mapping.
            unsafe {
                use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                // tags and eviction bytes: 3·B bytes, up to four lines
                let mut at = 0;
                while at < (3 * n).min(256) {
                    _mm_prefetch::<_MM_HINT_T0>(b.as_ptr().add(at).cast());
                    at += 64;
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = fp;
    }

    /// Looks `fp` up without changing anything.
    pub fn lookup(&self, fp: u64) -> Option<(Position, Hit)> {
        let b = self.bucket_of(fp);
        let data = self.bucket(b);
        find(data, self.entries, fp).map(|slot| (Position { bucket: b, slot: slot as u32 }, read_hit(data, self.entries, slot)))
    }

    /// Looks `fp` up and, when absent, inserts it with `new` as its data (evicting if the
    /// bucket is full). Returns the hit (if found) and where the entry now is.
    /// `salt` feeds Random eviction (the engine passes document and position).
    pub fn process(&mut self, fp: u64, new: Hit, salt: u64) -> (Option<Hit>, Position) {
        debug_assert!(new.origin != 0 && new.origin <= MAX_ORIGIN);
        let n = self.entries;
        let b = self.bucket_of(fp);
        let (eviction, seed) = (self.eviction, self.seed);
        self.stats.lookups += 1;
        let data = self.bucket_mut(b);
        if let Some(slot) = find(data, n, fp) {
            let hit = read_hit(data, n, slot);
            let slot = match eviction {
                Eviction::CopyCount => {
                    let s = &mut data[COL_SCORE * n + slot];
                    *s = s.saturating_add(1);
                    if data[COL_SCORE * n..COL_SCORE * n + n].iter().filter(|&&s| s == 255).count() >= 10 {
                        halve(data, n);
                    }
                    slot
                }
                Eviction::Lru => {
                    let count = occupied(data, n);
                    move_to_back(data, n, slot, count);
                    count - 1
                }
                Eviction::Random | Eviction::Lucky => slot,
            };
            self.stats.hits += 1;
            return (Some(hit), Position { bucket: b, slot: slot as u32 });
        }
        let count = occupied(data, n);
        let slot = if count < n {
            count
        } else {
            match eviction {
                Eviction::Random => (mix(seed ^ mix(fp ^ mix(salt))) % n as u64) as usize,
                Eviction::Lru => {
                    move_to_back(data, n, 0, n);
                    n - 1
                }
                Eviction::CopyCount | Eviction::Lucky => lowest_score(data, n, mix(seed ^ fp)),
            }
        };
        write_entry(data, n, slot, fp, new);
        self.stats.inserts += 1;
        if count < n {
            self.stats.occupied += 1;
        } else {
            self.stats.evictions += 1;
        }
        (None, Position { bucket: b, slot: slot as u32 })
    }

    /// Whether the entry at `pos` still holds `fp`.
    pub fn holds(&self, pos: Position, fp: u64) -> bool {
        let data = self.bucket(pos.bucket);
        let slot = pos.slot as usize;
        data[COL_SCORE * self.entries + slot] != 0 && entry_matches(data, self.entries, slot, fp)
    }

    /// Adds Lucky score increments (sorted by position, each position once), saturating
    /// at 255, then applies rule (e) to every touched bucket.
    pub fn add_scores(&mut self, updates: &[(Position, u32)]) {
        let n = self.entries;
        let limit = u32::from(self.lucky_limit);
        let mut i = 0;
        while i < updates.len() {
            let b = updates[i].0.bucket;
            let data = self.bucket_mut(b);
            while i < updates.len() && updates[i].0.bucket == b {
                let (pos, add) = updates[i];
                let s = &mut data[COL_SCORE * n + pos.slot as usize];
                *s = (u32::from(*s) + add).min(255) as u8;
                i += 1;
            }
            let count = occupied(data, n);
            let sum: u32 = data[COL_SCORE * n..COL_SCORE * n + count].iter().map(|&s| u32::from(s)).sum();
            if count > 0 && sum >= limit * count as u32 {
                halve(data, n);
            }
        }
    }

    /// Reads every occupied entry (for tests and inspection).
    pub fn entries_of(&self, bucket: u64) -> Vec<(u64, Hit, u8)> {
        let n = self.entries;
        let data = self.bucket(bucket);
        (0..occupied(data, n))
            .map(|s| {
                let fp48 = u64::from(u16::from_le_bytes([data[2 * s], data[2 * s + 1]]))
                    | u64::from(get_u32(data, record(n, s))) << 16;
                (fp48, read_hit(data, n, s), data[COL_SCORE * n + s])
            })
            .collect()
    }
}

#[inline]
fn occupied(data: &[u8], n: usize) -> usize {
    data[COL_SCORE * n..COL_SCORE * n + n].iter().position(|&s| s == 0).unwrap_or(n)
}

#[inline]
fn entry_matches(data: &[u8], n: usize, slot: usize, fp: u64) -> bool {
    let tag = (fp & 0xffff) as u16;
    u16::from_le_bytes([data[2 * slot], data[2 * slot + 1]]) == tag
        && get_u32(data, record(n, slot)) == (fp >> 16) as u32
}

#[inline]
fn find(data: &[u8], n: usize, fp: u64) -> Option<usize> {
    let count = occupied(data, n);
    let tag = ((fp & 0xffff) as u16).to_le_bytes();
    let lo = (fp >> 16) as u32;
    (0..count).find(|&s| data[2 * s..2 * s + 2] == tag && get_u32(data, record(n, s)) == lo)
}

#[inline]
fn read_hit(data: &[u8], n: usize, slot: usize) -> Hit {
    let r = &data[record(n, slot)..record(n, slot) + RECORD];
    let origin = u64::from_le_bytes([r[4], r[5], r[6], r[7], r[8], r[9], 0, 0]);
    Hit { origin, offset: r[10], prev: r[11], next: r[12] }
}

fn write_entry(data: &mut [u8], n: usize, slot: usize, fp: u64, e: Hit) {
    data[2 * slot..2 * slot + 2].copy_from_slice(&((fp & 0xffff) as u16).to_le_bytes());
    let r = &mut data[record(n, slot)..record(n, slot) + RECORD];
    r[0..4].copy_from_slice(&((fp >> 16) as u32).to_le_bytes());
    r[4..10].copy_from_slice(&e.origin.to_le_bytes()[..6]);
    r[10] = e.offset;
    r[11] = e.prev;
    r[12] = e.next;
    data[COL_SCORE * n + slot] = 1;
}

/// Moves the entry at `slot` behind the others of the occupied prefix `..count`.
fn move_to_back(data: &mut [u8], n: usize, slot: usize, count: usize) {
    for (col, w) in COLUMNS {
        data[col * n + w * slot..col * n + w * count].rotate_left(w);
    }
}

/// Halves every occupied score, keeping occupied scores at 1 or more.
fn halve(data: &mut [u8], n: usize) {
    for s in &mut data[COL_SCORE * n..COL_SCORE * n + n] {
        if *s != 0 {
            *s = (*s / 2).max(1);
        }
    }
}

/// The slot with the lowest score of a full bucket; ties go to the `h mod ties`-th.
fn lowest_score(data: &[u8], n: usize, h: u64) -> usize {
    let scores = &data[COL_SCORE * n..COL_SCORE * n + n];
    let min = *scores.iter().min().expect("bucket not empty");
    let ties = scores.iter().filter(|&&s| s == min).count();
    let pick = (h % ties as u64) as usize;
    scores.iter().enumerate().filter(|(_, &s)| s == min).nth(pick).map(|(i, _)| i).expect("pick < ties")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn params(bytes: u64, entries: u32, eviction: Eviction) -> TableParams {
        TableParams { bytes, bucket_entries: entries, eviction, seed: 7, lucky_limit: 11, fingerprint_text: format!("test {eviction}") }
    }

    fn hit(origin: u64) -> Hit {
        Hit { origin, offset: origin as u8, prev: 1, next: 2 }
    }

    #[test]
    fn insert_then_find() {
        let dir = tempfile::tempdir().unwrap();
        let p = params(1 << 20, 64, Eviction::Lucky);
        let mut t = Table::create(&dir.path().join("t"), &p).unwrap();
        let fp = 0x2bad_cafe_f00d_1234 & crate::rabin::MASK;
        assert_eq!(t.process(fp, hit(5), 0).0, None);
        assert_eq!(t.process(fp, hit(9), 0).0, Some(hit(5)));
        assert_eq!(t.lookup(fp).map(|x| x.1), Some(hit(5)));
        assert_eq!(t.lookup(fp ^ 1), None);
        assert_eq!(t.stats().hits, 1);
        assert_eq!(t.stats().occupied, 1);
    }

    #[test]
    fn reopen_checks_parameters_and_clean_close() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t");
        let p = params(1 << 20, 64, Eviction::Lucky);
        let mut t = Table::create(&path, &p).unwrap();
        t.process(12345, hit(1), 0);
        drop(t); // not closed
        assert!(matches!(Table::open(&path, &p, true), Err(TableError::NotClean(_))));
        assert!(Table::open(&path, &p, false).is_ok(), "readers may look at a table in use");
        // Repair by hand for the rest of the test: mark clean.
        {
            let mut t = Table::open_any(&path, true).unwrap();
            t.header_mut().unwrap()[52] = 0;
            t.flush().unwrap();
        }
        let t = Table::open(&path, &p, true).unwrap();
        assert_eq!(t.stats().documents, 0);
        t.close().unwrap();
        let mut other = p.clone();
        other.fingerprint_text = "k=6".into();
        let err = Table::open(&path, &other, true).unwrap_err().to_string();
        assert!(err.contains("other parameters") && err.contains("k=6"), "{err}");
        let mut other = p.clone();
        other.bytes = 2 << 20;
        assert!(matches!(Table::open(&path, &other, true), Err(TableError::Params { .. })));
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 1 << 20);
    }

    #[test]
    fn corrupt_header_is_detected() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t");
        let p = params(1 << 16, 16, Eviction::Random);
        Table::create(&path, &p).unwrap().close().unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[130] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert!(matches!(Table::open(&path, &p, false), Err(TableError::Checksum { .. })));
        std::fs::write(&path, b"hello").unwrap();
        assert!(matches!(Table::open(&path, &p, false), Err(TableError::BadMagic(_))));
    }

    #[test]
    fn lru_evicts_least_recently_used() {
        let dir = tempfile::tempdir().unwrap();
        // One bucket of 4 entries: every fingerprint lands in it.
        let p = params(HEADER_BYTES as u64 + 4 * 16, 4, Eviction::Lru);
        let mut t = Table::create(&dir.path().join("t"), &p).unwrap();
        for fp in 1..=4 {
            t.process(fp, hit(fp), 0);
        }
        t.process(1, hit(9), 0); // 1 becomes most recent
        t.process(5, hit(5), 0); // evicts 2
        assert!(t.lookup(2).is_none());
        for fp in [1, 3, 4, 5] {
            assert_eq!(t.lookup(fp).unwrap().1.origin, fp);
        }
    }

    #[test]
    fn copy_count_evicts_lowest_count() {
        let dir = tempfile::tempdir().unwrap();
        let p = params(HEADER_BYTES as u64 + 4 * 16, 4, Eviction::CopyCount);
        let mut t = Table::create(&dir.path().join("t"), &p).unwrap();
        for fp in 1..=4 {
            t.process(fp, hit(fp), 0);
        }
        for fp in [1, 2, 4, 1, 2, 4] {
            t.process(fp, hit(99), 0);
        }
        t.process(5, hit(5), 0); // 3 has count 1
        assert!(t.lookup(3).is_none());
        assert!(t.lookup(5).is_some());
    }

    proptest! {
        #[test]
        fn eviction_never_exceeds_capacity(fps in proptest::collection::vec(1u64..5000, 1..600), ev in 0u8..4) {
            let eviction = [Eviction::Random, Eviction::Lru, Eviction::CopyCount, Eviction::Lucky][ev as usize];
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("t");
            let p = params(HEADER_BYTES as u64 + 3 * 8 * 16, 8, eviction);
            let mut t = Table::create(&path, &p).unwrap();
            let mut model = std::collections::HashSet::new();
            for (i, &fp) in fps.iter().enumerate() {
                // spread over all 62 bits so buckets differ
                let fp = crate::table::mix(fp) & crate::rabin::MASK;
                let (found, pos) = t.process(fp, hit(i as u64 + 1), i as u64);
                prop_assert!(t.holds(pos, fp));
                if found.is_some() { prop_assert!(model.contains(&fp)); }
                model.insert(fp);
                if eviction == Eviction::Lucky && i % 5 == 0 {
                    t.add_scores(&[(pos, 3)]);
                }
            }
            let mut total = 0;
            for b in 0..t.buckets() {
                let e = t.entries_of(b);
                prop_assert!(e.len() <= 8);
                total += e.len() as u64;
                for (fp48, _, _) in e {
                    prop_assert!(model.iter().any(|fp| fp & ((1 << 48) - 1) == fp48));
                }
            }
            prop_assert_eq!(total, t.stats().occupied);
            prop_assert_eq!(t.stats().inserts, t.stats().occupied + t.stats().evictions);
            prop_assert!(total <= t.capacity());
            drop(t);
            prop_assert_eq!(std::fs::metadata(&path).unwrap().len(), p.bytes);
        }
    }
}
