//! The store: document metadata, texts and results in RocksDB.
//!
//! Schema version [`SCHEMA_VERSION`] (the ledger, a file a step, is `migrations/`;
//! `docs/ARCHITECTURE.md` has the map). The column families and their records, with
//! the schema that added each, are declared once in `schema.rs`: the table is
//! [`COLUMN_FAMILIES`]'s documentation.
//!
//! Schema 6 moved the derived indexes (near-duplicate keys, qSign signatures, document
//! frequencies) out of RocksDB into the table file (`textorigin_core::index`); the
//! store keeps the records they are rebuilt from.
//!
//! Big-endian keys make RocksDB's byte order the sequence order. Every value starts
//! with a version byte so that a later build can tell old values from new ones
//! (`codec`). A document is written in one `WriteBatch` (metadata, name, text,
//! result, its near-duplicate sketch and verdicts, its sentences and quotations, its
//! spool admission, its document admission and `next_seq` together): a crash never leaves it half-stored or half-indexed.
//! [`Store::open`] refuses a store whose schema is newer or older than this build's;
//! the ordered upgrade steps run above the store (`crate::storage::migrations`, whose
//! `open` the data directory calls).
//!
//! One module per concern: `codec` (the value and key encodings), [`meta`] (typed
//! `meta` keys), [`documents`], [`exact`], [`neardup_index`], [`quote_index`], [`revisions`],
//! [`templates`], [`spool_log`] (admission and failures), [`book`] and [`partitions`]
//! (a deployment's), `schema` (the column families, one list), `table` (typed
//! reads and writes of their records: every module goes through it), `open` (opening, and
//! what a store's files say), `cache` (read caches) and `copy` (a consistent copy for
//! `backup`). The store records; what reads it to search or to compute again is beside
//! it (`crate::storage::search`, `crate::storage::recompute`), the verdicts and scores
//! computed in `textorigin_core`.

use std::path::{Path, PathBuf};

use rocksdb::{WriteBatch, WriteOptions, DB};
use textorigin_core::engine::DocResult;
use textorigin_core::quote::QuoteFind;

pub mod book;
mod cache;
pub(crate) mod codec;
mod copy;
pub mod documents;
pub mod exact;
pub mod meta;
pub mod neardup_index;
mod open;
pub mod partitions;
pub mod quote_index;
pub mod revisions;
mod schema;
pub mod spool_log;
pub(crate) mod table;
pub mod templates;

pub use book::{BookState, BookWrite};
pub use documents::{DocMeta, Via};
pub use exact::{Exact, FirstHolder};
pub use neardup_index::NearDupWrite;
pub use open::Found;
use open::{data_dir, files, open_error, Files};
pub use revisions::{Revised, Revision, Revisions};
pub use schema::COLUMN_FAMILIES;
pub(crate) use schema::*;
pub use spool_log::{
    admission_key, document_key, key_name, Admission, AdmissionKey, Admit, DocFailure, DocumentKeys, Failure,
    FileAdmission,
};
pub use templates::{DocTemplates, LineCount, TemplateWrite};
pub use textorigin_core::quote::{Quotation, QuoteSource};

/// Bound on the write-ahead logs kept on disk.
const MAX_TOTAL_WAL_BYTES: u64 = 64 << 20;
/// Bound on the memory of all memtables together.
const MEMTABLE_BYTES: usize = 32 << 20;
/// The texts' memtable: flushed (and compressed) by RocksDB's own thread as the texts
/// come, not all at a close.
const TEXT_MEMTABLE_BYTES: usize = 4 << 20;
/// RocksDB's block cache, shared by every column family.
const BLOCK_CACHE_BYTES: usize = 16 << 20;

/// The schema this build writes.
pub const SCHEMA_VERSION: u32 = 28;

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
    #[error("store {path} is damaged: {what}. Nothing was changed. Restore the data directory from a backup, or rebuild the store's manifest from its files with `textorigin repair --data {}` (RocksDB's repair), then `textorigin check --data {}`", data_dir(path).display(), data_dir(path).display())]
    Damaged { path: PathBuf, what: String },
    #[error("store {0}: its files kept changing while it was being opened read-only (a writer flushing all the time?); try again")]
    Unsteady(PathBuf),
    #[error("store {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("document #{seq}, held by another partition: {source}")]
    Elsewhere { seq: u64, source: Box<dyn std::error::Error + Send + Sync> },
    #[error("document #{seq}: {source}")]
    Unanswered { seq: u64, source: textorigin_core::index::Unanswered },
}

