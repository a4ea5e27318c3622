//! The store: document metadata, texts and results in RocksDB.
//!
//! Schema version 8 (the ledger is `migrations/`; `docs/ARCHITECTURE.md` has the map):
//!
//! | column family | key | value |
//! | --- | --- | --- |
//! | `meta` | `schema_version` | u32 LE |
//! | `meta` | `config` | version byte 1, postcard [`Config`](textorigin_core::config::Config) (schema 7 added `propagate` and `align`, schema 8 the feature switches `near_duplicates` and `quotations`) |
//! | `meta` | `next_seq` | u64 LE: the sequence number the next document gets |
//! | `meta` | `store_id` | u64 LE: the store's identity, carried by checkpoint slots (made on first write open; no schema change) |
//! | `docs` | seq, u64 BE | version byte 1, postcard [`DocMeta`] |
//! | `names` | name bytes, 0x00, seq u64 BE | empty |
//! | `text` | seq, u64 BE | version byte 1, UTF-8 text (zstd-compressed by RocksDB) |
//! | `results` | seq, u64 BE | version byte 1, postcard [`DocResult`] |
//! | `meta` | `neardup_config` | version byte 1, postcard [`NearDupConfig`](textorigin_core::neardup::NearDupConfig) (schema 2) |
//! | `nd_sketch` | seq, u64 BE | version byte 1, postcard [`Sketch`](textorigin_core::neardup::Sketch) (schema 2; since schema 16 only those an older build computed otherwise: [`recompute`]) |
//! | `nd_result` | seq, u64 BE | version byte 1, postcard `Vec<NearDup>`: earlier near-duplicates (schema 2) |
//! | `nd_later` | earlier seq BE, later seq BE | version byte 1, postcard [`NearDup`](textorigin_core::neardup::NearDup) seen from the earlier one (schema 2) |
//!
//! | `meta` | `quote_config` | postcard [`QuoteConfig`](textorigin_core::quote::QuoteConfig) (schema 3) |
//! | `q_sent` | seq BE, sentence u32 BE | version byte 1, postcard [`Sentence`](textorigin_core::quote::Sentence) without its clauses (indexed sentences only) (schema 3; since schema 16 only those an older build split otherwise: [`recompute`]) |
//! | `q_result` | seq BE | version byte 1, postcard `Vec<Quotation>` (schema 3) |
//!
//! | `admitted` | xxh3-128 of a spool file's name and bytes, BE | u32 LE documents done, u32 LE documents in the file (schema 4), u32 LE documents failed (schema 5; absent in older records) |
//! | `admitted` | `d` + a document's [`document_key`], BE (17 bytes; written since schema 7 by this build, absent for documents stored before: older builds ignore them) | u64 BE: the document's id |
//! | `failed` | u64 BE counter | version byte 1, postcard [`Failure`] (schema 4) |
//! | `meta` | `failed_next` | u64 LE: the next failure number (schema 4) |
//! | `failed_docs` | a failed input document's source (`path:LINE`) | version byte 1, postcard [`DocFailure`]: its id and why (schema 15, written by `ingest` and Python) |
//!
//! Schema 6 moved the derived indexes (`nd_index`, `q_index`, `q_df` and `q_docs`:
//! near-duplicate keys, qSign signatures, document frequencies) out of RocksDB into the
//! table file (`textorigin_core::index`); the store keeps the record they are rebuilt
//! from, and `config` gained `index_bytes`.
//! Big-endian keys make RocksDB's byte order the sequence order. Every value starts
//! with a version byte so that a later build can tell old values from new ones
//! (`codec`). A document is written in one `WriteBatch` (metadata, name, text,
//! result, its near-duplicate sketch and verdicts, its sentences and quotations, its
//! spool admission, its document admission and `next_seq` together): a crash never leaves it half-stored or half-indexed.
//! Opening refuses a store whose schema is newer than this build and upgrades an older
//! one through the ordered steps of [`migrations::MIGRATIONS`].
//!
//! One module per concern: `codec` (the value and key encodings), [`meta`] (typed
//! `meta` keys), [`documents`], [`neardup_index`], [`quote_index`], [`spool_log`] and
//! [`migrations`]. The index modules return candidates; verdicts and scores are
//! computed in `textorigin_core`.

use std::path::{Path, PathBuf};

use rocksdb::{ColumnFamilyDescriptor, Options, WriteBatch, WriteOptions, DB};
use serde::de::DeserializeOwned;
use textorigin_core::engine::DocResult;
use textorigin_core::quote::QuoteFind;

