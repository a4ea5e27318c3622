//! `textorigin serve`: the long-running process that takes documents from a spool.
//!
//! **Spool contract** (Maildir-style): producers write a file into `SPOOL/tmp/` and
//! rename it into `SPOOL/new/` (same filesystem, so the rename is atomic). The daemon
//! watches `new/` (inotify through `notify`), and also scans it at start, every
//! `rescan` seconds and after each batch, so no file is missed even when the watcher
//! overflows. Files found together are taken in file-name order.
//!
//! **Admission, exactly once**: a file is keyed by xxh3-128 of its name and bytes (hashed
//! as it is read, never held whole). Each of its documents is stored (with its results)
//! in one RocksDB batch that also records "k documents of this file are stored" (and,
//! at its end, how many it holds). After a batch of files
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
//! **Checkpoints and recovery** ([`textorigin_store::storage::checkpoint`]): every `--checkpoint-docs`
//! documents or `--checkpoint-secs` seconds, and at shutdown. At start, a table that is
//! not in step with the store (a crash) is restored from the newest valid checkpoint
//! and the stored documents after it are replayed ([`DataDir::recover`]).
//!
//! **Pipeline**: the reader thread opens a batch's files in name order and reads their
//! documents one at a time (decoding compressed ones within the input limits); parser
//! threads (`prep-N`, one a core, [`textorigin_store::pipeline`]) prepare them from a
//! bounded queue (tokens, Rabin fingerprints, selection, near-duplicate sketch,
//! sentences); the calling thread applies them strictly in order (index lookups, the
//! table, estimation, the store), then group-commits: a file of any size costs the
//! memory of a few documents. A reader or parser that dies stops the daemon with an
//! error, never a hang.
//!
//! **Signals**: SIGTERM and SIGINT stop intake after the document being applied (a file
//! cut short continues after its stored documents at the next start), commit,
//! checkpoint and exit 0; SIGHUP reopens the log file and reads the settings that can
//! change while it runs again ([`Live`], and the HTTP token). One daemon per data directory
//! (RocksDB's lock).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use textorigin_core::config::Overrides;

use textorigin_store::clock;
use textorigin_store::error::{IoContext, IoError};
use textorigin_store::intake::Policy;
use textorigin_store::storage::checkpoint::CheckpointError;
use textorigin_store::storage::datadir::{DataDir, DataDirError, Recovery};
use textorigin_store::storage::store::StoreError;
use textorigin_store::storage::table_file::TableError;

mod reading;
mod recovery;
mod sd_notify;
mod spool;

use recovery::{pause, recover, recover_poisoned, Backoff};
use sd_notify::{Pulse, WatchdogDone};

use crate::layout;
use crate::share::StoreShare;
use crate::status::{self, DaemonState, DaemonStatus, StatusFile};
use spool::Outcome;

/// Options of `serve`.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub spool: PathBuf,
    /// What SIGHUP may change while the daemon runs.
    pub live: Live,
    /// A document's size, and what a compressed file may decode to.
    pub limits: textorigin_store::input::Limits,
    /// How documents are taken in (`--bad-dates`, `--take-over`, `--revision-budget`:
    /// the revisions beyond the budget are drained a budget at a time while idle).
    pub policy: Policy,
    /// Files per group commit.
    pub batch: usize,
    /// Where the daemon publishes its open store for other threads (the HTTP
    /// inspector): set once the data directory is open, replaced after a recovery,
    /// emptied while recovering.
    pub share: Option<StoreShare>,
    /// Set while a document is being applied ([`stop_within`] watches it).
    pub applying: Arc<AtomicBool>,
    /// The bytes of text under analysis at once, shared with the HTTP queries.
    pub budget: Arc<crate::budget::MemoryBudget>,
}

