//! `textorigin serve`: the long-running process that takes documents from a spool.
//!
//! **Spool contract** (Maildir-style): producers write a file into `SPOOL/tmp/` and
//! rename it into `SPOOL/new/` (same filesystem, so the rename is atomic). The daemon
//! watches `new/` (inotify through `notify`), and also scans it at start, every
//! `rescan` seconds and after each batch, so no file is missed even when the watcher
//! overflows. Files found together are taken in file-name order.
//!
//! **Admission, exactly once**: a file is read whole and keyed by xxh3-128 of its name
//! and bytes. Each of its documents is stored (with its results) in one RocksDB batch
//! that also records "k of n documents of this file are stored". After a batch of files
//! the RocksDB log is fsynced (group commit); only then are the files removed from
//! `new/` (or moved to `done/` with `--keep`) and the directory fsynced. A file seen
//! again (crash between commit and unlink) continues after its stored documents, so no
//! document is stored twice or lost.
//!
//! **Bad input** (unreadable, binary, empty, token-less, malformed JSON, over
//! `--max-doc-bytes`) goes to `SPOOL/failed/` with a `.reason` file beside it and a
//! record in RocksDB (`textorigin failed`); the good documents of a partly bad JSONL file
//! are still processed. A write error keeps the files in the spool and is retried; a
//! failed fsync stops the daemon (its state is then unknown) and the restart recovers.
//!
//! **Checkpoints and recovery** ([`crate::checkpoint`]): every `--checkpoint-docs`
//! documents or `--checkpoint-secs` seconds, and at shutdown. At start, a table that is
//! not in step with the store (a crash) is restored from the newest valid checkpoint
//! and the stored documents after it are replayed ([`DataDir::recover`]).
//!
//! **Pipeline**: parser threads (`parse-N`, one a core) read and parse the files of a
//! batch in parallel from a bounded queue and prepare their documents (tokens, Rabin
//! fingerprints, selection, near-duplicate sketch, sentences); the calling thread
//! applies them strictly in file-name order (index lookups, the table, estimation, the
//! store), then group-commits. A parser that dies stops the daemon with an error, never a hang.
//!
//! **Signals**: SIGTERM and SIGINT stop intake, finish the current batch, checkpoint and
//! exit 0; SIGHUP reopens the log file. One daemon per data directory (RocksDB's lock).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use xxhash_rust::xxh3::xxh3_128;

use crate::config::Overrides;
use crate::datadir::DataDir;
use crate::input::parse_bytes;
use crate::store::{Admission, Failure};

/// Options of `serve`.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub spool: PathBuf,
    pub keep: bool,
    pub max_doc_bytes: u64,
    pub checkpoint_docs: u64,
    pub checkpoint_secs: u64,
    pub rescan_secs: u64,
    /// Files per group commit.
    pub batch: usize,
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

fn sync_dir(dir: &Path) -> Result<()> {
    std::fs::File::open(dir).and_then(|d| d.sync_all()).with_context(|| format!("fsync of directory {} failed", dir.display()))
}

/// Files in `dir` in name order (dot files skipped).
fn list(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read spool directory {}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .collect();
    out.sort();
    Ok(out)
}

/// What became of a spool file.
enum Outcome {
    /// Every document stored (or stored before).
    Done,
    /// Some or all of it failed: reasons for the `.reason` file.
    Failed(Vec<String>),
    /// Not processed now (an I/O error): stays in the spool.
    Keep,
}

/// Daemon counters, written to `DATA/daemon.json` for `stats`.
#[derive(Debug, Default, serde::Serialize)]
struct Status {
    pid: u32,
    state: String,
    started_at_ms: u64,
    files_admitted: u64,
    files_failed: u64,
    documents_applied_this_run: u64,
    last_applied: u64,
    last_checkpoint_generation: u64,
    last_checkpoint_seq: u64,
    spool_backlog: usize,
    documents_per_second: f64,
    /// At start: the checkpoint the table was restored from and the documents replayed.
    recovered_from_checkpoint: Option<u64>,
    replayed: u64,
}

