use std::path::PathBuf;

use anyhow::Result;
use textorigin_eval::neardup;

/// Evaluate the near-duplicate verdicts on a corpus: ingest it into a fresh data
/// directory, compute the exact Jaccard of every pair sharing a shingle, and print
/// recall and precision of the default, B, C and combined verdicts, and documents
/// per second.
#[derive(clap::Args)]
pub struct Args {
    /// Corpus: files or directories in any input format, in creation order.
    #[arg(required = true, value_name = "PATH")]
    corpus: Vec<PathBuf>,
    /// Jaccard threshold of a true near-duplicate (and of the default verdict).
    #[arg(long, default_value_t = 0.9)]
    threshold: f64,
    /// Keep the data directory here instead of a temporary one.
    #[arg(long, value_name = "DIR")]
    keep: Option<PathBuf>,
    #[command(flatten)]
    format: super::Format,
}

pub fn run(a: Args) -> Result<()> {
    let docs = super::read_corpus(&a.corpus)?;
    let tmp = tempfile::tempdir()?;
    let dir = a.keep.unwrap_or_else(|| tmp.path().join("data"));
    let pb = super::progress(docs.len() as u64, "ingest");
    let r = neardup::run(&docs, a.threshold, &dir, |i| pb.set_position(i as u64))?;
    pb.finish_and_clear();
    a.format.print(&r, neardup::markdown)
}
