use anyhow::Result;
use textorigin_server::view::{model, text};
use textorigin_store::storage::datadir::DataDir;

use crate::args::DataArg;

/// List a document's quotations: for each sentence that reuses sentences of earlier
/// documents (qSign: signature search, then the word-overlap score), the earlier
/// sentences with their document, text, signature bit distance and score.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    data: DataArg,
    /// The document's name (the latest of that name) or its numeric id.
    name_or_id: String,
    #[command(flatten)]
    format: super::Format,
}

pub fn run(a: Args) -> Result<()> {
    let dd = DataDir::open_read(&a.data.dir)?;
    let seq = dd.store().resolve(&a.name_or_id)?;
    let v = model::quotes(dd.store(), seq)?;
    a.format.print(&v, text::quotes)
}
