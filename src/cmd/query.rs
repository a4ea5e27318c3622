use std::path::PathBuf;

use anyhow::{Context, Result};
use textorigin_server::view::{model, text, DocParts, ViewOptions};
use textorigin_store::input::read_file;
use textorigin_store::storage::datadir::DataDir;

use crate::args::DataArg;

/// Analyse a document against the table without storing it or changing any state.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    data: DataArg,
    /// The document (any input format; the first document of a .jsonl file; `-` reads
    /// standard input).
    file: PathBuf,
    #[command(flatten)]
    format: super::Format,
    /// Include the origin of every selected shingle (JSON).
    #[arg(long)]
    shingles: bool,
}

pub fn run(a: Args) -> Result<()> {
    let mut dd = DataDir::open_read_for_query(&a.data.dir)?;
    let limits = textorigin_store::input::Limits { html: dd.config().html, ..u64::MAX.into() };
    let doc = read_file(&a.file, limits)?
        .into_iter()
        .next()
        .with_context(|| format!("{}: no document", a.file.display()))??;
    let q = dd.query(&doc)?;
    let v = model::document(dd.store(), DocParts::query(&doc, &q), ViewOptions { shingles: a.shingles, times: false })?;
    a.format.print(&v, text::document)
}
