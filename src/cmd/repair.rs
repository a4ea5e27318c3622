use std::process::ExitCode;

use anyhow::{Context, Result};
use textorigin_store::check;
use textorigin_store::storage::datadir::{DataDir, REPAIR_LOSSES};

use crate::args::DataArg;

/// Repair a damaged store (a lost or truncated CURRENT, manifest or table file): copies
/// it as it is to DIR/db.damaged-SECONDS, then lets RocksDB's repair make a new
/// manifest from the files that are there, and checks what it made: documents whose
/// text or results were in lost files are counted and named, written to
/// DIR/repair-losses.txt, and the exit status is 1 (`serve` then refuses the data
/// directory until that file is removed or a backup restored). A store that opens is
/// left alone. The table is brought in step at the next start. With no daemon running.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    data: DataArg,
}

/// Violations shown of the losses (the file holds them all).
const SHOWN: usize = 10;

pub fn run(a: Args) -> Result<ExitCode> {
    let dir = &a.data.dir;
    let Some(copy) = DataDir::repair(dir)? else {
        eprintln!("the store of {} is not damaged: nothing done", dir.display());
        return Ok(ExitCode::SUCCESS);
    };
    let report = check::check(dir)?;
    let losses = check::losses(&report);
    if losses.is_empty() {
        eprintln!(
            "store repaired, nothing lost (checked); a copy of the damaged store is in {} (remove it once you are satisfied)",
            copy.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let path = dir.join(REPAIR_LOSSES);
    std::fs::write(&path, losses.join("\n") + "\n").with_context(|| format!("cannot write {}", path.display()))?;
    let (no_text, no_result) = (
        losses.iter().filter(|l| l.ends_with("has no text")).count(),
        losses.iter().filter(|l| l.ends_with("has no result")).count(),
    );
    eprintln!(
        "the store opens again, but it lost data: {no_text} of {} document(s) without their text, {no_result} without their results ({} problem(s) in all):",
        report.documents,
        losses.len()
    );
    for l in losses.iter().take(SHOWN) {
        eprintln!("  {l}");
    }
    if losses.len() > SHOWN {
        eprintln!("  ... ({} more in {})", losses.len() - SHOWN, path.display());
    }
    eprintln!(
        "restore a backup (`textorigin restore`), or serve what is left by removing {}; the damaged store as it was is in {}",
        path.display(),
        copy.display()
    );
    Ok(ExitCode::FAILURE)
}