pub mod book;
mod cache;
mod codec;
pub mod documents;
pub mod meta;
pub mod migrations;
pub mod neardup_index;
pub mod partitions;
pub mod quote_index;
pub mod recompute;
pub mod revisions;
pub mod spool_log;

pub use book::{BookState, BookWrite};
pub use documents::{DocMeta, Via};
pub use neardup_index::NearDupWrite;
pub use revisions::{Revised, Revision, Revisions};
pub use spool_log::{admission_key, document_key, Admission, AdmissionKey, Admit, DocFailure, DocumentKeys, Failure};
pub use textorigin_core::quote::{Quotation, QuoteSource};

/// Bound on the write-ahead logs kept on disk.
const MAX_TOTAL_WAL_BYTES: u64 = 64 << 20;
/// Bound on the memory of all memtables together.
const MEMTABLE_BYTES: usize = 32 << 20;
/// RocksDB's block cache, shared by every column family.
const BLOCK_CACHE_BYTES: usize = 16 << 20;

/// The schema this build writes.
pub const SCHEMA_VERSION: u32 = 19;

const CF_META: &str = "meta";
const CF_DOCS: &str = "docs";
const CF_NAMES: &str = "names";
const CF_TEXT: &str = "text";
const CF_RESULTS: &str = "results";
const CF_ND_SKETCH: &str = "nd_sketch";
const CF_ND_RESULT: &str = "nd_result";
const CF_ND_LATER: &str = "nd_later";
const CF_ND_LATE: &str = "nd_late";
const CF_Q_SENT: &str = "q_sent";
const CF_Q_RESULT: &str = "q_result";
const CF_Q_LATE: &str = "q_late";
const CF_ADMITTED: &str = "admitted";
const CF_FAILED: &str = "failed";
const CF_COPIERS: &str = "copiers";
const CF_REVISIONS: &str = "revisions";
const CF_FAILED_DOCS: &str = "failed_docs";
/// What a deployment's stage keeps with each document for a restart (schema 18: a
/// partition's feedback, [`DocumentWrite::stage`]).
const CF_STAGE: &str = "stage";
/// What a partition keeps of the other partitions' documents (schema 19, [`book`]).
const CF_BOOK: &str = "book";
/// Column families of schemas 2-5 that schema 6 drops (the derived indexes).
const LEGACY_CFS: [&str; 3] = ["nd_index", "q_index", "q_df"];
const CFS: [&str; 19] = [
    CF_ADMITTED,
    CF_FAILED,
    CF_META,
    CF_DOCS,
    CF_NAMES,
    CF_TEXT,
    CF_RESULTS,
    CF_ND_SKETCH,
    CF_ND_RESULT,
    CF_ND_LATER,
    CF_ND_LATE,
    CF_Q_SENT,
    CF_Q_RESULT,
    CF_Q_LATE,
    CF_COPIERS,
    CF_REVISIONS,
    CF_FAILED_DOCS,
    CF_STAGE,
    CF_BOOK,
];

/// Errors of the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("store {path}: {source}")]
    Db { path: PathBuf, source: rocksdb::Error },
    #[error("store {path}: schema version {found} is newer than this build's {SCHEMA_VERSION}; upgrade textorigin (downgrades are refused)")]
    Newer { path: PathBuf, found: u32 },
    #[error("store {path}: schema version {found} needs an upgrade to {SCHEMA_VERSION}: run `textorigin upgrade --data DIR` (or any ingest)")]
    Older { path: PathBuf, found: u32 },
    #[error("store {path}: no migration from schema version {found}")]
    NoMigration { path: PathBuf, found: u32 },
    #[error("store {path}: corrupt value for {what}: {reason}")]
    Corrupt { path: PathBuf, what: String, reason: String },
    #[error("no data directory at {0} (run `textorigin ingest --data {0} FILES...` first)")]
    Missing(PathBuf),
    #[error("data directory {} is in use by another textorigin process (its store is locked)", .0.parent().unwrap_or(.0).display())]
    InUse(PathBuf),
    #[error("no document named or numbered `{0}`")]
    NotFound(String),
    #[error("`{given}` is ambiguous: the name of #{named} and the id of another document; write #{named} or #{id}")]
    Ambiguous { given: String, named: u64, id: u64 },
    #[error("store {0}: its files kept changing while it was being opened read-only (a writer flushing all the time?); try again")]
    Unsteady(PathBuf),
    #[error("store {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("document #{seq}, held by another partition: {source}")]
    Elsewhere { seq: u64, source: Box<dyn std::error::Error + Send + Sync> },
    #[error("document #{seq}: {source}")]
    Unanswered { seq: u64, source: textorigin_core::index::Unanswered },
}

