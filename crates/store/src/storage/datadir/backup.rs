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
//! hidden name beside `DEST` (`.NAME.partial`, with the pid of its maker in `.owner`)
//! and renamed to `DEST` once synced: a backup killed at any moment leaves no `DEST`, and
//! the next backup into the same folder removes the partial copies of makers that are
//! gone; a backup that fails (a full disk) removes its own, or says what it left.
//! Nothing in the source directory is written.
//!
//! **A restore trusts nothing it reads**: every file is checked against the xxh3-128
//! the manifest gives it (a flipped block of a table file was restored as good), a
//! symbolic link in a backup is refused (it was written as a regular file holding its
//! target's bytes), a checkpoint slot that fails its own hash is left out, the
//! documents restored are counted from the restored store (a tampered manifest's count
//! was printed), a restore that fails removes what it made, and the target must not be
//! a symbolic link (one was copied in full, then failed at the rename).

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::{db_path, partition, DataDir, DataDirError, Recovery, Result};
use crate::error::{IoContext, IoError};
use crate::storage::checkpoint;
use crate::storage::store::Store;

/// The file of a backup that says what it holds.
pub const MANIFEST: &str = "BACKUP.json";
/// The file of a partial copy naming the process that makes it.
const OWNER: &str = ".owner";

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
    /// Every file of the backup but this one (its path inside the backup, `/`
    /// separated) with its xxh3-128 in hex; empty in a backup of an earlier build.
    #[serde(default)]
    pub files: std::collections::BTreeMap<String, String>,
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
    remove_abandoned(dest);
    std::fs::create_dir_all(&partial).io(|| format!("cannot create {}", partial.display()))?;
    let owner = partial.join(OWNER);
    std::fs::write(&owner, std::process::id().to_string()).io(|| format!("cannot write {}", owner.display()))?;
    let made = copy_backup(dir, &partial, progress).and_then(|manifest| {
        std::fs::remove_file(&owner).io(|| format!("cannot remove {}", owner.display()))?;
        sync_tree(&partial)?;
        publish(&partial, dest)?;
        Ok(manifest)
    });
    made.map_err(|e| cleaned_up(e, &partial))
}

/// The backup of `dir` made in `partial` (see [`backup`]): its manifest, written there.
fn copy_backup(dir: &Path, partial: &Path, progress: &mut dyn FnMut(Progress)) -> Result<Manifest> {
    let slot = copy_slot(dir, partial, progress)?;
    let store = Store::open_to_copy(&db_path(dir))?;
    let (documents, id, schema) = (store.next_seq()? - 1, store.id()?, store.schema_version()?);
    // A slot of another store, or ahead of the copy, could not be restored from: the
    // restore replays every document instead (neither happens with one writer).
    let slot = match slot {
        Some((s, m)) if m.store != id || m.seq > documents => {
            for p in <[PathBuf; 2]>::from(checkpoint::slot_paths(partial, s)) {
                std::fs::remove_file(&p).io(|| format!("cannot remove {}", p.display()))?;
            }
            None
        }
        other => other,
    };
    let records = store.copy_into(&db_path(partial), |b| progress(Progress::Store(b)))?;
    drop(store);
    let mut files = std::collections::BTreeMap::new();
    hash_tree(partial, partial, &mut files)?;
    let manifest = Manifest {
        format: 1,
        textorigin: env!("CARGO_PKG_VERSION").to_string(),
        schema,
        documents,
        store: id,
        table_checkpoint: slot.map(|(_, m)| m.seq),
        records,
        made_at_ms: crate::clock::now_ms(),
        files,
    };
    let text = serde_json::to_string_pretty(&manifest).expect("a manifest serializes");
    let path = partial.join(MANIFEST);
    std::fs::write(&path, text + "\n").io(|| format!("cannot write {}", path.display()))?;
    Ok(manifest)
}

/// `error`, after removing the partial copy it left at `partial` (or saying that it
/// could not be removed: a full-size copy must not stay unsaid).
fn cleaned_up(error: DataDirError, partial: &Path) -> DataDirError {
    match remove_partial(partial) {
        Ok(()) => error,
        Err(left) => IoError {
            what: format!(
                "{}; and what it made could not be removed: {} (remove it by hand)",
                crate::error::chain(&error),
                crate::error::chain(&left)
            ),
            source: std::io::Error::other("left behind"),
        }
        .into(),
    }
}

/// Removes the partial copies beside `dest` whose makers are gone (a killed backup's).
fn remove_abandoned(dest: &Path) {
    let parent = dest.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let Ok(entries) = std::fs::read_dir(parent) else { return };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !(name.starts_with('.') && name.ends_with(".partial")) {
            continue;
        }
        let pid = std::fs::read_to_string(e.path().join(OWNER)).ok().and_then(|p| p.trim().parse::<u32>().ok());
        if pid.is_some_and(|p| !Path::new(&format!("/proc/{p}")).exists()) && remove_partial(&e.path()).is_ok() {
            tracing::info!(path = %e.path().display(), "removed the partial copy of a backup that was killed");
        }
    }
}

/// Every regular file under `dir` (paths relative to `root`) with its xxh3-128 in hex.
fn hash_tree(root: &Path, dir: &Path, out: &mut std::collections::BTreeMap<String, String>) -> Result<()> {
    for entry in std::fs::read_dir(dir).io(|| format!("cannot read {}", dir.display()))? {
        let path = entry.io(|| format!("cannot read {}", dir.display()))?.path();
        if path.is_dir() {
            hash_tree(root, &path, out)?;
        } else if path.file_name().is_some_and(|n| n != MANIFEST && n != OWNER && !rocksdb_own(n)) {
            let name = path.strip_prefix(root).expect("under root").to_string_lossy().into_owned();
            out.insert(name, format!("{:032x}", hash_file(&path)?));
        }
    }
    Ok(())
}

