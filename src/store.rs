//! The store: document metadata, texts and results in RocksDB.
//!
//! Schema version 1 (the ledger is `migrations/`; `docs/ARCHITECTURE.md` has the map):
//!
//! | column family | key | value |
//! | --- | --- | --- |
//! | `meta` | `schema_version` | u32 LE |
//! | `meta` | `config` | version byte 1, postcard [`Config`] |
//! | `meta` | `next_seq` | u64 LE: the sequence number the next document gets |
//! | `docs` | seq, u64 BE | version byte 1, postcard [`DocMeta`] |
//! | `names` | name bytes, 0x00, seq u64 BE | empty |
//! | `text` | seq, u64 BE | version byte 1, UTF-8 text (zstd-compressed by RocksDB) |
//! | `results` | seq, u64 BE | version byte 1, postcard [`DocResult`] |
//! | `meta` | `neardup_config` | version byte 1, postcard [`NearDupConfig`] (schema 2) |
//! | `nd_sketch` | seq, u64 BE | version byte 1, postcard [`Sketch`] (schema 2) |
//! | `nd_index` | kind, index, value, seq u64 BE | empty: the near-duplicate indexes (schema 2) |
//! | `nd_result` | seq, u64 BE | version byte 1, postcard `Vec<NearDup>`: earlier near-duplicates (schema 2) |
//! | `nd_later` | earlier seq BE, later seq BE | version byte 1, postcard [`NearDup`] seen from the earlier one (schema 2) |
//!
//! | `meta` | `quote_config`, `q_docs` | postcard [`QuoteConfig`]; u64 LE documents counted in `q_df` (schema 3) |
//! | `q_sent` | seq BE, sentence u32 BE | version byte 1, postcard [`Sentence`] (indexed sentences only) (schema 3) |
//! | `q_index` | piece u8, value u32 BE, signature u64 BE, seq BE, sentence u32 BE | empty: the qSign index (schema 3) |
//! | `q_df` | word fingerprint u64 BE | u64 LE: documents containing the word (schema 3) |
//! | `q_result` | seq BE | version byte 1, postcard `Vec<Quotation>` (schema 3) |
//!
//! | `admitted` | xxh3-128 of a spool file's name and bytes, BE | u32 LE documents stored, u32 LE documents in the file (schema 4) |
//! | `failed` | u64 BE counter | version byte 1, postcard [`Failure`] (schema 4) |
//! | `meta` | `failed_next` | u64 LE: the next failure number (schema 4) |
//!
//! `nd_index` keys: kind `x` (exact hash, index 0, 16-byte value), `s` (supershingle i),
//! `b` (LSH band i), `p` (SimHash piece i), the last three with an 8-byte value.
//! Big-endian keys make RocksDB's byte order the sequence order. Every value starts
//! with a version byte so that a later build can tell old values from new ones.
//! A document is written in one `WriteBatch` (metadata, name, text, result, its
//! near-duplicate sketch, index entries and verdicts, and `next_seq` together): a crash
//! never leaves it half-stored or half-indexed. Opening refuses a store whose schema is
//! newer than this build and upgrades an older one through the ordered steps of
//! [`MIGRATIONS`]; each step is idempotent and the new version is written after it
//! completes, so a crash during an upgrade re-runs the step.

use std::path::{Path, PathBuf};

use rocksdb::{ColumnFamilyDescriptor, IteratorMode, Options, WriteBatch, WriteOptions, DB};
use serde::{de::DeserializeOwned, Deserialize, Serialize};

use crate::config::Config;
use crate::engine::DocResult;
use crate::neardup::{self, NearDup, NearDupConfig, Sketch};
use crate::quote::{self, QuoteConfig, Sentence};
use crate::rabin::Rabin;
use crate::text::tokenize;

/// The schema this build writes.
pub const SCHEMA_VERSION: u32 = 4;
/// Version byte in front of every postcard value.
const VALUE_VERSION: u8 = 1;

const CF_META: &str = "meta";
const CF_DOCS: &str = "docs";
const CF_NAMES: &str = "names";
const CF_TEXT: &str = "text";
const CF_RESULTS: &str = "results";
const CF_ND_SKETCH: &str = "nd_sketch";
const CF_ND_INDEX: &str = "nd_index";
const CF_ND_RESULT: &str = "nd_result";
const CF_ND_LATER: &str = "nd_later";
const CF_Q_SENT: &str = "q_sent";
const CF_Q_INDEX: &str = "q_index";
const CF_Q_DF: &str = "q_df";
const CF_Q_RESULT: &str = "q_result";
const CF_ADMITTED: &str = "admitted";
const CF_FAILED: &str = "failed";
const CFS: [&str; 15] = [
    CF_ADMITTED,
    CF_FAILED,
    CF_META,
    CF_DOCS,
    CF_NAMES,
    CF_TEXT,
    CF_RESULTS,
    CF_ND_SKETCH,
    CF_ND_INDEX,
    CF_ND_RESULT,
    CF_ND_LATER,
    CF_Q_SENT,
    CF_Q_INDEX,
    CF_Q_DF,
    CF_Q_RESULT,
];

/// Prefix length of `q_index` keys used for Bloom filtering: piece, value.
const Q_PREFIX: usize = 5;
/// Prefix length of `nd_index` keys used for Bloom filtering: kind, index, 8 value bytes.
const ND_PREFIX: usize = 10;

