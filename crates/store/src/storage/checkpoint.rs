//! Checkpoints of the table: two slots (A/B), each a copy of the table file plus a
//! small meta file, so that a crash at any instant leaves at least one valid slot.
//!
//! Protocol (`docs/table-format.md`, "Checkpoints"), at a document boundary C (the table's last applied sequence number):
//! 1. the store's log is fsynced: every result up to C is durable;
//! 2. the table's counters are written into its header, and the writer's copy of the
//!    table (its memory, `crate::sys::Map`) is written into slot `g mod 2` (g = the
//!    new generation), and the slot is fdatasynced (the table file itself is written
//!    only when the writer flushes or closes). Only the chunks changed since this
//!    process last wrote that slot are written (`storage::dirty`); a slot it has not
//!    written yet is made anew, sparse, from every chunk ever written;
//! 3. the slot's meta file (at most 64 bytes: magic, version, generation, C, the
//!    slot's length and xxh3-64 of its bytes, a checksum of the meta) is written in
//!    place and fdatasynced. Only now is C a recovery point; the other slot still holds
//!    generation g − 1.
//!
//! A slot is valid when its meta checksum holds and its bytes hash to the recorded
//! value (the chunked hash of `storage::dirty::image_hash`). Recovery takes the valid
//! slot with the highest generation.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};

use xxhash_rust::xxh3::xxh3_64;

use crate::error::{IoContext, IoError};
use crate::storage::dirty::{self, ChunkHasher, Dirty};

