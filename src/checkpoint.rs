//! Checkpoints of the table: two slots (A/B), each a full copy of the table file plus a
//! small meta file, so that a crash at any instant leaves at least one valid slot.
//!
//! Protocol (DESIGN-NOTES "A recovery protocol that makes kill -9 invisible", step 3),
//! at a document boundary C (the table's last applied sequence number):
//! 1. the table's counters are written and the mapping is flushed (msync);
//! 2. the store's log is fsynced: every result up to C is durable;
//! 3. the table file is copied into slot `g mod 2` (g = the new generation), which is
//!    preallocated, and the slot is fdatasynced;
//! 4. the slot's meta file (at most 64 bytes: magic, version, generation, C, the
//!    slot's length and xxh3-64 of its bytes, a checksum of the meta) is written in
//!    place and fdatasynced. Only now is C a recovery point; the other slot still holds
//!    generation g − 1.
//!
//! A slot is valid when its meta checksum holds and its bytes hash to the recorded
//! value. Recovery takes the valid slot with the highest generation.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use xxhash_rust::xxh3::{xxh3_64, Xxh3};

const MAGIC: &[u8; 8] = b"TXORCKP\0";
const VERSION: u32 = 1;
const META_BYTES: usize = 48;

/// What a slot's meta file says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotMeta {
    pub generation: u64,
    /// Sequence number of the last document the slot's table holds.
    pub seq: u64,
    pub length: u64,
    pub hash: u64,
}

/// The two slot paths of a data directory: (data, meta).
pub fn slot_paths(dir: &Path, slot: usize) -> (PathBuf, PathBuf) {
    let name = if slot == 0 { "checkpoint-a" } else { "checkpoint-b" };
    (dir.join(name), dir.join(format!("{name}.meta")))
}

fn hash_file(path: &Path) -> Result<(u64, u64)> {
    let mut f = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut h = Xxh3::new();
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

fn encode(m: &SlotMeta) -> [u8; META_BYTES] {
    let mut b = [0u8; META_BYTES];
    b[0..8].copy_from_slice(MAGIC);
    b[8..12].copy_from_slice(&VERSION.to_le_bytes());
    b[12..20].copy_from_slice(&m.generation.to_le_bytes());
    b[20..28].copy_from_slice(&m.seq.to_le_bytes());
    b[28..36].copy_from_slice(&m.length.to_le_bytes());
    b[36..44].copy_from_slice(&m.hash.to_le_bytes());
    let sum = xxh3_64(&b[..44]) as u32;
    b[44..48].copy_from_slice(&sum.to_le_bytes());
    b
}

fn decode(b: &[u8]) -> Option<SlotMeta> {
    if b.len() < META_BYTES || &b[0..8] != MAGIC || u32::from_le_bytes(b[8..12].try_into().ok()?) != VERSION {
        return None;
    }
    if u32::from_le_bytes(b[44..48].try_into().ok()?) != xxh3_64(&b[..44]) as u32 {
        return None;
    }
    let u = |r: std::ops::Range<usize>| u64::from_le_bytes(b[r].try_into().expect("8 bytes"));
    Some(SlotMeta { generation: u(12..20), seq: u(20..28), length: u(28..36), hash: u(36..44) })
}

/// Reads a slot's meta file (None when absent or torn).
pub fn read_meta(dir: &Path, slot: usize) -> Option<SlotMeta> {
    std::fs::read(slot_paths(dir, slot).1).ok().and_then(|b| decode(&b))
}

/// A slot whose meta is intact and whose bytes match it.
pub fn verify(dir: &Path, slot: usize) -> Result<SlotMeta> {
    let Some(m) = read_meta(dir, slot) else { bail!("slot {}: no valid meta", slot_name(slot)) };
    let (len, hash) = hash_file(&slot_paths(dir, slot).0)?;
    if len != m.length || hash != m.hash {
        bail!("slot {}: its bytes do not match its meta (generation {})", slot_name(slot), m.generation);
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
    (0..2).filter_map(|s| verify(dir, s).ok().map(|m| (s, m))).max_by_key(|(_, m)| m.generation)
}

fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir).and_then(|d| d.sync_all()).with_context(|| format!("cannot fsync {}", dir.display()))
}

/// Writes a checkpoint of the table file `table` (already flushed, its results durable)
/// holding documents up to `seq`. Returns the new meta.
pub fn write(dir: &Path, table: &Path, seq: u64) -> Result<SlotMeta> {
    let last = (0..2).filter_map(|s| read_meta(dir, s)).map(|m| m.generation).max().unwrap_or(0);
    let generation = last + 1;
    let slot = (generation % 2) as usize;
    let (data, meta) = slot_paths(dir, slot);
    let len = std::fs::metadata(table)?.len();
    let mut src = File::open(table).with_context(|| format!("cannot open {}", table.display()))?;
    let mut dst = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&data)?;
    if dst.metadata()?.len() != len {
        // Reserve the blocks: a full disk shows up here, not as a torn slot later.
        crate::table::preallocate(&dst, len).with_context(|| format!("cannot preallocate {}", data.display()))?;
    }
    dst.seek(SeekFrom::Start(0))?;
    let mut h = Xxh3::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = src.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
        dst.write_all(&buf[..n])?;
    }
    dst.sync_data().with_context(|| format!("fdatasync of {} failed", data.display()))?;
    crate::failpoint::hit("checkpoint.after-copy")?;
    let m = SlotMeta { generation, seq, length: len, hash: h.digest() };
    let mut f = OpenOptions::new().write(true).create(true).truncate(false).open(&meta)?;
    f.write_all(&encode(&m))?;
    f.sync_data().with_context(|| format!("fdatasync of {} failed", meta.display()))?;
    crate::failpoint::hit("checkpoint.after-meta")?;
    sync_dir(dir)?;
    Ok(m)
}

/// Copies slot `slot` over the table file (for recovery) and fsyncs it.
pub fn restore(dir: &Path, slot: usize, table: &Path) -> Result<()> {
    let (data, _) = slot_paths(dir, slot);
    let tmp = table.with_extension("restore");
    std::fs::copy(&data, &tmp).with_context(|| format!("cannot copy {}", data.display()))?;
    File::open(&tmp)?.sync_all()?;
    std::fs::rename(&tmp, table)?;
    sync_dir(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_valid_slot_wins_and_torn_slots_are_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let table = dir.path().join("table");
        std::fs::write(&table, vec![1u8; 5000]).unwrap();
        assert_eq!(newest_valid(dir.path()), None);
        let m1 = write(dir.path(), &table, 10).unwrap();
        assert_eq!((m1.generation, m1.seq), (1, 10));
        std::fs::write(&table, vec![2u8; 5000]).unwrap();
        let m2 = write(dir.path(), &table, 20).unwrap();
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
        let m3 = write(dir.path(), &table, 30).unwrap();
        let (slot, m) = newest_valid(dir.path()).unwrap();
        assert_eq!(m, m3);
        std::fs::write(&table, vec![9u8; 5000]).unwrap();
        restore(dir.path(), slot, &table).unwrap();
        assert_eq!(std::fs::read(&table).unwrap(), vec![2u8; 5000]);
    }
}
