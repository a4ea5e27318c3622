use std::path::PathBuf;

use anyhow::Result;
use textorigin_core::config::Config;
use textorigin_io::eval::bench;

use crate::args::ConfigArgs;

/// Measure throughput on a corpus: MB/s through tokenize+fingerprint+select, and
/// table operations per second on a table far larger than the CPU caches.
#[derive(clap::Args)]
pub struct Args {
    /// Corpus: files or directories in any input format.
    #[arg(required = true, value_name = "PATH")]
    corpus: Vec<PathBuf>,
    #[command(flatten)]
    flags: ConfigArgs,
    /// Directory for the temporary table file (default: the system temp dir).
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    #[command(flatten)]
    format: super::Format,
}

pub fn run(a: Args) -> Result<()> {
    // The table for the operation benchmark defaults to 1 GiB: far larger than caches.
    let base = Config { table_bytes: 1 << 30, ..Config::default() };
    let cfg = a.flags.typed()?.apply(&base)?;
    let texts: Vec<String> = super::read_corpus(&a.corpus)?.into_iter().map(|d| d.text).collect();
    let tmp = tempfile::tempdir()?;
    let dir = a.dir.unwrap_or_else(|| tmp.path().to_path_buf());
    eprintln!("measuring {} documents ...", texts.len());
    let r = bench::run(&texts, &cfg, &dir)?;
    a.format.print(&r, bench::text)
}
