use std::ops::ControlFlow;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use anyhow::{Context, Result};
use textorigin_store::error::chain;
use textorigin_store::ingest::{self, Event};
use textorigin_store::input::expand_paths;
use textorigin_store::storage::datadir::DataDir;
use textorigin_store::storage::store::Via;

use crate::args::{overrides, ConfigArgs, DataArg, LimitArgs, TakeOverArgs};

/// Process files in order and store their results. Directories are walked in
/// sorted order; `-` reads standard input (JSON lines when it starts with `{`, else one
/// text document). Formats: .txt (and any other extension: UTF-8 text), .html/.htm
/// (the main content, or all the text: --html), .json (one object with id, text or
/// html, url, published_at), .jsonl (one object per line), WARC and WET (.warc.gz: a
/// page a response record, named and linked by its URL), Parquet (a row a document:
/// --text-column, --id-column); PDF, ZIP and other binary files are refused, named. A bad file or document is reported and skipped. A document stored
/// before (the same file name and content) is skipped unless --force, so running
/// ingest twice stores nothing twice.
///
/// Ctrl-C (SIGINT), SIGTERM or SIGHUP (a closed terminal) stops it after the document being stored: the table is
/// closed cleanly and the same command run again continues (a second Ctrl-C stops at
/// once, as a kill does). After a kill (or a power cut) the next `ingest` recovers the
/// table by itself from the stored documents before it goes on, saying so.
///
/// Exit status: 0 when every document was stored (or had been before); 3 when some
/// input failed (the others were stored: see the errors printed); 130 when interrupted;
/// 1 when the command could not run (no data directory, a store failure); 2 for bad
/// arguments.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    data: DataArg,
    /// TOML file with algorithm options (same names as the flags, e.g.
    /// `selection = "nhs"`); flags override it.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(flatten)]
    flags: ConfigArgs,
    #[command(flatten)]
    limits: LimitArgs,
    /// Store documents again that were stored before (by file name and content).
    #[arg(long)]
    force: bool,
    /// A `published_at` (or `date`) that is not a date (RFC 3339, YYYY-MM-DD, YYYY
    /// or Unix seconds): `fail` the document (the default), or store it as
    /// `undated` (it then takes its arrival time, its date kept as text).
    #[arg(long, value_name = "POLICY", default_value = "fail", value_parser = ["fail", "undated"])]
    bad_dates: String,
    #[command(flatten)]
    take_over: TakeOverArgs,
    /// Files and directories, processed in the order given (`-`: standard input):
    /// .txt, .html, .json, .jsonl, .warc, .parquet, each but Parquet also gzip- or
    /// zstd-compressed (.jsonl.gz, .warc.gz, .jsonl.zst).
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
}

/// The exit status when some inputs failed and the others were stored.
pub const SOME_FAILED: u8 = 3;
/// The exit status of a run stopped by SIGINT or SIGTERM (128 + SIGINT, as shells do).
pub const INTERRUPTED: u8 = 130;

/// The flag SIGINT, SIGTERM and SIGHUP set; a second one while it is set ends the
/// process at once with [`INTERRUPTED`]. SIGHUP (the terminal closed) also sets the
/// second flag: standard error is then gone ([`quiet_after_hangup`]). Issue 53: a
/// SIGHUP killed the run with its table left in use.
fn interrupt_flag() -> Result<(Arc<AtomicBool>, Arc<AtomicBool>)> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let (flag, hup) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
    for sig in [SIGINT, SIGTERM, SIGHUP] {
        signal_hook::flag::register_conditional_shutdown(sig, i32::from(INTERRUPTED), Arc::clone(&flag))
            .and_then(|_| signal_hook::flag::register(sig, Arc::clone(&flag)))
            .context("cannot install signal handlers")?;
    }
    signal_hook::flag::register(SIGHUP, Arc::clone(&hup)).context("cannot install signal handlers")?;
    Ok((flag, hup))
}

/// After a hang-up, standard error goes to /dev/null (writes to a closed terminal fail,
/// and a failed `eprintln!` panics); once.
fn quiet_after_hangup(hup: &AtomicBool) {
    if hup.swap(false, Ordering::Relaxed) {
        let _ = textorigin_store::sys::stderr_to_null();
    }
}

