//! Backup and restore of a data directory (`textorigin backup`, `textorigin restore`),
//! also while a daemon writes to it.
//!
//! **What a backup is**: a directory holding the store (`db/`: every record of one
//! consistent state, [`Store::copy_into`]), the newest valid table checkpoint slot
//! (`checkpoint-a` or `-b` with its meta, copied as it is and verified against its
//! hash), and [`MANIFEST`] (what it holds). No table file: a restore makes it from the
//! slot and replays the documents stored after it, as recovery after a crash does, so
//! the restored directory is exactly what the source held at the backup's moment.
//!
//! **Consistent while the daemon runs**: the slot is copied first, then the store is
//! opened (read-only, every table file held open) and copied. The daemon stores a
//! document before its table holds it and writes a slot only of documents stored, so
//! the slot never holds a document the store copy lacks; a slot the daemon rewrote
//! during its copy fails its hash and is copied again. The copy is written under a
//! hidden name beside `DEST` (`.NAME.partial`) and renamed to `DEST` once synced: a
//! backup killed at any moment leaves no `DEST`, and the next one removes the partial
//! copy. Nothing in the source directory is written.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::{db_path, partition, DataDir, DataDirError, Recovery, Result};
use crate::error::{IoContext, IoError};
use crate::storage::checkpoint;
use crate::storage::store::Store;

/// The file of a backup that says what it holds.
pub const MANIFEST: &str = "BACKUP.json";

/// How many times a slot rewritten while it was copied is copied again.
const SLOT_ATTEMPTS: u32 = 5;

/// What a backup holds ([`MANIFEST`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Manifest {
    /// The format of this file and of the backup's layout.
    pub format: u32,
    /// The build that made it.
    pub textorigin: String,
    /// The store's schema.
    pub schema: u32,
    /// Its documents: #1 to this one.
    pub documents: u64,
    /// The store's identity (`Store::id`), which its checkpoint slot carries.
    pub store: u64,
    /// The last document the table checkpoint holds (None: no checkpoint was made; a
    /// restore replays every document).
    pub table_checkpoint: Option<u64>,
    /// Records copied from the store.
    pub records: u64,
    /// When it was made (ms since the Unix epoch).
    pub made_at_ms: u64,
}

/// How far a backup or a restore is.
#[derive(Debug, Clone, Copy)]
pub enum Progress {
    /// Bytes of the table checkpoint copied, of all.
    Table(u64, u64),
    /// Bytes of records copied from the store.
    Store(u64),
    /// Documents replayed by a restore, of all.
    Replay(u64, u64),
}

/// Copies data directory `dir` to the new directory `dest` (see the module docs).
pub fn backup(dir: &Path, dest: &Path, progress: &mut dyn FnMut(Progress)) -> Result<Manifest> {
    if !partition::partitions(dir).is_empty() {
        return Err(DataDirError::ShardedBackup(dir.to_path_buf()));
    }
    if dest.exists() {
        return Err(DataDirError::Exists(dest.to_path_buf()));
    }
    let partial = beside(dest, "partial")?;
    remove_partial(&partial)?;
    std::fs::create_dir_all(&partial).io(|| format!("cannot create {}", partial.display()))?;
    let slot = copy_slot(dir, &partial, progress)?;
    let store = Store::open_to_copy(&db_path(dir))?;
    let (documents, id, schema) = (store.next_seq()? - 1, store.id()?, store.schema_version()?);
    // A slot of another store, or ahead of the copy, could not be restored from: the
    // restore replays every document instead (neither happens with one writer).
    let slot = match slot {
        Some((s, m)) if m.store != id || m.seq > documents => {
            for p in <[PathBuf; 2]>::from(checkpoint::slot_paths(&partial, s)) {
                std::fs::remove_file(&p).io(|| format!("cannot remove {}", p.display()))?;
            }
            None
        }
        other => other,
    };
    let records = store.copy_into(&db_path(&partial), |b| progress(Progress::Store(b)))?;
    drop(store);
    let manifest = Manifest {
        format: 1,
        textorigin: env!("CARGO_PKG_VERSION").to_string(),
        schema,
        documents,
        store: id,
        table_checkpoint: slot.map(|(_, m)| m.seq),
        records,
        made_at_ms: crate::clock::now_ms(),
    };
    let text = serde_json::to_string_pretty(&manifest).expect("a manifest serializes");
    let path = partial.join(MANIFEST);
    std::fs::write(&path, text + "\n").io(|| format!("cannot write {}", path.display()))?;
    sync_tree(&partial)?;
    publish(&partial, dest)?;
    Ok(manifest)
}

/// Makes the new data directory `dir` from the backup at `from`, its table restored
/// from the backup's checkpoint and the documents after it replayed: what the backup's
/// source held. The backup is left as it is.
pub fn restore(from: &Path, dir: &Path, progress: &mut dyn FnMut(Progress)) -> Result<(Manifest, Recovery)> {
    let manifest = read_manifest(from)?;
    let empty_dir = std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_none());
    if dir.exists() && !empty_dir {
        return Err(DataDirError::Exists(dir.to_path_buf()));
    }
    let partial = beside(dir, "restoring")?;
    remove_partial(&partial)?;
    std::fs::create_dir_all(db_path(&partial)).io(|| format!("cannot create {}", partial.display()))?;
    for entry in std::fs::read_dir(db_path(from)).io(|| format!("cannot read {}", db_path(from).display()))? {
        let entry = entry.io(|| format!("cannot read {}", db_path(from).display()))?;
        let name = entry.file_name();
        // RocksDB's own lock and info logs are the backup's, not the store's.
        if name == "LOCK" || name.to_string_lossy().starts_with("LOG") {
            continue;
        }
        copy(&entry.path(), &db_path(&partial).join(&name), &mut |_, _| {})?;
    }
    for slot in 0..2 {
        let (data, meta) = checkpoint::slot_paths(from, slot);
        if meta.exists() {
            copy(&data, &checkpoint::slot_paths(&partial, slot).0, &mut |c, n| progress(Progress::Table(c, n)))?;
            copy(&meta, &checkpoint::slot_paths(&partial, slot).1, &mut |_, _| {})?;
        }
    }
    sync_tree(&partial)?;
    if empty_dir {
        std::fs::remove_dir(dir).io(|| format!("cannot replace the empty directory {}", dir.display()))?;
    }
    publish(&partial, dir)?;
    let recovery = DataDir::recover(dir, |i, n| {
        progress(Progress::Replay(i, n));
        std::ops::ControlFlow::Continue(())
    })?
    .unwrap_or(Recovery { from_checkpoint: manifest.documents, replayed: 0, mismatches: 0 });
    Ok((manifest, recovery))
}

