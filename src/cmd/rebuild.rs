use std::process::ExitCode;

use anyhow::Result;
use textorigin_io::storage::datadir::DataDir;

use crate::args::DataArg;

/// Rebuild the table by replaying the stored documents in order (after an
/// interrupted run), checking each recomputed result against the stored one.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    data: DataArg,
}

pub fn run(a: Args) -> Result<ExitCode> {
    let pb = super::progress(0, "rebuild");
    let (n, bad) = DataDir::rebuild(&a.data.dir, |i, total| {
        pb.set_length(total);
        pb.set_position(i);
    })?;
    pb.finish_and_clear();
    eprintln!("rebuilt the table from {n} document(s); {bad} recomputed result(s) differed from the stored ones");
    Ok(if bad > 0 { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}
