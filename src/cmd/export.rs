use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use textorigin_server::view::dedup::{self, Decider, Thresholds};
use textorigin_server::view::{model, ViewOptions};
use textorigin_store::storage::datadir::DataDir;

use super::out::Out;
use crate::args::DataArg;

/// Write every document's results in sequence order, as JSON lines (the default) or as
/// what a dedup pipeline acts on (`--format`). Deterministic: the same documents in the
/// same order give the same bytes; every format streams, a document at a time.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    data: DataArg,
    /// Write to this file instead of standard output (gzip-compressed when its name ends
    /// in .gz).
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
    /// json: every document's results (as `show --json`). csv: a row a document (id,
    /// name, tokens, old_fraction, dominant_origin, near_duplicate_of,
    /// exact_duplicate_of, quotations). decisions: keep or drop per document, with the
    /// rule and its near-duplicate cluster (the earliest member's id). attributes: Dolma
    /// attributes, the copied spans as [start, end, origin id] in characters, and
    /// document-level ones as a span over the whole text (textorigin_drop: 1 when the
    /// decisions drop it, textorigin_old_fraction, textorigin_cluster). corpus:
    /// the kept documents as JSON lines (id, text, url, published_at, their metadata).
    #[arg(long, value_enum, default_value_t = Format::Json)]
    format: Format,
    /// Drop a near-duplicate of an earlier document at this resemblance or more (at
    /// least the data directory's near-duplicate threshold, its default: 0.7 for one
    /// made since schema 14). decisions, attributes, corpus.
    #[arg(long, value_name = "R")]
    near_threshold: Option<f64>,
    /// Drop a document when this fraction of its tokens or more is old (found in earlier
    /// documents); 1 drops only wholly copied ones, above 1 none. decisions, attributes,
    /// corpus.
    #[arg(long, default_value_t = dedup::OLD_THRESHOLD, value_name = "F")]
    old_threshold: f64,
    /// The attribute name of the copied spans. attributes.
    #[arg(long, default_value = "textorigin_copied_spans", value_name = "NAME")]
    attribute: String,
    /// Leave each kept document's copied blocks out of its text. corpus.
    #[arg(long)]
    remove_copied: bool,
    /// Every stored document, none dropped (the documents Dolma attributes pair with).
    /// corpus.
    #[arg(long)]
    all: bool,
    /// Write one attributes file per input file: the input files are under this
    /// directory (a Dolma `documents/` tree), and each one's attributes go to the same
    /// relative path under --output, a directory (gzip-compressed when the input's
    /// name ends in .gz). attributes.
    #[arg(long, value_name = "DOCUMENTS_DIR", requires = "output")]
    mirror: Option<PathBuf>,
    /// Compress the output with gzip (also when --output ends in .gz).
    #[arg(long)]
    gzip: bool,
    /// Add the wall-clock ingestion time of each document. json.
    #[arg(long)]
    times: bool,
    /// Include the origin of every selected shingle. json.
    #[arg(long)]
    shingles: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    Json,
    Csv,
    Decisions,
    Attributes,
    Corpus,
}

pub fn run(a: Args) -> Result<()> {
    let opt = ViewOptions { shingles: a.shingles, times: a.times };
    let dd = DataDir::open_read(&a.data.dir)?;
    let store = dd.store();
    let thresholds = Thresholds::of(&store.neardup_config()?, a.near_threshold, Some(a.old_threshold));
    let thresholds = match (thresholds, a.format) {
        (Ok(t), _) => t,
        (Err(e), Format::Decisions | Format::Attributes | Format::Corpus) => {
            anyhow::bail!("--near-threshold, --old-threshold: {e}")
        }
        // The other formats make no decision.
        (Err(_), _) => Thresholds { near: 1.0, old: dedup::OLD_THRESHOLD },
    };
    if a.mirror.is_some() && a.format != Format::Attributes {
        anyhow::bail!("--mirror writes attributes files: it needs --format attributes");
    }
    if a.format == Format::Attributes {
        return attributes(&a, store, Decider::new(store, thresholds));
    }
    let mut out = output(&a)?;
    if a.format == Format::Csv {
        out.write_all(&csv_row(dedup::SUMMARY_COLUMNS)?)?;
    }
    let mut decider = Decider::new(store, thresholds);
    let line = |out: &mut dyn Write, v: &serde_json::Value| -> Result<()> {
        serde_json::to_writer(&mut *out, v)?;
        Ok(out.write_all(b"\n")?)
    };
    let mut pb = Progress::new(store)?;
    for meta in store.docs() {
        let seq = meta?.seq;
        let (v, text) = model::stored_document_and_text(store, seq, opt)?;
        pb.done(text.len());
        match a.format {
            // Through `Value`: keys in sorted order, as export has always written them.
            Format::Json => line(&mut out, &serde_json::to_value(&v)?)?,
            Format::Csv => out.write_all(&csv_row(dedup::summary_cells(&dedup::summary(store, &v)?))?)?,
            Format::Decisions => line(&mut out, &serde_json::to_value(decider.decide(&v)?)?)?,
            Format::Attributes => unreachable!("written by attributes()"),
            Format::Corpus => {
                if a.all || decider.decide(&v)?.decision == "keep" {
                    line(&mut out, &dedup::corpus_line(&v, &text, a.remove_copied))?;
                }
            }
        }
    }
    pb.finish();
    out.finish()
}