/// Whether a store file is RocksDB's own lock or info log: the backup's, not the store's
/// (neither copied nor hashed).
fn rocksdb_own(name: &std::ffi::OsStr) -> bool {
    name == "LOCK" || name.to_string_lossy().starts_with("LOG")
}

/// The xxh3-128 of a file's bytes.
fn hash_file(path: &Path) -> Result<u128> {
    let mut f = std::fs::File::open(path).io(|| format!("cannot open {}", path.display()))?;
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).io(|| format!("cannot read {}", path.display()))?;
        if n == 0 {
            return Ok(h.digest128());
        }
        h.update(&buf[..n]);
    }
}

/// Makes the new data directory `dir` from the backup at `from`, its table restored
/// from the backup's checkpoint and the documents after it replayed: what the backup's
/// source held. The backup is left as it is.
pub fn restore(from: &Path, dir: &Path, progress: &mut dyn FnMut(Progress)) -> Result<Restored> {
    let manifest = read_manifest(from)?;
    if std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink()) {
        let target = std::fs::read_link(dir).map(|t| t.display().to_string()).unwrap_or_default();
        return Err(IoError {
            what: format!("{} is a symbolic link: give the directory it points to ({target})", dir.display()),
            source: std::io::Error::from(std::io::ErrorKind::InvalidInput),
        }
        .into());
    }
    let empty_dir = std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_none());
    if dir.exists() && !empty_dir {
        return Err(DataDirError::Exists(dir.to_path_buf()));
    }
    let partial = beside(dir, "restoring")?;
    remove_partial(&partial)?;
    copy_restore(from, &partial, &manifest, progress).map_err(|e| cleaned_up(e, &partial))?;
    if empty_dir {
        std::fs::remove_dir(dir).io(|| format!("cannot replace the empty directory {}", dir.display()))?;
    }
    publish(&partial, dir)?;
    let recovery = DataDir::recover(dir, |i, n| {
        progress(Progress::Replay(i, n));
        std::ops::ControlFlow::Continue(())
    })?
    .unwrap_or(Recovery { from_checkpoint: manifest.documents, replayed: 0, mismatches: 0 });
    let documents = DataDir::open_read(dir)?.store().next_seq()? - 1;
    Ok(Restored { manifest, recovery, documents })
}

/// What a restore made.
#[derive(Debug)]
pub struct Restored {
    /// The backup's manifest, as it says.
    pub manifest: Manifest,
    pub recovery: Recovery,
    /// The documents the restored store holds (counted there).
    pub documents: u64,
}

/// The files of the backup at `from` copied into `partial` and checked against its
/// manifest (see the module docs).
fn copy_restore(from: &Path, partial: &Path, manifest: &Manifest, progress: &mut dyn FnMut(Progress)) -> Result<()> {
    let bad = |reason: String| DataDirError::NotABackup { path: from.to_path_buf(), reason };
    // Each file copied is checked against the manifest's hash (none in an earlier
    // build's backup), through the file it was written to.
    let checked = |rel: &str, to: &Path| -> Result<()> {
        let Some(want) = manifest.files.get(rel) else {
            return match manifest.files.is_empty() {
                true => Ok(()),
                false => Err(bad(format!("holds {rel}, which its manifest does not name"))),
            };
        };
        let got = format!("{:032x}", hash_file(to)?);
        match *want == got {
            true => Ok(()),
            false => Err(bad(format!("its file {rel} is not what the backup wrote (its hash differs): damaged"))),
        }
    };
    std::fs::create_dir_all(db_path(partial)).io(|| format!("cannot create {}", partial.display()))?;
    let mut copied = 0;
    for entry in std::fs::read_dir(db_path(from)).io(|| format!("cannot read {}", db_path(from).display()))? {
        let entry = entry.io(|| format!("cannot read {}", db_path(from).display()))?;
        let name = entry.file_name();
        if rocksdb_own(&name) {
            continue;
        }
        let rel = format!("db/{}", name.to_string_lossy());
        let kind = entry.file_type().io(|| format!("cannot read {}", entry.path().display()))?;
        if !kind.is_file() {
            return Err(bad(format!("holds {rel}, which is not a regular file (a symbolic link?): refused")));
        }
        let to = db_path(partial).join(&name);
        copy(&entry.path(), &to, &mut |_, _| {})?;
        checked(&rel, &to)?;
        copied += 1;
    }
    let wanted = manifest.files.keys().filter(|k| k.starts_with("db/")).count();
    if copied < wanted {
        return Err(bad(format!("lacks {} of the store's {wanted} files its manifest names", wanted - copied)));
    }
    for slot in 0..2 {
        let (data, meta) = checkpoint::slot_paths(from, slot);
        if !meta.exists() {
            continue;
        }
        for p in [&data, &meta] {
            if std::fs::symlink_metadata(p).is_ok_and(|m| !m.file_type().is_file()) {
                return Err(bad(format!("holds {}, which is not a regular file: refused", p.display())));
            }
        }
        let (data_to, meta_to) = checkpoint::slot_paths(partial, slot);
        copy(&data, &data_to, &mut |c, n| progress(Progress::Table(c, n)))?;
        copy(&meta, &meta_to, &mut |_, _| {})?;
        // A slot that fails its own hash is left out (the restore replays instead).
        if checkpoint::verify(partial, slot).is_err() {
            tracing::warn!(slot, "the backup's checkpoint slot fails its hash: left out");
            for p in [&data_to, &meta_to] {
                std::fs::remove_file(p).io(|| format!("cannot remove {}", p.display()))?;
            }
        }
    }
    sync_tree(partial)
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
