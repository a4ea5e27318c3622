//! `textorigin bench --checkpoints`: what a checkpoint, a flush and the disk cost as a
//! table fills (fixed costs that follow the fill, not the size).
//!
//! A table file of the configured sizes (default 256 MiB of buckets and 128 MiB of
//! derived indexes) is filled with random fingerprints, a "document" of 300 at a time,
//! to 0.01%, 1%, 25% and 100% of its entries. At each fill it measures: the first flush of the table
//! file and the first checkpoint of each slot in the process (every chunk written since
//! the file was opened; a slot is made anew from every chunk ever written), then, after
//! one more document, a checkpoint and a flush (only the chunks changed since that
//! place was last written), the disk blocks the table file and a slot hold, and the
//! bytes of the entries held, of the buckets in use (they grow inside the
//! file, so all of these follow the entries until the table spans the file) and the
//! process's resident memory. The derived-index region is left as a new data directory
//! has it (its chunks are written as documents add words, signatures and keys, so a
//! real run writes a little more per document than this).

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::Instant;

use serde::Serialize;
use textorigin_core::config::Config;
use textorigin_core::table::{top_byte, Hit};
use textorigin_store::storage::checkpoint;
use textorigin_store::storage::table_file::TableFile;

use super::Result;

/// One fill level.
#[derive(Debug, Clone, Serialize)]
pub struct FillRow {
    /// Occupied entries, % of the table's capacity.
    pub fill_pct: f64,
    /// Seconds of the first flush of the table file in the process at this fill (every
    /// chunk written since it was opened).
    pub first_flush_s: f64,
    /// Seconds of the first checkpoint of a slot at this fill (made anew).
    pub first_checkpoint_s: f64,
    /// Seconds of a checkpoint after one more document (incremental).
    pub checkpoint_s: f64,
    /// Bytes that incremental checkpoint wrote.
    pub checkpoint_bytes: u64,
    /// Seconds of the table file's flush after that document.
    pub flush_s: f64,
    /// Disk bytes held by the table file and by one slot.
    pub table_disk_bytes: u64,
    pub slot_disk_bytes: u64,
    /// Bytes of the entries held (16 each) and of the buckets in use.
    pub entry_bytes: u64,
    pub in_use_bytes: u64,
    /// Resident memory of the process (VmRSS), after the flush.
    pub rss_bytes: u64,
}

/// What the measurement found.
#[derive(Debug, Clone, Serialize)]
pub struct FillBench {
    pub table_bytes: u64,
    pub index_bytes: u64,
    /// Seconds to create the table file and close it empty.
    pub create_close_s: f64,
    pub rows: Vec<FillRow>,
}

/// Resident memory of this process (VmRSS; 0 where /proc is not there).
fn rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kb = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").parse().ok());
    kb.unwrap_or(0u64) * 1024
}

/// Disk bytes a file holds (its allocated blocks).
fn disk(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.blocks() * 512)
}

