//! Opening a store: for writing ([`Store::open`], this build's schema or a new store;
//! `open_any_schema` for the upgrade steps above the store), read-only
//! ([`Store::open_read_only`], while a writer runs), RocksDB's repair; and what a
//! store's directory holds, told from its files alone ([`Found`]), so that a damaged
//! store is refused with nothing written.

use std::path::Path;

use rocksdb::{ColumnFamilyDescriptor, Options, WriteBatch, DB};

use super::{
    cache, Result, Store, StoreError, BLOCK_CACHE_BYTES, CF_ADMITTED, CF_META, CF_TEXT, COLUMN_FAMILIES, LEGACY_CFS,
    MAX_TOTAL_WAL_BYTES, MEMTABLE_BYTES, SCHEMA_VERSION, TEXT_MEMTABLE_BYTES,
};

impl Store {
    pub(super) fn options() -> Options {
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
        // RocksDB loads each column family's table files on up to 16 new threads (its
        // default) at every open: with ours, 270 threads started and stopped to open a
        // store, a third of a one-document ingest's time. The files are few and small.
        o.set_max_file_opening_threads(1);
        o
    }

    pub(super) fn descriptors() -> Vec<ColumnFamilyDescriptor> {
        // One block cache for all column families (by default each would have its own).
        let cache = rocksdb::Cache::new_lru_cache(BLOCK_CACHE_BYTES);
        COLUMN_FAMILIES
            .iter()
            .map(|&name| {
                let mut o = Options::default();
                // zstd wherever there is something to compress (on the first 50,000 GCC
                // entries the records and quotations took 2.7 MB less than under LZ4,
                // at no measurable cost: RocksDB compresses on its flush threads); the
                // admission keys are hashes.
                let compression = if name == CF_ADMITTED.name {
                    rocksdb::DBCompressionType::Lz4
                } else {
                    rocksdb::DBCompressionType::Zstd
                };
                o.set_compression_type(compression);
                if name == CF_TEXT.name {
                    o.set_write_buffer_size(TEXT_MEMTABLE_BYTES);
                }
                let mut t = rocksdb::BlockBasedOptions::default();
                t.set_block_cache(&cache);
                o.set_block_based_table_factory(&t);
                ColumnFamilyDescriptor::new(name, o)
            })
            .collect()
    }

    /// Opens the store at `path` for writing, creating it only where its directory
    /// holds no data ([`Found::Absent`]); a damaged one is refused with nothing written
    /// (RocksDB, told to create a store whose `CURRENT` was lost, made an
    /// empty one and deleted every table file of the old). Only one writer at a time: a
    /// second one gets RocksDB's lock error.
    pub fn open(path: &Path) -> Result<Store> {
        let store = Self::open_any_schema(path)?;
        if let Some(found) = store.schema_behind()? {
            return Err(StoreError::Older { path: path.to_path_buf(), found });
        }
        store.settle()?;
        Ok(store)
    }

    /// Opens the store at `path` for writing as [`Store::open`] does, of any schema
    /// (the upgrade steps, `crate::storage::migrations`, bring it to this build's).
    pub(crate) fn open_any_schema(path: &Path) -> Result<Store> {
        if let Found::Damaged(what) = Found::inspect(path) {
            return Err(StoreError::Damaged { path: path.to_path_buf(), what });
        }
        // An older store's dropped column families must be opened to be dropped.
        let existing = DB::list_cf(&Self::options(), path).unwrap_or_default();
        let legacy = LEGACY_CFS
            .iter()
            .filter(|l| existing.iter().any(|e| e == *l))
            .map(|&l| ColumnFamilyDescriptor::new(l, Options::default()));
        let descriptors = Self::descriptors().into_iter().chain(legacy);
        let db = DB::open_cf_descriptors(&Self::options(), path, descriptors).map_err(|e| open_error(path, e))?;
        Ok(Store {
            db,
            path: path.to_path_buf(),
            caches: cache::Caches::default(),
            elsewhere: Default::default(),
            siblings: Default::default(),
            opened: None,
        })
    }

    /// The schema of a store just opened for writing, against this build's: a new store
    /// (schema 0, nothing written yet) is stamped with [`SCHEMA_VERSION`], a newer one
    /// refused; an older one's version is given, for the upgrade steps (None: this
    /// build's).
    pub(crate) fn schema_behind(&self) -> Result<Option<u32>> {
        match self.schema_version()? {
            0 => {
                let mut b = WriteBatch::default();
                self.put_schema_version(&mut b, SCHEMA_VERSION);
                self.write(b, true)?;
                Ok(None)
            }
            SCHEMA_VERSION => Ok(None),
            found if found > SCHEMA_VERSION => Err(StoreError::Newer { path: self.path.clone(), found }),
            found => Ok(Some(found)),
        }
    }

