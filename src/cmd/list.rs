use anyhow::Result;
use textorigin_server::view::{model, text};
use textorigin_store::storage::datadir::DataDir;

use crate::args::DataArg;

/// List the stored documents in sequence order.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    data: DataArg,
    #[command(flatten)]
    format: super::Format,
}

pub fn run(a: Args) -> Result<()> {
    let dd = DataDir::open_read(&a.data.dir)?;
    let rows = model::list(dd.store())?;
    a.format.print(&rows, |r| text::list(r))
}
