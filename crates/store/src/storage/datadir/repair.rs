//! `repair`: a damaged store (a lost `CURRENT`, manifest or table file) made
//! readable again by RocksDB's repair, after a copy of it as it was.

use std::path::{Path, PathBuf};

use super::{db_path, writer_gone, DataDir, Result};
use crate::error::IoContext;
use crate::storage::store::{Found, Store, StoreError};

/// The file a repair that lost data leaves in the data directory, naming what was lost;
/// `serve` refuses the data directory while it is there.
pub const REPAIR_LOSSES: &str = "repair-losses.txt";

impl DataDir {
    /// Repairs the store of `dir` if it is damaged: copies it first to
    /// `dir/db.damaged-SECONDS`, then lets RocksDB rebuild its manifest from its files.
    /// Returns the copy, or None when the store opens as it is (nothing done). The
    /// table is left to the next start, which brings it in step with what the store
    /// holds again (or to `rebuild`).
    pub fn repair(dir: &Path) -> Result<Option<PathBuf>> {
        let db = db_path(dir);
        match Found::inspect(&db) {
            Found::Absent => return Err(StoreError::Missing(dir.to_path_buf()).into()),
            Found::Present if Store::open_read_only(&db).is_ok() => return Ok(None),
            _ => {}
        }
        if db.join("LOCK").exists() && !writer_gone(dir) {
            return Err(StoreError::InUse(db).into());
        }
        let secs = crate::clock::since_epoch().as_secs();
        let copy = dir.join(format!("db.damaged-{secs}"));
        copy_files(&db, &copy)?;
        Store::repair(&db)?;
        // RocksDB's repair makes the column families it found data of; a write open
        // makes the others (empty: nothing of theirs was there).
        drop(crate::storage::migrations::open(&db)?);
        Ok(Some(copy))
    }
}

/// Copies the files of `from` (not its folders) into the new folder `to`, synced.
fn copy_files(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir(to).io(|| format!("cannot create {}", to.display()))?;
    for e in std::fs::read_dir(from).io(|| format!("cannot read {}", from.display()))? {
        let e = e.io(|| format!("cannot read {}", from.display()))?;
        if e.file_type().is_ok_and(|t| t.is_file()) {
            let target = to.join(e.file_name());
            std::fs::copy(e.path(), &target)
                .io(|| format!("cannot copy {} to {}", e.path().display(), to.display()))?;
            std::fs::File::open(&target)
                .and_then(|f| f.sync_all())
                .io(|| format!("cannot sync {}", target.display()))?;
        }
    }
    std::fs::File::open(to).and_then(|d| d.sync_all()).io(|| format!("cannot sync {}", to.display()))?;
    Ok(())
}