type Result<T> = std::result::Result<T, StoreError>;

/// What the store of one partition of a deployment (issue 37, `docs/SCALE-OUT.md`,
/// "Partitions") reads of the documents it does not hold: their place in publication
/// order, their texts and their current results as of the document being analysed, and
/// the copiers of an origin among every partition's documents.
pub trait Elsewhere: Send + Sync {
    /// Whether document `seq` is this store's.
    fn owns(&self, seq: u64) -> bool;
    /// Document `seq`'s place, unless written to this store's book ([`Store::write_book`]:
    /// the store reads it there when this gives none), as `result` and `copiers_of`.
    fn time(&self, seq: u64) -> ElsewhereResult<Option<i64>>;
    fn text(&self, seq: u64) -> ElsewhereResult<Option<String>>;
    fn result(&self, seq: u64) -> ElsewhereResult<Option<DocResult>>;
    /// The documents whose results named `origin`, in every partition (ascending;
    /// with those of the book, united).
    fn copiers_of(&self, origin: u64) -> ElsewhereResult<Vec<u64>>;
}

/// What an [`Elsewhere`] read gives.
pub type ElsewhereResult<T> = std::result::Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// The RocksDB store of a data directory.
pub struct Store {
    db: DB,
    path: PathBuf,
    /// Bounded copies of what quotation search reads most ([`cache`]).
    caches: cache::Caches,
    /// Where the documents of other partitions are read (a partition's store only).
    elsewhere: std::sync::OnceLock<std::sync::Arc<dyn Elsewhere>>,
    /// The other partitions' stores, read with this one ([`partitions`]).
    siblings: std::sync::OnceLock<partitions::Siblings>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish_non_exhaustive()
    }
}

impl Store {
    fn options() -> Options {
        let mut o = Options::default();
        o.create_if_missing(true);
        o.create_missing_column_families(true);
        o.set_max_open_files(256);
        o.set_keep_log_file_num(4);
        // A column family written rarely (failures, admissions) would keep every
        // write-ahead log segment since its first write alive; past this total RocksDB
        // flushes the memtables holding the oldest segment, so logs stay bounded.
        o.set_max_total_wal_size(MAX_TOTAL_WAL_BYTES);
        // All memtables together: without it each of the column families grows
        // its own up to 64 MiB before a flush.
        o.set_db_write_buffer_size(MEMTABLE_BYTES);
        o
    }

    fn descriptors() -> Vec<ColumnFamilyDescriptor> {
        // One block cache for all column families (by default each would have its own).
        let cache = rocksdb::Cache::new_lru_cache(BLOCK_CACHE_BYTES);
        CFS.iter()
            .map(|&name| {
                let mut o = Options::default();
                // zstd wherever there is something to compress (on the first 50,000 GCC
                // entries the records and quotations took 2.7 MB less than under LZ4,
                // at no measurable cost: RocksDB compresses on its flush threads); the
                // admission keys are hashes.
                let compression = if name == CF_ADMITTED {
                    rocksdb::DBCompressionType::Lz4
                } else {
                    rocksdb::DBCompressionType::Zstd
                };
                o.set_compression_type(compression);
                let mut t = rocksdb::BlockBasedOptions::default();
                t.set_block_cache(&cache);
                o.set_block_based_table_factory(&t);
                ColumnFamilyDescriptor::new(name, o)
            })
            .collect()
    }

    /// Opens (creating if needed) the store at `path` for writing. Only one writer at a
    /// time: a second one gets RocksDB's lock error.
    pub fn open(path: &Path) -> Result<Store> {
        // An older store's dropped column families must be opened to be dropped.
        let existing = DB::list_cf(&Self::options(), path).unwrap_or_default();
        let legacy = LEGACY_CFS
            .iter()
            .filter(|l| existing.iter().any(|e| e == *l))
            .map(|&l| ColumnFamilyDescriptor::new(l, Options::default()));
        let descriptors = Self::descriptors().into_iter().chain(legacy);
        let db = DB::open_cf_descriptors(&Self::options(), path, descriptors).map_err(|source| {
            if source.to_string().contains("LOCK") {
                StoreError::InUse(path.to_path_buf())
            } else {
                StoreError::Db { path: path.to_path_buf(), source }
            }
        })?;
        let mut store = Store {
            db,
            path: path.to_path_buf(),
            caches: cache::Caches::default(),
            elsewhere: Default::default(),
            siblings: Default::default(),
        };
        store.upgrade()?;
        store.ensure_id()?;
        store.note_kept();
        Ok(store)
    }

