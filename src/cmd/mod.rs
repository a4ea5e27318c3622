//! One module per command: its flags (a clap `Args` struct whose doc comment is the
//! command's help) and a `run` that converts them into typed options and calls the
//! library. Nothing here knows an algorithm or a file format.

mod attributes;
pub mod backup;
pub mod bench;
pub mod bench_daemon;
pub mod check;
pub mod cluster;
pub mod eval;
pub mod export;
pub mod failed;
pub mod ingest;
pub mod list;
pub mod neardup_eval;
pub mod neardups;
mod out;
pub mod query;
pub mod quote_eval;
pub mod quotes;
pub mod rebuild;
pub mod repair;
pub mod report;
pub mod restore;
pub mod serve;
pub mod show;
pub mod stats;
pub mod upgrade;

use std::io::Write;

use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

/// `--json`: the output's format.
#[derive(clap::Args, Debug, Clone, Copy)]
pub struct Format {
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

impl Format {
    /// Prints `v` as JSON, or as `text(v)` for people.
    pub fn print<T: Serialize>(self, v: &T, text: impl FnOnce(&T) -> String) -> Result<()> {
        if self.json {
            print_json(v)
        } else {
            print!("{}", text(v));
            Ok(())
        }
    }
}

/// A progress bar on standard error for `total` bytes of input (a spinner when that is
/// not known, 0), with the rate and the time left; its message says what is done.
/// Drawn on a terminal only (hidden in a pipe).
pub fn progress_bytes(total: u64) -> ProgressBar {
    match total {
        0 => {
            let pb = ProgressBar::new_spinner();
            let style = ProgressStyle::with_template("{spinner} {msg} {bytes} read, {bytes_per_sec}");
            pb.set_style(style.expect("valid template"));
            pb
        }
        n => ProgressBar::new(n).with_style(bytes_style()),
    }
}

/// The style of a progress bar by bytes of a known total.
pub fn bytes_style() -> ProgressStyle {
    ProgressStyle::with_template("{spinner} {msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}")
        .expect("valid template")
        .progress_chars("=> ")
}

/// Progress of a replay of the stored documents (`rebuild`, the recovery of a killed
/// run's table) by the bytes of their texts, with the documents done: the replay counts
/// documents, the bytes come from their metadata, read before it starts.
pub struct ReplayProgress {
    pb: ProgressBar,
    what: &'static str,
    /// Text bytes of the documents up to each sequence number (`[0]` is 0).
    cumulative: Vec<u64>,
}

impl ReplayProgress {
    /// A progress bar for replaying the documents of data directory `dir` (a spinner
    /// by documents when its store cannot be read now).
    pub fn new(dir: &std::path::Path, what: &'static str) -> ReplayProgress {
        let mut cumulative = vec![0];
        let read = textorigin_store::storage::datadir::DataDir::open_read(dir).map(|dd| {
            for meta in dd.store().docs() {
                let Ok(meta) = meta else { return };
                let before = *cumulative.last().expect("starts with 0");
                cumulative.resize(meta.seq as usize, before);
                cumulative.push(before + meta.text_bytes);
            }
        });
        if read.is_err() {
            cumulative.truncate(1);
        }
        ReplayProgress { pb: progress_bytes(0), what, cumulative }
    }

    /// `done` of the `of` documents that end the store replayed.
    pub fn at(&self, done: u64, of: u64) {
        let last = self.cumulative.len() as u64 - 1;
        let from = last.saturating_sub(of);
        let at = |seq: u64| self.cumulative.get(seq as usize).copied().unwrap_or(0);
        if self.pb.length().is_none() && of <= last {
            self.pb.set_length(at(last) - at(from));
            self.pb.set_style(bytes_style());
        }
        self.pb.set_position(at(from + done).saturating_sub(at(from)));
        self.pb.set_message(format!("{}: {done}/{of} documents", self.what));
    }

    pub fn finish(&self) {
        self.pb.finish_and_clear();
    }
}

/// A progress bar on standard error for `len` steps of `what`.
pub fn progress(len: u64, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template("{spinner} {msg} [{bar:30}] {pos}/{len} {per_sec} eta {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    pb.set_message(what.to_string());
    pb
}

/// Prints `v` as pretty JSON on standard output, keys in sorted order (through
/// `serde_json::Value`, as every JSON view has always been printed).
pub fn print_json<T: Serialize + ?Sized>(v: &T) -> Result<()> {
    let v = serde_json::to_value(v)?;
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, &v)?;
    writeln!(out)?;
    Ok(())
}

/// Every readable document under `paths`, in order; unreadable ones are reported.
pub fn read_corpus(paths: &[std::path::PathBuf]) -> Result<Vec<textorigin_store::input::InputDoc>> {
    use textorigin_store::input::{expand_paths, read_file};
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