pub(crate) type Result<T> = std::result::Result<T, StoreError>;

/// The one way a running partition's store of a deployment (`docs/SCALE-OUT.md`,
/// "Partitions") reads the documents it does not hold (the partition's book
/// implements it; the stores on disk are reached through
/// [`PartitionStores`](partitions::PartitionStores)): their place in publication
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
    pub(crate) db: DB,
    pub(crate) path: PathBuf,
    /// Bounded copies of what quotation search reads most ([`cache`]).
    caches: cache::Caches,
    /// Where the documents of other partitions are read (a partition's store only).
    elsewhere: std::sync::OnceLock<std::sync::Arc<dyn Elsewhere>>,
    /// The other partitions' stores, read with this one ([`partitions`]).
    siblings: std::sync::OnceLock<partitions::Siblings>,
    /// A read-only open's files as they were just before it ([`Store::unchanged`]).
    opened: Option<Files>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish_non_exhaustive()
    }
}

impl Store {
    /// Whether the store's files are as they were just before this read-only open (no
    /// write since: every write grows a write-ahead log, every flush or compaction
    /// changes the manifest), so that opening it again would read the same state. False
    /// for a writer's open, and when its files cannot be read.
    pub fn unchanged(&self) -> bool {
        self.opened.as_ref().is_some_and(|o| files(&self.path).as_ref() == Some(o))
    }

