use std::path::PathBuf;

use anyhow::Result;
use textorigin_eval::{planted, quote};

/// Evaluate quotation search (qSign) on a corpus: recall against a naive full scan
/// at score levels 0.5-1.0 for radii d = 0..5 and the formula's radius, candidates
/// per sentence, and the speed-up over the naive scan and an inverted index. With
/// --planted: recall and precision on long sentences (18-40 words) with one word
/// changed, planted in the query documents, with and without part signatures.
#[derive(clap::Args)]
pub struct Args {
    /// Corpus: files or directories in any input format, in creation order.
    #[arg(required = true, value_name = "PATH")]
    corpus: Vec<PathBuf>,
    /// The last Q documents are the queries; the others form the collection.
    #[arg(long, default_value_t = 20)]
    queries: usize,
    /// Plant one edited long sentence from a collection document in each query
    /// document and measure whether ingestion finds it (use e.g. --queries 300).
    #[arg(long)]
    planted: bool,
    #[command(flatten)]
    format: super::Format,
}

pub fn run(a: Args) -> Result<()> {
    let docs = super::read_corpus(&a.corpus)?;
    let tmp = tempfile::tempdir()?;
    let pb = super::progress(0, "quote-eval");
    if a.planted {
        let r = planted::run(&docs, a.queries, tmp.path(), |what, i, n| {
            pb.set_message(what.to_string());
            pb.set_length(n as u64);
            pb.set_position(i as u64);
        })?;
        pb.finish_and_clear();
        return a.format.print(&r, planted::markdown);
    }
    let r = quote::run(&docs, a.queries, &tmp.path().join("data"), |what, i, n| {
        pb.set_message(what.to_string());
        pb.set_length(n as u64);
        pb.set_position(i as u64);
    })?;
    pb.finish_and_clear();
    a.format.print(&r, quote::markdown)
}
