use anyhow::Result;
use textorigin_core::neardup::Mode;
use textorigin_server::view::{model, text};
use textorigin_store::storage::datadir::DataDir;

use crate::args::DataArg;

/// List a document's near-duplicates: earlier documents it resembles (and with
/// --later, later ones that resemble it), with the exact-duplicate flag, Broder's
/// agreeing supershingles (of 6), Charikar's agreeing SimHash bits (of 384) and the
/// Jaccard resemblance of their shingle sets (exact for a pair near the threshold,
/// else estimated from the min-values).
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    data: DataArg,
    /// The document's name (the latest of that name) or its numeric id.
    name_or_id: String,
    /// Also list later documents that resemble it.
    #[arg(long)]
    later: bool,
    /// Which verdict decides: default (the data directory's threshold, 0.7 of shingles
    /// of 3 terms for a new one), b (Broder: 2 of 6 supershingles), c (Charikar: 372 of
    /// 384 bits), combined (B-similar and 355 bits).
    #[arg(long, default_value = "default", value_parser = ["default", "b", "c", "combined"])]
    mode: String,
    #[command(flatten)]
    format: super::Format,
}

pub fn run(a: Args) -> Result<()> {
    let mode: Mode = a.mode.parse().map_err(anyhow::Error::msg)?;
    let dd = DataDir::open_read(&a.data.dir)?;
    let seq = dd.store().resolve(&a.name_or_id)?;
    let v = model::neardups(dd.store(), seq, mode, a.later)?;
    a.format.print(&v, text::neardups)
}
