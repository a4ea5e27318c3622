use std::process::ExitCode;

use anyhow::Result;
use textorigin_server::view::text;
use textorigin_store::check;

use crate::args::DataArg;

/// Verify a data directory: both checkpoint slots, the store's invariants (contiguous
/// sequence numbers, a result for every document, no spool file admitted twice) and
/// the table; print the table digest. Exits non-zero on any violation, naming it.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    data: DataArg,
    /// Print the report as JSON (the exit status still tells the verdict).
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> Result<ExitCode> {
    let report = check::check(&a.data.dir)?;
    if a.json {
        super::print_json(&report)?;
        return Ok(if report.violations.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE });
    }
    print!("{}", text::check(&report));
    if report.violations.is_empty() {
        println!("ok");
        Ok(ExitCode::SUCCESS)
    } else {
        for p in &report.violations {
            eprintln!("violation: {p}");
        }
        Ok(ExitCode::FAILURE)
    }
}
