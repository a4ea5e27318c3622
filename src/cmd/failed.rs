use anyhow::Result;
use textorigin_server::view::text;
use textorigin_store::storage::datadir::DataDir;

use crate::args::DataArg;

/// List the spool files and documents that could not be processed, with reasons.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    data: DataArg,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> Result<()> {
    let dd = DataDir::open_read(&a.data.dir)?;
    let failures = dd.store().failures()?;
    if a.json {
        super::print_json(&failures)
    } else {
        for f in &failures {
            println!("{}: {}", text::safe(&f.file), text::safe(&f.reason));
        }
        eprintln!("{} failure(s)", failures.len());
        Ok(())
    }
}
