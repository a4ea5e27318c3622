use std::path::PathBuf;

use anyhow::{Context, Result};
use textorigin_server::view::{compare, html, model, text, ViewOptions};
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
    /// The document beside one of its sources (by name or id; without one, the source
    /// it copied the most words from): the copied passages paired, their edited words
    /// in brackets, in two columns ($COLUMNS wide, else 120); with --html, the page
    /// with both whole texts, each passage linking its counterpart; with --json, the
    /// pairs' byte spans and edits.
    #[arg(long, value_name = "SOURCE", num_args = 0..=1, default_missing_value = "")]
    side_by_side: Option<String>,
}

pub fn run(a: Args) -> Result<()> {
    let dd = DataDir::open_read(&a.data.dir)?;
    let seq = dd.store().resolve(&a.name_or_id)?;
    let named = dd.store().seqs_named(&a.name_or_id)?;
    if named.len() > 1 {
        eprintln!("note: {} documents are named `{}`; showing the latest (#{seq})", named.len(), a.name_or_id);
    }
    if let Some(source) = &a.side_by_side {
        let origin = Some(source).filter(|s| !s.is_empty()).map(|s| dd.store().resolve(s)).transpose()?;
        let s = model::side_by_side(dd.store(), seq, origin)?;
        if let Some(path) = a.html {
            let page = compare::compare_page(html::Site::Alone, &s, |_, _| String::new(), |_| String::new());
            std::fs::write(&path, page).with_context(|| format!("cannot write {}", path.display()))?;
            eprintln!("wrote {}", path.display());
        } else if a.json {
            super::print_json(&s)?;
        } else {
            let width = std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()).unwrap_or(120);
            print!("{}", compare::side_by_side_text(&s, width));
        }
        return Ok(());
    }
    let (v, stored) = model::shown(dd.store(), seq, ViewOptions { shingles: a.shingles, times: false })?;
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