    /// Opens an existing store read-only (works while a writer runs).
    pub fn open_read_only(path: &Path) -> Result<Store> {
        if !path.join("CURRENT").exists() {
            return Err(StoreError::Missing(path.parent().unwrap_or(path).to_path_buf()));
        }
        // A read-only open reads the manifest (the table files, and from which
        // write-ahead log on the state continues), then lists and replays the logs. A
        // writer that flushes meanwhile (a memtable filled up, or its own open recovered
        // the logs) records that in the manifest and deletes the logs it made obsolete:
        // the open then fails ("No such file or directory") or, worse, silently misses
        // the flushed writes. Logs and table files are deleted only after a manifest
        // edit, so an open during which the manifest did not change saw a consistent
        // state; any other is tried again, a while, before its error stands.
        let mut attempt = 0;
        let db = loop {
            let existing = DB::list_cf(&Self::options(), path)
                .map_err(|source| StoreError::Db { path: path.to_path_buf(), source })?;
            if !existing.iter().any(|c| c == CF_META) {
                // A store being created right now (or not a textorigin store).
                return Err(StoreError::Missing(path.parent().unwrap_or(path).to_path_buf()));
            }
            let before = manifest_state(path);
            let descriptors = Self::descriptors().into_iter().filter(|d| existing.iter().any(|e| e == d.name()));
            let opened = DB::open_cf_descriptors_read_only(&Self::options(), path, descriptors, false);
            let steady = before.is_some() && manifest_state(path) == before;
            match opened {
                Ok(db) if steady => break db,
                Err(source) if steady && !source.as_ref().contains("No such file or directory") => {
                    return Err(StoreError::Db { path: path.to_path_buf(), source })
                }
                _ if attempt >= READ_ONLY_ATTEMPTS => return Err(StoreError::Unsteady(path.to_path_buf())),
                _ => {
                    attempt += 1;
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
            }
        };
        let store = Store {
            db,
            path: path.to_path_buf(),
            caches: cache::Caches::default(),
            elsewhere: Default::default(),
            siblings: Default::default(),
        };
        store.note_kept();
        let v = store.schema_version()?;
        if v > SCHEMA_VERSION {
            return Err(StoreError::Newer { path: path.to_path_buf(), found: v });
        }
        if v < SCHEMA_VERSION {
            return Err(StoreError::Older { path: path.to_path_buf(), found: v });
        }
        if CFS.iter().any(|c| store.db.cf_handle(c).is_none()) {
            return Err(StoreError::Missing(path.parent().unwrap_or(path).to_path_buf()));
        }
        Ok(store)
    }

    /// Where the store lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn db_err(&self) -> impl FnOnce(rocksdb::Error) -> StoreError + '_ {
        move |source| StoreError::Db { path: self.path.clone(), source }
    }

    fn cf(&self, name: &str) -> &rocksdb::ColumnFamily {
        self.db.cf_handle(name).expect("column families are created on open")
    }

    fn get(&self, cf: &str, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let s = self.holder(cf, key);
        s.db.get_cf(s.cf(cf), key).map_err(s.db_err())
    }

    /// (second key, value) of the keys of `cf` that start with `first` (keys made by
    /// [`codec::pair_key`]), by the second.
    /// In a read of partitions, every partition's, merged.
    fn pairs(&self, cf: &str, first: u64) -> Result<Vec<(u64, Vec<u8>)>> {
        let prefix = codec::seq_key(first);
        let mut out = Vec::new();
        for s in std::iter::once(self).chain(self.siblings()) {
            for item in s.db.iterator_cf(s.cf(cf), rocksdb::IteratorMode::From(&prefix, rocksdb::Direction::Forward)) {
                let (k, v) = item.map_err(s.db_err())?;
                if !k.starts_with(&prefix) {
                    break;
                }
                if let Ok(second) = <[u8; 8]>::try_from(&k[8..]) {
                    out.push((u64::from_be_bytes(second), v.to_vec()));
                }
            }
        }
        if self.siblings.get().is_some() {
            out.sort_by_key(|x| x.0);
        }
        Ok(out)
    }

