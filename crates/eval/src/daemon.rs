//! `textorigin bench-daemon`: the daemon's end-to-end throughput and its recovery time,
//! measured on a corpus and printed.
//!
//! The corpus is written as JSONL files of `per_file` documents. Batch: `ingest` of
//! those files (in this process). Daemon: a `textorigin serve` child on a fresh data
//! directory; the files are renamed into its spool as fast as possible and the clock
//! stops when the spool is empty and every document is stored (durable: the daemon
//! fsyncs before it removes a file). Recovery: a second daemon with checkpoints far
//! apart is killed with SIGKILL part-way; the time from the restart to its first status
//! (checkpoint restored, documents replayed, results compared) is the recovery time.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::{EvalError, Result};
use serde::Serialize;
use textorigin_store::error::IoContext;
use textorigin_store::intake::Policy;

use textorigin_core::config::Overrides;
use textorigin_store::input::InputDoc;
use textorigin_store::storage::datadir::DataDir;

/// What was measured.
#[derive(Debug, Clone, Serialize)]
pub struct DaemonBench {
    pub documents: u64,
    pub bytes: u64,
    pub files: usize,
    pub batch_seconds: f64,
    pub daemon_seconds: f64,
    pub daemon_docs_per_s: f64,
    pub daemon_mb_per_s: f64,
    pub share_of_batch: f64,
    pub recovery_seconds: f64,
    pub recovery_replayed: u64,
}

fn documents(dir: &Path) -> u64 {
    DataDir::open_read(dir).ok().and_then(|d| d.store().next_seq().ok()).map_or(0, |n| n - 1)
}

/// How to start the daemon under measurement on data directory `dir` with a checkpoint
/// every `checkpoint_docs` documents: the command line knows its own flags, this
/// library does not.
pub type ServeCommand<'a> = &'a dyn Fn(&Path, u64) -> Command;

fn serve(command: ServeCommand<'_>, dir: &Path, checkpoint_docs: u64) -> Result<Child> {
    command(dir, checkpoint_docs)
        .stderr(Stdio::null())
        .spawn()
        .io(|| "cannot start the daemon")
        .map_err(EvalError::from)
}

/// SIGTERM, and the daemon's exit.
fn stop(mut child: Child) -> Result<()> {
    textorigin_store::sys::terminate(&child).io(|| "cannot stop the daemon")?;
    child.wait().io(|| "cannot wait for the daemon")?;
    Ok(())
}

fn feed(dir: &Path, files: &[PathBuf]) -> Result<()> {
    for sub in ["spool/tmp", "spool/new"] {
        std::fs::create_dir_all(dir.join(sub)).io(|| format!("cannot create {}", dir.join(sub).display()))?;
    }
    for f in files {
        let name = f.file_name().expect("corpus parts have names");
        let tmp = dir.join("spool/tmp").join(name);
        std::fs::copy(f, &tmp).io(|| format!("cannot copy {}", f.display()))?;
        std::fs::rename(&tmp, dir.join("spool/new").join(name)).io(|| format!("cannot rename {}", tmp.display()))?;
    }
    Ok(())
}

fn wait_for(mut done: impl FnMut() -> bool, limit: Duration) -> Result<()> {
    let t0 = Instant::now();
    while !done() {
        if t0.elapsed() >= limit {
            return Err(EvalError::Daemon("timed out waiting for the daemon".into()));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

/// Runs the benchmark in `work` (a scratch directory): the batch with `overrides` (the
/// table size and the feature switches of a job), the daemon as `command` starts it
/// (with the same options).
pub fn run(
    docs: &[InputDoc],
    per_file: usize,
    overrides: &Overrides,
    work: &Path,
    command: ServeCommand<'_>,
) -> Result<DaemonBench> {
    let src = work.join("files");
    std::fs::create_dir_all(&src).io(|| format!("cannot create {}", src.display()))?;
    let mut files = Vec::new();
    let mut bytes = 0u64;
    for (i, chunk) in docs.chunks(per_file.max(1)).enumerate() {
        let mut out = String::new();
        for d in chunk {
            out += &serde_json::to_string(&serde_json::json!({"id": d.name, "text": d.text}))?;
            out.push('\n');
        }
        bytes += out.len() as u64;
        let p = src.join(format!("part-{i:05}.jsonl"));
        std::fs::write(&p, out).io(|| format!("cannot write {}", p.display()))?;
        files.push(p);
    }
    let total = docs.len() as u64;
    // Batch.
    let t0 = Instant::now();
    let mut dd = DataDir::open_write(&work.join("batch"), overrides, Policy::default())?;
    for f in &files {
        for d in textorigin_store::input::read_file(f, u64::MAX)? {
            let _ = dd.ingest(&d?);
        }
    }
    dd.close()?;
    let batch_seconds = t0.elapsed().as_secs_f64();
    // Daemon.
    let dir = work.join("daemon");
    std::fs::create_dir_all(&dir).io(|| format!("cannot create {}", dir.display()))?;
    let child = serve(command, &dir, 1000)?;
    let t0 = Instant::now();
    feed(&dir, &files)?;
    let new_dir = dir.join("spool/new");
    wait_for(
        || std::fs::read_dir(&new_dir).is_ok_and(|mut d| d.next().is_none()) && documents(&dir) >= total,
        Duration::from_secs(3600),
    )?;
    let daemon_seconds = t0.elapsed().as_secs_f64();
    stop(child)?;
    // Recovery.
    let dir = work.join("recovery");
    std::fs::create_dir_all(&dir).io(|| format!("cannot create {}", dir.display()))?;
    let mut child = serve(command, &dir, total / 4 + 1)?;
    feed(&dir, &files)?;
    wait_for(|| documents(&dir) >= total * 3 / 4, Duration::from_secs(3600))?;
    child.kill().io(|| "cannot kill the daemon")?;
    child.wait().io(|| "cannot wait for the daemon")?;
    let _ = std::fs::remove_file(dir.join("daemon.json"));
    let t0 = Instant::now();
    let child = serve(command, &dir, total / 4 + 1)?;
    let status_path = dir.join("daemon.json");
    let mut status = serde_json::Value::Null;
    wait_for(
        || {
            status = std::fs::read(&status_path)
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok())
                .unwrap_or(serde_json::Value::Null);
            status["pid"] == child.id()
        },
        Duration::from_secs(3600),
    )?;
    let recovery_seconds = t0.elapsed().as_secs_f64();
    stop(child)?;
    Ok(DaemonBench {
        documents: total,
        bytes,
        files: files.len(),
        batch_seconds,
        daemon_seconds,
        daemon_docs_per_s: total as f64 / daemon_seconds,
        daemon_mb_per_s: bytes as f64 / daemon_seconds / 1e6,
        share_of_batch: batch_seconds / daemon_seconds,
        recovery_seconds,
        recovery_replayed: status["replayed"].as_u64().unwrap_or(0),
    })
}

/// The measurement for people.
pub fn text(r: &DaemonBench) -> String {
    format!(
        "{} documents, {:.1} MB in {} spool files\nbatch ingest: {:.2} s\ndaemon, spool to durable results: {:.2} s = {:.0} documents/s, {:.2} MB/s ({:.0}% of batch throughput)\nrecovery after SIGKILL: {:.2} s ({} documents replayed)\n",
        r.documents,
        r.bytes as f64 / 1e6,
        r.files,
        r.batch_seconds,
        r.daemon_seconds,
        r.daemon_docs_per_s,
        r.daemon_mb_per_s,
        100.0 * r.share_of_batch,
        r.recovery_seconds,
        r.recovery_replayed
    )
}