/// The settings of `serve` that can change while it runs: SIGHUP reads them again
/// (`serve`'s `on_hup`), and the next step of the loop follows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Live {
    /// Move admitted files to `done/` instead of removing them.
    pub keep: bool,
    /// Checkpoint after this many documents ...
    pub checkpoint_docs: u64,
    /// ... or this many seconds with new documents.
    pub checkpoint_secs: u64,
    /// Rescan the spool at least this often, whatever the watcher says.
    pub rescan_secs: u64,
}

/// How long a stop waits for the document being applied ([`stop_within`]).
pub const STOP_GRACE: Duration = Duration::from_secs(2);

/// Watches a stop: once `stop` is set, if a document is still being applied
/// `STOP_GRACE` later, the process exits at once (status 0), the document abandoned.
/// Nothing is lost: its file is still in the spool, and the table, left marked in use,
/// is recovered at the next start as after a crash (SIGTERM waited 265 s for
/// a 16 MB document). Runs on a thread of its own until the process ends.
pub fn stop_within(stop: Arc<AtomicBool>, applying: Arc<AtomicBool>) {
    std::thread::spawn(move || {
        while !stop.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(100));
        }
        let asked = Instant::now();
        while applying.load(Ordering::SeqCst) {
            if asked.elapsed() >= STOP_GRACE {
                tracing::warn!(
                    "stopping now: the document being applied is abandoned; its file stays in the spool and the next start recovers the table as after a crash"
                );
                std::process::exit(0);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    });
}

