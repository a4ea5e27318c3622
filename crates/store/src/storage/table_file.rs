//! The table file: the bucketed table of `textorigin_core::table` in a memory-mapped,
//! sparse file with a header page (`docs/table-format.md`).
//!
//! The core's [`Table`] does the bucket logic over the mapped bytes behind the header;
//! this module owns the file: creating it (sparse: blocks are taken as chunks are
//! written, `storage::dirty`), the header (magic, format
//! version, shape, configuration text, counters, the in-use flag, a checksum), opening
//! it with exactly the parameters it was made with, flushing and closing.
//!
//! The mapping itself (the `unsafe` part) is in `crate::sys`.

use std::fs::{File, OpenOptions};
use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};

use crate::storage::dirty::Dirty;
use crate::sys::Map;
use textorigin_core::index::INDEX_HEADER_BYTES;
use textorigin_core::memory::RangeMut;
use textorigin_core::select::FLOOR;
use textorigin_core::table::{
    bucket_count, widest_shift, BucketMemory, Eviction, ParamsError, PendingRaise, Shape, Table, TableParams,
    TableStats, ENTRY_BYTES, HEADER_BYTES, PARAMS_MAX,
};
use xxhash_rust::xxh3::xxh3_64;

/// The file format version this build writes and reads.
/// Version 2 added the derived indexes behind the buckets (header offset 120); version
/// 3 the buckets in use growing inside the file (the shift at header offset 53) and the
/// entry layout that makes it possible (fingerprint bits 6-61, 40-bit origins; with
/// a selection density, 39 bits of origin and the extra flag, with the density threshold at header
/// offset 54: both 0 in files made before, which read as they are); version 4 the
/// signature chains kept inside their groups of 8 buckets (so that the derived indexes
/// split by bucket range); version 6 the derived indexes' sections growing inside
/// their region (`textorigin_core::index`, the doublings counted at offsets 72-95 of
/// its counters page; version 5, never released, grew signature buckets in use with
/// the room of one final bucket).
pub const FORMAT_VERSION: u32 = 6;
const MAGIC: &[u8; 8] = b"TXORTBL\0";
const CHECKSUM_AT: usize = 640;
/// The asks of a pending raise of the density threshold (schema 23), behind the
/// configuration text.
const ASKS_AT: usize = 128 + PARAMS_MAX;

/// Errors of the table file.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    #[error("table file {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("table file {0}: not a textorigin table (bad magic)")]
    BadMagic(PathBuf),
    #[error(
        "table file {path}: format version {found} is newer than this build's {FORMAT_VERSION}; upgrade textorigin"
    )]
    NewerFormat { path: PathBuf, found: u32 },
    #[error("table file {path}: format version {found} is older than this build's {FORMAT_VERSION}; `textorigin upgrade --data DIR` rebuilds it from the stored documents")]
    OlderFormat { path: PathBuf, found: u32 },
    #[error("table file {path}: header checksum mismatch (the header is corrupt)")]
    Checksum { path: PathBuf },
    #[error(
        "table file {path}: size is {found} bytes, the header says {expected}: the file was truncated or extended"
    )]
    Length { path: PathBuf, found: u64, expected: u64 },
    #[error("table file {path} was made with other parameters.\n  stored:    {stored}\n  requested: {requested}\nUse the stored parameters (omit the differing options) or a new data directory")]
    Params { path: PathBuf, stored: String, requested: String },
    #[error("table file {0} was not closed cleanly (a run was interrupted): its content may be half-applied; rebuild it with `textorigin rebuild`")]
    NotClean(PathBuf),
    #[error(transparent)]
    BadParams(#[from] ParamsError),
    #[error("table file {path}: unknown eviction code {code} in the header (the header is corrupt)")]
    UnknownEviction { path: PathBuf, code: u8 },
    #[error("table file {0} is open read-only")]
    ReadOnly(PathBuf),
}

