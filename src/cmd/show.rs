use std::path::PathBuf;

use anyhow::{Context, Result};
use textorigin_server::view::{html, model, text, ViewOptions};
use textorigin_store::storage::datadir::DataDir;

use crate::args::DataArg;

/// Show a stored document's results: dominant origin, copied blocks with their
/// origins and text, novel segments.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    data: DataArg,
    /// The document's name (the latest of that name) or its numeric id.
    name_or_id: String,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Include the origin of every selected shingle (JSON).
    #[arg(long)]
    shingles: bool,
    /// The revisions of the document's result, oldest first: which document,
    /// published before one of its origins but arriving after it, changed it, and what
    /// it said before (the JSON view has them under `revisions`).
    #[arg(long)]
    history: bool,
    /// Write a self-contained HTML page with each copied block highlighted in a
    /// colour per origin, a legend linking the origins and a summary bar.
    #[arg(long, value_name = "OUT.html")]
    html: Option<PathBuf>,
}

pub fn run(a: Args) -> Result<()> {
    let dd = DataDir::open_read(&a.data.dir)?;
    let seq = dd.store().resolve(&a.name_or_id)?;
    let named = dd.store().seqs_named(&a.name_or_id)?;
    if named.len() > 1 {
        eprintln!("note: {} documents are named `{}`; showing the latest (#{seq})", named.len(), a.name_or_id);
    }
    let (mut v, stored) =
        model::stored_document_and_text(dd.store(), seq, ViewOptions { shingles: a.shingles, times: false })?;
    v.copied_by = Some(model::copied_by(dd.store(), seq)?).filter(|c| c.count > 0);
    if let Some(path) = a.html {
        std::fs::write(&path, html::document_page(&v, &stored))
            .with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("wrote {}", path.display());
    } else if a.json {
        super::print_json(&v)?;
    } else if a.history {
        print!("{}", text::history(&v));
    } else {
        print!("{}", text::document(&v));
    }
    Ok(())
}