fn write_status(dir: &Path, s: &Status) {
    let tmp = dir.join(".daemon.json.tmp");
    if let Ok(json) = serde_json::to_vec_pretty(s) {
        if std::fs::write(&tmp, json).is_ok() {
            let _ = std::fs::rename(&tmp, dir.join("daemon.json"));
        }
    }
}

/// Runs the daemon until SIGTERM/SIGINT (or `stop` is set).
pub fn serve(
    dir: &Path,
    overrides: &Overrides,
    opt: &ServeOptions,
    stop: Arc<AtomicBool>,
    hup: Arc<AtomicBool>,
    on_hup: &dyn Fn(),
) -> Result<()> {
    for sub in ["tmp", "new", "failed", "done"] {
        std::fs::create_dir_all(opt.spool.join(sub)).with_context(|| format!("cannot create {}", opt.spool.join(sub).display()))?;
    }
    std::fs::create_dir_all(dir)?;
    let recovery = DataDir::recover(dir, |i, n| {
        if i == n || i % 1000 == 0 {
            tracing::warn!(replayed = i, of = n, "replaying documents after the last checkpoint");
        }
    })?;
    if let Some((from, n, bad)) = recovery {
        tracing::warn!(from_checkpoint = from, replayed = n, mismatches = bad, "recovered the table after an unclean stop");
        anyhow::ensure!(bad == 0, "{bad} replayed result(s) differ from the stored ones: refusing to continue");
    }
    let mut dd = DataDir::open_write(dir, overrides)?;
    let new_dir = opt.spool.join("new");
    let (tx, rx) = crossbeam_channel::bounded::<()>(1);
    let mut watcher = notify::recommended_watcher(move |_res: notify::Result<notify::Event>| {
        // Any event (or an overflow error) means: scan. A full channel already says so.
        let _ = tx.try_send(());
    })
    .context("cannot start the spool watcher")?;
    {
        use notify::Watcher;
        watcher.watch(&new_dir, notify::RecursiveMode::NonRecursive).context("cannot watch the spool")?;
    }
    let mut status = Status {
        pid: std::process::id(),
        state: "running".into(),
        started_at_ms: now_ms(),
        recovered_from_checkpoint: recovery.map(|r| r.0),
        replayed: recovery.map_or(0, |r| r.1),
        ..Status::default()
    };
    if let Some((_, m)) = crate::checkpoint::newest_valid(dir) {
        status.last_checkpoint_generation = m.generation;
        status.last_checkpoint_seq = m.seq;
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 8);
    let parsers = Parsers::start(threads, opt.batch, opt.max_doc_bytes, &dd.preparer())?;
    let started = Instant::now();
    let mut since_checkpoint = 0u64;
    let mut last_checkpoint = Instant::now();
    tracing::info!(spool = %opt.spool.display(), "serving");
    loop {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        if hup.swap(false, Ordering::SeqCst) {
            on_hup();
        }
        let files = list(&new_dir)?;
        status.spool_backlog = files.len();
        if files.is_empty() {
            write_status(dir, &status);
            if since_checkpoint > 0 && last_checkpoint.elapsed().as_secs() >= opt.checkpoint_secs {
                checkpoint(&mut dd, &mut status)?;
                since_checkpoint = 0;
                last_checkpoint = Instant::now();
            }
            let _ = rx.recv_timeout(Duration::from_secs(opt.rescan_secs.max(1)).min(Duration::from_millis(500)));
            continue;
        }
        let mut outcomes = Vec::new();
        let batch: Vec<PathBuf> = files.into_iter().take(opt.batch).collect();
        for parsed in parsers.parse(batch)? {
            if stop.load(Ordering::SeqCst) {
                break;
            }
            let path = parsed.path.clone();
            let before = dd.store.next_seq()?;
            let outcome = apply_file(&mut dd, parsed)?;
            let applied = dd.store.next_seq()? - before;
            status.documents_applied_this_run += applied;
            since_checkpoint += applied;
            outcomes.push((path, outcome));
        }
        // Group commit: the documents are durable before their files leave the spool. A
        // failed fsync leaves unknown state behind: stop; the restart recovers.
        crate::failpoint::hit("store.sync")
            .map_err(anyhow::Error::from)
            .and_then(|()| dd.store.sync().map_err(anyhow::Error::from))
            .context("fsync of the store log failed: stopping (the restart recovers)")?;
        crate::failpoint::hit("spool.after-sync")?;
        let mut touched_failed = false;
        let kept = outcomes.iter().filter(|o| matches!(o.1, Outcome::Keep)).count();
        for (path, outcome) in outcomes {
            let name = path.file_name().expect("spool files have names").to_owned();
            match outcome {
                Outcome::Done => {
                    status.files_admitted += 1;
                    if opt.keep {
                        std::fs::rename(&path, opt.spool.join("done").join(&name))?;
                    } else {
                        std::fs::remove_file(&path)?;
                    }
                }
                Outcome::Failed(reasons) => {
                    status.files_failed += 1;
                    touched_failed = true;
                    let target = opt.spool.join("failed").join(&name);
                    let mut reason_path = target.clone().into_os_string();
                    reason_path.push(".reason");
                    std::fs::write(&reason_path, reasons.join("\n") + "\n")?;
                    std::fs::rename(&path, &target)?;
                }
                Outcome::Keep => {}
            }
        }
        crate::failpoint::hit("spool.after-unlink")?;
        sync_dir(&new_dir)?;
        if touched_failed {
            sync_dir(&opt.spool.join("failed"))?;
        }
        if opt.keep {
            sync_dir(&opt.spool.join("done"))?;
        }
        status.last_applied = dd.table.stats().last_seq;
        dd.table.publish_counters()?; // live `stats` readers see the table's counters
        status.documents_per_second = status.documents_applied_this_run as f64 / started.elapsed().as_secs_f64().max(1e-9);
        if since_checkpoint >= opt.checkpoint_docs || last_checkpoint.elapsed().as_secs() >= opt.checkpoint_secs {
            checkpoint(&mut dd, &mut status)?;
            since_checkpoint = 0;
            last_checkpoint = Instant::now();
        }
        if dd.poisoned() {
            // The table applied a document the store did not take: go back to the last
            // checkpoint and replay, as after a crash, then try the kept files again.
            let (overrides, dir_path) = (overrides.clone(), dd.dir.clone());
            drop(dd);
            let r = DataDir::recover(&dir_path, |_, _| {})?;
            tracing::warn!(?r, "recovered the table after a failed store write");
            dd = DataDir::open_write(&dir_path, &overrides)?;
        }
        if kept > 0 {
            // A read or write error (a full disk, say): the files stay in the spool; say
            // so and try again shortly rather than spin.
            status.state = format!("degraded: {kept} file(s) could not be processed; retrying");
            write_status(dir, &status);
            let _ = rx.recv_timeout(Duration::from_secs(1));
        } else {
            status.state = "running".into();
            write_status(dir, &status);
        }
    }
    tracing::info!("stopping: final checkpoint");
    checkpoint(&mut dd, &mut status)?;
    status.state = "stopped".into();
    write_status(dir, &status);
    dd.close()
}