/// An upgrade step from `from` to `from + 1`: idempotent, may write several batches.
pub type Migration = (u32, &'static str, fn(&Store) -> std::result::Result<(), StoreError>);

/// The ordered upgrade steps (the ledger in `migrations/` describes each).
pub const MIGRATIONS: &[Migration] = &[
    (1, "near-duplicate sketches, indexes and verdicts", backfill_near_dups),
    (2, "quotation sentences, signatures, document frequencies and matches", backfill_quotes),
    (3, "spool admission and failure records (new column families, nothing to fill)", |_| Ok(())),
];

/// Schema 2 → 3: indexes every stored document's sentences and finds its quotations,
/// in sequence order, exactly as ingestion does.
fn backfill_quotes(store: &Store) -> std::result::Result<(), StoreError> {
    let cfg = store.quote_config()?;
    store.put_quote_config(&cfg)?;
    // Idempotent: start from empty counts (a re-run overwrites what a crash left).
    let mut b = WriteBatch::default();
    b.delete_range_cf(store.cf(CF_Q_DF), &[0u8; 8][..], &[0xffu8; 9][..]);
    b.delete_range_cf(store.cf(CF_Q_INDEX), &[0u8; 1][..], &[0xffu8; 1][..]);
    b.put_cf(store.cf(CF_META), b"q_docs", 0u64.to_le_bytes());
    store.write(b, false)?;
    let rabin = Rabin::new(1);
    let mut tokens = Vec::new();
    let metas: Vec<DocMeta> = store.docs().collect::<Result<_>>()?;
    for meta in metas {
        let text = store.text(meta.seq)?.unwrap_or_default();
        tokenize(&text, &rabin, &mut tokens);
        let q = store.quote_write(&cfg, meta.seq, quote::sentences(&text, &tokens))?;
        let mut b = WriteBatch::default();
        store.add_quotes(&mut b, &cfg, meta.seq, &q);
        store.write(b, false)?;
    }
    store.sync()
}

/// A spool file's admission record, written in the batch of each of its documents:
/// the key is xxh3-128 of the file's name and bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Admission {
    pub key: u128,
    /// Documents of the file stored once this batch commits.
    pub done: u32,
    /// Documents in the file.
    pub total: u32,
}

/// A spool file (or line) that could not be processed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    pub file: String,
    pub reason: String,
    /// Wall-clock time, ms since the Unix epoch.
    pub at_ms: u64,
}

/// One earlier sentence a sentence reuses.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct QuoteSource {
    pub seq: u64,
    /// Index of the sentence in its document.
    pub sentence: u32,
    /// Differing signature bits.
    pub distance: u32,
    /// Normalised word-overlap score.
    pub score: f64,
}

/// A sentence of a document with the earlier sentences it reuses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Quotation {
    pub start_byte: u32,
    pub end_byte: u32,
    pub sentence: u32,
    pub sources: Vec<QuoteSource>,
}

/// A document's quotation data, ready to be written with it.
#[derive(Debug, Clone)]
pub struct QuoteWrite {
    /// (index, sentence, signature) of the sentences to index.
    pub indexed: Vec<(u32, Sentence, u64)>,
    /// New document frequencies of the document's distinct words.
    pub df: Vec<(u64, u64)>,
    /// Documents counted after this one.
    pub docs: u64,
    pub found: Vec<Quotation>,
    /// Candidates examined (for evaluation).
    pub candidates: u64,
}

/// Schema 1 → 2: computes the near-duplicate sketch, index entries and verdicts of every
/// stored document, in sequence order, exactly as ingestion does.
fn backfill_near_dups(store: &Store) -> std::result::Result<(), StoreError> {
    let cfg = store.neardup_config()?;
    store.put_neardup_config(&cfg)?;
    let rabin = Rabin::new(cfg.k as usize);
    let mut tokens = Vec::new();
    let metas: Vec<DocMeta> = store.docs().collect::<Result<_>>()?;
    for meta in metas {
        let text = store.text(meta.seq)?.unwrap_or_default();
        tokenize(&text, &rabin, &mut tokens);
        let nd = store.near_dup_write(&cfg, meta.seq, neardup::sketch(&cfg, &tokens, &rabin))?;
        let mut b = WriteBatch::default();
        store.add_near_dups(&mut b, &cfg, meta.seq, &nd);
        store.write(b, false)?;
    }
    store.sync()
}

/// A document's near-duplicate data, ready to be written with it.
#[derive(Debug, Clone)]
pub struct NearDupWrite {
    pub sketch: Sketch,
    /// Earlier documents with at least one verdict, by sequence number.
    pub found: Vec<NearDup>,
}

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
}

type Result<T> = std::result::Result<T, StoreError>;

/// Metadata of a stored document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocMeta {
    /// Sequence number: the document's id and its place in the stream.
    pub seq: u64,
    pub name: String,
    /// File (and line) it came from.
    pub source: String,
    pub url: Option<String>,
    pub published_at: Option<String>,
    /// Bytes of stored text.
    pub text_bytes: u64,
    pub tokens: u32,
    /// xxh3-128 of the stored text, hex.
    pub content_hash: String,
    /// Wall-clock time of ingestion, ms since the Unix epoch (not part of results).
    pub ingested_at_ms: u64,
}

/// The RocksDB store of a data directory.
pub struct Store {
    db: DB,
    path: PathBuf,
}

fn encode<T: Serialize>(v: &T) -> Vec<u8> {
    let mut out = vec![VALUE_VERSION];
    out.extend(postcard::to_allocvec(v).expect("postcard encoding of owned data cannot fail"));
    out
}