type Result<T> = std::result::Result<T, TableError>;

/// The mapped table file as the core table's memory: the bytes behind the header page.
pub struct Mapped {
    map: Map,
    path: PathBuf,
}

impl RangeMut for Mapped {
    #[inline]
    fn range_mut(&mut self, r: std::ops::Range<usize>) -> &mut [u8] {
        match self.map.range_mut(HEADER_BYTES + r.start..HEADER_BYTES + r.end) {
            Some(m) => m,
            None => panic!("write to the read-only table file {}", self.path.display()),
        }
    }
}

impl BucketMemory for Mapped {
    fn bytes(&self) -> &[u8] {
        &self.map.bytes()[HEADER_BYTES..]
    }

    #[inline]
    fn prefetch(&self, at: usize) {
        self.map.prefetch(HEADER_BYTES + at);
    }
}

impl Mapped {
    fn header(&self) -> &[u8] {
        &self.map.bytes()[..HEADER_BYTES]
    }

    fn header_mut(&mut self) -> Result<&mut [u8]> {
        let path = &self.path;
        self.map.header_mut(HEADER_BYTES).ok_or_else(|| TableError::ReadOnly(path.clone()))
    }
}

/// A table file: the core [`Table`] over the mapping, plus the file it lives in.
/// Dereferences to the table for lookups, processing and counters.
pub struct TableFile {
    path: PathBuf,
    _file: File,
    table: Table<Mapped>,
    /// Bytes of the derived-index region at the end of the file.
    index_bytes: u64,
}

impl std::fmt::Debug for TableFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableFile").field("path", &self.path).field("table", &self.table).finish()
    }
}

impl Deref for TableFile {
    type Target = Table<Mapped>;
    fn deref(&self) -> &Table<Mapped> {
        &self.table
    }
}

impl DerefMut for TableFile {
    fn deref_mut(&mut self) -> &mut Table<Mapped> {
        &mut self.table
    }
}

/// What readers read of a table file without touching its holes: on a tmpfs a read of
/// a hole allocates its page, and on a full one dies with SIGBUS (`stats`).
impl TableFile {
    /// Whether this is a reader's mapping of the file (a writer's copy in memory may
    /// hold what the file does not yet: all of it is read).
    fn reads_the_file(&self) -> bool {
        matches!(self.table.memory().map, Map::Ro(_))
    }

    /// The buckets that hold data in the file, ascending (the others are holes: empty);
    /// None, every bucket, for a writer's copy or where the file's holes cannot be told.
    fn data_buckets(&self) -> Option<Vec<u64>> {
        if !self.reads_the_file() {
            return None;
        }
        let bucket = ENTRY_BYTES * self.table.bucket_entries();
        let (start, end) = (HEADER_BYTES, HEADER_BYTES + bucket * self.table.buckets() as usize);
        let data = crate::sys::data_ranges(&self._file, start, end).ok()?;
        let mut buckets: Vec<u64> = data
            .into_iter()
            .flat_map(|r| ((r.start - start) / bucket) as u64..(r.end.min(end) - start).div_ceil(bucket) as u64)
            .collect();
        buckets.dedup();
        Some(buckets)
    }

    /// [`Table::digest`], reading the buckets that hold data only.
    pub fn digest(&self) -> u64 {
        match self.data_buckets() {
            Some(buckets) => self.table.digest_of(buckets),
            None => self.table.digest(),
        }
    }

    /// [`Table::misplaced`] over the buckets that hold data.
    pub fn misplaced(&self) -> Option<(u64, usize, u64)> {
        match self.data_buckets() {
            Some(buckets) => self.table.misplaced(buckets),
            None => self.table.misplaced(0..self.table.buckets()),
        }
    }