    fn decode<T: DeserializeOwned>(&self, what: &str, bytes: &[u8]) -> Result<T> {
        self.decode_with(codec::decode, what, bytes)
    }

    /// A value decoded by `f`, its failure a corrupt `what`.
    fn decode_with<T>(
        &self,
        f: impl Fn(&[u8]) -> std::result::Result<T, String>,
        what: &str,
        bytes: &[u8],
    ) -> Result<T> {
        f(bytes).map_err(|reason| StoreError::Corrupt { path: self.path.clone(), what: what.to_string(), reason })
    }

    fn write(&self, b: WriteBatch, sync: bool) -> Result<()> {
        let mut o = WriteOptions::default();
        o.set_sync(sync);
        self.db.write_opt(b, &o).map_err(self.db_err())
    }

    /// Stores one document with its text, result, near-duplicate and quotation data in
    /// one batch (not synced: call [`Store::sync`] at the end of a run).
    pub fn put_document(&self, doc: &DocumentWrite<'_>) -> Result<()> {
        self.put_admitted_document(doc, Admit::default())
    }

    /// [`Store::put_document`] that also records how far its spool file is admitted
    /// and the document's own admission key.
    pub fn put_admitted_document(&self, doc: &DocumentWrite<'_>, admit: Admit) -> Result<()> {
        let mut b = WriteBatch::default();
        let seq = doc.meta.seq;
        if let Some(a) = admit.file {
            self.add_admission(&mut b, a);
        }
        if let Some(key) = admit.doc {
            self.add_document_admission(&mut b, key, seq);
        }
        self.add_findings(&mut b, seq, doc.nd, doc.q);
        self.add_document(&mut b, doc.meta, doc.text, doc.result);
        if let Some(record) = doc.stage {
            self.add_stage_record(&mut b, seq, record);
        }
        self.put_meta_u64(&mut b, meta::MetaKey::NextSeq, seq + 1);
        self.write_with_revisions(b, seq, doc.result, doc.revised)?;
        self.cache_findings(seq, doc.nd, doc.q);
        Ok(())
    }

    /// Adds a document's near-duplicate and quotation findings to a batch (a feature
    /// switched off, None, adds nothing).
    fn add_findings(&self, b: &mut WriteBatch, seq: u64, nd: Option<&NearDupWrite>, q: Option<&QuoteFind>) {
        if let Some(nd) = nd {
            self.add_near_dups(b, seq, nd);
        }
        if let Some(q) = q {
            self.add_quotes(b, seq, q);
        }
    }

    /// Hands a stored document's sketch and sentences to the caches: later documents'
    /// searches read them from there first ([`recompute`]).
    fn cache_findings(&self, seq: u64, nd: Option<&NearDupWrite>, q: Option<&QuoteFind>) {
        if let Some(nd) = nd {
            self.cache_sketch(seq, &nd.sketch);
        }
        if let Some(q) = q {
            self.cache_sentences(seq, &q.sentences);
        }
    }

    /// Writes batch `b` with the copier edges of document `seq`'s `result` and the
    /// revisions its arrival made (issue 25), then drops the revised documents from the
    /// origin-text cache (alignment reads an origin's blocks through it).
    fn write_with_revisions(&self, mut b: WriteBatch, seq: u64, result: &DocResult, revised: &Revisions) -> Result<()> {
        self.add_copiers(&mut b, seq, result);
        self.add_revisions(&mut b, seq, &revised.done)?;
        self.add_made(&mut b, seq, revised);
        self.add_queued(&mut b, seq, &revised.queued);
        self.write(b, false)?;
        for r in &revised.done {
            self.caches.origin_texts.remove(&r.seq);
        }
        Ok(())
    }

    /// Reads the documents of other partitions through `elsewhere` from now on (once:
    /// false when it was set before).
    pub fn set_elsewhere(&self, elsewhere: std::sync::Arc<dyn Elsewhere>) -> bool {
        self.elsewhere.set(elsewhere).is_ok()
    }

    /// Whether this store is a partition's (it reads other documents elsewhere).
    pub fn partitioned(&self) -> bool {
        self.elsewhere.get().is_some()
    }

    /// Where document `seq` is read when this store does not hold it (a partition's).
    pub(super) fn elsewhere_of(&self, seq: u64) -> Option<&dyn Elsewhere> {
        self.elsewhere.get().map(|e| &**e).filter(|e| !e.owns(seq))
    }

    /// Whether document `seq` is this store's (every document but in a partition).
    pub fn holds(&self, seq: u64) -> bool {
        self.elsewhere_of(seq).is_none()
    }