/// Why a checkpoint could not be written, verified or restored.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error(transparent)]
    Io(#[from] IoError),
    #[error("slot {0}: no valid meta")]
    NoMeta(&'static str),
    #[error("slot {slot}: its bytes do not match its meta (generation {generation})")]
    Mismatch { slot: &'static str, generation: u64 },
}

type Result<T> = std::result::Result<T, CheckpointError>;

/// The file operations of the checkpoint protocol, so that tests can simulate a power
/// cut: what was written but not synced may be lost or torn.
pub trait Storage {
    /// The whole content of a file.
    fn read(&self, path: &Path) -> std::io::Result<Vec<u8>>;
    /// Length and chunked hash ([`dirty::image_hash`]) of a file's content.
    fn hash(&self, path: &Path) -> std::io::Result<(u64, u64)> {
        let b = self.read(path)?;
        Ok((b.len() as u64, dirty::image_hash([&b[..]])))
    }
    /// The length of a file.
    fn len(&self, path: &Path) -> std::io::Result<u64> {
        Ok(self.read(path)?.len() as u64)
    }
    /// Writes `ranges` (offset, bytes, in ascending order) of an image of `len` bytes
    /// into `to`: over its content, or, when `fresh`, over zeros (holes punched between
    /// the ranges; a file of another length made anew, sparse). A file of the right
    /// length is never truncated: a reader (`query`) may have it mapped.
    fn put(&self, to: &Path, len: u64, fresh: bool, ranges: &[(u64, &[u8])]) -> std::io::Result<()>;
    /// Zeroes a file, keeping its length (a slot whose copy failed: it is invalid, and
    /// must not hold disk space that a full disk needs; a reader may map it, so it is
    /// never truncated).
    fn discard(&self, path: &Path) -> std::io::Result<()>;
    /// Overwrites the start of a file with `bytes`.
    fn write(&self, path: &Path, bytes: &[u8]) -> std::io::Result<()>;
    /// fdatasync.
    fn sync(&self, path: &Path) -> std::io::Result<()>;
    /// fsync of a directory.
    fn sync_dir(&self, dir: &Path) -> std::io::Result<()>;
}

/// The real file system.
#[derive(Debug, Clone, Copy, Default)]
pub struct RealFs;

impl Storage for RealFs {
    fn read(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        std::fs::read(path)
    }

    fn hash(&self, path: &Path) -> std::io::Result<(u64, u64)> {
        let mut f = File::open(path)?;
        let mut h = ChunkHasher::default();
        let mut buf = vec![0u8; 1 << 20];
        let mut len = 0u64;
        loop {
            let n = f.read(&mut buf)?;
            if n == 0 {
                break;
            }
            h.update(&buf[..n]);
            len += n as u64;
        }
        Ok((len, h.digest()))
    }

    fn len(&self, path: &Path) -> std::io::Result<u64> {
        Ok(std::fs::metadata(path)?.len())
    }

    fn discard(&self, path: &Path) -> std::io::Result<()> {
        let f = OpenOptions::new().write(true).open(path)?;
        let len = f.metadata()?.len();
        crate::sys::punch_hole(&f, 0..len)
    }

    fn put(&self, to: &Path, len: u64, fresh: bool, ranges: &[(u64, &[u8])]) -> std::io::Result<()> {
        use std::os::unix::fs::FileExt;
        let dst = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(to)?;
        if dst.metadata()?.len() != len {
            dst.set_len(0)?;
            dst.set_len(len)?;
        } else if fresh {
            let mut at = 0;
            for &(start, bytes) in ranges.iter().chain([(len, &[][..])].iter()) {
                if start > at {
                    crate::sys::punch_hole(&dst, at..start)?;
                }
                at = start + bytes.len() as u64;
            }
        }
        for (i, (at, bytes)) in ranges.iter().enumerate() {
            if i > 0 {
                crate::failpoint::hit("checkpoint.between-writes")?;
            }
            dst.write_all_at(bytes, *at)?;
        }
        Ok(())
    }

    fn write(&self, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
        let mut f = OpenOptions::new().write(true).create(true).truncate(false).open(path)?;
        f.write_all(bytes)
    }

    fn sync(&self, path: &Path) -> std::io::Result<()> {
        OpenOptions::new().write(true).open(path)?.sync_data()
    }

    fn sync_dir(&self, dir: &Path) -> std::io::Result<()> {
        File::open(dir)?.sync_all()
    }
}

/// Copies file `from` over `to`: its data, and its holes as holes. `in_place`: over
/// `to`'s content (of the same length), punching holes where `from` has them; else
/// into a new, sparse file.
fn copy_file(from: &Path, to: &Path, in_place: bool) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    let len = std::fs::metadata(from)?.len();
    let src = File::open(from)?;
    let dst = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(to)?;
    if !in_place {
        dst.set_len(0)?;
        dst.set_len(len)?;
    }
    let mut buf = vec![0u8; 1 << 20];
    let mut at = 0u64;
    let holes_to =
        |dst: &File, r: Range<u64>| if in_place && !r.is_empty() { crate::sys::punch_hole(dst, r) } else { Ok(()) };
    for r in crate::sys::data_ranges(&src, 0, len as usize)? {
        holes_to(&dst, at..r.start as u64)?;
        for piece in (r.start..r.end).step_by(buf.len()) {
            let n = buf.len().min(r.end - piece);
            src.read_exact_at(&mut buf[..n], piece as u64)?;
            dst.write_all_at(&buf[..n], piece as u64)?;
        }
        at = r.end as u64;
    }
    holes_to(&dst, at..len)
}

const MAGIC: &[u8; 8] = b"TXORCKP\0";
/// Version 2 added the store's identity (a slot copied for another store, say one
/// deleted and made anew, is never restored); a version-1 meta reads as no slot.
/// Version 3 hashes the copy by chunks ([`dirty::image_hash`]), so that a checkpoint
/// rehashes only what changed; a version-2 meta reads as no slot.
const VERSION: u32 = 3;
const META_BYTES: usize = 56;

/// What a slot's meta file says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotMeta {
    pub generation: u64,
    /// Sequence number of the last document the slot's table holds.
    pub seq: u64,
    pub length: u64,
    pub hash: u64,
    /// The identity of the store whose documents the copy holds (`Store::id`).
    pub store: u64,
}

/// The two slot paths of a data directory: (data, meta).
pub fn slot_paths(dir: &Path, slot: usize) -> (PathBuf, PathBuf) {
    let name = if slot == 0 { "checkpoint-a" } else { "checkpoint-b" };
    (dir.join(name), dir.join(format!("{name}.meta")))
}

fn encode(m: &SlotMeta) -> [u8; META_BYTES] {
    let mut b = [0u8; META_BYTES];
    b[0..8].copy_from_slice(MAGIC);
    b[8..12].copy_from_slice(&VERSION.to_le_bytes());
    b[12..20].copy_from_slice(&m.generation.to_le_bytes());
    b[20..28].copy_from_slice(&m.seq.to_le_bytes());
    b[28..36].copy_from_slice(&m.length.to_le_bytes());
    b[36..44].copy_from_slice(&m.hash.to_le_bytes());
    b[44..52].copy_from_slice(&m.store.to_le_bytes());
    let sum = xxh3_64(&b[..52]) as u32;
    b[52..56].copy_from_slice(&sum.to_le_bytes());
    b
}