fn seq_key(seq: u64) -> [u8; 8] {
    seq.to_be_bytes()
}

fn name_key(name: &str, seq: u64) -> Vec<u8> {
    let mut k = name.as_bytes().to_vec();
    k.push(0);
    k.extend_from_slice(&seq_key(seq));
    k
}

impl Store {
    fn options() -> Options {
        let mut o = Options::default();
        o.create_if_missing(true);
        o.create_missing_column_families(true);
        o.set_max_open_files(256);
        o.set_keep_log_file_num(4);
        o
    }

    fn descriptors() -> Vec<ColumnFamilyDescriptor> {
        CFS.iter()
            .map(|&name| {
                let mut o = Options::default();
                if name == CF_TEXT || name == CF_RESULTS {
                    o.set_compression_type(rocksdb::DBCompressionType::Zstd);
                } else {
                    o.set_compression_type(rocksdb::DBCompressionType::Lz4);
                }
                // The index families are probed by prefix, mostly for prefixes that are
                // absent: prefix Bloom filters (memtable and tables) answer those cheaply.
                let prefix = match name {
                    CF_Q_INDEX => Some(Q_PREFIX),
                    CF_ND_INDEX => Some(ND_PREFIX),
                    _ => None,
                };
                if let Some(len) = prefix {
                    o.set_prefix_extractor(rocksdb::SliceTransform::create_fixed_prefix(len));
                    o.set_memtable_prefix_bloom_ratio(0.1);
                    let mut t = rocksdb::BlockBasedOptions::default();
                    t.set_bloom_filter(10.0, false);
                    t.set_whole_key_filtering(false);
                    o.set_block_based_table_factory(&t);
                }
                ColumnFamilyDescriptor::new(name, o)
            })
            .collect()
    }

    /// Opens (creating if needed) the store at `path` for writing. Only one writer at a
    /// time: a second one gets RocksDB's lock error.
    pub fn open(path: &Path) -> Result<Store> {
        let db = DB::open_cf_descriptors(&Self::options(), path, Self::descriptors()).map_err(|source| {
            if source.to_string().contains("LOCK") {
                StoreError::InUse(path.to_path_buf())
            } else {
                StoreError::Db { path: path.to_path_buf(), source }
            }
        })?;
        let store = Store { db, path: path.to_path_buf() };
        store.upgrade()?;
        Ok(store)
    }

    /// Opens an existing store read-only (works while a writer runs).
    pub fn open_read_only(path: &Path) -> Result<Store> {
        if !path.join("CURRENT").exists() {
            return Err(StoreError::Missing(path.parent().unwrap_or(path).to_path_buf()));
        }
        let existing = DB::list_cf(&Self::options(), path).map_err(|source| StoreError::Db { path: path.to_path_buf(), source })?;
        if !existing.iter().any(|c| c == CF_META) {
            // A store being created right now (or not a textorigin store).
            return Err(StoreError::Missing(path.parent().unwrap_or(path).to_path_buf()));
        }
        let descriptors = Self::descriptors().into_iter().filter(|d| existing.iter().any(|e| e == d.name()));
        let db = DB::open_cf_descriptors_read_only(&Self::options(), path, descriptors, false)
            .map_err(|source| StoreError::Db { path: path.to_path_buf(), source })?;
        let store = Store { db, path: path.to_path_buf() };
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

    fn db_err(&self) -> impl FnOnce(rocksdb::Error) -> StoreError + '_ {
        move |source| StoreError::Db { path: self.path.clone(), source }
    }

    fn cf(&self, name: &str) -> &rocksdb::ColumnFamily {
        self.db.cf_handle(name).expect("column families are created on open")
    }

    fn get(&self, cf: &str, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.db.get_cf(self.cf(cf), key).map_err(self.db_err())
    }

    fn decode<T: DeserializeOwned>(&self, what: &str, bytes: &[u8]) -> Result<T> {
        let corrupt = |reason: String| StoreError::Corrupt { path: self.path.clone(), what: what.to_string(), reason };
        match bytes.split_first() {
            Some((&VALUE_VERSION, rest)) => postcard::from_bytes(rest).map_err(|e| corrupt(e.to_string())),
            Some((v, _)) => Err(corrupt(format!("unknown value version {v}"))),
            None => Err(corrupt("empty value".into())),
        }
    }

    /// The stored schema version (0 for a store with no version yet).
    pub fn schema_version(&self) -> Result<u32> {
        Ok(self
            .get(CF_META, b"schema_version")?
            .and_then(|v| v.try_into().ok().map(u32::from_le_bytes))
            .unwrap_or(0))
    }

    fn upgrade(&self) -> Result<()> {
        let mut v = self.schema_version()?;
        if v > SCHEMA_VERSION {
            return Err(StoreError::Newer { path: self.path.clone(), found: v });
        }
        if v == 0 {
            // A new store starts at the current schema.
            let mut b = WriteBatch::default();
            b.put_cf(self.cf(CF_META), b"schema_version", SCHEMA_VERSION.to_le_bytes());
            return self.write(b, true);
        }
        while v < SCHEMA_VERSION {
            let (_, what, step) = MIGRATIONS
                .iter()
                .find(|m| m.0 == v)
                .ok_or(StoreError::NoMigration { path: self.path.clone(), found: v })?;
            tracing::warn!(from = v, to = v + 1, step = what, "upgrading the store");
            step(self)?;
            let mut b = WriteBatch::default();
            b.put_cf(self.cf(CF_META), b"schema_version", (v + 1).to_le_bytes());
            self.write(b, true)?;
            v += 1;
        }
        Ok(())
    }

