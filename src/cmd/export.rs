use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use textorigin_server::view::{model, ViewOptions};
use textorigin_store::storage::datadir::DataDir;

use crate::args::DataArg;

/// Write every document's results as JSON lines in sequence order (deterministic:
/// the same documents in the same order give the same bytes).
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    data: DataArg,
    /// Write to this file instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Add the wall-clock ingestion time of each document.
    #[arg(long)]
    times: bool,
    /// Include the origin of every selected shingle.
    #[arg(long)]
    shingles: bool,
}

pub fn run(a: Args) -> Result<()> {
    let opt = ViewOptions { shingles: a.shingles, times: a.times };
    let dd = DataDir::open_read(&a.data.dir)?;
    let mut out: Box<dyn Write> = match &a.output {
        Some(p) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("cannot create {}", p.display()))?,
        )),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let total = dd.store().next_seq()? - 1;
    let pb = super::progress(total, "export");
    for meta in dd.store().docs() {
        let v = model::stored_document(dd.store(), meta?.seq, opt)?;
        // Through `Value`: keys in sorted order, as export has always written them.
        serde_json::to_writer(&mut out, &serde_json::to_value(&v)?)?;
        out.write_all(b"\n")?;
        pb.inc(1);
    }
    pb.finish_and_clear();
    out.flush()?;
    Ok(())
}
