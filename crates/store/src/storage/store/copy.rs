//! A consistent copy of a store while its writer runs (`textorigin backup`).
//!
//! **Why a copy of the records, not RocksDB's checkpoint**: RocksDB's checkpoint (hard
//! links of the table files, a copy of the manifest and logs) needs the writer's own
//! handle, which stops file deletions and flushes; a second process gets only a
//! read-only handle, for which RocksDB refuses to stop deletions. A read-only handle
//! that opened every table file at once (`Store::open_read_only_as` with `pin`)
//! holds one consistent state (the manifest stood still while it opened; files the
//! writer deletes afterwards stay readable through the open descriptors), and its
//! records, written into a new store in key order, are that state. The copy is a
//! store of its own (compacted, without logs), of whatever schema the source has.

use std::path::Path;

use rocksdb::{ColumnFamilyDescriptor, FlushOptions, IteratorMode, Options, WriteBatch, WriteOptions, DB};

use super::{open_error, Result, Store, StoreError, COLUMN_FAMILIES, LEGACY_CFS};

/// Bytes of records written to the copy in one batch.
const BATCH_BYTES: usize = 4 << 20;

impl Store {
    /// Opens the store at `path` read-only to copy it: any schema, every table file
    /// held open (`Store::open_read_only_as`).
    pub fn open_to_copy(path: &Path) -> Result<Store> {
        Self::open_read_only_as(path, true)
    }

    /// Writes every record of every column family into a new store at `dest` (which
    /// must not hold one), flushed to its table files and synced; `progress` is called
    /// with the bytes copied so far. Returns the records copied.
    pub fn copy_into(&self, dest: &Path, mut progress: impl FnMut(u64)) -> Result<u64> {
        let names: Vec<&str> = COLUMN_FAMILIES
            .iter()
            .chain(LEGACY_CFS.iter())
            .copied()
            .filter(|n| self.db.cf_handle(n).is_some())
            .collect();
        let descriptors = Self::descriptors().into_iter().filter(|d| names.contains(&d.name())).chain(
            LEGACY_CFS
                .iter()
                .filter(|n| names.contains(n))
                .map(|&n| ColumnFamilyDescriptor::new(n, Options::default())),
        );
        let mut options = Self::options();
        options.set_error_if_exists(true);
        let out = DB::open_cf_descriptors(&options, dest, descriptors).map_err(|e| open_error(dest, e))?;
        let out_err = |source| StoreError::Db { path: dest.to_path_buf(), source };
        // Durable by the flush below, not by a log.
        let mut no_log = WriteOptions::default();
        no_log.disable_wal(true);
        let (mut records, mut bytes) = (0u64, 0u64);
        for name in &names {
            let (from, to) = (self.cf(name), out.cf_handle(name).expect("created above"));
            let mut batch = WriteBatch::default();
            for item in self.db.iterator_cf(from, IteratorMode::Start) {
                let (k, v) = item.map_err(self.db_err())?;
                batch.put_cf(to, &k, &v);
                records += 1;
                bytes += (k.len() + v.len()) as u64;
                if batch.size_in_bytes() >= BATCH_BYTES {
                    out.write_opt(std::mem::take(&mut batch), &no_log).map_err(out_err)?;
                    progress(bytes);
                }
            }
            out.write_opt(batch, &no_log).map_err(out_err)?;
            progress(bytes);
        }
        let mut wait = FlushOptions::default();
        wait.set_wait(true);
        for name in &names {
            out.flush_cf_opt(out.cf_handle(name).expect("created above"), &wait).map_err(out_err)?;
        }
        drop(out);
        Ok(records)
    }
}
