use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use indicatif::ProgressBar;
use textorigin_io::input::{expand_paths, read_file};
use textorigin_io::storage::datadir::DataDir;

use crate::args::{overrides, size, ConfigArgs, DataArg, DEFAULT_MAX_DOC_BYTES};

/// Process files in order and store their results. Directories are walked in
/// sorted order. Formats: .txt (and any other extension: UTF-8 text), .html/.htm,
/// .json (one object with id, text or html, url, published_at), .jsonl (one object
/// per line). A bad file is reported and skipped; the exit status is non-zero only
/// when nothing could be processed.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    data: DataArg,
    /// TOML file with algorithm options (same names as the flags, e.g.
    /// `selection = "nhs"`); flags override it.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(flatten)]
    flags: ConfigArgs,
    /// Skip documents larger than this (bytes, or with a unit such as MiB).
    #[arg(long, default_value = DEFAULT_MAX_DOC_BYTES, value_name = "SIZE")]
    max_doc_bytes: String,
    /// Files and directories, processed in the order given.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
}

pub fn run(a: Args) -> Result<ExitCode> {
    let max = size(&a.max_doc_bytes)?;
    let mut dd = DataDir::open_write(&a.data.dir, &overrides(a.config.as_deref(), &a.flags)?)?;
    let files = expand_paths(&a.paths);
    let pb = super::progress(files.len() as u64, "ingest");
    let (mut ok, mut failed) = (0u64, 0u64);
    let report = |pb: &ProgressBar, msg: String| pb.suspend(|| eprintln!("{msg}"));
    for f in files {
        pb.inc(1);
        let docs = match f.map_err(anyhow::Error::from).and_then(|path| Ok(read_file(&path, max)?)) {
            Ok(d) => d,
            Err(e) => {
                failed += 1;
                report(&pb, format!("error: {e}"));
                continue;
            }
        };
        for d in docs {
            let doc = match d {
                Ok(doc) => doc,
                Err(e) => {
                    failed += 1;
                    report(&pb, format!("error: {e}"));
                    continue;
                }
            };
            for w in &doc.warnings {
                report(&pb, format!("warning: {w}"));
            }
            match dd.ingest(&doc) {
                Ok(_) => ok += 1,
                Err(e) => {
                    failed += 1;
                    report(&pb, format!("error: {e:#}"));
                    if dd.poisoned() {
                        pb.finish_and_clear();
                        anyhow::bail!("stopping: the table is ahead of the store; the next `serve` or `rebuild` recovers it");
                    }
                }
            }
        }
    }
    pb.finish_and_clear();
    let stats = dd.table.stats();
    let capacity = dd.table.capacity();
    dd.close()?;
    eprintln!(
        "ingested {ok} document(s), {failed} failed; table: {} of {} entries used, {} evictions",
        stats.occupied, capacity, stats.evictions
    );
    Ok(if ok == 0 && failed > 0 { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}