fn checkpoint(dd: &mut DataDir, status: &mut Status) -> Result<()> {
    dd.table.flush()?;
    dd.store.sync().context("fsync of the store log failed")?;
    let seq = dd.table.stats().last_seq;
    let m = crate::checkpoint::write(&dd.dir, dd.table.path(), seq)?;
    status.last_checkpoint_generation = m.generation;
    status.last_checkpoint_seq = m.seq;
    tracing::info!(generation = m.generation, seq, "checkpoint");
    Ok(())
}

/// A spool file as a parser thread leaves it for the apply thread.
struct Parsed {
    path: PathBuf,
    name: String,
    source: String,
    key: u128,
    content: Content,
}

enum Content {
    /// Gone, or unreadable now: stays in the spool (if it is still there).
    Keep,
    /// The whole file fails: the reason.
    Fails(String),
    /// Its documents, prepared (or per-document errors).
    Docs(Vec<std::result::Result<(crate::input::InputDoc, crate::datadir::Prepared), crate::input::InputError>>),
}

/// Reads and parses one spool file (on a parser thread: no store access).
fn parse_file(path: &Path, max: u64, preparer: &mut crate::datadir::Preparer) -> Parsed {
    let _ = crate::failpoint::hit("parse");
    let source = path.display().to_string();
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let ext = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    let done = |key: u128, content: Content| Parsed { path: path.to_path_buf(), name: name.clone(), source: source.clone(), key, content };
    let len = match std::fs::metadata(path) {
        Ok(m) => m.len(),
        Err(e) => {
            if e.kind() != std::io::ErrorKind::NotFound {
                tracing::error!(file = %source, error = %e, "cannot read; left in the spool");
            }
            return done(0, Content::Keep);
        }
    };
    if len > max && ext != "jsonl" {
        let key = xxh3_128(format!("{name}\0size {len}").as_bytes());
        return done(key, Content::Fails(format!("{source}: {len} bytes is over the limit of {max} bytes")));
    }
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            tracing::error!(file = %source, error = %e, "cannot read; left in the spool");
            return done(0, Content::Keep);
        }
    };
    let mut keyed = name.as_bytes().to_vec();
    keyed.push(0);
    keyed.extend_from_slice(&bytes);
    let key = xxh3_128(&keyed);
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| name.clone());
    match parse_bytes(&bytes, &ext, &stem, &source, max) {
        Ok(docs) if docs.is_empty() => done(key, Content::Fails(format!("{source}: no documents"))),
        Ok(docs) => done(
            key,
            Content::Docs(
                docs.into_iter()
                    .map(|d| {
                        d.map(|doc| {
                            let p = preparer.prepare(&doc.text);
                            (doc, p)
                        })
                    })
                    .collect(),
            ),
        ),
        Err(e) => done(key, Content::Fails(e.to_string())),
    }
}