    /// Stores the revisions of this partition's documents that another partition's
    /// document `cause` made, as that document's batch does on one node (issue 37);
    /// those stored already (applied again after a restart) are left as they are.
    pub fn put_revisions(&self, cause: u64, revised: &[Revised]) -> Result<()> {
        let mut new = Vec::with_capacity(revised.len());
        for r in revised {
            if !self.has_revision(r.seq, cause)? {
                new.push(r.clone());
            }
        }
        let mut b = WriteBatch::default();
        self.add_revisions(&mut b, cause, &new)?;
        self.write(b, false)?;
        self.revised_elsewhere(revised.iter().map(|r| r.seq));
        Ok(())
    }

    /// Forgets what the caches keep of documents that another partition's document
    /// revised (alignment reads an origin's current blocks through them).
    pub fn revised_elsewhere(&self, revised: impl IntoIterator<Item = u64>) {
        for s in revised {
            self.caches.origin_texts.remove(&s);
        }
    }

    /// Deletes every pair written under another document than the one found (seen
    /// from the earlier document, and the late ones of near-duplicates and quotations)
    /// before a re-analysis writes them anew.
    pub fn clear_pairs_found_later(&self) -> Result<()> {
        let mut b = WriteBatch::default();
        for cf in [CF_ND_LATER, CF_ND_LATE, CF_Q_LATE] {
            b.delete_range_cf(self.cf(cf), &[0u8; 16][..], &[0xffu8; 17][..]);
        }
        self.write(b, false)
    }

    /// Replaces the stored results of document `seq` by a re-analysis (`rebuild
    /// --reanalyse`): its origins, near-duplicate verdicts and quotations, in one batch
    /// (a feature switched off, None, keeps nothing). The caller has
    /// cleared the pairs found later first ([`Store::clear_pairs_found_later`]).
    pub fn put_reanalysis(
        &self,
        seq: u64,
        result: &DocResult,
        nd: Option<&NearDupWrite>,
        q: Option<&QuoteFind>,
        revised: &Revisions,
    ) -> Result<()> {
        // What an earlier analysis stored goes first: the new one may index other
        // sentences, or none (the batch applies its writes in order).
        let mut b = WriteBatch::default();
        self.delete_near_dups(&mut b, seq);
        self.delete_quotes(&mut b, seq);
        self.add_findings(&mut b, seq, nd, q);
        b.put_cf(self.cf(CF_RESULTS), codec::seq_key(seq), codec::encode_result(result));
        self.write_with_revisions(b, seq, result, revised)?;
        self.cache_findings(seq, nd, q);
        self.caches.origin_texts.remove(&seq);
        Ok(())
    }

    /// Bytes on disk of each column family (its SST files) with data, largest first:
    /// what the store keeps, by kind (the write-ahead log and memtables aside).
    pub fn disk_use(&self) -> Result<Vec<(&'static str, u64)>> {
        let mut out = Vec::new();
        for name in CFS {
            let bytes = self
                .db
                .property_int_value_cf(self.cf(name), "rocksdb.total-sst-files-size")
                .map_err(self.db_err())?
                .unwrap_or(0);
            if bytes > 0 {
                out.push((name, bytes));
            }
        }
        out.sort_by_key(|&(name, bytes)| (std::cmp::Reverse(bytes), name));
        Ok(out)
    }

    /// Writes every column family's memtable to its files, so that the write-ahead
    /// log segments are no longer needed and RocksDB deletes them: a closed store keeps
    /// its data once, compressed (the log held a second, raw copy: 24 of the 94 MB of
    /// the first 50,000 GCC entries' store).
    pub fn flush_memtables(&self) -> Result<()> {
        let cfs: Vec<_> = CFS.iter().map(|&name| self.cf(name)).collect();
        self.db.flush_cfs_opt(&cfs, &rocksdb::FlushOptions::default()).map_err(self.db_err())
    }

    /// Makes every write so far durable (WAL fsync).
    pub fn sync(&self) -> Result<()> {
        self.db.flush_wal(true).map_err(self.db_err())
    }
}