    /// What a store of this build's schema does once open for writing: makes its
    /// identity (first open) and learns whether it keeps sketches or sentences an older
    /// build computed otherwise.
    pub(crate) fn settle(&self) -> Result<()> {
        self.ensure_id()?;
        self.note_kept();
        Ok(())
    }

    /// RocksDB's repair of the store at `path`: a new manifest made from the table
    /// files and write-ahead logs that are there (what a lost `CURRENT` or manifest
    /// needs). A table file it cannot read is moved to `lost/`, not deleted. Only with
    /// no other process holding the store.
    pub fn repair(path: &Path) -> Result<()> {
        DB::repair(&Self::options(), path).map_err(|e| open_error(path, e))
    }

    /// Opens an existing store read-only (works while a writer runs).
    pub fn open_read_only(path: &Path) -> Result<Store> {
        let store = Self::open_read_only_as(path, false)?;
        let v = store.schema_version()?;
        if v > SCHEMA_VERSION {
            return Err(StoreError::Newer { path: path.to_path_buf(), found: v });
        }
        if v < SCHEMA_VERSION {
            return Err(StoreError::Older { path: path.to_path_buf(), found: v });
        }
        if COLUMN_FAMILIES.iter().any(|c| store.db.cf_handle(c).is_none()) {
            return Err(StoreError::Missing(data_dir(path).to_path_buf()));
        }
        Ok(store)
    }

