use std::path::PathBuf;

use anyhow::Result;
use textorigin_core::config::Config;
use textorigin_eval::{bench, endtoend, fill};

use crate::args::ConfigArgs;

/// Measure throughput on a corpus: MB/s through tokenize+fingerprint+select, and
/// table operations per second on a table far larger than the CPU caches; with
/// --end-to-end, the whole ingestion (every feature, the store) with the share of time
/// per stage; with --checkpoints, what a checkpoint, a flush and the disk cost as a
/// table of the configured size fills (no corpus needed).
#[derive(clap::Args)]
pub struct Args {
    /// Corpus: files or directories in any input format.
    #[arg(required_unless_present = "checkpoints", value_name = "PATH")]
    corpus: Vec<PathBuf>,
    /// TOML file with algorithm options, as `ingest --config` takes (with
    /// --end-to-end: the `[quotes]` and `[neardup]` tables too); flags override it.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(flatten)]
    flags: ConfigArgs,
    /// Measure the whole ingestion into a fresh data directory instead (the configured
    /// table size; default 256 MiB): MB/s, documents/s and seconds per stage.
    #[arg(long)]
    end_to_end: bool,
    /// Measure checkpoints, flushes and disk use at 1%, 25% and 100% fill of a table
    /// of the configured sizes, filled with random fingerprints (no corpus).
    #[arg(long, conflicts_with = "end_to_end")]
    checkpoints: bool,
    /// Directory for the temporary table file (default: the system temp dir).
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    #[command(flatten)]
    format: super::Format,
}

pub fn run(a: Args) -> Result<()> {
    if a.checkpoints {
        let tmp = tempfile::tempdir_in(a.dir.as_deref().unwrap_or(&std::env::temp_dir()))?;
        let cfg = crate::args::overrides(a.config.as_deref(), &a.flags)?.apply(&Config::default())?;
        let r = fill::run(&cfg, tmp.path(), |what| eprintln!("{what} ..."))?;
        return a.format.print(&r, fill::text);
    }
    if a.end_to_end {
        let tmp = tempfile::tempdir_in(a.dir.as_deref().unwrap_or(&std::env::temp_dir()))?;
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        eprintln!("ingesting into a fresh data directory ...");
        let overrides = crate::args::overrides(a.config.as_deref(), &a.flags)?;
        let r = endtoend::run(&a.corpus, &overrides, &tmp.path().join("data"), threads)?;
        return a.format.print(&r, endtoend::text);
    }
    // The table for the operation benchmark defaults to 1 GiB: far larger than caches.
    let base = Config { table_bytes: 1 << 30, ..Config::default() };
    let cfg = crate::args::overrides(a.config.as_deref(), &a.flags)?.apply(&base)?;
    let texts: Vec<String> = super::read_corpus(&a.corpus)?.into_iter().map(|d| d.text).collect();
    let tmp = tempfile::tempdir()?;
    let dir = a.dir.unwrap_or_else(|| tmp.path().to_path_buf());
    eprintln!("measuring {} documents ...", texts.len());
    let r = bench::run(&texts, &cfg, &dir)?;
    a.format.print(&r, bench::text)
}