    /// The byte ranges of the derived-index region ([`TableFile::index_region`]) that
    /// hold data, for `Indexes::digest_of` (all of it for a writer's copy, or where
    /// the file's holes cannot be told).
    pub fn index_data(&self) -> Vec<std::ops::Range<usize>> {
        let len = self.table.memory().map.bytes().len();
        let start = len - self.index_bytes as usize;
        match crate::sys::data_ranges(&self._file, start, len) {
            Ok(data) if self.reads_the_file() => data.into_iter().map(|r| r.start - start..r.end - start).collect(),
            _ => std::iter::once(0..len - start).collect(),
        }
    }
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

impl TableFile {
    /// Creates a new, empty, sparse table file (fails if it exists): it takes disk
    /// blocks as chunks of it are written.
    pub fn create(path: &Path, p: &TableParams) -> Result<TableFile> {
        p.check()?;
        let file = OpenOptions::new().read(true).write(true).create_new(true).open(path).map_err(io(path))?;
        let len = p.bytes + p.index_bytes;
        file.set_len(len).map_err(io(path))?;
        let mut header = vec![0u8; HEADER_BYTES];
        header[0..8].copy_from_slice(MAGIC);
        put_u32(&mut header, 8, FORMAT_VERSION);
        put_u32(&mut header, 12, HEADER_BYTES as u32);
        put_u64(&mut header, 16, len);
        put_u32(&mut header, 24, p.bucket_entries);
        put_u32(&mut header, 28, ENTRY_BYTES as u32);
        put_u64(&mut header, 32, bucket_count(p.bytes, p.bucket_entries));
        put_u64(&mut header, 40, p.seed);
        header[48] = p.eviction.code();
        header[49] = p.lucky_limit;
        header[50..52].copy_from_slice(&(p.fingerprint_text.len() as u16).to_le_bytes());
        header[53] = widest_shift(p.buckets());
        header[54] = TableStats::new(p).density;
        put_u64(&mut header, 120, p.index_bytes);
        header[128..128 + p.fingerprint_text.len()].copy_from_slice(p.fingerprint_text.as_bytes());
        let sum = xxh3_64(&header[..CHECKSUM_AT]);
        put_u64(&mut header, CHECKSUM_AT, sum);
        use std::io::Write;
        use std::os::unix::fs::FileExt;
        (&file).write_all(&header).map_err(io(path))?;
        // The counters readers see are written in place while the writer runs
        // (`publish_counters`): their blocks are taken now, so that a full disk later
        // fails only a flush or a checkpoint, never the publishing of counters.
        file.write_all_at(&[0; INDEX_HEADER_BYTES], p.bytes).map_err(io(path))?;
        file.sync_all().map_err(io(path))?;
        if let Some(dir) = path.parent() {
            File::open(dir).and_then(|d| d.sync_all()).map_err(io(path))?;
        }
        drop(file);
        Self::open(path, p, true)
    }

    /// Opens an existing table, checking that it was made with exactly `p`.
    /// A writable open marks the table "in use" until [`TableFile::close`]; it refuses a table
    /// that was not closed cleanly. A read-only open accepts one in use (a live writer).
    pub fn open(path: &Path, p: &TableParams, writable: bool) -> Result<TableFile> {
        p.check()?;
        let mut t = Self::open_any(path, writable)?;
        let h = t.table.memory().header();
        let stored = t.params_text();
        let stored_shape = (get_u64(h, 16), get_u64(h, 120), get_u32(h, 24), h[48], get_u64(h, 40), h[49]);
        let wanted_shape =
            (p.bytes + p.index_bytes, p.index_bytes, p.bucket_entries, p.eviction.code(), p.seed, p.lucky_limit);
        if stored != p.fingerprint_text || stored_shape != wanted_shape {
            return Err(TableError::Params { path: path.to_path_buf(), stored, requested: p.fingerprint_text.clone() });
        }
        t.table.set_density(p.adaptive, p.density_lag);
        // The pending raise: at most the lag, none without one.
        if t.table.pending_raise().age > if p.adaptive { p.density_lag } else { 0 } {
            return Err(TableError::Checksum { path: path.to_path_buf() });
        }
        if writable {
            if t.in_use() {
                return Err(TableError::NotClean(path.to_path_buf()));
            }
            t.set_in_use(true)?;
            t.flush()?;
        }
        Ok(t)
    }

