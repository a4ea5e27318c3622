use std::path::PathBuf;

use anyhow::{Context, Result};
use textorigin_server::view::model::ViewError;
use textorigin_server::view::report;
use textorigin_store::storage::datadir::DataDir;

use crate::args::DataArg;

/// Write an HTML overview of the collection: totals, the most-copied sources (with
/// copied boilerplate apart), the copy graph and every document.
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
    let store = dd.store();
    let summary = report::summary(store)?;
    let docs = report::rows(store, store.docs().map(|m| m.map_err(ViewError::from)))?;
    let page = report::report_page(Some(&summary), &docs, None);
    std::fs::write(&a.html, page).with_context(|| format!("cannot write {}", a.html.display()))?;
    eprintln!("wrote {}", a.html.display());
    Ok(())
}