    /// Where the store lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn db_err(&self) -> impl FnOnce(rocksdb::Error) -> StoreError + '_ {
        move |source| StoreError::Db { path: self.path.clone(), source }
    }

    pub(crate) fn cf(&self, name: &str) -> &rocksdb::ColumnFamily {
        self.db.cf_handle(name).expect("column families are created on open")
    }

    /// (second key, value) of the keys of `cf` that start with `first` (keys made by
    /// [`codec::pair_key`]), by the second ([`Store::pairs`] decodes them), the first
    /// `limit` of them.
    /// In a read of partitions, every partition's, merged.
    fn pairs_raw(&self, cf: &str, first: u64, limit: usize) -> Result<Vec<(u64, Vec<u8>)>> {
        let prefix = codec::seq_key(first);
        let mut out = Vec::new();
        for s in std::iter::once(self).chain(self.siblings()) {
            let from = out.len();
            for item in s.db.iterator_cf(s.cf(cf), rocksdb::IteratorMode::From(&prefix, rocksdb::Direction::Forward)) {
                let (k, v) = item.map_err(s.db_err())?;
                if !k.starts_with(&prefix) || out.len() - from == limit {
                    break;
                }
                if let Ok(second) = <[u8; 8]>::try_from(&k[8..]) {
                    out.push((u64::from_be_bytes(second), v.to_vec()));
                }
            }
        }
        if self.siblings.get().is_some() {
            out.sort_by_key(|x| x.0);
            out.truncate(limit);
        }
        Ok(out)
    }

    pub(crate) fn write(&self, b: WriteBatch, sync: bool) -> Result<()> {
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
        if let Some(t) = doc.templates {
            self.add_templates(&mut b, t);
        }
        self.add_exact(&mut b, seq, doc.exact, doc.nd.map(|nd| &nd.keys[..]));
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
    /// searches read them from there first (`crate::storage::recompute`).
    fn cache_findings(&self, seq: u64, nd: Option<&NearDupWrite>, q: Option<&QuoteFind>) {
        if let Some(sketch) = nd.and_then(|nd| nd.sketch.as_ref()) {
            self.cache_sketch(seq, sketch);
        }
        if let Some(q) = q {
            self.cache_sentences(seq, &q.sentences);
        }
    }

    /// Writes batch `b` with the copier edges of document `seq`'s `result` and the
    /// revisions its arrival made, then drops the revised documents from the
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
    /// document `cause` made, as that document's batch does on one node;
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
        let all = (&(0, 0), &(u64::MAX, u64::MAX));
        self.delete_range(&mut b, CF_ND_LATER, all.0, all.1);
        self.delete_range(&mut b, CF_ND_LATE, all.0, all.1);
        self.delete_range(&mut b, CF_Q_LATE, all.0, all.1);
        self.write(b, false)
    }

    /// Replaces the stored results of document `seq` by a re-analysis (`rebuild
    /// --reanalyse`): its origins, near-duplicate verdicts and quotations, its site's
    /// template records and its exact-copy record, in one batch (a feature switched off,
    /// None, keeps nothing). The caller has cleared the pairs found later
    /// ([`Store::clear_pairs_found_later`]) and the exact-copy records
    /// ([`Store::clear_exact`]) first.
    pub fn put_reanalysis(
        &self,
        seq: u64,
        result: &DocResult,
        nd: Option<&NearDupWrite>,
        q: Option<&QuoteFind>,
        revised: &Revisions,
        (templates, exact): (Option<&TemplateWrite>, Exact),
    ) -> Result<()> {
        // What an earlier analysis stored goes first: the new one may index other
        // sentences, or none (the batch applies its writes in order).
        let mut b = WriteBatch::default();
        self.delete_near_dups(&mut b, seq);
        self.delete_quotes(&mut b, seq);
        self.add_findings(&mut b, seq, nd, q);
        self.put(&mut b, CF_RESULTS, &seq, result);
        if let Some(t) = templates {
            self.add_templates(&mut b, t);
        }
        self.add_exact(&mut b, seq, exact, nd.map(|nd| &nd.keys[..]));
        self.write_with_revisions(b, seq, result, revised)?;
        self.cache_findings(seq, nd, q);
        self.caches.origin_texts.remove(&seq);
        Ok(())
    }

    /// Bytes on disk of each column family (its SST files) with data, largest first:
    /// what the store keeps, by kind (the write-ahead log and memtables aside).
    pub fn disk_use(&self) -> Result<Vec<(&'static str, u64)>> {
        let mut out = Vec::new();
        for name in COLUMN_FAMILIES {
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

    /// Bytes of the store's files on disk, every file (table files, write-ahead logs,
    /// manifests) and the write-ahead logs' share: [`Store::disk_use`] counts table
    /// files only, and a running daemon's documents are in its log until a flush
    /// (`stats` said 0.0 MB where `du` said 37 MB).
    pub fn files_on_disk(&self) -> Result<(u64, u64)> {
        let io = |source| StoreError::Io { path: self.path.clone(), source };
        let (mut all, mut logs) = (0, 0);
        for e in std::fs::read_dir(&self.path).map_err(io)? {
            // A file a writer deletes meanwhile (a log it made obsolete) counts as gone.
            let Ok(e) = e else { continue };
            let Ok(m) = e.metadata() else { continue };
            if m.is_file() {
                all += m.len();
                if e.file_name().to_string_lossy().ends_with(".log") {
                    logs += m.len();
                }
            }
        }
        Ok((all, logs))
    }

    /// Writes every column family's memtable to its files, so that the write-ahead
    /// log segments are no longer needed and RocksDB deletes them: a closed store keeps
    /// its data once, compressed (the log held a second, raw copy: 24 of the 94 MB of
    /// the first 50,000 GCC entries' store).
    pub fn flush_memtables(&self) -> Result<()> {
        let cfs: Vec<_> = COLUMN_FAMILIES.iter().map(|&name| self.cf(name)).collect();
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
    /// Earlier documents whose results this one's arrival changed.
    pub revised: &'a Revisions,
    /// What the data directory's stage keeps with it for a restart
    /// ([`TableStage::record`](crate::storage::stage::TableStage::record)).
    pub stage: Option<&'a [u8]>,
    /// Its site's template records (None without a site or labelling).
    pub templates: Option<&'a TemplateWrite>,
    /// Its exact-copy record: the first of its tokens, or a copy of an earlier document.
    pub exact: Exact,
}

#[cfg(test)]
pub(crate) mod tests;