fn decode(b: &[u8]) -> Option<SlotMeta> {
    if b.len() < META_BYTES || &b[0..8] != MAGIC || u32::from_le_bytes(b[8..12].try_into().ok()?) != VERSION {
        return None;
    }
    if u32::from_le_bytes(b[52..56].try_into().ok()?) != xxh3_64(&b[..52]) as u32 {
        return None;
    }
    let u = |r: std::ops::Range<usize>| u64::from_le_bytes(b[r].try_into().expect("8 bytes"));
    Some(SlotMeta { generation: u(12..20), seq: u(20..28), length: u(28..36), hash: u(36..44), store: u(44..52) })
}

/// Reads a slot's meta file (None when absent or torn).
pub fn read_meta(dir: &Path, slot: usize) -> Option<SlotMeta> {
    read_meta_in(&RealFs, dir, slot)
}

/// [`read_meta`] through a [`Storage`].
pub fn read_meta_in(fs: &dyn Storage, dir: &Path, slot: usize) -> Option<SlotMeta> {
    fs.read(&slot_paths(dir, slot).1).ok().and_then(|b| decode(&b))
}

/// A slot whose meta is intact and whose bytes match it.
pub fn verify(dir: &Path, slot: usize) -> Result<SlotMeta> {
    verify_in(&RealFs, dir, slot)
}

/// [`verify`] through a [`Storage`].
pub fn verify_in(fs: &dyn Storage, dir: &Path, slot: usize) -> Result<SlotMeta> {
    let Some(m) = read_meta_in(fs, dir, slot) else { return Err(CheckpointError::NoMeta(slot_name(slot))) };
    let (data, _) = slot_paths(dir, slot);
    let (len, hash) = fs.hash(&data).io(|| format!("cannot read {}", data.display()))?;
    if len != m.length || hash != m.hash {
        return Err(CheckpointError::Mismatch { slot: slot_name(slot), generation: m.generation });
    }
    Ok(m)
}

/// "A" or "B".
pub fn slot_name(slot: usize) -> &'static str {
    if slot == 0 {
        "A"
    } else {
        "B"
    }
}

/// The valid slot with the highest generation: (slot, meta).
pub fn newest_valid(dir: &Path) -> Option<(usize, SlotMeta)> {
    newest_valid_in(&RealFs, dir)
}

/// [`newest_valid`] through a [`Storage`].
pub fn newest_valid_in(fs: &dyn Storage, dir: &Path) -> Option<(usize, SlotMeta)> {
    (0..2).filter_map(|s| verify_in(fs, dir, s).ok().map(|m| (s, m))).max_by_key(|(_, m)| m.generation)
}

/// The newest valid slot of store `store` that holds no document after `last` (a slot
/// ahead of the store cannot be used; the older one may): (slot, meta).
pub fn newest_usable(dir: &Path, last: u64, store: u64) -> Option<(usize, SlotMeta)> {
    (0..2)
        .filter_map(|s| verify(dir, s).ok().map(|m| (s, m)))
        .filter(|(_, m)| m.seq <= last && m.store == store)
        .max_by_key(|(_, m)| m.generation)
}

/// The document of the older of the valid slots of store `store` (the newer when only
/// one is valid): whatever happens to the next checkpoint, a restart can begin at or
/// after it, so a log it replays from may drop what comes before.
pub fn oldest_valid_seq(dir: &Path, store: u64) -> Option<u64> {
    (0..2).filter_map(|s| verify(dir, s).ok()).filter(|m| m.store == store).map(|m| m.seq).min()
}

fn sync_dir(dir: &Path) -> Result<()> {
    Ok(RealFs.sync_dir(dir).io(|| format!("cannot fsync {}", dir.display()))?)
}

/// The generation and slot of the next checkpoint in `dir`: one past the newest meta
/// (torn ones do not count), slot = generation mod 2.
pub fn next(dir: &Path) -> (u64, usize) {
    next_in(&RealFs, dir)
}