    /// A read-only open of the store at `path`, of any schema, its column families as
    /// they are. `pin`: every table file is opened now and held open (RocksDB's
    /// `max_open_files = -1`), so that the state read stays whole while a writer
    /// compacts and deletes files meanwhile ([`Store::copy_into`]).
    pub(super) fn open_read_only_as(path: &Path, pin: bool) -> Result<Store> {
        match Found::inspect(path) {
            Found::Absent => return Err(StoreError::Missing(data_dir(path).to_path_buf())),
            Found::Damaged(what) => return Err(StoreError::Damaged { path: path.to_path_buf(), what }),
            Found::Present => {}
        }
        let mut options = Self::options();
        if pin {
            options.set_max_open_files(-1);
        }
        // A read-only open reads the manifest (the table files, and from which
        // write-ahead log on the state continues), then lists and replays the logs. A
        // writer that flushes meanwhile (a memtable filled up, or its own open recovered
        // the logs) records that in the manifest and deletes the logs it made obsolete:
        // the open then fails ("No such file or directory") or, worse, silently misses
        // the flushed writes. Logs and table files are deleted only after a manifest
        // edit, so an open during which the manifest did not change saw a consistent
        // state; any other is tried again, a while, before its error stands.
        let (mut attempt, mut same_missing, mut last_missing) = (0, 0, String::new());
        let opened = files(path);
        let db = loop {
            let existing = DB::list_cf(&options, path).map_err(|e| open_error(path, e))?;
            if !existing.iter().any(|c| c == CF_META.name) {
                // A store being created right now (or not a textorigin store).
                return Err(StoreError::Missing(data_dir(path).to_path_buf()));
            }
            let before = manifest_state(path);
            let legacy = LEGACY_CFS.iter().map(|&l| ColumnFamilyDescriptor::new(l, Options::default()));
            let descriptors =
                Self::descriptors().into_iter().chain(legacy).filter(|d| existing.iter().any(|e| e == d.name()));
            let opened = DB::open_cf_descriptors_read_only(&options, path, descriptors, false);
            let steady = before.is_some() && manifest_state(path) == before;
            match opened {
                Ok(db) if steady => break db,
                Err(source) if steady && !source.as_ref().contains("No such file or directory") => {
                    return Err(open_error(path, source))
                }
                // The same file missing while the manifest stood still, again and again:
                // not a writer's deletion in the middle of the open but a lost file
                // (it was reported as files that kept changing).
                Err(source) if steady && source.as_ref() == last_missing && same_missing >= MISSING_REPEATS => {
                    return Err(open_error(path, source))
                }
                Err(source) if steady => {
                    same_missing = if source.as_ref() == last_missing { same_missing + 1 } else { 0 };
                    last_missing = source.into_string();
                    attempt += 1;
                    std::thread::sleep(std::time::Duration::from_millis(10));
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
            opened,
        };
        store.note_kept();
        Ok(store)
    }
}

/// How often a read-only open is tried while a writer keeps changing the manifest.
const READ_ONLY_ATTEMPTS: u32 = 100;

/// How many times in a row a read-only open that finds the same file missing, the
/// manifest unchanged, tries again before the file counts as lost.
const MISSING_REPEATS: u32 = 3;

/// The error of a failed RocksDB open: the store in use (its lock held), damaged (a
/// file lost or corrupt: RocksDB names it), or another failure.
pub(super) fn open_error(path: &Path, source: rocksdb::Error) -> StoreError {
    let message = source.as_ref();
    if message.contains("LOCK") {
        StoreError::InUse(path.to_path_buf())
    } else if source.kind() == rocksdb::ErrorKind::Corruption || message.contains("No such file or directory") {
        StoreError::Damaged { path: path.to_path_buf(), what: format!("RocksDB says: {message}") }
    } else {
        StoreError::Db { path: path.to_path_buf(), source }
    }
}

/// The data directory a store is in (`DIR` of `DIR/db`).
pub(super) fn data_dir(path: &Path) -> &Path {
    path.parent().unwrap_or(path)
}

/// What a store's directory holds, told from its files alone (nothing opened, nothing
/// written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// No store, nor any of its data: no directory, or one without `CURRENT` that holds
    /// no table file and no write-ahead log with a record (a creation cut short). A
    /// store may be created here.
    Absent,
    /// `CURRENT` names a manifest that is there (RocksDB checks the rest as it opens).
    Present,
    /// What is wrong: a lost or truncated `CURRENT` or manifest beside the store's data.
    Damaged(String),
}

impl Found {
    pub fn inspect(path: &Path) -> Found {
        let Ok(entries) = std::fs::read_dir(path) else { return Found::Absent };
        match std::fs::read_to_string(path.join("CURRENT")) {
            Ok(current) => {
                let manifest = current.trim_end();
                if !manifest.starts_with("MANIFEST-") || manifest.contains('/') {
                    return Found::Damaged(format!("its file CURRENT is truncated or garbled ({:?})", manifest));
                }
                match std::fs::metadata(path.join(manifest)) {
                    Ok(m) if m.len() > 0 => Found::Present,
                    Ok(_) => Found::Damaged(format!("its manifest {manifest}, named by CURRENT, is empty")),
                    Err(e) => Found::Damaged(format!("its manifest {manifest}, named by CURRENT, cannot be read: {e}")),
                }
            }
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Found::Damaged(format!("its file CURRENT cannot be read: {e}"))
            }
            Err(_) => {
                let (mut tables, mut logs) = (0, 0);
                for e in entries.flatten() {
                    let name = e.file_name();
                    let name = name.to_string_lossy();
                    if name.ends_with(".sst") {
                        tables += 1;
                    } else if name.ends_with(".log") && e.metadata().is_ok_and(|m| m.len() > 0) {
                        logs += 1;
                    }
                }
                if tables + logs == 0 {
                    Found::Absent
                } else {
                    Found::Damaged(format!(
                        "its file CURRENT is missing, beside {tables} table file(s) and {logs} write-ahead log(s) holding data"
                    ))
                }
            }
        }
    }
}

/// What tells a store's state from its files alone: its manifest ([`manifest_state`])
/// and its write-ahead logs' names and lengths.
pub(super) type Files = ((String, u64), Vec<(std::ffi::OsString, u64)>);

pub(super) fn files(path: &Path) -> Option<Files> {
    let mut logs = Vec::new();
    for e in std::fs::read_dir(path).ok()? {
        let e = e.ok()?;
        if e.file_name().to_string_lossy().ends_with(".log") {
            logs.push((e.file_name(), e.metadata().ok()?.len()));
        }
    }
    logs.sort();
    Some((manifest_state(path)?, logs))
}

/// The manifest a store's `CURRENT` names and its length: RocksDB appends every change
/// of the set of files (a flush, a compaction) to it, or starts a new one.
fn manifest_state(path: &Path) -> Option<(String, u64)> {
    let name = std::fs::read_to_string(path.join("CURRENT")).ok()?;
    let len = std::fs::metadata(path.join(name.trim_end())).ok()?.len();
    Some((name, len))
}