    fn write(&self, b: WriteBatch, sync: bool) -> Result<()> {
        let mut o = WriteOptions::default();
        o.set_sync(sync);
        self.db.write_opt(b, &o).map_err(self.db_err())
    }

    /// A postcard value stored under `key` in `meta`.
    fn meta_value<T: DeserializeOwned>(&self, key: &[u8], what: &str) -> Result<Option<T>> {
        self.get(CF_META, key)?.map(|v| self.decode(what, &v)).transpose()
    }

    /// Stores a postcard value under `key` in `meta` (synced).
    fn put_meta_value<T: Serialize>(&self, key: &[u8], v: &T) -> Result<()> {
        let mut b = WriteBatch::default();
        b.put_cf(self.cf(CF_META), key, encode(v));
        self.write(b, true)
    }

    /// The configuration the data directory was created with.
    pub fn config(&self) -> Result<Option<Config>> {
        self.meta_value(b"config", "config")
    }

    /// Records the configuration (synced).
    pub fn put_config(&self, c: &Config) -> Result<()> {
        self.put_meta_value(b"config", c)
    }

    /// The stored near-duplicate parameters, if any.
    pub fn stored_neardup_config(&self) -> Result<Option<NearDupConfig>> {
        self.meta_value(b"neardup_config", "neardup config")
    }

    /// The near-duplicate parameters (the defaults until some are stored).
    pub fn neardup_config(&self) -> Result<NearDupConfig> {
        Ok(self.stored_neardup_config()?.unwrap_or_default())
    }

    /// Records the near-duplicate parameters (synced).
    pub fn put_neardup_config(&self, c: &NearDupConfig) -> Result<()> {
        self.put_meta_value(b"neardup_config", c)
    }

    /// The stored quotation parameters, if any.
    pub fn stored_quote_config(&self) -> Result<Option<QuoteConfig>> {
        self.meta_value(b"quote_config", "quote config")
    }

    /// The quotation parameters (the defaults until some are stored).
    pub fn quote_config(&self) -> Result<QuoteConfig> {
        Ok(self.stored_quote_config()?.unwrap_or_default())
    }

    /// Records the quotation parameters (synced).
    pub fn put_quote_config(&self, c: &QuoteConfig) -> Result<()> {
        self.put_meta_value(b"quote_config", c)
    }

    /// Documents counted in the document frequencies.
    pub fn quote_docs(&self) -> Result<u64> {
        Ok(self.get(CF_META, b"q_docs")?.and_then(|v| v.try_into().ok().map(u64::from_le_bytes)).unwrap_or(0))
    }

    /// Documents (so far) containing the word.
    pub fn df(&self, word: u64) -> Result<u64> {
        Ok(self.get(CF_Q_DF, &word.to_be_bytes())?.and_then(|v| v.try_into().ok().map(u64::from_le_bytes)).unwrap_or(0))
    }

    /// A stored sentence.
    pub fn sentence(&self, seq: u64, idx: u32) -> Result<Option<Sentence>> {
        let key = [&seq_key(seq)[..], &idx.to_be_bytes()[..]].concat();
        self.get(CF_Q_SENT, &key)?.map(|v| self.decode("sentence", &v)).transpose()
    }

    /// Every indexed sentence: ((seq, sentence index), sentence).
    pub fn all_sentences(&self) -> Result<Vec<((u64, u32), Sentence)>> {
        let mut out = Vec::new();
        for item in self.db.iterator_cf(self.cf(CF_Q_SENT), IteratorMode::Start) {
            let (k, v) = item.map_err(self.db_err())?;
            let seq = u64::from_be_bytes(k[0..8].try_into().expect("key layout"));
            let idx = u32::from_be_bytes(k[8..12].try_into().expect("key layout"));
            out.push(((seq, idx), self.decode("sentence", &v)?));
        }
        Ok(out)
    }

