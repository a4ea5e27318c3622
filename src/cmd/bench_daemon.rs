use std::path::PathBuf;

use anyhow::Result;
use textorigin_eval::daemon;

use textorigin_core::config::Overrides;

use crate::args::{on_off, size};

/// Measure the daemon on a corpus: end-to-end throughput from the spool to durable
/// results (documents/s, MB/s, share of the batch `ingest` throughput) and the time
/// to recover after a SIGKILL.
#[derive(clap::Args)]
pub struct Args {
    /// Corpus: files or directories in any input format.
    #[arg(required = true, value_name = "PATH")]
    corpus: Vec<PathBuf>,
    /// Documents per spool file.
    #[arg(long, default_value_t = 500)]
    per_file: usize,
    /// Table size of the runs.
    #[arg(long, default_value = "64MiB")]
    table_size: String,
    /// Near-duplicate detection on or off in both runs (a job, README "Jobs"; default on).
    #[arg(long = "neardup", value_name = "on|off", value_parser = on_off)]
    near_duplicates: Option<bool>,
    /// Quotation search on or off in both runs (default on).
    #[arg(long = "quotes", value_name = "on|off", value_parser = on_off)]
    quotations: Option<bool>,
    #[command(flatten)]
    format: super::Format,
}

pub fn run(a: Args) -> Result<()> {
    let table_bytes = size(&a.table_size)?;
    let docs = super::read_corpus(&a.corpus)?;
    let tmp = tempfile::tempdir()?;
    eprintln!("measuring {} documents ...", docs.len());
    let exe = std::env::current_exe()?;
    let serve = |dir: &std::path::Path, checkpoint_docs: u64| {
        let mut c = std::process::Command::new(&exe);
        let on_off = |on: bool| if on { "on" } else { "off" };
        c.args(["serve", "--table-size", &table_bytes.to_string(), "--checkpoint-docs", &checkpoint_docs.to_string()])
            .args([
                "--neardup",
                on_off(a.near_duplicates.unwrap_or(true)),
                "--quotes",
                on_off(a.quotations.unwrap_or(true)),
            ])
            .arg("--data")
            .arg(dir);
        c
    };
    let overrides = Overrides {
        table_bytes: Some(table_bytes),
        near_duplicates: a.near_duplicates,
        quotations: a.quotations,
        ..Overrides::default()
    };
    let r = daemon::run(&docs, a.per_file, &overrides, tmp.path(), &serve)?;
    a.format.print(&r, daemon::text)
}
