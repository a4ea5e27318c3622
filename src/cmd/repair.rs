use anyhow::Result;
use textorigin_store::storage::datadir::DataDir;

use crate::args::DataArg;

/// Repair a damaged store (a lost or truncated CURRENT, manifest or table file): copies
/// it as it is to DIR/db.damaged-SECONDS, then lets RocksDB's repair make a new
/// manifest from the files that are there. A store that opens is left alone. The table
/// is brought in step at the next start; run `check` after it. With no daemon running.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    data: DataArg,
}

pub fn run(a: Args) -> Result<()> {
    match DataDir::repair(&a.data.dir)? {
        None => eprintln!("the store of {} is not damaged: nothing done", a.data.dir.display()),
        Some(copy) => eprintln!(
            "store repaired; a copy of the damaged store is in {} (remove it once `textorigin check --data {}` says ok)",
            copy.display(),
            a.data.dir.display()
        ),
    }
    Ok(())
}
