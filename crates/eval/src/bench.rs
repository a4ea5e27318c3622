//! `textorigin bench`: throughput on a real corpus, measured and printed.
//!
//! Two figures, each on one core:
//! 1. **select**: MB/s of text through tokenize + fingerprint + select (the configured
//!    selection), over the whole corpus, repeated until at least two seconds passed.
//! 2. **table**: table operations (lookup, and insert on a miss, with eviction) per
//!    second on a table file far larger than the CPU caches (default 1 GiB), fed with
//!    the fingerprints of all shingles of the corpus (selection All) in document order:
//!    a cold first pass over the new file (inserts; every page is touched for the first
//!    time), then two warm passes: the same fingerprints again (hits), and new ones
//!    (misses, inserts, evictions). The warm figure is what a running process sees.
//!
//! The figures go to `docs/PERFORMANCE.md` together with the command.

use std::path::Path;
use std::time::Instant;

use super::Result;
use serde::Serialize;

use textorigin_core::config::Config;
use textorigin_core::engine::Engine;
use textorigin_core::select::Selection;
use textorigin_core::table::{top_byte, Hit};
use textorigin_store::storage::table_file::TableFile;

/// What the benchmark measured.
#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    pub documents: usize,
    pub text_bytes: u64,
    pub tokens: u64,
    pub selected: u64,
    pub selection: String,
    pub select_passes: u32,
    pub select_seconds: f64,
    pub select_mb_per_s: f64,
    pub table_bytes: u64,
    pub table_eviction: String,
    /// First pass over a new table: mostly inserts, every page touched for the first time.
    pub cold_pass: TablePass,
    /// The same fingerprints again: mostly hits.
    pub hit_pass: TablePass,
    /// New fingerprints into the warm table: misses, inserts and evictions.
    pub insert_pass: TablePass,
    /// Operations per second (millions) over the two warm passes.
    pub warm_mops_per_s: f64,
}

/// One pass of table operations.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct TablePass {
    pub ops: u64,
    pub hits: u64,
    pub seconds: f64,
    pub mops_per_s: f64,
}

impl From<(u64, u64, f64)> for TablePass {
    fn from((ops, hits, seconds): (u64, u64, f64)) -> Self {
        TablePass { ops, hits, seconds, mops_per_s: ops as f64 / seconds / 1e6 }
    }
}

/// Runs both measurements over `texts`; the table file is created in `dir`.
pub fn run(texts: &[String], cfg: &Config, dir: &Path) -> Result<BenchReport> {
    let bytes: u64 = texts.iter().map(|t| t.len() as u64).sum();
    let mut engine = Engine::new(cfg.clone());
    let (mut tokens, mut selected) = (0u64, 0u64);
    let start = Instant::now();
    let mut passes = 0;
    while passes == 0 || start.elapsed().as_secs_f64() < 2.0 {
        (tokens, selected) = (0, 0);
        for t in texts {
            let doc = engine.prepare(t);
            tokens += doc.tokens().len() as u64;
            selected += doc.selected() as u64;
        }
        passes += 1;
    }
    let select_seconds = start.elapsed().as_secs_f64();
    let select_mb_per_s = bytes as f64 * f64::from(passes) / select_seconds / 1e6;

    let mut all = Engine::new(Config { selection: Selection::All, ..cfg.clone() });
    let docs: Vec<Vec<u64>> = texts.iter().map(|t| all.prepare(t).items().iter().map(|i| i.fp).collect()).collect();
    let path = dir.join("bench.table");
    let _ = std::fs::remove_file(&path);
    let mut table = TableFile::create(&path, &cfg.table_params())?;
    // `salt` makes every fingerprint of a pass new (62-bit xor), `base_seq` the origins.
    let pass = |table: &mut TableFile, base_seq: u64, salt: u64| -> (u64, u64, f64) {
        let hits_before = table.stats().hits;
        let start = Instant::now();
        let mut ops = 0u64;
        for (d, fps) in docs.iter().enumerate() {
            let seq = base_seq + d as u64;
            for &fp in fps.iter().take(8) {
                table.prefetch(fp ^ salt);
            }
            for (i, &fp) in fps.iter().enumerate() {
                if let Some(&ahead) = fps.get(i + 8) {
                    table.prefetch(ahead ^ salt);
                }
                let fp = fp ^ salt;
                let new = Hit { origin: seq, offset: i as u8, prev: top_byte(fp), next: 0 };
                std::hint::black_box(table.process(fp, new, seq << 24 ^ i as u64, textorigin_core::select::SELECTED));
                ops += 1;
            }
        }
        (ops, table.stats().hits - hits_before, start.elapsed().as_secs_f64())
    };
    let n = docs.len() as u64;
    let cold = pass(&mut table, 1, 0);
    let hit = pass(&mut table, 1 + n, 0);
    let insert = pass(&mut table, 1 + 2 * n, 0x2545_f491_4f6c_dd1d & textorigin_core::rabin::MASK);
    drop(table);
    let _ = std::fs::remove_file(&path);
    Ok(BenchReport {
        documents: texts.len(),
        text_bytes: bytes,
        tokens,
        selected,
        selection: cfg.selection.to_string(),
        select_passes: passes,
        select_seconds,
        select_mb_per_s,
        table_bytes: cfg.table_bytes,
        table_eviction: cfg.eviction.to_string(),
        cold_pass: TablePass::from(cold),
        hit_pass: TablePass::from(hit),
        insert_pass: TablePass::from(insert),
        warm_mops_per_s: (hit.0 + insert.0) as f64 / (hit.2 + insert.2) / 1e6,
    })
}

/// The measurement for people.
pub fn text(r: &BenchReport) -> String {
    let mut out =
        format!("corpus: {} documents, {:.1} MB, {} tokens\n", r.documents, r.text_bytes as f64 / 1e6, r.tokens);
    out += &format!(
        "tokenize+fingerprint+select ({}): {:.1} MB/s ({} passes in {:.2} s; {} selected per pass)\n",
        r.selection, r.select_mb_per_s, r.select_passes, r.select_seconds, r.selected
    );
    out += &format!("table ({} MiB, {} eviction), one core:\n", r.table_bytes >> 20, r.table_eviction);
    for (what, p) in [("cold, first touch", r.cold_pass), ("warm, hits", r.hit_pass), ("warm, new keys", r.insert_pass)]
    {
        out += &format!(
            "  {what:<18} {:>10} ops in {:6.2} s = {:6.2} M ops/s ({:.0}% hits)\n",
            p.ops,
            p.seconds,
            p.mops_per_s,
            100.0 * p.hits as f64 / p.ops.max(1) as f64
        );
    }
    out += &format!("  warm overall: {:.2} M ops/s\n", r.warm_mops_per_s);
    out
}