/// The output: --output (gzip-compressed with --gzip or a name ending in .gz), else
/// standard output.
fn output(a: &Args) -> Result<Out> {
    let file: Box<dyn Write> = match &a.output {
        Some(p) => Box::new(std::fs::File::create(p).with_context(|| format!("cannot create {}", p.display()))?),
        None => Box::new(std::io::stdout().lock()),
    };
    let gzip = a.gzip || a.output.as_ref().is_some_and(|p| p.extension().is_some_and(|e| e == "gz"));
    Ok(Out::new(file, gzip))
}

/// `--format attributes`: a line for every input document in the input's order, the
/// stored ones' with their spans and decisions, the failed ones' (`failed_docs`)
/// naming the reason, to one output or, with --mirror, a file per input file.
fn attributes(a: &Args, store: &textorigin_store::storage::store::Store, mut decider: Decider<'_>) -> Result<()> {
    use super::attributes::{Failed, MirrorRoots, Sink};
    use textorigin_store::input::split_source;
    let mut sink = match &a.mirror {
        Some(documents) => Sink::Mirror {
            roots: MirrorRoots::new(documents, a.output.as_deref().expect("clap requires --output"))?,
            current: None,
            done: Default::default(),
        },
        None => Sink::One(output(a)?),
    };
    let failed_line = |f: &textorigin_store::storage::store::DocFailure| {
        dedup::failed_attributes_line(f.id.as_deref(), &f.reason, &a.attribute)
    };
    let mut failed = Failed::new(store.doc_failures()?);
    let mut last: Option<String> = None;
    let mut pb = Progress::new(store)?;
    for meta in store.docs() {
        let (v, text) = model::stored_document_and_text(store, meta?.seq, ViewOptions::default())?;
        let (file, line) = split_source(v.source.as_deref().unwrap_or_default());
        if last.as_deref() != Some(file) {
            if let Some(previous) = last.replace(file.to_string()) {
                for f in failed.rest_of(&previous) {
                    sink.line(&previous, &failed_line(&f))?;
                }
            }
        }
        for f in failed.before(file, line) {
            sink.line(file, &failed_line(&f))?;
        }
        let d = decider.decide(&v)?;
        sink.line(file, &dedup::attributes_line(&v, &text, &a.attribute, &d))?;
        pb.done(text.len());
    }
    if let Some(previous) = last {
        for f in failed.rest_of(&previous) {
            sink.line(&previous, &failed_line(&f))?;
        }
    }
    for (file, f) in failed.rest() {
        sink.line(&file, &failed_line(&f))?;
    }
    pb.finish();
    sink.finish()
}

/// Export's progress on a terminal: the stored texts' bytes (their sizes from the
/// metadata), with the documents done in the message.
struct Progress {
    pb: indicatif::ProgressBar,
    documents: u64,
    of: u64,
}

impl Progress {
    fn new(store: &textorigin_store::storage::store::Store) -> Result<Progress> {
        let (mut bytes, mut of) = (0, 0);
        for meta in store.docs() {
            (bytes, of) = (bytes + meta?.text_bytes, of + 1);
        }
        Ok(Progress { pb: super::progress_bytes(bytes), documents: 0, of })
    }

    /// One more document, of `bytes` of text.
    fn done(&mut self, bytes: usize) {
        self.documents += 1;
        self.pb.inc(bytes as u64);
        self.pb.set_message(format!("export: {}/{} documents", self.documents, self.of));
    }

    fn finish(self) {
        self.pb.finish_and_clear();
    }
}

/// One CSV record (RFC 4180 quoting), its line end included. A cell that a spreadsheet
/// would run as a formula (it starts with `=`, `+`, `-`, `@`, a tab or a carriage
/// return, and is not a number) is written with a `'` before it (OWASP's advice on CSV
/// injection): a document's name or title is data, never a formula.
fn csv_row<I: IntoIterator<Item = T>, T: AsRef<[u8]>>(cells: I) -> Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(cells.into_iter().map(|c| defused(c.as_ref()).into_owned()))?;
    w.into_inner().map_err(|e| anyhow::anyhow!("csv: {}", e.error()))
}

/// A CSV cell that no spreadsheet runs (see [`csv_row`]).
fn defused(cell: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    let formula = matches!(cell.first(), Some(b'=' | b'+' | b'-' | b'@' | b'\t' | b'\r'));
    let number = std::str::from_utf8(cell).is_ok_and(|s| s.parse::<f64>().is_ok());
    match formula && !number {
        true => [&b"'"[..], cell].concat().into(),
        false => cell.into(),
    }
}
