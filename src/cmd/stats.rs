use anyhow::Result;
use textorigin_io::storage::datadir::DataDir;
use textorigin_io::view::{model, text};

use crate::args::DataArg;

/// Statistics: documents, table fill and evictions, ssr, table digest.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    data: DataArg,
    #[command(flatten)]
    format: super::Format,
}

pub fn run(a: Args) -> Result<()> {
    let dd = DataDir::open_read(&a.data.dir)?;
    let v = model::stats(&dd.store, &dd.table, &dd.indexes(), dd.config(), &a.data.dir)?;
    a.format.print(&v, text::stats)
}
