use std::path::PathBuf;

use anyhow::{Context, Result};
use textorigin_core::config::{Config, Density};
use textorigin_eval::arrival::Arrival;
use textorigin_eval::origin::{self, DateUse, Setup, Size};

use crate::args::on_off;

/// Reproduce the origin-detection paper's experiments on a corpus: build the oracle
/// (All selection, exact unbounded index), pick the query set (the last Q documents
/// with a dominant origin), run every configuration and table size, and report ssr,
/// DO (dominant origin right: the argmax, and the paper's 10% rule), TF (tokens
/// labelled fresh/old right), overall, and per-token origin accuracy (right, wrong,
/// unlabelled shares of the copied tokens).
#[derive(clap::Args)]
pub struct Args {
    /// Corpus: a directory or .jsonl (any input format), in creation order.
    #[arg(long, required = true, value_name = "PATH")]
    corpus: Vec<PathBuf>,
    /// Selections, comma-separated (all, 4th, m4, nm3, w8, nw8, hs, nhs, hb3, dct8).
    #[arg(long, default_value = "nhs", value_delimiter = ',')]
    selection: Vec<String>,
    /// Evictions, comma-separated (random, lru, cc, lucky).
    #[arg(long, default_value = "lucky", value_delimiter = ',')]
    eviction: Vec<String>,
    /// Estimations, comma-separated (nb, e, b, be).
    #[arg(long, default_value = "be", value_delimiter = ',')]
    estimation: Vec<String>,
    /// Selection density, comma-separated (paper: the selection alone; adaptive: more
    /// shingles while the table has room): each value is a run of each selection.
    #[arg(long, default_value = "paper,adaptive", value_delimiter = ',')]
    density: Vec<String>,
    /// Which source a token several aligned runs cover is credited to: passage (the
    /// longest run's, through light edits: a new data directory's) or earliest (the
    /// earliest origin's, exact runs: the paper's earliest source, data directories
    /// made before schema 20). Scored against the same oracle either way.
    #[arg(long, default_value = "passage", value_name = "passage|earliest")]
    attribution: textorigin_core::config::Attribution,
    /// Origin propagation, comma-separated (on, off): each value is a run.
    #[arg(long, default_value = "on", value_delimiter = ',', value_parser = on_off)]
    propagate: Vec<bool>,
    /// Alignment of copied blocks against their origins' texts, comma-separated (on,
    /// off; off is the paper's behaviour): each value is a run.
    #[arg(long, default_value = "on,off", value_delimiter = ',', value_parser = on_off)]
    align: Vec<bool>,
    /// Table sizes, comma-separated: bytes (64MiB) or a percentage of the corpus's
    /// shingles whose entries fit (1.4%). Default: the paper's Table 2 (blogs).
    #[arg(long, default_value = "34.2%,13.7%,6.8%,3.3%,1.4%,0.7%,0.3%,0.1%", value_delimiter = ',')]
    table_size: Vec<String>,
    /// Query documents: the last Q documents that have a dominant origin.
    #[arg(long, default_value_t = 1000)]
    queries: usize,
    /// Entries per bucket.
    #[arg(long, default_value_t = 64)]
    bucket_entries: u32,
    /// Leave out documents with fewer tokens, as the paper does (Section 3.1: "all
    /// these documents contain at least 45 tokens").
    #[arg(long, default_value_t = 45)]
    min_tokens: usize,
    /// Arrival orders, comma-separated: in-order (the corpus's order, taken for the
    /// publication order), shuffled, reverse, lag:N (each document delayed by a random
    /// 0 to N positions). Each other order is run beside the in-order run and scored
    /// against the oracle in publication order.
    #[arg(long, default_value = "in-order", value_delimiter = ',')]
    arrival: Vec<String>,
    /// What the engine makes of the documents' publication dates (the corpus's
    /// order), comma-separated to compare: on (a document published before what it
    /// finds takes it over, "earlier" is by date, and the documents it took from and
    /// their copiers are revised), take-over (the same without revisions, for
    /// comparison), off (arrival order taken for publication order).
    /// The in-order run is the same every way and is run once.
    #[arg(long, default_value = "on", value_delimiter = ',')]
    dates: Vec<String>,
    /// Write an SVG plot of DO and TF against table size here.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    #[command(flatten)]
    format: super::Format,
}

fn parse_all<T: std::str::FromStr<Err = String>>(v: &[String]) -> Result<Vec<T>> {
    v.iter().map(|s| s.parse()).collect::<Result<_, String>>().map_err(anyhow::Error::msg)
}

pub fn run(a: Args) -> Result<()> {
    let (selections, evictions, estimations) =
        (parse_all(&a.selection)?, parse_all(&a.eviction)?, parse_all(&a.estimation)?);
    let options: Vec<(bool, bool)> = a.propagate.iter().flat_map(|&p| a.align.iter().map(move |&al| (p, al))).collect();
    let mut arrivals: Vec<Arrival> = parse_all(&a.arrival)?;
    if !arrivals.contains(&Arrival::InOrder) {
        arrivals.insert(0, Arrival::InOrder);
    }
    let uses: Vec<DateUse> = parse_all(&a.dates)?;
    let densities: Vec<Density> = parse_all(&a.density)?;
    let selections: Vec<_> = selections.iter().flat_map(|&s| densities.iter().map(move |&d| (s, d))).collect();
    let product = Setup::product(&selections, &evictions, &estimations, &options);
    let mut setups: Vec<Setup> = Vec::new();
    for &arrival in &arrivals {
        let dates: &[DateUse] = if arrival == Arrival::InOrder { &[DateUse::Revise] } else { &uses };
        for &dated in dates {
            setups.extend(product.iter().map(|&s| Setup { arrival, dated, ..s }));
        }
    }
    let sizes: Vec<Size> = parse_all(&a.table_size)?;
    let all = super::read_corpus(&a.corpus)?;
    let read = all.len();
    let docs = origin::at_least_tokens(all, a.min_tokens);
    if docs.len() < read {
        eprintln!("left out {} of {read} documents with fewer than {} tokens", read - docs.len(), a.min_tokens);
    }
    let replies = origin::replies(&docs);
    let texts: Vec<String> = docs.into_iter().map(|d| d.text).collect();
    let base = Config { bucket_entries: a.bucket_entries, attribution: a.attribution, ..Config::default() };
    let tmp = tempfile::tempdir()?;
    let pb = super::progress_bytes(0);
    pb.enable_steady_tick(std::time::Duration::from_millis(500));
    let r = origin::run(&texts, &replies, &base, &setups, &sizes, a.queries, tmp.path(), |p| {
        if pb.length() != Some(p.of_bytes) {
            pb.set_length(p.of_bytes);
            pb.set_style(super::bytes_style());
        }
        pb.set_position(p.bytes);
        pb.set_message(format!("eval: {}/{} runs", p.runs, p.of_runs));
    })?;
    pb.finish_and_clear();
    if let Some(path) = a.svg {
        std::fs::write(&path, origin::svg(&r)).with_context(|| format!("cannot write {}", path.display()))?;
    }
    a.format.print(&r, origin::markdown)
}