/// Recovers the table of a data directory left by a killed run (marked in use, or
/// behind the store), replaying the stored documents with a progress bar, and says so.
/// An interrupt stops the replay (the next run recovers again).
fn recover(dir: &std::path::Path, interrupt: &AtomicBool) -> Result<()> {
    let pb = super::ReplayProgress::new(dir, "recovering the table");
    let recovered = DataDir::recover(dir, |i, n| {
        pb.at(i, n);
        match interrupt.load(Ordering::Relaxed) {
            true => ControlFlow::Break(()),
            false => ControlFlow::Continue(()),
        }
    });
    pb.finish();
    if let Some(r) = recovered? {
        eprintln!(
            "the table was not closed cleanly (an earlier run was interrupted): recovered it, {} stored document(s) replayed{}",
            r.replayed,
            match r.from_checkpoint {
                0 => String::new(),
                n => format!(" after the checkpoint at #{n}"),
            }
        );
        if r.mismatches > 0 {
            eprintln!("warning: {} replayed result(s) differed from the stored ones", r.mismatches);
        }
    }
    Ok(())
}

pub fn run(a: Args) -> Result<ExitCode> {
    let limits = a.limits.limits()?;
    let (interrupt, hup) = interrupt_flag()?;
    // A mistyped path makes no data directory; nor does a run that stores nothing
    // because its inputs fail (below).
    let made = !a.data.dir.exists();
    let found = expand_paths(&a.paths);
    if !a.data.dir.exists() && !found.is_empty() && found.iter().all(Result::is_err) {
        for e in found.iter().filter_map(|f| f.as_ref().err()) {
            eprintln!("error: {e}");
        }
        anyhow::bail!("no input could be read: no data directory was made at {}", a.data.dir.display());
    }
    recover(&a.data.dir, &interrupt)?;
    let policy = a.take_over.policy(&a.bad_dates)?;
    let mut dd = DataDir::open_write(&a.data.dir, &overrides(a.config.as_deref(), &a.flags)?, policy)?;
    // Progress by the bytes read of the inputs (their sizes on disk) and documents.
    let total: u64 = found.iter().flatten().filter_map(|p| std::fs::metadata(p).ok()).map(|m| m.len()).sum();
    let read = Arc::new(AtomicU64::new(0));
    let pb = super::progress_bytes(total);
    let (mut stored, mut skipped) = (0u64, 0u64);
    let show = |stored: u64, skipped: u64| {
        pb.set_position(read.load(Ordering::Relaxed));
        pb.set_message(match skipped {
            0 => format!("ingest: {stored} documents"),
            n => format!("ingest: {stored} documents ({n} stored before)"),
        });
    };
    let report = |msg: String| {
        quiet_after_hangup(&hup);
        pb.suspend(|| eprintln!("{}", textorigin_server::view::text::safe_lines(&msg)))
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    // HTML is read as the data directory says.
    let limits = textorigin_store::input::Limits { html: dd.config().html, ..limits };
    let inputs = ingest::inputs_of(found, limits, Some(Arc::clone(&read)));
    let stop = ingest::StopAt { failure: false, interrupt: Some(&interrupt) };
    let run = ingest::ingest_inputs(&mut dd, inputs, Via::Ingest, threads, a.force, stop, |e| match e {
        Event::File => show(stored, skipped),
        Event::Stored { .. } => {
            stored += 1;
            show(stored, skipped);
        }
        Event::Skipped(_) => {
            skipped += 1;
            show(stored, skipped);
        }
        Event::Warning(w) => report(format!("warning: {w}")),
        Event::Failed(e) => report(format!("error: {e}")),
    });
    quiet_after_hangup(&hup);
    pb.finish_and_clear();
    let summary = match run {
        Ok(s) => s,
        Err(ingest::IngestError::DataDir(e)) => {
            eprintln!("error: {}", chain(&e));
            anyhow::bail!("stopping: the table is ahead of the store; the next `serve` or `rebuild` recovers it");
        }
        Err(e) => return Err(e.into()),
    };
    let stats = dd.table().stats();
    let capacity = dd.table().capacity();
    dd.close()?;
    let skipped = match summary.skipped {
        0 => String::new(),
        n => format!(", {n} stored before (skipped; --force stores them again)"),
    };
    eprintln!(
        "ingested {} document(s), {} failed{skipped}; table: {} of {} entries used, {} evictions",
        summary.stored, summary.failed, stats.occupied, capacity, stats.evictions
    );
    if made && summary.stored == 0 && summary.skipped == 0 && summary.failed > 0 && !summary.interrupted {
        std::fs::remove_dir_all(&a.data.dir)
            .with_context(|| format!("cannot remove the empty data directory {}", a.data.dir.display()))?;
        eprintln!("nothing was stored: no data directory was made at {}", a.data.dir.display());
        return Ok(ExitCode::from(SOME_FAILED));
    }
    if summary.interrupted {
        eprintln!("interrupted: the table is closed cleanly; run the same command again to continue (what was stored is skipped)");
        return Ok(ExitCode::from(INTERRUPTED));
    }
    Ok(if summary.failed > 0 { ExitCode::from(SOME_FAILED) } else { ExitCode::SUCCESS })
}