    /// [`TableFile::open`] as a private copy: read-only on disk, writable in memory (the
    /// pages written are this process's own), so that a reader can apply documents to
    /// it (`query`: those its checkpoint lacks). Never flushed.
    pub fn open_private(path: &Path, p: &TableParams) -> Result<TableFile> {
        let mut t = Self::open(path, p, false)?;
        let map = crate::sys::Map::private(&t._file).map_err(io(path))?;
        t.table.memory_mut().map = map;
        Ok(t)
    }

    /// An empty table with `p`, private (its file, made in the temporary directory, is
    /// removed once mapped: nothing is left behind).
    pub fn empty_private(p: &TableParams) -> Result<TableFile> {
        let nanos = crate::clock::since_epoch().as_nanos();
        let path = std::env::temp_dir().join(format!("textorigin-query-{}-{nanos}.table", std::process::id()));
        let made = Self::create(&path, p).and_then(Self::close).and_then(|()| Self::open_private(&path, p));
        let _ = std::fs::remove_file(&path);
        made
    }

    /// Whether this is a private copy ([`TableFile::open_private`]).
    pub fn is_private(&self) -> bool {
        matches!(self.table.memory().map, crate::sys::Map::Private(_))
    }

    /// Opens a table whatever its parameters (for inspection). Refuses a file whose
    /// header is not a valid table header of this format.
    pub fn open_any(path: &Path, writable: bool) -> Result<TableFile> {
        let file = OpenOptions::new().read(true).write(writable).open(path).map_err(io(path))?;
        let len = file.metadata().map_err(io(path))?.len();
        if len < HEADER_BYTES as u64 {
            return Err(TableError::BadMagic(path.to_path_buf()));
        }
        // A table that never applied a document, left closed, is zero behind its header.
        let empty = |h: &[u8]| {
            h.len() == HEADER_BYTES && h[..8] == MAGIC[..] && h[52] == 0 && get_u64(h, 64) == 0 && get_u64(h, 104) == 0
        };
        let map = if writable {
            // Huge pages for the buckets only (`Map::read_write`); the header is checked
            // once mapped, a bad index size only costs the hint.
            use std::os::unix::fs::FileExt;
            let mut head = [0u8; 128];
            file.read_exact_at(&mut head, 0).map_err(io(path))?;
            let buckets_end = len.saturating_sub(get_u64(&head, 120).min(len));
            Map::read_write(&file, HEADER_BYTES, buckets_end as usize, empty)
        } else {
            Map::read_only(&file)
        }
        .map_err(io(path))?;
        let (shape, stats, index_bytes) = read_header(path, map.bytes(), len)?;
        // The pending raise, kept whatever the parameters (a table opened to be marked
        // closed writes its header back): no older than the documents, no asks without it.
        let pending = PendingRaise { age: map.bytes()[55], asks: get_u64(map.bytes(), ASKS_AT) };
        if u64::from(pending.age) > stats.documents + 1 || (pending.age == 0 && pending.asks > 0) {
            return Err(TableError::Checksum { path: path.to_path_buf() });
        }
        let mem = Mapped { map, path: path.to_path_buf() };
        let mut table = Table::over(mem, shape, stats);
        table.set_pending_raise(pending);
        Ok(TableFile { path: path.to_path_buf(), _file: file, table, index_bytes })
    }

    /// Sets or clears the in-use flag of the header (not flushed).
    fn set_in_use(&mut self, on: bool) -> Result<()> {
        self.table.memory_mut().header_mut()?[52] = u8::from(on);
        Ok(())
    }

