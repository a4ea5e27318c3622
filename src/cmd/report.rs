use std::path::PathBuf;

use anyhow::{Context, Result};
use textorigin_server::view::html;
use textorigin_store::storage::datadir::DataDir;

use crate::args::DataArg;

/// Write an HTML overview of the collection: documents, most-copied sources and
/// the copy graph.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    data: DataArg,
    /// The page to write.
    #[arg(long, required = true, value_name = "OUT.html")]
    html: PathBuf,
}

pub fn run(a: Args) -> Result<()> {
    let dd = DataDir::open_read(&a.data.dir)?;
    let docs = html::report_docs(dd.store())?;
    std::fs::write(&a.html, html::report_page(&docs)).with_context(|| format!("cannot write {}", a.html.display()))?;
    eprintln!("wrote {}", a.html.display());
    Ok(())
}
