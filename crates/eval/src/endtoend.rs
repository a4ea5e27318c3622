//! `textorigin bench --end-to-end`: the whole product on a corpus, as `ingest` runs it
//! (parallel preparation, the table, near-duplicates, quotations, the store), into a
//! fresh data directory: MB/s, documents/s, and where the time went per stage, so the
//! next bottleneck is visible without a profiler. Over windows of [`WINDOW`] documents it
//! says whether the cost of a document stays flat as the collection grows: every
//! window's documents/s, and the last full window's over the reference window's,
//! documents 50,001-60,000 (a document of a small collection meets none of the
//! per-document bounds, so the first windows are not the reference), with the stages the
//! growth went to. It also says how much of both cores the run used: its CPU time over
//! its wall time.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;
use textorigin_core::config::Overrides;

use super::Result;
use textorigin_store::ingest::{ingest, Event};
use textorigin_store::intake::Policy;
use textorigin_store::storage::datadir::DataDir;
use textorigin_store::telemetry::StageTimes;

/// What the end-to-end run measured.
#[derive(Debug, Clone, Serialize)]
pub struct EndToEnd {
    pub documents: u64,
    pub failed: u64,
    pub text_bytes: u64,
    /// From opening the data directory to the closing fsync.
    pub seconds: f64,
    pub mb_per_s: f64,
    pub documents_per_s: f64,
    pub threads: usize,
    /// Seconds per stage; preparation is summed over the preparation threads.
    pub stages: StageTimes,
    /// Seconds to open the data directory (creating and preallocating the table file).
    pub open_seconds: f64,
    /// Seconds to close it (msync of the table, WAL fsync).
    pub close_seconds: f64,
    /// Data directory size after the run (bytes): table, store and logs.
    pub disk_bytes: u64,
    /// Documents per second over each window of [`WINDOW`] stored documents, in order
    /// (a cost per document that grows with the collection shows as a falling rate).
    pub window_rates: Vec<f64>,
    /// Seconds per stage in each of those windows.
    pub window_stages: Vec<StageTimes>,
    /// The process's CPU seconds (user and system, every thread) over the run's, when
    /// the system tells them.
    pub cpu_seconds: Option<f64>,
}

impl EndToEnd {
    /// The reference window for [`EndToEnd::flat`] and the last full one (indexes into
    /// the windows): [`REFERENCE`] where the run reached it, else the first; `None` with
    /// fewer than two windows.
    fn compared(&self) -> Option<(usize, usize)> {
        let last = self.window_rates.len().checked_sub(1).filter(|&l| l > 0)?;
        Some((if REFERENCE < last { REFERENCE } else { 0 }, last))
    }

    /// The documents/s of the last full window over the reference window's (1: a flat
    /// cost per document); `None` with fewer than two windows.
    pub fn flat(&self) -> Option<f64> {
        self.compared().map(|(a, b)| self.window_rates[b] / self.window_rates[a])
    }
}

/// Documents per rate window.
pub const WINDOW: u64 = 10_000;

/// The window [`EndToEnd::flat`] compares the last with: documents 50,001-60,000.
pub const REFERENCE: usize = 5;

/// The documents of window `i` (from 0), 1-based: `documents 50001-60000`.
fn window_name(i: usize) -> String {
    let first = i as u64 * WINDOW + 1;
    format!("documents {first}-{}", first + WINDOW - 1)
}

/// The bytes the files under `p` take on disk: their allocated blocks (the table file
/// and the checkpoint slots are sparse: their length says far more).
fn dir_size(p: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::read_dir(p).map_or(0, |d| {
        d.filter_map(|e| e.ok())
            .map(|e| match e.metadata() {
                Ok(m) if m.is_dir() => dir_size(&e.path()),
                Ok(m) => m.blocks() * 512,
                Err(_) => 0,
            })
            .sum()
    })
}

/// Ingests `paths` into a new data directory `dir` with `overrides`.
pub fn run(paths: &[PathBuf], overrides: &Overrides, dir: &Path, threads: usize) -> Result<EndToEnd> {
    let start = Instant::now();
    let cpu_before = textorigin_store::sys::cpu_seconds();
    let mut dd = DataDir::open_write(dir, overrides, Policy::default())?;
    let open_seconds = start.elapsed().as_secs_f64();
    let (mut window_rates, mut window_stages) = (Vec::new(), Vec::new());
    let (mut stored, mut window_start, mut window_times) = (0u64, Instant::now(), dd.stage_times());
    let summary = ingest(&mut dd, paths, u64::MAX, threads, false, |e| {
        if let Event::Stored { times, .. } = e {
            stored += 1;
            if stored % WINDOW == 0 {
                window_rates.push(WINDOW as f64 / window_start.elapsed().as_secs_f64());
                window_stages.push(times.since(&window_times));
                (window_start, window_times) = (Instant::now(), times);
            }
        }
    })?;
    let stages = dd.stage_times();
    let closing = Instant::now();
    dd.close()?;
    let close_seconds = closing.elapsed().as_secs_f64();
    let seconds = start.elapsed().as_secs_f64();
    let cpu_seconds = cpu_before.zip(textorigin_store::sys::cpu_seconds()).map(|(a, b)| b - a);
    let text_bytes = summary.text_bytes;
    Ok(EndToEnd {
        documents: summary.stored,
        failed: summary.failed,
        text_bytes,
        seconds,
        mb_per_s: text_bytes as f64 / 1e6 / seconds,
        documents_per_s: summary.stored as f64 / seconds,
        threads,
        stages,
        open_seconds,
        close_seconds,
        disk_bytes: dir_size(dir),
        window_rates,
        window_stages,
        cpu_seconds,
    })
}