    fn write_header(&mut self) -> Result<()> {
        let (s, shift, asked) = (self.table.stats(), self.table.shift(), self.table.pending_raise());
        let h = self.table.memory_mut().header_mut()?;
        h[53] = shift;
        h[54] = s.density;
        h[55] = asked.age;
        put_u64(h, ASKS_AT, asked.asks);
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

    /// Writes the table's and the derived indexes' counters into the file, where
    /// readers see them, without syncing anything.
    pub fn publish_counters(&mut self) -> Result<()> {
        self.write_header()?;
        let map = &self.table.memory().map;
        let index = map.bytes().len() - self.index_bytes as usize;
        map.publish(&[0..HEADER_BYTES, index..index + INDEX_HEADER_BYTES]).map_err(io(&self.path))
    }

    /// The table file's bytes as the writer has them, counters included (what a
    /// checkpoint slot holds), with what changed in them since each place they go to
    /// was last written.
    pub fn image(&mut self) -> Result<(&[u8], &mut Dirty)> {
        self.write_header()?;
        let mem = self.table.memory_mut();
        let path = &mem.path;
        mem.map.tracked().ok_or_else(|| TableError::ReadOnly(path.clone()))
    }

    /// Writes the counters and the table back to the file and syncs it (the buckets and
    /// indexes only when they changed since the last flush).
    pub fn flush(&mut self) -> Result<()> {
        self.write_header()?;
        self.table.memory_mut().map.flush(HEADER_BYTES).map_err(io(&self.path))
    }

    /// Flushes and marks the table cleanly closed, in two steps: the buckets and
    /// counters reach the disk while the header still says "in use", and only then is
    /// the flag cleared and flushed. A power cut in the first msync leaves a table
    /// marked in use (rebuilt or recovered), never a clean header over torn buckets.
    pub fn close(mut self) -> Result<()> {
        self.flush()?;
        crate::failpoint::hit("table.close.after-flush").map_err(io(&self.path))?;
        self.set_in_use(false)?;
        self.flush()
    }

    /// Marks a table file closed (after it was restored from a checkpoint copy).
    pub fn mark_closed(path: &Path) -> Result<()> {
        Self::open_any(path, true)?.close()
    }

    /// Whether the header says a writer has it open (or died with it open).
    pub fn in_use(&self) -> bool {
        self.table.memory().header()[52] != 0
    }

    /// The derived-index region (the file's last `index_bytes`).
    pub fn index_region(&self) -> &[u8] {
        let b = self.table.memory().map.bytes();
        &b[b.len() - self.index_bytes as usize..]
    }

    /// The derived-index region, for writing.
    pub fn index_region_mut(&mut self) -> Result<IndexRegion<'_>> {
        let n = self.index_bytes as usize;
        let mem = self.table.memory_mut();
        if matches!(mem.map, Map::Ro(_)) {
            return Err(TableError::ReadOnly(mem.path.clone()));
        }
        let start = mem.map.bytes().len() - n;
        Ok(IndexRegion { map: &mut mem.map, start })
    }

    /// Bytes of the derived-index region.
    pub fn index_bytes(&self) -> u64 {
        self.index_bytes
    }

    /// The path of the file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The stored configuration text.
    pub fn params_text(&self) -> String {
        let h = self.table.memory().header();
        let plen = usize::from(u16::from_le_bytes([h[50], h[51]])).min(PARAMS_MAX);
        String::from_utf8_lossy(&h[128..128 + plen]).into_owned()
    }
}

/// The derived-index region of a writer's table file: read as bytes, written by range
/// (so that only the chunks written go back to the file).
pub struct IndexRegion<'a> {
    map: &'a mut Map,
    start: usize,
}

impl AsRef<[u8]> for IndexRegion<'_> {
    fn as_ref(&self) -> &[u8] {
        &self.map.bytes()[self.start..]
    }
}