/// The manifest of the backup at `from`.
pub fn read_manifest(from: &Path) -> Result<Manifest> {
    let path = from.join(MANIFEST);
    let not = |reason: String| DataDirError::NotABackup { path: from.to_path_buf(), reason };
    let text = std::fs::read_to_string(&path).map_err(|e| not(format!("cannot be read: {e}")))?;
    let manifest: Manifest = serde_json::from_str(&text).map_err(|e| not(format!("is not valid: {e}")))?;
    if manifest.format != 1 {
        return Err(not(format!("is of format {}, which this build does not read", manifest.format)));
    }
    Ok(manifest)
}

/// Copies the newest valid checkpoint slot of `dir` into `to` under its own name, and
/// verifies the copy; one the daemon rewrote meanwhile is copied again.
fn copy_slot(
    dir: &Path,
    to: &Path,
    progress: &mut dyn FnMut(Progress),
) -> Result<Option<(usize, checkpoint::SlotMeta)>> {
    for _ in 0..SLOT_ATTEMPTS {
        let Some((slot, _)) = checkpoint::newest_valid(dir) else { return Ok(None) };
        let ((data, meta), (data_to, meta_to)) = (checkpoint::slot_paths(dir, slot), checkpoint::slot_paths(to, slot));
        // The meta first: the bytes copied after it are checked against its hash.
        copy(&meta, &meta_to, &mut |_, _| {})?;
        copy(&data, &data_to, &mut |c, n| progress(Progress::Table(c, n)))?;
        if let Ok(m) = checkpoint::verify(to, slot) {
            return Ok(Some((slot, m)));
        }
        for p in [&data_to, &meta_to] {
            std::fs::remove_file(p).io(|| format!("cannot remove {}", p.display()))?;
        }
    }
    Err(IoError {
        what: format!("the table checkpoints of {} kept changing while they were copied", dir.display()),
        source: std::io::Error::other("try again"),
    }
    .into())
}

/// Copies file `from` to the new file `to`, leaving holes where `from` has zeros (a
/// checkpoint slot is sparse); `progress(copied, total)`.
fn copy(from: &Path, to: &Path, progress: &mut dyn FnMut(u64, u64)) -> Result<()> {
    let mut src = std::fs::File::open(from).io(|| format!("cannot open {}", from.display()))?;
    let total = src.metadata().io(|| format!("cannot read {}", from.display()))?.len();
    let mut dst = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(to)
        .io(|| format!("cannot create {}", to.display()))?;
    let mut buf = vec![0u8; 1 << 20];
    let mut copied = 0u64;
    loop {
        let n = src.read(&mut buf).io(|| format!("cannot read {}", from.display()))?;
        if n == 0 {
            break;
        }
        if buf[..n].iter().all(|&b| b == 0) {
            dst.seek(SeekFrom::Current(n as i64)).io(|| format!("cannot write {}", to.display()))?;
        } else {
            dst.write_all(&buf[..n]).io(|| format!("cannot write {}", to.display()))?;
        }
        copied += n as u64;
        progress(copied, total);
    }
    dst.set_len(copied).io(|| format!("cannot write {}", to.display()))?;
    Ok(())
}

/// The hidden directory beside `path` a copy is made in before it becomes `path`.
fn beside(path: &Path, what: &str) -> Result<PathBuf> {
    let name = path.file_name().ok_or_else(|| IoError {
        what: format!("{} names no directory", path.display()),
        source: std::io::Error::from(std::io::ErrorKind::InvalidInput),
    })?;
    Ok(path.with_file_name(format!(".{}.{what}", name.to_string_lossy())))
}

/// Removes what a killed backup or restore left at `partial`.
fn remove_partial(partial: &Path) -> Result<()> {
    match std::fs::remove_dir_all(partial) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(IoError { what: format!("cannot remove {}", partial.display()), source: e }.into())
        }
        _ => Ok(()),
    }
}

/// Renames the synced copy `partial` to `dest` and syncs their parent.
fn publish(partial: &Path, dest: &Path) -> Result<()> {
    std::fs::rename(partial, dest).io(|| format!("cannot rename {} to {}", partial.display(), dest.display()))?;
    let parent = dest.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    sync(parent)
}

/// Syncs every file and directory under `dir`, and `dir`.
fn sync_tree(dir: &Path) -> Result<()> {
    for entry in std::fs::read_dir(dir).io(|| format!("cannot read {}", dir.display()))? {
        let path = entry.io(|| format!("cannot read {}", dir.display()))?.path();
        if path.is_dir() {
            sync_tree(&path)?;
        } else {
            sync(&path)?;
        }
    }
    sync(dir)
}

fn sync(path: &Path) -> Result<()> {
    Ok(std::fs::File::open(path).and_then(|f| f.sync_all()).io(|| format!("cannot sync {}", path.display()))?)
}