/// Admits one parsed spool file on the apply thread: stores its documents not stored
/// yet, records failures.
fn apply_file(dd: &mut DataDir, p: Parsed) -> Result<Outcome> {
    let Parsed { name, source, key, content, .. } = p;
    let docs = match content {
        Content::Keep => return Ok(Outcome::Keep),
        Content::Fails(reason) => {
            if dd.store.admitted(key)?.is_some() {
                return Ok(Outcome::Failed(vec![format!("{reason} (recorded before)")]));
            }
            tracing::warn!(file = %source, %reason, "failed");
            dd.store.put_failure(Some(Admission { key, done: 0, total: 0 }), &Failure { file: name, reason: reason.clone(), at_ms: now_ms() })?;
            return Ok(Outcome::Failed(vec![reason]));
        }
        Content::Docs(docs) => docs,
    };
    let (done, total) = dd.store.admitted(key)?.unwrap_or((0, u32::MAX));
    if total == 0 {
        return Ok(Outcome::Failed(vec![format!("{source}: failed before (see `textorigin failed`)")]));
    }
    if total != u32::MAX && done >= total {
        return Ok(Outcome::Done); // stored before the last crash; only the unlink was missing
    }
    let total = docs.len() as u32;
    let mut reasons = Vec::new();
    for (i, d) in docs.into_iter().enumerate() {
        let i = i as u32;
        if i < done {
            continue;
        }
        let admission = Admission { key, done: i + 1, total };
        crate::failpoint::hit("admit.before-commit")?;
        let failure = match d {
            Ok((doc, prepared)) => match dd.ingest_prepared(&doc, prepared, Some(admission)) {
                Ok(_) => None,
                Err(e) if e.downcast_ref::<crate::datadir::DocError>().is_some() => Some(e.to_string()),
                Err(e) => {
                    // A write error: leave the file; the next scan continues after what is stored.
                    tracing::error!(file = %source, error = %format!("{e:#}"), "store write failed; file left in the spool");
                    return Ok(Outcome::Keep);
                }
            },
            Err(e) => Some(e.to_string()),
        };
        crate::failpoint::hit("admit.after-commit")?;
        if let Some(reason) = failure {
            tracing::warn!(file = %source, %reason, "document failed");
            dd.store.put_failure(Some(admission), &Failure { file: name.clone(), reason: reason.clone(), at_ms: now_ms() })?;
            reasons.push(reason);
        }
    }
    Ok(if reasons.is_empty() { Outcome::Done } else { Outcome::Failed(reasons) })
}