/// [`next`] through a [`Storage`].
fn next_in(fs: &dyn Storage, dir: &Path) -> (u64, usize) {
    let last = (0..2).filter_map(|s| read_meta_in(fs, dir, s)).map(|m| m.generation).max().unwrap_or(0);
    (last + 1, ((last + 1) % 2) as usize)
}

/// What a checkpoint copies.
pub enum Image<'a> {
    /// Bytes in parts, one after the other, written whole (a shard worker's counters
    /// and bucket range).
    Parts(&'a [&'a [u8]]),
    /// A writer's table file with what changed in it ([`TableFile::image`]): only the
    /// chunks the slot lacks are written.
    ///
    /// [`TableFile::image`]: crate::storage::table_file::TableFile::image
    Tracked(&'a [u8], &'a mut Dirty),
}

/// Writes a checkpoint of `table`, a writer's table file as [`Image::Tracked`] (its
/// results durable), holding documents up to `seq`. Returns the new meta.
pub fn write(dir: &Path, table: (&[u8], &mut Dirty), seq: u64, store: u64) -> Result<SlotMeta> {
    write_in(&RealFs, dir, Image::Tracked(table.0, table.1), seq, store)
}

/// [`write`](fn@write) of an image in parts (a shard worker's bucket range and its counters),
/// for `store`, the identity of whatever the image was made from.
pub fn write_parts(dir: &Path, parts: &[&[u8]], seq: u64, store: u64) -> Result<SlotMeta> {
    write_in(&RealFs, dir, Image::Parts(parts), seq, store)
}

/// [`write`](fn@write) through a [`Storage`].
pub fn write_in(fs: &dyn Storage, dir: &Path, image: Image<'_>, seq: u64, store: u64) -> Result<SlotMeta> {
    let (generation, slot) = next_in(fs, dir);
    let (data, meta) = slot_paths(dir, slot);
    let (length, hash, written) = match copy(fs, &data, slot, image) {
        Ok(c) => c,
        Err(e) => {
            // The slot is invalid now (its meta names bytes it no longer holds); on a
            // full disk, what it took is given back.
            let _ = fs.discard(&data);
            return Err(Err::<(), _>(e)
                .io(|| format!("cannot write the table into {}", data.display()))
                .unwrap_err()
                .into());
        }
    };
    // The slot holds the image now, whatever happens to its meta.
    if let Some(dirty) = written {
        dirty.slot_written(slot);
    }
    crate::failpoint::hit("checkpoint.after-copy").io(|| "checkpoint")?;
    let m = SlotMeta { generation, seq, length, hash, store };
    fs.write(&meta, &encode(&m)).io(|| format!("cannot write {}", meta.display()))?;
    fs.sync(&meta).io(|| format!("fdatasync of {} failed", meta.display()))?;
    crate::failpoint::hit("checkpoint.after-meta").io(|| "checkpoint")?;
    fs.sync_dir(dir).io(|| format!("cannot fsync {}", dir.display()))?;
    Ok(m)
}

/// Writes `image` into the file `data` of slot `slot` and syncs it: returns the image's
/// length and hash, and its tracker (to be told the slot holds it). When that fails,
/// the tracker forgets what the slot holds (the caller zeroes it): the next checkpoint
/// into it writes every chunk.
fn copy<'a>(
    fs: &dyn Storage,
    data: &Path,
    slot: usize,
    image: Image<'a>,
) -> std::io::Result<(u64, u64, Option<&'a mut Dirty>)> {
    match image {
        Image::Parts(parts) => {
            let (mut at, mut ranges) = (0u64, Vec::with_capacity(parts.len()));
            for p in parts {
                ranges.push((at, *p));
                at += p.len() as u64;
            }
            fs.put(data, at, true, &ranges)?;
            fs.sync(data)?;
            Ok((at, dirty::image_hash(parts.iter().copied()), None))
        }
        Image::Tracked(bytes, dirty) => {
            let len = bytes.len() as u64;
            if fs.len(data).ok() != Some(len) {
                dirty.forget_slot(slot); // removed, discarded or never written: made anew
            }
            let (fresh, plan) = dirty.slot_plan(slot);
            let ranges: Vec<(u64, &[u8])> = plan.into_iter().map(|r| (r.start as u64, &bytes[r])).collect();
            if let Err(e) = fs.put(data, len, fresh, &ranges).and_then(|()| fs.sync(data)) {
                dirty.forget_slot(slot);
                return Err(e);
            }
            Ok((len, dirty.image_hash(bytes), Some(dirty)))
        }
    }
}