impl RangeMut for IndexRegion<'_> {
    fn range_mut(&mut self, r: std::ops::Range<usize>) -> &mut [u8] {
        self.map.range_mut(self.start + r.start..self.start + r.end).expect("a writer's table file")
    }
}

/// Checks a header and reads the table's shape and counters from it.
fn read_header(path: &Path, h: &[u8], len: u64) -> Result<(Shape, TableStats, u64)> {
    let corrupt = || TableError::Checksum { path: path.to_path_buf() };
    if &h[0..8] != MAGIC {
        return Err(TableError::BadMagic(path.to_path_buf()));
    }
    let version = get_u32(h, 8);
    if version > FORMAT_VERSION {
        return Err(TableError::NewerFormat { path: path.to_path_buf(), found: version });
    }
    if version < FORMAT_VERSION {
        return Err(TableError::OlderFormat { path: path.to_path_buf(), found: version });
    }
    if get_u64(h, CHECKSUM_AT) != xxh3_64(&h[..CHECKSUM_AT]) {
        return Err(corrupt());
    }
    let expected = get_u64(h, 16);
    if expected != len {
        return Err(TableError::Length { path: path.to_path_buf(), found: len, expected });
    }
    let entries = get_u32(h, 24);
    let buckets = get_u64(h, 32);
    let index_bytes = get_u64(h, 120);
    if !(4..=256).contains(&entries) || index_bytes > len || bucket_count(len - index_bytes, entries) != buckets {
        return Err(corrupt());
    }
    let eviction = Eviction::from_code(h[48])
        .ok_or_else(|| TableError::UnknownEviction { path: path.to_path_buf(), code: h[48] })?;
    let shift = h[53];
    if shift > widest_shift(buckets) {
        return Err(corrupt());
    }
    let stats = TableStats {
        last_seq: get_u64(h, 56),
        documents: get_u64(h, 64),
        lookups: get_u64(h, 72),
        hits: get_u64(h, 80),
        inserts: get_u64(h, 88),
        evictions: get_u64(h, 96),
        occupied: get_u64(h, 104),
        shingles: get_u64(h, 112),
        density: h[54],
    };
    if stats.density > FLOOR {
        return Err(corrupt());
    }
    // Whether the density is adaptive is in the configuration text (compared on open):
    // the caller sets it from its parameters.
    let shape = Shape {
        entries,
        buckets,
        eviction,
        seed: get_u64(h, 40),
        lucky_limit: h[49],
        shift,
        adaptive: false,
        density_lag: 0,
    };
    Ok((shape, stats, index_bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;
    use textorigin_core::select::SELECTED;
    use textorigin_core::table::Hit;

    fn params(bytes: u64, entries: u32, eviction: Eviction) -> TableParams {
        TableParams {
            bytes,
            bucket_entries: entries,
            eviction,
            seed: 7,
            lucky_limit: 11,
            index_bytes: textorigin_core::index::MIN_INDEX_BYTES,
            fingerprint_text: format!("test {eviction}"),
            adaptive: false,
            density_lag: 0,
        }
    }

    fn hit(origin: u64) -> Hit {
        Hit { origin, offset: origin as u8, prev: 1, next: 2 }
    }

    #[test]
    fn reopen_checks_parameters_and_clean_close() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t");
        let p = params(1 << 20, 64, Eviction::Lucky);
        let mut t = TableFile::create(&path, &p).unwrap();
        t.process(12345, hit(1), 0, SELECTED);
        t.flush().unwrap();
        t.process(999, hit(2), 0, SELECTED);
        drop(t); // not closed
        assert!(matches!(TableFile::open(&path, &p, true), Err(TableError::NotClean(_))));
        assert!(TableFile::open(&path, &p, false).is_ok(), "readers may look at a table in use");
        // Repair by hand for the rest of the test: mark clean.
        TableFile::mark_closed(&path).unwrap();
        let t = TableFile::open(&path, &p, true).unwrap();
        assert_eq!(t.stats().documents, 0);
        assert_eq!(t.lookup(12345).map(|x| x.1), Some(hit(1)), "a flush writes the table to the file");
        assert_eq!(t.lookup(999), None, "the writer's copy reaches the file only when it flushes");
        t.close().unwrap();
        let mut other = p.clone();
        other.fingerprint_text = "k=6".into();
        let err = TableFile::open(&path, &other, true).unwrap_err().to_string();
        assert!(err.contains("other parameters") && err.contains("k=6"), "{err}");
        let mut other = p.clone();
        other.bytes = 2 << 20;
        assert!(matches!(TableFile::open(&path, &other, true), Err(TableError::Params { .. })));
        assert_eq!(std::fs::metadata(&path).unwrap().len(), (1 << 20) + p.index_bytes);
    }

    /// Schema 23: the pending ask for a raise of the density threshold is kept in the
    /// header (byte 55), so that a table reopened between documents raises it at the
    /// same document end as one that never closed.
    #[test]
    fn a_pending_ask_for_a_raise_survives_a_reopen() {
        use textorigin_core::select::{density_rank, START};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t");
        let p = TableParams {
            adaptive: true,
            density_lag: 4,
            fingerprint_text: "test adaptive/4".into(),
            ..params(HEADER_BYTES as u64 + 16 * 4, 4, Eviction::Lucky)
        };
        // Five extra shingles, all kept at the start: the fifth finds the bucket full of
        // current extra entries and asks.
        let extras: Vec<u64> = (1u64..)
            .map(|i| textorigin_core::hash::mix(i) & textorigin_core::rabin::MASK)
            .filter(|&fp| density_rank(fp) >= START)
            .take(5)
            .collect();
        let mut t = TableFile::create(&path, &p).unwrap();
        for (i, &fp) in extras.iter().enumerate() {
            t.process(fp, hit(i as u64 + 1), 0, density_rank(fp));
        }
        let end = |t: &mut TableFile| {
            t.stats_mut().documents += 1;
            t.end_document();
        };
        end(&mut t);
        assert_eq!((t.density(), t.pending_raise().age), (START, 2));
        t.close().unwrap();
        // Marking a table closed (a restored checkpoint slot) keeps it too: recovery lost
        // it, and a replay then raised later than the run it replayed.
        TableFile::mark_closed(&path).unwrap();
        // An ask older than the lag the parameters give is refused as corrupt.
        let shorter = TableParams { density_lag: 1, ..p.clone() };
        assert!(matches!(TableFile::open(&path, &shorter, false), Err(TableError::Checksum { .. })));
        let mut t = TableFile::open(&path, &p, true).unwrap();
        assert_eq!(
            (t.density(), t.pending_raise()),
            (START, PendingRaise { age: 2, asks: 1 }),
            "the ask is in the header"
        );
        for _ in 0..2 {
            end(&mut t);
        }
        assert_eq!(t.density(), START);
        end(&mut t);
        let floor = textorigin_core::select::FLOOR;
        assert_eq!((t.density(), t.pending_raise().age), (floor, 0), "raised at the end of the table's document 3");
        t.close().unwrap();
    }

    /// Issue 34: the buckets in use grow in the writer's copy; the file holds the last
    /// flush's table (shift, buckets and counters together), so a reader, or a writer
    /// that died after growing, sees a consistent table at one shift.
    #[test]
    fn a_grown_table_reaches_the_file_whole_at_a_flush() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t");
        let p = params(HEADER_BYTES as u64 + 1000 * 64 * 16, 64, Eviction::Lucky);
        let fps: Vec<u64> =
            (0..6000u64).map(|i| textorigin_core::hash::mix(i) & textorigin_core::rabin::MASK).collect();
        let mut t = TableFile::create(&path, &p).unwrap();
        assert_eq!(t.used_buckets(), 1);
        for (i, &fp) in fps[..3000].iter().enumerate() {
            t.process(fp, hit(i as u64 + 1), 0, SELECTED);
        }
        let flushed = (t.shift(), t.digest());
        t.flush().unwrap();
        for (i, &fp) in fps[3000..].iter().enumerate() {
            t.process(fp, hit(i as u64 + 3001), 0, SELECTED);
        }
        assert!(t.shift() < flushed.0, "the table grew after the flush");
        drop(t); // died without flushing again
        let r = TableFile::open(&path, &p, false).unwrap();
        assert_eq!((r.shift(), r.digest()), flushed);
        assert!(fps[..3000].iter().all(|&fp| r.lookup(fp).is_some()));
        assert!(fps[3000..].iter().all(|&fp| r.lookup(fp).is_none()));
        // What a flushed table holds on disk follows its buckets in use.
        let used = r.used_buckets() * 64 * 16;
        let on_disk = std::fs::metadata(&path).unwrap().blocks() * 512;
        assert!(on_disk <= HEADER_BYTES as u64 + used + 2 * 4096 + (1 << 16), "{on_disk} bytes on disk, {used} in use");
    }

    #[test]
    fn corrupt_header_is_detected() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t");
        let p = params(1 << 16, 16, Eviction::Random);
        TableFile::create(&path, &p).unwrap().close().unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[130] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert!(matches!(TableFile::open(&path, &p, false), Err(TableError::Checksum { .. })));
        std::fs::write(&path, b"hello").unwrap();
        assert!(matches!(TableFile::open(&path, &p, false), Err(TableError::BadMagic(_))));
    }

    proptest::proptest! {
        /// Fuzzing: any header bytes, and any one-byte change of a valid
        /// header (with its checksum made right again), are read or refused, never a
        /// panic. `scripts/fuzz.sh` runs a million cases.
        #[test]
        fn fuzz_header_reader_refuses_or_reads(random in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..HEADER_BYTES + 64), at in 0usize..HEADER_BYTES, byte in proptest::prelude::any::<u8>(), len in 0u64..1 << 24) {
            let path = Path::new("fuzz");
            let mut padded = random.clone();
            padded.resize(HEADER_BYTES, 0);
            let _ = read_header(path, &padded, len);
            let mut h = valid_header().to_vec();
            h[at] = byte;
            let sum = xxh3_64(&h[..CHECKSUM_AT]);
            put_u64(&mut h, CHECKSUM_AT, sum);
            let file_len = get_u64(&h, 16);
            if let Ok((shape, _, index_bytes)) = read_header(path, &h, file_len) {
                proptest::prop_assert!(index_bytes <= file_len);
                proptest::prop_assert!(shape.buckets * u64::from(shape.entries) * ENTRY_BYTES as u64 <= file_len);
            }
        }
    }

    /// A valid header of a small table, as `create` writes it (made once).
    fn valid_header() -> &'static [u8] {
        static HEADER: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
        HEADER.get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("t");
            TableFile::create(&path, &params(1 << 16, 16, Eviction::Lucky)).unwrap().close().unwrap();
            std::fs::read(&path).unwrap()[..HEADER_BYTES].to_vec()
        })
    }

    /// Regression: an unknown eviction code used to be read as Lucky.
    #[test]
    fn unknown_eviction_code_is_refused_as_corrupt() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t");
        let p = params(1 << 16, 16, Eviction::Random);
        TableFile::create(&path, &p).unwrap().close().unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[48] = 9;
        let sum = xxh3_64(&bytes[..CHECKSUM_AT]);
        put_u64(&mut bytes, CHECKSUM_AT, sum); // a well-formed header with a bad code
        std::fs::write(&path, &bytes).unwrap();
        let err = TableFile::open_any(&path, false).unwrap_err();
        assert!(matches!(err, TableError::UnknownEviction { code: 9, .. }), "{err}");
    }
}