/// The parser threads: bounded queues in and out, so a slow apply thread holds back
/// reading; a parser that dies sets `dead`, and the apply thread stops with an error.
struct Parsers {
    jobs: crossbeam_channel::Sender<(usize, PathBuf)>,
    results: crossbeam_channel::Receiver<(usize, Parsed)>,
    dead: Arc<AtomicBool>,
}

/// Sets `dead` if its thread unwinds.
struct Bomb(Arc<AtomicBool>);

impl Drop for Bomb {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::SeqCst);
        }
    }
}

impl Parsers {
    fn start(threads: usize, capacity: usize, max: u64, preparer: &crate::datadir::Preparer) -> Result<Parsers> {
        let (jobs, job_rx) = crossbeam_channel::bounded::<(usize, PathBuf)>(capacity);
        let (result_tx, results) = crossbeam_channel::bounded::<(usize, Parsed)>(capacity);
        let dead = Arc::new(AtomicBool::new(false));
        for t in 0..threads {
            let (job_rx, result_tx, bomb) = (job_rx.clone(), result_tx.clone(), Bomb(Arc::clone(&dead)));
            let mut preparer = preparer.clone();
            std::thread::Builder::new().name(format!("parse-{t}")).spawn(move || {
                let _bomb = bomb;
                for (i, path) in job_rx {
                    if result_tx.send((i, parse_file(&path, max, &mut preparer))).is_err() {
                        break;
                    }
                }
            })?;
        }
        Ok(Parsers { jobs, results, dead })
    }

    /// Parses `files` on the parser threads; returns them in the given order.
    fn parse(&self, files: Vec<PathBuf>) -> Result<Vec<Parsed>> {
        let n = files.len();
        let mut out: Vec<Option<Parsed>> = (0..n).map(|_| None).collect();
        let mut sent = 0;
        let mut received = 0;
        let mut pending = files.into_iter().enumerate();
        let mut next = pending.next();
        while received < n {
            if let Some((i, path)) = next.take() {
                match self.jobs.try_send((i, path)) {
                    Ok(()) => {
                        sent += 1;
                        next = pending.next();
                        continue;
                    }
                    Err(crossbeam_channel::TrySendError::Full(job)) => next = Some(job),
                    Err(crossbeam_channel::TrySendError::Disconnected(_)) => anyhow::bail!("the parser threads are gone"),
                }
            }
            match self.results.recv_timeout(Duration::from_millis(100)) {
                Ok((i, p)) => {
                    out[i] = Some(p);
                    received += 1;
                }
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                    anyhow::ensure!(!self.dead.load(Ordering::SeqCst), "a parser thread died: stopping the daemon");
                }
                Err(crossbeam_channel::RecvTimeoutError::Disconnected) => anyhow::bail!("the parser threads are gone"),
            }
        }
        debug_assert_eq!(sent, n);
        Ok(out.into_iter().map(|p| p.expect("every file parsed")).collect())
    }
}