/// Removes both slots (meta first, so a crash never leaves a meta without its copy),
/// when the table they copied is replaced by another (a rebuild).
pub fn remove_slots(dir: &Path) -> Result<()> {
    for slot in 0..2 {
        let (data, meta) = slot_paths(dir, slot);
        for path in [meta, data] {
            match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(Err::<(), _>(e).io(|| format!("cannot remove {}", path.display())).unwrap_err().into());
                }
                _ => {}
            }
        }
    }
    sync_dir(dir)
}

/// Copies slot `slot` over the table file (for recovery) and fsyncs it: its data, and
/// its holes as holes. Over a table file of the slot's length the copy is made in place
/// (holes punched where the slot has them): a crash during it leaves a table whose
/// header says "in use" (the slot's own header, copied from a running writer, or the
/// crashed table's), which is never trusted and is restored again. Otherwise through a
/// new, sparse file renamed over the table. Either way the bytes are written, never
/// cloned (`copy_file_range` may share extents). Both files being sparse, the copy may
/// need disk space for chunks the table lacks: on a full disk it fails, and the next
/// start tries again.
pub fn restore(dir: &Path, slot: usize, table: &Path) -> Result<()> {
    let (data, _) = slot_paths(dir, slot);
    let slot_len = std::fs::metadata(&data).io(|| format!("cannot read {}", data.display()))?.len();
    let in_place = std::fs::metadata(table).is_ok_and(|m| m.len() == slot_len);
    let to = if in_place { table.to_path_buf() } else { table.with_extension("restore") };
    copy_file(&data, &to, in_place).io(|| format!("cannot copy {} to {}", data.display(), to.display()))?;
    RealFs.sync(&to).io(|| format!("cannot fsync {}", to.display()))?;
    if in_place {
        return Ok(());
    }
    std::fs::rename(&to, table).io(|| format!("cannot rename {} to {}", to.display(), table.display()))?;
    sync_dir(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::{Cell, RefCell};
    use std::collections::HashMap;

    proptest::proptest! {
        /// Fuzzing: any meta bytes, and any one-byte change of a valid meta,
        /// are refused or read, never a panic; a changed meta is refused unless its
        /// checksum still holds. `scripts/fuzz.sh` runs a million cases.
        #[test]
        fn fuzz_slot_meta_loader_refuses_or_reads(random in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..96), at in 0usize..META_BYTES, byte in proptest::prelude::any::<u8>()) {
            let _ = decode(&random);
            let m = SlotMeta { generation: 7, seq: 42, length: 1 << 20, hash: 0xabcd, store: 9 };
            let mut b = encode(&m).to_vec();
            let changed = b[at] != byte;
            b[at] = byte;
            match decode(&b) {
                Some(got) => proptest::prop_assert!(!changed || got != m, "a changed meta read as the original"),
                None => proptest::prop_assert!(changed),
            }
        }
    }

    /// A simulated disk: every file has durable bytes and pending (written, not synced)
    /// bytes. A power cut keeps the durable bytes and, for a file with pending bytes,
    /// either drops them or tears them sector by sector (512 bytes). Operations fail once
    /// `budget` is spent: the instant of the cut.
    /// Each file's durable bytes and pending (unsynced) bytes.
    type Files = HashMap<PathBuf, (Vec<u8>, Option<Vec<u8>>)>;

    struct SimFs {
        files: RefCell<Files>,
        budget: Cell<u64>,
        /// Syncs that fail (an I/O error, not a cut) before they work again.
        failing_syncs: Cell<u32>,
    }

    impl SimFs {
        fn new() -> SimFs {
            SimFs { files: RefCell::new(HashMap::new()), budget: Cell::new(u64::MAX), failing_syncs: Cell::new(0) }
        }

        fn spend(&self) -> std::io::Result<()> {
            let b = self.budget.get();
            if b == 0 {
                return Err(std::io::Error::other("power cut"));
            }
            self.budget.set(b - 1);
            Ok(())
        }

        fn current(&self, path: &Path) -> std::io::Result<Vec<u8>> {
            let files = self.files.borrow();
            let (durable, pending) =
                files.get(path).ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))?;
            Ok(pending.clone().unwrap_or_else(|| durable.clone()))
        }

        /// The disk after a power cut, torn by `rng`.
        fn power_cut(&self, rng: &mut impl FnMut() -> u64) -> SimFs {
            let mut out = HashMap::new();
            for (p, (durable, pending)) in self.files.borrow().iter() {
                let bytes = match pending {
                    None => durable.clone(),
                    Some(new) => match rng() % 3 {
                        0 => durable.clone(),
                        1 => new.clone(),
                        _ => {
                            let mut torn = durable.clone();
                            torn.resize(new.len(), 0);
                            for (i, chunk) in new.chunks(512).enumerate() {
                                if rng().is_multiple_of(2) {
                                    torn[i * 512..i * 512 + chunk.len()].copy_from_slice(chunk);
                                }
                            }
                            torn
                        }
                    },
                };
                out.insert(p.clone(), (bytes, None));
            }
            SimFs { files: RefCell::new(out), budget: Cell::new(u64::MAX), failing_syncs: Cell::new(0) }
        }
    }

    impl Storage for SimFs {
        fn read(&self, path: &Path) -> std::io::Result<Vec<u8>> {
            self.current(path)
        }
        fn put(&self, to: &Path, len: u64, fresh: bool, ranges: &[(u64, &[u8])]) -> std::io::Result<()> {
            self.spend()?;
            let mut files = self.files.borrow_mut();
            let e = files.entry(to.to_path_buf()).or_insert_with(|| (Vec::new(), None));
            let mut new = e.1.clone().unwrap_or_else(|| e.0.clone());
            if fresh || new.len() as u64 != len {
                new = vec![0; len as usize];
            }
            for (at, bytes) in ranges {
                new[*at as usize..*at as usize + bytes.len()].copy_from_slice(bytes);
            }
            e.1 = Some(new);
            Ok(())
        }
        fn discard(&self, path: &Path) -> std::io::Result<()> {
            self.spend()?;
            if let Some(e) = self.files.borrow_mut().get_mut(path) {
                let len = e.1.as_ref().unwrap_or(&e.0).len();
                e.1 = Some(vec![0; len]);
            }
            Ok(())
        }
        fn write(&self, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
            self.spend()?;
            let mut files = self.files.borrow_mut();
            let e = files.entry(path.to_path_buf()).or_insert_with(|| (Vec::new(), None));
            let mut new = e.1.clone().unwrap_or_else(|| e.0.clone());
            if new.len() < bytes.len() {
                new.resize(bytes.len(), 0);
            }
            new[..bytes.len()].copy_from_slice(bytes);
            e.1 = Some(new);
            Ok(())
        }
        fn sync(&self, path: &Path) -> std::io::Result<()> {
            self.spend()?;
            if self.failing_syncs.get() > 0 {
                self.failing_syncs.set(self.failing_syncs.get() - 1);
                return Err(std::io::Error::other("fdatasync failed"));
            }
            if let Some(e) = self.files.borrow_mut().get_mut(path) {
                if let Some(p) = e.1.take() {
                    e.0 = p;
                }
            }
            Ok(())
        }
        fn sync_dir(&self, _dir: &Path) -> std::io::Result<()> {
            self.spend()
        }
    }

    /// Regression: recovery took the newest valid slot or nothing; when that slot was
    /// ahead of the store, the older valid slot was never tried.
    #[test]
    fn the_older_slot_is_used_when_the_newer_is_ahead_of_the_store() {
        let dir = tempfile::tempdir().unwrap();
        let m10 = write_parts(dir.path(), &[&[1u8; 5000]], 10, 1).unwrap();
        let m20 = write_parts(dir.path(), &[&[2u8; 5000]], 20, 1).unwrap();
        assert_eq!(newest_usable(dir.path(), 25, 1).map(|x| x.1), Some(m20));
        assert_eq!(newest_usable(dir.path(), 15, 1).map(|x| x.1), Some(m10));
        assert_eq!(newest_usable(dir.path(), 5, 1), None);
        assert_eq!(newest_usable(dir.path(), 25, 2), None, "slots of another store are never used");
    }

    #[test]
    fn the_oldest_valid_slot_bounds_where_a_restart_can_begin() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(oldest_valid_seq(dir.path(), 1), None);
        write_parts(dir.path(), &[&[1u8; 5000]], 10, 1).unwrap();
        assert_eq!(oldest_valid_seq(dir.path(), 1), Some(10), "one slot: its document");
        write_parts(dir.path(), &[&[2u8; 5000]], 20, 1).unwrap();
        assert_eq!(oldest_valid_seq(dir.path(), 1), Some(10), "two: the older");
        write_parts(dir.path(), &[&[3u8; 5000]], 30, 1).unwrap();
        assert_eq!(oldest_valid_seq(dir.path(), 1), Some(20), "the third replaced the oldest");
        // The newer slot torn (a crash while writing it): the other alone counts.
        let newest = (0..2).max_by_key(|&s| read_meta(dir.path(), s).unwrap().generation).unwrap();
        std::fs::write(slot_paths(dir.path(), newest).0, [9u8; 10]).unwrap();
        assert_eq!(oldest_valid_seq(dir.path(), 1), Some(20));
        assert_eq!(oldest_valid_seq(dir.path(), 2), None, "slots of another store do not count");
    }

    #[test]
    fn a_power_cut_at_any_instant_leaves_the_last_completed_checkpoint_or_a_newer_one() {
        let mut g = textorigin_core::testdata::XorShift::new(0x1234_5678);
        let mut rng = move || g.next_u64();
        let dir = Path::new("/sim");
        for trial in 0..400u64 {
            let fs = SimFs::new();
            // A writer's table as the checkpoints see it: some chunks change between
            // checkpoints, and each slot is written only where it lacks them.
            let len = 5 * crate::storage::dirty::CHUNK + 1000;
            let mut image = vec![0u8; len];
            let mut dirty = Dirty::new(len, &[]);
            let mut contents: Vec<Vec<u8>> = vec![Vec::new()]; // contents[seq]
            let mut completed = 0u64; // seq of the last checkpoint whose write returned
            fs.budget.set(rng() % 30);
            for seq in 1..=6u64 {
                for _ in 0..1 + rng() % 3 {
                    let at = (rng() % len as u64) as usize;
                    let end = (at + 1 + (rng() % 3000) as usize).min(len);
                    image[at..end].iter_mut().for_each(|b| *b = (seq * 7 + trial) as u8);
                    dirty.mark(at..end);
                }
                contents.push(image.clone());
                if write_in(&fs, dir, Image::Tracked(&image, &mut dirty), seq, 1).is_err() {
                    break;
                }
                completed = seq;
            }
            let after = fs.power_cut(&mut rng);
            match newest_valid_in(&after, dir) {
                None => assert_eq!(completed, 0, "trial {trial}: lost a completed checkpoint"),
                Some((slot, m)) => {
                    assert!(m.seq >= completed, "trial {trial}: went back from {completed} to {}", m.seq);
                    assert!(m.seq <= completed + 1, "trial {trial}: a checkpoint from the future");
                    // The slot holds exactly the table as it was at its sequence number.
                    assert_eq!(
                        after.read(&slot_paths(dir, slot).0).unwrap(),
                        contents[m.seq as usize],
                        "trial {trial}"
                    );
                }
            }
        }
    }

    /// Regression: a slot whose copy failed is zeroed (its blocks given back), but the
    /// tracker still took it for the image of its last checkpoint, so the next
    /// checkpoint into it wrote only the chunks changed since, and left an invalid slot.
    #[test]
    fn the_checkpoints_after_a_failed_one_are_valid() {
        use crate::storage::dirty::CHUNK;
        let fs = SimFs::new();
        let dir = Path::new("/sim");
        let len = 8 * CHUNK;
        let mut image = vec![0u8; len];
        let mut dirty = Dirty::new(len, &[]);
        for seq in 1..=7u64 {
            let at = (seq as usize * 5003) % len;
            image[at] = seq as u8;
            dirty.mark(at..at + 1);
            fs.failing_syncs.set(u32::from(seq == 4));
            let r = write_in(&fs, dir, Image::Tracked(&image, &mut dirty), seq, 1);
            if seq == 4 {
                assert!(r.is_err());
                continue;
            }
            let m = r.unwrap();
            let (slot, got) = newest_valid_in(&fs, dir).expect("a valid slot");
            assert_eq!((got, fs.read(&slot_paths(dir, slot).0).unwrap()), (m, image.clone()), "checkpoint {seq}");
        }
    }

    /// A process's first checkpoint into a slot an earlier process left (same length,
    /// other bytes) writes only the chunks its table ever touched: the rest of the slot
    /// must read as zeros (holes punched, the file never truncated under a reader's
    /// mapping), and a restore gives back exactly the image, holes included.
    #[test]
    fn a_slot_made_anew_over_an_old_one_holds_exactly_the_image() {
        use crate::storage::dirty::CHUNK;
        let dir = tempfile::tempdir().unwrap();
        let len = 64 * CHUNK;
        let old = vec![0xffu8; len];
        write_parts(dir.path(), &[&old], 1, 1).unwrap(); // generation 1: slot B
        write_parts(dir.path(), &[&old], 2, 1).unwrap(); // generation 2: slot A
        let mut image = vec![0u8; len];
        image[5 * CHUNK + 7] = 1;
        image[40 * CHUNK..41 * CHUNK].fill(2);
        let mut dirty = Dirty::new(len, &[]);
        dirty.mark(5 * CHUNK + 7..5 * CHUNK + 8);
        dirty.mark(40 * CHUNK..41 * CHUNK);
        let m = write(dir.path(), (&image, &mut dirty), 3, 1).unwrap();
        let (slot, got) = newest_valid(dir.path()).unwrap();
        assert_eq!((slot, got), (1, m), "slot B, generation 3, valid");
        assert_eq!(std::fs::read(slot_paths(dir.path(), 1).0).unwrap(), image);
        // Incremental: one chunk more, into slot A (its first write in this process).
        image[63 * CHUNK] = 3;
        dirty.mark(63 * CHUNK..63 * CHUNK + 1);
        write(dir.path(), (&image, &mut dirty), 4, 1).unwrap();
        image[6 * CHUNK] = 4;
        dirty.mark(6 * CHUNK..6 * CHUNK + 1);
        write(dir.path(), (&image, &mut dirty), 5, 1).unwrap(); // slot B again: 2 chunks
        let (slot, m) = newest_valid(dir.path()).unwrap();
        assert_eq!((slot, m.seq), (1, 5));
        let table = dir.path().join("table");
        std::fs::write(&table, vec![9u8; len]).unwrap();
        restore(dir.path(), slot, &table).unwrap();
        assert_eq!(std::fs::read(&table).unwrap(), image, "restored in place, holes punched");
    }

    #[test]
    fn newest_valid_slot_wins_and_torn_slots_are_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let table = dir.path().join("table");
        assert_eq!(newest_valid(dir.path()), None);
        let m1 = write_parts(dir.path(), &[&[1u8; 5000]], 10, 1).unwrap();
        assert_eq!((m1.generation, m1.seq), (1, 10));
        let m2 = write_parts(dir.path(), &[&[2u8; 5000]], 20, 1).unwrap();
        assert_eq!(newest_valid(dir.path()).unwrap().1, m2);
        // Tear the newest slot's bytes: the older one is taken.
        let (data, _) = slot_paths(dir.path(), 0);
        let mut bytes = std::fs::read(&data).unwrap();
        bytes[100] ^= 1;
        std::fs::write(&data, bytes).unwrap();
        assert_eq!(newest_valid(dir.path()).unwrap().1, m1);
        // Tear its meta too: none left.
        let (_, meta) = slot_paths(dir.path(), 1);
        std::fs::write(&meta, b"garbage").unwrap();
        assert_eq!(newest_valid(dir.path()), None);
        // Restore copies a slot over the table.
        let m3 = write_parts(dir.path(), &[&[2u8; 5000]], 30, 1).unwrap();
        let (slot, m) = newest_valid(dir.path()).unwrap();
        assert_eq!(m, m3);
        std::fs::write(&table, vec![9u8; 5000]).unwrap();
        restore(dir.path(), slot, &table).unwrap();
        assert_eq!(std::fs::read(&table).unwrap(), vec![2u8; 5000]);
    }
}
