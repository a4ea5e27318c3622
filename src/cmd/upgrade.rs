use anyhow::Result;
use textorigin_core::config::Overrides;
use textorigin_store::storage::datadir::DataDir;
use textorigin_store::storage::store::SCHEMA_VERSION;

use crate::args::DataArg;

/// Upgrade a data directory's store to this build's schema (also done by ingest).
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    data: DataArg,
}

pub fn run(a: Args) -> Result<()> {
    DataDir::open_write(&a.data.dir, &Overrides::default())?.close()?;
    eprintln!("store is at schema {SCHEMA_VERSION}");
    Ok(())
}