/// Everything one document's batch writes.
#[derive(Debug, Clone, Copy)]
pub struct DocumentWrite<'a> {
    pub meta: &'a DocMeta,
    pub text: &'a str,
    pub result: &'a DocResult,
    /// None when near-duplicate detection is off: nothing is stored for it.
    pub nd: Option<&'a NearDupWrite>,
    /// None when quotation search is off.
    pub q: Option<&'a QuoteFind>,
    /// Earlier documents whose results this one's arrival changed (issue 25).
    pub revised: &'a Revisions,
    /// What the data directory's stage keeps with it for a restart
    /// ([`TableStage::record`](crate::storage::stage::TableStage::record)).
    pub stage: Option<&'a [u8]>,
}

/// How often a read-only open is tried while a writer keeps changing the manifest.
const READ_ONLY_ATTEMPTS: u32 = 100;

/// The manifest a store's `CURRENT` names and its length: RocksDB appends every change
/// of the set of files (a flush, a compaction) to it, or starts a new one.
fn manifest_state(path: &Path) -> Option<(String, u64)> {
    let name = std::fs::read_to_string(path.join("CURRENT")).ok()?;
    let len = std::fs::metadata(path.join(name.trim_end())).ok()?.len();
    Some((name, len))
}

#[cfg(test)]
mod tests {
    use super::*;
    use textorigin_core::index::Indexes;
    use textorigin_core::neardup::{NearDupConfig, Sketch};
    use textorigin_core::quote::QuoteConfig;

    pub(super) fn meta(seq: u64, name: &str) -> DocMeta {
        DocMeta {
            seq,
            name: name.into(),
            source: "x".into(),
            url: None,
            published_at: None,
            text_bytes: 1,
            tokens: 1,
            content_hash: "h".into(),
            ingested_at_ms: 0,
            meta: None,
            via: None,
            by_arrival: false,
            id_number: false,
            date_field: false,
        }
    }

    fn put(s: &Store, meta: &DocMeta, text: &str, result: &DocResult, nd: &NearDupWrite, q: &QuoteFind) -> Result<()> {
        s.put_document(&DocumentWrite {
            meta,
            text,
            result,
            nd: Some(nd),
            q: Some(q),
            revised: &Default::default(),
            stage: None,
        })
    }