/// The measurement for people.
pub fn text(r: &EndToEnd) -> String {
    let s = &r.stages;
    let total = s.total().max(1e-9);
    let mut out = format!(
        "{} documents ({} failed), {:.1} MB in {:.2} s: {:.2} MB/s, {:.0} documents/s ({} preparation threads)\n",
        r.documents,
        r.failed,
        r.text_bytes as f64 / 1e6,
        r.seconds,
        r.mb_per_s,
        r.documents_per_s,
        r.threads
    );
    out += "stage          seconds   share\n";
    for (name, v) in s.named() {
        out += &format!("  {name:<11} {v:>8.2}  {:>5.1}%\n", 100.0 * v / total);
    }
    out += &format!("outside the stages: open {:.2} s, close {:.2} s\n", r.open_seconds, r.close_seconds);
    if let Some(cpu) = r.cpu_seconds {
        out += &format!(
            "cpu: {cpu:.2} s over {:.2} s: {:.2} of {} cores busy\n",
            r.seconds,
            cpu / r.seconds.max(1e-9),
            r.threads
        );
    }
    for (i, rate) in r.window_rates.iter().enumerate() {
        out += &format!("{}: {rate:.0} documents/s\n", window_name(i));
    }
    if let (Some(flat), Some((a, b))) = (r.flat(), r.compared()) {
        out += &format!("flat: {} over {}: {flat:.2}x\n", window_name(b), window_name(a));
        out += &growth(&r.window_stages[a], &r.window_stages[b]);
    }
    out += &format!("data directory: {:.1} MB on disk\n", r.disk_bytes as f64 / 1e6);
    out
}

/// Where the cost per document grew from the first window to the last: each stage's
/// µs a document in both, and its share of the stages' growth.
fn growth(first: &StageTimes, last: &StageTimes) -> String {
    let per_doc = |s: f64| s * 1e6 / WINDOW as f64;
    let grown: Vec<(&str, f64, f64)> =
        first.named().iter().zip(last.named()).map(|((name, a), (_, b))| (*name, per_doc(*a), per_doc(b))).collect();
    let total: f64 = grown.iter().map(|g| g.2 - g.1).sum();
    let mut out = format!("stage        µs/document first   last   growth  share of the growth ({total:+.0} µs)\n");
    for (name, a, b) in grown {
        let share = if total.abs() < 1e-9 { 0.0 } else { 100.0 * (b - a) / total };
        out += &format!("  {name:<11} {a:>16.0} {b:>6.0} {:>+8.0} {share:>8.1}%\n", b - a);
    }
    out
}

#[cfg(test)]
mod tests {
    /// Issue 56: "on disk" printed 412.9 MB for a data directory holding 26 MB, the
    /// apparent size of its sparse table file and checkpoint slots.
    use super::*;

    /// The flat figure is the last full window's rate over the first's, and the growth
    /// is told per stage: here all of it in quotations.
    #[test]
    fn the_growth_is_told_per_stage() {
        let first = StageTimes { table: 1.0, quotes: 1.0, ..Default::default() };
        let last = StageTimes { table: 1.0, quotes: 3.0, ..Default::default() };
        let r = EndToEnd {
            documents: 3 * WINDOW,
            failed: 0,
            text_bytes: 1,
            seconds: 6.0,
            mb_per_s: 0.0,
            documents_per_s: 0.0,
            threads: 1,
            stages: StageTimes::default(),
            open_seconds: 0.0,
            close_seconds: 0.0,
            disk_bytes: 0,
            window_rates: vec![5000.0, 4000.0, 2500.0],
            window_stages: vec![first, first, last],
            cpu_seconds: Some(9.0),
        };
        assert_eq!(r.flat(), Some(0.5));
        let text = text(&r);
        assert!(text.contains("\ndocuments 10001-20000: 4000 documents/s\n"), "{text}");
        assert!(text.contains("flat: documents 20001-30000 over documents 1-10000: 0.50x"), "{text}");
        assert!(text.contains("cpu: 9.00 s over 6.00 s: 1.50 of 1 cores busy"), "{text}");
        let quotes = text.lines().rfind(|l| l.trim_start().starts_with("quotes ")).unwrap();
        assert!(quotes.ends_with("+200    100.0%"), "{quotes}");
        let table = text.lines().rfind(|l| l.trim_start().starts_with("table ")).unwrap();
        assert!(table.ends_with("+0      0.0%"), "{table}");
        assert_eq!(EndToEnd { window_rates: vec![1.0], ..r.clone() }.flat(), None);
        // From documents 50,001-60,000 on, the last window is compared with them.
        let rates = vec![9000.0, 8000.0, 7000.0, 6000.0, 5000.0, 4000.0, 3900.0, 3000.0];
        let stages = vec![first; rates.len()];
        let long = EndToEnd { window_rates: rates, window_stages: stages, ..r };
        assert_eq!(long.flat(), Some(0.75));
        assert!(super::text(&long).contains("flat: documents 70001-80000 over documents 50001-60000: 0.75x"));
        let six = EndToEnd { window_rates: long.window_rates[..6].to_vec(), ..long.clone() };
        assert_eq!(six.flat(), Some(4000.0 / 9000.0), "the reference is not the last window itself");
    }

    #[test]
    fn on_disk_counts_the_blocks_a_sparse_file_holds() {
        let dir = tempfile::tempdir().unwrap();
        let f = std::fs::File::create(dir.path().join("table")).unwrap();
        f.set_len(256 << 20).unwrap();
        std::fs::create_dir(dir.path().join("db")).unwrap();
        std::fs::write(dir.path().join("db/data"), vec![7u8; 1 << 20]).unwrap();
        let size = super::dir_size(dir.path());
        assert!((1 << 20..2 << 20).contains(&size), "{size} bytes: the 1 MiB written, not the 256 MiB hole");
    }
}
