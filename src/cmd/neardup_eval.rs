use std::path::PathBuf;

use anyhow::Result;
use textorigin_core::neardup::NearDupConfig;
use textorigin_eval::neardup;

/// Evaluate the near-duplicate verdicts on a corpus: ingest it into a fresh data
/// directory, compute the exact Jaccard of every pair sharing a shingle, and print
/// recall and precision of the default, B, C and combined verdicts, and documents
/// per second. With `--planted N`, N documents are also copied with 1%, 2.5%, 5% and
/// 10% of their words replaced, and the recall of each rate is printed.
#[derive(clap::Args)]
pub struct Args {
    /// Corpus: files or directories in any input format, in creation order.
    #[arg(required = true, value_name = "PATH")]
    corpus: Vec<PathBuf>,
    /// Jaccard threshold of a true near-duplicate and of the default verdict (the LSH
    /// bands are tuned to it). Default: a new data directory's.
    #[arg(long = "near-threshold", alias = "threshold", value_name = "J")]
    threshold: Option<f64>,
    /// Shingle length of the near-duplicate search, in terms. Default: a new data
    /// directory's.
    #[arg(long = "near-k", value_name = "K")]
    k: Option<u32>,
    /// Accept a pair at an estimated resemblance of at least the threshold less this
    /// (where it is not decided exactly). Default: a new data directory's.
    #[arg(long, value_name = "M")]
    margin: Option<f64>,
    /// Decide the pairs near the threshold by their exact resemblance (on, a new data
    /// directory's default) or by the estimate alone (off, as before schema 14).
    #[arg(long, value_name = "on|off", value_parser = crate::args::on_off)]
    verify: Option<bool>,
    /// Plant this many edited copies per edit rate (1%, 2.5%, 5%, 10% of the words).
    #[arg(long, default_value_t = 0, value_name = "N")]
    planted: usize,
    /// Keep the data directory here instead of a temporary one.
    #[arg(long, value_name = "DIR")]
    keep: Option<PathBuf>,
    #[command(flatten)]
    format: super::Format,
}

pub fn run(a: Args) -> Result<()> {
    let docs = super::read_corpus(&a.corpus)?;
    let base = NearDupConfig::default();
    let mut cfg = base.tuned(a.k.unwrap_or(base.k), a.threshold.unwrap_or(base.threshold));
    cfg.margin = a.margin.unwrap_or(cfg.margin);
    cfg.verify = a.verify.unwrap_or(cfg.verify);
    cfg.validate().map_err(anyhow::Error::msg)?;
    let tmp = tempfile::tempdir()?;
    let dir = a.keep.unwrap_or_else(|| tmp.path().join("data"));
    let pb = super::progress(docs.len() as u64, "ingest");
    let r = neardup::run(&docs, &cfg, a.planted, &dir, |i, n| {
        pb.set_length(n as u64);
        pb.set_position(i as u64)
    })?;
    pb.finish_and_clear();
    a.format.print(&r, neardup::markdown)
}