    /// Every indexed sentence within its radius of `sig`: (seq, sentence, distance).
    pub fn quote_candidates(&self, cfg: &QuoteConfig, sig: u64, d: u32) -> Result<Vec<(u64, u32, u32)>> {
        let mut out = Vec::new();
        let prefixes = quote::probes(cfg, sig, d).into_iter().map(|(p, v)| {
            let mut prefix = vec![p as u8];
            prefix.extend_from_slice(&v.to_be_bytes());
            prefix
        });
        self.scan_prefixes(CF_Q_INDEX, prefixes, cfg.max_per_probe as usize, |rest| {
            // rest: signature u64, seq u64, sentence u32
            let other = u64::from_be_bytes(rest[0..8].try_into().expect("key layout"));
            let dist = (other ^ sig).count_ones();
            if dist <= d {
                let seq = u64::from_be_bytes(rest[8..16].try_into().expect("key layout"));
                let idx = u32::from_be_bytes(rest[16..20].try_into().expect("key layout"));
                out.push((seq, idx, dist));
            }
        })?;
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    /// Finds the quotations of a new document's sentences among the earlier documents'.
    pub fn quote_write(&self, cfg: &QuoteConfig, seq: u64, sentences: Vec<Sentence>) -> Result<QuoteWrite> {
        let n_docs = self.quote_docs()?;
        let mut dfs: std::collections::HashMap<u64, u64> = std::collections::HashMap::new();
        let mut df = |w: u64| -> Result<u64> {
            if let Some(&v) = dfs.get(&w) {
                return Ok(v);
            }
            let v = self.df(w)?;
            dfs.insert(w, v);
            Ok(v)
        };
        let mut found = Vec::new();
        let mut indexed = Vec::new();
        let mut candidates = 0u64;
        for (i, s) in sentences.iter().enumerate() {
            if (s.words.len() as u32) < cfg.min_words {
                continue;
            }
            let sig = quote::signature(cfg, &s.words);
            indexed.push((i as u32, s.clone(), sig));
            if n_docs == 0 {
                continue;
            }
            let d = quote::radius(cfg, s.words.len() as u32);
            let mut idf_cache: std::collections::HashMap<u64, f64> = std::collections::HashMap::new();
            for &w in &s.words {
                let f = df(w)?.max(1);
                idf_cache.insert(w, (n_docs as f64 / f as f64).ln().max(0.0));
            }
            let mut sources = Vec::new();
            for (cseq, cidx, dist) in self.quote_candidates(cfg, sig, d)? {
                if cseq >= seq {
                    continue;
                }
                candidates += 1;
                if let Some(other) = self.sentence(cseq, cidx)? {
                    let sc = quote::score(&s.words, &other.words, |w| idf_cache.get(&w).copied().unwrap_or(0.0));
                    if sc >= cfg.threshold {
                        sources.push(QuoteSource { seq: cseq, sentence: cidx, distance: dist, score: sc });
                    }
                }
            }
            if !sources.is_empty() {
                sources.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.seq.cmp(&b.seq)).then(a.sentence.cmp(&b.sentence)));
                sources.truncate(cfg.max_sources as usize);
                found.push(Quotation { start_byte: s.start, end_byte: s.end, sentence: i as u32, sources });
            }
        }
        let mut words: Vec<u64> = sentences.iter().flat_map(|s| s.words.iter().copied()).collect();
        words.sort_unstable();
        words.dedup();
        let mut new_df = Vec::with_capacity(words.len());
        for w in words {
            new_df.push((w, df(w)? + 1));
        }
        Ok(QuoteWrite { indexed, df: new_df, docs: n_docs + 1, found, candidates })
    }

    /// Adds a document's quotation data to a batch.
    fn add_quotes(&self, b: &mut WriteBatch, cfg: &QuoteConfig, seq: u64, q: &QuoteWrite) {
        for (idx, s, sig) in &q.indexed {
            let sent_key = [&seq_key(seq)[..], &idx.to_be_bytes()[..]].concat();
            b.put_cf(self.cf(CF_Q_SENT), &sent_key, encode(s));
            for p in 0..cfg.pieces {
                let mut k = vec![p as u8];
                k.extend_from_slice(&quote::piece(cfg, *sig, p).to_be_bytes());
                k.extend_from_slice(&sig.to_be_bytes());
                k.extend_from_slice(&sent_key);
                b.put_cf(self.cf(CF_Q_INDEX), k, []);
            }
        }
        for (w, n) in &q.df {
            b.put_cf(self.cf(CF_Q_DF), w.to_be_bytes(), n.to_le_bytes());
        }
        b.put_cf(self.cf(CF_META), b"q_docs", q.docs.to_le_bytes());
        b.put_cf(self.cf(CF_Q_RESULT), seq_key(seq), encode(&q.found));
    }

    /// The quotations recorded for document `seq`.
    pub fn quotations(&self, seq: u64) -> Result<Vec<Quotation>> {
        Ok(self.get(CF_Q_RESULT, &seq_key(seq))?.map(|v| self.decode("quotations", &v)).transpose()?.unwrap_or_default())
    }

    /// The sequence number the next document gets (1 for an empty store).
    pub fn next_seq(&self) -> Result<u64> {
        Ok(self.get(CF_META, b"next_seq")?.and_then(|v| v.try_into().ok().map(u64::from_le_bytes)).unwrap_or(1))
    }

    /// Stores one document with its text and result in one batch (not synced: call
    /// [`Store::sync`] at the end of a run).
    #[allow(clippy::too_many_arguments)] // the document's parts, written in one batch
    pub fn put_document(
        &self,
        meta: &DocMeta,
        text: &str,
        result: &DocResult,
        nd_cfg: &NearDupConfig,
        nd: &NearDupWrite,
        q_cfg: &QuoteConfig,
        q: &QuoteWrite,
    ) -> Result<()> {
        self.put_admitted_document(meta, text, result, nd_cfg, nd, q_cfg, q, None)
    }

    /// [`Store::put_document`] that also records how far its spool file is admitted.
    #[allow(clippy::too_many_arguments)] // the document's parts, written in one batch
    pub fn put_admitted_document(
        &self,
        meta: &DocMeta,
        text: &str,
        result: &DocResult,
        nd_cfg: &NearDupConfig,
        nd: &NearDupWrite,
        q_cfg: &QuoteConfig,
        q: &QuoteWrite,
        admission: Option<Admission>,
    ) -> Result<()> {
        let key = seq_key(meta.seq);
        let mut b = WriteBatch::default();
        if let Some(a) = admission {
            let mut v = a.done.to_le_bytes().to_vec();
            v.extend_from_slice(&a.total.to_le_bytes());
            b.put_cf(self.cf(CF_ADMITTED), a.key.to_be_bytes(), v);
        }
        self.add_near_dups(&mut b, nd_cfg, meta.seq, nd);
        self.add_quotes(&mut b, q_cfg, meta.seq, q);
        b.put_cf(self.cf(CF_DOCS), key, encode(meta));
        b.put_cf(self.cf(CF_NAMES), name_key(&meta.name, meta.seq), []);
        let mut t = vec![VALUE_VERSION];
        t.extend_from_slice(text.as_bytes());
        b.put_cf(self.cf(CF_TEXT), key, t);
        b.put_cf(self.cf(CF_RESULTS), key, encode(result));
        b.put_cf(self.cf(CF_META), b"next_seq", (meta.seq + 1).to_le_bytes());
        self.write(b, false)
    }

    /// Calls `f` with the rest of every key of `cf` that starts with one of `prefixes`
    /// (at most `limit` keys a prefix), seeking one reused iterator.
    fn scan_prefixes(
        &self,
        cf: &str,
        prefixes: impl IntoIterator<Item = Vec<u8>>,
        limit: usize,
        mut f: impl FnMut(&[u8]),
    ) -> Result<()> {
        // Every prefix is at least the column family's Bloom prefix: stay within it.
        let mut opts = rocksdb::ReadOptions::default();
        opts.set_prefix_same_as_start(true);
        let mut it = self.db.raw_iterator_cf_opt(self.cf(cf), opts);
        for prefix in prefixes {
            it.seek(&prefix);
            let mut n = 0;
            while n < limit {
                match it.key() {
                    Some(k) if k.starts_with(&prefix) => f(&k[prefix.len()..]),
                    _ => break,
                }
                n += 1;
                it.next();
            }
        }
        it.status().map_err(self.db_err())
    }

    /// The index keys of a sketch (without the sequence number).
    fn nd_keys(cfg: &NearDupConfig, sketch: &Sketch) -> Vec<Vec<u8>> {
        let mut keys = vec![[&[b'x', 0][..], &sketch.exact.to_be_bytes()[..]].concat()];
        let mut add = |kind: u8, values: Vec<u64>| {
            for (i, v) in values.into_iter().enumerate() {
                keys.push([&[kind, i as u8][..], &v.to_be_bytes()[..]].concat());
            }
        };
        add(b's', neardup::supershingles(cfg, &sketch.mins));
        add(b'b', neardup::bands(cfg, &sketch.mins));
        add(b'p', neardup::pieces(cfg, &sketch.simhash));
        keys
    }

    /// The sketch of document `seq`.
    pub fn sketch(&self, seq: u64) -> Result<Option<Sketch>> {
        self.get(CF_ND_SKETCH, &seq_key(seq))?.map(|v| self.decode("sketch", &v)).transpose()
    }

    /// Compares a new document's sketch with every earlier document that shares an
    /// index key with it (exact hash, supershingle, band or SimHash piece).
    pub fn near_dup_write(&self, cfg: &NearDupConfig, seq: u64, sketch: Sketch) -> Result<NearDupWrite> {
        let mut candidates = std::collections::BTreeSet::new();
        self.scan_prefixes(CF_ND_INDEX, Self::nd_keys(cfg, &sketch), cfg.max_per_key as usize, |rest| {
            if let Ok(s) = <[u8; 8]>::try_from(rest) {
                let s = u64::from_be_bytes(s);
                if s < seq {
                    candidates.insert(s);
                }
            }
        })?;
        let mut found = Vec::new();
        for c in candidates {
            if let Some(other) = self.sketch(c)? {
                let d = neardup::compare(cfg, c, &sketch, &other);
                if neardup::any_verdict(&d) {
                    found.push(d);
                }
            }
        }
        Ok(NearDupWrite { sketch, found })
    }

    /// Adds a document's near-duplicate data to a batch.
    fn add_near_dups(&self, b: &mut WriteBatch, cfg: &NearDupConfig, seq: u64, nd: &NearDupWrite) {
        let key = seq_key(seq);
        b.put_cf(self.cf(CF_ND_SKETCH), key, encode(&nd.sketch));
        for k in Self::nd_keys(cfg, &nd.sketch) {
            b.put_cf(self.cf(CF_ND_INDEX), [&k[..], &key[..]].concat(), []);
        }
        b.put_cf(self.cf(CF_ND_RESULT), key, encode(&nd.found));
        for d in &nd.found {
            let later = NearDup { seq, ..*d };
            b.put_cf(self.cf(CF_ND_LATER), [seq_key(d.seq), key].concat(), encode(&later));
        }
    }

    /// The earlier near-duplicates recorded for document `seq` (every verdict).
    pub fn near_dups(&self, seq: u64) -> Result<Vec<NearDup>> {
        Ok(self.get(CF_ND_RESULT, &seq_key(seq))?.map(|v| self.decode("near-duplicates", &v)).transpose()?.unwrap_or_default())
    }

    /// The later documents that found `seq` as a near-duplicate.
    pub fn near_dups_later(&self, seq: u64) -> Result<Vec<NearDup>> {
        let prefix = seq_key(seq);
        let mut out = Vec::new();
        for item in self.db.iterator_cf(self.cf(CF_ND_LATER), IteratorMode::From(&prefix, rocksdb::Direction::Forward)) {
            let (k, v) = item.map_err(self.db_err())?;
            if !k.starts_with(&prefix) {
                break;
            }
            out.push(self.decode("near-duplicate", &v)?);
        }
        Ok(out)
    }

    /// How far a spool file was admitted: (documents stored, documents in the file).
    pub fn admitted(&self, key: u128) -> Result<Option<(u32, u32)>> {
        Ok(self.get(CF_ADMITTED, &key.to_be_bytes())?.and_then(|v| {
            (v.len() == 8).then(|| (u32::from_le_bytes(v[0..4].try_into().expect("4")), u32::from_le_bytes(v[4..8].try_into().expect("4"))))
        }))
    }

    /// Records an admission that stored no document (a file that failed whole), synced
    /// with the failure record.
    pub fn put_failure(&self, admission: Option<Admission>, failure: &Failure) -> Result<()> {
        let mut b = WriteBatch::default();
        if let Some(a) = admission {
            let mut v = a.done.to_le_bytes().to_vec();
            v.extend_from_slice(&a.total.to_le_bytes());
            b.put_cf(self.cf(CF_ADMITTED), a.key.to_be_bytes(), v);
        }
        let n = self.get(CF_META, b"failed_next")?.and_then(|v| v.try_into().ok().map(u64::from_le_bytes)).unwrap_or(0);
        b.put_cf(self.cf(CF_FAILED), n.to_be_bytes(), encode(failure));
        b.put_cf(self.cf(CF_META), b"failed_next", (n + 1).to_le_bytes());
        self.write(b, true)
    }

    /// Every recorded failure, oldest first.
    pub fn failures(&self) -> Result<Vec<Failure>> {
        let mut out = Vec::new();
        for item in self.db.iterator_cf(self.cf(CF_FAILED), IteratorMode::Start) {
            let (_, v) = item.map_err(self.db_err())?;
            out.push(self.decode("failure", &v)?);
        }
        Ok(out)
    }

    /// Makes every write so far durable (WAL fsync).
    pub fn sync(&self) -> Result<()> {
        self.db.flush_wal(true).map_err(self.db_err())
    }

    /// Metadata of document `seq`.
    pub fn doc(&self, seq: u64) -> Result<Option<DocMeta>> {
        self.get(CF_DOCS, &seq_key(seq))?.map(|v| self.decode("document metadata", &v)).transpose()
    }

    /// Text of document `seq`.
    pub fn text(&self, seq: u64) -> Result<Option<String>> {
        self.get(CF_TEXT, &seq_key(seq))?
            .map(|v| match v.split_first() {
                Some((&VALUE_VERSION, rest)) => String::from_utf8(rest.to_vec()).map_err(|e| StoreError::Corrupt {
                    path: self.path.clone(),
                    what: format!("text of {seq}"),
                    reason: e.to_string(),
                }),
                _ => Err(StoreError::Corrupt {
                    path: self.path.clone(),
                    what: format!("text of {seq}"),
                    reason: "bad version byte".into(),
                }),
            })
            .transpose()
    }

    /// Result of document `seq`.
    pub fn result(&self, seq: u64) -> Result<Option<DocResult>> {
        self.get(CF_RESULTS, &seq_key(seq))?.map(|v| self.decode("result", &v)).transpose()
    }

    /// Sequence numbers of the documents named `name`, oldest first.
    pub fn seqs_named(&self, name: &str) -> Result<Vec<u64>> {
        let mut prefix = name.as_bytes().to_vec();
        prefix.push(0);
        let mut out = Vec::new();
        for item in self.db.iterator_cf(self.cf(CF_NAMES), IteratorMode::From(&prefix, rocksdb::Direction::Forward)) {
            let (k, _) = item.map_err(self.db_err())?;
            if !k.starts_with(&prefix) {
                break;
            }
            if let Ok(seq) = <[u8; 8]>::try_from(&k[prefix.len()..]) {
                out.push(u64::from_be_bytes(seq));
            }
        }
        Ok(out)
    }

    /// Resolves a name (the latest document of that name) or a numeric id.
    pub fn resolve(&self, name_or_id: &str) -> Result<u64> {
        if let Some(&seq) = self.seqs_named(name_or_id)?.last() {
            return Ok(seq);
        }
        let id = name_or_id.strip_prefix('#').unwrap_or(name_or_id);
        if let Ok(seq) = id.parse::<u64>() {
            if self.doc(seq)?.is_some() {
                return Ok(seq);
            }
        }
        Err(StoreError::NotFound(name_or_id.to_string()))
    }

    /// Every document's metadata in sequence order.
    pub fn docs(&self) -> impl Iterator<Item = Result<DocMeta>> + '_ {
        self.db.iterator_cf(self.cf(CF_DOCS), IteratorMode::Start).map(move |item| {
            let (_, v) = item.map_err(self.db_err())?;
            self.decode("document metadata", &v)
        })
    }

    /// The name of document `seq` (or `#seq` when unknown).
    pub fn name_of(&self, seq: u64) -> String {
        self.doc(seq).ok().flatten().map_or_else(|| format!("#{seq}"), |d| d.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(seq: u64, name: &str) -> DocMeta {
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
        }
    }

    #[test]
    fn documents_round_trip_and_resolve() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path()).unwrap();
        assert_eq!(s.next_seq().unwrap(), 1);
        let r = DocResult { seq: 1, tokens: 3, ..Default::default() };
        let c = NearDupConfig::default();
        let nd = |seq| s.near_dup_write(&c, seq, Sketch { exact: seq.into(), mins: vec![], simhash: vec![0; 6] }).unwrap();
        let qc = QuoteConfig::default();
        let q = |seq| s.quote_write(&qc, seq, vec![]).unwrap();
        s.put_document(&meta(1, "a"), "text a", &r, &c, &nd(1), &qc, &q(1)).unwrap();
        s.put_document(&meta(2, "a"), "text a again", &DocResult { seq: 2, ..Default::default() }, &c, &nd(2), &qc, &q(2)).unwrap();
        s.put_document(&meta(3, "17"), "named by digits", &DocResult { seq: 3, ..Default::default() }, &c, &nd(3), &qc, &q(3)).unwrap();
        assert_eq!(s.next_seq().unwrap(), 4);
        assert_eq!(s.resolve("a").unwrap(), 2, "latest of a name");
        assert_eq!(s.resolve("1").unwrap(), 1, "by id");
        assert_eq!(s.resolve("17").unwrap(), 3, "a name wins over an id");
        assert!(matches!(s.resolve("nope"), Err(StoreError::NotFound(_))));
        assert_eq!(s.text(2).unwrap().unwrap(), "text a again");
        assert_eq!(s.result(1).unwrap().unwrap(), r);
        assert_eq!(s.docs().count(), 3);
    }

    #[test]
    fn simhash_piece_index_finds_exactly_what_a_full_scan_finds() {
        // Random 384-bit sketches, many of them a few bits away from earlier ones.
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path()).unwrap();
        let c = NearDupConfig::default();
        let mut x = 0x1234_5678_9abc_def1u64;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut all: Vec<Vec<u64>> = Vec::new();
        let mut pairs = 0;
        for seq in 1..=400u64 {
            let simhash: Vec<u64> = if all.is_empty() || rnd() % 3 == 0 {
                (0..6).map(|_| rnd()).collect()
            } else {
                let mut v = all[(rnd() % all.len() as u64) as usize].clone();
                for _ in 0..rnd() % 20 {
                    let bit = rnd() % 384;
                    v[(bit / 64) as usize] ^= 1 << (bit % 64);
                }
                v
            };
            let sketch = Sketch { exact: u128::from(seq), mins: vec![], simhash: simhash.clone() };
            let nd = s.near_dup_write(&c, seq, sketch).unwrap();
            let found: Vec<u64> = nd.found.iter().filter(|d| d.c).map(|d| d.seq).collect();
            let brute: Vec<u64> = all
                .iter()
                .enumerate()
                .filter(|(_, o)| neardup::c_similarity(o, &simhash) >= c.c_threshold)
                .map(|(i, _)| i as u64 + 1)
                .collect();
            assert_eq!(found, brute, "document {seq}");
            pairs += found.len();
            let qc = QuoteConfig::default();
            let q = s.quote_write(&qc, seq, vec![]).unwrap();
            s.put_document(&meta(seq, "x"), "x", &DocResult::default(), &c, &nd, &qc, &q).unwrap();
            all.push(simhash);
        }
        assert!(pairs > 100, "only {pairs} pairs within the threshold: the test would prove little");
    }

    #[test]
    fn quote_radius_search_finds_exactly_what_a_full_scan_finds() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path()).unwrap();
        let c = NearDupConfig::default();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for qc in [QuoteConfig { max_per_probe: u32::MAX, ..QuoteConfig::default() }, QuoteConfig {
            d_max: 5,
            pieces: 3,
            max_per_probe: u32::MAX,
            ..QuoteConfig::default()
        }] {
            let dir = tempfile::tempdir().unwrap();
            let s = Store::open(dir.path()).unwrap();
            // Sentences of 5-12 words from a 60-word vocabulary: many near signatures.
            let mut sigs = Vec::new();
            let mut stored_words: Vec<Vec<u64>> = Vec::new();
            for seq in 1..=150u64 {
                let sentences: Vec<Sentence> = (0..4)
                    .map(|i| {
                        let mut words: Vec<u64> = (0..5 + rnd() % 8).map(|_| rnd() % 60).collect();
                        words.sort_unstable();
                        words.dedup();
                        Sentence { start: i, end: i + 1, words }
                    })
                    .collect();
                let q = s.quote_write(&qc, seq, sentences).unwrap();
                for (idx, sent, sig) in &q.indexed {
                    assert_eq!(*sig, quote::signature(&qc, &sent.words));
                    sigs.push((seq, *idx, *sig));
                    stored_words.push(sent.words.clone());
                }
                let nd = s.near_dup_write(&c, seq, Sketch { exact: seq.into(), mins: vec![], simhash: vec![rnd(); 6] }).unwrap();
                s.put_document(&meta(seq, "x"), "x", &DocResult::default(), &c, &nd, &qc, &q).unwrap();
            }
            let mut hits = 0;
            for _ in 0..200 {
                // A stored sentence with a word or two changed.
                let mut words = stored_words[(rnd() % stored_words.len() as u64) as usize].clone();
                for _ in 0..rnd() % 3 {
                    let at = (rnd() % words.len() as u64) as usize;
                    words[at] = rnd() % 60;
                }
                let sig = quote::signature(&qc, &words);
                for d in 0..=qc.d_max {
                    let got = s.quote_candidates(&qc, sig, d).unwrap();
                    let mut want: Vec<(u64, u32, u32)> = sigs
                        .iter()
                        .filter(|(_, _, o)| (o ^ sig).count_ones() <= d)
                        .map(|&(seq, idx, o)| (seq, idx, (o ^ sig).count_ones()))
                        .collect();
                    want.sort_unstable();
                    hits += want.len();
                    assert_eq!(got, want, "d = {d}");
                }
            }
            assert!(hits > 200, "only {hits} sentences within the radii: the test would prove little");
        }
        drop(s);
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
}
