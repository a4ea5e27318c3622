//! The `textorigin` command line: flags are parsed into plain values here, then the
//! library does the work. Errors become messages at this edge (anyhow).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

use textorigin::config::{Config, Overrides};
use textorigin::datadir::DataDir;
use textorigin::input::{expand_paths, read_file};
use textorigin::inspect::{self, ViewOptions};

/// Default limit on one document's size.
const DEFAULT_MAX_DOC_BYTES: &str = "64MiB";

#[derive(Parser)]
#[command(
    name = "textorigin",
    version,
    about = "Tells, for every document, where each piece of its text came from",
    long_about = "Tells, for every document, where each piece of its text came from.\n\n\
        Documents are processed in order. Each one's k-word shingles are fingerprinted, a \
        subset is selected and looked up in a fixed-size table of earlier shingles; the \
        hits tell which earlier document each copied passage came from, which words are \
        new and which document it copied the most from (its dominant origin).\n\n\
        A data directory (--data, or $TEXTORIGIN_DATA) holds the table file and a RocksDB \
        store of documents and results."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Args, Clone)]
struct DataArg {
    /// Data directory (table file + RocksDB store).
    #[arg(long, env = "TEXTORIGIN_DATA", value_name = "DIR")]
    data: PathBuf,
}

#[derive(Subcommand)]
enum Command {
    /// Process files in order and store their results. Directories are walked in
    /// sorted order. Formats: .txt (and any other extension: UTF-8 text), .html/.htm,
    /// .json (one object with id, text or html, url, published_at), .jsonl (one object
    /// per line). A bad file is reported and skipped; the exit status is non-zero only
    /// when nothing could be processed.
    Ingest {
        #[command(flatten)]
        data: DataArg,
        /// TOML file with algorithm options (same names as the flags, e.g.
        /// `selection = "nhs"`); flags override it.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        #[command(flatten)]
        overrides: Overrides,
        /// Skip documents larger than this (bytes, or with a unit such as MiB).
        #[arg(long, default_value = DEFAULT_MAX_DOC_BYTES, value_name = "SIZE")]
        max_doc_bytes: String,
        /// Files and directories, processed in the order given.
        #[arg(required = true, value_name = "PATH")]
        paths: Vec<PathBuf>,
    },
    /// Analyse a document against the table without storing it or changing any state.
    Query {
        #[command(flatten)]
        data: DataArg,
        /// The document (any input format; the first document of a .jsonl file).
        file: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Include the origin of every selected shingle (JSON).
        #[arg(long)]
        shingles: bool,
    },
    /// Show a stored document's results: dominant origin, copied blocks with their
    /// origins and text, novel segments.
    Show {
        #[command(flatten)]
        data: DataArg,
        /// The document's name (the latest of that name) or its numeric id.
        name_or_id: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Include the origin of every selected shingle (JSON).
        #[arg(long)]
        shingles: bool,
        /// Write a self-contained HTML page with each copied block highlighted in a
        /// colour per origin, a legend linking the origins and a summary bar.
        #[arg(long, value_name = "OUT.html")]
        html: Option<PathBuf>,
    },
    /// Write an HTML overview of the collection: documents, most-copied sources and
    /// the copy graph.
    Report {
        #[command(flatten)]
        data: DataArg,
        /// The page to write.
        #[arg(long, required = true, value_name = "OUT.html")]
        html: PathBuf,
    },
    /// List the stored documents in sequence order.
    List {
        #[command(flatten)]
        data: DataArg,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Statistics: documents, table fill and evictions, ssr, table digest.
    Stats {
        #[command(flatten)]
        data: DataArg,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Write every document's results as JSON lines in sequence order (deterministic:
    /// the same documents in the same order give the same bytes).
    Export {
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
    },
    /// List a document's near-duplicates: earlier documents it resembles (and with
    /// --later, later ones that resemble it), with the exact-duplicate flag, Broder's
    /// agreeing supershingles (of 6), Charikar's agreeing SimHash bits (of 384) and the
    /// estimated Jaccard resemblance of their 8-word shingle sets.
    Neardups {
        #[command(flatten)]
        data: DataArg,
        /// The document's name (the latest of that name) or its numeric id.
        name_or_id: String,
        /// Also list later documents that resemble it.
        #[arg(long)]
        later: bool,
        /// Which verdict decides: default (bands and pieces verified by the resemblance
        /// estimate, threshold 0.9), b (Broder: 2 of 6 supershingles), c (Charikar: 372
        /// of 384 bits), combined (B-similar and 355 bits).
        #[arg(long, value_enum, default_value = "default")]
        mode: textorigin::neardup::Mode,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// List a document's quotations: for each sentence that reuses sentences of earlier
    /// documents (qSign: signature search, then the word-overlap score), the earlier
    /// sentences with their document, text, signature bit distance and score.
    Quotes {
        #[command(flatten)]
        data: DataArg,
        /// The document's name (the latest of that name) or its numeric id.
        name_or_id: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Reproduce the origin-detection paper's experiments on a corpus: build the oracle
    /// (All selection, exact unbounded index), pick the query set (the last Q documents
    /// with a dominant origin), run every configuration and table size, and report ssr,
    /// DO (dominant origin right), TF (tokens labelled fresh/old right) and overall.
    Eval {
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
        /// Write an SVG plot of DO and TF against table size here.
        #[arg(long, value_name = "FILE")]
        svg: Option<PathBuf>,
        /// Print JSON instead of a markdown table.
        #[arg(long)]
        json: bool,
    },
    /// Evaluate the near-duplicate verdicts on a corpus: ingest it into a fresh data
    /// directory, compute the exact Jaccard of every pair sharing a shingle, and print
    /// recall and precision of the default, B, C and combined verdicts, and documents
    /// per second.
    NeardupEval {
        /// Corpus: files or directories in any input format, in creation order.
        #[arg(required = true, value_name = "PATH")]
        corpus: Vec<PathBuf>,
        /// Jaccard threshold of a true near-duplicate (and of the default verdict).
        #[arg(long, default_value_t = 0.9)]
        threshold: f64,
        /// Keep the data directory here instead of a temporary one.
        #[arg(long, value_name = "DIR")]
        keep: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Evaluate quotation search (qSign) on a corpus: recall against a naive full scan
    /// at score levels 0.5-1.0 for radii d = 0..5 and the formula's radius, candidates
    /// per sentence, and the speed-up over the naive scan and an inverted index.
    QuoteEval {
        /// Corpus: files or directories in any input format, in creation order.
        #[arg(required = true, value_name = "PATH")]
        corpus: Vec<PathBuf>,
        /// The last Q documents are the queries; the others form the collection.
        #[arg(long, default_value_t = 20)]
        queries: usize,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Run the daemon: take documents from a spool directory as they arrive (see the
    /// README's spool contract), keep the table checkpointed, recover after a crash.
    /// SIGTERM or SIGINT stops intake, checkpoints and exits 0.
    Serve {
        #[command(flatten)]
        data: DataArg,
        /// Spool directory (default DIR/spool): producers write into tmp/ and rename
        /// into new/.
        #[arg(long, value_name = "PATH")]
        spool: Option<PathBuf>,
        /// Move processed files to done/ instead of removing them.
        #[arg(long)]
        keep: bool,
        /// Larger documents go to failed/ (bytes, or with a unit such as MiB).
        #[arg(long, default_value = DEFAULT_MAX_DOC_BYTES, value_name = "SIZE")]
        max_doc_bytes: String,
        /// Checkpoint after this many documents ...
        #[arg(long, default_value_t = 1000)]
        checkpoint_docs: u64,
        /// ... or after this many seconds with new documents.
        #[arg(long, default_value_t = 30)]
        checkpoint_secs: u64,
        /// Rescan the spool at least this often (seconds), whatever the watcher says.
        #[arg(long, default_value_t = 5)]
        rescan_secs: u64,
        /// Write the log here instead of standard error; SIGHUP reopens it (rotation).
        #[arg(long, value_name = "FILE")]
        log: Option<PathBuf>,
        /// TOML file with algorithm options for a new data directory.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        #[command(flatten)]
        overrides: Overrides,
    },
    /// Verify a data directory: both checkpoint slots, the store's invariants (contiguous
    /// sequence numbers, a result for every document, no spool file admitted twice) and
    /// the table; print the table digest. Exits non-zero on any violation, naming it.
    Check {
        #[command(flatten)]
        data: DataArg,
    },
    /// List the spool files and documents that could not be processed, with reasons.
    Failed {
        #[command(flatten)]
        data: DataArg,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Measure the daemon on a corpus: end-to-end throughput from the spool to durable
    /// results (documents/s, MB/s, share of the batch `ingest` throughput) and the time
    /// to recover after a SIGKILL.
    BenchDaemon {
        /// Corpus: files or directories in any input format.
        #[arg(required = true, value_name = "PATH")]
        corpus: Vec<PathBuf>,
        /// Documents per spool file.
        #[arg(long, default_value_t = 500)]
        per_file: usize,
        /// Table size of the runs.
        #[arg(long, default_value = "64MiB")]
        table_size: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Upgrade a data directory's store to this build's schema (also done by ingest).
    Upgrade {
        #[command(flatten)]
        data: DataArg,
    },
    /// Rebuild the table by replaying the stored documents in order (after an
    /// interrupted run), checking each recomputed result against the stored one.
    Rebuild {
        #[command(flatten)]
        data: DataArg,
    },
    /// Measure throughput on a corpus: MB/s through tokenize+fingerprint+select, and
    /// table operations per second on a table far larger than the CPU caches.
    Bench {
        /// Corpus: files or directories in any input format.
        #[arg(required = true, value_name = "PATH")]
        corpus: Vec<PathBuf>,
        #[command(flatten)]
        overrides: Overrides,
        /// Directory for the temporary table file (default: the system temp dir).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

fn progress(len: u64, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template("{spinner} {msg} [{bar:30}] {pos}/{len} {per_sec} eta {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    pb.set_message(what.to_string());
    pb
}

fn print_json(v: &serde_json::Value) -> Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, v)?;
    writeln!(out)?;
    Ok(())
}

fn ingest(dir: &Path, config: Option<&Path>, overrides: Overrides, max: &str, paths: &[PathBuf]) -> Result<ExitCode> {
    let max = textorigin::config::parse_size(max).map_err(anyhow::Error::msg)?;
    let file_overrides = match config {
        Some(p) => Overrides::from_toml_file(p).map_err(anyhow::Error::msg)?,
        None => Overrides::default(),
    };
    let mut dd = DataDir::open_write(dir, &file_overrides.or(overrides))?;
    let files = expand_paths(paths);
    let pb = progress(files.len() as u64, "ingest");
    let (mut ok, mut failed) = (0u64, 0u64);
    let report = |pb: &ProgressBar, msg: String| pb.suspend(|| eprintln!("{msg}"));
    for f in files {
        pb.inc(1);
        let path = match f {
            Ok(p) => p,
            Err(e) => {
                failed += 1;
                report(&pb, format!("error: {e}"));
                continue;
            }
        };
        let docs = match read_file(&path, max) {
            Ok(d) => d,
            Err(e) => {
                failed += 1;
                report(&pb, format!("error: {e}"));
                continue;
            }
        };
        for d in docs {
            match d {
                Ok(doc) => {
                    for w in &doc.warnings {
                        report(&pb, format!("warning: {w}"));
                    }
                    match dd.ingest(&doc) {
                        Ok(_) => ok += 1,
                        Err(e) => {
                            failed += 1;
                            report(&pb, format!("error: {e:#}"));
                            if dd.poisoned() {
                                pb.finish_and_clear();
                                anyhow::bail!("stopping: the table is ahead of the store; the next `serve` or `rebuild` recovers it");
                            }
                        }
                    }
                }
                Err(e) => {
                    failed += 1;
                    report(&pb, format!("error: {e}"));
                }
            }
        }
    }
    pb.finish_and_clear();
    let stats = dd.table.stats();
    let capacity = dd.table.capacity();
    dd.close()?;
    eprintln!(
        "ingested {ok} document(s), {failed} failed; table: {} of {} entries used, {} evictions",
        stats.occupied, capacity, stats.evictions
    );
    Ok(if ok == 0 && failed > 0 { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

fn query(dir: &Path, file: &Path, json: bool, shingles: bool) -> Result<()> {
    let mut dd = DataDir::open_read_for_query(dir)?;
    let doc = read_file(file, u64::MAX)?
        .into_iter()
        .next()
        .with_context(|| format!("{}: no document", file.display()))??;
    let (r, near, quotes) = dd.query(&doc)?;
    let view = inspect::DocView { meta: None, name: &doc.name, text: &doc.text, result: &r, near: &near, quotes: &quotes };
    let v = inspect::doc_json(&dd.store, view, ViewOptions { shingles, times: false });
    if json {
        print_json(&v)
    } else {
        print!("{}", inspect::doc_text(&v));
        Ok(())
    }
}

fn export(dir: &Path, output: Option<&Path>, opt: ViewOptions) -> Result<()> {
    let dd = DataDir::open_read(dir)?;
    let mut out: Box<dyn Write> = match output {
        Some(p) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("cannot create {}", p.display()))?,
        )),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let total = dd.store.next_seq()? - 1;
    let pb = progress(total, "export");
    for meta in dd.store.docs() {
        let meta = meta?;
        let v = inspect::stored_doc_json(&dd.store, meta.seq, opt)?;
        serde_json::to_writer(&mut out, &v)?;
        out.write_all(b"\n")?;
        pb.inc(1);
    }
    pb.finish_and_clear();
    out.flush()?;
    Ok(())
}

/// Every readable document under `paths`, in order; unreadable ones are reported.
fn read_corpus(paths: &[PathBuf]) -> Result<Vec<textorigin::input::InputDoc>> {
    let mut docs = Vec::new();
    for f in expand_paths(paths) {
        for d in read_file(&f?, u64::MAX)? {
            match d {
                Ok(doc) => docs.push(doc),
                Err(e) => eprintln!("warning: skipped {e}"),
            }
        }
    }
    anyhow::ensure!(!docs.is_empty(), "the corpus has no documents");
    Ok(docs)
}

fn bench(corpus: &[PathBuf], overrides: Overrides, dir: Option<PathBuf>, json: bool) -> Result<()> {
    // The table for the operation benchmark defaults to 1 GiB: far larger than caches.
    let base = Config { table_bytes: 1 << 30, ..Config::default() };
    let cfg = overrides.apply(&base).map_err(anyhow::Error::msg)?;
    let texts: Vec<String> = read_corpus(corpus)?.into_iter().map(|d| d.text).collect();
    let tmp;
    let dir = match dir {
        Some(d) => d,
        None => {
            tmp = tempfile::tempdir()?;
            tmp.path().to_path_buf()
        }
    };
    eprintln!("measuring {} documents ...", texts.len());
    let r = textorigin::bench::run(&texts, &cfg, &dir)?;
    if json {
        print_json(&serde_json::to_value(&r)?)
    } else {
        println!(
            "corpus: {} documents, {:.1} MB, {} tokens",
            r.documents,
            r.text_bytes as f64 / 1e6,
            r.tokens
        );
        println!(
            "tokenize+fingerprint+select ({}): {:.1} MB/s ({} passes in {:.2} s; {} selected per pass)",
            r.selection, r.select_mb_per_s, r.select_passes, r.select_seconds, r.selected
        );
        println!("table ({} MiB, {} eviction), one core:", r.table_bytes >> 20, r.table_eviction);
        for (what, p) in [("cold, first touch", r.cold_pass), ("warm, hits", r.hit_pass), ("warm, new keys", r.insert_pass)] {
            println!(
                "  {what:<18} {:>10} ops in {:6.2} s = {:6.2} M ops/s ({:.0}% hits)",
                p.ops,
                p.seconds,
                p.mops_per_s,
                100.0 * p.hits as f64 / p.ops.max(1) as f64
            );
        }
        println!("  warm overall: {:.2} M ops/s", r.warm_mops_per_s);
        Ok(())
    }
}

/// The daemon's log file, reopened on SIGHUP (for log rotation).
struct LogFile {
    path: PathBuf,
    file: std::sync::Mutex<std::fs::File>,
}

impl LogFile {
    fn open(path: &Path) -> std::io::Result<std::sync::Arc<LogFile>> {
        let file = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
        Ok(std::sync::Arc::new(LogFile { path: path.to_path_buf(), file: std::sync::Mutex::new(file) }))
    }

    fn reopen(&self) {
        match std::fs::OpenOptions::new().create(true).append(true).open(&self.path) {
            Ok(f) => *self.file.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = f,
            Err(e) => eprintln!("cannot reopen log file {}: {e}", self.path.display()),
        }
    }
}

/// One log event's writer: holds the file while the event is written.
struct LogGuard<'a>(std::sync::MutexGuard<'a, std::fs::File>);

impl Write for LogGuard<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// The tracing writer over the shared log file.
struct LogWriter(std::sync::Arc<LogFile>);

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogWriter {
    type Writer = LogGuard<'a>;
    fn make_writer(&'a self) -> LogGuard<'a> {
        LogGuard(self.0.file.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
    }
}

static LOG_FILE: std::sync::OnceLock<Option<std::sync::Arc<LogFile>>> = std::sync::OnceLock::new();

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Ingest { data, config, overrides, max_doc_bytes, paths } => {
            return ingest(&data.data, config.as_deref(), overrides, &max_doc_bytes, &paths)
        }
        Command::Query { data, file, json, shingles } => query(&data.data, &file, json, shingles)?,
        Command::Report { data, html } => {
            let dd = DataDir::open_read(&data.data)?;
            let mut docs = Vec::new();
            for meta in dd.store.docs() {
                let meta = meta?;
                let r = dd.store.result(meta.seq)?.unwrap_or_default();
                let mut copied: Vec<(u64, String, u64)> = Vec::new();
                for b in &r.copied_blocks {
                    let n = u64::from(b.span.end_token - b.span.start_token);
                    match copied.iter_mut().find(|c| c.0 == b.origin) {
                        Some(c) => c.2 += n,
                        None => copied.push((b.origin, dd.store.name_of(b.origin), n)),
                    }
                }
                docs.push(textorigin::html::ReportDoc {
                    id: meta.seq,
                    name: meta.name.clone(),
                    tokens: u64::from(r.tokens),
                    old_tokens: u64::from(r.old_tokens),
                    dominant: r.dominant_origin.map(|o| (o, dd.store.name_of(o))),
                    copied_from: copied,
                });
            }
            std::fs::write(&html, textorigin::html::report_page(&docs)).with_context(|| format!("cannot write {}", html.display()))?;
            eprintln!("wrote {}", html.display());
        }
        Command::Show { data, name_or_id, json, shingles, html } => {
            let dd = DataDir::open_read(&data.data)?;
            let seq = dd.store.resolve(&name_or_id)?;
            let named = dd.store.seqs_named(&name_or_id)?;
            if named.len() > 1 {
                eprintln!("note: {} documents are named `{name_or_id}`; showing the latest (#{seq})", named.len());
            }
            let v = inspect::stored_doc_json(&dd.store, seq, ViewOptions { shingles, times: false })?;
            if let Some(path) = html {
                let text = dd.store.text(seq)?.unwrap_or_default();
                std::fs::write(&path, textorigin::html::document_page(&v, &text))
                    .with_context(|| format!("cannot write {}", path.display()))?;
                eprintln!("wrote {}", path.display());
            } else if json {
                print_json(&v)?;
            } else {
                print!("{}", inspect::doc_text(&v));
            }
        }
        Command::List { data, json } => {
            let dd = DataDir::open_read(&data.data)?;
            let rows: Vec<serde_json::Value> =
                dd.store.docs().map(|m| inspect::list_row(&dd.store, &m?)).collect::<Result<_>>()?;
            if json {
                print_json(&serde_json::Value::Array(rows))?;
            } else {
                println!("{:>6}  {:<32} {:>7} {:>6}  dominant origin", "id", "name", "tokens", "old%");
                for r in rows {
                    let tokens = r["tokens"].as_u64().unwrap_or(0);
                    let old = r["old_tokens"].as_u64().unwrap_or(0);
                    let dom = match inspect::dominant(&r) {
                        inspect::Dominant::None => "-".to_string(),
                        inspect::Dominant::Itself => "itself".to_string(),
                        inspect::Dominant::Other(id, name) => format!("#{id} {name}"),
                    };
                    println!(
                        "{:>6}  {:<32} {:>7} {:>5.1}%  {}",
                        r["id"].as_u64().unwrap_or(0),
                        r["name"].as_str().unwrap_or(""),
                        tokens,
                        if tokens > 0 { 100.0 * old as f64 / tokens as f64 } else { 0.0 },
                        dom
                    );
                }
            }
        }
        Command::Stats { data, json } => {
            let dd = DataDir::open_read(&data.data)?;
            let mut v = inspect::stats_json(&dd.store, &dd.table, dd.config())?;
            if let Some(d) = std::fs::read(data.data.join("daemon.json")).ok().and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok()) {
                v["daemon"] = d;
            }
            if json {
                print_json(&v)?;
            } else {
                print!("{}", inspect::stats_text(&v));
                if let Some(d) = v.get("daemon") {
                    println!(
                        "daemon:      pid {}, {}; {} files admitted, {} failed; last applied #{}; checkpoint generation {} at #{}; backlog {}; {:.1} documents/s",
                        d["pid"], d["state"].as_str().unwrap_or(""), d["files_admitted"], d["files_failed"], d["last_applied"],
                        d["last_checkpoint_generation"], d["last_checkpoint_seq"], d["spool_backlog"], d["documents_per_second"].as_f64().unwrap_or(0.0)
                    );
                }
            }
        }
        Command::Neardups { data, name_or_id, later, mode, json } => {
            let dd = DataDir::open_read(&data.data)?;
            let seq = dd.store.resolve(&name_or_id)?;
            let earlier = inspect::near_dups_json(&dd.store, &dd.store.near_dups(seq)?, mode);
            let mut v = serde_json::json!({ "id": seq, "name": dd.store.name_of(seq), "near_duplicates": earlier });
            if later {
                v["later"] = inspect::near_dups_json(&dd.store, &dd.store.near_dups_later(seq)?, mode);
            }
            if json {
                print_json(&v)?;
            } else {
                let list = |key: &str| v[key].as_array().cloned().unwrap_or_default();
                println!("#{seq} {}", v["name"].as_str().unwrap_or(""));
                println!("earlier near-duplicates ({}):", list("near_duplicates").len());
                print!("{}", inspect::near_dups_text(&list("near_duplicates")));
                if later {
                    println!("later near-duplicates ({}):", list("later").len());
                    print!("{}", inspect::near_dups_text(&list("later")));
                }
            }
        }
        Command::NeardupEval { corpus, threshold, keep, json } => {
            let docs = read_corpus(&corpus)?;
            let tmp = tempfile::tempdir()?;
            let dir = keep.unwrap_or_else(|| tmp.path().join("data"));
            let pb = progress(docs.len() as u64, "ingest");
            let r = textorigin::ndeval::run(&docs, threshold, &dir, |i| pb.set_position(i as u64))?;
            pb.finish_and_clear();
            if json {
                print_json(&serde_json::to_value(&r)?)?;
            } else {
                println!(
                    "{} documents, {} pairs with Jaccard >= {} ({} exact duplicates); ingest {:.1} documents/s",
                    r.documents, r.true_pairs, r.threshold, r.exact_duplicate_pairs, r.documents_per_second
                );
                println!("| verdict | reported | recall | precision | reported with J >= 0.7 |");
                println!("| --- | --- | --- | --- | --- |");
                for v in &r.verdicts {
                    println!(
                        "| {} | {} | {:.1}% | {:.1}% | {:.1}% |",
                        v.mode,
                        v.reported,
                        100.0 * v.recall,
                        100.0 * v.precision,
                        100.0 * v.precision_at_0_7
                    );
                }
            }
        }
        Command::Quotes { data, name_or_id, json } => {
            let dd = DataDir::open_read(&data.data)?;
            let seq = dd.store.resolve(&name_or_id)?;
            let full = inspect::stored_doc_json(&dd.store, seq, ViewOptions::default())?;
            let v = serde_json::json!({ "id": seq, "name": full["name"], "quotations": full["quotations"] });
            if json {
                print_json(&v)?;
            } else {
                let q = v["quotations"].as_array().cloned().unwrap_or_default();
                println!("#{seq} {}: {} quoting sentence(s)", v["name"].as_str().unwrap_or(""), q.len());
                print!("{}", inspect::quotations_text(&q));
            }
        }
        Command::Eval { corpus, selection, eviction, estimation, table_size, queries, bucket_entries, min_tokens, svg, json } => {
            use textorigin::eval::{Setup, Size};
            let all = read_corpus(&corpus)?;
            let read = all.len();
            let docs = textorigin::eval::at_least_tokens(all, min_tokens);
            if docs.len() < read {
                eprintln!("left out {} of {read} documents with fewer than {min_tokens} tokens", read - docs.len());
            }
            let replies = textorigin::eval::replies(&docs);
            let texts: Vec<String> = docs.into_iter().map(|d| d.text).collect();
            let mut setups = Vec::new();
            for s in &selection {
                for e in &eviction {
                    for t in &estimation {
                        setups.push(Setup {
                            selection: s.parse().map_err(anyhow::Error::msg)?,
                            eviction: e.parse().map_err(anyhow::Error::msg)?,
                            estimation: t.parse().map_err(anyhow::Error::msg)?,
                        });
                    }
                }
            }
            let sizes: Vec<Size> = table_size.iter().map(|s| s.parse()).collect::<Result<_, String>>().map_err(anyhow::Error::msg)?;
            let base = Config { bucket_entries, ..Config::default() };
            let tmp = tempfile::tempdir()?;
            let pb = progress((setups.len() * sizes.len()) as u64, "runs");
            pb.enable_steady_tick(std::time::Duration::from_millis(500));
            let r = textorigin::eval::run(&texts, &replies, &base, &setups, &sizes, queries, tmp.path(), |i, _| {
                pb.set_position(i as u64)
            })?;
            pb.finish_and_clear();
            if let Some(path) = svg {
                std::fs::write(&path, textorigin::eval::svg(&r)).with_context(|| format!("cannot write {}", path.display()))?;
            }
            if json {
                print_json(&serde_json::to_value(&r)?)?;
            } else {
                print!("{}", textorigin::eval::markdown(&r));
            }
        }
        Command::QuoteEval { corpus, queries, json } => {
            let docs = read_corpus(&corpus)?;
            let tmp = tempfile::tempdir()?;
            let pb = progress(0, "quote-eval");
            let r = textorigin::qeval::run(&docs, queries, &tmp.path().join("data"), |what, i, n| {
                pb.set_message(what.to_string());
                pb.set_length(n as u64);
                pb.set_position(i as u64);
            })?;
            pb.finish_and_clear();
            if json {
                print_json(&serde_json::to_value(&r)?)?;
            } else {
                println!(
                    "collection: {} documents, {} sentences; queries: {} documents, {} sentences",
                    r.collection_documents, r.collection_sentences, r.query_documents, r.query_sentences
                );
                println!(
                    "naive scan: {:.0} µs/sentence; inverted index: {:.0} µs/sentence ({:.0} candidates/sentence)",
                    r.naive_micros_per_sentence, r.inverted_micros_per_sentence, r.inverted_candidates_per_sentence
                );
                let levels: Vec<String> = textorigin::qeval::LEVELS
                    .iter()
                    .zip(&r.pairs_per_level)
                    .map(|((lo, hi), n)| format!("{lo}-{hi} ({n})"))
                    .collect();
                println!("| d | recall {} | all | candidates/sentence | µs/sentence | × naive | × inverted |", levels.join(" | "));
                println!("|{}", " --- |".repeat(levels.len() + 6));
                for row in &r.rows {
                    let rec: Vec<String> = row.recall.iter().map(|x| format!("{:.3}", x)).collect();
                    println!(
                        "| {} | {} | {:.3} | {:.1} | {:.0} | {:.0} | {:.1} |",
                        row.radius,
                        rec.join(" | "),
                        row.recall_all,
                        row.candidates_per_sentence,
                        row.micros_per_sentence,
                        row.speedup_vs_naive,
                        row.speedup_vs_inverted
                    );
                }
            }
        }
        Command::Serve { data, spool, keep, max_doc_bytes, checkpoint_docs, checkpoint_secs, rescan_secs, config, log: _, overrides } => {
            let file_overrides = match config {
                Some(p) => Overrides::from_toml_file(&p).map_err(anyhow::Error::msg)?,
                None => Overrides::default(),
            };
            let opt = textorigin::daemon::ServeOptions {
                spool: spool.unwrap_or_else(|| data.data.join("spool")),
                keep,
                max_doc_bytes: textorigin::config::parse_size(&max_doc_bytes).map_err(anyhow::Error::msg)?,
                checkpoint_docs,
                checkpoint_secs,
                rescan_secs,
                batch: 64,
            };
            let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
                signal_hook::flag::register(sig, std::sync::Arc::clone(&stop)).context("cannot install signal handlers")?;
            }
            let hup = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            signal_hook::flag::register(signal_hook::consts::SIGHUP, std::sync::Arc::clone(&hup)).context("cannot install signal handlers")?;
            let reopen = || {
                if let Some(Some(f)) = LOG_FILE.get() {
                    f.reopen();
                    tracing::info!("log file reopened");
                }
            };
            textorigin::daemon::serve(&data.data, &file_overrides.or(overrides), &opt, stop, hup, &reopen)?;
        }
        Command::Check { data } => {
            let dd = DataDir::open_read(&data.data)?;
            let mut problems = Vec::new();
            for slot in 0..2 {
                match textorigin::checkpoint::verify(&data.data, slot) {
                    Ok(m) => println!("checkpoint slot {}: generation {}, documents up to #{}", textorigin::checkpoint::slot_name(slot), m.generation, m.seq),
                    Err(e) if textorigin::checkpoint::read_meta(&data.data, slot).is_none() => println!("checkpoint slot {}: empty ({e})", textorigin::checkpoint::slot_name(slot)),
                    Err(e) => problems.push(format!("checkpoint {e}")),
                }
            }
            let next = dd.store.next_seq()?;
            let mut expected = 1;
            let mut hashes = std::collections::HashMap::new();
            for meta in dd.store.docs() {
                let meta = meta?;
                if meta.seq != expected {
                    problems.push(format!("sequence numbers are not contiguous: #{} follows #{}", meta.seq, expected - 1));
                }
                expected = meta.seq + 1;
                if dd.store.result(meta.seq)?.is_none() {
                    problems.push(format!("document #{} has no result", meta.seq));
                }
                if dd.store.text(meta.seq)?.is_none() {
                    problems.push(format!("document #{} has no text", meta.seq));
                }
                if let Some(prev) = hashes.insert((meta.source.clone(), meta.content_hash.clone(), meta.name.clone()), meta.seq) {
                    if meta.source.contains("/spool/") {
                        problems.push(format!("document #{} repeats #{prev} (same spool file and content)", meta.seq));
                    }
                }
            }
            if expected != next {
                problems.push(format!("the store's next sequence number is {next} but its last document is #{}", expected - 1));
            }
            let t = dd.table.stats();
            if !dd.table.in_use() && t.last_seq != next - 1 {
                problems.push(format!("the table holds documents up to #{} but the store up to #{}", t.last_seq, next - 1));
            }
            println!("documents: {}; table: documents up to #{}{}", next - 1, t.last_seq, if dd.table.in_use() { " (in use by a writer)" } else { "" });
            println!("table_digest: {:016x}", dd.table.digest());
            if !problems.is_empty() {
                for p in &problems {
                    eprintln!("violation: {p}");
                }
                return Ok(ExitCode::FAILURE);
            }
            println!("ok");
        }
        Command::Failed { data, json } => {
            let dd = DataDir::open_read(&data.data)?;
            let failures = dd.store.failures()?;
            if json {
                print_json(&serde_json::to_value(
                    failures.iter().map(|f| serde_json::json!({"file": f.file, "reason": f.reason, "at_ms": f.at_ms})).collect::<Vec<_>>(),
                )?)?;
            } else {
                for f in &failures {
                    println!("{}: {}", f.file, f.reason);
                }
                eprintln!("{} failure(s)", failures.len());
            }
        }
        Command::BenchDaemon { corpus, per_file, table_size, json } => {
            let docs = read_corpus(&corpus)?;
            let tmp = tempfile::tempdir()?;
            eprintln!("measuring {} documents ...", docs.len());
            let r = textorigin::daemonbench::run(&docs, per_file, &table_size, tmp.path())?;
            if json {
                print_json(&serde_json::to_value(&r)?)?;
            } else {
                println!("{} documents, {:.1} MB in {} spool files", r.documents, r.bytes as f64 / 1e6, r.files);
                println!("batch ingest: {:.2} s", r.batch_seconds);
                println!(
                    "daemon, spool to durable results: {:.2} s = {:.0} documents/s, {:.2} MB/s ({:.0}% of batch throughput)",
                    r.daemon_seconds,
                    r.daemon_docs_per_s,
                    r.daemon_mb_per_s,
                    100.0 * r.share_of_batch
                );
                println!("recovery after SIGKILL: {:.2} s ({} documents replayed)", r.recovery_seconds, r.recovery_replayed);
            }
        }
        Command::Upgrade { data } => {
            let dd = DataDir::open_write(&data.data, &Overrides::default())?;
            dd.close()?;
            eprintln!("store is at schema {}", textorigin::store::SCHEMA_VERSION);
        }
        Command::Export { data, output, times, shingles } => {
            export(&data.data, output.as_deref(), ViewOptions { shingles, times })?
        }
        Command::Rebuild { data } => {
            let pb = progress(0, "rebuild");
            let (n, bad) = DataDir::rebuild(&data.data, |i, total| {
                pb.set_length(total);
                pb.set_position(i);
            })?;
            pb.finish_and_clear();
            eprintln!("rebuilt the table from {n} document(s); {bad} recomputed result(s) differed from the stored ones");
            if bad > 0 {
                return Ok(ExitCode::FAILURE);
            }
        }
        Command::Bench { corpus, overrides, dir, json } => bench(&corpus, overrides, dir, json)?,
    }
    Ok(ExitCode::SUCCESS)
}

fn main() -> ExitCode {
    // Behave like other command-line tools when the reader of our output goes away
    // (`textorigin list | head`): die quietly on SIGPIPE instead of panicking.
    // SAFETY: resetting a signal disposition to its default before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let filter = || {
        tracing_subscriber::EnvFilter::try_from_env("TEXTORIGIN_LOG").unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"))
    };
    let log_file = match &cli.command {
        Command::Serve { log: Some(path), .. } => match LogFile::open(path.as_path()) {
            Ok(f) => Some(f),
            Err(e) => {
                eprintln!("error: cannot open log file {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
        },
        _ => None,
    };
    match &log_file {
        Some(f) => tracing_subscriber::fmt().with_env_filter(filter()).with_writer(LogWriter(std::sync::Arc::clone(f))).with_ansi(false).init(),
        None => tracing_subscriber::fmt()
            .with_env_filter(filter())
            .with_writer(std::io::stderr)
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .init(),
    }
    let _ = LOG_FILE.set(log_file);
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
