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

use anyhow::{Context, Result};
use serde::Serialize;

use crate::config::Overrides;
use crate::datadir::DataDir;
use crate::input::InputDoc;

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
    DataDir::open_read(dir).ok().and_then(|d| d.store.next_seq().ok()).map_or(0, |n| n - 1)
}

fn serve(exe: &Path, dir: &Path, table: &str, checkpoint_docs: u64) -> Result<Child> {
    Command::new(exe)
        .args(["serve", "--table-size", table, "--checkpoint-docs"])
        .arg(checkpoint_docs.to_string())
        .arg("--data")
        .arg(dir)
        .stderr(Stdio::null())
        .spawn()
        .context("cannot start the daemon")
}

fn feed(dir: &Path, files: &[PathBuf]) -> Result<()> {
    std::fs::create_dir_all(dir.join("spool/tmp"))?;
    std::fs::create_dir_all(dir.join("spool/new"))?;
    for f in files {
        let name = f.file_name().context("file name")?;
        let tmp = dir.join("spool/tmp").join(name);
        std::fs::copy(f, &tmp)?;
        std::fs::rename(&tmp, dir.join("spool/new").join(name))?;
    }
    Ok(())
}

fn wait_for(mut done: impl FnMut() -> bool, limit: Duration) -> Result<()> {
    let t0 = Instant::now();
    while !done() {
        anyhow::ensure!(t0.elapsed() < limit, "timed out");
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

/// Runs the benchmark in `work` (a scratch directory).
pub fn run(docs: &[InputDoc], per_file: usize, table: &str, work: &Path) -> Result<DaemonBench> {
    let exe = std::env::current_exe()?;
    let src = work.join("files");
    std::fs::create_dir_all(&src)?;
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
        std::fs::write(&p, out)?;
        files.push(p);
    }
    let total = docs.len() as u64;
    // Batch.
    let overrides = Overrides { table_size: Some(table.to_string()), ..Default::default() };
    let t0 = Instant::now();
    let mut dd = DataDir::open_write(&work.join("batch"), &overrides)?;
    for f in &files {
        for d in crate::input::read_file(f, u64::MAX)? {
            let _ = dd.ingest(&d?);
        }
    }
    dd.close()?;
    let batch_seconds = t0.elapsed().as_secs_f64();
    // Daemon.
    let dir = work.join("daemon");
    std::fs::create_dir_all(&dir)?;
    let mut child = serve(&exe, &dir, table, 1000)?;
    let t0 = Instant::now();
    feed(&dir, &files)?;
    let new_dir = dir.join("spool/new");
    wait_for(|| std::fs::read_dir(&new_dir).is_ok_and(|mut d| d.next().is_none()) && documents(&dir) >= total, Duration::from_secs(3600))?;
    let daemon_seconds = t0.elapsed().as_secs_f64();
    Command::new("kill").arg("-TERM").arg(child.id().to_string()).status()?;
    child.wait()?;
    // Recovery.
    let dir = work.join("recovery");
    std::fs::create_dir_all(&dir)?;
    let mut child = serve(&exe, &dir, table, total / 4 + 1)?;
    feed(&dir, &files)?;
    wait_for(|| documents(&dir) >= total * 3 / 4, Duration::from_secs(3600))?;
    child.kill()?;
    child.wait()?;
    let _ = std::fs::remove_file(dir.join("daemon.json"));
    let t0 = Instant::now();
    let mut child = serve(&exe, &dir, table, total / 4 + 1)?;
    let status_path = dir.join("daemon.json");
    let mut status = serde_json::Value::Null;
    wait_for(
        || {
            status = std::fs::read(&status_path).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or(serde_json::Value::Null);
            status["pid"] == child.id()
        },
        Duration::from_secs(3600),
    )?;
    let recovery_seconds = t0.elapsed().as_secs_f64();
    Command::new("kill").arg("-TERM").arg(child.id().to_string()).status()?;
    child.wait()?;
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