/// Runs the measurement in `dir` (a scratch directory) with `cfg`'s sizes.
pub fn run(cfg: &Config, dir: &Path, mut progress: impl FnMut(&str)) -> Result<FillBench> {
    let path = dir.join("table");
    let _ = std::fs::remove_file(&path);
    let t = Instant::now();
    TableFile::create(&path, &cfg.table_params())?.close()?;
    let create_close_s = t.elapsed().as_secs_f64();
    let mut table = TableFile::open(&path, &cfg.table_params(), true)?;
    let mut g = textorigin_core::testdata::XorShift::new(0x9e37_79b9_7f4a_7c15);
    let mut seq = 0u64;
    let mut document = |table: &mut TableFile| {
        seq += 1;
        for i in 0..300u32 {
            let fp = g.next_u64() & textorigin_core::rabin::MASK;
            let hit = Hit { origin: seq, offset: i as u8, prev: top_byte(fp), next: 0 };
            table.process(fp, hit, seq << 24 ^ u64::from(i), textorigin_core::select::SELECTED);
        }
    };
    let checkpoint = |table: &mut TableFile| -> Result<f64> {
        let t = Instant::now();
        checkpoint::write(dir, table.image()?, 0, 1)?;
        Ok(t.elapsed().as_secs_f64())
    };
    let mut rows = Vec::new();
    for target in [0.01, 0.1, 1.0, 10.0, 25.0, 100.0] {
        progress(&format!("filling to {target}%"));
        let capacity = table.capacity() as f64;
        while 100.0 * (table.stats().occupied as f64) < target * capacity * 0.999 {
            document(&mut table);
        }
        let fill_pct = 100.0 * table.stats().occupied as f64 / capacity;
        // The file flushed and both slots made anew once in this process, then one
        // document, the slot written two checkpoints ago again, and the file.
        let t = Instant::now();
        table.flush()?;
        let first_flush_s = t.elapsed().as_secs_f64();
        let first_checkpoint_s = checkpoint(&mut table)?;
        checkpoint(&mut table)?;
        document(&mut table);
        let (_, plan) = table.image()?.1.slot_plan(checkpoint::next(dir).1);
        let written = plan.iter().map(|r| r.len() as u64).sum();
        let checkpoint_s = checkpoint(&mut table)?;
        let t = Instant::now();
        table.flush()?;
        let flush_s = t.elapsed().as_secs_f64();
        let slot = checkpoint::slot_paths(dir, 0).0;
        rows.push(FillRow {
            fill_pct,
            first_flush_s,
            first_checkpoint_s,
            checkpoint_s,
            checkpoint_bytes: written,
            flush_s,
            table_disk_bytes: disk(&path),
            slot_disk_bytes: disk(&slot),
            entry_bytes: table.stats().occupied * textorigin_core::table::ENTRY_BYTES as u64,
            in_use_bytes: table.used_buckets()
                * table.bucket_entries() as u64
                * textorigin_core::table::ENTRY_BYTES as u64,
            rss_bytes: rss(),
        });
        // The next level's first checkpoints make their slots anew.
        checkpoint::remove_slots(dir)?;
    }
    table.close()?;
    Ok(FillBench { table_bytes: cfg.table_bytes, index_bytes: cfg.index_bytes, create_close_s, rows })
}

/// The measurement for people.
pub fn text(r: &FillBench) -> String {
    let mib = |b: u64| b as f64 / f64::from(1 << 20);
    let mut out = format!(
        "table {:.0} MiB + indexes {:.0} MiB; created and closed empty in {:.3} s\n\n| fill | entries | buckets in use | first flush | first checkpoint of a slot | checkpoint after one more document | written | flush after it | table file on disk | a slot on disk | process RSS |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
        mib(r.table_bytes),
        mib(r.index_bytes),
        r.create_close_s
    );
    for row in &r.rows {
        out += &format!(
            "| {:.2}% | {:.2} MiB | {:.2} MiB | {:.3} s | {:.3} s | {:.4} s | {:.2} MiB | {:.4} s | {:.1} MiB | {:.1} MiB | {:.1} MiB |\n",
            row.fill_pct,
            mib(row.entry_bytes),
            mib(row.in_use_bytes),
            row.first_flush_s,
            row.first_checkpoint_s,
            row.checkpoint_s,
            mib(row.checkpoint_bytes),
            row.flush_s,
            mib(row.table_disk_bytes),
            mib(row.slot_disk_bytes),
            mib(row.rss_bytes)
        );
    }
    out
}

/// Bytes of a table whose entries hold `pct` percent of `shingles`, in whole buckets
/// (the evaluation's table sizes, as percentages of a corpus's shingles).
pub fn bytes_for_percent(pct: f64, shingles: u64, bucket_entries: u32) -> u64 {
    use textorigin_core::table::{ENTRY_BYTES, HEADER_BYTES};
    let entries = (pct / 100.0 * shingles as f64).ceil().max(1.0) as u64;
    let per_bucket = u64::from(bucket_entries);
    let buckets = entries.div_ceil(per_bucket).max(1);
    HEADER_BYTES as u64 + buckets * per_bucket * ENTRY_BYTES as u64
}