/// Why the daemon stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    #[error(transparent)]
    Io(#[from] IoError),
    #[error(transparent)]
    DataDir(#[from] DataDirError),
    #[error(transparent)]
    Table(#[from] TableError),
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    #[error("{0}")]
    Watcher(String, #[source] notify::Error),
    #[error("{0} replayed result(s) differ from the stored ones: refusing to continue")]
    ReplayMismatch(u64),
    #[error("fsync of the store log failed: stopping (the restart recovers)")]
    Fsync(#[source] StoreError),
    #[error("a parser thread died: stopping the daemon")]
    ParserDied,
}

type Result<T> = std::result::Result<T, DaemonError>;

fn sync_dir(dir: &Path) -> Result<()> {
    Ok(std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .io(|| format!("fsync of directory {} failed", dir.display()))?)
}

/// The spool watcher: any event (or an overflow error) means "scan"; the channel holds
/// one wake-up, so bursts coalesce.
fn watch(new_dir: &Path) -> Result<(notify::RecommendedWatcher, crossbeam_channel::Receiver<()>)> {
    use notify::Watcher;
    let (tx, rx) = crossbeam_channel::bounded::<()>(1);
    let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        // Arrivals (create, rename into) and errors (an overflow) wake the loop; reads
        // do not: listing `new/` and reading its files would wake it again and again.
        if !matches!(res, Ok(notify::Event { kind: notify::EventKind::Access(_), .. })) {
            let _ = tx.try_send(());
        }
    })
    .map_err(|e| DaemonError::Watcher("cannot start the spool watcher".into(), e))?;
    watcher
        .watch(new_dir, notify::RecursiveMode::NonRecursive)
        .map_err(|e| DaemonError::Watcher("cannot watch the spool".into(), e))?;
    Ok((watcher, rx))
}

/// Bytes of spool files one batch holds at most (one larger file is a batch of its
/// own): a batch's memory is bounded in bytes, not in files.
const BATCH_BYTES: u64 = 64 << 20;

/// How often the status and the table's counters are published while a batch is
/// applied (a large file is one batch: its documents show as they are applied).
const PROGRESS_EVERY: Duration = Duration::from_millis(500);

/// The next batch: up to `max` of `files`, in order, within [`BATCH_BYTES`] (sizes from
/// `lstat`; a file that is not regular counts 0 and is quarantined when read).
fn next_batch(files: impl Iterator<Item = PathBuf>, max: usize) -> Vec<PathBuf> {
    let mut batch = Vec::new();
    let mut bytes = 0u64;
    for f in files.take(max) {
        let len = std::fs::symlink_metadata(&f).map_or(0, |m| if m.is_file() { m.len() } else { 0 });
        if !batch.is_empty() && bytes + len > BATCH_BYTES {
            break;
        }
        bytes += len;
        batch.push(f);
    }
    batch
}

/// The running daemon's bookkeeping: its status, and when it last checkpointed. (The
/// data directory is kept apart: recovery must close it and open it again.)
struct Daemon<'a> {
    opt: &'a ServeOptions,
    status: DaemonStatus,
    status_file: StatusFile,
    started: Instant,
    since_checkpoint: u64,
    last_checkpoint: Instant,
    /// When the status and the table's counters were last published within a batch.
    last_progress: Instant,
    /// `new/`, its watcher (kept alive: dropping it ends the watch) and its wake-ups.
    new_dir: PathBuf,
    watcher: notify::RecommendedWatcher,
    wakeups: crossbeam_channel::Receiver<()>,
    /// Files that could not be processed, and when they are tried again.
    retry: HashMap<PathBuf, Instant>,
    backoff: Backoff,
    /// What the watchdog thread reads of this loop's steps.
    pulse: Arc<Pulse>,
    /// The settings as the last SIGHUP left them.
    live: Live,
}

/// What admitting a batch's files came to ([`Daemon::admit`]).
struct Admitted {
    /// Each file's outcome, in order.
    outcomes: Vec<(PathBuf, Outcome)>,
    /// The files submitted over HTTP, with their marks.
    marks: HashMap<PathBuf, PathBuf>,
}

/// The parser threads' work: the documents of a batch's files, read as they are taken,
/// prepared on `threads` threads ([`textorigin_store::pipeline`]) and handed over in
/// order.
struct Parsers {
    threads: usize,
    limits: textorigin_store::input::Limits,
    preparer: textorigin_store::storage::datadir::Preparer,
    /// The reader's record of what it is reading ([`reading`]).
    watch: Arc<reading::Watch>,
}

/// The status at start: this process, what recovery did, the newest checkpoint.
fn initial_status(dir: &Path, recovery: Option<Recovery>) -> DaemonStatus {
    let mut status = DaemonStatus {
        pid: std::process::id(),
        state: DaemonState::Running,
        started_at_ms: clock::now_ms(),
        recovered_from_checkpoint: recovery.map(|r| r.from_checkpoint),
        replayed: recovery.map_or(0, |r| r.replayed),
        ..DaemonStatus::default()
    };
    if let Some((_, m)) = textorigin_store::storage::checkpoint::newest_valid(dir) {
        status.last_checkpoint_generation = m.generation;
        status.last_checkpoint_seq = m.seq;
    }
    status
}

/// How long an idle daemon waits after its last document before it checkpoints the
/// documents since its last checkpoint (if --checkpoint-secs does not come first).
pub const IDLE_CHECKPOINT: Duration = Duration::from_secs(5);

/// Runs the daemon until SIGTERM/SIGINT (or `stop` is set).
pub fn serve(
    dir: &Path,
    overrides: &Overrides,
    opt: &ServeOptions,
    stop: Arc<AtomicBool>,
    hup: Arc<AtomicBool>,
    on_hup: &mut dyn FnMut(&mut Live),
) -> Result<()> {
    layout::create(&opt.spool)?;
    std::fs::create_dir_all(dir).io(|| format!("cannot create {}", dir.display()))?;
    let pulse = Arc::new(Pulse::default());
    let recovery = match recover(dir, &stop, &pulse) {
        Err(DaemonError::DataDir(DataDirError::Interrupted)) => {
            tracing::warn!("stopped during recovery; the next start resumes it");
            return Ok(());
        }
        r => r?,
    };
    let mut dd = DataDir::open_write(dir, overrides, opt.policy.clone())?;
    let new_dir = opt.spool.join(layout::NEW);
    let (watcher, wakeups) = watch(&new_dir)?;
    let limits = textorigin_store::input::Limits { html: dd.config().html, ..opt.limits }; // HTML as the data directory reads it
    let parsers = Parsers {
        threads: textorigin_store::pipeline::worker_threads(),
        limits,
        preparer: dd.preparer(),
        watch: Arc::new(reading::Watch::open(&opt.spool)),
    };
    let mut status = initial_status(dir, recovery);
    // What the table had applied before this start (it read 0 until the first
    // document of the run).
    status.last_applied = dd.table().stats().last_seq;
    status.files_failed = dd.store().files_failed().unwrap_or(0);
    let mut d = Daemon {
        opt,
        status,
        status_file: StatusFile::new(dir),
        started: Instant::now(),
        since_checkpoint: 0,
        last_checkpoint: Instant::now(),
        last_progress: Instant::now(),
        new_dir,
        watcher,
        wakeups,
        retry: HashMap::new(),
        backoff: Backoff::default(),
        pulse: Arc::clone(&pulse),
        live: opt.live,
    };
    d.share(Some(&dd));
    // A replayed table, or one no checkpoint holds (a batch run's, a new one), is a new
    // recovery point: a second crash need not replay, a query beside it starts there.
    if recovery.is_some() || !dd.checkpointed() {
        d.checkpoint(&mut dd)?;
    }
    tracing::info!(data = %dir.display(), spool = %opt.spool.display(), "serving");
    let notifier = Arc::new(sd_notify::Notifier::from_env());
    notifier.ready(&format!("serving {}", opt.spool.display()));
    let watchdog = WatchdogDone::default();
    notifier.watch(Arc::clone(&pulse), Arc::clone(&watchdog.0));
    loop {
        pulse.beat();
        if stop.load(Ordering::SeqCst) {
            break;
        }
        if hup.swap(false, Ordering::SeqCst) {
            on_hup(&mut d.live);
        }
        let Some(files) = d.scan(&stop) else { continue };
        let batch = d.next_batch(files);
        if batch.is_empty() {
            d.idle(&mut dd, &notifier)?;
            continue;
        }
        let kept = d.batch(&mut dd, &parsers, batch, &stop)?;
        if let Some(s) = &opt.share {
            s.set_telemetry(&dd);
        }
        if dd.poisoned() {
            dd = d.recover_table(dd, dir, overrides, kept.len(), &stop)?;
            continue;
        }
        d.keep(kept);
    }
    tracing::info!("stopping: final checkpoint");
    notifier.stopping();
    d.checkpoint(&mut dd)?;
    d.status.state = DaemonState::Stopped;
    d.status_file.write(&d.status);
    Ok(dd.close()?)
}

impl Daemon<'_> {
    /// Publishes the open store to the HTTP readers (None: recovering).
    fn share(&self, dd: Option<&DataDir>) {
        if let Some(s) = &self.opt.share {
            s.set(dd.map(DataDir::shared_store));
        }
    }

    /// Step: the files waiting in `new/`, in name order. A spool that cannot be read
    /// (removed, its permissions changed) is no reason to stop serving: the daemon
    /// says so, recreates what it may, watches it anew and tries again after a pause
    /// (None).
    fn scan(&mut self, stop: &AtomicBool) -> Option<Vec<PathBuf>> {
        match spool::list(&self.new_dir) {
            Ok(files) => {
                if self.status.state == DaemonState::NoSpool {
                    tracing::info!(spool = %self.opt.spool.display(), "the spool can be read again");
                    self.backoff.reset();
                }
                self.status.spool_backlog = files.len();
                Some(files)
            }
            Err(e) => {
                if self.status.state != DaemonState::NoSpool {
                    tracing::error!(error = %textorigin_store::error::chain(&e), "the spool cannot be read; recreating it and retrying");
                }
                self.status.state = DaemonState::NoSpool;
                self.status_file.write(&self.status);
                if let Err(e) = layout::create(&self.opt.spool) {
                    tracing::debug!(error = %textorigin_store::error::chain(&e), "cannot recreate the spool yet");
                }
                if let Ok((watcher, wakeups)) = watch(&self.new_dir) {
                    (self.watcher, self.wakeups) = (watcher, wakeups);
                }
                pause(self.backoff.next(), stop);
                None
            }
        }
    }

    /// Step: the next batch of `files`. Files that could not be processed wait their
    /// turn; the others go ahead, so unreadable files that sort first never starve the
    /// spool.
    fn next_batch(&mut self, files: Vec<PathBuf>) -> Vec<PathBuf> {
        let now = Instant::now();
        self.retry.retain(|p, _| files.binary_search(p).is_ok()); // `list` sorts
        let retry = &self.retry;
        next_batch(files.into_iter().filter(|f| retry.get(f).is_none_or(|t| now >= *t)), self.opt.batch)
    }

    /// The state the files kept for a retry leave the daemon in.
    fn settle_state(&mut self) {
        self.status.state =
            if self.retry.is_empty() { DaemonState::Running } else { DaemonState::Degraded { kept: self.retry.len() } };
        self.status_file.write(&self.status);
    }

    /// Step: nothing to do: the status written, a checkpoint when one is due, then a
    /// wait for a wake-up (or the rescan interval, or the watchdog's next ping).
    fn idle(&mut self, dd: &mut DataDir, notifier: &sd_notify::Notifier) -> Result<()> {
        self.settle_state();
        // Idle for IDLE_CHECKPOINT since its last document, the table is checkpointed
        // without waiting for --checkpoint-secs (20 s after its last
        // document an idle daemon had none, and readers saw the state of none).
        let idle_due =
            self.last_progress.elapsed() >= IDLE_CHECKPOINT && self.last_checkpoint.elapsed() >= IDLE_CHECKPOINT;
        if self.since_checkpoint > 0
            && (idle_due || self.last_checkpoint.elapsed().as_secs() >= self.live.checkpoint_secs)
        {
            self.checkpoint(dd)?;
        }
        // The revision queue, a budget at a time between looks at the spool (a document
        // arriving meanwhile waits for one budget at most).
        match dd.drain_revisions(self.opt.policy.revision_budget) {
            Ok(0) => {}
            Ok(n) => {
                tracing::debug!(revised = n, "revision queue drained a step");
                return Ok(());
            }
            Err(e) => {
                tracing::warn!(error = %textorigin_store::error::chain(&e), "revision queue not drained; trying again later")
            }
        }
        let wait = Duration::from_secs(self.live.rescan_secs.max(1)).min(Duration::from_millis(500));
        let _ = self.wakeups.recv_timeout(notifier.max_wait().map_or(wait, |w| wait.min(w)));
        Ok(())
    }

    /// Step: the table applied a document the store did not take (a full disk, say): go
    /// back to the last checkpoint and replay, as after a crash. The fault is the data
    /// directory's, not the files': they all wait, in order, for a pause that doubles
    /// up to MAX_BACKOFF. A replayed result that differs stops the daemon, as at
    /// start-up.
    fn recover_table(
        &mut self,
        dd: DataDir,
        dir: &Path,
        overrides: &Overrides,
        kept: usize,
        stop: &AtomicBool,
    ) -> Result<DataDir> {
        self.status.state = DaemonState::Degraded { kept };
        self.status_file.write(&self.status);
        self.share(None);
        drop(dd);
        let dd = recover_poisoned(dir, overrides, &self.opt.policy, stop, &self.pulse)?;
        self.share(Some(&dd));
        pause(self.backoff.next(), stop);
        Ok(dd)
    }

    /// Step: after a batch, the files that could not be processed (a read or write
    /// error, a full disk) stay in the spool and are tried again after a pause that
    /// doubles up to MAX_BACKOFF.
    fn keep(&mut self, kept: Vec<PathBuf>) {
        if kept.is_empty() {
            self.backoff.reset();
        } else {
            let at = Instant::now() + self.backoff.next();
            self.retry.extend(kept.into_iter().map(|p| (p, at)));
        }
        self.settle_state();
    }

    /// Reads, applies and group-commits one batch of spool files, moves them out of
    /// `new/` and checkpoints when due. Returns the files kept in the spool. A file's
    /// documents are applied as they are read (never a whole file held); a stop asked
    /// for ends the batch after the document being applied, and the file cut short
    /// continues after its stored documents at the next start. A checkpoint that falls
    /// due within a long file is written there.
    fn batch(
        &mut self,
        dd: &mut DataDir,
        parsers: &Parsers,
        batch: Vec<PathBuf>,
        stop: &AtomicBool,
    ) -> Result<Vec<PathBuf>> {
        let Admitted { outcomes, marks } = self.admit(dd, parsers, batch, stop)?;
        if dd.poisoned() {
            // A store write failed (a real full disk leaves RocksDB's writer in error, so
            // no fsync can follow): no group commit, and every file of the batch stays in
            // the spool. After recovery, the documents stored before the failure are
            // recognised by their admission records and not stored twice.
            return Ok(outcomes.into_iter().map(|(path, _)| path).collect());
        }
        self.commit(dd, outcomes, marks)
    }

    /// Reads, prepares and admits the batch's files in order (the pipeline: a reader, the
    /// parser threads, this thread applying), until its end or `stop`: each file's
    /// outcome (a file cut short, and those not reached, stay in the spool), and the
    /// HTTP marks of the files submitted over HTTP.
    fn admit(
        &mut self,
        dd: &mut DataDir,
        parsers: &Parsers,
        batch: Vec<PathBuf>,
        stop: &AtomicBool,
    ) -> Result<Admitted> {
        let mut outcomes = Vec::new();
        let mut current: Option<spool::Admitting> = None;
        let mut fatal = None;
        let mut marks = HashMap::new();
        let items = spool::items(
            batch,
            parsers.limits,
            dd.shared_store(),
            layout::marks(&self.opt.spool),
            Arc::clone(&self.opt.budget),
            Arc::clone(&parsers.watch),
        );
        self.pulse.waiting(true);
        let run = textorigin_store::pipeline::ordered_map(
            parsers.threads,
            &parsers.preparer,
            items,
            spool::prepare,
            |ready| {
                self.pulse.waiting(false);
                let step = match ready {
                    spool::Ready::File(file) => {
                        if let Some(mark) = &file.mark {
                            marks.insert(file.path.clone(), mark.clone());
                        }
                        spool::Admitting::start(dd, file).map(|started| match started {
                            Ok(admitting) => current = Some(admitting),
                            Err(outcome) => outcomes.push(outcome),
                        })
                    }
                    spool::Ready::Doc(d, grant) => {
                        let admitting = current.as_mut().expect("a document follows its file");
                        self.opt.applying.store(true, Ordering::SeqCst);
                        let applied = admitting.doc(dd, d);
                        self.opt.applying.store(false, Ordering::SeqCst);
                        drop(grant); // its text analysed: its bytes are free again
                        applied.and_then(|stored| self.applied(dd, stored))
                    }
                    spool::Ready::End => match current.take() {
                        Some(admitting) => admitting.end(dd).map(|o| outcomes.push(o)),
                        None => Ok(()),
                    },
                };
                if let Err(e) = step {
                    fatal = Some(e);
                    self.opt.budget.let_through(true);
                    return false;
                }
                let go_on = !stop.load(Ordering::SeqCst);
                if !go_on {
                    // The reader may wait for bytes that items never to be applied hold.
                    self.opt.budget.let_through(true);
                }
                self.pulse.waiting(true);
                go_on
            },
        );
        self.pulse.waiting(false);
        self.opt.budget.let_through(false);
        // A file cut short (a stop) stays in the spool, and so do the files not reached.
        outcomes.extend(current.take().map(spool::Admitting::cut));
        if let Some(e) = fatal {
            return Err(e);
        }
        run.map_err(|_| DaemonError::ParserDied)?;
        Ok(Admitted { outcomes, marks })
    }

    /// After a document was admitted (`stored`: stored, not failed or skipped): the
    /// progress published now and then, a checkpoint when enough documents are applied.
    fn applied(&mut self, dd: &mut DataDir, stored: bool) -> Result<()> {
        if stored {
            self.status.documents_applied_this_run += 1;
            self.since_checkpoint += 1;
            if self.last_progress.elapsed() >= PROGRESS_EVERY {
                self.publish_progress(dd)?;
            }
        }
        if self.since_checkpoint >= self.live.checkpoint_docs && !dd.poisoned() {
            self.checkpoint(dd)?;
        }
        Ok(())
    }

    /// Group commit: the batch's documents made durable before their files leave the
    /// spool (a failed fsync leaves unknown state behind: stop; the restart recovers),
    /// then the files moved and their HTTP marks removed, the progress published and a
    /// checkpoint written when one is due. Returns the files kept for a retry.
    fn commit(
        &mut self,
        dd: &mut DataDir,
        outcomes: Vec<(PathBuf, Outcome)>,
        mut marks: HashMap<PathBuf, PathBuf>,
    ) -> Result<Vec<PathBuf>> {
        textorigin_store::failpoint::hit("store.sync")
            .map_err(|e| StoreError::Io { path: dd.store().path().to_path_buf(), source: e })
            .and_then(|()| dd.store().sync())
            .map_err(DaemonError::Fsync)?;
        textorigin_store::failpoint::hit("spool.after-sync").io(|| "group commit")?;
        let kept: Vec<PathBuf> =
            outcomes.iter().filter(|o| matches!(o.1, Outcome::Keep)).map(|o| o.0.clone()).collect();
        let gone: Vec<PathBuf> =
            outcomes.iter().filter(|o| !matches!(o.1, Outcome::Keep)).filter_map(|o| marks.remove(&o.0)).collect();
        self.finish_files(outcomes)?;
        for mark in gone {
            let _ = std::fs::remove_file(mark); // only needed while the file waits
        }
        self.publish_progress(dd)?;
        // A poisoned table (a store write failed after it applied a document) holds a
        // document the store does not: it is never checkpointed, only recovered.
        let due = self.since_checkpoint >= self.live.checkpoint_docs
            || self.last_checkpoint.elapsed().as_secs() >= self.live.checkpoint_secs;
        if due && !dd.poisoned() {
            self.checkpoint(dd)?;
        }
        Ok(kept)
    }

    /// Publishes what was applied: the status's last document and rate, and the table's
    /// counters (live `stats` readers see them), also in the middle of a large file.
    fn publish_progress(&mut self, dd: &mut DataDir) -> Result<()> {
        self.status.last_applied = dd.table().stats().last_seq;
        // Counted in the store, so that a restart does not start it again from 0.
        self.status.files_failed = dd.store().files_failed().unwrap_or(self.status.files_failed);
        dd.publish_counters()?;
        self.status.documents_per_second =
            self.status.documents_applied_this_run as f64 / self.started.elapsed().as_secs_f64().max(1e-9);
        self.status_file.write(&self.status);
        self.last_progress = Instant::now();
        Ok(())
    }

    /// Moves the committed files out of `new/` (removed, or to `done/`; failed ones to
    /// `failed/` with their reasons) and fsyncs the directories. A file that vanished
    /// meanwhile is no reason to stop: it is logged and passed over.
    fn finish_files(&mut self, outcomes: Vec<(PathBuf, Outcome)>) -> Result<()> {
        let spool = &self.opt.spool;
        let mut touched_failed = false;
        for (path, outcome) in outcomes {
            let name = path.file_name().expect("spool files have names").to_owned();
            let moved = match outcome {
                Outcome::Done => {
                    self.status.files_admitted += 1;
                    if self.live.keep {
                        let _ = std::fs::create_dir_all(spool.join(layout::DONE)); // removed meanwhile?
                        let to = spool.join(layout::DONE).join(layout::free_name(&spool.join(layout::DONE), &name));
                        std::fs::rename(&path, &to).io(|| format!("cannot move {} to {}", path.display(), to.display()))
                    } else {
                        std::fs::remove_file(&path).io(|| format!("cannot remove {}", path.display()))
                    }
                }
                Outcome::Failed(reasons) => {
                    touched_failed = true;
                    let failed = spool.join(layout::FAILED);
                    let _ = std::fs::create_dir_all(&failed); // removed meanwhile?
                    let target = failed.join(layout::free_name(&failed, &name));
                    let mut reason_path = target.clone().into_os_string();
                    reason_path.push(".reason");
                    let reason_path = PathBuf::from(reason_path);
                    status::write_whole(&reason_path, (reasons.join("\n") + "\n").as_bytes()).and_then(|()| {
                        std::fs::rename(&path, &target)
                            .io(|| format!("cannot move {} to {}", path.display(), target.display()))
                    })
                }
                Outcome::Keep => Ok(()),
            };
            // The documents are durable and admitted: a file that could not be moved (the
            // spool removed, its permissions changed) is seen again and recognised as
            // admitted, so this is logged, never a reason to stop.
            match moved {
                Err(e) if e.source.kind() == std::io::ErrorKind::NotFound => {
                    tracing::warn!(file = %path.display(), error = %textorigin_store::error::chain(&e), "spool file vanished");
                }
                Err(e) => {
                    tracing::error!(file = %path.display(), error = %textorigin_store::error::chain(&e), "cannot move an admitted file out of new/; trying again")
                }
                Ok(()) => {}
            }
        }
        textorigin_store::failpoint::hit("spool.after-unlink").io(|| "spool")?;
        let mut dirs = vec![spool.join(layout::NEW)];
        dirs.extend(touched_failed.then(|| spool.join(layout::FAILED)));
        dirs.extend(self.live.keep.then(|| spool.join(layout::DONE)));
        for dir in dirs {
            // Not needed for exactly-once (a file seen again is recognised as admitted).
            if let Err(e) = sync_dir(&dir) {
                tracing::warn!(error = %textorigin_store::error::chain(&e), "spool directory not synced");
            }
        }
        Ok(())
    }

    /// Writes a checkpoint of the table (its results made durable first). A slot that cannot be written (a full disk) is no reason to
    /// stop: the newest valid slot and the store still recover every document, so the
    /// failure is logged, shown in the status, and the next checkpoint is tried when due.
    /// A failed store fsync leaves unknown state behind: that stops.
    fn checkpoint(&mut self, dd: &mut DataDir) -> Result<()> {
        let seq = dd.table().stats().last_seq;
        self.since_checkpoint = 0;
        self.last_checkpoint = Instant::now();
        if let Some((free, needs)) = dd.short_of_checkpoint_space() {
            let (free, needs) = (free >> 20, needs >> 20);
            tracing::warn!(seq, "the checkpoint at document {seq} needs about {needs} MB free, {free} MB are");
        }
        match dd.checkpoint() {
            Err(DataDirError::Store(e)) => return Err(DaemonError::Fsync(e)),
            Ok(m) => {
                self.status.last_checkpoint_generation = m.generation;
                self.status.last_checkpoint_seq = m.seq;
                self.status.checkpoint_error = None;
                tracing::info!(generation = m.generation, seq, "checkpoint");
            }
            Err(e) => {
                let e = textorigin_store::error::chain(&e);
                tracing::warn!(error = %e, seq, "checkpoint at document {seq} failed; the previous one stays valid, trying again when due");
                self.status.checkpoint_error = Some(e);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
