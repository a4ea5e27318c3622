use anyhow::Result;
use textorigin_server::view::{model, prometheus, text};
use textorigin_store::storage::datadir::DataDir;

use crate::args::DataArg;

/// Statistics: documents, table fill and evictions, ssr, the derived indexes' fill and
/// evictions, digests, and the daemon's status when one runs.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    data: DataArg,
    #[command(flatten)]
    format: super::Format,
    /// Print the Prometheus text format (for node_exporter's textfile collector:
    /// `textorigin stats --prometheus > DIR/textorigin.prom.$$ && mv ...`).
    #[arg(long, conflicts_with = "json")]
    prometheus: bool,
}

pub fn run(a: Args) -> Result<()> {
    let dd = DataDir::open_read(&a.data.dir)?;
    let v = model::stats(dd.store(), dd.table(), &dd.indexes(), dd.config(), &a.data.dir)?;
    if a.prometheus {
        print!("{}", prometheus::stats(&v));
        return Ok(());
    }
    a.format.print(&v, text::stats)
}