    #[test]
    fn documents_round_trip_and_resolve() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path()).unwrap();
        assert_eq!(s.next_seq().unwrap(), 1);
        let r = DocResult { seq: 1, tokens: 3, ..Default::default() };
        let c = NearDupConfig::default();
        let qc = QuoteConfig::default();
        let idx = Indexes::in_memory(1 << 20, &qc).unwrap();
        let nd = |seq| {
            s.near_dup_write(
                &c,
                seq,
                Sketch { exact: seq.into(), mins: vec![], simhash: vec![0; 6], rate: 1, coarse: vec![] },
                &idx,
                |_| false,
                None,
            )
            .unwrap()
        };
        let q = |seq| s.quote_write(&qc, seq, vec![], &idx, |_| false).unwrap();
        put(&s, &meta(1, "a"), "text a", &r, &nd(1), &q(1)).unwrap();
        put(&s, &meta(2, "a"), "text a again", &DocResult { seq: 2, ..Default::default() }, &nd(2), &q(2)).unwrap();
        put(&s, &meta(3, "17"), "named by digits", &DocResult { seq: 3, ..Default::default() }, &nd(3), &q(3)).unwrap();
        assert_eq!(s.next_seq().unwrap(), 4);
        assert_eq!(s.resolve("a").unwrap(), 2, "latest of a name");
        assert_eq!(s.resolve("1").unwrap(), 1, "by id");
        assert_eq!(s.resolve("17").unwrap(), 3, "a name that is no id");
        assert_eq!(s.resolve("#1").unwrap(), 1, "#N is always an id");
        assert!(matches!(s.resolve("#17"), Err(StoreError::NotFound(_))), "#N is never a name");
        assert!(matches!(s.resolve("nope"), Err(StoreError::NotFound(_))));
        // Issue 21, item 7: a name that is also another document's id is ambiguous.
        put(
            &s,
            &meta(4, "2"),
            "named by the digits of another id",
            &DocResult { seq: 4, ..Default::default() },
            &nd(4),
            &q(4),
        )
        .unwrap();
        match s.resolve("2") {
            Err(e @ StoreError::Ambiguous { named: 4, id: 2, .. }) => {
                assert!(e.to_string().contains("#2") && e.to_string().contains("#4"), "{e}")
            }
            other => panic!("ambiguous, not {other:?}"),
        }
        assert_eq!(s.resolve("#2").unwrap(), 2);
        put(&s, &meta(5, "5"), "named by its own id", &DocResult { seq: 5, ..Default::default() }, &nd(5), &q(5))
            .unwrap();
        assert_eq!(s.resolve("5").unwrap(), 5, "a name and an id of the same document");
        assert_eq!(s.text(2).unwrap().unwrap(), "text a again");
        assert_eq!(s.result(1).unwrap().unwrap(), r);
        assert_eq!(s.docs().count(), 5);
    }

    /// Issue 32: a document revised again and again kept its whole result each time; a
    /// revision after the first keeps what the history shows, the first the whole result
    /// (which recovery reproduces); a revised document leaves the revision queue.
    #[test]
    fn later_revisions_keep_what_the_history_shows() {
        use textorigin_core::engine::ShingleOrigin;
        use textorigin_core::estimate::How;
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path()).unwrap();
        let whole = |old_tokens| DocResult {
            seq: 1,
            old_tokens,
            dominant_origin: Some(1),
            origin_counts: vec![(1, 3)],
            selected_origins: vec![ShingleOrigin { start_token: 0, end_token: 8, origin: 1, how: How::Found }; 3],
            ..Default::default()
        };
        let mut b = WriteBatch::default();
        s.add_queued(&mut b, 2, &[1]);
        s.write(b, false).unwrap();
        assert_eq!(s.queued().unwrap(), [(1, 2)]);
        for (cause, old_tokens) in [(2, 0), (3, 5)] {
            let r = Revised { seq: 1, after: whole(old_tokens + 5), before: whole(old_tokens) };
            s.put_drained(&[(cause, r)], &[1]).unwrap();
        }
        assert_eq!(s.queue_len().unwrap(), 0, "revised: out of the queue");
        let revs = s.revisions(1).unwrap();
        assert_eq!(revs[0].before, whole(0), "the first: whole");
        assert_eq!(s.first_result(1).unwrap().unwrap(), whole(0));
        let seen = &revs[1].before;
        assert_eq!((seen.old_tokens, seen.dominant_origin), (5, Some(1)));
        assert!(seen.selected_origins.is_empty() && seen.origin_counts.is_empty(), "{seen:?}");
    }

    #[test]
    fn newer_schema_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        {
            let s = Store::open(dir.path()).unwrap();
            let mut b = WriteBatch::default();
            b.put_cf(s.cf(CF_META), b"schema_version", 99u32.to_le_bytes());
            s.write(b, true).unwrap();
        }
        let err = Store::open(dir.path()).err().unwrap().to_string();
        assert!(err.contains("newer") && err.contains("99"), "{err}");
        assert!(Store::open_read_only(dir.path()).is_err());
    }

    #[test]
    fn a_read_only_open_beside_a_reopening_writer_sees_every_committed_write() {
        // Each reopen of the writer recovers its log into a table file, rewrites the
        // manifest and deletes the log: a reader that read the manifest before and lists
        // the logs after would miss the writes in between without an error.
        let dir = tempfile::tempdir().unwrap();
        drop(Store::open(dir.path()).unwrap());
        let committed = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writer = {
            let (path, committed, done) = (dir.path().to_path_buf(), committed.clone(), done.clone());
            std::thread::spawn(move || {
                let mut n = 0u64;
                while !done.load(std::sync::atomic::Ordering::SeqCst) {
                    let s = Store::open(&path).unwrap();
                    n += 1;
                    let mut b = WriteBatch::default();
                    b.put_cf(s.cf(CF_META), b"counter", n.to_le_bytes());
                    s.write(b, true).unwrap();
                    committed.store(n, std::sync::atomic::Ordering::SeqCst);
                }
            })
        };
        // At least 4 s and 25 opens: a busy machine (the whole suite running) opens
        // slower, and the check is of what every open sees, not of how many there are.
        let started = std::time::Instant::now();
        let mut opens = 0;
        let enough = |opens: u32| opens > 25 && started.elapsed() >= std::time::Duration::from_secs(4);
        while !enough(opens) && started.elapsed() < std::time::Duration::from_secs(120) {
            let before = committed.load(std::sync::atomic::Ordering::SeqCst);
            let s = Store::open_read_only(dir.path()).unwrap_or_else(|e| panic!("open {opens}: {e}"));
            let seen = s.get(CF_META, b"counter").unwrap().map_or(0, |v| u64::from_le_bytes(v.try_into().unwrap()));
            assert!(seen >= before, "open {opens}: saw write {seen}, {before} were committed before the open");
            opens += 1;
        }
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        writer.join().unwrap();
        assert!(opens > 25, "{opens} opens in 120 s");
    }
}
